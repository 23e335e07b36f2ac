#include "coding/rs/codec.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "coding/rs/decode_rows.hpp"

namespace ncast::rs {
namespace {

Matrix parity_rows(std::size_t k, std::size_t m, const Options& options) {
  check_code_size(k, m);
  switch (options.matrix) {
    case MatrixKind::cauchy: return cauchy_parity(k, m);
    case MatrixKind::vandermonde: return vandermonde_parity(k, m);
    case MatrixKind::custom:
      if (options.custom_parity.rows() != m || options.custom_parity.cols() != k)
        throw std::invalid_argument("custom matrix: need " + std::to_string(m) + " x " + std::to_string(k) +
                                    " parity rows for a " + std::to_string(k) + "+" + std::to_string(m) +
                                    " code, got " + std::to_string(options.custom_parity.rows()) + " x " +
                                    std::to_string(options.custom_parity.cols()));
      return options.custom_parity;
  }
  throw std::invalid_argument("unknown matrix kind");
}

Matrix transpose(const Matrix& a) {
  Matrix t(a.cols(), a.rows());
  for (std::size_t r = 0; r < a.rows(); ++r)
    for (std::size_t c = 0; c < a.cols(); ++c) t(c, r) = a(r, c);
  return t;
}

std::string shard_list(const ShardSet& set, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i)
    if (set.test(i)) s += (s.empty() ? "" : ",") + std::to_string(i);
  return "{" + s + "}";
}

[[noreturn]] void null_shard(std::size_t shard, std::size_t stripe, std::size_t stripes, bool read) {
  throw std::invalid_argument("Reed-Solomon reconstruct: shard " + std::to_string(shard) +
                              (stripes > 1 ? " of stripe " + std::to_string(stripe) : std::string()) + " is null but " +
                              (read ? "read" : "rebuilt"));
}

// Out of line, so that the check before it inlines into every reconstruction call.
[[noreturn, gnu::cold]] void wrong_shard_count(std::size_t given, std::size_t n, bool batch, const char* what) {
  throw std::invalid_argument(std::string("Reed-Solomon ") + what + ": " + std::to_string(given) +
                              " pointers given, need " + (batch ? "a multiple of " : "") + std::to_string(n));
}

// Calls fn(first, count) for maximal runs of stripes in which every used shard of a stripe starts len
// bytes after the same shard of the stripe before, so that a run is coded as one region.
template <class Fn>
void for_each_run(std::span<std::uint8_t* const> shards, std::size_t n, std::size_t len,
                  std::span<const std::size_t> used, Fn fn) {
  const std::size_t stripes = shards.size() / n;
  std::size_t first = 0;
  for (std::size_t s = 1; s <= stripes; ++s) {
    bool joins = s < stripes;
    for (std::size_t i = 0; joins && i < used.size(); ++i)
      joins = shards[s * n + used[i]] == shards[(s - 1) * n + used[i]] + len;
    if (!joins) {
      fn(first, s - first);
      first = s;
    }
  }
}

}  // namespace

Codec::Codec(std::size_t k, std::size_t m, const Options& options)
    : Codec(k, m, options, std::shared_ptr<Engine>(make_engine(options.backend))) {}

Codec::Codec(std::size_t k, std::size_t m, const Options& options, std::shared_ptr<Engine> engine)
    : k_(k),
      m_(m),
      kind_(options.matrix),
      parity_(parity_rows(k, m, options)),
      columns_(transpose(parity_)),
      engine_(std::move(engine)),
      cache_(options.decode_cache_capacity) {
  if (!engine_) throw std::invalid_argument("Reed-Solomon codec: no engine");
  for (std::size_t i = 0; i < k_; ++i) data_mask_.set(i);
}

void Codec::check_shards(std::span<const std::uint8_t* const> shards, std::size_t count, const char* what) const {
  if (shards.size() != count)
    throw std::invalid_argument(std::string("Reed-Solomon ") + what + ": " + std::to_string(shards.size()) +
                                " pointers given, need " + std::to_string(count));
  for (std::size_t i = 0; i < shards.size(); ++i)
    if (shards[i] == nullptr)
      throw std::invalid_argument(std::string("Reed-Solomon ") + what + ": pointer " + std::to_string(i) + " is null");
}

void Codec::encode(std::span<const std::uint8_t* const> data, std::span<std::uint8_t* const> parity,
                   std::size_t len) const {
  check_shards(data, k_, "encode (data)");
  check_shards({parity.data(), parity.size()}, m_, "encode (parity)");
  engine_->multiply(parity_.bytes().data(), m_, k_, data.data(), parity.data(), len, false);
}

void Codec::encode(std::span<std::uint8_t* const> shards, std::size_t len) const {
  check_shards({shards.data(), shards.size()}, k_ + m_, "encode");
  engine_->multiply(parity_.bytes().data(), m_, k_, shards.data(), shards.data() + k_, len, false);
}

void Codec::encode_one(std::size_t index, const std::uint8_t* data, std::span<std::uint8_t* const> parity,
                       std::size_t len) const {
  if (index >= k_)
    throw std::invalid_argument("Reed-Solomon encode_one: shard " + std::to_string(index) +
                                " is not a data shard of a " + std::to_string(k_) + "+" + std::to_string(m_) + " code");
  check_shards({&data, 1}, 1, "encode_one (data)");
  check_shards({parity.data(), parity.size()}, m_, "encode_one (parity)");
  engine_->multiply(columns_.row(index), m_, 1, &data, parity.data(), len, true);
}

void Codec::update(std::size_t index, const std::uint8_t* old_data, const std::uint8_t* new_data,
                   std::span<std::uint8_t* const> parity, std::size_t len) const {
  check_shards({&new_data, 1}, 1, "update (new data)");
  // P·(old ⊕ new) = P·old ⊕ P·new: two accumulating passes need no buffer for the difference.
  encode_one(index, old_data, parity, len);
  encode_one(index, new_data, parity, len);
}

bool Codec::verify(std::span<const std::uint8_t* const> shards, std::size_t len) const {
  check_shards(shards, k_ + m_, "verify");
  constexpr std::size_t kChunk = 64 * 1024;
  const std::size_t chunk = std::min(len, kChunk);
  // Ordinary aligned memory: a pinned allocation per call would cost more than it saves.
  HostBuffer scratch = allocate_host(Backend::cpu, m_ * std::max<std::size_t>(chunk, 1));
  std::array<std::uint8_t*, kMaxShards> outs;
  std::array<const std::uint8_t*, kMaxShards> ins;
  for (std::size_t p = 0; p < m_; ++p) outs[p] = scratch.data() + p * chunk;
  for (std::size_t off = 0; off < len; off += chunk) {
    const std::size_t n = std::min(chunk, len - off);
    for (std::size_t j = 0; j < k_; ++j) ins[j] = shards[j] + off;
    engine_->multiply(parity_.bytes().data(), m_, k_, ins.data(), outs.data(), n, false);
    for (std::size_t p = 0; p < m_; ++p)
      if (std::memcmp(outs[p], shards[k_ + p] + off, n) != 0) return false;
  }
  return true;
}

ShardSet Codec::sources_for(std::span<const std::size_t> erased) const {
  const Plan p = plan(erased, Want::all, {});
  return p.key.sources;
}

Codec::Plan Codec::plan(std::span<const std::size_t> erased, Want want, std::span<const std::size_t> wanted) const {
  const std::size_t n = k_ + m_;
  ShardSet lost;
  for (std::size_t e : erased) {
    if (e >= n)
      throw std::invalid_argument("Reed-Solomon reconstruct: erased shard " + std::to_string(e) +
                                  " does not exist in a " + std::to_string(k_) + "+" + std::to_string(m_) + " code");
    lost.set(e);
  }
  if (lost.count() > m_)
    throw Unrecoverable("Reed-Solomon reconstruct: " + std::to_string(lost.count()) + " shards lost " +
                        shard_list(lost, n) + ", a " + std::to_string(k_) + "+" + std::to_string(m_) +
                        " code rebuilds at most " + std::to_string(m_));
  Plan p;
  switch (want) {
    case Want::all: p.key.outputs = lost; break;
    case Want::data: p.key.outputs = lost & data_mask_; break;
    case Want::listed:
      for (std::size_t w : wanted) {
        if (w >= n)
          throw std::invalid_argument("Reed-Solomon reconstruct: wanted shard " + std::to_string(w) +
                                      " does not exist in a " + std::to_string(k_) + "+" + std::to_string(m_) +
                                      " code");
        if (lost.test(w)) p.key.outputs.set(w);
      }
      break;
  }
  for (std::size_t i = 0; i < n && p.source_count < k_; ++i)
    if (!lost.test(i)) {
      p.key.sources.set(i);
      p.used[p.source_count++] = i;
    }
  for (std::size_t i = 0; i < n; ++i)
    if (p.key.outputs.test(i)) p.used[k_ + p.output_count++] = i;
  walk_like_encode(p);
  return p;
}

DecodeRows Codec::rows_for(const Plan& plan) const {
  if (DecodeRows cached = cache_.find(plan.key)) return cached;
  auto rows = decode_rows(parity_, plan.sources(), plan.outputs());
  if (!rows)
    throw Unrecoverable("Reed-Solomon reconstruct: the " + std::string(to_string(kind_)) +
                        " matrix cannot rebuild from shards " + shard_list(plan.key.sources, k_ + m_) +
                        " (their rows are not independent)");
  return cache_.insert(plan.key, std::make_shared<const std::vector<std::uint8_t>>(std::move(*rows)));
}

void Codec::rebuild(std::span<std::uint8_t* const> shards, std::size_t len, std::size_t stripes,
                    std::span<const std::size_t> erased, Want want, std::span<const std::size_t> wanted) const {
  // A cache of capacity 0 keeps nothing, and neither does the thread's recent plan then.
  RecentPlan& recent = RecentPlan::of_this_thread();
  const DecodeRequest request{cache_.stamp(), want, erased, wanted};
  if (cache_.capacity() > 0 && recent.matches(request)) {
    cache_.count_hit();
    run_plan(recent.plan(), recent.rows(), shards, len, stripes);
  } else {
    plan_and_run(request, shards, len, stripes);
  }
}

void Codec::plan_and_run(const DecodeRequest& request, std::span<std::uint8_t* const> shards, std::size_t len,
                         std::size_t stripes) const {
  const Plan p = plan(request.erased, request.want, request.wanted);
  if (p.output_count == 0 || stripes == 0) return;
  DecodeRows rows = rows_for(p);
  run_plan(p, rows->data(), shards, len, stripes);
  if (cache_.capacity() > 0) RecentPlan::of_this_thread().remember(request, p, std::move(rows));
}

void Codec::run_plan(const Plan& plan, const std::uint8_t* rows, std::span<std::uint8_t* const> shards, std::size_t len,
                     std::size_t stripes) const {
  const std::size_t n = k_ + m_;
  const std::span<const std::size_t> used = plan.all();
  std::array<const std::uint8_t*, kMaxShards> ins;
  std::array<std::uint8_t*, kMaxShards> outs;
  if (stripes == 1) {
    // The common call gathers and checks its pointers in one pass: on 4 KiB shards of a narrow code,
    // what a decode costs beyond its multiply is a few such loops and calls.
    for (std::size_t j = 0; j < k_; ++j)
      if ((ins[j] = shards[used[j]]) == nullptr) null_shard(used[j], 0, 1, true);
    for (std::size_t o = 0; o < plan.output_count; ++o)
      if ((outs[o] = shards[used[k_ + o]]) == nullptr) null_shard(used[k_ + o], 0, 1, false);
    engine_->multiply(rows, plan.output_count, k_, ins.data(), outs.data(), len, false);
    return;
  }
  for (std::size_t s = 0; s < stripes; ++s)
    for (std::size_t u = 0; u < used.size(); ++u)
      if (shards[s * n + used[u]] == nullptr) null_shard(used[u], s, stripes, u < k_);
  for_each_run(shards.first(stripes * n), n, len, used, [&](std::size_t first, std::size_t count) {
    for (std::size_t j = 0; j < k_; ++j) ins[j] = shards[first * n + used[j]];
    for (std::size_t o = 0; o < plan.output_count; ++o) outs[o] = shards[first * n + used[k_ + o]];
    engine_->multiply(rows, plan.output_count, k_, ins.data(), outs.data(), len * count, false);
  });
}

std::size_t Codec::stripes_in(std::span<std::uint8_t* const> shards, bool batch, const char* what) const {
  const std::size_t n = k_ + m_;
  if (batch ? shards.size() % n != 0 : shards.size() != n) wrong_shard_count(shards.size(), n, batch, what);
  return shards.size() / n;
}

void Codec::reconstruct(std::span<std::uint8_t* const> shards, std::size_t len,
                        std::span<const std::size_t> erased) const {
  const std::size_t stripes = stripes_in(shards, false, "reconstruct");
  rebuild(shards, len, stripes, erased, Want::all, {});
}

void Codec::reconstruct(std::span<std::uint8_t* const> shards, std::size_t len, std::span<const std::size_t> erased,
                        std::span<const std::size_t> wanted) const {
  const std::size_t stripes = stripes_in(shards, false, "reconstruct");
  rebuild(shards, len, stripes, erased, Want::listed, wanted);
}

void Codec::reconstruct_data(std::span<std::uint8_t* const> shards, std::size_t len,
                             std::span<const std::size_t> erased) const {
  const std::size_t stripes = stripes_in(shards, false, "reconstruct_data");
  rebuild(shards, len, stripes, erased, Want::data, {});
}

void Codec::encode_batch(std::span<std::uint8_t* const> shards, std::size_t len) const {
  const std::size_t n = k_ + m_;
  stripes_in(shards, true, "encode_batch");
  for (std::size_t i = 0; i < shards.size(); ++i)
    if (shards[i] == nullptr)
      throw std::invalid_argument("Reed-Solomon encode_batch: shard " + std::to_string(i % n) + " of stripe " +
                                  std::to_string(i / n) + " is null");
  std::array<std::size_t, kMaxShards> all;
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  for_each_run(shards, n, len, {all.data(), n}, [&](std::size_t first, std::size_t count) {
    engine_->multiply(parity_.bytes().data(), m_, k_, shards.data() + first * n, shards.data() + first * n + k_,
                      len * count, false);
  });
}

void Codec::reconstruct_batch(std::span<std::uint8_t* const> shards, std::size_t len,
                              std::span<const std::size_t> erased) const {
  const std::size_t stripes = stripes_in(shards, true, "reconstruct_batch");
  rebuild(shards, len, stripes, erased, Want::all, {});
}

}  // namespace ncast::rs
