//===- CudaKernelsTest.cpp - CUDA kernels vs. the reference backend -------===//
//
// Needs a GPU: every test skips with "no CUDA device" without one. TF32 is
// off (GOPT_CUDA_TF32=0) so that f32 results match the reference to 1e-3.
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>

namespace gopt::runtime::testing {
namespace {

class Cuda : public CudaDeviceTest {};

// Runs the op on both backends and compares every result.
void expectMatches(const std::string &kind, const AttrMap &attrs,
                   const std::vector<Tensor> &inputs,
                   const std::vector<OutSpec> &outs,
                   const std::vector<int> &constants = {}, double rtol = 1e-3,
                   double atol = 1e-4) {
  auto ref = runOp(kind, attrs, inputs, outs, "reference", constants);
  ASSERT_TRUE(ref.ok()) << ref.status().toString();
  auto got = runOp(kind, attrs, inputs, outs, "cuda", constants);
  ASSERT_TRUE(got.ok()) << kind << ": " << got.status().toString();
  for (size_t i = 0; i < outs.size(); ++i)
    EXPECT_TRUE(allClose((*got)[i], (*ref)[i], rtol, atol))
        << kind << " result " << i;
}

Tensor randomPositive(const Shape &shape, uint32_t seed) {
  Tensor t = randomF32(shape, seed);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = std::fabs(t.data<float>()[i]) + 0.1f;
  return t;
}

Tensor toHalf(const Tensor &f, DType type) {
  Tensor h = Tensor::allocate(type, f.shape());
  for (int64_t i = 0; i < f.numElements(); ++i)
    h.data<uint16_t>()[i] = type == DType::kF16
                                ? floatToHalf(f.data<float>()[i])
                                : floatToBf16(f.data<float>()[i]);
  return h;
}

Tensor randomInt(DType type, const Shape &shape, uint32_t seed, int lo,
                 int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  Tensor t = Tensor::allocate(type, shape);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    int v = dist(rng);
    if (type == DType::kI32)
      t.data<int32_t>()[i] = v;
    else
      t.data<int64_t>()[i] = v;
  }
  return t;
}

TEST_F(Cuda, BinaryOpsWithBroadcasting) {
  Tensor a = randomF32({2, 3, 4, 5}, 1), b = randomPositive({3, 1, 5}, 2);
  Tensor same = randomPositive({2, 3, 4, 5}, 3);
  for (const char *kind :
       {"add", "sub", "mul", "div", "max", "min", "squared_difference"}) {
    expectMatches(kind, {}, {a, b}, {{DType::kF32, {2, 3, 4, 5}}});
    expectMatches(kind, {}, {a, same}, {{DType::kF32, {2, 3, 4, 5}}});
  }
  Tensor base = randomPositive({4, 6}, 4), exps = randomF32({6}, 5);
  expectMatches("pow", {}, {base, exps}, {{DType::kF32, {4, 6}}});
}

TEST_F(Cuda, BinaryOpsIntegerAndHalf) {
  for (DType t : {DType::kI32, DType::kI64}) {
    Tensor a = randomInt(t, {3, 4}, 6, -50, 50), b = randomInt(t, {4}, 7, 1, 9);
    for (const char *kind : {"add", "sub", "mul", "div", "max", "min"})
      expectMatches(kind, {}, {a, b}, {{t, {3, 4}}});
  }
  Tensor a = toHalf(randomF32({8, 16}, 8), DType::kF16);
  Tensor b = toHalf(randomF32({16}, 9), DType::kF16);
  expectMatches("add", {}, {a, b}, {{DType::kF16, {8, 16}}}, {}, 2e-3, 2e-3);
  Tensor c = toHalf(randomF32({8, 16}, 10), DType::kBF16);
  Tensor d = toHalf(randomF32({8, 16}, 11), DType::kBF16);
  expectMatches("mul", {}, {c, d}, {{DType::kBF16, {8, 16}}}, {}, 1e-2, 1e-2);
}

TEST_F(Cuda, IntegerDivisionByZeroIsAnError) {
  Tensor a = randomInt(DType::kI32, {4}, 1, 1, 5);
  Tensor b = makeTensor<int32_t>(DType::kI32, {4}, {1, 0, 2, 3});
  auto r = runOp("div", {}, {a, b}, {{DType::kI32, {4}}}, "cuda");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("division by zero"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("div_op"), std::string::npos);
}

TEST_F(Cuda, UnaryOps) {
  Tensor x = randomF32({3, 7, 11}, 12), pos = randomPositive({3, 7, 11}, 13);
  for (const char *kind :
       {"relu", "relu6", "sigmoid", "tanh", "exp", "neg", "abs", "erf"})
    expectMatches(kind, {}, {x}, {{DType::kF32, {3, 7, 11}}});
  for (const char *kind : {"log", "sqrt", "rsqrt"})
    expectMatches(kind, {}, {pos}, {{DType::kF32, {3, 7, 11}}});
  expectMatches("gelu", {}, {x}, {{DType::kF32, {3, 7, 11}}});
  expectMatches("gelu", {{"approximate", stringAttr("tanh")}}, {x},
                {{DType::kF32, {3, 7, 11}}});
  expectMatches("leaky_relu", {{"alpha", floatAttr(0.2)}}, {x},
                {{DType::kF32, {3, 7, 11}}});
  expectMatches("clip", {{"min", floatAttr(-0.3)}, {"max", floatAttr(0.4)}},
                {x}, {{DType::kF32, {3, 7, 11}}});
  Tensor i = randomInt(DType::kI32, {20}, 14, -9, 9);
  for (const char *kind : {"relu", "relu6", "neg", "abs"})
    expectMatches(kind, {}, {i}, {{DType::kI32, {20}}});
}

TEST_F(Cuda, BiasAddAndCast) {
  Tensor x = randomF32({2, 5, 3, 3}, 15), bias = randomF32({5}, 16);
  expectMatches("bias_add", {{"data_format", stringAttr("NCHW")}}, {x, bias},
                {{DType::kF32, {2, 5, 3, 3}}});
  Tensor bias3 = randomF32({3}, 17);
  expectMatches("bias_add", {}, {x, bias3}, {{DType::kF32, {2, 5, 3, 3}}});
  Tensor f = randomF32({64}, 18);
  for (int64_t k = 0; k < 64; ++k)
    f.data<float>()[k] *= 300.f; // exercises saturation of i8
  for (DType to : {DType::kF16, DType::kBF16, DType::kI8, DType::kI32,
                   DType::kI64, DType::kBool, DType::kU8})
    expectMatches("cast", {}, {f}, {{to, {64}}}, {}, 1e-2, 1e-2);
  Tensor ints = randomInt(DType::kI64, {32}, 19, -1000, 1000);
  for (DType to : {DType::kF32, DType::kI32, DType::kBool})
    expectMatches("cast", {}, {ints}, {{to, {32}}});
}

TEST_F(Cuda, DataMovement) {
  Tensor x = randomF32({2, 3, 4, 5}, 20);
  expectMatches("transpose", {{"perm", intsAttr({0, 3, 1, 2})}}, {x},
                {{DType::kF32, {2, 5, 3, 4}}});
  expectMatches("transpose", {{"perm", intsAttr({3, 2, 1, 0})}}, {x},
                {{DType::kF32, {5, 4, 3, 2}}});
  expectMatches("slice",
                {{"starts", intsAttr({0, 1, 1, 0})},
                 {"ends", intsAttr({2, 3, 4, 5})},
                 {"steps", intsAttr({1, 1, 2, 2})}},
                {x}, {{DType::kF32, {2, 2, 2, 3}}});
  expectMatches("slice",
                {{"starts", intsAttr({1, 2, 9, 0})},
                 {"ends", intsAttr({-1, 0, -1, 5})},
                 {"steps", intsAttr({-1, -1, -2, 2})}},
                {x}, {{DType::kF32, {2, 2, 2, 3}}});
  Tensor y = randomF32({2, 1, 4, 5}, 21), z = randomF32({2, 2, 4, 5}, 22);
  expectMatches("concat", {{"axis", intAttr(1)}}, {x, y, z},
                {{DType::kF32, {2, 6, 4, 5}}});
  expectMatches("concat", {{"axis", intAttr(-1)}}, {x, x},
                {{DType::kF32, {2, 3, 4, 10}}});
  for (const char *mode : {"constant", "reflect", "edge"})
    expectMatches("pad",
                  {{"pads", intsAttr({0, 0, 1, 2, 2, 1, 0, 3})},
                   {"mode", stringAttr(mode)},
                   {"value", floatAttr(1.5)}},
                  {x}, {{DType::kF32, {2, 6, 7, 8}}});
  for (const char *kind : {"identity", "stop_gradient", "dropout"})
    expectMatches(kind, {}, {x}, {{DType::kF32, {2, 3, 4, 5}}});
  expectMatches("reshape", {{"shape", intsAttr({6, -1})}}, {x},
                {{DType::kF32, {6, 20}}});
  expectMatches("flatten", {{"axis", intAttr(2)}}, {x},
                {{DType::kF32, {6, 20}}});
  expectMatches("shape", {}, {x}, {{DType::kI64, {4}}});
}

TEST_F(Cuda, Reductions) {
  Tensor x = randomF32({4, 5, 6, 7}, 23);
  for (const char *kind : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    expectMatches(kind, {{"axes", intsAttr({1, 3})}}, {x},
                  {{DType::kF32, {4, 6}}});
    expectMatches(kind,
                  {{"axes", intsAttr({-1})}, {"keep_dims", boolAttr(true)}},
                  {x}, {{DType::kF32, {4, 5, 6, 1}}});
    expectMatches(kind, {{"axes", intsAttr({})}}, {x}, {{DType::kF32, {}}});
  }
  Tensor big = randomF32({3, 100000}, 24); // block-per-output path
  expectMatches("reduce_sum", {{"axes", intsAttr({1})}}, {big},
                {{DType::kF32, {3}}}, {}, 1e-3, 1e-2);
  Tensor ints = randomInt(DType::kI64, {6, 9}, 25, -100, 100);
  expectMatches("reduce_sum", {{"axes", intsAttr({0})}}, {ints},
                {{DType::kI64, {9}}});
  Tensor img = randomF32({2, 7, 7, 16}, 26);
  expectMatches("global_avg_pool", {}, {img}, {{DType::kF32, {2, 1, 1, 16}}});
  expectMatches("global_avg_pool", {{"data_format", stringAttr("NCHW")}}, {img},
                {{DType::kF32, {2, 7, 1, 1}}});
}

TEST_F(Cuda, SoftmaxAndLogSoftmax) {
  Tensor x = randomF32({4, 10, 6}, 27);
  for (const char *kind : {"softmax", "log_softmax"}) {
    expectMatches(kind, {}, {x}, {{DType::kF32, {4, 10, 6}}});
    expectMatches(kind, {{"axis", intAttr(1)}}, {x},
                  {{DType::kF32, {4, 10, 6}}});
  }
}

TEST_F(Cuda, Pooling) {
  Tensor nhwc = randomF32({2, 9, 9, 4}, 28), nchw = randomF32({2, 4, 9, 9}, 29);
  struct Case {
    AttrMap attrs;
    Shape outNhwc;
  };
  std::vector<Case> cases = {
      {{{"kernel", intsAttr({3, 3})},
        {"strides", intsAttr({2, 2})},
        {"pads", intsAttr({1, 1, 1, 1})}},
       {2, 5, 5, 4}}, // symmetric: cuDNN
      {{{"kernel", intsAttr({2, 2})},
        {"strides", intsAttr({2, 2})},
        {"padding", stringAttr("SAME")}},
       {2, 5, 5, 4}}, // asymmetric SAME: own kernel
      {{{"kernel", intsAttr({3, 3})},
        {"strides", intsAttr({2, 2})},
        {"ceil_mode", boolAttr(true)}},
       {2, 4, 4, 4}}, // ceil mode: own kernel
  };
  for (const char *kind : {"max_pool", "avg_pool"})
    for (const Case &c : cases)
      for (bool include : {false, true}) {
        AttrMap attrs = c.attrs;
        if (std::string(kind) == "avg_pool")
          attrs["count_include_pad"] = boolAttr(include);
        expectMatches(kind, attrs, {nhwc}, {{DType::kF32, c.outNhwc}});
        attrs["data_format"] = stringAttr("NCHW");
        Shape o = c.outNhwc;
        expectMatches(kind, attrs, {nchw},
                      {{DType::kF32, {o[0], o[3], o[1], o[2]}}});
      }
}

TEST_F(Cuda, BatchNormInference) {
  Tensor x = randomF32({2, 6, 5, 5}, 30);
  Tensor scale = randomF32({6}, 31), offset = randomF32({6}, 32);
  Tensor mean = randomF32({6}, 33), var = randomPositive({6}, 34);
  expectMatches(
      "batch_norm",
      {{"data_format", stringAttr("NCHW")}, {"epsilon", floatAttr(1e-5)}},
      {x, scale, offset, mean, var}, {{DType::kF32, {2, 6, 5, 5}}},
      {1, 2, 3, 4});
  Tensor nhwc = randomF32({2, 5, 5, 6}, 35);
  expectMatches("batch_norm", {}, {nhwc, scale, offset, mean, var},
                {{DType::kF32, {2, 5, 5, 6}}});
  Tensor rank2 = randomF32({7, 6}, 36); // own kernel
  expectMatches("batch_norm", {}, {rank2, scale, offset, mean, var},
                {{DType::kF32, {7, 6}}});
}

TEST_F(Cuda, Conv2dLayoutsPaddingGroupsAndActivations) {
  Tensor nchw = randomF32({2, 4, 9, 9}, 37), nhwc = randomF32({2, 9, 9, 4}, 38);
  Tensor hwio = randomF32({3, 3, 4, 8}, 39), oihw = randomF32({8, 4, 3, 3}, 40);
  Tensor bias = randomF32({8}, 41);
  for (const char *act : {"none", "relu", "relu6", "sigmoid"}) {
    AttrMap base = {{"strides", intsAttr({2, 2})},
                    {"pads", intsAttr({1, 1, 1, 1})},
                    {"activation", stringAttr(act)}};
    AttrMap a = base;
    a["data_format"] = stringAttr("NCHW");
    a["filter_format"] = stringAttr("OIHW");
    expectMatches("conv2d", a, {nchw, oihw, bias},
                  {{DType::kF32, {2, 8, 5, 5}}}, {1, 2});
    a["filter_format"] = stringAttr("HWIO");
    expectMatches("conv2d", a, {nchw, hwio}, {{DType::kF32, {2, 8, 5, 5}}},
                  {1});
    AttrMap b = base;
    expectMatches("conv2d", b, {nhwc, hwio, bias},
                  {{DType::kF32, {2, 5, 5, 8}}}, {1, 2});
    b["filter_format"] = stringAttr("OIHW");
    expectMatches("conv2d", b, {nhwc, oihw, bias},
                  {{DType::kF32, {2, 5, 5, 8}}}, {1, 2});
  }
  // SAME with an even kernel: asymmetric padding; the filter as an input.
  Tensor k2 = randomF32({2, 2, 4, 8}, 42);
  expectMatches("conv2d", {{"padding", stringAttr("SAME")}}, {nhwc, k2, bias},
                {{DType::kF32, {2, 9, 9, 8}}});
  // Depthwise (groups = Cin) with dilation.
  Tensor dw = randomF32({3, 3, 1, 4}, 43), dwBias = randomF32({4}, 44);
  expectMatches("conv2d",
                {{"groups", intAttr(4)},
                 {"dilations", intsAttr({2, 2})},
                 {"pads", intsAttr({2, 2, 2, 2})},
                 {"activation", stringAttr("relu")}},
                {nhwc, dw, dwBias}, {{DType::kF32, {2, 9, 9, 4}}}, {1, 2});
}

TEST_F(Cuda, MatmulTransposesAndBatches) {
  Tensor a = randomF32({5, 7}, 45), b = randomF32({7, 3}, 46);
  expectMatches("matmul", {}, {a, b}, {{DType::kF32, {5, 3}}});
  Tensor at = randomF32({7, 5}, 47), bt = randomF32({3, 7}, 48);
  expectMatches(
      "matmul",
      {{"transpose_a", boolAttr(true)}, {"transpose_b", boolAttr(true)}},
      {at, bt}, {{DType::kF32, {5, 3}}});
  expectMatches("matmul", {{"transpose_b", boolAttr(true)}}, {a, bt},
                {{DType::kF32, {5, 3}}}, {1});
  Tensor ba = randomF32({4, 5, 7}, 49), bb = randomF32({4, 7, 3}, 50);
  expectMatches("matmul", {}, {ba, bb}, {{DType::kF32, {4, 5, 3}}});
  expectMatches("matmul", {}, {ba, b}, {{DType::kF32, {4, 5, 3}}});
  // Batch dims that broadcast against each other: one call per batch.
  Tensor ga = randomF32({2, 1, 5, 7}, 51), gb = randomF32({1, 3, 7, 3}, 52);
  expectMatches("matmul", {}, {ga, gb}, {{DType::kF32, {2, 3, 5, 3}}});
  Tensor ha = toHalf(randomF32({16, 32}, 53), DType::kF16);
  Tensor hb = toHalf(randomF32({32, 8}, 54), DType::kF16);
  expectMatches("matmul", {}, {ha, hb}, {{DType::kF16, {16, 8}}}, {}, 1e-2,
                1e-2);
}

// f16/bf16 (what --gopt-mixed-precision gives the GPU): cuDNN convs on
// tensor cores in both layouts (bias + relu fused, other activations by
// gopt's kernel, depthwise), cuBLASLt matmuls, and gopt's pooling and batch
// norm kernels. The reference rounds each result once from f32/double;
// CUDA accumulates in f32: one 16-bit rounding apart, and f16/bf16 inputs
// make the products exact, so 1e-2 relative covers it.
TEST_F(Cuda, ConvMatmulPoolAndBatchNormInF16AndBf16) {
  for (DType t : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(dtypeName(t));
    const double tol = 1e-2;
    Tensor nchw = toHalf(randomF32({2, 8, 9, 9}, 80), t);
    Tensor nhwc = toHalf(randomF32({2, 9, 9, 8}, 81), t);
    Tensor oihw = toHalf(randomF32({16, 8, 3, 3}, 82), t);
    Tensor hwio = toHalf(randomF32({3, 3, 8, 16}, 83), t);
    Tensor bias = toHalf(randomF32({16}, 84), t);
    for (const char *act : {"relu", "sigmoid"})
      expectMatches("conv2d",
                    {{"pads", intsAttr({1, 1, 1, 1})},
                     {"activation", stringAttr(act)},
                     {"data_format", stringAttr("NCHW")},
                     {"filter_format", stringAttr("OIHW")}},
                    {nchw, oihw, bias}, {{t, {2, 16, 9, 9}}}, {1, 2}, tol, tol);
    expectMatches("conv2d",
                  {{"strides", intsAttr({2, 2})},
                   {"pads", intsAttr({1, 1, 1, 1})},
                   {"activation", stringAttr("relu")}},
                  {nhwc, hwio, bias}, {{t, {2, 5, 5, 16}}}, {1, 2}, tol, tol);
    // relu6 runs in gopt's bias + activation kernel after cuDNN: 16-byte
    // vectors when the channels allow (16), element by element when not (12).
    Tensor hwio12 = toHalf(randomF32({3, 3, 8, 12}, 88), t);
    Tensor bias12 = toHalf(randomF32({12}, 89), t);
    AttrMap relu6 = {{"pads", intsAttr({1, 1, 1, 1})},
                     {"activation", stringAttr("relu6")}};
    expectMatches("conv2d", relu6, {nhwc, hwio, bias}, {{t, {2, 9, 9, 16}}},
                  {1, 2}, tol, tol);
    expectMatches("conv2d", relu6, {nhwc, hwio12, bias12}, {{t, {2, 9, 9, 12}}},
                  {1, 2}, tol, tol);
    Tensor dw = toHalf(randomF32({3, 3, 1, 8}, 85), t);
    expectMatches("conv2d",
                  {{"groups", intAttr(8)}, {"padding", stringAttr("SAME")}},
                  {nhwc, dw}, {{t, {2, 9, 9, 8}}}, {1}, tol, tol);
    Tensor a = toHalf(randomF32({16, 32}, 86), t);
    Tensor bt = toHalf(randomF32({8, 32}, 87), t);
    expectMatches("matmul", {{"transpose_b", boolAttr(true)}}, {a, bt},
                  {{t, {16, 8}}}, {1}, tol, tol);
    expectMatches("max_pool",
                  {{"kernel", intsAttr({3, 3})}, {"strides", intsAttr({2, 2})}},
                  {nhwc}, {{t, {2, 4, 4, 8}}}, {}, tol, tol);
    expectMatches("global_avg_pool", {{"data_format", stringAttr("NCHW")}},
                  {nchw}, {{t, {2, 8, 1, 1}}}, {}, tol, tol);
    std::vector<Tensor> bn = {
        nchw, toHalf(randomF32({8}, 88), t), toHalf(randomF32({8}, 89), t),
        toHalf(randomF32({8}, 90), t), toHalf(randomPositive({8}, 91), t)};
    expectMatches(
        "batch_norm",
        {{"data_format", stringAttr("NCHW")}, {"epsilon", floatAttr(1e-3)}}, bn,
        {{t, {2, 8, 9, 9}}}, {1, 2, 3, 4}, tol, tol);
  }
}

// A bf16 conv whose bias stayed f32 (plans may carry that; the CPU backend
// runs it): the bias is converted on the device, from a constant once or
// from an input every run.
TEST_F(Cuda, HalfConvWithF32Bias) {
  Tensor x = toHalf(randomF32({2, 8, 7, 7}, 92), DType::kBF16);
  Tensor w = toHalf(randomF32({4, 8, 3, 3}, 93), DType::kBF16);
  Tensor bias = randomF32({4}, 94);
  AttrMap attrs = {{"pads", intsAttr({1, 1, 1, 1})},
                   {"data_format", stringAttr("NCHW")},
                   {"filter_format", stringAttr("OIHW")}};
  for (const char *act : {"relu", "none"}) {
    attrs["activation"] = stringAttr(act);
    expectMatches("conv2d", attrs, {x, w, bias}, {{DType::kBF16, {2, 4, 7, 7}}},
                  {1, 2}, 1e-2, 1e-2);
    expectMatches("conv2d", attrs, {x, w, bias}, {{DType::kBF16, {2, 4, 7, 7}}},
                  {1}, 1e-2, 1e-2);
  }
}

// 1x1 stride-1 convolutions as cuBLASLt products (GOPT_CUDA_CONV_GEMM=1
// forces that path, which is otherwise chosen by timing): both layouts and
// filter formats, f32/f16/bf16, a bias in the epilogue (NHWC) or after it
// (NCHW), constant or not, relu in the epilogue and relu6 after it, one and
// several images.
TEST_F(Cuda, PointwiseConvAsMatrixProduct) {
  setenv("GOPT_CUDA_CONV_GEMM", "1", 1);
  for (int64_t n : {1, 3}) {
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
      SCOPED_TRACE(detail::concat("batch ", n, " ", dtypeName(t)));
      auto typed = [&](const Tensor &f) {
        return t == DType::kF32 ? f : toHalf(f, t);
      };
      double rtol = t == DType::kF32 ? 1e-3 : 1e-2;
      double atol = t == DType::kF32 ? 1e-4 : 1e-2;
      Tensor nchw = typed(randomF32({n, 24, 5, 7}, 120));
      Tensor nhwc = typed(randomF32({n, 5, 7, 24}, 121));
      Tensor oihw = typed(randomF32({16, 24, 1, 1}, 122));
      Tensor hwio = typed(randomF32({1, 1, 24, 16}, 123));
      Tensor bias = typed(randomF32({16}, 124));
      for (const char *act : {"none", "relu", "relu6"}) {
        SCOPED_TRACE(act);
        AttrMap a = {{"activation", stringAttr(act)},
                     {"data_format", stringAttr("NCHW")},
                     {"filter_format", stringAttr("OIHW")}};
        expectMatches("conv2d", a, {nchw, oihw, bias}, {{t, {n, 16, 5, 7}}},
                      {1, 2}, rtol, atol);
        a["filter_format"] = stringAttr("HWIO");
        expectMatches("conv2d", a, {nchw, hwio}, {{t, {n, 16, 5, 7}}}, {1},
                      rtol, atol);
        AttrMap b = {{"activation", stringAttr(act)}};
        expectMatches("conv2d", b, {nhwc, hwio, bias}, {{t, {n, 5, 7, 16}}},
                      {1, 2}, rtol, atol);
        expectMatches("conv2d", b, {nhwc, hwio}, {{t, {n, 5, 7, 16}}}, {1},
                      rtol, atol);
        b["filter_format"] = stringAttr("OIHW");
        // The bias as an input: the epilogue reads it where it is each run.
        expectMatches("conv2d", b, {nhwc, oihw, bias}, {{t, {n, 5, 7, 16}}},
                      {1}, rtol, atol);
      }
    }
  }
  // It ran as a product (the profile says so), also at a new batch size.
  PlanBuilder b("pointwise");
  int x = b.addInput("x", DType::kF32, {-1, 6, 6, 24});
  int w = b.addConstant("w", randomF32({1, 1, 24, 16}, 125));
  int cb = b.addConstant("cb", randomF32({16}, 126));
  int y = b.addOutput("y", DType::kF32, {-1, 6, 6, 16});
  b.addOp("conv2d", "pw", {x, w, cb}, {y},
          {{"activation", stringAttr("relu")}});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  for (int64_t batch : {2, 5}) {
    Tensor in = randomF32({batch, 6, 6, 24}, 127);
    RunResult cuda = runPlan(*plan, "cuda", {in}, batch);
    RunResult ref = runPlan(*plan, "reference", {in}, batch);
    ASSERT_EQ(cuda.outputs.size(), 1u);
    ASSERT_EQ(ref.outputs.size(), 1u);
    EXPECT_TRUE(allClose(cuda.outputs[0], ref.outputs[0], 1e-3, 1e-4));
    bool gemm = false;
    for (const OpProfile &p : cuda.profiles)
      gemm |= p.name == "pw" && p.implementation == "cublaslt (1x1)";
    EXPECT_TRUE(gemm) << "batch " << batch;
  }
  // With =0 it stays on cuDNN (the legacy or the graph API).
  setenv("GOPT_CUDA_CONV_GEMM", "0", 1);
  RunResult cudnn = runPlan(*plan, "cuda", {randomF32({2, 6, 6, 24}, 128)}, 2);
  for (const OpProfile &p : cudnn.profiles)
    if (p.name == "pw")
      EXPECT_EQ(p.implementation.rfind("cudnn", 0), 0u) << p.implementation;
  unsetenv("GOPT_CUDA_CONV_GEMM");
}

// Depthwise convolutions on gopt's direct kernel
// (GOPT_CUDA_CONV_DEPTHWISE=1 forces it, which is otherwise chosen by
// timing): both layouts and filter formats, f32/f16/bf16, 3x3 and 5x5,
// strides, dilation, asymmetric SAME padding (padded first), bias constant
// or not, activations.
TEST_F(Cuda, DepthwiseConvOnOwnKernel) {
  setenv("GOPT_CUDA_CONV_DEPTHWISE", "1", 1);
  // 16 channels take the 16-byte NHWC kernel in every type, 12 only in f32.
  for (int64_t ch : {12, 16})
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
      SCOPED_TRACE(detail::concat(dtypeName(t), " ", ch, " channels"));
      auto typed = [&](const Tensor &f) {
        return t == DType::kF32 ? f : toHalf(f, t);
      };
      double rtol = t == DType::kF32 ? 1e-3 : 1e-2;
      double atol = t == DType::kF32 ? 1e-4 : 1e-2;
      Tensor nchw = typed(randomF32({3, ch, 9, 11}, 130));
      Tensor nhwc = typed(randomF32({3, 9, 11, ch}, 131));
      Tensor bias = typed(randomF32({ch}, 132));
      for (int64_t k : {3, 5}) {
        Tensor oihw = typed(randomF32({ch, 1, k, k}, 133));
        Tensor hwio = typed(randomF32({k, k, 1, ch}, 134));
        for (const char *act : {"none", "relu", "relu6"}) {
          SCOPED_TRACE(detail::concat(k, "x", k, " ", act));
          int64_t p = k / 2;
          AttrMap a = {{"groups", intAttr(ch)},
                       {"strides", intsAttr({2, 1})},
                       {"pads", intsAttr({p, p, p, p})},
                       {"activation", stringAttr(act)},
                       {"data_format", stringAttr("NCHW")},
                       {"filter_format", stringAttr("OIHW")}};
          expectMatches("conv2d", a, {nchw, oihw, bias}, {{t, {3, ch, 5, 11}}},
                        {1, 2}, rtol, atol);
          AttrMap b = a;
          b["data_format"] = stringAttr("NHWC");
          b["filter_format"] = stringAttr("HWIO");
          expectMatches("conv2d", b, {nhwc, hwio, bias}, {{t, {3, 5, 11, ch}}},
                        {1}, rtol, atol);
        }
        // Dilation 2 without bias; asymmetric padding (the input padded first).
        expectMatches("conv2d",
                      {{"groups", intAttr(ch)},
                       {"dilations", intsAttr({2, 2})},
                       {"pads", intsAttr({k - 1, k - 1, k - 1, k - 1})}},
                      {nhwc, hwio}, {{t, {3, 9, 11, ch}}}, {1}, rtol, atol);
        expectMatches(
            "conv2d",
            {{"groups", intAttr(ch)}, {"pads", intsAttr({0, 1, 1, 2})}},
            {nhwc, hwio, bias}, {{t, {3, 11 - k, 15 - k, ch}}}, {1, 2}, rtol,
            atol);
      }
    }
  PlanBuilder b("depthwise");
  int x = b.addInput("x", DType::kF32, {-1, 7, 7, 32});
  int w = b.addConstant("w", randomF32({3, 3, 1, 32}, 135));
  int y = b.addOutput("y", DType::kF32, {-1, 7, 7, 32});
  b.addOp("conv2d", "dw", {x, w}, {y},
          {{"groups", intAttr(32)}, {"pads", intsAttr({1, 1, 1, 1})}});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  Tensor in = randomF32({2, 7, 7, 32}, 136);
  RunResult cuda = runPlan(*plan, "cuda", {in}, 2);
  RunResult ref = runPlan(*plan, "reference", {in}, 2);
  ASSERT_EQ(cuda.outputs.size(), 1u);
  ASSERT_EQ(ref.outputs.size(), 1u);
  EXPECT_TRUE(allClose(cuda.outputs[0], ref.outputs[0], 1e-3, 1e-4));
  bool own = false;
  for (const OpProfile &p : cuda.profiles)
    own |= p.name == "dw" && p.implementation == "cuda (depthwise)";
  EXPECT_TRUE(own);
  unsetenv("GOPT_CUDA_CONV_DEPTHWISE");
}

// Convolutions on cuDNN's graph API (GOPT_CUDA_CONV_GRAPH=1 forces it
// wherever an engine runs the graph; otherwise it is chosen by timing
// against the legacy algorithm): both layouts, f32 (with TF32, as the graph
// is only taken then) / f16 / bf16, strides, groups, dilation, asymmetric
// padding, bias constant or not, activations fused (relu) or applied after
// (relu6, sigmoid).
TEST_F(Cuda, ConvOnCudnnGraph) {
  setenv("GOPT_CUDA_TF32", "1", 1);
  setenv("GOPT_CUDA_CONV_GRAPH", "1", 1);
  setenv("GOPT_CUDA_CONV_GEMM", "0", 1);
  setenv("GOPT_CUDA_CONV_DEPTHWISE", "0", 1);
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(dtypeName(t));
    auto typed = [&](const Tensor &f) {
      return t == DType::kF32 ? f : toHalf(f, t);
    };
    // TF32 rounds the products' inputs to 10-bit mantissas, as f16 does.
    double rtol = 1e-2, atol = 2e-2;
    Tensor nchw = typed(randomF32({2, 16, 9, 11}, 150));
    Tensor nhwc = typed(randomF32({2, 9, 11, 16}, 151));
    Tensor oihw = typed(randomF32({32, 16, 3, 3}, 152));
    Tensor hwio = typed(randomF32({3, 3, 16, 32}, 153));
    Tensor grouped = typed(randomF32({3, 3, 8, 32}, 154));
    Tensor bias = typed(randomF32({32}, 155));
    for (const char *act : {"none", "relu", "relu6", "sigmoid"}) {
      SCOPED_TRACE(act);
      AttrMap a = {{"strides", intsAttr({2, 1})},
                   {"pads", intsAttr({1, 1, 1, 1})},
                   {"activation", stringAttr(act)},
                   {"data_format", stringAttr("NCHW")},
                   {"filter_format", stringAttr("OIHW")}};
      expectMatches("conv2d", a, {nchw, oihw, bias}, {{t, {2, 32, 5, 11}}},
                    {1, 2}, rtol, atol);
      expectMatches("conv2d", a, {nchw, oihw}, {{t, {2, 32, 5, 11}}}, {1}, rtol,
                    atol);
      AttrMap b = a;
      b["data_format"] = stringAttr("NHWC");
      b["filter_format"] = stringAttr("HWIO");
      // The bias as an input: the variant pack follows its pointer.
      expectMatches("conv2d", b, {nhwc, hwio, bias}, {{t, {2, 5, 11, 32}}}, {1},
                    rtol, atol);
    }
    // Two groups, dilation 2; asymmetric padding (the input padded first).
    expectMatches("conv2d",
                  {{"groups", intAttr(2)},
                   {"dilations", intsAttr({2, 2})},
                   {"pads", intsAttr({2, 2, 2, 2})},
                   {"activation", stringAttr("relu")}},
                  {nhwc, grouped, bias}, {{t, {2, 9, 11, 32}}}, {1, 2}, rtol,
                  atol);
    expectMatches("conv2d", {{"pads", intsAttr({0, 1, 1, 2})}},
                  {nhwc, hwio, bias}, {{t, {2, 8, 12, 32}}}, {1, 2}, rtol,
                  atol);
  }
  // It ran on the graph (the profile says so), also at a new batch size;
  // with =0 it stays on the legacy API.
  PlanBuilder b("graph-conv");
  int x = b.addInput("x", DType::kF32, {-1, 16, 14, 14});
  int w = b.addConstant("w", randomF32({32, 16, 3, 3}, 156));
  int cb = b.addConstant("cb", randomF32({32}, 157));
  int y = b.addOutput("y", DType::kF32, {-1, 32, 14, 14});
  b.addOp("conv2d", "conv", {x, w, cb}, {y},
          {{"activation", stringAttr("relu")},
           {"pads", intsAttr({1, 1, 1, 1})},
           {"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")}});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  for (int64_t batch : {2, 5}) {
    Tensor in = randomF32({batch, 16, 14, 14}, 158);
    RunResult cuda = runPlan(*plan, "cuda", {in}, batch);
    RunResult ref = runPlan(*plan, "reference", {in}, batch);
    ASSERT_EQ(cuda.outputs.size(), 1u);
    ASSERT_EQ(ref.outputs.size(), 1u);
    EXPECT_TRUE(allClose(cuda.outputs[0], ref.outputs[0], 1e-2, 2e-2));
    bool graph = false;
    for (const OpProfile &p : cuda.profiles)
      graph |= p.name == "conv" && p.implementation == "cudnn (graph)";
    EXPECT_TRUE(graph) << "batch " << batch;
  }
  // f32 without TF32 stays on the legacy FMA algorithms: some graph
  // engines rounded like TF32 (2.7e-3 relative) on an H200 though their
  // notes did not say so.
  setenv("GOPT_CUDA_TF32", "0", 1);
  RunResult exact =
      runPlan(*plan, "cuda", {randomF32({2, 16, 14, 14}, 159)}, 2);
  for (const OpProfile &p : exact.profiles)
    if (p.name == "conv")
      EXPECT_EQ(p.implementation, "cudnn");
  setenv("GOPT_CUDA_TF32", "1", 1);
  setenv("GOPT_CUDA_CONV_GRAPH", "0", 1);
  RunResult legacy =
      runPlan(*plan, "cuda", {randomF32({2, 16, 14, 14}, 159)}, 2);
  for (const OpProfile &p : legacy.profiles)
    if (p.name == "conv")
      EXPECT_EQ(p.implementation, "cudnn");
  setenv("GOPT_CUDA_TF32", "0", 1);
  unsetenv("GOPT_CUDA_CONV_GRAPH");
  unsetenv("GOPT_CUDA_CONV_GEMM");
  unsetenv("GOPT_CUDA_CONV_DEPTHWISE");
}

TEST_F(Cuda, CheckNumericsReportsNaN) {
  Tensor x = randomF32({10}, 55);
  expectMatches("check_numerics", {{"message", stringAttr("m")}}, {x},
                {{DType::kF32, {10}}});
  x.data<float>()[3] = NAN;
  auto r = runOp("check_numerics", {{"message", stringAttr("after conv")}}, {x},
                 {{DType::kF32, {10}}}, "cuda");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("NaN"), std::string::npos);
  EXPECT_NE(r.status().message().find("after conv"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// quantize / dequantize: bit for bit against the reference
//===----------------------------------------------------------------------===//

// Every result byte equal; the first difference is reported.
::testing::AssertionResult bitwiseEqual(const Tensor &actual,
                                        const Tensor &expected) {
  if (actual.shape() != expected.shape() || actual.dtype() != expected.dtype())
    return ::testing::AssertionFailure()
           << "shape/type " << shapeToString(actual.shape()) << " "
           << dtypeName(actual.dtype()) << " vs. "
           << shapeToString(expected.shape()) << " "
           << dtypeName(expected.dtype());
  size_t elem = dtypeSize(actual.dtype());
  const char *a = static_cast<const char *>(actual.data());
  const char *e = static_cast<const char *>(expected.data());
  for (int64_t i = 0; i < actual.numElements(); ++i) {
    if (std::memcmp(a + i * elem, e + i * elem, elem) == 0)
      continue;
    ::testing::AssertionResult failure = ::testing::AssertionFailure();
    failure << "element " << i << ": cuda ";
    if (actual.dtype() == DType::kI8)
      failure << int(actual.data<int8_t>()[i]) << ", reference "
              << int(expected.data<int8_t>()[i]);
    else
      failure << actual.data<float>()[i] << ", reference "
              << expected.data<float>()[i];
    return failure;
  }
  return ::testing::AssertionSuccess();
}

void expectBitwise(const std::string &kind, const AttrMap &attrs,
                   const std::vector<Tensor> &inputs, const OutSpec &out,
                   const std::vector<int> &constants, const std::string &what) {
  auto ref = runOp(kind, attrs, inputs, {out}, "reference", constants);
  ASSERT_TRUE(ref.ok()) << what << ": " << ref.status().toString();
  auto got = runOp(kind, attrs, inputs, {out}, "cuda", constants);
  ASSERT_TRUE(got.ok()) << what << ": " << got.status().toString();
  EXPECT_TRUE(bitwiseEqual((*got)[0], (*ref)[0])) << what;
}

// Scale index of each element: c along `axis`, or 0 for one scale.
int64_t scaleIndex(const Shape &shape, int64_t axis, size_t numScales,
                   int64_t i) {
  if (numScales == 1)
    return 0;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  return (i / inner) % shape[axis];
}

// f32 values to quantize with `scales` along `axis`: exact .5 ties of
// x / s (exact when s is a power of two), values beyond saturation
// (+-127.5, -128.5, -129.5 and far beyond), Inf, NaN, signed zeros,
// denormals, FLT_MAX and random values.
Tensor quantizeInput(const Shape &shape, int64_t axis,
                     const std::vector<float> &scales, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> tie(-131, 130);
  std::uniform_real_distribution<float> uniform(-140.f, 140.f);
  std::uniform_real_distribution<float> far(0.f, 1000.f);
  const float ties[] = {0.5f,    -0.5f,   1.5f,    -1.5f,  2.5f,
                        -2.5f,   3.5f,    -3.5f,   126.5f, 127.5f,
                        -127.5f, -128.5f, -129.5f, 128.5f};
  const float specials[] = {NAN,      -NAN,   INFINITY, -INFINITY, 0.0f,
                            -0.0f,    1e-45f, -1e-45f,  1e-39f,    FLT_MAX,
                            -FLT_MAX, 1e30f,  -1e30f};
  Tensor t = Tensor::allocate(DType::kF32, shape);
  float *x = t.data<float>();
  for (int64_t i = 0; i < t.numElements(); ++i) {
    float s = scales[scaleIndex(shape, axis, scales.size(), i)];
    int64_t pick = (i / 5) % std::size(specials);
    switch (i % 5) {
    case 0:
      x[i] = (static_cast<float>(tie(rng)) + 0.5f) * s;
      break;
    case 1:
      x[i] = ties[(i / 5) % std::size(ties)] * s;
      break;
    case 2:
      x[i] = (i % 2 ? 1.f : -1.f) * (128.f + far(rng)) * s;
      break;
    case 3:
      x[i] = specials[pick];
      break;
    default:
      x[i] = uniform(rng) * s;
    }
  }
  return t;
}

// quantize on CUDA vs. the reference, scales as an input and as a
// constant of the plan.
void expectQuantizeMatches(const Shape &shape, int64_t axis,
                           const std::vector<float> &scales, uint32_t seed) {
  Tensor x = quantizeInput(shape, axis, scales, seed);
  Tensor s = makeTensor<float>(DType::kF32,
                               {static_cast<int64_t>(scales.size())}, scales);
  std::string what = "quantize " + shapeToString(shape) + " axis " +
                     std::to_string(axis) + " with " +
                     std::to_string(scales.size()) + " scale(s)";
  for (bool constant : {false, true})
    expectBitwise("quantize", {{"axis", intAttr(axis)}}, {x, s},
                  {DType::kI8, shape},
                  constant ? std::vector<int>{1} : std::vector<int>{},
                  what + (constant ? ", constant scales" : ", input scales"));
}

// Every int8 value, in turn, then random ones.
Tensor allInt8(const Shape &shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  Tensor t = Tensor::allocate(DType::kI8, shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<int8_t>()[i] = static_cast<int8_t>(i < 256 ? i - 128 : dist(rng));
  return t;
}

void expectDequantizeMatches(const Shape &shape, int64_t axis,
                             const std::vector<float> &scales, uint32_t seed) {
  Tensor q = allInt8(shape, seed);
  Tensor s = makeTensor<float>(DType::kF32,
                               {static_cast<int64_t>(scales.size())}, scales);
  std::string what = "dequantize " + shapeToString(shape) + " axis " +
                     std::to_string(axis) + " with " +
                     std::to_string(scales.size()) + " scale(s)";
  for (bool constant : {false, true})
    expectBitwise("dequantize", {{"axis", intAttr(axis)}}, {q, s},
                  {DType::kF32, shape},
                  constant ? std::vector<int>{1} : std::vector<int>{},
                  what + (constant ? ", constant scales" : ", input scales"));
}

TEST_F(Cuda, QuantizeRoundsHalfToEvenSaturatesAndMapsNaNToZero) {
  // Hand-checked values (scale 1), then the same op on the reference.
  Tensor x = makeTensor<float>(DType::kF32, {16},
                               {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f,
                                127.5f, -127.5f, -128.5f, -129.5f, 300.f, NAN,
                                INFINITY, -INFINITY, -0.0f});
  Tensor one = makeTensor<float>(DType::kF32, {1}, {1.f});
  const int8_t expected[16] = {0,    2,    2,    0,   -2, -2,  126,  127,
                               -128, -128, -128, 127, 0,  127, -128, 0};
  for (const char *backend : {"cuda", "reference"}) {
    auto q = runOp("quantize", {}, {x, one}, {{DType::kI8, {16}}}, backend);
    ASSERT_TRUE(q.ok()) << backend << ": " << q.status().toString();
    for (int i = 0; i < 16; ++i)
      EXPECT_EQ(int((*q)[0].data<int8_t>()[i]), int(expected[i]))
          << backend << " element " << i << " (" << x.data<float>()[i] << ")";
  }
}

TEST_F(Cuda, QuantizePerTensorMatchesReferenceBitwise) {
  expectQuantizeMatches({2, 3, 4, 5}, 0, {0.5f}, 100);
  expectQuantizeMatches({2, 3, 4, 5}, 0, {0.0371f}, 101); // not a power of 2
  expectQuantizeMatches({2, 3, 4, 5}, 2, {1.f}, 102);
  expectQuantizeMatches({3, 64, 17, 19}, 0, {0.125f}, 103); // many blocks
}

TEST_F(Cuda, QuantizePerChannelMatchesReferenceBitwise) {
  expectQuantizeMatches({2, 3, 4, 5}, 0, {0.25f, 2.f}, 110);
  expectQuantizeMatches({2, 3, 4, 5}, 1, {0.5f, 0.125f, 4.f}, 111);
  expectQuantizeMatches({2, 3, 4, 5}, 1, {0.1f, 0.3f, 0.07f}, 112);
  expectQuantizeMatches({2, 3, 4, 5}, -1, {0.5f, 1.f, 2.f, 0.25f, 0.013f}, 113);
  std::vector<float> many(64);
  for (size_t c = 0; c < many.size(); ++c)
    many[c] =
        std::ldexp(1.f, static_cast<int>(c % 9) - 4) * (c % 2 ? 1.f : 0.37f);
  expectQuantizeMatches({3, 64, 17, 19}, 1, many, 114);
}

TEST_F(Cuda, DequantizeMatchesReferenceBitwise) {
  expectDequantizeMatches({4, 4, 4, 4}, 0, {0.0371f}, 120); // per tensor
  expectDequantizeMatches({2, 3, 4, 5}, 0, {0.5f}, 121);
  expectDequantizeMatches({4, 4, 4, 4}, 0, {0.1f, 0.3f, 1e-39f, 3.3f}, 122);
  expectDequantizeMatches({2, 3, 4, 5}, 0, {0.25f, 0.0123f}, 123);
  expectDequantizeMatches({2, 3, 4, 5}, 1, {0.1f, 7.f, 1e30f}, 124);
  expectDequantizeMatches({2, 3, 4, 5}, -1, {0.5f, 0.2f, 0.3f, 1.f, 9e-3f},
                          125);
  std::vector<float> many(64);
  for (size_t c = 0; c < many.size(); ++c)
    many[c] = 0.001f * static_cast<float>(c + 1);
  expectDequantizeMatches({3, 64, 17, 19}, 1, many, 126);
}

TEST_F(Cuda, QuantizeScaleThatIsNotPositiveIsARunTimeError) {
  Tensor x = randomF32({2, 3, 4}, 130);
  struct Case {
    std::vector<float> scales;
    int64_t axis;
    const char *expected;
  };
  for (const Case &c :
       std::vector<Case>{{{0.5f, 0.f, -1.f}, 1, "scale 1 "},
                         {{NAN}, 0, "scale 0 "},
                         {{1.f, 2.f, 3.f, INFINITY}, 2, "scale 3 "}}) {
    Tensor s = makeTensor<float>(
        DType::kF32, {static_cast<int64_t>(c.scales.size())}, c.scales);
    for (const char *backend : {"reference", "cuda"}) {
      auto r = runOp("quantize", {{"axis", intAttr(c.axis)}}, {x, s},
                     {{DType::kI8, {2, 3, 4}}}, backend);
      ASSERT_FALSE(r.ok()) << backend;
      EXPECT_NE(
          r.status().message().find(std::string("quantize ") + c.expected),
          std::string::npos)
          << backend << ": " << r.status().message();
      EXPECT_NE(r.status().message().find("finite positive"), std::string::npos)
          << backend << ": " << r.status().message();
    }
  }
}

// conv + batch_norm + relu + max_pool + flatten + matmul + bias + relu +
// matmul + softmax, NCHW: the whole plan on CUDA vs. the reference.
PlanBuilder smallNet() {
  PlanBuilder b("small-net");
  int x = b.addInput("x", DType::kF32, {-1, 3, 16, 16});
  int w = b.addConstant("w", randomF32({8, 3, 3, 3}, 60));
  int cb = b.addConstant("cb", randomF32({8}, 61));
  int c = b.addIntermediate("c", DType::kF32, {-1, 8, 16, 16});
  b.addOp("conv2d", "conv", {x, w, cb}, {c},
          {{"pads", intsAttr({1, 1, 1, 1})},
           {"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")}});
  int scale = b.addConstant("scale", randomF32({8}, 62));
  int offset = b.addConstant("offset", randomF32({8}, 63));
  int mean = b.addConstant("mean", randomF32({8}, 64));
  int var = b.addConstant("var", randomPositive({8}, 65));
  int n = b.addIntermediate("n", DType::kF32, {-1, 8, 16, 16});
  b.addOp("batch_norm", "bn", {c, scale, offset, mean, var}, {n},
          {{"data_format", stringAttr("NCHW")}, {"epsilon", floatAttr(1e-5)}});
  int r = b.addIntermediate("r", DType::kF32, {-1, 8, 16, 16});
  b.addOp("relu", "relu", {n}, {r});
  int p = b.addIntermediate("p", DType::kF32, {-1, 8, 8, 8});
  b.addOp("max_pool", "pool", {r}, {p},
          {{"kernel", intsAttr({2, 2})},
           {"strides", intsAttr({2, 2})},
           {"data_format", stringAttr("NCHW")}});
  int f = b.addIntermediate("f", DType::kF32, {-1, 512});
  b.addOp("flatten", "flat", {p}, {f});
  int w1 = b.addConstant("w1", randomF32({512, 32}, 66));
  int b1 = b.addConstant("b1", randomF32({32}, 67));
  int h = b.addIntermediate("h", DType::kF32, {-1, 32});
  b.addOp("matmul", "fc1", {f, w1}, {h});
  int hb = b.addIntermediate("hb", DType::kF32, {-1, 32});
  b.addOp("add", "fc1_bias", {h, b1}, {hb});
  int hr = b.addIntermediate("hr", DType::kF32, {-1, 32});
  b.addOp("relu", "fc1_relu", {hb}, {hr});
  int w2 = b.addConstant("w2", randomF32({32, 10}, 68));
  int logits = b.addIntermediate("logits", DType::kF32, {-1, 10});
  b.addOp("matmul", "fc2", {hr, w2}, {logits});
  int y = b.addOutput("y", DType::kF32, {-1, 10});
  b.addOp("softmax", "softmax", {logits}, {y});
  return b;
}

StatusOr<Tensor> runNet(const Plan &plan, const std::string &backend,
                        const Tensor &x, int steps = 1) {
  SessionOptions options;
  options.backend = backend;
  options.batchSize = x.dim(0);
  GOPT_ASSIGN_OR_RETURN(auto session, Session::create(plan, options));
  GOPT_RETURN_IF_ERROR(session->setInput("x", x));
  for (int i = 0; i < steps; ++i)
    GOPT_RETURN_IF_ERROR(session->run());
  GOPT_ASSIGN_OR_RETURN(Tensor y, session->output("y"));
  return y.clone();
}

TEST_F(Cuda, WholePlanMatchesReference) {
  auto plan = smallNet().build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  Tensor x = randomF32({4, 3, 16, 16}, 70);
  auto ref = runNet(*plan, "reference", x);
  auto got = runNet(*plan, "cuda", x);
  ASSERT_TRUE(ref.ok()) << ref.status().toString();
  ASSERT_TRUE(got.ok()) << got.status().toString();
  EXPECT_TRUE(allClose(*got, *ref));
}

// smallNet as --gopt-mixed-precision writes it: one cast in, conv, batch
// norm, relu, pool, flatten and both matmuls (bias + relu fused into the
// cuBLASLt epilogue) in `type` with converted constants, one cast out
// before the f32 softmax.
Plan mixedPrecisionNet(DType type) {
  PlanBuilder b("mixed-precision-net");
  auto half = [&](const Shape &shape, uint32_t seed) {
    return toHalf(randomF32(shape, seed), type);
  };
  int x = b.addInput("x", DType::kF32, {-1, 3, 16, 16});
  int xh = b.addIntermediate("xh", type, {-1, 3, 16, 16});
  b.addOp("cast", "cast_in", {x}, {xh});
  int c = b.addIntermediate("c", type, {-1, 8, 16, 16});
  b.addOp("conv2d", "conv",
          {xh, b.addConstant("w", half({8, 3, 3, 3}, 60)),
           b.addConstant("cb", half({8}, 61))},
          {c},
          {{"pads", intsAttr({1, 1, 1, 1})},
           {"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")}});
  int n = b.addIntermediate("n", type, {-1, 8, 16, 16});
  b.addOp("batch_norm", "bn",
          {c, b.addConstant("scale", half({8}, 62)),
           b.addConstant("offset", half({8}, 63)),
           b.addConstant("mean", half({8}, 64)),
           b.addConstant("var", toHalf(randomPositive({8}, 65), type))},
          {n},
          {{"data_format", stringAttr("NCHW")}, {"epsilon", floatAttr(1e-3)}});
  int r = b.addIntermediate("r", type, {-1, 8, 16, 16});
  b.addOp("relu", "relu", {n}, {r});
  int p = b.addIntermediate("p", type, {-1, 8, 8, 8});
  b.addOp("max_pool", "pool", {r}, {p},
          {{"kernel", intsAttr({2, 2})},
           {"strides", intsAttr({2, 2})},
           {"data_format", stringAttr("NCHW")}});
  int f = b.addIntermediate("f", type, {-1, 512});
  b.addOp("flatten", "flat", {p}, {f});
  int h = b.addIntermediate("h", type, {-1, 32});
  b.addOp("matmul", "fc1", {f, b.addConstant("w1", half({512, 32}, 66))}, {h});
  int hb = b.addIntermediate("hb", type, {-1, 32});
  b.addOp("add", "fc1_bias", {h, b.addConstant("b1", half({32}, 67))}, {hb});
  int hr = b.addIntermediate("hr", type, {-1, 32});
  b.addOp("relu", "fc1_relu", {hb}, {hr});
  int logits = b.addIntermediate("logits", type, {-1, 10});
  // fc1's outputs are O(10): fc2's weights are scaled so that the logits
  // are O(1) and the softmax is not so sharp that one bf16 rounding of a
  // logit (2^-8 relative) moves a probability past the tolerance.
  Tensor w2 = randomF32({32, 10}, 68);
  for (int64_t i = 0; i < w2.numElements(); ++i)
    w2.data<float>()[i] *= 0.02f;
  b.addOp("matmul", "fc2", {hr, b.addConstant("w2", toHalf(w2, type))},
          {logits});
  int logits32 = b.addIntermediate("logits32", DType::kF32, {-1, 10});
  b.addOp("cast", "cast_out", {logits}, {logits32});
  int y = b.addOutput("y", DType::kF32, {-1, 10});
  b.addOp("softmax", "softmax", {logits32}, {y});
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  return plan.ok() ? *plan : Plan();
}

TEST_F(Cuda, MixedPrecisionPlanMatchesReference) {
  for (DType t : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(dtypeName(t));
    Plan plan = mixedPrecisionNet(t);
    Tensor x = randomF32({4, 3, 16, 16}, 71);
    auto ref = runNet(plan, "reference", x);
    auto got = runNet(plan, "cuda", x, /*steps=*/3); // eager, then graphs
    ASSERT_TRUE(ref.ok()) << ref.status().toString();
    ASSERT_TRUE(got.ok()) << got.status().toString();
    // Probabilities after 16-bit intermediates rounded in other orders.
    EXPECT_TRUE(allClose(*got, *ref, 0, 2e-2));
  }
}

TEST_F(Cuda, MatmulBiasReluIsFusedAndProfiled) {
  auto plan = smallNet().build();
  ASSERT_TRUE(plan.ok());
  SessionOptions options;
  options.backend = "cuda";
  options.batchSize = 2;
  auto session = Session::create(*plan, options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  ASSERT_TRUE((*session)->setInput("x", randomF32({2, 3, 16, 16}, 71)).ok());
  ASSERT_TRUE((*session)->run().ok());
  bool fused = false, h2d = false;
  for (const OpProfile &p : (*session)->opProfiles()) {
    if (p.name == "fc1")
      fused = p.implementation.find("+biasrelu") != std::string::npos;
    if (p.kind == "memcpy_h2d")
      h2d = p.calls == 1 && p.name.find("6.0 KiB") != std::string::npos;
    if (p.name == "conv") {
      EXPECT_EQ(p.implementation.rfind("cudnn", 0), 0u) << p.implementation;
      EXPECT_GT(p.lastMs, 0.0);
    }
  }
  EXPECT_TRUE(fused);
  EXPECT_TRUE(h2d);
  MemoryStats m = (*session)->memoryStats();
  EXPECT_GT(m.arenaBytes, 0u);
  EXPECT_LE(m.arenaBytes, m.intermediateBytes);
}

TEST_F(Cuda, GraphReplayMatchesEager) {
  auto plan = smallNet().build();
  ASSERT_TRUE(plan.ok());
  SessionOptions options;
  options.backend = "cuda";
  options.batchSize = 3;
  auto session = Session::create(*plan, options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  std::vector<Tensor> inputs = {randomF32({3, 3, 16, 16}, 72),
                                randomF32({3, 3, 16, 16}, 73),
                                randomF32({3, 3, 16, 16}, 74)};
  // Step 1 eager, step 2 captured, steps 3.. replayed; new inputs each time.
  std::vector<Tensor> results;
  for (int step = 0; step < 5; ++step) {
    ASSERT_TRUE((*session)->setInput("x", inputs[step % 3]).ok());
    Status s = (*session)->run();
    ASSERT_TRUE(s.ok()) << s.toString();
    auto y = (*session)->output("y");
    ASSERT_TRUE(y.ok());
    results.push_back(y->clone());
  }
  for (int step = 0; step < 3; ++step) {
    auto ref = runNet(*plan, "reference", inputs[step]);
    ASSERT_TRUE(ref.ok());
    EXPECT_TRUE(allClose(results[step], *ref)) << "step " << step;
  }
  // Replays of the same input give the eager step's bits.
  EXPECT_EQ(
      std::memcmp(results[0].data(), results[3].data(), results[0].byteSize()),
      0);
  EXPECT_EQ(
      std::memcmp(results[1].data(), results[4].data(), results[1].byteSize()),
      0);
  // Eager-only sessions agree with the graph replays.
  setenv("GOPT_CUDA_GRAPHS", "0", 1);
  auto eager = runNet(*plan, "cuda", inputs[0], 3);
  unsetenv("GOPT_CUDA_GRAPHS");
  ASSERT_TRUE(eager.ok());
  EXPECT_EQ(std::memcmp(eager->data(), results[3].data(), eager->byteSize()),
            0);
}

// The pinned staging copy is made only when an input is set or bound: steps
// without either reuse it, and each set or bind is seen by the next step.
TEST_F(Cuda, InputsAreStagedWhenSetOrBound) {
  auto plan = smallNet().build();
  ASSERT_TRUE(plan.ok());
  SessionOptions options;
  options.backend = "cuda";
  options.batchSize = 3;
  auto session = Session::create(*plan, options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  Tensor a = randomF32({3, 3, 16, 16}, 75), b = randomF32({3, 3, 16, 16}, 76);
  auto step = [&]() -> Tensor {
    Status s = (*session)->run();
    EXPECT_TRUE(s.ok()) << s.toString();
    auto y = (*session)->output("y");
    EXPECT_TRUE(y.ok());
    return y.ok() ? y->clone() : Tensor();
  };
  auto same = [](const Tensor &x, const Tensor &y) {
    return x.byteSize() == y.byteSize() &&
           std::memcmp(x.data(), y.data(), x.byteSize()) == 0;
  };
  ASSERT_TRUE((*session)->setInput("x", a).ok());
  Tensor ya = step();
  EXPECT_TRUE(same(step(), ya)); // captured
  EXPECT_TRUE(same(step(), ya)); // replayed, nothing staged
  ASSERT_TRUE((*session)->bindInput("x", b).ok());
  Tensor yb = step();
  auto ref = runNet(*plan, "reference", b);
  ASSERT_TRUE(ref.ok());
  EXPECT_TRUE(allClose(yb, *ref));
  EXPECT_TRUE(same(step(), yb));
  ASSERT_TRUE((*session)->bindInput("x", a).ok());
  EXPECT_TRUE(same(step(), ya));
  ASSERT_TRUE((*session)->setInput("x", b).ok());
  EXPECT_TRUE(same(step(), yb));
}

TEST_F(Cuda, NewBatchSizeReResolves) {
  auto plan = smallNet().build();
  ASSERT_TRUE(plan.ok());
  SessionOptions options;
  options.backend = "cuda";
  options.batchSize = 2;
  auto session = Session::create(*plan, options);
  ASSERT_TRUE(session.ok());
  for (int64_t batch : {2, 5, 2}) {
    Tensor x = randomF32({batch, 3, 16, 16}, 80 + batch);
    ASSERT_TRUE((*session)->setInput("x", x).ok());
    for (int i = 0; i < 3; ++i)
      ASSERT_TRUE((*session)->run().ok());
    auto y = (*session)->output("y");
    ASSERT_TRUE(y.ok());
    auto ref = runNet(*plan, "reference", x);
    ASSERT_TRUE(ref.ok());
    EXPECT_TRUE(allClose(y->clone(), *ref)) << "batch " << batch;
  }
}

// x -> quantize -> dequantize -> conv2d(dequantize(int8 W, per output
// channel)) + bias + relu -> quantize -> dequantize: what
// --gopt-quantize produces. On CUDA the conv runs in f32 on the
// dequantized values; the final requantization may differ from the
// reference by one quantum where the conv's f32 sums differ in the last
// bits at a rounding boundary.
TEST_F(Cuda, QuantizedPlanMatchesReference) {
  const float sx = 0.02f, sy = 0.05f;
  PlanBuilder b("quantized-net");
  int x = b.addInput("x", DType::kF32, {-1, 8, 8, 4});
  int scaleX = b.addConstant("sx", makeTensor<float>(DType::kF32, {1}, {sx}));
  int qx = b.addIntermediate("qx", DType::kI8, {-1, 8, 8, 4});
  b.addOp("quantize", "quantize_x", {x, scaleX}, {qx});
  int dx = b.addIntermediate("dx", DType::kF32, {-1, 8, 8, 4});
  b.addOp("dequantize", "dequantize_x", {qx, scaleX}, {dx});
  Tensor w = Tensor::allocate(DType::kI8, {3, 3, 4, 8});
  std::mt19937 rng(140);
  std::uniform_int_distribution<int> dist(-127, 127);
  for (int64_t i = 0; i < w.numElements(); ++i)
    w.data<int8_t>()[i] = static_cast<int8_t>(dist(rng));
  int qw = b.addConstant("qw", w);
  int sw = b.addConstant("sw", randomPositive({8}, 141));
  int dw = b.addIntermediate("dw", DType::kF32, {3, 3, 4, 8});
  b.addOp("dequantize", "dequantize_w", {qw, sw}, {dw}, {{"axis", intAttr(3)}});
  int bias = b.addConstant("bias", randomF32({8}, 142));
  int c = b.addIntermediate("c", DType::kF32, {-1, 8, 8, 8});
  b.addOp(
      "conv2d", "conv", {dx, dw, bias}, {c},
      {{"pads", intsAttr({1, 1, 1, 1})}, {"activation", stringAttr("relu")}});
  int scaleY = b.addConstant("sy", makeTensor<float>(DType::kF32, {1}, {sy}));
  int qy = b.addIntermediate("qy", DType::kI8, {-1, 8, 8, 8});
  b.addOp("quantize", "quantize_y", {c, scaleY}, {qy});
  int y = b.addOutput("y", DType::kF32, {-1, 8, 8, 8});
  b.addOp("dequantize", "dequantize_y", {qy, scaleY}, {y});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  Tensor input = randomF32({2, 8, 8, 4}, 143);
  auto ref = runNet(*plan, "reference", input);
  auto got = runNet(*plan, "cuda", input, 3); // eager, captured, replayed
  ASSERT_TRUE(ref.ok()) << ref.status().toString();
  ASSERT_TRUE(got.ok()) << got.status().toString();
  EXPECT_TRUE(allClose(*got, *ref, 0, sy * 1.01));
  int64_t differ = 0;
  for (int64_t i = 0; i < ref->numElements(); ++i)
    differ += got->data<float>()[i] != ref->data<float>()[i];
  EXPECT_LE(differ, ref->numElements() / 100) << differ << " elements differ";
}

TEST_F(Cuda, OpWithoutKernelNamesTheOp) {
  plan::Op op;
  op.set_kind("dropout");
  op.set_name("drop_train");
  (*op.mutable_attrs())["training"] = boolAttr(true);
  cuda::CudaKernelConfig config;
  config.op = &op;
  auto k = cuda::createCudaKernel(config);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(
      k.status().message().find("no CUDA kernel for 'drop_train' (dropout)"),
      std::string::npos)
      << k.status().message();
  EXPECT_NE(k.status().message().find("place it on the CPU"),
            std::string::npos);
}

} // namespace
} // namespace gopt::runtime::testing
