//===- AmxConvFilterGradTest.cpp - wide bf16 filter gradients on AMX ------===//
//
// conv2d_backprop_filter of NHWC bf16 convolutions with 32k channels both
// ways (ResNet-18's 3x3 and 1x1 layers, strides 1 and 2) runs on gopt's AMX
// kernel (AmxConvFilterGrad.cpp) on AMX CPUs: it must compute what the
// reference kernel computes, within bf16 rounding, for every tap, channel
// and layout, including the grid's edges (odd sizes, asymmetric pads).
// DISABLED_ResNet18Timing times it against the kernels it replaces.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "gopt/runtime/CpuInfo.h"
#include "gopt/runtime/OpSchema.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace {

const DType BF16 = DType::kBF16;

bool amxCpu() { return cpuIsaName() == "avx512_core_amx"; }

Shape convResult(const AttrMap &attrs, const Tensor &x, const Tensor &f) {
  gopt::plan::Op op;
  op.set_kind("conv2d");
  for (const auto &[name, value] : attrs)
    (*op.mutable_attrs())[name] = value;
  std::vector<Shape> out(1);
  Status s = findOpSchema("conv2d")->inferShapes(
      OpAttrs(op), {x.shape(), f.shape()}, {f.dtype(), f.dtype()}, out);
  EXPECT_TRUE(s.ok()) << s.toString();
  return out[0];
}

struct Case {
  const char *name;
  AttrMap attrs; // of the forward conv2d (NHWC)
  Shape x, filter;
};

// A one-op conv2d_backprop_filter plan of x and dy.
Plan filterGradPlan(const Case &c, const Tensor &x, const Tensor &dy) {
  AttrMap attrs = c.attrs;
  attrs["filter_shape"] = intsAttr(c.filter);
  PlanBuilder b("filter_grad");
  int in0 = b.addInput("x", BF16, x.shape());
  int in1 = b.addInput("dy", BF16, dy.shape());
  int y = b.addOutput("dw", BF16, c.filter);
  b.addOp("conv2d_backprop_filter", "op", {in0, in1}, {y}, attrs);
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  return plan.ok() ? *plan : Plan();
}

AttrMap oihw(AttrMap a) {
  a["filter_format"] = stringAttr("OIHW");
  return a;
}

AttrMap strided(int64_t s, std::vector<int64_t> pads) {
  return {{"strides", intsAttr({s, s})}, {"pads", intsAttr(pads)}};
}

// ResNet-18's filter gradients (OIHW, as the training step holds them) at
// batch 2, and edge cases of the grid.
std::vector<Case> cases() {
  const std::vector<int64_t> p1 = {1, 1, 1, 1}, p0 = {0, 0, 0, 0};
  return {
      {"Layer1_3x3s1_64",
       oihw(strided(1, p1)),
       {2, 56, 56, 64},
       {64, 64, 3, 3}},
      {"Layer2_3x3s2_64to128",
       oihw(strided(2, p1)),
       {2, 56, 56, 64},
       {128, 64, 3, 3}},
      {"Layer2_1x1s2_64to128",
       oihw(strided(2, p0)),
       {2, 56, 56, 64},
       {128, 64, 1, 1}},
      {"Layer2_3x3s1_128",
       oihw(strided(1, p1)),
       {2, 28, 28, 128},
       {128, 128, 3, 3}},
      {"Layer3_3x3s2_128to256",
       oihw(strided(2, p1)),
       {2, 28, 28, 128},
       {256, 128, 3, 3}},
      {"Layer3_3x3s1_256",
       oihw(strided(1, p1)),
       {2, 14, 14, 256},
       {256, 256, 3, 3}},
      {"Layer4_3x3s2_256to512",
       oihw(strided(2, p1)),
       {2, 14, 14, 256},
       {512, 256, 3, 3}},
      {"Layer4_1x1s2_256to512",
       oihw(strided(2, p0)),
       {2, 14, 14, 256},
       {512, 256, 1, 1}},
      {"Layer4_3x3s1_512",
       oihw(strided(1, p1)),
       {3, 7, 7, 512},
       {512, 512, 3, 3}},
      // HWIO, odd sizes, asymmetric pads (top 2, bottom 0, left 0, right
      // 1), a 1x1 at unit stride, a 5x3 window with stride 2x1, and a grid
      // whose pixel count is odd (pairs straddling images).
      {"HwioOddAsymmetric",
       {{"pads", intsAttr({2, 0, 0, 1})}},
       {3, 9, 11, 32},
       {3, 3, 32, 64}},
      {"Hwio1x1Unit", {}, {2, 5, 7, 96}, {1, 1, 96, 32}},
      {"Oihw5x3Stride2x1",
       oihw({{"strides", intsAttr({2, 1})}, {"pads", intsAttr({2, 1, 1, 1})}}),
       {2, 13, 9, 64},
       {32, 64, 5, 3}},
      {"Stride2OddInput",
       oihw(strided(2, p1)),
       {3, 15, 13, 32},
       {64, 32, 3, 3}},
  };
}

// Every element within 1% of the reference's largest magnitude (the
// kernel sums bf16 products in f32, the reference in double; both round
// once).
void expectClose(const Tensor &ref, const Tensor &got) {
  ASSERT_EQ(ref.shape(), got.shape());
  Tensor r = toF32(ref), g = toF32(got);
  float scale = 0;
  for (int64_t i = 0; i < r.numElements(); ++i)
    scale = std::max(scale, std::abs(r.data<float>()[i]));
  ASSERT_GT(scale, 0.0f);
  int bad = 0;
  for (int64_t i = 0; i < r.numElements() && bad < 5; ++i) {
    float a = r.data<float>()[i], b = g.data<float>()[i];
    if (!(std::abs(a - b) <= 1e-2f * scale)) {
      ADD_FAILURE() << "element " << i << ": reference " << a << ", amx " << b
                    << " (scale " << scale << ")";
      ++bad;
    }
  }
}

TEST(AmxConvFilterGrad, MatchesReferenceOnResNetShapes) {
  if (!amxCpu())
    GTEST_SKIP() << "no AMX (" << cpuIsaName() << ")";
  uint32_t seed = 900;
  for (Case c : cases()) {
    SCOPED_TRACE(c.name);
    if (!c.attrs.count("filter_format"))
      c.attrs["filter_format"] = stringAttr("HWIO");
    Tensor x = toBf16(randomF32(c.x, seed));
    Tensor f = randomF32(c.filter, seed + 1);
    Tensor dy = randomBf16(convResult(c.attrs, x, f), seed + 2);
    seed += 3;
    Plan plan = filterGradPlan(c, x, dy);
    RunResult ref = runPlan(plan, "reference", {x, dy});
    RunResult cpu = runPlan(plan, "cpu", {x, dy});
    ASSERT_FALSE(ref.outputs.empty());
    ASSERT_FALSE(cpu.outputs.empty());
    std::string impl;
    for (const OpProfile &p : cpu.profiles)
      if (p.name == "op")
        impl = p.implementation;
    EXPECT_EQ(impl, "amx-wide");
    expectClose(ref.outputs[0], cpu.outputs[0]);
  }
}

// GOPT_CONV_FILTER_AMX_WIDE=0 routes around the kernel.
TEST(AmxConvFilterGrad, SwitchOffKeepsTheOtherKernels) {
  if (!amxCpu())
    GTEST_SKIP() << "no AMX (" << cpuIsaName() << ")";
  Case c = cases()[3];
  Tensor x = toBf16(randomF32(c.x, 1));
  Tensor dy = randomBf16({2, 28, 28, 128}, 2);
  setenv("GOPT_CONV_FILTER_AMX_WIDE", "0", 1);
  RunResult cpu = runPlan(filterGradPlan(c, x, dy), "cpu", {x, dy});
  unsetenv("GOPT_CONV_FILTER_AMX_WIDE");
  for (const OpProfile &p : cpu.profiles)
    if (p.name == "op")
      EXPECT_NE(p.implementation, "amx-wide");
}

double threadCpuMs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// Per ResNet-18 filter gradient at batch 32 (GOPT_TIMING_BATCH), one
// thread: the minimum thread CPU time of `GOPT_TIMING_REPS` runs with the
// switch on and off, interleaved.
TEST(AmxConvFilterGrad, DISABLED_ResNet18Timing) {
  if (!amxCpu())
    GTEST_SKIP() << "no AMX";
  const char *b = std::getenv("GOPT_TIMING_BATCH");
  const char *r = std::getenv("GOPT_TIMING_REPS");
  const int64_t batch = b ? std::atoll(b) : 32;
  const int reps = r ? std::atoi(r) : 10;
  for (Case c : cases()) {
    const char *only = std::getenv("GOPT_TIMING_CASES");
    if (std::string(c.name).rfind("Layer", 0) != 0 ||
        (only && std::string(c.name).find(only) == std::string::npos))
      continue;
    c.x[0] = batch;
    Tensor x = toBf16(randomF32(c.x, 5));
    Tensor f = randomF32(c.filter, 6);
    Tensor dy = randomBf16(convResult(c.attrs, x, f), 7);
    Plan plan = filterGradPlan(c, x, dy);
    std::unique_ptr<Session> sessions[2];
    std::string impl[2];
    for (int on = 0; on < 2; ++on) {
      setenv("GOPT_CONV_FILTER_AMX_WIDE", on ? "1" : "0", 1);
      SessionOptions options;
      options.backend = "cpu";
      options.threads = 1;
      auto s = Session::create(plan, options);
      ASSERT_TRUE(s.ok()) << s.status().toString();
      sessions[on] = std::move(*s);
      std::vector<TensorDesc> ins = sessions[on]->inputs();
      ASSERT_TRUE(sessions[on]->setInput(ins[0].name, x).ok());
      ASSERT_TRUE(sessions[on]->setInput(ins[1].name, dy).ok());
      ASSERT_TRUE(sessions[on]->run().ok());
      for (const OpProfile &p : sessions[on]->opProfiles())
        if (p.name == "op")
          impl[on] = p.implementation;
    }
    unsetenv("GOPT_CONV_FILTER_AMX_WIDE");
    double best[2] = {1e30, 1e30};
    for (int rep = 0; rep < reps; ++rep)
      for (int on = 0; on < 2; ++on) {
        double t0 = threadCpuMs();
        ASSERT_TRUE(sessions[on]->run().ok());
        best[on] = std::min(best[on], threadCpuMs() - t0);
      }
    const Shape &dyShape = dy.shape();
    double flops = 2.0 * c.filter[0] * c.filter[1] * c.filter[2] * c.filter[3] *
                   dyShape[0] * dyShape[1] * dyShape[2];
    std::printf("%-24s %-14s %7.2f ms %6.0f GFLOP/s | %-8s %7.2f ms %6.0f "
                "GFLOP/s\n",
                c.name, impl[0].c_str(), best[0], flops / best[0] * 1e-6,
                impl[1].c_str(), best[1], flops / best[1] * 1e-6);
  }
}

} // namespace
