#pragma once
// ISA-L doing the same GF(2^8) work as an ncast kernel: the CPU anchor (Debian's libisal, or the build
// tree that NCAST_ISAL_ROOT names).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ncast::bench {

// ISA-L's table expansion and encode at the instruction set that matches ncast's active SIMD level:
// its own dispatch, except where ncast runs below the CPU's best level (NCAST_SIMD=avx2 or avx2-gfni
// on a CPU with more) and ISA-L has that level's kernels, so that both sides use one instruction set.
void isal_init_tables(std::size_t k, std::size_t rows, const std::uint8_t* coefs, std::uint8_t* tables);
void isal_encode(std::size_t len, std::size_t k, std::size_t rows, const std::uint8_t* tables,
                 const std::uint8_t* const* srcs, std::uint8_t* const* dsts);

// dsts[i] = Σ_j coefs[i·k + j] · srcs[j] through isal_init_tables + isal_encode.
class IsalMatrixEncoder {
 public:
  IsalMatrixEncoder(const std::uint8_t* coefs, std::size_t m, std::size_t k);
  void encode(const std::uint8_t* const* srcs, std::uint8_t* const* dsts, std::size_t len) const;
  // dsts[i] ^= coefs[i·k + j] · src for one source j: ec_encode_data_update.
  void update(std::size_t j, const std::uint8_t* src, std::uint8_t* const* dsts, std::size_t len) const;
  // "isa-l 2.32.1 ec_encode_data", with the library version this build found and, where the bench pins
  // ISA-L to one instruction set, that set's suffix ("ec_encode_data_avx2_gfni").
  static std::string name(const char* function = "ec_encode_data");

 private:
  std::size_t m_, k_;
  std::vector<unsigned char> tables_;
};

}  // namespace ncast::bench
