//===- PoolGradBf16.cpp - bf16 max_pool_grad on AVX-512 -------------------===//
//
// The generic NHWC rows loop keeps each window's winner per channel in
// arrays and adds dy into its f32 row ring one channel at a time (ResNet-18's
// stem pool at batch 32: 35-44 ms a step on one thread). Here 16 channels
// are a vector: the window's maximum and its position stay in registers,
// and dy is added at every window position under the mask of the lanes it
// won (unconditionally: a branch on the mask mispredicted on random data,
// 43-46 ms), so the ring rows see the same additions in the same order
// (22-25 ms).
//
//===----------------------------------------------------------------------===//
#include "PoolGradBf16.h"
#include "Avx512Lanes.h"
#include "ElementLoops.h"
#include "EnvSwitch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#ifdef __x86_64__
#include <immintrin.h>
#endif

namespace gopt::runtime::cpu {

#ifndef __x86_64__
bool maxPoolGradRowsAvx512Applies(const PoolWindows &) { return false; }
void maxPoolGradRowsAvx512(const PoolWindows &, const uint16_t *,
                           const uint16_t *, uint16_t *, float *) {}
bool maxPoolMaskReluBiasGradBf16(const PoolWindows &, const uint16_t *,
                                 const uint16_t *, uint16_t *, double *,
                                 float *) {
  return false;
}
void transposeBf16(const uint16_t *src, int64_t rows, int64_t cols,
                   uint16_t *dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      dst[c * rows + r] = src[r * cols + c];
}
#else
bool maxPoolGradRowsAvx512Applies(const PoolWindows &g) {
  if (!envSwitchOn("GOPT_MAX_POOL_GRAD_AVX512"))
    return false;
  // Window positions are numbered in a vector of int32 lanes.
  return g.c % 16 == 0 && g.c > 0 && g.kh * g.kw <= (1 << 20) &&
         avx512bwSupported();
}

namespace {
GOPT_AVX512BW inline __m512 loadBf16(const uint16_t *p) {
  return _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(
                            reinterpret_cast<const __m256i *>(p))),
                        16));
}

// Rounds `n` floats of `row` to bf16 into `out` (as fromF32) and zeroes
// them.
GOPT_AVX512BW void emitRow(float *row, uint16_t *out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    out[i] = fromF32<uint16_t>(row[i]);
    row[i] = 0.0f;
  }
}
} // namespace

GOPT_AVX512BW void maxPoolGradRowsAvx512(const PoolWindows &g,
                                         const uint16_t *px,
                                         const uint16_t *pdy, uint16_t *pdx,
                                         float *acc) {
  const int64_t channels = g.c, rowStride = g.w * g.c;
  int64_t nextOut = 0; // the first dx row not yet written
  auto emitRowsBefore = [&](int64_t end) {
    for (; nextOut < end; ++nextOut)
      emitRow(acc + nextOut % g.kh * rowStride, pdx + nextOut * rowStride,
              rowStride);
  };
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    const int64_t h0 = oh * g.sh - g.padTop;
    const int64_t hb = std::max<int64_t>(h0, 0), he = std::min(h0 + g.kh, g.h);
    emitRowsBefore(std::min(hb, g.h));
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      const int64_t w0 = ow * g.sw - g.padLeft;
      const int64_t wb = std::max<int64_t>(w0, 0),
                    we = std::min(w0 + g.kw, g.w);
      if (hb >= he || wb >= we)
        continue; // the window lies entirely in padding
      const uint16_t *d = pdy + (oh * g.ow + ow) * channels;
      for (int64_t ch = 0; ch < channels; ch += 16) {
        // Positions numbered (ih - hb) * ww + (iw - wb), row-major.
        const uint16_t *first = px + hb * rowStride + wb * channels + ch;
        __m512 best = loadBf16(first);
        __m512i bestAt = _mm512_setzero_si512();
        int32_t at = 0;
        for (int64_t ih = hb; ih < he; ++ih) {
          const uint16_t *row = px + ih * rowStride + ch;
          for (int64_t iw = wb; iw < we; ++iw, ++at) {
            if (at == 0)
              continue;
            __m512 v = loadBf16(row + iw * channels);
            // A larger value, or a NaN (the last NaN wins).
            __mmask16 take = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) |
                             _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
            best = _mm512_mask_mov_ps(best, take, v);
            bestAt = _mm512_mask_mov_epi32(bestAt, take, _mm512_set1_epi32(at));
          }
        }
        const __m512 grad = loadBf16(d + ch);
        at = 0;
        for (int64_t ih = hb; ih < he; ++ih) {
          float *row = acc + ih % g.kh * rowStride + ch;
          for (int64_t iw = wb; iw < we; ++iw, ++at) {
            __mmask16 won =
                _mm512_cmpeq_epi32_mask(bestAt, _mm512_set1_epi32(at));
            float *a = row + iw * channels;
            _mm512_storeu_ps(a, _mm512_mask_add_ps(_mm512_loadu_ps(a), won,
                                                   _mm512_loadu_ps(a), grad));
          }
        }
      }
    }
  }
  emitRowsBefore(g.h);
}

// Per window and 32 channels (16 where c is an odd multiple of 16): dy
// (NaNs quieted as passGradient) masked by each tap's winners, stored at
// the tap, and added to the row's sums under the union of the masks (the
// lanes the relu passed): the scatter of maxPoolReluBiasGradImage without
// its compares of x.
GOPT_AVX512BW bool maxPoolMaskReluBiasGradBf16(const PoolWindows &g,
                                               const uint16_t *masks,
                                               const uint16_t *pdy,
                                               uint16_t *pdx, double *bias,
                                               float *rowSums) {
  if (g.c % 16 != 0 || g.c <= 0 || !avx512bwSupported())
    return false;
  const int64_t channels = g.c, kw = g.kw, rowStride = g.w * g.c;
  const int64_t taps = g.kh * g.kw, wide = channels / 32 * 32;
  const __m512i magnitude = _mm512_set1_epi16(0x7fff),
                infinity = _mm512_set1_epi16(0x7f80),
                quietBit = _mm512_set1_epi16(0x40);
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    std::fill(rowSums, rowSums + channels, 0.0f);
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      const int64_t base = oh * g.kh * rowStride + ow * kw * channels;
      const int64_t pooled = (oh * g.ow + ow) * channels;
      const uint16_t *m = masks + (oh * g.ow + ow) * (channels / 16) * taps;
      for (int64_t ch = 0; ch < channels; ch += 32, m += 2 * taps) {
        // The last 16 channels of an odd count of 16: the upper half off.
        const __mmask32 lanes = ch < wide ? ~__mmask32(0) : 0xffffu;
        __m512i d = _mm512_maskz_loadu_epi16(lanes, pdy + pooled + ch);
        const __mmask32 nan =
            _mm512_cmpgt_epu16_mask(_mm512_and_si512(d, magnitude), infinity);
        d = _mm512_mask_mov_epi16(d, nan, _mm512_or_si512(d, quietBit));
        __mmask32 passed = 0;
        uint16_t *out = pdx + base + ch;
        for (int64_t t = 0; t < taps; ++t) {
          const __mmask32 pick =
              m[t] | (ch < wide ? __mmask32(m[taps + t]) << 16 : 0);
          passed |= pick;
          _mm512_mask_storeu_epi16(out + (t / kw) * rowStride +
                                       (t % kw) * channels,
                                   lanes, _mm512_maskz_mov_epi16(pick, d));
        }
        const __m512i kept = _mm512_maskz_mov_epi16(passed, d);
        const __m512
            lo = _mm512_castsi512_ps(_mm512_slli_epi32(
                _mm512_cvtepu16_epi32(_mm512_castsi512_si256(kept)), 16)),
            hi = _mm512_castsi512_ps(_mm512_slli_epi32(
                _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(kept, 1)), 16));
        _mm512_storeu_ps(rowSums + ch,
                         _mm512_add_ps(_mm512_loadu_ps(rowSums + ch), lo));
        if (ch < wide)
          _mm512_storeu_ps(
              rowSums + ch + 16,
              _mm512_add_ps(_mm512_loadu_ps(rowSums + ch + 16), hi));
      }
    }
    for (int64_t ch = 0; ch < channels; ++ch)
      bias[ch] += rowSums[ch];
  }
  return true;
}

namespace {
// Rows r[0..31] of 32 16-bit lanes transposed in place: unpacks of 16-,
// 32- and 64-bit pairs give each 128-bit lane's 8x8 transposes (a[8G + e]:
// column e of every lane from rows 8G..8G+7), then 128-bit block shuffles
// join the four row groups.
GOPT_AVX512BW inline void transpose32x32(__m512i r[32]) {
  __m512i a[32];
  for (int i = 0; i < 16; ++i) {
    a[2 * i] = _mm512_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
  }
  for (int q = 0; q < 8; ++q) {
    r[4 * q] = _mm512_unpacklo_epi32(a[4 * q], a[4 * q + 2]);
    r[4 * q + 1] = _mm512_unpackhi_epi32(a[4 * q], a[4 * q + 2]);
    r[4 * q + 2] = _mm512_unpacklo_epi32(a[4 * q + 1], a[4 * q + 3]);
    r[4 * q + 3] = _mm512_unpackhi_epi32(a[4 * q + 1], a[4 * q + 3]);
  }
  for (int g = 0; g < 4; ++g)
    for (int k = 0; k < 4; ++k) {
      a[8 * g + 2 * k] = _mm512_unpacklo_epi64(r[8 * g + k], r[8 * g + 4 + k]);
      a[8 * g + 2 * k + 1] =
          _mm512_unpackhi_epi64(r[8 * g + k], r[8 * g + 4 + k]);
    }
  for (int e = 0; e < 8; ++e) {
    const __m512i t0 = _mm512_shuffle_i32x4(a[e], a[8 + e], 0x44),
                  t1 = _mm512_shuffle_i32x4(a[e], a[8 + e], 0xee),
                  t2 = _mm512_shuffle_i32x4(a[16 + e], a[24 + e], 0x44),
                  t3 = _mm512_shuffle_i32x4(a[16 + e], a[24 + e], 0xee);
    r[e] = _mm512_shuffle_i32x4(t0, t2, 0x88);
    r[8 + e] = _mm512_shuffle_i32x4(t0, t2, 0xdd);
    r[16 + e] = _mm512_shuffle_i32x4(t1, t3, 0x88);
    r[24 + e] = _mm512_shuffle_i32x4(t1, t3, 0xdd);
  }
}

GOPT_AVX512BW void transposeBf16Blocks(const uint16_t *src, int64_t rows,
                                       int64_t cols, uint16_t *dst) {
  auto mask = [](int64_t n) {
    return n >= 32 ? ~__mmask32(0) : static_cast<__mmask32>((1u << n) - 1);
  };
  for (int64_t r0 = 0; r0 < rows; r0 += 32) {
    const int64_t rowsIn = std::min<int64_t>(rows - r0, 32);
    const __mmask32 rowMask = mask(rowsIn);
    for (int64_t c0 = 0; c0 < cols; c0 += 32) {
      const int64_t colsIn = std::min<int64_t>(cols - c0, 32);
      const __mmask32 colMask = mask(colsIn);
      __m512i r[32];
      for (int64_t i = 0; i < 32; ++i)
        r[i] = i < rowsIn ? _mm512_maskz_loadu_epi16(colMask,
                                                     src + (r0 + i) * cols + c0)
                          : _mm512_setzero_si512();
      transpose32x32(r);
      for (int64_t j = 0; j < colsIn; ++j)
        _mm512_mask_storeu_epi16(dst + (c0 + j) * rows + r0, rowMask, r[j]);
    }
  }
}
} // namespace

void transposeBf16(const uint16_t *src, int64_t rows, int64_t cols,
                   uint16_t *dst) {
  if (avx512bwSupported())
    transposeBf16Blocks(src, rows, cols, dst);
  else
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        dst[c * rows + r] = src[r * cols + c];
}
#endif

} // namespace gopt::runtime::cpu
