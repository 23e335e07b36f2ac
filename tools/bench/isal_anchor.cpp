#include "tools/bench/isal_anchor.hpp"

#include <isa-l/erasure_code.h>

#include "coding/simd_level.hpp"

#ifdef NCAST_ISAL_HAS_GFNI
// Exported by ISA-L 2.31+ but not declared in its header.
extern "C" {
void ec_init_tables_gfni(int k, int rows, unsigned char* a, unsigned char* gftbls);
void ec_encode_data_avx2_gfni(int len, int k, int rows, unsigned char* gftbls, unsigned char** data,
                              unsigned char** coding);
void ec_encode_data_update_avx2_gfni(int len, int k, int rows, int vec_i, unsigned char* gftbls, unsigned char* data,
                                     unsigned char** coding);
}
#endif

namespace ncast::bench {
namespace {

using InitFn = void (*)(int, int, unsigned char*, unsigned char*);
using EncodeFn = void (*)(int, int, int, unsigned char*, unsigned char**, unsigned char**);
using UpdateFn = void (*)(int, int, int, int, unsigned char*, unsigned char*, unsigned char**);

struct IsalPath {
  InitFn init;
  EncodeFn encode;
  UpdateFn update;
  const char* suffix;
};

IsalPath choose_path() {
#ifdef NCAST_ISAL_HAS_GFNI
  const gf::Level level = gf::active_level();
  if (level == gf::Level::avx2_gfni)
    return {ec_init_tables_gfni, ec_encode_data_avx2_gfni, ec_encode_data_update_avx2_gfni, "_avx2_gfni"};
// ISA-L deprecates calling one instruction set's kernels directly; pinning it to ncast's is the point here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  if (level == gf::Level::avx2 && gf::best_level() != gf::Level::avx2)
    return {ec_init_tables_base, ec_encode_data_avx2, ec_encode_data_update_avx2, "_avx2"};
#pragma GCC diagnostic pop
#endif
  return {ec_init_tables, ec_encode_data, ec_encode_data_update, ""};
}

const IsalPath& path() {
  static const IsalPath p = choose_path();
  return p;
}

unsigned char* mut(const std::uint8_t* p) { return const_cast<unsigned char*>(p); }
unsigned char** mut(const std::uint8_t* const* p) { return const_cast<unsigned char**>(p); }
unsigned char** mut(std::uint8_t* const* p) { return const_cast<unsigned char**>(p); }
int as_int(std::size_t n) { return static_cast<int>(n); }

}  // namespace

void isal_init_tables(std::size_t k, std::size_t rows, const std::uint8_t* coefs, std::uint8_t* tables) {
  path().init(as_int(k), as_int(rows), mut(coefs), tables);
}

void isal_encode(std::size_t len, std::size_t k, std::size_t rows, const std::uint8_t* tables,
                 const std::uint8_t* const* srcs, std::uint8_t* const* dsts) {
  path().encode(as_int(len), as_int(k), as_int(rows), mut(tables), mut(srcs), mut(dsts));
}

IsalMatrixEncoder::IsalMatrixEncoder(const std::uint8_t* coefs, std::size_t m, std::size_t k)
    : m_(m), k_(k), tables_(32 * m * k) {
  isal_init_tables(k, m, coefs, tables_.data());
}

void IsalMatrixEncoder::encode(const std::uint8_t* const* srcs, std::uint8_t* const* dsts, std::size_t len) const {
  isal_encode(len, k_, m_, tables_.data(), srcs, dsts);
}

void IsalMatrixEncoder::update(std::size_t j, const std::uint8_t* src, std::uint8_t* const* dsts,
                               std::size_t len) const {
  path().update(as_int(len), as_int(k_), as_int(m_), as_int(j), mut(tables_.data()), mut(src), mut(dsts));
}

std::string IsalMatrixEncoder::name(const char* function) {
  std::string n = std::string("isa-l ") + NCAST_ISAL_VERSION + " " + function;
  const std::string plain = "ec_encode_data";
  if (n.ends_with(plain)) n += path().suffix;
  return n;
}

}  // namespace ncast::bench
