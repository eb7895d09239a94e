//===- CudaRnnTest.cpp - lstm, gru and rnn on cuDNN vs. the reference -----===//
//
// The kernel tests need a GPU and skip with "no CUDA device" without one;
// TF32 is off (GOPT_CUDA_TF32=0) so that f32 results match the reference's
// double-accumulated loops. The refused forms are checked through
// hasCudaKernel, which needs no device.
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"
#include "gopt/runtime/cuda/CudaSupport.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace gopt::runtime::testing {
namespace {

class CudaRnn : public CudaDeviceTest {};

Tensor scaled(const Shape &shape, uint32_t seed, float scale) {
  Tensor t = randomF32(shape, seed);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] *= scale;
  return t;
}

Tensor scalar(float v) { return makeF32({}, {v}); }

enum class InitialState {
  kZero,      // rank-0 zero constants (the importer's absent inputs)
  kFull,      // [D, B, H] operands
  kBroadcast, // rank-0 nonzero values
};

struct RnnCase {
  std::string kind; // lstm, gru or rnn
  std::string direction;
  int64_t steps, batch, input, hidden;
  InitialState state;
  bool constantWeights; // w, r, b constants (copied once) or inputs
  bool scalarBias = false;
};

std::string describe(const RnnCase &c) {
  return detail::concat(c.kind, " ", c.direction, " S", c.steps, " B", c.batch,
                        " I", c.input, " H", c.hidden, " state ", int(c.state),
                        c.constantWeights ? " const" : " input",
                        c.scalarBias ? " scalar bias" : "");
}

// Runs the case on both backends and compares every result.
void expectRnnMatches(const RnnCase &c, uint32_t seed) {
  SCOPED_TRACE(describe(c));
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  const int64_t G = c.kind == "lstm" ? 4 : c.kind == "gru" ? 3 : 1;
  const int64_t S = c.steps, B = c.batch, I = c.input, H = c.hidden;
  // Small weights keep the gates away from saturation, where every
  // permutation mistake would still be visible but less so.
  const float scale = 1.0f / std::sqrt(float(H));
  std::vector<Tensor> inputs = {
      randomF32({S, B, I}, seed), scaled({D, G * H, I}, seed + 1, scale),
      scaled({D, G * H, H}, seed + 2, scale),
      c.scalarBias ? scalar(0.25f) : scaled({D, 2 * G * H}, seed + 3, 0.5f)};
  std::vector<int> constants;
  if (c.constantWeights)
    constants = {1, 2, 3};
  const int states = c.kind == "lstm" ? 2 : 1;
  for (int s = 0; s < states; ++s) {
    const int operand = 4 + s;
    switch (c.state) {
    case InitialState::kZero:
      inputs.push_back(scalar(0.0f));
      constants.push_back(operand);
      break;
    case InitialState::kFull:
      inputs.push_back(randomF32({D, B, H}, seed + 4 + s));
      break;
    case InitialState::kBroadcast:
      // One constant, one input: both expansion paths.
      inputs.push_back(scalar(s == 0 ? 0.3f : -0.2f));
      if (c.constantWeights)
        constants.push_back(operand);
      break;
    }
  }
  if (c.kind == "lstm") {
    inputs.push_back(scalar(0.0f)); // no peepholes
    constants.push_back(6);
  }
  AttrMap attrs = {{"hidden_size", intAttr(H)},
                   {"direction", stringAttr(c.direction)}};
  if (c.kind == "gru")
    attrs["linear_before_reset"] = boolAttr(true);
  std::vector<OutSpec> outs = {{DType::kF32, {S, D, B, H}},
                               {DType::kF32, {D, B, H}}};
  if (c.kind == "lstm")
    outs.push_back({DType::kF32, {D, B, H}});
  auto ref = runOp(c.kind, attrs, inputs, outs, "reference", constants);
  ASSERT_TRUE(ref.ok()) << ref.status().toString();
  auto got = runOp(c.kind, attrs, inputs, outs, "cuda", constants);
  ASSERT_TRUE(got.ok()) << got.status().toString();
  for (size_t i = 0; i < outs.size(); ++i)
    EXPECT_TRUE(allClose((*got)[i], (*ref)[i], 1e-3, 2e-4)) << "result " << i;
}

struct Sizes {
  int64_t steps, batch, input, hidden;
};
const Sizes kSizes[] = {{1, 1, 3, 4}, {5, 3, 7, 8}, {12, 4, 16, 32}};

void runAllForms(const std::string &kind, uint32_t seed) {
  for (const char *direction : {"forward", "reverse", "bidirectional"})
    for (const Sizes &s : kSizes)
      for (InitialState state :
           {InitialState::kZero, InitialState::kFull, InitialState::kBroadcast})
        for (bool constantWeights : {true, false})
          expectRnnMatches({kind, direction, s.steps, s.batch, s.input,
                            s.hidden, state, constantWeights},
                           seed += 10);
}

TEST_F(CudaRnn, LstmMatchesReference) { runAllForms("lstm", 100); }
TEST_F(CudaRnn, GruMatchesReference) { runAllForms("gru", 200); }
TEST_F(CudaRnn, RnnMatchesReference) { runAllForms("rnn", 300); }

// A rank-0 bias (one value for every gate) is expanded into each block.
TEST_F(CudaRnn, ScalarBias) {
  for (const char *kind : {"lstm", "gru", "rnn"})
    for (bool constantWeights : {true, false})
      expectRnnMatches({kind, "bidirectional", 4, 2, 5, 6, InitialState::kFull,
                        constantWeights, true},
                       400);
}

// A longer sequence, larger hidden state: errors would grow step by step.
TEST_F(CudaRnn, LongSequence) {
  for (const char *kind : {"lstm", "gru", "rnn"})
    expectRnnMatches(
        {kind, "bidirectional", 64, 8, 48, 64, InitialState::kFull, true}, 500);
}

// Steps after the first replay a captured CUDA graph: new x, h0 and weights
// (inputs, copied into cuDNN's weight space each step) must reach it.
TEST_F(CudaRnn, RepeatedStepsSeeNewInputs) {
  const int64_t S = 6, B = 3, I = 5, H = 8, D = 2, G = 3;
  PlanBuilder b("gru");
  std::vector<int> ins = {b.addInput("x", DType::kF32, {S, B, I}),
                          b.addInput("w", DType::kF32, {D, G * H, I}),
                          b.addInput("r", DType::kF32, {D, G * H, H}),
                          b.addConstant("b", scaled({D, 2 * G * H}, 7, 0.5f)),
                          b.addInput("h0", DType::kF32, {D, B, H})};
  std::vector<int> outs = {b.addOutput("y", DType::kF32, {S, D, B, H}),
                           b.addOutput("y_h", DType::kF32, {D, B, H})};
  AttrMap attrs = {{"hidden_size", intAttr(H)},
                   {"direction", stringAttr("bidirectional")},
                   {"linear_before_reset", boolAttr(true)}};
  b.addOp("gru", "gru_op", ins, outs, attrs);
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  SessionOptions options;
  options.backend = "cuda";
  auto session = Session::create(*plan, options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  for (uint32_t step = 0; step < 4; ++step) {
    SCOPED_TRACE(detail::concat("step ", step));
    const uint32_t seed = 1000 + 10 * step;
    std::vector<Tensor> inputs = {
        randomF32({S, B, I}, seed), scaled({D, G * H, I}, seed + 1, 0.4f),
        scaled({D, G * H, H}, seed + 2, 0.4f), scaled({D, 2 * G * H}, 7, 0.5f),
        randomF32({D, B, H}, seed + 3)};
    for (const auto &[name, index] : {std::pair{"x", 0}, std::pair{"w", 1},
                                      std::pair{"r", 2}, std::pair{"h0", 4}})
      ASSERT_TRUE((*session)->setInput(name, inputs[index]).ok());
    ASSERT_TRUE((*session)->run().ok());
    auto ref = runOp("gru", attrs, inputs,
                     {{DType::kF32, {S, D, B, H}}, {DType::kF32, {D, B, H}}},
                     "reference", {3});
    ASSERT_TRUE(ref.ok()) << ref.status().toString();
    for (int i = 0; i < 2; ++i) {
      auto got = (*session)->output(i == 0 ? "y" : "y_h");
      ASSERT_TRUE(got.ok()) << got.status().toString();
      EXPECT_TRUE(allClose(*got, (*ref)[i], 1e-3, 2e-4)) << "result " << i;
    }
  }
}

// cuDNN's LSTM has no peepholes: nonzero ones are refused at creation.
TEST_F(CudaRnn, NonzeroPeepholesAreRefused) {
  const int64_t S = 2, B = 1, I = 3, H = 4;
  std::vector<Tensor> inputs = {randomF32({S, B, I}, 1),
                                randomF32({1, 4 * H, I}, 2),
                                randomF32({1, 4 * H, H}, 3),
                                scalar(0.0f),
                                scalar(0.0f),
                                scalar(0.0f),
                                randomF32({1, 3 * H}, 4)};
  auto r = runOp("lstm", {{"hidden_size", intAttr(H)}}, inputs,
                 {{DType::kF32, {S, 1, B, H}},
                  {DType::kF32, {1, B, H}},
                  {DType::kF32, {1, B, H}}},
                 "cuda", {1, 2, 3, 4, 5, 6});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nonzero peepholes"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("place it on the CPU"), std::string::npos)
      << r.status().message();
}

plan::Op recurrentOp(const std::string &kind, int operands) {
  plan::Op op;
  op.set_kind(kind);
  op.set_name(kind + "_op");
  for (int i = 0; i < operands; ++i)
    op.add_inputs(i);
  (*op.mutable_attrs())["hidden_size"] = intAttr(4);
  return op;
}

// What cuDNN does not compute stays on the CPU, with the reason.
TEST(CudaRnnSupport, RefusedForms) {
  std::string why;
  plan::Op gru = recurrentOp("gru", 5);
  EXPECT_FALSE(hasCudaKernel(gru, &why)); // linear_before_reset = 0
  EXPECT_EQ(why, "gru with linear_before_reset = false is CPU-only (cuDNN's "
                 "GRU computes the linear-before-reset form)");
  (*gru.mutable_attrs())["linear_before_reset"] = boolAttr(true);
  why.clear();
  EXPECT_TRUE(hasCudaKernel(gru, &why)) << why;

  for (const char *kind : {"lstm", "gru", "rnn"}) {
    const int operands = std::string(kind) == "lstm" ? 7 : 5;
    plan::Op op = recurrentOp(kind, operands);
    if (std::string(kind) == "gru")
      (*op.mutable_attrs())["linear_before_reset"] = boolAttr(true);
    for (const char *direction : {"forward", "reverse", "bidirectional"}) {
      (*op.mutable_attrs())["direction"] = stringAttr(direction);
      EXPECT_TRUE(hasCudaKernel(op, &why)) << kind << ": " << why;
    }
    plan::Op clipped = op;
    (*clipped.mutable_attrs())["clip"] = floatAttr(3.0);
    EXPECT_FALSE(hasCudaKernel(clipped, &why)) << kind;
    EXPECT_EQ(why, std::string(kind) +
                       " with clip is CPU-only (cuDNN does not clip gates)");
    plan::Op padded = op;
    padded.add_inputs(operands);
    EXPECT_FALSE(hasCudaKernel(padded, &why)) << kind;
    EXPECT_EQ(why, std::string(kind) + " with sequence_lens is CPU-only");
  }
  plan::Op coupled = recurrentOp("lstm", 7);
  (*coupled.mutable_attrs())["input_forget"] = boolAttr(true);
  EXPECT_FALSE(hasCudaKernel(coupled, &why));
  EXPECT_EQ(why, "lstm with input_forget is CPU-only (cuDNN has no coupled "
                 "input/forget gate)");
}

} // namespace
} // namespace gopt::runtime::testing
