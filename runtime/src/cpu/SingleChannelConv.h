//===- SingleChannelConv.h - Convolutions of one input channel --*- C++ -*-===//
//
// Kernels for conv2d and conv2d_backprop_filter whose source has one
// channel (NHWC, f32 or bf16); the factories return null for anything
// else, and the caller falls back to oneDNN.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_SINGLECHANNELCONV_H
#define GOPT_RUNTIME_SRC_CPU_SINGLECHANNELCONV_H

#include <memory>

namespace gopt::runtime {
class Kernel;
struct KernelConfig;
namespace cpu {

// False when GOPT_SINGLE_CHANNEL_CONV=0 (oneDNN runs them, for comparing).
bool singleChannelConvEnabled();
std::unique_ptr<Kernel> createSingleChannelConv(const KernelConfig &c);
std::unique_ptr<Kernel> createSingleChannelFilterGrad(const KernelConfig &c);

} // namespace cpu
} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CPU_SINGLECHANNELCONV_H
