//===- BlockedBatchNorm.h - Inference batch norm + relu, nChw16c -*- C++
//-*-===//
//
// gopt's own inference batch norm (optionally with the relu after it) on
// f32 nChw16c tensors whose channels are whole blocks of 16: DenseNet's
// pre-activation batch norms, one per layer over the whole block so far.
// oneDNN 2.6's bnorm_jit ran them at a fraction of the memory bandwidth at
// batch 1 and split them poorly between two threads; this is one pass of
// fused multiply-add and max per 16 channels, split evenly by elements.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_BLOCKEDBATCHNORM_H
#define GOPT_RUNTIME_SRC_CPU_BLOCKEDBATCHNORM_H

#include "OneDnn.h"

namespace gopt::runtime::cpu {

// Null (oneDNN's kernel then runs) unless `src` is f32 nChw16c with
// channels in whole blocks of 16 (its images may lie further apart: the
// first channels of a wider buffer; the result is dense nChw16c), the op is an
// inference batch norm with f32 statistics, the CPU has AVX-512 F, and
// GOPT_BLOCKED_BN is not 0.
std::unique_ptr<LayoutKernel>
createBlockedBatchNorm(const KernelConfig &config,
                       const dnnl::memory::desc &src, bool relu);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_BLOCKEDBATCHNORM_H
