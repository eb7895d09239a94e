//===- RefTraining.cpp - Reference gradient and optimizer kernels ---------===//
//
// The oracle of the training ops (docs/op-semantics.md, "Training ops"):
// each gradient kernel is the forward reference kernel's loop nest run
// backwards (scattering where the forward gathers), accumulating in double.
//
//===----------------------------------------------------------------------===//
#include "../collectives/CommunicationQueue.h"
#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gopt::runtime::ref {
namespace {

Status reluGradKernel(const RefContext &, const std::vector<Tensor> &in,
                      std::vector<Tensor> &out) {
  const float *dy = in[0].data<float>(), *y = in[1].data<float>();
  float *dx = out[0].data<float>();
  for (int64_t i = 0, n = out[0].numElements(); i < n; ++i)
    dx[i] = y[i] > 0 ? dy[i] : 0.0f;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// conv2d gradients
//===----------------------------------------------------------------------===//

// The forward conv2d's geometry, from its input x, filter and output y
// shapes; visit() walks the forward loop nest and hands every
// (x index, filter index, y index) triple to `fn`.
struct ConvGeometry {
  Layout4D x, y;
  bool oihw;
  int64_t kh, kw, cinPerGroup, coutPerGroup;
  int64_t strideH, strideW, dilH, dilW, padTop, padLeft;

  ConvGeometry(const OpAttrs &attrs, const Shape &xs, const Shape &fs,
               const Shape &ys, const WindowDim &wh, const WindowDim &ww)
      : x(xs, attrs.getString("data_format") == "NCHW"),
        y(ys, attrs.getString("data_format") == "NCHW") {
    oihw = attrs.getString("filter_format") == "OIHW";
    kh = oihw ? fs[2] : fs[0];
    kw = oihw ? fs[3] : fs[1];
    cinPerGroup = oihw ? fs[1] : fs[2];
    coutPerGroup = y.c / attrs.getInt("groups");
    std::vector<int64_t> strides = attrs.getWindowInts("strides");
    std::vector<int64_t> dilations = attrs.getWindowInts("dilations");
    strideH = strides[0];
    strideW = strides[1];
    dilH = dilations[0];
    dilW = dilations[1];
    padTop = wh.padBefore;
    padLeft = ww.padBefore;
  }

  int64_t filterAt(int64_t o, int64_t i, int64_t r, int64_t s) const {
    return oihw ? ((o * cinPerGroup + i) * kh + r) * kw + s
                : ((r * kw + s) * cinPerGroup + i) * y.c + o;
  }

  template <typename Fn> void visit(Fn fn) const {
    for (int64_t n = 0; n < y.n; ++n)
      for (int64_t o = 0; o < y.c; ++o) {
        int64_t g = o / coutPerGroup;
        for (int64_t oh = 0; oh < y.h; ++oh)
          for (int64_t ow = 0; ow < y.w; ++ow) {
            int64_t yi = y.at(n, o, oh, ow);
            for (int64_t i = 0; i < cinPerGroup; ++i)
              for (int64_t r = 0; r < kh; ++r) {
                int64_t ih = oh * strideH - padTop + r * dilH;
                if (ih < 0 || ih >= x.h)
                  continue;
                for (int64_t s = 0; s < kw; ++s) {
                  int64_t iw = ow * strideW - padLeft + s * dilW;
                  if (iw < 0 || iw >= x.w)
                    continue;
                  fn(x.at(n, g * cinPerGroup + i, ih, iw), filterAt(o, i, r, s),
                     yi);
                }
              }
          }
      }
  }
};

StatusOr<ConvGeometry> convGeometry(const OpAttrs &attrs, const Shape &x,
                                    const Shape &f, const Shape &y) {
  bool nchw = attrs.getString("data_format") == "NCHW";
  bool oihw = attrs.getString("filter_format") == "OIHW";
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> dilations = attrs.getWindowInts("dilations");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  int64_t h = nchw ? x[2] : x[1], w = nchw ? x[3] : x[2];
  int64_t kh = oihw ? f[2] : f[0], kw = oihw ? f[3] : f[1];
  GOPT_ASSIGN_OR_RETURN(WindowDim wh,
                        computeWindowDim(h, kh, strides[0], dilations[0],
                                         padding, pads[0], pads[1], false));
  GOPT_ASSIGN_OR_RETURN(WindowDim ww,
                        computeWindowDim(w, kw, strides[1], dilations[1],
                                         padding, pads[2], pads[3], false));
  return ConvGeometry(attrs, x, f, y, wh, ww);
}

// dx[x] = sum over (filter, y) pairs of dy[y] * filter[f].
Status conv2dBackpropInputKernel(const RefContext &ctx,
                                 const std::vector<Tensor> &in,
                                 std::vector<Tensor> &out) {
  GOPT_ASSIGN_OR_RETURN(
      ConvGeometry geo,
      convGeometry(ctx.attrs(), out[0].shape(), in[1].shape(), in[0].shape()));
  const float *dy = in[0].data<float>(), *f = in[1].data<float>();
  std::vector<double> acc(out[0].numElements(), 0.0);
  geo.visit([&](int64_t xi, int64_t fi, int64_t yi) {
    acc[xi] += static_cast<double>(dy[yi]) * f[fi];
  });
  float *dx = out[0].data<float>();
  for (size_t i = 0; i < acc.size(); ++i)
    dx[i] = static_cast<float>(acc[i]);
  return Status::success();
}

// dfilter[f] = sum over (x, y) pairs of dy[y] * x[x].
Status conv2dBackpropFilterKernel(const RefContext &ctx,
                                  const std::vector<Tensor> &in,
                                  std::vector<Tensor> &out) {
  GOPT_ASSIGN_OR_RETURN(
      ConvGeometry geo,
      convGeometry(ctx.attrs(), in[0].shape(), out[0].shape(), in[1].shape()));
  const float *x = in[0].data<float>(), *dy = in[1].data<float>();
  std::vector<double> acc(out[0].numElements(), 0.0);
  geo.visit([&](int64_t xi, int64_t fi, int64_t yi) {
    acc[fi] += static_cast<double>(dy[yi]) * x[xi];
  });
  float *df = out[0].data<float>();
  for (size_t i = 0; i < acc.size(); ++i)
    df[i] = static_cast<float>(acc[i]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// max_pool_grad
//===----------------------------------------------------------------------===//

// Each window's dy goes to the element max_pool picked: the first maximum
// in row-major window order (a NaN beats everything, the last NaN wins, as
// in PyTorch); padding never wins.
Status maxPoolGradKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                         std::vector<Tensor> &out) {
  GOPT_ASSIGN_OR_RETURN(PoolWindow pw, poolWindow(ctx.attrs(), in[0].shape()));
  Layout4D x(in[0].shape(), pw.nchw), y(in[1].shape(), pw.nchw);
  const int64_t kh = pw.kernel[0], kw = pw.kernel[1];
  const float *px = in[0].data<float>(), *dy = in[1].data<float>();
  std::vector<double> acc(out[0].numElements(), 0.0);
  for (int64_t n = 0; n < y.n; ++n)
    for (int64_t c = 0; c < y.c; ++c)
      for (int64_t oh = 0; oh < y.h; ++oh)
        for (int64_t ow = 0; ow < y.w; ++ow) {
          int64_t h0 = pw.top(oh), w0 = pw.left(ow);
          int64_t best = -1;
          for (int64_t ih = std::max<int64_t>(h0, 0);
               ih < std::min(h0 + kh, x.h); ++ih)
            for (int64_t iw = std::max<int64_t>(w0, 0);
                 iw < std::min(w0 + kw, x.w); ++iw) {
              int64_t i = x.at(n, c, ih, iw);
              if (best < 0 || std::isnan(px[i]) || px[i] > px[best])
                best = i;
            }
          if (best >= 0) // else the window lies entirely in padding
            acc[best] += dy[y.at(n, c, oh, ow)];
        }
  float *dx = out[0].data<float>();
  for (size_t i = 0; i < acc.size(); ++i)
    dx[i] = static_cast<float>(acc[i]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// avg_pool_grad
//===----------------------------------------------------------------------===//

// Each window's dy / count goes to every element avg_pool averaged over it,
// with avg_pool's count (avgPoolCount, as poolKernel in RefNN.cpp).
Status avgPoolGradKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                         std::vector<Tensor> &out) {
  GOPT_ASSIGN_OR_RETURN(PoolWindow pw, poolWindow(ctx.attrs(), in[0].shape()));
  Layout4D x(in[0].shape(), pw.nchw), y(in[1].shape(), pw.nchw);
  const int64_t kh = pw.kernel[0], kw = pw.kernel[1];
  const float *dy = in[1].data<float>();
  std::vector<double> acc(out[0].numElements(), 0.0);
  for (int64_t n = 0; n < y.n; ++n)
    for (int64_t c = 0; c < y.c; ++c)
      for (int64_t oh = 0; oh < y.h; ++oh)
        for (int64_t ow = 0; ow < y.w; ++ow) {
          int64_t h0 = pw.top(oh), w0 = pw.left(ow);
          int64_t count = avgPoolCount(h0, w0, kh, kw, x.h, x.w, pw.h.padAfter,
                                       pw.w.padAfter, pw.includePad);
          if (count == 0)
            continue; // the forward wrote 0 here, whatever the input
          double share = static_cast<double>(dy[y.at(n, c, oh, ow)]) / count;
          for (int64_t ih = std::max<int64_t>(h0, 0);
               ih < std::min(h0 + kh, x.h); ++ih)
            for (int64_t iw = std::max<int64_t>(w0, 0);
                 iw < std::min(w0 + kw, x.w); ++iw)
              acc[x.at(n, c, ih, iw)] += share;
        }
  float *dx = out[0].data<float>();
  for (size_t i = 0; i < acc.size(); ++i)
    dx[i] = static_cast<float>(acc[i]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Losses: softmax_cross_entropy, mse_loss and their gradients
//===----------------------------------------------------------------------===//

// Reads label `row` of an i32 or i64 tensor and checks it against
// [0, classes).
StatusOr<int64_t> labelAt(const Tensor &labels, int64_t row, int64_t classes) {
  int64_t label = labels.dtype() == DType::kI32 ? labels.data<int32_t>()[row]
                                                : labels.data<int64_t>()[row];
  if (label < 0 || label >= classes)
    return invalidArgument("label ", label, " of row ", row, " is outside [0, ",
                           classes, ")");
  return label;
}

// Per row: the max and log(sum(exp(logit - max))).
void rowLogSumExp(const float *row, int64_t classes, double &maxValue,
                  double &logSum) {
  maxValue = -INFINITY;
  for (int64_t j = 0; j < classes; ++j)
    maxValue = std::max<double>(maxValue, row[j]);
  double sum = 0;
  for (int64_t j = 0; j < classes; ++j)
    sum += std::exp(row[j] - maxValue);
  logSum = std::log(sum);
}

Status crossEntropyKernel(const RefContext &, const std::vector<Tensor> &in,
                          std::vector<Tensor> &out) {
  int64_t rows = in[0].dim(0), classes = in[0].dim(1);
  const float *logits = in[0].data<float>();
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    GOPT_ASSIGN_OR_RETURN(int64_t label, labelAt(in[1], r, classes));
    const float *row = logits + r * classes;
    double maxValue, logSum;
    rowLogSumExp(row, classes, maxValue, logSum);
    total += logSum - (row[label] - maxValue);
  }
  out[0].data<float>()[0] = static_cast<float>(rows ? total / rows : 0.0);
  return Status::success();
}

Status crossEntropyGradKernel(const RefContext &, const std::vector<Tensor> &in,
                              std::vector<Tensor> &out) {
  int64_t rows = in[0].dim(0), classes = in[0].dim(1);
  const float *logits = in[0].data<float>();
  float *grad = out[0].data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    GOPT_ASSIGN_OR_RETURN(int64_t label, labelAt(in[1], r, classes));
    const float *row = logits + r * classes;
    double maxValue, logSum;
    rowLogSumExp(row, classes, maxValue, logSum);
    for (int64_t j = 0; j < classes; ++j) {
      double p = std::exp(row[j] - maxValue - logSum);
      grad[r * classes + j] =
          static_cast<float>((p - (j == label ? 1.0 : 0.0)) / rows);
    }
  }
  return Status::success();
}

// mean((prediction - target)^2) over all elements; 0 for empty tensors.
Status mseLossKernel(const RefContext &, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  const float *p = in[0].data<float>(), *t = in[1].data<float>();
  int64_t n = in[0].numElements();
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = static_cast<double>(p[i]) - t[i];
    sum += d * d;
  }
  out[0].data<float>()[0] = static_cast<float>(n ? sum / n : 0.0);
  return Status::success();
}

// 2 * (prediction - target) / numel.
Status mseLossGradKernel(const RefContext &, const std::vector<Tensor> &in,
                         std::vector<Tensor> &out) {
  const float *p = in[0].data<float>(), *t = in[1].data<float>();
  float *grad = out[0].data<float>();
  int64_t n = in[0].numElements();
  for (int64_t i = 0; i < n; ++i)
    grad[i] = static_cast<float>(2 * (static_cast<double>(p[i]) - t[i]) / n);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

// PyTorch's torch.optim.SGD (dampening 0).
Status sgdUpdateKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  double lr = attrs.getFloat("lr");
  double momentum = attrs.getFloat("momentum");
  double weightDecay = attrs.getFloat("weight_decay");
  bool nesterov = attrs.getBool("nesterov");
  const float *p = in[0].data<float>(), *grad = in[1].data<float>(),
              *vel = in[2].data<float>();
  float *newP = out[0].data<float>(), *newV = out[1].data<float>();
  for (int64_t i = 0, n = in[0].numElements(); i < n; ++i) {
    double g = grad[i] + weightDecay * p[i];
    double v = momentum * vel[i] + g;
    g = nesterov ? g + momentum * v : v;
    newV[i] = static_cast<float>(v);
    newP[i] = static_cast<float>(p[i] - lr * g);
  }
  return Status::success();
}

// PyTorch's torch.optim.Adam (amsgrad off); `step` is this update's t >= 1.
Status adamUpdateKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  double lr = attrs.getFloat("lr");
  double beta1 = attrs.getFloat("beta1");
  double beta2 = attrs.getFloat("beta2");
  double eps = attrs.getFloat("epsilon");
  double weightDecay = attrs.getFloat("weight_decay");
  double step = in[4].data<float>()[0];
  if (!(step >= 1))
    return invalidArgument("adam_update step ", step, " must be >= 1");
  double bc1 = 1 - std::pow(beta1, step), bc2 = 1 - std::pow(beta2, step);
  const float *p = in[0].data<float>(), *grad = in[1].data<float>(),
              *m = in[2].data<float>(), *v = in[3].data<float>();
  float *newP = out[0].data<float>(), *newM = out[1].data<float>(),
        *newV = out[2].data<float>();
  for (int64_t i = 0, n = in[0].numElements(); i < n; ++i) {
    double g = grad[i] + weightDecay * p[i];
    double mi = beta1 * m[i] + (1 - beta1) * g;
    double vi = beta2 * v[i] + (1 - beta2) * g * g;
    double denom = std::sqrt(vi) / std::sqrt(bc2) + eps;
    newM[i] = static_cast<float>(mi);
    newV[i] = static_cast<float>(vi);
    newP[i] = static_cast<float>(p[i] - lr / bc1 * mi / denom);
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Dynamic loss scaling: all_finite, select, loss_scale_update
//===----------------------------------------------------------------------===//

// Whether none of `n` floats with bit patterns `bits` has an all-ones
// exponent (inf or NaN). Branch-free over fixed-size blocks, so the compiler
// vectorizes the inner loop; the blocks stop early once one is found. Runs
// on f16/bf16 bit patterns directly (no conversion).
template <typename Bits>
bool allFiniteBits(const Bits *bits, int64_t n, Bits exponentMask) {
  constexpr int64_t kBlock = 1024;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    Bits bad = 0;
    for (int64_t j = 0; j < kBlock; ++j)
      bad |= static_cast<Bits>((bits[i + j] & exponentMask) == exponentMask);
    if (bad)
      return false;
  }
  Bits bad = 0;
  for (; i < n; ++i)
    bad |= static_cast<Bits>((bits[i] & exponentMask) == exponentMask);
  return !bad;
}

bool isAllFinite(const Tensor &t) {
  const int64_t n = t.numElements();
  switch (t.dtype()) {
  case DType::kF32:
    return allFiniteBits<uint32_t>(t.data<uint32_t>(), n, 0x7f800000u);
  case DType::kF16:
    return allFiniteBits<uint16_t>(t.data<uint16_t>(), n, 0x7c00u);
  case DType::kBF16:
    return allFiniteBits<uint16_t>(t.data<uint16_t>(), n, 0x7f80u);
  default:
    return true; // the schema admits float types only
  }
}

// True iff no element of any operand is inf or NaN.
Status allFiniteKernel(const RefContext &, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  bool finite = true;
  for (size_t i = 0; finite && i < in.size(); ++i)
    finite = isAllFinite(in[i]);
  out[0].data<uint8_t>()[0] = finite ? 1 : 0;
  return Status::success();
}

// pred ? on_true : on_false, whole tensors of any one element type.
Status selectKernel(const RefContext &, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  const Tensor &chosen = in[0].data<uint8_t>()[0] ? in[1] : in[2];
  if (out[0].data() != chosen.data())
    std::memcpy(out[0].data(), chosen.data(), chosen.byteSize());
  return Status::success();
}

// PyTorch's GradScaler.update (torch._amp_update_scale_): the products in
// double, rounded to f32 as PyTorch stores them.
Status lossScaleUpdateKernel(const RefContext &ctx,
                             const std::vector<Tensor> &in,
                             std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  double interval = static_cast<double>(attrs.getInt("growth_interval"));
  double growth = attrs.getFloat("growth_factor");
  double backoff = attrs.getFloat("backoff_factor");
  float scale = in[0].data<float>()[0];
  float goodSteps = in[1].data<float>()[0];
  bool finite = in[2].data<uint8_t>()[0] != 0;
  float newScale = scale, newGood = 0;
  if (!finite) {
    newScale = static_cast<float>(scale * backoff);
  } else if (goodSteps + 1.0 >= interval) {
    float grown = static_cast<float>(scale * growth);
    if (std::isfinite(grown))
      newScale = grown;
  } else {
    newGood = goodSteps + 1.0f;
  }
  out[0].data<float>()[0] = newScale;
  out[1].data<float>()[0] = newGood;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// batch_norm_grad
//===----------------------------------------------------------------------===//

// Gradient of training-form batch_norm given its batch statistics (biased
// variance): M elements per channel, xhat = (x - mean) * rsqrt(var + eps),
// doffset = sum(dy), dscale = sum(dy * xhat),
// dx = scale * rsqrt(var + eps) / M * (M * dy - doffset - xhat * dscale).
// cross_replica: M and the two sums in dx are the global batch's (summed
// across replicas); dscale and doffset stay this replica's sums.
Status batchNormGradKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                           std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  const Tensor &x = in[1];
  int64_t axis = channelAxis(attrs.getString("data_format"), x.rank());
  double eps = attrs.getFloat("epsilon");
  int64_t channels = x.dim(axis);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    inner *= x.dim(d);
  int64_t total = x.numElements();
  double count = channels ? static_cast<double>(total / channels) : 0;
  auto channelOf = [&](int64_t i) { return (i / inner) % channels; };
  const float *dy = in[0].data<float>(), *px = x.data<float>(),
              *scale = in[2].data<float>(), *mean = in[3].data<float>(),
              *var = in[4].data<float>();
  std::vector<double> invStd(channels), sumDy(channels, 0),
      sumDyXhat(channels, 0);
  for (int64_t c = 0; c < channels; ++c)
    invStd[c] = 1.0 / std::sqrt(static_cast<double>(var[c]) + eps);
  auto xhat = [&](int64_t i) {
    int64_t c = channelOf(i);
    return (px[i] - static_cast<double>(mean[c])) * invStd[c];
  };
  for (int64_t i = 0; i < total; ++i) {
    sumDy[channelOf(i)] += dy[i];
    sumDyXhat[channelOf(i)] += dy[i] * xhat(i);
  }
  float *dx = out[0].data<float>(), *dscale = out[1].data<float>(),
        *doffset = out[2].data<float>();
  for (int64_t c = 0; c < channels; ++c) {
    dscale[c] = static_cast<float>(sumDyXhat[c]);
    doffset[c] = static_cast<float>(sumDy[c]);
  }
  if (attrs.getBool("cross_replica")) {
    std::vector<double> sums(sumDy);
    sums.insert(sums.end(), sumDyXhat.begin(), sumDyXhat.end());
    sums.push_back(count);
    GOPT_RETURN_IF_ERROR(sumAcrossReplicas(ctx.communicator,
                                           ctx.communicationQueue, sums,
                                           ctx.op->name() + " sums"));
    std::copy(sums.begin(), sums.begin() + channels, sumDy.begin());
    std::copy(sums.begin() + channels, sums.begin() + 2 * channels,
              sumDyXhat.begin());
    count = sums.back();
  }
  for (int64_t i = 0; i < total; ++i) {
    int64_t c = channelOf(i);
    dx[i] = static_cast<float>(scale[c] * invStd[c] / count *
                               (count * static_cast<double>(dy[i]) - sumDy[c] -
                                xhat(i) * sumDyXhat[c]));
  }
  return Status::success();
}

} // namespace

void registerTrainingKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  registerKernel(r, "relu_grad", reluGradKernel, D::kFloat);
  registerKernel(r, "conv2d_backprop_input", conv2dBackpropInputKernel,
                 D::kFloat);
  registerKernel(r, "conv2d_backprop_filter", conv2dBackpropFilterKernel,
                 D::kFloat);
  registerKernel(r, "max_pool_grad", maxPoolGradKernel, D::kFloat);
  registerKernel(r, "avg_pool_grad", avgPoolGradKernel, D::kFloat);
  // Labels are integers: kNumeric lets them through (logits still f32).
  registerKernel(r, "softmax_cross_entropy", crossEntropyKernel, D::kNumeric);
  registerKernel(r, "softmax_cross_entropy_grad", crossEntropyGradKernel,
                 D::kNumeric);
  registerKernel(r, "mse_loss", mseLossKernel, D::kFloat);
  registerKernel(r, "mse_loss_grad", mseLossGradKernel, D::kFloat);
  registerKernel(r, "sgd_update", sgdUpdateKernel, D::kFloat);
  registerKernel(r, "adam_update", adamUpdateKernel, D::kFloat);
  registerKernel(r, "batch_norm_grad", batchNormGradKernel, D::kFloat);
  // Any element type: all_finite reads f16/bf16 bits without converting,
  // select copies bytes, loss_scale_update reads a bool.
  registerKernel(r, "all_finite", allFiniteKernel, D::kAny);
  registerKernel(r, "select", selectKernel, D::kAny);
  registerKernel(r, "loss_scale_update", lossScaleUpdateKernel, D::kAny);
}

} // namespace gopt::runtime::ref
