/* The C API end to end: encode a 10+4 stripe, lose four shards, get them back, patch a shard in place.
 * Build: cc rs_example.c $(pkg-config --cflags --libs ncast-rs) (the tests build and run it, in the tree
 * and against an installed ncast). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ncast/ncast_rs.h>

#define K 10
#define M 4
#define LEN 4096

static int check(int status, const char* what) {
  if (status != NCAST_RS_OK) {
    fprintf(stderr, "%s: %s (%s)\n", what, ncast_rs_status_string(status), ncast_rs_last_error());
    exit(1);
  }
  return status;
}

int main(void) {
  ncast_rs_options options;
  ncast_rs_options_init(&options); /* Cauchy matrix, automatic backend */
  options.matrix = NCAST_RS_MATRIX_CAUCHY;

  ncast_rs* rs = NULL;
  check(ncast_rs_create(&rs, K, M, &options), "create");
  printf("ncast-rs %d+%d on %s\n", K, M, ncast_rs_backend_description(rs));

  /* One allocation for the stripe, shard i at i * LEN (pinned memory when the backend is CUDA). */
  uint8_t* memory = ncast_rs_alloc(rs, (size_t)(K + M) * LEN);
  uint8_t* original = malloc((size_t)(K + M) * LEN);
  if (memory == NULL || original == NULL) return 1;
  uint8_t* shards[K + M];
  for (int i = 0; i < K + M; ++i) shards[i] = memory + (size_t)i * LEN;

  srand(1);
  for (size_t b = 0; b < (size_t)K * LEN; ++b) memory[b] = (uint8_t)rand();
  check(ncast_rs_encode(rs, shards, LEN), "encode");
  memcpy(original, memory, (size_t)(K + M) * LEN);

  /* Lose three data shards and one parity shard, then rebuild all four. */
  const unsigned lost[] = {0, 4, 9, 12};
  for (int i = 0; i < 4; ++i) memset(shards[lost[i]], 0xEE, LEN);
  check(ncast_rs_reconstruct(rs, shards, LEN, lost, 4, NULL, 0), "reconstruct");
  if (memcmp(memory, original, (size_t)(K + M) * LEN) != 0) {
    fprintf(stderr, "reconstruct gave back different bytes\n");
    return 1;
  }

  /* Five losses are one too many: a clear error, nothing touched. */
  const unsigned too_many[] = {0, 1, 2, 3, 4};
  int status = ncast_rs_reconstruct(rs, shards, LEN, too_many, 5, NULL, 0);
  if (status != NCAST_RS_ERR_UNRECOVERABLE) return 1;
  printf("5 losses: %s: %s\n", ncast_rs_status_string(status), ncast_rs_last_error());

  /* Rewrite data shard 3 and patch parity from the change, without reading the other data shards. */
  uint8_t* new_data = malloc(LEN);
  if (new_data == NULL) return 1;
  for (size_t b = 0; b < LEN; ++b) new_data[b] = (uint8_t)(b * 7 + 1);
  check(ncast_rs_update(rs, 3, shards[3], new_data, shards + K, LEN), "update");
  memcpy(shards[3], new_data, LEN);

  int consistent = 0;
  check(ncast_rs_verify(rs, (const uint8_t* const*)shards, LEN, &consistent), "verify");
  if (!consistent) {
    fprintf(stderr, "parity does not match the data after update\n");
    return 1;
  }
  printf("encode, reconstruct, update, verify: ok\n");

  free(new_data);
  free(original);
  ncast_rs_free(rs, memory);
  ncast_rs_destroy(rs);
  return 0;
}
