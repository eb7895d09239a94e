//===- TrainingOps.cpp - CUDA kernels of the training ops -----------------===//
//
// conv2d's gradients run on cuDNN (backward data / backward filter, the
// algorithm timed once per shape and cached like the forward's); the rest
// are gopt's kernels (TrainingKernels.cu): losses, relu/pooling/batch-norm
// gradients, training batch norm and fused one-pass optimizer updates.
// Configuration happens at creation, never in run().
//
//===----------------------------------------------------------------------===//
#include "TrainingOps.h"
#include "AlgoCache.h"
#include "CollectiveOps.h"
#include "Launch.h"
#include "OpHelpers.h"
#include "TrainingKernels.h"
#include "gopt/runtime/OpSchema.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <numeric>

// The legacy (non-graph) cuDNN API is deprecated in cuDNN 9 but present.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace gopt::runtime::cuda {
namespace {

// Every operand and result f32: the training ops' master precision (mixed
// precision keeps losses, batch norm and the optimizer in f32).
Status requireF32(const CudaKernelConfig &c, size_t operands) {
  for (size_t i = 0; i < operands && i < c.inputTypes.size(); ++i)
    if (c.inputTypes[i] != DType::kF32)
      return noKernel(
          c, detail::concat("operand ", i, " is ", dtypeName(c.inputTypes[i]),
                            "; the CUDA training kernels take f32"));
  for (DType t : c.outputTypes)
    if (t != DType::kF32)
      return noKernel(c,
                      detail::concat("result type ", dtypeName(t),
                                     "; the CUDA training kernels take f32"));
  return Status::success();
}

template <typename K> TrainingKernelOr own(std::unique_ptr<K> kernel) {
  return std::unique_ptr<CudaKernel>(std::move(kernel));
}

const float *f32(const void *p) { return static_cast<const float *>(p); }
float *f32(void *p) { return static_cast<float *>(p); }

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

class CrossEntropyKernel : public CudaKernel {
public:
  static TrainingKernelOr create(const CudaKernelConfig &c, bool grad) {
    GOPT_RETURN_IF_ERROR(requireF32(c, 1));
    DType labels = c.inputTypes[1];
    if (labels != DType::kI32 && labels != DType::kI64)
      return noKernel(c, detail::concat("labels of type ", dtypeName(labels),
                                        " (expected i32 or i64)"));
    const Shape &logits = c.inputShapes[0];
    if (logits.size() != 2)
      return invalidArgument("logits must be [N, C], got ",
                             shapeToString(logits));
    auto k = std::make_unique<CrossEntropyKernel>();
    k->ctx_ = c.ctx;
    k->grad_ = grad;
    k->labels64_ = labels == DType::kI64;
    k->rows_ = logits[0];
    k->classes_ = logits[1];
    k->flag_ = c.errorFlag;
    if (!fitsInt(k->rows_))
      return noKernel(c, "more rows than a CUDA grid holds");
    if (!grad)
      GOPT_RETURN_IF_ERROR(k->rowLoss_.allocate(std::max<int64_t>(k->rows_, 1) *
                                                sizeof(double)));
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    if (grad_)
      return fromCuda(launchSoftmaxCrossEntropyGrad(
                          f32(in[0]), in[1], labels64_, rows_, classes_,
                          f32(out[0]), flag_, ctx_->stream),
                      "launchSoftmaxCrossEntropyGrad");
    return fromCuda(
        launchSoftmaxCrossEntropy(f32(in[0]), in[1], labels64_, rows_, classes_,
                                  static_cast<double *>(rowLoss_.ptr),
                                  f32(out[0]), flag_, ctx_->stream),
        "launchSoftmaxCrossEntropy");
  }
  const char *implementation() const override { return "cuda"; }
  size_t workspaceBytes() const override { return rowLoss_.bytes; }
  std::string flagMessage(int flag) const override {
    return detail::concat("a label of row ", labelErrorRow(flag),
                          " is outside [0, ", classes_, ")");
  }

private:
  DeviceContext *ctx_ = nullptr;
  bool grad_ = false, labels64_ = false;
  int64_t rows_ = 0, classes_ = 0;
  int *flag_ = nullptr;
  DeviceBuffer rowLoss_;
};

class MseKernel : public CudaKernel {
public:
  MseKernel(const CudaKernelConfig &c, bool grad)
      : ctx_(c.ctx), grad_(grad), n_(product(c.inputShapes[0])) {}
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    if (grad_)
      return fromCuda(launchMseLossGrad(f32(in[0]), f32(in[1]), n_, f32(out[0]),
                                        ctx_->stream),
                      "launchMseLossGrad");
    return fromCuda(
        launchMseLoss(f32(in[0]), f32(in[1]), n_, f32(out[0]), ctx_->stream),
        "launchMseLoss");
  }
  const char *implementation() const override { return "cuda"; }

private:
  DeviceContext *ctx_;
  bool grad_;
  int64_t n_;
};

//===----------------------------------------------------------------------===//
// relu_grad, max_pool_grad, avg_pool_grad
//===----------------------------------------------------------------------===//

class ReluGradKernel : public CudaKernel {
public:
  explicit ReluGradKernel(const CudaKernelConfig &c)
      : ctx_(c.ctx), n_(product(c.outputShapes[0])) {}
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    return fromCuda(
        launchReluGrad(f32(in[0]), f32(in[1]), f32(out[0]), n_, ctx_->stream),
        "launchReluGrad");
  }
  const char *implementation() const override { return "cuda"; }

private:
  DeviceContext *ctx_;
  int64_t n_;
};

// Own kernels rather than cudnnPoolingBackward: the ops take x and dy but
// not max_pool's output y, which cuDNN needs, and the reference's window
// choice (the first maximum, NaN rules, ceil_mode's extra windows as
// padding) is exact here, whatever cuDNN's tie-breaking.
class PoolGradKernel : public CudaKernel {
public:
  static TrainingKernelOr create(const CudaKernelConfig &c, bool isMax) {
    GOPT_RETURN_IF_ERROR(requireF32(c, 2));
    const Shape &xs = c.inputShapes[0], &dys = c.inputShapes[1];
    if (xs.size() != 4 || dys.size() != 4)
      return invalidArgument("x and dy must be rank 4, got ", shapeToString(xs),
                             " and ", shapeToString(dys));
    OpAttrs attrs = c.attrs();
    auto k = std::make_unique<PoolGradKernel>();
    k->ctx_ = c.ctx;
    k->isMax_ = isMax;
    PoolParams &p = k->params_;
    p.nchw = attrs.getString("data_format") == "NCHW";
    p.isMax = isMax;
    p.countIncludePad = !isMax && attrs.getBool("count_include_pad");
    std::vector<int64_t> kernel = attrs.getInts("kernel");
    std::vector<int64_t> strides = attrs.getWindowInts("strides");
    std::vector<int64_t> pads = attrs.getWindowInts("pads");
    // As the reference's poolWindow. max_pool_grad declares neither
    // `padding` nor `ceil_mode` (its pads are explicit): OpAttrs gives the
    // window ops' shared defaults ("EXPLICIT", false).
    std::string padding = attrs.getString("padding");
    bool ceilMode = attrs.getBool("ceil_mode");
    int64_t n = xs[0], ch = p.nchw ? xs[1] : xs[3];
    int64_t h = p.nchw ? xs[2] : xs[1], w = p.nchw ? xs[3] : xs[2];
    int64_t oh = p.nchw ? dys[2] : dys[1], ow = p.nchw ? dys[3] : dys[2];
    GOPT_ASSIGN_OR_RETURN(WindowDim wh,
                          computeWindowDim(h, kernel[0], strides[0], 1, padding,
                                           pads[0], pads[1], ceilMode));
    GOPT_ASSIGN_OR_RETURN(WindowDim ww,
                          computeWindowDim(w, kernel[1], strides[1], 1, padding,
                                           pads[2], pads[3], ceilMode));
    p.n = n;
    p.c = ch;
    p.h = h;
    p.w = w;
    p.oh = oh;
    p.ow = ow;
    p.kh = kernel[0];
    p.kw = kernel[1];
    p.sh = strides[0];
    p.sw = strides[1];
    p.padTop = wh.padBefore;
    p.padBottom = wh.padAfter;
    p.padLeft = ww.padBefore;
    p.padRight = ww.padAfter;
    if (p.sh <= 0 || p.sw <= 0)
      return invalidArgument("strides must be positive");
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    if (isMax_)
      return fromCuda(launchMaxPoolGrad(params_, f32(in[0]), f32(in[1]),
                                        f32(out[0]), ctx_->stream),
                      "launchMaxPoolGrad");
    return fromCuda(
        launchAvgPoolGrad(params_, f32(in[1]), f32(out[0]), ctx_->stream),
        "launchAvgPoolGrad");
  }
  const char *implementation() const override { return "cuda"; }

private:
  DeviceContext *ctx_ = nullptr;
  bool isMax_ = true;
  PoolParams params_;
};

//===----------------------------------------------------------------------===//
// Batch norm: training forward and batch_norm_grad. Own kernels, not
// cuDNN's BatchNormalizationForwardTraining/Backward: the op returns the
// biased batch variance (cuDNN saves 1/sqrt(var + eps), which loses it for
// small variances) and runs at any rank and layout; one block per channel
// sums in double in a fixed order, so the statistics are deterministic.
//===----------------------------------------------------------------------===//

struct ChannelView {
  int64_t outer = 0, channels = 0, inner = 1;
};

ChannelView channelView(const CudaKernelConfig &c, const Shape &x) {
  ChannelView v;
  int64_t axis = channelAxis(c.attrs().getString("data_format"), x.size());
  v.outer = product(x, 0, axis);
  v.channels = x[axis];
  v.inner = product(x, axis + 1);
  return v;
}

// cross_replica with a communicator: the kernel's collectives (one site per
// all-reduce, each with its scratch of doubles). Each all-reduce is joined
// at once, since the next step of the kernel reads it; the op still counts
// as asynchronous, so that the host waits for the step with the
// communicator's timeout. Without a communicator (a single replica) the
// batch is the global batch.
struct ReplicaSums {
  Status init(const CudaKernelConfig &c, const std::vector<int64_t> &sizes) {
    sites = std::vector<StreamAllReduce>(sizes.size());
    buffers = std::vector<DeviceBuffer>(sizes.size());
    counts = sizes;
    for (size_t i = 0; i < sizes.size(); ++i) {
      GOPT_RETURN_IF_ERROR(sites[i].init(c, "cross_replica " + c.op->kind()));
      GOPT_RETURN_IF_ERROR(buffers[i].allocate(sizes[i] * sizeof(double)));
    }
    return Status::success();
  }
  bool enabled() const { return !sites.empty(); }
  double *data(size_t i) { return static_cast<double *>(buffers[i].ptr); }
  Status sum(size_t i, cudaStream_t stream) {
    GOPT_RETURN_IF_ERROR(sites[i].start(
        stream, {{buffers[i].ptr, counts[i], DType::kF64}}, Reduction::kSum));
    return sites[i].join(stream);
  }
  size_t bytes() const {
    size_t total = 0;
    for (const DeviceBuffer &b : buffers)
      total += b.bytes;
    return total;
  }

  std::vector<StreamAllReduce> sites;
  std::vector<DeviceBuffer> buffers;
  std::vector<int64_t> counts;
};

bool reducesAcrossReplicas(const CudaKernelConfig &c) {
  return c.attrs().getBool("cross_replica") && c.communicator;
}

class BatchNormTrainingKernel : public CudaKernel {
public:
  static TrainingKernelOr create(const CudaKernelConfig &c) {
    GOPT_RETURN_IF_ERROR(requireF32(c, 5));
    if (c.outputShapes.size() != 5)
      return invalidArgument("training batch_norm has 5 results, got ",
                             c.outputShapes.size());
    const Shape &x = c.inputShapes[0];
    if (x.size() < 2)
      return invalidArgument("x must have rank >= 2, got ", shapeToString(x));
    auto k = std::make_unique<BatchNormTrainingKernel>();
    k->ctx_ = c.ctx;
    k->view_ = channelView(c, x);
    k->n_ = product(x);
    OpAttrs attrs = c.attrs();
    k->eps_ = attrs.getFloat("epsilon");
    k->momentum_ = attrs.getFloat("momentum");
    if (!fitsInt(k->view_.channels))
      return noKernel(c, "more channels than a CUDA grid holds");
    // The channel sums with the count, then the squared deviations.
    if (reducesAcrossReplicas(c))
      GOPT_RETURN_IF_ERROR(k->replicas_.init(
          c, {k->view_.channels + 1, std::max<int64_t>(k->view_.channels, 1)}));
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    const ChannelView &v = view_;
    cudaStream_t s = ctx_->stream;
    if (!replicas_.enabled()) {
      GOPT_RETURN_IF_ERROR(fromCuda(
          launchBatchNormStats(f32(in[0]), f32(in[3]), f32(in[4]), v.outer,
                               v.channels, v.inner, momentum_, f32(out[1]),
                               f32(out[2]), f32(out[3]), f32(out[4]), s),
          "launchBatchNormStats"));
    } else {
      // Two passes as the reference: the global mean, then the squared
      // deviations from it, each summed across replicas.
      double *sums = replicas_.data(0), *squares = replicas_.data(1);
      GOPT_RETURN_IF_ERROR(
          fromCuda(launchBatchNormSums(f32(in[0]), v.outer, v.channels, v.inner,
                                       sums, s),
                   "launchBatchNormSums"));
      GOPT_RETURN_IF_ERROR(replicas_.sum(0, s));
      GOPT_RETURN_IF_ERROR(
          fromCuda(launchBatchNormSquares(f32(in[0]), sums, v.outer, v.channels,
                                          v.inner, squares, s),
                   "launchBatchNormSquares"));
      GOPT_RETURN_IF_ERROR(replicas_.sum(1, s));
      GOPT_RETURN_IF_ERROR(fromCuda(
          launchBatchNormFinish(sums, squares, v.channels, f32(in[3]),
                                f32(in[4]), momentum_, f32(out[1]), f32(out[2]),
                                f32(out[3]), f32(out[4]), s),
          "launchBatchNormFinish"));
    }
    // y with the batch statistics: the inference kernel's arithmetic.
    return fromCuda(launchBatchNormInference(
                        DType::kF32, in[0], in[1], in[2], out[1], out[2],
                        out[0], n_, v.channels, std::max<int64_t>(v.inner, 1),
                        static_cast<float>(eps_), s),
                    "launchBatchNormInference");
  }
  bool asynchronous() const override { return replicas_.enabled(); }
  const char *implementation() const override { return "cuda"; }
  size_t workspaceBytes() const override { return replicas_.bytes(); }

private:
  DeviceContext *ctx_ = nullptr;
  ChannelView view_;
  int64_t n_ = 0;
  double eps_ = 1e-3, momentum_ = 0.9;
  ReplicaSums replicas_;
};

class BatchNormGradKernel : public CudaKernel {
public:
  static TrainingKernelOr create(const CudaKernelConfig &c) {
    GOPT_RETURN_IF_ERROR(requireF32(c, 5));
    const Shape &x = c.inputShapes[1];
    if (x.size() < 2)
      return invalidArgument("x must have rank >= 2, got ", shapeToString(x));
    auto k = std::make_unique<BatchNormGradKernel>();
    k->ctx_ = c.ctx;
    k->view_ = channelView(c, x);
    k->eps_ = c.attrs().getFloat("epsilon");
    if (!fitsInt(k->view_.channels))
      return noKernel(c, "more channels than a CUDA grid holds");
    // The per-channel pairs, then the count.
    int64_t sums = 2 * k->view_.channels + 1;
    if (reducesAcrossReplicas(c))
      GOPT_RETURN_IF_ERROR(k->replicas_.init(c, {sums}));
    else
      GOPT_RETURN_IF_ERROR(k->sums_.allocate(sums * sizeof(double)));
    return std::unique_ptr<CudaKernel>(std::move(k));
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    const ChannelView &v = view_;
    cudaStream_t s = ctx_->stream;
    int64_t inner = std::max<int64_t>(v.inner, 1);
    double *sums = replicas_.enabled() ? replicas_.data(0)
                                       : static_cast<double *>(sums_.ptr);
    GOPT_RETURN_IF_ERROR(fromCuda(
        launchBatchNormGradSums(f32(in[0]), f32(in[1]), f32(in[3]), f32(in[4]),
                                eps_, v.outer, v.channels, inner, sums,
                                f32(out[1]), f32(out[2]), s),
        "launchBatchNormGradSums"));
    if (replicas_.enabled())
      GOPT_RETURN_IF_ERROR(replicas_.sum(0, s));
    return fromCuda(launchBatchNormGradInput(f32(in[0]), f32(in[1]), f32(in[2]),
                                             f32(in[3]), f32(in[4]), eps_,
                                             v.outer, v.channels, inner, sums,
                                             f32(out[0]), s),
                    "launchBatchNormGradInput");
  }
  bool asynchronous() const override { return replicas_.enabled(); }
  const char *implementation() const override { return "cuda"; }
  size_t workspaceBytes() const override {
    return sums_.bytes + replicas_.bytes();
  }

private:
  DeviceContext *ctx_ = nullptr;
  ChannelView view_;
  double eps_ = 1e-3;
  DeviceBuffer sums_;
  ReplicaSums replicas_;
};

//===----------------------------------------------------------------------===//
// conv2d_backprop_input / conv2d_backprop_filter (cuDNN)
//===----------------------------------------------------------------------===//

struct TensorDescriptor {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDescriptor() { cudnnCreateTensorDescriptor(&d); }
  ~TensorDescriptor() { cudnnDestroyTensorDescriptor(d); }
};
struct FilterDescriptor {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDescriptor() { cudnnCreateFilterDescriptor(&d); }
  ~FilterDescriptor() { cudnnDestroyFilterDescriptor(d); }
};
struct ConvDescriptor {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDescriptor() { cudnnCreateConvolutionDescriptor(&d); }
  ~ConvDescriptor() { cudnnDestroyConvolutionDescriptor(d); }
};

// The gradients of conv2d (f32). cuDNN takes filters as KCRS (= OIHW) with
// NCHW data and KRSC with NHWC data: other filter formats are reordered
// into (backprop_input) or out of (backprop_filter) a buffer. Asymmetric
// pads: backprop_filter pads x explicitly; backprop_input computes the
// gradient of the padded input and slices it.
class ConvGradKernel : public CudaKernel {
public:
  static TrainingKernelOr create(const CudaKernelConfig &c, bool filterGrad);
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override;
  const char *implementation() const override { return "cudnn"; }
  size_t workspaceBytes() const override {
    return filter_.bytes + padded_.bytes;
  }

private:
  Status chooseAlgorithm(const std::string &key);

  DeviceContext *ctx_ = nullptr;
  bool filterGrad_ = false, nchw_ = true;
  TensorDescriptor x_, dy_;
  FilterDescriptor w_;
  ConvDescriptor conv_;
  cudnnConvolutionBwdDataAlgo_t dataAlgo_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  cudnnConvolutionBwdFilterAlgo_t filterAlgo_ =
      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
  size_t algoWorkspace_ = 0;
  // Filter in cuDNN's layout: the reordered operand (backprop_input) or
  // cuDNN's result before the reorder into the op's format.
  bool reorder_ = false;
  StridedIndex reorderIndex_;
  int64_t filterCount_ = 0;
  DeviceBuffer filter_;
  // Asymmetric padding: x padded (filter grad) or dx of the padded input
  // (input grad), and the index that pads or slices.
  bool explicitPad_ = false;
  int64_t xDims_[4] = {}, padBefore_[4] = {};
  StridedIndex padIndex_, sliceIndex_;
  int64_t sliceBase_ = 0, paddedCount_ = 0, xCount_ = 0;
  DeviceBuffer padded_;
};

TrainingKernelOr ConvGradKernel::create(const CudaKernelConfig &c,
                                        bool filterGrad) {
  GOPT_RETURN_IF_ERROR(requireF32(c, 2));
  OpAttrs attrs = c.attrs();
  auto k = std::make_unique<ConvGradKernel>();
  k->ctx_ = c.ctx;
  k->filterGrad_ = filterGrad;
  k->nchw_ = attrs.getString("data_format") == "NCHW";
  bool oihw = attrs.getString("filter_format") == "OIHW";
  const Shape &xs = filterGrad ? c.inputShapes[0] : c.outputShapes[0];
  const Shape &ws = filterGrad ? c.outputShapes[0] : c.inputShapes[1];
  const Shape &dys = filterGrad ? c.inputShapes[1] : c.inputShapes[0];
  if (xs.size() != 4 || ws.size() != 4 || dys.size() != 4)
    return invalidArgument("conv2d gradients take rank-4 tensors, got x ",
                           shapeToString(xs), ", filter ", shapeToString(ws),
                           ", dy ", shapeToString(dys));
  if (product(xs) == 0 || product(ws) == 0 || product(dys) == 0)
    return noKernel(c, "empty tensors");
  bool nchw = k->nchw_;
  int64_t n = xs[0], cin = nchw ? xs[1] : xs[3];
  int64_t h = nchw ? xs[2] : xs[1], w = nchw ? xs[3] : xs[2];
  int64_t cout = nchw ? dys[1] : dys[3];
  int64_t oh = nchw ? dys[2] : dys[1], ow = nchw ? dys[3] : dys[2];
  int64_t kh = oihw ? ws[2] : ws[0], kw = oihw ? ws[3] : ws[1];
  int64_t cinG = oihw ? ws[1] : ws[2];
  int64_t groups = attrs.getInt("groups");
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> dil = attrs.getWindowInts("dilations");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  if (!fitsInt(cout) || !fitsInt(cinG) || !fitsInt(kh) || !fitsInt(kw) ||
      !fitsInt(groups))
    return noKernel(c, "filter too large for cuDNN");

  // cuDNN's filter layout from the op's: perm maps the op's dims to cuDNN's.
  std::vector<int64_t> perm;
  if (nchw && !oihw)
    perm = {3, 2, 0, 1}; // HWIO -> OIHW
  else if (!nchw && !oihw)
    perm = {3, 0, 1, 2}; // HWIO -> OHWI
  else if (!nchw && oihw)
    perm = {0, 2, 3, 1}; // OIHW -> OHWI
  k->filterCount_ = product(ws);
  if (!perm.empty()) {
    k->reorder_ = true;
    if (filterGrad) {
      // cuDNN's result [cuDNN dims] -> the op's format: the inverse perm.
      Shape cudnnShape;
      for (int64_t p : perm)
        cudnnShape.push_back(ws[p]);
      std::vector<int64_t> inverse(4);
      for (int i = 0; i < 4; ++i)
        inverse[perm[i]] = i;
      GOPT_ASSIGN_OR_RETURN(k->reorderIndex_,
                            permuteIndex(cudnnShape, inverse));
    } else {
      GOPT_ASSIGN_OR_RETURN(k->reorderIndex_, permuteIndex(ws, perm));
    }
    GOPT_RETURN_IF_ERROR(k->filter_.allocate(k->filterCount_ * sizeof(float)));
  }
  GOPT_CUDNN_CHECK(cudnnSetFilter4dDescriptor(
      k->w_.d, CUDNN_DATA_FLOAT, nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC,
      int(cout), int(cinG), int(kh), int(kw)));

  int64_t ph = pads[0], pw = pads[2], inH = h, inW = w;
  if (pads[0] != pads[1] || pads[2] != pads[3]) {
    k->explicitPad_ = true;
    inH = h + pads[0] + pads[1];
    inW = w + pads[2] + pads[3];
    Shape padded = nchw ? Shape{n, cin, inH, inW} : Shape{n, inH, inW, cin};
    std::vector<int64_t> xStrides = contiguousStrides(xs);
    std::vector<int64_t> paddedStrides = contiguousStrides(padded);
    int hAxis = nchw ? 2 : 1;
    k->padBefore_[hAxis] = pads[0];
    k->padBefore_[hAxis + 1] = pads[2];
    k->padIndex_.rank = 4;
    for (int d = 0; d < 4; ++d) {
      k->padIndex_.dims[d] = padded[d];
      k->padIndex_.strides[d] = xStrides[d];
      k->xDims_[d] = xs[d];
      k->sliceBase_ += k->padBefore_[d] * paddedStrides[d];
    }
    // dx = the padded gradient without its border.
    GOPT_ASSIGN_OR_RETURN(
        k->sliceIndex_,
        makeIndex(std::vector<int64_t>(xs.begin(), xs.end()), paddedStrides));
    k->paddedCount_ = product(padded);
    k->xCount_ = product(xs);
    GOPT_RETURN_IF_ERROR(k->padded_.allocate(k->paddedCount_ * sizeof(float)));
    ph = pw = 0;
  }
  GOPT_RETURN_IF_ERROR(
      set4d(k->x_.d, nchw, CUDNN_DATA_FLOAT, n, cin, inH, inW));
  GOPT_RETURN_IF_ERROR(
      set4d(k->dy_.d, nchw, CUDNN_DATA_FLOAT, n, cout, oh, ow));
  GOPT_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      k->conv_.d, int(ph), int(pw), int(strides[0]), int(strides[1]),
      int(dil[0]), int(dil[1]), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  GOPT_CUDNN_CHECK(cudnnSetConvolutionGroupCount(k->conv_.d, int(groups)));
  cudnnMathType_t math = c.ctx->tf32Conv ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  GOPT_CUDNN_CHECK(cudnnSetConvolutionMathType(k->conv_.d, math));
  int outDims[4];
  GOPT_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(
      k->conv_.d, k->x_.d, k->w_.d, &outDims[0], &outDims[1], &outDims[2],
      &outDims[3]));
  if (outDims[0] != n || outDims[1] != cout || outDims[2] != oh ||
      outDims[3] != ow)
    return invalidArgument(
        "dy ", shapeToString(dys), " is not conv2d's output for input ",
        shapeToString(xs), " and filter ", shapeToString(ws),
        " (cuDNN computes [", outDims[0], ",", outDims[1], ",", outDims[2], ",",
        outDims[3], "] in NCHW order)");

  std::string key = makeAlgoKey(
      c.ctx->deviceName,
      {filterGrad ? "conv2d_backprop_filter" : "conv2d_backprop_input", "f32",
       nchw ? "NCHW" : "NHWC", detail::concat(n, ",", cin, ",", inH, ",", inW),
       detail::concat(cout, ",", cinG, ",", kh, ",", kw),
       detail::concat(ph, ",", pw, ",", strides[0], ",", strides[1], ",",
                      dil[0], ",", dil[1], ",g", groups),
       detail::concat("math", int(math))});
  GOPT_RETURN_IF_ERROR(k->chooseAlgorithm(key));
  GOPT_RETURN_IF_ERROR(c.ctx->reserveWorkspace(k->algoWorkspace_));
  return std::unique_ptr<CudaKernel>(std::move(k));
}

// Timed once per shape and device (cached on disk). The fastest
// deterministic algorithm wins; a nondeterministic one (atomics in some
// backward-filter algorithms) only when cuDNN offers nothing else, so that
// two runs of a training step give the same parameters.
Status ConvGradKernel::chooseAlgorithm(const std::string &key) {
  AlgoCache &cache = AlgoCache::global();
  AlgoChoice choice;
  if (cache.lookup(key, &choice)) {
    size_t bytes = 0;
    cudnnStatus_t status =
        cudnnSetConvolutionMathType(conv_.d, cudnnMathType_t(choice.mathType));
    if (status == CUDNN_STATUS_SUCCESS)
      status = filterGrad_
                   ? cudnnGetConvolutionBackwardFilterWorkspaceSize(
                         ctx_->cudnn, x_.d, dy_.d, conv_.d, w_.d,
                         cudnnConvolutionBwdFilterAlgo_t(choice.algo), &bytes)
                   : cudnnGetConvolutionBackwardDataWorkspaceSize(
                         ctx_->cudnn, w_.d, dy_.d, conv_.d, x_.d,
                         cudnnConvolutionBwdDataAlgo_t(choice.algo), &bytes);
    if (status == CUDNN_STATUS_SUCCESS) {
      filterAlgo_ = cudnnConvolutionBwdFilterAlgo_t(choice.algo);
      dataAlgo_ = cudnnConvolutionBwdDataAlgo_t(choice.algo);
      algoWorkspace_ = bytes;
      return Status::success();
    }
  }
  auto pick = [&](const auto *perf, int found, auto &algo) -> bool {
    int chosen = -1;
    for (int i = 0; i < found && chosen < 0; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS &&
          perf[i].determinism == CUDNN_DETERMINISTIC)
        chosen = i;
    for (int i = 0; i < found && chosen < 0; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS)
        chosen = i;
    if (chosen < 0)
      return false;
    algo = perf[chosen].algo;
    algoWorkspace_ = perf[chosen].memory;
    cudnnSetConvolutionMathType(conv_.d, perf[chosen].mathType);
    cache.insert(
        key, AlgoChoice{int(perf[chosen].algo), int(perf[chosen].mathType)});
    return true;
  };
  int found = 0;
  if (filterGrad_) {
    cudnnConvolutionBwdFilterAlgoPerf_t
        perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    GOPT_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(
        ctx_->cudnn, x_.d, dy_.d, conv_.d, w_.d,
        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found, perf));
    if (pick(perf, found, filterAlgo_))
      return Status::success();
  } else {
    cudnnConvolutionBwdDataAlgoPerf_t
        perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    GOPT_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithm(
        ctx_->cudnn, w_.d, dy_.d, conv_.d, x_.d,
        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, perf));
    if (pick(perf, found, dataAlgo_))
      return Status::success();
  }
  return unimplemented("cuDNN found no convolution backward algorithm");
}

Status ConvGradKernel::run(const std::vector<const void *> &in,
                           const std::vector<void *> &out) {
  float alpha = 1.f, beta = 0.f;
  void *ws = ctx_->workspace.ptr;
  if (filterGrad_) {
    const void *x = in[0];
    if (explicitPad_) {
      char zero[8] = {0};
      GOPT_RETURN_IF_ERROR(
          fromCuda(launchPad(sizeof(float), x, xDims_, padBefore_, padIndex_,
                             PadMode::kConstant, zero, padded_.ptr,
                             paddedCount_, ctx_->stream),
                   "launchPad (asymmetric conv padding)"));
      x = padded_.ptr;
    }
    void *dw = reorder_ ? filter_.ptr : out[0];
    GOPT_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
        ctx_->cudnn, &alpha, x_.d, x, dy_.d, in[1], conv_.d, filterAlgo_, ws,
        algoWorkspace_, &beta, w_.d, dw));
    if (reorder_)
      GOPT_RETURN_IF_ERROR(
          fromCuda(launchGather(sizeof(float), filter_.ptr, 0, reorderIndex_,
                                out[0], filterCount_, ctx_->stream),
                   "launchGather (filter gradient reorder)"));
    return Status::success();
  }
  const void *w = in[1];
  if (reorder_) {
    GOPT_RETURN_IF_ERROR(
        fromCuda(launchGather(sizeof(float), in[1], 0, reorderIndex_,
                              filter_.ptr, filterCount_, ctx_->stream),
                 "launchGather (filter reorder)"));
    w = filter_.ptr;
  }
  void *dx = explicitPad_ ? padded_.ptr : out[0];
  GOPT_CUDNN_CHECK(cudnnConvolutionBackwardData(
      ctx_->cudnn, &alpha, w_.d, w, dy_.d, in[0], conv_.d, dataAlgo_, ws,
      algoWorkspace_, &beta, x_.d, dx));
  if (explicitPad_)
    GOPT_RETURN_IF_ERROR(
        fromCuda(launchGather(sizeof(float), padded_.ptr, sliceBase_,
                              sliceIndex_, out[0], xCount_, ctx_->stream),
                 "launchGather (slice of the padded gradient)"));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Optimizer updates: one fused pass per parameter.
//===----------------------------------------------------------------------===//

class SgdUpdateKernel : public CudaKernel {
public:
  explicit SgdUpdateKernel(const CudaKernelConfig &c)
      : ctx_(c.ctx), n_(product(c.inputShapes[0])) {
    OpAttrs attrs = c.attrs();
    lr_ = attrs.getFloat("lr");
    momentum_ = attrs.getFloat("momentum");
    weightDecay_ = attrs.getFloat("weight_decay");
    nesterov_ = attrs.getBool("nesterov");
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    return fromCuda(launchSgdUpdate(f32(in[0]), f32(in[1]), f32(in[2]), n_, lr_,
                                    momentum_, weightDecay_, nesterov_,
                                    f32(out[0]), f32(out[1]), ctx_->stream),
                    "launchSgdUpdate");
  }
  const char *implementation() const override { return "cuda"; }

private:
  DeviceContext *ctx_;
  int64_t n_;
  double lr_ = 0, momentum_ = 0, weightDecay_ = 0;
  bool nesterov_ = false;
};

class AdamUpdateKernel : public CudaKernel {
public:
  explicit AdamUpdateKernel(const CudaKernelConfig &c)
      : ctx_(c.ctx), n_(product(c.inputShapes[0])), flag_(c.errorFlag) {
    OpAttrs attrs = c.attrs();
    lr_ = attrs.getFloat("lr");
    beta1_ = attrs.getFloat("beta1");
    beta2_ = attrs.getFloat("beta2");
    epsilon_ = attrs.getFloat("epsilon");
    weightDecay_ = attrs.getFloat("weight_decay");
  }
  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    return fromCuda(launchAdamUpdate(f32(in[0]), f32(in[1]), f32(in[2]),
                                     f32(in[3]), f32(in[4]), n_, lr_, beta1_,
                                     beta2_, epsilon_, weightDecay_,
                                     f32(out[0]), f32(out[1]), f32(out[2]),
                                     flag_, ctx_->stream),
                    "launchAdamUpdate");
  }
  const char *implementation() const override { return "cuda"; }
  std::string flagMessage(int) const override {
    return "adam_update step must be >= 1";
  }

private:
  DeviceContext *ctx_;
  int64_t n_;
  int *flag_;
  double lr_ = 0, beta1_ = 0, beta2_ = 0, epsilon_ = 0, weightDecay_ = 0;
};

} // namespace

TrainingKernelOr createAdamUpdate(const CudaKernelConfig &c) {
  GOPT_RETURN_IF_ERROR(requireF32(c, 5));
  return own(std::make_unique<AdamUpdateKernel>(c));
}

TrainingKernelOr createAvgPoolGrad(const CudaKernelConfig &c) {
  return PoolGradKernel::create(c, false);
}

TrainingKernelOr createBatchNormGrad(const CudaKernelConfig &c) {
  return BatchNormGradKernel::create(c);
}

TrainingKernelOr createBatchNormTraining(const CudaKernelConfig &c) {
  return BatchNormTrainingKernel::create(c);
}

TrainingKernelOr createConv2dBackpropFilter(const CudaKernelConfig &c) {
  return ConvGradKernel::create(c, true);
}

TrainingKernelOr createConv2dBackpropInput(const CudaKernelConfig &c) {
  return ConvGradKernel::create(c, false);
}

TrainingKernelOr createMaxPoolGrad(const CudaKernelConfig &c) {
  return PoolGradKernel::create(c, true);
}

TrainingKernelOr createMseLoss(const CudaKernelConfig &c) {
  GOPT_RETURN_IF_ERROR(requireF32(c, 2));
  return own(std::make_unique<MseKernel>(c, false));
}

TrainingKernelOr createMseLossGrad(const CudaKernelConfig &c) {
  GOPT_RETURN_IF_ERROR(requireF32(c, 2));
  return own(std::make_unique<MseKernel>(c, true));
}

TrainingKernelOr createReluGrad(const CudaKernelConfig &c) {
  GOPT_RETURN_IF_ERROR(requireF32(c, 2));
  return own(std::make_unique<ReluGradKernel>(c));
}

TrainingKernelOr createSgdUpdate(const CudaKernelConfig &c) {
  GOPT_RETURN_IF_ERROR(requireF32(c, 3));
  return own(std::make_unique<SgdUpdateKernel>(c));
}

TrainingKernelOr createSoftmaxCrossEntropy(const CudaKernelConfig &c) {
  return CrossEntropyKernel::create(c, false);
}

TrainingKernelOr createSoftmaxCrossEntropyGrad(const CudaKernelConfig &c) {
  return CrossEntropyKernel::create(c, true);
}

} // namespace gopt::runtime::cuda
