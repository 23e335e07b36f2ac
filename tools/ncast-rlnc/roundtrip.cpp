// ncast-rlnc roundtrip: a file through the whole RLNC path on one machine — source encoder, lossy hops,
// recoding relays, progressive decoder — and checked byte for byte against the original. One
// generation is in memory at a time, so files of any size go through.
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command_line.hpp"
#include "cli/subcommand_line.hpp"
#include "coding/rlnc/decoder.hpp"
#include "coding/rlnc/encoder.hpp"
#include "coding/rlnc/error.hpp"
#include "coding/rlnc/recoder.hpp"
#include "tools/ncast-rlnc/commands.hpp"

namespace ncast::rlnc_tool {
namespace {

namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kServerId = 1, kStreamId = 1, kFirstRelayId = 1000;
constexpr std::size_t kMaxRelays = 64;

struct Settings {
  std::string file;
  std::size_t n = 128, symbol = 1200, relays = 0, batch = rlnc::DecoderOptions{}.batch;
  double loss = 0.1, density = 1.0;
  bool systematic = true, json = false;
  std::uint64_t seed = 1;
};

struct Totals {
  std::size_t generations = 0, sent = 0, relayed = 0, received = 0, non_innovative = 0, needed = 0;
  std::size_t coded_bytes = 0, recoded_bytes = 0, decoded_bytes = 0;
  double encode_s = 0, recode_s = 0, decode_s = 0;
};

// Adds the time fn takes to seconds.
template <typename Fn>
auto timed(double& seconds, Fn&& fn) {
  const auto start = Clock::now();
  struct Stop {
    double& s;
    Clock::time_point start;
    ~Stop() { s += std::chrono::duration<double>(Clock::now() - start).count(); }
  } stop{seconds, start};
  return fn();
}

// A node that receives, decodes progressively and (as a relay) forwards recoded symbols.
struct Node {
  Node(const rlnc::GenerationLayout& layout, const rlnc::SeedContext& source, const rlnc::SeedContext& own,
       std::size_t batch)
      : buffer(layout.block_bytes()),
        decoder(layout, buffer, source, {.batch = batch}),
        recoder(decoder, own),
        payload(layout.symbol_size()),
        coefficients(layout.n()) {}
  std::vector<std::uint8_t> buffer;
  rlnc::Decoder decoder;
  rlnc::Recoder recoder;
  std::vector<std::uint8_t> payload, coefficients;  // the symbol it is sending
};

// One generation from the source to the sink through s.relays relays, each hop losing s.loss.
void transfer(const rlnc::GenerationLayout& layout, std::uint32_t segment, const std::vector<std::uint8_t>& data,
              const Settings& s, std::mt19937_64& rng, Totals& t) {
  const rlnc::SourceBlock block(layout, data);
  const rlnc::SeedContext source_seeds{rlnc::coefficient_seed(kServerId, kStreamId), segment};
  const rlnc::Encoder encoder(block, source_seeds,
                              {.systematic = s.systematic, .density = rlnc::Density::from_fraction(s.density)});
  std::vector<std::unique_ptr<Node>> nodes;  // the relays, then the sink
  for (std::size_t r = 0; r <= s.relays; ++r) {
    const auto id = static_cast<std::uint32_t>(kFirstRelayId + r);
    nodes.push_back(std::make_unique<Node>(layout, source_seeds,
                                           rlnc::SeedContext{rlnc::coefficient_seed(id, kStreamId), segment}, s.batch));
  }
  Node& sink = *nodes.back();
  std::bernoulli_distribution lost(s.loss);
  std::vector<std::uint8_t> payload(layout.symbol_size());
  const double arrive = std::pow(1.0 - s.loss, static_cast<double>(s.relays + 1));
  const auto limit = static_cast<std::size_t>(50.0 * static_cast<double>(layout.n() + 8) / arrive) + 1000;

  const auto deliver = [&](std::size_t hop, const rlnc::SymbolView& symbol) {
    if (lost(rng)) return;
    Node& to = *nodes[hop];
    if (&to == &sink) {
      ++t.received;
      const auto result = timed(t.decode_s, [&] { return to.decoder.add(symbol); });
      t.non_innovative += result == rlnc::AddResult::non_innovative;
    } else {
      to.decoder.add(symbol);
    }
  };

  for (std::uint32_t id = 0; !sink.decoder.complete(); ++id) {
    if (id == limit)
      throw std::runtime_error("generation " + std::to_string(segment) + " did not decode after " +
                               std::to_string(limit) + " source symbols");
    std::uint8_t* out = payload.data();
    timed(t.encode_s, [&] { encoder.produce(id, 1, &out); });
    ++t.sent;
    t.coded_bytes += payload.size();
    deliver(0, {encoder.kind_of(id), id, encoder.options().density, {}, payload});
    for (std::size_t r = 0; r < s.relays; ++r) {
      Node& relay = *nodes[r];
      if (relay.decoder.rank() == 0) continue;
      std::uint8_t* p = relay.payload.data();
      timed(t.recode_s, [&] { relay.recoder.produce(1, &p, relay.coefficients.data()); });
      ++t.relayed;
      t.recoded_bytes += relay.payload.size();
      deliver(r + 1, {rlnc::SymbolKind::recoded, 0, {}, relay.coefficients, relay.payload});
    }
  }
  const auto decoded = sink.decoder.data();
  if (decoded.size() != data.size() || std::memcmp(decoded.data(), data.data(), data.size()) != 0)
    throw std::runtime_error("generation " + std::to_string(segment) + " decoded to different bytes");
  ++t.generations;
  t.needed += layout.n();
  t.decoded_bytes += data.size();
}

std::string show(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

// The settings the command line asks for; nothing after --help.
std::optional<Settings> parse(int argc, char** argv) {
  Settings s;
  po::options_description desc("ncast-rlnc roundtrip options");
  desc.add_options()("n", po::value(&s.n)->default_value(s.n), "source symbols per generation, 1..256")(
      "symbol", po::value(&s.symbol)->default_value(s.symbol), "symbol size in bytes, 1..65536")(
      "loss", po::value(&s.loss)->default_value(s.loss, cli::shortest(s.loss)),
      "probability that a hop loses a symbol, [0, 1)")("relays", po::value(&s.relays)->default_value(s.relays),
                                                       "recoding relays between source and sink, 0..64")(
      "seed", po::value(&s.seed)->default_value(s.seed), "seed of the simulated losses")(
      "density", po::value(&s.density)->default_value(s.density), "fraction of non-zero coefficients, (0, 1]")(
      "no-systematic", "send coded symbols only (default: the source symbols first, then coded ones)")(
      "batch", po::value(&s.batch)->default_value(s.batch), "decoder batch, 1..256")(
      "json", po::bool_switch(&s.json), "print the summary as one JSON object")("help,h", "show this help");
  const auto vm = cli::parse_subcommand_line(
      argc, argv,
      "usage: ncast-rlnc roundtrip FILE [options]\n\n"
      "Cuts FILE into generations of n symbols, sends each from a seeded encoder through lossy hops\n"
      "and recoding relays to a progressive decoder, and checks that the decoded bytes equal FILE.",
      desc, {.name = "file"}, std::cout);
  if (!vm) return std::nullopt;
  if (vm->count("file")) s.file = (*vm)["file"].as<std::string>();
  s.systematic = vm->count("no-systematic") == 0;
  if (s.file.empty()) throw UsageError("no FILE given");
  if (s.n < 1 || s.n > rlnc::kMaxSymbols) throw UsageError("--n must be in 1..256, not " + std::to_string(s.n));
  if (s.symbol < 1 || s.symbol > rlnc::kMaxSymbolSize)
    throw UsageError("--symbol must be in 1..65536, not " + std::to_string(s.symbol));
  if (!(s.loss >= 0.0 && s.loss < 1.0)) throw UsageError("--loss must be in [0, 1), not " + show(s.loss));
  if (s.relays > kMaxRelays) throw UsageError("--relays must be in 0..64, not " + std::to_string(s.relays));
  if (!(s.density > 0.0 && s.density <= 1.0)) throw UsageError("--density must be in (0, 1], not " + show(s.density));
  if (s.batch < 1 || s.batch > rlnc::kMaxSymbols) throw UsageError("--batch must be in 1..256");
  return s;
}

double gb_per_s(std::size_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0;
}

}  // namespace

int run_roundtrip(int argc, char** argv) {
  const auto settings = parse(argc, argv);
  if (!settings) return kExitOk;
  const Settings& s = *settings;

  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(s.file, ec);
  if (ec || !fs::exists(status)) throw std::runtime_error("cannot read " + s.file + ": no such file");
  if (!fs::is_regular_file(status)) throw std::runtime_error("cannot read " + s.file + ": not a regular file");
  const std::size_t size = fs::file_size(s.file, ec);
  if (ec) throw std::runtime_error("cannot read " + s.file + ": " + ec.message());
  if (size == 0) throw std::runtime_error(s.file + " is empty: nothing to code");
  std::ifstream in(s.file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + s.file + ": " + std::strerror(errno));

  const auto slices = rlnc::split_object(size, s.n, s.symbol);
  std::mt19937_64 rng(s.seed);
  Totals t;
  std::vector<std::uint8_t> data;
  const auto start = Clock::now();
  for (std::size_t g = 0; g < slices.size(); ++g) {
    data.resize(slices[g].layout.data_bytes());
    if (!in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size())))
      throw std::runtime_error("cannot read " + s.file + " (it changed while being read?)");
    transfer(slices[g].layout, static_cast<std::uint32_t>(g), data, s, rng, t);
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();

  const double overhead = static_cast<double>(t.received) / static_cast<double>(t.needed);
  if (s.json) {
    nlohmann::ordered_json j;
    j["file"] = s.file;
    j["bytes"] = size;
    j["generations"] = t.generations;
    j["n"] = s.n;
    j["symbol"] = s.symbol;
    j["loss"] = s.loss;
    j["relays"] = s.relays;
    j["systematic"] = s.systematic;
    j["density"] = s.density;
    j["sent"] = t.sent;
    j["relayed"] = t.relayed;
    j["received"] = t.received;
    j["non_innovative"] = t.non_innovative;
    j["needed"] = t.needed;
    j["received_per_needed"] = overhead;
    j["encode_gb_per_s"] = gb_per_s(t.coded_bytes, t.encode_s);
    j["recode_gb_per_s"] = gb_per_s(t.recoded_bytes, t.recode_s);
    j["decode_gb_per_s"] = gb_per_s(t.decoded_bytes, t.decode_s);
    j["seconds"] = wall;
    j["identical"] = true;
    std::cout << j.dump() << std::endl;
    return kExitOk;
  }
  std::printf(
      "ncast-rlnc roundtrip: %s, %zu bytes in %zu generations of n=%zu x %zu B; loss %.1f %% per hop, "
      "%zu relay%s\n",
      s.file.c_str(), size, t.generations, s.n, s.symbol, 100 * s.loss, s.relays, s.relays == 1 ? "" : "s");
  std::printf("  source sent       %zu symbols (%s)\n", t.sent, s.systematic ? "systematic, then coded" : "coded");
  if (s.relays > 0) std::printf("  relays sent       %zu recoded symbols\n", t.relayed);
  std::printf("  sink received     %zu symbols, %zu non-innovative\n", t.received, t.non_innovative);
  std::printf("  sink needed       %zu symbols (received/needed %.4f)\n", t.needed, overhead);
  std::printf("  coding throughput encode %.2f GB/s, ", gb_per_s(t.coded_bytes, t.encode_s));
  if (s.relays > 0) std::printf("recode %.2f GB/s, ", gb_per_s(t.recoded_bytes, t.recode_s));
  std::printf("decode %.2f GB/s (one core, time in the codec; %.2f s in all)\n", gb_per_s(t.decoded_bytes, t.decode_s),
              wall);
  std::printf("OK: the decoded file is identical to %s (%zu bytes)\n", s.file.c_str(), size);
  return kExitOk;
}

}  // namespace ncast::rlnc_tool
