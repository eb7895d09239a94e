//===- RefVolume.cpp - Reference kernels of the 3-D window ops ------------===//
//
// conv3d, conv3d_transpose, max_pool3d and avg_pool3d (GoptVolumeOps.td)
// and their gradients over NCDHW, in double precision. The window of each
// spatial dim comes from the shared shape function (resolveVolumeWindow), so
// kernel and shape agree on padding and ceil_mode.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"
#include "shapes/Volume.h"

#include <array>
#include <cmath>
#include <limits>

namespace gopt::runtime::ref {
namespace {

// Index arithmetic of a row-major [N, C, D, H, W] tensor.
struct Layout5D {
  int64_t n, c, d, h, w;
  explicit Layout5D(const Shape &s)
      : n(s[0]), c(s[1]), d(s[2]), h(s[3]), w(s[4]) {}
  int64_t at(int64_t in, int64_t ic, int64_t id, int64_t ih, int64_t iw) const {
    return (((in * c + ic) * d + id) * h + ih) * w + iw;
  }
};

StatusOr<std::array<WindowDim, 3>> resolveWindow(const Shape &input,
                                                 const shape::VolumeWindow &w) {
  std::array<WindowDim, 3> dims;
  GOPT_RETURN_IF_ERROR(
      toStatus(shape::resolveVolumeWindow(input, w, dims.data())));
  return dims;
}

// conv3d's window over NCDHW: the (input, filter) element pairs that each
// output element reads. The forward kernel and the gradient visit the same
// taps, so padding, stride and dilation are resolved in one place.
struct Conv3dTaps {
  Layout5D x, y;
  int64_t kd, kh, kw, cinG, coutG;
  std::array<WindowDim, 3> win;
  std::array<int64_t, 3> strides, dilations;

  // Calls fn(n, o, od, oh, ow) for every output element, in row-major order.
  template <typename Fn> void forEachOutput(Fn &&fn) const {
    for (int64_t n = 0; n < y.n; ++n)
      for (int64_t o = 0; o < y.c; ++o)
        for (int64_t od = 0; od < y.d; ++od)
          for (int64_t oh = 0; oh < y.h; ++oh)
            for (int64_t ow = 0; ow < y.w; ++ow)
              fn(n, o, od, oh, ow);
  }

  // Calls fn(inputIndex, filterIndex) for every tap of output (n, o, od, oh,
  // ow) that falls inside the input (padding taps read zero and are skipped).
  template <typename Fn>
  void forEachTap(int64_t n, int64_t o, int64_t od, int64_t oh, int64_t ow,
                  Fn &&fn) const {
    int64_t g = o / coutG;
    for (int64_t i = 0; i < cinG; ++i)
      for (int64_t r = 0; r < kd; ++r) {
        int64_t id = od * strides[0] - win[0].padBefore + r * dilations[0];
        if (id < 0 || id >= x.d)
          continue;
        for (int64_t s = 0; s < kh; ++s) {
          int64_t ih = oh * strides[1] - win[1].padBefore + s * dilations[1];
          if (ih < 0 || ih >= x.h)
            continue;
          for (int64_t t = 0; t < kw; ++t) {
            int64_t iw = ow * strides[2] - win[2].padBefore + t * dilations[2];
            if (iw < 0 || iw >= x.w)
              continue;
            fn(x.at(n, g * cinG + i, id, ih, iw),
               (((o * cinG + i) * kd + r) * kh + s) * kw + t);
          }
        }
      }
  }
};

// The taps of conv3d(input, filter) -> output under the node's attributes.
StatusOr<Conv3dTaps> conv3dTaps(const RefContext &ctx, const Shape &input,
                                const Shape &filter, const Shape &output) {
  VolumeWindowAttrs a(ctx.attrs());
  a.window.kernel = {filter[2], filter[3], filter[4]};
  GOPT_ASSIGN_OR_RETURN(auto win, resolveWindow(input, a.window));
  Layout5D x(input), y(output);
  return Conv3dTaps{
      x,
      y,
      filter[2],
      filter[3],
      filter[4],
      filter[1],
      y.c / a.groups,
      win,
      {a.window.strides[0], a.window.strides[1], a.window.strides[2]},
      {a.window.dilations[0], a.window.dilations[1], a.window.dilations[2]}};
}

Status conv3dKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  GOPT_ASSIGN_OR_RETURN(
      Conv3dTaps taps,
      conv3dTaps(ctx, in[0].shape(), in[1].shape(), out[0].shape()));
  const float *px = in[0].data<float>(), *pf = in[1].data<float>();
  const float *pb = in.size() == 3 ? in[2].data<float>() : nullptr;
  float *py = out[0].data<float>();
  taps.forEachOutput(
      [&](int64_t n, int64_t o, int64_t od, int64_t oh, int64_t ow) {
        double acc = pb ? pb[o] : 0.0;
        taps.forEachTap(n, o, od, oh, ow, [&](int64_t xi, int64_t fi) {
          acc += static_cast<double>(px[xi]) * pf[fi];
        });
        py[taps.y.at(n, o, od, oh, ow)] = static_cast<float>(acc);
      });
  return Status::success();
}

// Every input element scatters into the output through each filter tap.
Status conv3dTransposeKernel(const RefContext &ctx,
                             const std::vector<Tensor> &in,
                             std::vector<Tensor> &out) {
  shape::Conv3DTransposeParams p = conv3dTransposeParams(ctx.attrs());
  Layout5D x(in[0].shape()), y(out[0].shape());
  const Shape &f = in[1].shape();
  int64_t kd = f[2], kh = f[3], kw = f[4], coutG = f[1];
  int64_t cinG = x.c / p.groups;
  const float *px = in[0].data<float>(), *pf = in[1].data<float>();
  std::vector<double> acc(numElements(out[0].shape()), 0.0);
  for (int64_t n = 0; n < x.n; ++n)
    for (int64_t ic = 0; ic < x.c; ++ic) {
      int64_t g = ic / cinG;
      for (int64_t id = 0; id < x.d; ++id)
        for (int64_t ih = 0; ih < x.h; ++ih)
          for (int64_t iw = 0; iw < x.w; ++iw) {
            double v = px[x.at(n, ic, id, ih, iw)];
            for (int64_t r = 0; r < kd; ++r) {
              int64_t od = id * p.strides[0] - p.pads[0] + r * p.dilations[0];
              if (od < 0 || od >= y.d)
                continue;
              for (int64_t s = 0; s < kh; ++s) {
                int64_t oh = ih * p.strides[1] - p.pads[2] + s * p.dilations[1];
                if (oh < 0 || oh >= y.h)
                  continue;
                for (int64_t t = 0; t < kw; ++t) {
                  int64_t ow =
                      iw * p.strides[2] - p.pads[4] + t * p.dilations[2];
                  if (ow < 0 || ow >= y.w)
                    continue;
                  for (int64_t ocg = 0; ocg < coutG; ++ocg)
                    acc[y.at(n, g * coutG + ocg, od, oh, ow)] +=
                        v *
                        pf[(((ic * coutG + ocg) * kd + r) * kh + s) * kw + t];
                }
              }
            }
          }
    }
  float *py = out[0].data<float>();
  const float *bias = in.size() == 3 ? in[2].data<float>() : nullptr;
  int64_t spatial = y.d * y.h * y.w;
  for (int64_t i = 0; i < static_cast<int64_t>(acc.size()); ++i)
    py[i] =
        static_cast<float>(acc[i] + (bias ? bias[(i / spatial) % y.c] : 0.0));
  return Status::success();
}

// conv3d's gradients: every output element's dy goes back through each
// filter tap its window used, to the input (dinput) and to the tap
// (dfilter), as conv3dKernel's loops visit them.
Status conv3dGradKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  GOPT_ASSIGN_OR_RETURN(
      Conv3dTaps taps,
      conv3dTaps(ctx, in[0].shape(), in[1].shape(), in[2].shape()));
  const float *px = in[0].data<float>(), *pf = in[1].data<float>();
  const float *pdy = in[2].data<float>();
  std::vector<double> dx(numElements(in[0].shape()), 0.0),
      df(numElements(in[1].shape()), 0.0);
  taps.forEachOutput(
      [&](int64_t n, int64_t o, int64_t od, int64_t oh, int64_t ow) {
        double grad = pdy[taps.y.at(n, o, od, oh, ow)];
        if (grad == 0.0)
          return;
        taps.forEachTap(n, o, od, oh, ow, [&](int64_t xi, int64_t fi) {
          dx[xi] += grad * pf[fi];
          df[fi] += grad * px[xi];
        });
      });
  float *pdx = out[0].data<float>(), *pdf = out[1].data<float>();
  for (size_t i = 0; i < dx.size(); ++i)
    pdx[i] = static_cast<float>(dx[i]);
  for (size_t i = 0; i < df.size(); ++i)
    pdf[i] = static_cast<float>(df[i]);
  return Status::success();
}

// The taps of one spatial dim of the window starting at `start`: how many
// fall inside the input, and how many inside the padded input (avg_pool3d's
// divisor with count_include_pad; never the extra end ceil_mode adds).
struct TapCounts {
  int64_t inside = 0, padded = 0;
};
TapCounts countTaps(int64_t start, int64_t kernel, int64_t dilation, int64_t in,
                    int64_t padAfter) {
  TapCounts c;
  for (int64_t t = 0; t < kernel; ++t) {
    int64_t pos = start + t * dilation;
    c.inside += pos >= 0 && pos < in;
    c.padded += pos < in + padAfter; // start is never before the padding
  }
  return c;
}

template <bool IsMax>
Status pool3dKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  VolumeWindowAttrs a(ctx.attrs());
  GOPT_ASSIGN_OR_RETURN(auto win, resolveWindow(in[0].shape(), a.window));
  const auto &k = a.window.kernel, &st = a.window.strides,
             &dl = a.window.dilations;
  Layout5D x(in[0].shape()), y(out[0].shape());
  const float *px = in[0].data<float>();
  float *py = out[0].data<float>();
  for (int64_t n = 0; n < y.n; ++n)
    for (int64_t c = 0; c < y.c; ++c)
      for (int64_t od = 0; od < y.d; ++od)
        for (int64_t oh = 0; oh < y.h; ++oh)
          for (int64_t ow = 0; ow < y.w; ++ow) {
            int64_t d0 = od * st[0] - win[0].padBefore;
            int64_t h0 = oh * st[1] - win[1].padBefore;
            int64_t w0 = ow * st[2] - win[2].padBefore;
            double acc = IsMax ? -std::numeric_limits<double>::infinity() : 0.0;
            for (int64_t r = 0; r < k[0]; ++r) {
              int64_t id = d0 + r * dl[0];
              if (id < 0 || id >= x.d)
                continue;
              for (int64_t s = 0; s < k[1]; ++s) {
                int64_t ih = h0 + s * dl[1];
                if (ih < 0 || ih >= x.h)
                  continue;
                for (int64_t t = 0; t < k[2]; ++t) {
                  int64_t iw = w0 + t * dl[2];
                  if (iw < 0 || iw >= x.w)
                    continue;
                  double v = px[x.at(n, c, id, ih, iw)];
                  acc = IsMax ? (std::isnan(v) || v > acc ? v : acc) : acc + v;
                }
              }
            }
            if (!IsMax) {
              TapCounts cd = countTaps(d0, k[0], dl[0], x.d, win[0].padAfter);
              TapCounts ch = countTaps(h0, k[1], dl[1], x.h, win[1].padAfter);
              TapCounts cw = countTaps(w0, k[2], dl[2], x.w, win[2].padAfter);
              int64_t count = a.countIncludePad
                                  ? cd.padded * ch.padded * cw.padded
                                  : cd.inside * ch.inside * cw.inside;
              acc = count ? acc / count : 0.0;
            }
            py[y.at(n, c, od, oh, ow)] = static_cast<float>(acc);
          }
  return Status::success();
}

// The pools' gradients replay pool3dKernel's windows: max_pool3d's goes to
// the element the forward picked (the same comparison, so the first
// maximum, or a NaN), avg_pool3d's to every tap it averaged, divided by
// the same count.
template <bool IsMax>
Status pool3dGradKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  VolumeWindowAttrs a(ctx.attrs());
  GOPT_ASSIGN_OR_RETURN(auto win, resolveWindow(in[0].shape(), a.window));
  const auto &k = a.window.kernel, &st = a.window.strides,
             &dl = a.window.dilations;
  Layout5D x(in[0].shape()), y(in[1].shape());
  const float *px = in[0].data<float>(), *pdy = in[1].data<float>();
  std::vector<double> dx(numElements(in[0].shape()), 0.0);
  std::vector<int64_t> taps;
  for (int64_t n = 0; n < y.n; ++n)
    for (int64_t c = 0; c < y.c; ++c)
      for (int64_t od = 0; od < y.d; ++od)
        for (int64_t oh = 0; oh < y.h; ++oh)
          for (int64_t ow = 0; ow < y.w; ++ow) {
            int64_t d0 = od * st[0] - win[0].padBefore;
            int64_t h0 = oh * st[1] - win[1].padBefore;
            int64_t w0 = ow * st[2] - win[2].padBefore;
            double best = -std::numeric_limits<double>::infinity();
            int64_t bestAt = -1;
            taps.clear();
            for (int64_t r = 0; r < k[0]; ++r) {
              int64_t id = d0 + r * dl[0];
              if (id < 0 || id >= x.d)
                continue;
              for (int64_t s = 0; s < k[1]; ++s) {
                int64_t ih = h0 + s * dl[1];
                if (ih < 0 || ih >= x.h)
                  continue;
                for (int64_t t = 0; t < k[2]; ++t) {
                  int64_t iw = w0 + t * dl[2];
                  if (iw < 0 || iw >= x.w)
                    continue;
                  int64_t at = x.at(n, c, id, ih, iw);
                  double v = px[at];
                  if (IsMax && (bestAt < 0 || std::isnan(v) || v > best)) {
                    best = v;
                    bestAt = at;
                  }
                  taps.push_back(at);
                }
              }
            }
            double grad = pdy[y.at(n, c, od, oh, ow)];
            if (IsMax) {
              if (bestAt >= 0)
                dx[bestAt] += grad;
              continue;
            }
            TapCounts cd = countTaps(d0, k[0], dl[0], x.d, win[0].padAfter);
            TapCounts ch = countTaps(h0, k[1], dl[1], x.h, win[1].padAfter);
            TapCounts cw = countTaps(w0, k[2], dl[2], x.w, win[2].padAfter);
            int64_t count = a.countIncludePad
                                ? cd.padded * ch.padded * cw.padded
                                : cd.inside * ch.inside * cw.inside;
            if (count == 0)
              continue;
            for (int64_t at : taps)
              dx[at] += grad / count;
          }
  float *pdx = out[0].data<float>();
  for (size_t i = 0; i < dx.size(); ++i)
    pdx[i] = static_cast<float>(dx[i]);
  return Status::success();
}

} // namespace

void registerVolumeKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  registerKernel(r, "conv3d", conv3dKernel, D::kFloat);
  registerKernel(r, "conv3d_transpose", conv3dTransposeKernel, D::kFloat);
  registerKernel(r, "max_pool3d", pool3dKernel<true>, D::kFloat);
  registerKernel(r, "avg_pool3d", pool3dKernel<false>, D::kFloat);
  registerKernel(r, "conv3d_grad", conv3dGradKernel, D::kFloat);
  registerKernel(r, "max_pool3d_grad", pool3dGradKernel<true>, D::kFloat);
  registerKernel(r, "avg_pool3d_grad", pool3dGradKernel<false>, D::kFloat);
}

} // namespace gopt::runtime::ref
