//===- RefNN.cpp - Reference conv, norm, matmul, pooling, softmax ---------===//
#include "../collectives/CommunicationQueue.h"
#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gopt::runtime::ref {
namespace {

float activate(const std::string &activation, float v) {
  if (activation == "relu")
    return v > 0 ? v : 0;
  if (activation == "relu6")
    return std::min(std::max(v, 0.0f), 6.0f);
  if (activation == "sigmoid")
    return 1.0f / (1.0f + std::exp(-v));
  return v;
}

Status conv2dKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  bool nchw = attrs.getString("data_format") == "NCHW";
  bool oihw = attrs.getString("filter_format") == "OIHW";
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> dilations = attrs.getWindowInts("dilations");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  std::string activation = attrs.getString("activation");
  int64_t groups = attrs.getInt("groups");
  Layout4D x(in[0].shape(), nchw), y(out[0].shape(), nchw);
  const Shape &f = in[1].shape();
  int64_t kh = oihw ? f[2] : f[0], kw = oihw ? f[3] : f[1];
  int64_t cinPerGroup = oihw ? f[1] : f[2];
  int64_t coutPerGroup = y.c / groups;
  GOPT_ASSIGN_OR_RETURN(WindowDim wh,
                        computeWindowDim(x.h, kh, strides[0], dilations[0],
                                         padding, pads[0], pads[1], false));
  GOPT_ASSIGN_OR_RETURN(WindowDim ww,
                        computeWindowDim(x.w, kw, strides[1], dilations[1],
                                         padding, pads[2], pads[3], false));
  auto filterAt = [&](int64_t o, int64_t i, int64_t r, int64_t s) {
    return oihw ? ((o * cinPerGroup + i) * kh + r) * kw + s
                : ((r * kw + s) * cinPerGroup + i) * y.c + o;
  };
  const float *px = in[0].data<float>(), *pw = in[1].data<float>();
  const float *pb = in.size() > 2 ? in[2].data<float>() : nullptr;
  float *py = out[0].data<float>();
  for (int64_t n = 0; n < y.n; ++n)
    for (int64_t o = 0; o < y.c; ++o) {
      int64_t g = o / coutPerGroup;
      for (int64_t oh = 0; oh < y.h; ++oh)
        for (int64_t ow = 0; ow < y.w; ++ow) {
          double acc = pb ? pb[o] : 0.0;
          for (int64_t i = 0; i < cinPerGroup; ++i)
            for (int64_t r = 0; r < kh; ++r) {
              int64_t ih = oh * strides[0] - wh.padBefore + r * dilations[0];
              if (ih < 0 || ih >= x.h)
                continue;
              for (int64_t s = 0; s < kw; ++s) {
                int64_t iw = ow * strides[1] - ww.padBefore + s * dilations[1];
                if (iw < 0 || iw >= x.w)
                  continue;
                acc += static_cast<double>(
                           px[x.at(n, g * cinPerGroup + i, ih, iw)]) *
                       pw[filterAt(o, i, r, s)];
              }
            }
          py[y.at(n, o, oh, ow)] =
              activate(activation, static_cast<float>(acc));
        }
    }
  return Status::success();
}

Status batchNormKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  const Tensor &x = in[0];
  int64_t axis = channelAxis(attrs.getString("data_format"), x.rank());
  double eps = attrs.getFloat("epsilon");
  int64_t channels = x.dim(axis);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    inner *= x.dim(d);
  int64_t total = x.numElements();
  auto channelOf = [&](int64_t i) { return (i / inner) % channels; };
  const float *px = x.data<float>(), *scale = in[1].data<float>(),
              *offset = in[2].data<float>(), *mean = in[3].data<float>(),
              *var = in[4].data<float>();
  float *py = out[0].data<float>();
  bool crossReplica = attrs.getBool("cross_replica");
  if (crossReplica && !attrs.getBool("training"))
    return invalidArgument("cross_replica statistics need the training form "
                           "(training = true)");
  if (!attrs.getBool("training")) {
    for (int64_t i = 0; i < total; ++i) {
      int64_t c = channelOf(i);
      py[i] = static_cast<float>(
          (px[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + offset[c]);
    }
    return Status::success();
  }
  // Training: batch statistics over every axis but the channel (and, for
  // cross_replica, over every replica's batch: the sums and the count are
  // summed across replicas, twice, as the two passes here need).
  std::vector<double> sum(channels + 1, 0), sumSq(channels, 0);
  for (int64_t i = 0; i < total; ++i)
    sum[channelOf(i)] += px[i];
  sum[channels] = channels ? static_cast<double>(total / channels) : 0;
  if (crossReplica)
    GOPT_RETURN_IF_ERROR(sumAcrossReplicas(ctx.communicator,
                                           ctx.communicationQueue, sum,
                                           ctx.op->name() + " mean"));
  double count = sum[channels];
  std::vector<double> batchMean(channels), batchVar(channels);
  for (int64_t c = 0; c < channels; ++c)
    batchMean[c] = count ? sum[c] / count : 0;
  for (int64_t i = 0; i < total; ++i) {
    double d = px[i] - batchMean[channelOf(i)];
    sumSq[channelOf(i)] += d * d;
  }
  if (crossReplica)
    GOPT_RETURN_IF_ERROR(sumAcrossReplicas(ctx.communicator,
                                           ctx.communicationQueue, sumSq,
                                           ctx.op->name() + " variance"));
  for (int64_t c = 0; c < channels; ++c)
    batchVar[c] = count ? sumSq[c] / count : 0;
  for (int64_t i = 0; i < total; ++i) {
    int64_t c = channelOf(i);
    py[i] = static_cast<float>((px[i] - batchMean[c]) /
                                   std::sqrt(batchVar[c] + eps) * scale[c] +
                               offset[c]);
  }
  double momentum = attrs.getFloat("momentum");
  float *outMean = out[1].data<float>(), *outVar = out[2].data<float>(),
        *runMean = out[3].data<float>(), *runVar = out[4].data<float>();
  for (int64_t c = 0; c < channels; ++c) {
    double unbiased =
        count > 1 ? batchVar[c] * count / (count - 1) : batchVar[c];
    outMean[c] = static_cast<float>(batchMean[c]);
    outVar[c] = static_cast<float>(batchVar[c]);
    runMean[c] =
        static_cast<float>(momentum * mean[c] + (1 - momentum) * batchMean[c]);
    runVar[c] =
        static_cast<float>(momentum * var[c] + (1 - momentum) * unbiased);
  }
  return Status::success();
}

Status matmulKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  bool ta = attrs.getBool("transpose_a");
  bool tb = attrs.getBool("transpose_b");
  const Shape &a = in[0].shape(), &b = in[1].shape(), &c = out[0].shape();
  size_t ra = a.size(), rb = b.size(), rc = c.size();
  int64_t m = c[rc - 2], n = c[rc - 1];
  int64_t k = ta ? a[ra - 2] : a[ra - 1];
  Shape batchC(c.begin(), c.end() - 2), batchA(a.begin(), a.end() - 2),
      batchB(b.begin(), b.end() - 2);
  const float *pa = in[0].data<float>(), *pb = in[1].data<float>();
  float *pc = out[0].data<float>();
  int64_t sizeA = a[ra - 2] * a[ra - 1], sizeB = b[rb - 2] * b[rb - 1];
  forEachBroadcast(
      batchC, batchA, batchB, [&](int64_t ic, int64_t iA, int64_t iB) {
        const float *ma = pa + iA * sizeA, *mb = pb + iB * sizeB;
        float *mc = pc + ic * m * n;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (int64_t p = 0; p < k; ++p)
              acc += static_cast<double>(ta ? ma[p * m + i] : ma[i * k + p]) *
                     (tb ? mb[j * k + p] : mb[p * n + j]);
            mc[i * n + j] = static_cast<float>(acc);
          }
      });
  return Status::success();
}

template <bool IsMax>
Status poolKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  GOPT_ASSIGN_OR_RETURN(PoolWindow pw, poolWindow(ctx.attrs(), in[0].shape()));
  Layout4D x(in[0].shape(), pw.nchw), y(out[0].shape(), pw.nchw);
  const int64_t kh = pw.kernel[0], kw = pw.kernel[1];
  const float *px = in[0].data<float>();
  float *py = out[0].data<float>();
  for (int64_t n = 0; n < y.n; ++n)
    for (int64_t c = 0; c < y.c; ++c)
      for (int64_t oh = 0; oh < y.h; ++oh)
        for (int64_t ow = 0; ow < y.w; ++ow) {
          int64_t h0 = pw.top(oh), w0 = pw.left(ow);
          double acc = IsMax ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int64_t ih = std::max<int64_t>(h0, 0);
               ih < std::min(h0 + kh, x.h); ++ih)
            for (int64_t iw = std::max<int64_t>(w0, 0);
                 iw < std::min(w0 + kw, x.w); ++iw) {
              double v = px[x.at(n, c, ih, iw)];
              acc = IsMax ? (std::isnan(v) || v > acc ? v : acc) : acc + v;
            }
          if (!IsMax) {
            int64_t count =
                avgPoolCount(h0, w0, kh, kw, x.h, x.w, pw.h.padAfter,
                             pw.w.padAfter, pw.includePad);
            acc = count ? acc / count : 0.0;
          }
          py[y.at(n, c, oh, ow)] = static_cast<float>(acc);
        }
  return Status::success();
}

Status globalAvgPoolKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                           std::vector<Tensor> &out) {
  bool nchw = ctx.attrs().getString("data_format") == "NCHW";
  Layout4D x(in[0].shape(), nchw), y(out[0].shape(), nchw);
  const float *px = in[0].data<float>();
  float *py = out[0].data<float>();
  for (int64_t n = 0; n < x.n; ++n)
    for (int64_t c = 0; c < x.c; ++c) {
      double sum = 0;
      for (int64_t h = 0; h < x.h; ++h)
        for (int64_t w = 0; w < x.w; ++w)
          sum += px[x.at(n, c, h, w)];
      py[y.at(n, c, 0, 0)] = static_cast<float>(sum / (x.h * x.w));
    }
  return Status::success();
}

template <bool Log>
Status softmaxKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  const Tensor &x = in[0];
  int64_t axis = ctx.attrs().getInt("axis");
  if (axis < 0)
    axis += x.rank();
  int64_t outer = 1, len = x.dim(axis), inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    inner *= x.dim(d);
  const float *px = x.data<float>();
  float *py = out[0].data<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float *row = px + o * len * inner + i;
      float *dst = py + o * len * inner + i;
      // Subtracting the max keeps exp from overflowing.
      double maxValue = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j)
        maxValue = std::max<double>(maxValue, row[j * inner]);
      double sum = 0;
      for (int64_t j = 0; j < len; ++j)
        sum += std::exp(row[j * inner] - maxValue);
      for (int64_t j = 0; j < len; ++j) {
        double shifted = row[j * inner] - maxValue;
        dst[j * inner] = static_cast<float>(Log ? shifted - std::log(sum)
                                                : std::exp(shifted) / sum);
      }
    }
  return Status::success();
}

} // namespace

StatusOr<PoolWindow> poolWindow(const OpAttrs &attrs, const Shape &x) {
  PoolWindow pw;
  pw.nchw = attrs.getString("data_format") == "NCHW";
  pw.kernel = attrs.getInts("kernel");
  pw.strides = attrs.getWindowInts("strides");
  pw.includePad = attrs.getBool("count_include_pad");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  bool ceilMode = attrs.getBool("ceil_mode");
  Layout4D l(x, pw.nchw);
  GOPT_ASSIGN_OR_RETURN(pw.h,
                        computeWindowDim(l.h, pw.kernel[0], pw.strides[0], 1,
                                         padding, pads[0], pads[1], ceilMode));
  GOPT_ASSIGN_OR_RETURN(pw.w,
                        computeWindowDim(l.w, pw.kernel[1], pw.strides[1], 1,
                                         padding, pads[2], pads[3], ceilMode));
  return pw;
}

void registerNNKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  registerKernel(r, "conv2d", conv2dKernel, D::kFloat);
  registerKernel(r, "batch_norm", batchNormKernel, D::kFloat);
  registerKernel(r, "matmul", matmulKernel, D::kFloat);
  registerKernel(r, "max_pool", poolKernel<true>, D::kFloat);
  registerKernel(r, "avg_pool", poolKernel<false>, D::kFloat);
  registerKernel(r, "global_avg_pool", globalAvgPoolKernel, D::kFloat);
  registerKernel(r, "softmax", softmaxKernel<false>, D::kFloat);
  registerKernel(r, "log_softmax", softmaxKernel<true>, D::kFloat);
}

} // namespace gopt::runtime::ref
