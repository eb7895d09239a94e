//===- Avx512Lanes.h - 16 f32 lanes of f32 or bf16 data ---------*- C++ -*-===//
//
// What the AVX-512 loops of FastKernels.cpp (max_pool), TrainingKernels.cpp
// (max_pool_grad and its fused relu/bias form) and RnnKernels.cpp (the
// LSTM's recurrent GEMM and gates) share: where the compiler builds them,
// whether this CPU runs AVX-512 F (and BW and VL), and 16 elements of f32 data
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

inline bool avx512fSupported() {
  static const bool supported = __builtin_cpu_supports("avx512f");
  return supported;
}

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

// r[i]'s lane j becomes r[j]'s lane i (32-bit lanes): unpacks of 32- and
// 64-bit pairs, then two rounds of 128-bit block shuffles.
GOPT_AVX512BW inline void transpose16x16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 4; ++i) {
      t[8 * h + i] = _mm512_shuffle_i32x4(r[8 * h + i], r[8 * h + 4 + i], 0x88);
      t[8 * h + 4 + i] =
          _mm512_shuffle_i32x4(r[8 * h + i], r[8 * h + 4 + i], 0xdd);
    }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_i32x4(t[i], t[8 + i], 0x88);
    r[8 + i] = _mm512_shuffle_i32x4(t[i], t[8 + i], 0xdd);
  }
}

// Up to 16 elements (the lanes set in `m`) as 32-bit lanes, bits
// unchanged (bf16 zero-extended), and back.
GOPT_AVX512BW inline __m512i loadLanes32(const float *p, __mmask16 m) {
  return _mm512_maskz_loadu_epi32(m, p);
}
GOPT_AVX512BW inline __m512i loadLanes32(const uint16_t *p, __mmask16 m) {
  return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));
}
GOPT_AVX512BW inline void storeLanes32(float *p, __mmask16 m, __m512i v) {
  _mm512_mask_storeu_epi32(p, m, v);
}
GOPT_AVX512BW inline void storeLanes32(uint16_t *p, __mmask16 m, __m512i v) {
  _mm256_mask_storeu_epi16(p, m, _mm512_cvtepi32_epi16(v));
}

// dst[c * rows + r] = src[r * cols + c] (a rows x cols matrix transposed,
// bits copied), in 16x16 register blocks, edges masked: one image's NHWC
// <-> NCHW inside a kernel that has it in cache (the fused pool steps of
// the training step), where a transpose step would pass over memory.
template <typename T>
GOPT_AVX512BW void transposeMatrix16(const T *src, int64_t rows, int64_t cols,
                                     T *dst) {
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    const int64_t rowsIn = rows - r0 < 16 ? rows - r0 : 16;
    const __mmask16 rowMask = static_cast<__mmask16>((1u << rowsIn) - 1);
    for (int64_t c0 = 0; c0 < cols; c0 += 16) {
      const int64_t colsIn = cols - c0 < 16 ? cols - c0 : 16;
      const __mmask16 colMask = static_cast<__mmask16>((1u << colsIn) - 1);
      __m512i v[16];
      for (int64_t i = 0; i < 16; ++i)
        v[i] = i < rowsIn ? loadLanes32(src + (r0 + i) * cols + c0, colMask)
                          : _mm512_setzero_si512();
      transpose16x16(v);
      for (int64_t j = 0; j < colsIn; ++j)
        storeLanes32(dst + (c0 + j) * rows + r0, rowMask, v[j]);
    }
  }
}

} // namespace gopt::runtime

#endif
#endif // GOPT_RUNTIME_SRC_CPU_AVX512LANES_H
