// ncast-bench rlnc: the RLNC codec on one core — encode (coded output), decode (a whole generation
// from dense seeded symbols, decoded payload bytes) and recode (a relay's output) — each beside
// ISA-L doing the equivalent work on the same coefficients in the same process.
#include <isa-l/erasure_code.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

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
  std::vector<std::string> ops{"encode", "decode", "recode"};
  std::size_t batch = rlnc::DecoderOptions{}.batch;
};

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
    ec_init_tables(static_cast<int>(n_), static_cast<int>(n_), inverse_.data(), tables_.data());
    ec_encode_data(static_cast<int>(len), static_cast<int>(n_), static_cast<int>(n_), tables_.data(),
                   const_cast<unsigned char**>(coded), const_cast<unsigned char**>(out));
  }
  const std::uint8_t* inverse() const { return inverse_.data(); }

 private:
  std::vector<std::uint8_t> matrix_;
  std::size_t n_;
  std::vector<std::uint8_t> work_, inverse_, tables_;
};

void run_case(std::size_t n, std::size_t len, const Settings& s, const CommonOptions& common, Reporter& reporter) {
  const rlnc::GenerationLayout layout(n, len, n * len);
  AlignedBytes block = std::move(random_buffers(1, n * len, common.seed)[0]);
  const rlnc::Encoder encoder(layout, {block.get(), n * len}, kSeeds, {.systematic = false});
  std::vector<const std::uint8_t*> sources;
  for (std::size_t i = 0; i < n; ++i) sources.push_back(block.get() + i * len);

  const auto base = [&](const char* op) {
    Record r;
    r["bench"] = "rlnc";
    r["op"] = op;
    r["backend"] = "cpu";
    r["level"] = std::string(gf::to_string(gf::active_level()));
    r["n"] = n;
    r["symbol"] = len;
    return r;
  };
  const double generation_bytes = static_cast<double>(n * len);
  const auto wants = [&](const char* op) { return std::find(s.ops.begin(), s.ops.end(), op) != s.ops.end(); };

  // n dense seeded coded symbols and their coefficient matrix.
  AlignedBytes coded = make_aligned(n * len), isal_out = make_aligned(n * len);
  auto coded_ptrs = slices(coded, n, len), isal_ptrs = slices(isal_out, n, len);
  std::vector<std::uint8_t> matrix(n * n);
  encoder.produce(0, n, coded_ptrs.data(), matrix.data());
  IsalMatrixEncoder isal_encoder(matrix.data(), n, n);
  const auto isal_encode = [&] { isal_encoder.encode(sources.data(), isal_ptrs.data(), len); };

  if (wants("encode")) {
    const auto encode = [&] { encoder.produce(0, n, coded_ptrs.data()); };
    encode();
    isal_encode();
    if (!equal_regions(coded_ptrs, isal_out.get(), len)) throw std::runtime_error("rlnc encode disagrees with ISA-L");
    Record r = base("encode");
    const Comparison res = measure_against(encode, isal_encode, generation_bytes, common.seconds);
    r["gb_per_s"] = res.gb_per_s;
    r["anchor"] = IsalMatrixEncoder::name("ec_encode_data");
    r["anchor_gb_per_s"] = res.anchor_gb_per_s;
    reporter.emit(std::move(r));
  }

  // Decode from the first n symbols when they are independent (probability ≈ 0.996), else from the
  // first n innovative ones among more: both decoders get the same set.
  AlignedBytes decoded = make_aligned(n * len);
  rlnc::Decoder decoder(layout, {decoded.get(), n * len}, kSeeds, {.batch = s.batch});
  std::vector<std::uint32_t> ids;
  std::vector<std::uint8_t> payload(len), coefs(n);
  for (std::uint32_t id = 0; !decoder.complete(); ++id) {
    std::uint8_t* p = payload.data();
    encoder.produce(id, 1, &p);
    if (decoder.add({rlnc::SymbolKind::coded, id, {}, {}, payload}) == rlnc::AddResult::innovative) ids.push_back(id);
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::uint8_t* p = coded_ptrs[i];
    encoder.produce(ids[i], 1, &p, matrix.data() + i * n);
  }
  std::vector<rlnc::SymbolView> symbols;
  for (std::size_t i = 0; i < n; ++i)
    symbols.push_back({rlnc::SymbolKind::coded, ids[i], {}, {}, {coded_ptrs[i], len}});

  if (wants("decode")) {
    const auto decode = [&] {
      decoder.reset();
      for (const auto& sym : symbols) decoder.add(sym);
    };
    IsalDecoder isal(matrix, n);
    const auto isal_decode = [&] { isal.decode(coded_ptrs.data(), isal_ptrs.data(), len); };
    std::fill_n(decoded.get(), n * len, std::uint8_t{0xA5});
    decode();
    isal_decode();
    if (!decoder.complete() || !std::equal(block.get(), block.get() + n * len, decoded.get()) ||
        !std::equal(block.get(), block.get() + n * len, isal_out.get()))
      throw std::runtime_error("rlnc decode did not give back the generation");
    const Comparison res = measure_against(decode, isal_decode, generation_bytes, common.seconds);
    Record r = base("decode");
    r["batch"] = s.batch;
    r["gb_per_s"] = res.gb_per_s;
    r["anchor"] = IsalMatrixEncoder::name("gf_invert_matrix+ec_init_tables+ec_encode_data");
    r["anchor_gb_per_s"] = res.anchor_gb_per_s;
    reporter.emit(std::move(r));
    // ISA-L's part that is not matrix inversion, for scale: the multiply by a given inverse.
    IsalMatrixEncoder inverse_only(isal.inverse(), n, n);
    const Comparison mul = measure_against(
        decode, [&] { inverse_only.encode(coded_ptrs.data(), isal_ptrs.data(), len); }, generation_bytes,
        common.seconds);
    Record m = base("decode");
    m["batch"] = s.batch;
    m["gb_per_s"] = mul.gb_per_s;
    m["anchor"] = IsalMatrixEncoder::name("ec_encode_data, inverse given");
    m["anchor_gb_per_s"] = mul.anchor_gb_per_s;
    reporter.emit(std::move(m));
  }

  if (wants("recode")) {
    // A relay at full rank recodes n symbols per call; payloads must be the combinations of the
    // sources that their coefficients name (checked through ISA-L).
    decoder.reset();
    for (const auto& sym : symbols) decoder.add(sym);
    rlnc::Recoder recoder(decoder, kRelaySeeds);
    AlignedBytes recoded = make_aligned(n * len);
    auto recoded_ptrs = slices(recoded, n, len);
    std::vector<std::uint8_t> recoded_coefs(n * n);
    const auto recode = [&] { recoder.produce(n, recoded_ptrs.data(), recoded_coefs.data()); };
    recode();
    IsalMatrixEncoder check(recoded_coefs.data(), n, n);
    check.encode(sources.data(), isal_ptrs.data(), len);
    if (!equal_regions(recoded_ptrs, isal_out.get(), len)) throw std::runtime_error("rlnc recode: wrong payloads");
    Record r = base("recode");
    const Comparison res = measure_against(recode, isal_encode, generation_bytes, common.seconds);
    r["gb_per_s"] = res.gb_per_s;
    r["anchor"] = IsalMatrixEncoder::name("ec_encode_data");
    r["anchor_gb_per_s"] = res.anchor_gb_per_s;
    reporter.emit(std::move(r));
  }
}

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
      "op", po::value(&ops)->multitoken(), "encode decode recode (default: all)")(
      "batch", po::value(&s.batch)->default_value(s.batch),
      "decoder batch: arrivals whose payload work is done together")(
      "backend", po::value(&backend)->default_value(backend), "cpu (the RLNC codec has no CUDA path yet)");
  add_common_options(desc, common);
  if (!parse_options(argc, argv, "usage: ncast-bench rlnc [--n N...] [--symbol L...] [options]", desc, common))
    return 0;
  const auto b = parse_backend(backend);
  if (!b) throw po::error("--backend must be auto, cpu or cuda");
  if (*b == Backend::cuda) throw po::error("--backend cuda: the RLNC codec runs on the CPU only so far");
  if (!ns.empty()) s.ns = ns;
  if (!symbols.empty()) s.symbols = symbols;
  if (!ops.empty()) s.ops = ops;
  for (const auto& op : s.ops)
    if (op != "encode" && op != "decode" && op != "recode") throw po::error("unknown --op '" + op + "'");
  for (std::size_t n : s.ns)
    if (n < 1 || n > rlnc::kMaxSymbols) throw po::error("--n must be in 1..256");
  for (std::size_t l : s.symbols)
    if (l < 1 || l > rlnc::kMaxSymbolSize) throw po::error("--symbol must be in 1..65536");
  if (s.batch < 1 || s.batch > rlnc::kMaxSymbols) throw po::error("--batch must be in 1..256");

  Reporter reporter(common);
  for (std::size_t n : s.ns)
    for (std::size_t len : s.symbols) run_case(n, len, s, common, reporter);
  return 0;
}

}  // namespace ncast::bench
