// The RLNC decoder fed what a hostile sender can make: out-of-range layouts and options, systematic,
// seeded, explicit and recoded symbols with wrong lengths, wrong indices, zero or wrong-sized vectors,
// dependent vectors, payloads that lie about their coefficients, queries, resets and recoding of
// whatever is held. Checked against a slow reference (Gauss–Jordan on the rows [coefficients |
// payload] over tables built from tests/coding/gf_reference.hpp): a refused symbol changes
// nothing; rank, innovation, early release and every released byte agree with the reference; what
// the decoder recodes lies in the span of what it accepted; with honest symbols the data decoded is
// the data sent.
#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "coding/rlnc/coefficients.hpp"
#include "coding/rlnc/decoder.hpp"
#include "coding/rlnc/error.hpp"
#include "coding/rlnc/generation.hpp"
#include "tests/fuzz/fuzz_target.hpp"
#include "tests/fuzz/gf_table.hpp"

namespace {

using namespace ncast::rlnc;
using Bytes = std::vector<std::uint8_t>;

using ncast::fuzz::axpy;
using ncast::fuzz::gf;

// Rows [coefficients (n) | payload (L)] in reduced row echelon form.
class Reference {
 public:
  Reference(std::size_t n, std::size_t len) : n_(n), len_(len) {}

  // Reduces v in place against the rows; returns its first non-zero coefficient column, or n.
  std::size_t reduce(Bytes& v) const {
    for (const auto& [p, row] : rows_)
      if (v[p] != 0) axpy(v.data(), row.data(), v[p], n_ + len_);
    std::size_t lead = 0;
    while (lead < n_ && v[lead] == 0) ++lead;
    return lead;
  }
  bool add(Bytes v) {
    const std::size_t lead = reduce(v);
    if (lead == n_) return false;
    const std::uint8_t s = gf().inv[v[lead]];
    for (auto& x : v) x = gf().mul[s][x];
    for (auto& [p, row] : rows_)
      if (row[lead] != 0) axpy(row.data(), v.data(), row[lead], n_ + len_);
    rows_.emplace_back(lead, std::move(v));
    return true;
  }
  // The row with pivot i when it is the unit vector e_i: source symbol i is then known.
  const Bytes* decoded(std::size_t i) const {
    for (const auto& [p, row] : rows_) {
      if (p != i) continue;
      for (std::size_t j = 0; j < n_; ++j)
        if (j != i && row[j] != 0) return nullptr;
      return &row;
    }
    return nullptr;
  }
  std::size_t rank() const { return rows_.size(); }
  void clear() { rows_.clear(); }

 private:
  std::size_t n_, len_;
  std::vector<std::pair<std::size_t, Bytes>> rows_;
};

bool throws_one_of(const std::function<void()>& f, std::initializer_list<Errc> allowed) {
  try {
    f();
  } catch (const Error& e) {
    FUZZ_CHECK(std::find(allowed.begin(), allowed.end(), e.code()) != allowed.end());
    return true;
  }
  return false;
}

class Run {
 public:
  Run(const GenerationLayout& layout, Bytes source, std::size_t batch, std::uint64_t seed)
      : layout_(layout),
        n_(layout.n()),
        len_(layout.symbol_size()),
        source_(std::move(source)),
        seeds_{seed, static_cast<std::uint32_t>(seed >> 32)},
        out_(layout.block_bytes(), 0xA5),
        decoder_(layout, out_, seeds_, {.batch = batch}),
        reference_(n_, len_) {}

  void step(ncast::fuzz::Input& in) {
    switch (in.u8() % 8) {
      case 0: return systematic(in);
      case 1: return seeded(in);
      case 2: return explicit_symbol(in, SymbolKind::coded);
      case 3: return explicit_symbol(in, SymbolKind::recoded);
      case 4: return dependent(in);
      case 5: return query(in.u16() % (n_ + 1));
      case 6: return in.flag() ? decoder_.flush() : reset();
      case 7: return recode(in);
    }
  }

  void finish() {
    FUZZ_CHECK(decoder_.rank() == reference_.rank());
    FUZZ_CHECK(decoder_.complete() == (reference_.rank() == n_));
    if (!decoder_.complete()) {
      FUZZ_CHECK(throws_one_of([&] { decoder_.data(); }, {Errc::not_decoded}));
      return;
    }
    const auto data = decoder_.data();
    FUZZ_CHECK(data.size() == layout_.data_bytes());
    for (std::size_t i = 0; i < n_; ++i) {
      const Bytes* row = reference_.decoded(i);
      FUZZ_CHECK(row != nullptr);
      const std::size_t lo = i * len_, hi = std::min(lo + len_, data.size());
      if (lo < hi)
        FUZZ_CHECK(std::equal(data.begin() + static_cast<long>(lo), data.begin() + static_cast<long>(hi),
                              row->begin() + static_cast<long>(n_)));
    }
    if (honest_) FUZZ_CHECK(std::equal(data.begin(), data.end(), source_.begin()));
  }

 private:
  // The payload a symbol with these coefficients carries: honest, garbage, one byte off, or of a
  // wrong length.
  Bytes payload_for(ncast::fuzz::Input& in, const Bytes& coefs, bool& honest) {
    Bytes p(len_, 0);
    if (coefs.size() == n_)
      for (std::size_t j = 0; j < n_; ++j) axpy(p.data(), source_.data() + j * len_, coefs[j], len_);
    honest = true;
    switch (in.u8() % 8) {
      case 0: {
        honest = false;
        const auto g = in.bytes(len_);
        std::copy(g.begin(), g.end(), p.begin());
        break;
      }
      case 1:
        honest = false;
        p[in.u16() % len_] ^= static_cast<std::uint8_t>(1 + in.u8() % 255);
        break;
      case 2: p.resize(in.u16() % (2 * len_ + 2)); break;
    }
    return p;
  }

  void systematic(ncast::fuzz::Input& in) {
    const std::uint32_t index = in.flag() ? in.u32() : in.u16() % (n_ + 2);
    Bytes coefs(n_, 0);
    if (index < n_) coefs[index] = 1;
    bool honest;
    const Bytes payload = payload_for(in, coefs, honest);
    Bytes carried;
    if (in.u8() % 16 == 0) carried.assign(n_, 1);  // a systematic symbol must carry none
    std::vector<Errc> errors;
    if (payload.size() != len_) errors.push_back(Errc::wrong_payload_length);
    if (!carried.empty()) errors.push_back(Errc::bad_kind);
    if (index >= n_) errors.push_back(Errc::index_out_of_range);
    offer({SymbolKind::systematic, index, {}, carried, payload}, coefs, honest, errors);
  }

  void seeded(ncast::fuzz::Input& in) {
    const std::uint32_t index = in.u32();
    const std::uint32_t threshold = 1 + in.u16() % Density::kDenseThreshold;
    const Density density = in.flag() ? Density::dense() : Density::from_threshold(threshold);
    Bytes coefs(n_);
    draw_coefficients(seeds_, index, density, coefs);
    bool honest;
    const Bytes payload = payload_for(in, coefs, honest);
    std::vector<Errc> errors;
    if (payload.size() != len_) errors.push_back(Errc::wrong_payload_length);
    offer({SymbolKind::coded, index, density, {}, payload}, coefs, honest, errors);
  }

  void explicit_symbol(ncast::fuzz::Input& in, SymbolKind kind) {
    const std::uint8_t shape = in.u8();
    Bytes coefs;
    if (shape % 8 == 0) {
      coefs.resize(in.u16() % (n_ + 3));  // maybe the wrong count, maybe none
    } else {
      coefs.assign(n_, 0);
    }
    const auto given = in.bytes(coefs.size());
    std::copy(given.begin(), given.end(), coefs.begin());
    bool honest;
    const Bytes payload = payload_for(in, coefs, honest);
    std::vector<Errc> errors;
    if (payload.size() != len_) errors.push_back(Errc::wrong_payload_length);
    if (coefs.empty() && kind == SymbolKind::recoded) errors.push_back(Errc::bad_kind);
    if (!coefs.empty() && coefs.size() != n_) errors.push_back(Errc::wrong_coefficient_count);
    if (coefs.size() == n_ && std::all_of(coefs.begin(), coefs.end(), [](std::uint8_t c) { return c == 0; }))
      errors.push_back(Errc::zero_coefficients);
    if (coefs.empty() && kind == SymbolKind::coded) {
      // No coefficients on a coded symbol means seeded, index 0.
      Bytes drawn(n_);
      draw_coefficients(seeds_, 0, Density::dense(), drawn);
      const Bytes p = payload;
      return offer({kind, 0, {}, {}, p}, drawn, honest && p.size() == len_ && matches(drawn, p), errors);
    }
    offer({kind, 0, {}, coefs, payload}, coefs, honest, errors);
  }

  // A combination of two symbols accepted earlier: never innovative over what they were part of.
  void dependent(ncast::fuzz::Input& in) {
    if (history_.empty()) return;
    const auto& [c1, p1] = history_[in.u16() % history_.size()];
    const auto& [c2, p2] = history_[in.u16() % history_.size()];
    const std::uint8_t a = in.u8(), b = in.u8();
    Bytes coefs(n_, 0), payload(len_, 0);
    axpy(coefs.data(), c1.data(), a, n_);
    axpy(coefs.data(), c2.data(), b, n_);
    axpy(payload.data(), p1.data(), a, len_);
    axpy(payload.data(), p2.data(), b, len_);
    std::vector<Errc> errors;
    if (std::all_of(coefs.begin(), coefs.end(), [](std::uint8_t c) { return c == 0; }))
      errors.push_back(Errc::zero_coefficients);
    offer({SymbolKind::recoded, 0, {}, coefs, payload}, coefs, true, errors);
  }

  // Whether payload is the honest combination of the sources with coefs.
  bool matches(const Bytes& coefs, const Bytes& payload) const {
    Bytes p(len_, 0);
    for (std::size_t j = 0; j < n_; ++j) axpy(p.data(), source_.data() + j * len_, coefs[j], len_);
    return p == payload;
  }

  // Adds a symbol whose coefficients over the sources are coefs; errors: the refusals it deserves.
  void offer(const SymbolView& symbol, const Bytes& coefs, bool honest, const std::vector<Errc>& errors) {
    const std::size_t rank = decoder_.rank(), received = decoder_.received(), dropped = decoder_.non_innovative();
    std::optional<AddResult> result;
    try {
      result = decoder_.add(symbol);
    } catch (const Error& e) {
      FUZZ_CHECK(!errors.empty());
      FUZZ_CHECK(std::find(errors.begin(), errors.end(), e.code()) != errors.end());
      FUZZ_CHECK(decoder_.rank() == rank && decoder_.received() == received && decoder_.non_innovative() == dropped);
      return;
    }
    FUZZ_CHECK(errors.empty());
    FUZZ_CHECK(decoder_.received() == received + 1);
    Bytes row(coefs);
    row.insert(row.end(), symbol.payload.begin(), symbol.payload.end());
    const bool innovative = reference_.add(row);
    FUZZ_CHECK((*result == AddResult::innovative) == innovative);
    FUZZ_CHECK(decoder_.rank() == reference_.rank());
    FUZZ_CHECK(decoder_.non_innovative() == dropped + (innovative ? 0 : 1));
    if (innovative) {
      honest_ = honest_ && honest;
      if (history_.size() < 512) history_.emplace_back(coefs, Bytes(symbol.payload.begin(), symbol.payload.end()));
    }
  }

  void query(std::size_t i) {
    const bool decoded = decoder_.is_decoded(i);
    const Bytes* row = i < n_ ? reference_.decoded(i) : nullptr;
    FUZZ_CHECK(decoded == (row != nullptr));
    if (!decoded) {
      FUZZ_CHECK(throws_one_of([&] { decoder_.source_symbol(i); }, {Errc::not_decoded, Errc::index_out_of_range}));
      return;
    }
    const auto s = decoder_.source_symbol(i);
    FUZZ_CHECK(s.size() == len_ && std::equal(s.begin(), s.end(), row->begin() + static_cast<long>(n_)));
    if (honest_) FUZZ_CHECK(std::equal(s.begin(), s.end(), source_.begin() + static_cast<long>(i * len_)));
    std::size_t count = 0;
    for (std::size_t j = 0; j < n_; ++j) count += reference_.decoded(j) != nullptr;
    FUZZ_CHECK(decoder_.decoded_count() == count);
  }

  void reset() {
    decoder_.reset();
    reference_.clear();
    history_.clear();
    honest_ = true;
    FUZZ_CHECK(decoder_.rank() == 0 && decoder_.received() == 0 && !decoder_.is_decoded(0));
  }

  // Combinations of what is held (a relay's recoding): each must lie in the span of the accepted
  // rows, payload included; the first goes back in as a recoded symbol.
  void recode(ncast::fuzz::Input& in) {
    const std::size_t count = 1 + in.u8() % 3, rank = decoder_.rank();
    Bytes mix(count * rank);
    const auto given = in.bytes(mix.size());
    std::copy(given.begin(), given.end(), mix.begin());
    std::vector<Bytes> payloads(count, Bytes(len_, 0x5A));
    std::vector<std::uint8_t*> outs;
    for (auto& p : payloads) outs.push_back(p.data());
    Bytes coefs(count * n_, 0x5A);
    if (rank == 0) {
      FUZZ_CHECK(throws_one_of([&] { decoder_.combine_held(mix.data(), count, outs.data(), coefs.data()); },
                               {Errc::nothing_to_recode}));
      return;
    }
    decoder_.combine_held(mix.data(), count, outs.data(), coefs.data());
    for (std::size_t i = 0; i < count; ++i) {
      Bytes row(coefs.begin() + static_cast<long>(i * n_), coefs.begin() + static_cast<long>(i * n_ + n_));
      row.insert(row.end(), payloads[i].begin(), payloads[i].end());
      reference_.reduce(row);
      FUZZ_CHECK(std::all_of(row.begin(), row.end(), [](std::uint8_t x) { return x == 0; }));
    }
    const Bytes first(coefs.begin(), coefs.begin() + static_cast<long>(n_));
    std::vector<Errc> errors;
    if (std::all_of(first.begin(), first.end(), [](std::uint8_t c) { return c == 0; }))
      errors.push_back(Errc::zero_coefficients);
    offer({SymbolKind::recoded, 0, {}, first, payloads[0]}, first, true, errors);
  }

  GenerationLayout layout_;
  std::size_t n_, len_;
  Bytes source_;
  SeedContext seeds_;
  Bytes out_;
  Decoder decoder_;
  Reference reference_;
  std::vector<std::pair<Bytes, Bytes>> history_;  // accepted innovative symbols
  bool honest_ = true;                            // every innovative symbol since the last reset told the truth
};

}  // namespace

NCAST_FUZZ_TARGET(rlnc_decoder) {
  ncast::fuzz::Input in(data, size);
  const std::uint8_t flags = in.u8();
  // Mostly layouts in range and small, so that runs are quick (the reference costs n²·(n + L) per
  // generation); raw values now and then, large generations only for a bounded number of steps.
  const std::size_t n = flags & 1 ? in.u32() : 1 + in.u8() % 64;
  const std::size_t len = flags & 2 ? in.u32() : 1 + in.u8() % 48;
  const std::size_t bytes = flags & 4 || len == 0 ? in.u32() : n * len - in.u16() % len;
  const std::size_t batch = flags & 8 ? in.u16() : 1 + in.u8() % 64;
  const std::uint64_t seed = in.u64();

  const bool layout_ok =
      n >= 1 && n <= kMaxSymbols && len >= 1 && len <= kMaxSymbolSize && bytes >= 1 && bytes <= n * len;
  std::optional<GenerationLayout> layout;
  const bool refused = throws_one_of([&] { layout.emplace(n, len, bytes); }, {Errc::bad_layout});
  FUZZ_CHECK(refused != layout_ok);
  if (!layout || layout->block_bytes() > (1u << 18)) return 0;

  if (flags & 16) {  // a buffer one byte short
    Bytes small(layout->block_bytes() - 1);
    FUZZ_CHECK(throws_one_of([&] { Decoder d(*layout, small, {}, {.batch = 1}); }, {Errc::buffer_too_small}));
  }
  if (batch < 1 || batch > kMaxSymbols) {
    Bytes out(layout->block_bytes());
    FUZZ_CHECK(throws_one_of([&] { Decoder d(*layout, out, {}, {.batch = batch}); }, {Errc::bad_option}));
    return 0;
  }

  // The sources: random, zero-padded past the data as an encoder pads them.
  Bytes source(layout->block_bytes(), 0);
  std::uint64_t x = seed | 1;
  for (std::size_t i = 0; i < layout->data_bytes(); ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    source[i] = static_cast<std::uint8_t>(x);
  }
  Run run(*layout, std::move(source), batch, seed);
  const int max_steps = layout->n() <= 64 ? 1024 : 96;
  for (int steps = 0; !in.empty() && steps < max_steps; ++steps) run.step(in);
  run.finish();
  return 0;
}
