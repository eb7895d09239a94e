//===- BlockedBatchNorm.cpp - Inference batch norm + relu, nChw16c --------===//
//
// y = x * a[c] + b[c] (then max(y, 0)), a = scale / sqrt(var + epsilon),
// b = offset - mean * a, computed from the statistics each run (C values).
//
//===----------------------------------------------------------------------===//
#include "BlockedBatchNorm.h"

#include "Avx512Lanes.h"
#include "ParallelRange.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace gopt::runtime::cpu {
namespace {

using dnnl::memory;

#ifdef GOPT_HAVE_AVX512_LANES
// GCC 12 warns about _mm512_max_ps's own undefined initial vector.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Vectors [begin, end) of 16 channels of a [blocks][pixels][16] buffer
// (images one after another), block b's coefficients at a + 16 * b.
GOPT_AVX512BW void normalizeVectors(const float *x, float *y, const float *a,
                                    const float *b, int64_t begin, int64_t end,
                                    int64_t pixels, int64_t blocks, bool relu) {
  const __m512 zero = _mm512_set1_ps(0.0f);
  for (int64_t v = begin; v < end;) {
    const int64_t row = v / pixels; // image * blocks + block
    const int64_t stop = std::min(end, (row + 1) * pixels);
    const int64_t block = row % blocks;
    const __m512 va = _mm512_loadu_ps(a + 16 * block);
    const __m512 vb = _mm512_loadu_ps(b + 16 * block);
    if (relu)
      for (; v < stop; ++v)
        _mm512_storeu_ps(
            y + 16 * v,
            _mm512_max_ps(_mm512_fmadd_ps(_mm512_loadu_ps(x + 16 * v), va, vb),
                          zero));
    else
      for (; v < stop; ++v)
        _mm512_storeu_ps(y + 16 * v,
                         _mm512_fmadd_ps(_mm512_loadu_ps(x + 16 * v), va, vb));
  }
}
#pragma GCC diagnostic pop
#endif

class BlockedBatchNormKernel : public LayoutKernel {
public:
  BlockedBatchNormKernel(const memory::desc &md, int64_t channels,
                         int64_t pixels, int64_t images, float epsilon,
                         bool relu)
      : md_(md), channels_(channels), pixels_(pixels), images_(images),
        epsilon_(epsilon), relu_(relu), a_(channels), b_(channels) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const float *scale = in[1].data<float>(), *offset = in[2].data<float>(),
                *mean = in[3].data<float>(), *var = in[4].data<float>();
    for (int64_t c = 0; c < channels_; ++c) {
      a_[c] = scale[c] / std::sqrt(var[c] + epsilon_);
      b_[c] = offset[c] - mean[c] * a_[c];
    }
#ifdef GOPT_HAVE_AVX512_LANES
    const float *x = in[0].data<float>();
    float *y = out[0].data<float>();
    const int64_t blocks = channels_ / 16;
    const int64_t vectors = images_ * blocks * pixels_;
    // Element ranges in whole vectors of 16 (parallelRange's chunks).
    parallelRange(vectors * 16, [&](int64_t begin, int64_t end) {
      normalizeVectors(x, y, a_.data(), b_.data(), begin / 16, end / 16,
                       pixels_, blocks, relu_);
    });
    return Status::success();
#else
    return internalError("blocked batch norm built without AVX-512");
#endif
  }
  const char *implementation() const override { return "gopt-blocked"; }
  memory::desc inputDesc(int i) const override {
    return i == 0 ? md_ : memory::desc();
  }
  memory::desc outputDesc() const override { return md_; }

private:
  memory::desc md_;
  int64_t channels_, pixels_, images_;
  float epsilon_;
  bool relu_;
  std::vector<float> a_, b_;
};

} // namespace

std::unique_ptr<LayoutKernel> createBlockedBatchNorm(const KernelConfig &config,
                                                     const memory::desc &src,
                                                     bool relu) {
  const char *setting = std::getenv("GOPT_BLOCKED_BN");
  if (setting && std::strcmp(setting, "0") == 0)
    return nullptr;
#ifdef GOPT_HAVE_AVX512_LANES
  if (!avx512fSupported())
    return nullptr;
  OpAttrs attrs = config.attrs();
  const Shape &x = config.inputShapes[0];
  if (x.size() != 4 || attrs.getBool("training") ||
      attrs.getString("data_format") != "NCHW" || x[1] % 16 != 0 ||
      config.inputShapes.size() != 5 || config.outputShapes.size() != 1 ||
      config.outputTypes[0] != DType::kF32)
    return nullptr;
  for (size_t i = 0; i < config.inputTypes.size(); ++i)
    if (config.inputTypes[i] != DType::kF32 ||
        (i > 0 && config.inputShapes[i] != Shape{x[1]}))
      return nullptr;
  memory::desc md({x[0], x[1], x[2], x[3]}, memory::data_type::f32,
                  memory::format_tag::aBcd16b);
  if (src != md)
    return nullptr;
  return std::make_unique<BlockedBatchNormKernel>(
      md, x[1], x[2] * x[3], x[0],
      static_cast<float>(attrs.getFloat("epsilon")), relu);
#else
  return nullptr;
#endif
}

} // namespace gopt::runtime::cpu
