#ifndef NCAST_RS_HPP
#define NCAST_RS_HPP
// ncast Reed-Solomon for C++17 and later: a header-only layer over the C API of <ncast/ncast_rs.h>.
//
// Everything here is inline and calls only the C functions, so the installed library's ABI stays the C
// one whatever compiler and standard library this header is built with, and nothing internal to the
// library leaks into its users' builds. Failures throw ncast::RsError (ncast::RsUnrecoverable for more than m lost
// shards) with the C status and the library's message. docs/rs-api.md has a complete example.
#include <ncast/ncast_rs.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ncast {

enum class RsMatrix : int {
  cauchy = NCAST_RS_MATRIX_CAUCHY,
  vandermonde = NCAST_RS_MATRIX_VANDERMONDE,
  custom = NCAST_RS_MATRIX_CUSTOM
};

enum class RsBackend : int {
  automatic = NCAST_RS_BACKEND_AUTO,
  cpu = NCAST_RS_BACKEND_CPU,
  cuda = NCAST_RS_BACKEND_CUDA
};

struct RsOptions {
  RsMatrix matrix = RsMatrix::cauchy;
  std::vector<std::uint8_t> custom_parity;  // RsMatrix::custom: the m*k parity rows, row-major
  RsBackend backend = RsBackend::automatic;
  // Empty keeps the library's default, so that this header does not freeze a number the library owns.
  std::optional<std::size_t> decode_cache_capacity;
};

class RsError : public std::runtime_error {
 public:
  RsError(ncast_rs_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  ncast_rs_status status() const noexcept { return status_; }

 private:
  ncast_rs_status status_;
};

// More shards lost than the code can rebuild: usually a condition to handle (fetch more shards, report
// data loss), not a programming error, hence a type of its own.
class RsUnrecoverable : public RsError {
 public:
  explicit RsUnrecoverable(const std::string& message) : RsError(NCAST_RS_ERR_UNRECOVERABLE, message) {}
};

namespace rs_detail {

// The C library keeps the reason per thread, so it is read right after the failing call.
inline void check(int status, const char* call) {
  if (status == NCAST_RS_OK) return;
  const std::string message = std::string(call) + ": " + ncast_rs_status_string(status) + ": " + ncast_rs_last_error();
  if (status == NCAST_RS_ERR_UNRECOVERABLE) throw RsUnrecoverable(message);
  throw RsError(static_cast<ncast_rs_status>(status), message);
}

[[noreturn]] inline void invalid(const char* call, const std::string& why) {
  throw RsError(NCAST_RS_ERR_INVALID, std::string(call) + ": invalid argument: " + why);
}

struct Destroy {
  void operator()(ncast_rs* codec) const noexcept { ncast_rs_destroy(codec); }
};

}  // namespace rs_detail

// A view of shard pointers, one per shard index (stripe after stripe for the batch calls). It does not
// own them; built from a vector, std::array, C array or std::span of std::uint8_t*, or pointer + count.
// The count lets the codec check what the C API has to take on trust.
class RsShards {
 public:
  RsShards(std::uint8_t* const* pointers, std::size_t count) noexcept : pointers_(pointers), count_(count) {}
  template <class Range, class = std::enable_if_t<std::is_convertible_v<
                             decltype(std::data(std::declval<const Range&>())), std::uint8_t* const*>>>
  RsShards(const Range& range) noexcept  // implicit, as std::span is: it only views the range
      : pointers_(std::data(range)), count_(std::size(range)) {}

  std::uint8_t* const* data() const noexcept { return pointers_; }
  std::size_t size() const noexcept { return count_; }

 private:
  std::uint8_t* const* pointers_;
  std::size_t count_;
};

// Memory from RsCodec::alloc, released when it goes. The codec must outlive it (the C library frees
// through the codec's allocator); moving the codec does not matter.
class RsBuffer {
 public:
  RsBuffer() noexcept = default;
  RsBuffer(RsBuffer&& other) noexcept
      : codec_(other.codec_), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  RsBuffer& operator=(RsBuffer&& other) noexcept {
    if (this != &other) {
      ncast_rs_free(codec_, data_);
      codec_ = other.codec_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  RsBuffer(const RsBuffer&) = delete;
  RsBuffer& operator=(const RsBuffer&) = delete;
  ~RsBuffer() { ncast_rs_free(codec_, data_); }

  std::uint8_t* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  friend class RsCodec;
  RsBuffer(const ncast_rs* codec, std::uint8_t* data, std::size_t size) noexcept
      : codec_(codec), data_(data), size_(size) {}

  const ncast_rs* codec_ = nullptr;
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

// A codec for k data and m parity shards (shard i < k is data shard i, shard k + p parity shard p).
// Every call is const because the C library's are: one codec may serve several threads at once.
// Move-only; a moved-from codec may be destroyed or assigned, its counts read 0 and its other calls throw.
class RsCodec {
 public:
  RsCodec(unsigned k, unsigned m, const RsOptions& options = {}) {
    ncast_rs_options c_options;
    ncast_rs_options_init(&c_options);
    c_options.matrix = static_cast<int>(options.matrix);
    c_options.backend = static_cast<int>(options.backend);
    if (options.decode_cache_capacity) c_options.decode_cache_capacity = *options.decode_cache_capacity;
    if (options.matrix == RsMatrix::custom) {
      // The C library reads m*k bytes from the pointer; only here is the size known.
      if (options.custom_parity.size() != std::size_t{k} * m)
        rs_detail::invalid("ncast_rs_create", "custom_parity holds " + std::to_string(options.custom_parity.size()) +
                                                  " bytes, not m*k = " + std::to_string(std::size_t{k} * m));
      c_options.custom_parity = options.custom_parity.data();
    }
    ncast_rs* codec = nullptr;
    rs_detail::check(ncast_rs_create(&codec, k, m, &c_options), "ncast_rs_create");
    codec_.reset(codec);
  }

  unsigned data_shards() const noexcept { return ncast_rs_data_shards(codec_.get()); }
  unsigned parity_shards() const noexcept { return ncast_rs_parity_shards(codec_.get()); }
  unsigned total_shards() const noexcept { return data_shards() + parity_shards(); }
  std::string backend_description() const { return ncast_rs_backend_description(codec_.get()); }

  [[nodiscard]] std::vector<std::uint8_t> parity_matrix() const {
    std::vector<std::uint8_t> rows(std::size_t{data_shards()} * parity_shards());
    rs_detail::check(ncast_rs_parity_matrix(codec_.get(), rows.data(), rows.size()), "ncast_rs_parity_matrix");
    return rows;
  }

  [[nodiscard]] RsBuffer alloc(std::size_t bytes) const {
    void* memory = ncast_rs_alloc(codec_.get(), bytes);
    if (memory == nullptr) {
      rs_detail::check(codec_ ? NCAST_RS_ERR_NO_MEMORY : NCAST_RS_ERR_INVALID, "ncast_rs_alloc");
    }
    return {codec_.get(), static_cast<std::uint8_t*>(memory), bytes};
  }

  void encode(RsShards shards, std::size_t len) const {
    expect_count(shards, total_shards(), "ncast_rs_encode");
    rs_detail::check(ncast_rs_encode(codec_.get(), shards.data(), len), "ncast_rs_encode");
  }

  // Each stripe's k + m pointers follow the previous stripe's; the count gives the number of stripes.
  void encode_batch(RsShards shards, std::size_t len) const {
    const std::size_t stripes = stripe_count(shards, "ncast_rs_encode_batch");
    rs_detail::check(ncast_rs_encode_batch(codec_.get(), shards.data(), stripes, len), "ncast_rs_encode_batch");
  }

  // parity ^= the contribution of data shard index: parity zeroed first plus every data shard is encode().
  void encode_one(unsigned index, const std::uint8_t* data, RsShards parity, std::size_t len) const {
    expect_count(parity, parity_shards(), "ncast_rs_encode_one");
    rs_detail::check(ncast_rs_encode_one(codec_.get(), index, data, parity.data(), len), "ncast_rs_encode_one");
  }

  // Data shard index changed from old_data to new_data: patches parity without reading other data shards.
  void update(unsigned index, const std::uint8_t* old_data, const std::uint8_t* new_data, RsShards parity,
              std::size_t len) const {
    expect_count(parity, parity_shards(), "ncast_rs_update");
    rs_detail::check(ncast_rs_update(codec_.get(), index, old_data, new_data, parity.data(), len), "ncast_rs_update");
  }

  [[nodiscard]] bool verify(RsShards shards, std::size_t len) const {
    expect_count(shards, total_shards(), "ncast_rs_verify");
    int consistent = 0;
    rs_detail::check(ncast_rs_verify(codec_.get(), shards.data(), len, &consistent), "ncast_rs_verify");
    return consistent != 0;
  }

  // Rebuilds the erased shards in place, or only those in wanted when it is not empty.
  void reconstruct(RsShards shards, std::size_t len, const std::vector<unsigned>& erased,
                   const std::vector<unsigned>& wanted = {}) const {
    expect_count(shards, total_shards(), "ncast_rs_reconstruct");
    rs_detail::check(ncast_rs_reconstruct(codec_.get(), shards.data(), len, erased.data(), erased.size(),
                                          wanted.empty() ? nullptr : wanted.data(), wanted.size()),
                     "ncast_rs_reconstruct");
  }

  void reconstruct_batch(RsShards shards, std::size_t len, const std::vector<unsigned>& erased) const {
    const std::size_t stripes = stripe_count(shards, "ncast_rs_reconstruct_batch");
    rs_detail::check(
        ncast_rs_reconstruct_batch(codec_.get(), shards.data(), stripes, len, erased.data(), erased.size()),
        "ncast_rs_reconstruct_batch");
  }

  // The C handle, to hand to C code; it stays owned by this object.
  const ncast_rs* native_handle() const noexcept { return codec_.get(); }

 private:
  void expect_count(RsShards shards, std::size_t want, const char* call) const {
    if (!codec_) invalid_handle(call);
    if (shards.size() != want)
      rs_detail::invalid(call, std::to_string(shards.size()) + " shard pointers, not " + std::to_string(want));
  }

  std::size_t stripe_count(RsShards shards, const char* call) const {
    if (!codec_) invalid_handle(call);
    const std::size_t n = total_shards();
    if (shards.size() % n != 0)
      rs_detail::invalid(
          call, std::to_string(shards.size()) + " shard pointers are not whole stripes of " + std::to_string(n));
    return shards.size() / n;
  }

  [[noreturn]] static void invalid_handle(const char* call) { rs_detail::invalid(call, "moved-from codec"); }

  std::unique_ptr<ncast_rs, rs_detail::Destroy> codec_;
};

// The version of the library that runs, "major.minor.patch" (NCAST_RS_API_VERSION is the header's).
inline std::string rs_version() { return ncast_rs_version(); }

}  // namespace ncast

#endif  // NCAST_RS_HPP
