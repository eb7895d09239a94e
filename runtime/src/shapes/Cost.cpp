//===- Cost.cpp - Arithmetic of the compute-heavy ops ---------------------===//
#include "Cost.h"

namespace gopt::runtime {

namespace {

double elements(const Shape &shape) {
  double n = 1;
  for (int64_t d : shape)
    n *= static_cast<double>(d);
  return n;
}

/// Channels-first layouts ("NCHW", "NCW", "NCDHW") keep channels on axis 1.
size_t channelAxis(const std::string &dataFormat, const Shape &shape) {
  bool first = dataFormat.size() > 1 && dataFormat[1] == 'C';
  return first || shape.size() < 2 ? 1 : shape.size() - 1;
}

/// Each element of `perPosition` is a dot product with one filter slice:
/// the filter's elements divided by the channels on `axis`.
double slicedFlops(const Shape &perPosition, size_t axis, const Shape &filter) {
  if (axis >= perPosition.size() || perPosition[axis] <= 0)
    return 0;
  return 2 * elements(perPosition) * elements(filter) /
         static_cast<double>(perPosition[axis]);
}

} // namespace

double conv2dFlops(const OpAttrs &attrs, const std::vector<Shape> &in,
                   const std::vector<Shape> &out) {
  const Shape &y = out[0];
  return slicedFlops(y, channelAxis(attrs.getString("data_format"), y), in[1]);
}

double conv3dFlops(const OpAttrs &, const std::vector<Shape> &in,
                   const std::vector<Shape> &out) {
  return slicedFlops(out[0], 1, in[1]);
}

double conv2dTransposeFlops(const OpAttrs &attrs, const std::vector<Shape> &in,
                            const std::vector<Shape> &) {
  const Shape &x = in[0];
  return slicedFlops(x, channelAxis(attrs.getString("data_format"), x), in[1]);
}

double conv3dTransposeFlops(const OpAttrs &, const std::vector<Shape> &in,
                            const std::vector<Shape> &) {
  return slicedFlops(in[0], 1, in[1]);
}

double conv2dBackpropInputFlops(const OpAttrs &attrs,
                                const std::vector<Shape> &in,
                                const std::vector<Shape> &) {
  const Shape &dy = in[0];
  return slicedFlops(dy, channelAxis(attrs.getString("data_format"), dy),
                     in[1]);
}

double conv2dBackpropFilterFlops(const OpAttrs &attrs,
                                 const std::vector<Shape> &in,
                                 const std::vector<Shape> &out) {
  const Shape &dy = in[1];
  return slicedFlops(dy, channelAxis(attrs.getString("data_format"), dy),
                     out[0]);
}

double matmulFlops(const OpAttrs &attrs, const std::vector<Shape> &in,
                   const std::vector<Shape> &out) {
  const Shape &a = in[0];
  if (a.empty())
    return 0;
  int64_t k = a.size() >= 2 && attrs.getBool("transpose_a") ? a[a.size() - 2]
                                                            : a.back();
  return 2 * elements(out[0]) * static_cast<double>(k);
}

double recurrentFlops(const OpAttrs &, const std::vector<Shape> &in,
                      const std::vector<Shape> &) {
  const Shape &x = in[0];
  if (x.empty() || x.back() <= 0)
    return 0;
  double rows = elements(x) / static_cast<double>(x.back());
  return 2 * rows * (elements(in[1]) + elements(in[2]));
}

} // namespace gopt::runtime
