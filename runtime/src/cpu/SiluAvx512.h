//===- SiluAvx512.h - SiLU of 16 f32 lanes ----------------------*- C++ -*-===//
//
// The one AVX-512 SiLU that gopt's f32 kernels share (DepthwiseF32's
// epilogue and the pass after oneDNN's convolutions in DepthwiseConv.cpp,
// Conv1x1F32's epilogue), so a convolution gives the same bits whichever
// of them applies it.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_SILUAVX512_H
#define GOPT_RUNTIME_SRC_CPU_SILUAVX512_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

namespace gopt::runtime::cpu {

// SiLU v * sigmoid(v) = v / (1 + exp(-v)) with exp(-v) = 2^n 2^r, n = round(-c
// log2 e) and r = -c log2 e - n in [-0.5, 0.5] (log2 e in two parts, so r is
// exact to ~2^-25), 2^r by a degree-5 polynomial (2.2e-7 relative), c = v
// but at most 88 (+inf gives inf, not inf - inf): 12 vector operations
// and the division where siluDirect has 16, none of them roundscale's
// two port-0 uops (n = (t + 1.5 2^23) - 1.5 2^23 rounds t to the nearest
// integer for |t| < 2^22). No lower clamp: below v = -88.7, 2^n
// overflows to inf and the result is -0 (within 1e-36 of the true value,
// where siluDirect's clamp at -87 gives v / 6e37). The pass after each
// convolution and the depthwise epilogue are bound by these operations
// (ports 0 and 5), not memory.
// 1 + exp(-c) in base 2 as described above, for c <= 88 (the callers
// clamp): SiLU's and the squeeze-excite gate's sigmoid denominator.
__attribute__((target("avx512f"))) inline __m512 onePlusExpNeg(__m512 c) {
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512 n = _mm512_sub_ps(
      _mm512_fmadd_ps(c, _mm512_set1_ps(-1.44269504088896341f), magic), magic);
  // r = -(c log2e) - n, log2e = 1.44269502162933349609375 + 1.925963e-8.
  __m512 r = _mm512_fnmsub_ps(c, _mm512_set1_ps(1.44269502162933349609375f), n);
  r = _mm512_fnmadd_ps(c, _mm512_set1_ps(1.925963033500011e-08f), r);
  __m512 p = _mm512_set1_ps(1.3266970636e-03f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(9.6754599363e-03f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.5507425219e-02f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(2.4022121727e-01f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(6.9314694405e-01f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0000001192e+00f));
  // The zero-masked form: GCC 12 warns of the plain one's undefined
  // pass-through lanes where inlined into some kernels.
  return _mm512_add_ps(_mm512_maskz_scalef_ps(0xFFFF, p, n),
                       _mm512_set1_ps(1.0f));
}

__attribute__((target("avx512f"))) inline __m512 siluExp2(__m512 v) {
  const __m512 c = _mm512_maskz_min_ps(0xFFFF, v, _mm512_set1_ps(88.0f));
  return _mm512_div_ps(v, onePlusExpNeg(c));
}

} // namespace gopt::runtime::cpu

#endif
#endif // GOPT_RUNTIME_SRC_CPU_SILUAVX512_H
