#pragma once
// SHA-256 through OpenSSL's EVP interface (libcrypto), which picks the CPU's SHA extensions.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <openssl/evp.h>

namespace ncast::tools {

class Sha256 {
 public:
  Sha256();
  Sha256(Sha256&& other) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  Sha256& operator=(Sha256&&) = delete;
  ~Sha256();

  void update(const std::uint8_t* data, std::size_t len);
  // The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string hex();

 private:
  EVP_MD_CTX* ctx_;
};

// Whether s is 64 lowercase hex digits.
bool is_sha256_hex(const std::string& s);

class File;
// SHA-256 of a whole file read front to back; on_chunk (when given) hears the size of every chunk
// hashed and may throw to stop. Checks for interrupts between chunks.
std::string sha256_of(const File& file, const std::function<void(std::size_t)>& on_chunk = {});

}  // namespace ncast::tools
