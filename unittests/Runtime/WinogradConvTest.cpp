//===- WinogradConvTest.cpp - Batch-1 wide Winograd vs. the reference -----===//
//
// gopt's own Winograd F(2x2, 3x3) (runtime/src/cpu/WinogradConv.cpp) runs
// one image's wide 3x3 convolutions (transformed filter over 1 MiB, output
// channels in blocks of 64, at least 36 2x2 tiles, or fewer where the
// machine reads its filter fast enough); it must compute what the
// reference kernel does, with bias, relu and a fused residual add, odd
// sizes (partial tiles, an odd number of channel blocks for two threads, a
// channel count that is no multiple of its 128-channel passes) and both
// filter layouts.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/WinogradConv.h"
#include "../../runtime/src/cpu/Avx512Lanes.h"
#include "../../runtime/src/cpu/MemoryBandwidth.h"
#include "TestUtil.h"

#include <cstdlib>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;
using gopt::runtime::cpu::measureStreamingReadGBps;
using gopt::runtime::cpu::streamingReadGBps;
using gopt::runtime::cpu::WinogradTiledConv;
using gopt::runtime::cpu::WinogradTiledShape;
using gopt::runtime::cpu::winogradWideFewTilesPays;

namespace {

const DType F32 = DType::kF32;

AttrMap convAttrs(const char *filterFormat, const char *activation) {
  return {{"data_format", stringAttr("NCHW")},
          {"filter_format", stringAttr(filterFormat)},
          {"pads", intsAttr({1, 1, 1, 1})},
          {"activation", stringAttr(activation)}};
}

// conv2d [+ add of a residual input + relu] at batch `n`: the conv step's
// outcome.
CpuOutcome runConv(int64_t cin, int64_t cout, int64_t h, int64_t w,
                   const char *filterFormat, bool bias, bool residual,
                   const char *activation = "none", int64_t n = 1) {
  PlanBuilder b("g");
  int x = b.addInput("x", F32, {n, cin, h, w});
  bool oihw = std::string(filterFormat) == "OIHW";
  Shape fshape = oihw ? Shape{cout, cin, 3, 3} : Shape{3, 3, cin, cout};
  // Scaled so results stay near 1 (the tolerance is absolute).
  Tensor filter = randomF32(fshape, 21);
  for (int64_t i = 0; i < filter.numElements(); ++i)
    filter.data<float>()[i] /= 16.0f;
  std::vector<int> ins = {x, b.addConstant("f", filter)};
  if (bias)
    ins.push_back(b.addConstant("bias", randomF32({cout}, 22)));
  std::vector<Tensor> inputs = {randomF32({n, cin, h, w}, 23)};
  Shape yshape = {n, cout, h, w};
  if (!residual) {
    int y = b.addOutput("y", F32, yshape);
    b.addOp("conv2d", "conv", ins, {y}, convAttrs(filterFormat, activation));
  } else {
    int r = b.addInput("r", F32, yshape);
    inputs.push_back(randomF32(yshape, 24));
    int c = b.addIntermediate("c", F32, yshape);
    b.addOp("conv2d", "conv", ins, {c}, convAttrs(filterFormat, "none"));
    int s = b.addIntermediate("s", F32, yshape);
    b.addOp("add", "add", {c, r}, {s});
    int y = b.addOutput("y", F32, yshape);
    b.addOp("relu", "relu", {s}, {y});
  }
  return cpuAgainstReference(b, inputs, "conv2d");
}

TEST(WinogradWide, MatchesReferenceOnOddShapes) {
  // 13x13: 7x7 tiles, the last row and column half outside the image;
  // 144 input channels: a 128-channel pass and a 16-channel one; 192 output
  // channels: 3 blocks over 2 threads.
  for (const char *format : {"OIHW", "HWIO"}) {
    CpuOutcome o = runConv(144, 192, 13, 13, format, /*bias=*/true,
                           /*residual=*/false, "relu");
    EXPECT_EQ(o.impl, "winograd-wide") << format;
    EXPECT_LT(o.maxDiff, 1e-4f) << format;
  }
  CpuOutcome noBias = runConv(256, 256, 14, 14, "OIHW", false, false);
  EXPECT_EQ(noBias.impl, "winograd-wide");
  EXPECT_LT(noBias.maxDiff, 1e-4f);
}

TEST(WinogradWide, FusesResidualAddAndRelu) {
  CpuOutcome o = runConv(256, 256, 14, 14, "OIHW", true, /*residual=*/true);
  EXPECT_EQ(o.impl, "winograd-wide");
  EXPECT_EQ(o.kind, "conv2d+add+relu");
  EXPECT_LT(o.maxDiff, 1e-4f);
}

// Below 36 tiles (7x7: 16) the direct kernel runs unless the filter
// streams fast (GOPT_STREAM_GBPS) or GOPT_CONV_WINOGRAD_WIDE=all;
// GOPT_CONV_WINOGRAD_WIDE=0 and
// GOPT_CONV_WINOGRAD=0 turn the kernel off; a filter of at most 1 MiB
// transformed (oneDNN's 2x3 kernel's) and output channels not in blocks of
// 64 are not taken.
TEST(WinogradWide, WhereItIsTaken) {
  // The direct kernel these fall back to is oneDNN's without gopt's batch-1
  // one (ConvBatch1Test covers that).
  setenv("GOPT_CONV_BATCH1", "0", 1);
  // 7x7 (16 tiles): by the machine's read rate (winogradWideFewTilesPays).
  setenv("GOPT_STREAM_GBPS", "10", 1);
  EXPECT_EQ(runConv(512, 512, 7, 7, "OIHW", true, false).impl, "onednn");
  setenv("GOPT_STREAM_GBPS", "200", 1);
  CpuOutcome fast = runConv(512, 512, 7, 7, "OIHW", true, false);
  EXPECT_EQ(fast.impl, "winograd-wide");
  EXPECT_LT(fast.maxDiff, 1e-4f);
  setenv("GOPT_STREAM_GBPS", "10", 1);
  setenv("GOPT_CONV_WINOGRAD_WIDE", "all", 1);
  CpuOutcome all = runConv(512, 512, 7, 7, "OIHW", true, true);
  EXPECT_EQ(all.impl, "winograd-wide");
  EXPECT_LT(all.maxDiff, 1e-4f);
  setenv("GOPT_CONV_WINOGRAD_WIDE", "0", 1);
  CpuOutcome off = runConv(256, 256, 14, 14, "OIHW", true, false);
  EXPECT_EQ(off.impl, "onednn");
  EXPECT_LT(off.maxDiff, 1e-4f);
  unsetenv("GOPT_CONV_WINOGRAD_WIDE");
  setenv("GOPT_CONV_WINOGRAD", "0", 1);
  EXPECT_EQ(runConv(256, 256, 14, 14, "OIHW", true, false).impl, "onednn");
  unsetenv("GOPT_CONV_WINOGRAD");
  // A filter of at most 1 MiB transformed: oneDNN's Winograd, run by
  // gopt's tiled kernel (below).
  EXPECT_EQ(runConv(64, 64, 28, 28, "OIHW", true, false).impl,
            "winograd-tiled");
  EXPECT_EQ(runConv(256, 240, 14, 14, "OIHW", true, false).impl, "onednn");
  unsetenv("GOPT_CONV_BATCH1");
  unsetenv("GOPT_STREAM_GBPS");
}

// A few-tile layer takes Winograd where reading its transformed filter is
// well under the direct kernel's arithmetic: ResNet-18's 512-channel 7x7
// layers on 2 threads at an AMD EPYC's 64 GB/s, not at an Intel Xeon's 23;
// a rate of 0 (not measured) never.
TEST(WinogradWide, FewTilesPayWhereTheFilterStreamsFast) {
  EXPECT_TRUE(winogradWideFewTilesPays(512, 512, 7, 7, 2, 64));
  EXPECT_FALSE(winogradWideFewTilesPays(512, 512, 7, 7, 2, 23));
  EXPECT_FALSE(winogradWideFewTilesPays(512, 512, 7, 7, 2, 0));
  EXPECT_FALSE(winogradWideFewTilesPays(512, 512, 7, 7, 0, 64));
  // One thread does half the arithmetic per second: 23 GB/s then suffices.
  EXPECT_TRUE(winogradWideFewTilesPays(512, 512, 7, 7, 1, 23));
  // A smaller image has less arithmetic per filter byte.
  EXPECT_FALSE(winogradWideFewTilesPays(512, 512, 3, 3, 2, 64));
}

// The read rate: measured (positive where AVX-512 runs the probe), or
// GOPT_STREAM_GBPS where that is a positive number.
TEST(MemoryBandwidth, MeasuredOrSet) {
  const double measured = measureStreamingReadGBps(size_t(8) << 20);
#ifdef GOPT_HAVE_AVX512_LANES
  if (avx512bwSupported())
    EXPECT_GT(measured, 0.1);
  else
#endif
    EXPECT_EQ(measured, 0);
  setenv("GOPT_STREAM_GBPS", "12.5", 1);
  EXPECT_EQ(streamingReadGBps(), 12.5);
  setenv("GOPT_STREAM_GBPS", "fast", 1);
  EXPECT_NE(streamingReadGBps(), 12.5);
  EXPECT_GE(streamingReadGBps(), 0);
  unsetenv("GOPT_STREAM_GBPS");
}

// gopt's Winograd for 3x3 stride-2 convolutions (WinogradStride2Conv): 25
// products per 2x2 output tile from a parity split of the taps. conv2d
// [+ add of a residual + relu] with strides 2, pads 1 at batch `n`.
// With `afterConv` the source comes from a stride-1 3x3 convolution, which
// oneDNN's Winograd kernel runs past batch 1 and leaves in nChw16c.
CpuOutcome runStride2(int64_t n, int64_t cin, int64_t cout, int64_t h,
                      const char *filterFormat, bool bias, bool residual,
                      const char *activation = "none", bool afterConv = false) {
  PlanBuilder b("g");
  int x = b.addInput("x", F32, {n, cin, h, h});
  if (afterConv) {
    Tensor lead = randomF32({cin, cin, 3, 3}, 35);
    for (int64_t i = 0; i < lead.numElements(); ++i)
      lead.data<float>()[i] /= 48.0f;
    int c0 = b.addIntermediate("c0", F32, {n, cin, h, h});
    b.addOp("conv2d", "lead", {x, b.addConstant("lead_f", lead)}, {c0},
            convAttrs("OIHW", "relu"));
    x = c0;
  }
  bool oihw = std::string(filterFormat) == "OIHW";
  Shape fshape = oihw ? Shape{cout, cin, 3, 3} : Shape{3, 3, cin, cout};
  Tensor filter = randomF32(fshape, 31);
  for (int64_t i = 0; i < filter.numElements(); ++i)
    filter.data<float>()[i] /= 16.0f;
  std::vector<int> ins = {x, b.addConstant("f", filter)};
  if (bias)
    ins.push_back(b.addConstant("bias", randomF32({cout}, 32)));
  std::vector<Tensor> inputs = {randomF32({n, cin, h, h}, 33)};
  const int64_t oh = (h - 1) / 2 + 1;
  Shape yshape = {n, cout, oh, oh};
  AttrMap attrs = convAttrs(filterFormat, residual ? "none" : activation);
  attrs["strides"] = intsAttr({2, 2});
  if (!residual) {
    int y = b.addOutput("y", F32, yshape);
    b.addOp("conv2d", "conv", ins, {y}, attrs);
  } else {
    int r = b.addInput("r", F32, yshape);
    inputs.push_back(randomF32(yshape, 34));
    int c = b.addIntermediate("c", F32, yshape);
    b.addOp("conv2d", "conv", ins, {c}, attrs);
    int s = b.addIntermediate("s", F32, yshape);
    b.addOp("add", "add", {c, r}, {s});
    int y = b.addOutput("y", F32, yshape);
    b.addOp("relu", "relu", {s}, {y});
  }
  return cpuAgainstReference(b, inputs, [](const OpProfile &p) {
    return p.kind.rfind("conv2d", 0) == 0 && p.name != "lead";
  });
}

// Sums and differences only: within float rounding of the reference at
// batch 1 and 2, in NHWC and nChw16c, both filter layouts, with and
// without bias, and with an odd result (27x27: the last tiles half outside).
TEST(WinogradStride2, MatchesReference) {
  for (const char *format : {"OIHW", "HWIO"}) {
    CpuOutcome o = runStride2(1, 256, 256, 28, format, /*bias=*/true,
                              /*residual=*/false, "relu");
    EXPECT_EQ(o.impl, "winograd-stride2") << format;
    EXPECT_LT(o.maxDiff, 1e-4f) << format;
  }
  CpuOutcome batch = runStride2(2, 256, 320, 28, "OIHW", false, false);
  EXPECT_EQ(batch.impl, "winograd-stride2");
  EXPECT_LT(batch.maxDiff, 1e-4f);
  CpuOutcome odd = runStride2(1, 256, 256, 54, "OIHW", true, false, "relu");
  EXPECT_EQ(odd.impl, "winograd-stride2");
  EXPECT_LT(odd.maxDiff, 1e-4f);
  // nChw16c source and result (after oneDNN's Winograd), as in ResNet-50
  // at batch 8: taken with GOPT_CONV_WINOGRAD_STRIDE2=all only.
  setenv("GOPT_CONV_WINOGRAD_STRIDE2", "all", 1);
  CpuOutcome blocked = runStride2(4, 256, 256, 12, "OIHW", true, false, "relu",
                                  /*afterConv=*/true);
  unsetenv("GOPT_CONV_WINOGRAD_STRIDE2");
  EXPECT_EQ(blocked.impl, "winograd-stride2");
  EXPECT_LT(blocked.maxDiff, 1e-4f);
  EXPECT_EQ(runStride2(4, 256, 256, 12, "OIHW", true, false, "relu", true).impl,
            "onednn");
}

TEST(WinogradStride2, FusesResidualAddAndRelu) {
  for (int64_t n : {1, 2}) {
    CpuOutcome o = runStride2(n, 256, 256, 28, "OIHW", true, /*residual=*/true);
    EXPECT_EQ(o.impl, "winograd-stride2") << n;
    EXPECT_EQ(o.kind, "conv2d+add+relu") << n;
    EXPECT_LT(o.maxDiff, 1e-4f) << n;
  }
}

// GOPT_CONV_WINOGRAD_STRIDE2=0 and GOPT_CONV_WINOGRAD=0 turn it off; a 7x7
// result (400 products per image where the direct kernel takes 441),
// fewer than 256 channels and output channels not in blocks of 64 are not
// taken.
TEST(WinogradStride2, WhereItIsTaken) {
  setenv("GOPT_CONV_BATCH1", "0", 1);
  setenv("GOPT_CONV_WINOGRAD_STRIDE2", "0", 1);
  CpuOutcome off = runStride2(1, 256, 256, 28, "OIHW", true, false);
  EXPECT_EQ(off.impl, "onednn");
  EXPECT_LT(off.maxDiff, 1e-4f);
  unsetenv("GOPT_CONV_WINOGRAD_STRIDE2");
  setenv("GOPT_CONV_WINOGRAD", "0", 1);
  EXPECT_EQ(runStride2(1, 256, 256, 28, "OIHW", true, false).impl, "onednn");
  unsetenv("GOPT_CONV_WINOGRAD");
  EXPECT_EQ(runStride2(2, 512, 512, 14, "OIHW", true, false).impl, "onednn");
  EXPECT_EQ(runStride2(1, 128, 128, 56, "OIHW", true, false).impl, "onednn");
  EXPECT_EQ(runStride2(1, 256, 288, 28, "OIHW", true, false).impl, "onednn");
  unsetenv("GOPT_CONV_BATCH1");
}

// gopt's tiled Winograd (WinogradTiledConv) on its own, against a direct
// loop: NHWC and nChw16c sources, a result written into a channel slice of
// a wider NHWC or nChw16c tensor (the channels around it untouched), odd
// sizes (tiles half outside the image, groups across images), bias, a
// residual sum and relu, both filter layouts.
TEST(WinogradTiled, MatchesDirectLoop) {
  if (!avx512fSupported())
    GTEST_SKIP() << "no AVX-512";
  struct Case {
    int64_t n, cin, cout, h, w;
    bool oihw, srcBlocked, dstBlocked;
    int64_t dstChannels, dstOffset;
    bool bias, sum, relu;
  };
  const Case cases[] = {
      {3, 16, 64, 13, 11, true, true, true, 128, 64, true, false, true},
      {1, 48, 192, 9, 9, false, false, false, 192, 0, false, false, false},
      {2, 32, 128, 7, 6, true, false, true, 160, 16, true, true, true},
      {5, 144, 64, 5, 5, true, true, false, 80, 8, true, true, false}};
  for (const Case &c : cases) {
    WinogradTiledShape s;
    s.n = c.n, s.cin = c.cin, s.cout = c.cout, s.h = c.h, s.w = c.w;
    s.oihw = c.oihw, s.srcBlocked = c.srcBlocked, s.dstBlocked = c.dstBlocked;
    s.dstChannels = c.dstChannels, s.dstOffset = c.dstOffset;
    s.bias = c.bias, s.sum = c.sum, s.relu = c.relu;
    Tensor filter = randomF32({c.cout * c.cin * 9}, 41);
    Tensor src = randomF32({c.n * c.h * c.w * c.cin}, 42);
    Tensor bias = randomF32({c.cout}, 43);
    Tensor dst = randomF32({c.n * c.h * c.w * c.dstChannels}, 44);
    const float *f = filter.data<float>(), *x = src.data<float>();
    auto srcAt = [&](int64_t n, int64_t y, int64_t xx, int64_t ch) {
      return c.srcBlocked
                 ? (((n * (c.cin / 16) + ch / 16) * c.h + y) * c.w + xx) * 16 +
                       ch % 16
                 : ((n * c.h + y) * c.w + xx) * c.cin + ch;
    };
    auto dstAt = [&](int64_t n, int64_t y, int64_t xx, int64_t ch) {
      return c.dstBlocked
                 ? (((n * (c.dstChannels / 16) + ch / 16) * c.h + y) * c.w +
                    xx) * 16 +
                       ch % 16
                 : ((n * c.h + y) * c.w + xx) * c.dstChannels + ch;
    };
    std::vector<float> want(dst.data<float>(),
                            dst.data<float>() + dst.numElements());
    for (int64_t n = 0; n < c.n; ++n)
      for (int64_t y = 0; y < c.h; ++y)
        for (int64_t xx = 0; xx < c.w; ++xx)
          for (int64_t o = 0; o < c.cout; ++o) {
            double acc = c.bias ? bias.data<float>()[o] : 0.0;
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                int64_t iy = y + ky - 1, ix = xx + kx - 1;
                if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w)
                  continue;
                for (int64_t i = 0; i < c.cin; ++i)
                  acc += double(x[srcAt(n, iy, ix, i)]) *
                         f[c.oihw ? ((o * c.cin + i) * 3 + ky) * 3 + kx
                                  : ((ky * 3 + kx) * c.cin + i) * c.cout + o];
              }
            float &out = want[dstAt(n, y, xx, c.dstOffset + o)];
            float value = static_cast<float>(acc) + (c.sum ? out : 0.0f);
            out = c.relu ? std::max(value, 0.0f) : value;
          }
    float scale = 0;
    for (float value : want)
      scale = std::max(scale, std::abs(value));
    // F(4x4, 3x3)'s transforms (entries up to 5 and 8) round more: about
    // 5e-6 of the largest output on these sums of up to 9 x 144 products,
    // against 3e-7 for F(2x2, 3x3).
    for (int tile : {2, 4}) {
      s.tile = tile;
      Tensor out = dst.clone();
      auto conv = WinogradTiledConv::create(s, f);
      ASSERT_NE(conv, nullptr);
      conv->run(x, c.bias ? bias.data<float>() : nullptr, out.data<float>());
      float worst = 0;
      for (int64_t i = 0; i < out.numElements(); ++i)
        worst = std::max(worst, std::abs(out.data<float>()[i] - want[i]));
      EXPECT_LT(worst, (tile == 2 ? 2e-6f : 2e-5f) * scale)
          << c.n << " " << c.cin << "->" << c.cout << " tile " << tile;
    }
  }
  // Not covered: output channels not in 64s, input channels not in 16s, a
  // blocked result's slice off a 16-channel boundary.
  WinogradTiledShape bad;
  bad.cin = 16, bad.cout = 48, bad.h = bad.w = 5;
  std::vector<float> f(48 * 16 * 9);
  EXPECT_EQ(WinogradTiledConv::create(bad, f.data()), nullptr);
  bad.cin = 8, bad.cout = 64;
  EXPECT_EQ(WinogradTiledConv::create(bad, f.data()), nullptr);
  bad.cin = 16, bad.dstBlocked = true, bad.dstChannels = 128, bad.dstOffset = 8;
  EXPECT_EQ(WinogradTiledConv::create(bad, f.data()), nullptr);
  bad.dstOffset = 0, bad.tile = 3;
  EXPECT_EQ(WinogradTiledConv::create(bad, f.data()), nullptr);
}

// F(4x4, 3x3) where it takes fewer products and each thread has tiles
// enough; GOPT_CONV_WINOGRAD_TILED=2x2 keeps F(2x2, 3x3).
TEST(WinogradTiled, OutputTile) {
  auto tile = [](int64_t n, int64_t size, int threads) {
    WinogradTiledShape s;
    s.n = n, s.cin = 64, s.cout = 64, s.h = s.w = size;
    return gopt::runtime::cpu::winogradTiledTile(s, threads);
  };
  EXPECT_EQ(tile(1, 56, 2), 4);  // 196 tiles, 0.56 of the products
  EXPECT_EQ(tile(1, 28, 2), 4);  // 49 tiles
  EXPECT_EQ(tile(1, 13, 2), 2);  // 16 tiles: 8 a thread
  EXPECT_EQ(tile(8, 13, 2), 4);  // 128 tiles, 0.73 of the products
  EXPECT_EQ(tile(8, 10, 2), 2);  // 3x3 tiles cover 12x12: 0.81
  EXPECT_EQ(tile(1, 28, 16), 2); // 3 tiles a thread
  setenv("GOPT_CONV_WINOGRAD_TILED", "2x2", 1);
  EXPECT_EQ(tile(1, 56, 2), 2);
  unsetenv("GOPT_CONV_WINOGRAD_TILED");
}

// A SqueezeNet fire module whose expand3x3 has output channels in 64s: it
// writes its slice of the concat on the tiled Winograd kernel, all images
// in one call, and computes what the reference does;
// GOPT_CONV_WINOGRAD_TILED=0 keeps oneDNN's kernels, one image at a time.
CpuOutcome runFireModule(int64_t n, int64_t h, const char *filterFormat) {
  PlanBuilder b("g");
  const int64_t cin = 32, squeeze = 16, e1 = 64, e3 = 64;
  int x = b.addInput("x", F32, {n, cin, h, h});
  bool oihw = std::string(filterFormat) == "OIHW";
  auto conv = [&](const char *name, int in, int64_t ci, int64_t co, int k,
                  uint32_t seed) {
    Tensor f =
        randomF32(oihw ? Shape{co, ci, k, k} : Shape{k, k, ci, co}, seed);
    for (int64_t i = 0; i < f.numElements(); ++i)
      f.data<float>()[i] /= 8.0f;
    int y = b.addIntermediate(std::string(name) + "_y", F32, {n, co, h, h});
    AttrMap attrs = convAttrs(filterFormat, "relu");
    if (k == 1)
      attrs["pads"] = intsAttr({0, 0, 0, 0});
    b.addOp(
        "conv2d", name,
        {in, b.addConstant(std::string(name) + "_f", f),
         b.addConstant(std::string(name) + "_b", randomF32({co}, seed + 1))},
        {y}, attrs);
    return y;
  };
  int sq = conv("squeeze", x, cin, squeeze, 1, 51);
  int a = conv("expand1x1", sq, squeeze, e1, 1, 53);
  int c = conv("expand3x3", sq, squeeze, e3, 3, 55);
  int cat = b.addOutput("cat", F32, {n, e1 + e3, h, h});
  b.addOp("concat", "concat", {a, c}, {cat}, {{"axis", intAttr(1)}});
  return cpuAgainstReference(
      b, {randomF32({n, cin, h, h}, 57)},
      [](const OpProfile &p) { return p.name.rfind("expand3x3", 0) == 0; });
}

TEST(WinogradTiled, FireModuleWritesIntoItsConcat) {
  if (!avx512fSupported())
    GTEST_SKIP() << "no AVX-512";
  for (int64_t n : {1, 3})
    for (const char *format : {"OIHW", "HWIO"}) {
      CpuOutcome o = runFireModule(n, 13, format);
      EXPECT_EQ(o.impl, "winograd-tiled-into-concat") << n << format;
      EXPECT_EQ(o.kind, "conv2d+concat") << n << format;
      EXPECT_LT(o.maxDiff, 1e-4f) << n << format;
    }
  setenv("GOPT_CONV_WINOGRAD_TILED", "0", 1);
  CpuOutcome off = runFireModule(3, 13, "OIHW");
  unsetenv("GOPT_CONV_WINOGRAD_TILED");
  EXPECT_NE(off.impl, "winograd-tiled-into-concat");
  EXPECT_NE(off.impl.find("into-concat"), std::string::npos) << off.impl;
  EXPECT_LT(off.maxDiff, 1e-4f);
}

// One image's 3x3 convolution where oneDNN takes a Winograd kernel (its
// 2x3 one at 64 channels, its 4x3 one at 128 x 28x28) runs on the tiled
// kernel in oneDNN's layouts, with a fused residual add and relu;
// GOPT_CONV_WINOGRAD_TILED=0 keeps oneDNN's.
TEST(WinogradTiled, RunsOneImagesWinogradLayers) {
  if (!avx512fSupported())
    GTEST_SKIP() << "no AVX-512";
  for (int64_t channels : {64, 128}) {
    CpuOutcome o =
        runConv(channels, channels, 28, 28, "OIHW", true, false, "relu");
    EXPECT_EQ(o.impl, "winograd-tiled") << channels;
    EXPECT_LT(o.maxDiff, 1e-4f) << channels;
    CpuOutcome sum = runConv(channels, channels, 28, 28, "HWIO", true,
                             /*residual=*/true);
    EXPECT_EQ(sum.impl, "winograd-tiled") << channels;
    EXPECT_EQ(sum.kind, "conv2d+add+relu") << channels;
    EXPECT_LT(sum.maxDiff, 1e-4f) << channels;
  }
  setenv("GOPT_CONV_WINOGRAD_TILED", "0", 1);
  CpuOutcome off = runConv(128, 128, 28, 28, "OIHW", true, false);
  unsetenv("GOPT_CONV_WINOGRAD_TILED");
  EXPECT_EQ(off.impl, "onednn-winograd");
  EXPECT_LT(off.maxDiff, 1e-4f);
}

// Past one image oneDNN's 4x3 kernel runs 512 x 512 channels at 7x7, and
// the tiled kernel leaves it there: its transformed filter (16 MiB in the
// F(2x2, 3x3) four 7x7 images take, 36 in F(4x4, 3x3)) would be read once
// per group of tiles. 256 x 256 (4 MiB) it takes.
TEST(WinogradTiled, LeavesFiltersOf16MiBToOneDnn) {
  if (!avx512fSupported())
    GTEST_SKIP() << "no AVX-512";
  CpuOutcome wide = runConv(512, 512, 7, 7, "OIHW", true, false, "relu", 4);
  EXPECT_EQ(wide.impl, "onednn-winograd");
  EXPECT_LT(wide.maxDiff, 1e-4f);
  CpuOutcome taken = runConv(256, 256, 7, 7, "OIHW", true, false, "relu", 4);
  EXPECT_EQ(taken.impl, "winograd-tiled");
  EXPECT_LT(taken.maxDiff, 1e-4f);
}

} // namespace
