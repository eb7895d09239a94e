//===- CudaTrainingTest.cpp - CUDA training kernels vs. the reference -----===//
//
// Needs a GPU: every test skips with "no CUDA device" without one. Each
// training kernel against the reference backend on random data, then a
// whole small training step (conv + batch norm + relu + pool + matmul +
// loss, backward, SGD with momentum or Adam) run for several steps on both
// backends: the parameters and optimizer state must stay close. TF32 is off
// (GOPT_CUDA_TF32=0) so that cuDNN's f32 convolutions match the reference.
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include <cmath>
#include <cstdlib>
#include <random>

namespace gopt::runtime::testing {
namespace {

constexpr DType F32 = DType::kF32;

class CudaTraining : public CudaDeviceTest {};

void expectMatches(const std::string &kind, const AttrMap &attrs,
                   const std::vector<Tensor> &inputs,
                   const std::vector<OutSpec> &outs, double rtol = 1e-4,
                   double atol = 1e-5) {
  auto ref = runOp(kind, attrs, inputs, outs, "reference");
  ASSERT_TRUE(ref.ok()) << ref.status().toString();
  auto got = runOp(kind, attrs, inputs, outs, "cuda");
  ASSERT_TRUE(got.ok()) << kind << ": " << got.status().toString();
  for (size_t i = 0; i < outs.size(); ++i)
    EXPECT_TRUE(allClose((*got)[i], (*ref)[i], rtol, atol))
        << kind << " result " << i;
}

Tensor labelsOf(DType type, int64_t rows, int64_t classes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(0, classes - 1);
  Tensor t = Tensor::allocate(type, {rows});
  for (int64_t i = 0; i < rows; ++i) {
    int64_t v = dist(rng);
    if (type == DType::kI32)
      t.data<int32_t>()[i] = static_cast<int32_t>(v);
    else
      t.data<int64_t>()[i] = v;
  }
  return t;
}

// Values on a grid of 0.25 in [-2, 2]: many ties for max_pool_grad.
Tensor coarse(const Shape &shape, uint32_t seed) {
  Tensor t = randomF32(shape, seed);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = std::round(t.data<float>()[i] * 4) / 4;
  return t;
}

Tensor scaled(Tensor t, float factor, float offset = 0) {
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = t.data<float>()[i] * factor + offset;
  return t;
}

//===----------------------------------------------------------------------===//
// Each kernel
//===----------------------------------------------------------------------===//

TEST_F(CudaTraining, SoftmaxCrossEntropyAndGrad) {
  // 10 classes (fewer than a block's threads) and 1000 (several per thread),
  // i32 and i64 labels; logits up to +-40 exercise the max subtraction.
  for (int64_t classes : {10, 1000})
    for (DType labelType : {DType::kI32, DType::kI64}) {
      SCOPED_TRACE(classes);
      Tensor logits = scaled(randomF32({7, classes}, 1), 20);
      Tensor labels = labelsOf(labelType, 7, classes, 2);
      expectMatches("softmax_cross_entropy", {}, {logits, labels}, {{F32, {}}});
      expectMatches("softmax_cross_entropy_grad", {}, {logits, labels},
                    {{F32, {7, classes}}});
    }
}

TEST_F(CudaTraining, BadLabelNamesTheRow) {
  Tensor logits = randomF32({5, 10}, 3);
  Tensor labels = labelsOf(DType::kI64, 5, 10, 4);
  labels.data<int64_t>()[3] = 12;
  labels.data<int64_t>()[4] = -1;
  for (const char *kind :
       {"softmax_cross_entropy", "softmax_cross_entropy_grad"}) {
    Shape out =
        std::string(kind) == "softmax_cross_entropy" ? Shape{} : Shape{5, 10};
    auto got = runOp(kind, {}, {logits, labels}, {{F32, out}}, "cuda");
    ASSERT_FALSE(got.ok()) << kind;
    EXPECT_NE(got.status().message().find("of row 3 is outside [0, 10)"),
              std::string::npos)
        << got.status().message();
  }
}

TEST_F(CudaTraining, MseLossAndGrad) {
  Tensor p = randomF32({6, 33}, 5), t = randomF32({6, 33}, 6);
  expectMatches("mse_loss", {}, {p, t}, {{F32, {}}});
  expectMatches("mse_loss_grad", {}, {p, t}, {{F32, {6, 33}}});
}

TEST_F(CudaTraining, ReluGrad) {
  Tensor dy = randomF32({3, 5, 7}, 7);
  Tensor y = coarse({3, 5, 7}, 8); // zeros included
  for (int64_t i = 0; i < y.numElements(); ++i)
    y.data<float>()[i] = std::max(y.data<float>()[i], 0.0f);
  y.data<float>()[4] = NAN;
  expectMatches("relu_grad", {}, {dy, y}, {{F32, {3, 5, 7}}}, 0, 0);
}

TEST_F(CudaTraining, MaxPoolGrad) {
  // Non-overlapping NCHW windows; overlapping NHWC windows with padding and
  // ties (the first maximum wins); a NaN (it beats everything).
  Tensor x1 = coarse({2, 3, 8, 8}, 9), dy1 = randomF32({2, 3, 4, 4}, 10);
  expectMatches("max_pool_grad",
                {{"kernel", intsAttr({2, 2})},
                 {"strides", intsAttr({2, 2})},
                 {"data_format", stringAttr("NCHW")}},
                {x1, dy1}, {{F32, {2, 3, 8, 8}}}, 1e-5, 1e-6);
  Tensor x2 = coarse({2, 7, 7, 5}, 11), dy2 = randomF32({2, 4, 4, 5}, 12);
  x2.data<float>()[17] = NAN;
  expectMatches("max_pool_grad",
                {{"kernel", intsAttr({3, 3})},
                 {"strides", intsAttr({2, 2})},
                 {"pads", intsAttr({1, 1, 1, 1})},
                 {"data_format", stringAttr("NHWC")}},
                {x2, dy2}, {{F32, {2, 7, 7, 5}}}, 1e-5, 1e-6);
  // ceil_mode's extra window as bottom/right padding (asymmetric).
  Tensor x3 = coarse({1, 2, 5, 5}, 13), dy3 = randomF32({1, 2, 3, 3}, 14);
  expectMatches("max_pool_grad",
                {{"kernel", intsAttr({2, 2})},
                 {"strides", intsAttr({2, 2})},
                 {"pads", intsAttr({0, 1, 0, 1})},
                 {"data_format", stringAttr("NCHW")}},
                {x3, dy3}, {{F32, {1, 2, 5, 5}}}, 1e-5, 1e-6);
}

TEST_F(CudaTraining, AvgPoolGrad) {
  Tensor x = randomF32({2, 3, 7, 7}, 15);
  for (bool includePad : {false, true})
    for (bool ceil : {false, true}) {
      SCOPED_TRACE(includePad * 2 + ceil);
      int64_t out = ceil ? 4 : 3; // (7 + 2 - 3) / 2 + 1, rounded
      Tensor dy = randomF32({2, 3, out, out}, 16);
      expectMatches("avg_pool_grad",
                    {{"kernel", intsAttr({3, 3})},
                     {"strides", intsAttr({2, 2})},
                     {"padding", stringAttr("EXPLICIT")},
                     {"pads", intsAttr({1, 0, 1, 0})},
                     {"ceil_mode", boolAttr(ceil)},
                     {"count_include_pad", boolAttr(includePad)},
                     {"data_format", stringAttr("NCHW")}},
                    {x, dy}, {{F32, {2, 3, 7, 7}}});
    }
}

struct ConvCase {
  const char *dataFormat, *filterFormat;
  Shape x, w, y; // in the op's layouts
  std::vector<int64_t> strides, dilations, pads;
  int64_t groups;
};

TEST_F(CudaTraining, Conv2dBackpropInputAndFilter) {
  const std::vector<ConvCase> cases = {
      // The MNIST CNN's convs: NCHW, OIHW, 3x3, no padding.
      {"NCHW",
       "OIHW",
       {4, 3, 12, 12},
       {8, 3, 3, 3},
       {4, 8, 10, 10},
       {1, 1},
       {1, 1},
       {0, 0, 0, 0},
       1},
      // ResNet's strided, padded convs in NHWC with HWIO filters.
      {"NHWC",
       "HWIO",
       {2, 9, 9, 4},
       {3, 3, 4, 6},
       {2, 5, 5, 6},
       {2, 2},
       {1, 1},
       {1, 1, 1, 1},
       1},
      // Groups and dilation, NCHW with HWIO filters.
      {"NCHW",
       "HWIO",
       {2, 4, 10, 10},
       {3, 3, 2, 6},
       {2, 6, 8, 8},
       {1, 1},
       {2, 2},
       {1, 1, 1, 1},
       2},
      // Asymmetric (SAME-like) padding, NHWC with OIHW filters.
      {"NHWC",
       "OIHW",
       {2, 8, 8, 3},
       {5, 3, 2, 2},
       {2, 4, 4, 5},
       {2, 2},
       {1, 1},
       {0, 1, 0, 1},
       1},
  };
  uint32_t seed = 20;
  for (const ConvCase &c : cases) {
    SCOPED_TRACE(std::string(c.dataFormat) + "/" + c.filterFormat);
    AttrMap attrs = {{"strides", intsAttr(c.strides)},
                     {"dilations", intsAttr(c.dilations)},
                     {"pads", intsAttr(c.pads)},
                     {"groups", intAttr(c.groups)},
                     {"data_format", stringAttr(c.dataFormat)},
                     {"filter_format", stringAttr(c.filterFormat)}};
    Tensor x = randomF32(c.x, seed++), w = randomF32(c.w, seed++);
    Tensor dy = randomF32(c.y, seed++);
    AttrMap input = attrs, filter = attrs;
    std::vector<int64_t> inputShape(c.x.begin(), c.x.end());
    inputShape[0] = -1;
    input["input_shape"] = intsAttr(inputShape);
    filter["filter_shape"] =
        intsAttr(std::vector<int64_t>(c.w.begin(), c.w.end()));
    expectMatches("conv2d_backprop_input", input, {dy, w}, {{F32, c.x}});
    expectMatches("conv2d_backprop_filter", filter, {x, dy}, {{F32, c.w}});
  }
}

TEST_F(CudaTraining, BatchNormTrainingForward) {
  struct Case {
    Shape x;
    const char *format;
  };
  for (const Case &c : std::vector<Case>{
           {{4, 6, 5, 5}, "NCHW"}, {{4, 5, 5, 6}, "NHWC"}, {{9, 6}, "NHWC"}}) {
    SCOPED_TRACE(c.format);
    // An offset mean, so that the two-pass variance matters.
    Tensor x = scaled(randomF32(c.x, 30), 2, 3);
    Tensor scale = randomF32({6}, 31), offset = randomF32({6}, 32);
    Tensor mean = randomF32({6}, 33), var = scaled(randomF32({6}, 34), 0.1, 1);
    Shape ch = {6};
    expectMatches("batch_norm",
                  {{"epsilon", floatAttr(1e-3)},
                   {"momentum", floatAttr(0.9)},
                   {"training", boolAttr(true)},
                   {"data_format", stringAttr(c.format)}},
                  {x, scale, offset, mean, var},
                  {{F32, c.x}, {F32, ch}, {F32, ch}, {F32, ch}, {F32, ch}});
  }
}

TEST_F(CudaTraining, BatchNormGrad) {
  for (const char *format : {"NCHW", "NHWC"}) {
    SCOPED_TRACE(format);
    Shape xs =
        std::string(format) == "NCHW" ? Shape{4, 6, 5, 5} : Shape{4, 5, 5, 6};
    Tensor dy = randomF32(xs, 40), x = scaled(randomF32(xs, 41), 2, 1);
    Tensor scale = randomF32({6}, 42), mean = randomF32({6}, 43);
    Tensor var = scaled(randomF32({6}, 44), 0.5, 2);
    expectMatches(
        "batch_norm_grad",
        {{"epsilon", floatAttr(1e-3)}, {"data_format", stringAttr(format)}},
        {dy, x, scale, mean, var}, {{F32, xs}, {F32, {6}}, {F32, {6}}}, 1e-4,
        1e-5);
  }
}

TEST_F(CudaTraining, SgdUpdate) {
  Tensor p = randomF32({1000}, 50), g = randomF32({1000}, 51);
  Tensor v = randomF32({1000}, 52);
  for (bool nesterov : {false, true})
    expectMatches("sgd_update",
                  {{"lr", floatAttr(0.1)},
                   {"momentum", floatAttr(0.9)},
                   {"weight_decay", floatAttr(1e-2)},
                   {"nesterov", boolAttr(nesterov)}},
                  {p, g, v}, {{F32, {1000}}, {F32, {1000}}}, 1e-6, 1e-7);
}

TEST_F(CudaTraining, AdamUpdate) {
  Tensor p = randomF32({1000}, 53), g = randomF32({1000}, 54);
  Tensor m = scaled(randomF32({1000}, 55), 0.1);
  Tensor v = scaled(randomF32({1000}, 56), 0.01, 0.02); // v >= 0
  AttrMap attrs = {{"lr", floatAttr(1e-3)},
                   {"beta1", floatAttr(0.9)},
                   {"beta2", floatAttr(0.999)},
                   {"epsilon", floatAttr(1e-8)},
                   {"weight_decay", floatAttr(1e-2)}};
  for (float step : {1.0f, 3.0f}) {
    SCOPED_TRACE(step);
    expectMatches("adam_update", attrs, {p, g, m, v, makeF32({}, {step})},
                  {{F32, {1000}}, {F32, {1000}}, {F32, {1000}}}, 1e-6, 1e-7);
  }
  auto bad = runOp("adam_update", attrs, {p, g, m, v, makeF32({}, {0.0f})},
                   {{F32, {1000}}, {F32, {1000}}, {F32, {1000}}}, "cuda");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("must be >= 1"), std::string::npos)
      << bad.status().message();
}

//===----------------------------------------------------------------------===//
// A whole training step
//===----------------------------------------------------------------------===//

// x [8,3,8,8] -> conv 3x3 (4 filters, pad 1) -> training batch norm -> relu
// -> max_pool 2x2 -> reshape [8,64] -> matmul [64,5] -> softmax cross
// entropy with i64 labels; the backward pass as --gopt-autodiff writes it
// (input gradient included, as an output); the optimizer updates every
// parameter, the running statistics are state too.
Plan trainingStep(bool adam) {
  constexpr int64_t B = 8;
  PlanBuilder b(adam ? "train-adam" : "train-sgd");
  int x = b.addInput("x", F32, {B, 3, 8, 8});
  int labels = b.addInput("labels", DType::kI64, {B});
  int w = b.addState("conv.w", scaled(randomF32({4, 3, 3, 3}, 60), 0.5));
  int scale = b.addState("bn.scale", scaled(randomF32({4}, 61), 0.2, 1));
  int offset = b.addState("bn.offset", scaled(randomF32({4}, 62), 0.1));
  int runMean = b.addState("bn.mean", F32, {4});
  int runVar = b.addState("bn.var", makeF32({4}, {1, 1, 1, 1}));
  int fc = b.addState("fc.w", scaled(randomF32({64, 5}, 63), 0.3));
  Shape act = {B, 4, 8, 8}, pooled = {B, 4, 4, 4}, ch = {4};
  AttrMap nchw = {{"data_format", stringAttr("NCHW")}};
  AttrMap conv = {{"pads", intsAttr({1, 1, 1, 1})},
                  {"strides", intsAttr({1, 1})},
                  {"dilations", intsAttr({1, 1})},
                  {"data_format", stringAttr("NCHW")},
                  {"filter_format", stringAttr("OIHW")}};
  AttrMap pool = {{"kernel", intsAttr({2, 2})},
                  {"strides", intsAttr({2, 2})},
                  {"data_format", stringAttr("NCHW")}};
  AttrMap bn = {{"epsilon", floatAttr(1e-3)},
                {"momentum", floatAttr(0.9)},
                {"training", boolAttr(true)},
                {"data_format", stringAttr("NCHW")}};

  int c = b.addIntermediate("c", F32, act);
  b.addOp("conv2d", "conv", {x, w}, {c}, conv);
  int n = b.addIntermediate("n", F32, act);
  int bm = b.addIntermediate("bn.batch_mean", F32, ch);
  int bv = b.addIntermediate("bn.batch_var", F32, ch);
  int newMean = b.addIntermediate("bn.new_mean", F32, ch);
  int newVar = b.addIntermediate("bn.new_var", F32, ch);
  b.addOp("batch_norm", "bn", {c, scale, offset, runMean, runVar},
          {n, bm, bv, newMean, newVar}, bn);
  int r = b.addIntermediate("r", F32, act);
  b.addOp("relu", "relu", {n}, {r});
  int p = b.addIntermediate("p", F32, pooled);
  b.addOp("max_pool", "pool", {r}, {p}, pool);
  int f = b.addIntermediate("f", F32, {B, 64});
  b.addOp("reshape", "flat", {p}, {f}, {{"shape", intsAttr({B, 64})}});
  int logits = b.addIntermediate("logits", F32, {B, 5});
  b.addOp("matmul", "fc", {f, fc}, {logits});
  int loss = b.addOutput("loss", F32, {});
  b.addOp("softmax_cross_entropy", "loss", {logits, labels}, {loss});

  int dlogits = b.addIntermediate("dlogits", F32, {B, 5});
  b.addOp("softmax_cross_entropy_grad", "loss/grad", {logits, labels},
          {dlogits});
  int dfc = b.addIntermediate("grad/fc.w", F32, {64, 5});
  b.addOp("matmul", "fc/grad_w", {f, dlogits}, {dfc},
          {{"transpose_a", boolAttr(true)}});
  int df = b.addIntermediate("df", F32, {B, 64});
  b.addOp("matmul", "fc/grad_x", {dlogits, fc}, {df},
          {{"transpose_b", boolAttr(true)}});
  int dp = b.addIntermediate("dp", F32, pooled);
  b.addOp("reshape", "flat/grad", {df}, {dp},
          {{"shape", intsAttr({B, 4, 4, 4})}});
  int dr = b.addIntermediate("dr", F32, act);
  b.addOp("max_pool_grad", "pool/grad", {r, dp}, {dr}, pool);
  int dn = b.addIntermediate("dn", F32, act);
  b.addOp("relu_grad", "relu/grad", {dr, r}, {dn});
  int dc = b.addIntermediate("dc", F32, act);
  int dscale = b.addIntermediate("grad/bn.scale", F32, ch);
  int doffset = b.addIntermediate("grad/bn.offset", F32, ch);
  b.addOp("batch_norm_grad", "bn/grad", {dn, c, scale, bm, bv},
          {dc, dscale, doffset},
          {{"epsilon", floatAttr(1e-3)}, {"data_format", stringAttr("NCHW")}});
  AttrMap filterGrad = conv, inputGrad = conv;
  filterGrad["filter_shape"] = intsAttr({4, 3, 3, 3});
  inputGrad["input_shape"] = intsAttr({-1, 3, 8, 8});
  int dw = b.addIntermediate("grad/conv.w", F32, {4, 3, 3, 3});
  b.addOp("conv2d_backprop_filter", "conv/grad_w", {x, dc}, {dw}, filterGrad);
  int dx = b.addOutput("dx", F32, {B, 3, 8, 8});
  b.addOp("conv2d_backprop_input", "conv/grad_x", {dc, w}, {dx}, inputGrad);

  b.setStateUpdate(runMean, newMean);
  b.setStateUpdate(runVar, newVar);
  struct Param {
    int value, grad;
    const char *name;
    Shape shape;
  };
  std::vector<Param> params = {{w, dw, "conv.w", {4, 3, 3, 3}},
                               {scale, dscale, "bn.scale", ch},
                               {offset, doffset, "bn.offset", ch},
                               {fc, dfc, "fc.w", {64, 5}}};
  int step = -1;
  if (adam) {
    int count = b.addState("optimizer/step", F32, {});
    step = b.addIntermediate("optimizer/new_step", F32, {});
    b.addOp("add", "optimizer/count",
            {count, b.addConstant("one", makeF32({}, {1}))}, {step});
    b.setStateUpdate(count, step);
  }
  for (const Param &q : params) {
    std::string name = q.name;
    int newValue = b.addIntermediate(name + "/new", F32, q.shape);
    if (adam) {
      int m = b.addState("optimizer/" + name + "/m", F32, q.shape);
      int v = b.addState("optimizer/" + name + "/v", F32, q.shape);
      int newM = b.addIntermediate(name + "/new_m", F32, q.shape);
      int newV = b.addIntermediate(name + "/new_v", F32, q.shape);
      b.addOp("adam_update", name + "/adam", {q.value, q.grad, m, v, step},
              {newValue, newM, newV},
              {{"lr", floatAttr(1e-2)},
               {"beta1", floatAttr(0.9)},
               {"beta2", floatAttr(0.999)},
               {"epsilon", floatAttr(1e-8)},
               {"weight_decay", floatAttr(0)}});
      b.setStateUpdate(m, newM);
      b.setStateUpdate(v, newV);
    } else {
      int vel = b.addState("optimizer/" + name + "/velocity", F32, q.shape);
      int newVel = b.addIntermediate(name + "/new_velocity", F32, q.shape);
      b.addOp("sgd_update", name + "/sgd", {q.value, q.grad, vel},
              {newValue, newVel},
              {{"lr", floatAttr(0.1)},
               {"momentum", floatAttr(0.9)},
               {"weight_decay", floatAttr(1e-4)},
               {"nesterov", boolAttr(false)}});
      b.setStateUpdate(vel, newVel);
    }
    b.setStateUpdate(q.value, newValue);
  }
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  return plan.ok() ? *plan : Plan();
}

struct TrainRun {
  std::vector<float> losses;
  std::map<std::string, Tensor> states;
  Tensor dx;
};

// `steps` steps on the same batch (eager, captured, replayed on CUDA).
StatusOr<TrainRun> train(const Plan &plan, const std::string &backend,
                         int steps) {
  SessionOptions options;
  options.backend = backend;
  options.batchSize = 8;
  GOPT_ASSIGN_OR_RETURN(auto session, Session::create(plan, options));
  Tensor x = randomF32({8, 3, 8, 8}, 70);
  GOPT_RETURN_IF_ERROR(session->setInput("x", x));
  GOPT_RETURN_IF_ERROR(
      session->setInput("labels", labelsOf(DType::kI64, 8, 5, 71)));
  TrainRun run;
  for (int i = 0; i < steps; ++i) {
    GOPT_RETURN_IF_ERROR(session->run());
    GOPT_ASSIGN_OR_RETURN(Tensor loss, session->output("loss"));
    run.losses.push_back(loss.data<float>()[0]);
  }
  GOPT_ASSIGN_OR_RETURN(Tensor dx, session->output("dx"));
  run.dx = dx.clone();
  for (const plan::StateBinding &s : plan.proto().states()) {
    GOPT_ASSIGN_OR_RETURN(Tensor t, session->state(s.name()));
    run.states[s.name()] = t.clone();
  }
  return run;
}

void expectTrainsLikeReference(bool adam) {
  Plan plan = trainingStep(adam);
  constexpr int kSteps = 6;
  auto ref = train(plan, "reference", kSteps);
  ASSERT_TRUE(ref.ok()) << ref.status().toString();
  auto got = train(plan, "cuda", kSteps);
  ASSERT_TRUE(got.ok()) << got.status().toString();
  // The loss falls on both (the model fits its batch) and the curves agree.
  EXPECT_LT(ref->losses.back(), ref->losses.front());
  for (int i = 0; i < kSteps; ++i)
    EXPECT_NEAR(got->losses[i], ref->losses[i], 1e-4 * (1 + ref->losses[i]))
        << "step " << i;
  // Summation orders differ (cuDNN, cuBLASLt, block trees vs. the
  // reference's loops in double), by about 1e-6 relative per step, and
  // Adam's normalized step amplifies differences in small gradients: 1e-3
  // relative after 6 steps leaves a wide margin and still catches any
  // wrong kernel, whose error is of the order of the update itself.
  ASSERT_EQ(got->states.size(), ref->states.size());
  for (const auto &[name, expected] : ref->states)
    EXPECT_TRUE(allClose(got->states.at(name), expected, 1e-3, 1e-5)) << name;
  EXPECT_TRUE(allClose(got->dx, ref->dx, 1e-3, 1e-6));
}

TEST_F(CudaTraining, WholeStepSgdMomentumMatchesReference) {
  expectTrainsLikeReference(false);
}

TEST_F(CudaTraining, WholeStepAdamMatchesReference) {
  expectTrainsLikeReference(true);
}

} // namespace
} // namespace gopt::runtime::testing
