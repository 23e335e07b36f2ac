// docs/rs-api.md shows the examples that the tests compile and run, character for character.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RsDocs, ApiDocumentShowsTheCompiledExamplesVerbatim) {
  const std::string doc = slurp(NCAST_SOURCE_DIR "/docs/rs-api.md");
  ASSERT_FALSE(doc.empty());
  for (const char* example : {"/docs/examples/rs_example.c", "/docs/examples/rs_example.cpp"}) {
    const std::string code = slurp(std::string(NCAST_SOURCE_DIR) + example);
    ASSERT_FALSE(code.empty()) << example;
    EXPECT_NE(doc.find(code), std::string::npos) << "docs/rs-api.md does not show " << example << " as it is";
  }
}

}  // namespace
