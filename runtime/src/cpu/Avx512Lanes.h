//===- Avx512Lanes.h - 16 f32 lanes of f32 or bf16 data ---------*- C++ -*-===//
//
// What the AVX-512 pooling loops of FastKernels.cpp (max_pool) and
// TrainingKernels.cpp (max_pool_grad and its fused relu/bias form) share:
// whether this CPU runs AVX-512 F, BW and VL, and 16 elements of f32 data
// or bf16 bits read as one f32 vector. GOPT_HAVE_AVX512_LANES is defined
// where the compiler can build such loops (x86-64 GCC or Clang).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_AVX512LANES_H
#define GOPT_RUNTIME_SRC_CPU_AVX512LANES_H

#if defined(__x86_64__) && defined(__GNUC__)
#define GOPT_HAVE_AVX512_LANES 1
#define GOPT_AVX512BW __attribute__((target("avx512f,avx512bw,avx512vl")))

#include <cstdint>
#include <immintrin.h>

namespace gopt::runtime {

inline bool avx512bwSupported() {
  static const bool supported = __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512vl");
  return supported;
}

GOPT_AVX512BW inline __m512 load16AsF32(const float *p) {
  return _mm512_loadu_ps(p);
}
// bf16 bits widened: the top half of each f32.
GOPT_AVX512BW inline __m512 load16AsF32(const uint16_t *p) {
  __m512i wide = _mm512_cvtepu16_epi32(
      _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}

} // namespace gopt::runtime

#endif
#endif // GOPT_RUNTIME_SRC_CPU_AVX512LANES_H
