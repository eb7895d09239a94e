//===- SqueezeExcite.cpp - A squeeze-and-excitation block in one step -----===//
//
// The weights are kept transposed ([channels][squeezed] and
// [squeezed][channels]) so both products are sums of scaled rows: the
// inner loops run over independent outputs and vectorize without
// reordering any sum.
//
//===----------------------------------------------------------------------===//
#include "SqueezeExcite.h"
#include "ParallelRange.h"

#include "gopt/runtime/Kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace gopt::runtime::cpu {
namespace {

// y[0..n) += w[0..n) * a, the products' inner loop: AVX-512 where the CPU
// has it (the runtime is built for the baseline x86-64).
__attribute__((target_clones("avx512f", "avx2", "default"))) void
axpy(float *__restrict y, const float *__restrict w, float a, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += w[i] * a;
}

// Per-channel sums of `hw` pixels of `b` interleaved channels into m[0..b).
__attribute__((target_clones("avx512f", "avx2", "default"))) void
sumPixels(float *__restrict m, const float *__restrict in, int64_t hw,
          int64_t b) {
  if (b == 16) {
    float acc[16] = {};
    for (int64_t p = 0; p < hw; ++p)
      for (int64_t l = 0; l < 16; ++l)
        acc[l] += in[p * 16 + l];
    for (int64_t l = 0; l < 16; ++l)
      m[l] += acc[l];
    return;
  }
  for (int64_t p = 0; p < hw; ++p)
    for (int64_t l = 0; l < b; ++l)
      m[l] += in[p * b + l];
}

// out = in * g per channel, `b` interleaved channels.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
scalePixels(float *__restrict out, const float *__restrict in,
            const float *__restrict g, int64_t hw, int64_t b) {
  if (b == 16) {
    for (int64_t p = 0; p < hw; ++p)
      for (int64_t l = 0; l < 16; ++l)
        out[p * 16 + l] = in[p * 16 + l] * g[l];
    return;
  }
  if (b == 1) {
    const float s = g[0];
    for (int64_t p = 0; p < hw; ++p)
      out[p] = in[p] * s;
    return;
  }
  for (int64_t p = 0; p < hw; ++p)
    for (int64_t l = 0; l < b; ++l)
      out[p * b + l] = in[p * b + l] * g[l];
}

float activate(const SeActivation &a, float v) {
  switch (a.kind) {
  case SeActivation::kNone:
    return v;
  case SeActivation::kRelu:
    return std::max(v, 0.0f);
  case SeActivation::kRelu6:
    return std::min(std::max(v, 0.0f), 6.0f);
  case SeActivation::kSigmoid:
    return 1.0f / (1.0f + std::exp(-v));
  case SeActivation::kSilu:
    return v / (1.0f + std::exp(-v));
  case SeActivation::kHardSigmoid:
    return std::max(0.0f, std::min(1.0f, a.alpha * v + a.beta));
  }
  return v;
}

class SqueezeExciteKernel final : public Kernel {
public:
  explicit SqueezeExciteKernel(SqueezeExciteParams p) : p_(std::move(p)) {
    const int64_t c = p_.channels, s = p_.squeezed;
    block_ = p_.block == 0 ? 1 : p_.block;
    blocks_ = p_.block == 0 ? c : (c + block_ - 1) / block_;
    padded_ = blocks_ * block_;
    w1t_.assign(c * s, 0.0f);
    w2t_.assign(s * padded_, 0.0f);
    for (int64_t j = 0; j < s; ++j)
      for (int64_t k = 0; k < c; ++k) {
        w1t_[k * s + j] = p_.w1[j * c + k];
        w2t_[j * padded_ + k] = p_.w2[k * s + j];
      }
    mean_.resize(p_.n * padded_);
    hidden_.resize(p_.n * s);
    gate_.resize(p_.n * padded_);
  }

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    const int64_t n = p_.n, c = p_.channels, s = p_.squeezed, hw = p_.hw,
                  b = block_, pc = padded_;
    const float inv = 1.0f / static_cast<float>(hw);
    const float *x = inputs[0].data<float>();
    float *y = outputs[0].data<float>();
    std::fill(mean_.begin(), mean_.end(), 0.0f);
    std::fill(gate_.begin(), gate_.end(), 0.0f);
    // Each thread takes blocks of the passes over x and a range of each
    // product's outputs (for all images: a weight row is read once per
    // step, not once per image); the barriers order the phases.
#pragma omp parallel if (n * pc * hw >= kParallelThreshold)
    {
      const int threads = omp_get_num_threads(), id = omp_get_thread_num();
      auto range = [&](int64_t total, int64_t &begin, int64_t &end) {
        int64_t chunk = ((total + threads - 1) / threads + 15) / 16 * 16;
        begin = std::min(total, id * chunk);
        end = std::min(total, begin + chunk);
      };
      // Squeeze: per-channel sums (a block's lanes summed side by side).
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n * blocks_; ++i)
        sumPixels(mean_.data() + (i / blocks_) * pc + (i % blocks_) * b,
                  x + i * hw * b, hw, b);
      // Excite: the two products and their activations.
      int64_t j0, j1, k0, k1;
      range(s, j0, j1);
      range(c, k0, k1);
      if (j0 < j1) {
        for (int64_t img = 0; img < n; ++img)
          std::copy(p_.b1.begin() + j0, p_.b1.begin() + j1,
                    hidden_.begin() + img * s + j0);
        for (int64_t k = 0; k < c; ++k)
          for (int64_t img = 0; img < n; ++img)
            axpy(hidden_.data() + img * s + j0, w1t_.data() + k * s + j0,
                 mean_[img * pc + k] * inv, j1 - j0);
        for (int64_t img = 0; img < n; ++img)
          for (int64_t j = j0; j < j1; ++j)
            hidden_[img * s + j] = activate(p_.act1, hidden_[img * s + j]);
      }
#pragma omp barrier
      if (k0 < k1) {
        for (int64_t img = 0; img < n; ++img)
          std::copy(p_.b2.begin() + k0, p_.b2.begin() + k1,
                    gate_.begin() + img * pc + k0);
        for (int64_t j = 0; j < s; ++j)
          for (int64_t img = 0; img < n; ++img)
            axpy(gate_.data() + img * pc + k0, w2t_.data() + j * pc + k0,
                 hidden_[img * s + j], k1 - k0);
        for (int64_t img = 0; img < n; ++img)
          for (int64_t k = k0; k < k1; ++k)
            gate_[img * pc + k] = activate(p_.act2, gate_[img * pc + k]);
      }
#pragma omp barrier
      // Scale x; padding channels stay zeros (their gate is 0).
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n * blocks_; ++i)
        scalePixels(y + i * hw * b, x + i * hw * b,
                    gate_.data() + (i / blocks_) * pc + (i % blocks_) * b, hw,
                    b);
    }
    return Status::success();
  }

  const char *implementation() const override { return "gopt"; }
  size_t workspaceBytes() const override {
    return (w1t_.size() + w2t_.size()) * sizeof(float);
  }

private:
  SqueezeExciteParams p_;
  int64_t block_ = 1, blocks_ = 0, padded_ = 0;
  std::vector<float> w1t_, w2t_, mean_, hidden_, gate_;
};

} // namespace

bool squeezeExciteEnabled() {
  // Opt-in: at two threads the one-step kernel was slower than oneDNN's
  // separate ops (architecture.md, "squeeze-and-excitation").
  const char *v = std::getenv("GOPT_SQUEEZE_EXCITE");
  return v && std::strcmp(v, "1") == 0;
}

std::unique_ptr<Kernel> createSqueezeExcite(SqueezeExciteParams p) {
  const int64_t c = p.channels, s = p.squeezed;
  if (p.n <= 0 || c <= 0 || s <= 0 || p.hw <= 0 || p.block < 0 ||
      static_cast<int64_t>(p.w1.size()) != s * c ||
      static_cast<int64_t>(p.b1.size()) != s ||
      static_cast<int64_t>(p.w2.size()) != c * s ||
      static_cast<int64_t>(p.b2.size()) != c)
    return nullptr;
  return std::make_unique<SqueezeExciteKernel>(std::move(p));
}

} // namespace gopt::runtime::cpu
