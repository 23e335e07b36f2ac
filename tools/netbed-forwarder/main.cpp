// ncast-netbed-forwarder: the user-space impairments of tools/netbed.sh (bit flips, delay, reordering).
#include <iostream>

#include "cli/command_line.hpp"
#include "cli/interrupt.hpp"
#include "tools/netbed-forwarder/forwarder.hpp"

namespace po = boost::program_options;
using namespace ncast;

namespace {

net::Address address_option(const po::variables_map& vm, const char* name) {
  const auto& text = vm.at(name).as<std::string>();
  const auto a = net::Address::parse(text);
  if (a.family == 0)
    throw std::invalid_argument(std::string("--") + name + " '" + text + "' is not a numeric HOST:PORT");
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description options("Options");
  netbed::ForwarderOptions o;
  options.add_options()("listen", po::value<std::string>(), "HOST:PORT the peers send to")(
      "server", po::value<std::string>(), "HOST:PORT of the server")(
      "corrupt", po::value(&o.corrupt)->default_value(0, "0"), "fraction of datagrams, each way, with one bit flipped")(
      "delay", po::value(&o.delay_ms)->default_value(0, "0"), "one-way delay added each way, ms")(
      "jitter", po::value(&o.jitter_ms)->default_value(0, "0"),
      "each datagram's delay varies uniformly by up to ± this, ms (reorders)")(
      "seed", po::value(&o.seed)->default_value(1), "seed of the impairments")("help,h", "show this help");
  const char* about =
      "ncast-netbed-forwarder: relays UDP between peers and one server, flipping bits, delaying and reordering\n"
      "datagrams on the way (tools/netbed.sh). On SIGINT or SIGTERM it prints its counts as one JSON line.\n\n"
      "Usage: ncast-netbed-forwarder --listen HOST:PORT --server HOST:PORT [options]";
  try {
    const auto vm = cli::parse_command_line(argc, argv, options);
    if (vm.count("help")) {
      std::cout << cli::help_text(about, options);
      return 0;
    }
    for (const char* name : {"listen", "server"}) {
      if (!vm.count(name)) throw std::invalid_argument(std::string("--") + name + " is required (see --help)");
    }
    cli::in_range("corrupt", o.corrupt, 0.0, 1.0);
    cli::in_range("delay", o.delay_ms, 0.0, 10000.0);
    cli::in_range("jitter", o.jitter_ms, 0.0, o.delay_ms);
    o.listen = address_option(vm, "listen");
    o.server = address_option(vm, "server");
    cli::catch_interrupts();
    netbed::Forwarder forwarder(o);
    forwarder.run([] { return cli::interrupt_signal() != 0; });
    const auto& c = forwarder.counters();
    std::cout << R"({"event":"forwarder","up":)" << c.up << R"(,"down":)" << c.down << R"(,"corrupted_up":)"
              << c.corrupted_up << R"(,"corrupted_down":)" << c.corrupted_down << R"(,"send_failures":)"
              << c.send_failures << "}" << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "ncast-netbed-forwarder: " << e.what() << '\n';
    return 2;
  }
}
