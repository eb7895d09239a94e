//===- PoolGradBf16.h - bf16 max_pool_grad on AVX-512 -----------*- C++ -*-===//
//
// max_pool_grad of NHWC bf16 images with overlapping or padded windows
// (ResNet's 3x3 stride-2 stem pool) and channels a multiple of 16, one
// image at a time with AVX-512: what maxPoolGradImageRows
// (TrainingKernels.cpp) computes, in the same order, 16 channels a vector.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_POOLGRADBF16_H
#define GOPT_RUNTIME_SRC_CPU_POOLGRADBF16_H

#include <cstdint>

namespace gopt::runtime::cpu {

// One pooling's windows over an NHWC image [h, w, c] -> [oh, ow, c].
struct PoolWindows {
  int64_t h, w, c, oh, ow, kh, kw, sh, sw, padTop, padLeft;
};

// False when GOPT_MAX_POOL_GRAD_AVX512=0 (the generic loops run, for
// comparing), without AVX-512BW, or when c is not a multiple of 16.
bool maxPoolGradRowsAvx512Applies(const PoolWindows &g);

// dx of one image: dy at the first maximum of each window (a NaN wins, the
// last NaN), summed in f32 over the windows in row-major order and rounded
// once. `acc`: kh * w * c floats, zero on entry and on return.
void maxPoolGradRowsAvx512(const PoolWindows &g, const uint16_t *x,
                           const uint16_t *dy, uint16_t *dx, float *acc);

// max_pool_grad(x, relu_grad(g, max_pool(x))) of one NHWC bf16 image of
// windows that tile it from the top left (kernel = strides, unpadded), and
// relu_grad's per-channel sums added to `bias`, from the winners the fused
// conv + pool step recorded (`masks`, one image of PoolWinnerMasks in
// SmallConvTraining.h) instead of x: the same bits as the fused pool
// gradient that finds them in x (TrainingKernels.cpp), dy quieted where a
// NaN, the sums in f32 per pooled row added to the doubles. Writes every
// dx element a window covers (the caller zeroes the rest); `rowSums`: c
// floats. False (nothing done) without AVX-512BW or unless c % 16 == 0.
bool maxPoolMaskReluBiasGradBf16(const PoolWindows &g, const uint16_t *masks,
                                 const uint16_t *dy, uint16_t *dx, double *bias,
                                 float *rowSums);

// dst[c * rows + r] = src[r * cols + c] for 16-bit elements (one image's
// NHWC <-> NCHW of bf16 data around the MNIST CNN's pool), in 32x32 blocks
// of 16-bit lanes, edges masked: about a quarter of the instructions of
// transposeMatrix16's 16x16 blocks of 32-bit lanes (Avx512Lanes.h), which
// it falls back to without AVX-512BW.
void transposeBf16(const uint16_t *src, int64_t rows, int64_t cols,
                   uint16_t *dst);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_POOLGRADBF16_H
