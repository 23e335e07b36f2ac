#pragma once
// The commands of ncast-rlnc, each in its own file.
#include <span>
#include <stdexcept>
#include <string_view>

namespace ncast::rlnc_tool {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the work failed (unreadable file, data that did not come back)
inline constexpr int kExitUsage = 2;    // bad command line

// A bad command line: reported with a pointer to --help and exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);  // argv[0] is the command's name
};

int run_roundtrip(int argc, char** argv);
int run_coefficients(int argc, char** argv);

std::span<const Command> commands();

}  // namespace ncast::rlnc_tool
