//===- RefSampling.cpp - Reference kernels of the sampling ops ------------===//
//
// grid_sample, roi_align (and their gradients), max_pool_with_indices,
// max_unpool, col2im and deform_conv2d (and its gradient) (GoptSamplingOps.td),
// computing positions and weights in double. The sampling rules follow ONNX's
// reference implementation (and ONNX Runtime's), which the node suite's
// expected outputs come from.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"
#include "shapes/Sampling.h"

#include "gopt/runtime/OpAttrs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gopt::runtime::ref {
namespace {

//===----------------------------------------------------------------------===//
// grid_sample
//===----------------------------------------------------------------------===//

/// Reflects x at the borders [lo, hi] until it lies between them.
double reflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0)
    return lo;
  if (x < lo) {
    double dx = lo - x;
    int64_t n = static_cast<int64_t>(dx / range);
    double r = dx - n * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double dx = x - hi;
    int64_t n = static_cast<int64_t>(dx / range);
    double r = dx - n * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

/// Keys' cubic convolution weights (a = -0.75) of the 4 taps around a
/// position `t` past the second tap.
void cubicCoeffs(double t, double c[4]) {
  constexpr double a = -0.75;
  t = std::abs(t);
  c[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  c[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  c[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

/// d reflect(x, lo, hi) / dx: 1 inside, -1 or 1 by the parity of the
/// reflections outside.
double reflectSlope(double x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0)
    return 0.0;
  if (x >= lo && x <= hi)
    return 1.0;
  double dx = x < lo ? lo - x : x - hi;
  int64_t n = static_cast<int64_t>(dx / range);
  return n % 2 == 0 ? -1.0 : 1.0;
}

/// d cubicCoeffs(t) / dt for t in [0, 1].
void cubicCoeffSlopes(double t, double d[4]) {
  constexpr double a = -0.75;
  double t1 = t + 1, u = 1 - t, u2 = 2 - t;
  d[0] = 3 * a * t1 * t1 - 10 * a * t1 + 8 * a;
  d[1] = 3 * (a + 2) * t * t - 2 * (a + 3) * t;
  d[2] = -(3 * (a + 2) * u * u - 2 * (a + 3) * u);
  d[3] = -(3 * a * u2 * u2 - 10 * a * u2 + 8 * a);
}

/// The geometry grid_sample shares with its gradient: r spatial
/// dimensions, outermost first (D, H, W); grid component k addresses
/// dimension r - 1 - k (x the innermost).
struct GridGeometry {
  int rank = 0;
  int64_t size[shape::kMaxGridSampleDims] = {};
  double lo[shape::kMaxGridSampleDims] = {}, hi[shape::kMaxGridSampleDims] = {};
  bool alignCorners = false;
  bool nearest = false, linear = false; // else cubic
  enum class Padding { kZeros, kBorder, kReflection } padding;

  GridGeometry(const Shape &xs, const std::string &mode,
               const std::string &paddingMode, bool align)
      : rank(static_cast<int>(xs.size()) - 2), alignCorners(align),
        nearest(mode == "nearest"), linear(mode == "bilinear"),
        padding(paddingMode == "zeros"    ? Padding::kZeros
                : paddingMode == "border" ? Padding::kBorder
                                          : Padding::kReflection) {
    for (int d = 0; d < rank; ++d) {
      size[d] = xs[d + 2];
      // Corner centres, or the outer edges of the corner pixels.
      lo[d] = alignCorners ? 0.0 : -0.5;
      hi[d] = alignCorners ? size[d] - 1.0 : size[d] - 0.5;
    }
  }

  /// The element a tap at `index` reads, or -1 for a zero pad.
  int64_t offset(const int64_t index[]) const {
    int64_t at = 0;
    for (int d = 0; d < rank; ++d) {
      int64_t i = index[d];
      if (padding == Padding::kZeros) {
        if (i < 0 || i >= size[d])
          return -1;
      } else {
        if (padding == Padding::kReflection)
          i = static_cast<int64_t>(
              reflect(static_cast<double>(i), lo[d], hi[d]));
        // A reflected tap can land on the outer half-pixel edge.
        i = std::clamp<int64_t>(i, 0, size[d] - 1);
      }
      at = at * size[d] + i;
    }
    return at;
  }
};

/// One output position's taps along one spatial dimension: 1 (nearest),
/// 2 (linear) or 4 (cubic) indices with their weights, the weights'
/// slopes in the position, and d position / d grid value (0 where nearest
/// rounding or the border clamp froze the position).
struct AxisTaps {
  int count = 1;
  int64_t index[4] = {};
  double weight[4] = {1, 0, 0, 0};
  double slope[4] = {};
  double scale = 0;
};

void gridTaps(const GridGeometry &geo, const float *g, AxisTaps taps[]) {
  double pos[shape::kMaxGridSampleDims];
  bool outside = false;
  for (int d = 0; d < geo.rank; ++d) {
    double v = g[geo.rank - 1 - d];
    int64_t n = geo.size[d];
    // [-1, 1] to pixel coordinates.
    pos[d] =
        geo.alignCorners ? (v + 1) / 2.0 * (n - 1) : ((v + 1) * n - 1) / 2.0;
    taps[d].scale = geo.alignCorners ? (n - 1) / 2.0 : n / 2.0;
    if (geo.nearest) {
      pos[d] = std::nearbyint(pos[d]);
      taps[d].scale = 0.0;
    }
    outside |= pos[d] < geo.lo[d] || pos[d] > geo.hi[d];
  }
  for (int d = 0; d < geo.rank; ++d) {
    AxisTaps &t = taps[d];
    double p = pos[d];
    if (outside && geo.padding == GridGeometry::Padding::kBorder) {
      if (p < 0.0 || p > geo.size[d] - 1.0)
        t.scale = 0.0;
      p = std::clamp(p, 0.0, geo.size[d] - 1.0);
    } else if (outside && geo.padding == GridGeometry::Padding::kReflection) {
      t.scale *= reflectSlope(p, geo.lo[d], geo.hi[d]);
      p = reflect(p, geo.lo[d], geo.hi[d]);
    }
    if (geo.nearest) {
      t.count = 1;
      t.index[0] = static_cast<int64_t>(p);
    } else if (geo.linear) {
      int64_t i0 = static_cast<int64_t>(std::floor(p));
      t.count = 2;
      t.index[0] = i0;
      t.index[1] = i0 + 1;
      t.weight[0] = i0 + 1 - p;
      t.weight[1] = p - i0;
      t.slope[0] = -1.0;
      t.slope[1] = 1.0;
    } else { // bicubic
      int64_t i0 = static_cast<int64_t>(std::floor(p)) - 1;
      t.count = 4;
      for (int k = 0; k < 4; ++k)
        t.index[k] = i0 + k;
      cubicCoeffs(p - i0 - 1, t.weight);
      cubicCoeffSlopes(p - i0 - 1, t.slope);
    }
  }
}

/// Calls visit(offset, weight, choice) for every combination of the axes'
/// taps (`choice[d]` the tap taken along dimension d).
template <typename Visit>
void forEachTap(const GridGeometry &geo, const AxisTaps taps[], Visit visit) {
  int choice[shape::kMaxGridSampleDims] = {};
  int64_t index[shape::kMaxGridSampleDims];
  while (true) {
    double weight = 1.0;
    for (int d = 0; d < geo.rank; ++d) {
      index[d] = taps[d].index[choice[d]];
      weight *= taps[d].weight[choice[d]];
    }
    visit(geo.offset(index), weight, choice);
    int d = geo.rank - 1;
    while (d >= 0 && ++choice[d] == taps[d].count)
      choice[d--] = 0;
    if (d < 0)
      return;
  }
}

Status gridSampleKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  op_attrs::GridSampleAttrs a(ctx.attrs());
  const Shape &xs = in[0].shape(), &gs = in[1].shape();
  GridGeometry geo(xs, a.mode(), a.paddingMode(), a.alignCorners() != 0);
  int64_t n = xs[0], c = xs[1];
  int64_t plane = numElements(xs) / std::max<int64_t>(n * c, 1);
  int64_t points = numElements(gs) / std::max<int64_t>(n * geo.rank, 1);
  const float *px = in[0].data<float>(), *pg = in[1].data<float>();
  float *py = out[0].data<float>();
  AxisTaps taps[shape::kMaxGridSampleDims];
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < points; ++o) {
      gridTaps(geo, pg + (b * points + o) * geo.rank, taps);
      for (int64_t ch = 0; ch < c; ++ch) {
        const float *image = px + (b * c + ch) * plane;
        double v = 0.0;
        forEachTap(geo, taps, [&](int64_t at, double weight, const int *) {
          if (at >= 0)
            v += weight * image[at];
        });
        py[(b * c + ch) * points + o] = static_cast<float>(v);
      }
    }
  return Status::success();
}

// grid_sample's gradients replay the forward's position and taps: dx gets
// dy times each tap's weight at the element the tap read; dgrid the
// interpolation's slope in the sampled position, times the slopes of the
// normalization and of the padding's clamp or reflection.
Status gridSampleGradKernel(const RefContext &ctx,
                            const std::vector<Tensor> &in,
                            std::vector<Tensor> &out) {
  op_attrs::GridSampleGradAttrs a(ctx.attrs());
  const Shape &xs = in[0].shape(), &gs = in[1].shape();
  GridGeometry geo(xs, a.mode(), a.paddingMode(), a.alignCorners() != 0);
  int64_t n = xs[0], c = xs[1];
  int64_t plane = numElements(xs) / std::max<int64_t>(n * c, 1);
  int64_t points = numElements(gs) / std::max<int64_t>(n * geo.rank, 1);
  const float *px = in[0].data<float>(), *pg = in[1].data<float>();
  const float *pdy = in[2].data<float>();
  std::vector<double> dx(numElements(xs), 0.0), dgrid(numElements(gs), 0.0);
  AxisTaps taps[shape::kMaxGridSampleDims];
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < points; ++o) {
      const int64_t gAt = (b * points + o) * geo.rank;
      gridTaps(geo, pg + gAt, taps);
      double slopes[shape::kMaxGridSampleDims] = {};
      for (int64_t ch = 0; ch < c; ++ch) {
        const int64_t base = (b * c + ch) * plane;
        double g = pdy[(b * c + ch) * points + o];
        forEachTap(geo, taps, [&](int64_t at, double weight, const int *k) {
          if (at < 0)
            return;
          dx[base + at] += g * weight;
          double v = px[base + at];
          // d weight / d position along d: that axis's slope times the
          // other axes' weights.
          for (int d = 0; d < geo.rank; ++d) {
            double partial = taps[d].slope[k[d]];
            for (int e = 0; e < geo.rank; ++e)
              if (e != d)
                partial *= taps[e].weight[k[e]];
            slopes[d] += g * partial * v;
          }
        });
      }
      for (int d = 0; d < geo.rank; ++d)
        dgrid[gAt + geo.rank - 1 - d] += slopes[d] * taps[d].scale;
    }
  float *pdx = out[0].data<float>(), *pdg = out[1].data<float>();
  for (size_t i = 0; i < dx.size(); ++i)
    pdx[i] = static_cast<float>(dx[i]);
  for (size_t i = 0; i < dgrid.size(); ++i)
    pdg[i] = static_cast<float>(dgrid[i]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// roi_align
//===----------------------------------------------------------------------===//

/// One bilinear sample: four pixel offsets and their weights (all zero for
/// a sample outside the image).
struct BilinearTap {
  int64_t pos[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
};

BilinearTap bilinearTap(double y, double x, int64_t h, int64_t w) {
  BilinearTap t;
  // Written to reject NaN too (it compares false).
  if (!(y >= -1.0 && y <= h && x >= -1.0 && x <= w))
    return t;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t yLow = static_cast<int64_t>(y), xLow = static_cast<int64_t>(x);
  int64_t yHigh, xHigh;
  if (yLow >= h - 1) {
    yHigh = yLow = h - 1;
    y = static_cast<double>(yLow);
  } else {
    yHigh = yLow + 1;
  }
  if (xLow >= w - 1) {
    xHigh = xLow = w - 1;
    x = static_cast<double>(xLow);
  } else {
    xHigh = xLow + 1;
  }
  double ly = y - yLow, lx = x - xLow, hy = 1.0 - ly, hx = 1.0 - lx;
  t.pos[0] = yLow * w + xLow;
  t.pos[1] = yLow * w + xHigh;
  t.pos[2] = yHigh * w + xLow;
  t.pos[3] = yHigh * w + xHigh;
  t.weight[0] = hy * hx;
  t.weight[1] = hy * lx;
  t.weight[2] = ly * hx;
  t.weight[3] = ly * lx;
  return t;
}

/// One region's sampling grid, as roi_align and roi_align_grad share it:
/// ph x pw bins of binH x binW from (y1, x1), gridH x gridW samples each.
struct RoiGrid {
  double x1 = 0, y1 = 0, binH = 0, binW = 0;
  int64_t gridH = 0, gridW = 0;
  double count = 1; // samples averaged per bin (at least 1)
  /// The bilinear taps of sample (iy, ix) of bin (oy, ox).
  BilinearTap tap(int64_t oy, int64_t ox, int64_t iy, int64_t ix, int64_t h,
                  int64_t w) const {
    double y = y1 + oy * binH + (iy + 0.5) * binH / gridH;
    double x = x1 + ox * binW + (ix + 0.5) * binW / gridW;
    return bilinearTap(y, x, h, w);
  }
};

/// Region r's grid (`roi` its four coordinates). sampling_ratio 0 samples
/// ceil(bin size) points per bin side, which a region's coordinates can
/// make any number: past 2^24 per bin the op is refused rather than run
/// for hours, and so is a region that is not finite.
StatusOr<RoiGrid> roiGrid(const float *roi, int64_t r, double scale,
                          bool halfPixel, int64_t ph, int64_t pw,
                          int64_t ratio) {
  double offset = halfPixel ? 0.5 : 0.0;
  RoiGrid g;
  g.x1 = roi[0] * scale - offset;
  g.y1 = roi[1] * scale - offset;
  double roiW = roi[2] * scale - offset - g.x1;
  double roiH = roi[3] * scale - offset - g.y1;
  if (!halfPixel) { // RoiAlign-10: regions of at least one pixel
    roiW = std::max(roiW, 1.0);
    roiH = std::max(roiH, 1.0);
  }
  g.binH = roiH / ph;
  g.binW = roiW / pw;
  if (!std::isfinite(g.binH) || !std::isfinite(g.binW))
    return invalidArgument("roi ", r, " (", roi[0], ", ", roi[1], ", ", roi[2],
                           ", ", roi[3],
                           ") is not a finite region at spatial_scale ", scale);
  constexpr double kMaxSamples = double(1 << 24);
  double sidesH = ratio > 0 ? double(ratio) : std::ceil(g.binH);
  double sidesW = ratio > 0 ? double(ratio) : std::ceil(g.binW);
  if (sidesH * sidesW > kMaxSamples)
    return invalidArgument("roi ", r, " samples ", sidesH, " x ", sidesW,
                           " points per bin (sampling_ratio ", ratio,
                           "); at most ", kMaxSamples, " are supported");
  g.gridH = static_cast<int64_t>(std::max(sidesH, 0.0));
  g.gridW = static_cast<int64_t>(std::max(sidesW, 0.0));
  g.count = static_cast<double>(std::max<int64_t>(g.gridH * g.gridW, 1));
  return g;
}

Status roiAlignKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                      std::vector<Tensor> &out) {
  op_attrs::RoiAlignAttrs a(ctx.attrs());
  bool isMax = a.mode() == "max";
  bool halfPixel = a.coordinateTransformationMode() == "half_pixel";
  int64_t ph = a.outputHeight(), pw = a.outputWidth();
  const Shape &xs = in[0].shape();
  int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3];
  int64_t numRois = in[1].shape()[0];
  const float *px = in[0].data<float>(), *rois = in[1].data<float>();
  const int64_t *batch = in[2].data<int64_t>();
  float *py = out[0].data<float>();
  // Per bin, every sample's taps are read across the channels: one
  // accumulator per channel, nothing per sample kept.
  std::vector<double> acc(c);
  for (int64_t r = 0; r < numRois; ++r) {
    int64_t b = batch[r];
    if (b < 0 || b >= n)
      return invalidArgument("batch_indices[", r, "] = ", b,
                             " is out of range for a batch of ", n);
    GOPT_ASSIGN_OR_RETURN(RoiGrid grid,
                          roiGrid(rois + r * 4, r, a.spatialScale(), halfPixel,
                                  ph, pw, a.samplingRatio()));
    for (int64_t oy = 0; oy < ph; ++oy)
      for (int64_t ox = 0; ox < pw; ++ox) {
        std::fill(acc.begin(), acc.end(), 0.0);
        bool first = true;
        for (int64_t iy = 0; iy < grid.gridH; ++iy)
          for (int64_t ix = 0; ix < grid.gridW; ++ix) {
            BilinearTap t = grid.tap(oy, ox, iy, ix, h, w);
            for (int64_t ch = 0; ch < c; ++ch) {
              const float *img = px + (b * c + ch) * h * w;
              if (isMax) {
                // ONNX's max mode: the largest weighted corner of each
                // sample.
                double v = t.weight[0] * img[t.pos[0]];
                for (int k = 1; k < 4; ++k)
                  v = std::max(v, t.weight[k] * img[t.pos[k]]);
                acc[ch] = first ? v : std::max(acc[ch], v);
              } else {
                for (int k = 0; k < 4; ++k)
                  acc[ch] += t.weight[k] * img[t.pos[k]];
              }
            }
            first = false;
          }
        for (int64_t ch = 0; ch < c; ++ch)
          py[((r * c + ch) * ph + oy) * pw + ox] =
              static_cast<float>(isMax ? acc[ch] : acc[ch] / grid.count);
      }
  }
  return Status::success();
}

Status roiAlignGradKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                          std::vector<Tensor> &out) {
  op_attrs::RoiAlignGradAttrs a(ctx.attrs());
  bool isMax = a.mode() == "max";
  bool halfPixel = a.coordinateTransformationMode() == "half_pixel";
  int64_t ph = a.outputHeight(), pw = a.outputWidth();
  const Shape &xs = in[0].shape();
  int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3];
  int64_t numRois = in[1].shape()[0];
  const float *px = in[0].data<float>(), *rois = in[1].data<float>();
  const int64_t *batch = in[2].data<int64_t>();
  const float *pdy = in[3].data<float>();
  std::vector<double> dx(numElements(xs), 0.0);
  // Max mode, per channel of a bin: the largest weighted corner over its
  // samples so far, where it is and its weight.
  std::vector<double> best(c), bestWeight(c);
  std::vector<int64_t> bestPos(c);
  for (int64_t r = 0; r < numRois; ++r) {
    int64_t b = batch[r];
    if (b < 0 || b >= n)
      return invalidArgument("batch_indices[", r, "] = ", b,
                             " is out of range for a batch of ", n);
    GOPT_ASSIGN_OR_RETURN(RoiGrid grid,
                          roiGrid(rois + r * 4, r, a.spatialScale(), halfPixel,
                                  ph, pw, a.samplingRatio()));
    for (int64_t oy = 0; oy < ph; ++oy)
      for (int64_t ox = 0; ox < pw; ++ox) {
        std::fill(bestPos.begin(), bestPos.end(), -1);
        for (int64_t iy = 0; iy < grid.gridH; ++iy)
          for (int64_t ix = 0; ix < grid.gridW; ++ix) {
            BilinearTap t = grid.tap(oy, ox, iy, ix, h, w);
            for (int64_t ch = 0; ch < c; ++ch) {
              const int64_t plane = (b * c + ch) * h * w;
              if (!isMax) {
                double g = pdy[((r * c + ch) * ph + oy) * pw + ox];
                for (int k = 0; k < 4; ++k)
                  dx[plane + t.pos[k]] += g * t.weight[k] / grid.count;
                continue;
              }
              const float *img = px + plane;
              for (int k = 0; k < 4; ++k) {
                double v = t.weight[k] * img[t.pos[k]];
                if (bestPos[ch] < 0 || v > best[ch]) {
                  best[ch] = v;
                  bestPos[ch] = t.pos[k];
                  bestWeight[ch] = t.weight[k];
                }
              }
            }
          }
        if (!isMax)
          continue;
        for (int64_t ch = 0; ch < c; ++ch)
          if (bestPos[ch] >= 0)
            dx[(b * c + ch) * h * w + bestPos[ch]] +=
                pdy[((r * c + ch) * ph + oy) * pw + ox] * bestWeight[ch];
      }
  }
  float *pdx = out[0].data<float>();
  for (size_t i = 0; i < dx.size(); ++i)
    pdx[i] = static_cast<float>(dx[i]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// max_pool_with_indices and max_unpool
//===----------------------------------------------------------------------===//

/// Spatial dims of [N, C, spatial...] lifted to three, leading ones 1.
struct Spatial3 {
  int64_t size[3] = {1, 1, 1};
  explicit Spatial3(const Shape &s) {
    size_t k = s.size() - 2;
    for (size_t i = 0; i < k; ++i)
      size[3 - k + i] = s[2 + i];
  }
  int64_t count() const { return size[0] * size[1] * size[2]; }
};

template <typename T>
Status maxPoolWithIndices(const RefContext &ctx, const std::vector<Tensor> &in,
                          std::vector<Tensor> &out) {
  PoolWindowNDAttrs a(ctx.attrs());
  bool columnMajor =
      op_attrs::MaxPoolWithIndicesAttrs(ctx.attrs()).storageOrder() == 1;
  std::vector<WindowDim> win;
  GOPT_RETURN_IF_ERROR(
      toStatus(shape::resolvePoolWindowND(in[0].shape(), a.window, win)));
  const Shape &xs = in[0].shape();
  size_t k = xs.size() - 2, lift = 3 - k;
  // Window parameters lifted to three dims like the sizes.
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1},
          padBefore[3] = {0, 0, 0}, outSize[3] = {1, 1, 1};
  for (size_t i = 0; i < k; ++i) {
    kernel[lift + i] = a.window.kernel[i];
    stride[lift + i] = a.window.strides[i];
    dil[lift + i] = a.window.dilations[i];
    padBefore[lift + i] = win[i].padBefore;
    outSize[lift + i] = win[i].outSize;
  }
  Spatial3 x(xs);
  int64_t planes = xs[0] * xs[1];
  const T *px = in[0].data<T>();
  T *py = out[0].data<T>();
  int64_t *pi = out[1].data<int64_t>();
  int64_t o = 0;
  for (int64_t p = 0; p < planes; ++p) {
    const T *plane = px + p * x.count();
    for (int64_t od = 0; od < outSize[0]; ++od)
      for (int64_t oh = 0; oh < outSize[1]; ++oh)
        for (int64_t ow = 0; ow < outSize[2]; ++ow, ++o) {
          bool found = false;
          T best{};
          int64_t bestD = 0, bestH = 0, bestW = 0;
          for (int64_t r = 0; r < kernel[0]; ++r) {
            int64_t id = od * stride[0] - padBefore[0] + r * dil[0];
            if (id < 0 || id >= x.size[0])
              continue;
            for (int64_t s = 0; s < kernel[1]; ++s) {
              int64_t ih = oh * stride[1] - padBefore[1] + s * dil[1];
              if (ih < 0 || ih >= x.size[1])
                continue;
              for (int64_t t = 0; t < kernel[2]; ++t) {
                int64_t iw = ow * stride[2] - padBefore[2] + t * dil[2];
                if (iw < 0 || iw >= x.size[2])
                  continue;
                T v = plane[(id * x.size[1] + ih) * x.size[2] + iw];
                if (!found || v > best) {
                  found = true;
                  best = v;
                  bestD = id;
                  bestH = ih;
                  bestW = iw;
                }
              }
            }
          }
          py[o] = best;
          // Column-major storage runs the spatial dims from the first
          // (ONNX's storage_order 1; the lifted unit dims add nothing); the
          // (N, C) planes stay row-major.
          int64_t offset =
              columnMajor ? bestD + x.size[0] * (bestH + x.size[1] * bestW)
                          : (bestD * x.size[1] + bestH) * x.size[2] + bestW;
          pi[o] = found ? p * x.count() + offset : -1;
        }
  }
  return Status::success();
}

Status maxPoolWithIndicesKernel(const RefContext &ctx,
                                const std::vector<Tensor> &in,
                                std::vector<Tensor> &out) {
  return visitElementType(in[0].dtype(), [&](auto t) -> Status {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, bool>)
      return unimplemented("max_pool_with_indices of bool");
    else
      return maxPoolWithIndices<T>(ctx, in, out);
  });
}

Status maxUnpoolKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  // The indices address the unpooled shape the window gives; an
  // output_shape pads (or crops) that at the end of each spatial dim, as
  // ONNX's reference does.
  op_attrs::MaxUnpoolAttrs a(ctx.attrs());
  Shape unpooled;
  GOPT_RETURN_IF_ERROR(toStatus(
      shape::inferMaxUnpoolShape(in[0].shape(), in[1].shape(), a.kernel(),
                                 a.strides(), a.pads(), nullptr, unpooled)));
  const Shape &ys = out[0].shape();
  int64_t unpooledTotal = numElements(unpooled);
  std::vector<int64_t> yStrides = rowMajorStrides(ys);
  const float *px = in[0].data<float>();
  const int64_t *pi = in[1].data<int64_t>();
  float *py = out[0].data<float>();
  std::fill(py, py + out[0].numElements(), 0.0f);
  for (int64_t i = 0, e = in[0].numElements(); i < e; ++i) {
    if (pi[i] < 0 || pi[i] >= unpooledTotal)
      return invalidArgument("indices[", i, "] = ", pi[i],
                             " is outside the unpooled shape ",
                             shapeToString(unpooled));
    int64_t rest = pi[i], offset = 0;
    bool inside = true;
    for (int64_t d = static_cast<int64_t>(unpooled.size()) - 1; d >= 0; --d) {
      int64_t coord = rest % unpooled[d];
      rest /= unpooled[d];
      inside = inside && coord < ys[d];
      offset += coord * yStrides[d];
    }
    if (inside)
      py[offset] = px[i];
  }
  return Status::success();
}

Status col2imKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  op_attrs::Col2ImAttrs a(ctx.attrs());
  std::vector<int64_t> image = a.imageShape(), block = a.blockShape(),
                       strides = a.strides(), dilations = a.dilations(),
                       pads = a.pads();
  Shape resolved, grid;
  GOPT_RETURN_IF_ERROR(toStatus(shape::inferCol2ImShape(
      in[0].shape(), image, block, strides, dilations, pads, resolved, &grid)));
  const size_t k = block.size();
  const int64_t batch = in[0].shape()[0], blockSize = numElements(block),
                channels = in[0].shape()[1] / blockSize,
                blocks = in[0].shape()[2], pixels = numElements(image);
  std::vector<int64_t> imageStrides = rowMajorStrides(image);
  const float *px = in[0].data<float>();
  float *py = out[0].data<float>();
  std::fill(py, py + out[0].numElements(), 0.0f);
  std::vector<int64_t> at(k), offset(k);
  for (int64_t l = 0; l < blocks; ++l) {
    // The block's grid position, row-major, and then each element's.
    for (int64_t d = static_cast<int64_t>(k) - 1, rest = l; d >= 0; --d) {
      at[d] = rest % grid[d] * strides[d] - pads[2 * d];
      rest /= grid[d];
    }
    for (int64_t e = 0; e < blockSize; ++e) {
      int64_t pixel = 0;
      bool inside = true;
      for (int64_t d = static_cast<int64_t>(k) - 1, rest = e; d >= 0; --d) {
        int64_t pos = at[d] + rest % block[d] * dilations[d];
        rest /= block[d];
        inside = inside && pos >= 0 && pos < image[d];
        pixel += pos * imageStrides[d];
      }
      if (!inside)
        continue;
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t c = 0; c < channels; ++c)
          py[(n * channels + c) * pixels + pixel] +=
              px[((n * channels + c) * blockSize + e) * blocks + l];
    }
  }
  return Status::success();
}

/// x's plane at pixel position (h, w), bilinearly interpolated; neighbours
/// outside the plane read 0 (ONNX's reference samples with GridSample's
/// zeros padding and align_corners, torchvision likewise).
double bilinearZeroPadded(const float *plane, int64_t height, int64_t width,
                          double h, double w) {
  if (!(h > -1.0 && h < double(height) && w > -1.0 && w < double(width)))
    return 0.0;
  int64_t h0 = static_cast<int64_t>(std::floor(h)),
          w0 = static_cast<int64_t>(std::floor(w));
  double lh = h - double(h0), lw = w - double(w0), sum = 0.0;
  for (int64_t dh = 0; dh < 2; ++dh)
    for (int64_t dw = 0; dw < 2; ++dw) {
      int64_t y = h0 + dh, x = w0 + dw;
      if (y < 0 || y >= height || x < 0 || x >= width)
        continue;
      sum += (dh ? lh : 1.0 - lh) * (dw ? lw : 1.0 - lw) *
             double(plane[y * width + x]);
    }
  return sum;
}

Status deformConv2dKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                          std::vector<Tensor> &out) {
  op_attrs::DeformConv2DAttrs a(ctx.attrs());
  std::vector<int64_t> strides = a.strides(), dilations = a.dilations(),
                       pads = a.pads();
  const Shape &xs = in[0].shape(), &ws = in[1].shape(), &ys = out[0].shape();
  const int64_t batch = xs[0], channels = xs[1], height = xs[2], width = xs[3],
                cout = ws[0], groupChannels = ws[1], kh = ws[2], kw = ws[3],
                oh = ys[2], ow = ys[3];
  const int64_t group = a.group(), offsetGroup = a.offsetGroup(),
                taps = kh * kw, positions = oh * ow,
                coutPerGroup = cout / group,
                channelsPerOffsetGroup = channels / offsetGroup;
  const float *px = in[0].data<float>(), *pw = in[1].data<float>(),
              *po = in[2].data<float>(), *pb = in[3].data<float>();
  const float *pm = in.size() == 5 ? in[4].data<float>() : nullptr;
  float *py = out[0].data<float>();
  // Per image: every channel's sampled (and masked) value per tap and
  // output position, then the grouped convolution's sums over them.
  std::vector<double> columns(channels * taps * positions);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      int64_t og = c / channelsPerOffsetGroup;
      const float *plane = px + (n * channels + c) * height * width;
      for (int64_t t = 0; t < taps; ++t) {
        const float *dy =
            po + ((n * offsetGroup + og) * 2 * taps + 2 * t) * positions;
        const float *dx = dy + positions;
        const float *m =
            pm ? pm + ((n * offsetGroup + og) * taps + t) * positions : nullptr;
        double *col = &columns[(c * taps + t) * positions];
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            int64_t p = i * ow + j;
            double h =
                double(i * strides[0] - pads[0] + t / kw * dilations[0]) +
                double(dy[p]);
            double w =
                double(j * strides[1] - pads[2] + t % kw * dilations[1]) +
                double(dx[p]);
            double v = bilinearZeroPadded(plane, height, width, h, w);
            col[p] = m ? v * double(m[p]) : v;
          }
      }
    }
    for (int64_t o = 0; o < cout; ++o) {
      int64_t g = o / coutPerGroup;
      float *dst = py + (n * cout + o) * positions;
      for (int64_t p = 0; p < positions; ++p) {
        double sum = double(pb[o]);
        for (int64_t ci = 0; ci < groupChannels; ++ci)
          for (int64_t t = 0; t < taps; ++t)
            sum +=
                double(pw[(o * groupChannels + ci) * taps + t]) *
                columns[((g * groupChannels + ci) * taps + t) * positions + p];
        dst[p] = static_cast<float>(sum);
      }
    }
  }
  return Status::success();
}

/// One bilinear sample of bilinearZeroPadded with its slopes: the pixels
/// it read (at most four, those inside the plane) and their weights, the
/// value, and its derivatives in h and w. On a pixel row or column the
/// slope is that of the cell starting there (floor's), as torchvision's.
struct BilinearSample {
  int64_t at[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
  int count = 0;
  double value = 0.0, dh = 0.0, dw = 0.0;
};

BilinearSample bilinearSample(const float *plane, int64_t height, int64_t width,
                              double h, double w) {
  BilinearSample s;
  if (!(h > -1.0 && h < double(height) && w > -1.0 && w < double(width)))
    return s;
  int64_t h0 = static_cast<int64_t>(std::floor(h)),
          w0 = static_cast<int64_t>(std::floor(w));
  double lh = h - double(h0), lw = w - double(w0);
  for (int64_t dh = 0; dh < 2; ++dh)
    for (int64_t dw = 0; dw < 2; ++dw) {
      int64_t y = h0 + dh, x = w0 + dw;
      if (y < 0 || y >= height || x < 0 || x >= width)
        continue;
      double wh = dh ? lh : 1.0 - lh, ww = dw ? lw : 1.0 - lw;
      double v = double(plane[y * width + x]);
      s.at[s.count] = y * width + x;
      s.weight[s.count++] = wh * ww;
      s.value += wh * ww * v;
      s.dh += (dh ? 1.0 : -1.0) * ww * v;
      s.dw += wh * (dw ? 1.0 : -1.0) * v;
    }
  return s;
}

// deform_conv2d's gradients replay the forward's samples: per image, the
// column gradient (dy through the filter) gives each sample's gradient dv;
// dv times the mask goes to the pixels the sample read (dx) and, times the
// sample's slopes, to its offsets; dv times the sample to the mask; dy
// times the masked sample to the filter.
Status deformConv2dGradKernel(const RefContext &ctx,
                              const std::vector<Tensor> &in,
                              std::vector<Tensor> &out) {
  op_attrs::DeformConv2DGradAttrs a(ctx.attrs());
  std::vector<int64_t> strides = a.strides(), dilations = a.dilations(),
                       pads = a.pads();
  const Shape &xs = in[0].shape(), &ws = in[1].shape(), &ys = in[3].shape();
  const int64_t batch = xs[0], channels = xs[1], height = xs[2], width = xs[3],
                cout = ws[0], groupChannels = ws[1], kh = ws[2], kw = ws[3],
                oh = ys[2], ow = ys[3];
  const int64_t group = a.group(), offsetGroup = a.offsetGroup(),
                taps = kh * kw, positions = oh * ow,
                coutPerGroup = cout / group,
                channelsPerOffsetGroup = channels / offsetGroup;
  const float *px = in[0].data<float>(), *pw = in[1].data<float>(),
              *po = in[2].data<float>(), *pdy = in[3].data<float>();
  const float *pm = in.size() == 5 ? in[4].data<float>() : nullptr;
  std::vector<double> dx(in[0].numElements(), 0.0),
      dw(in[1].numElements(), 0.0), doffset(in[2].numElements(), 0.0),
      dmask(out[3].numElements(), 0.0);
  std::vector<double> dcolumns(channels * taps * positions);
  for (int64_t n = 0; n < batch; ++n) {
    const float *dyImage = pdy + n * cout * positions;
    // dcolumns[c, t, p]: the gradient of channel c's masked sample of tap t
    // at position p (the forward's column).
    std::fill(dcolumns.begin(), dcolumns.end(), 0.0);
    for (int64_t o = 0; o < cout; ++o) {
      int64_t g = o / coutPerGroup;
      for (int64_t ci = 0; ci < groupChannels; ++ci)
        for (int64_t t = 0; t < taps; ++t) {
          double weight = pw[(o * groupChannels + ci) * taps + t];
          double *dcol =
              &dcolumns[((g * groupChannels + ci) * taps + t) * positions];
          for (int64_t p = 0; p < positions; ++p)
            dcol[p] += weight * double(dyImage[o * positions + p]);
        }
    }
    for (int64_t c = 0; c < channels; ++c) {
      int64_t og = c / channelsPerOffsetGroup, g = c / groupChannels,
              ci = c % groupChannels;
      const int64_t planeAt = (n * channels + c) * height * width;
      const float *plane = px + planeAt;
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t offsetAt =
            ((n * offsetGroup + og) * 2 * taps + 2 * t) * positions;
        const int64_t maskAt = ((n * offsetGroup + og) * taps + t) * positions;
        const double *dcol = &dcolumns[(c * taps + t) * positions];
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            int64_t p = i * ow + j;
            double h =
                double(i * strides[0] - pads[0] + t / kw * dilations[0]) +
                double(po[offsetAt + p]);
            double w =
                double(j * strides[1] - pads[2] + t % kw * dilations[1]) +
                double(po[offsetAt + positions + p]);
            BilinearSample s = bilinearSample(plane, height, width, h, w);
            double m = pm ? double(pm[maskAt + p]) : 1.0;
            double masked = s.value * m;
            for (int64_t o = g * coutPerGroup; o < (g + 1) * coutPerGroup; ++o)
              dw[(o * groupChannels + ci) * taps + t] +=
                  double(dyImage[o * positions + p]) * masked;
            dmask[maskAt + p] += dcol[p] * s.value;
            double dv = dcol[p] * m;
            for (int k = 0; k < s.count; ++k)
              dx[planeAt + s.at[k]] += dv * s.weight[k];
            doffset[offsetAt + p] += dv * s.dh;
            doffset[offsetAt + positions + p] += dv * s.dw;
          }
      }
    }
  }
  auto store = [](const std::vector<double> &from, Tensor &to) {
    float *dst = to.data<float>();
    for (size_t i = 0; i < from.size(); ++i)
      dst[i] = static_cast<float>(from[i]);
  };
  store(dx, out[0]);
  store(dw, out[1]);
  store(doffset, out[2]);
  store(dmask, out[3]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// max_roi_pool
//===----------------------------------------------------------------------===//

/// One region of max_roi_pool (Fast R-CNN's RoI pooling, as ONNX Runtime
/// computes it): the corners scaled and rounded half away from zero, bins
/// of fractional size, each clipped to the image.
struct RoiPoolRegion {
  int64_t batch = 0, startH = 0, startW = 0;
  float binH = 1, binW = 1;

  /// Bin `i` along one axis as [lo, hi), clipped to [0, size].
  static void range(int64_t i, float bin, int64_t start, int64_t size,
                    int64_t &lo, int64_t &hi) {
    lo = static_cast<int64_t>(std::floor(static_cast<float>(i) * bin));
    hi = static_cast<int64_t>(std::ceil(static_cast<float>(i + 1) * bin));
    lo = std::clamp<int64_t>(lo + start, 0, size);
    hi = std::clamp<int64_t>(hi + start, 0, size);
  }
};

StatusOr<RoiPoolRegion> roiPoolRegion(const float *roi, int64_t r, float scale,
                                      int64_t n, int64_t ph, int64_t pw) {
  // Corners past 2^40 pixels would overflow the integer arithmetic below;
  // no image is that large.
  constexpr double kLimit = 1099511627776.0;
  for (int k = 0; k < 5; ++k) {
    double v = k == 0 ? roi[0] : double(roi[k]) * scale;
    if (!(std::fabs(v) < kLimit))
      return invalidArgument("rois[", r, "][", k, "] = ", roi[k],
                             (k == 0 ? "" : " (times spatial_scale)"),
                             " is not a finite position within 2^40");
  }
  RoiPoolRegion g;
  g.batch = static_cast<int64_t>(roi[0]);
  if (g.batch < 0 || g.batch >= n)
    return invalidArgument("rois[", r, "][0] = ", roi[0],
                           " is out of range for a batch of ", n);
  auto corner = [&](int k) {
    return static_cast<int64_t>(std::round(roi[k] * scale));
  };
  g.startW = corner(1);
  g.startH = corner(2);
  int64_t h = std::max<int64_t>(corner(4) - g.startH + 1, 1);
  int64_t w = std::max<int64_t>(corner(3) - g.startW + 1, 1);
  g.binH = static_cast<float>(h) / static_cast<float>(ph);
  g.binW = static_cast<float>(w) / static_cast<float>(pw);
  return g;
}

/// Calls visit(r, ch, bin, maxOffset) for every bin of every region and
/// channel, maxOffset being the element of x its maximum came from (the
/// first that beat every earlier one, from -FLT_MAX as ONNX Runtime starts)
/// or -1 for an empty bin or one of NaNs only.
template <typename Visit>
Status forEachRoiPoolBin(const std::vector<Tensor> &in, const Shape &pooled,
                         float scale, Visit visit) {
  const Shape &xs = in[0].shape();
  int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3];
  // pooled: the result's (or dy's) [R, C, PH, PW].
  int64_t ph = pooled[2], pw = pooled[3];
  int64_t numRois = in[1].shape()[0];
  const float *px = in[0].data<float>(), *rois = in[1].data<float>();
  for (int64_t r = 0; r < numRois; ++r) {
    GOPT_ASSIGN_OR_RETURN(RoiPoolRegion g,
                          roiPoolRegion(rois + r * 5, r, scale, n, ph, pw));
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t plane = (g.batch * c + ch) * h * w;
      for (int64_t i = 0; i < ph; ++i) {
        int64_t h0, h1;
        RoiPoolRegion::range(i, g.binH, g.startH, h, h0, h1);
        for (int64_t j = 0; j < pw; ++j) {
          int64_t w0, w1;
          RoiPoolRegion::range(j, g.binW, g.startW, w, w0, w1);
          float best = std::numeric_limits<float>::lowest();
          int64_t at = -1;
          for (int64_t y = h0; y < h1; ++y)
            for (int64_t x = w0; x < w1; ++x)
              if (px[plane + y * w + x] > best) {
                best = px[plane + y * w + x];
                at = plane + y * w + x;
              }
          bool empty = h1 <= h0 || w1 <= w0;
          visit(r, ch, i * pw + j, empty ? int64_t(-2) : at);
        }
      }
    }
  }
  return Status::success();
}

Status maxRoiPoolKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  op_attrs::MaxRoiPoolAttrs a(ctx.attrs());
  const float *px = in[0].data<float>();
  float *py = out[0].data<float>();
  int64_t c = in[0].shape()[1];
  int64_t bins = out[0].shape()[2] * out[0].shape()[3];
  return forEachRoiPoolBin(in, out[0].shape(), a.spatialScale(),
                           [&](int64_t r, int64_t ch, int64_t bin, int64_t at) {
                             // Empty: 0; only NaNs: -FLT_MAX, where ONNX
                             // Runtime's maximum started.
                             py[(r * c + ch) * bins + bin] =
                                 at == -2 ? 0.0f
                                 : at == -1
                                     ? std::numeric_limits<float>::lowest()
                                     : px[at];
                           });
}

Status maxRoiPoolGradKernel(const RefContext &ctx,
                            const std::vector<Tensor> &in,
                            std::vector<Tensor> &out) {
  op_attrs::MaxRoiPoolGradAttrs a(ctx.attrs());
  const float *pdy = in[2].data<float>();
  int64_t c = in[0].shape()[1];
  int64_t bins = in[2].shape()[2] * in[2].shape()[3];
  std::vector<double> dx(in[0].numElements(), 0.0);
  GOPT_RETURN_IF_ERROR(
      forEachRoiPoolBin(in, in[2].shape(), a.spatialScale(),
                        [&](int64_t r, int64_t ch, int64_t bin, int64_t at) {
                          if (at >= 0)
                            dx[at] += pdy[(r * c + ch) * bins + bin];
                        }));
  float *pdx = out[0].data<float>();
  for (size_t i = 0; i < dx.size(); ++i)
    pdx[i] = static_cast<float>(dx[i]);
  return Status::success();
}

} // namespace

void registerSamplingKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  // roi_align's and max_unpool's i64 operands need kNumeric; their shape
  // functions admit float data only, which reaches them as f32.
  registerKernel(r, "grid_sample", gridSampleKernel, D::kFloat);
  registerKernel(r, "roi_align", roiAlignKernel, D::kNumeric);
  registerKernel(r, "grid_sample_grad", gridSampleGradKernel, D::kFloat);
  registerKernel(r, "roi_align_grad", roiAlignGradKernel, D::kNumeric);
  registerKernel(r, "max_pool_with_indices", maxPoolWithIndicesKernel,
                 D::kNumericF64);
  registerKernel(r, "max_unpool", maxUnpoolKernel, D::kNumeric);
  registerKernel(r, "col2im", col2imKernel, D::kFloat);
  registerKernel(r, "max_roi_pool", maxRoiPoolKernel, D::kFloat);
  registerKernel(r, "max_roi_pool_grad", maxRoiPoolGradKernel, D::kFloat);
  registerKernel(r, "deform_conv2d", deformConv2dKernel, D::kFloat);
  registerKernel(r, "deform_conv2d_grad", deformConv2dGradKernel, D::kFloat);
}

} // namespace gopt::runtime::ref
