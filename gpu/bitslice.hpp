#pragma once
// Bit-sliced GF(2^8) arithmetic on groups of 32 bytes, shared by the bitslice kernel and its host
// tests (plain C++ here, __host__ __device__ under nvcc).
//
// Eight 32-bit words hold 32 bytes (byte 4i+k in byte k of word i). transpose() turns them into
// eight bit planes: plane b holds bit b of every byte, bit 8k+i of plane b being bit b of byte 4i+k.
// Multiplying by a constant c is linear over GF(2): output plane j is the XOR of the input planes b
// with bit j of c·2^b set, i.e. of the planes named by the 8-bit row j of c's 8×8 bit matrix
// (rows_of(c)). With the 256 XOR combinations of a source's planes in a table, each output plane of
// c·x costs one lookup. transpose() is its own inverse, so the output planes go back to bytes by it.
#include <cstdint>

#if defined(__CUDACC__)
#define NCAST_BITSLICE_FN __host__ __device__ __forceinline__
#else
#define NCAST_BITSLICE_FN inline
#endif

namespace ncast::gpu::bitslice {

// Exchanges the bits of a at positions with (bit & s) set against those of b at (bit & s) clear,
// within every byte: one level of the recursive 8×8 block transpose.
NCAST_BITSLICE_FN void swap_blocks(std::uint32_t& a, std::uint32_t& b, int s, std::uint32_t mask) {
  const std::uint32_t t = ((a >> s) ^ b) & mask;
  b ^= t;
  a ^= t << s;
}

// Four 8×8 bit transposes side by side (one per byte position k of the words).
NCAST_BITSLICE_FN void transpose(std::uint32_t (&w)[8]) {
  for (int i = 0; i < 4; ++i) swap_blocks(w[i], w[i + 4], 4, 0x0F0F0F0Fu);
  for (int i = 0; i < 8; i += (i & 1) ? 3 : 1) swap_blocks(w[i], w[i + 2], 2, 0x33333333u);  // 0, 1, 4, 5
  for (int i = 0; i < 8; i += 2) swap_blocks(w[i], w[i + 1], 1, 0x55555555u);
}

constexpr std::uint32_t times_x(std::uint32_t a) { return ((a << 1) ^ ((a & 0x80u) ? 0x1Du : 0u)) & 0xFFu; }

// Byte j of rows[c] is row j of c's bit matrix: bit b set when bit j of c·2^b is (polynomial 0x11D).
struct RowTable {
  std::uint64_t rows[256];
};

constexpr RowTable make_row_table() {
  RowTable t{};
  for (std::uint32_t c = 0; c < 256; ++c) {
    std::uint32_t p = c;  // c·2^b
    std::uint64_t rows = 0;
    for (int b = 0; b < 8; ++b) {
      for (int j = 0; j < 8; ++j)
        if ((p >> j) & 1u) rows |= std::uint64_t{1} << (8 * j + b);
      p = times_x(p);
    }
    t.rows[c] = rows;
  }
  return t;
}

// The XOR of the planes named by the bits of s (what a table entry holds).
NCAST_BITSLICE_FN std::uint32_t combination(const std::uint32_t (&planes)[8], std::uint32_t s) {
  std::uint32_t v = 0;
  for (int b = 0; b < 8; ++b)
    if ((s >> b) & 1u) v ^= planes[b];
  return v;
}

// __byte_perm on the device; the same selection (no sign replication) on the host.
NCAST_BITSLICE_FN std::uint32_t byte_perm(std::uint32_t x, std::uint32_t y, std::uint32_t selector) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(x, y, selector);
#else
  const std::uint64_t v = (std::uint64_t{y} << 32) | x;
  std::uint32_t r = 0;
  for (int i = 0; i < 4; ++i)
    r |= static_cast<std::uint32_t>((v >> (8 * ((selector >> (4 * i)) & 7u))) & 0xFFu) << (8 * i);
  return r;
#endif
}

// The kernel's tables: per stage two sources, 256 entries each, 32 lanes, at shared-memory addresses
// [64 KiB, 192 KiB) (the kernel places them there). The address of entry s of a lane's table is the
// bytes [lane byte, s, 1 + buffer, 0] with lane byte = source·128 + lane·4, so one PRMT makes it from
// a byte of a packed row word (4 rows of a bit matrix) and the lane's word lane_word(source, lane,
// buffer), with no base to add.
inline constexpr std::uint32_t kTablesBegin = 65536, kTablesEnd = 3 * 65536;
NCAST_BITSLICE_FN std::uint32_t lane_word(std::uint32_t source, std::uint32_t lane, std::uint32_t buffer) {
  return (source * 128 + lane * 4) | ((1 + buffer) << 16);
}
// Address of the entry named by byte j (0..3) of rows.
NCAST_BITSLICE_FN std::uint32_t entry_address(std::uint32_t rows, std::uint32_t lane_word, int j) {
  return byte_perm(rows, lane_word, 0x7604u | (static_cast<std::uint32_t>(j) << 4));
}

#if defined(__CUDACC__)
__host__ __device__
#endif
    constexpr int
    trailing_zeros(int i) {
  int z = 0;
  while (!(i & 1)) i >>= 1, ++z;
  return z;
}

// Entries 64q .. 64q+63 of a source's table (a quarter, as one warp builds it), in Gray-code order
// so each costs one XOR: store(e, value) for the entry 64q + e.
template <class Store>
NCAST_BITSLICE_FN void build_quarter(const std::uint32_t (&planes)[8], int q, Store&& store) {
  std::uint32_t v = ((q & 1) ? planes[6] : 0u) ^ ((q & 2) ? planes[7] : 0u);
  store(0, v);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int i = 1; i < 64; ++i) {
    v ^= planes[trailing_zeros(i)];
    store(i ^ (i >> 1), v);
  }
}

}  // namespace ncast::gpu::bitslice
