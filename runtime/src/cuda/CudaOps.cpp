//===- CudaOps.cpp - CUDA kernels of every op: cuDNN, cuBLASLt, own -------===//
//
// One CudaKernel class per family of ops. Configuration work (descriptors,
// algorithm choice, filter reorders) happens at creation, never in run().
// createCudaKernel dispatches through the table of CudaOps.def, whose rows
// are bound to the handlers at the end of this file.
//
//===----------------------------------------------------------------------===//
#include "AlgoCache.h"
#include "CollectiveOps.h"
#include "CudaCommon.h"
#include "CudnnGraphConv.h"
#include "Kernels.h"
#include "Launch.h"
#include "OpHelpers.h"
#include "RnnOps.h"
#include "TrainingOps.h"
#include "gopt/runtime/LowPrecision.h"
#include "gopt/runtime/OpSchema.h"
#include "gopt/runtime/cuda/CudaSupport.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>

// The legacy (non-graph) cuDNN API is deprecated in cuDNN 9 but present.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace gopt::runtime::cuda {
namespace {

std::string opKind(const CudaKernelConfig &c) { return c.op->kind(); }

StatusOr<cudnnDataType_t> cudnnType(DType t) {
  switch (t) {
  case DType::kF32:
    return CUDNN_DATA_FLOAT;
  case DType::kF16:
    return CUDNN_DATA_HALF;
  case DType::kBF16:
    return CUDNN_DATA_BFLOAT16;
  default:
    return unimplemented("element type ", dtypeName(t));
  }
}

StatusOr<cudaDataType_t> cudaType(DType t) {
  switch (t) {
  case DType::kF32:
    return CUDA_R_32F;
  case DType::kF16:
    return CUDA_R_16F;
  case DType::kBF16:
    return CUDA_R_16BF;
  default:
    return unimplemented("element type ", dtypeName(t));
  }
}

// RAII wrappers of cuDNN descriptors.
struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc() { cudnnCreateTensorDescriptor(&d); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
};
struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc() { cudnnCreateFilterDescriptor(&d); }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
};
struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc() { cudnnCreateConvolutionDescriptor(&d); }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
};
struct ActDesc {
  cudnnActivationDescriptor_t d = nullptr;
  ActDesc() { cudnnCreateActivationDescriptor(&d); }
  ~ActDesc() { cudnnDestroyActivationDescriptor(d); }
};
struct PoolDesc {
  cudnnPoolingDescriptor_t d = nullptr;
  PoolDesc() { cudnnCreatePoolingDescriptor(&d); }
  ~PoolDesc() { cudnnDestroyPoolingDescriptor(d); }
};

// Sets a rank-4 descriptor for logical dims (n, c, h, w) in NCHW or NHWC.
// Logical (n, c, h, w) of a rank-4 shape.
struct Dims4 {
  int64_t n, c, h, w;
};
Dims4 dims4(const Shape &s, bool nchw) {
  return nchw ? Dims4{s[0], s[1], s[2], s[3]} : Dims4{s[0], s[3], s[1], s[2]};
}

UnaryKind activationKind(const std::string &a) {
  if (a == "relu")
    return UnaryKind::kRelu;
  if (a == "relu6")
    return UnaryKind::kRelu6;
  if (a == "sigmoid")
    return UnaryKind::kSigmoid;
  return UnaryKind::kNone;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class BinaryKernel : public CudaKernel {
public:
  static StatusOr<std::unique_ptr<CudaKernel>> create(const CudaKernelConfig &c,
                                                      BinaryKind op) {
    DType t = c.inputTypes[0];
    if (!isNumericKernelType(t))
      return noKernel(c, detail::concat("element type ", dtypeName(t)));
    auto k = std::make_unique<BinaryKernel>();
    k->ctx_ = c.ctx;
    k->op_ = op;
    k->dtype_ = t;
    k->n_ = product(c.outputShapes[0]);
    k->flag_ = c.errorFlag;
    const Shape &out = c.outputShapes[0];
    if (c.inputShapes[0] != out || c.inputShapes[1] != out) {
      GOPT_ASSIGN_OR_RETURN(k->a_, broadcastIndex(out, c.inputShapes[0]));
      GOPT_ASSIGN_OR_RETURN(k->b_, broadcastIndex(out, c.inputShapes[1]));
      k->broadcast_ = true;
    }
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    return fromCuda(launchBinary(op_, dtype_, in[0], broadcast_ ? &a_ : nullptr,
                                 in[1], broadcast_ ? &b_ : nullptr, out[0], n_,
                                 flag_, ctx_->stream),
                    "launchBinary");
  }
  const char *implementation() const override { return "cuda"; }
  std::string flagMessage(int) const override {
    return "integer division by zero";
  }

private:
  DeviceContext *ctx_ = nullptr;
  BinaryKind op_;
  DType dtype_;
  int64_t n_ = 0;
  bool broadcast_ = false;
  StridedIndex a_, b_;
  int *flag_ = nullptr;
};

class UnaryKernel : public CudaKernel {
public:
  UnaryKernel(const CudaKernelConfig &c, UnaryKind op, float p0, float p1)
      : ctx_(c.ctx), op_(op), dtype_(c.inputTypes[0]),
        n_(product(c.outputShapes[0])), p0_(p0), p1_(p1) {}
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    return fromCuda(
        launchUnary(op_, dtype_, in[0], out[0], n_, p0_, p1_, ctx_->stream),
        "launchUnary");
  }
  const char *implementation() const override { return "cuda"; }

private:
  DeviceContext *ctx_;
  UnaryKind op_;
  DType dtype_;
  int64_t n_;
  float p0_, p1_;
};

class BiasAddKernel : public CudaKernel {
public:
  explicit BiasAddKernel(const CudaKernelConfig &c) : ctx_(c.ctx) {
    const Shape &x = c.inputShapes[0];
    int64_t axis = channelAxis(c.attrs().getString("data_format"), x.size());
    dtype_ = c.inputTypes[0];
    n_ = product(x);
    channels_ = x[axis];
    inner_ = product(x, axis + 1);
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    return fromCuda(launchBiasActivation(dtype_, in[0], in[1], out[0], n_,
                                         channels_,
                                         std::max<int64_t>(inner_, 1),
                                         UnaryKind::kNone, 0, 0, ctx_->stream),
                    "launchBiasActivation");
  }
  const char *implementation() const override { return "cuda"; }

private:
  DeviceContext *ctx_;
  DType dtype_;
  int64_t n_, channels_, inner_;
};

class CastKernel : public CudaKernel {
public:
  explicit CastKernel(const CudaKernelConfig &c)
      : ctx_(c.ctx), from_(c.inputTypes[0]), to_(c.outputTypes[0]),
        n_(product(c.inputShapes[0])) {}
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    return fromCuda(launchCast(from_, to_, in[0], out[0], n_, ctx_->stream),
                    "launchCast");
  }
  const char *implementation() const override { return "cuda"; }

private:
  DeviceContext *ctx_;
  DType from_, to_;
  int64_t n_;
};

// reshape, flatten, identity, stop_gradient, inference dropout.
class CopyKernel : public CudaKernel {
public:
  explicit CopyKernel(const CudaKernelConfig &c)
      : ctx_(c.ctx),
        bytes_(product(c.inputShapes[0]) * dtypeSize(c.inputTypes[0])) {}
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    if (!bytes_ || in[0] == out[0])
      return Status::success();
    return fromCuda(cudaMemcpyAsync(out[0], in[0], bytes_,
                                    cudaMemcpyDeviceToDevice, ctx_->stream),
                    "cudaMemcpyAsync");
  }
  const char *implementation() const override { return "cuda"; }

private:
  DeviceContext *ctx_;
  size_t bytes_;
};

class CheckNumericsKernel : public CudaKernel {
public:
  explicit CheckNumericsKernel(const CudaKernelConfig &c)
      : ctx_(c.ctx), dtype_(c.inputTypes[0]), n_(product(c.inputShapes[0])),
        flag_(c.errorFlag), message_(c.attrs().getString("message")) {}
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    if (isFloatKernelType(dtype_))
      GOPT_RETURN_IF_ERROR(
          fromCuda(launchCheckNumerics(dtype_, in[0], n_, flag_, ctx_->stream),
                   "launchCheckNumerics"));
    size_t bytes = n_ * dtypeSize(dtype_);
    if (!bytes || in[0] == out[0])
      return Status::success();
    return fromCuda(cudaMemcpyAsync(out[0], in[0], bytes,
                                    cudaMemcpyDeviceToDevice, ctx_->stream),
                    "cudaMemcpyAsync");
  }
  const char *implementation() const override { return "cuda"; }
  std::string flagMessage(int flag) const override {
    return std::string(flag & 1 ? "NaN" : "Inf") + " found: " + message_;
  }

private:
  DeviceContext *ctx_;
  DType dtype_;
  int64_t n_;
  int *flag_;
  std::string message_;
};

// quantize (f32 -> i8) and dequantize (i8 -> f32), int8 with zero point 0,
// per tensor or per channel along `axis`. The scales (f32, one or one per
// index along `axis`) are read on the device, wherever they live (a
// constant uploaded with the plan, an input or an intermediate), as
// batch_norm reads its per-channel operands. A quantize scale that is not
// finite and positive is found on the device and reported through the error
// flag after the step, as the reference's run-time error.
class QuantizationKernel : public CudaKernel {
public:
  static StatusOr<std::unique_ptr<CudaKernel>> create(const CudaKernelConfig &c,
                                                      bool quantize) {
    const char *kind = quantize ? "quantize" : "dequantize";
    DType from = quantize ? DType::kF32 : DType::kI8;
    DType to = quantize ? DType::kI8 : DType::kF32;
    if (c.inputTypes.size() != 2 || c.outputTypes.size() != 1 ||
        c.inputTypes[0] != from || c.inputTypes[1] != DType::kF32 ||
        c.outputTypes[0] != to)
      return noKernel(c, detail::concat("element types: ", kind, " expects ",
                                        dtypeName(from),
                                        " values, f32 scales and an ",
                                        dtypeName(to), " result"));
    const Shape &x = c.inputShapes[0];
    int64_t rank = x.size();
    int64_t axisAttr = c.attrs().getInt("axis");
    int64_t axis = axisAttr < 0 ? axisAttr + rank : axisAttr;
    if (axis < 0 || axis >= rank)
      return invalidArgument(kind, " axis ", axisAttr,
                             " out of range for rank ", rank);
    auto k = std::make_unique<QuantizationKernel>();
    k->ctx_ = c.ctx;
    k->quantize_ = quantize;
    k->flag_ = c.errorFlag;
    k->n_ = product(x);
    k->channels_ = x[axis];
    k->inner_ = product(x, axis + 1);
    k->numScales_ = product(c.inputShapes[1]);
    if (k->numScales_ != 1 && k->numScales_ != k->channels_)
      return invalidArgument(kind, " expects ", k->channels_,
                             " scales or 1, got ", k->numScales_);
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    const float *scales = static_cast<const float *>(in[1]);
    if (quantize_)
      return fromCuda(launchQuantize(static_cast<const float *>(in[0]), scales,
                                     static_cast<int8_t *>(out[0]), n_,
                                     channels_, inner_, numScales_, flag_,
                                     ctx_->stream),
                      "launchQuantize");
    return fromCuda(launchDequantize(static_cast<const int8_t *>(in[0]), scales,
                                     static_cast<float *>(out[0]), n_,
                                     channels_, inner_, numScales_,
                                     ctx_->stream),
                    "launchDequantize");
  }
  const char *implementation() const override { return "cuda"; }
  std::string flagMessage(int flag) const override {
    return detail::concat("quantize scale ", quantizeBadScaleIndex(flag),
                          " is zero, negative, Inf or NaN, expected a finite "
                          "positive number");
  }

private:
  DeviceContext *ctx_ = nullptr;
  bool quantize_ = true;
  int *flag_ = nullptr;
  int64_t n_ = 0, channels_ = 1, inner_ = 1, numScales_ = 1;
};

// shape: the dims are known when the kernel is created.
class ShapeKernel : public CudaKernel {
public:
  static StatusOr<std::unique_ptr<CudaKernel>>
  create(const CudaKernelConfig &c) {
    auto k = std::make_unique<ShapeKernel>();
    k->ctx_ = c.ctx;
    const Shape &s = c.inputShapes[0];
    k->bytes_ = s.size() * sizeof(int64_t);
    GOPT_RETURN_IF_ERROR(k->dims_.allocate(k->bytes_));
    if (k->bytes_)
      GOPT_CUDA_CHECK(cudaMemcpy(k->dims_.ptr, s.data(), k->bytes_,
                                 cudaMemcpyHostToDevice));
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Status run(const std::vector<const void *> &,
             const std::vector<void *> &out) override {
    if (!bytes_)
      return Status::success();
    return fromCuda(cudaMemcpyAsync(out[0], dims_.ptr, bytes_,
                                    cudaMemcpyDeviceToDevice, ctx_->stream),
                    "cudaMemcpyAsync");
  }
  const char *implementation() const override { return "cuda"; }
  size_t workspaceBytes() const override { return dims_.bytes; }

private:
  DeviceContext *ctx_ = nullptr;
  size_t bytes_ = 0;
  DeviceBuffer dims_;
};

//===----------------------------------------------------------------------===//
// Data movement: transpose, slice, concat, pad
//===----------------------------------------------------------------------===//

class GatherKernel : public CudaKernel {
public:
  GatherKernel(const CudaKernelConfig &c, int64_t base, StridedIndex index)
      : ctx_(c.ctx), elem_(dtypeSize(c.inputTypes[0])), base_(base),
        index_(index), n_(product(c.outputShapes[0])) {}
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    return fromCuda(
        launchGather(elem_, in[0], base_, index_, out[0], n_, ctx_->stream),
        "launchGather");
  }
  const char *implementation() const override { return "cuda"; }

private:
  DeviceContext *ctx_;
  size_t elem_;
  int64_t base_;
  StridedIndex index_;
  int64_t n_;
};

StatusOr<std::unique_ptr<CudaKernel>>
createTranspose(const CudaKernelConfig &c) {
  std::vector<int64_t> perm = c.attrs().getInts("perm");
  GOPT_ASSIGN_OR_RETURN(StridedIndex index,
                        permuteIndex(c.inputShapes[0], perm));
  return std::unique_ptr<CudaKernel>(
      std::make_unique<GatherKernel>(c, 0, index));
}

StatusOr<std::unique_ptr<CudaKernel>> createSlice(const CudaKernelConfig &c) {
  const Shape &shape = c.inputShapes[0];
  size_t rank = shape.size();
  OpAttrs attrs = c.attrs();
  std::vector<int64_t> starts = attrs.getInts("starts");
  std::vector<int64_t> steps = attrs.getInts("steps");
  std::vector<int64_t> inStrides = contiguousStrides(shape), strides(rank);
  int64_t base = 0;
  for (size_t d = 0; d < rank; ++d) {
    // The shape function (shape::inferSliceShape) checked starts >= 0; a
    // backward slice starts at most at the last element (the index is
    // signed, so negative strides read backwards).
    int64_t s = std::min(starts[d], steps[d] < 0 ? shape[d] - 1 : shape[d]);
    base += s * inStrides[d];
    strides[d] = steps[d] * inStrides[d];
  }
  const Shape &out = c.outputShapes[0];
  GOPT_ASSIGN_OR_RETURN(
      StridedIndex index,
      makeIndex(std::vector<int64_t>(out.begin(), out.end()), strides));
  return std::unique_ptr<CudaKernel>(
      std::make_unique<GatherKernel>(c, base, index));
}

// Each operand is a 2-D block (outer rows x its chunk) copied with one
// cudaMemcpy2DAsync into its column range of the output.
class ConcatKernel : public CudaKernel {
public:
  explicit ConcatKernel(const CudaKernelConfig &c) : ctx_(c.ctx) {
    const Shape &out = c.outputShapes[0];
    int64_t axis = c.attrs().getInt("axis");
    if (axis < 0)
      axis += out.size();
    outer_ = product(out, 0, axis);
    size_t elem = dtypeSize(c.outputTypes[0]);
    rowBytes_ = outer_ ? product(out) / outer_ * elem : 0;
    for (const Shape &s : c.inputShapes)
      chunks_.push_back(outer_ ? product(s) / outer_ * elem : 0);
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    size_t column = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      if (chunks_[i] && outer_)
        GOPT_CUDA_CHECK(cudaMemcpy2DAsync(
            static_cast<char *>(out[0]) + column, rowBytes_, in[i], chunks_[i],
            chunks_[i], outer_, cudaMemcpyDeviceToDevice, ctx_->stream));
      column += chunks_[i];
    }
    return Status::success();
  }
  const char *implementation() const override { return "cuda"; }

private:
  DeviceContext *ctx_;
  int64_t outer_ = 0;
  size_t rowBytes_ = 0;
  std::vector<size_t> chunks_;
};

class PadKernel : public CudaKernel {
public:
  static StatusOr<std::unique_ptr<CudaKernel>>
  create(const CudaKernelConfig &c) {
    const Shape &x = c.inputShapes[0];
    if (x.size() > static_cast<size_t>(kMaxRank))
      return noKernel(c, detail::concat("rank ", x.size(), " > ", kMaxRank));
    OpAttrs attrs = c.attrs();
    auto k = std::make_unique<PadKernel>();
    k->ctx_ = c.ctx;
    std::vector<int64_t> pads = attrs.getInts("pads");
    std::string mode = attrs.getString("mode");
    if (mode == "wrap")
      return noKernel(c, "wrap padding");
    k->mode_ = mode == "edge"      ? PadMode::kEdge
               : mode == "reflect" ? PadMode::kReflect
                                   : PadMode::kConstant;
    encodeElement(c.inputTypes[0], attrs.getFloat("value"), k->fill_);
    k->elem_ = dtypeSize(c.inputTypes[0]);
    std::vector<int64_t> strides = contiguousStrides(x);
    k->index_.rank = static_cast<int>(x.size());
    for (size_t d = 0; d < x.size(); ++d) {
      k->index_.dims[d] = c.outputShapes[0][d];
      k->index_.strides[d] = strides[d];
      k->inDims_[d] = x[d];
      k->before_[d] = pads[2 * d];
    }
    k->n_ = product(c.outputShapes[0]);
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    return fromCuda(launchPad(elem_, in[0], inDims_, before_, index_, mode_,
                              fill_, out[0], n_, ctx_->stream),
                    "launchPad");
  }
  const char *implementation() const override { return "cuda"; }

private:
  DeviceContext *ctx_ = nullptr;
  size_t elem_ = 0;
  PadMode mode_ = PadMode::kConstant;
  char fill_[8] = {0};
  StridedIndex index_;
  int64_t inDims_[kMaxRank] = {}, before_[kMaxRank] = {};
  int64_t n_ = 0;
};

//===----------------------------------------------------------------------===//
// Reductions and global average pooling
//===----------------------------------------------------------------------===//

class ReduceKernel : public CudaKernel {
public:
  // Reduces the dims of `x` where `reduced` is set.
  static StatusOr<std::unique_ptr<CudaKernel>>
  create(const CudaKernelConfig &c, ReduceKind op,
         const std::vector<bool> &reduced) {
    const Shape &x = c.inputShapes[0];
    if (!isNumericKernelType(c.inputTypes[0]))
      return noKernel(
          c, detail::concat("element type ", dtypeName(c.inputTypes[0])));
    std::vector<int64_t> strides = contiguousStrides(x);
    std::vector<int64_t> od, os, rd, rs;
    for (size_t d = 0; d < x.size(); ++d) {
      (reduced[d] ? rd : od).push_back(x[d]);
      (reduced[d] ? rs : os).push_back(strides[d]);
    }
    auto k = std::make_unique<ReduceKernel>();
    k->ctx_ = c.ctx;
    k->op_ = op;
    k->dtype_ = c.inputTypes[0];
    GOPT_ASSIGN_OR_RETURN(k->outIndex_, makeIndex(od, os));
    GOPT_ASSIGN_OR_RETURN(k->reduceIndex_, makeIndex(rd, rs));
    k->empty_ = product(x) == 0;
    k->outBytes_ = product(c.outputShapes[0]) * dtypeSize(k->dtype_);
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    if (empty_) // the reference's identity for empty reductions: 0
      return fromCuda(cudaMemsetAsync(out[0], 0, outBytes_, ctx_->stream),
                      "cudaMemsetAsync");
    return fromCuda(launchReduce(op_, dtype_, in[0], out[0], outIndex_,
                                 reduceIndex_, ctx_->stream),
                    "launchReduce");
  }
  const char *implementation() const override { return "cuda"; }

private:
  DeviceContext *ctx_ = nullptr;
  ReduceKind op_ = ReduceKind::kSum;
  DType dtype_ = DType::kF32;
  StridedIndex outIndex_, reduceIndex_;
  bool empty_ = false;
  size_t outBytes_ = 0;
};

StatusOr<std::unique_ptr<CudaKernel>> createReduce(const CudaKernelConfig &c,
                                                   ReduceKind op) {
  size_t rank = c.inputShapes[0].size();
  std::vector<int64_t> axes = c.attrs().getInts("axes");
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes)
    reduced[a < 0 ? a + rank : a] = true;
  return ReduceKernel::create(c, op, reduced);
}

StatusOr<std::unique_ptr<CudaKernel>>
createGlobalAvgPool(const CudaKernelConfig &c) {
  if (!isFloatKernelType(c.inputTypes[0]))
    return noKernel(
        c, detail::concat("element type ", dtypeName(c.inputTypes[0])));
  bool nchw = c.attrs().getString("data_format") == "NCHW";
  std::vector<bool> reduced = nchw
                                  ? std::vector<bool>{false, false, true, true}
                                  : std::vector<bool>{false, true, true, false};
  return ReduceKernel::create(c, ReduceKind::kMean, reduced);
}

//===----------------------------------------------------------------------===//
// Softmax (cuDNN)
//===----------------------------------------------------------------------===//

class SoftmaxKernel : public CudaKernel {
public:
  static StatusOr<std::unique_ptr<CudaKernel>> create(const CudaKernelConfig &c,
                                                      bool log) {
    DType t = c.inputTypes[0];
    if (t != DType::kF32 && t != DType::kF16)
      return noKernel(c, detail::concat("element type ", dtypeName(t)));
    const Shape &x = c.inputShapes[0];
    int64_t axis = c.attrs().getInt("axis");
    if (axis < 0)
      axis += x.size();
    auto k = std::make_unique<SoftmaxKernel>();
    k->ctx_ = c.ctx;
    k->log_ = log;
    GOPT_ASSIGN_OR_RETURN(cudnnDataType_t type, cudnnType(t));
    GOPT_RETURN_IF_ERROR(set4d(k->desc_.d, true, type, product(x, 0, axis),
                               x[axis], product(x, axis + 1), 1));
    k->empty_ = product(x) == 0;
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    if (empty_)
      return Status::success();
    float alpha = 1.f, beta = 0.f;
    GOPT_CUDNN_CHECK(cudnnSoftmaxForward(
        ctx_->cudnn, log_ ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
        CUDNN_SOFTMAX_MODE_CHANNEL, &alpha, desc_.d, in[0], &beta, desc_.d,
        out[0]));
    return Status::success();
  }
  const char *implementation() const override { return "cudnn"; }

private:
  DeviceContext *ctx_ = nullptr;
  bool log_ = false;
  bool empty_ = false;
  TensorDesc desc_;
};

//===----------------------------------------------------------------------===//
// Pooling: cuDNN when its symmetric-padding, floor-mode arithmetic gives the
// same windows, gopt's own kernel otherwise (asymmetric SAME padding,
// ceil_mode, bf16).
//===----------------------------------------------------------------------===//

class PoolKernel : public CudaKernel {
public:
  static StatusOr<std::unique_ptr<CudaKernel>> create(const CudaKernelConfig &c,
                                                      bool isMax) {
    DType t = c.inputTypes[0];
    if (!isFloatKernelType(t))
      return noKernel(c, detail::concat("element type ", dtypeName(t)));
    OpAttrs attrs = c.attrs();
    auto k = std::make_unique<PoolKernel>();
    k->ctx_ = c.ctx;
    k->dtype_ = t;
    PoolParams &p = k->params_;
    p.nchw = attrs.getString("data_format") == "NCHW";
    p.isMax = isMax;
    p.countIncludePad = attrs.getBool("count_include_pad");
    Dims4 x = dims4(c.inputShapes[0], p.nchw);
    Dims4 y = dims4(c.outputShapes[0], p.nchw);
    std::vector<int64_t> kernel = attrs.getInts("kernel");
    std::vector<int64_t> strides = attrs.getWindowInts("strides");
    std::vector<int64_t> pads = attrs.getWindowInts("pads");
    std::string padding = attrs.getString("padding");
    bool ceilMode = attrs.getBool("ceil_mode");
    GOPT_ASSIGN_OR_RETURN(
        WindowDim wh, computeWindowDim(x.h, kernel[0], strides[0], 1, padding,
                                       pads[0], pads[1], ceilMode));
    GOPT_ASSIGN_OR_RETURN(
        WindowDim ww, computeWindowDim(x.w, kernel[1], strides[1], 1, padding,
                                       pads[2], pads[3], ceilMode));
    p.n = x.n;
    p.c = x.c;
    p.h = x.h;
    p.w = x.w;
    p.oh = y.h;
    p.ow = y.w;
    p.kh = kernel[0];
    p.kw = kernel[1];
    p.sh = strides[0];
    p.sw = strides[1];
    p.padTop = wh.padBefore;
    p.padBottom = wh.padAfter;
    p.padLeft = ww.padBefore;
    p.padRight = ww.padAfter;
    bool symmetric = wh.padBefore == wh.padAfter && ww.padBefore == ww.padAfter;
    bool floorMatches =
        (x.h + 2 * wh.padBefore - kernel[0]) / strides[0] + 1 == y.h &&
        (x.w + 2 * ww.padBefore - kernel[1]) / strides[1] + 1 == y.w;
    // cuDNN requires padding smaller than the window.
    bool padsFit = wh.padBefore < kernel[0] && ww.padBefore < kernel[1];
    k->useCudnn_ = (t == DType::kF32 || t == DType::kF16) && symmetric &&
                   floorMatches && padsFit && product(c.inputShapes[0]) > 0 &&
                   fitsInt(kernel[0]) && fitsInt(kernel[1]);
    if (k->useCudnn_) {
      GOPT_ASSIGN_OR_RETURN(cudnnDataType_t type, cudnnType(t));
      GOPT_RETURN_IF_ERROR(set4d(k->x_.d, p.nchw, type, x.n, x.c, x.h, x.w));
      GOPT_RETURN_IF_ERROR(set4d(k->y_.d, p.nchw, type, y.n, y.c, y.h, y.w));
      cudnnPoolingMode_t mode =
          isMax ? CUDNN_POOLING_MAX
                : (p.countIncludePad
                       ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                       : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
      GOPT_CUDNN_CHECK(cudnnSetPooling2dDescriptor(
          k->pool_.d, mode, CUDNN_PROPAGATE_NAN, int(kernel[0]), int(kernel[1]),
          int(wh.padBefore), int(ww.padBefore), int(strides[0]),
          int(strides[1])));
    }
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    if (!useCudnn_)
      return fromCuda(launchPool(dtype_, params_, in[0], out[0], ctx_->stream),
                      "launchPool");
    float alpha = 1.f, beta = 0.f;
    GOPT_CUDNN_CHECK(cudnnPoolingForward(ctx_->cudnn, pool_.d, &alpha, x_.d,
                                         in[0], &beta, y_.d, out[0]));
    return Status::success();
  }
  const char *implementation() const override {
    return useCudnn_ ? "cudnn" : "cuda";
  }

private:
  DeviceContext *ctx_ = nullptr;
  DType dtype_ = DType::kF32;
  PoolParams params_;
  bool useCudnn_ = false;
  TensorDesc x_, y_;
  PoolDesc pool_;
};

//===----------------------------------------------------------------------===//
// Batch norm (inference): cuDNN for f32 rank-4, own kernel otherwise.
//===----------------------------------------------------------------------===//

class BatchNormKernel : public CudaKernel {
public:
  static StatusOr<std::unique_ptr<CudaKernel>>
  create(const CudaKernelConfig &c) {
    OpAttrs attrs = c.attrs();
    if (attrs.getBool("training"))
      return internalError("training batch_norm reached the inference kernel");
    DType t = c.inputTypes[0];
    if (!isFloatKernelType(t))
      return noKernel(c, detail::concat("element type ", dtypeName(t)));
    auto k = std::make_unique<BatchNormKernel>();
    k->ctx_ = c.ctx;
    k->dtype_ = t;
    k->eps_ = attrs.getFloat("epsilon");
    const Shape &x = c.inputShapes[0];
    bool nchw = attrs.getString("data_format") == "NCHW";
    int64_t axis = channelAxis(nchw ? "NCHW" : "NHWC", x.size());
    k->n_ = product(x);
    k->channels_ = x[axis];
    k->inner_ = std::max<int64_t>(product(x, axis + 1), 1);
    k->useCudnn_ = t == DType::kF32 && x.size() == 4 && k->n_ > 0 &&
                   k->eps_ >= CUDNN_BN_MIN_EPSILON;
    if (k->useCudnn_) {
      Dims4 d = dims4(x, nchw);
      GOPT_RETURN_IF_ERROR(
          set4d(k->x_.d, nchw, CUDNN_DATA_FLOAT, d.n, d.c, d.h, d.w));
      GOPT_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(k->param_.d, k->x_.d,
                                                     CUDNN_BATCHNORM_SPATIAL));
    }
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    if (!useCudnn_)
      return fromCuda(
          launchBatchNormInference(dtype_, in[0], in[1], in[2], in[3], in[4],
                                   out[0], n_, channels_, inner_,
                                   static_cast<float>(eps_), ctx_->stream),
          "launchBatchNormInference");
    float alpha = 1.f, beta = 0.f;
    GOPT_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
        ctx_->cudnn, CUDNN_BATCHNORM_SPATIAL, &alpha, &beta, x_.d, in[0], x_.d,
        out[0], param_.d, in[1], in[2], in[3], in[4], eps_));
    return Status::success();
  }
  const char *implementation() const override {
    return useCudnn_ ? "cudnn" : "cuda";
  }

private:
  DeviceContext *ctx_ = nullptr;
  DType dtype_ = DType::kF32;
  double eps_ = 1e-3;
  int64_t n_ = 0, channels_ = 1, inner_ = 1;
  bool useCudnn_ = false;
  TensorDesc x_, param_;
};

//===----------------------------------------------------------------------===//
// conv2d (cuDNN): filters reordered to cuDNN's layout once when constant;
// asymmetric padding applied by a pad kernel; bias + relu fused through
// cudnnConvolutionBiasActivationForward, other activations by a bias +
// activation kernel.
//===----------------------------------------------------------------------===//

constexpr size_t kMatmulWorkspace = 32u << 20;

// A 1x1, stride-1, unpadded, ungrouped convolution is a matrix product:
// NHWC y[P, Cout] = x[P, Cin] W^T over all P = N*H*W positions, NCHW
// y[n] [Cout, HW] = W x[n] per image (one strided batched call). cuBLASLt
// runs it when it times faster than cuDNN's chosen algorithm: on an H100
// cuDNN's legacy f16 NHWC algorithms took 0.14 ms for each of MobileNetV2's
// 7x7 pointwise convolutions (15-40 MFLOP), at batch 1 and at batch 32.
// Row-major products are the column-major transposed ones (as matmul's).
class PointwiseConvGemm {
public:
  ~PointwiseConvGemm() {
    if (desc_)
      cublasLtMatmulDescDestroy(desc_);
    for (cublasLtMatrixLayout_t l : {la_, lb_, lc_})
      if (l)
        cublasLtMatrixLayoutDestroy(l);
  }
  // `bias` puts the bias (NHWC only: it runs along the column-major
  // result's rows) and `relu` the relu into cuBLASLt's epilogue.
  Status init(DeviceContext *ctx, DType t, bool nchw, int64_t n, int64_t hw,
              int64_t cin, int64_t cout, bool bias, bool relu) {
    ctx_ = ctx;
    bias_ = bias;
    GOPT_ASSIGN_OR_RETURN(cudaDataType_t type, cudaType(t));
    cublasComputeType_t compute = t == DType::kF32 && ctx->tf32Conv
                                      ? CUBLAS_COMPUTE_32F_FAST_TF32
                                      : CUBLAS_COMPUTE_32F;
    GOPT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F));
    // NHWC: D[Cout, P] = W^T(stored [Cin, Cout] column-major) x^T([Cin, P]).
    // NCHW: D[HW, Cout] = x[n]^T([HW, Cin]) W^T([Cin, Cout]).
    cublasOperation_t opA = nchw ? CUBLAS_OP_N : CUBLAS_OP_T;
    cublasOperation_t opB = CUBLAS_OP_N;
    GOPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        desc_, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
    GOPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        desc_, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
    if (bias || relu) {
      cublasLtEpilogue_t epi =
          bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
               : CUBLASLT_EPILOGUE_RELU;
      GOPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
      if (bias)
        GOPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
            desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof(type)));
    }
    if (nchw) {
      // "A" = x[n] ([HW, Cin], ld HW), "B" = W ([Cin, Cout], ld Cin).
      GOPT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la_, type, hw, cin, hw));
      GOPT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb_, type, cin, cout, cin));
      GOPT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc_, type, hw, cout, hw));
      if (n > 1) {
        if (!fitsInt(n))
          return unimplemented("too many images for one cuBLASLt call");
        int32_t count = static_cast<int32_t>(n);
        int64_t zero = 0, sx = cin * hw, sy = cout * hw;
        for (auto [layout, stride] :
             {std::pair{la_, sx}, std::pair{lb_, zero}, std::pair{lc_, sy}}) {
          GOPT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
              layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
              sizeof(count)));
          GOPT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
              layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
              sizeof(stride)));
        }
      }
    } else {
      // "A" = W ([Cin, Cout], ld Cin, transposed), "B" = x ([Cin, P]).
      int64_t positions = n * hw;
      GOPT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la_, type, cin, cout, cin));
      GOPT_CUBLAS_CHECK(
          cublasLtMatrixLayoutCreate(&lb_, type, cin, positions, cin));
      GOPT_CUBLAS_CHECK(
          cublasLtMatrixLayoutCreate(&lc_, type, cout, positions, cout));
    }
    nchw_ = nchw;
    cublasLtMatmulPreference_t pref = nullptr;
    GOPT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    size_t ws = kMatmulWorkspace;
    cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    cublasLtMatmulHeuristicResult_t result;
    int returned = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
        ctx->cublasLt, desc_, la_, lb_, lc_, lc_, pref, 1, &result, &returned);
    cublasLtMatmulPreferenceDestroy(pref);
    GOPT_RETURN_IF_ERROR(fromCublas(st, "cublasLtMatmulAlgoGetHeuristic"));
    if (returned == 0)
      return unimplemented("cuBLASLt has no algorithm for this 1x1 conv");
    algo_ = result.algo;
    workspace_ = result.workspaceSize;
    return ctx->reserveWorkspace(workspace_);
  }

  Status run(const void *x, const void *w, const void *bias, void *y) {
    if (bias_)
      GOPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    float alpha = 1.f, beta = 0.f;
    const void *a = nchw_ ? x : w, *b = nchw_ ? w : x;
    GOPT_CUBLAS_CHECK(cublasLtMatmul(
        ctx_->cublasLt, desc_, &alpha, a, la_, b, lb_, &beta, y, lc_, y, lc_,
        &algo_, ctx_->workspace.ptr, workspace_, ctx_->stream));
    return Status::success();
  }

private:
  DeviceContext *ctx_ = nullptr;
  bool nchw_ = false, bias_ = false;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  cublasLtMatmulAlgo_t algo_;
  size_t workspace_ = 0;
};

class ConvKernel : public CudaKernel {
public:
  static StatusOr<std::unique_ptr<CudaKernel>>
  create(const CudaKernelConfig &c);
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override;
  const char *implementation() const override {
    return gemm_        ? "cublaslt (1x1)"
           : depthwise_ ? "cuda (depthwise)"
           : graph_     ? "cudnn (graph)"
                        : "cudnn";
  }
  size_t workspaceBytes() const override {
    return filter_.bytes + padded_.bytes + zeroBias_.bytes + castedBias_.bytes;
  }

private:
  Status chooseAlgorithm(const std::string &key);
  Status chooseGraph(const std::string &key, const GraphConvShape &shape);
  StatusOr<bool>
  beatsCudnn(const std::string &key, const char *suffix, const char *envVar,
             const std::function<Status(const void *, const void *,
                                        const void *, void *)> &candidate);
  Status choosePointwiseGemm(const std::string &key, int64_t n, int64_t hw,
                             int64_t cin, int64_t cout);
  Status chooseDepthwise(const std::string &key,
                         const DepthwiseConvShape &shape);
  Status enqueue(const void *x, const void *w, const void *bias, void *y);
  Status epilogue(void *y, const void *bias, bool biasDone, bool reluDone);

  DeviceContext *ctx_ = nullptr;
  DType dtype_ = DType::kF32;
  bool nchw_ = true;
  TensorDesc x_, y_, bias_;
  FilterDesc w_;
  ConvDesc conv_;
  ActDesc act_;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t algoWorkspace_ = 0;
  // Filter reorder (when the plan's layout is not cuDNN's).
  bool reorderFilter_ = false;
  bool filterIsConstant_ = false;
  StridedIndex filterIndex_;
  int64_t filterCount_ = 0;
  DeviceBuffer filter_;
  // Explicit padding of the input (asymmetric pads).
  bool prePad_ = false;
  int64_t xDims_[4] = {}, padBefore_[4] = {};
  StridedIndex padIndex_;
  int64_t paddedCount_ = 0;
  DeviceBuffer padded_;
  bool hasBias_ = false;
  // An f32 bias of f16/bf16 data, converted into castedBias_.
  bool castBias_ = false, biasIsConstant_ = false;
  DeviceBuffer castedBias_;
  bool fused_ = false;
  DeviceBuffer zeroBias_;
  UnaryKind act_kind_ = UnaryKind::kNone;
  int64_t yCount_ = 0, channels_ = 0, inner_ = 1;
  // A 1x1 convolution run as a matrix product (PointwiseConvGemm), with the
  // bias in its epilogue when gemmBias_ and relu when gemmRelu_.
  std::unique_ptr<PointwiseConvGemm> gemm_;
  bool gemmBias_ = false, gemmRelu_ = false;
  // The convolution on cuDNN's graph API (with the bias and relu when an
  // engine fuses them).
  std::unique_ptr<CudnnGraphConv> graph_;
  // A depthwise convolution on gopt's kernel (bias and activation fused).
  bool depthwise_ = false;
  DepthwiseConvShape depthwiseShape_;
  int64_t xCount_ = 0;
};

StatusOr<std::unique_ptr<CudaKernel>>
ConvKernel::create(const CudaKernelConfig &c) {
  DType t = c.inputTypes[0];
  if (!isFloatKernelType(t))
    return noKernel(c, detail::concat("element type ", dtypeName(t)));
  // cuDNN and the bias kernel take the bias in the data's type; an f32 bias
  // of f16/bf16 data (which plans may carry, as the CPU backend runs them)
  // is converted on the device: once when constant, else every run.
  bool castBias = c.inputTypes.size() > 2 && c.inputTypes[2] != t;
  if (castBias && c.inputTypes[2] != DType::kF32)
    return noKernel(c,
                    detail::concat("bias of type ", dtypeName(c.inputTypes[2]),
                                   " with ", dtypeName(t), " data"));
  OpAttrs attrs = c.attrs();
  auto k = std::make_unique<ConvKernel>();
  k->ctx_ = c.ctx;
  k->dtype_ = t;
  k->nchw_ = attrs.getString("data_format") == "NCHW";
  bool oihw = attrs.getString("filter_format") == "OIHW";
  const Shape &xs = c.inputShapes[0], &ws = c.inputShapes[1];
  Dims4 x = dims4(xs, k->nchw_), y = dims4(c.outputShapes[0], k->nchw_);
  int64_t kh = oihw ? ws[2] : ws[0], kw = oihw ? ws[3] : ws[1];
  int64_t cinG = oihw ? ws[1] : ws[2], cout = oihw ? ws[0] : ws[3];
  int64_t groups = attrs.getInt("groups");
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> dil = attrs.getWindowInts("dilations");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  GOPT_ASSIGN_OR_RETURN(WindowDim wh,
                        computeWindowDim(x.h, kh, strides[0], dil[0], padding,
                                         pads[0], pads[1], false));
  GOPT_ASSIGN_OR_RETURN(WindowDim ww,
                        computeWindowDim(x.w, kw, strides[1], dil[1], padding,
                                         pads[2], pads[3], false));
  if (product(xs) == 0 || product(c.outputShapes[0]) == 0 || product(ws) == 0)
    return noKernel(c, "empty tensors");
  GOPT_ASSIGN_OR_RETURN(cudnnDataType_t type, cudnnType(t));
  k->yCount_ = product(c.outputShapes[0]);
  k->channels_ = cout;
  k->inner_ = k->nchw_ ? y.h * y.w : 1;

  // Filter: cuDNN takes KCRS (= OIHW) with NCHW data, KRSC with NHWC.
  std::vector<int64_t> perm;
  if (k->nchw_ && !oihw)
    perm = {3, 2, 0, 1}; // HWIO -> OIHW
  else if (!k->nchw_ && !oihw)
    perm = {3, 0, 1, 2}; // HWIO -> OHWI
  else if (!k->nchw_ && oihw)
    perm = {0, 2, 3, 1}; // OIHW -> OHWI
  k->filterCount_ = product(ws);
  if (!perm.empty()) {
    k->reorderFilter_ = true;
    GOPT_ASSIGN_OR_RETURN(k->filterIndex_, permuteIndex(ws, perm));
    GOPT_RETURN_IF_ERROR(k->filter_.allocate(k->filterCount_ * dtypeSize(t)));
    if (c.constantInputs[1]) {
      k->filterIsConstant_ = true;
      GOPT_RETURN_IF_ERROR(fromCuda(
          launchGather(dtypeSize(t), c.constantInputs[1], 0, k->filterIndex_,
                       k->filter_.ptr, k->filterCount_, c.ctx->stream),
          "launchGather (filter reorder)"));
    }
  }
  if (!fitsInt(cout) || !fitsInt(cinG) || !fitsInt(kh) || !fitsInt(kw))
    return noKernel(c, "filter too large for cuDNN");
  GOPT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(
      k->w_.d, type, k->nchw_ ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC,
      int(cout), int(cinG), int(kh), int(kw)));

  // Padding: symmetric in the descriptor, otherwise an explicit pad first.
  int64_t ph = wh.padBefore, pw = ww.padBefore;
  int64_t inH = x.h, inW = x.w;
  if (wh.padBefore != wh.padAfter || ww.padBefore != ww.padAfter) {
    k->prePad_ = true;
    inH = x.h + wh.padBefore + wh.padAfter;
    inW = x.w + ww.padBefore + ww.padAfter;
    Shape padded =
        k->nchw_ ? Shape{x.n, x.c, inH, inW} : Shape{x.n, inH, inW, x.c};
    std::vector<int64_t> inStrides = contiguousStrides(xs);
    k->padIndex_.rank = 4;
    for (int d = 0; d < 4; ++d) {
      k->padIndex_.dims[d] = padded[d];
      k->padIndex_.strides[d] = inStrides[d];
      k->xDims_[d] = xs[d];
    }
    int hAxis = k->nchw_ ? 2 : 1;
    k->padBefore_[hAxis] = wh.padBefore;
    k->padBefore_[hAxis + 1] = ww.padBefore;
    k->paddedCount_ = product(padded);
    GOPT_RETURN_IF_ERROR(k->padded_.allocate(k->paddedCount_ * dtypeSize(t)));
    ph = pw = 0;
  }
  GOPT_RETURN_IF_ERROR(set4d(k->x_.d, k->nchw_, type, x.n, x.c, inH, inW));
  GOPT_RETURN_IF_ERROR(set4d(k->y_.d, k->nchw_, type, y.n, y.c, y.h, y.w));
  GOPT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      k->conv_.d, int(ph), int(pw), int(strides[0]), int(strides[1]),
      int(dil[0]), int(dil[1]), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  GOPT_CUDNN_CHECK(cudnnSetConvolutionGroupCount(k->conv_.d, int(groups)));
  cudnnMathType_t math =
      t == DType::kF32 ? (c.ctx->tf32Conv ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH)
                       : CUDNN_TENSOR_OP_MATH;
  GOPT_CUDNN_CHECK(cudnnSetConvolutionMathType(k->conv_.d, math));
  int outDims[4];
  GOPT_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(
      k->conv_.d, k->x_.d, k->w_.d, &outDims[0], &outDims[1], &outDims[2],
      &outDims[3]));
  if (outDims[0] != y.n || outDims[1] != y.c || outDims[2] != y.h ||
      outDims[3] != y.w)
    return internalError("cuDNN computes output [", outDims[0], ",", outDims[1],
                         ",", outDims[2], ",", outDims[3],
                         "] (NCHW), the op has ",
                         shapeToString(c.outputShapes[0]));

  k->hasBias_ = c.inputShapes.size() > 2;
  if (castBias) {
    k->castBias_ = true;
    GOPT_RETURN_IF_ERROR(k->castedBias_.allocate(cout * dtypeSize(t)));
    if (c.constantInputs[2]) {
      k->biasIsConstant_ = true;
      GOPT_RETURN_IF_ERROR(
          fromCuda(launchCast(DType::kF32, t, c.constantInputs[2],
                              k->castedBias_.ptr, cout, c.ctx->stream),
                   "launchCast (f32 bias)"));
    }
  }
  k->act_kind_ = activationKind(attrs.getString("activation"));
  k->fused_ = k->hasBias_ && k->act_kind_ == UnaryKind::kRelu;
  if (k->fused_) {
    GOPT_RETURN_IF_ERROR(set4d(k->bias_.d, true, type, 1, cout, 1, 1));
    GOPT_CUDNN_CHECK(cudnnSetActivationDescriptor(
        k->act_.d, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
  }

  std::string key = makeAlgoKey(
      c.ctx->deviceName,
      {"conv2d", dtypeName(t), k->nchw_ ? "NCHW" : "NHWC",
       detail::concat(x.n, ",", x.c, ",", inH, ",", inW),
       detail::concat(cout, ",", cinG, ",", kh, ",", kw),
       detail::concat(ph, ",", pw, ",", strides[0], ",", strides[1], ",",
                      dil[0], ",", dil[1], ",g", groups),
       detail::concat("math", int(math), k->fused_ ? ",fused" : "")});
  GOPT_RETURN_IF_ERROR(k->chooseAlgorithm(key));
  GOPT_RETURN_IF_ERROR(c.ctx->reserveWorkspace(k->algoWorkspace_));
  k->xCount_ = x.n * x.c * inH * inW;
  {
    GraphConvShape shape;
    shape.dataType = type;
    shape.nchw = k->nchw_;
    shape.n = x.n, shape.c = x.c, shape.h = inH, shape.w = inW;
    shape.k = cout, shape.cPerGroup = cinG, shape.r = kh, shape.s = kw;
    shape.outH = y.h, shape.outW = y.w;
    shape.padH = ph, shape.padW = pw;
    shape.strideH = strides[0], shape.strideW = strides[1];
    shape.dilH = dil[0], shape.dilW = dil[1];
    shape.bias = k->hasBias_;
    shape.relu = k->act_kind_ == UnaryKind::kRelu;
    GOPT_RETURN_IF_ERROR(k->chooseGraph(key, shape));
  }
  if (kh == 1 && kw == 1 && strides[0] == 1 && strides[1] == 1 && groups == 1 &&
      !k->prePad_ && ph == 0 && pw == 0)
    GOPT_RETURN_IF_ERROR(
        k->choosePointwiseGemm(key, x.n, x.h * x.w, cinG, cout));
  if (cinG == 1 && groups == x.c && cout == x.c) {
    DepthwiseConvShape shape;
    shape.n = x.n;
    shape.channels = x.c;
    shape.h = inH;
    shape.w = inW;
    shape.outH = y.h;
    shape.outW = y.w;
    shape.kh = kh;
    shape.kw = kw;
    shape.strideH = strides[0];
    shape.strideW = strides[1];
    shape.padH = ph;
    shape.padW = pw;
    shape.dilationH = dil[0];
    shape.dilationW = dil[1];
    shape.nchw = k->nchw_;
    GOPT_RETURN_IF_ERROR(k->chooseDepthwise(key, shape));
  }
  return std::unique_ptr<CudaKernel>(std::move(k));
}

// Whether `candidate` (the op's computation on (x, w, bias, y)) replaces
// cuDNN's chosen algorithm: `envVar`=0 says never, =1 always; otherwise both
// are timed once per shape on scratch buffers of the op's sizes (cuDNN's
// without the bias, which favours it) and the choice is cached beside
// cuDNN's algorithm under `key` + `suffix`.
StatusOr<bool> ConvKernel::beatsCudnn(
    const std::string &key, const char *suffix, const char *envVar,
    const std::function<Status(const void *, const void *, const void *,
                               void *)> &candidate) {
  const char *env = std::getenv(envVar);
  std::string mode = env ? env : "";
  if (mode == "0" || mode == "1")
    return mode == "1";
  const std::string choiceKey = key + suffix;
  AlgoCache &cache = AlgoCache::global();
  AlgoChoice choice;
  if (cache.lookup(choiceKey, &choice))
    return choice.algo == 1;
  size_t elem = dtypeSize(dtype_);
  DeviceBuffer xs, ws, ys, bs;
  GOPT_RETURN_IF_ERROR(xs.allocate(xCount_ * elem));
  GOPT_RETURN_IF_ERROR(ws.allocate(filterCount_ * elem));
  GOPT_RETURN_IF_ERROR(ys.allocate(yCount_ * elem));
  GOPT_RETURN_IF_ERROR(bs.allocate(channels_ * elem));
  for (DeviceBuffer *b : {&xs, &ws, &ys, &bs})
    GOPT_RETURN_IF_ERROR(fromCuda(
        cudaMemsetAsync(b->ptr, 0, b->bytes, ctx_->stream), "cudaMemsetAsync"));
  float alpha = 1.f, beta = 0.f;
  auto runCudnn = [&]() -> Status {
    if (graph_)
      return graph_->run(xs.ptr, ws.ptr, bs.ptr, ys.ptr, ctx_->workspace.ptr);
    GOPT_CUDNN_CHECK(cudnnConvolutionForward(
        ctx_->cudnn, &alpha, x_.d, xs.ptr, w_.d, ws.ptr, conv_.d, algo_,
        ctx_->workspace.ptr, algoWorkspace_, &beta, y_.d, ys.ptr));
    return Status::success();
  };
  auto runOwn = [&] { return candidate(xs.ptr, ws.ptr, bs.ptr, ys.ptr); };
  // Alternating rounds, the best of each: a GPU that was idle raises its
  // clock during the first ones, which would favour whichever ran last.
  float cudnnMs = 1e30f, ownMs = 1e30f;
  for (int round = 0; round < 3; ++round) {
    GOPT_ASSIGN_OR_RETURN(float a, timeOnStream(ctx_->stream, runCudnn));
    GOPT_ASSIGN_OR_RETURN(float b, timeOnStream(ctx_->stream, runOwn));
    cudnnMs = std::min(cudnnMs, a);
    ownMs = std::min(ownMs, b);
  }
  bool own = ownMs < cudnnMs;
  cache.insert(choiceKey, AlgoChoice{own ? 1 : 0, 0});
  return own;
}

// The convolution on cuDNN's graph API (GOPT_CUDA_CONV_GRAPH=0 never, =1
// whenever an engine runs it; by default when it beats the legacy choice
// on the op's shape): its engines reach kernels the legacy algorithms do
// not (ResNet-18's 3x3 layers at batch 32 on an H200: up to 7.6x faster),
// and fuse the bias and relu into the convolution.
Status ConvKernel::chooseGraph(const std::string &key,
                               const GraphConvShape &shape) {
  const char *env = std::getenv("GOPT_CUDA_CONV_GRAPH");
  std::string mode = env ? env : "";
  // f32 without TF32 stays on the legacy FMA algorithms: on an H200 some
  // graph engines rounded f32 products like TF32 (2.7e-3 relative) though
  // their numerical notes did not say so.
  if ((dtype_ == DType::kF32 && !ctx_->tf32Conv) || mode == "0")
    return Status::success();
  // Grouped (depthwise) convolutions are tried only when forced: forced
  // onto the graph, MobileNetV2's depthwise layers at batch 32 ran 1.8-2x
  // slower than on the legacy algorithms on an H200, and each engine timed
  // costs session setup.
  AlgoChoice lost;
  if (mode != "1" &&
      (shape.c != shape.cPerGroup ||
       (AlgoCache::global().lookup(key + "|graph", &lost) && lost.algo == 0)))
    return Status::success();
  using Graph = std::unique_ptr<CudnnGraphConv>;
  auto winner = [&]() -> StatusOr<Graph> {
    GOPT_ASSIGN_OR_RETURN(
        Graph graph, CudnnGraphConv::create(ctx_, shape, ctx_->tf32Conv, key));
    if (!graph)
      return Graph();
    DeviceBuffer scratch;
    GOPT_RETURN_IF_ERROR(scratch.allocate(graph->workspaceBytes()));
    GOPT_ASSIGN_OR_RETURN(
        bool use,
        beatsCudnn(key, "|graph", "GOPT_CUDA_CONV_GRAPH",
                   [&](const void *x, const void *w, const void *b, void *y) {
                     return graph->run(x, w, b, y, scratch.ptr);
                   }));
    return use ? std::move(graph) : Graph();
  }();
  // The graph is an optimization beside a correct legacy path: unless it
  // is forced (tests), a cuDNN release that refuses part of it leaves the
  // op on the legacy algorithm instead of failing the session.
  if (!winner.ok()) {
    if (mode == "1")
      return winner.status();
    cudaGetLastError(); // a failed launch's error is not the next call's
    return Status::success();
  }
  if (!*winner)
    return Status::success();
  GOPT_RETURN_IF_ERROR(ctx_->reserveWorkspace((*winner)->workspaceBytes()));
  graph_ = std::move(*winner);
  fused_ = false;
  return Status::success();
}

// A 1x1 convolution as a matrix product (GOPT_CUDA_CONV_GEMM).
Status ConvKernel::choosePointwiseGemm(const std::string &key, int64_t n,
                                       int64_t hw, int64_t cin, int64_t cout) {
  if (const char *env = std::getenv("GOPT_CUDA_CONV_GEMM");
      env && std::string(env) == "0")
    return Status::success();
  auto gemm = std::make_unique<PointwiseConvGemm>();
  bool bias = !nchw_ && hasBias_;
  bool relu = act_kind_ == UnaryKind::kRelu && (bias || !hasBias_);
  if (!gemm->init(ctx_, dtype_, nchw_, n, hw, cin, cout, bias, relu).ok())
    return Status::success(); // cuDNN's algorithm stays
  GOPT_ASSIGN_OR_RETURN(
      bool use, beatsCudnn(key, "|1x1-gemm", "GOPT_CUDA_CONV_GEMM",
                           [&](const void *x, const void *w, const void *b,
                               void *y) { return gemm->run(x, w, b, y); }));
  if (use) {
    gemm_ = std::move(gemm);
    gemmBias_ = bias;
    gemmRelu_ = relu;
    fused_ = false;
  }
  return Status::success();
}

// A depthwise convolution on gopt's direct kernel
// (GOPT_CUDA_CONV_DEPTHWISE). In MobileNetV2 f16 on an H100 it took 8 us
// where cuDNN took 12-32 us for every layer at batch 1, and won at batch 32
// on the 7x7 layers (up to 1.5M outputs); on the 14x14 and 28x28 layers
// at batch 32 (2.4M-4.8M outputs) it was up to 2.3x slower than cuDNN in
// the model, though faster in the timing below. Above 2^21 outputs it is
// not tried.
constexpr int64_t kDepthwiseMaxOutputs = int64_t(1) << 21;

Status ConvKernel::chooseDepthwise(const std::string &key,
                                   const DepthwiseConvShape &shape) {
  const char *env = std::getenv("GOPT_CUDA_CONV_DEPTHWISE");
  bool forced = env && std::string(env) == "1";
  int64_t outputs = shape.n * shape.channels * shape.outH * shape.outW;
  if ((env && std::string(env) == "0") || !depthwiseConvFits(shape) ||
      (!forced && outputs > kDepthwiseMaxOutputs))
    return Status::success();
  auto run = [&](const void *x, const void *w, const void *b, void *y) {
    return fromCuda(launchDepthwiseConv(dtype_, x, w, b, y, shape, act_kind_, 0,
                                        0, ctx_->stream),
                    "launchDepthwiseConv");
  };
  GOPT_ASSIGN_OR_RETURN(
      bool use, beatsCudnn(key, "|depthwise", "GOPT_CUDA_CONV_DEPTHWISE", run));
  if (use) {
    depthwise_ = true;
    depthwiseShape_ = shape;
    fused_ = false;
  }
  return Status::success();
}

Status ConvKernel::chooseAlgorithm(const std::string &key) {
  AlgoCache &cache = AlgoCache::global();
  AlgoChoice choice;
  if (cache.lookup(key, &choice)) {
    size_t bytes = 0;
    if (cudnnSetConvolutionMathType(conv_.d,
                                    cudnnMathType_t(choice.mathType)) ==
            CUDNN_STATUS_SUCCESS &&
        cudnnGetConvolutionForwardWorkspaceSize(
            ctx_->cudnn, x_.d, w_.d, conv_.d, y_.d,
            cudnnConvolutionFwdAlgo_t(choice.algo),
            &bytes) == CUDNN_STATUS_SUCCESS) {
      algo_ = cudnnConvolutionFwdAlgo_t(choice.algo);
      algoWorkspace_ = bytes;
      return Status::success();
    }
  }
  // Time every algorithm once on this shape (cuDNN allocates scratch).
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  GOPT_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(
      ctx_->cudnn, x_.d, w_.d, conv_.d, y_.d, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
      &found, perf));
  for (int i = 0; i < found; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS)
      continue;
    // The fused bias + activation call supports IMPLICIT_PRECOMP_GEMM for
    // every activation; keep the fastest algorithm that is allowed.
    algo_ = perf[i].algo;
    algoWorkspace_ = perf[i].memory;
    GOPT_CUDNN_CHECK(cudnnSetConvolutionMathType(conv_.d, perf[i].mathType));
    cache.insert(key, AlgoChoice{int(perf[i].algo), int(perf[i].mathType)});
    return Status::success();
  }
  return unimplemented("cuDNN found no convolution algorithm");
}

// What the convolution's own call left out of the op: the bias unless
// `biasDone`, the activation unless it is relu and `reluDone`.
Status ConvKernel::epilogue(void *y, const void *bias, bool biasDone,
                            bool reluDone) {
  const void *rest = hasBias_ && !biasDone ? bias : nullptr;
  UnaryKind act =
      act_kind_ == UnaryKind::kRelu && reluDone ? UnaryKind::kNone : act_kind_;
  if (!rest && act == UnaryKind::kNone)
    return Status::success();
  return fromCuda(launchBiasActivation(dtype_, y, rest, y, yCount_, channels_,
                                       inner_, act, 0, 0, ctx_->stream),
                  "launchBiasActivation");
}

Status ConvKernel::enqueue(const void *x, const void *w, const void *bias,
                           void *y) {
  if (depthwise_)
    return fromCuda(launchDepthwiseConv(dtype_, x, w, hasBias_ ? bias : nullptr,
                                        y, depthwiseShape_, act_kind_, 0, 0,
                                        ctx_->stream),
                    "launchDepthwiseConv");
  if (graph_ && !gemm_) {
    GOPT_RETURN_IF_ERROR(graph_->run(x, w, bias, y, ctx_->workspace.ptr));
    return epilogue(y, bias, graph_->fusesBias(), graph_->fusesRelu());
  }
  if (gemm_) {
    GOPT_RETURN_IF_ERROR(gemm_->run(x, w, gemmBias_ ? bias : nullptr, y));
    return epilogue(y, bias, gemmBias_, gemmRelu_);
  }
  float alpha = 1.f, beta = 0.f;
  void *ws = ctx_->workspace.ptr;
  if (fused_) {
    GOPT_CUDNN_CHECK(cudnnConvolutionBiasActivationForward(
        ctx_->cudnn, &alpha, x_.d, x, w_.d, w, conv_.d, algo_, ws,
        algoWorkspace_, &beta, y_.d, y, bias_.d, bias, act_.d, y_.d, y));
    return Status::success();
  }
  GOPT_CUDNN_CHECK(cudnnConvolutionForward(ctx_->cudnn, &alpha, x_.d, x, w_.d,
                                           w, conv_.d, algo_, ws,
                                           algoWorkspace_, &beta, y_.d, y));
  return epilogue(y, bias, false, false);
}

Status ConvKernel::run(const std::vector<const void *> &in,
                       const std::vector<void *> &out) {
  const void *x = in[0], *w = in[1];
  if (reorderFilter_) {
    if (!filterIsConstant_)
      GOPT_RETURN_IF_ERROR(
          fromCuda(launchGather(dtypeSize(dtype_), in[1], 0, filterIndex_,
                                filter_.ptr, filterCount_, ctx_->stream),
                   "launchGather (filter reorder)"));
    w = filter_.ptr;
  }
  if (prePad_) {
    char zero[8] = {0};
    GOPT_RETURN_IF_ERROR(
        fromCuda(launchPad(dtypeSize(dtype_), x, xDims_, padBefore_, padIndex_,
                           PadMode::kConstant, zero, padded_.ptr, paddedCount_,
                           ctx_->stream),
                 "launchPad (asymmetric conv padding)"));
    x = padded_.ptr;
  }
  const void *bias = hasBias_ ? in[2] : nullptr;
  if (castBias_) {
    if (!biasIsConstant_)
      GOPT_RETURN_IF_ERROR(
          fromCuda(launchCast(DType::kF32, dtype_, in[2], castedBias_.ptr,
                              channels_, ctx_->stream),
                   "launchCast (f32 bias)"));
    bias = castedBias_.ptr;
  }
  Status s = enqueue(x, w, bias, out[0]);
  if (fused_ && s.code() == StatusCode::kUnimplemented) {
    // This cuDNN build does not fuse this configuration: run it unfused
    // from now on (the first run is eager, before any graph capture).
    fused_ = false;
    s = enqueue(x, w, bias, out[0]);
  }
  return s;
}

//===----------------------------------------------------------------------===//
// matmul (cuBLASLt). Row-major C[M,N] = op(A) op(B) is computed as the
// column-major C^T = op(B)^T op(A)^T, so A and B swap roles. Batches are
// strided (stride 0 for a broadcast operand) or, for other broadcasts, one
// call per batch. Optional bias [N] and relu epilogue (the fusion of a
// following bias add / relu).
//===----------------------------------------------------------------------===//

class MatmulKernel : public CudaKernel {
public:
  static StatusOr<std::unique_ptr<CudaKernel>>
  create(const CudaKernelConfig &c, const void *bias, bool relu);
  ~MatmulKernel() override {
    if (desc_)
      cublasLtMatmulDescDestroy(desc_);
    for (cublasLtMatrixLayout_t l : {la_, lb_, lc_})
      if (l)
        cublasLtMatrixLayoutDestroy(l);
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override;
  const char *implementation() const override { return "cublaslt"; }

private:
  DeviceContext *ctx_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  cublasLtMatmulAlgo_t algo_;
  size_t workspace_ = 0;
  bool empty_ = false;
  bool zeroK_ = false;
  size_t outBytes_ = 0;
  // One call per batch when the batch broadcast is not a plain stride.
  int64_t calls_ = 1;
  std::vector<int64_t> aOffsets_, bOffsets_; // bytes, per call
  int64_t cStrideBytes_ = 0;
};

StatusOr<std::unique_ptr<CudaKernel>>
MatmulKernel::create(const CudaKernelConfig &c, const void *bias, bool relu) {
  DType t = c.inputTypes[0];
  if (!isFloatKernelType(t))
    return noKernel(c, detail::concat("element type ", dtypeName(t)));
  OpAttrs attrs = c.attrs();
  bool ta = attrs.getBool("transpose_a");
  bool tb = attrs.getBool("transpose_b");
  const Shape &as = c.inputShapes[0], &bs = c.inputShapes[1],
              &cs = c.outputShapes[0];
  size_t ra = as.size(), rc = cs.size();
  int64_t M = cs[rc - 2], N = cs[rc - 1];
  int64_t K = ta ? as[ra - 2] : as[ra - 1];
  auto k = std::make_unique<MatmulKernel>();
  k->ctx_ = c.ctx;
  k->outBytes_ = product(cs) * dtypeSize(t);
  if (product(cs) == 0) {
    k->empty_ = true;
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  if (K == 0) {
    k->zeroK_ = true;
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Shape batchA(as.begin(), as.end() - 2), batchB(bs.begin(), bs.end() - 2),
      batchC(cs.begin(), cs.end() - 2);
  int64_t nA = product(batchA), nB = product(batchB), nC = product(batchC);
  size_t elem = dtypeSize(t);
  int64_t strideA = (nA == nC) ? M * K : 0, strideB = (nB == nC) ? K * N : 0;
  int64_t batch = nC;
  // Each batch dim of an operand is 1 or C's, so equal counts mean equal
  // batch dims and a count of 1 a stride of 0.
  bool plain = (nA == nC || nA == 1) && (nB == nC || nB == 1);
  if (!plain) {
    // General broadcast of the batch dims: one call per output batch.
    GOPT_ASSIGN_OR_RETURN(StridedIndex ia, broadcastIndex(batchC, batchA));
    GOPT_ASSIGN_OR_RETURN(StridedIndex ib, broadcastIndex(batchC, batchB));
    for (int64_t i = 0; i < nC; ++i) {
      k->aOffsets_.push_back(stridedOffset(ia, i) * M * K * elem);
      k->bOffsets_.push_back(stridedOffset(ib, i) * K * N * elem);
    }
    k->calls_ = nC;
    k->cStrideBytes_ = M * N * elem;
    batch = 1;
  }
  if (!fitsInt(batch))
    return noKernel(c, "too many batches for cuBLASLt");
  GOPT_ASSIGN_OR_RETURN(cudaDataType_t type, cudaType(t));
  cublasComputeType_t compute = t == DType::kF32 && c.ctx->tf32Matmul
                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                    : CUBLAS_COMPUTE_32F;
  GOPT_CUBLAS_CHECK(cublasLtMatmulDescCreate(&k->desc_, compute, CUDA_R_32F));
  // Column-major roles: "A" is our B, "B" is our A.
  cublasOperation_t opA = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  GOPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      k->desc_, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
  GOPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      k->desc_, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
  if (bias || relu) {
    cublasLtEpilogue_t epi =
        bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
             : CUBLASLT_EPILOGUE_RELU;
    GOPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        k->desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    if (bias) {
      GOPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          k->desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
      GOPT_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          k->desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof(type)));
    }
  }
  // Our B stored row-major (tb ? [N,K] : [K,N]) viewed column-major.
  uint64_t bRows = tb ? K : N, bCols = tb ? N : K;
  uint64_t aRows = ta ? M : K, aCols = ta ? K : M;
  GOPT_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&k->la_, type, bRows, bCols, bRows));
  GOPT_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&k->lb_, type, aRows, aCols, aRows));
  GOPT_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&k->lc_, type, N, M, N));
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    int64_t sA = strideB, sB = strideA, sC = M * N;
    for (auto [layout, stride] : {std::pair{k->la_, sA}, std::pair{k->lb_, sB},
                                  std::pair{k->lc_, sC}}) {
      GOPT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
          layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
      GOPT_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
          layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
          sizeof(stride)));
    }
  }
  cublasLtMatmulPreference_t pref = nullptr;
  GOPT_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  size_t ws = kMatmulWorkspace;
  cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  cublasLtMatmulHeuristicResult_t result;
  int returned = 0;
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
      c.ctx->cublasLt, k->desc_, k->la_, k->lb_, k->lc_, k->lc_, pref, 1,
      &result, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  GOPT_RETURN_IF_ERROR(fromCublas(st, "cublasLtMatmulAlgoGetHeuristic"));
  if (returned == 0)
    return noKernel(c, "cuBLASLt has no algorithm for this configuration");
  k->algo_ = result.algo;
  k->workspace_ = result.workspaceSize;
  GOPT_RETURN_IF_ERROR(c.ctx->reserveWorkspace(k->workspace_));
  return std::unique_ptr<CudaKernel>(std::move(k));
}

Status MatmulKernel::run(const std::vector<const void *> &in,
                         const std::vector<void *> &out) {
  if (empty_)
    return Status::success();
  if (zeroK_)
    return fromCuda(cudaMemsetAsync(out[0], 0, outBytes_, ctx_->stream),
                    "cudaMemsetAsync");
  float alpha = 1.f, beta = 0.f;
  for (int64_t i = 0; i < calls_; ++i) {
    const char *a = static_cast<const char *>(in[0]);
    const char *b = static_cast<const char *>(in[1]);
    char *cOut = static_cast<char *>(out[0]);
    if (calls_ > 1) {
      a += aOffsets_[i];
      b += bOffsets_[i];
      cOut += i * cStrideBytes_;
    }
    GOPT_CUBLAS_CHECK(cublasLtMatmul(
        ctx_->cublasLt, desc_, &alpha, b, la_, a, lb_, &beta, cOut, lc_, cOut,
        lc_, &algo_, ctx_->workspace.ptr, workspace_, ctx_->stream));
  }
  return Status::success();
}

StatusOr<std::unique_ptr<CudaKernel>> unary(const CudaKernelConfig &c,
                                            UnaryKind op, bool floatOnly,
                                            float p0 = 0, float p1 = 0) {
  DType t = c.inputTypes[0];
  if (floatOnly ? !isFloatKernelType(t) : !isNumericKernelType(t))
    return noKernel(c, detail::concat("element type ", dtypeName(t)));
  return std::unique_ptr<CudaKernel>(
      std::make_unique<UnaryKernel>(c, op, p0, p1));
}

//===----------------------------------------------------------------------===//
// The handlers of CudaOps.def
//===----------------------------------------------------------------------===//

using KernelOr = StatusOr<std::unique_ptr<CudaKernel>>;

template <typename K> KernelOr own(std::unique_ptr<K> kernel) {
  return std::unique_ptr<CudaKernel>(std::move(kernel));
}

template <BinaryKind K> KernelOr binaryOp(const CudaKernelConfig &c) {
  return BinaryKernel::create(c, K);
}

template <UnaryKind K, bool FloatOnly>
KernelOr unaryOp(const CudaKernelConfig &c) {
  return unary(c, K, FloatOnly);
}

KernelOr createGelu(const CudaKernelConfig &c) {
  return unary(c,
               c.attrs().getString("approximate") == "tanh"
                   ? UnaryKind::kGeluTanh
                   : UnaryKind::kGeluErf,
               true);
}

KernelOr createLeakyRelu(const CudaKernelConfig &c) {
  return unary(c, UnaryKind::kLeakyRelu, true,
               static_cast<float>(c.attrs().getFloat("alpha")));
}

KernelOr createClip(const CudaKernelConfig &c) {
  OpAttrs attrs = c.attrs();
  return unary(c, UnaryKind::kClip, false,
               static_cast<float>(attrs.getFloat("min")),
               static_cast<float>(attrs.getFloat("max")));
}

KernelOr createBiasAdd(const CudaKernelConfig &c) {
  if (!isFloatKernelType(c.inputTypes[0]))
    return noKernel(
        c, detail::concat("element type ", dtypeName(c.inputTypes[0])));
  return own(std::make_unique<BiasAddKernel>(c));
}

KernelOr createCast(const CudaKernelConfig &c) {
  return own(std::make_unique<CastKernel>(c));
}

// Ops that copy their operand: reshapes, identities, inference dropout and
// transfers (a CUDA session runs every op on the device).
KernelOr createCopy(const CudaKernelConfig &c) {
  return own(std::make_unique<CopyKernel>(c));
}

KernelOr createCheckNumerics(const CudaKernelConfig &c) {
  return own(std::make_unique<CheckNumericsKernel>(c));
}

template <bool Quantize> KernelOr quantizationOp(const CudaKernelConfig &c) {
  return QuantizationKernel::create(c, Quantize);
}

KernelOr createConcat(const CudaKernelConfig &c) {
  return own(std::make_unique<ConcatKernel>(c));
}

template <ReduceKind K> KernelOr reduceOp(const CudaKernelConfig &c) {
  return createReduce(c, K);
}

template <bool Log> KernelOr softmaxOp(const CudaKernelConfig &c) {
  return SoftmaxKernel::create(c, Log);
}

template <bool Max> KernelOr poolOp(const CudaKernelConfig &c) {
  return PoolKernel::create(c, Max);
}

KernelOr createMatmul(const CudaKernelConfig &c) {
  return MatmulKernel::create(c, nullptr, false);
}

// Training batch norm (batch statistics, 5 results) is TrainingOps.cpp's.
KernelOr createBatchNorm(const CudaKernelConfig &c) {
  if (c.attrs().getBool("cross_replica") && !c.attrs().getBool("training"))
    return invalidArgument("cross_replica statistics need the training form "
                           "(training = true)");
  if (c.attrs().getBool("training"))
    return createBatchNormTraining(c);
  return BatchNormKernel::create(c);
}

} // namespace

StatusOr<std::unique_ptr<CudaKernel>>
createMatmulKernel(const CudaKernelConfig &config, const void *bias,
                   bool relu) {
  return MatmulKernel::create(config, bias, relu);
}

const std::map<std::string, CudaKernelHandler> &cudaDispatchTable() {
  static const std::map<std::string, CudaKernelHandler> table = {
#define GOPT_CUDA_OP(kind, predicate, ...) {kind, __VA_ARGS__},
#include "CudaOps.def"
#undef GOPT_CUDA_OP
  };
  return table;
}

StatusOr<std::unique_ptr<CudaKernel>>
createCudaKernel(const CudaKernelConfig &c) {
  // The same table's predicates: the attributes the backend accepts.
  std::string why;
  if (!hasCudaKernel(*c.op, &why))
    return noKernel(c, why);
  const auto &table = cudaDispatchTable();
  auto it = table.find(c.op->kind());
  if (it == table.end())
    return noKernel(c, "not implemented for CUDA");
  return it->second(c);
}

} // namespace gopt::runtime::cuda
