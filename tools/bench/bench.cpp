#include "tools/bench/bench.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <stdexcept>

#include "cli/subcommand_line.hpp"
#include "cli/subcommands.hpp"
#include "coding/cpu_caches.hpp"

namespace ncast::bench {

namespace po = boost::program_options;

void add_common_options(po::options_description& desc, CommonOptions& common) {
  desc.add_options()("json", po::bool_switch(&common.json), "print one JSON object per line")(
      "markdown", po::bool_switch(&common.markdown), "print a markdown table")(
      "seconds", po::value(&common.seconds)->default_value(common.seconds), "measuring time per case")(
      "rounds", po::value(&common.rounds)->default_value(common.rounds),
      "alternating rounds per comparison (more, shorter ones steady the medians on a shared machine)")(
      "cpu", po::value(&common.cpu)->default_value(common.cpu), "pin to this CPU (-1: do not pin)")(
      "seed", po::value(&common.seed)->default_value(common.seed), "seed of the random inputs")("help,h",
                                                                                                "show this help");
}

bool parse_options(int argc, char** argv, const std::string& usage, po::options_description& desc,
                   CommonOptions& common) {
  if (!cli::parse_subcommand_line(argc, argv, usage, desc, {}, std::cout)) return false;
  if (!(common.seconds > 0)) throw cli::UsageError("--seconds must be positive");
  if (common.rounds < 1) throw cli::UsageError("--rounds must be at least 1");
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

Spread spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

}  // namespace

double measure_gb_per_s(const std::function<void()>& fn, double bytes_per_call, double seconds) {
  fn();
  std::vector<double> rates;
  rates.reserve(kTrials);
  for (int t = 0; t < kTrials; ++t) rates.push_back(trial(fn, bytes_per_call, seconds / kTrials));
  return spread(rates).median;
}

Comparison measure_against(const std::function<void()>& fn, const std::function<void()>& anchor, double bytes_per_call,
                           double seconds, int rounds) {
  fn();
  anchor();
  std::vector<double> mine, theirs, ratios;
  for (int t = 0; t < rounds; ++t) {
    mine.push_back(trial(fn, bytes_per_call, seconds / rounds));
    theirs.push_back(trial(anchor, bytes_per_call, seconds / rounds));
    ratios.push_back(mine.back() / theirs.back());
  }
  Comparison c{0, 0, spread(mine), spread(theirs), spread(ratios)};
  c.gb_per_s = c.mine.median;
  c.anchor_gb_per_s = c.anchor.median;
  return c;
}

void put_comparison(Record& record, const Comparison& result) {
  const auto range = [](const Spread& s) { return Record::array({s.min, s.max}); };
  record["gb_per_s"] = result.gb_per_s;
  record["gb_per_s_range"] = range(result.mine);
  record["anchor_gb_per_s"] = result.anchor_gb_per_s;
  record["anchor_gb_per_s_range"] = range(result.anchor);
  record["round_ratio_range"] = range(result.ratio);
}

namespace {

bool is_column(const std::string& key) {
  return key == "bench" || key == "backend" || key == "level" || key == "gb_per_s" || key == "anchor" ||
         key == "anchor_gb_per_s" || key == "ratio" || key == "checked_against" || key == "cpu" ||
         key.ends_with("_range");
}

std::string size_text(std::size_t bytes) {
  if (bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

// "AMD EPYC 9B45 (family 26), L2 1 MiB, L3 32 MiB": what a figure from another machine needs beside it
// (the family tells Zen 4 from Zen 5 where a virtual machine's brand string is only "AMD EPYC").
const std::string& machine() {
  static const std::string text = gf::cpu_model() + " (family " + std::to_string(gf::cpu_family()) + "), L2 " +
                                  size_text(gf::cpu_caches().l2) + ", L3 " + size_text(gf::cpu_caches().l3);
  return text;
}

// "  [12.1-13.0 | 10.2-11.0 | 1.08-1.21x]": the ranges of both sides and of the rounds' ratios.
std::string ranges(const Record& record) {
  if (!record.contains("round_ratio_range")) return "";
  const auto lo_hi = [&](const char* key) {
    return std::make_pair(record[key][0].get<double>(), record[key][1].get<double>());
  };
  const auto [a, b] = lo_hi("gb_per_s_range");
  const auto [c, d] = lo_hi("anchor_gb_per_s_range");
  const auto [e, f] = lo_hi("round_ratio_range");
  char buf[128];
  std::snprintf(buf, sizeof buf, "%.2f-%.2f | %.2f-%.2f | %.2f-%.2fx", a, b, c, d, e, f);
  return buf;
}

}  // namespace

void Reporter::emit(Record record) {
  if (record.contains("anchor_gb_per_s") && record["anchor_gb_per_s"].get<double>() > 0)
    record["ratio"] = record["gb_per_s"].get<double>() / record["anchor_gb_per_s"].get<double>();
  record["cpu"] = machine();
  if (json_) {
    std::cout << record.dump() << std::endl;
    return;
  }
  std::string params;
  for (const auto& [key, value] : record.items()) {
    if (is_column(key)) continue;
    params += (params.empty() ? "" : " ") + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  const std::string level = record.value("backend", std::string("?")) + "/" + record.value("level", std::string("-"));
  const bool anchored = record.contains("ratio");
  const double gbps = record["gb_per_s"].get<double>();
  const std::string spread = ranges(record);
  if (markdown_) {
    if (!header_printed_) {
      std::printf(
          "| bench | backend/level | case | GB/s | anchor | anchor GB/s | ratio | ranges: GB/s \\| anchor \\| rounds' "
          "ratios | cpu |\n|---|---|---|---:|---|---:|---:|---|---|\n");
      header_printed_ = true;
    }
    char anchor_cells[256] = " | |";
    if (anchored)
      std::snprintf(anchor_cells, sizeof anchor_cells, "%s | %.2f | %.2fx", record["anchor"].get<std::string>().c_str(),
                    record["anchor_gb_per_s"].get<double>(), record["ratio"].get<double>());
    std::string cells = spread;
    for (std::size_t p = cells.find('|'); p != std::string::npos; p = cells.find('|', p + 2)) cells.insert(p, "\\");
    std::printf("| %s | %s | %s | %.2f | %s | %s | %s |\n", record["bench"].get<std::string>().c_str(), level.c_str(),
                params.c_str(), gbps, anchor_cells, cells.c_str(), machine().c_str());
    std::fflush(stdout);
    return;
  }
  if (!header_printed_) {
    std::printf("# %s\n%-10s %-20s %-44s %10s   %s\n", machine().c_str(), "bench", "backend/level", "case", "GB/s",
                "vs anchor");
    header_printed_ = true;
  }
  std::string anchor;
  if (anchored) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%5.2fx  %s %.2f GB/s  [%s]", record["ratio"].get<double>(),
                  record["anchor"].get<std::string>().c_str(), record["anchor_gb_per_s"].get<double>(), spread.c_str());
    anchor = buf;
  }
  std::printf("%-10s %-20s %-44s %10.2f   %s  (%s)\n", record["bench"].get<std::string>().c_str(), level.c_str(),
              params.c_str(), gbps, anchor.c_str(), machine().c_str());
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
  out.reserve(buffers.size());
  for (const auto& b : buffers) out.push_back(b.get());
  return out;
}

std::vector<std::uint8_t*> pointers(std::vector<AlignedBytes>& buffers) {
  std::vector<std::uint8_t*> out;
  out.reserve(buffers.size());
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
