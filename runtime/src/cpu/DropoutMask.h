//===- DropoutMask.h - The dropout mask as a pure function ------*- C++ -*-===//
//
// Training-mode dropout keeps element i of run `call` of the op with seed
// `opSeed` in a session seeded `sessionSeed` when a counter-based hash of
// those four numbers, read as a uniform number in [0, 1), is >= ratio. No
// generator state: dropout_grad recomputes the forward op's mask from the
// same numbers, and any thread can compute any element.
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

/// True when element `index` survives (probability 1 - ratio).
inline bool dropoutKeeps(uint64_t key, int64_t index, double ratio) {
  uint64_t bits =
      mix64(key + static_cast<uint64_t>(index) * 0x9E3779B97F4A7C15ull);
  double uniform = static_cast<double>(bits >> 11) * 0x1.0p-53;
  return uniform >= ratio;
}

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_CPU_DROPOUTMASK_H
