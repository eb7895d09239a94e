/*===- c_api.h - C API of the gopt runtime --------------------------------===*
 *
 * For embedding from C and other languages. Every call that can fail returns
 * a gopt_status_t*: NULL means success; otherwise the caller owns the status
 * and frees it with gopt_status_release(). Objects are made by *_create and
 * freed by *_release. Nothing here aborts or throws.
 *
 *===----------------------------------------------------------------------===*/
#ifndef GOPT_RUNTIME_C_API_H
#define GOPT_RUNTIME_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gopt_status_t gopt_status_t;
typedef struct gopt_plan_t gopt_plan_t;
typedef struct gopt_session_t gopt_session_t;

/* Values match gopt::runtime::DType and gopt.plan.DType. */
typedef enum gopt_dtype_t {
  GOPT_DTYPE_INVALID = 0,
  GOPT_DTYPE_F32 = 1,
  GOPT_DTYPE_F16 = 2,
  GOPT_DTYPE_BF16 = 3,
  GOPT_DTYPE_I8 = 4,
  GOPT_DTYPE_I32 = 5,
  GOPT_DTYPE_I64 = 6,
  GOPT_DTYPE_BOOL = 7,
  GOPT_DTYPE_U8 = 8,
} gopt_dtype_t;

/* Status codes match gopt::runtime::StatusCode. */
int gopt_status_code(const gopt_status_t *status);
const char *gopt_status_message(const gopt_status_t *status);
void gopt_status_release(gopt_status_t *status);

size_t gopt_dtype_size(gopt_dtype_t dtype);

gopt_status_t *gopt_plan_create_from_file(const char *path,
                                          gopt_plan_t **out_plan);
gopt_status_t *gopt_plan_create_from_bytes(const void *data, size_t size,
                                           gopt_plan_t **out_plan);
void gopt_plan_release(gopt_plan_t *plan);

typedef struct gopt_session_options_t {
  const char *backend; /* "cpu" (default), "reference", "cuda" */
  int threads;         /* 0: library default */
  int64_t batch_size;  /* value of dynamic input dims; default 1 */
} gopt_session_options_t;

void gopt_session_options_init(gopt_session_options_t *options);

/* The session keeps its own reference to the plan. */
gopt_status_t *gopt_session_create(const gopt_plan_t *plan,
                                   const gopt_session_options_t *options,
                                   gopt_session_t **out_session);
void gopt_session_release(gopt_session_t *session);

size_t gopt_session_input_count(const gopt_session_t *session);
size_t gopt_session_output_count(const gopt_session_t *session);
/* Name, element type and current (resolved) shape of input/output `index`.
 * The pointers stay valid until the next call on the session. */
gopt_status_t *gopt_session_input_info(gopt_session_t *session, size_t index,
                                       const char **out_name,
                                       gopt_dtype_t *out_dtype,
                                       const int64_t **out_dims,
                                       size_t *out_rank);
gopt_status_t *gopt_session_output_info(gopt_session_t *session, size_t index,
                                        const char **out_name,
                                        gopt_dtype_t *out_dtype,
                                        const int64_t **out_dims,
                                        size_t *out_rank);

/* Copies `data` (row-major, `rank` dims) into the session. */
gopt_status_t *gopt_session_set_input(gopt_session_t *session, const char *name,
                                      gopt_dtype_t dtype, const int64_t *dims,
                                      size_t rank, const void *data);
/* Zero-copy: `data` must stay valid until the input is bound again. */
gopt_status_t *gopt_session_bind_input(gopt_session_t *session,
                                       const char *name, gopt_dtype_t dtype,
                                       const int64_t *dims, size_t rank,
                                       const void *data);

gopt_status_t *gopt_session_run(gopt_session_t *session);

/* A view of output `name`, valid until the next run. */
gopt_status_t *gopt_session_get_output(gopt_session_t *session,
                                       const char *name,
                                       gopt_dtype_t *out_dtype,
                                       const int64_t **out_dims,
                                       size_t *out_rank, const void **out_data);

typedef struct gopt_memory_stats_t {
  size_t arena_bytes;
  size_t intermediate_bytes;
  size_t constant_bytes;
  size_t total_bytes;
} gopt_memory_stats_t;

void gopt_session_memory_stats(const gopt_session_t *session,
                               gopt_memory_stats_t *out_stats);

#ifdef __cplusplus
}
#endif

#endif /* GOPT_RUNTIME_C_API_H */
