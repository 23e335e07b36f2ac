// ncast-bench gpu: the CUDA engine's kernels side by side on one device, timed with device events,
// each checked against the CPU engine before it is timed. The seed-style kernels (baselines/) run in
// the same process and are the anchors (ratio against the 64 KiB product table, the best of them; the other
// two ratios are in the record too). The host-resident cases run beside this host's CPUs: RS beside
// ISA-L, batched RLNC encode beside the CPU encoder, both on every hardware thread.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <variant>
#include <vector>

#include "cli/subcommands.hpp"
#include "coding/cpu_engine.hpp"
#include "coding/rlnc/decoder.hpp"
#include "coding/rlnc/encoder.hpp"
#include "coding/rs/codec.hpp"
#include "gpu/batch_decoder.hpp"
#include "gpu/batch_encoder.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_engine.hpp"
#include "gpu/device_info.hpp"
#include "gpu/gf_kernel.hpp"
#include "gpu/progressive_decoder.hpp"
#include "gpu/rs_device.hpp"
#include "tools/bench/baselines/seed_kernels.hpp"
#include "tools/bench/bench.hpp"
#include "tools/bench/isal_anchor.hpp"
#include "tools/bench/subcommands.hpp"

namespace ncast::bench {
namespace {

namespace po = boost::program_options;
using baselines::SeedKernel;
using gpu::Kernel;

// A kernel the engine chooses from (with a prmt tile or its own choice of one), or a seed-style anchor.
struct Variant {
  std::variant<Kernel, SeedKernel> kernel;
  std::optional<gpu::PrmtTile> tile;
  std::string name() const {
    std::string n(std::visit([](auto k) { return to_string(k); }, kernel));
    if (tile) n.append(" ").append(std::to_string(tile->outputs)).append("x").append(std::to_string(tile->words));
    return n;
  }
  void multiply(const gpu::Product& product, cudaStream_t stream) const {
    if (const auto* seed = std::get_if<SeedKernel>(&kernel)) baselines::multiply(*seed, product, false, stream);
    else gpu::multiply(std::get<Kernel>(kernel), product, false, stream, tile);
  }
};

// Median rate of five trials of enqueue() on stream, timed with events, after a warm-up call; each
// trial repeats the call enough times to last about seconds / 5.
double device_gb_per_s(const std::function<void(cudaStream_t)>& enqueue, double bytes_per_call, double seconds,
                       cudaStream_t stream) {
  gpu::Event start, stop;
  enqueue(stream);
  start.record(stream);
  enqueue(stream);
  stop.record(stream);
  stop.synchronize();
  const double once_s = std::max(1e-6, stop.elapsed_ms_since(start) / 1e3);
  const int reps = static_cast<int>(std::clamp(seconds / 5 / once_s, 1.0, 100000.0));
  std::vector<double> rates;
  for (int t = 0; t < 5; ++t) {
    start.record(stream);
    for (int r = 0; r < reps; ++r) enqueue(stream);
    stop.record(stream);
    stop.synchronize();
    rates.push_back(bytes_per_call * reps / (stop.elapsed_ms_since(start) / 1e3) / 1e9);
  }
  std::nth_element(rates.begin(), rates.begin() + 2, rates.end());
  return rates[2];
}

// Same for a synchronous host call timed with the host clock.
double host_gb_per_s(const std::function<void()>& call, double bytes_per_call, double seconds) {
  using clock = std::chrono::steady_clock;
  call();
  std::vector<double> rates;
  for (int t = 0; t < 5; ++t) {
    std::size_t calls = 0;
    const auto begin = clock::now();
    auto now = begin;
    do {
      call();
      ++calls;
      now = clock::now();
    } while (std::chrono::duration<double>(now - begin).count() < seconds / 5);
    rates.push_back(bytes_per_call * static_cast<double>(calls) / std::chrono::duration<double>(now - begin).count() /
                    1e9);
  }
  std::nth_element(rates.begin(), rates.begin() + 2, rates.end());
  return rates[2];
}

std::vector<std::uint8_t> random_device_fill(gpu::DeviceMatrix& m, std::uint64_t seed) {
  auto bytes = random_bytes(m.rows() * m.cols(), seed);
  std::vector<const std::uint8_t*> rows;
  rows.reserve(m.rows());
  for (std::size_t i = 0; i < m.rows(); ++i) rows.push_back(bytes.data() + i * m.cols());
  m.upload(rows.data());
  gpu::check(cudaDeviceSynchronize(), "uploading benchmark data");
  return bytes;
}

// Device-resident D = C·S for every variant; throughput counted as `counted` bytes per call (coded
// output for RLNC, data input for RS).
void run_device_case(const std::string& name, std::size_t n, std::size_t m, std::size_t len, bool count_output,
                     const std::vector<Variant>& variants, const CommonOptions& common, Reporter& reporter) {
  gpu::DeviceMatrix coefs(m, n, "benchmark coefficients"), src(n, len, "benchmark sources"),
      dst(m, len, "benchmark outputs");
  const auto coef_bytes = random_device_fill(coefs, common.seed);
  const auto src_bytes = random_device_fill(src, common.seed + 1);

  // The CPU engine's answer for a sample of the outputs: the first 8 rows and the last.
  std::vector<std::size_t> sample_rows;
  sample_rows.reserve(9);
  for (std::size_t i = 0; i < std::min<std::size_t>(8, m); ++i) sample_rows.push_back(i);
  if (m > 8) sample_rows.push_back(m - 1);
  std::vector<std::uint8_t> sample_coefs;
  for (std::size_t i : sample_rows)
    sample_coefs.insert(sample_coefs.end(), coef_bytes.begin() + i * n, coef_bytes.begin() + (i + 1) * n);
  std::vector<const std::uint8_t*> src_rows;
  src_rows.reserve(n);
  for (std::size_t j = 0; j < n; ++j) src_rows.push_back(src_bytes.data() + j * len);
  std::vector<std::vector<std::uint8_t>> want(sample_rows.size(), std::vector<std::uint8_t>(len));
  std::vector<std::uint8_t*> want_rows;
  want_rows.reserve(want.size());
  for (auto& w : want) want_rows.push_back(w.data());
  CpuEngine().multiply(sample_coefs.data(), sample_rows.size(), n, src_rows.data(), want_rows.data(), len, false);

  gpu::Stream stream;
  const double counted = static_cast<double>(count_output ? m * len : n * len);
  std::vector<std::pair<Variant, double>> results;
  for (const Variant& v : variants) {
    const gpu::Product product{coefs.cref(), src.cref(), dst.ref()};
    gpu::check(cudaMemset2D(dst.ref().data, dst.pitch(), 0xA5, dst.cols(), dst.rows()), "poisoning outputs");
    gpu::check(cudaDeviceSynchronize(), "poisoning outputs");  // `stream` does not wait for the legacy stream
    v.multiply(product, stream.get());
    stream.synchronize("checking a kernel");
    for (std::size_t s = 0; s < sample_rows.size(); ++s) {
      std::vector<std::uint8_t> got(len);
      gpu::check(cudaMemcpy(got.data(), dst.ref().row(sample_rows[s]), len, cudaMemcpyDeviceToHost),
                 "checking a kernel");
      if (got != want[s])
        throw std::runtime_error("kernel " + v.name() + " disagrees with the CPU engine on output row " +
                                 std::to_string(sample_rows[s]) + " of case " + name);
    }
    const double rate =
        device_gb_per_s([&](cudaStream_t s) { v.multiply(product, s); }, counted, common.seconds, stream.get());
    results.emplace_back(v, rate);
  }
  auto rate_of = [&](SeedKernel k) {
    for (const auto& [v, r] : results)
      if (v.kernel == decltype(v.kernel)(k)) return r;
    return 0.0;
  };
  for (const auto& [v, rate] : results) {
    Record r;
    r["bench"] = "gpu";
    r["case"] = name;
    r["backend"] = "cuda";
    r["level"] = v.name();
    r["n"] = n;
    r["m"] = m;
    r["len"] = len;
    r["counts"] = count_output ? "coded output" : "data input";
    r["gb_per_s"] = rate;
    if (const double loop = rate_of(SeedKernel::nuclei_loop); loop > 0) r["vs_nuclei_loop"] = rate / loop;
    if (const double logexp = rate_of(SeedKernel::gibraltar_logexp); logexp > 0)
      r["vs_gibraltar_logexp"] = rate / logexp;
    if (const double table = rate_of(SeedKernel::product_table); table > 0) {
      r["anchor"] = "gpu product-table";
      r["anchor_gb_per_s"] = table;
    }
    reporter.emit(std::move(r));
  }
}

// Host-resident RS: page-locked data through CudaEngine::multiply (copy in, compute, copy out
// pipelined over streams), beside ISA-L on every hardware thread of this host.
void run_host_rs_case(std::size_t k, std::size_t m, std::size_t len, const std::vector<Kernel>& kernels,
                      const CommonOptions& common, Reporter& reporter) {
  gpu::PinnedBuffer in(k * len, "benchmark sources"), out(m * len, "benchmark parity");
  std::vector<std::uint8_t> isal_out(m * len);
  const auto data = random_bytes(k * len, common.seed);
  std::memcpy(in.get(), data.data(), data.size());
  const auto coefs = random_bytes(m * k, common.seed + 1, /*nonzero=*/true);
  std::vector<const std::uint8_t*> ins;
  std::vector<std::uint8_t*> outs, isal_outs;
  for (std::size_t j = 0; j < k; ++j) ins.push_back(in.get() + j * len);
  for (std::size_t i = 0; i < m; ++i)
    outs.push_back(out.get() + i * len), isal_outs.push_back(isal_out.data() + i * len);

  const IsalMatrixEncoder isal(coefs.data(), m, k);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  auto isal_all_threads = [&] {
    std::vector<std::thread> pool;
    const std::size_t per = (len / threads + 63) / 64 * 64;
    for (unsigned t = 0; t < threads; ++t) {
      const std::size_t c0 = std::min(len, t * per), c1 = std::min(len, c0 + per);
      if (c0 >= c1) break;
      pool.emplace_back([&, c0, c1] {
        std::vector<const std::uint8_t*> s;
        std::vector<std::uint8_t*> d;
        s.reserve(ins.size());
        d.reserve(isal_outs.size());
        for (auto* p : ins) s.push_back(p + c0);
        for (auto* p : isal_outs) d.push_back(p + c0);
        isal.encode(s.data(), d.data(), c1 - c0);
      });
    }
    for (auto& t : pool) t.join();
  };
  const double anchor = host_gb_per_s(isal_all_threads, static_cast<double>(k * len), common.seconds);
  const std::string anchor_name = IsalMatrixEncoder::name() + " x" + std::to_string(threads) + " threads";

  for (Kernel kernel : kernels) {
    gpu::CudaEngine engine(0, kernel);
    std::memset(out.get(), 0xA5, m * len);
    engine.multiply(coefs.data(), m, k, ins.data(), outs.data(), len, false);
    if (std::memcmp(out.get(), isal_out.data(), m * len) != 0)
      throw std::runtime_error("host-resident RS through kernel " + std::string(gpu::to_string(kernel)) +
                               " disagrees with ISA-L");
    const double rate = host_gb_per_s([&] { engine.multiply(coefs.data(), m, k, ins.data(), outs.data(), len, false); },
                                      static_cast<double>(k * len), common.seconds);
    Record r;
    r["bench"] = "gpu";
    r["case"] = "rs-host";
    r["backend"] = "cuda";
    r["level"] = std::string(gpu::to_string(kernel));
    r["k"] = k;
    r["m"] = m;
    r["len"] = len;
    r["counts"] = "data input, pinned host to host";
    r["gb_per_s"] = rate;
    r["anchor"] = anchor_name;
    r["anchor_gb_per_s"] = anchor;
    reporter.emit(std::move(r));
  }
}

// Batched RLNC encode: `segments` resident segments of n=128 × 4096 bytes, 256 coded symbols of each
// per call (vectors drawn on the device), payloads into page-locked host memory; beside the CPU
// encoder (rlnc::Encoder) on every hardware thread of this host making the same symbols.
void run_batch_encode_case(std::size_t segments, const CommonOptions& common, Reporter& reporter) {
  constexpr std::size_t n = 128, len = 4096, per_segment = 256;
  const rlnc::GenerationLayout layout(n, len, n * len);
  const rlnc::EncoderOptions options{.systematic = true};
  gpu::SegmentStore store(std::size_t{4} << 30);
  std::vector<rlnc::SourceBlock> blocks;
  std::vector<gpu::EncodeRequest> requests;
  for (std::uint32_t g = 0; g < segments; ++g) {
    blocks.emplace_back(layout, random_bytes(n * len, common.seed + g));
    store.put({1, g}, layout, blocks.back().bytes(), {rlnc::coefficient_seed(1, 1), g});
    for (std::uint32_t i = 0; i < per_segment; ++i) requests.push_back({{1, g}, static_cast<std::uint32_t>(n + i)});
  }
  gpu::PinnedBuffer out(requests.size() * len, "benchmark payloads");
  gpu::BatchEncoder encoder(store, options);
  const double bytes = static_cast<double>(requests.size() * len);

  std::vector<rlnc::Encoder> cpu;
  for (std::uint32_t g = 0; g < segments; ++g)
    cpu.emplace_back(blocks[g], rlnc::SeedContext{rlnc::coefficient_seed(1, 1), g}, options);
  std::vector<std::uint8_t> cpu_out(requests.size() * len);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  auto cpu_all_threads = [&] {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (std::size_t g = t; g < segments; g += threads) {
          std::vector<std::uint8_t*> outs;
          for (std::size_t i = 0; i < per_segment; ++i) outs.push_back(cpu_out.data() + (g * per_segment + i) * len);
          cpu[g].produce(static_cast<std::uint32_t>(n), per_segment, outs.data());
        }
      });
    for (auto& t : pool) t.join();
  };
  const double anchor = host_gb_per_s(cpu_all_threads, bytes, common.seconds);

  std::memset(out.get(), 0xA5, out.size());
  encoder.encode(requests, out.get(), len);
  if (std::memcmp(out.get(), cpu_out.data(), out.size()) != 0)
    throw std::runtime_error("batched GPU encode disagrees with the CPU encoder");
  const double rate = host_gb_per_s([&] { encoder.encode(requests, out.get(), len); }, bytes, common.seconds);
  Record r;
  r["bench"] = "gpu";
  r["case"] = "rlnc-batch";
  r["backend"] = "cuda";
  r["level"] = "auto";
  r["n"] = n;
  r["m"] = requests.size();
  r["len"] = len;
  r["counts"] = "coded output into pinned host memory";
  r["gb_per_s"] = rate;
  r["anchor"] = "cpu rlnc::Encoder x" + std::to_string(threads) + " threads";
  r["anchor_gb_per_s"] = anchor;
  reporter.emit(std::move(r));
}

// `count` device-resident generations of n × len: random coefficients and sources, their coded
// payloads (on the device and on the host), and a decode job for each.
struct DecodeGenerations {
  std::vector<gpu::DeviceMatrix> coefs, sources, payloads, outs;
  std::vector<std::vector<std::uint8_t>> host_coefs, host_payloads, host_sources;
  std::vector<gpu::DecodeJob> jobs;
};

DecodeGenerations make_decode_generations(std::size_t count, std::size_t n, std::size_t len, std::uint64_t seed,
                                          gpu::Stream& stream) {
  DecodeGenerations d;
  for (auto* v : {&d.coefs, &d.sources, &d.payloads, &d.outs}) v->reserve(count);
  d.jobs.reserve(count);
  for (std::size_t g = 0; g < count; ++g) {
    d.coefs.emplace_back(n, n, "benchmark coefficients");
    d.sources.emplace_back(n, len, "benchmark sources");
    d.payloads.emplace_back(n, len, "benchmark payloads");
    d.outs.emplace_back(n, len, "benchmark outputs");
    d.host_coefs.push_back(random_device_fill(d.coefs.back(), seed + 2 * g));
    d.host_sources.push_back(random_device_fill(d.sources.back(), seed + 2 * g + 1));
    gpu::multiply(Kernel::prmt, {d.coefs.back().cref(), d.sources.back().cref(), d.payloads.back().ref()}, false,
                  stream.get());
    d.host_payloads.emplace_back(n * len);
    std::vector<std::uint8_t*> rows;
    rows.reserve(n);
    for (std::size_t i = 0; i < n; ++i) rows.push_back(d.host_payloads.back().data() + i * len);
    d.payloads.back().download(rows.data(), stream.get());
    d.jobs.push_back({d.coefs.back().cref(), d.payloads.back().cref(), d.outs.back().ref()});
  }
  stream.synchronize("preparing the decode benchmark");
  return d;
}

// Every generation a decoder decodes comes out as its sources, into outputs poisoned first.
void check_batch_decoder(gpu::BatchDecoder& decoder, DecodeGenerations& d, std::size_t n, std::size_t len,
                         gpu::Stream& stream) {
  for (auto& o : d.outs)
    gpu::check(cudaMemset2D(o.ref().data, o.pitch(), 0xA5, o.cols(), o.rows()), "poisoning outputs");
  gpu::check(cudaDeviceSynchronize(), "poisoning outputs");
  const auto ok = decoder.decode(d.jobs, stream.get());
  for (std::size_t g = 0; g < d.jobs.size(); ++g) {
    if (!ok[g]) continue;  // a singular draw (p ≈ 1/256) is decoded by nobody
    std::vector<std::uint8_t> got(n * len);
    std::vector<std::uint8_t*> rows;
    rows.reserve(n);
    for (std::size_t i = 0; i < n; ++i) rows.push_back(got.data() + i * len);
    d.outs[g].download(rows.data(), stream.get());
    stream.synchronize("checking the decode");
    if (got != d.host_sources[g])
      throw std::runtime_error("GPU decode of generation " + std::to_string(g) + " is wrong");
  }
}

// Batched decode of `count` device-resident generations of n=128 × 4096 bytes (inverse, then
// multiply), and one generation alone (its latency); beside the CPU's progressive rlnc::Decoder on
// every hardware thread of this host decoding the same symbols.
void run_decode_case(std::size_t count, const CommonOptions& common, Reporter& reporter) {
  constexpr std::size_t n = 128, len = 4096;
  gpu::Stream stream;
  DecodeGenerations gens = make_decode_generations(count, n, len, common.seed, stream);
  const auto& host_coefs = gens.host_coefs;
  const auto& host_payloads = gens.host_payloads;
  auto& jobs = gens.jobs;

  // The decoder with the automatic product kernel, and with the prmt product for comparison; each
  // checked against the sources before it is timed.
  gpu::BatchDecoder decoder, prmt_decoder(Kernel::prmt), bitslice_decoder(Kernel::bitslice);
  for (gpu::BatchDecoder* d : {&decoder, &prmt_decoder, &bitslice_decoder})
    check_batch_decoder(*d, gens, n, len, stream);

  // The CPU decodes the same symbols (explicit coefficient vectors), generations spread over threads.
  const rlnc::GenerationLayout layout(n, len, n * len);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::vector<std::uint8_t>> cpu_out(count, std::vector<std::uint8_t>(n * len));
  auto cpu_all_threads = [&] {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (std::size_t g = t; g < count; g += threads) {
          rlnc::Decoder d(layout, cpu_out[g], {});
          for (std::size_t i = 0; i < n; ++i)
            d.add({rlnc::SymbolKind::coded,
                   static_cast<std::uint32_t>(i),
                   {},
                   std::span(host_coefs[g]).subspan(i * n, n),
                   std::span(host_payloads[g]).subspan(i * len, len)});
          d.flush();
        }
      });
    for (auto& t : pool) t.join();
  };
  const double bytes = static_cast<double>(count * n * len);
  const double anchor = host_gb_per_s(cpu_all_threads, bytes, common.seconds);
  const std::string anchor_name = "cpu rlnc::Decoder x" + std::to_string(threads) + " threads";
  auto level = [&](Kernel product, std::size_t gens) {
    if (product == Kernel::automatic) product = gpu::fastest_kernel(n, n, len, gens);
    return "gauss-jordan + " + std::string(gpu::to_string(product));
  };
  struct Timed {
    const char* name;
    std::size_t gens;
    gpu::BatchDecoder* decoder;
    Kernel product;
  };
  for (const Timed& t :
       {Timed{"decode", count, &decoder, Kernel::automatic}, Timed{"decode", count, &prmt_decoder, Kernel::prmt},
        Timed{"decode", count, &bitslice_decoder, Kernel::bitslice},
        Timed{"decode-one", 1, &decoder, Kernel::automatic}}) {
    const auto some = std::span(jobs).first(t.gens);
    const double r = host_gb_per_s([&] { t.decoder->decode(some, stream.get()); },
                                   static_cast<double>(t.gens * n * len), common.seconds);
    Record rec;
    rec["bench"] = "gpu";
    rec["case"] = t.name;
    rec["backend"] = "cuda";
    rec["level"] = level(t.product, t.gens);
    rec["decoder_kernel"] = std::string(gpu::to_string(t.product));  // what BatchDecoder was given
    rec["n"] = n;
    rec["m"] = t.gens;
    rec["len"] = len;
    rec["counts"] = "decoded output";
    rec["gb_per_s"] = r;
    rec["us_per_call"] = static_cast<double>(t.gens * n * len) / (r * 1e3);
    rec["anchor"] = anchor_name;
    rec["anchor_gb_per_s"] = anchor;
    reporter.emit(std::move(rec));
  }
}

// The seeds of generation g of the progressive case.
rlnc::SeedContext progressive_seeds(std::size_t g) {
  return rlnc::SeedContext{rlnc::coefficient_seed(2, 3), static_cast<std::uint32_t>(g)};
}

// `per_generation` seeded dense coded symbols of each block, encoded on `threads` threads.
std::vector<std::vector<rlnc::CodedSymbol>> encode_generations(const std::vector<rlnc::SourceBlock>& blocks,
                                                               std::size_t per_generation, unsigned threads) {
  std::vector<std::vector<rlnc::CodedSymbol>> symbols(blocks.size());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t g = t; g < blocks.size(); g += threads) {
        const rlnc::Encoder encoder(blocks[g], progressive_seeds(g), {.systematic = false});
        symbols[g].reserve(per_generation);
        for (std::uint32_t i = 0; i < per_generation; ++i) symbols[g].push_back(encoder.produce(i));
      }
    });
  for (auto& t : pool) t.join();
  return symbols;
}

// Progressive decode of `count` generations (n=128 × 4096 bytes) on the device, as a swarm's peers
// receive: seeded dense coded symbols (n + 2 per generation) arriving 32 per generation at a time
// for all generations at once; timed from the first arrival to the last generation's completion
// (reopening the generations is outside the timing). Beside the CPU's rlnc::Decoder on every hardware
// thread decoding the same symbols, coefficients drawn from the seeds on both sides.
void run_progressive_case(std::size_t count, const CommonOptions& common, Reporter& reporter) {
  constexpr std::size_t n = 128, len = 4096, extra = 2, per_call = 32;
  const rlnc::GenerationLayout layout(n, len, n * len);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<rlnc::SourceBlock> blocks;
  for (std::size_t g = 0; g < count; ++g) blocks.emplace_back(layout, random_bytes(n * len, common.seed + g));
  const auto symbols = encode_generations(blocks, n + extra, threads);

  gpu::ProgressiveDecoder decoder;
  std::vector<std::vector<gpu::ProgressiveDecoder::Arrival>> calls;
  for (std::size_t first = 0; first < n + extra; first += per_call) {
    calls.emplace_back();
    for (std::size_t g = 0; g < count; ++g)
      for (std::size_t i = first; i < std::min(first + per_call, n + extra); ++i)
        calls.back().push_back({static_cast<std::uint32_t>(g), symbols[g][i].view()});
  }
  std::vector<gpu::ProgressiveDecoder::Outcome> outcomes;
  auto decode_all = [&] {
    for (std::size_t g = 0; g < count; ++g) decoder.open(static_cast<std::uint32_t>(g), layout, progressive_seeds(g));
    using clock = std::chrono::steady_clock;
    const auto begin = clock::now();
    for (const auto& arrivals : calls) {
      outcomes.resize(arrivals.size());
      decoder.add(arrivals, outcomes);
    }
    return std::chrono::duration<double>(clock::now() - begin).count();
  };
  decode_all();
  for (std::size_t g = 0; g < count; ++g) {
    std::vector<std::uint8_t> got(n * len);
    decoder.download(static_cast<std::uint32_t>(g), got);
    if (!std::equal(got.begin(), got.end(), blocks[g].bytes().begin()))
      throw std::runtime_error("GPU progressive decode of generation " + std::to_string(g) + " is wrong");
  }
  std::vector<double> seconds;
  seconds.reserve(5);
  for (int t = 0; t < 5; ++t) seconds.push_back(decode_all());
  std::nth_element(seconds.begin(), seconds.begin() + 2, seconds.end());
  const double bytes = static_cast<double>(count * n * len), rate = bytes / seconds[2] / 1e9;

  std::vector<std::vector<std::uint8_t>> cpu_out(count, std::vector<std::uint8_t>(n * len));
  auto cpu_all_threads = [&] {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (std::size_t g = t; g < count; g += threads) {
          rlnc::Decoder d(layout, cpu_out[g], progressive_seeds(g));
          for (const auto& s : symbols[g]) d.add(s.view());
        }
      });
    for (auto& t : pool) t.join();
  };
  const double anchor = host_gb_per_s(cpu_all_threads, bytes, common.seconds);
  Record rec;
  rec["bench"] = "gpu";
  rec["case"] = "decode-progressive";
  rec["backend"] = "cuda";
  rec["level"] = "progressive + auto";
  rec["n"] = n;
  rec["m"] = count;
  rec["len"] = len;
  rec["counts"] = "decoded output, seeded symbols 32 per generation per call";
  rec["gb_per_s"] = rate;
  rec["us_per_call"] = seconds[2] * 1e6;
  rec["anchor"] = "cpu rlnc::Decoder x" + std::to_string(threads) + " threads";
  rec["anchor_gb_per_s"] = anchor;
  reporter.emit(std::move(rec));
}

// The payload step of batched decode alone: `count` generations' products C⁻¹·P (n=128 × 4096 bytes)
// in one ProductBatch launch per call, for each kernel; counted as decoded output. Checked against
// the CPU engine on the first and the last generation first.
void run_decode_payload_case(std::size_t count, const std::vector<Kernel>& kernels, const CommonOptions& common,
                             Reporter& reporter) {
  constexpr std::size_t n = 128, len = 4096;
  std::vector<gpu::DeviceMatrix> coefs, sources, outs;
  std::vector<std::vector<std::uint8_t>> host_coefs, host_sources;
  for (std::size_t g = 0; g < count; ++g) {
    coefs.emplace_back(n, n, "benchmark coefficients");
    sources.emplace_back(n, len, "benchmark payloads");
    outs.emplace_back(n, len, "benchmark outputs");
    host_coefs.push_back(random_device_fill(coefs.back(), common.seed + 2 * g));
    host_sources.push_back(random_device_fill(sources.back(), common.seed + 2 * g + 1));
  }
  std::vector<std::vector<std::uint8_t>> want(2, std::vector<std::uint8_t>(n * len));
  for (std::size_t w = 0; w < 2; ++w) {
    const std::size_t g = w == 0 ? 0 : count - 1;
    std::vector<const std::uint8_t*> in;
    std::vector<std::uint8_t*> out;
    for (std::size_t i = 0; i < n; ++i)
      in.push_back(host_sources[g].data() + i * len), out.push_back(want[w].data() + i * len);
    CpuEngine().multiply(host_coefs[g].data(), n, n, in.data(), out.data(), len, false);
  }
  gpu::Stream stream;
  for (Kernel kernel : kernels) {
    gpu::ProductBatch batch;
    for (std::size_t g = 0; g < count; ++g) batch.add({coefs[g].cref(), sources[g].cref(), outs[g].ref()});
    for (auto& o : outs)
      gpu::check(cudaMemset2D(o.ref().data, o.pitch(), 0xA5, o.cols(), o.rows()), "poisoning outputs");
    gpu::check(cudaDeviceSynchronize(), "poisoning outputs");
    batch.multiply(kernel, false, stream.get());
    stream.synchronize("checking the payload products");
    for (std::size_t w = 0; w < 2; ++w) {
      std::vector<std::uint8_t> got(n * len);
      std::vector<std::uint8_t*> rows;
      for (std::size_t i = 0; i < n; ++i) rows.push_back(got.data() + i * len);
      outs[w == 0 ? 0 : count - 1].download(rows.data(), stream.get());
      stream.synchronize("checking the payload products");
      if (got != want[w])
        throw std::runtime_error("payload product through kernel " + std::string(gpu::to_string(kernel)) +
                                 " disagrees with the CPU engine");
    }
    const double rate = device_gb_per_s([&](cudaStream_t s) { batch.multiply(kernel, false, s); },
                                        static_cast<double>(count * n * len), common.seconds, stream.get());
    Record r;
    r["bench"] = "gpu";
    r["case"] = "decode-payload";
    r["backend"] = "cuda";
    const Kernel ran = kernel == Kernel::automatic ? gpu::fastest_kernel(n, n, len, count) : kernel;
    r["level"] = std::string(gpu::to_string(kernel)) +
                 (kernel == Kernel::automatic ? " (" + std::string(gpu::to_string(ran)) + ")" : "");
    r["n"] = n;
    r["m"] = count;
    r["len"] = len;
    r["counts"] = "decoded output (C^-1 P only)";
    r["gb_per_s"] = rate;
    reporter.emit(std::move(r));
  }
}

// Device-resident RS 10+4 through DeviceRsCodec (the codec's Cauchy matrix): encode, and rebuilding
// four lost data shards; counted as the stripe's data bytes, each checked against the CPU codec first.
void run_rs_codec_case(std::size_t len, const CommonOptions& common, Reporter& reporter) {
  constexpr std::size_t k = 10, m = 4;
  const rs::Codec cpu(k, m, {}, std::make_shared<CpuEngine>());
  gpu::DeviceRsCodec codec(cpu);
  gpu::DeviceMatrix stripe(k + m, len, "benchmark stripe");
  const auto data = random_device_fill(stripe, common.seed);  // parity rows get overwritten
  std::vector<std::vector<std::uint8_t>> want(k + m);
  std::vector<std::uint8_t*> ptrs;
  for (std::size_t i = 0; i < k + m; ++i) {
    want[i].assign(data.begin() + static_cast<long>(i * len), data.begin() + static_cast<long>((i + 1) * len));
    ptrs.push_back(want[i].data());
  }
  cpu.encode(ptrs, len);
  gpu::Stream stream;
  const std::size_t lost[] = {0, 3, 5, 9};
  auto check_stripe = [&](const char* what) {
    stream.synchronize(what);
    std::vector<std::uint8_t> row(len);
    for (std::size_t i = 0; i < k + m; ++i) {
      gpu::check(cudaMemcpy(row.data(), stripe.cref().row(i), len, cudaMemcpyDeviceToHost), what);
      if (row != want[i]) throw std::runtime_error(std::string(what) + ": shard " + std::to_string(i) + " is wrong");
    }
  };
  codec.encode(stripe.ref(), stream.get());
  check_stripe("device RS encode");
  for (std::size_t e : lost) gpu::check(cudaMemset(stripe.ref().row(e), 0xA5, len), "erasing shards");
  gpu::check(cudaDeviceSynchronize(), "erasing shards");  // the codec's stream does not wait for the legacy one
  codec.reconstruct(stripe.ref(), lost, stream.get());
  check_stripe("device RS reconstruct");
  const double bytes = static_cast<double>(k * len);
  const double encode =
      device_gb_per_s([&](cudaStream_t s) { codec.encode(stripe.ref(), s); }, bytes, common.seconds, stream.get());
  const double rebuild = device_gb_per_s([&](cudaStream_t s) { codec.reconstruct(stripe.ref(), lost, s); }, bytes,
                                         common.seconds, stream.get());
  for (const auto& [name, rate] : {std::pair{"rs-codec-encode", encode}, std::pair{"rs-codec-rebuild4", rebuild}}) {
    Record r;
    r["bench"] = "gpu";
    r["case"] = name;
    r["backend"] = "cuda";
    r["level"] = "auto";
    r["k"] = k;
    r["m"] = m;
    r["len"] = len;
    r["counts"] = "data input, device-resident stripe";
    r["gb_per_s"] = rate;
    reporter.emit(std::move(r));
  }
}

const std::vector<std::string> kCases = {"rlnc128",  "rlnc32",     "rs-device", "rs-device-32",   "rs-host",
                                         "rs-codec", "rlnc-batch", "decode",    "decode-payload", "decode-progressive"};

}  // namespace

int run_gpu(int argc, char** argv) {
  CommonOptions common;
  std::vector<std::string> cases, kernel_names;
  bool all_tiles = false;
  std::size_t coded = 16384, rs_len = std::size_t{32} << 20;
  po::options_description desc("ncast-bench gpu options");
  desc.add_options()("case", po::value(&cases)->multitoken(),
                     "cases: rlnc128 rlnc32 rs-device rs-device-32 rs-host rs-codec rlnc-batch decode decode-payload "
                     "decode-progressive (default: all)")(
      "kernel", po::value(&kernel_names)->multitoken(),
      "kernels: nuclei-loop gibraltar-logexp product-table prmt bitslice tensor-b1 auto (default: all)")(
      "all-tiles", po::bool_switch(&all_tiles), "also time every compiled prmt tile in the RLNC cases")(
      "coded", po::value(&coded)->default_value(coded), "coded blocks per launch in the RLNC cases")(
      "rs-bytes", po::value(&rs_len)->default_value(rs_len), "bytes per shard in the RS cases");
  add_common_options(desc, common);
  if (!parse_options(argc, argv, "usage: ncast-bench gpu [options]", desc, common)) return 0;
  for (const auto& c : cases)
    if (std::find(kCases.begin(), kCases.end(), c) == kCases.end()) throw cli::UsageError("unknown case '" + c + "'");
  if (cases.empty()) cases = kCases;
  std::vector<SeedKernel> seeds;
  std::vector<Kernel> kernels;
  for (const auto& name : kernel_names) {
    if (const auto seed = baselines::parse_seed_kernel(name)) seeds.push_back(*seed);
    else if (const auto k = gpu::parse_kernel(name)) kernels.push_back(*k);
    else throw cli::UsageError("unknown kernel '" + name + "'");
  }
  if (kernel_names.empty()) {
    seeds.assign(baselines::all_seed_kernels().begin(), baselines::all_seed_kernels().end());
    kernels.assign(gpu::all_kernels().begin(), gpu::all_kernels().end());
  }
  if (coded == 0 || rs_len == 0) throw cli::UsageError("--coded and --rs-bytes must be positive");

  std::string why;
  const auto devices = gpu::usable_devices(&why);
  if (devices.empty()) throw std::runtime_error("no usable CUDA device: " + why);
  gpu::DeviceGuard guard(devices.front().index);
  std::cerr << "ncast-bench gpu: device " << devices.front().index << ": " << gpu::describe(devices.front()) << "\n";

  std::vector<Variant> variants;  // the anchors first
  variants.reserve(seeds.size() + kernels.size());
  for (SeedKernel k : seeds) variants.push_back({k, std::nullopt});
  for (Kernel k : kernels) variants.push_back({k, std::nullopt});
  std::vector<Variant> rlnc_variants = variants;
  if (all_tiles)
    for (const auto& t : gpu::prmt_tiles()) rlnc_variants.push_back({Kernel::prmt, t});

  Reporter reporter(common);
  for (const auto& c : cases) {
    if (c == "rlnc128") run_device_case(c, 128, coded, 4096, true, rlnc_variants, common, reporter);
    if (c == "rlnc32") run_device_case(c, 32, coded, 4096, true, rlnc_variants, common, reporter);
    if (c == "rs-device") run_device_case(c, 10, 4, rs_len, false, variants, common, reporter);
    if (c == "rs-device-32") run_device_case(c, 32, 8, rs_len, false, variants, common, reporter);
    if (c == "rs-host") run_host_rs_case(10, 4, rs_len, kernels, common, reporter);
    if (c == "rs-codec") run_rs_codec_case(rs_len, common, reporter);
    if (c == "rlnc-batch") run_batch_encode_case(64, common, reporter);
    if (c == "decode") run_decode_case(264, common, reporter);
    if (c == "decode-payload") run_decode_payload_case(264, kernels, common, reporter);
    if (c == "decode-progressive") run_progressive_case(264, common, reporter);
  }
  return 0;
}

}  // namespace ncast::bench
