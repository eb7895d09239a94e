//===- ConvGradBf16.h - bf16 conv gradients on AMX tiles --------*- C++ -*-===//
//
// conv2d_backprop_filter of few-channel NHWC bf16 sources with a large
// output (ResNet's 7x7 stride-2 stem over RGB images) as AMX tile products
// of shifted input rows and pixel-paired dy: no im2col buffer. The factory
// returns null for anything else, on CPUs without AMX (as oneDNN sees
// them: DNNL_MAX_CPU_ISA counts) and when GOPT_CONV_FILTER_AMX=0; the
// caller falls back to the im2col matmuls or oneDNN.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_CONVGRADBF16_H
#define GOPT_RUNTIME_SRC_CPU_CONVGRADBF16_H

#include "gopt/runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace gopt::runtime {
class Kernel;
class OpAttrs;
struct KernelConfig;
namespace cpu {

// An NHWC convolution's geometry as its gradient kernels see it: x
// [N][H][W][Cin], dy [N][OH][OW][Cout] and the filter OIHW or HWIO, with
// the leading pads the window resolves to.
struct NhwcConvGeometry {
  bool oihw = false;
  int64_t n = 0, h = 0, w = 0, cin = 0, cout = 0, kh = 0, kw = 0;
  int64_t oh = 0, ow = 0, sh = 1, sw = 1, padTop = 0, padLeft = 0;
};

// The geometry of an ungrouped NHWC convolution from its attributes and
// the shapes of x, dy and the filter; nullopt where the shapes disagree
// with each other or the window, for dilations other than 1 and for a
// negative pad (the gradient kernels' fallbacks take those).
std::optional<NhwcConvGeometry> nhwcConvGeometry(const OpAttrs &attrs,
                                                 const Shape &x,
                                                 const Shape &dy,
                                                 const Shape &f);

std::unique_ptr<Kernel> createAmxFewChannelFilterGrad(const KernelConfig &c);

// conv2d_backprop_input of an NHWC bf16 convolution with a 3x3+ window,
// an output of 14x14 or less (strided) or 7x7 (unit stride) and 64+
// channels both ways, as oneDNN's
// matmul of dy and the filter into f32 columns and a col2im; null elsewhere,
// without AMX or when GOPT_CONV_BACKPROP_INPUT_COL2IM=0 (oneDNN's backward-data
// kernel runs). createBackpropInputAsForward is tried first and takes
// ResNet's shapes (this then runs for strides of 3+ or with that off).
std::unique_ptr<Kernel> createStridedBackpropInputMatmul(const KernelConfig &c);

// conv2d_backprop_input of an NHWC bf16 convolution with a 3x3+ window,
// strides up to 2 and 64+ channels both ways as oneDNN's forward
// convolutions of dy with the flipped, transposed filter's taps, one per
// phase of dx (ih, iw mod the strides); null elsewhere, without AMX or
// when GOPT_CONV_BACKPROP_INPUT_FORWARD=0.
std::unique_ptr<Kernel> createBackpropInputAsForward(const KernelConfig &c);

} // namespace cpu
} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CPU_CONVGRADBF16_H
