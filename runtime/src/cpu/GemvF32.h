//===- GemvF32.h - One row times a constant f32 matrix ----------*- C++ -*-===//
//
// gopt's AVX-512 f32 matrix-vector product for a matmul whose left operand
// is one row ([1, K] or [..., 1, K]) and whose right one is a constant [K,
// N] (or [N, K] transposed): a classifier at batch 1 (EfficientNet-B0's
// 1280 -> 1000 Gemm), where oneDNN 2.6's matmul reads the 5 MiB of weights
// on one thread. The matrix is packed once in blocks of 128 columns
// ([K][128]: every block one sequential stream), each block's sums stay in
// eight registers over all of K, and the threads split the blocks. Bias
// and relu are applied as the sums are stored.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_GEMVF32_H
#define GOPT_RUNTIME_SRC_CPU_GEMVF32_H

#include <cstdint>
#include <memory>
#include <vector>

namespace gopt::runtime::cpu {

class GemvF32 {
public:
  // `b`: [k][n] row-major, or [n][k] where `transposed`. Null without
  // AVX-512F or for an empty shape.
  static std::unique_ptr<GemvF32> create(int64_t k, int64_t n, const float *b,
                                         bool transposed);
  // y[0..n) = x[0..k) B (+ bias[0..n)), then relu where `relu`; on
  // `threads` threads (1 inside a parallel region).
  void run(const float *x, const float *bias, bool relu, float *y,
           int threads) const;
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }

private:
  int64_t k_ = 0, n_ = 0;
  std::vector<float> w_; // block j at j * 128 * k: [k][width], width <= 128
};

// Whether matmuls of one row by a constant matrix run on GemvF32
// (GOPT_GEMV_F32=0: oneDNN's matmul).
bool gemvF32Enabled();

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_GEMVF32_H
