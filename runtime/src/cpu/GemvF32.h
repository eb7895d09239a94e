//===- GemvF32.h - gopt's AVX-512 f32 matrix-vector product -----*- C++ -*-===//
//
// A dense layer at batch 1 (one row times a constant [K, N] weight, plus a
// bias row, then relu) is a matrix-vector product: it reads each weight
// once and does one FMA per weight, so its speed is the speed the weights
// stream from L3 or memory. The weights are packed once into panels of 64
// columns ([K][64] each, contiguous), which one core streams at the
// prefetchers' full rate with 4 accumulators of 16 columns; threads split
// the panels. oneDNN 2.6's brg matmul for M = 1 read MobileNetV3's
// classifier weights (5 MB a layer) at half that rate.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_GEMVF32_H
#define GOPT_RUNTIME_SRC_CPU_GEMVF32_H

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "HugePageBuffer.h"

namespace gopt::runtime::cpu {

struct GemvF32Shape {
  int64_t k = 0, n = 0;
  bool transB = false; // the weight is [N][K] (ONNX Gemm's transB), else [K][N]
  bool relu = false;
};

class GemvF32 {
public:
  // Null where the CPU lacks AVX-512 or the shape is empty.
  static std::unique_ptr<GemvF32> create(const GemvF32Shape &s,
                                         const float *weight);
  // y[N] = relu?(x[K] * W + bias[N]) (bias: null without one). Runs on
  // omp_get_max_threads() threads (one inside a parallel region).
  void run(const float *x, const float *bias, float *y) const;
  // Thread `id` of `nt`'s share of run(), for a caller already inside a
  // parallel region: whole panels, columns [first, last) of y, returned.
  std::pair<int64_t, int64_t> runShare(const float *x, const float *bias,
                                       float *y, int id, int nt) const;
  // The packed weights' bytes.
  size_t bytes() const { return w_.size() * sizeof(float); }

private:
  GemvF32Shape s_;
  // Panels of 64 columns (the last one narrower, padded to 16): [K][width];
  // on huge pages from 1 MiB (HugePageBuffer.h).
  HugePageBuffer w_;
};

// Whether the kernel may be used: GOPT_GEMV_F32=0 keeps oneDNN's matmul.
bool gemvF32Enabled();

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_GEMVF32_H
