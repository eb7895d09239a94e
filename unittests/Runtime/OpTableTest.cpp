//===- OpTableTest.cpp - The op table generated from the ODS --------------===//
//
// The table is derived from the .td files; these tests hold the rest of the
// runtime to it: every op it lists can run on the CPU, defaults reach the
// kernels, and the generated math agrees with its documented formulas.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/OpAttrs.h"
#include "gopt/runtime/OpSchema.h"
#include "gopt/runtime/PlanBuilder.h"
#include "gopt/runtime/UnaryMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace gopt::runtime;
namespace plan = gopt::plan;

namespace {

TEST(OpTableTest, EveryRuntimeOpHasAReferenceKernel) {
  const KernelRegistry &registry = KernelRegistry::global();
  ASSERT_GT(allOpSchemas().size(), 60u);
  for (const OpSchema &schema : allOpSchemas()) {
    // A dynamic op runs as its static op's kernel.
    std::string kind = schema.staticKind ? schema.staticKind : schema.kind;
    EXPECT_TRUE(registry.hasKernel(kind, "reference"))
        << "op '" << schema.kind << "' is in the ODS-generated table but has "
        << "no reference kernel (or mark it compileTimeOnly in ODS)";
  }
}

TEST(OpTableTest, DynamicOpsNameTheirStaticOpsAttributes) {
  for (const OpSchema &schema : allOpSchemas()) {
    if (!schema.staticKind)
      continue;
    const OpSchema *staticSchema = findOpSchema(schema.staticKind);
    ASSERT_NE(staticSchema, nullptr) << schema.kind;
    EXPECT_EQ(staticSchema->staticKind, nullptr) << schema.kind;
    EXPECT_EQ(schema.hostValueAttrs.size(), schema.hostValueOperands.size())
        << schema.kind;
  }
}

TEST(OpTableTest, CompileTimeOnlyOpsAreNotInTheTable) {
  EXPECT_EQ(findOpSchema("constant"), nullptr);
  EXPECT_NE(findOpSchema("conv2d"), nullptr);
}

TEST(OpTableTest, DefaultsAreAllowedValues) {
  for (const OpSchema &schema : allOpSchemas())
    for (const AttrSpec &spec : schema.attrs) {
      EXPECT_FALSE(spec.required && spec.defaultValue)
          << schema.kind << "." << spec.name;
      if (spec.allowed.empty() || !spec.defaultValue)
        continue;
      EXPECT_NE(std::find(spec.allowed.begin(), spec.allowed.end(),
                          spec.defaultValue->s()),
                spec.allowed.end())
          << schema.kind << "." << spec.name;
    }
}

TEST(OpTableTest, EnumAttributesComeFromOds) {
  const OpSchema *conv = findOpSchema("conv2d");
  ASSERT_NE(conv, nullptr);
  std::set<std::string> names;
  for (const AttrSpec &spec : conv->attrs) {
    names.insert(spec.name);
    if (std::string(spec.name) == "padding")
      EXPECT_EQ(spec.allowed,
                (std::vector<std::string>{"EXPLICIT", "SAME", "VALID"}));
  }
  EXPECT_TRUE(names.count("data_format") && names.count("activation"));
}

TEST(OpTableTest, AbsentAttributesReadOdsDefaults) {
  plan::Op op;
  op.set_kind("batch_norm");
  OpAttrs attrs(op);
  EXPECT_EQ(attrs.getString("data_format"), "NHWC");
  EXPECT_FLOAT_EQ(attrs.getFloat("epsilon"), 0.001f);
  EXPECT_FALSE(attrs.getBool("training"));
  // A caller's explicit value for absence wins over ODS's default.
  EXPECT_EQ(attrs.getString("data_format", "NCHW"), "NCHW");
  (*op.mutable_attrs())["data_format"].set_s("NCHW");
  EXPECT_EQ(attrs.getString("data_format"), "NCHW");

  plan::Op conv;
  conv.set_kind("conv2d");
  op_attrs::Conv2DAttrs typed(conv);
  EXPECT_EQ(typed.groups(), 1);
  EXPECT_EQ(typed.filterFormat(), "HWIO");
  EXPECT_FALSE(typed.hasStrides());
  EXPECT_EQ(typed.strides({1, 1}), (std::vector<int64_t>{1, 1}));
  // Kernels and shape functions read window attributes through
  // getWindowInts: absence means shape::absentWindowAttr's 1s and 0s.
  OpAttrs convAttrs(conv);
  EXPECT_EQ(convAttrs.getWindowInts("strides"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(convAttrs.getWindowInts("dilations"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(convAttrs.getWindowInts("pads"),
            (std::vector<int64_t>{0, 0, 0, 0}));
  (*conv.mutable_attrs())["strides"].mutable_ints()->add_values(2);
  (*conv.mutable_attrs())["strides"].mutable_ints()->add_values(3);
  EXPECT_EQ(convAttrs.getWindowInts("strides"), (std::vector<int64_t>{2, 3}));
}

TEST(OpTableTest, UnaryMathOpsAreInTheTable) {
  for (const char *name : gopt::unary_math::kOpNames)
    EXPECT_NE(findOpSchema(name), nullptr) << name;
}

// The generated functions against the formulas of the ONNX operator docs.
TEST(OpTableTest, UnaryMathMatchesFormulas) {
  auto eval = [](const char *name, double x, bool gradient = false) {
    double y = NAN;
    auto noAttrs = [](const char *, float dflt) { return dflt; };
    bool known =
        gopt::unary_math::visit(name, noAttrs, [&](const auto &fn, bool) {
          y = gradient ? fn.derivative(x) : fn(x);
        });
    EXPECT_TRUE(known) << name;
    return y;
  };
  EXPECT_NEAR(eval("hard_sigmoid", 1.0), 0.7, 1e-6);
  EXPECT_NEAR(eval("hard_swish", 1.0), 1.0 * (1.0 / 6 + 0.5), 1e-12);
  EXPECT_NEAR(eval("softplus", 100.0), 100.0, 1e-12); // no overflow
  EXPECT_NEAR(eval("softplus", -100.0), std::exp(-100.0), 1e-50);
  EXPECT_NEAR(eval("softsign", 3.0), 0.75, 1e-12);
  EXPECT_NEAR(eval("elu", -1.0), std::exp(-1.0) - 1, 1e-12);
  EXPECT_NEAR(eval("selu", -1.0),
              1.0507009873554805 * 1.6732632423543772 * (std::exp(-1.0) - 1),
              1e-6);
  EXPECT_NEAR(eval("celu", -2.0), std::exp(-2.0) - 1, 1e-12);
  EXPECT_NEAR(eval("mish", 1.0), std::tanh(std::log1p(std::exp(1.0))), 1e-12);
  EXPECT_EQ(eval("thresholded_relu", 1.0), 0.0);
  EXPECT_EQ(eval("thresholded_relu", 1.5), 1.5);
  EXPECT_EQ(eval("round", 2.5), 2.0);
  EXPECT_EQ(eval("round", -0.5), 0.0);
  EXPECT_EQ(eval("sign", -3.0), -1.0);
  EXPECT_TRUE(std::isnan(eval("sign", NAN)));
  EXPECT_NEAR(eval("reciprocal_grad", 2.0, true), -0.25, 1e-12);
  EXPECT_NEAR(eval("cos_grad", 0.5, true), -std::sin(0.5), 1e-12);
  // Derivatives against central differences where the functions are smooth.
  for (const char *name :
       {"softplus", "softsign", "elu", "selu", "celu", "mish", "hard_swish",
        "sin", "reciprocal", "atan", "asinh", "sinh", "cosh", "expm1"})
    for (double x : {-1.7, -0.3, 0.4, 2.2}) {
      const double h = 1e-6;
      double numeric = (eval(name, x + h) - eval(name, x - h)) / (2 * h);
      EXPECT_NEAR(eval(name, x, true), numeric, 1e-5) << name << " at " << x;
    }
}

} // namespace

namespace {

/// The arithmetic the ODS flopFunction of `kind` counts at these shapes.
double flopsOf(const std::string &kind, const AttrMap &attrs,
               const std::vector<Shape> &in, const std::vector<Shape> &out) {
  const OpSchema *schema = findOpSchema(kind);
  EXPECT_NE(schema, nullptr) << kind;
  if (!schema || !schema->countFlops) {
    ADD_FAILURE() << kind << " has no flopFunction";
    return -1;
  }
  plan::Op op;
  op.set_kind(kind);
  for (const auto &[name, value] : attrs)
    (*op.mutable_attrs())[name] = value;
  return schema->countFlops(OpAttrs(op), in, out);
}

// A multiply-add is 2 operations; each output element of a convolution is a
// dot product of (input channels / groups) x kernel taps.
TEST(OpTableTest, FlopCountsOfComputeHeavyOps) {
  // NHWC 3x3, 16 -> 32 channels, 8x8 output, batch 2.
  EXPECT_EQ(
      flopsOf("conv2d", {}, {{2, 10, 10, 16}, {3, 3, 16, 32}}, {{2, 8, 8, 32}}),
      2.0 * (2 * 8 * 8 * 32) * (16 * 9));
  // NCHW depthwise (groups 16): one input channel per output.
  EXPECT_EQ(flopsOf("conv2d",
                    {{"data_format", stringAttr("NCHW")},
                     {"filter_format", stringAttr("OIHW")},
                     {"groups", intAttr(16)}},
                    {{2, 16, 10, 10}, {16, 1, 3, 3}}, {{2, 16, 8, 8}}),
            2.0 * (2 * 16 * 8 * 8) * 9);
  // [4, 5, 6] x [6, 7] and the same with a transposed first operand.
  EXPECT_EQ(flopsOf("matmul", {}, {{4, 5, 6}, {6, 7}}, {{4, 5, 7}}),
            2.0 * 4 * 5 * 7 * 6);
  EXPECT_EQ(flopsOf("matmul", {{"transpose_a", boolAttr(true)}},
                    {{4, 6, 5}, {6, 7}}, {{4, 5, 7}}),
            2.0 * 4 * 5 * 7 * 6);
  // Transposed conv: every input element scatters through its filter slice.
  EXPECT_EQ(flopsOf("conv2d_transpose", {{"data_format", stringAttr("NCHW")}},
                    {{1, 8, 5, 5}, {8, 4, 2, 2}}, {{1, 4, 10, 10}}),
            2.0 * (8 * 5 * 5) * (4 * 2 * 2));
  // The convolution gradients cost what the forward convolution does.
  double forward = 2.0 * (2 * 8 * 8 * 32) * (16 * 9);
  EXPECT_EQ(flopsOf("conv2d_backprop_input", {},
                    {{2, 8, 8, 32}, {3, 3, 16, 32}}, {{2, 10, 10, 16}}),
            forward);
  EXPECT_EQ(flopsOf("conv2d_backprop_filter", {},
                    {{2, 10, 10, 16}, {2, 8, 8, 32}}, {{3, 3, 16, 32}}),
            forward);
  // LSTM, 100 steps of batch 8, 80 features, hidden 256, one direction:
  // per step and sequence 4 gates of 256 over the input and the state.
  EXPECT_EQ(flopsOf("lstm", {}, {{100, 8, 80}, {1, 1024, 80}, {1, 1024, 256}},
                    {{100, 1, 8, 256}}),
            2.0 * 100 * 8 * 1024 * (80 + 256));
  // Memory-bound ops are not counted.
  EXPECT_EQ(findOpSchema("relu")->countFlops, nullptr);
}

} // namespace
