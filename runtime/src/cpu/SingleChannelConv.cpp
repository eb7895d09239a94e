//===- SingleChannelConv.cpp - Convolutions of one input channel ----------===//
//
// conv2d and conv2d_backprop_filter where the source has one channel (a
// grayscale image's first layer, the MNIST CNN's), NHWC, f32 or bf16:
// loops over the output channels, one broadcast source value times a
// filter row per tap. oneDNN 2.6 pads the single channel to its blocking
// and ran these at 6-15 GFLOP/s on an AMX Xeon (one thread), slower than
// the 32->64 convolution after them. 3x3 filters of 16 or 32 channels
// whose windows stay inside the image (the MNIST CNN's) keep the filter
// (forward) or the filter's sums (gradient) in registers, so each tap is a
// broadcast and FMAs, with no loads of filter rows or bounds tests: the
// bf16 MNIST step's forward and filter gradient of that layer took 1.4-2x
// less time than with a filter row loaded per tap.
//
//===----------------------------------------------------------------------===//
#include "SingleChannelConv.h"
#include "EnvSwitch.h"

#include "ElementLoops.h"
#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/OpSchema.h"

#include <omp.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace gopt::runtime::cpu {
namespace {

#if defined(__x86_64__) && defined(__GNUC__)
#define GOPT_CONV_CLONES                                                       \
  __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define GOPT_CONV_CLONES
#endif

// The window of a single-channel NHWC convolution.
struct Geometry {
  int64_t n, h, w, cout, kh, kw, oh, ow;
  int64_t strideH, strideW, dilationH, dilationW, padTop, padLeft;
  bool oihw; // else HWIO; with one input channel both are [taps][O] or
             // [O][taps]
};

// The geometry of `c` (x, filter shapes for conv2d; x, dy and the result's
// filter shape for conv2d_backprop_filter) where these loops run it.
std::optional<Geometry> singleChannelGeometry(const KernelConfig &c,
                                              const Shape &x, const Shape &f) {
  OpAttrs attrs = c.attrs();
  if (attrs.getString("data_format") != "NHWC" || attrs.getInt("groups") != 1)
    return std::nullopt;
  if (x.size() != 4 || f.size() != 4 || x[3] != 1)
    return std::nullopt;
  Geometry g;
  g.oihw = attrs.getString("filter_format") == "OIHW";
  if ((g.oihw ? f[1] : f[2]) != 1)
    return std::nullopt;
  g.n = x[0], g.h = x[1], g.w = x[2];
  g.kh = g.oihw ? f[2] : f[0];
  g.kw = g.oihw ? f[3] : f[1];
  g.cout = g.oihw ? f[0] : f[3];
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> dilations = attrs.getWindowInts("dilations");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  StatusOr<WindowDim> wh = computeWindowDim(g.h, g.kh, strides[0], dilations[0],
                                            padding, pads[0], pads[1], false);
  StatusOr<WindowDim> ww = computeWindowDim(g.w, g.kw, strides[1], dilations[1],
                                            padding, pads[2], pads[3], false);
  if (!wh.ok() || !ww.ok())
    return std::nullopt;
  g.oh = wh->outSize, g.ow = ww->outSize;
  g.strideH = strides[0], g.strideW = strides[1];
  g.dilationH = dilations[0], g.dilationW = dilations[1];
  g.padTop = wh->padBefore, g.padLeft = ww->padBefore;
  // Whole filters of small outputs; wider ones keep oneDNN.
  if (g.n * g.oh * g.ow == 0 || g.cout == 0 || g.cout > 512 || g.kh * g.kw > 64)
    return std::nullopt;
  return g;
}

// Output columns [lo, hi) whose tap at column offset `kx` reads inside the
// source row.
void validColumns(const Geometry &g, int64_t kx, int64_t &lo, int64_t &hi) {
  int64_t offset = kx * g.dilationW - g.padLeft; // iw = ow * stride + offset
  lo = offset >= 0 ? 0 : (-offset + g.strideW - 1) / g.strideW;
  hi = g.w - offset <= 0 ? 0 : (g.w - offset + g.strideW - 1) / g.strideW;
  hi = std::min(hi, g.ow);
  lo = std::min(lo, hi);
}

// One output row [ow][O] of image `x` (H x W) into `acc` (f32), from the
// filter `taps` ([KH*KW][O], f32) and `bias` ([O]).
GOPT_CONV_CLONES void accumulateRow(const Geometry &g, const float *xImage,
                                    const float *taps, const float *bias,
                                    int64_t oh, float *acc) {
  const int64_t cout = g.cout;
  for (int64_t ow = 0; ow < g.ow; ++ow)
#pragma omp simd
    for (int64_t o = 0; o < cout; ++o)
      acc[ow * cout + o] = bias[o];
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    int64_t ih = oh * g.strideH + ky * g.dilationH - g.padTop;
    if (ih < 0 || ih >= g.h)
      continue;
    const float *xRow = xImage + ih * g.w;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      int64_t lo, hi;
      validColumns(g, kx, lo, hi);
      const float *tap = taps + (ky * g.kw + kx) * cout;
      int64_t offset = kx * g.dilationW - g.padLeft;
      for (int64_t ow = lo; ow < hi; ++ow) {
        const float v = xRow[ow * g.strideW + offset];
        float *out = acc + ow * cout;
#pragma omp simd
        for (int64_t o = 0; o < cout; ++o)
          out[o] += v * tap[o];
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define GOPT_HAVE_AVX512_LOOPS 1
#define GOPT_AVX512 __attribute__((target("avx512f")))

// Whether the AVX-512 loops below run here.
bool avx512Loops() {
  static const bool supported = __builtin_cpu_supports("avx512f");
  return supported;
}

// 16 f32 values, relu'd where asked (NaN kept, as the generic loop does).
GOPT_AVX512 inline __m512 activate(__m512 v, bool relu) {
  if (!relu)
    return v;
  __mmask16 nonPositive =
      _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LE_OQ);
  return _mm512_mask_mov_ps(v, nonPositive, _mm512_setzero_ps());
}

GOPT_AVX512 inline void store16(float *out, __m512 v) {
  _mm512_storeu_ps(out, v);
}
// fromF32<uint16_t> on 16 lanes: to nearest even, NaN a quiet NaN.
GOPT_AVX512 inline void store16(uint16_t *out, __m512 v) {
  __m512i x = _mm512_castps_si512(v);
  __m512i lsb =
      _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
  __m512i rounded = _mm512_srli_epi32(
      _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb),
      16);
  __m512i quiet =
      _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
  __mmask16 nan = _mm512_cmpgt_epu32_mask(
      _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
      _mm512_set1_epi32(0x7f800000));
  __m512i bits = _mm512_mask_mov_epi32(rounded, nan, quiet);
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(out),
                      _mm512_cvtepi32_epi16(bits));
}

// One output row for O = 16 * kVecs channels, two pixels at a time: their
// sums stay in registers across the taps.
template <int kVecs, typename T>
GOPT_AVX512 void convRowAvx512(const Geometry &g, const float *xImage,
                               const float *taps, const float *bias, int64_t oh,
                               bool relu, T *y) {
  constexpr int kOut = 16 * kVecs;
  __m512 b[kVecs];
  for (int k = 0; k < kVecs; ++k)
    b[k] = _mm512_loadu_ps(bias + 16 * k);
  for (int64_t ow = 0; ow < g.ow; ow += 2) {
    const bool second = ow + 1 < g.ow;
    __m512 acc0[kVecs], acc1[kVecs];
    for (int k = 0; k < kVecs; ++k)
      acc0[k] = acc1[k] = b[k];
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      int64_t ih = oh * g.strideH + ky * g.dilationH - g.padTop;
      if (ih < 0 || ih >= g.h)
        continue;
      const float *xRow = xImage + ih * g.w;
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const float *tap = taps + (ky * g.kw + kx) * kOut;
        int64_t iw0 = ow * g.strideW + kx * g.dilationW - g.padLeft;
        int64_t iw1 = iw0 + g.strideW;
        if (iw0 >= 0 && iw0 < g.w) {
          __m512 v = _mm512_set1_ps(xRow[iw0]);
          for (int k = 0; k < kVecs; ++k)
            acc0[k] =
                _mm512_fmadd_ps(v, _mm512_loadu_ps(tap + 16 * k), acc0[k]);
        }
        if (second && iw1 >= 0 && iw1 < g.w) {
          __m512 v = _mm512_set1_ps(xRow[iw1]);
          for (int k = 0; k < kVecs; ++k)
            acc1[k] =
                _mm512_fmadd_ps(v, _mm512_loadu_ps(tap + 16 * k), acc1[k]);
        }
      }
    }
    T *out = y + ow * kOut;
    for (int k = 0; k < kVecs; ++k)
      store16(out + 16 * k, activate(acc0[k], relu));
    if (second)
      for (int k = 0; k < kVecs; ++k)
        store16(out + kOut + 16 * k, activate(acc1[k], relu));
  }
}

// The filter gradient of one image for O = 16 * kVecs: one tap at a time
// over the image's pixels (dy's image, read once per tap, stays in L2),
// two pixels' products in separate registers.
template <int kVecs>
GOPT_AVX512 void filterImageAvx512(const Geometry &g, const float *xImage,
                                   const float *dyImage, float *sum) {
  constexpr int kOut = 16 * kVecs;
  for (int64_t ky = 0; ky < g.kh; ++ky)
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      int64_t lo, hi;
      validColumns(g, kx, lo, hi);
      int64_t offset = kx * g.dilationW - g.padLeft;
      __m512 acc0[kVecs], acc1[kVecs];
      for (int k = 0; k < kVecs; ++k)
        acc0[k] = acc1[k] = _mm512_setzero_ps();
      for (int64_t oh = 0; oh < g.oh; ++oh) {
        int64_t ih = oh * g.strideH + ky * g.dilationH - g.padTop;
        if (ih < 0 || ih >= g.h)
          continue;
        const float *xRow = xImage + ih * g.w + offset;
        const float *dyRow = dyImage + oh * g.ow * kOut;
        int64_t ow = lo;
        for (; ow + 1 < hi; ow += 2) {
          __m512 v0 = _mm512_set1_ps(xRow[ow * g.strideW]);
          __m512 v1 = _mm512_set1_ps(xRow[(ow + 1) * g.strideW]);
          const float *d = dyRow + ow * kOut;
          for (int k = 0; k < kVecs; ++k) {
            acc0[k] = _mm512_fmadd_ps(v0, _mm512_loadu_ps(d + 16 * k), acc0[k]);
            acc1[k] = _mm512_fmadd_ps(v1, _mm512_loadu_ps(d + kOut + 16 * k),
                                      acc1[k]);
          }
        }
        if (ow < hi) {
          __m512 v0 = _mm512_set1_ps(xRow[ow * g.strideW]);
          const float *d = dyRow + ow * kOut;
          for (int k = 0; k < kVecs; ++k)
            acc0[k] = _mm512_fmadd_ps(v0, _mm512_loadu_ps(d + 16 * k), acc0[k]);
        }
      }
      float *tap = sum + (ky * g.kw + kx) * kOut;
      for (int k = 0; k < kVecs; ++k)
        _mm512_storeu_ps(tap + 16 * k, _mm512_add_ps(acc0[k], acc1[k]));
    }
}

// Whether the window never leaves the image and slides one column at a
// time: stride and dilation 1 along W, no padding, so the loops below need
// no bounds tests (the MNIST CNN's 3x3 "valid" convolution). Rows may be
// strided or dilated.
bool denseValidWindows(const Geometry &g) {
  return g.strideW == 1 && g.dilationW == 1 && g.padLeft == 0 &&
         g.padTop == 0 && g.ow + g.kw - 1 <= g.w &&
         (g.oh - 1) * g.strideH + (g.kh - 1) * g.dilationH < g.h;
}

// The tap-resident loops take 3x3 filters of 16 or 32 output channels,
// whose 9 or 18 vectors fit in registers beside the sums.
bool residentFilter(const Geometry &g) {
  return denseValidWindows(g) && g.kh == 3 && g.kw == 3 &&
         (g.cout == 16 || g.cout == 32);
}

// 16 dy values of channel block `k` as f32.
GOPT_AVX512 inline __m512 load16(const float *p) { return _mm512_loadu_ps(p); }
GOPT_AVX512 inline __m512 load16(const uint16_t *p) {
  __m512i wide = _mm512_cvtepu16_epi32(
      _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}

// kPix output pixels' sums from column `ow` of a row, the filter in
// registers (`f[tap][k]`): each tap is one broadcast source value and kVecs
// FMAs per pixel, with no tap loads and no bounds tests.
template <int kVecs, int kPix>
GOPT_AVX512 inline __attribute__((always_inline)) void
sumPixelsResident(const float *const xRows[3], const __m512 (&f)[9][kVecs],
                  const __m512 (&b)[kVecs], int64_t ow,
                  __m512 (&acc)[kPix][kVecs]) {
  for (int p = 0; p < kPix; ++p)
    for (int k = 0; k < kVecs; ++k)
      acc[p][k] = b[k];
  for (int ky = 0; ky < 3; ++ky)
    for (int kx = 0; kx < 3; ++kx)
      for (int p = 0; p < kPix; ++p) {
        __m512 v = _mm512_set1_ps(xRows[ky][ow + p + kx]);
        for (int k = 0; k < kVecs; ++k)
          acc[p][k] = _mm512_fmadd_ps(v, f[ky * 3 + kx][k], acc[p][k]);
      }
}

// Those pixels, activated and stored.
template <int kVecs, int kPix, typename T>
GOPT_AVX512 inline void
convPixelsResident(const float *const xRows[3], const __m512 (&f)[9][kVecs],
                   const __m512 (&b)[kVecs], int64_t ow, bool relu, T *out) {
  constexpr int kOut = 16 * kVecs;
  __m512 acc[kPix][kVecs];
  sumPixelsResident<kVecs, kPix>(xRows, f, b, ow, acc);
  for (int p = 0; p < kPix; ++p)
    for (int k = 0; k < kVecs; ++k)
      store16(out + (ow + p) * kOut + 16 * k, activate(acc[p][k], relu));
}

// The row's filter and bias in registers (`f`, `b`) and its source rows.
template <int kVecs>
GOPT_AVX512 inline __attribute__((always_inline)) void
loadResident(const Geometry &g, const float *xImage, const float *taps,
             const float *bias, int64_t oh, __m512 (&f)[9][kVecs],
             __m512 (&b)[kVecs], const float *(&xRows)[3]) {
  constexpr int kOut = 16 * kVecs;
  for (int t = 0; t < 9; ++t)
    for (int k = 0; k < kVecs; ++k)
      f[t][k] = _mm512_loadu_ps(taps + t * kOut + 16 * k);
  for (int k = 0; k < kVecs; ++k)
    b[k] = _mm512_loadu_ps(bias + 16 * k);
  for (int ky = 0; ky < 3; ++ky)
    xRows[ky] = xImage + (oh * g.strideH + ky * g.dilationH) * g.w;
}

// One output row of a 3x3 convolution with denseValidWindows, O = 16 *
// kVecs: several pixels at a time (8 for 16 channels, 4 for 32: 17 or 26
// of the 32 vector registers hold the filter and the sums).
template <int kVecs, typename T>
GOPT_AVX512 void convRowResident(const Geometry &g, const float *xImage,
                                 const float *taps, const float *bias,
                                 int64_t oh, bool relu, T *y) {
  constexpr int kPix = kVecs == 1 ? 8 : 4;
  __m512 f[9][kVecs], b[kVecs];
  const float *xRows[3];
  loadResident<kVecs>(g, xImage, taps, bias, oh, f, b, xRows);
  int64_t ow = 0;
  for (; ow + kPix <= g.ow; ow += kPix)
    convPixelsResident<kVecs, kPix>(xRows, f, b, ow, relu, y);
  for (; ow < g.ow; ++ow)
    convPixelsResident<kVecs, 1>(xRows, f, b, ow, relu, y);
}

// The same for a bf16 result where the CPU has AVX512-BF16: 32 sums rounded
// by one VCVTNE2PS2BF16 instead of store16's integer rounding (about 24
// instructions per pixel of 32 channels, half the row's time). That
// instruction flushes denormals and quiets NaNs its own way, so vectors
// holding either (found by VFPCLASSPS) take store16: the same bits always.
#define GOPT_AVX512_BF16                                                       \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512bf16")))

bool avx512Bf16Convert() {
  static const bool supported = __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512dq") &&
                                __builtin_cpu_supports("avx512bf16");
  return supported;
}

template <int kVecs, int kPix>
GOPT_AVX512_BF16 inline void
convPixelsResidentBf16(const float *const xRows[3], const __m512 (&f)[9][kVecs],
                       const __m512 (&b)[kVecs], int64_t ow, bool relu,
                       uint16_t *out) {
  constexpr int kOut = 16 * kVecs;
  // QNaN, SNaN, denormal.
  constexpr int kSpecial = 0x01 | 0x80 | 0x20;
  __m512 acc[kPix][kVecs];
  sumPixelsResident<kVecs, kPix>(xRows, f, b, ow, acc);
  for (int p = 0; p < kPix; ++p)
    for (int k = 0; k < kVecs; k += 2) {
      uint16_t *at = out + (ow + p) * kOut + 16 * k;
      const __m512 lo = activate(acc[p][k], relu);
      if (k + 1 == kVecs) {
        if (_mm512_fpclass_ps_mask(lo, kSpecial))
          store16(at, lo);
        else
          _mm256_storeu_si256(reinterpret_cast<__m256i *>(at),
                              (__m256i)_mm512_cvtneps_pbh(lo));
        continue;
      }
      const __m512 hi = activate(acc[p][k + 1], relu);
      if (_mm512_fpclass_ps_mask(lo, kSpecial) |
          _mm512_fpclass_ps_mask(hi, kSpecial)) {
        store16(at, lo);
        store16(at + 16, hi);
      } else {
        _mm512_storeu_si512(at, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
      }
    }
}

template <int kVecs>
GOPT_AVX512_BF16 void
convRowResidentBf16(const Geometry &g, const float *xImage, const float *taps,
                    const float *bias, int64_t oh, bool relu, uint16_t *y) {
  constexpr int kPix = kVecs == 1 ? 8 : 4;
  __m512 f[9][kVecs], b[kVecs];
  const float *xRows[3];
  loadResident<kVecs>(g, xImage, taps, bias, oh, f, b, xRows);
  int64_t ow = 0;
  for (; ow + kPix <= g.ow; ow += kPix)
    convPixelsResidentBf16<kVecs, kPix>(xRows, f, b, ow, relu, y);
  for (; ow < g.ow; ++ow)
    convPixelsResidentBf16<kVecs, 1>(xRows, f, b, ow, relu, y);
}

// The filter gradient of one image of a 3x3 convolution with
// denseValidWindows, O = 16 * kVecs: dy is read once, pixel by pixel, each
// of its vectors feeding the 9 taps' sums, which stay in registers (9 or
// 18). T: dy's element type (bf16 widened in registers).
template <int kVecs, typename T>
GOPT_AVX512 void filterImageResident(const Geometry &g, const float *xImage,
                                     const T *dyImage, float *sum) {
  constexpr int kOut = 16 * kVecs;
  __m512 acc[9][kVecs];
  for (int t = 0; t < 9; ++t)
    for (int k = 0; k < kVecs; ++k)
      acc[t][k] = _mm512_setzero_ps();
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    const float *xRows[3];
    for (int ky = 0; ky < 3; ++ky)
      xRows[ky] = xImage + (oh * g.strideH + ky * g.dilationH) * g.w;
    const T *dyRow = dyImage + oh * g.ow * kOut;
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      __m512 d[kVecs];
      for (int k = 0; k < kVecs; ++k)
        d[k] = load16(dyRow + ow * kOut + 16 * k);
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) {
          __m512 v = _mm512_set1_ps(xRows[ky][ow + kx]);
          for (int k = 0; k < kVecs; ++k)
            acc[ky * 3 + kx][k] = _mm512_fmadd_ps(v, d[k], acc[ky * 3 + kx][k]);
        }
    }
  }
  for (int t = 0; t < 9; ++t)
    for (int k = 0; k < kVecs; ++k)
      _mm512_storeu_ps(sum + t * kOut + 16 * k, acc[t][k]);
}

// The gradients of conv2d(x) + bias -> relu of one image in one pass over
// dy, for 3x3 filters with denseValidWindows and O = 16 * kVecs: dy =
// relu_grad(g, y) (g where y > 0, else 0; a NaN y passes nothing), its
// filter gradient as filterImageResident and its per-channel sums (the
// bias gradient) summed in f32 per output row, each row's sums added to
// `bias` in double. T: g's and y's element type (bf16 widened in
// registers).
template <int kVecs, typename T>
GOPT_AVX512 void reluFilterBiasImageResident(const Geometry &g,
                                             const float *xImage,
                                             const T *gImage, const T *yImage,
                                             float *sum, double *bias) {
  constexpr int kOut = 16 * kVecs;
  __m512 acc[9][kVecs];
  for (int t = 0; t < 9; ++t)
    for (int k = 0; k < kVecs; ++k)
      acc[t][k] = _mm512_setzero_ps();
  alignas(64) float rowSums[kOut];
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    const float *xRows[3];
    for (int ky = 0; ky < 3; ++ky)
      xRows[ky] = xImage + (oh * g.strideH + ky * g.dilationH) * g.w;
    const int64_t rowOffset = oh * g.ow * kOut;
    __m512 rowSum[kVecs];
    for (int k = 0; k < kVecs; ++k)
      rowSum[k] = _mm512_setzero_ps();
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      __m512 d[kVecs];
      for (int k = 0; k < kVecs; ++k) {
        const int64_t i = rowOffset + ow * kOut + 16 * k;
        __mmask16 positive = _mm512_cmp_ps_mask(
            load16(yImage + i), _mm512_setzero_ps(), _CMP_GT_OQ);
        d[k] = _mm512_maskz_mov_ps(positive, load16(gImage + i));
        rowSum[k] = _mm512_add_ps(rowSum[k], d[k]);
      }
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) {
          __m512 v = _mm512_set1_ps(xRows[ky][ow + kx]);
          for (int k = 0; k < kVecs; ++k)
            acc[ky * 3 + kx][k] = _mm512_fmadd_ps(v, d[k], acc[ky * 3 + kx][k]);
        }
    }
    for (int k = 0; k < kVecs; ++k)
      _mm512_store_ps(rowSums + 16 * k, rowSum[k]);
    for (int o = 0; o < kOut; ++o)
      bias[o] += rowSums[o];
  }
  for (int t = 0; t < 9; ++t)
    for (int k = 0; k < kVecs; ++k)
      _mm512_storeu_ps(sum + t * kOut + 16 * k, acc[t][k]);
}
#else
bool avx512Loops() { return false; }
#endif

// acc's row, activated, into `y` (T: float or bf16 bits).
template <typename T>
GOPT_CONV_CLONES void storeRow(const float *acc, int64_t count, bool relu,
                               T *y) {
  if (relu) {
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) {
      float v = acc[i];
      y[i] = fromF32<T>(v > 0.0f ? v : (v != v ? v : 0.0f));
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < count; ++i)
      y[i] = fromF32<T>(acc[i]);
  }
}

template <typename T>
GOPT_CONV_CLONES void imageToF32(const T *x, int64_t count, float *out) {
#pragma omp simd
  for (int64_t i = 0; i < count; ++i)
    out[i] = toF32(x[i]);
}

// `count` values of T as f32: the data itself for float, else widened into
// `scratch`.
template <typename T>
const float *asF32(const T *x, int64_t count, std::vector<float> &scratch) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else {
    imageToF32(x, count, scratch.data());
    return scratch.data();
  }
}

// The threads' partial filter-gradient sums ([taps][O] each), added in
// thread order and written in the filter's format.
template <typename T>
void writeFilterGradient(const Geometry &g, const std::vector<float> &partials,
                         int threads, T *result) {
  const int64_t taps = g.kh * g.kw, count = taps * g.cout;
  for (int64_t i = 0; i < count; ++i) {
    float s = 0;
    for (int t = 0; t < threads; ++t)
      s += partials[static_cast<size_t>(t) * count + i];
    int64_t tap = i / g.cout, o = i % g.cout;
    result[g.oihw ? o * taps + tap : i] = fromF32<T>(s);
  }
}

// The filter as f32 [taps][O] (HWIO with one input channel already is).
template <typename T>
void filterTaps(const Geometry &g, const T *f, std::vector<float> &taps) {
  int64_t count = g.kh * g.kw;
  taps.resize(count * g.cout);
  for (int64_t t = 0; t < count; ++t)
    for (int64_t o = 0; o < g.cout; ++o)
      taps[t * g.cout + o] =
          toF32(g.oihw ? f[o * count + t] : f[t * g.cout + o]);
}

// False when GOPT_SINGLE_CHANNEL_BF16_CONVERT=0 (store16's integer
// rounding everywhere, for comparing).
bool singleChannelBf16ConvertEnabled() {
#ifdef GOPT_HAVE_AVX512_LOOPS
  return avx512Bf16Convert() && envSwitchOn("GOPT_SINGLE_CHANNEL_BF16_CONVERT");
#else
  return false;
#endif
}

// One image of conv2d: the output rows from xImage (f32) into yImage, on
// the AVX-512 loops where they apply (`resident`: the filter in registers),
// else the generic ones (`acc`: one output row of floats).
template <typename T>
void convImage(const Geometry &g, const float *xImage, const float *taps,
               const float *bias, bool relu, bool avx512, bool resident,
               bool convert, float *acc, T *yImage) {
  const int64_t rowOut = g.ow * g.cout;
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    T *yRow = yImage + oh * rowOut;
#ifdef GOPT_HAVE_AVX512_LOOPS
    if (resident) {
      if constexpr (std::is_same_v<T, uint16_t>)
        if (convert) {
          if (g.cout == 16)
            convRowResidentBf16<1>(g, xImage, taps, bias, oh, relu, yRow);
          else
            convRowResidentBf16<2>(g, xImage, taps, bias, oh, relu, yRow);
          continue;
        }
      if (g.cout == 16)
        convRowResident<1>(g, xImage, taps, bias, oh, relu, yRow);
      else
        convRowResident<2>(g, xImage, taps, bias, oh, relu, yRow);
      continue;
    }
    if (avx512 && (g.cout == 16 || g.cout == 32 || g.cout == 64)) {
      if (g.cout == 16)
        convRowAvx512<1>(g, xImage, taps, bias, oh, relu, yRow);
      else if (g.cout == 32)
        convRowAvx512<2>(g, xImage, taps, bias, oh, relu, yRow);
      else
        convRowAvx512<4>(g, xImage, taps, bias, oh, relu, yRow);
      continue;
    }
#else
    (void)avx512;
    (void)resident;
    (void)convert;
#endif
    accumulateRow(g, xImage, taps, bias, oh, acc);
    storeRow(acc, rowOut, relu, yRow);
  }
}

// The bias as f32 (zeros without one).
void biasF32(const Geometry &g, const void *bias, DType biasType,
             std::vector<float> &out) {
  out.assign(g.cout, 0.0f);
  if (bias)
    for (int64_t o = 0; o < g.cout; ++o)
      out[o] = biasType == DType::kF32
                   ? static_cast<const float *>(bias)[o]
                   : toF32(static_cast<const uint16_t *>(bias)[o]);
}

template <typename T> class SingleChannelConvKernel : public Kernel {
public:
  SingleChannelConvKernel(const Geometry &g, bool hasBias, DType biasType,
                          bool relu)
      : g_(g), hasBias_(hasBias), biasType_(biasType), relu_(relu) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const T *x = in[0].data<T>();
    filterTaps(g_, in[1].data<T>(), taps_);
    biasF32(g_, hasBias_ ? in[2].data() : nullptr, biasType_, bias_);
    T *y = out[0].data<T>();
    const int64_t imageIn = g_.h * g_.w, rowOut = g_.ow * g_.cout;
    const bool parallel = g_.n * g_.oh * rowOut >= (1 << 15);
#pragma omp parallel if (parallel)
    {
      std::vector<float> image(std::is_same_v<T, float> ? 0 : imageIn);
      std::vector<float> acc(rowOut);
#pragma omp for schedule(static)
      for (int64_t n = 0; n < g_.n; ++n)
        convImage(g_, asF32(x + n * imageIn, imageIn, image), taps_.data(),
                  bias_.data(), relu_, avx512_, resident_, convert_, acc.data(),
                  y + n * g_.oh * rowOut);
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  Geometry g_;
  bool hasBias_;
  DType biasType_;
  bool relu_;
  std::vector<float> taps_, bias_;
  bool avx512_ = avx512Loops();
#ifdef GOPT_HAVE_AVX512_LOOPS
  bool resident_ = avx512_ && residentFilter(g_);
#else
  bool resident_ = false;
#endif
  bool convert_ = singleChannelBf16ConvertEnabled();
};

// The same loops per call (SingleChannelConvImages).
template <typename T>
class SingleChannelConvImagesImpl : public SingleChannelConvImages {
public:
  SingleChannelConvImagesImpl(const Geometry &g, DType biasType, bool relu)
      : g_(g), biasType_(biasType), relu_(relu) {}
  void setWeights(const void *filter, const void *bias) override {
    filterTaps(g_, static_cast<const T *>(filter), taps_);
    biasF32(g_, bias, biasType_, bias_);
  }
  void compute(const void *x, int64_t n, void *y) const override {
    const int64_t imageIn = g_.h * g_.w, rowOut = g_.ow * g_.cout;
    std::vector<float> image(std::is_same_v<T, float> ? 0 : imageIn),
        acc(rowOut);
    for (int64_t i = 0; i < n; ++i)
      convImage(g_,
                asF32(static_cast<const T *>(x) + i * imageIn, imageIn, image),
                taps_.data(), bias_.data(), relu_, avx512_, resident_, convert_,
                acc.data(), static_cast<T *>(y) + i * g_.oh * rowOut);
  }
  int64_t resultImage() const override { return g_.oh * g_.ow * g_.cout; }

private:
  Geometry g_;
  DType biasType_;
  bool relu_;
  std::vector<float> taps_, bias_;
  bool avx512_ = avx512Loops();
#ifdef GOPT_HAVE_AVX512_LOOPS
  bool resident_ = avx512_ && residentFilter(g_);
#else
  bool resident_ = false;
#endif
  bool convert_ = singleChannelBf16ConvertEnabled();
};

// The filter gradient's contributions of one image: sum[tap][o] += x at
// the tap * dy[oh][ow][o], over the image's output pixels.
GOPT_CONV_CLONES void accumulateFilterImage(const Geometry &g,
                                            const float *xImage,
                                            const float *dyImage, float *sum) {
  const int64_t cout = g.cout;
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    const float *dyRow = dyImage + oh * g.ow * cout;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      int64_t ih = oh * g.strideH + ky * g.dilationH - g.padTop;
      if (ih < 0 || ih >= g.h)
        continue;
      const float *xRow = xImage + ih * g.w;
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        int64_t lo, hi;
        validColumns(g, kx, lo, hi);
        float *tap = sum + (ky * g.kw + kx) * cout;
        int64_t offset = kx * g.dilationW - g.padLeft;
        for (int64_t ow = lo; ow < hi; ++ow) {
          const float v = xRow[ow * g.strideW + offset];
          const float *d = dyRow + ow * cout;
#pragma omp simd
          for (int64_t o = 0; o < cout; ++o)
            tap[o] += v * d[o];
        }
      }
    }
  }
}

// conv2d_backprop_filter(x, dy): per image in f32, images summed in f32 in
// order per thread (each thread a contiguous run of the batch), the
// threads' sums in thread order, as oneDNN's kernel sums: the result does
// not depend on scheduling, and a batch split over two threads sums as the
// same batch split over two data-parallel replicas does
// (test/Runtime/train-data-parallel-mnist.test compares those within 1e-6).
template <typename T> class SingleChannelFilterGradKernel : public Kernel {
public:
  explicit SingleChannelFilterGradKernel(const Geometry &g) : g_(g) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const T *x = in[0].data<T>(), *dy = in[1].data<T>();
    const int64_t imageIn = g_.h * g_.w, imageOut = g_.oh * g_.ow * g_.cout;
    const int64_t taps = g_.kh * g_.kw, count = taps * g_.cout;
    const bool parallel = g_.n * imageOut >= (1 << 15);
    const int threads = parallel ? omp_get_max_threads() : 1;
    std::vector<float> partials(static_cast<size_t>(threads) * count, 0.0f);
#pragma omp parallel num_threads(threads) if (parallel)
    {
      float *total = partials.data() + omp_get_thread_num() * count;
      std::vector<float> sum(count), image, dyImage;
      if constexpr (!std::is_same_v<T, float>) {
        image.resize(imageIn);
        dyImage.resize(imageOut);
      }
#pragma omp for schedule(static)
      for (int64_t n = 0; n < g_.n; ++n) {
#ifdef GOPT_HAVE_AVX512_LOOPS
        if (resident_) {
          // dy as it is (bf16 widened in registers); the sums of one image
          // go to `sum` whole, so `total` adds them as below.
          const float *xImage = asF32(x + n * imageIn, imageIn, image);
          if (g_.cout == 16)
            filterImageResident<1>(g_, xImage, dy + n * imageOut, sum.data());
          else
            filterImageResident<2>(g_, xImage, dy + n * imageOut, sum.data());
          for (int64_t i = 0; i < count; ++i)
            total[i] += sum[i];
          continue;
        }
#endif
        const float *xImage = asF32(x + n * imageIn, imageIn, image);
        const float *dyData = asF32(dy + n * imageOut, imageOut, dyImage);
        std::fill(sum.begin(), sum.end(), 0.0f);
#ifdef GOPT_HAVE_AVX512_LOOPS
        if (avx512_ && g_.cout == 16)
          filterImageAvx512<1>(g_, xImage, dyData, sum.data());
        else if (avx512_ && g_.cout == 32)
          filterImageAvx512<2>(g_, xImage, dyData, sum.data());
        else if (avx512_ && g_.cout == 64)
          filterImageAvx512<4>(g_, xImage, dyData, sum.data());
        else
#endif
          accumulateFilterImage(g_, xImage, dyData, sum.data());
        for (int64_t i = 0; i < count; ++i)
          total[i] += sum[i];
      }
    }
    writeFilterGradient(g_, partials, threads, out[0].data<T>());
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  Geometry g_;
  bool avx512_ = avx512Loops();
#ifdef GOPT_HAVE_AVX512_LOOPS
  bool resident_ = avx512_ && residentFilter(g_);
#endif
};

#ifdef GOPT_HAVE_AVX512_LOOPS
// relu_grad + conv2d_backprop_filter + reduce_sum (the bias gradient) of a
// one-channel convolution: inputs x, g, y; outputs the filter gradient and
// the bias gradient (both T: float or bf16 bits). Images split among
// threads and summed as SingleChannelFilterGradKernel does; the bias sums
// per thread in double, joined in thread order.
template <typename T>
class SingleChannelReluFilterBiasGradKernel : public Kernel {
public:
  explicit SingleChannelReluFilterBiasGradKernel(const Geometry &g) : g_(g) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const T *x = in[0].data<T>(), *gr = in[1].data<T>(), *y = in[2].data<T>();
    const int64_t imageIn = g_.h * g_.w, imageOut = g_.oh * g_.ow * g_.cout;
    const int64_t taps = g_.kh * g_.kw, count = taps * g_.cout;
    const bool parallel = g_.n * imageOut >= (1 << 15);
    const int threads = parallel ? omp_get_max_threads() : 1;
    std::vector<float> partials(static_cast<size_t>(threads) * count, 0.0f);
    std::vector<double> biasPartials(static_cast<size_t>(threads) * g_.cout,
                                     0.0);
#pragma omp parallel num_threads(threads) if (parallel)
    {
      const int thread = omp_get_thread_num();
      float *total = partials.data() + thread * count;
      double *bias = biasPartials.data() + thread * g_.cout;
      std::vector<float> sum(count), image(imageIn);
#pragma omp for schedule(static)
      for (int64_t n = 0; n < g_.n; ++n) {
        const float *xImage = asF32(x + n * imageIn, imageIn, image);
        const T *gImage = gr + n * imageOut, *yImage = y + n * imageOut;
        if (g_.cout == 16)
          reluFilterBiasImageResident<1>(g_, xImage, gImage, yImage, sum.data(),
                                         bias);
        else
          reluFilterBiasImageResident<2>(g_, xImage, gImage, yImage, sum.data(),
                                         bias);
        for (int64_t i = 0; i < count; ++i)
          total[i] += sum[i];
      }
    }
    writeFilterGradient(g_, partials, threads, out[0].data<T>());
    T *biasResult = out[1].data<T>();
    for (int64_t o = 0; o < g_.cout; ++o) {
      double s = 0;
      for (int t = 0; t < threads; ++t)
        s += biasPartials[static_cast<size_t>(t) * g_.cout + o];
      biasResult[o] = fromF32<T>(static_cast<float>(s));
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  Geometry g_;
};

// The same per image, summed over the calls (one thread).
template <typename T>
class ReluFilterBiasSumsImpl : public SingleChannelReluFilterBiasSums {
public:
  explicit ReluFilterBiasSumsImpl(const Geometry &g)
      : g_(g), total_(g.kh * g.kw * g.cout), sum_(total_.size()),
        image_(g.h * g.w), bias_(g.cout) {}
  void reset() override {
    std::fill(total_.begin(), total_.end(), 0.0f);
    std::fill(bias_.begin(), bias_.end(), 0.0);
  }
  void accumulate(const void *x, const void *g, const void *y,
                  int64_t n) override {
    const int64_t imageIn = g_.h * g_.w, imageOut = g_.oh * g_.ow * g_.cout;
    for (int64_t i = 0; i < n; ++i) {
      const float *xImage =
          asF32(static_cast<const T *>(x) + i * imageIn, imageIn, image_);
      const T *gImage = static_cast<const T *>(g) + i * imageOut,
              *yImage = static_cast<const T *>(y) + i * imageOut;
      if (g_.cout == 16)
        reluFilterBiasImageResident<1>(g_, xImage, gImage, yImage, sum_.data(),
                                       bias_.data());
      else
        reluFilterBiasImageResident<2>(g_, xImage, gImage, yImage, sum_.data(),
                                       bias_.data());
      for (size_t k = 0; k < total_.size(); ++k)
        total_[k] += sum_[k];
    }
  }
  void addInto(float *filter, double *bias) const override {
    const int64_t taps = g_.kh * g_.kw;
    for (int64_t i = 0; i < taps * g_.cout; ++i) {
      const int64_t tap = i / g_.cout, o = i % g_.cout;
      filter[g_.oihw ? o * taps + tap : i] += total_[i];
    }
    for (int64_t o = 0; o < g_.cout; ++o)
      bias[o] += bias_[o];
  }

private:
  Geometry g_;
  std::vector<float> total_, sum_, image_;
  std::vector<double> bias_;
};
#endif

// The element type x, the filter (or dy) and the result share, if f32 or
// bf16.
DType sharedLoopType(const KernelConfig &c) {
  for (DType t : {DType::kF32, DType::kBF16}) {
    bool all = c.outputTypes[0] == t;
    for (int i : {0, 1})
      all = all && c.inputTypes[i] == t;
    if (all)
      return t;
  }
  return DType::kInvalid;
}

} // namespace

bool singleChannelConvEnabled() {
  return envSwitchOn("GOPT_SINGLE_CHANNEL_CONV");
}

std::unique_ptr<Kernel> createSingleChannelConv(const KernelConfig &c) {
  if (c.inputShapes.size() < 2 || c.outputShapes.size() != 1)
    return nullptr;
  std::optional<Geometry> g =
      singleChannelGeometry(c, c.inputShapes[0], c.inputShapes[1]);
  DType type = sharedLoopType(c);
  if (!g || type == DType::kInvalid)
    return nullptr;
  std::string activation = c.attrs().getString("activation");
  if (activation != "none" && activation != "relu")
    return nullptr;
  bool hasBias = c.inputShapes.size() == 3;
  DType biasType = hasBias ? c.inputTypes[2] : DType::kF32;
  if (hasBias && biasType != DType::kF32 && biasType != DType::kBF16)
    return nullptr;
  bool relu = activation == "relu";
  if (type == DType::kF32)
    return std::make_unique<SingleChannelConvKernel<float>>(*g, hasBias,
                                                            biasType, relu);
  return std::make_unique<SingleChannelConvKernel<uint16_t>>(*g, hasBias,
                                                             biasType, relu);
}

std::unique_ptr<SingleChannelConvImages>
createSingleChannelConvImages(const KernelConfig &c) {
  if (!singleChannelConvEnabled() || !createSingleChannelConv(c))
    return nullptr;
  std::optional<Geometry> g =
      singleChannelGeometry(c, c.inputShapes[0], c.inputShapes[1]);
#ifdef GOPT_HAVE_AVX512_LOOPS
  if (!avx512Loops() || !residentFilter(*g))
    return nullptr;
#else
  return nullptr;
#endif
  const bool relu = c.attrs().getString("activation") == "relu";
  const DType biasType =
      c.inputShapes.size() == 3 ? c.inputTypes[2] : DType::kF32;
  if (sharedLoopType(c) == DType::kF32)
    return std::make_unique<SingleChannelConvImagesImpl<float>>(*g, biasType,
                                                                relu);
  return std::make_unique<SingleChannelConvImagesImpl<uint16_t>>(*g, biasType,
                                                                 relu);
}

std::unique_ptr<Kernel> createSingleChannelFilterGrad(const KernelConfig &c) {
  if (c.inputShapes.size() != 2 || c.outputShapes.size() != 1)
    return nullptr;
  std::optional<Geometry> g =
      singleChannelGeometry(c, c.inputShapes[0], c.outputShapes[0]);
  DType type = sharedLoopType(c);
  if (!g || type == DType::kInvalid)
    return nullptr;
  const Shape &dy = c.inputShapes[1];
  if (dy.size() != 4 || dy[0] != g->n || dy[1] != g->oh || dy[2] != g->ow ||
      dy[3] != g->cout)
    return nullptr;
  if (type == DType::kF32)
    return std::make_unique<SingleChannelFilterGradKernel<float>>(*g);
  return std::make_unique<SingleChannelFilterGradKernel<uint16_t>>(*g);
}

bool reluFilterBiasFusionEnabled() {
  return singleChannelConvEnabled() &&
         envSwitchOn("GOPT_RELU_FILTER_BIAS_GRAD");
}

std::unique_ptr<SingleChannelReluFilterBiasSums>
createSingleChannelReluFilterBiasSums(const KernelConfig &filterGrad,
                                      DType biasType) {
#ifdef GOPT_HAVE_AVX512_LOOPS
  // The fused step's conditions.
  if (!createSingleChannelReluFilterBiasGrad(filterGrad, biasType))
    return nullptr;
  std::optional<Geometry> g = singleChannelGeometry(
      filterGrad, filterGrad.inputShapes[0], filterGrad.outputShapes[0]);
  if (sharedLoopType(filterGrad) == DType::kF32)
    return std::make_unique<ReluFilterBiasSumsImpl<float>>(*g);
  return std::make_unique<ReluFilterBiasSumsImpl<uint16_t>>(*g);
#else
  (void)filterGrad;
  (void)biasType;
  return nullptr;
#endif
}

std::unique_ptr<Kernel>
createSingleChannelReluFilterBiasGrad(const KernelConfig &filterGrad,
                                      DType biasType) {
#ifdef GOPT_HAVE_AVX512_LOOPS
  if (!avx512Loops() || !reluFilterBiasFusionEnabled())
    return nullptr;
  if (filterGrad.inputShapes.size() != 2 || filterGrad.outputShapes.size() != 1)
    return nullptr;
  std::optional<Geometry> g = singleChannelGeometry(
      filterGrad, filterGrad.inputShapes[0], filterGrad.outputShapes[0]);
  DType type = sharedLoopType(filterGrad);
  if (!g || type == DType::kInvalid || !residentFilter(*g))
    return nullptr;
  const Shape &dy = filterGrad.inputShapes[1];
  if (dy.size() != 4 || dy[0] != g->n || dy[1] != g->oh || dy[2] != g->ow ||
      dy[3] != g->cout)
    return nullptr;
  if (biasType != type) // reduce_sum keeps dy's element type
    return nullptr;
  if (type == DType::kF32)
    return std::make_unique<SingleChannelReluFilterBiasGradKernel<float>>(*g);
  return std::make_unique<SingleChannelReluFilterBiasGradKernel<uint16_t>>(*g);
#else
  (void)filterGrad;
  (void)biasType;
#endif
  return nullptr;
}

} // namespace gopt::runtime::cpu
