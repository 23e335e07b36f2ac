#pragma once
// What the RLNC codec reports when its input is wrong. Symbols come off the network, so a corrupt one
// is an ordinary event: it is rejected with an Error naming the problem, and nothing is changed.
#include <stdexcept>
#include <string>
#include <string_view>

namespace ncast::rlnc {

enum class Errc {
  bad_layout,               // n, symbol size or data length out of range
  wrong_payload_length,     // a payload is not exactly one symbol long
  wrong_coefficient_count,  // an explicit coefficient vector is not n bytes (a symbol of another generation size)
  zero_coefficients,        // an explicit coefficient vector is all zero
  index_out_of_range,       // a systematic symbol's index is not below n
  bad_density,              // a density outside (0, 1]
  bad_option,               // a codec option out of its range
  bad_kind,                 // a kind/coefficient combination that cannot exist (e.g. recoded without coefficients)
  buffer_too_small,         // a caller's buffer cannot hold what it must
  not_decoded,              // a source symbol was asked for before it was decoded
  nothing_to_recode,        // a recoder asked to emit before its node holds anything
  unknown_generation,       // a batch names a generation that was never opened
};

std::string_view to_string(Errc code);

class Error : public std::invalid_argument {
 public:
  Error(Errc code, const std::string& what) : std::invalid_argument(what), code_(code) {}
  Errc code() const { return code_; }

 private:
  Errc code_;
};

}  // namespace ncast::rlnc
