//===- VolumeKernels.cpp - Fast CPU kernels of the 3-D window ops ---------===//
//
// oneDNN's 3-D primitives (f32) on the plan's plain NCDHW tensors, reordered
// to the layouts each primitive prefers (PlainOneDnnKernel):
// - conv3d: convolution (groups, dilations, bias);
// - conv3d_transpose: deconvolution, output_padding as a negative end pad
//   (as conv2d_transpose's kernel);
// - max_pool3d, avg_pool3d: pooling_v2 (dilated max windows too).
// Configurations whose results the reference defines differently from
// oneDNN (windows with no tap inside the input, include-pad averages that
// ceil_mode extends, dilated averages) return a null kernel, and the
// reference kernel runs them.
//
//===----------------------------------------------------------------------===//
#include "OneDnn.h"
#include "OneDnnPlain.h"
#include "gopt/runtime/Kernel.h"
#include "shapes/Volume.h"

#include <dnnl.hpp>

#include <algorithm>
#include <array>

namespace gopt::runtime {
namespace {

using cpu::cpuEngine;
using dnnl::memory;
using Tag = memory::format_tag;
using Dims = memory::dims;

constexpr memory::data_type kF32 = memory::data_type::f32;

StatusOr<std::unique_ptr<Kernel>> none() { return std::unique_ptr<Kernel>(); }

bool usable(const KernelConfig &c) {
  return c.allOfType(DType::kF32) && numElements(c.inputShapes[0]) > 0 &&
         numElements(c.outputShapes[0]) > 0;
}

Dims toDims(const Shape &shape) { return Dims(shape.begin(), shape.end()); }

StatusOr<std::array<WindowDim, 3>>
resolveWindow(const Shape &input, const shape::VolumeWindow &window) {
  std::array<WindowDim, 3> dims;
  GOPT_RETURN_IF_ERROR(
      toStatus(shape::resolveVolumeWindow(input, window, dims.data())));
  return dims;
}

//===----------------------------------------------------------------------===//
// conv3d
//===----------------------------------------------------------------------===//

StatusOr<std::unique_ptr<Kernel>> createConv3D(const KernelConfig &c) {
  if (!usable(c))
    return none();
  VolumeWindowAttrs a(c.attrs());
  const Shape &x = c.inputShapes[0], &f = c.inputShapes[1];
  a.window.kernel = {f[2], f[3], f[4]};
  GOPT_ASSIGN_OR_RETURN(auto win, resolveWindow(x, a.window));
  const auto &st = a.window.strides, &dl = a.window.dilations;
  int64_t g = a.groups, cout = f[0];
  memory::desc xUser(toDims(x), kF32, Tag::ncdhw);
  memory::desc yUser(toDims(c.outputShapes[0]), kF32, Tag::ncdhw);
  // OIDHW [Cout, Cin/G, ...] is oneDNN's goidhw [G, Cout/G, Cin/G, ...].
  memory::desc wUser = g == 1
                           ? memory::desc(toDims(f), kF32, Tag::oidhw)
                           : memory::desc({g, cout / g, f[1], f[2], f[3], f[4]},
                                          kF32, Tag::goidhw);
  Dims strides = {st[0], st[1], st[2]};
  Dims dilations = {dl[0] - 1, dl[1] - 1, dl[2] - 1}; // 0 = dense
  Dims padL = {win[0].padBefore, win[1].padBefore, win[2].padBefore};
  Dims padR = {win[0].padAfter, win[1].padAfter, win[2].padAfter};
  cpu::PlainWindowOp op{xUser,   wUser,     yUser, std::nullopt,
                        strides, dilations, padL,  padR};
  if (c.inputShapes.size() == 3)
    op.bias = memory::desc({cout}, kF32, Tag::x);
  return cpu::createPlainWindowKernel<dnnl::convolution_forward>(
      dnnl::algorithm::convolution_direct, op);
}

//===----------------------------------------------------------------------===//
// conv3d_transpose
//===----------------------------------------------------------------------===//

StatusOr<std::unique_ptr<Kernel>> createConv3DTranspose(const KernelConfig &c) {
  if (!usable(c))
    return none();
  shape::Conv3DTransposeParams p = conv3dTransposeParams(c.attrs());
  const Shape &x = c.inputShapes[0], &f = c.inputShapes[1];
  const Shape &y = c.outputShapes[0];
  int64_t g = p.groups, cin = x[1], cout = y[1];
  int64_t icg = cin / g, ocg = cout / g;
  int64_t kd = f[2], kh = f[3], kw = f[4];
  memory::desc xUser(toDims(x), kF32, Tag::ncdhw);
  memory::desc yUser(toDims(y), kF32, Tag::ncdhw);
  // oneDNN's deconvolution weights are [G,] O, I, KD, KH, KW; gopt's filter
  // is the forward conv's [Cin, Cout/G, KD, KH, KW], so its strides say
  // where each (g, o, i, d, h, w) lives.
  int64_t window = kd * kh * kw, sIn = ocg * window;
  Dims wDims, wStrides;
  if (g == 1) {
    wDims = {cout, cin, kd, kh, kw};
    wStrides = {window, sIn, kh * kw, kw, 1};
  } else {
    wDims = {g, ocg, icg, kd, kh, kw};
    wStrides = {icg * sIn, window, sIn, kh * kw, kw, 1};
  }
  memory::desc wUser(wDims, kF32, wStrides);
  Dims strides(p.strides.begin(), p.strides.end());
  Dims dilations = {p.dilations[0] - 1, p.dilations[1] - 1,
                    p.dilations[2] - 1}; // 0 = dense
  Dims padL = {p.pads[0], p.pads[2], p.pads[4]};
  // output_padding is a negative end pad: elements beyond the full output.
  Dims padR = {p.pads[1] - p.outputPadding[0], p.pads[3] - p.outputPadding[1],
               p.pads[5] - p.outputPadding[2]};
  cpu::PlainWindowOp op{xUser,   wUser,     yUser, std::nullopt,
                        strides, dilations, padL,  padR};
  if (c.inputShapes.size() == 3)
    op.bias = memory::desc({cout}, kF32, Tag::x);
  return cpu::createPlainWindowKernel<dnnl::deconvolution_forward>(
      dnnl::algorithm::deconvolution_direct, op);
}

//===----------------------------------------------------------------------===//
// max_pool3d, avg_pool3d
//===----------------------------------------------------------------------===//

// Whether every window of one spatial dim has a tap inside the input: the
// reference gives a window without one -inf (max) or 0 (average), which
// oneDNN need not.
bool everyWindowSeesInput(const WindowDim &dim, int64_t in, int64_t kernel,
                          int64_t stride, int64_t dilation) {
  for (int64_t o = 0; o < dim.outSize; ++o) {
    int64_t start = o * stride - dim.padBefore;
    bool seen = false;
    for (int64_t t = 0; t < kernel && !seen; ++t)
      seen = start + t * dilation >= 0 && start + t * dilation < in;
    if (!seen)
      return false;
  }
  return true;
}

StatusOr<std::unique_ptr<Kernel>> createPool3D(const KernelConfig &c) {
  if (!usable(c))
    return none();
  bool isMax = c.op->kind() == "max_pool3d";
  VolumeWindowAttrs a(c.attrs());
  const Shape &x = c.inputShapes[0];
  GOPT_ASSIGN_OR_RETURN(auto win, resolveWindow(x, a.window));
  const auto &k = a.window.kernel, &st = a.window.strides,
             &dl = a.window.dilations;
  bool dilated =
      std::any_of(dl.begin(), dl.end(), [](int64_t d) { return d != 1; });
  if (!isMax && dilated)
    return none();
  Dims padL(3), padR(3);
  for (int i = 0; i < 3; ++i) {
    int64_t in = x[2 + i], effective = (k[i] - 1) * dl[i] + 1;
    if (!everyWindowSeesInput(win[i], in, k[i], st[i], dl[i]))
      return none();
    padL[i] = win[i].padBefore;
    // ceil_mode may need more end padding than the op has; oneDNN then
    // counts it as padding, which only the include-pad average would see.
    padR[i] = std::max(win[i].padAfter,
                       (win[i].outSize - 1) * st[i] + effective - in - padL[i]);
    if (!isMax && a.countIncludePad && padR[i] != win[i].padAfter)
      return none();
  }
  dnnl::algorithm alg =
      isMax
          ? dnnl::algorithm::pooling_max
          : (a.countIncludePad ? dnnl::algorithm::pooling_avg_include_padding
                               : dnnl::algorithm::pooling_avg_exclude_padding);
  memory::desc xUser(toDims(x), kF32, Tag::ncdhw);
  memory::desc yUser(toDims(c.outputShapes[0]), kF32, Tag::ncdhw);
  auto kernel = std::make_unique<cpu::PlainOneDnnKernel>();
  try {
    memory::desc yAny(toDims(c.outputShapes[0]), kF32, Tag::any);
    dnnl::pooling_v2_forward::desc desc(
        dnnl::prop_kind::forward_inference, alg, xUser, yAny,
        {st[0], st[1], st[2]}, {k[0], k[1], k[2]},
        {dl[0] - 1, dl[1] - 1, dl[2] - 1}, padL, padR);
    dnnl::pooling_v2_forward::primitive_desc pd(desc, cpuEngine(),
                                                /*allow_empty=*/true);
    if (!pd)
      return none();
    kernel->bind(0, false, DNNL_ARG_SRC, xUser, pd.src_desc());
    kernel->bind(0, true, DNNL_ARG_DST, yUser, pd.dst_desc());
    kernel->setPrimitive(dnnl::pooling_v2_forward(pd));
  } catch (const dnnl::error &) {
    return none();
  }
  return std::unique_ptr<Kernel>(std::move(kernel));
}

} // namespace

void registerVolumeFastKernels(KernelRegistry &registry) {
  registry.registerKernel("conv3d", "cpu", createConv3D);
  registry.registerKernel("conv3d_transpose", "cpu", createConv3DTranspose);
  registry.registerKernel("max_pool3d", "cpu", createPool3D);
  registry.registerKernel("avg_pool3d", "cpu", createPool3D);
}

} // namespace gopt::runtime
