//===- DropoutMask.h - The dropout mask as a pure function ------*- C++ -*-===//
//
// Training-mode dropout keeps element i of run `call` of the op with seed
// `opSeed` in a session seeded `sessionSeed` when a 16-bit draw from a
// counter-based hash of those numbers (one 64-bit hash per four elements)
// is >= ratio * 65536. No generator state: dropout_grad recomputes the
// forward op's mask from the same numbers, and any thread can compute any
// element.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_CPU_DROPOUTMASK_H
#define GOPT_RUNTIME_CPU_DROPOUTMASK_H

#include <cstdint>

namespace gopt::runtime {

/// SplitMix64's finalizer: a bijective mix of 64 bits.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The per-run key of one dropout op: mixes the session seed, the op's
/// seed and the run number.
inline uint64_t dropoutKey(uint64_t sessionSeed, int64_t opSeed,
                           uint64_t call) {
  return mix64(mix64(mix64(sessionSeed ^ 0x9E3779B97F4A7C15ull) ^
                     static_cast<uint64_t>(opSeed)) ^
               call);
}

/// The keep threshold of a ratio: element survives when its 16-bit draw is
/// >= this (ratio at 1/65536 resolution).
inline uint32_t dropoutThreshold(double ratio) {
  double t = ratio * 65536.0 + 0.5;
  return t >= 65536.0 ? 65536u : static_cast<uint32_t>(t);
}

/// Applies the mask of `key` to n values: out = keep ? in * scale : 0.
inline void applyDropoutMask(uint64_t key, uint32_t threshold, float scale,
                             const float *in, float *out, int64_t n) {
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t block = 0; block < (n + 3) / 4; ++block) {
    uint64_t bits =
        mix64(key + static_cast<uint64_t>(block) * 0x9E3779B97F4A7C15ull);
    for (int64_t j = 0; j < 4 && block * 4 + j < n; ++j) {
      int64_t i = block * 4 + j;
      uint32_t draw = static_cast<uint32_t>(bits >> (16 * j)) & 0xFFFF;
      out[i] = draw >= threshold ? in[i] * scale : 0.0f;
    }
  }
}

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_CPU_DROPOUTMASK_H
