// ncast-bench rs: the Reed–Solomon codec (encode; decode with cached decode rows and from scratch)
// beside ISA-L doing the same work on the same matrix in the same process.
#include <isa-l/erasure_code.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/subcommands.hpp"
#include "coding/rs/codec.hpp"
#include "coding/rs/stripe.hpp"
#include "coding/simd_level.hpp"
#include "tools/bench/bench.hpp"
#include "tools/bench/isal_anchor.hpp"
#include "tools/bench/rs_shapes.hpp"
#include "tools/bench/subcommands.hpp"

namespace ncast::bench {
namespace {

namespace po = boost::program_options;

struct Settings {
  std::size_t shard = 1 << 20;
  rs::MatrixKind matrix = rs::MatrixKind::cauchy;
  Backend backend = Backend::cpu;
  std::size_t lost = 0;  // 0: min(m, k) data shards
  bool uncached = true;  // also time decode with the decode-matrix cache cleared before every call
};

// The (k+m) × k generator ISA-L works from: identity on top, the codec's parity rows below. For the
// Cauchy matrix it is gf_gen_cauchy1_matrix itself, checked equal to ours.
std::vector<unsigned char> isal_generator(const rs::Codec& codec) {
  const std::size_t k = codec.data_shards(), n = codec.total_shards();
  std::vector<unsigned char> a(n * k, 0);
  if (codec.matrix_kind() == rs::MatrixKind::cauchy) {
    gf_gen_cauchy1_matrix(a.data(), static_cast<int>(n), static_cast<int>(k));
    if (!std::equal(a.begin() + static_cast<long>(k * k), a.end(), codec.parity_matrix().bytes().begin()))
      throw std::runtime_error("Cauchy matrix differs from ISA-L gf_gen_cauchy1_matrix");
    return a;
  }
  for (std::size_t i = 0; i < k; ++i) a[i * k + i] = 1;
  std::copy(codec.parity_matrix().bytes().begin(), codec.parity_matrix().bytes().end(), a.begin() + k * k);
  return a;
}

// ISA-L decode as its users write it (erasure_code/ec_highlevel examples): invert the survivors' rows,
// take the rows of the lost data shards, expand tables, one ec_encode_data.
class IsalDecoder {
 public:
  IsalDecoder(std::vector<unsigned char> generator, std::size_t k, std::size_t lost)
      : a_(std::move(generator)), k_(k), lost_(lost), b_(k * k), d_(k * k), rows_(lost * k), tables_(32 * k * lost) {}

  // survivors: the k shards read (data shards lost.. k-1, then parity); outs: the lost data shards.
  void decode(unsigned char* const* survivors, unsigned char* const* outs, std::size_t len) {
    for (std::size_t r = 0; r < k_; ++r) {
      const std::size_t shard = r < k_ - lost_ ? lost_ + r : k_ + (r - (k_ - lost_));
      std::copy_n(a_.begin() + static_cast<long>(shard * k_), k_, b_.begin() + static_cast<long>(r * k_));
    }
    if (gf_invert_matrix(b_.data(), d_.data(), static_cast<int>(k_)) != 0)
      throw std::runtime_error("ISA-L: survivor matrix not invertible");
    std::copy_n(d_.begin(), lost_ * k_, rows_.begin());  // lost data shards are 0 .. lost-1
    isal_init_tables(k_, lost_, rows_.data(), tables_.data());
    isal_encode(len, k_, lost_, tables_.data(), survivors, outs);
  }

 private:
  std::vector<unsigned char> a_;
  std::size_t k_, lost_;
  std::vector<unsigned char> b_, d_, rows_, tables_;
};

std::string level_of(const Engine& engine) {
  if (engine.backend() == Backend::cpu) return std::string(gf::to_string(gf::active_level()));
  return engine.description();
}

// One code at one shard size: its shards, ncast's codec and ISA-L set up on the same matrix and bytes.
class CodeCase {
 public:
  CodeCase(Code c, const Settings& s, std::uint64_t seed)
      : c_(c),
        s_(s),
        lost_(s.lost ? s.lost : std::min(c.m, c.k)),
        codec_(c.k, c.m, {.matrix = s.matrix, .backend = s.backend}),
        generator_(isal_generator(codec_)),
        isal_encoder_(generator_.data() + c.k * c.k, c.m, c.k) {
    if (lost_ > c.m || lost_ > c.k)
      throw cli::UsageError("--lost " + std::to_string(lost_) + ": a " + std::to_string(c.k) + "+" +
                            std::to_string(c.m) + " code rebuilds at most " + std::to_string(std::min(c.m, c.k)) +
                            " data shards");
    std::mt19937_64 rng(seed);
    for (std::size_t i = 0; i < c.k + c.m; ++i) {
      ptrs_.push_back(buffer());
      for (std::size_t b = 0; b < s.shard; ++b) ptrs_.back()[b] = static_cast<std::uint8_t>(rng());
    }
    for (std::size_t p = 0; p < c.m; ++p) isal_parity_.push_back(buffer());
  }

  void run_encode(const CommonOptions& common, Reporter& reporter) {
    const std::size_t len = s_.shard;
    const auto encode = [&] { codec_.encode(ptrs_, len); };
    const auto isal_encode = [&] { isal_encoder_.encode(ptrs_.data(), isal_parity_.data(), len); };
    // Never time a wrong codec: parity must equal ISA-L's first.
    encode();
    isal_encode();
    for (std::size_t p = 0; p < c_.m; ++p)
      if (!std::equal(isal_parity_[p], isal_parity_[p] + len, ptrs_[c_.k + p]))
        throw std::runtime_error("rs encode disagrees with ISA-L on parity shard " + std::to_string(p));
    Record r = base("encode");
    r["checked_against"] = "isa-l";
    r["anchor"] = IsalMatrixEncoder::name("ec_encode_data");
    put_comparison(r, measure_against(encode, isal_encode, data_bytes(), common.seconds, common.rounds));
    reporter.emit(std::move(r));
  }

  // Data shards 0 .. lost-1 are gone; both libraries read the first k survivors.
  void run_decode(const CommonOptions& common, Reporter& reporter, bool with_uncached) {
    const std::size_t len = s_.shard;
    std::vector<std::size_t> erased;
    std::vector<std::uint8_t*> decode_ptrs = ptrs_, isal_outs;
    for (std::size_t i = 0; i < lost_; ++i) {
      erased.push_back(i);
      decode_ptrs[i] = buffer();
      isal_outs.push_back(buffer());
    }
    std::vector<std::uint8_t*> survivors(ptrs_.begin() + static_cast<long>(lost_),
                                         ptrs_.begin() + static_cast<long>(lost_ + c_.k));
    IsalDecoder isal_decoder(generator_, c_.k, lost_);
    const auto decode = [&] { codec_.reconstruct(decode_ptrs, len, erased); };
    const auto decode_uncached = [&] {
      codec_.clear_decode_cache();
      codec_.reconstruct(decode_ptrs, len, erased);
    };
    const auto isal_decode = [&] { isal_decoder.decode(survivors.data(), isal_outs.data(), len); };
    decode_uncached();
    isal_decode();
    for (std::size_t i = 0; i < lost_; ++i)
      if (!std::equal(ptrs_[i], ptrs_[i] + len, decode_ptrs[i]) || !std::equal(ptrs_[i], ptrs_[i] + len, isal_outs[i]))
        throw std::runtime_error("rs decode did not give back data shard " + std::to_string(i));
    for (const bool cached : {true, false}) {
      if (!cached && !with_uncached) continue;
      Record r = base(cached ? "decode" : "decode_uncached");
      r["lost"] = lost_;
      r["checked_against"] = "original";
      r["anchor"] = IsalMatrixEncoder::name("gf_invert_matrix+ec_init_tables+ec_encode_data");
      const std::function<void()> fn = cached ? std::function<void()>(decode) : std::function<void()>(decode_uncached);
      put_comparison(r, measure_against(fn, isal_decode, data_bytes(), common.seconds, common.rounds));
      reporter.emit(std::move(r));
    }
    run_decode_vs_encode(common, reporter, erased);
  }

  // A decode of a cached pattern is one product of the same size as the encode, so it should run as
  // fast: timed against the encode in alternating rounds, since two separate cases on a busy machine
  // differ by more than the per-call costs this looks for. Both work on one stripe as a user holds it
  // (rs::Stripe): the encode rewrites its parity, the decode its lost data shards, in place. Separate
  // output buffers would not compare like with like: the decode would then read parity the encode had
  // just streamed out of the cache, and write memory the encode never touches.
  void run_decode_vs_encode(const CommonOptions& common, Reporter& reporter, const std::vector<std::size_t>& erased) {
    const std::size_t len = s_.shard;
    rs::Stripe stripe(codec_, len);
    for (std::size_t i = 0; i < c_.k; ++i) std::copy_n(ptrs_[i], len, stripe.shard(i));
    const auto encode = [&] { codec_.encode(stripe.shards(), len); };
    const auto decode = [&] { codec_.reconstruct(stripe.shards(), len, erased); };
    encode();
    for (std::size_t i : erased) std::fill_n(stripe.shard(i), len, std::uint8_t{0});
    decode();
    const auto check = [&](const char* when) {
      for (std::size_t i = 0; i < c_.k + c_.m; ++i)
        if (!std::equal(ptrs_[i], ptrs_[i] + len, stripe.shard(i)))
          throw std::runtime_error("rs decode_vs_encode: shard " + std::to_string(i) + " differs " + when);
    };
    check("after the first decode");
    Record r = base("decode_vs_encode");
    r["lost"] = lost_;
    r["checked_against"] = "original";
    r["anchor"] = "ncast encode, same stripe";
    put_comparison(r, measure_against(decode, encode, data_bytes(), common.seconds, common.rounds));
    check("after timing");
    reporter.emit(std::move(r));
  }

 private:
  std::uint8_t* buffer() { return buffers_.emplace_back(codec_.allocate(s_.shard)).data(); }
  double data_bytes() const { return static_cast<double>(c_.k * s_.shard); }

  Record base(const char* op) const {
    Record r;
    r["bench"] = "rs";
    r["op"] = op;
    r["backend"] = std::string(to_string(codec_.engine().backend()));
    r["level"] = level_of(codec_.engine());
    r["k"] = c_.k;
    r["m"] = c_.m;
    r["matrix"] = std::string(rs::to_string(s_.matrix));
    r["shard"] = s_.shard;
    return r;
  }

  Code c_;
  const Settings& s_;
  std::size_t lost_;
  rs::Codec codec_;
  std::vector<unsigned char> generator_;
  IsalMatrixEncoder isal_encoder_;
  std::deque<HostBuffer> buffers_;
  std::vector<std::uint8_t*> ptrs_, isal_parity_;
};

}  // namespace

int run_rs(int argc, char** argv) {
  CommonOptions common;
  Settings s;
  std::size_t k = 0, m = 0;
  std::string matrix = "cauchy", backend = "cpu";
  bool sweep = false, no_uncached = false;
  po::options_description desc("ncast-bench rs options");
  desc.add_options()("k", po::value(&k),
                     "data shards (with --m; default: 4+2 6+3 8+3 10+4 12+4 16+4 17+3 32+8 128+32)")(
      "m", po::value(&m), "parity shards")("shard", po::value(&s.shard)->default_value(s.shard), "bytes per shard")(
      "matrix", po::value(&matrix)->default_value(matrix), "cauchy | vandermonde")(
      "backend", po::value(&backend)->default_value(backend), "auto | cpu | cuda")(
      "lost", po::value(&s.lost), "data shards lost in the decode cases (default: min(m, k))")(
      "sweep", po::bool_switch(&sweep), "every code at 4 KiB, 64 KiB and 1 MiB shards (instead of --shard)")(
      "no-uncached", po::bool_switch(&no_uncached), "skip the decode case that clears the decode-matrix cache");
  add_common_options(desc, common);
  if (!parse_options(argc, argv,
                     "usage: ncast-bench rs [--k K --m M] [options]\n"
                     "decode_vs_encode: the cached decode against ncast's encode, both on one stripe (lost shards "
                     "rebuilt in place)",
                     desc, common))
    return 0;

  const auto kind = rs::parse_matrix_kind(matrix);
  if (!kind || *kind == rs::MatrixKind::custom) throw cli::UsageError("--matrix must be cauchy or vandermonde");
  s.matrix = *kind;
  s.uncached = !no_uncached;
  const auto b = parse_backend(backend);
  if (!b) throw cli::UsageError("--backend must be auto, cpu or cuda");
  s.backend = *b;
  std::vector<Code> defaults = kStorageCodes;
  defaults.insert(defaults.end(), kWideCodes.begin(), kWideCodes.end());
  const std::vector<Code> codes = chosen_codes(k, m, defaults);
  const std::vector<std::size_t> shards = chosen_shards(sweep, s.shard);

  Reporter reporter(common);
  for (Code c : codes)
    for (std::size_t shard : shards) {
      Settings at = s;
      at.shard = shard;
      CodeCase run(c, at, common.seed);
      run.run_encode(common, reporter);
      run.run_decode(common, reporter, at.uncached);
    }
  return 0;
}

}  // namespace ncast::bench
