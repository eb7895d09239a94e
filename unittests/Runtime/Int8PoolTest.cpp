//===- Int8PoolTest.cpp - dequantize + global average pool vs. a loop -----===//
//
// createDequantizeGlobalAvgPool against the mean of the dequantized values
// in double: s8 and u8, NHWC (64-channel blocks and a tail of channels)
// and NCHW, MobileNetV2's 1280x7x7 head, one pixel; within a few f32 ulps.
// Other layouts (blocked) and types are refused.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/Int8Pool.h"

#include "gopt/runtime/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using dnnl::memory;
using gopt::runtime::DType;
using gopt::runtime::Tensor;
using gopt::runtime::cpu::createDequantizeGlobalAvgPool;

namespace {

void check(int64_t n, int64_t c, int64_t h, int64_t w, bool isUnsigned,
           bool nhwc) {
  SCOPED_TRACE(::testing::Message()
               << n << "x" << c << "x" << h << "x" << w << " u8 " << isUnsigned
               << " nhwc " << nhwc);
  const memory::desc src(
      {n, c, h, w}, isUnsigned ? memory::data_type::u8 : memory::data_type::s8,
      nhwc ? memory::format_tag::nhwc : memory::format_tag::nchw);
  const float scale = 0.0371f;
  auto kernel = createDequantizeGlobalAvgPool(src, scale);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->outputDesc(),
            memory::desc({n, c, 1, 1}, memory::data_type::f32,
                         memory::format_tag::nchw));
  std::mt19937 rng(static_cast<unsigned>(n * c + h * w));
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> x(n * c * h * w);
  for (auto &v : x)
    v = static_cast<uint8_t>(byte(rng));
  std::vector<float> y(n * c, -1.0f);
  std::vector<Tensor> in = {Tensor::view(DType::kI8, {n, c, h, w}, x.data())};
  std::vector<Tensor> out = {Tensor::view(DType::kF32, {n, c, 1, 1}, y.data())};
  ASSERT_TRUE(kernel->run(in, out).ok());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch) {
      double sum = 0;
      for (int64_t p = 0; p < h * w; ++p) {
        const uint8_t v =
            x[nhwc ? (i * h * w + p) * c + ch : (i * c + ch) * h * w + p];
        sum += (isUnsigned ? double(v) : double(int8_t(v))) * scale;
      }
      const double want = sum / double(h * w);
      ASSERT_NEAR(y[i * c + ch], want, 4e-7 * std::fabs(want) + 1e-9)
          << "image " << i << " channel " << ch;
    }
}

TEST(Int8Pool, MatchesLoop) {
  if (!gopt::runtime::cpu::int8GlobalPoolEnabled())
    GTEST_SKIP() << "GOPT_INT8_GLOBAL_POOL=0";
  check(3, 1280, 7, 7, true, true); // MobileNetV2's head
  check(2, 1280, 7, 7, false, true);
  check(2, 100, 5, 3, false, true); // a 36-channel tail
  check(2, 13, 4, 4, true, true);   // only the tail
  check(2, 70, 1, 1, false, true);  // one pixel
  check(2, 24, 6, 5, false, false); // NCHW
  check(1, 8, 3, 3, true, false);
}

TEST(Int8Pool, RefusesOtherLayouts) {
  if (!gopt::runtime::cpu::int8GlobalPoolEnabled())
    GTEST_SKIP() << "GOPT_INT8_GLOBAL_POOL=0";
  EXPECT_FALSE(createDequantizeGlobalAvgPool(
      memory::desc({2, 32, 7, 7}, memory::data_type::s8,
                   memory::format_tag::nChw16c),
      1.0f));
  EXPECT_FALSE(createDequantizeGlobalAvgPool(
      memory::desc({2, 32, 7, 7}, memory::data_type::f32,
                   memory::format_tag::nhwc),
      1.0f));
}

} // namespace
