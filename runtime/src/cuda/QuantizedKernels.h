//===- QuantizedKernels.h - gopt's int8 conv/matmul helper kernels -*- C++
//-*-===//
//
// The device side of the int8 chains of QuantizedOps.cpp: the gather that
// puts an int8 activation into the NHWC layout cuDNN's int8 convolution
// reads (channels padded to a multiple of 4, spatial padding applied), and
// the epilogue that turns the integer sums into the chain's result.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_QUANTIZEDKERNELS_H
#define GOPT_RUNTIME_SRC_CUDA_QUANTIZEDKERNELS_H

#include <cstdint>
#include <cuda_runtime_api.h>

namespace gopt::runtime::cuda {

// Activation applied after the bias (before the requantize).
enum class Int8Activation : int { kNone, kRelu, kClip };

// y[n, oh, ow, cp] (NHWC, cPad channels, outH x outW) = x at
// (n, cp, oh - padTop, ow - padLeft) of the int8 tensor x (NCHW when
// `nchw`, else NHWC; c channels, h x w), or 0 outside x or for cp >= c. An
// int8 0 is the dequantized 0.0 (zero point 0), so this is the f32
// convolution's zero padding.
cudaError_t launchInt8ToPaddedNhwc(const int8_t *x, bool nchw, int64_t n,
                                   int64_t c, int64_t h, int64_t w,
                                   int64_t cPad, int64_t outH, int64_t outW,
                                   int64_t padTop, int64_t padLeft, int8_t *y,
                                   cudaStream_t stream);

// The left operand of a conv as a GEMM (im2col): a[row, col] for row =
// (n, oy, ox) of the n x oh x ow outputs and col = (r, s, ci) of the
// kh x kw x cPad taps (cPad = c rounded up to 4), the int8 input x (NCHW
// when `nchw`, else NHWC) at (n, ci, oy * sh - padTop + r * dh,
// ox * sw - padLeft + s * dw), or 0 outside x or for ci >= c (an int8 0 is
// the dequantized 0.0: the f32 convolution's zero padding). Index
// arithmetic is 32-bit: the caller checks that the sizes fit.
cudaError_t launchInt8Im2col(const int8_t *x, bool nchw, int64_t n, int64_t c,
                             int64_t h, int64_t w, int64_t cPad, int64_t kh,
                             int64_t kw, int64_t sh, int64_t sw, int64_t dh,
                             int64_t dw, int64_t padTop, int64_t padLeft,
                             int64_t oh, int64_t ow, int8_t *a,
                             cudaStream_t stream);

// max_pool of int8 values (NCHW when `nchw`, else NHWC) into int8 of the
// same layout: y = the largest x in the window's part inside x, -128 when
// that part is empty. This is quantize(max_pool(dequantize(x, s)), s) for
// any positive s: the maximum commutes with a positive scale, and
// quantizing q * s by s gives q back.
cudaError_t launchInt8MaxPool(const int8_t *x, bool nchw, int64_t n, int64_t c,
                              int64_t h, int64_t w, int64_t kh, int64_t kw,
                              int64_t sh, int64_t sw, int64_t padTop,
                              int64_t padLeft, int64_t oh, int64_t ow,
                              int8_t *y, cudaStream_t stream);

// What the epilogue does to one sum of channel c (output element o):
//   v = float(sum) * alpha[c] + (bias ? bias[c] : 0), then `act`
//   (relu: max(v, 0); clip: min(max(v, lo), hi));
//   with a residual (ResNet's block end, written as quantize(s_mid) ->
//   dequantize -> add(dequantize(residual)) -> act2):
//     v = float(quantize(v, midScale)) * midScale
//         + float(residual[o]) * residualScale, then `act2`;
//   out[o] = outScale ? quantize(v, *outScale) (int8) : v (f32).
// Every quantize and dequantize rounds as the reference's does.
struct Int8EpilogueArgs {
  const float *alpha = nullptr;
  const float *bias = nullptr;
  Int8Activation act = Int8Activation::kNone;
  float lo = 0, hi = 0;
  const int8_t *residual = nullptr;
  float midScale = 0, residualScale = 0;
  Int8Activation act2 = Int8Activation::kNone;
  float lo2 = 0, hi2 = 0;
  const float *outScale = nullptr;
};

// The epilogue of an int8 conv or matmul. `acc` holds the integer sums as
// rows of `accStride` values (float: cuDNN's INT8_EXT output, exact
// integers converted once; or int32: cuBLASLt's), one row per (n, spatial)
// position in order, channel c at column c; the n * spatial * channels
// outputs are NCHW ([n, channels, spatial]) when `channelsFirst`, else
// [n, spatial, channels].
template <typename Acc>
cudaError_t launchInt8Epilogue(const Acc *acc, int64_t accStride, int64_t n,
                               int64_t spatial, int64_t channels,
                               bool channelsFirst, const Int8EpilogueArgs &args,
                               void *out, cudaStream_t stream);

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_QUANTIZEDKERNELS_H
