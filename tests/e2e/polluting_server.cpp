// A hostile server for the pollution tests: a real ncast server of the files it is given (the options
// of ncast-server, plus --pollute FRACTION), except that FRACTION of the symbols
// it sends carry a payload with one octet changed. Every packet is well-formed and properly
// protected; only the coding lies. Prints the same "listening" line as ncast-server.
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "coding/cpu_engine.hpp"
#include "server/chunk_coder.hpp"
#include "server/coded_cache.hpp"
#include "server/ingest.hpp"
#include "server/media_stream.hpp"
#include "server/options.hpp"
#include "server/server.hpp"

namespace {

using namespace ncast;
using namespace ncast::server;

class PollutingSource final : public SymbolSource {
 public:
  PollutingSource(MediaStream& inner, double fraction, std::uint64_t seed)
      : inner_(inner), pollute_(fraction), rng_(seed) {}

  const StreamInfo& info() const override { return inner_.info(); }
  std::uint32_t segment_count() const override { return inner_.segment_count(); }
  bool final() const override { return inner_.final(); }
  std::uint32_t live_edge() const override { return inner_.live_edge(); }
  const proto::SegmentDescriptor& descriptor(std::uint32_t segment) const override {
    return inner_.descriptor(segment);
  }
  std::size_t rank(std::uint32_t segment) const override { return inner_.rank(segment); }
  bool can_send_systematic() const override { return inner_.can_send_systematic(); }
  bool write_systematic(std::uint32_t segment, std::uint32_t i, proto::Writer& w) override {
    return relay(w, [&](proto::Writer& t) { return inner_.write_systematic(segment, i, t); });
  }
  bool write_coded(std::uint32_t segment, std::uint32_t j, proto::Writer& w) override {
    return relay(w, [&](proto::Writer& t) { return inner_.write_coded(segment, j, t); });
  }

 private:
  // The honest body, then (sometimes) one payload octet changed: the body ends with the payload.
  template <typename Write>
  bool relay(proto::Writer& w, Write&& write) {
    body_.resize(proto::kMaxDatagram);
    proto::Writer t(body_);
    if (!write(t) || !t.ok()) return false;
    body_.resize(t.size());
    if (pollute_(rng_)) body_[body_.size() - 1 - octet_(rng_) % info().symbol_size] ^= 0x5A;
    w.bytes(body_);
    return w.ok();
  }

  MediaStream& inner_;
  std::bernoulli_distribution pollute_;
  std::mt19937_64 rng_;
  std::uniform_int_distribution<std::uint32_t> octet_;
  std::vector<std::uint8_t> body_;
};

}  // namespace

int main(int argc, char** argv) {
  std::optional<double> fraction;
  std::vector<const char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--pollute" && i + 1 < argc) fraction = std::stod(argv[++i]);
    else rest.push_back(argv[i]);
  }
  if (!fraction) {
    std::cerr << "usage: polluting_server --pollute FRACTION [ncast-server options]\n";
    return 2;
  }
  const ServerOptions o = parse_server_options(static_cast<int>(rest.size()), rest.data()).options;

  boost::asio::io_context io;
  CpuEngine engine;
  const auto coder = make_engine_chunk_coder(engine);
  CodedCache cache(*coder, o.coded_cache_mb << 20);
  SegmentCache segments(coder->backend(), o.host_memory_mb << 20);
  const auto identity = proto::Ed25519Identity::generate();
  std::vector<std::unique_ptr<MediaStream>> streams;
  std::vector<std::unique_ptr<PollutingSource>> sources;
  Server server(io, o.config, identity);
  for (const auto& f : o.files) {
    StreamInfo info;
    info.name = std::filesystem::path(f).filename().string();
    info.stream_id = stream_id_of(info.name);
    info.server_id = o.server_id.value_or(0x504F4C4C);  // "POLL"
    info.n = o.n;
    info.symbol_size = o.symbol_size;
    streams.push_back(std::make_unique<MediaStream>(info, cache));
    ingest_file(f, *streams.back(), segments);
    sources.push_back(std::make_unique<PollutingSource>(*streams.back(), *fraction, info.server_id));
    server.add_stream(*sources.back());
  }
  server.start();
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int) { server.shutdown([&] { io.stop(); }); });
  const nlohmann::json j{{"event", "listening"},
                         {"address", server.local().to_string()},
                         {"port", server.local().port},
                         {"metrics", nullptr},
                         {"server_id", o.server_id.value_or(0x504F4C4C)}};
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
  io.run();
  return 0;
}
