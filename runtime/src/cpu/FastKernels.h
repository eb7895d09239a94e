//===- FastKernels.h - Vectorized, multithreaded CPU kernels ----*- C++ -*-===//
//
// Kernels for the ops that oneDNN does not cover and that show up in
// profiles: elementwise add/sub/mul (same shape, scalar, or an operand
// broadcast along one contiguous block of dims such as per-channel
// vectors) and relu/relu6/clip in f32 and bf16, cast between f32 and bf16,
// quantize/dequantize (per tensor or per channel),
// and in f32 global_avg_pool, softmax, block transposes (NHWC <-> NCHW; any
// element type) and training-form batch_norm. The reference kernels stay
// the oracle; these register for backend "cpu" and return a null kernel for
// configurations they do not cover.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_FASTKERNELS_H
#define GOPT_RUNTIME_SRC_CPU_FASTKERNELS_H

#include "gopt/runtime/Kernel.h"

#include <memory>

namespace gopt::runtime::cpu {

struct PoolWinnerMasks; // SmallConvTraining.h

// True for unary relu/relu6/clip and binary add/sub/mul: ops that map zeros
// to zero, so they may run over a blocked layout's padded channels too.
bool isZeroPreservingElementwise(const plan::Op &op);

// An elementwise op over `elements` values of `type` (f32 or bf16) in any
// one physical layout shared by its operands and result (all of the same
// logical shape and type).
std::unique_ptr<Kernel> createFlatElementwise(const plan::Op &op, DType type,
                                              int64_t elements);

// quantize (f32 -> i8) or dequantize (i8 -> f32) with one scale (the
// kernel's input 1) over `elements` values in any one physical layout:
// both map 0 to 0, so blocked layouts' padding stays zero.
std::unique_ptr<Kernel> createFlatQuantization(bool quantize, int64_t elements);

// batch_norm in training form (f32, plain layout); null otherwise. The
// oneDNN batch_norm factory (inference) hands training ops to it.
StatusOr<std::unique_ptr<Kernel>>
createTrainingBatchNorm(const KernelConfig &config);

// max_pool over NHWC windows that tile the image (stride = kernel, no
// padding, f32 or bf16); null otherwise. The oneDNN pooling factory hands
// those to it.
std::unique_ptr<Kernel> createTiledMaxPool(const KernelConfig &config);
// The same max_pool writing its result transposed to NCHW (the transpose
// the graph has before a classifier's flatten, run in the same pass): null
// unless tiling windows, channels a multiple of 16 and AVX-512 (BW, VL),
// or with GOPT_POOL_TRANSPOSE=0.
std::unique_ptr<Kernel> createTiledMaxPoolToNchw(const KernelConfig &config);
// False when GOPT_POOL_TRANSPOSE=0: the pool steps of a training step keep
// the transposes around them (createTiledMaxPoolToNchw, and the NCHW
// gradient and window mask of createMaxPoolReluBiasGrad).
bool poolTransposeFusionEnabled();
// (TrainingKernels.cpp) One step for dy = relu_grad(g, y), y = max_pool(x),
// max_pool_grad(x, dy) and dy's per-channel sum (a bias gradient), dy never
// stored: inputs x, g, y; outputs dx and the bias gradient (`biasType`:
// the reduce_sum's, which must be dy's f32 or bf16). `maxPoolGrad` is the
// max_pool_grad's config; null unless its NHWC windows tile the image and
// the channels are a multiple of 16 (AVX-512 with BW and VL). With
// `gradNchw` g is given in NCHW (the elements of NHWC g transposed); with
// `windowMask` y is not an input: y > 0 is taken from each window's
// maximum, which the caller has checked is y.
std::unique_ptr<Kernel>
createMaxPoolReluBiasGrad(const KernelConfig &maxPoolGrad, DType biasType,
                          bool gradNchw = false, bool windowMask = false);
// False when GOPT_RELU_POOL_BIAS_GRAD=0.
bool reluPoolBiasFusionEnabled();
// (TrainingKernels.cpp) adam_update or sgd_update (its config: all f32)
// reading the gradient in bf16, the cast to f32 before it taken in (the
// same values); null for other ops or with GOPT_OPTIMIZER_BF16_GRAD=0.
std::unique_ptr<Kernel>
createOptimizerUpdateBf16Grad(const KernelConfig &update);
// (TrainingKernels.cpp) An f32 2-D matmul C[M, N] = A^T B (transpose_a,
// A [K, M], B [K, N]; a dense layer's weight gradient dy^T x) computed as
// C^T = B^T A on oneDNN and transposed into C: oneDNN's kernel runs the
// tall product (M' = N rows) about twice as fast at large K. Null unless M
// < N, both multiples of 16, and K >= 512 (the batch where it paid), or
// with GOPT_F32_WEIGHT_GRAD_SWAP=0.
std::unique_ptr<Kernel> createSwappedWeightGradMatmul(const KernelConfig &c);
// (TrainingKernels.cpp) createMaxPoolReluBiasGrad's step together with the
// conv2d_backprop_input (dx, filter) and conv2d_backprop_filter (source,
// dx) that alone read its dx, a few images at a time (dx stays in cache):
// inputs x, g, [y], the filter, the conv's source; outputs the source's
// gradient, the filter's, the bias's. Null unless the fused pool step
// takes the batch, both conv gradients are NHWC of the same type on
// oneDNN, and the batch makes two chunks or more; or with
// GOPT_CHUNKED_CONV_GRAD=0.
// With `firstGrad` (the conv2d_backprop_filter of a one-channel first
// layer whose relu_grad reads the source's gradient alone, as
// createSingleChannelReluFilterBiasGrad takes it), that relu + filter +
// bias gradient runs on each chunk too: inputs x, g, [y], the filter, the
// conv's source, the first layer's source and relu output; outputs the
// filter's and bias's gradients, then the first layer's (the source's
// gradient is never stored). Null with GOPT_CHUNKED_FIRST_CONV_GRAD=0.
// With `masks` (bf16, the window mask), the pool's gradient scatters dy by
// the winners the fused conv + pool step records there and does not read
// x; they are ignored where their layout is not this pool's.
// With `sourceConv` (bf16, with `firstGrad`: the one-channel conv2d + relu
// whose result is both the conv's source and the first layer's relu
// output, reading the first layer's source), each chunk's source is
// recomputed from the first layer's images instead of read from memory:
// that conv's filter [and bias] are then inputs after the others, and the
// source and relu output inputs are not read. Null where that does not
// apply or with GOPT_FIRST_CONV_RECOMPUTE=0.
std::unique_ptr<Kernel> createChunkedPoolConvGrad(
    const KernelConfig &maxPoolGrad, const KernelConfig &dataGrad,
    const KernelConfig &filterGrad, bool gradNchw, bool windowMask,
    const KernelConfig *firstGrad = nullptr,
    std::shared_ptr<PoolWinnerMasks> masks = nullptr,
    const KernelConfig *sourceConv = nullptr);
// False when GOPT_CHUNKED_FIRST_CONV_GRAD=0.
bool firstChunkEnabled();

// softmax (or log_softmax) of one row of `len` floats; `dst` may be `row`.
void softmaxRow(const float *row, float *dst, int64_t len, bool log);

void registerFastKernels(KernelRegistry &registry);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_FASTKERNELS_H
