//===- BlockedPool.h - Max pooling of f32 nChw16c tensors -------*- C++ -*-===//
//
// gopt's own max pooling of an f32 nChw16c source (ResNet's pool after a
// stem that writes nChw16c): one AVX-512 max per window element and 16
// channels, rows of the result split over the threads. oneDNN 2.6's
// blocked pooling took twice ONNX Runtime's time on ResNet-18's
// 112x112x64 pool at batch 1.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_BLOCKEDPOOL_H
#define GOPT_RUNTIME_SRC_CPU_BLOCKEDPOOL_H

#include "OneDnn.h"

namespace gopt::runtime::cpu {

// Null (oneDNN's kernel then runs) unless the op is an NCHW max_pool, `src`
// is dense f32 nChw16c with channels in whole blocks of 16, every window
// holds an element of the source, the CPU has AVX-512 F, and
// GOPT_BLOCKED_POOL is not 0. The result is nChw16c.
std::unique_ptr<LayoutKernel>
createBlockedMaxPool(const KernelConfig &config, const dnnl::memory::desc &src);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_BLOCKEDPOOL_H
