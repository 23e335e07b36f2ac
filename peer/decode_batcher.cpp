#include "peer/decode_batcher.hpp"

#include <algorithm>
#include <atomic>
#include <stdexcept>

#include "coding/rlnc/error.hpp"
#include "coding/rlnc/rank_tracker.hpp"

namespace ncast::peer {

using BatchClock = std::chrono::steady_clock;

struct DecodeBatcher::Pending {
  BatchJob job;
  BatchClock::time_point submitted;
  // Guarded by the batcher's mutex.
  std::function<void()> on_decoded;
  bool abandoned = false;
  std::atomic<bool> done{false};  // job.rows holds the sources (when job.ok)
};

namespace {

class HostBatchBackend final : public BatchDecodeBackend {
 public:
  std::string description() const override { return "host"; }
  void decode(std::span<BatchJob* const> jobs) override {
    for (BatchJob* job : jobs) {
      const std::size_t n = job->n, L = job->symbol_size;
      const rlnc::GenerationLayout layout(n, L, n * L);
      out_.resize(n * L);
      rlnc::Decoder decoder(layout, out_, {});
      for (std::size_t i = 0; i < n; ++i)
        decoder.add({rlnc::SymbolKind::recoded, 0, {}, {job->coefs.data() + i * n, n}, {job->rows.data() + i * L, L}});
      job->ok = decoder.complete();
      if (!job->ok) continue;
      const auto sources = decoder.data();
      std::copy(sources.begin(), sources.end(), job->rows.begin());
    }
  }

 private:
  std::vector<std::uint8_t> out_;
};

// Rank and innovation from the coefficients alone; the payloads wait for the batch.
class BatchedSegmentDecoder final : public SegmentDecoder {
 public:
  BatchedSegmentDecoder(std::shared_ptr<DecodeBatcher> batcher, std::function<void()> on_decoded,
                        const rlnc::GenerationLayout& layout, const rlnc::SeedContext& seeds)
      : batcher_(std::move(batcher)),
        on_decoded_(std::move(on_decoded)),
        layout_(layout),
        seeds_(seeds),
        ranks_(layout.n()),
        coefs_(layout.n()) {}
  ~BatchedSegmentDecoder() override { give_up(); }
  BatchedSegmentDecoder(const BatchedSegmentDecoder&) = delete;
  BatchedSegmentDecoder& operator=(const BatchedSegmentDecoder&) = delete;

  rlnc::AddResult add(const rlnc::SymbolView& symbol) override {
    // Checked against the real layout, as the CPU decoder checks it (the same errors).
    rlnc::resolve_coefficients(symbol, layout_, seeds_, coefs_);
    if (ranks_.add(coefs_) == rlnc::AddResult::non_innovative) return rlnc::AddResult::non_innovative;
    if (!pending_) {
      pending_ = std::make_shared<DecodeBatcher::Pending>();
      BatchJob& job = pending_->job;
      job.n = layout_.n();
      job.symbol_size = layout_.symbol_size();
      job.coefs.reserve(job.n * job.n);
      job.rows.reserve(job.n * job.symbol_size);
      pending_->on_decoded = on_decoded_;
    }
    BatchJob& job = pending_->job;
    job.coefs.insert(job.coefs.end(), coefs_.begin(), coefs_.end());
    job.rows.insert(job.rows.end(), symbol.payload.begin(), symbol.payload.end());
    if (complete()) batcher_->submit(pending_);
    return rlnc::AddResult::innovative;
  }
  void reset() override {
    give_up();
    ranks_.reset();
  }
  const rlnc::GenerationLayout& layout() const override { return layout_; }
  std::size_t rank() const override { return ranks_.rank(); }
  bool data_ready() const override { return complete() && batcher_->decoded(*pending_); }
  std::span<const std::uint8_t> data() override {
    if (!complete()) throw rlnc::Error(rlnc::Errc::not_decoded, "the segment is not decoded yet");
    batcher_->wait(pending_);
    if (!pending_->job.ok) throw rlnc::Error(rlnc::Errc::not_decoded, "batched decode: the generation did not invert");
    return {pending_->job.rows.data(), layout_.data_bytes()};
  }
  const rlnc::Decoder* host_rows() const override { return nullptr; }

 private:
  void give_up() {
    if (pending_) batcher_->abandon(pending_);
    pending_.reset();
  }

  std::shared_ptr<DecodeBatcher> batcher_;
  std::function<void()> on_decoded_;
  rlnc::GenerationLayout layout_;
  rlnc::SeedContext seeds_;
  rlnc::RankTracker ranks_;
  std::vector<std::uint8_t> coefs_;
  std::shared_ptr<DecodeBatcher::Pending> pending_;  // from the first innovative symbol on
};

class BatchedDecoderFactory final : public DecoderFactory {
 public:
  BatchedDecoderFactory(std::shared_ptr<DecodeBatcher> batcher, std::function<void()> on_decoded)
      : batcher_(std::move(batcher)), on_decoded_(std::move(on_decoded)) {}
  std::string description() const override { return batcher_->description(); }
  std::unique_ptr<SegmentDecoder> open(const rlnc::GenerationLayout& layout, const rlnc::SeedContext& seeds) override {
    return std::make_unique<BatchedSegmentDecoder>(batcher_, on_decoded_, layout, seeds);
  }

 private:
  std::shared_ptr<DecodeBatcher> batcher_;
  std::function<void()> on_decoded_;
};

double seconds(BatchClock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

std::unique_ptr<BatchDecodeBackend> make_host_batch_backend() { return std::make_unique<HostBatchBackend>(); }

DecodeBatcher::DecodeBatcher(std::unique_ptr<BatchDecodeBackend> backend, const BatchOptions& options)
    : backend_(std::move(backend)), host_(make_host_batch_backend()), options_(options) {
  if (!backend_) throw std::invalid_argument("a decode batcher needs a backend");
  if (options_.max_batch == 0) throw std::invalid_argument("a decode batch holds at least one generation");
  if (options_.max_wait.count() < 0) throw std::invalid_argument("a decode batch cannot wait a negative time");
  thread_ = std::thread([this] { run(); });
}

DecodeBatcher::~DecodeBatcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  thread_.join();
}

std::unique_ptr<DecoderFactory> DecodeBatcher::factory(std::function<void()> on_decoded) {
  return std::make_unique<BatchedDecoderFactory>(shared_from_this(), std::move(on_decoded));
}

std::string DecodeBatcher::description() const {
  return "batched " + backend_->description() + ", up to " + std::to_string(options_.max_batch) + " generations or " +
         std::to_string(options_.max_wait.count()) + " µs a batch";
}

BatchStats DecodeBatcher::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void DecodeBatcher::submit(const std::shared_ptr<Pending>& job) {
  {
    std::lock_guard lock(mutex_);
    job->submitted = BatchClock::now();
    queue_.push_back(job);
  }
  queued_.notify_one();
}

void DecodeBatcher::abandon(const std::shared_ptr<Pending>& job) {
  std::lock_guard lock(mutex_);
  job->abandoned = true;
  job->on_decoded = nullptr;
}

void DecodeBatcher::wait(const std::shared_ptr<Pending>& job) const {
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return job->done.load(std::memory_order_acquire); });
}

bool DecodeBatcher::decoded(const Pending& job) const { return job.done.load(std::memory_order_acquire); }

void DecodeBatcher::run() {
  std::vector<std::shared_ptr<Pending>> batch;
  std::vector<BatchJob*> jobs, again;
  for (;;) {
    batch.clear();
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      // Company for the oldest, until the batch is full or it has waited long enough.
      const auto due = queue_.front()->submitted + options_.max_wait;
      queued_.wait_until(lock, due, [&] { return stopping_ || queue_.size() >= options_.max_batch; });
      if (stopping_) return;
      while (!queue_.empty() && batch.size() < options_.max_batch) {
        if (!queue_.front()->abandoned) batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    if (batch.empty()) continue;
    jobs.clear();
    for (const auto& p : batch) jobs.push_back(&p->job);
    const auto start = BatchClock::now();
    std::string error;
    try {
      backend_->decode(jobs);
    } catch (const std::exception& e) {
      error = e.what();
      for (BatchJob* j : jobs) j->ok = false;
    }
    const double took = seconds(BatchClock::now() - start);
    // What the backend could not solve (a device failure) is solved here, on the host.
    again.clear();
    for (BatchJob* j : jobs)
      if (!j->ok) again.push_back(j);
    if (!again.empty()) host_->decode(again);

    const auto now = BatchClock::now();
    std::lock_guard lock(mutex_);
    ++stats_.batches;
    stats_.generations += batch.size();
    stats_.decode_s += took;
    if (!error.empty()) {
      ++stats_.failed_batches;
      if (stats_.first_error.empty()) stats_.first_error = error;
    }
    stats_.host_generations += again.size();
    for (const auto& p : batch) {
      const double latency = seconds(now - p->submitted);
      stats_.latency_sum_s += latency;
      stats_.latency_max_s = std::max(stats_.latency_max_s, latency);
      p->done.store(true, std::memory_order_release);
      if (!p->abandoned && p->on_decoded) p->on_decoded();
    }
    done_.notify_all();
  }
}

}  // namespace ncast::peer
