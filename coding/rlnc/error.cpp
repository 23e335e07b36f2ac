#include "coding/rlnc/error.hpp"

namespace ncast::rlnc {

std::string_view to_string(Errc code) {
  switch (code) {
    case Errc::bad_layout: return "bad_layout";
    case Errc::wrong_payload_length: return "wrong_payload_length";
    case Errc::wrong_coefficient_count: return "wrong_coefficient_count";
    case Errc::zero_coefficients: return "zero_coefficients";
    case Errc::index_out_of_range: return "index_out_of_range";
    case Errc::bad_density: return "bad_density";
    case Errc::bad_option: return "bad_option";
    case Errc::bad_kind: return "bad_kind";
    case Errc::buffer_too_small: return "buffer_too_small";
    case Errc::not_decoded: return "not_decoded";
    case Errc::nothing_to_recode: return "nothing_to_recode";
    case Errc::unknown_generation: return "unknown_generation";
  }
  return "unknown";
}

}  // namespace ncast::rlnc
