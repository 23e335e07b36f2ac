// ncast-bench rlnc: the RLNC codec on one core — encode (coded output), decode (a whole generation
// from dense seeded symbols, decoded payload bytes) and recode (a relay's output) — each beside
// ISA-L doing the equivalent work on the same coefficients in the same process.
#include <isa-l/erasure_code.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/subcommands.hpp"
#include "coding/backend.hpp"
#include "coding/rlnc/decoder.hpp"
#include "coding/rlnc/encoder.hpp"
#include "coding/rlnc/recoder.hpp"
#include "coding/simd_level.hpp"
#include "tools/bench/bench.hpp"
#include "tools/bench/isal_anchor.hpp"
#include "tools/bench/subcommands.hpp"

namespace ncast::bench {
namespace {

namespace po = boost::program_options;

struct Settings {
  std::vector<std::size_t> ns{16, 32, 64, 128, 256};
  std::vector<std::size_t> symbols{1200, 4096, 16384};
  std::vector<std::string> ops{"encode", "stream", "decode", "recode"};
  std::size_t batch = rlnc::DecoderOptions{}.batch;
  std::size_t burst = 16;  // stream: coded symbols per call, each call new ids
};

// stream: the calls cycle over this many bursts of ids, more than the kernels' caches of expanded
// matrices hold, so that every call multiplies by a matrix new to it, as a server's calls do.
constexpr std::size_t kStreamBursts = 64;

const rlnc::SeedContext kSeeds{rlnc::coefficient_seed(1, 1), 0};
const rlnc::SeedContext kRelaySeeds{rlnc::coefficient_seed(2, 1), 0};

std::vector<std::uint8_t*> slices(AlignedBytes& buffer, std::size_t count, std::size_t len) {
  std::vector<std::uint8_t*> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(buffer.get() + i * len);
  return out;
}

bool equal_regions(const std::vector<std::uint8_t*>& a, const std::uint8_t* b, std::size_t len) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!std::equal(a[i], a[i] + len, b + i * len)) return false;
  return true;
}

// ISA-L decode of a whole generation as its users write it: invert the n × n coefficient matrix of
// the received symbols, expand tables, one ec_encode_data over the payloads.
class IsalDecoder {
 public:
  IsalDecoder(std::vector<std::uint8_t> matrix, std::size_t n)
      : matrix_(std::move(matrix)), n_(n), work_(n * n), inverse_(n * n), tables_(32 * n * n) {}
  void decode(const std::uint8_t* const* coded, std::uint8_t* const* out, std::size_t len) {
    work_ = matrix_;  // gf_invert_matrix destroys its input
    if (gf_invert_matrix(work_.data(), inverse_.data(), static_cast<int>(n_)) != 0)
      throw std::runtime_error("ISA-L: coefficient matrix not invertible");
    isal_init_tables(n_, n_, inverse_.data(), tables_.data());
    isal_encode(len, n_, n_, tables_.data(), coded, out);
  }
  const std::uint8_t* inverse() const { return inverse_.data(); }

 private:
  std::vector<std::uint8_t> matrix_;
  std::size_t n_;
  std::vector<std::uint8_t> work_, inverse_, tables_;
};

// One generation size and symbol size: the sources, n dense seeded coded symbols of them and their
// coefficient matrix, ncast's codec and ISA-L set up on the same bytes.
class RlncCase {
 public:
  RlncCase(std::size_t n, std::size_t len, const Settings& s, const CommonOptions& common)
      : n_(n),
        len_(len),
        s_(s),
        common_(common),
        layout_(n, len, n * len),
        block_(std::move(random_buffers(1, n * len, common.seed)[0])),
        encoder_(layout_, {block_.get(), n * len}, kSeeds, {.systematic = false}),
        coded_(make_aligned(n * len)),
        isal_out_(make_aligned(n * len)),
        decoded_(make_aligned(n * len)),
        coded_ptrs_(slices(coded_, n, len)),
        isal_ptrs_(slices(isal_out_, n, len)),
        matrix_(n * n),
        decoder_(layout_, {decoded_.get(), n * len}, kSeeds, {.batch = s.batch}) {
    for (std::size_t i = 0; i < n; ++i) sources_.push_back(block_.get() + i * len);
    encoder_.produce(0, n, coded_ptrs_.data(), matrix_.data());
    isal_encoder_.emplace(matrix_.data(), n, n);
  }

  void run(Reporter& reporter) {
    const auto wants = [&](const char* op) { return std::find(s_.ops.begin(), s_.ops.end(), op) != s_.ops.end(); };
    if (wants("encode")) encode(reporter);
    if (wants("stream")) stream(reporter);
    pick_decodable_symbols();
    if (wants("decode")) decode(reporter);
    if (wants("recode")) recode(reporter);
  }

 private:
  Record base(const char* op) const {
    Record r;
    r["bench"] = "rlnc";
    r["op"] = op;
    r["backend"] = "cpu";
    r["level"] = std::string(gf::to_string(gf::active_level()));
    r["n"] = n_;
    r["symbol"] = len_;
    return r;
  }
  double generation_bytes() const { return static_cast<double>(n_ * len_); }
  void isal_encode() { isal_encoder_->encode(sources_.data(), isal_ptrs_.data(), len_); }

  void encode(Reporter& reporter) {
    const auto encode = [&] { encoder_.produce(0, n_, coded_ptrs_.data()); };
    encode();
    isal_encode();
    if (!equal_regions(coded_ptrs_, isal_out_.get(), len_))
      throw std::runtime_error("rlnc encode disagrees with ISA-L");
    Record r = base("encode");
    r["anchor"] = IsalMatrixEncoder::name("ec_encode_data");
    put_comparison(r, measure_against(
                          encode, [&] { isal_encode(); }, generation_bytes(), common_.seconds, common_.rounds));
    reporter.emit(std::move(r));
  }

  // A server's encoding: bursts of coded symbols of ids never used before, so that each call draws new
  // coefficients and multiplies by a matrix new to it. ISA-L is given the same matrices, drawn
  // beforehand, and expands each (ec_init_tables) before encoding with it, as its user must.
  void stream(Reporter& reporter) {
    const std::size_t burst = s_.burst;
    AlignedBytes out = make_aligned(burst * len_), isal_out = make_aligned(burst * len_);
    auto out_ptrs = slices(out, burst, len_), isal_ptrs = slices(isal_out, burst, len_);
    std::vector<std::uint8_t> matrices(kStreamBursts * burst * n_);
    for (std::size_t b = 0; b < kStreamBursts; ++b)
      encoder_.produce(static_cast<std::uint32_t>(b * burst), burst, out_ptrs.data(), matrices.data() + b * burst * n_);
    std::vector<std::uint8_t> tables(32 * burst * n_);
    std::size_t ours = 0, theirs = 0;
    const auto encode = [&] {
      const std::size_t b = ours++ % kStreamBursts;
      encoder_.produce(static_cast<std::uint32_t>(b * burst), burst, out_ptrs.data());
    };
    const auto anchor = [&] {
      const std::size_t b = theirs++ % kStreamBursts;
      isal_init_tables(n_, burst, matrices.data() + b * burst * n_, tables.data());
      ncast::bench::isal_encode(len_, n_, burst, tables.data(), sources_.data(), isal_ptrs.data());
    };
    encode();
    anchor();
    if (!equal_regions(out_ptrs, isal_out.get(), len_))
      throw std::runtime_error("rlnc stream encode disagrees with ISA-L");
    Record r = base("stream");
    r["burst"] = burst;
    r["anchor"] = IsalMatrixEncoder::name("ec_init_tables+ec_encode_data");
    put_comparison(r,
                   measure_against(encode, anchor, static_cast<double>(burst * len_), common_.seconds, common_.rounds));
    reporter.emit(std::move(r));
  }

  // Decode from the first n symbols when they are independent (probability ≈ 0.996), else from the
  // first n innovative ones among more: both decoders get the same set.
  void pick_decodable_symbols() {
    std::vector<std::uint32_t> ids;
    std::vector<std::uint8_t> payload(len_);
    for (std::uint32_t id = 0; !decoder_.complete(); ++id) {
      std::uint8_t* p = payload.data();
      encoder_.produce(id, 1, &p);
      if (decoder_.add({rlnc::SymbolKind::coded, id, {}, {}, payload}) == rlnc::AddResult::innovative)
        ids.push_back(id);
    }
    for (std::size_t i = 0; i < n_; ++i) {
      std::uint8_t* p = coded_ptrs_[i];
      encoder_.produce(ids[i], 1, &p, matrix_.data() + i * n_);
    }
    for (std::size_t i = 0; i < n_; ++i)
      symbols_.push_back({rlnc::SymbolKind::coded, ids[i], {}, {}, {coded_ptrs_[i], len_}});
  }

  void decode(Reporter& reporter) {
    const auto decode = [&] {
      decoder_.reset();
      for (const auto& sym : symbols_) decoder_.add(sym);
    };
    IsalDecoder isal(matrix_, n_);
    const auto isal_decode = [&] { isal.decode(coded_ptrs_.data(), isal_ptrs_.data(), len_); };
    std::fill_n(decoded_.get(), n_ * len_, std::uint8_t{0xA5});
    decode();
    isal_decode();
    const std::uint8_t* want = block_.get();
    if (!decoder_.complete() || !std::equal(want, want + n_ * len_, decoded_.get()) ||
        !std::equal(want, want + n_ * len_, isal_out_.get()))
      throw std::runtime_error("rlnc decode did not give back the generation");
    Record r = base("decode");
    r["batch"] = s_.batch;
    r["anchor"] = IsalMatrixEncoder::name("gf_invert_matrix+ec_init_tables+ec_encode_data");
    put_comparison(r, measure_against(decode, isal_decode, generation_bytes(), common_.seconds, common_.rounds));
    reporter.emit(std::move(r));
    // ISA-L's part that is not matrix inversion, for scale: the multiply by a given inverse.
    IsalMatrixEncoder inverse_only(isal.inverse(), n_, n_);
    const auto multiply = [&] { inverse_only.encode(coded_ptrs_.data(), isal_ptrs_.data(), len_); };
    Record m = base("decode");
    m["batch"] = s_.batch;
    m["anchor"] = "inverse given: " + IsalMatrixEncoder::name("ec_encode_data");
    put_comparison(m, measure_against(decode, multiply, generation_bytes(), common_.seconds, common_.rounds));
    reporter.emit(std::move(m));
  }

  // A relay at full rank recodes n symbols per call; payloads must be the combinations of the
  // sources that their coefficients name (checked through ISA-L).
  void recode(Reporter& reporter) {
    decoder_.reset();
    for (const auto& sym : symbols_) decoder_.add(sym);
    rlnc::Recoder recoder(decoder_, kRelaySeeds);
    AlignedBytes recoded = make_aligned(n_ * len_);
    auto recoded_ptrs = slices(recoded, n_, len_);
    std::vector<std::uint8_t> recoded_coefs(n_ * n_);
    const auto recode = [&] { recoder.produce(n_, recoded_ptrs.data(), recoded_coefs.data()); };
    recode();
    IsalMatrixEncoder check(recoded_coefs.data(), n_, n_);
    check.encode(sources_.data(), isal_ptrs_.data(), len_);
    if (!equal_regions(recoded_ptrs, isal_out_.get(), len_)) throw std::runtime_error("rlnc recode: wrong payloads");
    Record r = base("recode");
    r["anchor"] = IsalMatrixEncoder::name("ec_encode_data");
    put_comparison(r, measure_against(
                          recode, [&] { isal_encode(); }, generation_bytes(), common_.seconds, common_.rounds));
    reporter.emit(std::move(r));
  }

  std::size_t n_, len_;
  const Settings& s_;
  const CommonOptions& common_;
  rlnc::GenerationLayout layout_;
  AlignedBytes block_;
  rlnc::Encoder encoder_;
  AlignedBytes coded_, isal_out_, decoded_;
  std::vector<std::uint8_t*> coded_ptrs_, isal_ptrs_;
  std::vector<std::uint8_t> matrix_;
  rlnc::Decoder decoder_;
  std::optional<IsalMatrixEncoder> isal_encoder_;
  std::vector<const std::uint8_t*> sources_;
  std::vector<rlnc::SymbolView> symbols_;
};

}  // namespace

int run_rlnc(int argc, char** argv) {
  CommonOptions common;
  Settings s;
  std::vector<std::size_t> ns, symbols;
  std::vector<std::string> ops;
  std::string backend = "cpu";
  po::options_description desc("ncast-bench rlnc options");
  desc.add_options()("n", po::value(&ns)->multitoken(), "generation sizes (default: 16 32 64 128 256)")(
      "symbol", po::value(&symbols)->multitoken(), "symbol sizes in bytes (default: 1200 4096 16384)")(
      "op", po::value(&ops)->multitoken(), "encode stream decode recode (default: all)")(
      "burst", po::value(&s.burst)->default_value(s.burst), "stream: coded symbols per call, new ids every call")(
      "batch", po::value(&s.batch)->default_value(s.batch),
      "decoder batch: arrivals whose payload work is done together")(
      "backend", po::value(&backend)->default_value(backend), "cpu (the RLNC codec has no CUDA path yet)");
  add_common_options(desc, common);
  if (!parse_options(argc, argv, "usage: ncast-bench rlnc [--n N...] [--symbol L...] [options]", desc, common))
    return 0;
  const auto b = parse_backend(backend);
  if (!b) throw cli::UsageError("--backend must be auto, cpu or cuda");
  if (*b == Backend::cuda) throw cli::UsageError("--backend cuda: the RLNC codec runs on the CPU only so far");
  if (!ns.empty()) s.ns = ns;
  if (!symbols.empty()) s.symbols = symbols;
  if (!ops.empty()) s.ops = ops;
  for (const auto& op : s.ops)
    if (op != "encode" && op != "stream" && op != "decode" && op != "recode")
      throw cli::UsageError("unknown --op '" + op + "'");
  for (std::size_t n : s.ns)
    if (n < 1 || n > rlnc::kMaxSymbols) throw cli::UsageError("--n must be in 1..256");
  for (std::size_t l : s.symbols)
    if (l < 1 || l > rlnc::kMaxSymbolSize) throw cli::UsageError("--symbol must be in 1..65536");
  if (s.batch < 1 || s.batch > rlnc::kMaxSymbols) throw cli::UsageError("--batch must be in 1..256");
  if (s.burst < 1 || s.burst > rlnc::kMaxSymbols) throw cli::UsageError("--burst must be in 1..256");

  Reporter reporter(common);
  for (std::size_t n : s.ns)
    for (std::size_t len : s.symbols) RlncCase(n, len, s, common).run(reporter);
  return 0;
}

}  // namespace ncast::bench
