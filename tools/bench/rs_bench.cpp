// ncast-bench rs: the Reed–Solomon codec (encode; decode with cached decode rows and from scratch)
// beside ISA-L doing the same work on the same matrix in the same process.
#include <isa-l/erasure_code.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "coding/rs/codec.hpp"
#include "coding/simd_level.hpp"
#include "tools/bench/bench.hpp"
#include "tools/bench/isal_anchor.hpp"
#include "tools/bench/subcommands.hpp"

namespace ncast::bench {
namespace {

namespace po = boost::program_options;

struct Code {
  std::size_t k, m;
};
const std::vector<Code> kDefaultCodes = {{8, 3}, {10, 4}, {16, 4}, {32, 8}, {128, 32}};

struct Settings {
  std::size_t shard = 1 << 20;
  rs::MatrixKind matrix = rs::MatrixKind::cauchy;
  Backend backend = Backend::cpu;
  std::size_t lost = 0;  // 0: min(m, k) data shards
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
    ec_init_tables(static_cast<int>(k_), static_cast<int>(lost_), rows_.data(), tables_.data());
    ec_encode_data(static_cast<int>(len), static_cast<int>(k_), static_cast<int>(lost_), tables_.data(),
                   const_cast<unsigned char**>(survivors), const_cast<unsigned char**>(outs));
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

void run_code(Code c, const Settings& s, const CommonOptions& common, Reporter& reporter) {
  rs::Codec codec(c.k, c.m, {.matrix = s.matrix, .backend = s.backend});
  const std::size_t n = c.k + c.m, len = s.shard;
  const std::size_t lost = s.lost ? s.lost : std::min(c.m, c.k);
  if (lost > c.m || lost > c.k)
    throw po::error("--lost " + std::to_string(lost) + ": a " + std::to_string(c.k) + "+" + std::to_string(c.m) +
                    " code rebuilds at most " + std::to_string(std::min(c.m, c.k)) + " data shards");

  // Shard buffers from the codec (pinned when its backend wants that), random data.
  std::vector<HostBuffer> shards, rebuilt, isal_out;
  std::mt19937_64 rng(common.seed);
  for (std::size_t i = 0; i < n; ++i) {
    shards.push_back(codec.allocate(len));
    for (std::size_t b = 0; b < len; ++b) shards.back().data()[b] = static_cast<std::uint8_t>(rng());
  }
  for (std::size_t i = 0; i < lost; ++i) {
    rebuilt.push_back(codec.allocate(len));
    isal_out.push_back(codec.allocate(len));
  }
  std::vector<std::uint8_t*> ptrs;
  for (auto& b : shards) ptrs.push_back(b.data());
  const double data_bytes = static_cast<double>(c.k * len);

  const auto generator = isal_generator(codec);
  IsalMatrixEncoder isal_encoder(generator.data() + c.k * c.k, c.m, c.k);
  std::vector<std::uint8_t*> isal_parity;
  std::vector<HostBuffer> isal_parity_bufs;
  for (std::size_t p = 0; p < c.m; ++p) {
    isal_parity_bufs.push_back(codec.allocate(len));
    isal_parity.push_back(isal_parity_bufs.back().data());
  }

  const auto base = [&](const char* op) {
    Record r;
    r["bench"] = "rs";
    r["op"] = op;
    r["backend"] = std::string(to_string(codec.engine().backend()));
    r["level"] = level_of(codec.engine());
    r["k"] = c.k;
    r["m"] = c.m;
    r["matrix"] = std::string(rs::to_string(s.matrix));
    r["shard"] = len;
    return r;
  };

  // Encode. Never time a wrong codec: parity must equal ISA-L's first.
  const auto encode = [&] { codec.encode(ptrs, len); };
  const auto isal_encode = [&] { isal_encoder.encode(ptrs.data(), isal_parity.data(), len); };
  encode();
  isal_encode();
  for (std::size_t p = 0; p < c.m; ++p)
    if (!std::equal(isal_parity[p], isal_parity[p] + len, ptrs[c.k + p]))
      throw std::runtime_error("rs encode disagrees with ISA-L on parity shard " + std::to_string(p));
  {
    Record r = base("encode");
    const Comparison res = measure_against(encode, isal_encode, data_bytes, common.seconds);
    r["checked_against"] = "isa-l";
    r["gb_per_s"] = res.gb_per_s;
    r["anchor"] = IsalMatrixEncoder::name("ec_encode_data");
    r["anchor_gb_per_s"] = res.anchor_gb_per_s;
    reporter.emit(std::move(r));
  }

  // Decode: data shards 0 .. lost-1 are gone; both libraries read the first k survivors.
  std::vector<std::size_t> erased;
  for (std::size_t i = 0; i < lost; ++i) erased.push_back(i);
  std::vector<std::uint8_t*> decode_ptrs = ptrs;
  for (std::size_t i = 0; i < lost; ++i) decode_ptrs[i] = rebuilt[i].data();
  std::vector<unsigned char*> survivors, isal_outs;
  for (std::size_t i = lost; i < n && survivors.size() < c.k; ++i) survivors.push_back(ptrs[i]);
  for (auto& b : isal_out) isal_outs.push_back(b.data());
  IsalDecoder isal_decoder(generator, c.k, lost);

  const auto decode = [&] { codec.reconstruct(decode_ptrs, len, erased); };
  const auto decode_uncached = [&] {
    codec.clear_decode_cache();
    codec.reconstruct(decode_ptrs, len, erased);
  };
  const auto isal_decode = [&] { isal_decoder.decode(survivors.data(), isal_outs.data(), len); };
  decode_uncached();
  isal_decode();
  for (std::size_t i = 0; i < lost; ++i)
    if (!std::equal(ptrs[i], ptrs[i] + len, rebuilt[i].data()) || !std::equal(ptrs[i], ptrs[i] + len, isal_outs[i]))
      throw std::runtime_error("rs decode did not give back data shard " + std::to_string(i));

  const std::string isal_decode_name = IsalMatrixEncoder::name("gf_invert_matrix+ec_init_tables+ec_encode_data");
  for (const bool cached : {true, false}) {
    Record r = base(cached ? "decode" : "decode_uncached");
    r["lost"] = lost;
    const Comparison res =
        measure_against(cached ? std::function<void()>(decode) : std::function<void()>(decode_uncached), isal_decode,
                        data_bytes, common.seconds);
    r["checked_against"] = "original";
    r["gb_per_s"] = res.gb_per_s;
    r["anchor"] = isal_decode_name;
    r["anchor_gb_per_s"] = res.anchor_gb_per_s;
    reporter.emit(std::move(r));
  }
}

}  // namespace

int run_rs(int argc, char** argv) {
  CommonOptions common;
  Settings s;
  std::size_t k = 0, m = 0;
  std::string matrix = "cauchy", backend = "cpu";
  po::options_description desc("ncast-bench rs options");
  desc.add_options()("k", po::value(&k), "data shards (with --m; default: the cases 8+3 10+4 16+4 32+8 128+32)")(
      "m", po::value(&m), "parity shards")("shard", po::value(&s.shard)->default_value(s.shard), "bytes per shard")(
      "matrix", po::value(&matrix)->default_value(matrix), "cauchy | vandermonde")(
      "backend", po::value(&backend)->default_value(backend), "auto | cpu | cuda")(
      "lost", po::value(&s.lost), "data shards lost in the decode cases (default: min(m, k))");
  add_common_options(desc, common);
  if (!parse_options(argc, argv, "usage: ncast-bench rs [--k K --m M] [options]", desc, common)) return 0;

  const auto kind = rs::parse_matrix_kind(matrix);
  if (!kind || *kind == rs::MatrixKind::custom) throw po::error("--matrix must be cauchy or vandermonde");
  s.matrix = *kind;
  const auto b = parse_backend(backend);
  if (!b) throw po::error("--backend must be auto, cpu or cuda");
  s.backend = *b;
  if (s.shard == 0) throw po::error("--shard must be positive");
  if ((k == 0) != (m == 0)) throw po::error("give both --k and --m, or neither for the default cases");
  std::vector<Code> codes = kDefaultCodes;
  if (k != 0) {
    try {
      rs::check_code_size(k, m);
    } catch (const std::invalid_argument& e) {
      throw po::error(e.what());
    }
    codes = {{k, m}};
  }

  Reporter reporter(common);
  for (Code c : codes) run_code(c, s, common, reporter);
  return 0;
}

}  // namespace ncast::bench
