//===- DepthwiseInt8.cpp - 3x3 depthwise convolution, NHWC int8
//------------===//
//
// Per output row and block of 64 channels, the three source rows' bytes of
// one source column (three 64-byte loads) are interleaved by two rounds of
// byte and word unpacks into four vectors of 16 dwords, each dword one
// channel's three kh taps and a zero byte: one VPDPBUSD against the
// weights packed the same way sums a column's three taps for 16 channels,
// so an output pixel costs 12 VPDPBUSD for 64 channels (3 per 16) where a
// byte-per-dword kernel spends 9 widening loads and 9 dot products per 16.
// Each interleaved column is built once and used by every output whose
// window holds it (3 for stride 1). The unpacks work within 128-bit lanes,
// so the channels come out permuted; the weights, scales and biases are
// packed in that order and the saturating packs back to bytes (the
// unpacks' inverse) restore the natural order for the store. An s8 source
// is read as u8 by flipping its top bit (x + 128), the padding as 128, and
// the sums start from -128 * sum(weights), so the int32 sums are exact for
// both. The f32 epilogue is oneDNN's int8 formula, as PointwiseInt8Amx's.
// At stride 1 two output rows share one pass (runRowPair): the zero byte
// becomes a fourth source row, and the lower row's weights are the taps
// one byte up.
//
//===----------------------------------------------------------------------===//

#include "DepthwiseInt8.h"
#include "EnvSwitch.h"

#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
// GCC 12 takes the intrinsics' _mm512_undefined_* operands for uninitialized
// reads once inlined here (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define GOPT_DW8_X86 1
#define GOPT_DW8_TARGET                                                        \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#endif

namespace gopt::runtime::cpu {

bool depthwiseInt8Enabled() {
#ifdef GOPT_DW8_X86
  static const bool enabled = [] {
    if (!envSwitchOn("GOPT_DEPTHWISE_INT8"))
      return false;
    const int vnni = static_cast<int>(dnnl::cpu_isa::avx512_core_vnni);
    return (static_cast<int>(dnnl::get_effective_cpu_isa()) & vnni) == vnni &&
           __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
  }();
  return enabled;
#else
  return false;
#endif
}

std::unique_ptr<DepthwiseInt8>
DepthwiseInt8::create(const DepthwiseGeometry &g,
                      const std::vector<int8_t> &weights,
                      const DepthwiseInt8Params &params, int threads) {
  if (!depthwiseInt8Enabled() || (g.stride != 1 && g.stride != 2) || g.n < 1 ||
      g.c < 1 || g.h < 1 || g.w < 1 || g.oh < 1 || g.ow < 1 || g.padTop < 0 ||
      g.padLeft < 0 || static_cast<int64_t>(weights.size()) != 9 * g.c ||
      static_cast<int64_t>(params.scale.size()) != g.c ||
      (!params.biasScaled.empty() &&
       static_cast<int64_t>(params.biasScaled.size()) != g.c))
    return nullptr;
  auto k = std::unique_ptr<DepthwiseInt8>(new DepthwiseInt8());
  k->g_ = g;
  // 16 or 32 channels at stride 1: one vector holds 64 / c whole pixels
  // (a 64-channel block would be mostly padding).
  k->pixels_ = g.stride == 1 && (g.c == 16 || g.c == 32) ? 64 / g.c : 1;
  k->blocks_ = (g.c + 63) / 64;
  k->w_.assign(k->blocks_ * 3 * 4 * 64, 0);
  k->wLower_.assign(k->blocks_ * 3 * 4 * 64, 0);
  k->scale_.assign(k->blocks_ * 64, 0.0f);
  k->bias_.assign(k->blocks_ * 64, 0.0f);
  k->init_.assign(k->blocks_ * 64, 0);
  // Whether every |v| before the rounding stays far below 2^31, so the
  // clamp can follow the rounding (below).
  bool small = true;
  for (int64_t b = 0; b < k->blocks_; ++b)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t d = 0; d < 16; ++d) {
        int64_t ch = b * 64 + 16 * (d / 4) + 4 * j + d % 4;
        if (k->pixels_ > 1)
          ch %= g.c;
        if (ch >= g.c)
          continue;
        const int64_t slot = b * 64 + j * 16 + d;
        int32_t sum = 0, magnitude = 0;
        for (int64_t kw = 0; kw < 3; ++kw)
          for (int64_t kh = 0; kh < 3; ++kh) {
            const int8_t v = weights[(kh * 3 + kw) * g.c + ch];
            k->w_[((b * 3 + kw) * 4 + j) * 64 + d * 4 + kh] = v;
            k->wLower_[((b * 3 + kw) * 4 + j) * 64 + d * 4 + kh + 1] = v;
            sum += v;
            magnitude += std::abs(int32_t(v));
          }
        k->scale_[slot] = params.scale[ch];
        if (!params.biasScaled.empty())
          k->bias_[slot] = params.biasScaled[ch];
        if (!params.srcUnsigned)
          k->init_[slot] = -128 * sum;
        const double bound = (255.0 * magnitude + std::fabs(k->bias_[slot])) *
                             std::fabs(double(k->scale_[slot]));
        small = small && bound < 1e9;
      }
  k->p_ = params;
  k->p_.scale.clear();
  k->p_.biasScaled.clear();
  // The conversion saturates to the destination's range.
  k->p_.lo = std::max(params.lo, params.dstUnsigned ? 0.0f : -128.0f);
  k->p_.hi = std::min(params.hi, params.dstUnsigned ? 255.0f : 127.0f);
  k->intClamp_ = small && !params.requantize;
  k->threads_ = std::max(1, threads);
  k->rowPairs_ = g.stride == 1 && envSwitchOn("GOPT_DEPTHWISE_INT8_ROW_PAIRS");
  return k;
}

#ifdef GOPT_DW8_X86
namespace {

struct Job {
  const DepthwiseGeometry *g;
  int64_t blocks;
  const int8_t *w, *wLower;
  const float *scale, *bias;
  const int32_t *init;
  float lo, hi, requantScale;
};

// How the epilogue clamps: in f32 before the rounding (kFloat: oneDNN's
// order), the same after requantizing (kRequantize), or on the rounded
// bytes (kBytes): rounding to nearest is monotonic, so clamping the
// rounded value to the rounded bounds gives the same result, as long as
// no value overflows the int32 conversion (create() checks). Two byte
// min/max per 64 outputs instead of eight f32 ones.
enum Clamp { kFloat, kRequantize, kBytes };

// One source column of a 64-byte block (`rows`: the three source rows at
// the block, null where padding; `mask`: the bytes to read), interleaved:
// v[j] holds bytes 16 L + 4 j + i in dword 4 L + i, bytes (kh 0, kh 1,
// kh 2, 0). Bytes not read are zeros, s8 ones 128 (the top bit flipped).
// With NR == 4 rows (a row pair), the zero byte is the fourth row's.
template <bool SrcUnsigned, int NR = 3>
GOPT_DW8_TARGET inline __attribute__((always_inline)) void
column(const uint8_t *const rows[NR], int64_t offset, __mmask64 mask,
       __m512i v[4]) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i r[4];
  r[3] = _mm512_setzero_si512();
  for (int kh = 0; kh < NR; ++kh) {
    // A masked load costs a vector ALU op more than a plain one.
    if (!rows[kh] || !mask)
      r[kh] = _mm512_setzero_si512();
    else if (mask == ~__mmask64(0))
      r[kh] = _mm512_loadu_si512(rows[kh] + offset);
    else
      r[kh] = _mm512_maskz_loadu_epi8(mask, rows[kh] + offset);
    if (!SrcUnsigned)
      r[kh] = _mm512_xor_si512(r[kh], flip);
  }
  const __m512i zero = _mm512_setzero_si512();
  const __m512i lo01 = _mm512_unpacklo_epi8(r[0], r[1]);
  const __m512i hi01 = _mm512_unpackhi_epi8(r[0], r[1]);
  const __m512i lo2 = _mm512_unpacklo_epi8(r[2], NR == 4 ? r[3] : zero);
  const __m512i hi2 = _mm512_unpackhi_epi8(r[2], NR == 4 ? r[3] : zero);
  v[0] = _mm512_unpacklo_epi16(lo01, lo2);
  v[1] = _mm512_unpackhi_epi16(lo01, lo2);
  v[2] = _mm512_unpacklo_epi16(hi01, hi2);
  v[3] = _mm512_unpackhi_epi16(hi01, hi2);
}

struct Consts {
  __m512 lo, hi, requantScale;
  __m512i loBytes, hiBytes;
};

// One output vector (64 bytes) from its window's three columns.
template <bool SrcUnsigned, Clamp C, bool DstUnsigned>
GOPT_DW8_TARGET inline __attribute__((always_inline)) void
output(const __m512i *a, const __m512i *b, const __m512i *d, const int8_t *w,
       const float *scale, const float *bias, const int32_t *init,
       const Consts &k, __mmask64 mask, uint8_t *out) {
  __m512i q[4];
  for (int j = 0; j < 4; ++j) {
    __m512i acc = SrcUnsigned ? _mm512_setzero_si512()
                              : _mm512_loadu_si512(init + 16 * j);
    acc = _mm512_dpbusd_epi32(acc, a[j], _mm512_loadu_si512(w + 64 * j));
    acc = _mm512_dpbusd_epi32(acc, b[j], _mm512_loadu_si512(w + 256 + 64 * j));
    acc = _mm512_dpbusd_epi32(acc, d[j], _mm512_loadu_si512(w + 512 + 64 * j));
    __m512 v = _mm512_mul_ps(
        _mm512_add_ps(_mm512_cvtepi32_ps(acc), _mm512_loadu_ps(bias + 16 * j)),
        _mm512_loadu_ps(scale + 16 * j));
    if (C == kRequantize) {
      v = _mm512_roundscale_ps(v,
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-128.0f)),
                        _mm512_set1_ps(127.0f));
      v = _mm512_mul_ps(v, k.requantScale);
    }
    if (C != kBytes)
      v = _mm512_min_ps(_mm512_max_ps(v, k.lo), k.hi);
    q[j] = _mm512_cvtps_epi32(v); // round to nearest even, as oneDNN
  }
  // The saturating packs narrow (keeping the order of values) and undo
  // the unpacks' byte order.
  const __m512i words0 = _mm512_packs_epi32(q[0], q[1]);
  const __m512i words1 = _mm512_packs_epi32(q[2], q[3]);
  __m512i bytes;
  if (DstUnsigned) {
    bytes = _mm512_packus_epi16(words0, words1);
    if (C == kBytes)
      bytes = _mm512_min_epu8(_mm512_max_epu8(bytes, k.loBytes), k.hiBytes);
  } else {
    bytes = _mm512_packs_epi16(words0, words1);
    if (C == kBytes)
      bytes = _mm512_min_epi8(_mm512_max_epi8(bytes, k.loBytes), k.hiBytes);
  }
  _mm512_mask_storeu_epi8(out, mask, bytes);
}

// The bytes of the `P` pixels from `ix` that lie in [0, w), each `c`
// channels (P * c == 64).
template <int P> inline __mmask64 pixelMask(int64_t ix, int64_t w, int64_t c) {
  const int64_t first = std::max<int64_t>(ix, 0);
  const int64_t last = std::min<int64_t>(ix + P, w);
  if (first >= last)
    return 0;
  const int64_t lo = (first - ix) * c, hi = (last - ix) * c;
  const __mmask64 below = hi >= 64 ? ~__mmask64(0) : (__mmask64(1) << hi) - 1;
  return below & ~((__mmask64(1) << lo) - 1);
}

// The column at source pixel `ix` (P pixels from it for P > 1).
template <int P, bool SrcUnsigned, int NR = 3>
GOPT_DW8_TARGET inline __attribute__((always_inline)) void
load(const DepthwiseGeometry &g, const uint8_t *const rows[NR],
     __mmask64 channels, int64_t ix, __m512i v[4]) {
  const __mmask64 mask =
      P > 1 ? pixelMask<P>(ix, g.w, g.c)
      : static_cast<uint64_t>(ix) < static_cast<uint64_t>(g.w) ? channels
                                                               : 0;
  column<SrcUnsigned, NR>(rows, ix * g.c, mask, v);
}

// A job's clamp bounds and requantization scale, broadcast.
GOPT_DW8_TARGET inline __attribute__((always_inline)) Consts
consts(const Job &j) {
  return {_mm512_set1_ps(j.lo), _mm512_set1_ps(j.hi),
          _mm512_set1_ps(j.requantScale),
          _mm512_set1_epi8(
              static_cast<char>(static_cast<int>(std::nearbyint(j.lo)))),
          _mm512_set1_epi8(
              static_cast<char>(static_cast<int>(std::nearbyint(j.hi))))};
}

// One output row. P == 1: blocks of 64 channels, one pixel a vector; P > 1
// (c == 64 / P, stride 1): P pixels a vector, stepping P pixels.
template <int S, int P, bool SrcUnsigned, Clamp C, bool DstUnsigned>
GOPT_DW8_TARGET void runRow(const Job &j, const uint8_t *const rows[3],
                            uint8_t *out) {
  const DepthwiseGeometry &g = *j.g;
  const Consts k = consts(j);
  for (int64_t b = 0; b < j.blocks; ++b) {
    const int64_t c0 = b * 64, left = g.c - c0;
    const __mmask64 channels =
        left >= 64 ? ~__mmask64(0) : (__mmask64(1) << left) - 1;
    const uint8_t *blockRows[3];
    for (int kh = 0; kh < 3; ++kh)
      blockRows[kh] = rows[kh] ? rows[kh] + c0 : nullptr;
    const int8_t *w = j.w + b * 3 * 256;
    const float *scale = j.scale + b * 64, *bias = j.bias + b * 64;
    const int32_t *init = j.init + b * 64;
    __m512i v0[4], v1[4], v2[4];
    int64_t ix = -g.padLeft;
    load<P, SrcUnsigned>(g, blockRows, channels, ix, v0);
    if (P == 1)
      load<P, SrcUnsigned>(g, blockRows, channels, ix + 1, v1);
    for (int64_t x = 0; x < g.ow; x += P, ix += S * P) {
      __mmask64 mask = channels;
      if (P > 1) {
        // v0, v1, v2: the vectors at ix, ix + 1 and ix + 2 (as for
        // P == 1), the window's three columns.
        load<P, SrcUnsigned>(g, blockRows, channels, ix + 1, v1);
        load<P, SrcUnsigned>(g, blockRows, channels, ix + 2, v2);
        mask = pixelMask<P>(x, g.ow, g.c);
      } else {
        load<P, SrcUnsigned>(g, blockRows, channels, ix + 2, v2);
      }
      output<SrcUnsigned, C, DstUnsigned>(v0, v1, v2, w, scale, bias, init, k,
                                          mask, out + x * g.c + c0);
      if (P == 2) {
        for (int i = 0; i < 4; ++i)
          v0[i] = v2[i];
      } else if (P > 2) {
        load<P, SrcUnsigned>(g, blockRows, channels, ix + P, v0);
      } else if (S == 1) {
        for (int i = 0; i < 4; ++i)
          v0[i] = v1[i], v1[i] = v2[i];
      } else {
        for (int i = 0; i < 4; ++i)
          v0[i] = v2[i];
        if (x + 1 < g.ow)
          load<P, SrcUnsigned>(g, blockRows, channels, ix + 3, v1);
      }
    }
  }
}

// Two output rows (stride 1) from their four source rows: each column of
// the four rows is interleaved once (one dword per channel: rows 0-3) and
// multiplied by w (taps, 0) for the upper row and by wLower (0, taps) for
// the lower, so a row pair loads and interleaves 4 rows where two single
// rows took 6, and the int32 sums are those of runRow (the same bits).
template <int P, bool SrcUnsigned, Clamp C, bool DstUnsigned>
GOPT_DW8_TARGET void runRowPair(const Job &j, const uint8_t *const rows[4],
                                uint8_t *out0, uint8_t *out1) {
  const DepthwiseGeometry &g = *j.g;
  const Consts k = consts(j);
  for (int64_t b = 0; b < j.blocks; ++b) {
    const int64_t c0 = b * 64, left = g.c - c0;
    const __mmask64 channels =
        left >= 64 ? ~__mmask64(0) : (__mmask64(1) << left) - 1;
    const uint8_t *blockRows[4];
    for (int kh = 0; kh < 4; ++kh)
      blockRows[kh] = rows[kh] ? rows[kh] + c0 : nullptr;
    const int8_t *w = j.w + b * 3 * 256, *wLower = j.wLower + b * 3 * 256;
    const float *scale = j.scale + b * 64, *bias = j.bias + b * 64;
    const int32_t *init = j.init + b * 64;
    __m512i v0[4], v1[4], v2[4];
    int64_t ix = -g.padLeft;
    load<P, SrcUnsigned, 4>(g, blockRows, channels, ix, v0);
    if (P == 1)
      load<P, SrcUnsigned, 4>(g, blockRows, channels, ix + 1, v1);
    for (int64_t x = 0; x < g.ow; x += P, ix += P) {
      __mmask64 mask = channels;
      if (P > 1) {
        load<P, SrcUnsigned, 4>(g, blockRows, channels, ix + 1, v1);
        load<P, SrcUnsigned, 4>(g, blockRows, channels, ix + 2, v2);
        mask = pixelMask<P>(x, g.ow, g.c);
      } else {
        load<P, SrcUnsigned, 4>(g, blockRows, channels, ix + 2, v2);
      }
      output<SrcUnsigned, C, DstUnsigned>(v0, v1, v2, w, scale, bias, init, k,
                                          mask, out0 + x * g.c + c0);
      output<SrcUnsigned, C, DstUnsigned>(v0, v1, v2, wLower, scale, bias, init,
                                          k, mask, out1 + x * g.c + c0);
      if (P == 2) {
        for (int i = 0; i < 4; ++i)
          v0[i] = v2[i];
      } else if (P > 2) {
        load<P, SrcUnsigned, 4>(g, blockRows, channels, ix + P, v0);
      } else {
        for (int i = 0; i < 4; ++i)
          v0[i] = v1[i], v1[i] = v2[i];
      }
    }
  }
}

using RowFn = void (*)(const Job &, const uint8_t *const[3], uint8_t *);
using PairFn = void (*)(const Job &, const uint8_t *const[4], uint8_t *,
                        uint8_t *);

template <int P, bool SrcUnsigned>
PairFn pickPair(Clamp clamp, bool dstUnsigned) {
  static const PairFn fns[6] = {runRowPair<P, SrcUnsigned, kFloat, false>,
                                runRowPair<P, SrcUnsigned, kFloat, true>,
                                runRowPair<P, SrcUnsigned, kRequantize, false>,
                                runRowPair<P, SrcUnsigned, kRequantize, true>,
                                runRowPair<P, SrcUnsigned, kBytes, false>,
                                runRowPair<P, SrcUnsigned, kBytes, true>};
  return fns[2 * clamp + (dstUnsigned ? 1 : 0)];
}

template <bool SrcUnsigned>
PairFn pickPairShape(int64_t pixels, Clamp clamp, bool dstUnsigned) {
  if (pixels == 2)
    return pickPair<2, SrcUnsigned>(clamp, dstUnsigned);
  if (pixels == 4)
    return pickPair<4, SrcUnsigned>(clamp, dstUnsigned);
  return pickPair<1, SrcUnsigned>(clamp, dstUnsigned);
}

template <int S, int P, bool SrcUnsigned>
RowFn pick(Clamp clamp, bool dstUnsigned) {
  static const RowFn fns[6] = {runRow<S, P, SrcUnsigned, kFloat, false>,
                               runRow<S, P, SrcUnsigned, kFloat, true>,
                               runRow<S, P, SrcUnsigned, kRequantize, false>,
                               runRow<S, P, SrcUnsigned, kRequantize, true>,
                               runRow<S, P, SrcUnsigned, kBytes, false>,
                               runRow<S, P, SrcUnsigned, kBytes, true>};
  return fns[2 * clamp + (dstUnsigned ? 1 : 0)];
}

template <bool SrcUnsigned>
RowFn pickShape(int64_t stride, int64_t pixels, Clamp clamp, bool dstUnsigned) {
  if (stride == 2)
    return pick<2, 1, SrcUnsigned>(clamp, dstUnsigned);
  if (pixels == 2)
    return pick<1, 2, SrcUnsigned>(clamp, dstUnsigned);
  if (pixels == 4)
    return pick<1, 4, SrcUnsigned>(clamp, dstUnsigned);
  return pick<1, 1, SrcUnsigned>(clamp, dstUnsigned);
}

} // namespace
#endif

void DepthwiseInt8::run(const uint8_t *src, uint8_t *dst) const {
#ifdef GOPT_DW8_X86
  const DepthwiseGeometry &g = g_;
  const Job j{&g_,           blocks_,        w_.data(),    wLower_.data(),
              scale_.data(), bias_.data(),   init_.data(), p_.lo,
              p_.hi,         p_.requantScale};
  const Clamp clamp = p_.requantize ? kRequantize : intClamp_ ? kBytes : kFloat;
  const RowFn fn =
      p_.srcUnsigned
          ? pickShape<true>(g.stride, pixels_, clamp, p_.dstUnsigned)
          : pickShape<false>(g.stride, pixels_, clamp, p_.dstUnsigned);
  const int64_t rows = g.n * g.oh;
  const size_t srcRow = static_cast<size_t>(g.w * g.c);
  const size_t dstRow = static_cast<size_t>(g.ow * g.c);
  const int threads = threads_;
  if (rowPairs_ && g.oh >= 2) {
    const PairFn pair =
        p_.srcUnsigned ? pickPairShape<true>(pixels_, clamp, p_.dstUnsigned)
                       : pickPairShape<false>(pixels_, clamp, p_.dstUnsigned);
    const int64_t pairs = (g.oh + 1) / 2, units = g.n * pairs;
#pragma omp parallel for num_threads(threads) if (threads > 1 && units > 1)    \
    schedule(static)
    for (int64_t u = 0; u < units; ++u) {
      const int64_t n = u / pairs, y = u % pairs * 2;
      const uint8_t *in[4];
      for (int kh = 0; kh < 4; ++kh) {
        const int64_t ih = y - g.padTop + kh;
        in[kh] = ih >= 0 && ih < g.h ? src + (n * g.h + ih) * srcRow : nullptr;
      }
      uint8_t *out = dst + (n * g.oh + y) * dstRow;
      if (y + 1 < g.oh)
        pair(j, in, out, out + dstRow);
      else
        fn(j, in, out); // an odd last row
    }
    return;
  }
#pragma omp parallel for num_threads(threads) if (threads > 1 && rows > 1)     \
    schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / g.oh, y = r % g.oh;
    const uint8_t *in[3];
    for (int kh = 0; kh < 3; ++kh) {
      const int64_t ih = y * g.stride - g.padTop + kh;
      in[kh] = ih >= 0 && ih < g.h ? src + (n * g.h + ih) * srcRow : nullptr;
    }
    fn(j, in, dst + r * dstRow);
  }
#endif
}

} // namespace gopt::runtime::cpu
