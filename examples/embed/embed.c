/*===- embed.c - Embed the gopt runtime through its C API -----------------===*
 *
 * embed MODEL.gplan [BATCH]: loads a plan, feeds deterministic random data
 * to every float input, runs it on the CPU and prints the top-5 entries of
 * the first row of the first output.
 *
 *===----------------------------------------------------------------------===*/
#include "gopt/runtime/c_api.h"

#include <stdio.h>
#include <stdlib.h>

/* Prints and frees a failed status; returns 1 if there was one. */
static int failed(gopt_status_t *status, const char *what) {
  if (!status)
    return 0;
  fprintf(stderr, "embed: %s: %s\n", what, gopt_status_message(status));
  gopt_status_release(status);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: embed MODEL.gplan [BATCH]\n");
    return 2;
  }
  gopt_plan_t *plan = NULL;
  if (failed(gopt_plan_create_from_file(argv[1], &plan), "load"))
    return 1;
  gopt_session_options_t options;
  gopt_session_options_init(&options);
  if (argc == 3)
    options.batch_size = atoll(argv[2]);
  gopt_session_t *session = NULL;
  int rc = 1;
  if (failed(gopt_session_create(plan, &options, &session), "session"))
    goto done;

  unsigned seed = 1;
  for (size_t i = 0; i < gopt_session_input_count(session); ++i) {
    const char *name;
    gopt_dtype_t dtype;
    const int64_t *dims;
    size_t rank;
    if (failed(gopt_session_input_info(session, i, &name, &dtype, &dims, &rank),
               "input info"))
      goto done;
    if (dtype != GOPT_DTYPE_F32) {
      fprintf(stderr, "embed: input '%s' is not f32\n", name);
      goto done;
    }
    size_t count = 1;
    for (size_t d = 0; d < rank; ++d)
      count *= (size_t)dims[d];
    float *data = malloc(count * sizeof(float) + 1);
    for (size_t k = 0; k < count; ++k) {
      seed = seed * 1103515245u + 12345u; /* a small LCG: reproducible */
      data[k] = (float)((seed >> 16) & 0x7fff) / 32768.0f * 2.0f - 1.0f;
    }
    gopt_status_t *status =
        gopt_session_set_input(session, name, dtype, dims, rank, data);
    free(data);
    if (failed(status, "set input"))
      goto done;
  }
  if (failed(gopt_session_run(session), "run"))
    goto done;

  const char *outName;
  gopt_dtype_t outType;
  const int64_t *outDims;
  size_t outRank;
  const void *outData;
  if (failed(
          gopt_session_output_info(session, 0, &outName, &outType, NULL, NULL),
          "output info") ||
      failed(gopt_session_get_output(session, outName, &outType, &outDims,
                                     &outRank, &outData),
             "output"))
    goto done;
  if (outType != GOPT_DTYPE_F32 || outRank == 0) {
    fprintf(stderr, "embed: output '%s' is not an f32 tensor\n", outName);
    goto done;
  }
  /* Top-5 of the first row (the last dimension). */
  size_t row = (size_t)outDims[outRank - 1];
  const float *values = outData;
  int best[5];
  int found = 0;
  for (int k = 0; k < 5 && k < (int)row; ++k) {
    int arg = -1;
    for (size_t j = 0; j < row; ++j) {
      int taken = 0;
      for (int m = 0; m < found; ++m)
        taken |= best[m] == (int)j;
      if (!taken && (arg < 0 || values[j] > values[arg]))
        arg = (int)j;
    }
    best[found++] = arg;
  }
  printf("output '%s', top-%d of row 0:\n", outName, found);
  for (int k = 0; k < found; ++k)
    printf("  #%d: index %d value %.6f\n", k + 1, best[k], values[best[k]]);
  gopt_memory_stats_t stats;
  gopt_session_memory_stats(session, &stats);
  printf("memory: arena %zu bytes, total %zu bytes\n", stats.arena_bytes,
         stats.total_bytes);
  rc = 0;
done:
  gopt_session_release(session);
  gopt_plan_release(plan);
  return rc;
}
