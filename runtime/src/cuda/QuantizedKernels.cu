//===- QuantizedKernels.cu - gopt's int8 conv/matmul helper kernels
//--------===//
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

// One thread per 4 consecutive columns (channels ci4 * 4 .. + 3 of one
// tap): the columns' groups of 4 are 4-byte aligned (cPad and so the row
// length are multiples of 4), and with NHWC data of c % 4 == 0 so are the
// 4 source bytes.
template <bool Vector>
__global__ void
int8Im2colKernel(const int8_t *x, bool nchw, int c, int h, int w, int cPad,
                 int kw, int taps, int sh, int sw, int dh, int dw, int padTop,
                 int padLeft, int oh, int ow, int8_t *a, int total) {
  const int groups = cPad / 4;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += gridDim.x * blockDim.x) {
    int g = i % groups, r = i / groups;
    int tap = r % taps, row = r / taps;
    int ox = row % ow, t = row / ow;
    int oy = t % oh, n = t / oh;
    int iy = oy * sh - padTop + (tap / kw) * dh;
    int ix = ox * sw - padLeft + (tap % kw) * dw;
    int ci = g * 4;
    char4 v = make_char4(0, 0, 0, 0);
    if (iy >= 0 && iy < h && ix >= 0 && ix < w) {
      if (Vector) {
        v = *reinterpret_cast<const char4 *>(x + ((n * h + iy) * w + ix) * c +
                                             ci);
      } else {
        signed char b[4];
        for (int j = 0; j < 4; ++j) {
          int cj = ci + j;
          b[j] = cj >= c ? 0
                 : nchw  ? x[((n * c + cj) * h + iy) * w + ix]
                         : x[((n * h + iy) * w + ix) * c + cj];
        }
        v = make_char4(b[0], b[1], b[2], b[3]);
      }
    }
    // Element offset (row * taps + tap) * cPad + ci = i * 4.
    reinterpret_cast<char4 *>(a)[i] = v;
  }
}

__global__ void int8MaxPoolKernel(const int8_t *x, bool nchw, int c, int h,
                                  int w, int kh, int kw, int sh, int sw,
                                  int padTop, int padLeft, int oh, int ow,
                                  int8_t *y, int total) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += gridDim.x * blockDim.x) {
    int n, ch, oy, ox;
    if (nchw) {
      ox = i % ow;
      int r = i / ow;
      oy = r % oh;
      r /= oh;
      ch = r % c;
      n = r / c;
    } else {
      ch = i % c;
      int r = i / c;
      ox = r % ow;
      r /= ow;
      oy = r % oh;
      n = r / oh;
    }
    int y0 = oy * sh - padTop, x0 = ox * sw - padLeft;
    int m = -128;
    for (int iy = max(y0, 0); iy < min(y0 + kh, h); ++iy)
      for (int ix = max(x0, 0); ix < min(x0 + kw, w); ++ix)
        m = max(m, int(nchw ? x[((n * c + ch) * h + iy) * w + ix]
                            : x[((n * h + iy) * w + ix) * c + ch]));
    y[i] = static_cast<int8_t>(m);
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

__device__ __forceinline__ float activate(float v, Int8Activation act, float lo,
                                          float hi) {
  if (act == Int8Activation::kRelu)
    return fmaxf(v, 0.f);
  if (act == Int8Activation::kClip)
    return fminf(fmaxf(v, lo), hi);
  return v;
}

// The value before any requantize: __fmul_rn/__fadd_rn, no contraction
// into an FMA, as the reference adds the bias to the rounded product.
__device__ __forceinline__ float scaled(float sum, int64_t c,
                                        const Int8EpilogueArgs &a) {
  float v = __fmul_rn(sum, a.alpha[c]);
  if (a.bias)
    v = __fadd_rn(v, a.bias[c]);
  return activate(v, a.act, a.lo, a.hi);
}

// The rest, for output element o: the residual stage and the result.
__device__ __forceinline__ void finish(float v, int64_t o,
                                       const Int8EpilogueArgs &a, void *out) {
  if (a.residual) {
    float mid =
        __fmul_rn(static_cast<float>(requantize(v, a.midScale)), a.midScale);
    float res = __fmul_rn(static_cast<float>(a.residual[o]), a.residualScale);
    v = activate(__fadd_rn(mid, res), a.act2, a.lo2, a.hi2);
  }
  if (a.outScale)
    static_cast<int8_t *>(out)[o] = requantize(v, *a.outScale);
  else
    static_cast<float *>(out)[o] = v;
}

// Index: int64_t, or int when every offset fits (cheaper divisions).
template <typename Acc, typename Index>
__global__ void int8EpilogueKernel(const Acc *acc, Index accStride,
                                   Index spatial, Index channels,
                                   bool channelsFirst, Int8EpilogueArgs args,
                                   void *out, Index total) {
  for (Index i = blockIdx.x * Index(blockDim.x) + threadIdx.x; i < total;
       i += Index(gridDim.x) * blockDim.x) {
    Index c, row;
    if (channelsFirst) {
      Index s = i % spatial, r = i / spatial;
      c = r % channels;
      row = (r / channels) * spatial + s;
    } else {
      c = i % channels;
      row = i / channels;
    }
    finish(scaled(static_cast<float>(acc[row * accStride + c]), c, args), i,
           args, out);
  }
}

// The NCHW epilogue as a tiled transpose: a block reads a 32 x 32 tile of
// the sums along channels (C's rows are positions) and writes it along
// positions, so both sides are coalesced. Block (32, 8); grid (position
// tiles, channel tiles, batch).
constexpr int kTile = 32, kTileRows = 8;
template <typename Acc>
__global__ void int8EpilogueNchwKernel(const Acc *acc, int accStride,
                                       int spatial, int channels,
                                       Int8EpilogueArgs args, void *out) {
  __shared__ float tile[kTile][kTile + 1];
  const int s0 = blockIdx.x * kTile, c0 = blockIdx.y * kTile, n = blockIdx.z;
  for (int j = threadIdx.y; j < kTile; j += kTileRows) {
    int s = s0 + j, c = c0 + threadIdx.x;
    if (s < spatial && c < channels)
      tile[j][threadIdx.x] = scaled(
          static_cast<float>(acc[(n * spatial + s) * accStride + c]), c, args);
  }
  __syncthreads();
  for (int j = threadIdx.y; j < kTile; j += kTileRows) {
    int c = c0 + j, s = s0 + threadIdx.x;
    if (s < spatial && c < channels)
      finish(tile[threadIdx.x][j], (n * channels + c) * spatial + s, args, out);
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

cudaError_t launchInt8Im2col(const int8_t *x, bool nchw, int64_t n, int64_t c,
                             int64_t h, int64_t w, int64_t cPad, int64_t kh,
                             int64_t kw, int64_t sh, int64_t sw, int64_t dh,
                             int64_t dw, int64_t padTop, int64_t padLeft,
                             int64_t oh, int64_t ow, int8_t *a,
                             cudaStream_t stream) {
  int64_t total = n * oh * ow * kh * kw * (cPad / 4);
  if (total == 0)
    return cudaSuccess;
  bool vector = !nchw && c % 4 == 0;
  auto launch = vector ? int8Im2colKernel<true> : int8Im2colKernel<false>;
  launch<<<gridBlocks(total), kBlockSize, 0, stream>>>(
      x, nchw, int(c), int(h), int(w), int(cPad), int(kw), int(kh * kw),
      int(sh), int(sw), int(dh), int(dw), int(padTop), int(padLeft), int(oh),
      int(ow), a, int(total));
  return cudaGetLastError();
}

cudaError_t launchInt8MaxPool(const int8_t *x, bool nchw, int64_t n, int64_t c,
                              int64_t h, int64_t w, int64_t kh, int64_t kw,
                              int64_t sh, int64_t sw, int64_t padTop,
                              int64_t padLeft, int64_t oh, int64_t ow,
                              int8_t *y, cudaStream_t stream) {
  int64_t total = n * c * oh * ow;
  if (total == 0)
    return cudaSuccess;
  int8MaxPoolKernel<<<gridBlocks(total), kBlockSize, 0, stream>>>(
      x, nchw, int(c), int(h), int(w), int(kh), int(kw), int(sh), int(sw),
      int(padTop), int(padLeft), int(oh), int(ow), y, int(total));
  return cudaGetLastError();
}

template <typename Acc>
cudaError_t launchInt8Epilogue(const Acc *acc, int64_t accStride, int64_t n,
                               int64_t spatial, int64_t channels,
                               bool channelsFirst, const Int8EpilogueArgs &args,
                               void *out, cudaStream_t stream) {
  int64_t total = n * spatial * channels;
  if (total == 0)
    return cudaSuccess;
  int64_t rows = total / channels;
  bool small = total <= INT32_MAX && rows * accStride <= INT32_MAX;
  if (channelsFirst && small && n <= 65535) {
    dim3 grid((spatial + kTile - 1) / kTile, (channels + kTile - 1) / kTile, n);
    if (grid.y <= 65535) {
      int8EpilogueNchwKernel<Acc><<<grid, dim3(kTile, kTileRows), 0, stream>>>(
          acc, int(accStride), int(spatial), int(channels), args, out);
      return cudaGetLastError();
    }
  }
  if (small)
    int8EpilogueKernel<Acc, int><<<gridBlocks(total), kBlockSize, 0, stream>>>(
        acc, int(accStride), int(spatial), int(channels), channelsFirst, args,
        out, int(total));
  else
    int8EpilogueKernel<Acc, int64_t>
        <<<gridBlocks(total), kBlockSize, 0, stream>>>(
            acc, accStride, spatial, channels, channelsFirst, args, out, total);
  return cudaGetLastError();
}

template cudaError_t launchInt8Epilogue<float>(const float *, int64_t, int64_t,
                                               int64_t, int64_t, bool,
                                               const Int8EpilogueArgs &, void *,
                                               cudaStream_t);
template cudaError_t launchInt8Epilogue<int32_t>(const int32_t *, int64_t,
                                                 int64_t, int64_t, int64_t,
                                                 bool, const Int8EpilogueArgs &,
                                                 void *, cudaStream_t);

} // namespace gopt::runtime::cuda
