//===- AmxConvFilterGrad.h - wide bf16 filter gradients on AMX -*- C++ -*-===//
//
// conv2d_backprop_filter of an NHWC bf16 convolution (bf16 result) with
// 32k input and output channels, no dilation and strides up to 2
// (ResNet's 3x3 and 1x1 layers) as AMX tile products over the whole
// batch's pixels: x transposed into channel rows of a padded pixel grid on
// which every tap is a constant shift, dy packed as pixel pairs. The
// factory returns null for anything else, on CPUs without AMX (as oneDNN
// sees them: DNNL_MAX_CPU_ISA counts) and when GOPT_CONV_FILTER_AMX_WIDE=0;
// the caller falls back to the im2col matmuls or oneDNN.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_AMXCONVFILTERGRAD_H
#define GOPT_RUNTIME_SRC_CPU_AMXCONVFILTERGRAD_H

#include <memory>

namespace gopt::runtime {
class Kernel;
struct KernelConfig;
namespace cpu {

std::unique_ptr<Kernel> createAmxConvFilterGrad(const KernelConfig &c);

} // namespace cpu
} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CPU_AMXCONVFILTERGRAD_H
