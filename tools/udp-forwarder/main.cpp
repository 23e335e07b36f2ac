// udp-forwarder: forwards UDP between clients and one server, reordering and rebinding on the way
// (see forwarder.hpp). Prints {"event":"listening","port":N} when ready and, on SIGINT or SIGTERM,
// {"event":"report",...} with what it did; exit 2 on bad options.
#include <signal.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "tools/udp-forwarder/forwarder.hpp"

namespace {

namespace po = boost::program_options;
volatile bool stop_requested = false;

void on_signal(int) { stop_requested = true; }

ncast::net::Address address_option(const po::variables_map& vm, const char* name) {
  const auto a = ncast::net::Address::parse(vm[name].as<std::string>());
  if (a.family == 0)
    throw std::invalid_argument(std::string("--") + name + " '" + vm[name].as<std::string>() +
                                "' is not a numeric host:port");
  return a;
}

ncast::tools::ForwarderOptions parse(int argc, char** argv) {
  po::options_description d("udp-forwarder options");
  d.add_options()("listen", po::value<std::string>()->default_value("127.0.0.1:0"), "where clients send to")(
      "to", po::value<std::string>()->required(), "the server, host:port")(
      "reorder", po::value<double>()->default_value(0), "share of datagrams delayed, 0..1, each direction")(
      "delay-ms", po::value<double>()->default_value(10), "how long a delayed datagram is held")(
      "rebind-ms", po::value<long>()->default_value(0), "a client's new outbound port this often (0: never)")(
      "seed", po::value<std::uint64_t>()->default_value(1), "of the reordering dice");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, d), vm);
  po::notify(vm);
  ncast::tools::ForwarderOptions o;
  o.listen = address_option(vm, "listen");
  o.server = address_option(vm, "to");
  o.reorder = vm["reorder"].as<double>();
  const double delay_ms = vm["delay-ms"].as<double>();
  if (!(o.reorder >= 0 && o.reorder <= 1) || !(delay_ms >= 0) || vm["rebind-ms"].as<long>() < 0)
    throw std::invalid_argument("--reorder must be within 0..1, --delay-ms and --rebind-ms not negative");
  o.delay = std::chrono::microseconds(static_cast<long>(delay_ms * 1000));
  o.rebind = std::chrono::milliseconds(vm["rebind-ms"].as<long>());
  o.seed = vm["seed"].as<std::uint64_t>();
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  ncast::tools::ForwarderOptions options;
  try {
    options = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "udp-forwarder: " << e.what() << "\n";
    return 2;
  }
  try {
    ncast::tools::Forwarder forwarder(options);
    ::signal(SIGINT, on_signal);
    ::signal(SIGTERM, on_signal);
    std::cout << nlohmann::json{{"event", "listening"}, {"port", forwarder.port()}}.dump() << std::endl;
    forwarder.run(stop_requested);
    const auto& c = forwarder.counters();
    std::cout << nlohmann::json{{"event", "report"},
                                {"forwarded", c.forwarded},
                                {"delayed", c.delayed},
                                {"rebinds", c.rebinds},
                                {"lost_to_old_ports", c.lost_to_old_ports}}
                     .dump()
              << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "udp-forwarder: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
