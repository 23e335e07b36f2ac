#include "gpu/progressive_decoder.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>

#include "coding/rlnc/error.hpp"
#include "coding/rlnc/symbol.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/progressive_kernel.hpp"
#include "gpu/rlnc_coefficients.hpp"

namespace ncast::gpu {
namespace {

constexpr std::size_t kVectorBytes = rlnc::kMaxSymbols;  // columns of the round's coefficient matrices

// Grows m to at least rows × cols (contents are not kept).
void reserve(DeviceMatrix& m, std::size_t rows, std::size_t cols, const char* what) {
  if (m.rows() < rows || m.cols() < cols)
    m = DeviceMatrix(std::max(rows, m.rows()), std::max({cols, m.cols(), std::size_t{1}}), what);
}
void reserve(PinnedBuffer& b, std::size_t bytes, const char* what) {
  if (b.size() < bytes) b = PinnedBuffer(bytes, what);
}
void reserve(DeviceBuffer& b, std::size_t bytes, const char* what) {
  if (b.size() < bytes) b = DeviceBuffer(bytes, what);
}

struct Copy {
  std::uint8_t* to;
  const std::uint8_t* from;
  std::size_t bytes;
};

// Copies into page-locked staging, with several threads when there is much to copy: one thread
// copies well below the rate of the link the staging feeds.
void copy_all(const std::vector<Copy>& copies, std::size_t bytes) {
  const unsigned threads =
      bytes < (std::size_t{8} << 20) ? 1u : std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  auto part = [&](unsigned t) {
    for (std::size_t i = t; i < copies.size(); i += threads) std::memcpy(copies[i].to, copies[i].from, copies[i].bytes);
  };
  if (threads == 1) return part(0);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(part, t);
  part(0);
  for (auto& t : pool) t.join();
}

}  // namespace

struct ProgressiveDecoder::Generation {
  rlnc::GenerationLayout layout;
  rlnc::SeedContext seeds;
  DeviceMatrix slots, state;  // payload slot c and coefficient row c: the held row with pivot c
  std::size_t rank = 0, received = 0, non_innovative = 0;
};

namespace {
const ProgressiveOptions& checked(const ProgressiveOptions& options) {
  if (options.round < 1 || options.round > detail::kMaxRound)
    throw std::invalid_argument("GPU progressive decoder: round must be 1.." + std::to_string(detail::kMaxRound) +
                                ", not " + std::to_string(options.round));
  return options;
}
}  // namespace

ProgressiveDecoder::ProgressiveDecoder(const ProgressiveOptions& options) : options_(checked(options)) {}

ProgressiveDecoder::~ProgressiveDecoder() { cudaStreamSynchronize(stream_.get()); }

void ProgressiveDecoder::open(std::uint32_t id, const rlnc::GenerationLayout& layout, const rlnc::SeedContext& seeds) {
  auto& g = generations_[id];
  if (g && g->layout.n() == layout.n() && g->layout.symbol_size() == layout.symbol_size()) {
    g->layout = layout;  // reopened with the same shape: its buffers are reused
    g->seeds = seeds;
    g->rank = g->received = g->non_innovative = 0;
  } else {
    g = std::make_unique<Generation>(Generation{layout, seeds,
                                                DeviceMatrix(layout.n(), layout.symbol_size(), "decoded symbols"),
                                                DeviceMatrix(layout.n(), layout.n(), "decoder coefficient rows")});
  }
  // Empty slots and rows are zero: the rounds' products add new rows into them. Everything after
  // runs on the same stream.
  check(cudaMemsetAsync(g->slots.ref().data, 0, g->slots.rows() * g->slots.pitch(), stream_.get()),
        "clearing decoder slots");
  check(cudaMemsetAsync(g->state.ref().data, 0, g->state.rows() * g->state.pitch(), stream_.get()),
        "clearing decoder rows");
}

void ProgressiveDecoder::close(std::uint32_t id) { generations_.erase(id); }

ProgressiveDecoder::Generation& ProgressiveDecoder::find(std::uint32_t id) const {
  const auto it = generations_.find(id);
  if (it == generations_.end())
    throw rlnc::Error(rlnc::Errc::unknown_generation, "generation " + std::to_string(id) + " is not open");
  return *it->second;
}

std::size_t ProgressiveDecoder::rank(std::uint32_t id) const { return find(id).rank; }
bool ProgressiveDecoder::complete(std::uint32_t id) const {
  const Generation& g = find(id);
  return g.rank == g.layout.n();
}
std::size_t ProgressiveDecoder::received(std::uint32_t id) const { return find(id).received; }
std::size_t ProgressiveDecoder::non_innovative(std::uint32_t id) const { return find(id).non_innovative; }

ConstDeviceMatrixRef ProgressiveDecoder::sources(std::uint32_t id) const {
  const Generation& g = find(id);
  if (g.rank < g.layout.n())
    throw rlnc::Error(rlnc::Errc::not_decoded, "generation " + std::to_string(id) + " has rank " +
                                                   std::to_string(g.rank) + " of " + std::to_string(g.layout.n()));
  return g.slots.cref();
}

void ProgressiveDecoder::download(std::uint32_t id, std::span<std::uint8_t> out) const {
  const ConstDeviceMatrixRef src = sources(id);
  stream_.synchronize("reading decoded data");
  const std::size_t bytes = find(id).layout.data_bytes(), len = src.cols, full = bytes / len;
  if (out.size() < bytes)
    throw rlnc::Error(rlnc::Errc::buffer_too_small, "the data of generation " + std::to_string(id) + " is " +
                                                        std::to_string(bytes) + " bytes, the buffer " +
                                                        std::to_string(out.size()));
  if (full > 0)
    check(cudaMemcpy2D(out.data(), len, src.data, src.pitch, len, full, cudaMemcpyDeviceToHost),
          "reading decoded data");
  if (bytes > full * len)
    check(cudaMemcpy(out.data() + full * len, src.row(full), bytes - full * len, cudaMemcpyDeviceToHost),
          "reading decoded data");
}

std::size_t ProgressiveDecoder::add(std::span<const Arrival> arrivals, std::span<Outcome> outcomes) {
  if (outcomes.size() != arrivals.size())
    throw std::invalid_argument("GPU progressive decoder: " + std::to_string(arrivals.size()) + " arrivals but " +
                                std::to_string(outcomes.size()) + " outcomes");
  // Validate (as the CPU decoder does) and queue per generation, in arrival order.
  explicit_.clear();
  Round queues;
  std::unordered_map<Generation*, std::size_t> queue_of;
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    Outcome& out = outcomes[i] = Outcome{};
    const auto it = generations_.find(arrivals[i].generation);
    if (it == generations_.end()) {
      out.error = rlnc::Errc::unknown_generation;
      continue;
    }
    Generation& g = *it->second;
    const rlnc::SymbolView& s = arrivals[i].symbol;
    Queued q{i, s.seeded(), explicit_.size()};
    if (q.seeded) {
      if (s.payload.size() != g.layout.symbol_size()) {
        out.error = rlnc::Errc::wrong_payload_length;
        continue;
      }
    } else {
      explicit_.resize(q.coefs + g.layout.n());
      try {
        rlnc::resolve_coefficients(s, g.layout, g.seeds, std::span(explicit_).subspan(q.coefs));
      } catch (const rlnc::Error& e) {
        explicit_.resize(q.coefs);
        out.error = e.code();
        continue;
      }
    }
    ++g.received;
    if (g.rank == g.layout.n()) {  // complete before this call
      ++g.non_innovative;
      out.status = Status::non_innovative;
      continue;
    }
    auto [slot, fresh] = queue_of.try_emplace(&g, queues.size());
    if (fresh) queues.emplace_back(&g, std::vector<Queued>{});
    queues[slot->second].second.push_back(q);
  }

  // Rounds of up to options_.round arrivals per generation.
  std::size_t completed = 0;
  std::vector<std::size_t> taken(queues.size(), 0);
  for (bool more = true; more;) {
    more = false;
    Round round;
    for (std::size_t k = 0; k < queues.size(); ++k) {
      const auto& [g, items] = queues[k];
      if (taken[k] == items.size()) continue;
      const std::size_t count = std::min(options_.round, items.size() - taken[k]);
      round.emplace_back(g, std::vector<Queued>(items.begin() + static_cast<long>(taken[k]),
                                                items.begin() + static_cast<long>(taken[k] + count)));
      taken[k] += count;
      more |= taken[k] < items.size();
    }
    if (!round.empty()) run_round(round, arrivals, outcomes, completed);
  }
  return completed;
}

void ProgressiveDecoder::run_round(const Round& round, std::span<const Arrival> arrivals, std::span<Outcome> outcomes,
                                   std::size_t& completed) {
  const RoundShape shape = reserve_round(round);
  stage_arrivals(round, arrivals, shape);
  eliminate(round, shape);
  update_slots(round, shape);
  std::size_t row = 0;
  for (const auto& [g, items] : round) {
    for (const Queued& q : items) {
      Outcome& out = outcomes[q.arrival];
      if (host_flags_.get()[row++] != 0) {
        out.status = Status::innovative;
        out.completed = ++g->rank == g->layout.n();
        completed += out.completed;
      } else {
        out.status = Status::non_innovative;
        ++g->non_innovative;
      }
    }
  }
}

ProgressiveDecoder::RoundShape ProgressiveDecoder::reserve_round(const Round& round) {
  RoundShape shape;
  for (const auto& [g, items] : round) {
    shape.rows += items.size();
    shape.max_len = std::max(shape.max_len, g->layout.symbol_size());
    shape.max_n = std::max(shape.max_n, static_cast<std::uint32_t>(g->layout.n()));
    shape.max_count = std::max(shape.max_count, static_cast<std::uint32_t>(items.size()));
  }
  const std::size_t rows = shape.rows, max_len = shape.max_len;
  reserve(payloads_, rows, max_len, "decoder payload staging");
  reserve(combined_, rows, max_len, "decoder reduced payloads");
  reserve(coefs_, rows, kVectorBytes, "decoder coefficient staging");
  reserve(reduced_, rows, kVectorBytes, "decoder coefficient staging");
  reserve(new_rows_, rows, kVectorBytes, "decoder coefficient staging");
  reserve(transforms_, rows, kVectorBytes + detail::kMaxRound, "decoder transforms");
  reserve(mixes_, round.size() * kVectorBytes, detail::kMaxRound, "decoder mixes");
  reserve(host_payloads_, rows * payloads_.pitch(), "decoder payload staging");
  reserve(host_coefs_, rows * coefs_.pitch(), "decoder coefficient staging");
  reserve(host_requests_, rows * sizeof(CoefficientRequest), "decoder coefficient requests");
  reserve(requests_, rows * sizeof(CoefficientRequest), "decoder coefficient requests");
  reserve(host_jobs_, round.size() * sizeof(detail::EliminateJob), "decoder jobs");
  reserve(jobs_, round.size() * sizeof(detail::EliminateJob), "decoder jobs");
  reserve(host_flags_, rows, "decoder results");
  reserve(flags_, rows, "decoder results");
  if (reduced_.pitch() != coefs_.pitch() || new_rows_.pitch() != coefs_.pitch())
    throw std::logic_error("GPU progressive decoder: coefficient staging pitches differ");
  return shape;
}

// Stages payloads, explicit vectors and the requests for seeded ones (n = 0 leaves a row alone), and
// draws the seeded coefficients on the device.
void ProgressiveDecoder::stage_arrivals(const Round& round, std::span<const Arrival> arrivals,
                                        const RoundShape& shape) {
  const std::size_t rows = shape.rows, vector_pitch = coefs_.pitch();
  auto* requests = reinterpret_cast<CoefficientRequest*>(host_requests_.get());
  std::vector<Copy> copies;
  copies.reserve(rows);
  std::size_t row = 0, bytes = 0;
  for (const auto& [g, items] : round) {
    const std::size_t n = g->layout.n(), len = g->layout.symbol_size();
    for (const Queued& q : items) {
      const rlnc::SymbolView& s = arrivals[q.arrival].symbol;
      copies.push_back({host_payloads_.get() + row * payloads_.pitch(), s.payload.data(), len});
      bytes += len;
      if (q.seeded) {
        requests[row] = {
            g->seeds.seed, g->seeds.segment, s.index, static_cast<std::uint32_t>(n), s.density.threshold(), 0};
      } else {
        requests[row] = {0, 0, 0, 0, 0, 0};
        std::memcpy(host_coefs_.get() + row * vector_pitch, explicit_.data() + q.coefs, n);
      }
      ++row;
    }
  }
  copy_all(copies, bytes);
  const cudaStream_t stream = stream_.get();
  check(cudaMemcpyAsync(payloads_.ref().data, host_payloads_.get(), rows * payloads_.pitch(), cudaMemcpyHostToDevice,
                        stream),
        "copying payloads to the device");
  check(cudaMemcpyAsync(coefs_.ref().data, host_coefs_.get(), rows * vector_pitch, cudaMemcpyHostToDevice, stream),
        "copying coefficients to the device");
  check(cudaMemcpyAsync(requests_.get(), requests, rows * sizeof(CoefficientRequest), cudaMemcpyHostToDevice, stream),
        "copying coefficient requests to the device");
  draw_coefficients(reinterpret_cast<const CoefficientRequest*>(requests_.get()), rows, shape.max_n, coefs_.ref(),
                    stream);
}

// Components along the held rows (none while nothing is held), then the elimination kernel.
void ProgressiveDecoder::eliminate(const Round& round, const RoundShape& shape) {
  const std::size_t vector_pitch = coefs_.pitch();
  const cudaStream_t stream = stream_.get();
  auto* jobs = reinterpret_cast<detail::EliminateJob*>(host_jobs_.get());
  reduce_.clear();
  std::size_t row = 0;
  for (std::size_t k = 0; k < round.size(); ++k) {
    Generation& g = *round[k].first;
    const std::size_t n = g.layout.n(), count = round[k].second.size(), held = g.rank > 0 ? n : 0;
    reduce_.add({{coefs_.ref().row(row), count, held, vector_pitch},
                 {g.state.cref().data, held, n, g.state.pitch()},
                 {reduced_.ref().row(row), count, n, vector_pitch}});
    jobs[k] = {coefs_.cref().row(row),
               reduced_.cref().row(row),
               new_rows_.ref().row(row),
               vector_pitch,
               g.state.cref().data,
               g.state.pitch(),
               transforms_.ref().row(row),
               transforms_.pitch(),
               mixes_.ref().row(k * kVectorBytes),
               mixes_.pitch(),
               flags_.get() + row,
               static_cast<std::uint32_t>(n),
               static_cast<std::uint32_t>(count)};
    row += count;
  }
  reduce_.multiply(options_.kernel, false, stream);
  check(cudaMemcpyAsync(jobs_.get(), jobs, round.size() * sizeof(detail::EliminateJob), cudaMemcpyHostToDevice, stream),
        "copying elimination jobs to the device");
  detail::launch_eliminate(reinterpret_cast<const detail::EliminateJob*>(jobs_.get()), round.size(), shape.max_n,
                           shape.max_count, stream);
}

// The payload side: each new reduced payload from the held slots and the round's raw payloads, then
// every slot plus its mix of them (the held slots lose their components along the new rows, empty
// slots that became pivots take theirs), and the coefficient rows likewise; then the round's results
// come back to the host.
void ProgressiveDecoder::update_slots(const Round& round, const RoundShape& shape) {
  const std::size_t vector_pitch = coefs_.pitch();
  const cudaStream_t stream = stream_.get();
  from_slots_.clear();
  from_payloads_.clear();
  apply_.clear();
  std::size_t row = 0;
  for (std::size_t k = 0; k < round.size(); ++k) {
    Generation& g = *round[k].first;
    const std::size_t n = g.layout.n(), len = g.layout.symbol_size(), count = round[k].second.size();
    const std::size_t held = g.rank > 0 ? n : 0;
    const DeviceMatrixRef combined{combined_.ref().row(row), count, len, combined_.pitch()};
    const ConstDeviceMatrixRef mix{mixes_.cref().row(k * kVectorBytes), n, count, mixes_.pitch()};
    from_slots_.add({{transforms_.cref().row(row), count, held, transforms_.pitch()},
                     {g.slots.cref().data, held, len, g.slots.pitch()},
                     combined});
    from_payloads_.add({{transforms_.cref().row(row) + n, count, count, transforms_.pitch()},
                        {payloads_.cref().row(row), count, len, payloads_.pitch()},
                        combined});
    apply_.add({mix, combined, g.slots.ref()});
    apply_.add({mix, {new_rows_.cref().row(row), count, n, vector_pitch}, g.state.ref()});
    row += count;
  }
  from_slots_.multiply(options_.kernel, false, stream);
  from_payloads_.multiply(options_.kernel, true, stream);
  apply_.multiply(options_.kernel, true, stream);
  check(cudaMemcpyAsync(host_flags_.get(), flags_.get(), shape.rows, cudaMemcpyDeviceToHost, stream),
        "reading decoder results");
  stream_.synchronize("decoding a round of arrivals");
}

}  // namespace ncast::gpu
