// Address options with host names: numeric hosts as before, names through the system resolver, and
// errors that name the option and the text.
#include "net/resolve.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace ncast::net {
namespace {

std::string error_of(const std::string& text) {
  try {
    resolve(text, "--server");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(Resolve, NumericHostsAsParsed) {
  for (const char* text : {"127.0.0.1:7700", "[::1]:7730", "10.1.2.3:0"})
    EXPECT_EQ(resolve(text, "--server"), Address::parse(text)) << text;
}

TEST(Resolve, LocalhostIsLoopback) {
  const auto a = resolve("localhost:7730", "--server");
  EXPECT_TRUE(a.is_loopback()) << a.to_string();
  EXPECT_EQ(a.port, 7730);
}

TEST(Resolve, UnresolvableNameIsNamed) {
  const auto message = error_of("nosuch.invalid:7700");
  EXPECT_NE(message.find("--server 'nosuch.invalid:7700'"), std::string::npos) << message;
  EXPECT_NE(message.find("cannot resolve 'nosuch.invalid'"), std::string::npos) << message;
}

TEST(Resolve, MalformedTextIsNamed) {
  for (const char* bad : {"localhost", ":7700", "localhost:", "localhost:65536", "[::1]7700"}) {
    const auto message = error_of(bad);
    EXPECT_NE(message.find(std::string("--server '") + bad + "' is not HOST:PORT"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace ncast::net
