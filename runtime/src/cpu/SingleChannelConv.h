//===- SingleChannelConv.h - Convolutions of one input channel --*- C++ -*-===//
//
// Kernels for conv2d and conv2d_backprop_filter whose source has one
// channel (NHWC, f32 or bf16), and the CPU schedule's fused step of the
// filter gradient with the relu_grad before it and the bias sum beside it;
// the factories return null for anything else, and the caller falls back
// to oneDNN (or to separate steps).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_SINGLECHANNELCONV_H
#define GOPT_RUNTIME_SRC_CPU_SINGLECHANNELCONV_H

#include "gopt/runtime/Tensor.h"

#include <cstdint>
#include <memory>

namespace gopt::runtime {
class Kernel;
struct KernelConfig;
namespace cpu {

// False when GOPT_SINGLE_CHANNEL_CONV=0 (oneDNN runs them, for comparing).
bool singleChannelConvEnabled();
std::unique_ptr<Kernel> createSingleChannelConv(const KernelConfig &c);
std::unique_ptr<Kernel> createSingleChannelFilterGrad(const KernelConfig &c);
// conv2d's images one at a time on the calling thread, the same bits as
// createSingleChannelConv's kernel: for steps that recompute a first
// layer's result from its one-channel source instead of storing it (the
// MNIST CNN's 1->32 conv, SmallConvTraining.cpp and TrainingKernels.cpp).
// setWeights() converts the filter and the bias (null without one; the
// config's types) once per run; compute() may then run on several threads.
class SingleChannelConvImages {
public:
  virtual ~SingleChannelConvImages() = default;
  virtual void setWeights(const void *filter, const void *bias) = 0;
  // n images of x (batch-major, the config's element type) into y.
  virtual void compute(const void *x, int64_t n, void *y) const = 0;
  // Elements of one image's result.
  virtual int64_t resultImage() const = 0;
};
// Null unless createSingleChannelConv takes `conv` with the filter in
// registers (3x3, 16 or 32 channels, windows inside the image, AVX-512).
std::unique_ptr<SingleChannelConvImages>
createSingleChannelConvImages(const KernelConfig &conv);

// False when GOPT_RELU_FILTER_BIAS_GRAD=0 or GOPT_SINGLE_CHANNEL_CONV=0.
bool reluFilterBiasFusionEnabled();
// One step for dy = relu_grad(g, y), conv2d_backprop_filter(x, dy) and
// dy's per-channel sum (the bias gradient), dy never stored: inputs x, g,
// y; outputs the filter gradient and the bias gradient (`biasType`: the
// reduce_sum's, which must be dy's f32 or bf16). `filterGrad` is the
// conv2d_backprop_filter's config; null unless its filter stays in registers
// (3x3, 16 or 32 channels, windows inside the image, AVX-512).
std::unique_ptr<Kernel>
createSingleChannelReluFilterBiasGrad(const KernelConfig &filterGrad,
                                      DType biasType);

// That step's sums over several calls, on one thread (the chunked pool +
// conv gradient step runs it on each chunk of the next layer's source
// gradient, TrainingKernels.cpp): reset() zeroes them, accumulate() adds n
// images (x, g, y batch-major, of the config's element type), addInto()
// adds the filter's f32 sums in its layout and the bias's double sums.
class SingleChannelReluFilterBiasSums {
public:
  virtual ~SingleChannelReluFilterBiasSums() = default;
  virtual void reset() = 0;
  virtual void accumulate(const void *x, const void *g, const void *y,
                          int64_t n) = 0;
  virtual void addInto(float *filter, double *bias) const = 0;
};
std::unique_ptr<SingleChannelReluFilterBiasSums>
createSingleChannelReluFilterBiasSums(const KernelConfig &filterGrad,
                                      DType biasType);

} // namespace cpu
} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CPU_SINGLECHANNELCONV_H
