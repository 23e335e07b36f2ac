/* A C user of the installed library next to ISA-L: ncast's default parity is ISA-L's
 * gf_gen_cauchy1_matrix parity byte for byte, and ncast rebuilds lost shards of ISA-L's encoding. */
#include <isa-l/erasure_code.h>
#include <ncast/ncast_rs.h>
#include <stdio.h>
#include <string.h>

#define K 8
#define M 3
#define LEN 5000

static uint8_t stripe[K + M][LEN];
static uint8_t isal_parity[M][LEN];

int main(void) {
  unsigned char matrix[(K + M) * K];
  unsigned char tables[32 * K * M];
  unsigned char* data[K];
  unsigned char* parity[M];
  uint8_t* shards[K + M];
  const unsigned lost[] = {1, 5, K + 1};
  ncast_rs* rs = NULL;
  int i;
  size_t b;

  for (i = 0; i < K; ++i) {
    for (b = 0; b < LEN; ++b) stripe[i][b] = (uint8_t)(b * 131 + (size_t)i * 7 + b / 251);
    data[i] = stripe[i];
  }
  for (i = 0; i < M; ++i) parity[i] = isal_parity[i];
  gf_gen_cauchy1_matrix(matrix, K + M, K);
  ec_init_tables(K, M, &matrix[K * K], tables);
  ec_encode_data(LEN, K, M, tables, data, parity);

  for (i = 0; i < K + M; ++i) shards[i] = stripe[i];
  if (ncast_rs_create(&rs, K, M, NULL) != NCAST_RS_OK || ncast_rs_encode(rs, shards, LEN) != NCAST_RS_OK) {
    fprintf(stderr, "ncast: %s\n", ncast_rs_last_error());
    return 1;
  }
  if (memcmp(stripe[K], isal_parity, sizeof isal_parity) != 0) {
    fprintf(stderr, "parity differs from ISA-L's\n");
    return 1;
  }

  /* ISA-L's parity in place of ncast's, two data shards and a parity shard lost, rebuilt by ncast. */
  memcpy(stripe[K], isal_parity, sizeof isal_parity);
  for (i = 0; i < 3; ++i) memset(stripe[lost[i]], 0, LEN);
  if (ncast_rs_reconstruct(rs, shards, LEN, lost, 3, NULL, 0) != NCAST_RS_OK) {
    fprintf(stderr, "reconstruct: %s\n", ncast_rs_last_error());
    return 1;
  }
  for (b = 0; b < LEN; ++b)
    if (stripe[1][b] != (uint8_t)(b * 131 + 7 + b / 251) || stripe[5][b] != (uint8_t)(b * 131 + 35 + b / 251)) {
      fprintf(stderr, "rebuilt data differs at byte %lu\n", (unsigned long)b);
      return 1;
    }
  if (memcmp(stripe[K + 1], isal_parity[1], LEN) != 0) {
    fprintf(stderr, "rebuilt parity differs from ISA-L's\n");
    return 1;
  }
  ncast_rs_destroy(rs);
  printf("parity equal to ISA-L's gf_gen_cauchy1_matrix, ISA-L stripe rebuilt\n");
  return 0;
}
