// ncast-bench gf: the region kernels at every SIMD level, each beside ISA-L doing the same work.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/subcommands.hpp"
#include "coding/region.hpp"
#include "tools/bench/bench.hpp"
#include "tools/bench/isal_anchor.hpp"
#include "tools/bench/subcommands.hpp"

namespace ncast::bench {
namespace {

namespace po = boost::program_options;

struct Case {
  std::string kernel;  // mul | mul_add | dot | dot_multi
  std::size_t k, m;
};

const std::vector<Case> kCases = {
    {"mul", 1, 1}, {"mul_add", 1, 1}, {"dot", 10, 1}, {"dot_multi", 10, 4}, {"dot_multi", 32, 8},
};

void run_case(const Case& c, std::size_t bytes, const std::vector<gf::Level>& levels, const CommonOptions& common,
              Reporter& reporter) {
  auto srcs = random_buffers(c.k, bytes, common.seed);
  auto dsts = random_buffers(c.m, bytes, common.seed + 1);
  const auto coefs = random_bytes(c.m * c.k, common.seed + 2, /*nonzero=*/true);
  const auto src_ptrs = const_pointers(srcs);
  const auto dst_ptrs = pointers(dsts);
  const double work = static_cast<double>(c.k * bytes);

  IsalMatrixEncoder isal(coefs.data(), c.m, c.k);
  const std::string anchor_name =
      IsalMatrixEncoder::name(c.kernel == "mul_add" ? "ec_encode_data_update" : "ec_encode_data");
  const auto anchor = [&] {
    if (c.kernel == "mul_add") isal.update(0, src_ptrs[0], dst_ptrs.data(), bytes);
    else isal.encode(src_ptrs.data(), dst_ptrs.data(), bytes);
  };

  // Never time a wrong kernel: each level must first reproduce ISA-L's bytes on these inputs.
  // mul_add accumulates, so its check starts every time from the same destination bytes.
  const std::vector<std::uint8_t> original(dst_ptrs[0], dst_ptrs[0] + bytes);
  auto want = random_buffers(c.m, bytes, common.seed + 3);
  auto want_ptrs = pointers(want);
  if (c.kernel == "mul_add") {
    std::copy(original.begin(), original.end(), want_ptrs[0]);
    isal.update(0, src_ptrs[0], want_ptrs.data(), bytes);
  } else {
    isal.encode(src_ptrs.data(), want_ptrs.data(), bytes);
  }

  for (gf::Level level : levels) {
    const gf::RegionKernels& kern = gf::kernels_for(level);
    std::function<void()> fn;
    if (c.kernel == "mul") fn = [&] { kern.mul(dst_ptrs[0], src_ptrs[0], coefs[0], bytes); };
    else if (c.kernel == "mul_add") fn = [&] { kern.mul_add(dst_ptrs[0], src_ptrs[0], coefs[0], bytes); };
    else if (c.kernel == "dot") fn = [&] { kern.dot(dst_ptrs[0], src_ptrs.data(), coefs.data(), c.k, bytes); };
    else fn = [&] { kern.dot_multi(dst_ptrs.data(), c.m, src_ptrs.data(), c.k, coefs.data(), bytes, false); };
    if (c.kernel == "mul_add") std::copy(original.begin(), original.end(), dst_ptrs[0]);
    fn();
    for (std::size_t i = 0; i < c.m; ++i)
      if (!std::equal(want_ptrs[i], want_ptrs[i] + bytes, dst_ptrs[i]))
        throw std::runtime_error("kernel " + c.kernel + " at level " + std::string(gf::to_string(level)) +
                                 " disagrees with ISA-L (k=" + std::to_string(c.k) + ", m=" + std::to_string(c.m) +
                                 ")");

    Record r;
    r["bench"] = "gf";
    r["kernel"] = c.kernel;
    r["backend"] = "cpu";
    r["level"] = std::string(gf::to_string(level));
    r["k"] = c.k;
    r["m"] = c.m;
    r["bytes"] = bytes;
    put_comparison(r, measure_against(fn, anchor, work, common.seconds, common.rounds));
    r["checked_against"] = "isa-l";
    r["anchor"] = anchor_name;
    reporter.emit(std::move(r));
  }
}

}  // namespace

int run_gf(int argc, char** argv) {
  CommonOptions common;
  std::vector<std::string> level_names;
  std::vector<std::size_t> sizes{4096, 1 << 20};
  std::vector<std::string> kernels;
  po::options_description desc("ncast-bench gf options");
  desc.add_options()("level", po::value(&level_names)->multitoken(),
                     "SIMD levels to run (default: every level this CPU has)")(
      "bytes", po::value(&sizes)->multitoken(), "region sizes in bytes (default: 4096 1048576)")(
      "kernel", po::value(&kernels)->multitoken(), "kernels to run: mul mul_add dot dot_multi (default: all)");
  add_common_options(desc, common);
  if (!parse_options(argc, argv, "usage: ncast-bench gf [options]", desc, common)) return 0;

  std::vector<gf::Level> levels;
  if (level_names.empty()) {
    levels.assign(gf::supported_levels().begin(), gf::supported_levels().end());
  } else {
    for (const auto& name : level_names) {
      auto level = gf::parse_level(name);
      if (!level) throw cli::UsageError("unknown level '" + name + "' (use scalar, avx2, avx2-gfni or avx512-gfni)");
      if (!gf::cpu_supports(*level)) throw cli::UsageError("this CPU cannot run level '" + name + "'");
      levels.push_back(*level);
    }
  }
  for (const auto& k : kernels)
    if (k != "mul" && k != "mul_add" && k != "dot" && k != "dot_multi")
      throw cli::UsageError("unknown kernel '" + k + "'");
  for (std::size_t s : sizes)
    if (s == 0) throw cli::UsageError("--bytes must be positive");

  Reporter reporter(common);
  for (const Case& c : kCases) {
    if (!kernels.empty() && std::find(kernels.begin(), kernels.end(), c.kernel) == kernels.end()) continue;
    for (std::size_t bytes : sizes) run_case(c, bytes, levels, common, reporter);
  }
  return 0;
}

}  // namespace ncast::bench
