#pragma once
// Reads tests/data/rlnc_coefficients_kat.txt (format in docs/coefficients.md).
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ncast::rlnc::testing {

struct CurandCase {
  std::uint64_t seed, subsequence, offset;
  std::vector<std::uint32_t> values;
};

struct CoefficientCase {
  std::uint32_t server, stream, segment, index, n, threshold;
  std::vector<std::uint8_t> coefficients;
};

struct KatFile {
  std::vector<CurandCase> curand;
  std::vector<CoefficientCase> coefficients;
};

inline KatFile read_kat(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  KatFile kat;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string kind, colon;
    s >> kind;
    if (kind == "curand") {
      CurandCase c;
      std::size_t count;
      s >> std::hex >> c.seed >> c.subsequence >> std::dec >> c.offset >> count >> colon;
      for (std::size_t i = 0; i < count; ++i) {
        std::uint32_t v;
        s >> std::hex >> v;
        c.values.push_back(v);
      }
      if (!s || colon != ":") throw std::runtime_error("bad curand line: " + line);
      kat.curand.push_back(std::move(c));
    } else if (kind == "coefficients") {
      CoefficientCase c;
      std::string hex;
      s >> c.server >> c.stream >> c.segment >> c.index >> c.n >> c.threshold >> colon >> hex;
      if (!s || colon != ":" || hex.size() != 2 * c.n) throw std::runtime_error("bad coefficients line: " + line);
      for (std::size_t i = 0; i < c.n; ++i)
        c.coefficients.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16)));
      kat.coefficients.push_back(std::move(c));
    } else {
      throw std::runtime_error("unknown line: " + line);
    }
  }
  return kat;
}

inline KatFile read_project_kat() { return read_kat(std::string(NCAST_TEST_DATA_DIR) + "/rlnc_coefficients_kat.txt"); }

}  // namespace ncast::rlnc::testing
