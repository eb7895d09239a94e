//===- StemConvF32.h - gopt's AVX-512 f32 stem convolution ------*- C++ -*-===//
//
// A network's first convolution: few input channels (at most 4: RGB) read
// straight from the plain NCHW input, 16-64 output channels written in NHWC
// or nChw16c (the layout the next layer reads). oneDNN 2.6 needs the input
// reordered first and its kernel for 3 input channels is slow
// (MobileNetV2's 3 -> 32 3x3 stride 2 at 224x224: 0.6-0.8 ms plus a 0.2 ms
// reorder on one thread). Per output row, the rows its window reads are
// copied with their zero padding into a small buffer; tiles of output
// pixels x all output channels then accumulate in registers over the
// cin x kh x kw taps, the packed filter staying in L1. Bias, a clamp
// (relu, relu6, clip) and HardSwish run before the store.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_STEMCONVF32_H
#define GOPT_RUNTIME_SRC_CPU_STEMCONVF32_H

#include <cstdint>
#include <memory>
#include <vector>

namespace gopt::runtime::cpu {

struct StemConvF32Shape {
  int64_t n = 1, cin = 3, h = 0, w = 0, cout = 0;
  int64_t kh = 3, kw = 3, strideH = 1, strideW = 1, padTop = 0, padLeft = 0;
  int64_t oh = 0, ow = 0;
  bool oihw = true;     // filter [cout][cin][kh][kw], else HWIO
  bool blocked = false; // result nChw16c, else NHWC
  bool bias = false;
  float lo = -__builtin_inff(), hi = __builtin_inff(); // clamp
  bool hardswish = false; // x * clamp(x / 6 + 0.5, 0, 1) after the clamp
};

class StemConvF32 {
public:
  // Null where the CPU lacks AVX-512 or the shape is not covered: cin 1-4,
  // cout 16, 32, 48 or 64, windows up to 7x7, strides 1-4.
  static std::unique_ptr<StemConvF32>
  create(const StemConvF32Shape &s, const float *filter, const float *bias);
  // src plain NCHW, dst NHWC or nChw16c. Runs on omp_get_max_threads()
  // threads (one inside a parallel region), splitting the output rows.
  void run(const float *src, float *dst) const;

private:
  StemConvF32Shape s_;
  std::vector<float> w_;    // [cin][kh][kw][cout]
  std::vector<float> bias_; // cout floats (zeros without a bias)
};

// GOPT_STEM_CONV_F32=0 keeps oneDNN's (and the input reorder).
bool stemConvF32Enabled();

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_STEMCONVF32_H
