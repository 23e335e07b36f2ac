// The backends of the shared RS library as its users get them through the C API: auto always codes;
// cuda comes from the library's CUDA module, with parity equal to the CPU engine's, or fails saying
// why. In a build with the CUDA backend the module is there, so the only acceptable reason is the
// absence of a device (the test then reports SKIPPED); a module that cannot be loaded fails it.
#include <ncast/ncast_rs.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

struct Stripe {
  explicit Stripe(std::size_t len) : bytes(11, std::vector<std::uint8_t>(len)) {
    std::mt19937 rng(7);
    for (std::size_t i = 0; i < 8; ++i)
      for (auto& b : bytes[i]) b = static_cast<std::uint8_t>(rng());
    for (std::size_t i = 8; i < 11; ++i) bytes[i].assign(len, 0xA5);  // poison: encode must overwrite it
    for (auto& s : bytes) pointers.push_back(s.data());
  }
  std::vector<std::vector<std::uint8_t>> bytes;
  std::vector<std::uint8_t*> pointers;
};

// A codec on `backend`, or null with the library's reason in *why.
ncast_rs* create(int backend, std::string* why) {
  ncast_rs_options options;
  ncast_rs_options_init(&options);
  options.backend = backend;
  ncast_rs* codec = nullptr;
  if (ncast_rs_create(&codec, 8, 3, &options) != NCAST_RS_OK) {
    *why = ncast_rs_last_error();
    return nullptr;
  }
  return codec;
}

TEST(LibraryBackend, AutoAlwaysCodes) {
  std::string why;
  ncast_rs* codec = create(NCAST_RS_BACKEND_AUTO, &why);
  ASSERT_NE(codec, nullptr) << why;
  Stripe stripe(4096);
  EXPECT_EQ(ncast_rs_encode(codec, stripe.pointers.data(), 4096), NCAST_RS_OK);
  int consistent = 0;
  EXPECT_EQ(ncast_rs_verify(codec, stripe.pointers.data(), 4096, &consistent), NCAST_RS_OK);
  EXPECT_EQ(consistent, 1);
  ncast_rs_destroy(codec);
}

TEST(LibraryBackend, CudaComesFromTheModuleWithTheCpuParity) {
  std::string why;
  ncast_rs* cuda = create(NCAST_RS_BACKEND_CUDA, &why);
  if (cuda == nullptr) {
#ifdef NCAST_TEST_CUDA_MODULE
    ASSERT_NE(why.find("no usable CUDA device"), std::string::npos) << "the module was not asked: " << why;
#else
    ASSERT_NE(why.find("CUDA module could not be loaded"), std::string::npos) << why;
#endif
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(std::string(ncast_rs_backend_description(cuda)).rfind("cuda", 0), 0u) << ncast_rs_backend_description(cuda);
  ncast_rs* cpu = create(NCAST_RS_BACKEND_CPU, &why);
  ASSERT_NE(cpu, nullptr) << why;
  for (const std::size_t len : {1u, 1000u, 1u << 20}) {
    Stripe on_gpu(len), on_cpu(len);
    ASSERT_EQ(ncast_rs_encode(cuda, on_gpu.pointers.data(), len), NCAST_RS_OK) << ncast_rs_last_error();
    ASSERT_EQ(ncast_rs_encode(cpu, on_cpu.pointers.data(), len), NCAST_RS_OK);
    EXPECT_EQ(on_gpu.bytes, on_cpu.bytes) << "len " << len;
  }
  // Buffers for a CUDA codec are the module's page-locked ones, freed by it.
  void* buffer = ncast_rs_alloc(cuda, 1 << 20);
  ASSERT_NE(buffer, nullptr);
  ncast_rs_free(cuda, buffer);
  ncast_rs_destroy(cpu);
  ncast_rs_destroy(cuda);
}

}  // namespace
