// The C API: a thin shell over rs::Codec that turns exceptions into status codes and messages.
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "coding/rs/codec.hpp"
#include "coding/rs/ncast_rs.h"

struct ncast_rs {
  ncast::rs::Codec codec;
  std::string description;
  ncast::HostAllocator allocator;  // the one buffers of this codec come from, fixed at creation
};

namespace {

using ncast::rs::Codec;

thread_local std::string last_error;

int fail(int status, const char* what) {
  last_error = what;
  return status;
}

// Runs fn, mapping what it throws to a status; backend_errors says whether a runtime_error there
// means that the backend could not be had.
template <class Fn>
int guarded(Fn&& fn, bool backend_errors = false) {
  try {
    fn();
    return NCAST_RS_OK;
  } catch (const ncast::rs::Unrecoverable& e) {
    return fail(NCAST_RS_ERR_UNRECOVERABLE, e.what());
  } catch (const std::invalid_argument& e) {
    return fail(NCAST_RS_ERR_INVALID, e.what());
  } catch (const std::out_of_range& e) {
    return fail(NCAST_RS_ERR_INVALID, e.what());
  } catch (const std::bad_alloc&) {
    return fail(NCAST_RS_ERR_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(backend_errors ? NCAST_RS_ERR_BACKEND : NCAST_RS_ERR_INTERNAL, e.what());
  } catch (...) {
    return fail(NCAST_RS_ERR_INTERNAL, "unknown exception");
  }
}

bool null_codec(const ncast_rs* codec) {
  if (codec != nullptr) return false;
  last_error = "codec handle is NULL";
  return true;
}

std::vector<std::size_t> indices(const unsigned* list, std::size_t count, const char* name) {
  if (list == nullptr && count > 0) throw std::invalid_argument(std::string(name) + " is NULL but its count is not 0");
  return std::vector<std::size_t>(list, list + count);
}

std::span<std::uint8_t* const> shard_span(const ncast_rs* codec, uint8_t* const* shards, std::size_t stripes) {
  if (shards == nullptr) throw std::invalid_argument("shards is NULL");
  return {shards, stripes * codec->codec.total_shards()};
}

}  // namespace

extern "C" {

void ncast_rs_options_init(ncast_rs_options* options) {
  if (options == nullptr) return;
  *options = ncast_rs_options{};
  options->struct_size = sizeof(ncast_rs_options);
  options->matrix = NCAST_RS_MATRIX_CAUCHY;
  options->backend = NCAST_RS_BACKEND_AUTO;
  options->decode_cache_capacity = ncast::rs::Options{}.decode_cache_capacity;
}

int ncast_rs_create(ncast_rs** codec, unsigned k, unsigned m, const ncast_rs_options* options) {
  if (codec == nullptr) return fail(NCAST_RS_ERR_INVALID, "codec out-pointer is NULL");
  *codec = nullptr;
  ncast_rs_options defaults;
  ncast_rs_options_init(&defaults);
  if (options == nullptr) options = &defaults;
  if (options->struct_size != sizeof(ncast_rs_options))
    return fail(NCAST_RS_ERR_INVALID, "options were not set up with ncast_rs_options_init (struct_size mismatch)");

  ncast::rs::Options o;
  o.decode_cache_capacity = options->decode_cache_capacity;
  int status = guarded([&] {
    switch (options->matrix) {
      case NCAST_RS_MATRIX_CAUCHY: o.matrix = ncast::rs::MatrixKind::cauchy; break;
      case NCAST_RS_MATRIX_VANDERMONDE: o.matrix = ncast::rs::MatrixKind::vandermonde; break;
      case NCAST_RS_MATRIX_CUSTOM:
        o.matrix = ncast::rs::MatrixKind::custom;
        if (options->custom_parity == nullptr) throw std::invalid_argument("custom matrix: custom_parity is NULL");
        ncast::rs::check_code_size(k, m);
        o.custom_parity = ncast::rs::Matrix(m, k, {options->custom_parity, std::size_t{m} * k});
        break;
      default: throw std::invalid_argument("unknown matrix " + std::to_string(options->matrix));
    }
    switch (options->backend) {
      case NCAST_RS_BACKEND_AUTO: o.backend = ncast::Backend::automatic; break;
      case NCAST_RS_BACKEND_CPU: o.backend = ncast::Backend::cpu; break;
      case NCAST_RS_BACKEND_CUDA: o.backend = ncast::Backend::cuda; break;
      default: throw std::invalid_argument("unknown backend " + std::to_string(options->backend));
    }
    ncast::rs::check_code_size(k, m);
  });
  if (status != NCAST_RS_OK) return status;
  return guarded(
      [&] {
        auto handle = std::unique_ptr<ncast_rs>(new ncast_rs{Codec(k, m, o), {}, {}});
        handle->description = handle->codec.engine().description();
        handle->allocator = ncast::host_allocator(handle->codec.engine().backend());
        *codec = handle.release();
      },
      /*backend_errors=*/true);
}

void ncast_rs_destroy(ncast_rs* codec) { delete codec; }

unsigned ncast_rs_data_shards(const ncast_rs* codec) {
  return null_codec(codec) ? 0 : static_cast<unsigned>(codec->codec.data_shards());
}

unsigned ncast_rs_parity_shards(const ncast_rs* codec) {
  return null_codec(codec) ? 0 : static_cast<unsigned>(codec->codec.parity_shards());
}

const char* ncast_rs_backend_description(const ncast_rs* codec) {
  return null_codec(codec) ? "" : codec->description.c_str();
}

int ncast_rs_parity_matrix(const ncast_rs* codec, uint8_t* out, size_t out_size) {
  if (null_codec(codec)) return NCAST_RS_ERR_INVALID;
  const auto bytes = codec->codec.parity_matrix().bytes();
  if (out == nullptr || out_size < bytes.size())
    return fail(NCAST_RS_ERR_INVALID, ("parity matrix needs " + std::to_string(bytes.size()) + " bytes").c_str());
  std::memcpy(out, bytes.data(), bytes.size());
  return NCAST_RS_OK;
}

void* ncast_rs_alloc(const ncast_rs* codec, size_t bytes) {
  if (null_codec(codec)) return nullptr;
  void* p = codec->allocator.allocate(bytes);
  if (p == nullptr) last_error = "cannot allocate " + std::to_string(bytes) + " bytes";
  return p;
}

void ncast_rs_free(const ncast_rs* codec, void* p) {
  if (p != nullptr && !null_codec(codec)) codec->allocator.release(p);
}

int ncast_rs_encode(const ncast_rs* codec, uint8_t* const* shards, size_t len) {
  if (null_codec(codec)) return NCAST_RS_ERR_INVALID;
  return guarded([&] { codec->codec.encode(shard_span(codec, shards, 1), len); });
}

int ncast_rs_encode_batch(const ncast_rs* codec, uint8_t* const* shards, size_t stripes, size_t len) {
  if (null_codec(codec)) return NCAST_RS_ERR_INVALID;
  return guarded([&] { codec->codec.encode_batch(shard_span(codec, shards, stripes), len); });
}

int ncast_rs_encode_one(const ncast_rs* codec, unsigned index, const uint8_t* data, uint8_t* const* parity,
                        size_t len) {
  if (null_codec(codec)) return NCAST_RS_ERR_INVALID;
  return guarded([&] {
    if (parity == nullptr) throw std::invalid_argument("parity is NULL");
    codec->codec.encode_one(index, data, {parity, codec->codec.parity_shards()}, len);
  });
}

int ncast_rs_update(const ncast_rs* codec, unsigned index, const uint8_t* old_data, const uint8_t* new_data,
                    uint8_t* const* parity, size_t len) {
  if (null_codec(codec)) return NCAST_RS_ERR_INVALID;
  return guarded([&] {
    if (parity == nullptr) throw std::invalid_argument("parity is NULL");
    codec->codec.update(index, old_data, new_data, {parity, codec->codec.parity_shards()}, len);
  });
}

int ncast_rs_verify(const ncast_rs* codec, const uint8_t* const* shards, size_t len, int* consistent) {
  if (null_codec(codec)) return NCAST_RS_ERR_INVALID;
  return guarded([&] {
    if (shards == nullptr || consistent == nullptr) throw std::invalid_argument("shards or consistent is NULL");
    *consistent = codec->codec.verify({shards, codec->codec.total_shards()}, len) ? 1 : 0;
  });
}

int ncast_rs_reconstruct(const ncast_rs* codec, uint8_t* const* shards, size_t len, const unsigned* erased,
                         size_t erased_count, const unsigned* wanted, size_t wanted_count) {
  if (null_codec(codec)) return NCAST_RS_ERR_INVALID;
  return guarded([&] {
    const auto e = indices(erased, erased_count, "erased");
    if (wanted == nullptr && wanted_count == 0) {
      codec->codec.reconstruct(shard_span(codec, shards, 1), len, e);
    } else {
      const auto w = indices(wanted, wanted_count, "wanted");
      codec->codec.reconstruct(shard_span(codec, shards, 1), len, e, w);
    }
  });
}

int ncast_rs_reconstruct_batch(const ncast_rs* codec, uint8_t* const* shards, size_t stripes, size_t len,
                               const unsigned* erased, size_t erased_count) {
  if (null_codec(codec)) return NCAST_RS_ERR_INVALID;
  return guarded([&] {
    codec->codec.reconstruct_batch(shard_span(codec, shards, stripes), len, indices(erased, erased_count, "erased"));
  });
}

const char* ncast_rs_version(void) { return NCAST_VERSION; }

const char* ncast_rs_status_string(int status) {
  switch (status) {
    case NCAST_RS_OK: return "ok";
    case NCAST_RS_ERR_INVALID: return "invalid argument";
    case NCAST_RS_ERR_UNRECOVERABLE: return "unrecoverable erasure pattern";
    case NCAST_RS_ERR_BACKEND: return "backend not available";
    case NCAST_RS_ERR_NO_MEMORY: return "out of memory";
    case NCAST_RS_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

const char* ncast_rs_last_error(void) { return last_error.c_str(); }

}  // extern "C"
