//===- PointwiseAmx.h - 1x1 convolution on NHWC bf16 with AMX --*- C++ -*-===//
//
// A 1x1 convolution (a matrix product of pixels x input channels by input
// x output channels) on NHWC bf16 activations, computed with AMX tiles and
// finished by gopt's own AVX-512 epilogue (bias, residual sum, clamp, one
// round to bf16): MobileNet's expand and project convolutions in a chain,
// where oneDNN 2.6's brgemm 1x1 spent most of its time around the tiles
// (few input channels, 16 to 144); and the static-int8 version of it.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_CPU_POINTWISEAMX_H
#define GOPT_RUNTIME_CPU_POINTWISEAMX_H

#include "AlignedVector.h"

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
  // The epilogue specialized per option (GOPT_POINTWISE_AMX_EPILOGUE).
  bool fastEpilogue_ = true;
  // Tile loads interleaved with the products (GOPT_POINTWISE_AMX_INTERLEAVE).
  bool interleave_ = true;
  // Blocks of at most 16 outputs on two C tiles
  // (GOPT_POINTWISE_AMX_BF16_NARROW).
  bool halfBlocks_ = true;
};

// GOPT_POINTWISE_AMX_BF16_NARROW is not "0" (read at each call): the bf16
// kernel computes a block of at most 16 outputs on two C tiles, and
// chains give it stages of 16 or fewer outputs.
bool pointwiseAmxBf16Narrow();

// AMX-INT8 usable (as pointwiseAmxEnabled) and GOPT_POINTWISE_AMX_INT8 is
// not "0".
bool pointwiseAmxInt8Enabled();

// GOPT_POINTWISE_AMX_INT8_NARROW is not "0": the packed epilogue runs a
// block of at most 16 outputs on two C tiles and four rows a packed
// vector, and chains give the kernel stages of 16 or fewer outputs.
bool pointwiseAmxInt8Narrow();

// The static-int8 plans' 1x1 stage: an int8 NHWC source (u8 or s8) by s8
// weights, int32 sums on AMX tiles (TDPBUSD / TDPBSSD), then oneDNN's int8
// formula in f32 (Int8Params with int8Attr's units):
//   v = (acc + biasScaled[o]) * scale[o]
//   requantize: v = clamp(round(v), -128, 127) * requantScale
//   sum:        v += sumScale * old dst (read as s8 when sumSigned)
//   dst = saturate(round(clamp(v, lo, hi))) as u8 or s8.
struct PointwiseInt8Params {
  bool srcUnsigned = false;
  std::vector<float> scale;      // n values
  std::vector<float> biasScaled; // n values or empty
  bool requantize = false;
  float requantScale = 1;
  bool sum = false, sumSigned = false;
  float sumScale = 1;
  float lo = -128, hi = 127;
  bool dstUnsigned = false;
};

class PointwiseInt8Amx {
public:
  // `weights`: [n][k] s8. Null where k % 4 != 0 or AMX-INT8 is off.
  static std::unique_ptr<PointwiseInt8Amx>
  create(int64_t k, int64_t n, const std::vector<int8_t> &weights,
         const PointwiseInt8Params &params, int threads);
  // `pixels` rows of k channels -> rows of n channels (dense NHWC bytes).
  void run(const uint8_t *src, uint8_t *dst, int64_t pixels) const;

private:
  PointwiseInt8Amx() = default;
  int64_t k_ = 0, n_ = 0, kc_ = 0, nBlocks_ = 0;
  // Per 16 outputs and k chunk: VNNI quads; on cache lines, as every
  // 64-byte B-tile row and epilogue vector read from them.
  AlignedVector<int8_t> packed_;
  AlignedVector<float> scale_, bias_; // nBlocks_ * 16
  PointwiseInt8Params p_;
  int threads_ = 1;
  // The residual's rows loaded in groups where rows share cache lines
  // (GOPT_POINTWISE_AMX_INT8_GROUPED).
  bool groupResidualLoads_ = true;
  // The epilogue clamps the rounded int32 values as bytes after packing
  // two rows with VPACK* (GOPT_POINTWISE_AMX_INT8_PACKED); only where no
  // value can overflow the int32 conversion. Same bits.
  bool packedEpilogue_ = false;
  int8_t loByte_ = 0, hiByte_ = 0; // the clamp bounds, rounded and saturated
  // With the packed epilogue, the next block's tile products issued before
  // this block's epilogue (GOPT_POINTWISE_AMX_INT8_PIPELINE).
  bool pipeline_ = true;
  // With the packed epilogue and one k chunk, the A tiles kept from one
  // block of 32 outputs to the next (GOPT_POINTWISE_AMX_INT8_KEEP_A).
  bool keepA_ = false;
  // Blocks of at most 16 outputs on tiles 0 and 1 only
  // (GOPT_POINTWISE_AMX_INT8_NARROW, read at creation).
  bool halfBlocks_ = true;
};

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_CPU_POINTWISEAMX_H
