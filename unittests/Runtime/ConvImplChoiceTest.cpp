//===- ConvImplChoiceTest.cpp - A batch-1 convolution's kernel by time ----===//
//
// fastestConvImpl (runtime/src/cpu/ConvImplChoice.h) may replace oneDNN's
// first kernel by a faster one, but only by one that reads and writes the
// same layouts (the schedule has placed reorders for them); the network
// then computes what the reference does with and without the choice.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/ConvImplChoice.h"
#include "TestUtil.h"

#include <cstdlib>
#include <cstring>

using namespace gopt::runtime;
using namespace gopt::runtime::testing;

namespace gopt::runtime::cpu {
dnnl::engine &cpuEngine();
} // namespace gopt::runtime::cpu

namespace {
using dnnl::memory;
using Tag = memory::format_tag;
using OpDesc = dnnl::convolution_forward::desc;

// ResNet-50's 14x14 256 -> 1024 1x1 convolution in NHWC, where oneDNN 2.6
// lists brgconv_1x1, jit_1x1 and jit kernels.
OpDesc pointwise(Tag src, Tag dst) {
  const memory::data_type f32 = memory::data_type::f32;
  return OpDesc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      memory::desc({1, 256, 14, 14}, f32, src),
      memory::desc({1024, 256, 1, 1}, f32, Tag::any),
      memory::desc({1024}, f32, Tag::x),
      memory::desc({1, 1024, 14, 14}, f32, dst), {1, 1}, {0, 0}, {0, 0});
}

TEST(ConvImplChoice, KeepsTheLayoutsOfTheFirstKernel) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  attr.set_post_ops(ops);
  OpDesc nhwc = pointwise(Tag::nhwc, Tag::nhwc);
  dnnl::convolution_forward::primitive_desc first(nhwc, attr, cpu::cpuEngine());
  auto chosen = cpu::fastestConvImpl(
      first, [](const memory::desc &, const memory::desc &) {
        return pointwise(Tag::nhwc, Tag::nhwc);
      });
  EXPECT_TRUE(chosen.src_desc() == first.src_desc());
  EXPECT_TRUE(chosen.dst_desc() == first.dst_desc());
  EXPECT_EQ(std::strstr(chosen.impl_info_str(), "ref"), nullptr);
  // A list whose kernels all write another layout offers nothing.
  auto same = cpu::fastestConvImpl(
      first, [](const memory::desc &, const memory::desc &) {
        return pointwise(Tag::nhwc, Tag::nChw16c);
      });
  EXPECT_STREQ(same.impl_info_str(), first.impl_info_str());
}

// The same convolution (with a residual sum and relu) in a network at
// batch 1, the choice on and off: both as the reference computes it.
TEST(ConvImplChoice, NetworkMatchesReferenceEitherWay) {
  PlanBuilder b("g");
  int x = b.addInput("x", DType::kF32, {1, 256, 14, 14});
  int r = b.addInput("r", DType::kF32, {1, 1024, 14, 14});
  int w = b.addConstant("w", randomF32({1024, 256, 1, 1}, 3));
  int bias = b.addConstant("b", randomF32({1024}, 4));
  int c = b.addIntermediate("c", DType::kF32, {1, 1024, 14, 14});
  b.addOp("conv2d", "conv", {x, w, bias}, {c},
          {{"data_format", stringAttr("NCHW")},
           {"filter_format", stringAttr("OIHW")},
           {"pads", intsAttr({0, 0, 0, 0})},
           {"activation", stringAttr("none")}});
  int s = b.addIntermediate("s", DType::kF32, {1, 1024, 14, 14});
  b.addOp("add", "add", {c, r}, {s}, {});
  int y = b.addOutput("y", DType::kF32, {1, 1024, 14, 14});
  b.addOp("relu", "relu", {s}, {y}, {});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  std::vector<Tensor> in = {randomF32({1, 256, 14, 14}, 5),
                            randomF32({1, 1024, 14, 14}, 6)};
  RunResult ref = runPlan(*plan, "reference", in, 1);
  for (const char *setting : {"1", "0"}) {
    setenv("GOPT_CONV_MEASURED_IMPL", setting, 1);
    RunResult cpu = runPlan(*plan, "cpu", in, 1);
    unsetenv("GOPT_CONV_MEASURED_IMPL");
    ASSERT_EQ(cpu.outputs.size(), 1u);
    EXPECT_LT(maxAbsDiff(ref.outputs[0], cpu.outputs[0]), 1e-3f) << setting;
  }
}

} // namespace
