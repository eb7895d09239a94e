//===- RefImage.cpp - Reference kernels of the image ops ------------------===//
//
// conv2d_transpose and resize (GoptImageOps.td), in double precision.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"
#include "ResizeTaps.h"
#include "shapes/Image.h"

namespace gopt::runtime::ref {
namespace {

// Every input pixel scatters into the output through each filter tap.
Status conv2dTransposeKernel(const RefContext &ctx,
                             const std::vector<Tensor> &in,
                             std::vector<Tensor> &out) {
  Conv2DTransposeAttrs a(ctx.attrs());
  const auto &p = a.params;
  bool nchw = a.dataFormat == "NCHW", hwio = a.filterFormat == "HWIO";
  Layout4D x(in[0].shape(), nchw), y(out[0].shape(), nchw);
  const Shape &f = in[1].shape();
  int64_t kh = hwio ? f[0] : f[2], kw = hwio ? f[1] : f[3];
  int64_t coutG = hwio ? f[2] : f[1];
  int64_t groups = p.groups, cinG = x.c / groups;
  const float *px = in[0].data<float>(), *pf = in[1].data<float>();
  auto filterAt = [&](int64_t ic, int64_t oc, int64_t r, int64_t s) {
    return hwio ? pf[((r * kw + s) * coutG + oc) * x.c + ic]
                : pf[((ic * coutG + oc) * kh + r) * kw + s];
  };
  std::vector<double> acc(y.n * y.c * y.h * y.w, 0.0);
  for (int64_t n = 0; n < x.n; ++n)
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t icg = 0; icg < cinG; ++icg) {
        int64_t ic = g * cinG + icg;
        for (int64_t ih = 0; ih < x.h; ++ih)
          for (int64_t iw = 0; iw < x.w; ++iw) {
            double v = px[x.at(n, ic, ih, iw)];
            for (int64_t r = 0; r < kh; ++r) {
              int64_t oh = ih * p.strides[0] - p.pads[0] + r * p.dilations[0];
              if (oh < 0 || oh >= y.h)
                continue;
              for (int64_t s = 0; s < kw; ++s) {
                int64_t ow = iw * p.strides[1] - p.pads[2] + s * p.dilations[1];
                if (ow < 0 || ow >= y.w)
                  continue;
                for (int64_t ocg = 0; ocg < coutG; ++ocg)
                  acc[y.at(n, g * coutG + ocg, oh, ow)] +=
                      v * filterAt(ic, ocg, r, s);
              }
            }
          }
      }
  float *py = out[0].data<float>();
  const float *bias = in.size() == 3 ? in[2].data<float>() : nullptr;
  for (int64_t n = 0; n < y.n; ++n)
    for (int64_t c = 0; c < y.c; ++c)
      for (int64_t h = 0; h < y.h; ++h)
        for (int64_t w = 0; w < y.w; ++w) {
          int64_t i = y.at(n, c, h, w);
          py[i] = static_cast<float>(acc[i] + (bias ? bias[c] : 0.0));
        }
  return Status::success();
}

// Separable: out(h, w) = sum over row taps and column taps of
// weight_r * weight_c * x(row, col); outside the crop, extrapolation_value.
Status resizeKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  ResizeAttrs a(ctx.attrs());
  ResizePlan p = planResize(a, in[0].shape(), out[0].shape());
  Layout4D x(in[0].shape(), p.nchw), y(out[0].shape(), p.nchw);
  const float *px = in[0].data<float>();
  float *py = out[0].data<float>();
  for (int64_t n = 0; n < y.n; ++n)
    for (int64_t c = 0; c < y.c; ++c)
      for (int64_t h = 0; h < y.h; ++h)
        for (int64_t w = 0; w < y.w; ++w) {
          const ResizeTap &r = p.rows[h], &s = p.cols[w];
          double v = 0;
          if (r.count == 0 || s.count == 0) {
            v = a.extrapolationValue;
          } else {
            for (int i = 0; i < r.count; ++i) {
              double row = 0;
              for (int j = 0; j < s.count; ++j)
                row += s.weight[j] * px[x.at(n, c, r.index[i], s.index[j])];
              v += r.weight[i] * row;
            }
          }
          py[y.at(n, c, h, w)] = static_cast<float>(v);
        }
  return Status::success();
}

// The adjoint of resizeKernel: each dy(h, w) goes back to the pixels
// out(h, w) read, times the weights it read them with.
Status resizeGradKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  ResizeAttrs a(ctx.attrs());
  ResizePlan p = planResize(a, in[0].shape(), in[1].shape());
  Layout4D x(in[0].shape(), p.nchw), y(in[1].shape(), p.nchw);
  const float *pdy = in[1].data<float>();
  std::vector<double> dx(out[0].numElements(), 0.0);
  for (int64_t n = 0; n < y.n; ++n)
    for (int64_t c = 0; c < y.c; ++c)
      for (int64_t h = 0; h < y.h; ++h)
        for (int64_t w = 0; w < y.w; ++w) {
          const ResizeTap &r = p.rows[h], &s = p.cols[w];
          double g = pdy[y.at(n, c, h, w)];
          for (int i = 0; i < r.count; ++i)
            for (int j = 0; j < s.count; ++j)
              dx[x.at(n, c, r.index[i], s.index[j])] +=
                  r.weight[i] * s.weight[j] * g;
        }
  float *pdx = out[0].data<float>();
  for (size_t i = 0; i < dx.size(); ++i)
    pdx[i] = static_cast<float>(dx[i]);
  return Status::success();
}

} // namespace

void registerImageKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  registerKernel(r, "conv2d_transpose", conv2dTransposeKernel, D::kFloat);
  registerKernel(r, "resize", resizeKernel, D::kFloat);
  registerKernel(r, "resize_grad", resizeGradKernel, D::kFloat);
}

} // namespace gopt::runtime::ref
