#pragma once
// Bounds-checked big-endian reading and writing of packet fields. The reader never reads past its
// span: a read that would sets a sticky failure flag and yields zeros, so a decoder reads every field
// and checks ok() once, without a branch per field and without undefined behaviour on short input.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace ncast::proto {

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  std::uint8_t u8() { return static_cast<std::uint8_t>(take_be(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(take_be(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(take_be(4)); }
  std::uint64_t u64() { return take_be(8); }

  // The next len octets, or an empty span (and failure) if fewer remain.
  std::span<const std::uint8_t> bytes(std::size_t len) {
    if (len > remaining()) {
      fail();
      return {};
    }
    auto out = bytes_.subspan(pos_, len);
    pos_ += len;
    return out;
  }
  template <std::size_t N>
  void copy_to(std::uint8_t (&out)[N]) {
    auto b = bytes(N);
    if (ok()) std::memcpy(out, b.data(), N);
  }
  template <typename Array>
  void copy_to(Array& out) {
    auto b = bytes(out.size());
    if (ok()) std::memcpy(out.data(), b.data(), out.size());
  }
  // A u8-length-prefixed string of min_len..255 octets.
  std::string short_string(std::size_t min_len = 0) {
    const std::size_t len = u8();
    auto b = bytes(len);
    if (!ok()) return {};
    if (len < min_len) fail();
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }

  std::size_t remaining() const { return failed_ ? 0 : bytes_.size() - pos_; }
  std::size_t position() const { return pos_; }
  bool ok() const { return !failed_; }
  // True when everything was read and nothing is left over.
  bool done() const { return ok() && pos_ == bytes_.size(); }
  // The rest is only zero octets (allowed padding).
  bool rest_is_zero() const {
    if (!ok()) return false;
    for (std::size_t i = pos_; i < bytes_.size(); ++i)
      if (bytes_[i] != 0) return false;
    return true;
  }
  void fail() { failed_ = true; }

 private:
  std::uint64_t take_be(std::size_t len) {
    if (len > remaining()) {
      fail();
      return 0;
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < len; ++i) v = (v << 8) | bytes_[pos_ + i];
    pos_ += len;
    return v;
  }

  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

// Writes into a caller's buffer; a write that does not fit sets a sticky failure flag and writes
// nothing, so an encoder checks ok() once at the end.
class Writer {
 public:
  explicit Writer(std::span<std::uint8_t> out) : out_(out) {}

  void u8(std::uint8_t v) { put_be(v, 1); }
  void u16(std::uint16_t v) { put_be(v, 2); }
  void u32(std::uint32_t v) { put_be(v, 4); }
  void u64(std::uint64_t v) { put_be(v, 8); }
  void bytes(std::span<const std::uint8_t> b) {
    if (b.size() > remaining()) return fail();
    if (!b.empty()) std::memcpy(out_.data() + pos_, b.data(), b.size());
    pos_ += b.size();
  }
  // A u8-length-prefixed string; longer than 255 octets fails.
  void short_string(std::string_view s) {
    if (s.size() > 255) return fail();
    u8(static_cast<std::uint8_t>(s.size()));
    bytes({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
  }
  void zeros(std::size_t len) {
    if (len > remaining()) return fail();
    std::memset(out_.data() + pos_, 0, len);
    pos_ += len;
  }
  // Room for len octets the caller fills itself.
  std::uint8_t* reserve(std::size_t len) {
    if (len > remaining()) {
      fail();
      return nullptr;
    }
    std::uint8_t* p = out_.data() + pos_;
    pos_ += len;
    return p;
  }

  std::size_t size() const { return pos_; }
  std::size_t remaining() const { return failed_ ? 0 : out_.size() - pos_; }
  bool ok() const { return !failed_; }
  void fail() { failed_ = true; }

 private:
  void put_be(std::uint64_t v, std::size_t len) {
    if (len > remaining()) return fail();
    for (std::size_t i = 0; i < len; ++i) out_[pos_ + i] = static_cast<std::uint8_t>(v >> (8 * (len - 1 - i)));
    pos_ += len;
  }

  std::span<std::uint8_t> out_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace ncast::proto
