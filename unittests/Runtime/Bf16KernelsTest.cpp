//===- Bf16KernelsTest.cpp - bf16 on backend "cpu" vs. the reference ------===//
//
// Plans as --gopt-mixed-precision=type=bf16 writes them (bf16 conv/matmul
// with f32 biases, casts at the region's borders) must compute on "cpu"
// what the reference kernels compute, on oneDNN and the fast kernels where
// the CPU has bf16 kernels, and must still run (on the reference kernels)
// where it has none.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "gopt/runtime/CpuInfo.h"

#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

const DType F32 = DType::kF32;
const DType BF16 = DType::kBF16;

bool oneDnnHasBf16() { return cpuBf16Support() != Bf16Support::kReference; }

#define SKIP_WITHOUT_ONEDNN_BF16()                                             \
  if (!oneDnnHasBf16())                                                        \
  GTEST_SKIP() << "oneDNN has no bf16 kernels on this CPU (" << cpuIsaName()   \
               << "); Bf16Fallback covers it"

// bf16 results agree with the reference when every element is within
// `rel` of the largest magnitude: oneDNN rounds once where the reference
// rounds after each op, and sums in another order.
void expectCloseBf16(const Tensor &ref, const Tensor &cpu, float rel = 1e-2f) {
  ASSERT_EQ(ref.dtype(), cpu.dtype());
  ASSERT_EQ(ref.shape(), cpu.shape());
  Tensor r = ref.dtype() == BF16 ? toF32(ref) : ref;
  Tensor c = cpu.dtype() == BF16 ? toF32(cpu) : cpu;
  float scale = 0;
  for (int64_t i = 0; i < r.numElements(); ++i)
    scale = std::max(scale, std::abs(r.data<float>()[i]));
  ASSERT_GT(scale, 0.0f) << "a degenerate test: all zeros";
  int bad = 0;
  for (int64_t i = 0; i < r.numElements() && bad < 5; ++i) {
    float a = r.data<float>()[i], b = c.data<float>()[i];
    if (!(std::abs(a - b) <= rel * scale)) {
      ADD_FAILURE() << "element " << i << ": reference " << a << ", cpu " << b
                    << " (scale " << scale << ")";
      ++bad;
    }
  }
}

// A one-op plan; inputs listed in `constants` become CONSTANT tensors.
Plan onePlan(const std::string &kind, const AttrMap &attrs,
             const std::vector<Tensor> &inputs, const OutSpec &out,
             const std::vector<int> &constants, std::vector<Tensor> &fed) {
  PlanBuilder b(kind);
  std::vector<int> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    bool isConst = std::find(constants.begin(), constants.end(),
                             static_cast<int>(i)) != constants.end();
    if (isConst) {
      ins.push_back(b.addConstant("c" + std::to_string(i), inputs[i]));
    } else {
      ins.push_back(b.addInput("in" + std::to_string(i), inputs[i].dtype(),
                               inputs[i].shape()));
      fed.push_back(inputs[i]);
    }
  }
  int y = b.addOutput("y", out.dtype, out.shape);
  b.addOp(kind, "op", ins, {y}, attrs);
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  return *plan;
}

// Runs a one-op plan on "reference" and "cpu"; checks the implementation
// "cpu" picked and returns {reference, cpu} results.
std::pair<Tensor, Tensor> runBoth(const std::string &kind, const AttrMap &attrs,
                                  const std::vector<Tensor> &inputs,
                                  const OutSpec &out,
                                  const std::vector<int> &constants,
                                  const char *expectedImpl) {
  std::vector<Tensor> fed;
  Plan plan = onePlan(kind, attrs, inputs, out, constants, fed);
  RunResult ref = runPlan(plan, "reference", fed);
  RunResult cpu = runPlan(plan, "cpu", fed);
  if (ref.outputs.empty() || cpu.outputs.empty()) {
    ADD_FAILURE() << "no results";
    return {Tensor::allocate(out.dtype, out.shape),
            Tensor::allocate(out.dtype, out.shape)};
  }
  std::set<std::string> impls;
  for (const OpProfile &p : cpu.profiles)
    if (p.kind == kind)
      impls.insert(p.implementation);
  EXPECT_EQ(impls, std::set<std::string>{expectedImpl}) << kind;
  return {ref.outputs[0], cpu.outputs[0]};
}

void compareBf16(const std::string &kind, const AttrMap &attrs,
                 const std::vector<Tensor> &inputs, const OutSpec &out,
                 const std::vector<int> &constants = {}) {
  auto [ref, cpu] = runBoth(kind, attrs, inputs, out, constants, "onednn");
  expectCloseBf16(ref, cpu);
}

void expectSameBits(const Tensor &a, const Tensor &b) {
  ASSERT_EQ(a.byteSize(), b.byteSize());
  const uint16_t *pa = a.data<uint16_t>(), *pb = b.data<uint16_t>();
  int bad = 0;
  for (size_t i = 0; i < a.byteSize() / 2 && bad < 5; ++i)
    if (pa[i] != pb[i]) {
      ADD_FAILURE() << "16-bit word " << i << ": " << std::hex << pa[i]
                    << " != " << pb[i];
      ++bad;
    }
}

uint32_t bitsOf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}
float fromBits(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

//===----------------------------------------------------------------------===//
// cast
//===----------------------------------------------------------------------===//

TEST(Bf16Cast, RoundsToNearestEvenKeepsNaNAndInf) {
  // {f32 bits, bf16 bits}: ties go to the even mantissa, NaNs stay quiet
  // NaNs (even one whose payload is in the dropped bits), overflow rounds
  // to inf.
  const std::vector<std::pair<uint32_t, uint16_t>> cases = {
      {0x3f800000, 0x3f80}, // 1
      {0x3f808000, 0x3f80}, // 1 + 2^-8: a tie, down to the even 1
      {0x3f818000, 0x3f82}, // 1 + 3*2^-8: a tie, up to the even 1 + 2^-6
      {0x3f808001, 0x3f81}, // just above the tie
      {0x3f807fff, 0x3f80}, // just below it
      {0xbf818000, 0xbf82}, // negative ties
      {0x80000000, 0x8000}, // -0
      {0x00000001, 0x0000}, // the smallest denormal rounds to 0
      {0x7f7fffff, 0x7f80}, // the largest float rounds to inf
      {0x7f800000, 0x7f80}, // inf
      {0xff800000, 0xff80}, // -inf
      {0x7fc00000, 0x7fc0}, // quiet NaN
      {0x7f800001, 0x7fc0}, // signaling NaN, payload in the low bits
      {0xffa00001, 0xffe0}, // negative NaN
  };
  // Odd-sized and above the parallel threshold, so both threads and the
  // tail run; the cases repeat through it.
  const int64_t n = 100003;
  Tensor x = Tensor::allocate(F32, {n});
  for (int64_t i = 0; i < n; ++i)
    x.data<float>()[i] = fromBits(cases[i % cases.size()].first);
  auto [ref, cpu] = runBoth("cast", {}, {x}, {BF16, {n}}, {}, "fast");
  for (int64_t i = 0; i < n; ++i) {
    uint16_t expected = cases[i % cases.size()].second;
    if (cpu.data<uint16_t>()[i] != expected ||
        ref.data<uint16_t>()[i] != expected) {
      ADD_FAILURE() << std::hex << "f32 " << cases[i % cases.size()].first
                    << " -> cpu " << cpu.data<uint16_t>()[i] << ", reference "
                    << ref.data<uint16_t>()[i] << ", expected " << expected;
      break;
    }
  }
  // Random values of all magnitudes agree with floatToBf16 bit for bit.
  std::mt19937 rng(7);
  for (int64_t i = 0; i < n; ++i)
    x.data<float>()[i] = fromBits(static_cast<uint32_t>(rng()));
  auto [ref2, cpu2] = runBoth("cast", {}, {x}, {BF16, {n}}, {}, "fast");
  expectSameBits(ref2, cpu2);
  EXPECT_EQ(cpu2.data<uint16_t>()[12345], floatToBf16(x.data<float>()[12345]));
}

TEST(Bf16Cast, ToF32IsExactForEveryBitPattern) {
  Tensor x = Tensor::allocate(BF16, {65536});
  for (int64_t i = 0; i < 65536; ++i)
    x.data<uint16_t>()[i] = static_cast<uint16_t>(i);
  auto [ref, cpu] = runBoth("cast", {}, {x}, {F32, {65536}}, {}, "fast");
  for (int64_t i = 0; i < 65536; ++i) {
    uint32_t expected = static_cast<uint32_t>(i) << 16;
    if (bitsOf(cpu.data<float>()[i]) != expected) {
      ADD_FAILURE() << std::hex << "bf16 " << i << " -> "
                    << bitsOf(cpu.data<float>()[i]);
      break;
    }
  }
  expectSameBits(ref, cpu);
}

TEST(Bf16Cast, OtherTypePairsUseTheReference) {
  Tensor x = makeTensor<int32_t>(DType::kI32, {3}, {1, -2, 300});
  auto [ref, cpu] = runBoth("cast", {}, {x}, {BF16, {3}}, {}, "reference");
  expectSameBits(ref, cpu);
  EXPECT_EQ(bf16ToFloat(cpu.data<uint16_t>()[2]), 300.0f);
}

//===----------------------------------------------------------------------===//
// elementwise: the fast kernels compute in f32 like the reference, so the
// results are the same bits
//===----------------------------------------------------------------------===//

TEST(Bf16Elementwise, UnaryMatchesReferenceBitForBit) {
  Tensor x = toBf16(randomF32({3, 40001}, 1));
  for (int64_t i = 0; i < x.numElements(); i += 7) // beyond relu6's 6
    x.data<uint16_t>()[i] =
        floatToBf16(bf16ToFloat(x.data<uint16_t>()[i]) * 10);
  for (auto [kind, attrs] : std::vector<std::pair<std::string, AttrMap>>{
           {"relu", {}},
           {"relu6", {}},
           {"clip", {{"min", floatAttr(-0.25)}, {"max", floatAttr(0.5)}}}}) {
    auto [ref, cpu] = runBoth(kind, attrs, {x}, {BF16, {3, 40001}}, {}, "fast");
    expectSameBits(ref, cpu);
    if (kind == "relu") {
      EXPECT_EQ(cpu.data<uint16_t>()[7],
                x.data<uint16_t>()[7] & 0x8000 ? 0 : x.data<uint16_t>()[7]);
    }
  }
}

TEST(Bf16Elementwise, BinaryBroadcastsMatchReferenceBitForBit) {
  Tensor a = randomBf16({2, 16, 33, 35}, 2);
  struct Case {
    Tensor b;
    bool swapped;
  };
  std::vector<Case> cases = {{randomBf16({2, 16, 33, 35}, 3), false},
                             {randomBf16({16, 1, 1}, 4), false}, // per channel
                             {randomBf16({16, 1, 1}, 5), true},
                             {randomBf16({35}, 6), false}, // trailing vector
                             {randomBf16({}, 7), true}};   // scalar
  for (const char *kind : {"add", "sub", "mul"})
    for (const Case &c : cases) {
      std::vector<Tensor> ins =
          c.swapped ? std::vector<Tensor>{c.b, a} : std::vector<Tensor>{a, c.b};
      auto [ref, cpu] = runBoth(kind, {}, ins, {BF16, a.shape()}, {}, "fast");
      expectSameBits(ref, cpu);
    }
}

// Both operands broadcast, one along a block of dims and the other
// everywhere else (global_avg_pool's gradient: dy [N, 1, 1, C] times
// [1, H, W, 1]): the fast loops, the same bits.
TEST(Bf16Elementwise, TwoSidedBroadcastsMatchReferenceBitForBit) {
  Tensor dy = randomBf16({3, 1, 1, 40}, 8),
         spread = randomBf16({1, 5, 7, 1}, 9);
  Tensor rows = randomBf16({6, 1}, 10), cols = randomBf16({1, 9}, 11);
  for (const char *kind : {"mul", "sub", "div"}) {
    SCOPED_TRACE(kind);
    auto [ref, cpu] =
        runBoth(kind, {}, {dy, spread}, {BF16, {3, 5, 7, 40}}, {}, "fast");
    expectSameBits(ref, cpu);
    auto [ref2, cpu2] =
        runBoth(kind, {}, {spread, dy}, {BF16, {3, 5, 7, 40}}, {}, "fast");
    expectSameBits(ref2, cpu2);
    auto [ref3, cpu3] =
        runBoth(kind, {}, {rows, cols}, {BF16, {6, 9}}, {}, "fast");
    expectSameBits(ref3, cpu3);
  }
}

// NHWC global_avg_pool of bf16 (ResNet's head in mixed precision) on the
// fast loops: summed in double and rounded once, as the reference.
TEST(Bf16GlobalAvgPool, NhwcMatchesReferenceBitForBit) {
  auto [ref, cpu] = runBoth(
      "global_avg_pool", {{"data_format", stringAttr("NHWC")}},
      {randomBf16({4, 7, 7, 48}, 12)}, {BF16, {4, 1, 1, 48}}, {}, "fast");
  expectSameBits(ref, cpu);
}

//===----------------------------------------------------------------------===//
// oneDNN kernels
//===----------------------------------------------------------------------===//

TEST(Bf16OneDnn, ConvNhwcF32BiasReluConstantWeights) {
  SKIP_WITHOUT_ONEDNN_BF16();
  compareBf16(
      "conv2d",
      {{"padding", stringAttr("SAME")}, {"activation", stringAttr("relu")}},
      {randomBf16({2, 7, 9, 5}, 1), randomBf16({3, 3, 5, 8}, 2),
       randomF32({8}, 3)},
      {BF16, {2, 7, 9, 8}}, {1, 2});
}

TEST(Bf16OneDnn, ConvNchwBlockedVariableWeightsBf16Bias) {
  SKIP_WITHOUT_ONEDNN_BF16();
  compareBf16("conv2d",
              {{"data_format", stringAttr("NCHW")},
               {"filter_format", stringAttr("OIHW")},
               {"strides", intsAttr({2, 2})},
               {"pads", intsAttr({1, 1, 1, 1})},
               {"activation", stringAttr("sigmoid")}},
              {randomBf16({2, 16, 12, 11}, 4), randomBf16({32, 16, 3, 3}, 5),
               randomBf16({32}, 6)},
              {BF16, {2, 32, 6, 6}});
}

TEST(Bf16OneDnn, DepthwiseAndGroupedConv) {
  SKIP_WITHOUT_ONEDNN_BF16();
  compareBf16("conv2d",
              {{"groups", intAttr(16)},
               {"data_format", stringAttr("NCHW")},
               {"filter_format", stringAttr("OIHW")},
               {"padding", stringAttr("SAME")},
               {"activation", stringAttr("relu6")}},
              {randomBf16({1, 16, 9, 9}, 7), randomBf16({16, 1, 3, 3}, 8),
               randomF32({16}, 9)},
              {BF16, {1, 16, 9, 9}}, {1, 2});
  compareBf16("conv2d", {{"groups", intAttr(2)}},
              {randomBf16({2, 6, 6, 4}, 10), randomBf16({3, 3, 2, 6}, 11)},
              {BF16, {2, 4, 4, 6}}, {1});
}

// bf16 NHWC 3x3 convs of 32/64 channels (the MNIST CNN's 32->64 layer)
// on gopt's AMX forward kernel (SmallConvTraining.cpp) where the CPU has
// AMX: against the reference and oneDNN's (GOPT_AMX_CONV_FORWARD=0), both
// filter layouts, an f32, a bf16 and no bias, relu and none, widths whose
// last blocks read the tail copy (7: all of the image; 10 and 30: some
// blocks), 3 images.
TEST(Bf16OneDnn, AmxSmallConvForward) {
  SKIP_WITHOUT_ONEDNN_BF16();
  const bool amx =
      __builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-bf16");
  struct Case {
    const char *name;
    int64_t h, w, cin, cout;
    bool oihw;
    DType bias; // kInvalid: none
    bool relu;
  };
  uint32_t seed = 400;
  for (const Case &c :
       {Case{"HwioF32BiasRelu", 10, 10, 32, 64, false, F32, true},
        Case{"OihwBf16Bias", 9, 30, 64, 32, true, BF16, false},
        Case{"NoBiasRelu", 5, 7, 32, 32, false, DType::kInvalid, true}}) {
    SCOPED_TRACE(c.name);
    Shape filter =
        c.oihw ? Shape{c.cout, c.cin, 3, 3} : Shape{3, 3, c.cin, c.cout};
    std::vector<Tensor> inputs = {randomBf16({3, c.h, c.w, c.cin}, seed++),
                                  randomBf16(filter, seed++)};
    if (c.bias == F32)
      inputs.push_back(randomF32({c.cout}, seed++));
    else if (c.bias == BF16)
      inputs.push_back(randomBf16({c.cout}, seed++));
    AttrMap attrs;
    if (c.oihw)
      attrs["filter_format"] = stringAttr("OIHW");
    if (c.relu)
      attrs["activation"] = stringAttr("relu");
    const OutSpec out = {BF16, {3, c.h - 2, c.w - 2, c.cout}};
    auto [ref, cpu] =
        runBoth("conv2d", attrs, inputs, out, {}, amx ? "amx" : "onednn");
    expectCloseBf16(ref, cpu);
    setenv("GOPT_AMX_CONV_FORWARD", "0", 1);
    auto [ref2, onednn] = runBoth("conv2d", attrs, inputs, out, {}, "onednn");
    unsetenv("GOPT_AMX_CONV_FORWARD");
    expectCloseBf16(onednn, cpu);
  }
}

// The AMX conv with the 2x2 max_pool and NCHW transpose after it as one
// step (conv2d+max_pool+transpose, the MNIST CNN's forward): the conv's
// result and the pooled NCHW result the same bits as the AMX conv followed
// by the pool step (GOPT_AMX_CONV_POOL=0), and close to the reference and
// to oneDNN's conv (GOPT_AMX_CONV_FORWARD=0); an odd conv height (11 rows
// pooled to 5), 3 images.
TEST(Bf16OneDnn, AmxSmallConvPoolTranspose) {
  SKIP_WITHOUT_ONEDNN_BF16();
  const bool amx =
      __builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-bf16");
  const int64_t n = 3, h = 13, w = 12, cin = 32, cout = 64;
  PlanBuilder b("conv_pool");
  int x = b.addInput("x", BF16, {n, h, w, cin});
  int f = b.addInput("f", BF16, {3, 3, cin, cout});
  int bias = b.addInput("bias", F32, {cout});
  int conv = b.addOutput("conv", BF16, {n, h - 2, w - 2, cout});
  int pooled = b.addIntermediate("pooled", BF16, {n, 5, 5, cout});
  int nchw = b.addOutput("nchw", BF16, {n, cout, 5, 5});
  b.addOp("conv2d", "conv", {x, f, bias}, {conv},
          {{"activation", stringAttr("relu")}});
  b.addOp("max_pool", "pool", {conv}, {pooled},
          {{"kernel", intsAttr({2, 2})}, {"strides", intsAttr({2, 2})}});
  b.addOp("transpose", "t", {pooled}, {nchw},
          {{"perm", intsAttr({0, 3, 1, 2})}});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> inputs = {randomBf16({n, h, w, cin}, 500),
                                randomBf16({3, 3, cin, cout}, 501),
                                randomF32({cout}, 502)};
  RunResult ref = runPlan(*plan, "reference", inputs);
  RunResult fused = runPlan(*plan, "cpu", inputs);
  setenv("GOPT_AMX_CONV_POOL", "0", 1);
  RunResult separate = runPlan(*plan, "cpu", inputs);
  setenv("GOPT_AMX_CONV_FORWARD", "0", 1);
  RunResult onednn = runPlan(*plan, "cpu", inputs);
  unsetenv("GOPT_AMX_CONV_POOL");
  unsetenv("GOPT_AMX_CONV_FORWARD");
  ASSERT_EQ(fused.outputs.size(), 2u);
  ASSERT_EQ(separate.outputs.size(), 2u);
  ASSERT_EQ(onednn.outputs.size(), 2u);
  std::set<std::string> impls;
  for (const OpProfile &p : fused.profiles)
    impls.insert(p.kind + ":" + p.implementation);
  if (amx)
    EXPECT_TRUE(impls.count("conv2d+max_pool+transpose:amx+pool"))
        << "the fused step did not run";
  else
    EXPECT_FALSE(impls.count("conv2d+max_pool+transpose:amx+pool"));
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("result " + std::to_string(i));
    if (amx)
      expectSameBits(separate.outputs[i], fused.outputs[i]);
    expectCloseBf16(ref.outputs[i], fused.outputs[i]);
    expectCloseBf16(onednn.outputs[i], fused.outputs[i]);
  }
}

// The AMX conv + pool forward's threads claim 4 images at a time
// (GOPT_CONV_IMAGE_CLAIMS): on two threads, 11 images (the last claim
// short) give the same bits as the fixed shares of GOPT_CONV_IMAGE_CLAIMS=0,
// each image computed once (a skipped or repeated claim would leave or
// overwrite results), and both close to the reference.
TEST(Bf16OneDnn, AmxConvPoolImageClaimsMatchFixedShares) {
  SKIP_WITHOUT_ONEDNN_BF16();
  const int64_t n = 11, h = 12, w = 12, cin = 32, cout = 64;
  PlanBuilder b("conv_pool_claims");
  int x = b.addInput("x", BF16, {n, h, w, cin});
  int f = b.addInput("f", BF16, {3, 3, cin, cout});
  int conv = b.addOutput("conv", BF16, {n, h - 2, w - 2, cout});
  int pooled = b.addIntermediate("pooled", BF16, {n, 5, 5, cout});
  int nchw = b.addOutput("nchw", BF16, {n, cout, 5, 5});
  b.addOp("conv2d", "conv", {x, f}, {conv}, {});
  b.addOp("max_pool", "pool", {conv}, {pooled},
          {{"kernel", intsAttr({2, 2})}, {"strides", intsAttr({2, 2})}});
  b.addOp("transpose", "t", {pooled}, {nchw},
          {{"perm", intsAttr({0, 3, 1, 2})}});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> inputs = {randomBf16({n, h, w, cin}, 510),
                                randomBf16({3, 3, cin, cout}, 511)};
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  RunResult claims = runPlan(*plan, "cpu", inputs);
  setenv("GOPT_CONV_IMAGE_CLAIMS", "0", 1);
  RunResult shares = runPlan(*plan, "cpu", inputs);
  unsetenv("GOPT_CONV_IMAGE_CLAIMS");
  omp_set_num_threads(saved);
  RunResult ref = runPlan(*plan, "reference", inputs);
  ASSERT_EQ(claims.outputs.size(), 2u);
  ASSERT_EQ(shares.outputs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("result " + std::to_string(i));
    expectSameBits(shares.outputs[i], claims.outputs[i]);
    expectCloseBf16(ref.outputs[i], claims.outputs[i]);
  }
}

// bf16 2-D matmuls on gopt's own AMX tiles (AmxMatmul.cpp) against the
// reference and oneDNN's (GOPT_AMX_MATMUL=0): each transpose of either
// operand; op(A) over 2 MB (taken by 32-row blocks, 33 of them on two
// threads) and under (by 32-column blocks: 9 of them, a group of 8 and one);
// K in one chunk and in chunks of 256 and 64 (the sums kept in f32 between
// them); an 8 MB result (stored past the caches).
TEST(Bf16OneDnn, AmxMatmulBlocksAndTransposes) {
  SKIP_WITHOUT_ONEDNN_BF16();
  const bool amx =
      __builtin_cpu_supports("amx-tile") && __builtin_cpu_supports("amx-bf16");
  struct Case {
    const char *name;
    int64_t m, k, n;
    bool ta, tb;
  };
  uint32_t seed = 4400;
  for (const Case &c : {Case{"ByRowsTransposedB", 1056, 1024, 64, false, true},
                        Case{"ByColumns", 96, 64, 288, false, false},
                        Case{"ByColumnsStreamed", 512, 64, 8192, false, false},
                        Case{"TransposedAChunks", 64, 320, 288, true, false},
                        Case{"BothTransposed", 64, 96, 64, true, true}}) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> inputs = {
        randomBf16(c.ta ? Shape{c.k, c.m} : Shape{c.m, c.k}, seed++),
        randomBf16(c.tb ? Shape{c.n, c.k} : Shape{c.k, c.n}, seed++)};
    AttrMap attrs;
    if (c.ta)
      attrs["transpose_a"] = boolAttr(true);
    if (c.tb)
      attrs["transpose_b"] = boolAttr(true);
    const OutSpec out = {BF16, {c.m, c.n}};
    auto [ref, cpu] =
        runBoth("matmul", attrs, inputs, out, {}, amx ? "amx" : "onednn");
    expectCloseBf16(ref, cpu);
    setenv("GOPT_AMX_MATMUL", "0", 1);
    auto [ref2, onednn] = runBoth("matmul", attrs, inputs, out, {}, "onednn");
    unsetenv("GOPT_AMX_MATMUL");
    expectCloseBf16(onednn, cpu);
  }
}

TEST(Bf16OneDnn, MatmulPackedConstantAndVariableOperands) {
  SKIP_WITHOUT_ONEDNN_BF16();
  // A constant B is packed once; runPlan runs twice, so the packed copy
  // must persist.
  compareBf16("matmul", {{"transpose_b", boolAttr(true)}},
              {randomBf16({3, 300}, 1), randomBf16({64, 300}, 2)},
              {BF16, {3, 64}}, {1});
  compareBf16("matmul", {}, {randomBf16({5, 70}, 3), randomBf16({70, 40}, 4)},
              {BF16, {5, 40}}, {1});
  compareBf16(
      "matmul",
      {{"transpose_a", boolAttr(true)}, {"transpose_b", boolAttr(true)}},
      {randomBf16({2, 7, 5}, 5), randomBf16({2, 3, 7}, 6)}, {BF16, {2, 5, 3}});
}

TEST(Bf16OneDnn, MaxAndAvgPooling) {
  SKIP_WITHOUT_ONEDNN_BF16();
  AttrMap attrs = {{"kernel", intsAttr({3, 3})},
                   {"strides", intsAttr({2, 2})},
                   {"pads", intsAttr({1, 1, 1, 1})}};
  compareBf16("max_pool", attrs, {randomBf16({2, 9, 9, 3}, 1)},
              {BF16, {2, 5, 5, 3}});
  attrs["data_format"] = stringAttr("NCHW");
  compareBf16("avg_pool", attrs, {randomBf16({2, 16, 9, 9}, 2)},
              {BF16, {2, 16, 5, 5}});
  compareBf16("max_pool", attrs, {randomBf16({2, 16, 9, 9}, 3)},
              {BF16, {2, 16, 5, 5}});
}

TEST(Bf16OneDnn, InferenceBatchNorm) {
  SKIP_WITHOUT_ONEDNN_BF16();
  // oneDNN takes the statistics in f32: constant ones are converted once,
  // variable ones at every run.
  Tensor var = randomF32({16}, 4);
  for (int64_t i = 0; i < 16; ++i)
    var.data<float>()[i] = std::abs(var.data<float>()[i]) + 0.5f;
  std::vector<Tensor> ins = {randomBf16({2, 16, 5, 7}, 5), randomBf16({16}, 1),
                             randomBf16({16}, 2), randomBf16({16}, 3),
                             toBf16(var)};
  compareBf16("batch_norm", {{"data_format", stringAttr("NCHW")}}, ins,
              {BF16, {2, 16, 5, 7}}, {1, 2, 3, 4});
  ins[0] = randomBf16({2, 5, 7, 16}, 6);
  compareBf16("batch_norm", {}, ins, {BF16, {2, 5, 7, 16}});
  compareBf16("batch_norm", {}, {ins[0], ins[1], ins[2], ins[3], ins[4]},
              {BF16, {2, 5, 7, 16}}, {1, 3});
}

//===----------------------------------------------------------------------===//
// The schedule: bf16 activations stay blocked, conv+add+relu fuses
//===----------------------------------------------------------------------===//

AttrMap nchwConv(const char *activation = "none") {
  return {{"data_format", stringAttr("NCHW")},
          {"filter_format", stringAttr("OIHW")},
          {"pads", intsAttr({1, 1, 1, 1})},
          {"activation", stringAttr(activation)}};
}

// A ResNet-like chain: x (f32) -> [cast] -> conv+relu -> conv+relu -> conv
// -> add(first conv) -> relu -> max_pool -> conv -> add(pooled) -> relu ->
// mul(pooled) -> global_avg_pool -> flatten -> matmul -> [cast] -> y (f32).
// With `type` f32 there are no casts. The first residual is dead after its
// add (the sum accumulates in place); the second is the next conv's source
// and read again by the mul (the sum accumulates into a copy).
Plan residualChain(DType type) {
  PlanBuilder b("chain");
  uint32_t seed = 10;
  int x = b.addInput("x", F32, {-1, 16, 12, 12});
  // Small weights keep activations near 1 through the chain.
  auto weights = [&](const Shape &shape) {
    Tensor w = randomF32(shape, seed++);
    for (int64_t i = 0; i < w.numElements(); ++i)
      w.data<float>()[i] *= 0.15f;
    return b.addConstant("w" + std::to_string(seed),
                         type == BF16 ? toBf16(w) : w);
  };
  auto value = [&](const std::string &name, const Shape &shape) {
    return b.addIntermediate(name, type, shape);
  };
  int in = x;
  if (type == BF16) {
    in = value("x16", {-1, 16, 12, 12});
    b.addOp("cast", "cast_in", {x}, {in});
  }
  Shape s1 = {-1, 16, 12, 12}, s2 = {-1, 16, 6, 6};
  int c1 = value("c1", s1);
  b.addOp(
      "conv2d", "conv1",
      {in, weights({16, 16, 3, 3}), b.addConstant("b1", randomF32({16}, 1))},
      {c1}, nchwConv("relu"));
  int c2 = value("c2", s1);
  b.addOp(
      "conv2d", "conv2",
      {c1, weights({16, 16, 3, 3}), b.addConstant("b2", randomF32({16}, 2))},
      {c2}, nchwConv("relu"));
  int c3 = value("c3", s1);
  b.addOp("conv2d", "conv3", {c2, weights({16, 16, 3, 3})}, {c3}, nchwConv());
  int a1 = value("a1", s1);
  b.addOp("add", "add1", {c3, c1}, {a1});
  int r1 = value("r1", s1);
  b.addOp("relu", "relu1", {a1}, {r1});
  int p = value("p", s2);
  b.addOp("max_pool", "pool", {r1}, {p},
          {{"data_format", stringAttr("NCHW")},
           {"kernel", intsAttr({2, 2})},
           {"strides", intsAttr({2, 2})}});
  int c4 = value("c4", s2);
  b.addOp("conv2d", "conv4", {p, weights({16, 16, 3, 3})}, {c4}, nchwConv());
  int a2 = value("a2", s2);
  b.addOp("add", "add2", {p, c4}, {a2});
  int r2 = value("r2", s2);
  b.addOp("relu", "relu2", {a2}, {r2});
  int m = value("m", s2);
  b.addOp("mul", "mul", {r2, p}, {m});
  int g = value("g", {-1, 16, 1, 1});
  b.addOp("global_avg_pool", "gap", {m}, {g},
          {{"data_format", stringAttr("NCHW")}});
  int f = value("f", {-1, 16});
  b.addOp("flatten", "flatten", {g}, {f});
  int y = b.addOutput("y", F32, {-1, 10});
  int logits = type == BF16 ? value("logits", {-1, 10}) : y;
  b.addOp("matmul", "fc", {f, weights({16, 10})}, {logits});
  if (type == BF16)
    b.addOp("cast", "cast_out", {logits}, {y});
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  return *plan;
}

TEST(Bf16Schedule, ConvAddReluFusesAndActivationsStayBlocked) {
  SKIP_WITHOUT_ONEDNN_BF16();
  Plan plan = residualChain(BF16);
  std::vector<Tensor> in = {randomF32({2, 16, 12, 12}, 1)};
  RunResult cpu = runPlan(plan, "cpu", in, 2);
  RunResult ref = runPlan(plan, "reference", in, 2);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  ASSERT_EQ(ref.outputs.size(), 1u);
  expectCloseBf16(ref.outputs[0], cpu.outputs[0], 2e-2f);
  std::multiset<std::string> k = kinds(cpu);
  EXPECT_EQ(k.count("conv2d"), 2u); // with their own activation
  EXPECT_EQ(k.count("conv2d+add+relu"), 2u);
  EXPECT_EQ(k.count("relu"), 0u);
  EXPECT_EQ(k.count("add"), 0u);
  // From the first conv to the global pooling activations stay blocked:
  // the input's cast converts straight into oneDNN's layout (one oneDNN
  // reorder) and the second residual is copied for the sum (the mul reads
  // it again); oneDNN writes the pooled [N, C, 1, 1] plain, which the
  // flatten aliases. The logits' cast to the f32 output is a fast kernel.
  EXPECT_EQ(k.count("reorder"), 1u);
  for (const OpProfile &p : cpu.profiles) {
    if (p.kind.rfind("conv2d", 0) == 0 || p.kind == "max_pool" ||
        p.kind == "global_avg_pool" || p.kind == "matmul" ||
        p.name == "cast_in") {
      EXPECT_EQ(p.implementation, "onednn") << p.name;
    } else if (p.kind == "cast" || p.kind == "mul") {
      EXPECT_EQ(p.implementation, "fast") << p.name;
    } else if (p.kind == "flatten") {
      EXPECT_EQ(p.implementation, "alias");
    }
  }
}

// Largest magnitude of an f32 tensor.
float maxAbs(const Tensor &t) {
  float m = 0;
  for (int64_t i = 0; i < t.numElements(); ++i)
    m = std::max(m, std::abs(t.data<float>()[i]));
  return m;
}

TEST(Bf16Schedule, F32PathsKeepF32Accuracy) {
  // The same chain in f32 stays as exact as before (bf16 anywhere would
  // cost ~1e-3 of the scale), with the same fusions; its bf16 twin computes
  // the same function to bf16 accuracy.
  Plan plan = residualChain(F32);
  std::vector<Tensor> in = {randomF32({3, 16, 12, 12}, 2)};
  RunResult cpu = runPlan(plan, "cpu", in, 3);
  RunResult ref = runPlan(plan, "reference", in, 3);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  ASSERT_EQ(ref.outputs.size(), 1u);
  float scale = maxAbs(ref.outputs[0]);
  EXPECT_LT(maxAbsDiff(ref.outputs[0], cpu.outputs[0]), 1e-5f * scale);
  EXPECT_EQ(kinds(cpu).count("conv2d+add+relu"), 2u);
  for (const OpProfile &p : cpu.profiles)
    if (p.kind.rfind("conv2d", 0) == 0 || p.kind == "matmul") {
      // oneDNN's f32 kernels, direct or Winograd.
      EXPECT_EQ(p.implementation.rfind("onednn", 0), 0u) << p.name;
    }
  RunResult bf16 = runPlan(residualChain(BF16), "cpu", in, 3);
  ASSERT_EQ(bf16.outputs.size(), 1u);
  expectCloseBf16(ref.outputs[0], bf16.outputs[0], 5e-2f);
  EXPECT_GT(maxAbsDiff(ref.outputs[0], bf16.outputs[0]), 1e-4f * scale)
      << "the bf16 plan computed in f32";
}

TEST(Bf16Schedule, CastOfABlockedTensorIntoABf16Region) {
  SKIP_WITHOUT_ONEDNN_BF16();
  // f32 conv -> cast bf16 -> conv (bf16) -> cast f32 -> y: the first cast
  // converts the blocked f32 result into the same layout in bf16.
  PlanBuilder b("mixed");
  int x = b.addInput("x", F32, {-1, 16, 8, 8});
  int c1 = b.addIntermediate("c1", F32, {-1, 16, 8, 8});
  b.addOp("conv2d", "conv1",
          {x, b.addConstant("w1", randomF32({16, 16, 3, 3}, 1))}, {c1},
          nchwConv("relu"));
  int h = b.addIntermediate("h", BF16, {-1, 16, 8, 8});
  b.addOp("cast", "to_bf16", {c1}, {h});
  int c2 = b.addIntermediate("c2", BF16, {-1, 16, 8, 8});
  b.addOp("conv2d", "conv2",
          {h, b.addConstant("w2", randomBf16({16, 16, 3, 3}, 2)),
           b.addConstant("b2", randomF32({16}, 3))},
          {c2}, nchwConv());
  int y = b.addOutput("y", F32, {-1, 16, 8, 8});
  b.addOp("cast", "to_f32", {c2}, {y});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> in = {randomF32({2, 16, 8, 8}, 4)};
  RunResult cpu = runPlan(*plan, "cpu", in, 2);
  RunResult ref = runPlan(*plan, "reference", in, 2);
  ASSERT_EQ(cpu.outputs.size(), 1u);
  ASSERT_EQ(ref.outputs.size(), 1u);
  expectCloseBf16(ref.outputs[0], cpu.outputs[0]);
  std::multiset<std::string> k = kinds(cpu);
  EXPECT_EQ(k.count("reorder"), 1u) << "the input only";
  for (const OpProfile &p : cpu.profiles)
    if (p.kind == "cast") {
      EXPECT_EQ(p.implementation, "onednn") << p.name;
    }
}

//===----------------------------------------------------------------------===//
// Without AVX-512 oneDNN has no bf16 kernels: the reference kernels run
//===----------------------------------------------------------------------===//

// Runs in a fresh process where oneDNN is limited to AVX2 (it reads
// DNNL_MAX_CPU_ISA once, at its first use); returns the exit status.
int runLimitedToAvx2() {
  setenv("DNNL_MAX_CPU_ISA", "AVX2", 1);
  if (cpuBf16Support() != Bf16Support::kReference) {
    std::fprintf(stderr, "bf16 support not reported as reference (%s)\n",
                 cpuIsaName().c_str());
    return 1;
  }
  Plan plan = residualChain(BF16);
  std::vector<Tensor> in = {randomF32({2, 16, 12, 12}, 3)};
  RunResult cpu = runPlan(plan, "cpu", in, 2);
  RunResult ref = runPlan(plan, "reference", in, 2);
  if (cpu.outputs.size() != 1 || ref.outputs.size() != 1) {
    std::fprintf(stderr, "a session failed\n");
    return 1;
  }
  for (const OpProfile &p : cpu.profiles)
    if (p.kind.rfind("conv2d", 0) == 0 &&
        (p.kind != "conv2d" || p.implementation != "reference")) {
      std::fprintf(stderr, "%s ran as %s on %s\n", p.name.c_str(),
                   p.kind.c_str(), p.implementation.c_str());
      return 1;
    }
  // Reference convolutions and pooling; the fast elementwise kernels and
  // casts compute what the reference does: the same bits.
  if (std::memcmp(cpu.outputs[0].data(), ref.outputs[0].data(),
                  ref.outputs[0].byteSize()) != 0) {
    std::fprintf(stderr, "results differ from the reference backend\n");
    return 1;
  }
  std::fprintf(stderr, "ok\n");
  return 0;
}

TEST(Bf16Fallback, WithoutAvx512TheReferenceKernelsRun) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(runLimitedToAvx2()), ::testing::ExitedWithCode(0),
              "ok");
}

} // namespace
