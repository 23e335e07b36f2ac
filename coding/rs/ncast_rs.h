#ifndef NCAST_RS_H
#define NCAST_RS_H
/*
 * ncast Reed-Solomon: the stable C API (C89, C99 and C++).
 *
 * Systematic RS over GF(2^8) (polynomial 0x11D): k data shards and m parity shards, k >= 1, m >= 1,
 * k + m <= 256; any k of the k + m shards give back the others. Shard i < k is data shard i, shard
 * k + p is parity shard p. Parity is byte-identical to ISA-L and klauspost/reedsolomon for the same
 * matrix. A codec handle is created once per (k, m, matrix, backend) and may be used by several
 * threads at once.
 *
 * Every function that can fail returns an ncast_rs_status; on failure ncast_rs_last_error() says
 * why in words. Arguments named shards are k + m pointers, one per shard, each to len bytes.
 * docs/rs-api.md has a complete example.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCAST_RS_API_VERSION 1

/* The shared library is built with hidden visibility; these declarations are the only symbols it
 * exports, so that nothing internal becomes part of its ABI. */
#if defined(__GNUC__) && __GNUC__ >= 4
#define NCAST_RS_API __attribute__((visibility("default")))
#else
#define NCAST_RS_API
#endif

typedef struct ncast_rs ncast_rs; /* opaque codec handle */

typedef enum ncast_rs_status {
  NCAST_RS_OK = 0,
  NCAST_RS_ERR_INVALID = 1,       /* bad argument: code size, null pointer, shard index, matrix shape */
  NCAST_RS_ERR_UNRECOVERABLE = 2, /* more than m shards lost (or a custom matrix cannot rebuild them) */
  NCAST_RS_ERR_BACKEND = 3,       /* the backend asked for is not in this build or not on this machine */
  NCAST_RS_ERR_NO_MEMORY = 4,
  NCAST_RS_ERR_INTERNAL = 5
} ncast_rs_status;

typedef enum ncast_rs_matrix {
  NCAST_RS_MATRIX_CAUCHY = 0,      /* 1/(i XOR j): ISA-L gf_gen_cauchy1_matrix (default) */
  NCAST_RS_MATRIX_VANDERMONDE = 1, /* r^c times inverse of top block: klauspost/Backblaze default */
  NCAST_RS_MATRIX_CUSTOM = 2       /* parity rows given in custom_parity */
} ncast_rs_matrix;

typedef enum ncast_rs_backend {
  NCAST_RS_BACKEND_AUTO = 0, /* the best usable one */
  NCAST_RS_BACKEND_CPU = 1,
  NCAST_RS_BACKEND_CUDA = 2 /* NCAST_RS_ERR_BACKEND where there is none */
} ncast_rs_backend;

/* Enumerated fields are ints: the size of a C enum is up to the compiler, an int is not. */
typedef struct ncast_rs_options {
  size_t struct_size;           /* sizeof(ncast_rs_options); set by ncast_rs_options_init */
  int matrix;                   /* an ncast_rs_matrix */
  const uint8_t* custom_parity; /* NCAST_RS_MATRIX_CUSTOM: m*k bytes, row-major, copied at create */
  int backend;                  /* an ncast_rs_backend */
  size_t decode_cache_capacity; /* erasure patterns whose decode rows are kept; 0 keeps none */
} ncast_rs_options;

/* Defaults: Cauchy matrix, automatic backend, 256 cached decode patterns. */
NCAST_RS_API void ncast_rs_options_init(ncast_rs_options* options);

/* Creates a codec for k + m shards; options may be NULL for the defaults. */
NCAST_RS_API int ncast_rs_create(ncast_rs** codec, unsigned k, unsigned m, const ncast_rs_options* options);
/* Releases a codec (NULL is ignored). Buffers from ncast_rs_alloc must be freed before. */
NCAST_RS_API void ncast_rs_destroy(ncast_rs* codec);

NCAST_RS_API unsigned ncast_rs_data_shards(const ncast_rs* codec);
NCAST_RS_API unsigned ncast_rs_parity_shards(const ncast_rs* codec);
/* The engine doing the work, e.g. "cpu avx512-gfni". Valid as long as the codec. */
NCAST_RS_API const char* ncast_rs_backend_description(const ncast_rs* codec);
/* Copies the m*k parity rows (row-major) to out, which holds out_size bytes. */
NCAST_RS_API int ncast_rs_parity_matrix(const ncast_rs* codec, uint8_t* out, size_t out_size);

/* Memory suited to the codec's backend: 64-byte aligned, page-locked when the backend is CUDA.
 * Any memory works with every call; this is the fastest. NULL when it cannot be had. */
NCAST_RS_API void* ncast_rs_alloc(const ncast_rs* codec, size_t bytes);
/* Frees memory from ncast_rs_alloc of the same codec (NULL is ignored). */
NCAST_RS_API void ncast_rs_free(const ncast_rs* codec, void* p);

/* Computes the m parity shards shards[k..k+m) from the k data shards. */
NCAST_RS_API int ncast_rs_encode(const ncast_rs* codec, uint8_t* const* shards, size_t len);
/* Many stripes in one call: shards holds stripes * (k + m) pointers, stripe after stripe. */
NCAST_RS_API int ncast_rs_encode_batch(const ncast_rs* codec, uint8_t* const* shards, size_t stripes, size_t len);
/* parity[p] ^= P[p][index] * data: one data shard's contribution (m parity pointers). Zeroed parity
 * plus every data shard equals ncast_rs_encode; old XOR new contents of a shard patch parity. */
NCAST_RS_API int ncast_rs_encode_one(const ncast_rs* codec, unsigned index, const uint8_t* data, uint8_t* const* parity,
                                     size_t len);
/* Data shard index changed from old_data to new_data: patches the m parity shards from the change. */
NCAST_RS_API int ncast_rs_update(const ncast_rs* codec, unsigned index, const uint8_t* old_data,
                                 const uint8_t* new_data, uint8_t* const* parity, size_t len);
/* *consistent = 1 when the parity shards are the encoding of the data shards, else 0. */
NCAST_RS_API int ncast_rs_verify(const ncast_rs* codec, const uint8_t* const* shards, size_t len, int* consistent);

/* Rebuilds lost shards in place. erased lists at most m lost shard indices; wanted lists the ones to
 * rebuild (NULL with wanted_count 0: all erased ones). Pointers of erased shards that are not
 * rebuilt may be NULL. Decode rows are cached per erasure pattern. */
NCAST_RS_API int ncast_rs_reconstruct(const ncast_rs* codec, uint8_t* const* shards, size_t len, const unsigned* erased,
                                      size_t erased_count, const unsigned* wanted, size_t wanted_count);
/* The same erased shards rebuilt in each of stripes stripes (stripes * (k + m) pointers). */
NCAST_RS_API int ncast_rs_reconstruct_batch(const ncast_rs* codec, uint8_t* const* shards, size_t stripes, size_t len,
                                            const unsigned* erased, size_t erased_count);

/* The library's version, "major.minor.patch"; the shared library's SONAME carries its major. */
NCAST_RS_API const char* ncast_rs_version(void);

/* "ok", "invalid argument", ... for a status code. */
NCAST_RS_API const char* ncast_rs_status_string(int status);
/* The message of the last failed call on this thread ("" when none). */
NCAST_RS_API const char* ncast_rs_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* NCAST_RS_H */
