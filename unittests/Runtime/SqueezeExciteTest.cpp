//===- SqueezeExciteTest.cpp - The fused SE block vs. a loop --------------===//
//
// The CPU schedule's squeeze-and-excitation kernel against the block
// written out in double: global average pool, 1x1 conv + activation, 1x1
// conv + gate, x times the gate, for MobileNetV3's (relu, hard sigmoid)
// and EfficientNet's (SiLU, sigmoid) activations, on plain NCHW, nChw16c
// with padded channels (40 of 48), nChw8c and NHWC, two images; and at
// batch 1 on 1-3 threads, where the passes over x split pixels (also
// inside a block and inside one NHWC block) and the products run whole on
// every thread or split by channel.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/SqueezeExcite.h"

#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/Tensor.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace gopt::runtime;
using gopt::runtime::cpu::createSqueezeExcite;
using gopt::runtime::cpu::SeActivation;
using gopt::runtime::cpu::SqueezeExciteParams;

namespace {

double act(const SeActivation &a, double v) {
  switch (a.kind) {
  case SeActivation::kNone:
    return v;
  case SeActivation::kRelu:
    return std::max(v, 0.0);
  case SeActivation::kRelu6:
    return std::min(std::max(v, 0.0), 6.0);
  case SeActivation::kSigmoid:
    return 1.0 / (1.0 + std::exp(-v));
  case SeActivation::kSilu:
    return v / (1.0 + std::exp(-v));
  case SeActivation::kHardSigmoid:
    return std::max(0.0, std::min(1.0, a.alpha * v + a.beta));
  }
  return v;
}

void check(int64_t n, int64_t c, int64_t s, int64_t h, int64_t w, int64_t block,
           SeActivation a1, SeActivation a2, bool splitProducts = false) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  SqueezeExciteParams p;
  p.n = n;
  p.channels = c;
  p.hw = h * w;
  p.block = block;
  p.squeezed = s;
  p.act1 = a1;
  p.act2 = a2;
  p.splitProducts = splitProducts;
  for (int64_t i = 0; i < s * c; ++i) {
    p.w1.push_back(u(rng));
    p.w2.push_back(u(rng));
  }
  for (int64_t i = 0; i < s; ++i)
    p.b1.push_back(u(rng));
  for (int64_t i = 0; i < c; ++i)
    p.b2.push_back(u(rng));
  SqueezeExciteParams kept = p;
  const int64_t b = block == 0 ? 1 : block;
  const int64_t blocks = block == 0 ? c : (c + b - 1) / b;
  const int64_t hw = h * w;
  auto at = [&](int64_t i, int64_t k, int64_t q) {
    return ((i * blocks + k / b) * hw + q) * b + k % b;
  };
  std::vector<float> x(n * blocks * b * hw, 0.0f), y(x.size(), NAN);
  std::vector<double> plain(n * c * hw);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t q = 0; q < hw; ++q)
        plain[(i * c + k) * hw + q] = x[at(i, k, q)] = u(rng);
  std::unique_ptr<Kernel> kernel = createSqueezeExcite(std::move(p));
  ASSERT_TRUE(kernel);
  std::vector<Tensor> in = {
      Tensor::view(DType::kF32, {static_cast<int64_t>(x.size())}, x.data())};
  std::vector<Tensor> out = {
      Tensor::view(DType::kF32, {static_cast<int64_t>(y.size())}, y.data())};
  ASSERT_TRUE(kernel->run(in, out).ok());
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> mean(c, 0.0), hid(s), gate(c);
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t q = 0; q < hw; ++q)
        mean[k] += plain[(i * c + k) * hw + q];
      mean[k] /= hw;
    }
    for (int64_t j = 0; j < s; ++j) {
      double v = kept.b1[j];
      for (int64_t k = 0; k < c; ++k)
        v += double(kept.w1[j * c + k]) * mean[k];
      hid[j] = act(a1, v);
    }
    for (int64_t k = 0; k < c; ++k) {
      double v = kept.b2[k];
      for (int64_t j = 0; j < s; ++j)
        v += double(kept.w2[k * s + j]) * hid[j];
      gate[k] = act(a2, v);
    }
    for (int64_t k = 0; k < blocks * b; ++k)
      for (int64_t q = 0; q < hw; ++q) {
        double want = k < c ? plain[(i * c + k) * hw + q] * gate[k] : 0.0;
        ASSERT_NEAR(y[at(i, k, q)], want, 1e-5)
            << "image " << i << " channel " << k << " pixel " << q;
      }
  }
}

const SeActivation kRelu{SeActivation::kRelu};
const SeActivation kHardSigmoid{SeActivation::kHardSigmoid, 1.0f / 6, 0.5f};
const SeActivation kSilu{SeActivation::kSilu};
const SeActivation kSigmoid{SeActivation::kSigmoid};

TEST(SqueezeExcite, MobileNetV3Gate) {
  check(1, 40, 16, 5, 7, 16, kRelu, kHardSigmoid);
  check(2, 40, 16, 3, 3, 0, kRelu, kHardSigmoid);
}

TEST(SqueezeExcite, EfficientNetGate) {
  check(2, 24, 6, 4, 5, 8, kSilu, kSigmoid);
  check(1, 20, 5, 2, 3, 20, kSilu, kSigmoid); // NHWC: one block of 20
  check(1, 96, 4, 1, 1, 16, SeActivation{SeActivation::kRelu6}, kSigmoid);
}

// Large enough for several threads (when OpenMP has them).
TEST(SqueezeExcite, Large) {
  check(2, 120, 32, 28, 28, 16, kRelu, kHardSigmoid);
  check(1, 72, 24, 28, 28, 0, kSilu, kSigmoid);
}

// Batch 1, large enough to run in parallel (32768 or more elements), on
// 1, 2 and 3 threads: pixel ranges that end inside a block's run and
// inside an NHWC pixel, odd sizes, and both ways of running the products.
TEST(SqueezeExcite, BatchOneThreads) {
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    omp_set_num_threads(threads);
    check(1, 40, 10, 29, 29, 40, kSilu, kSigmoid);       // NHWC
    check(1, 40, 10, 29, 29, 40, kSilu, kSigmoid, true); // split products
    check(1, 36, 9, 31, 31, 0, kRelu, kHardSigmoid);     // plain NCHW
    check(1, 44, 11, 27, 27, 8, kSilu, kSigmoid, true);  // nChw8c, padded
    check(1, 200, 48, 13, 13, 200, kSilu, kSigmoid);     // split (9600 MACs)
    check(1, 200, 48, 13, 13, 16, kRelu, kHardSigmoid);  // nChw16c, padded
    check(2, 72, 18, 23, 23, 72, kSilu, kSigmoid);       // two images
    // Wider products (72 and 240 outputs), run whole or split.
    check(1, 240, 72, 7, 7, 16, kRelu, kHardSigmoid);
    check(1, 240, 72, 7, 7, 16, kRelu, kHardSigmoid, true);
  }
  omp_set_num_threads(saved);
}

TEST(SqueezeExcite, RefusesMismatchedWeights) {
  SqueezeExciteParams p;
  p.n = 1;
  p.channels = 4;
  p.hw = 4;
  p.squeezed = 2;
  p.w1.assign(8, 0.0f);
  p.b1.assign(2, 0.0f);
  p.w2.assign(7, 0.0f); // needs 8
  p.b2.assign(4, 0.0f);
  EXPECT_FALSE(createSqueezeExcite(p));
}

} // namespace
