// udp-forwarder: relays UDP between clients and one server, impairing it on the way (see forwarder.hpp).
// Prints {"event":"listening","port":N} when ready and, on SIGINT or SIGTERM, {"event":"report",...}
// with its counts; exit 2 on bad options, 1 when it cannot bind or reach the server.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command_line.hpp"
#include "cli/interrupt.hpp"
#include "tools/udp-forwarder/forwarder.hpp"

namespace po = boost::program_options;
using namespace ncast;

namespace {

constexpr const char* kAbout =
    "udp-forwarder: relays UDP between clients and one server, flipping bits, delaying, reordering and\n"
    "rebinding (a NAT's new port) on the way: the network of tests/e2e and tools/netbed.sh. Prints\n"
    "{\"event\":\"listening\",\"port\":N} when ready and its counts as one JSON line on SIGINT or SIGTERM.\n\n"
    "Usage: udp-forwarder --server HOST:PORT [--listen HOST:PORT] [options]\n";

net::Address address_option(const po::variables_map& vm, const char* name) {
  const auto& text = vm.at(name).as<std::string>();
  const auto a = net::Address::parse(text);
  if (a.family == 0)
    throw std::invalid_argument(std::string("--") + name + " '" + text + "' is not a numeric HOST:PORT");
  return a;
}

void describe(po::options_description& d, tools::ForwarderOptions& o, long& rebind_ms) {
  d.add_options()("listen", po::value<std::string>()->default_value("127.0.0.1:0"), "HOST:PORT the clients send to")(
      "server", po::value<std::string>(), "HOST:PORT of the server (required)")(
      "corrupt", po::value(&o.corrupt)->default_value(0, "0"), "share of datagrams, each way, with one bit flipped")(
      "delay-ms", po::value(&o.delay_ms)->default_value(0, "0"), "every datagram held this long, each way")(
      "jitter-ms", po::value(&o.jitter_ms)->default_value(0, "0"),
      "each datagram's delay varies uniformly by up to ± this (reorders); at most --delay-ms")(
      "reorder", po::value(&o.reorder)->default_value(0, "0"),
      "share of datagrams, each way, held --reorder-ms longer")(
      "reorder-ms", po::value(&o.reorder_ms)->default_value(10, "10"), "how much longer the --reorder share is held")(
      "rebind-ms", po::value(&rebind_ms)->default_value(0), "a client's new outbound port this often (0: never)")(
      "seed", po::value(&o.seed)->default_value(1), "seed of the impairments")("help,h", "show this help");
}

// Checks the values parsed into o and completes it from vm.
void check(const po::variables_map& vm, tools::ForwarderOptions& o, long rebind_ms) {
  if (!vm.count("server")) throw std::invalid_argument("--server is required (see --help)");
  cli::in_range("corrupt", o.corrupt, 0.0, 1.0);
  cli::in_range("delay-ms", o.delay_ms, 0.0, 10000.0);
  cli::in_range("jitter-ms", o.jitter_ms, 0.0, o.delay_ms);
  cli::in_range("reorder", o.reorder, 0.0, 1.0);
  cli::in_range("reorder-ms", o.reorder_ms, 0.0, 10000.0);
  cli::in_range("rebind-ms", rebind_ms, 0L, 3'600'000L);
  o.rebind = std::chrono::milliseconds(rebind_ms);
  o.listen = address_option(vm, "listen");
  o.server = address_option(vm, "server");
}

void report(const tools::ForwarderCounters& c) {
  std::cout << nlohmann::json{{"event", "report"},
                              {"up", c.up},
                              {"down", c.down},
                              {"corrupted_up", c.corrupted_up},
                              {"corrupted_down", c.corrupted_down},
                              {"reordered", c.reordered},
                              {"rebinds", c.rebinds},
                              {"lost_to_old_ports", c.lost_to_old_ports},
                              {"send_failures", c.send_failures}}
                   .dump()
            << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description d("Options");
  tools::ForwarderOptions options;
  long rebind_ms = 0;
  describe(d, options, rebind_ms);
  try {
    const auto vm = cli::parse_command_line(argc, argv, d);
    if (vm.count("help")) {
      std::cout << cli::help_text(kAbout, d);
      return 0;
    }
    check(vm, options, rebind_ms);
  } catch (const std::exception& e) {
    std::cerr << "udp-forwarder: " << e.what() << '\n';
    return 2;
  }
  try {
    cli::catch_interrupts();
    tools::Forwarder forwarder(options);
    std::cout << nlohmann::json{{"event", "listening"}, {"port", forwarder.local().port}}.dump() << std::endl;
    forwarder.run([] { return cli::interrupt_signal() != 0; });
    report(forwarder.counters());
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "udp-forwarder: " << e.what() << '\n';
    return 1;
  }
}
