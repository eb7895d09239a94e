//===- ConvBatch1.h - Batch-1 direct convolution for small, wide layers -*-===//
//
// gopt's direct f32 convolution of one image with many channels and few
// output pixels (ResNet-18's 512-channel 7x7 layers, its stride-2 entries),
// where oneDNN's brgemm kernel ran at about half the core's FMA rate: the
// filter is packed once as [cout / 64][kh][kw][cin][64], the threads split
// the blocks of 64 output channels (there are too few pixels to split), and
// each block streams its filter once per panel of up to 64 output pixels, in
// 128-channel slices that stay in L1 while every group of up to 6 pixels of
// the panel runs a 6 x 64 register tile over them. Source and result are
// NHWC; bias, an in-place residual sum and relu run as the result is
// stored.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_CONVBATCH1_H
#define GOPT_RUNTIME_SRC_CPU_CONVBATCH1_H

#include <cstdint>
#include <memory>
#include <vector>

namespace gopt::runtime::cpu {

struct ConvBatch1Shape {
  int64_t cin = 0, cout = 0, h = 0, w = 0; // source
  int64_t kh = 0, kw = 0, stride = 1;      // same stride both ways
  int64_t padT = 0, padL = 0, padB = 0, padR = 0;
  bool oihw = true; // filter layout: OIHW, else HWIO
  bool bias = false, sum = false, relu = false;
  int64_t outH() const { return (h + padT + padB - kh) / stride + 1; }
  int64_t outW() const { return (w + padL + padR - kw) / stride + 1; }
};

class ConvBatch1 {
public:
  // Null where the CPU lacks AVX-512 or the shape is not covered (cin a
  // multiple of 16, cout of 64, a result of at least one pixel).
  static std::unique_ptr<ConvBatch1> create(const ConvBatch1Shape &s,
                                            const float *filter);
  // src [h, w, cin] and dst [outH, outW, cout] (NHWC, one image); with
  // `sum`, dst holds the residual on entry. bias: cout floats or null.
  void run(const float *src, const float *bias, float *dst);
  size_t workspaceBytes() const;

private:
  ConvBatch1Shape s_;
  int64_t hp_ = 0, wp_ = 0; // the padded source's extent
  bool padded_ = false;     // whether run() copies the source with its pads
  std::vector<float> w_;    // [cout / 64][kh][kw][cin][64]
  std::vector<float> src_;  // [hp][wp][cin] where padded_
  std::vector<int64_t> pixelOffset_;  // per output pixel: its window's origin
  std::vector<std::vector<float>> m_; // per thread: [64 pixels][64]
  bool claims_ = false; // blocks from a shared counter (BlockClaims.h)
};

// Whether the kernel may be used: GOPT_CONV_BATCH1=0 keeps oneDNN's.
bool convBatch1Enabled();

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_CONVBATCH1_H
