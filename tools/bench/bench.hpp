#pragma once
// What every ncast-bench subcommand shares: options, timing, aligned buffers and the record format.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

namespace ncast::bench {

struct CommonOptions {
  bool json = false;       // one JSON object per line instead of a table
  bool markdown = false;   // a markdown table, as committed under bench/results/
  double seconds = 0.5;    // time spent measuring each case (split into trials)
  int rounds = 5;          // alternating rounds of a comparison: more, shorter ones on a shared machine
  int cpu = -1;            // pin the benchmark thread to this CPU (-1: leave it)
  std::uint64_t seed = 1;  // seed of the random inputs
};

// Adds --json, --markdown, --seconds, --rounds, --cpu and --seed to a subcommand's options.
void add_common_options(boost::program_options::options_description& desc, CommonOptions& common);
// Parses argv for a subcommand; prints help and returns false when --help was given.
// Throws cli::UsageError on bad input.
bool parse_options(int argc, char** argv, const std::string& usage, boost::program_options::options_description& desc,
                   CommonOptions& common);

// Throughput of fn in 10^9 bytes per second, bytes_per_call being what one call processes:
// the median of five trials after one warm-up call.
double measure_gb_per_s(const std::function<void()>& fn, double bytes_per_call, double seconds);

// The median of a few trials and the range they spanned.
struct Spread {
  double median = 0, min = 0, max = 0;
};

struct Comparison {
  double gb_per_s;
  double anchor_gb_per_s;
  Spread mine, anchor;
  Spread ratio;  // of the rounds' own ratios, each from one trial of both taken back to back
};
// fn and its anchor timed in alternating rounds (the median of each side), so that whatever else the
// machine is doing weighs on both alike and the ratio stays meaningful on a busy or noisy host.
Comparison measure_against(const std::function<void()>& fn, const std::function<void()>& anchor, double bytes_per_call,
                           double seconds, int rounds);

// A record is one measured case. Keys every subcommand prints: bench, backend, level, the case
// parameters, gb_per_s, and where an anchor ran in the same process: anchor, anchor_gb_per_s, ratio.
using Record = nlohmann::ordered_json;

// Sets gb_per_s, anchor_gb_per_s and the ranges of both and of the rounds' ratios.
void put_comparison(Record& record, const Comparison& result);

class Reporter {
 public:
  explicit Reporter(const CommonOptions& common) : json_(common.json), markdown_(common.markdown) {}
  // Sets ratio from the anchor figure when present, names the CPU (model, L2 and L3 sizes), then prints
  // the record (a JSON line or a table row).
  void emit(Record record);

 private:
  bool json_, markdown_;
  bool header_printed_ = false;
};

// A 64-byte aligned byte buffer.
struct AlignedBytes {
  struct Free {
    void operator()(std::uint8_t* p) const;
  };
  std::unique_ptr<std::uint8_t[], Free> data;
  std::size_t size = 0;
  std::uint8_t* get() const { return data.get(); }
};
AlignedBytes make_aligned(std::size_t size);

// count buffers of size bytes filled with random bytes from seed.
std::vector<AlignedBytes> random_buffers(std::size_t count, std::size_t size, std::uint64_t seed);
std::vector<std::uint8_t> random_bytes(std::size_t count, std::uint64_t seed, bool nonzero = false);

std::vector<const std::uint8_t*> const_pointers(const std::vector<AlignedBytes>& buffers);
std::vector<std::uint8_t*> pointers(std::vector<AlignedBytes>& buffers);

// Pins the calling thread to cpu (no-op for cpu < 0); throws std::runtime_error when it cannot.
void pin_to_cpu(int cpu);

}  // namespace ncast::bench
