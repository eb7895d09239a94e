//===- QuantizedKernels.cu - gopt's int8 conv/matmul helper kernels --------===//
#include "Launch.h"
#include "QuantizedKernels.h"

namespace gopt::runtime::cuda {
namespace {

__global__ void int8ToPaddedNhwcKernel(const int8_t *x, bool nchw, int64_t c,
                                       int64_t h, int64_t w, int64_t cPad,
                                       int64_t outH, int64_t outW,
                                       int64_t padTop, int64_t padLeft,
                                       int8_t *y, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t cp = i % cPad, r = i / cPad;
    int64_t ow = r % outW;
    r /= outW;
    int64_t oh = r % outH, n = r / outH;
    int64_t ih = oh - padTop, iw = ow - padLeft;
    int8_t v = 0;
    if (cp < c && ih >= 0 && ih < h && iw >= 0 && iw < w)
      v = nchw ? x[((n * c + cp) * h + ih) * w + iw]
               : x[((n * h + ih) * w + iw) * c + cp];
    y[i] = v;
  }
}

// The same rounding as Kernels.cu's quantize (the reference's): IEEE
// division, half to even, NaN -> 0, clamp to [-128, 127].
__device__ __forceinline__ int8_t requantize(float v, float scale) {
  float r = rintf(__fdiv_rn(v, scale));
  if (isnan(r))
    return 0;
  r = fminf(127.f, fmaxf(-128.f, r));
  return static_cast<int8_t>(__float2int_rz(r));
}

template <typename Acc>
__global__ void int8EpilogueKernel(const Acc *acc, int64_t accStride,
                                   int64_t spatial, int64_t channels,
                                   bool channelsFirst, const float *alpha,
                                   const float *bias, Int8Activation act,
                                   float lo, float hi, const float *outScale,
                                   void *out, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t c, row;
    if (channelsFirst) {
      int64_t s = i % spatial, r = i / spatial;
      c = r % channels;
      row = (r / channels) * spatial + s;
    } else {
      c = i % channels;
      row = i / channels;
    }
    // __fmul_rn/__fadd_rn: no contraction into an FMA, as the reference
    // adds the bias to the rounded product.
    float v = __fmul_rn(static_cast<float>(acc[row * accStride + c]), alpha[c]);
    if (bias)
      v = __fadd_rn(v, bias[c]);
    if (act == Int8Activation::kRelu)
      v = fmaxf(v, 0.f);
    else if (act == Int8Activation::kClip)
      v = fminf(fmaxf(v, lo), hi);
    if (outScale)
      static_cast<int8_t *>(out)[i] = requantize(v, *outScale);
    else
      static_cast<float *>(out)[i] = v;
  }
}

} // namespace

cudaError_t launchInt8ToPaddedNhwc(const int8_t *x, bool nchw, int64_t n,
                                   int64_t c, int64_t h, int64_t w,
                                   int64_t cPad, int64_t outH, int64_t outW,
                                   int64_t padTop, int64_t padLeft, int8_t *y,
                                   cudaStream_t stream) {
  int64_t total = n * outH * outW * cPad;
  if (total == 0)
    return cudaSuccess;
  int8ToPaddedNhwcKernel<<<gridBlocks(total), kBlockSize, 0, stream>>>(
      x, nchw, c, h, w, cPad, outH, outW, padTop, padLeft, y, total);
  return cudaGetLastError();
}

template <typename Acc>
cudaError_t launchInt8Epilogue(const Acc *acc, int64_t accStride, int64_t n,
                               int64_t spatial, int64_t channels,
                               bool channelsFirst, const float *alpha,
                               const float *bias, Int8Activation act, float lo,
                               float hi, const float *outScale, void *out,
                               cudaStream_t stream) {
  int64_t total = n * spatial * channels;
  if (total == 0)
    return cudaSuccess;
  int8EpilogueKernel<Acc><<<gridBlocks(total), kBlockSize, 0, stream>>>(
      acc, accStride, spatial, channels, channelsFirst, alpha, bias, act, lo,
      hi, outScale, out, total);
  return cudaGetLastError();
}

template cudaError_t launchInt8Epilogue<float>(const float *, int64_t, int64_t,
                                               int64_t, int64_t, bool,
                                               const float *, const float *,
                                               Int8Activation, float, float,
                                               const float *, void *,
                                               cudaStream_t);
template cudaError_t launchInt8Epilogue<int32_t>(
    const int32_t *, int64_t, int64_t, int64_t, int64_t, bool, const float *,
    const float *, Int8Activation, float, float, const float *, void *,
    cudaStream_t);

} // namespace gopt::runtime::cuda
