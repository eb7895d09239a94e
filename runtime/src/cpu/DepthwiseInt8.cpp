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
//
//===----------------------------------------------------------------------===//

#include "DepthwiseInt8.h"

#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
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
    const char *setting = std::getenv("GOPT_DEPTHWISE_INT8");
    if (setting && std::strcmp(setting, "0") == 0)
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
  k->blocks_ = (g.c + 63) / 64;
  k->w_.assign(k->blocks_ * 3 * 4 * 64, 0);
  k->scale_.assign(k->blocks_ * 64, 0.0f);
  k->bias_.assign(k->blocks_ * 64, 0.0f);
  k->init_.assign(k->blocks_ * 64, 0);
  for (int64_t b = 0; b < k->blocks_; ++b)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t d = 0; d < 16; ++d) {
        const int64_t ch = b * 64 + 16 * (d / 4) + 4 * j + d % 4;
        if (ch >= g.c)
          continue;
        const int64_t slot = b * 64 + j * 16 + d;
        int32_t sum = 0;
        for (int64_t kw = 0; kw < 3; ++kw)
          for (int64_t kh = 0; kh < 3; ++kh) {
            const int8_t v = weights[(kh * 3 + kw) * g.c + ch];
            k->w_[((b * 3 + kw) * 4 + j) * 64 + d * 4 + kh] = v;
            sum += v;
          }
        k->scale_[slot] = params.scale[ch];
        if (!params.biasScaled.empty())
          k->bias_[slot] = params.biasScaled[ch];
        if (!params.srcUnsigned)
          k->init_[slot] = -128 * sum;
      }
  k->p_ = params;
  k->p_.scale.clear();
  k->p_.biasScaled.clear();
  // The conversion saturates to the destination's range.
  k->p_.lo = std::max(params.lo, params.dstUnsigned ? 0.0f : -128.0f);
  k->p_.hi = std::min(params.hi, params.dstUnsigned ? 255.0f : 127.0f);
  k->threads_ = std::max(1, threads);
  return k;
}

#ifdef GOPT_DW8_X86
namespace {

struct Job {
  const DepthwiseGeometry *g;
  int64_t blocks;
  const int8_t *w;
  const float *scale, *bias;
  const int32_t *init;
  float lo, hi, requantScale;
};

// One source column of 64 channels (`rows`: the three source rows, null
// where padding), interleaved: v[j] holds channels 16 L + 4 j + i in dword
// 4 L + i, bytes (kh 0, kh 1, kh 2, 0).
template <bool SrcUnsigned>
GOPT_DW8_TARGET inline void column(const uint8_t *const rows[3], int64_t ix,
                                   int64_t w, int64_t c, __mmask64 mask,
                                   __m512i v[4]) {
  const __m512i pad = SrcUnsigned ? _mm512_setzero_si512()
                                  : _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i r[3];
  const bool inside = static_cast<uint64_t>(ix) < static_cast<uint64_t>(w);
  for (int kh = 0; kh < 3; ++kh) {
    if (inside && rows[kh]) {
      r[kh] = _mm512_maskz_loadu_epi8(mask, rows[kh] + ix * c);
      if (!SrcUnsigned)
        r[kh] = _mm512_xor_si512(r[kh], pad);
    } else {
      r[kh] = pad;
    }
  }
  const __m512i zero = _mm512_setzero_si512();
  const __m512i lo01 = _mm512_unpacklo_epi8(r[0], r[1]);
  const __m512i hi01 = _mm512_unpackhi_epi8(r[0], r[1]);
  const __m512i lo2 = _mm512_unpacklo_epi8(r[2], zero);
  const __m512i hi2 = _mm512_unpackhi_epi8(r[2], zero);
  v[0] = _mm512_unpacklo_epi16(lo01, lo2);
  v[1] = _mm512_unpackhi_epi16(lo01, lo2);
  v[2] = _mm512_unpacklo_epi16(hi01, hi2);
  v[3] = _mm512_unpackhi_epi16(hi01, hi2);
}

// One output pixel's 64 channels from its window's three columns.
template <bool Requantize, bool DstUnsigned>
GOPT_DW8_TARGET inline void
output(const __m512i *a, const __m512i *b, const __m512i *d, const int8_t *w,
       const float *scale, const float *bias, const int32_t *init, __m512 lo,
       __m512 hi, __m512 requantScale, __mmask64 mask, uint8_t *out) {
  __m512i q[4];
  for (int j = 0; j < 4; ++j) {
    __m512i acc = _mm512_loadu_si512(init + 16 * j);
    acc = _mm512_dpbusd_epi32(acc, a[j], _mm512_loadu_si512(w + 64 * j));
    acc = _mm512_dpbusd_epi32(acc, b[j], _mm512_loadu_si512(w + 256 + 64 * j));
    acc = _mm512_dpbusd_epi32(acc, d[j], _mm512_loadu_si512(w + 512 + 64 * j));
    __m512 v = _mm512_mul_ps(
        _mm512_add_ps(_mm512_cvtepi32_ps(acc), _mm512_loadu_ps(bias + 16 * j)),
        _mm512_loadu_ps(scale + 16 * j));
    if (Requantize) {
      v = _mm512_roundscale_ps(v,
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-128.0f)),
                        _mm512_set1_ps(127.0f));
      v = _mm512_mul_ps(v, requantScale);
    }
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    q[j] = _mm512_cvtps_epi32(v); // round to nearest even, as oneDNN
  }
  // The values are within the destination's range: the packs only narrow,
  // and undo the unpacks' channel order.
  __m512i bytes;
  if (DstUnsigned)
    bytes = _mm512_packus_epi16(_mm512_packus_epi32(q[0], q[1]),
                                _mm512_packus_epi32(q[2], q[3]));
  else
    bytes = _mm512_packs_epi16(_mm512_packs_epi32(q[0], q[1]),
                               _mm512_packs_epi32(q[2], q[3]));
  _mm512_mask_storeu_epi8(out, mask, bytes);
}

template <int S, bool SrcUnsigned, bool Requantize, bool DstUnsigned>
GOPT_DW8_TARGET void runRow(const Job &j, const uint8_t *const rows[3],
                            uint8_t *out) {
  const DepthwiseGeometry &g = *j.g;
  const __m512 lo = _mm512_set1_ps(j.lo), hi = _mm512_set1_ps(j.hi);
  const __m512 requantScale = _mm512_set1_ps(j.requantScale);
  for (int64_t b = 0; b < j.blocks; ++b) {
    const int64_t c0 = b * 64, left = g.c - c0;
    const __mmask64 mask =
        left >= 64 ? ~__mmask64(0) : (__mmask64(1) << left) - 1;
    const uint8_t *blockRows[3];
    for (int kh = 0; kh < 3; ++kh)
      blockRows[kh] = rows[kh] ? rows[kh] + c0 : nullptr;
    const int8_t *w = j.w + b * 3 * 256;
    const float *scale = j.scale + b * 64, *bias = j.bias + b * 64;
    const int32_t *init = j.init + b * 64;
    __m512i v0[4], v1[4], v2[4];
    int64_t ix = -g.padLeft;
    column<SrcUnsigned>(blockRows, ix, g.w, g.c, mask, v0);
    column<SrcUnsigned>(blockRows, ix + 1, g.w, g.c, mask, v1);
    for (int64_t x = 0; x < g.ow; ++x, ix += S) {
      column<SrcUnsigned>(blockRows, ix + 2, g.w, g.c, mask, v2);
      output<Requantize, DstUnsigned>(v0, v1, v2, w, scale, bias, init, lo, hi,
                                      requantScale, mask, out + x * g.c + c0);
      if (S == 1) {
        for (int k = 0; k < 4; ++k)
          v0[k] = v1[k], v1[k] = v2[k];
      } else {
        for (int k = 0; k < 4; ++k)
          v0[k] = v2[k];
        if (x + 1 < g.ow)
          column<SrcUnsigned>(blockRows, ix + 3, g.w, g.c, mask, v1);
      }
    }
  }
}

using RowFn = void (*)(const Job &, const uint8_t *const[3], uint8_t *);

template <int S> RowFn pick(bool srcUnsigned, bool requantize, bool dstU) {
  static const RowFn fns[8] = {
      runRow<S, false, false, false>, runRow<S, false, false, true>,
      runRow<S, false, true, false>,  runRow<S, false, true, true>,
      runRow<S, true, false, false>,  runRow<S, true, false, true>,
      runRow<S, true, true, false>,   runRow<S, true, true, true>};
  return fns[(srcUnsigned ? 4 : 0) + (requantize ? 2 : 0) + (dstU ? 1 : 0)];
}

} // namespace
#endif

void DepthwiseInt8::run(const uint8_t *src, uint8_t *dst) const {
#ifdef GOPT_DW8_X86
  const DepthwiseGeometry &g = g_;
  const Job j{&g_,          blocks_, w_.data(), scale_.data(),  bias_.data(),
              init_.data(), p_.lo,   p_.hi,     p_.requantScale};
  const RowFn fn = g.stride == 1
                       ? pick<1>(p_.srcUnsigned, p_.requantize, p_.dstUnsigned)
                       : pick<2>(p_.srcUnsigned, p_.requantize, p_.dstUnsigned);
  const int64_t rows = g.n * g.oh;
  const size_t srcRow = static_cast<size_t>(g.w * g.c);
  const size_t dstRow = static_cast<size_t>(g.ow * g.c);
  const int threads = threads_;
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
