//===- DepthwiseConv.h - 3x3 depthwise convolution, NHWC bf16 ---*- C++ -*-===//
//
// gopt's own 3x3 depthwise convolution on NHWC bf16 data (f32 weights and
// accumulation, bias, relu/clip, the result rounded to bf16 once), the
// depthwise stage of the CPU schedule's convolution chains (MobileNet's
// inverted residual blocks) in place of oneDNN 2.6's brdgmm_dw kernel.
// Plain C++ with no oneDNN types: OneDnnKernels.cpp wraps it as a chain
// stage.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_DEPTHWISECONV_H
#define GOPT_RUNTIME_SRC_CPU_DEPTHWISECONV_H

#include <cstdint>
#include <memory>
#include <vector>

namespace gopt::runtime::cpu {

// One call's images: [n, h, w, c] in, [n, oh, ow, c] out, both dense NHWC;
// rows above or below the source (padTop, and the rows past h) and columns
// left or right of it (padLeft, and past w) read as zeros.
struct DepthwiseGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t stride = 1; // both dimensions: 1 or 2
  int64_t padTop = 0, padLeft = 0;
};

// False where the CPU lacks AVX-512 BF16 or GOPT_DEPTHWISE_KERNEL=0
// (oneDNN then runs the convolution, for comparing).
bool depthwiseBf16Enabled();

class DepthwiseBf16 {
public:
  // `weights`: f32 [3][3][c] (kh, kw, channel); `bias`: f32 [c] (empty:
  // none); the result is clamped to [lo, hi] where `clamp` (relu, relu6,
  // clip). `threads`: the threads a call splits its rows among (1 inside a
  // chain lane). Null for any geometry the kernel does not take.
  static std::unique_ptr<DepthwiseBf16>
  create(const DepthwiseGeometry &g, const std::vector<float> &weights,
         const std::vector<float> &bias, bool clamp, float lo, float hi,
         int threads);
  void run(const uint16_t *src, uint16_t *dst) const;

private:
  DepthwiseGeometry g_;
  std::vector<float> w_; // per block of 32 channels: [9][2][16]
  std::vector<float> b_; // per block: [2][16], even channels then odd
  bool clamp_ = false;
  float lo_ = 0, hi_ = 0;
  int threads_ = 1;
};

// What follows the clamp in DepthwiseF32's epilogue: nothing, ONNX's
// HardSwish x * clamp(x / 6 + 0.5, 0, 1), or SiLU x * sigmoid(x).
enum class DepthwiseTail { kNone, kHardSwish, kSwish };

// False where the CPU lacks AVX-512F or GOPT_DEPTHWISE_F32=0 (oneDNN's
// brdgmm_dw then runs f32 depthwise convolutions, for comparing).
bool depthwiseF32Enabled();

// Whether DepthwiseF32 computes two output rows per pass over the source
// (GOPT_DEPTHWISE_F32_ROW_PAIRS=0: one).
bool depthwiseF32RowPairs();

// gopt's own KxK (3 or 5) depthwise convolution on NHWC f32 (MobileNet's
// and EfficientNet's depthwise layers at small batches): bias, clamp
// (relu, relu6, clip), then `tail`.
class DepthwiseF32 {
public:
  // `weights`: [k][k][c] (kh, kw, channel); `bias`: [c] (empty: none).
  // `threads`: the threads a call splits (rows x channel groups) among.
  // Null for any geometry the kernel does not take.
  static std::unique_ptr<DepthwiseF32> create(const DepthwiseGeometry &g, int k,
                                              const std::vector<float> &weights,
                                              const std::vector<float> &bias,
                                              bool clamp, float lo, float hi,
                                              DepthwiseTail tail, int threads);
  void run(const float *src, float *dst) const;

private:
  DepthwiseGeometry g_;
  int k_ = 3;
  std::vector<float> w_; // per block of 16 channels: [k * k][16]
  std::vector<float> b_; // [blocks * 16], zero past c
  bool clamp_ = false;
  float lo_ = 0, hi_ = 0;
  DepthwiseTail tail_ = DepthwiseTail::kNone;
  int threads_ = 1;
};

// x * sigmoid(x) in place over `n` floats with DepthwiseF32's SiLU (an
// AVX-512 exp within 2 ulp), split among `threads` where n is large; false
// (nothing done) without AVX-512F or with GOPT_CONV_SILU_PASS=0. A
// convolution's SiLU applied so after oneDNN's kernel ran 2-3x faster
// than oneDNN 2.6's eltwise_swish post-op (EfficientNet).
bool siluInPlaceEnabled();
// Whether those SiLUs compute v / (1 + exp(-v)) on v clamped to [-87,
// 87.3] (fewer operations) rather than from exp(-|v|) with a select
// (GOPT_SILU_DIRECT=0).
bool siluDirectEnabled();
// Whether that form computes exp(-v) in base 2 with one polynomial (12
// operations and the division instead of 16; GOPT_SILU_EXP2=0: as
// before).
bool siluExp2Enabled();
void siluInPlace(float *x, int64_t n, int threads);
// The same pass for ONNX's HardSwish (MobileNetV3's convolutions); false
// without AVX-512F or with GOPT_CONV_HARDSWISH_PASS=0.
bool hardSwishInPlaceEnabled();
void tailInPlace(float *x, int64_t n, DepthwiseTail tail, int threads);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_DEPTHWISECONV_H
