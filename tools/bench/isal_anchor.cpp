#include "tools/bench/isal_anchor.hpp"

#include <isa-l/erasure_code.h>

namespace ncast::bench {

IsalMatrixEncoder::IsalMatrixEncoder(const std::uint8_t* coefs, std::size_t m, std::size_t k)
    : m_(m), k_(k), tables_(32 * m * k) {
  ec_init_tables(static_cast<int>(k), static_cast<int>(m), const_cast<unsigned char*>(coefs), tables_.data());
}

void IsalMatrixEncoder::encode(const std::uint8_t* const* srcs, std::uint8_t* const* dsts, std::size_t len) const {
  ec_encode_data(static_cast<int>(len), static_cast<int>(k_), static_cast<int>(m_),
                 const_cast<unsigned char*>(tables_.data()), const_cast<unsigned char**>(srcs),
                 const_cast<unsigned char**>(dsts));
}

void IsalMatrixEncoder::update(std::size_t j, const std::uint8_t* src, std::uint8_t* const* dsts,
                               std::size_t len) const {
  ec_encode_data_update(static_cast<int>(len), static_cast<int>(k_), static_cast<int>(m_), static_cast<int>(j),
                        const_cast<unsigned char*>(tables_.data()), const_cast<unsigned char*>(src),
                        const_cast<unsigned char**>(dsts));
}

std::string IsalMatrixEncoder::name(const char* function) {
  return std::string("isa-l ") + NCAST_ISAL_VERSION + " " + function;
}

}  // namespace ncast::bench
