//===- CApi.cpp - C API on top of the C++ API -----------------------------===//
#include "gopt/runtime/Session.h"
#include "gopt/runtime/c_api.h"

#include <new>

using namespace gopt::runtime;

struct gopt_status_t {
  Status status;
};
struct gopt_plan_t {
  Plan plan;
};
struct gopt_session_t {
  std::unique_ptr<Session> session;
  // Keeps names and shapes handed out by the info/output calls alive.
  std::vector<TensorDesc> descs;
  Shape outputShape;
};

namespace {

gopt_status_t *wrap(Status status) {
  if (status.ok())
    return nullptr;
  return new (std::nothrow) gopt_status_t{std::move(status)};
}

gopt_status_t *nullArgument(const char *what) {
  return wrap(invalidArgument("argument '", what, "' is null"));
}

Status makeView(const char *name, gopt_dtype_t dtype, const int64_t *dims,
                size_t rank, const void *data, Tensor &out) {
  if (!name)
    return invalidArgument("input name is null");
  if (rank && !dims)
    return invalidArgument("input '", name, "': dims is null");
  Shape shape(dims, dims + rank);
  for (int64_t d : shape)
    if (d < 0)
      return invalidArgument("input '", name, "': negative dimension ", d);
  out =
      Tensor::view(static_cast<DType>(dtype), shape, const_cast<void *>(data));
  return Status::success();
}

gopt_status_t *describe(gopt_session_t *s, std::vector<TensorDesc> descs,
                        size_t index, const char *what, const char **name,
                        gopt_dtype_t *dtype, const int64_t **dims,
                        size_t *rank) {
  if (index >= descs.size())
    return wrap(invalidArgument(what, " index ", index, " out of range (",
                                descs.size(), " ", what, "s)"));
  s->descs = std::move(descs);
  const TensorDesc &d = s->descs[index];
  if (name)
    *name = d.name.c_str();
  if (dtype)
    *dtype = static_cast<gopt_dtype_t>(d.dtype);
  if (dims)
    *dims = d.shape.data();
  if (rank)
    *rank = d.shape.size();
  return nullptr;
}

} // namespace

extern "C" {

int gopt_status_code(const gopt_status_t *status) {
  return status ? static_cast<int>(status->status.code()) : 0;
}

const char *gopt_status_message(const gopt_status_t *status) {
  return status ? status->status.message().c_str() : "ok";
}

void gopt_status_release(gopt_status_t *status) { delete status; }

size_t gopt_dtype_size(gopt_dtype_t dtype) {
  return dtypeSize(static_cast<DType>(dtype));
}

gopt_status_t *gopt_plan_create_from_file(const char *path,
                                          gopt_plan_t **out_plan) {
  if (!path)
    return nullArgument("path");
  if (!out_plan)
    return nullArgument("out_plan");
  StatusOr<Plan> plan = Plan::loadFromFile(path);
  if (!plan.ok())
    return wrap(plan.status());
  *out_plan = new gopt_plan_t{std::move(plan).value()};
  return nullptr;
}

gopt_status_t *gopt_plan_create_from_bytes(const void *data, size_t size,
                                           gopt_plan_t **out_plan) {
  if (!data && size)
    return nullArgument("data");
  if (!out_plan)
    return nullArgument("out_plan");
  StatusOr<Plan> plan = Plan::loadFromBytes(
      std::string(static_cast<const char *>(data), size), "<bytes>");
  if (!plan.ok())
    return wrap(plan.status());
  *out_plan = new gopt_plan_t{std::move(plan).value()};
  return nullptr;
}

void gopt_plan_release(gopt_plan_t *plan) { delete plan; }

void gopt_session_options_init(gopt_session_options_t *options) {
  if (!options)
    return;
  options->backend = "cpu";
  options->threads = 0;
  options->batch_size = 1;
}

gopt_status_t *gopt_session_create(const gopt_plan_t *plan,
                                   const gopt_session_options_t *options,
                                   gopt_session_t **out_session) {
  if (!plan)
    return nullArgument("plan");
  if (!out_session)
    return nullArgument("out_session");
  SessionOptions so;
  if (options) {
    if (options->backend)
      so.backend = options->backend;
    so.threads = options->threads;
    so.batchSize = options->batch_size;
  }
  StatusOr<std::unique_ptr<Session>> session = Session::create(plan->plan, so);
  if (!session.ok())
    return wrap(session.status());
  *out_session = new gopt_session_t{std::move(session).value(), {}, {}};
  return nullptr;
}

void gopt_session_release(gopt_session_t *session) { delete session; }

size_t gopt_session_input_count(const gopt_session_t *session) {
  return session ? session->session->inputs().size() : 0;
}

size_t gopt_session_output_count(const gopt_session_t *session) {
  return session ? session->session->outputs().size() : 0;
}

gopt_status_t *gopt_session_input_info(gopt_session_t *session, size_t index,
                                       const char **out_name,
                                       gopt_dtype_t *out_dtype,
                                       const int64_t **out_dims,
                                       size_t *out_rank) {
  if (!session)
    return nullArgument("session");
  return describe(session, session->session->inputs(), index, "input", out_name,
                  out_dtype, out_dims, out_rank);
}

gopt_status_t *gopt_session_output_info(gopt_session_t *session, size_t index,
                                        const char **out_name,
                                        gopt_dtype_t *out_dtype,
                                        const int64_t **out_dims,
                                        size_t *out_rank) {
  if (!session)
    return nullArgument("session");
  return describe(session, session->session->outputs(), index, "output",
                  out_name, out_dtype, out_dims, out_rank);
}

gopt_status_t *gopt_session_set_input(gopt_session_t *session, const char *name,
                                      gopt_dtype_t dtype, const int64_t *dims,
                                      size_t rank, const void *data) {
  if (!session)
    return nullArgument("session");
  Tensor view;
  if (Status s = makeView(name, dtype, dims, rank, data, view); !s.ok())
    return wrap(s);
  return wrap(session->session->setInput(name, view));
}

gopt_status_t *gopt_session_bind_input(gopt_session_t *session,
                                       const char *name, gopt_dtype_t dtype,
                                       const int64_t *dims, size_t rank,
                                       const void *data) {
  if (!session)
    return nullArgument("session");
  Tensor view;
  if (Status s = makeView(name, dtype, dims, rank, data, view); !s.ok())
    return wrap(s);
  return wrap(session->session->bindInput(name, view));
}

gopt_status_t *gopt_session_run(gopt_session_t *session) {
  if (!session)
    return nullArgument("session");
  return wrap(session->session->run());
}

gopt_status_t *
gopt_session_get_output(gopt_session_t *session, const char *name,
                        gopt_dtype_t *out_dtype, const int64_t **out_dims,
                        size_t *out_rank, const void **out_data) {
  if (!session)
    return nullArgument("session");
  if (!name)
    return nullArgument("name");
  StatusOr<Tensor> t = session->session->output(name);
  if (!t.ok())
    return wrap(t.status());
  session->outputShape = t->shape();
  if (out_dtype)
    *out_dtype = static_cast<gopt_dtype_t>(t->dtype());
  if (out_dims)
    *out_dims = session->outputShape.data();
  if (out_rank)
    *out_rank = session->outputShape.size();
  if (out_data)
    *out_data = t->data();
  return nullptr;
}

void gopt_session_memory_stats(const gopt_session_t *session,
                               gopt_memory_stats_t *out_stats) {
  if (!session || !out_stats)
    return;
  MemoryStats m = session->session->memoryStats();
  out_stats->arena_bytes = m.arenaBytes;
  out_stats->intermediate_bytes = m.intermediateBytes;
  out_stats->constant_bytes = m.constantBytes;
  out_stats->total_bytes = m.totalBytes();
}

} // extern "C"
