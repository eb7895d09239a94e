//===- DepthwiseInt8.h - 3x3 depthwise convolution, NHWC int8 ---*- C++ -*-===//
//
// gopt's own 3x3 depthwise convolution on NHWC u8/s8 data with s8 weights
// (exact int32 sums with AVX512-VNNI, then oneDNN's int8 output formula in
// f32): the depthwise stage of the static-int8 plans' convolution chains,
// between the int8 1x1 stages (PointwiseInt8Amx), in place of oneDNN 2.6's
// brdgmm_dw kernel. Plain C++ with no oneDNN types: OneDnnKernels.cpp wraps
// it as a chain stage.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_DEPTHWISEINT8_H
#define GOPT_RUNTIME_SRC_CPU_DEPTHWISEINT8_H

#include "AlignedVector.h"
#include "DepthwiseConv.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace gopt::runtime::cpu {

// The CPU has AVX512-BW and AVX512-VNNI, oneDNN would use them
// (DNNL_MAX_CPU_ISA caps this kernel too) and GOPT_DEPTHWISE_INT8 is not "0".
bool depthwiseInt8Enabled();

// oneDNN's int8 formula in int8Attr's units (as PointwiseInt8Params):
//   v = (acc + biasScaled[c]) * scale[c]
//   requantize: v = clamp(round(v), -128, 127) * requantScale
//   dst = saturate(round(clamp(v, lo, hi))) as u8 or s8.
struct DepthwiseInt8Params {
  bool srcUnsigned = false;
  std::vector<float> scale;      // c values
  std::vector<float> biasScaled; // c values or empty
  bool requantize = false;
  float requantScale = 1;
  float lo = -128, hi = 127;
  bool dstUnsigned = false;
};

class DepthwiseInt8 {
public:
  // `weights`: s8 [3][3][c] (kh, kw, channel). `threads`: the threads a
  // call splits its rows among. Null for any geometry the kernel does not
  // take or where it is off.
  static std::unique_ptr<DepthwiseInt8>
  create(const DepthwiseGeometry &g, const std::vector<int8_t> &weights,
         const DepthwiseInt8Params &params, int threads);
  void run(const uint8_t *src, uint8_t *dst) const;

private:
  DepthwiseInt8() = default;
  DepthwiseGeometry g_;
  int64_t blocks_ = 0;
  // Per block of 64 channels: [3 kw][4 vectors][16 dwords], each dword the
  // three kh taps of one channel (and a zero byte); the channels of vector
  // j, dword d are 16 * (d / 4) + 4 * j + d % 4 (the order the byte and
  // word unpacks of the source leave them in).
  AlignedVector<int8_t> w_;
  // w_ with each dword's taps one byte up (0, kh 0, kh 1, kh 2): the lower
  // row of a row pair against the same four-row columns.
  AlignedVector<int8_t> wLower_;
  AlignedVector<float> scale_, bias_; // per block: [4][16], the same order
  AlignedVector<int32_t> init_; // per block: [4][16], -128 * sum(w) for s8
  DepthwiseInt8Params p_;
  int64_t pixels_ = 1;    // whole pixels a vector holds (1, 2 or 4)
  bool intClamp_ = false; // clamp the rounded int32s (the bytes)
  // Stride 1: two output rows per pass over their four source rows
  // (GOPT_DEPTHWISE_INT8_ROW_PAIRS).
  bool rowPairs_ = false;
  int threads_ = 1;
};

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_DEPTHWISEINT8_H
