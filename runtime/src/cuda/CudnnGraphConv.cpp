//===- CudnnGraphConv.cpp - A convolution on cuDNN's graph API ------------===//
#include "CudnnGraphConv.h"

#include "AlgoCache.h"

#include <algorithm>
#include <optional>
#include <string>

namespace gopt::runtime::cuda {
namespace {

// The tensors' unique ids in the graph and the variant pack.
enum : int64_t { kX = 1, kW, kY, kBias, kConvOut, kBiasOut };

// The engines timed per shape: cuDNN's heuristics rank them, and the
// fastest has been among the first few on every shape measured.
constexpr int kMaxTimedEngines = 8;
// An engine asking for more scratch than this is skipped (the legacy
// algorithms' choice is not bounded, but none of ResNet-18's asked for
// more than a few MiB).
constexpr int64_t kMaxWorkspaceBytes = int64_t(256) << 20;

Status setAttribute(cudnnBackendDescriptor_t d,
                    cudnnBackendAttributeName_t name,
                    cudnnBackendAttributeType_t type, int64_t count,
                    const void *values) {
  cudnnStatus_t s = cudnnBackendSetAttribute(d, name, type, count, values);
  if (s == CUDNN_STATUS_SUCCESS)
    return Status::success();
  std::string call =
      detail::concat("cudnnBackendSetAttribute(attribute ", int(name), ")");
  return fromCudnn(s, call.c_str());
}

Status setDescriptor(cudnnBackendDescriptor_t d,
                     cudnnBackendAttributeName_t name,
                     const BackendDescriptor &value) {
  return setAttribute(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value.d);
}

// cuDNN 9 deprecates the handle attributes (the handle comes with
// cudnnBackendExecute), but the 9.x releases PyTorch's environments ship
// still read it for the heuristics' device.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
constexpr cudnnBackendAttributeName_t kGraphHandle =
    CUDNN_ATTR_OPERATIONGRAPH_HANDLE;
constexpr cudnnBackendAttributeName_t kPlanHandle =
    CUDNN_ATTR_EXECUTION_PLAN_HANDLE;
#pragma GCC diagnostic pop

// Logical NCHW dimensions with the strides of `nchw` or NHWC storage.
StatusOr<BackendDescriptor> makeTensor(int64_t uid, cudnnDataType_t type,
                                       int64_t n, int64_t c, int64_t h,
                                       int64_t w, bool nchw, bool isVirtual) {
  BackendDescriptor t;
  GOPT_RETURN_IF_ERROR(t.create(CUDNN_BACKEND_TENSOR_DESCRIPTOR));
  int64_t dims[4] = {n, c, h, w};
  int64_t strides[4];
  if (nchw) {
    strides[0] = c * h * w, strides[1] = h * w, strides[2] = w, strides[3] = 1;
  } else {
    strides[0] = h * w * c, strides[1] = 1, strides[2] = w * c, strides[3] = c;
  }
  int64_t alignment = 16;
  GOPT_RETURN_IF_ERROR(setAttribute(t.d, CUDNN_ATTR_TENSOR_DATA_TYPE,
                                    CUDNN_TYPE_DATA_TYPE, 1, &type));
  GOPT_RETURN_IF_ERROR(setAttribute(t.d, CUDNN_ATTR_TENSOR_DIMENSIONS,
                                    CUDNN_TYPE_INT64, 4, dims));
  GOPT_RETURN_IF_ERROR(setAttribute(t.d, CUDNN_ATTR_TENSOR_STRIDES,
                                    CUDNN_TYPE_INT64, 4, strides));
  GOPT_RETURN_IF_ERROR(setAttribute(t.d, CUDNN_ATTR_TENSOR_UNIQUE_ID,
                                    CUDNN_TYPE_INT64, 1, &uid));
  GOPT_RETURN_IF_ERROR(setAttribute(t.d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
                                    CUDNN_TYPE_INT64, 1, &alignment));
  if (isVirtual) {
    bool yes = true;
    GOPT_RETURN_IF_ERROR(setAttribute(t.d, CUDNN_ATTR_TENSOR_IS_VIRTUAL,
                                      CUDNN_TYPE_BOOLEAN, 1, &yes));
  }
  GOPT_RETURN_IF_ERROR(
      fromCudnn(cudnnBackendFinalize(t.d), "cudnnBackendFinalize (tensor)"));
  return t;
}

// A pointwise op y = mode(x[, b]) in f32 arithmetic.
Status addPointwise(std::vector<BackendDescriptor> &parts,
                    cudnnPointwiseMode_t mode, const BackendDescriptor &x,
                    const BackendDescriptor *b, const BackendDescriptor &y) {
  BackendDescriptor pw, op;
  GOPT_RETURN_IF_ERROR(pw.create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR));
  cudnnDataType_t prec = CUDNN_DATA_FLOAT;
  GOPT_RETURN_IF_ERROR(setAttribute(pw.d, CUDNN_ATTR_POINTWISE_MODE,
                                    CUDNN_TYPE_POINTWISE_MODE, 1, &mode));
  GOPT_RETURN_IF_ERROR(setAttribute(pw.d, CUDNN_ATTR_POINTWISE_MATH_PREC,
                                    CUDNN_TYPE_DATA_TYPE, 1, &prec));
  GOPT_RETURN_IF_ERROR(fromCudnn(cudnnBackendFinalize(pw.d),
                                 "cudnnBackendFinalize (pointwise)"));
  GOPT_RETURN_IF_ERROR(op.create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR));
  GOPT_RETURN_IF_ERROR(
      setDescriptor(op.d, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw));
  GOPT_RETURN_IF_ERROR(
      setDescriptor(op.d, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x));
  if (b)
    GOPT_RETURN_IF_ERROR(
        setDescriptor(op.d, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b));
  GOPT_RETURN_IF_ERROR(
      setDescriptor(op.d, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y));
  GOPT_RETURN_IF_ERROR(fromCudnn(cudnnBackendFinalize(op.d),
                                 "cudnnBackendFinalize (pointwise op)"));
  parts.push_back(std::move(pw));
  parts.push_back(std::move(op));
  return Status::success();
}

// The finalized operation graph of conv (+ bias) (+ relu); its tensors,
// descriptors and ops are appended to `parts`, the graph last.
Status buildGraph(cudnnHandle_t handle, const GraphConvShape &s,
                  std::vector<BackendDescriptor> &parts) {
  const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
  GOPT_ASSIGN_OR_RETURN(
      BackendDescriptor x,
      makeTensor(kX, s.dataType, s.n, s.c, s.h, s.w, s.nchw, false));
  GOPT_ASSIGN_OR_RETURN(
      BackendDescriptor w,
      makeTensor(kW, s.dataType, s.k, s.cPerGroup, s.r, s.s, s.nchw, false));
  GOPT_ASSIGN_OR_RETURN(
      BackendDescriptor y,
      makeTensor(kY, s.dataType, s.n, s.k, s.outH, s.outW, s.nchw, false));
  bool epilogue = s.bias || s.relu;
  GOPT_ASSIGN_OR_RETURN(
      BackendDescriptor convOut,
      makeTensor(kConvOut, f32, s.n, s.k, s.outH, s.outW, s.nchw, true));
  GOPT_ASSIGN_OR_RETURN(
      BackendDescriptor biasOut,
      makeTensor(kBiasOut, f32, s.n, s.k, s.outH, s.outW, s.nchw, true));
  GOPT_ASSIGN_OR_RETURN(
      BackendDescriptor bias,
      makeTensor(kBias, s.dataType, 1, s.k, 1, 1, true, false));

  BackendDescriptor conv;
  GOPT_RETURN_IF_ERROR(conv.create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
  int64_t spatial = 2;
  int64_t dilations[2] = {s.dilH, s.dilW}, strides[2] = {s.strideH, s.strideW};
  int64_t pads[2] = {s.padH, s.padW};
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  GOPT_RETURN_IF_ERROR(setAttribute(conv.d, CUDNN_ATTR_CONVOLUTION_COMP_TYPE,
                                    CUDNN_TYPE_DATA_TYPE, 1, &f32));
  GOPT_RETURN_IF_ERROR(setAttribute(conv.d, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                                    CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
  GOPT_RETURN_IF_ERROR(setAttribute(conv.d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS,
                                    CUDNN_TYPE_INT64, 1, &spatial));
  GOPT_RETURN_IF_ERROR(setAttribute(conv.d, CUDNN_ATTR_CONVOLUTION_DILATIONS,
                                    CUDNN_TYPE_INT64, 2, dilations));
  GOPT_RETURN_IF_ERROR(setAttribute(conv.d,
                                    CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                                    CUDNN_TYPE_INT64, 2, strides));
  GOPT_RETURN_IF_ERROR(setAttribute(conv.d, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
                                    CUDNN_TYPE_INT64, 2, pads));
  GOPT_RETURN_IF_ERROR(setAttribute(
      conv.d, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pads));
  GOPT_RETURN_IF_ERROR(fromCudnn(cudnnBackendFinalize(conv.d),
                                 "cudnnBackendFinalize (convolution)"));

  BackendDescriptor convOp;
  GOPT_RETURN_IF_ERROR(
      convOp.create(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR));
  float alpha = 1.f, beta = 0.f;
  GOPT_RETURN_IF_ERROR(
      setDescriptor(convOp.d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x));
  GOPT_RETURN_IF_ERROR(
      setDescriptor(convOp.d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w));
  GOPT_RETURN_IF_ERROR(setDescriptor(convOp.d,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                                     epilogue ? convOut : y));
  GOPT_RETURN_IF_ERROR(setDescriptor(
      convOp.d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv));
  GOPT_RETURN_IF_ERROR(
      setAttribute(convOp.d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                   CUDNN_TYPE_FLOAT, 1, &alpha));
  GOPT_RETURN_IF_ERROR(
      setAttribute(convOp.d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
                   CUDNN_TYPE_FLOAT, 1, &beta));
  GOPT_RETURN_IF_ERROR(fromCudnn(cudnnBackendFinalize(convOp.d),
                                 "cudnnBackendFinalize (convolution op)"));

  std::vector<cudnnBackendDescriptor_t> ops = {convOp.d};
  size_t firstOp = parts.size();
  if (s.bias)
    GOPT_RETURN_IF_ERROR(addPointwise(parts, CUDNN_POINTWISE_ADD, convOut,
                                      &bias, s.relu ? biasOut : y));
  if (s.relu)
    GOPT_RETURN_IF_ERROR(addPointwise(parts, CUDNN_POINTWISE_RELU_FWD,
                                      s.bias ? biasOut : convOut, nullptr, y));
  // addPointwise appends (descriptor, op) pairs: the ops are the odd ones.
  for (size_t i = firstOp + 1; i < parts.size(); i += 2)
    ops.push_back(parts[i].d);

  BackendDescriptor graph;
  GOPT_RETURN_IF_ERROR(graph.create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
  GOPT_RETURN_IF_ERROR(setAttribute(graph.d, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                    CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                    int64_t(ops.size()), ops.data()));
  GOPT_RETURN_IF_ERROR(
      setAttribute(graph.d, kGraphHandle, CUDNN_TYPE_HANDLE, 1, &handle));
  GOPT_RETURN_IF_ERROR(fromCudnn(cudnnBackendFinalize(graph.d),
                                 "cudnnBackendFinalize (operation graph)"));
  for (BackendDescriptor *d :
       {&x, &w, &y, &convOut, &biasOut, &bias, &conv, &convOp})
    parts.push_back(std::move(*d));
  parts.push_back(std::move(graph));
  return Status::success();
}

// The engine configurations cuDNN's heuristics propose in `mode`, best
// first (unfinalized descriptors filled by the heuristics).
StatusOr<std::vector<BackendDescriptor>>
heuristicConfigs(const BackendDescriptor &graph, cudnnBackendHeurMode_t mode) {
  BackendDescriptor heur;
  GOPT_RETURN_IF_ERROR(heur.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR));
  GOPT_RETURN_IF_ERROR(
      setDescriptor(heur.d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph));
  GOPT_RETURN_IF_ERROR(setAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_MODE,
                                    CUDNN_TYPE_HEUR_MODE, 1, &mode));
  GOPT_RETURN_IF_ERROR(fromCudnn(cudnnBackendFinalize(heur.d),
                                 "cudnnBackendFinalize (heuristics)"));
  int64_t count = 0;
  GOPT_RETURN_IF_ERROR(
      fromCudnn(cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                         &count, nullptr),
                "cudnnBackendGetAttribute (heuristics' result count)"));
  std::vector<BackendDescriptor> configs(size_t(std::max<int64_t>(count, 0)));
  std::vector<cudnnBackendDescriptor_t> raw;
  for (BackendDescriptor &c : configs) {
    GOPT_RETURN_IF_ERROR(c.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(c.d);
  }
  if (count > 0) {
    int64_t got = 0;
    GOPT_RETURN_IF_ERROR(fromCudnn(
        cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                 raw.data()),
        "cudnnBackendGetAttribute (heuristics' results)"));
    configs.resize(size_t(std::min(got, count)));
  }
  return configs;
}

// An engine's notes of one kind (numerical or behavior), or none when
// cuDNN does not give them.
template <typename Note>
std::optional<std::vector<Note>>
engineNotes(const BackendDescriptor &engine, cudnnBackendAttributeName_t name,
            cudnnBackendAttributeType_t type, int64_t capacity) {
  std::vector<Note> notes(static_cast<size_t>(capacity));
  int64_t got = 0;
  if (cudnnBackendGetAttribute(engine.d, name, type, capacity, &got,
                               notes.data()) != CUDNN_STATUS_SUCCESS)
    return std::nullopt;
  notes.resize(static_cast<size_t>(std::clamp<int64_t>(got, 0, capacity)));
  return notes;
}

// Whether the configuration's engine computes what the op asks: no inputs
// rounded to a narrower type (TF32 only where allowed), no narrower sums,
// no FFT (its rounding grows with the image), deterministic, and no
// run-time compilation (seconds per engine at session creation).
StatusOr<bool> engineAllowed(const BackendDescriptor &config, bool f32,
                             bool allowTf32) {
  BackendDescriptor engine;
  GOPT_RETURN_IF_ERROR(engine.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR));
  int64_t got = 0;
  if (cudnnBackendGetAttribute(config.d, CUDNN_ATTR_ENGINECFG_ENGINE,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got,
                               &engine.d) != CUDNN_STATUS_SUCCESS ||
      got != 1)
    return false;
  std::optional<std::vector<cudnnBackendNumericalNote_t>> numerical =
      engineNotes<cudnnBackendNumericalNote_t>(
          engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
          CUDNN_NUMERICAL_NOTE_TYPE_COUNT);
  std::optional<std::vector<cudnnBackendBehaviorNote_t>> behavior =
      engineNotes<cudnnBackendBehaviorNote_t>(
          engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
          CUDNN_BEHAVIOR_NOTE_TYPE_COUNT);
  if (!numerical || !behavior)
    return false;
  for (cudnnBackendNumericalNote_t note : *numerical)
    if (note == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
        note == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION ||
        note == CUDNN_NUMERICAL_NOTE_FFT ||
        note == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC ||
        (f32 && !allowTf32 && note == CUDNN_NUMERICAL_NOTE_TENSOR_CORE))
      return false;
  for (cudnnBackendBehaviorNote_t note : *behavior)
    if (note == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION)
      return false;
  return true;
}

// The execution plan of `config`, or an empty descriptor when cuDNN
// refuses it or it needs too much workspace.
StatusOr<BackendDescriptor> makePlan(cudnnHandle_t handle,
                                     const BackendDescriptor &config,
                                     size_t *workspace) {
  BackendDescriptor plan;
  GOPT_RETURN_IF_ERROR(plan.create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR));
  GOPT_RETURN_IF_ERROR(
      setAttribute(plan.d, kPlanHandle, CUDNN_TYPE_HANDLE, 1, &handle));
  GOPT_RETURN_IF_ERROR(
      setDescriptor(plan.d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config));
  int64_t bytes = 0, got = 0;
  if (cudnnBackendFinalize(plan.d) != CUDNN_STATUS_SUCCESS ||
      cudnnBackendGetAttribute(plan.d, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                               CUDNN_TYPE_INT64, 1, &got,
                               &bytes) != CUDNN_STATUS_SUCCESS ||
      bytes < 0 || bytes > kMaxWorkspaceBytes)
    return BackendDescriptor();
  *workspace = size_t(bytes);
  return plan;
}

// The pointers of one execution, ptrs = {x, w, y, bias, workspace}; the
// bias only when the graph reads one.
StatusOr<BackendDescriptor> makeVariantPack(const void *const ptrs[5],
                                            bool bias) {
  BackendDescriptor pack;
  GOPT_RETURN_IF_ERROR(pack.create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR));
  int64_t ids[4] = {kX, kW, kY, kBias};
  void *pointers[4];
  for (int i = 0; i < 4; ++i)
    pointers[i] = const_cast<void *>(ptrs[i]);
  const int64_t count = bias ? 4 : 3;
  void *workspace = const_cast<void *>(ptrs[4]);
  GOPT_RETURN_IF_ERROR(setAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                    CUDNN_TYPE_INT64, count, ids));
  GOPT_RETURN_IF_ERROR(setAttribute(pack.d,
                                    CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                    CUDNN_TYPE_VOID_PTR, count, pointers));
  GOPT_RETURN_IF_ERROR(setAttribute(pack.d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                    CUDNN_TYPE_VOID_PTR, 1, &workspace));
  GOPT_RETURN_IF_ERROR(fromCudnn(cudnnBackendFinalize(pack.d),
                                 "cudnnBackendFinalize (variant pack)"));
  return pack;
}

} // namespace

BackendDescriptor::~BackendDescriptor() {
  if (d)
    cudnnBackendDestroyDescriptor(d);
}

Status BackendDescriptor::create(cudnnBackendDescriptorType_t type) {
  if (d)
    cudnnBackendDestroyDescriptor(d);
  d = nullptr;
  return fromCudnn(cudnnBackendCreateDescriptor(type, &d),
                   "cudnnBackendCreateDescriptor");
}

StatusOr<std::unique_ptr<CudnnGraphConv>>
CudnnGraphConv::create(DeviceContext *ctx, const GraphConvShape &shape,
                       bool allowTf32, const std::string &cacheKey) {
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<CudnnGraphConv> fused,
                        search(ctx, shape, allowTf32, cacheKey));
  if (fused || (!shape.bias && !shape.relu))
    return fused;
  // Engines that fuse a bias and relu into f32 or NCHW convolutions are
  // few (the general ones compile at run time); the convolution alone
  // leaves the epilogue to the caller.
  GraphConvShape plain = shape;
  plain.bias = plain.relu = false;
  return search(ctx, plain, allowTf32, cacheKey + "|unfused");
}

StatusOr<std::unique_ptr<CudnnGraphConv>>
CudnnGraphConv::search(DeviceContext *ctx, const GraphConvShape &shape,
                       bool allowTf32, const std::string &cacheKey) {
  std::unique_ptr<CudnnGraphConv> conv(new CudnnGraphConv());
  conv->ctx_ = ctx;
  conv->bias_ = shape.bias;
  conv->relu_ = shape.relu;
  // cuDNN refuses graphs it cannot express (some group counts, layouts):
  // then the legacy path runs the op, as before.
  if (!buildGraph(ctx->cudnn, shape, conv->parts_).ok())
    return std::unique_ptr<CudnnGraphConv>();
  const BackendDescriptor &graph = conv->parts_.back();
  bool f32 = shape.dataType == CUDNN_DATA_FLOAT;

  // Candidates: heuristics mode A's ranking, then the fallback engines.
  std::vector<BackendDescriptor> configs;
  for (cudnnBackendHeurMode_t mode :
       {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    auto found = heuristicConfigs(graph, mode);
    if (!found.ok())
      continue;
    for (BackendDescriptor &c : *found)
      configs.push_back(std::move(c));
  }
  const std::string key =
      detail::concat(cacheKey, "|graph-engine,cudnn", cudnnGetVersion());
  AlgoCache &cache = AlgoCache::global();
  AlgoChoice cached;
  if (cache.lookup(key, &cached) && cached.algo >= 0 &&
      size_t(cached.algo) < configs.size()) {
    size_t bytes = 0;
    GOPT_ASSIGN_OR_RETURN(BackendDescriptor plan,
                          makePlan(ctx->cudnn, configs[cached.algo], &bytes));
    if (plan.d) {
      conv->plan_ = std::move(plan);
      conv->workspace_ = bytes;
      conv->parts_.push_back(std::move(configs[cached.algo]));
      return conv;
    }
  }

  // Time the allowed engines on zeroed scratch buffers of the op's sizes.
  size_t elem = shape.dataType == CUDNN_DATA_FLOAT ? 4 : 2;
  DeviceBuffer xs, ws, ys, bs;
  GOPT_RETURN_IF_ERROR(
      xs.allocate(shape.n * shape.c * shape.h * shape.w * elem));
  GOPT_RETURN_IF_ERROR(
      ws.allocate(shape.k * shape.cPerGroup * shape.r * shape.s * elem));
  GOPT_RETURN_IF_ERROR(
      ys.allocate(shape.n * shape.k * shape.outH * shape.outW * elem));
  GOPT_RETURN_IF_ERROR(bs.allocate(shape.k * elem));
  for (DeviceBuffer *b : {&xs, &ws, &ys, &bs})
    GOPT_RETURN_IF_ERROR(fromCuda(
        cudaMemsetAsync(b->ptr, 0, b->bytes, ctx->stream), "cudaMemsetAsync"));
  float bestMs = 1e30f;
  int best = -1, timed = 0;
  for (size_t i = 0; i < configs.size() && timed < kMaxTimedEngines; ++i) {
    GOPT_ASSIGN_OR_RETURN(bool allowed,
                          engineAllowed(configs[i], f32, allowTf32));
    if (!allowed)
      continue;
    size_t bytes = 0;
    GOPT_ASSIGN_OR_RETURN(BackendDescriptor plan,
                          makePlan(ctx->cudnn, configs[i], &bytes));
    if (!plan.d)
      continue;
    DeviceBuffer scratch;
    if (bytes && !scratch.allocate(bytes).ok())
      continue;
    // One variant pack for all runs, as run() keeps one: building it is
    // host work that would starve the GPU on small convolutions.
    const void *ptrs[5] = {xs.ptr, ws.ptr, ys.ptr, bs.ptr, scratch.ptr};
    GOPT_ASSIGN_OR_RETURN(BackendDescriptor pack,
                          makeVariantPack(ptrs, shape.bias));
    auto runOnce = [&] {
      return fromCudnn(cudnnBackendExecute(ctx->cudnn, plan.d, pack.d),
                       "cudnnBackendExecute");
    };
    auto ms = timeOnStream(ctx->stream, runOnce);
    ++timed;
    // An engine that fails to run is skipped, not an error: the legacy
    // path still runs the op.
    if (!ms.ok()) {
      cudaGetLastError();
      continue;
    }
    if (*ms < bestMs) {
      bestMs = *ms;
      best = int(i);
      conv->plan_ = std::move(plan);
      conv->workspace_ = bytes;
    }
  }
  if (best < 0)
    return std::unique_ptr<CudnnGraphConv>();
  cache.insert(key, AlgoChoice{best, 0});
  conv->parts_.push_back(std::move(configs[best]));
  return conv;
}

Status CudnnGraphConv::run(const void *x, const void *w, const void *bias,
                           void *y, void *workspace) {
  const void *ptrs[5] = {x, w, y, bias, workspace};
  if (!pack_.d || !std::equal(ptrs, ptrs + 5, packPtrs_)) {
    GOPT_ASSIGN_OR_RETURN(pack_, makeVariantPack(ptrs, bias_));
    std::copy(ptrs, ptrs + 5, packPtrs_);
  }
  return fromCudnn(cudnnBackendExecute(ctx_->cudnn, plan_.d, pack_.d),
                   "cudnnBackendExecute");
}

} // namespace gopt::runtime::cuda
