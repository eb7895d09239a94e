//===- QuantizedOps.cpp - int8 chains of the CUDA backend -----------------===//
//
// Recognizes what --gopt-quantize writes around each conv2d and matmul,
//
//   q_x (i8) -> dequantize(s_x) -+
//   W (const i8) -> dequantize(s_w) -+-> conv2d/matmul [+ const bias]
//     [-> relu | relu6 | clip] [-> quantize(s_y)
//       [-> dequantize -> add(dequantize(q_r)) [-> activation] [-> quantize]]]
//
// and runs it as one kernel: the integer sums on int8 tensor cores (an
// im2col and cuBLASLt's int8 GEMM with int32 output; cuDNN's int8
// convolution as the fallback), then gopt's epilogue: v = sum * (s_x *
// s_w[c]) + bias[c], the activation, the requantize by s_y with the
// reference's rounding, and ResNet's block end. Also max_pool between a
// dequantize and a quantize of one scale, pooled on the int8 values.
//
// Against the reference (which sums the dequantized f32 products) the only
// difference is f32 rounding of the sum (the integer sum is exact, the
// reference's f32 sum is not), a few ulps of the result: a requantized
// value may land one quantum away where the f32 value is within those ulps
// of a rounding boundary (x.5 quanta), never more. Everything after that
// requantize rounds as the reference's ops do.
//
//===----------------------------------------------------------------------===//
#include "QuantizedOps.h"
#include "Launch.h"
#include "OpHelpers.h"
#include "QuantizedKernels.h"
#include "gopt/runtime/OpSchema.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

// The legacy (non-graph) cuDNN API is deprecated in cuDNN 9 but present.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace gopt::runtime::cuda {
namespace {

int64_t roundUp4(int64_t v) { return (v + 3) / 4 * 4; }
size_t align256(size_t v) { return (v + 255) / 256 * 256; }

// Host views of the plan's constants, and which op reads or writes what.
class PlanView {
public:
  PlanView(const plan::Plan &p, const std::vector<DType> &dtypes,
           const std::vector<Shape> &shapes)
      : p(p), dtypes(dtypes), shapes(shapes), producer(p.tensors_size(), -1),
        users(p.tensors_size(), 0), consumer(p.tensors_size(), -1) {
    for (int o = 0; o < p.ops_size(); ++o) {
      for (int t : p.ops(o).outputs())
        producer[t] = o;
      for (int t : p.ops(o).inputs()) {
        users[t]++;
        consumer[t] = o;
      }
    }
    for (const plan::Binding &b : p.outputs())
      users[b.tensor()]++;
    for (const plan::StateBinding &b : p.states())
      if (b.has_update_tensor())
        users[b.update_tensor()]++;
  }
  bool isConstant(int t) const {
    return p.tensors(t).kind() == plan::TensorInfo::CONSTANT;
  }
  // An intermediate read by exactly one op and nothing else.
  bool internal(int t) const {
    return p.tensors(t).kind() == plan::TensorInfo::INTERMEDIATE &&
           users[t] == 1 && consumer[t] >= 0;
  }
  // The f32 values of a constant, or empty when `t` is not one.
  std::vector<float> floats(int t) const {
    if (!isConstant(t) || dtypes[t] != DType::kF32)
      return {};
    const plan::TensorInfo &info = p.tensors(t);
    size_t n = product(shapes[t]);
    if (info.constant_size() < n * sizeof(float))
      return {};
    std::vector<float> v(n);
    std::memcpy(v.data(), p.constants().data() + info.constant_offset(),
                n * sizeof(float));
    return v;
  }
  const int8_t *int8s(int t) const {
    const plan::TensorInfo &info = p.tensors(t);
    if (!isConstant(t) || dtypes[t] != DType::kI8 ||
        info.constant_size() < static_cast<uint64_t>(product(shapes[t])))
      return nullptr;
    return reinterpret_cast<const int8_t *>(p.constants().data() +
                                            info.constant_offset());
  }

  const plan::Plan &p;
  const std::vector<DType> &dtypes;
  const std::vector<Shape> &shapes;
  std::vector<int> producer, users, consumer;
};

bool validScales(const std::vector<float> &s) {
  if (s.empty())
    return false;
  for (float v : s)
    if (!(std::isfinite(v) && v > 0))
      return false;
  return true;
}

// A dequantize of `t`'s producer with constant, valid scales.
struct Dequant {
  int op = -1;
  int q = -1; // the int8 tensor
  std::vector<float> scales;
  int64_t axis = 0;
};
bool findDequantize(const PlanView &v, int t, Dequant *d) {
  int o = v.producer[t];
  if (o < 0 || v.p.ops(o).kind() != "dequantize" ||
      v.p.ops(o).inputs_size() != 2)
    return false;
  const plan::Op &op = v.p.ops(o);
  d->op = o;
  d->q = op.inputs(0);
  d->scales = v.floats(op.inputs(1));
  d->axis = OpAttrs(op).getInt("axis");
  if (d->axis < 0)
    d->axis += static_cast<int64_t>(v.shapes[d->q].size());
  return v.dtypes[d->q] == DType::kI8 && validScales(d->scales);
}

// The activation and requantize that follow `t` (an f32 result), absorbed
// into `chain`, and ResNet's block end after them; the epilogue's
// parameters (Int8EpilogueArgs, QuantizedKernels.h).
struct Tail {
  Int8Activation act = Int8Activation::kNone;
  float lo = 0, hi = 0;
  bool residual = false; // the chain's `residual` tensor is added
  float midScale = 0, residualScale = 0;
  Int8Activation act2 = Int8Activation::kNone;
  float lo2 = 0, hi2 = 0;
  bool quantized = false;
  float outScale = 0;
};
bool activationFromAttr(const std::string &a, Tail *tail) {
  if (a.empty() || a == "none")
    return true;
  if (a == "relu") {
    tail->act = Int8Activation::kRelu;
    return true;
  }
  if (a == "relu6") {
    tail->act = Int8Activation::kClip;
    tail->lo = 0;
    tail->hi = 6;
    return true;
  }
  return false;
}

// The one consumer of chain.result when it is an op of `kind` reading it
// as its first operand, else -1.
int nextOp(const PlanView &v, const Int8Chain &chain, const char *kind) {
  int t = chain.result;
  if (!v.internal(t))
    return -1;
  const plan::Op &op = v.p.ops(v.consumer[t]);
  if (op.kind() != kind || op.inputs_size() < 1 || op.inputs(0) != t ||
      op.outputs_size() != 1)
    return -1;
  return v.consumer[t];
}

// A relu, relu6 or clip after the result, absorbed.
bool takeActivation(const PlanView &v, Int8Chain &chain, Int8Activation *act,
                    float *lo, float *hi) {
  int o = -1;
  if ((o = nextOp(v, chain, "relu")) >= 0) {
    *act = Int8Activation::kRelu;
  } else if ((o = nextOp(v, chain, "relu6")) >= 0) {
    *act = Int8Activation::kClip;
    *lo = 0;
    *hi = 6;
  } else if ((o = nextOp(v, chain, "clip")) >= 0) {
    OpAttrs attrs(v.p.ops(o));
    *act = Int8Activation::kClip;
    *lo = static_cast<float>(attrs.getFloat("min"));
    *hi = static_cast<float>(attrs.getFloat("max"));
  }
  if (o < 0 || v.dtypes[v.p.ops(o).outputs(0)] != DType::kF32) {
    *act = Int8Activation::kNone;
    return false;
  }
  chain.absorbed.push_back(o);
  chain.result = v.p.ops(o).outputs(0);
  return true;
}

// A quantize of the result with one valid constant scale, absorbed.
bool takeQuantize(const PlanView &v, Int8Chain &chain, float *scale) {
  int o = nextOp(v, chain, "quantize");
  if (o < 0)
    return false;
  const plan::Op &op = v.p.ops(o);
  if (op.inputs_size() != 2 || v.dtypes[op.outputs(0)] != DType::kI8)
    return false;
  std::vector<float> s = v.floats(op.inputs(1));
  if (s.size() != 1 || !validScales(s))
    return false;
  *scale = s[0];
  chain.absorbed.push_back(o);
  chain.result = op.outputs(0);
  return true;
}

// ResNet's block end after a requantized result q_a (scale s_a):
// dequantize(q_a, s_a) -> add(·, dequantize(q_r, s_r)) in either order,
// same shapes; absorbed, with q_r as the chain's residual. Not for the
// residual's own dequantize, which other ops may read (planInt8Chains
// drops it when none does).
bool takeResidual(const PlanView &v, Int8Chain &chain, Tail *tail) {
  int d = nextOp(v, chain, "dequantize");
  if (d < 0)
    return false;
  const plan::Op &dq = v.p.ops(d);
  if (dq.inputs_size() != 2)
    return false;
  std::vector<float> s = v.floats(dq.inputs(1));
  int xa = dq.outputs(0);
  if (s.size() != 1 || s[0] != tail->outScale || v.dtypes[xa] != DType::kF32 ||
      !v.internal(xa))
    return false;
  int a = v.consumer[xa];
  const plan::Op &add = v.p.ops(a);
  if (add.kind() != "add" || add.inputs_size() != 2 ||
      add.inputs(0) == add.inputs(1) || add.outputs_size() != 1)
    return false;
  int xr = add.inputs(0) == xa ? add.inputs(1) : add.inputs(0);
  Dequant r;
  // The kernel reads q_r at the anchor's place: it must exist by then.
  if (!findDequantize(v, xr, &r) || r.scales.size() != 1 ||
      v.producer[r.q] >= chain.anchor || v.shapes[xr] != v.shapes[xa] ||
      v.shapes[add.outputs(0)] != v.shapes[xa] ||
      v.dtypes[add.outputs(0)] != DType::kF32)
    return false;
  tail->residual = true;
  tail->midScale = tail->outScale;
  tail->residualScale = r.scales[0];
  tail->quantized = false;
  tail->outScale = 0;
  chain.residual = r.q;
  chain.absorbed.push_back(d);
  chain.absorbed.push_back(a);
  chain.result = add.outputs(0);
  return true;
}

void followTail(const PlanView &v, Int8Chain &chain, Tail *tail,
                bool allowResidual) {
  if (tail->act == Int8Activation::kNone)
    takeActivation(v, chain, &tail->act, &tail->lo, &tail->hi);
  if (!takeQuantize(v, chain, &tail->outScale))
    return;
  tail->quantized = true;
  if (!allowResidual || !takeResidual(v, chain, tail))
    return;
  takeActivation(v, chain, &tail->act2, &tail->lo2, &tail->hi2);
  tail->quantized = takeQuantize(v, chain, &tail->outScale);
}

// Device copies of the epilogue's per-channel values.
struct EpilogueParams {
  DeviceBuffer alpha, bias, outScale;
  bool hasBias = false;
  Tail tail;
  size_t bytes() const { return alpha.bytes + bias.bytes + outScale.bytes; }
  Status upload(float inScale, const std::vector<float> &wScales,
                int64_t channels, const std::vector<float> &biasValues,
                cudaStream_t stream) {
    std::vector<float> a(channels);
    for (int64_t c = 0; c < channels; ++c)
      a[c] = inScale * wScales[wScales.size() == 1 ? 0 : c];
    GOPT_RETURN_IF_ERROR(alpha.allocate(channels * sizeof(float)));
    GOPT_CUDA_CHECK(cudaMemcpy(alpha.ptr, a.data(), channels * sizeof(float),
                               cudaMemcpyHostToDevice));
    hasBias = !biasValues.empty();
    if (hasBias) {
      GOPT_RETURN_IF_ERROR(bias.allocate(channels * sizeof(float)));
      GOPT_CUDA_CHECK(cudaMemcpy(bias.ptr, biasValues.data(),
                                 channels * sizeof(float),
                                 cudaMemcpyHostToDevice));
    }
    if (tail.quantized) {
      GOPT_RETURN_IF_ERROR(outScale.allocate(sizeof(float)));
      GOPT_CUDA_CHECK(cudaMemcpy(outScale.ptr, &tail.outScale, sizeof(float),
                                 cudaMemcpyHostToDevice));
    }
    return Status::success();
  }
  // `residual`: the chain's residual int8 tensor (when tail.residual).
  template <typename Acc>
  Status run(const Acc *acc, int64_t accStride, int64_t n, int64_t spatial,
             int64_t channels, bool channelsFirst, const void *residual,
             void *out, cudaStream_t stream) const {
    Int8EpilogueArgs args;
    args.alpha = static_cast<const float *>(alpha.ptr);
    args.bias = hasBias ? static_cast<const float *>(bias.ptr) : nullptr;
    args.act = tail.act;
    args.lo = tail.lo;
    args.hi = tail.hi;
    if (tail.residual) {
      args.residual = static_cast<const int8_t *>(residual);
      args.midScale = tail.midScale;
      args.residualScale = tail.residualScale;
      args.act2 = tail.act2;
      args.lo2 = tail.lo2;
      args.hi2 = tail.hi2;
    }
    args.outScale =
        tail.quantized ? static_cast<const float *>(outScale.ptr) : nullptr;
    return fromCuda(launchInt8Epilogue<Acc>(acc, accStride, n, spatial,
                                            channels, channelsFirst, args, out,
                                            stream),
                    "launchInt8Epilogue");
  }
};

struct CudnnTensor {
  cudnnTensorDescriptor_t d = nullptr;
  CudnnTensor() { cudnnCreateTensorDescriptor(&d); }
  ~CudnnTensor() { cudnnDestroyTensorDescriptor(d); }
};
struct CudnnFilter {
  cudnnFilterDescriptor_t d = nullptr;
  CudnnFilter() { cudnnCreateFilterDescriptor(&d); }
  ~CudnnFilter() { cudnnDestroyFilterDescriptor(d); }
};
struct CudnnConv {
  cudnnConvolutionDescriptor_t d = nullptr;
  CudnnConv() { cudnnCreateConvolutionDescriptor(&d); }
  ~CudnnConv() { cudnnDestroyConvolutionDescriptor(d); }
};

// What an int8 conv chain computes, read from the plan.
struct ConvChainParams {
  bool nchw = true;
  int64_t n = 0, c = 0, h = 0, w = 0; // input
  int64_t k = 0, kh = 0, kw = 0;      // filter
  int64_t oh = 0, ow = 0;             // output
  int64_t strides[2] = {}, dilations[2] = {};
  int64_t padTop = 0, padBottom = 0, padLeft = 0, padRight = 0;
  std::vector<int8_t> filterOhwi; // [kPad, kh, kw, cPad]
  float inScale = 0;
  std::vector<float> wScales, bias;
  Tail tail;
};

// cuDNN's int8 convolution (INT8_EXT_CONFIG: int8 NHWC input and filter,
// channels a multiple of 4, int32 sums written as float), then the
// epilogue in the plan's layout.
class Int8ConvKernel : public CudaKernel {
public:
  static StatusOr<std::unique_ptr<CudaKernel>> create(const ConvChainParams &p,
                                                      DeviceContext *ctx);
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override;
  const char *implementation() const override { return "cudnn-int8"; }
  size_t workspaceBytes() const override {
    return filter_.bytes + epilogue_.bytes();
  }

private:
  Status enqueue(const void *x, const void *residual, void *y);

  DeviceContext *ctx_ = nullptr;
  ConvChainParams p_;
  int64_t cPad_ = 0, kPad_ = 0, inH_ = 0, inW_ = 0;
  bool gather_ = true;
  CudnnTensor xDesc_, yDesc_;
  CudnnFilter wDesc_;
  CudnnConv convDesc_;
  cudnnConvolutionFwdAlgo_t algo_ =
      CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  size_t algoBytes_ = 0, gatherOffset_ = 0, accOffset_ = 0;
  DeviceBuffer filter_;
  EpilogueParams epilogue_;
};

StatusOr<std::unique_ptr<CudaKernel>>
Int8ConvKernel::create(const ConvChainParams &p, DeviceContext *ctx) {
  auto k = std::make_unique<Int8ConvKernel>();
  k->ctx_ = ctx;
  k->cPad_ = roundUp4(p.c);
  k->kPad_ = roundUp4(p.k);
  // NHWC data whose channels cuDNN takes as they are and symmetric pads
  // need no copy; anything else is gathered (layout, channel padding and
  // spatial padding in one pass over 1-byte values).
  bool symmetric = p.padTop == p.padBottom && p.padLeft == p.padRight;
  k->gather_ = p.nchw || p.c != k->cPad_ || !symmetric;
  k->inH_ = k->gather_ ? p.h + p.padTop + p.padBottom : p.h;
  k->inW_ = k->gather_ ? p.w + p.padLeft + p.padRight : p.w;
  int64_t cudnnPadH = k->gather_ ? 0 : p.padTop;
  int64_t cudnnPadW = k->gather_ ? 0 : p.padLeft;
  for (int64_t v :
       {p.n, k->cPad_, k->inH_, k->inW_, k->kPad_, p.kh, p.kw, p.oh, p.ow,
        p.n * k->cPad_ * k->inH_ * k->inW_, p.n * k->kPad_ * p.oh * p.ow})
    if (!fitsInt(v))
      return unimplemented("int8 conv too large for cuDNN");
  k->p_.nchw = p.nchw;
  k->p_.n = p.n;
  k->p_.c = p.c;
  k->p_.h = p.h;
  k->p_.w = p.w;
  k->p_.k = p.k;
  k->p_.oh = p.oh;
  k->p_.ow = p.ow;
  k->p_.padTop = p.padTop;
  k->p_.padLeft = p.padLeft;

  GOPT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(
      k->xDesc_.d, CUDNN_TENSOR_NHWC, CUDNN_DATA_INT8, int(p.n), int(k->cPad_),
      int(k->inH_), int(k->inW_)));
  GOPT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(
      k->wDesc_.d, CUDNN_DATA_INT8, CUDNN_TENSOR_NHWC, int(k->kPad_),
      int(k->cPad_), int(p.kh), int(p.kw)));
  GOPT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(
      k->yDesc_.d, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, int(p.n), int(k->kPad_),
      int(p.oh), int(p.ow)));
  GOPT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      k->convDesc_.d, int(cudnnPadH), int(cudnnPadW), int(p.strides[0]),
      int(p.strides[1]), int(p.dilations[0]), int(p.dilations[1]),
      CUDNN_CROSS_CORRELATION, CUDNN_DATA_INT32));
  int outDims[4];
  GOPT_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(
      k->convDesc_.d, k->xDesc_.d, k->wDesc_.d, &outDims[0], &outDims[1],
      &outDims[2], &outDims[3]));
  if (outDims[0] != p.n || outDims[1] != k->kPad_ || outDims[2] != p.oh ||
      outDims[3] != p.ow)
    return internalError("int8 conv: cuDNN computes another output shape");

  // Filter, reordered on the host to cuDNN's KRSC with padded K and C.
  GOPT_RETURN_IF_ERROR(k->filter_.allocate(p.filterOhwi.size()));
  GOPT_CUDA_CHECK(cudaMemcpy(k->filter_.ptr, p.filterOhwi.data(),
                             p.filterOhwi.size(), cudaMemcpyHostToDevice));
  k->epilogue_.tail = p.tail;
  GOPT_RETURN_IF_ERROR(
      k->epilogue_.upload(p.inScale, p.wScales, p.k, p.bias, ctx->stream));

  // Candidates: cuDNN's heuristic ranking, then the two implicit-GEMM
  // algorithms its documentation lists for int8. Each is tried once on
  // scratch data: cuDNN refuses some int8 configurations only when they
  // run, and a refusal must fall back to the op-by-op path now, not fail a
  // step.
  std::vector<cudnnConvolutionFwdAlgo_t> candidates;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  if (cudnnGetConvolutionForwardAlgorithm_v7(
          ctx->cudnn, k->xDesc_.d, k->wDesc_.d, k->convDesc_.d, k->yDesc_.d,
          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned,
          perf) == CUDNN_STATUS_SUCCESS)
    for (int i = 0; i < returned; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS)
        candidates.push_back(perf[i].algo);
  candidates.push_back(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
  candidates.push_back(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
  DeviceBuffer scratchIn, scratchOut;
  size_t inBytes = p.n * p.c * p.h * p.w;
  size_t outBytes = p.n * p.k * p.oh * p.ow *
                    (p.tail.quantized ? sizeof(int8_t) : sizeof(float));
  GOPT_RETURN_IF_ERROR(scratchIn.allocate(std::max<size_t>(inBytes, 64)));
  GOPT_RETURN_IF_ERROR(scratchOut.allocate(std::max<size_t>(outBytes, 64)));
  GOPT_CUDA_CHECK(cudaMemsetAsync(scratchIn.ptr, 0, inBytes, ctx->stream));
  size_t gatherBytes =
      k->gather_ ? align256(p.n * k->cPad_ * k->inH_ * k->inW_) : 0;
  size_t accBytes = p.n * k->kPad_ * p.oh * p.ow * sizeof(float);
  Status last = unimplemented("cuDNN has no int8 algorithm for this conv");
  for (cudnnConvolutionFwdAlgo_t algo : candidates) {
    size_t algoBytes = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(
            ctx->cudnn, k->xDesc_.d, k->wDesc_.d, k->convDesc_.d, k->yDesc_.d,
            algo, &algoBytes) != CUDNN_STATUS_SUCCESS)
      continue;
    k->algo_ = algo;
    k->algoBytes_ = algoBytes;
    // The shared workspace: [algorithm | gathered input | float sums].
    k->gatherOffset_ = align256(algoBytes);
    k->accOffset_ = k->gatherOffset_ + gatherBytes;
    GOPT_RETURN_IF_ERROR(ctx->reserveWorkspace(k->accOffset_ + accBytes));
    last = k->enqueue(scratchIn.ptr, scratchOut.ptr, scratchOut.ptr);
    if (last.ok())
      last =
          fromCuda(cudaStreamSynchronize(ctx->stream), "cudaStreamSynchronize");
    if (last.ok())
      return std::unique_ptr<CudaKernel>(std::move(k));
    (void)cudaGetLastError();
  }
  return last;
}

Status Int8ConvKernel::enqueue(const void *x, const void *residual, void *y) {
  char *ws = static_cast<char *>(ctx_->workspace.ptr);
  const void *convIn = x;
  if (gather_) {
    int8_t *g = reinterpret_cast<int8_t *>(ws + gatherOffset_);
    GOPT_RETURN_IF_ERROR(fromCuda(
        launchInt8ToPaddedNhwc(static_cast<const int8_t *>(x), p_.nchw, p_.n,
                               p_.c, p_.h, p_.w, cPad_, inH_, inW_, p_.padTop,
                               p_.padLeft, g, ctx_->stream),
        "launchInt8ToPaddedNhwc"));
    convIn = g;
  }
  float *acc = reinterpret_cast<float *>(ws + accOffset_);
  float one = 1.f, zero = 0.f;
  GOPT_CUDNN_CHECK(cudnnSetStream(ctx_->cudnn, ctx_->stream));
  GOPT_CUDNN_CHECK(cudnnConvolutionForward(
      ctx_->cudnn, &one, xDesc_.d, convIn, wDesc_.d, filter_.ptr, convDesc_.d,
      algo_, algoBytes_ ? ws : nullptr, algoBytes_, &zero, yDesc_.d, acc));
  return epilogue_.run(acc, kPad_, p_.n, p_.oh * p_.ow, p_.k, p_.nchw, residual,
                       y, ctx_->stream);
}

Status Int8ConvKernel::run(const std::vector<const void *> &in,
                           const std::vector<void *> &out) {
  return enqueue(in[0], in.size() > 1 ? in[1] : nullptr, out[0]);
}

// Where an int8 GEMM's left operand comes from: the activation itself
// ([M, K] row-major), or an im2col of a conv's input built in the
// workspace (rows (n, oy, ox), columns (r, s, channel) with the channels
// padded to a multiple of 4, zeros for padding).
struct Im2col {
  bool nchw = false;
  int64_t n = 0, c = 0, h = 0, w = 0, cPad = 0, kh = 0, kw = 0;
  int64_t strides[2] = {}, dilations[2] = {};
  int64_t padTop = 0, padLeft = 0, oh = 0, ow = 0;
};

// cuBLASLt's int8 matmul (CUBLAS_COMPUTE_32I, int32 sums, int8 tensor
// cores) in its "TN" form, the one int8 form every GPU generation supports
// with ordinary layouts: the left operand [M, K] row-major is K x M
// column-major, the weight is stored once as [N', K] (N' = N padded to 4),
// C = [M, N'] int32. Then the epilogue writes [batch, spatial, N] (or
// [batch, N, spatial] for an NCHW conv) from C's rows.
class Int8GemmKernel : public CudaKernel {
public:
  struct Config {
    int64_t m = 0, k = 0, n = 0;  // k: a multiple of 4
    std::vector<int8_t> weightNk; // [roundUp4(n), k]
    bool im2col = false;
    Im2col cols;
    int64_t batch = 0, spatial = 1; // m = batch * spatial
    bool channelsFirst = false;
    float inScale = 0;
    std::vector<float> wScales, bias;
    Tail tail;
    const char *implementation = "cublaslt-int8";
  };
  ~Int8GemmKernel() override {
    if (desc_)
      cublasLtMatmulDescDestroy(desc_);
    for (cublasLtMatrixLayout_t l : {la_, lb_, lc_})
      if (l)
        cublasLtMatrixLayoutDestroy(l);
  }
  static StatusOr<std::unique_ptr<CudaKernel>> create(Config config,
                                                      DeviceContext *ctx);
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override;
  const char *implementation() const override { return c_.implementation; }
  size_t workspaceBytes() const override {
    return weight_.bytes + epilogue_.bytes();
  }

private:
  DeviceContext *ctx_ = nullptr;
  Config c_;
  int64_t nPad_ = 0;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t algoBytes_ = 0, colsOffset_ = 0, accOffset_ = 0;
  DeviceBuffer weight_;
  EpilogueParams epilogue_;
};

StatusOr<std::unique_ptr<CudaKernel>>
Int8GemmKernel::create(Config config, DeviceContext *ctx) {
  auto kern = std::make_unique<Int8GemmKernel>();
  kern->ctx_ = ctx;
  const int64_t m = config.m, k = config.k, n = config.n;
  kern->nPad_ = roundUp4(n);
  // 32-bit index arithmetic in the im2col and epilogue kernels.
  if (m * k > INT32_MAX || m * kern->nPad_ > INT32_MAX ||
      (config.im2col &&
       config.cols.n * config.cols.c * config.cols.h * config.cols.w >
           INT32_MAX))
    return unimplemented("int8 GEMM too large");
  GOPT_CUBLAS_CHECK(
      cublasLtMatmulDescCreate(&kern->desc_, CUBLAS_COMPUTE_32I, CUDA_R_32I));
  cublasOperation_t opA = CUBLAS_OP_T, opB = CUBLAS_OP_N;
  GOPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      kern->desc_, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
  GOPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      kern->desc_, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
  // "A" (column-major roles) is the weight, K x N' with leading dim K;
  // "B" is the activation, K x M; C is N' x M.
  GOPT_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&kern->la_, CUDA_R_8I, k, kern->nPad_, k));
  GOPT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&kern->lb_, CUDA_R_8I, k, m, k));
  GOPT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&kern->lc_, CUDA_R_32I,
                                               kern->nPad_, m, kern->nPad_));
  cublasLtMatmulPreference_t pref = nullptr;
  GOPT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  size_t maxWs = size_t(32) << 20;
  cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxWs, sizeof(maxWs));
  cublasLtMatmulHeuristicResult_t result;
  int returned = 0;
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
      ctx->cublasLt, kern->desc_, kern->la_, kern->lb_, kern->lc_, kern->lc_,
      pref, 1, &result, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  GOPT_RETURN_IF_ERROR(fromCublas(st, "cublasLtMatmulAlgoGetHeuristic"));
  if (returned == 0)
    return unimplemented("cuBLASLt has no int8 algorithm for this GEMM");
  kern->algo_ = result.algo;
  kern->algoBytes_ = result.workspaceSize;

  GOPT_RETURN_IF_ERROR(kern->weight_.allocate(config.weightNk.size()));
  GOPT_CUDA_CHECK(cudaMemcpy(kern->weight_.ptr, config.weightNk.data(),
                             config.weightNk.size(), cudaMemcpyHostToDevice));
  config.weightNk.clear();
  config.weightNk.shrink_to_fit();
  kern->epilogue_.tail = config.tail;
  GOPT_RETURN_IF_ERROR(kern->epilogue_.upload(config.inScale, config.wScales, n,
                                              config.bias, ctx->stream));
  // The shared workspace: [cuBLASLt | im2col | int32 sums].
  kern->colsOffset_ = align256(kern->algoBytes_);
  kern->accOffset_ =
      kern->colsOffset_ + (config.im2col ? align256(m * k) : size_t(0));
  GOPT_RETURN_IF_ERROR(ctx->reserveWorkspace(
      kern->accOffset_ + m * kern->nPad_ * sizeof(int32_t)));
  kern->c_ = std::move(config);

  // A trial run on scratch data: a configuration the library refuses only
  // when it runs falls back to the op-by-op path now, not in a step.
  const Config &c = kern->c_;
  DeviceBuffer scratchIn, scratchOut;
  size_t inBytes = c.im2col ? c.cols.n * c.cols.c * c.cols.h * c.cols.w : m * k;
  size_t outBytes = m * n * (c.tail.quantized ? sizeof(int8_t) : sizeof(float));
  GOPT_RETURN_IF_ERROR(scratchIn.allocate(std::max<size_t>(inBytes, 64)));
  GOPT_RETURN_IF_ERROR(scratchOut.allocate(std::max<size_t>(outBytes, 64)));
  GOPT_CUDA_CHECK(cudaMemsetAsync(scratchIn.ptr, 0, inBytes, ctx->stream));
  // The output doubles as the residual's scratch (zeros, int8-sized).
  GOPT_CUDA_CHECK(cudaMemsetAsync(scratchOut.ptr, 0, outBytes, ctx->stream));
  GOPT_RETURN_IF_ERROR(
      kern->run({scratchIn.ptr, scratchOut.ptr}, {scratchOut.ptr}));
  GOPT_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  return std::unique_ptr<CudaKernel>(std::move(kern));
}

Status Int8GemmKernel::run(const std::vector<const void *> &in,
                           const std::vector<void *> &out) {
  char *ws = static_cast<char *>(ctx_->workspace.ptr);
  const void *left = in[0];
  if (c_.im2col) {
    const Im2col &g = c_.cols;
    int8_t *cols = reinterpret_cast<int8_t *>(ws + colsOffset_);
    GOPT_RETURN_IF_ERROR(fromCuda(
        launchInt8Im2col(static_cast<const int8_t *>(in[0]), g.nchw, g.n, g.c,
                         g.h, g.w, g.cPad, g.kh, g.kw, g.strides[0],
                         g.strides[1], g.dilations[0], g.dilations[1], g.padTop,
                         g.padLeft, g.oh, g.ow, cols, ctx_->stream),
        "launchInt8Im2col"));
    left = cols;
  }
  int32_t *acc = reinterpret_cast<int32_t *>(ws + accOffset_);
  int32_t one = 1, zero = 0;
  GOPT_CUBLAS_CHECK(cublasLtMatmul(
      ctx_->cublasLt, desc_, &one, weight_.ptr, la_, left, lb_, &zero, acc, lc_,
      acc, lc_, &algo_, algoBytes_ ? ws : nullptr, algoBytes_, ctx_->stream));
  return epilogue_.run(acc, nPad_, c_.batch, c_.spatial, c_.n, c_.channelsFirst,
                       in.size() > 1 ? in[1] : nullptr, out[0], ctx_->stream);
}

// The conv2d chain anchored at `o`, or false.
bool convChain(const PlanView &v, int o, DeviceContext *ctx, Int8Chain *chain) {
  const plan::Op &op = v.p.ops(o);
  if (op.inputs_size() < 2 || op.inputs_size() > 3 ||
      v.dtypes[op.outputs(0)] != DType::kF32)
    return false;
  OpAttrs attrs(op);
  std::string layout = attrs.getString("data_format");
  bool oihw = attrs.getString("filter_format") == "OIHW";
  if ((layout != "NCHW" && layout != "NHWC") || attrs.getInt("groups") != 1)
    return false;
  Dequant dx, dw;
  if (!findDequantize(v, op.inputs(0), &dx) ||
      !findDequantize(v, op.inputs(1), &dw) || dx.scales.size() != 1)
    return false;
  const Shape &xs = v.shapes[dx.q], &ws = v.shapes[dw.q],
              &ys = v.shapes[op.outputs(0)];
  if (xs.size() != 4 || ws.size() != 4 || ys.size() != 4 || product(xs) == 0 ||
      product(ys) == 0)
    return false;
  const int8_t *w = v.int8s(dw.q);
  if (!w)
    return false;
  ConvChainParams p;
  p.nchw = layout == "NCHW";
  p.n = xs[0];
  p.c = p.nchw ? xs[1] : xs[3];
  p.h = p.nchw ? xs[2] : xs[1];
  p.w = p.nchw ? xs[3] : xs[2];
  p.k = oihw ? ws[0] : ws[3];
  int64_t cin = oihw ? ws[1] : ws[2];
  p.kh = oihw ? ws[2] : ws[0];
  p.kw = oihw ? ws[3] : ws[1];
  p.oh = p.nchw ? ys[2] : ys[1];
  p.ow = p.nchw ? ys[3] : ys[2];
  if (cin != p.c || (p.nchw ? ys[1] : ys[3]) != p.k)
    return false;
  int64_t outAxis = oihw ? 0 : 3;
  if (dw.scales.size() != 1 &&
      (static_cast<int64_t>(dw.scales.size()) != p.k || dw.axis != outAxis))
    return false;
  if (op.inputs_size() == 3) {
    p.bias = v.floats(op.inputs(2));
    if (static_cast<int64_t>(p.bias.size()) != p.k)
      return false;
  }
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> dil = attrs.getWindowInts("dilations");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  auto wh = computeWindowDim(p.h, p.kh, strides[0], dil[0], padding, pads[0],
                             pads[1], false);
  auto ww = computeWindowDim(p.w, p.kw, strides[1], dil[1], padding, pads[2],
                             pads[3], false);
  if (!wh.ok() || !ww.ok() || wh->outSize != p.oh || ww->outSize != p.ow)
    return false;
  p.strides[0] = strides[0];
  p.strides[1] = strides[1];
  p.dilations[0] = dil[0];
  p.dilations[1] = dil[1];
  p.padTop = wh->padBefore;
  p.padBottom = wh->padAfter;
  p.padLeft = ww->padBefore;
  p.padRight = ww->padAfter;
  if (!activationFromAttr(attrs.getString("activation"), &p.tail))
    return false;

  chain->anchor = o;
  chain->input = dx.q;
  chain->result = op.outputs(0);
  followTail(v, *chain, &p.tail, true);
  // The dequantizes run only where something else reads their results.
  if (v.internal(op.inputs(0)))
    chain->absorbed.push_back(dx.op);
  if (v.internal(op.inputs(1)))
    chain->absorbed.push_back(dw.op);

  int64_t cPad = roundUp4(p.c), kPad = roundUp4(p.k);
  p.filterOhwi.assign(kPad * p.kh * p.kw * cPad, 0);
  for (int64_t ko = 0; ko < p.k; ++ko)
    for (int64_t r = 0; r < p.kh; ++r)
      for (int64_t s = 0; s < p.kw; ++s)
        for (int64_t ci = 0; ci < p.c; ++ci)
          p.filterOhwi[((ko * p.kh + r) * p.kw + s) * cPad + ci] =
              oihw ? w[((ko * p.c + ci) * p.kh + r) * p.kw + s]
                   : w[((r * p.kw + s) * p.c + ci) * p.k + ko];
  p.inScale = dx.scales[0];
  p.wScales = dw.scales;
  // An im2col and cuBLASLt's int8 GEMM first (int8 tensor cores; cuDNN's
  // legacy int8 convolution ran ResNet-18 slower than its f32 on an H200),
  // cuDNN where cuBLASLt refuses.
  Int8GemmKernel::Config g;
  Im2col &cols = g.cols;
  cols.nchw = p.nchw;
  cols.n = p.n;
  cols.c = p.c;
  cols.h = p.h;
  cols.w = p.w;
  cols.cPad = cPad;
  cols.kh = p.kh;
  cols.kw = p.kw;
  cols.strides[0] = p.strides[0];
  cols.strides[1] = p.strides[1];
  cols.dilations[0] = p.dilations[0];
  cols.dilations[1] = p.dilations[1];
  cols.padTop = p.padTop;
  cols.padLeft = p.padLeft;
  cols.oh = p.oh;
  cols.ow = p.ow;
  // A 1x1 stride-1 unpadded conv of NHWC data with whole channel groups of
  // 4 is already the GEMM's left operand.
  g.im2col = !(p.kh == 1 && p.kw == 1 && p.strides[0] == 1 &&
               p.strides[1] == 1 && p.padTop == 0 && p.padBottom == 0 &&
               p.padLeft == 0 && p.padRight == 0 && !p.nchw && p.c == cPad);
  g.m = p.n * p.oh * p.ow;
  g.k = p.kh * p.kw * cPad;
  g.n = p.k;
  g.weightNk = p.filterOhwi; // [kPad, kh, kw, cPad] = [N', K]
  g.batch = p.n;
  g.spatial = p.oh * p.ow;
  g.channelsFirst = p.nchw;
  g.inScale = p.inScale;
  g.wScales = p.wScales;
  g.bias = p.bias;
  g.tail = p.tail;
  g.implementation = g.im2col ? "cublaslt-int8 (im2col)" : "cublaslt-int8";
  if (!ctx)
    return true; // recognition only
  auto kernel = Int8GemmKernel::create(std::move(g), ctx);
  if (!kernel.ok()) {
    (void)cudaGetLastError();
    kernel = Int8ConvKernel::create(p, ctx);
  }
  if (!kernel.ok()) {
    (void)cudaGetLastError();
    return false;
  }
  chain->kernel = std::move(kernel).value();
  return true;
}

// The matmul chain anchored at `o` (a 2-D constant int8 weight), or false.
bool matmulChain(const PlanView &v, int o, DeviceContext *ctx,
                 Int8Chain *chain) {
  const plan::Op &op = v.p.ops(o);
  if (op.inputs_size() != 2 || v.dtypes[op.outputs(0)] != DType::kF32)
    return false;
  OpAttrs attrs(op);
  if (attrs.getBool("transpose_a"))
    return false;
  bool tb = attrs.getBool("transpose_b");
  Dequant da, db;
  if (!findDequantize(v, op.inputs(0), &da) ||
      !findDequantize(v, op.inputs(1), &db) || da.scales.size() != 1)
    return false;
  const Shape &as = v.shapes[da.q], &bs = v.shapes[db.q],
              &ys = v.shapes[op.outputs(0)];
  const int8_t *b = v.int8s(db.q);
  if (!b || as.size() < 2 || bs.size() != 2 || ys.size() != as.size())
    return false;
  int64_t k = as.back(), n = tb ? bs[0] : bs[1];
  int64_t m = product(as) / std::max<int64_t>(k, 1);
  if ((tb ? bs[1] : bs[0]) != k || ys.back() != n || product(ys) != m * n ||
      m == 0 || n == 0 || k == 0)
    return false;
  // cuBLASLt's int8 layouts want leading dimensions that are multiples of
  // 4; the weight's N is padded, the activation's K cannot be.
  if (k % 4 != 0 || !fitsInt(m) || !fitsInt(k) || !fitsInt(n))
    return false;
  int64_t nAxis = tb ? 0 : 1;
  if (db.scales.size() != 1 &&
      (static_cast<int64_t>(db.scales.size()) != n || db.axis != nAxis))
    return false;
  chain->anchor = o;
  chain->input = da.q;
  chain->result = op.outputs(0);
  Tail tail;
  followTail(v, *chain, &tail, true);
  if (v.internal(op.inputs(0)))
    chain->absorbed.push_back(da.op);
  if (v.internal(op.inputs(1)))
    chain->absorbed.push_back(db.op);
  int64_t nPad = roundUp4(n);
  std::vector<int8_t> weightNk(nPad * k, 0);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < k; ++i)
      weightNk[j * k + i] = tb ? b[j * k + i] : b[i * n + j];
  Int8GemmKernel::Config g;
  g.m = m;
  g.k = k;
  g.n = n;
  g.weightNk = std::move(weightNk);
  g.batch = m;
  g.inScale = da.scales[0];
  g.wScales = db.scales;
  g.tail = tail;
  if (!ctx)
    return true; // recognition only
  auto kernel = Int8GemmKernel::create(std::move(g), ctx);
  if (!kernel.ok()) {
    (void)cudaGetLastError();
    return false;
  }
  chain->kernel = std::move(kernel).value();
  return true;
}

// max_pool between a dequantize and a quantize of the same scale (what
// --gopt-quantize writes, as ONNX Runtime's quantizer does): pooled on the
// int8 values (launchInt8MaxPool says why that is exact).
class Int8MaxPoolKernel : public CudaKernel {
public:
  struct Params {
    bool nchw = false;
    int64_t n = 0, c = 0, h = 0, w = 0, kh = 0, kw = 0, sh = 0, sw = 0;
    int64_t padTop = 0, padLeft = 0, oh = 0, ow = 0;
  };
  Int8MaxPoolKernel(const Params &p, DeviceContext *ctx) : p_(p), ctx_(ctx) {}
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    return fromCuda(
        launchInt8MaxPool(static_cast<const int8_t *>(in[0]), p_.nchw, p_.n,
                          p_.c, p_.h, p_.w, p_.kh, p_.kw, p_.sh, p_.sw,
                          p_.padTop, p_.padLeft, p_.oh, p_.ow,
                          static_cast<int8_t *>(out[0]), ctx_->stream),
        "launchInt8MaxPool");
  }
  const char *implementation() const override { return "cuda-int8"; }

private:
  Params p_;
  DeviceContext *ctx_;
};

bool maxPoolChain(const PlanView &v, int o, DeviceContext *ctx,
                  Int8Chain *chain) {
  const plan::Op &op = v.p.ops(o);
  if (op.inputs_size() != 1 || op.outputs_size() != 1 ||
      v.dtypes[op.outputs(0)] != DType::kF32)
    return false;
  Dequant dx;
  // A scale far from 1 could make q * s / s land off q (denormals,
  // overflow); ordinary ones never do.
  if (!findDequantize(v, op.inputs(0), &dx) || dx.scales.size() != 1 ||
      dx.scales[0] < 1e-30f || dx.scales[0] > 1e30f)
    return false;
  OpAttrs attrs(op);
  std::string layout = attrs.getString("data_format");
  const Shape &xs = v.shapes[dx.q], &ys = v.shapes[op.outputs(0)];
  std::vector<int64_t> kernel = attrs.getInts("kernel");
  if ((layout != "NCHW" && layout != "NHWC") || xs.size() != 4 ||
      ys.size() != 4 || kernel.size() != 2 || product(ys) == 0 ||
      product(xs) > INT32_MAX || product(ys) > INT32_MAX)
    return false;
  Int8MaxPoolKernel::Params p;
  p.nchw = layout == "NCHW";
  p.n = xs[0];
  p.c = p.nchw ? xs[1] : xs[3];
  p.h = p.nchw ? xs[2] : xs[1];
  p.w = p.nchw ? xs[3] : xs[2];
  p.kh = kernel[0];
  p.kw = kernel[1];
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  bool ceilMode = attrs.getBool("ceil_mode");
  auto wh = computeWindowDim(p.h, p.kh, strides[0], 1, padding, pads[0],
                             pads[1], ceilMode);
  auto ww = computeWindowDim(p.w, p.kw, strides[1], 1, padding, pads[2],
                             pads[3], ceilMode);
  p.oh = p.nchw ? ys[2] : ys[1];
  p.ow = p.nchw ? ys[3] : ys[2];
  if (!wh.ok() || !ww.ok() || wh->outSize != p.oh || ww->outSize != p.ow ||
      (p.nchw ? ys[1] : ys[3]) != p.c || ys[0] != p.n)
    return false;
  p.sh = strides[0];
  p.sw = strides[1];
  p.padTop = wh->padBefore;
  p.padLeft = ww->padBefore;
  chain->anchor = o;
  chain->input = dx.q;
  chain->result = op.outputs(0);
  float outScale = 0;
  // Exact only when the quantize's scale is the dequantize's.
  if (!takeQuantize(v, *chain, &outScale) || outScale != dx.scales[0])
    return false;
  if (v.internal(op.inputs(0)))
    chain->absorbed.push_back(dx.op);
  if (ctx)
    chain->kernel = std::make_unique<Int8MaxPoolKernel>(p, ctx);
  return true;
}

} // namespace

std::map<int, Int8Chain> planInt8Chains(const plan::Plan &plan,
                                        const std::vector<DType> &dtypes,
                                        const std::vector<Shape> &shapes,
                                        DeviceContext *ctx) {
  std::map<int, Int8Chain> chains;
  // GOPT_CUDA_INT8=0: every quantized op runs by itself (to compare).
  const char *env = std::getenv("GOPT_CUDA_INT8");
  if (env && std::strcmp(env, "0") == 0)
    return chains;
  PlanView v(plan, dtypes, shapes);
  std::vector<bool> taken(plan.ops_size(), false);
  for (int o = 0; o < plan.ops_size(); ++o) {
    const std::string &kind = plan.ops(o).kind();
    Int8Chain chain;
    bool found = kind == "conv2d"     ? convChain(v, o, ctx, &chain)
                 : kind == "matmul"   ? matmulChain(v, o, ctx, &chain)
                 : kind == "max_pool" ? maxPoolChain(v, o, ctx, &chain)
                                      : false;
    if (!found)
      continue;
    bool clash = false;
    for (int a : chain.absorbed)
      clash |= taken[a];
    if (clash)
      continue;
    for (int a : chain.absorbed)
      taken[a] = true;
    chain.implementation =
        chain.kernel ? chain.kernel->implementation() : "recognized";
    chains.emplace(o, std::move(chain));
  }
  // A dequantize of an activation that only chains read, each reading its
  // int8 input directly (as its input or its residual), need not run: the
  // first such chain absorbs it. (ResNet: the dequantize of a block's
  // input feeds the next conv and the block's residual add.)
  std::vector<int> absorbedBy(plan.ops_size(), -1);
  std::vector<bool> boundOutside(plan.tensors_size(), false);
  for (const plan::Binding &b : plan.outputs())
    boundOutside[b.tensor()] = true;
  for (const plan::StateBinding &b : plan.states())
    if (b.has_update_tensor())
      boundOutside[b.update_tensor()] = true;
  for (const auto &[anchor, chain] : chains)
    for (int a : chain.absorbed)
      absorbedBy[a] = anchor;
  for (int o = 0; o < plan.ops_size(); ++o) {
    const plan::Op &dq = plan.ops(o);
    if (dq.kind() != "dequantize" || taken[o] || dq.outputs_size() != 1 ||
        plan.tensors(dq.outputs(0)).kind() != plan::TensorInfo::INTERMEDIATE)
      continue;
    int t = dq.outputs(0), q = dq.inputs(0), owner = -1;
    bool dead = v.users[t] > 0 && !boundOutside[t];
    for (int u = 0; u < plan.ops_size() && dead; ++u) {
      const plan::Op &op = plan.ops(u);
      bool reads = false;
      for (int in : op.inputs())
        reads |= in == t;
      if (!reads)
        continue;
      auto asAnchor = chains.find(u);
      bool onlyFirst = op.inputs(0) == t;
      for (int i = 1; i < op.inputs_size(); ++i)
        onlyFirst &= op.inputs(i) != t;
      if (asAnchor != chains.end() && asAnchor->second.input == q &&
          onlyFirst) {
        owner = owner < 0 ? u : owner;
        continue;
      }
      // The residual add of a chain whose residual is q.
      if (absorbedBy[u] >= 0 && op.kind() == "add" &&
          chains.at(absorbedBy[u]).residual == q) {
        owner = owner < 0 ? absorbedBy[u] : owner;
        continue;
      }
      dead = false;
    }
    if (!dead || owner < 0)
      continue;
    taken[o] = true;
    chains.at(owner).absorbed.push_back(o);
  }
  return chains;
}

bool isConstantDequantize(const plan::Plan &plan, int o) {
  const plan::Op &op = plan.ops(o);
  if (op.kind() != "dequantize" || op.outputs_size() != 1 ||
      plan.tensors(op.outputs(0)).kind() != plan::TensorInfo::INTERMEDIATE)
    return false;
  for (int t : op.inputs())
    if (plan.tensors(t).kind() != plan::TensorInfo::CONSTANT)
      return false;
  return true;
}

} // namespace gopt::runtime::cuda
