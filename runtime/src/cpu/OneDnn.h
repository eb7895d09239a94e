//===- OneDnn.h - oneDNN kernels that work on blocked layouts ---*- C++ -*-===//
//
// The CPU schedule keeps activations in the layouts oneDNN picks (e.g.
// nChw8c) between oneDNN ops. These factories create kernels whose input
// and output layouts are oneDNN memory descs; the schedule inserts reorders
// where a tensor is not in the layout a kernel reads.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_ONEDNN_H
#define GOPT_RUNTIME_SRC_CPU_ONEDNN_H

#include "gopt/runtime/Kernel.h"

#include <dnnl.hpp>

namespace gopt::runtime::cpu {

dnnl::engine &cpuEngine();

// A kernel whose arguments are in oneDNN layouts.
class LayoutKernel : public Kernel {
public:
  // The layout input `i` must be in (only for inputs the schedule passes
  // as activations: conv's src, pooling's src, ...).
  virtual dnnl::memory::desc inputDesc(int i) const = 0;
  virtual dnnl::memory::desc outputDesc() const = 0;
};

// The plain row-major layout of an f32 tensor of `shape`.
dnnl::memory::desc plainDesc(const Shape &shape);

// Activations after the convolution itself, in oneDNN post-op order:
// `sum` adds the destination's previous contents (an in-place residual),
// then `activation` ("none", "relu", "relu6", "sigmoid", or "clip" with
// clipMin/clipMax) applies.
struct ConvPostOps {
  bool sum = false;
  std::string activation = "none";
  float clipMin = 0, clipMax = 0;
};

// conv2d (NCHW data, OIHW or HWIO filters) with source and destination in
// the layouts oneDNN prefers; null when the configuration is not covered.
StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutConv(const KernelConfig &config, const ConvPostOps &post);
// max_pool / avg_pool (NCHW) reading `src`; the result keeps its layout.
StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutPool(const KernelConfig &config, const dnnl::memory::desc &src);
// global_avg_pool (NCHW) reading `src` as one average over H x W.
StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutGlobalAvgPool(const KernelConfig &config,
                          const dnnl::memory::desc &src);
// Inference batch_norm (NCHW, rank 4) reading `src`.
StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutBatchNorm(const KernelConfig &config,
                      const dnnl::memory::desc &src);
// Copies a tensor from one layout into another.
StatusOr<std::unique_ptr<Kernel>> createReorder(const dnnl::memory::desc &from,
                                                const dnnl::memory::desc &to);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_ONEDNN_H
