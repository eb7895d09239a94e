//===- PointwiseAmx.h - 1x1 convolution on NHWC bf16 with AMX --*- C++ -*-===//
//
// A 1x1 convolution (a matrix product of pixels x input channels by input
// x output channels) on NHWC bf16 activations, computed with AMX tiles and
// finished by gopt's own AVX-512 epilogue (bias, residual sum, clamp, one
// round to bf16): MobileNet's expand and project convolutions in a chain,
// where oneDNN 2.6's brgemm 1x1 spent most of its time around the tiles
// (few input channels, 16 to 144).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_CPU_POINTWISEAMX_H
#define GOPT_RUNTIME_CPU_POINTWISEAMX_H

#include <cstdint>
#include <memory>
#include <vector>

namespace gopt::runtime::cpu {

// The CPU has AMX-BF16 and AVX512-BF16, the OS lets this process use the
// tiles, and GOPT_POINTWISE_AMX is not "0".
bool pointwiseAmxEnabled();

class PointwiseBf16Amx {
public:
  // `weights`: bf16 bits, [n][k] (output channel major); `bias`: n values
  // or empty. Null where the shape is not covered (k odd) or AMX is off.
  // The result is round(clamp(src . weights + bias [+ dst])) with the
  // clamp to [lo, hi] only where `clamp`, the dst term only where `sum`.
  static std::unique_ptr<PointwiseBf16Amx>
  create(int64_t k, int64_t n, const std::vector<uint16_t> &weights,
         const std::vector<float> &bias, bool clamp, float lo, float hi,
         bool sum, int threads);

  // `pixels` rows of k channels -> rows of n channels (dense NHWC).
  void run(const uint16_t *src, uint16_t *dst, int64_t pixels) const;

private:
  PointwiseBf16Amx() = default;
  int64_t k_ = 0, n_ = 0, kc_ = 0, nBlocks_ = 0;
  std::vector<uint16_t> packed_; // per 16 outputs and k chunk: VNNI pairs
  std::vector<float> bias_;      // nBlocks_ * 16
  bool clamp_ = false, sum_ = false;
  float lo_ = 0, hi_ = 0;
  int threads_ = 1;
};

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_CPU_POINTWISEAMX_H
