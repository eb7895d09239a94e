//===- ReluGradBias.cpp - add + relu_grad + bias sum in one pass ----------===//
//
// A residual network's backward pass has, per convolution, relu_grad(g, y)
// -> dy, read by the convolution's two gradients and by the bias
// gradient's reduce_sum over N, H and W; where two gradient paths meet
// (the skip connection), g = add(a, b) read by that relu_grad alone. As
// separate steps that is three passes over activation-sized tensors (the
// add's result written and read back, dy read again for the sum); here
// one: each row of channels is added, masked, stored and summed while in
// registers. The sums follow ReduceKernel (TrainingKernels.cpp): f32 over
// chunks of 64 rows in row order, those into per-thread doubles (chunks
// split statically among the threads as there), joined in thread order:
// the same bits as reduce_sum at the same thread count.
//
//===----------------------------------------------------------------------===//
#include "ReluGradBias.h"
#include "ElementLoops.h"
#include "EnvSwitch.h"
#include "ParallelRange.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

namespace gopt::runtime::cpu {

bool reluGradBiasFusionEnabled() { return envSwitchOn("GOPT_RELU_GRAD_BIAS"); }

namespace {

// dy[i] = y[i] > 0 ? g[i] : 0 with g[i] = a[i] + b[i] rounded to T (with
// kAdd) or a[i]; as add's and relu_grad's loops compute it (bf16: NaNs
// quieted). With kSum also sums[i] += dy[i] in f32.
template <typename T, bool kAdd, bool kSum>
GOPT_VECTOR_CLONES void addReluRow(const T *a, const T *b, const T *y, T *dy,
                                   float *sums, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    T d;
    if constexpr (kAdd)
      d = fromF32<T>(toF32(a[i]) + toF32(b[i]));
    else
      d = a[i];
    T out;
    if constexpr (std::is_same_v<T, float>) {
      out = y[i] > 0 ? d : 0.0f;
    } else {
      uint16_t v = y[i];
      bool positive = static_cast<uint16_t>(v - 1) < 0x7f80;
      uint16_t quiet = (d & 0x7fff) > 0x7f80 ? d | 0x40 : d;
      out = positive ? quiet : 0;
    }
    dy[i] = out;
    if constexpr (kSum)
      sums[i] += toF32(out);
  }
}

template <typename T, bool kAdd> class AddReluBiasGradKernel : public Kernel {
public:
  AddReluBiasGradKernel(int64_t rows, int64_t channels, bool bias)
      : rows_(rows), channels_(channels), bias_(bias) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const T *a = in[0].data<T>();
    const T *b = kAdd ? in[1].data<T>() : nullptr;
    const T *y = in[kAdd ? 2 : 1].data<T>();
    T *dy = out[0].data<T>();
    const int64_t rows = rows_, channels = channels_;
    if (!bias_) {
      parallelRange(rows * channels, [&](int64_t begin, int64_t end) {
        addReluRow<T, kAdd, false>(a + begin, kAdd ? b + begin : nullptr,
                                   y + begin, dy + begin, nullptr, end - begin);
      });
      return Status::success();
    }
    T *db = out[1].data<T>();
    const bool parallel = rows * channels >= kParallelThreshold;
    const int threads = parallel ? omp_get_max_threads() : 1;
    if (rows < threads && channels >= threads) {
      // ReduceKernel's per-entry order for few rows: each element into the
      // channel's double sum, rows in order.
      for (int64_t r = 0; r < rows; ++r)
        addReluRow<T, kAdd, false>(
            a + r * channels, kAdd ? b + r * channels : nullptr,
            y + r * channels, dy + r * channels, nullptr, channels);
      for (int64_t k = 0; k < channels; ++k) {
        double sum = 0;
        for (int64_t r = 0; r < rows; ++r)
          sum += toF32(dy[r * channels + k]);
        db[k] = fromF32<T>(static_cast<float>(sum));
      }
      return Status::success();
    }
    std::vector<double> partials(static_cast<size_t>(threads) * channels, 0.0);
#pragma omp parallel num_threads(threads) if (parallel)
    {
      double *local = partials.data() + omp_get_thread_num() * channels;
      std::vector<float> chunk(channels);
      float *pc = chunk.data();
      const int64_t chunks = (rows + kChunk - 1) / kChunk;
#pragma omp for schedule(static)
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t end = std::min(rows, (c + 1) * kChunk);
        std::fill(chunk.begin(), chunk.end(), 0.0f);
        for (int64_t r = c * kChunk; r < end; ++r) {
          const int64_t at = r * channels;
          addReluRow<T, kAdd, true>(a + at, kAdd ? b + at : nullptr, y + at,
                                    dy + at, pc, channels);
        }
        for (int64_t k = 0; k < channels; ++k)
          local[k] += pc[k];
      }
    }
    for (int64_t k = 0; k < channels; ++k) {
      double sum = 0;
      for (int t = 0; t < threads; ++t)
        sum += partials[static_cast<size_t>(t) * channels + k];
      db[k] = fromF32<T>(static_cast<float>(sum));
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  static constexpr int64_t kChunk = 64; // ReduceKernel's rows per f32 sum
  int64_t rows_, channels_;
  bool bias_;
};

template <typename T>
std::unique_ptr<Kernel> create(int64_t rows, int64_t channels, bool add,
                               bool bias) {
  if (add)
    return std::make_unique<AddReluBiasGradKernel<T, true>>(rows, channels,
                                                            bias);
  return std::make_unique<AddReluBiasGradKernel<T, false>>(rows, channels,
                                                           bias);
}

} // namespace

std::unique_ptr<Kernel> createAddReluBiasGrad(DType type, int64_t rows,
                                              int64_t channels, bool add,
                                              bool bias) {
  if (!reluGradBiasFusionEnabled() || rows <= 0 || channels <= 0 ||
      (!add && !bias))
    return nullptr;
  if (type == DType::kF32)
    return create<float>(rows, channels, add, bias);
  if (type == DType::kBF16)
    return create<uint16_t>(rows, channels, add, bias);
  return nullptr;
}

} // namespace gopt::runtime::cpu
