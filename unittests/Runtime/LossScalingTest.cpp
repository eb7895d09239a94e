//===- LossScalingTest.cpp - all_finite, select, loss_scale_update --------===//
//
// The dynamic loss scaling ops of mixed-precision training
// (docs/op-semantics.md, "Training ops"): their kernels on both CPU backends,
// a loss-scaled step's bookkeeping as one plan with states, and the schema
// errors.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "gopt/runtime/OpSchema.h"

#include <cfloat>
#include <cmath>
#include <limits>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

const DType F32 = DType::kF32;
const DType Bool = DType::kBool;
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const char *const kBackends[] = {"reference", "cpu"};

Tensor boolScalar(bool value, const Shape &shape = {}) {
  return makeTensor<uint8_t>(Bool, shape, {static_cast<uint8_t>(value)});
}

// Tensors of f16/bf16 bit patterns.
Tensor halfBits(DType type, const std::vector<uint16_t> &bits) {
  return makeTensor<uint16_t>(type, {static_cast<int64_t>(bits.size())}, bits);
}

// all_finite of `inputs` on `backend`; -1 when the run failed.
int allFinite(const std::vector<Tensor> &inputs,
              const std::string &backend = "reference") {
  auto r = runOp("all_finite", {}, inputs, {{Bool, {}}}, backend);
  EXPECT_TRUE(r.ok()) << r.status().toString();
  if (!r.ok())
    return -1;
  EXPECT_EQ((*r)[0].dtype(), Bool);
  EXPECT_EQ((*r)[0].shape(), Shape{});
  return (*r)[0].data<uint8_t>()[0];
}

//===----------------------------------------------------------------------===//
// all_finite
//===----------------------------------------------------------------------===//

TEST(AllFinite, F32InfAndNaN) {
  for (const char *backend : kBackends) {
    SCOPED_TRACE(backend);
    EXPECT_EQ(allFinite({makeF32({2, 2}, {1, -2, 0, -0.0f})}, backend), 1);
    // The extremes of the finite range are finite, denormals too.
    EXPECT_EQ(allFinite({makeF32({3}, {FLT_MAX, -FLT_MAX, 1e-45f})}, backend),
              1);
    EXPECT_EQ(allFinite({makeF32({3}, {1, kInf, 2})}, backend), 0);
    EXPECT_EQ(allFinite({makeF32({3}, {1, 2, -kInf})}, backend), 0);
    EXPECT_EQ(allFinite({makeF32({3}, {kNaN, 1, 2})}, backend), 0);
    EXPECT_EQ(allFinite({makeF32({1}, {-kNaN})}, backend), 0);
  }
}

TEST(AllFinite, Bf16AndF16BitPatterns) {
  for (const char *backend : kBackends) {
    SCOPED_TRACE(backend);
    // bf16: 0x7f7f is the largest finite, 0x7f80 inf, 0xff80 -inf, 0x7fc1 a
    // NaN; 0x0001 a denormal.
    EXPECT_EQ(
        allFinite({halfBits(DType::kBF16, {0x3f80, 0x7f7f, 0xff7f, 0x0001})},
                  backend),
        1);
    EXPECT_EQ(allFinite({halfBits(DType::kBF16, {0x3f80, 0x7f80})}, backend),
              0);
    EXPECT_EQ(allFinite({halfBits(DType::kBF16, {0xff80, 0x3f80})}, backend),
              0);
    EXPECT_EQ(allFinite({halfBits(DType::kBF16, {0x3f80, 0x7fc1})}, backend),
              0);
    // f16: 0x7bff = 65504 is the largest finite (inf as bf16 bits would be
    // 0x7c00's exponent too: f16 needs its own mask), 0x7c00 inf, 0xfc00
    // -inf, 0x7e00 NaN.
    EXPECT_EQ(
        allFinite({halfBits(DType::kF16, {0x3c00, 0x7bff, 0xfbff, 0x0001})},
                  backend),
        1);
    EXPECT_EQ(allFinite({halfBits(DType::kF16, {0x3c00, 0x7c00})}, backend), 0);
    EXPECT_EQ(allFinite({halfBits(DType::kF16, {0xfc00})}, backend), 0);
    EXPECT_EQ(allFinite({halfBits(DType::kF16, {0x7e00, 0x3c00})}, backend), 0);
    // A finite f16 whose bits would be inf/NaN as bf16 (0x7f80 = 61440) and
    // a finite bf16 whose bits would be inf as f16 (0x7c00 ~ 2.6e36).
    EXPECT_EQ(allFinite({halfBits(DType::kF16, {0x7b80})}, backend), 1);
    EXPECT_EQ(allFinite({halfBits(DType::kBF16, {0x7c00, 0x7e00})}, backend),
              1);
  }
}

TEST(AllFinite, MultipleInputsOfDifferentTypesAndShapes) {
  Tensor a = randomF32({4, 3}, 1);
  Tensor b = halfBits(DType::kBF16, {0x3f80, 0x4000, 0xbf80});
  Tensor c = halfBits(DType::kF16, {0x3c00, 0x4000});
  Tensor scalar = makeF32({}, {5});
  for (const char *backend : kBackends) {
    SCOPED_TRACE(backend);
    EXPECT_EQ(allFinite({a, b, c, scalar}, backend), 1);
    EXPECT_EQ(allFinite({a, b, c, makeF32({}, {kNaN})}, backend), 0);
    EXPECT_EQ(
        allFinite({a, halfBits(DType::kBF16, {0x3f80, 0x7f80}), c}, backend),
        0);
    EXPECT_EQ(
        allFinite({a, b, halfBits(DType::kF16, {0x3c00, 0x7c00})}, backend), 0);
    Tensor bad = a.clone();
    bad.data<float>()[11] = -kInf;
    EXPECT_EQ(allFinite({bad, b, c}, backend), 0);
  }
}

TEST(AllFinite, OneNonFiniteAnywhereInALongTensor) {
  // 10007 elements: whole blocks of the kernel's loop and a tail.
  const int64_t n = 10007;
  Tensor base = randomF32({n}, 3);
  std::vector<uint16_t> bf16Bits(n, 0x3f80), f16Bits(n, 0x3c00);
  for (const char *backend : kBackends) {
    SCOPED_TRACE(backend);
    EXPECT_EQ(allFinite({base}, backend), 1);
    EXPECT_EQ(allFinite({halfBits(DType::kBF16, bf16Bits)}, backend), 1);
    EXPECT_EQ(allFinite({halfBits(DType::kF16, f16Bits)}, backend), 1);
    for (int64_t at : {int64_t{0}, int64_t{1023}, int64_t{1024}, int64_t{9215},
                       int64_t{9216}, n - 1}) {
      SCOPED_TRACE(at);
      Tensor t = base.clone();
      t.data<float>()[at] = kInf;
      EXPECT_EQ(allFinite({t}, backend), 0);
      t.data<float>()[at] = kNaN;
      EXPECT_EQ(allFinite({t}, backend), 0);
      std::vector<uint16_t> bits = bf16Bits;
      bits[at] = 0xff80;
      EXPECT_EQ(allFinite({halfBits(DType::kBF16, bits)}, backend), 0);
      bits = f16Bits;
      bits[at] = 0x7e00;
      EXPECT_EQ(allFinite({halfBits(DType::kF16, bits)}, backend), 0);
    }
  }
}

//===----------------------------------------------------------------------===//
// select
//===----------------------------------------------------------------------===//

TEST(Select, F32BothWays) {
  Tensor t = makeF32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor f = makeF32({2, 3}, {-1, -2, -3, -4, -5, -6});
  for (const char *backend : kBackends) {
    SCOPED_TRACE(backend);
    for (const Shape &predShape : {Shape{}, Shape{1}}) {
      Tensor yes = runOk("select", {}, {boolScalar(true, predShape), t, f},
                         {F32, {2, 3}}, backend);
      EXPECT_EQ(values<float>(yes), values<float>(t));
      Tensor no = runOk("select", {}, {boolScalar(false, predShape), t, f},
                        {F32, {2, 3}}, backend);
      EXPECT_EQ(values<float>(no), values<float>(f));
    }
    // Non-finite payloads are copied as they are.
    Tensor odd = runOk(
        "select", {},
        {boolScalar(true), makeF32({2}, {kInf, kNaN}), makeF32({2}, {0, 0})},
        {F32, {2}}, backend);
    EXPECT_TRUE(std::isinf(odd.data<float>()[0]));
    EXPECT_TRUE(std::isnan(odd.data<float>()[1]));
  }
}

TEST(Select, IntegerBoolAndHalfPayloads) {
  Tensor ti = makeTensor<int32_t>(DType::kI32, {4}, {1, 2, 3, 4});
  Tensor fi = makeTensor<int32_t>(DType::kI32, {4}, {-7, 8, -9, 10});
  Tensor tl = makeTensor<int64_t>(DType::kI64, {2}, {int64_t{1} << 40, 3});
  Tensor fl = makeTensor<int64_t>(DType::kI64, {2}, {5, -(int64_t{1} << 41)});
  Tensor tb = makeTensor<uint8_t>(Bool, {3}, {1, 0, 1});
  Tensor fb = makeTensor<uint8_t>(Bool, {3}, {0, 1, 0});
  // f16 bits that converting to f32 and back would change (a signalling
  // NaN's payload): select copies bytes.
  Tensor th = halfBits(DType::kF16, {0x7c01, 0x3c00});
  Tensor fh = halfBits(DType::kF16, {0x0001, 0xfc00});
  for (const char *backend : kBackends) {
    SCOPED_TRACE(backend);
    for (bool pred : {true, false}) {
      SCOPED_TRACE(pred);
      Tensor i = runOk("select", {}, {boolScalar(pred), ti, fi},
                       {DType::kI32, {4}}, backend);
      EXPECT_EQ(values<int32_t>(i), values<int32_t>(pred ? ti : fi));
      Tensor l = runOk("select", {}, {boolScalar(pred), tl, fl},
                       {DType::kI64, {2}}, backend);
      EXPECT_EQ(values<int64_t>(l), values<int64_t>(pred ? tl : fl));
      Tensor b =
          runOk("select", {}, {boolScalar(pred), tb, fb}, {Bool, {3}}, backend);
      EXPECT_EQ(values<uint8_t>(b), values<uint8_t>(pred ? tb : fb));
      Tensor h = runOk("select", {}, {boolScalar(pred), th, fh},
                       {DType::kF16, {2}}, backend);
      EXPECT_EQ(values<uint16_t>(h), values<uint16_t>(pred ? th : fh));
    }
  }
}

TEST(Select, PredIsAnyNonZeroByte) {
  // A bool tensor holding 2 (e.g. from a foreign producer) is true.
  Tensor pred = makeTensor<uint8_t>(Bool, {}, {2});
  Tensor r = runOk("select", {}, {pred, makeF32({1}, {1}), makeF32({1}, {2})},
                   {F32, {1}});
  EXPECT_EQ(r.data<float>()[0], 1.0f);
}

//===----------------------------------------------------------------------===//
// loss_scale_update
//===----------------------------------------------------------------------===//

struct ScaleState {
  float scale, goodSteps;
};

ScaleState lossScaleUpdate(float scale, float goodSteps, bool finite,
                           const AttrMap &attrs = {},
                           const std::string &backend = "reference") {
  auto r = runOp(
      "loss_scale_update", attrs,
      {makeF32({}, {scale}), makeF32({}, {goodSteps}), boolScalar(finite)},
      {{F32, {}}, {F32, {}}}, backend);
  EXPECT_TRUE(r.ok()) << r.status().toString();
  if (!r.ok())
    return {kNaN, kNaN};
  return {(*r)[0].data<float>()[0], (*r)[1].data<float>()[0]};
}

TEST(LossScaleUpdate, SkipBacksOffAndResets) {
  for (const char *backend : kBackends) {
    SCOPED_TRACE(backend);
    ScaleState s = lossScaleUpdate(1024, 5, false, {}, backend);
    EXPECT_EQ(s.scale, 512);
    EXPECT_EQ(s.goodSteps, 0);
    s = lossScaleUpdate(1024, 5, false, {{"backoff_factor", floatAttr(0.25)}},
                        backend);
    EXPECT_EQ(s.scale, 256);
    EXPECT_EQ(s.goodSteps, 0);
    // Even one step before growing.
    s = lossScaleUpdate(8, 2, false, {{"growth_interval", intAttr(3)}},
                        backend);
    EXPECT_EQ(s.scale, 4);
    EXPECT_EQ(s.goodSteps, 0);
  }
}

TEST(LossScaleUpdate, GrowsAtTheInterval) {
  for (const char *backend : kBackends) {
    SCOPED_TRACE(backend);
    AttrMap attrs = {{"growth_interval", intAttr(3)}};
    ScaleState s = lossScaleUpdate(1024, 0, true, attrs, backend);
    EXPECT_EQ(s.scale, 1024);
    EXPECT_EQ(s.goodSteps, 1);
    s = lossScaleUpdate(1024, 1, true, attrs, backend);
    EXPECT_EQ(s.scale, 1024);
    EXPECT_EQ(s.goodSteps, 2);
    s = lossScaleUpdate(1024, 2, true, attrs, backend); // the 3rd good step
    EXPECT_EQ(s.scale, 2048);
    EXPECT_EQ(s.goodSteps, 0);
    attrs["growth_factor"] = floatAttr(4);
    s = lossScaleUpdate(1024, 2, true, attrs, backend);
    EXPECT_EQ(s.scale, 4096);
    EXPECT_EQ(s.goodSteps, 0);
    // growth_interval 1 grows after every good step.
    s = lossScaleUpdate(3, 0, true, {{"growth_interval", intAttr(1)}}, backend);
    EXPECT_EQ(s.scale, 6);
    EXPECT_EQ(s.goodSteps, 0);
  }
}

TEST(LossScaleUpdate, GrowthToInfKeepsTheScale) {
  for (const char *backend : kBackends) {
    SCOPED_TRACE(backend);
    ScaleState s = lossScaleUpdate(FLT_MAX / 1.5f, 1, true,
                                   {{"growth_interval", intAttr(2)}}, backend);
    EXPECT_EQ(s.scale, FLT_MAX / 1.5f);
    EXPECT_EQ(s.goodSteps, 0);
    // Just below the overflow it grows.
    s = lossScaleUpdate(FLT_MAX / 2, 1, true, {{"growth_interval", intAttr(2)}},
                        backend);
    EXPECT_EQ(s.scale, FLT_MAX / 2 * 2);
    EXPECT_EQ(s.goodSteps, 0);
  }
}

TEST(LossScaleUpdate, DefaultAttributes) {
  // growth_interval 2000, growth_factor 2, backoff_factor 0.5.
  for (const char *backend : kBackends) {
    SCOPED_TRACE(backend);
    ScaleState s = lossScaleUpdate(65536, 1998, true, {}, backend);
    EXPECT_EQ(s.scale, 65536);
    EXPECT_EQ(s.goodSteps, 1999);
    s = lossScaleUpdate(65536, 1999, true, {}, backend);
    EXPECT_EQ(s.scale, 131072);
    EXPECT_EQ(s.goodSteps, 0);
    s = lossScaleUpdate(65536, 1999, false, {}, backend);
    EXPECT_EQ(s.scale, 32768);
    EXPECT_EQ(s.goodSteps, 0);
  }
}

TEST(LossScaleUpdate, ScalarsOfShapeOneAreAccepted) {
  auto r = runOp("loss_scale_update", {{"growth_interval", intAttr(2)}},
                 {makeF32({1}, {10}), makeF32({1}, {1}), boolScalar(true, {1})},
                 {{F32, {1}}, {F32, {1}}}, "cpu");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ((*r)[0].data<float>()[0], 20);
  EXPECT_EQ((*r)[1].data<float>()[0], 0);
}

//===----------------------------------------------------------------------===//
// A loss-scaled step's bookkeeping as one plan
//===----------------------------------------------------------------------===//

// grads -> all_finite -> (select of the updated/old param, loss_scale_update)
// with param, scale and good_steps as states, as gopt-loss-scaling emits
// it: the bool is an intermediate in the arena read by two ops.
TEST(LossScalingPlan, SkipsOverflowedStepsAndGrowsTheScale) {
  PlanBuilder b("loss_scaled_step");
  int g = b.addInput("grad", F32, {6});
  int h = b.addInput("grad_bf16", DType::kBF16, {3});
  int param = b.addState("param", makeF32({6}, {1, 2, 3, 4, 5, 6}));
  int scale = b.addState("scale", makeF32({}, {1024}));
  int good = b.addState("good_steps", F32, {});
  int ok = b.addIntermediate("ok", Bool, {});
  int updated = b.addIntermediate("updated", F32, {6});
  int newParam = b.addIntermediate("new_param", F32, {6});
  int newScale = b.addIntermediate("new_scale", F32, {});
  int newGood = b.addIntermediate("new_good_steps", F32, {});
  b.addOp("all_finite", "finite", {g, h}, {ok});
  b.addOp("sub", "sgd", {param, g}, {updated});
  b.addOp("select", "keep_if_overflow", {ok, updated, param}, {newParam});
  b.addOp("loss_scale_update", "scale_update", {scale, good, ok},
          {newScale, newGood}, {{"growth_interval", intAttr(2)}});
  b.setStateUpdate(param, newParam);
  b.setStateUpdate(scale, newScale);
  b.setStateUpdate(good, newGood);
  b.bindOutput("finite", ok);
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();

  for (const char *backend : kBackends) {
    SCOPED_TRACE(backend);
    SessionOptions options;
    options.backend = backend;
    auto session = Session::create(*plan, options);
    ASSERT_TRUE(session.ok()) << session.status().toString();
    Session &s = **session;
    Tensor ones = makeF32({6}, {1, 1, 1, 1, 1, 1});
    Tensor halfOk = halfBits(DType::kBF16, {0x3f80, 0x3f80, 0x3f80});
    Tensor halfInf = halfBits(DType::kBF16, {0x3f80, 0x7f80, 0x3f80});
    Tensor nanGrad = makeF32({6}, {1, 1, 1, 1, 1, kNaN});
    struct StepCase {
      Tensor grad, gradBf16;
      bool finite;
      float scale, goodSteps, param0;
    };
    const std::vector<StepCase> steps = {
        {ones, halfOk, true, 1024, 1, 0},      // good: update, count
        {ones, halfOk, true, 2048, 0, -1},     // 2nd good: grow
        {nanGrad, halfOk, false, 1024, 0, -1}, // NaN: skip, back off
        {ones, halfInf, false, 512, 0, -1},    // inf in the bf16 grad
        {ones, halfOk, true, 512, 1, -2},
    };
    for (size_t i = 0; i < steps.size(); ++i) {
      SCOPED_TRACE(i);
      const StepCase &c = steps[i];
      ASSERT_TRUE(s.setInput("grad", c.grad).ok());
      ASSERT_TRUE(s.setInput("grad_bf16", c.gradBf16).ok());
      Status st = s.run();
      ASSERT_TRUE(st.ok()) << st.toString();
      auto finite = s.output("finite");
      ASSERT_TRUE(finite.ok());
      EXPECT_EQ(finite->data<uint8_t>()[0], c.finite ? 1 : 0);
      EXPECT_EQ(s.state("scale")->data<float>()[0], c.scale);
      EXPECT_EQ(s.state("good_steps")->data<float>()[0], c.goodSteps);
      Tensor p = *s.state("param");
      EXPECT_EQ(p.data<float>()[0], c.param0);
      EXPECT_EQ(p.data<float>()[5], c.param0 + 5);
    }
    // The three ops ran their reference kernels (no fast kernel exists).
    int found = 0;
    for (const OpProfile &prof : s.opProfiles())
      if (prof.kind == "all_finite" || prof.kind == "select" ||
          prof.kind == "loss_scale_update") {
        ++found;
        EXPECT_EQ(prof.implementation, "reference") << prof.kind;
      }
    EXPECT_EQ(found, 3);
  }
}

//===----------------------------------------------------------------------===//
// Schema errors
//===----------------------------------------------------------------------===//

// Runs a one-op plan expected to fail (at session creation) and checks the
// message names the op and `needle`.
void expectError(const std::string &kind, const AttrMap &attrs,
                 const std::vector<Tensor> &inputs,
                 const std::vector<OutSpec> &outs, const std::string &needle) {
  auto r = runOp(kind, attrs, inputs, outs, "cpu");
  ASSERT_FALSE(r.ok()) << kind << " accepted, expected: " << needle;
  EXPECT_NE(r.status().message().find(needle), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find(kind), std::string::npos)
      << r.status().message();
}

TEST(LossScalingSchemas, SelectPredAndOperands) {
  Tensor a = randomF32({2, 3}, 1);
  OutSpec out = {F32, {2, 3}};
  expectError("select", {}, {makeF32({}, {1}), a, a}, {out},
              "pred must have element type bool, got f32");
  expectError("select", {}, {makeTensor<uint8_t>(Bool, {2}, {1, 0}), a, a},
              {out},
              "expects pred to be a scalar [] ([1] is accepted too), got [2]");
  expectError(
      "select", {}, {makeTensor<uint8_t>(Bool, {1, 1}, {1}), a, a}, {out},
      "expects pred to be a scalar [] ([1] is accepted too), got [1, 1]");
  expectError("select", {}, {boolScalar(true), a, randomF32({2, 4}, 2)}, {out},
              "expects on_true and on_false of one type, got f32[2,3] and "
              "f32[2,4]");
  expectError("select", {},
              {boolScalar(true), a,
               makeTensor<int32_t>(DType::kI32, {2, 3}, {1, 2, 3, 4, 5, 6})},
              {out},
              "expects on_true and on_false of one type, got f32[2,3] and "
              "i32[2,3]");
  // The result has on_true's type.
  expectError("select", {},
              {boolScalar(true), makeTensor<int32_t>(DType::kI32, {1}, {1}),
               makeTensor<int32_t>(DType::kI32, {1}, {2})},
              {{F32, {1}}}, "the op produces i32");
  expectError("select", {}, {boolScalar(true), a}, {out},
              "has 2 operands, expected 3 to 3");
}

TEST(LossScalingSchemas, AllFiniteOperandsAndResult) {
  Tensor a = randomF32({3}, 1);
  expectError("all_finite", {},
              {a, makeTensor<int32_t>(DType::kI32, {3}, {1, 2, 3})},
              {{Bool, {}}},
              "operand 1 [3] must have a floating-point element type (f32, "
              "f16 or bf16), got i32");
  expectError("all_finite", {}, {}, {{Bool, {}}},
              "expects at least one operand");
  expectError("all_finite", {}, {a}, {{F32, {}}}, "the op produces bool");
  expectError("all_finite", {}, {a}, {{Bool, {1}}},
              "has shape [] but the plan declares [1]");
}

TEST(LossScalingSchemas, LossScaleUpdateOperandsAndAttributes) {
  Tensor s = makeF32({}, {1024}), n = makeF32({}, {0});
  Tensor fin = boolScalar(true);
  std::vector<OutSpec> outs = {{F32, {}}, {F32, {}}};
  const char *k = "loss_scale_update";
  expectError(k, {{"growth_factor", floatAttr(1.0)}}, {s, n, fin}, outs,
              "expects growth_factor > 1, got 1");
  expectError(k, {{"growth_factor", floatAttr(0.5)}}, {s, n, fin}, outs,
              "expects growth_factor > 1, got 0.5");
  expectError(k, {{"backoff_factor", floatAttr(1.0)}}, {s, n, fin}, outs,
              "expects backoff_factor in (0, 1), got 1");
  expectError(k, {{"backoff_factor", floatAttr(0)}}, {s, n, fin}, outs,
              "expects backoff_factor in (0, 1), got 0");
  expectError(k, {{"growth_interval", intAttr(0)}}, {s, n, fin}, outs,
              "expects growth_interval >= 1, got 0");
  expectError(k, {{"growth_interval", floatAttr(10)}}, {s, n, fin}, outs,
              "attribute 'growth_interval' must be a int");
  expectError(k, {}, {halfBits(DType::kF16, {0x3c00}), n, fin}, outs,
              "scale must have element type f32, got f16");
  expectError(k, {}, {s, n, makeF32({}, {1})}, outs,
              "finite must have element type bool, got f32");
  expectError(
      k, {}, {s, makeF32({2}, {0, 0}), fin}, outs,
      "expects good_steps to be a scalar [] ([1] is accepted too), got [2]");
  expectError(k, {}, {s, n, fin}, {{F32, {}}}, "has 1 results, expected 2");
}

} // namespace
