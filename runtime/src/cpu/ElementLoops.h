//===- ElementLoops.h - f32/bf16 elements in the CPU loops ------*- C++ -*-===//
//
// Shared by the fast CPU kernels (FastKernels.cpp, TrainingKernels.cpp):
// loops over f32 (float) or bf16 (its bits in a uint16_t) elements compute
// in f32. Inline (unlike bf16ToFloat/floatToBf16) so that loops vectorize,
// with the same rounding: to nearest even, NaN stays a quiet NaN.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_ELEMENTLOOPS_H
#define GOPT_RUNTIME_SRC_CPU_ELEMENTLOOPS_H

#include "gopt/runtime/Tensor.h"

#include <cstdint>
#include <cstring>

namespace gopt::runtime::cpu {

inline float toF32(float v) { return v; }
inline float toF32(uint16_t bits) {
  uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

template <typename T> inline T fromF32(float v);
template <> inline float fromF32<float>(float v) { return v; }
template <> inline uint16_t fromF32<uint16_t>(float v) {
  uint32_t x;
  std::memcpy(&x, &v, 4);
  uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  uint32_t nan = (x >> 16) | 0x40u;
  return static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

// Hot element loops (casts, activations, elementwise arithmetic, relu
// gradients) are also compiled for AVX-512 and AVX2, the loader picking the
// widest the CPU has: the build targets baseline x86-64 (SSE2), whose 4-wide
// f32 <-> bf16 conversions made these loops compute-bound at about 1 ns per
// element, well short of memory speed. Only loops of single operations
// (nothing to contract into an FMA) carry it, so every clone computes the
// same bits.
#if defined(__x86_64__) && defined(__GNUC__)
#define GOPT_VECTOR_CLONES                                                     \
  __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define GOPT_VECTOR_CLONES
#endif

// Calls make(T()) with T the element type of `dtype` (f32 or bf16).
template <typename Make> auto byElementType(DType dtype, Make make) {
  return dtype == DType::kBF16 ? make(uint16_t()) : make(float());
}

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_ELEMENTLOOPS_H
