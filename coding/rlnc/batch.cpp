#include "coding/rlnc/batch.hpp"

#include <string>

namespace ncast::rlnc {

void encode_batch(std::span<const EncodeJob> jobs) {
  for (const EncodeJob& job : jobs) job.encoder->produce(job.first_id, job.count, job.payloads, job.coefficients);
}

void recode_batch(std::span<const RecodeJob> jobs) {
  for (const RecodeJob& job : jobs) job.recoder->produce(job.count, job.payloads, job.coefficients);
}

GenerationSet::GenerationSet(std::uint64_t seed, const DecoderOptions& options) : seed_(seed), options_(options) {}

Decoder& GenerationSet::open(std::uint32_t segment, const GenerationLayout& layout, std::span<std::uint8_t> out) {
  auto decoder = std::make_unique<Decoder>(layout, out, SeedContext{seed_, segment}, options_);
  auto& slot = decoders_[segment];
  slot = std::move(decoder);
  return *slot;
}

void GenerationSet::close(std::uint32_t segment) { decoders_.erase(segment); }

Decoder* GenerationSet::find(std::uint32_t segment) {
  const auto it = decoders_.find(segment);
  return it == decoders_.end() ? nullptr : it->second.get();
}

std::size_t GenerationSet::add(std::span<const Arrival> arrivals, std::span<Outcome> outcomes) {
  if (outcomes.size() < arrivals.size())
    throw Error(Errc::buffer_too_small,
                std::to_string(outcomes.size()) + " outcomes for " + std::to_string(arrivals.size()) + " arrivals");
  std::size_t completed = 0;
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    Outcome& out = outcomes[i];
    out = {};
    Decoder* decoder = find(arrivals[i].segment);
    if (decoder == nullptr) {
      out.error = Errc::unknown_generation;
      continue;
    }
    const bool was_complete = decoder->complete();
    try {
      out.status =
          decoder->add(arrivals[i].symbol) == AddResult::innovative ? Status::innovative : Status::non_innovative;
    } catch (const Error& e) {
      out.status = Status::rejected;
      out.error = e.code();
      continue;
    }
    out.completed = !was_complete && decoder->complete();
    completed += out.completed;
  }
  return completed;
}

}  // namespace ncast::rlnc
