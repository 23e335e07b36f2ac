#pragma once
// Many generations at once, as the server (encoding every segment in flight for every session) and
// the swarm (each peer receiving symbols of several segments at a time) use them. The CPU runs the
// jobs one after another; the shapes are those a batched GPU launch takes.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>

#include "coding/rlnc/decoder.hpp"
#include "coding/rlnc/encoder.hpp"
#include "coding/rlnc/error.hpp"
#include "coding/rlnc/recoder.hpp"

namespace ncast::rlnc {

// Symbols first_id .. first_id+count-1 of one generation, as Encoder::produce writes them.
struct EncodeJob {
  const Encoder* encoder = nullptr;
  std::uint32_t first_id = 0;
  std::size_t count = 0;
  std::uint8_t* const* payloads = nullptr;
  std::uint8_t* coefficients = nullptr;  // optional: count × n
};
void encode_batch(std::span<const EncodeJob> jobs);

// count recoded symbols of one generation, as Recoder::produce writes them.
struct RecodeJob {
  Recoder* recoder = nullptr;
  std::size_t count = 0;
  std::uint8_t* const* payloads = nullptr;
  std::uint8_t* coefficients = nullptr;  // count × n
};
void recode_batch(std::span<const RecodeJob> jobs);

// The decoders of the generations (segments) of one stream that are in flight at a receiver.
class GenerationSet {
 public:
  // seed: the stream's coefficient seed (coefficient_seed(server, stream)).
  explicit GenerationSet(std::uint64_t seed, const DecoderOptions& options = {});

  // Starts decoding segment into out (n·L bytes, kept by the caller); reopening one restarts it.
  Decoder& open(std::uint32_t segment, const GenerationLayout& layout, std::span<std::uint8_t> out);
  void close(std::uint32_t segment);
  Decoder* find(std::uint32_t segment);
  std::size_t size() const { return decoders_.size(); }

  struct Arrival {
    std::uint32_t segment;
    SymbolView symbol;
  };
  enum class Status : std::uint8_t { innovative, non_innovative, rejected };
  struct Outcome {
    Status status = Status::rejected;
    Errc error = Errc::bad_kind;  // why, when rejected
    bool completed = false;       // this symbol completed its generation
  };
  // Feeds every arrival to its segment's decoder. A corrupt symbol or an unknown segment is rejected
  // in its outcome and the rest goes on. outcomes must have one entry per arrival; returns how many
  // generations completed.
  std::size_t add(std::span<const Arrival> arrivals, std::span<Outcome> outcomes);

 private:
  std::uint64_t seed_;
  DecoderOptions options_;
  std::unordered_map<std::uint32_t, std::unique_ptr<Decoder>> decoders_;
};

}  // namespace ncast::rlnc
