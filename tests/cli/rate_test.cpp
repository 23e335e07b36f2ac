// Rates as people write them.
#include "cli/rate.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ncast::cli {
namespace {

TEST(Rate, DecimalMultipliers) {
  EXPECT_DOUBLE_EQ(parse_rate("768k"), 768000);
  EXPECT_DOUBLE_EQ(parse_rate("768K"), 768000);
  EXPECT_DOUBLE_EQ(parse_rate("100M"), 1e8);
  EXPECT_DOUBLE_EQ(parse_rate("1.5G"), 1.5e9);
  EXPECT_DOUBLE_EQ(parse_rate("64000"), 64000);
}

TEST(Rate, RefusesWhatIsNoRate) {
  for (const char* bad : {"10X", "-5", "", "k", "1e999", "nan"})
    EXPECT_THROW(parse_rate(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace ncast::cli
