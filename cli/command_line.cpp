#include "cli/command_line.hpp"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

namespace ncast::cli {
namespace po = boost::program_options;

po::variables_map parse_command_line(int argc, const char* const* argv, const po::options_description& options,
                                     const char* config_option) {
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
    if (config_option != nullptr && vm.count(config_option)) {
      const auto& path = vm[config_option].as<std::string>();
      std::ifstream in(path);
      if (!in) throw std::invalid_argument("cannot read config file " + path + ": " + std::strerror(errno));
      po::store(po::parse_config_file(in, options), vm);
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(e.what());
  }
  return vm;
}

std::string help_text(std::string_view about, const po::options_description& options) {
  std::ostringstream h;
  h << about << options;
  return h.str();
}

std::string version_text(std::string_view program, std::string_view detail) {
  std::string text(program);
  text += " " NCAST_VERSION;
  if (!detail.empty()) text.append(" (").append(detail).append(")");
  return text + "\n";
}

std::string shortest(double value) {
  std::array<char, 32> text{};
  const auto end = std::to_chars(text.data(), text.data() + text.size(), value).ptr;
  return {text.data(), end};
}

}  // namespace ncast::cli
