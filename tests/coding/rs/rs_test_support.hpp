#pragma once
// Stripes of random shards and engines for the codec tests.
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "coding/cpu_engine.hpp"
#include "coding/engine.hpp"
#include "coding/simd_level.hpp"
#include "tests/coding/rs/rs_reference.hpp"

namespace ncast::testing {

// k + m shards of len bytes: random data, parity filled with random poison until encoded.
struct TestStripe {
  TestStripe() = default;
  TestStripe(std::size_t k, std::size_t m, std::size_t len, std::mt19937_64& rng) {
    for (std::size_t i = 0; i < k + m; ++i) shards.push_back(random_bytes(len, rng));
  }
  std::vector<std::uint8_t*> pointers() {
    std::vector<std::uint8_t*> p;
    for (auto& s : shards) p.push_back(s.data());
    return p;
  }
  std::vector<const std::uint8_t*> data_pointers(std::size_t k) const {
    std::vector<const std::uint8_t*> p;
    for (std::size_t j = 0; j < k; ++j) p.push_back(shards[j].data());
    return p;
  }
  std::vector<Bytes> shards;
};

// One CPU engine per SIMD level this machine has.
inline std::vector<std::shared_ptr<Engine>> cpu_engines() {
  std::vector<std::shared_ptr<Engine>> engines;
  for (gf::Level level : gf::supported_levels()) engines.push_back(std::make_shared<CpuEngine>(level));
  return engines;
}

// Counts the products it forwards, to show how many engine calls an operation costs.
class CountingEngine final : public Engine {
 public:
  Backend backend() const override { return inner_.backend(); }
  std::string description() const override { return "counting " + inner_.description(); }
  void multiply(const std::uint8_t* coefs, std::size_t m, std::size_t k, const std::uint8_t* const* ins,
                std::uint8_t* const* outs, std::size_t len, bool accumulate) override {
    ++calls;
    inner_.multiply(coefs, m, k, ins, outs, len, accumulate);
  }
  int calls = 0;

 private:
  CpuEngine inner_;
};

}  // namespace ncast::testing
