//===- ImageKernels.cpp - Fast CPU kernels of the image ops ---------------===//
//
// - conv2d_transpose: oneDNN's deconvolution (f32), bias included. oneDNN
//   implements it as the backward-data convolution that
//   conv2d_backprop_input runs (docs/architecture.md says why it is an op
//   of its own), with the plan's plain tensors reordered to the layouts
//   the primitive prefers.
// - resize: nearest and linear (f32, NCHW and NHWC) from the taps the
//   reference kernel uses (ResizeTaps.h), precomputed once per session
//   shape; antialiased linear and cubic (NCHW) as two 1-D passes; cubic
//   and crops outside the input leave it to the reference.
//
//===----------------------------------------------------------------------===//
#include "OneDnn.h"
#include "OneDnnPlain.h"
#include "ParallelRange.h"
#include "ResizeTaps.h"
#include "gopt/runtime/Kernel.h"
#include "shapes/Image.h"

#include <dnnl.hpp>

#include <algorithm>
#include <utility>
#include <vector>

namespace gopt::runtime {
namespace {

using cpu::cpuEngine;
using dnnl::memory;
using Tag = memory::format_tag;
using Dims = memory::dims;

StatusOr<std::unique_ptr<Kernel>> none() { return std::unique_ptr<Kernel>(); }

//===----------------------------------------------------------------------===//
// conv2d_transpose (oneDNN deconvolution)
//===----------------------------------------------------------------------===//

StatusOr<std::unique_ptr<Kernel>> createDeconv(const KernelConfig &c) {
  if (!c.allOfType(DType::kF32))
    return none();
  Conv2DTransposeAttrs a(c.attrs());
  const auto &p = a.params;
  bool nchw = a.dataFormat == "NCHW", hwio = a.filterFormat == "HWIO";
  const Shape &x = c.inputShapes[0], &f = c.inputShapes[1];
  const Shape &y = c.outputShapes[0];
  if (numElements(x) == 0 || numElements(y) == 0)
    return none(); // degenerate shapes: the reference
  int64_t n = x[0], cin = nchw ? x[1] : x[3], ih = nchw ? x[2] : x[1],
          iw = nchw ? x[3] : x[2];
  int64_t cout = nchw ? y[1] : y[3], oh = nchw ? y[2] : y[1],
          ow = nchw ? y[3] : y[2];
  int64_t kh = hwio ? f[0] : f[2], kw = hwio ? f[1] : f[3];
  int64_t g = p.groups, icg = cin / g, ocg = cout / g;
  memory::data_type type = memory::data_type::f32;
  Tag act = nchw ? Tag::nchw : Tag::nhwc;
  memory::desc xUser({n, cin, ih, iw}, type, act);
  memory::desc yUser({n, cout, oh, ow}, type, act);
  // oneDNN's deconvolution weights are [G,] O, I, KH, KW; gopt's filter is
  // the forward conv's ([Cin, Cout/G, KH, KW] or [KH, KW, Cout/G, Cin]), so
  // its strides say where each (g, o, i, h, w) lives.
  Dims wDims, wStrides;
  if (hwio) {
    int64_t sh = kw * ocg * cin, sw = ocg * cin;
    if (g == 1) {
      wDims = {cout, cin, kh, kw};
      wStrides = {cin, 1, sh, sw};
    } else {
      wDims = {g, ocg, icg, kh, kw};
      wStrides = {icg, cin, 1, sh, sw};
    }
  } else {
    int64_t sIn = ocg * kh * kw;
    if (g == 1) {
      wDims = {cout, cin, kh, kw};
      wStrides = {kh * kw, sIn, kw, 1};
    } else {
      wDims = {g, ocg, icg, kh, kw};
      wStrides = {icg * sIn, kh * kw, sIn, kw, 1};
    }
  }
  memory::desc wUser(wDims, type, wStrides);
  Dims strides = {p.strides[0], p.strides[1]};
  Dims dilations = {p.dilations[0] - 1, p.dilations[1] - 1}; // 0 = dense
  Dims padL = {p.pads[0], p.pads[2]};
  // output_padding is a negative end pad: rows beyond the full output.
  Dims padR = {p.pads[1] - p.outputPadding[0], p.pads[3] - p.outputPadding[1]};
  cpu::PlainWindowOp op{xUser,   wUser,     yUser, std::nullopt,
                        strides, dilations, padL,  padR};
  if (c.inputShapes.size() == 3)
    op.bias = memory::desc({cout}, type, Tag::x);
  return cpu::createPlainWindowKernel<dnnl::deconvolution_forward>(
      dnnl::algorithm::deconvolution_direct, op);
}

//===----------------------------------------------------------------------===//
// resize (nearest, linear; antialiased linear and cubic)
//===----------------------------------------------------------------------===//

/// Antialiased resizes (NCHW, f32): a downscale by s reads about 2/s (linear)
/// or 4/s (cubic) pixels per axis, so each plane is filtered along W into a
/// [ih, ow] buffer, then along H, instead of per output pixel over all
/// row-and-column tap pairs.
class SeparableResizeKernel : public Kernel {
public:
  static StatusOr<std::unique_ptr<Kernel>> create(const ResizePlan &plan) {
    if (!plan.nchw)
      return none();
    auto k =
        std::unique_ptr<SeparableResizeKernel>(new SeparableResizeKernel());
    k->plan_ = plan;
    for (auto [taps, flat] :
         {std::pair{&plan.rows, &k->rows_}, std::pair{&plan.cols, &k->cols_}}) {
      flat->start.push_back(0);
      for (const ResizeTap &t : *taps) {
        if (t.count == 0)
          return none(); // extrapolation: the reference
        for (int i = 0; i < t.count; ++i) {
          flat->index.push_back(t.index[i]);
          flat->weight.push_back(static_cast<float>(t.weight[i]));
        }
        flat->start.push_back(static_cast<int64_t>(flat->index.size()));
      }
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const ResizePlan &p = plan_;
    const float *x = in[0].data<float>();
    float *y = out[0].data<float>();
    const int64_t planes = p.n * p.c;
    if (planes * p.oh * p.ow < cpu::kParallelThreshold) {
      std::vector<float> rowsAlongW(p.ih * p.ow);
      for (int64_t pl = 0; pl < planes; ++pl)
        resizePlane(x + pl * p.ih * p.iw, y + pl * p.oh * p.ow,
                    rowsAlongW.data());
    } else {
#pragma omp parallel
      {
        std::vector<float> rowsAlongW(p.ih * p.ow);
#pragma omp for schedule(static)
        for (int64_t pl = 0; pl < planes; ++pl)
          resizePlane(x + pl * p.ih * p.iw, y + pl * p.oh * p.ow,
                      rowsAlongW.data());
      }
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  /// Every output coordinate's taps, one after another.
  struct FlatTaps {
    std::vector<int64_t> start, index;
    std::vector<float> weight;
  };

  void resizePlane(const float *x, float *y, float *rowsAlongW) const {
    const ResizePlan &p = plan_;
    for (int64_t h = 0; h < p.ih; ++h) {
      const float *src = x + h * p.iw;
      float *dst = rowsAlongW + h * p.ow;
      for (int64_t ow = 0; ow < p.ow; ++ow) {
        float sum = 0;
        for (int64_t t = cols_.start[ow]; t < cols_.start[ow + 1]; ++t)
          sum += cols_.weight[t] * src[cols_.index[t]];
        dst[ow] = sum;
      }
    }
    for (int64_t oh = 0; oh < p.oh; ++oh) {
      float *dst = y + oh * p.ow;
      std::fill(dst, dst + p.ow, 0.0f);
      for (int64_t t = rows_.start[oh]; t < rows_.start[oh + 1]; ++t) {
        const float w = rows_.weight[t];
        const float *src = rowsAlongW + rows_.index[t] * p.ow;
        for (int64_t ow = 0; ow < p.ow; ++ow)
          dst[ow] += w * src[ow];
      }
    }
  }

  ResizePlan plan_;
  FlatTaps rows_, cols_;
};

class ResizeKernel : public Kernel {
public:
  static StatusOr<std::unique_ptr<Kernel>> create(const KernelConfig &c) {
    if (!c.allOfType(DType::kF32))
      return none();
    ResizeAttrs a(c.attrs());
    if (a.antialias && a.mode != "nearest") {
      if (numElements(c.inputShapes[0]) == 0 ||
          numElements(c.outputShapes[0]) == 0)
        return none();
      return SeparableResizeKernel::create(
          planResize(a, c.inputShapes[0], c.outputShapes[0]));
    }
    if (a.mode == "cubic")
      return none();
    auto k = std::unique_ptr<ResizeKernel>(new ResizeKernel());
    k->plan_ = planResize(a, c.inputShapes[0], c.outputShapes[0]);
    if (numElements(c.inputShapes[0]) == 0 ||
        numElements(c.outputShapes[0]) == 0)
      return none();
    // Two taps per axis (nearest: the second with weight 0).
    for (auto *taps : {&k->plan_.rows, &k->plan_.cols})
      for (const ResizeTap &t : *taps) {
        if (t.count == 0 || t.count > 2)
          return none(); // extrapolation, antialiased taps: the reference
        Tap2 two{t.index[0], t.count == 2 ? t.index[1] : t.index[0],
                 static_cast<float>(t.weight[0]),
                 t.count == 2 ? static_cast<float>(t.weight[1]) : 0.0f};
        (taps == &k->plan_.rows ? k->rows_ : k->cols_).push_back(two);
      }
    k->nearest_ = a.mode == "nearest";
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const ResizePlan &p = plan_;
    const float *x = in[0].data<float>();
    float *y = out[0].data<float>();
    if (p.nchw) {
      // One (n, c) plane per task.
      const int64_t planes = p.n * p.c;
      const int64_t work = planes * p.oh * p.ow;
      if (work < cpu::kParallelThreshold) {
        for (int64_t pl = 0; pl < planes; ++pl)
          resizePlane(x + pl * p.ih * p.iw, y + pl * p.oh * p.ow);
      } else {
#pragma omp parallel for schedule(static)
        for (int64_t pl = 0; pl < planes; ++pl)
          resizePlane(x + pl * p.ih * p.iw, y + pl * p.oh * p.ow);
      }
    } else {
      // NHWC: each output pixel is a row of C channels; one output row of
      // pixels per task.
      const int64_t rows = p.n * p.oh;
      if (rows * p.ow * p.c < cpu::kParallelThreshold) {
        for (int64_t i = 0; i < rows; ++i)
          resizeRowNhwc(x, y, i / p.oh, i % p.oh);
      } else {
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < rows; ++i)
          resizeRowNhwc(x, y, i / p.oh, i % p.oh);
      }
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  struct Tap2 {
    int64_t i0, i1;
    float w0, w1;
  };

  void resizePlane(const float *x, float *y) const {
    const ResizePlan &p = plan_;
    for (int64_t oh = 0; oh < p.oh; ++oh) {
      const Tap2 &r = rows_[oh];
      const float *r0 = x + r.i0 * p.iw, *r1 = x + r.i1 * p.iw;
      float *dst = y + oh * p.ow;
      if (nearest_) {
        for (int64_t ow = 0; ow < p.ow; ++ow)
          dst[ow] = r0[cols_[ow].i0];
        continue;
      }
      for (int64_t ow = 0; ow < p.ow; ++ow) {
        const Tap2 &s = cols_[ow];
        float top = s.w0 * r0[s.i0] + s.w1 * r0[s.i1];
        float bottom = s.w0 * r1[s.i0] + s.w1 * r1[s.i1];
        dst[ow] = r.w0 * top + r.w1 * bottom;
      }
    }
  }

  void resizeRowNhwc(const float *x, float *y, int64_t n, int64_t oh) const {
    const ResizePlan &p = plan_;
    const Tap2 &r = rows_[oh];
    const float *img = x + n * p.ih * p.iw * p.c;
    float *dst = y + (n * p.oh + oh) * p.ow * p.c;
    for (int64_t ow = 0; ow < p.ow; ++ow, dst += p.c) {
      const Tap2 &s = cols_[ow];
      const float *a = img + (r.i0 * p.iw + s.i0) * p.c;
      if (nearest_) {
        std::copy(a, a + p.c, dst);
        continue;
      }
      const float *b = img + (r.i0 * p.iw + s.i1) * p.c;
      const float *cc = img + (r.i1 * p.iw + s.i0) * p.c;
      const float *d = img + (r.i1 * p.iw + s.i1) * p.c;
      for (int64_t ch = 0; ch < p.c; ++ch)
        dst[ch] = r.w0 * (s.w0 * a[ch] + s.w1 * b[ch]) +
                  r.w1 * (s.w0 * cc[ch] + s.w1 * d[ch]);
    }
  }

  ResizePlan plan_;
  std::vector<Tap2> rows_, cols_;
  bool nearest_ = false;
};

} // namespace

void registerImageFastKernels(KernelRegistry &registry) {
  registry.registerKernel("conv2d_transpose", "cpu", createDeconv);
  registry.registerKernel("resize", "cpu", ResizeKernel::create);
}

} // namespace gopt::runtime
