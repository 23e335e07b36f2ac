#pragma once
// The frame of every fuzz target. A target is one function over untrusted bytes, declared with
// NCAST_FUZZ_TARGET(name) { ... }: built with -DNCAST_FUZZ=ON (clang) it is libFuzzer's entry point;
// built into the normal suite it is registered under its name, and tests/fuzz/corpus_test.cpp replays
// the committed corpus of every target (seeds and every input that once failed) through it.
// A target checks what must hold with FUZZ_CHECK, which aborts: libFuzzer records the input as a
// crash, and a replay in the suite fails.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

namespace ncast::fuzz {

using TargetFn = int (*)(const std::uint8_t* data, std::size_t size);

// Registers a target for the corpus replay; returns true so it can initialise a static.
bool register_target(const char* name, TargetFn fn);

[[noreturn]] inline void check_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", file, line, what);
  std::abort();
}

// Takes typed values off the front of the input; past its end every value is zero and every byte
// string empty, so a target reads what it wants without checking sizes itself.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  // Big-endian; each byte taken in its own statement (the operands of | are unsequenced).
  std::uint16_t u16() {
    const unsigned hi = u8();
    return static_cast<std::uint16_t>(hi << 8 | u8());
  }
  std::uint32_t u32() {
    const std::uint32_t hi = u16();
    return hi << 16 | u16();
  }
  std::uint64_t u64() {
    const std::uint64_t hi = u32();
    return hi << 32 | u32();
  }
  bool flag() { return u8() & 1; }
  // Up to len bytes (fewer at the end of the input).
  std::span<const std::uint8_t> bytes(std::size_t len) {
    const std::size_t n = len < remaining() ? len : remaining();
    std::span<const std::uint8_t> out(data_ + pos_, n);
    pos_ += n;
    return out;
  }
  std::span<const std::uint8_t> rest() { return bytes(remaining()); }
  std::size_t remaining() const { return size_ - pos_; }
  bool empty() const { return pos_ == size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace ncast::fuzz

#define FUZZ_CHECK(cond)                                                 \
  do {                                                                   \
    if (!(cond)) ::ncast::fuzz::check_failed(#cond, __FILE__, __LINE__); \
  } while (0)

#ifdef NCAST_LIBFUZZER
#define NCAST_FUZZ_ENTRY(name)                                                        \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
    return ncast_fuzz_##name(data, size);                                             \
  }
#else
#define NCAST_FUZZ_ENTRY(name)                                      \
  [[maybe_unused]] static const bool ncast_fuzz_registered_##name = \
      ::ncast::fuzz::register_target(#name, &ncast_fuzz_##name);
#endif

#define NCAST_FUZZ_TARGET(name)                                             \
  static int ncast_fuzz_##name(const std::uint8_t* data, std::size_t size); \
  NCAST_FUZZ_ENTRY(name)                                                    \
  static int ncast_fuzz_##name(const std::uint8_t* data, std::size_t size)
