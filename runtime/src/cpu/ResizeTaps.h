//===- ResizeTaps.h - Which input pixels a resize reads ---------*- C++ -*-===//
//
// gopt.resize is separable: each output row (column) reads a few input rows
// (columns) with fixed weights: up to four, more for antialiased
// downscaling. These taps, computed once per axis as
// ONNX's reference (onnx/backend/test/case/node/resize.py) computes them,
// are what the reference kernel and the fast kernel share.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_RESIZETAPS_H
#define GOPT_RUNTIME_SRC_CPU_RESIZETAPS_H

#include "shapes/Image.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace gopt::runtime {

struct ResizeTap {
  int count = 0;              // 0: outside the input (tf_crop_and_resize)
  std::vector<int64_t> index; // clamped into [0, in)
  std::vector<double> weight;
};

struct ResizeAxis {
  int64_t inSize, outSize;
  double scale;            // the op's scale, or out / in for sizes
  double roiStart, roiEnd; // tf_crop_and_resize only
};

/// The taps of every output coordinate along one axis.
inline std::vector<ResizeTap>
computeResizeTaps(const ResizeAxis &axis, const std::string &mode,
                  const std::string &ctm, const std::string &nearestMode,
                  double cubicA, bool excludeOutside, bool antialias) {
  const int64_t in = axis.inSize;
  // ONNX's reference compares the float output length, in * scale, not the
  // integer size.
  const double outLen = axis.scale * static_cast<double>(in);
  std::vector<ResizeTap> taps(axis.outSize);
  for (int64_t o = 0; o < axis.outSize; ++o) {
    const double x = static_cast<double>(o);
    double xi;
    if (ctm == "align_corners")
      xi = outLen == 1 ? 0 : x * (in - 1) / (outLen - 1);
    else if (ctm == "asymmetric")
      xi = x / axis.scale;
    else if (ctm == "tf_half_pixel_for_nn")
      xi = (x + 0.5) / axis.scale;
    else if (ctm == "half_pixel_symmetric")
      // The input's centre maps to the output's even where the integer
      // size is not in * scale.
      xi = in / 2.0 * (1 - static_cast<double>(axis.outSize) / outLen) +
           (x + 0.5) / axis.scale - 0.5;
    else if (ctm == "pytorch_half_pixel")
      xi = outLen > 1 ? (x + 0.5) / axis.scale - 0.5 : 0;
    else if (ctm == "tf_crop_and_resize")
      xi = (outLen == 1
                ? (axis.roiEnd - axis.roiStart) * (in - 1) / 2
                : x * (axis.roiEnd - axis.roiStart) * (in - 1) / (outLen - 1)) +
           axis.roiStart * (in - 1);
    else // half_pixel
      xi = (x + 0.5) / axis.scale - 0.5;
    ResizeTap &t = taps[o];
    if (ctm == "tf_crop_and_resize" && (xi < 0 || xi > in - 1))
      continue; // count 0: extrapolation_value
    // The pixel left of xi and the distance to it, in (0, 1]: an integer
    // xi is reached from the pixel before it with ratio 1.
    double f = std::floor(xi);
    double ratio = xi - f;
    if (ratio == 0) {
      f -= 1;
      ratio = 1;
    }
    int64_t first = static_cast<int64_t>(f);
    // Antialiased downscaling stretches the filter by 1 / scale: the taps
    // reach `reach` pixels either side, weighted by the kernel of the
    // distance times scale, then renormalized (ONNX's reference).
    const double shrink = std::min(axis.scale, 1.0);
    if (antialias && mode != "nearest" && shrink < 1) {
      const double support = mode == "linear" ? 1 : 2;
      const int64_t start =
          static_cast<int64_t>(std::floor(-support / shrink)) + 1;
      const int64_t n = 2 - 2 * start;
      t.count = static_cast<int>(n);
      t.index.resize(n);
      t.weight.resize(n);
      const double a = cubicA;
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double d = std::abs((start + k - ratio) * shrink);
        double w;
        if (mode == "linear")
          w = std::max(0.0, 1 - d);
        else if (d <= 1)
          w = ((a + 2) * d - (a + 3)) * d * d + 1;
        else if (d < 2)
          w = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
        else
          w = 0;
        t.index[k] = first + start + k;
        t.weight[k] = w;
        sum += w;
      }
      for (double &w : t.weight)
        w /= sum;
    } else if (mode == "nearest") {
      bool right;
      if (ratio == 1 || nearestMode == "ceil")
        right = true;
      else if (nearestMode == "floor")
        right = false;
      else if (nearestMode == "round_prefer_ceil")
        right = ratio >= 0.5;
      else // round_prefer_floor
        right = ratio > 0.5;
      t.count = 1;
      t.index = {first + (right ? 1 : 0)};
      t.weight = {1.0};
    } else if (mode == "linear") {
      t.count = 2;
      t.index = {first, first + 1};
      t.weight = {1 - ratio, ratio};
    } else { // cubic, Keys' kernel with coefficient a
      const double a = cubicA, r = ratio, s = 1 - ratio;
      t.count = 4;
      t.index = {first - 1, first, first + 1, first + 2};
      t.weight.resize(4);
      t.weight[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
      t.weight[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
      t.weight[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
      t.weight[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
    }
    if (excludeOutside && mode != "nearest") {
      double sum = 0;
      for (int k = 0; k < t.count; ++k) {
        if (t.index[k] < 0 || t.index[k] >= in)
          t.weight[k] = 0;
        sum += t.weight[k];
      }
      if (sum != 0)
        for (int k = 0; k < t.count; ++k)
          t.weight[k] /= sum;
    }
    for (int k = 0; k < t.count; ++k)
      t.index[k] = std::clamp<int64_t>(t.index[k], 0, in - 1);
  }
  return taps;
}

/// The taps along H and W of a resize from `in` to `out` (4-D, in the op's
/// data_format).
struct ResizePlan {
  bool nchw;
  int64_t n, c, ih, iw, oh, ow;
  std::vector<ResizeTap> rows, cols;
};

inline ResizePlan planResize(const ResizeAttrs &a, const Shape &in,
                             const Shape &out) {
  ResizePlan p;
  p.nchw = a.dataFormat == "NCHW";
  p.n = in[0];
  p.c = p.nchw ? in[1] : in[3];
  p.ih = p.nchw ? in[2] : in[1];
  p.iw = p.nchw ? in[3] : in[2];
  p.oh = p.nchw ? out[2] : out[1];
  p.ow = p.nchw ? out[3] : out[2];
  auto axis = [&](int i, int64_t inSize, int64_t outSize) {
    ResizeAxis ax{inSize, outSize, 1.0, 0.0, 1.0};
    ax.scale = !a.scales.empty()
                   ? static_cast<double>(a.scales[i])
                   : static_cast<double>(outSize) / static_cast<double>(inSize);
    if (a.roi.size() == 4) {
      ax.roiStart = a.roi[i];
      ax.roiEnd = a.roi[2 + i];
    }
    return computeResizeTaps(ax, a.mode, a.coordinateTransformationMode,
                             a.nearestMode, a.cubicCoeffA, a.excludeOutside,
                             a.antialias);
  };
  if (p.ih > 0 && p.iw > 0) {
    p.rows = axis(0, p.ih, p.oh);
    p.cols = axis(1, p.iw, p.ow);
  }
  return p;
}

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CPU_RESIZETAPS_H
