//===- Bf16Clamp.h - relu and relu6 on rounded bf16 bits --------*- C++ -*-===//
//
// The AMX 1x1 and the depthwise bf16 kernels clamp their results after
// rounding them to bf16, on the bits compared as int16: two instructions on
// 32 outputs instead of four on two halves of 16 f32 values.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_BF16CLAMP_H
#define GOPT_RUNTIME_SRC_CPU_BF16CLAMP_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace gopt::runtime::cpu {

/// Whether a clamp to [lo, hi] may run on the rounded bf16 bits compared
/// as int16, and those bounds' bits. It may where lo is +0 or above (bf16
/// bits of non-negative values order as int16; a negative value's, -0's
/// too, are negative int16) and lo and hi are bf16 values (then rounding
/// and clamping commute: relu and relu6 give the same bits). NaN sums clamp
/// to hi instead of lo.
inline bool bf16ClampBounds(float lo, float hi, uint16_t &lo16,
                            uint16_t &hi16) {
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
  };
  if (!(lo >= 0.0f) || std::signbit(lo) || !(hi >= lo) || (bits(lo) & 0xFFFF) ||
      (bits(hi) & 0xFFFF))
    return false;
  lo16 = static_cast<uint16_t>(bits(lo) >> 16);
  hi16 = static_cast<uint16_t>(bits(hi) >> 16);
  return true;
}

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_BF16CLAMP_H
