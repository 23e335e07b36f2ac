#pragma once
// ISA-L (Debian's libisal) doing the same GF(2^8) work as an ncast kernel: the CPU anchor.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ncast::bench {

// dsts[i] = Σ_j coefs[i·k + j] · srcs[j] through ec_init_tables + ec_encode_data.
class IsalMatrixEncoder {
 public:
  IsalMatrixEncoder(const std::uint8_t* coefs, std::size_t m, std::size_t k);
  void encode(const std::uint8_t* const* srcs, std::uint8_t* const* dsts, std::size_t len) const;
  // dsts[i] ^= coefs[i·k + j] · src for one source j: ec_encode_data_update.
  void update(std::size_t j, const std::uint8_t* src, std::uint8_t* const* dsts, std::size_t len) const;
  // "isa-l 2.30 ec_encode_data", with the library version this build found.
  static std::string name(const char* function = "ec_encode_data");

 private:
  std::size_t m_, k_;
  std::vector<unsigned char> tables_;
};

}  // namespace ncast::bench
