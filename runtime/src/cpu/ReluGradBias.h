//===- ReluGradBias.h - add + relu_grad + bias sum in one pass --*- C++ -*-===//
//
// relu_grad(g, y) of a training step, with g = add(a, b) where that add's
// result only the relu_grad reads (a residual block's two gradient paths)
// and/or dy's per-channel sum over all other dims (a bias gradient), as
// one pass over memory: dy is written once (the convolution gradients
// still read it), the add's result never, and dy is not read back for the
// sum. The same bits as the separate ops (add, relu_grad, reduce_sum's
// chunked order) at the same thread count.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_RELUGRADBIAS_H
#define GOPT_RUNTIME_SRC_CPU_RELUGRADBIAS_H

#include "gopt/runtime/Kernel.h"

#include <memory>

namespace gopt::runtime::cpu {

// False when GOPT_RELU_GRAD_BIAS=0 (the ops run as separate steps).
bool reluGradBiasFusionEnabled();

// Inputs: a, b (with `add`) or g, then y; outputs: dy, then the bias (with
// `bias`). `type` f32 or bf16 (all operands); dy has `rows` x `channels`
// elements, channels innermost. Null for other types.
std::unique_ptr<Kernel> createAddReluBiasGrad(DType type, int64_t rows,
                                              int64_t channels, bool add,
                                              bool bias);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_RELUGRADBIAS_H
