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

// Calls make(T()) with T the element type of `dtype` (f32 or bf16).
template <typename Make> auto byElementType(DType dtype, Make make) {
  return dtype == DType::kBF16 ? make(uint16_t()) : make(float());
}

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_ELEMENTLOOPS_H
