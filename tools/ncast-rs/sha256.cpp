#include "tools/ncast-rs/sha256.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>

#include "tools/ncast-rs/files.hpp"
#include "tools/ncast-rs/interrupt.hpp"

namespace ncast::tools {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx_);
    throw std::runtime_error("OpenSSL: cannot set up SHA-256");
  }
}

Sha256::Sha256(Sha256&& other) noexcept : ctx_(std::exchange(other.ctx_, nullptr)) {}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(const std::uint8_t* data, std::size_t len) {
  if (EVP_DigestUpdate(ctx_, data, len) != 1) throw std::runtime_error("OpenSSL: SHA-256 update failed");
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx_, digest, &n) != 1) throw std::runtime_error("OpenSSL: SHA-256 final failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (unsigned int i = 0; i < n; ++i) {
    s += kHex[digest[i] >> 4];
    s += kHex[digest[i] & 15];
  }
  return s;
}

bool is_sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string sha256_of(const File& file, const std::function<void(std::size_t)>& on_chunk) {
  // No larger than the file (small files are common) and not zeroed: read_at fills what is hashed.
  const auto len = static_cast<std::size_t>(std::clamp<std::uint64_t>(file.size(), 1, 1 << 20));
  const auto buf = std::make_unique_for_overwrite<std::uint8_t[]>(len);
  Sha256 sha;
  for (std::uint64_t off = 0;;) {
    check_interrupted();
    const std::size_t n = file.read_at(buf.get(), len, off);
    if (n == 0) break;
    sha.update(buf.get(), n);
    off += n;
    if (on_chunk) on_chunk(n);
  }
  return sha.hex();
}

}  // namespace ncast::tools
