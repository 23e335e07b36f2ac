// ncast-bench ceiling: how fast an RS encode of a shape runs when its multiplies are free. A pass that
// loads the k sources and stores the m outputs at every column, as a dot-product kernel does, but only
// XORs, moves the same lines through the caches: where ncast's encode and ISA-L's both run at it, the
// shape is bound by its memory traffic. A reference, not a hard bound: the pass does not prefetch, and a
// kernel that does can pass it where the hardware prefetchers fall behind (the Xeon's 1 MiB shards).
#include <immintrin.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cli/subcommands.hpp"
#include "coding/rs/codec.hpp"
#include "coding/simd_level.hpp"
#include "tools/bench/bench.hpp"
#include "tools/bench/isal_anchor.hpp"
#include "tools/bench/rs_shapes.hpp"
#include "tools/bench/subcommands.hpp"

namespace ncast::bench {
namespace {

namespace po = boost::program_options;

// The XOR of the k sources, stored into each of the m outputs: k loads and m stores a column, the least
// work a dot product over these regions can do; the columns a vector pass leaves, byte by byte.
void xor_tail(const std::uint8_t* const* srcs, std::size_t k, std::uint8_t* const* dsts, std::size_t m, std::size_t pos,
              std::size_t len) {
  for (; pos < len; ++pos) {
    std::uint8_t x = 0;
    for (std::size_t s = 0; s < k; ++s) x ^= srcs[s][pos];
    for (std::size_t g = 0; g < m; ++g) dsts[g][pos] = x;
  }
}

// One vector a step, as ISA-L's kernels take them: on the Zen 4 VM the faster of one and two (4+2 at
// 64 KiB: 75-77 against 72 GB/s).
__attribute__((target("avx512f"))) void xor_pass_avx512(const std::uint8_t* const* srcs, std::size_t k,
                                                        std::uint8_t* const* dsts, std::size_t m, std::size_t len) {
  std::size_t pos = 0;
  for (; pos + 64 <= len; pos += 64) {
    __m512i a = _mm512_loadu_si512(srcs[0] + pos);
    for (std::size_t s = 1; s < k; ++s) a = _mm512_xor_si512(a, _mm512_loadu_si512(srcs[s] + pos));
    for (std::size_t g = 0; g < m; ++g) _mm512_storeu_si512(dsts[g] + pos, a);
  }
  xor_tail(srcs, k, dsts, m, pos, len);
}

__attribute__((target("avx2"))) void xor_pass_avx2(const std::uint8_t* const* srcs, std::size_t k,
                                                   std::uint8_t* const* dsts, std::size_t m, std::size_t len) {
  const auto at = [](const std::uint8_t* p) { return reinterpret_cast<const __m256i*>(p); };
  std::size_t pos = 0;
  for (; pos + 64 <= len; pos += 64) {
    __m256i a = _mm256_loadu_si256(at(srcs[0] + pos)), b = _mm256_loadu_si256(at(srcs[0] + pos + 32));
    for (std::size_t s = 1; s < k; ++s) {
      a = _mm256_xor_si256(a, _mm256_loadu_si256(at(srcs[s] + pos)));
      b = _mm256_xor_si256(b, _mm256_loadu_si256(at(srcs[s] + pos + 32)));
    }
    for (std::size_t g = 0; g < m; ++g) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dsts[g] + pos), a);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dsts[g] + pos + 32), b);
    }
  }
  xor_tail(srcs, k, dsts, m, pos, len);
}

// The pass in the vector width of ncast's active level (and so of the ISA-L kernels it is pinned beside).
void ceiling_pass(const std::uint8_t* const* srcs, std::size_t k, std::uint8_t* const* dsts, std::size_t m,
                  std::size_t len) {
  switch (gf::active_level()) {
    case gf::Level::avx512_gfni: return xor_pass_avx512(srcs, k, dsts, m, len);
    case gf::Level::avx2:
    case gf::Level::avx2_gfni: return xor_pass_avx2(srcs, k, dsts, m, len);
    case gf::Level::scalar: break;
  }
  xor_tail(srcs, k, dsts, m, 0, len);
}

// Shards laid out as `ncast-bench rs` lays them (one allocation each, data then parity, then ISA-L's
// parity), so that the three passes see the caches as the rs bench's encode does.
void run_case(Code c, std::size_t shard, const CommonOptions& common, Reporter& reporter) {
  const rs::Codec codec(c.k, c.m, {.backend = Backend::cpu});
  std::deque<HostBuffer> buffers;
  std::vector<std::uint8_t*> shards, isal_parity;
  std::mt19937_64 rng(common.seed);
  for (std::size_t i = 0; i < c.k + c.m; ++i) {
    shards.push_back(buffers.emplace_back(codec.allocate(shard)).data());
    for (std::size_t b = 0; b < shard; ++b) shards.back()[b] = static_cast<std::uint8_t>(rng());
  }
  for (std::size_t p = 0; p < c.m; ++p) isal_parity.push_back(buffers.emplace_back(codec.allocate(shard)).data());
  const IsalMatrixEncoder isal(codec.parity_matrix().bytes().data(), c.m, c.k);
  const std::vector<const std::uint8_t*> data(shards.begin(), shards.begin() + static_cast<long>(c.k));

  const auto ceiling = [&] { ceiling_pass(data.data(), c.k, shards.data() + c.k, c.m, shard); };
  const auto encode = [&] { codec.encode(shards, shard); };
  const auto isal_encode = [&] { isal.encode(data.data(), isal_parity.data(), shard); };
  // The passes compared must do what they claim: the encode must equal ISA-L's, and the ceiling's
  // outputs the XOR of the data shards.
  encode();
  isal_encode();
  for (std::size_t p = 0; p < c.m; ++p)
    if (!std::equal(isal_parity[p], isal_parity[p] + shard, shards[c.k + p]))
      throw std::runtime_error("ncast parity differs from ISA-L's");
  ceiling();
  for (std::size_t b = 0; b < shard; ++b) {
    std::uint8_t x = 0;
    for (std::size_t s = 0; s < c.k; ++s) x ^= data[s][b];
    if (shards[c.k + c.m - 1][b] != x) throw std::runtime_error("the XOR pass computed something else");
  }

  const double bytes = static_cast<double>(c.k * shard);
  const std::pair<std::string, std::function<void()>> sides[] = {
      {"ncast encode", encode}, {IsalMatrixEncoder::name("ec_encode_data"), isal_encode}};
  for (const auto& [who, fn] : sides) {
    Record r;
    r["bench"] = "ceiling";
    r["op"] = "encode";
    r["backend"] = "cpu";
    r["level"] = std::string(gf::to_string(gf::active_level()));
    r["who"] = who;
    r["k"] = c.k;
    r["m"] = c.m;
    r["shard"] = shard;
    r["anchor"] = "xor pass: the same loads and stores, no multiplies";
    put_comparison(r, measure_against(fn, ceiling, bytes, common.seconds, common.rounds));
    reporter.emit(std::move(r));
  }
}

}  // namespace

int run_ceiling(int argc, char** argv) {
  CommonOptions common;
  std::size_t k = 0, m = 0, shard = 1 << 20;
  bool sweep = false;
  po::options_description desc("ncast-bench ceiling options");
  desc.add_options()("k", po::value(&k), "data shards (with --m; default: 4+2 6+3 8+3 10+4 12+4 16+4 17+3)")(
      "m", po::value(&m), "parity shards")("shard", po::value(&shard)->default_value(shard), "bytes per shard")(
      "sweep", po::bool_switch(&sweep), "every code at 4 KiB, 64 KiB and 1 MiB shards (instead of --shard)");
  add_common_options(desc, common);
  if (!parse_options(argc, argv,
                     "usage: ncast-bench ceiling [--k K --m M] [options]\n"
                     "ratio: the encode's rate over an XOR pass with its loads and stores (its traffic's pace)",
                     desc, common))
    return 0;
  // The storage shapes only: the wide ones are bound by their multiplies, not their traffic.
  const std::vector<Code> codes = chosen_codes(k, m, kStorageCodes);
  const std::vector<std::size_t> shards = chosen_shards(sweep, shard);
  Reporter reporter(common);
  for (Code c : codes)
    for (std::size_t s : shards) run_case(c, s, common, reporter);
  return 0;
}

}  // namespace ncast::bench
