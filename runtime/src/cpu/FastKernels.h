//===- FastKernels.h - Vectorized, multithreaded CPU kernels ----*- C++ -*-===//
//
// f32 kernels for the ops that oneDNN does not cover and that show up in
// profiles: elementwise add/sub/mul (same shape, scalar, or an operand
// broadcast along one contiguous block of dims such as per-channel
// vectors), relu/relu6/clip, global_avg_pool, softmax, block transposes
// (NHWC <-> NCHW) and training-form batch_norm. The reference
// kernels stay the oracle; these register for backend "cpu" and return a
// null kernel for configurations they do not cover.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_FASTKERNELS_H
#define GOPT_RUNTIME_SRC_CPU_FASTKERNELS_H

#include "gopt/runtime/Kernel.h"

namespace gopt::runtime::cpu {

// True for unary relu/relu6/clip and binary add/sub/mul: ops that map zeros
// to zero, so they may run over a blocked layout's padded channels too.
bool isZeroPreservingElementwise(const plan::Op &op);

// An elementwise op over `elements` f32 values in any one physical layout
// shared by its operands and result (all of the same logical shape).
std::unique_ptr<Kernel> createFlatElementwise(const plan::Op &op,
                                              int64_t elements);

// batch_norm in training form (f32, plain layout); null otherwise. The
// oneDNN batch_norm factory (inference) hands training ops to it.
StatusOr<std::unique_ptr<Kernel>>
createTrainingBatchNorm(const KernelConfig &config);

void registerFastKernels(KernelRegistry &registry);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_FASTKERNELS_H
