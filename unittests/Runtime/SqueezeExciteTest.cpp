//===- SqueezeExciteTest.cpp - The fused SE block vs. a loop --------------===//
//
// The CPU schedule's squeeze-and-excitation kernel against the block
// written out in double: global average pool, 1x1 conv + activation, 1x1
// conv + gate, x times the gate, for MobileNetV3's (relu, hard sigmoid)
// and EfficientNet's (SiLU, sigmoid) activations, on plain NCHW, nChw16c
// with padded channels (40 of 48), nChw8c and NHWC, two images; and at
// batch 1 on 1-3 threads, where the passes over x split pixels (also
// inside a block and inside one NHWC block) and the products run whole on
// every thread or split by channel. Folded into the 1x1 projection after
// it, at batch 1 and for several images (each scaling its own weights).
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
#include <string>
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

// The SE block folded into its 1x1 projection (batch 1): proj(x * gate)
// + bias (+ residual) against the same block in double, nChw16c (input
// and output channels padded) and NHWC (output blocks partly masked),
// with pixel counts that leave tails after the 8-16 pixel tiles.
void checkProject(int64_t c, int64_t s, int64_t h, int64_t w, int64_t block,
                  int64_t cout, bool residual, bool splitProducts = false,
                  int64_t n = 1) {
  if (!gopt::runtime::cpu::squeezeExciteProjectEnabled())
    GTEST_SKIP() << "no AVX-512F or GOPT_SE_PROJECT=0";
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  SqueezeExciteParams p;
  p.n = n;
  p.channels = c;
  p.hw = h * w;
  p.block = block;
  p.squeezed = s;
  p.act1 = SeActivation{SeActivation::kSilu};
  p.act2 = SeActivation{SeActivation::kSigmoid};
  p.splitProducts = splitProducts;
  for (int64_t i = 0; i < s * c; ++i) {
    p.w1.push_back(u(rng));
    p.w2.push_back(u(rng));
  }
  for (int64_t i = 0; i < s; ++i)
    p.b1.push_back(u(rng));
  for (int64_t i = 0; i < c; ++i)
    p.b2.push_back(u(rng));
  p.projOut = cout;
  for (int64_t i = 0; i < cout * c; ++i)
    p.projW.push_back(u(rng));
  for (int64_t i = 0; i < cout; ++i)
    p.projBias.push_back(u(rng));
  p.residual = residual;
  SqueezeExciteParams kept = p;
  const int64_t hw = h * w;
  const bool nhwc = block == c;
  const int64_t inC = nhwc ? c : (c + 15) / 16 * 16;
  const int64_t outC = nhwc ? cout : (cout + 15) / 16 * 16;
  // Image i's channel k, pixel q.
  auto atIn = [&](int64_t i, int64_t k, int64_t q) {
    return i * inC * hw +
           (nhwc ? q * c + k : ((k / 16) * hw + q) * 16 + k % 16);
  };
  auto atOut = [&](int64_t i, int64_t k, int64_t q) {
    return i * outC * hw +
           (nhwc ? q * cout + k : ((k / 16) * hw + q) * 16 + k % 16);
  };
  // Padding channels of x hold NaN: they must not reach the result.
  std::vector<float> x(n * inC * hw, NAN), r(n * outC * hw, 0.0f),
      y(n * outC * hw, NAN);
  std::vector<double> plain(n * c * hw), res(n * cout * hw, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t q = 0; q < hw; ++q)
        plain[(i * c + k) * hw + q] = x[atIn(i, k, q)] = u(rng);
  if (residual)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < cout; ++k)
        for (int64_t q = 0; q < hw; ++q)
          res[(i * cout + k) * hw + q] = r[atOut(i, k, q)] = u(rng);
  std::unique_ptr<Kernel> kernel = createSqueezeExcite(std::move(p));
  ASSERT_TRUE(kernel);
  std::vector<Tensor> in = {
      Tensor::view(DType::kF32, {static_cast<int64_t>(x.size())}, x.data())};
  if (residual)
    in.push_back(
        Tensor::view(DType::kF32, {static_cast<int64_t>(r.size())}, r.data()));
  std::vector<Tensor> out = {
      Tensor::view(DType::kF32, {static_cast<int64_t>(y.size())}, y.data())};
  ASSERT_TRUE(kernel->run(in, out).ok());
  for (int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE("image " + std::to_string(i));
    const double *xi = plain.data() + i * c * hw;
    const double *ri = res.data() + i * cout * hw;
    std::vector<double> mean(c, 0.0), hid(s), gate(c);
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t q = 0; q < hw; ++q)
        mean[k] += xi[k * hw + q];
      mean[k] /= hw;
    }
    for (int64_t j = 0; j < s; ++j) {
      double v = kept.b1[j];
      for (int64_t k = 0; k < c; ++k)
        v += double(kept.w1[j * c + k]) * mean[k];
      hid[j] = act(kept.act1, v);
    }
    for (int64_t k = 0; k < c; ++k) {
      double v = kept.b2[k];
      for (int64_t j = 0; j < s; ++j)
        v += double(kept.w2[k * s + j]) * hid[j];
      gate[k] = act(kept.act2, v);
    }
    for (int64_t o = 0; o < outC; ++o)
      for (int64_t q = 0; q < hw; ++q) {
        double want = 0.0;
        if (o < cout) {
          want = kept.projBias[o] + ri[o * hw + q];
          for (int64_t k = 0; k < c; ++k)
            want += double(kept.projW[o * c + k]) * gate[k] * xi[k * hw + q];
        }
        ASSERT_NEAR(y[atOut(i, o, q)], want, 1e-4)
            << "channel " << o << " pixel " << q;
      }
  }
}

TEST(SqueezeExcite, FoldedIntoProjection) {
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    omp_set_num_threads(threads);
    checkProject(144, 6, 29, 29, 16, 24, true);  // EfficientNet 2.1-like
    checkProject(40, 10, 13, 11, 16, 80, false); // padded input channels
    checkProject(96, 4, 17, 17, 16, 40, false);  // 3 + 0 output blocks
    checkProject(72, 24, 23, 23, 72, 40, true);  // NHWC, masked last block
    checkProject(120, 32, 9, 9, 120, 112, false, true); // 3 + 3 + 1 blocks
    checkProject(32, 8, 31, 33, 32, 16, false);         // NHWC, one block
    // Several images, each with its own gate: three images of 7x9 (two
    // 48-pixel tiles each, the threads' ranges crossing images).
    checkProject(144, 6, 7, 9, 16, 24, true, false, 3);
    checkProject(72, 24, 7, 9, 72, 40, true, true, 3); // NHWC
    checkProject(40, 10, 13, 11, 16, 80, false, false, 2);
    // 1.1 MiB of gated weights an image: the images' weights in turns of
    // one (at most 2 MiB are kept at once).
    checkProject(1152, 48, 5, 5, 16, 240, true, false, 3);
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
