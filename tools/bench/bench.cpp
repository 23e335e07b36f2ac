#include "tools/bench/bench.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <stdexcept>

namespace ncast::bench {

namespace po = boost::program_options;

void add_common_options(po::options_description& desc, CommonOptions& common) {
  desc.add_options()("json", po::bool_switch(&common.json), "print one JSON object per line")(
      "markdown", po::bool_switch(&common.markdown), "print a markdown table")(
      "seconds", po::value(&common.seconds)->default_value(common.seconds), "measuring time per case")(
      "cpu", po::value(&common.cpu)->default_value(common.cpu), "pin to this CPU (-1: do not pin)")(
      "seed", po::value(&common.seed)->default_value(common.seed), "seed of the random inputs")("help,h",
                                                                                                "show this help");
}

bool parse_options(int argc, char** argv, const std::string& usage, po::options_description& desc,
                   CommonOptions& common) {
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
  if (vm.count("help")) {
    std::cout << usage << "\n\n" << desc << "\n";
    return false;
  }
  po::notify(vm);
  if (!(common.seconds > 0)) throw po::error("--seconds must be positive");
  pin_to_cpu(common.cpu);
  return true;
}

namespace {

constexpr int kTrials = 5;

// One trial: calls fn until the trial time has passed; returns GB/s.
double trial(const std::function<void()>& fn, double bytes_per_call, double trial_seconds) {
  using clock = std::chrono::steady_clock;
  const auto length = std::chrono::duration<double>(trial_seconds);
  std::size_t calls = 0;
  const auto start = clock::now();
  auto now = start;
  do {
    fn();
    ++calls;
    now = clock::now();
  } while (now - start < length);
  const double elapsed = std::chrono::duration<double>(now - start).count();
  return bytes_per_call * static_cast<double>(calls) / elapsed / 1e9;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

double measure_gb_per_s(const std::function<void()>& fn, double bytes_per_call, double seconds) {
  fn();
  std::vector<double> rates;
  for (int t = 0; t < kTrials; ++t) rates.push_back(trial(fn, bytes_per_call, seconds / kTrials));
  return median(rates);
}

Comparison measure_against(const std::function<void()>& fn, const std::function<void()>& anchor, double bytes_per_call,
                           double seconds) {
  fn();
  anchor();
  std::vector<double> mine, theirs;
  for (int t = 0; t < kTrials; ++t) {
    mine.push_back(trial(fn, bytes_per_call, seconds / kTrials));
    theirs.push_back(trial(anchor, bytes_per_call, seconds / kTrials));
  }
  return {median(mine), median(theirs)};
}

void Reporter::emit(Record record) {
  if (record.contains("anchor_gb_per_s") && record["anchor_gb_per_s"].get<double>() > 0)
    record["ratio"] = record["gb_per_s"].get<double>() / record["anchor_gb_per_s"].get<double>();
  if (json_) {
    std::cout << record.dump() << std::endl;
    return;
  }
  std::string params;
  for (const auto& [key, value] : record.items()) {
    if (key == "bench" || key == "backend" || key == "level" || key == "gb_per_s" || key == "anchor" ||
        key == "anchor_gb_per_s" || key == "ratio" || key == "checked_against")
      continue;
    params += (params.empty() ? "" : " ") + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  const std::string level = record.value("backend", std::string("?")) + "/" + record.value("level", std::string("-"));
  const bool anchored = record.contains("ratio");
  const double gbps = record["gb_per_s"].get<double>();
  if (markdown_) {
    if (!header_printed_) {
      std::printf(
          "| bench | backend/level | case | GB/s | anchor | anchor GB/s | ratio |\n|---|---|---|---:|---|---:|---:|\n");
      header_printed_ = true;
    }
    char anchor_cells[256] = " | |";
    if (anchored)
      std::snprintf(anchor_cells, sizeof anchor_cells, "%s | %.2f | %.2fx", record["anchor"].get<std::string>().c_str(),
                    record["anchor_gb_per_s"].get<double>(), record["ratio"].get<double>());
    std::printf("| %s | %s | %s | %.2f | %s |\n", record["bench"].get<std::string>().c_str(), level.c_str(),
                params.c_str(), gbps, anchor_cells);
    std::fflush(stdout);
    return;
  }
  if (!header_printed_) {
    std::printf("%-10s %-20s %-44s %10s   %s\n", "bench", "backend/level", "case", "GB/s", "vs anchor");
    header_printed_ = true;
  }
  std::string anchor;
  if (anchored) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%5.2fx  %s %.2f GB/s", record["ratio"].get<double>(),
                  record["anchor"].get<std::string>().c_str(), record["anchor_gb_per_s"].get<double>());
    anchor = buf;
  }
  std::printf("%-10s %-20s %-44s %10.2f   %s\n", record["bench"].get<std::string>().c_str(), level.c_str(),
              params.c_str(), gbps, anchor.c_str());
  std::fflush(stdout);
}

void AlignedBytes::Free::operator()(std::uint8_t* p) const { std::free(p); }

AlignedBytes make_aligned(std::size_t size) {
  const std::size_t rounded = (std::max<std::size_t>(size, 1) + 63) / 64 * 64;
  auto* p = static_cast<std::uint8_t*>(std::aligned_alloc(64, rounded));
  if (p == nullptr) throw std::bad_alloc();
  return {std::unique_ptr<std::uint8_t[], AlignedBytes::Free>(p), size};
}

std::vector<AlignedBytes> random_buffers(std::size_t count, std::size_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<AlignedBytes> out;
  for (std::size_t i = 0; i < count; ++i) {
    out.push_back(make_aligned(size));
    for (std::size_t j = 0; j < size; ++j) out.back().get()[j] = static_cast<std::uint8_t>(rng());
  }
  return out;
}

std::vector<std::uint8_t> random_bytes(std::size_t count, std::uint64_t seed, bool nonzero) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> out(count);
  for (auto& b : out) {
    do b = static_cast<std::uint8_t>(rng());
    while (nonzero && b == 0);
  }
  return out;
}

std::vector<const std::uint8_t*> const_pointers(const std::vector<AlignedBytes>& buffers) {
  std::vector<const std::uint8_t*> out;
  for (const auto& b : buffers) out.push_back(b.get());
  return out;
}

std::vector<std::uint8_t*> pointers(std::vector<AlignedBytes>& buffers) {
  std::vector<std::uint8_t*> out;
  for (auto& b : buffers) out.push_back(b.get());
  return out;
}

void pin_to_cpu(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) throw std::runtime_error("cannot pin to CPU " + std::to_string(cpu));
}

}  // namespace ncast::bench
