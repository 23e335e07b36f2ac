#include "coding/rlnc/encoder.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "coding/region.hpp"
#include "coding/rlnc/error.hpp"

namespace ncast::rlnc {
namespace {

// Below this density a coded symbol is cheaper as a dot over its own non-zero sources than as a row
// of a dense batch product.
constexpr std::uint32_t kSparseThreshold = Density::kDenseThreshold / 8;

}  // namespace

Encoder::Encoder(const GenerationLayout& layout, std::span<const std::uint8_t> block, const SeedContext& seeds,
                 const EncoderOptions& options)
    : layout_(layout), seeds_(seeds), options_(options) {
  if (block.size() != layout.block_bytes())
    throw Error(Errc::buffer_too_small, "source block is " + std::to_string(block.size()) +
                                            " bytes, the layout needs " + std::to_string(layout.block_bytes()));
  for (std::size_t i = 0; i < layout.n(); ++i) sources_.push_back(block.data() + i * layout.symbol_size());
}

SymbolKind Encoder::kind_of(std::uint32_t id) const {
  return options_.systematic && id < layout_.n() ? SymbolKind::systematic : SymbolKind::coded;
}

void Encoder::produce(std::uint32_t first_id, std::size_t count, std::uint8_t* const* payloads,
                      std::uint8_t* coefficients) const {
  const std::size_t n = layout_.n(), len = layout_.symbol_size();
  if (count > std::size_t{UINT32_MAX} - first_id + 1)
    throw Error(Errc::index_out_of_range, "symbol ids beyond 2^32 - 1");
  // Rows and outputs of the coded symbols, gathered for one product; reused by the thread.
  thread_local std::vector<std::uint8_t> rows;
  thread_local std::vector<std::uint8_t*> outs;
  rows.resize(count * n);
  outs.clear();
  for (std::size_t i = 0; i < count; ++i) {
    const auto id = static_cast<std::uint32_t>(first_id + i);
    if (kind_of(id) == SymbolKind::systematic) {
      std::memcpy(payloads[i], sources_[id], len);
      if (coefficients) {
        std::fill_n(coefficients + i * n, n, std::uint8_t{0});
        coefficients[i * n + id] = 1;
      }
      continue;
    }
    std::uint8_t* row = rows.data() + outs.size() * n;
    draw_coefficients(seeds_, id, options_.density, {row, n});
    if (coefficients) std::copy_n(row, n, coefficients + i * n);
    outs.push_back(payloads[i]);
  }
  if (options_.density.threshold() < kSparseThreshold) {
    for (std::size_t o = 0; o < outs.size(); ++o) combine_sparse(rows.data() + o * n, outs[o]);
    return;
  }
  gf::kernels().dot_multi(outs.data(), outs.size(), sources_.data(), n, rows.data(), len, false);
}

void Encoder::combine_sparse(const std::uint8_t* coefs, std::uint8_t* payload) const {
  const std::uint8_t* srcs[kMaxSymbols];
  std::uint8_t picked[kMaxSymbols];
  std::size_t k = 0;
  for (std::size_t j = 0; j < layout_.n(); ++j)
    if (coefs[j] != 0) {
      srcs[k] = sources_[j];
      picked[k++] = coefs[j];
    }
  gf::kernels().dot(payload, srcs, picked, k, layout_.symbol_size());
}

CodedSymbol Encoder::produce(std::uint32_t id) const {
  CodedSymbol s;
  s.kind = kind_of(id);
  s.index = id;
  s.payload.resize(layout_.symbol_size());
  std::uint8_t* out = s.payload.data();
  if (s.kind == SymbolKind::systematic) {
    produce(id, 1, &out);
    return s;
  }
  s.density = options_.density;
  std::vector<std::uint8_t> coefs(layout_.n());
  produce(id, 1, &out, coefs.data());
  if (options_.form == CoefficientForm::explicit_vector) s.coefficients = std::move(coefs);
  return s;
}

void Encoder::combine(std::span<const std::uint8_t> coefficients, std::uint8_t* const* payloads,
                      std::size_t count) const {
  const std::size_t n = layout_.n();
  if (coefficients.size() != count * n)
    throw Error(Errc::wrong_coefficient_count, std::to_string(coefficients.size()) + " coefficients for " +
                                                   std::to_string(count) + " symbols of n=" + std::to_string(n));
  gf::kernels().dot_multi(payloads, count, sources_.data(), n, coefficients.data(), layout_.symbol_size(), false);
}

}  // namespace ncast::rlnc
