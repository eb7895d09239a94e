//===- Conv1x1F32.h - gopt's AVX-512 f32 1x1 convolution --------*- C++ -*-===//
//
// gopt's own f32 1x1 convolution (stride 1 or 2, no padding, constant
// filter) for the layouts oneDNN chose for the layer: nChw16c (aBcd16b) or
// NHWC (acdb), source and result alike. It is one GEMM per image, pixels x
// cin times cin x cout: the filter is packed once in blocks of 64 output
// channels ([cin][64], 4 zmm a row), each block's filter slice of 128
// input channels (32 KiB) stays in L1 while tiles of 6 pixels stream past
// it (24 accumulators), and the threads split the blocks and runs of
// pixels. Bias, an in-place residual sum (the result holds the residual on
// entry), relu, a clamp and HardSwish or SiLU run as each tile's last pass
// is stored.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_CONV1X1F32_H
#define GOPT_RUNTIME_SRC_CPU_CONV1X1F32_H

#include <cstdint>
#include <memory>
#include <vector>

#include "HugePageBuffer.h"

namespace gopt::runtime::cpu {

struct Conv1x1F32Shape {
  int64_t n = 0, cin = 0, cout = 0, h = 0, w = 0; // h, w: the source's
  int64_t strideH = 1, strideW = 1;
  bool blocked = true; // nChw16c source and result, else NHWC
  bool oihw = true;    // filter layout: OIHW [cout][cin], else HWIO
  bool bias = false, sum = false, relu = false;
  // After the relu: a clamp to [lo, hi] (relu6, clip), then HardSwish
  // (x * clamp(x / 6 + 0.5, 0, 1)); MobileNets' 7x7 layers.
  bool clip = false;
  float lo = 0, hi = 0;
  bool hardswish = false;
  // The result is the mean over each image's pixels after the activation
  // (a global average pool fused: [n][cout] plain, any cout), not the
  // convolution's result: SqueezeNet's classifier, MobileNetV3's last 1x1.
  bool pool = false;
  // SiLU x * sigmoid(x) last (SiluAvx512.h's, as the pass after oneDNN's
  // convolutions computes it): EfficientNet's 7x7 expand and head layers.
  bool silu = false;
  // Floats from one image's result to the next; 0: cout * outH * outW (a
  // dense result). Larger in nChw16c only: a channel slice of a wider
  // tensor, such as a concat's destination (SqueezeNet's fire modules).
  int64_t dstImageStride = 0;
  int64_t outH() const { return (h - 1) / strideH + 1; }
  int64_t outW() const { return (w - 1) / strideW + 1; }
};

class Conv1x1F32 {
public:
  // Null where the CPU lacks AVX-512 or the shape is not covered (cin and,
  // without `pool`, cout multiples of 16, strides 1 or 2).
  static std::unique_ptr<Conv1x1F32>
  create(const Conv1x1F32Shape &s, const float *filter, const float *bias);
  // src and dst in the shape's layout; with `sum`, dst holds the residual
  // on entry. Runs on omp_get_max_threads() threads (one inside a
  // parallel region).
  void run(const float *src, float *dst) const;
  // Pixels per work item (planSplit's choice for the threads at creation).
  int64_t pixelsPerRun() const { return run_; }

private:
  Conv1x1F32Shape s_;
  // cout rounded up to 16 (zero filter and bias past cout).
  int64_t coutPadded_ = 0;
  HugePageBuffer w_;        // per 64-channel block: [cin][64] (or fewer)
  std::vector<float> bias_; // coutPadded_ floats (zeros without a bias)

  // One work item: an image, a 64-channel output block and a run of
  // pixels, numbered as run() hands them out.
  struct Item {
    int64_t n, block, run;
  };
  int64_t outBlocks() const;
  int64_t runsOf(int64_t run) const; // runs of `run` pixels an image has
  Item itemAt(int64_t item, int64_t runs) const;
  // Pixels per run and, for plannedThreads_ threads, each thread's first
  // item (splits_[t] .. splits_[t + 1]): chosen at creation so that the
  // threads' shares of the work are even (planSplit).
  void planSplit(int threads);
  int64_t run_ = 0;
  int plannedThreads_ = 0;
  std::vector<int64_t> splits_;
};

// Whether a 1x1 convolution whose result only a global average pool reads
// runs with the pool fused (`pool`): GOPT_CONV_1X1_POOL_F32=0 keeps the
// convolution and the pool apart.
bool conv1x1PoolF32Enabled();

// Whether the kernel may be used: GOPT_CONV_1X1_F32=0 keeps oneDNN's.
bool conv1x1F32Enabled();

// Whether it may take layers with a clamp (relu6, clip) or HardSwish:
// GOPT_CONV_1X1_F32_CLAMP=0 keeps oneDNN's for those.
bool conv1x1F32ClampEnabled();

// Whether it may take layers ending in SiLU (GOPT_CONV_1X1_F32_SILU=0:
// oneDNN's convolution and the SiLU pass after it).
bool conv1x1F32SiluEnabled();

// Whether the kernel is taken for `s` where oneDNN has one too: results of
// at most 64 pixels (7x7), of one image or in NHWC (GOPT_CONV_1X1_F32=all:
// any).
bool conv1x1F32Preferred(const Conv1x1F32Shape &s);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_CONV1X1F32_H
