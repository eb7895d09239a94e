//===- RefNorm.cpp - Reference layer_norm, instance_norm and lrn ----------===//
//
// Statistics accumulate in double, so the reference stays the oracle for
// long rows (a transformer's 4096-wide hidden state).
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include "gopt/runtime/OpAttrs.h"

#include <algorithm>
#include <cmath>

namespace gopt::runtime::ref {
namespace {

Status layerNormKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  op_attrs::LayerNormAttrs attrs(*ctx.op);
  const Tensor &x = in[0];
  int64_t axis = attrs.axis();
  if (axis < 0)
    axis += x.rank();
  Shape normalized(x.shape().begin() + axis, x.shape().end());
  int64_t rows = 1, len = 1;
  for (int64_t d = 0; d < axis; ++d)
    rows *= x.dim(d);
  for (int64_t d : normalized)
    len *= d;
  std::vector<int64_t> scaleAt = broadcastIndices(in[1].shape(), normalized);
  std::vector<int64_t> biasAt = broadcastIndices(in[2].shape(), normalized);
  const double epsilon = static_cast<float>(attrs.epsilon());
  const float *px = x.data<float>(), *scale = in[1].data<float>(),
              *bias = in[2].data<float>();
  float *py = out[0].data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = px + r * len;
    double mean = 0;
    for (int64_t j = 0; j < len; ++j)
      mean += row[j];
    mean /= static_cast<double>(len);
    double variance = 0;
    for (int64_t j = 0; j < len; ++j)
      variance += (row[j] - mean) * (row[j] - mean);
    variance /= static_cast<double>(len);
    double invStd = 1.0 / std::sqrt(variance + epsilon);
    for (int64_t j = 0; j < len; ++j)
      py[r * len + j] = static_cast<float>(
          (row[j] - mean) * invStd * scale[scaleAt[j]] + bias[biasAt[j]]);
  }
  return Status::success();
}

// A rank >= 3 activation as [batch, channels, spatial] with strides, for
// either channel position (NCHW-like or NHWC).
struct ChannelView {
  int64_t n = 1, c = 1, spatial = 1;
  bool channelsLast = false;
  ChannelView(const Shape &shape, int64_t channelAxis) {
    n = shape[0];
    c = shape[channelAxis];
    for (size_t d = 1; d < shape.size(); ++d)
      if (static_cast<int64_t>(d) != channelAxis)
        spatial *= shape[d];
    channelsLast = channelAxis == static_cast<int64_t>(shape.size()) - 1;
  }
  int64_t at(int64_t in, int64_t ic, int64_t is) const {
    return channelsLast ? (in * spatial + is) * c + ic
                        : (in * c + ic) * spatial + is;
  }
};

int64_t channelAxisOf(const OpAttrs &attrs, const Tensor &x) {
  return shape::normalizationChannelAxis(attrs.getString("data_format"),
                                         x.rank());
}

Status instanceNormKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                          std::vector<Tensor> &out) {
  op_attrs::InstanceNormAttrs attrs(*ctx.op);
  ChannelView v(in[0].shape(), channelAxisOf(ctx.attrs(), in[0]));
  const double epsilon = static_cast<float>(attrs.epsilon());
  const float *px = in[0].data<float>(), *scale = in[1].data<float>(),
              *bias = in[2].data<float>();
  float *py = out[0].data<float>();
  for (int64_t n = 0; n < v.n; ++n)
    for (int64_t c = 0; c < v.c; ++c) {
      double mean = 0;
      for (int64_t s = 0; s < v.spatial; ++s)
        mean += px[v.at(n, c, s)];
      mean /= static_cast<double>(v.spatial);
      double variance = 0;
      for (int64_t s = 0; s < v.spatial; ++s) {
        double d = px[v.at(n, c, s)] - mean;
        variance += d * d;
      }
      variance /= static_cast<double>(v.spatial);
      double invStd = 1.0 / std::sqrt(variance + epsilon);
      for (int64_t s = 0; s < v.spatial; ++s) {
        int64_t i = v.at(n, c, s);
        py[i] =
            static_cast<float>((px[i] - mean) * invStd * scale[c] + bias[c]);
      }
    }
  return Status::success();
}

Status lrnKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  op_attrs::LrnAttrs attrs(*ctx.op);
  ChannelView v(in[0].shape(), channelAxisOf(ctx.attrs(), in[0]));
  const int64_t size = attrs.size();
  const double alpha = static_cast<float>(attrs.alpha());
  const double beta = static_cast<float>(attrs.beta());
  const double bias = static_cast<float>(attrs.bias());
  const int64_t below = (size - 1) / 2, above = size - 1 - below;
  const float *px = in[0].data<float>();
  float *py = out[0].data<float>();
  for (int64_t n = 0; n < v.n; ++n)
    for (int64_t c = 0; c < v.c; ++c) {
      int64_t first = std::max<int64_t>(0, c - below);
      int64_t last = std::min<int64_t>(v.c - 1, c + above);
      for (int64_t s = 0; s < v.spatial; ++s) {
        double sumSquares = 0;
        for (int64_t k = first; k <= last; ++k) {
          double value = px[v.at(n, k, s)];
          sumSquares += value * value;
        }
        int64_t i = v.at(n, c, s);
        py[i] = static_cast<float>(
            px[i] / std::pow(bias + alpha / size * sumSquares, beta));
      }
    }
  return Status::success();
}

} // namespace

void registerNormKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  registerKernel(r, "layer_norm", layerNormKernel, D::kFloat);
  registerKernel(r, "instance_norm", instanceNormKernel, D::kFloat);
  registerKernel(r, "lrn", lrnKernel, D::kFloat);
}

} // namespace gopt::runtime::ref
