//===- MakeTestPlans.cpp - Writes small plans for the gopt-run tests ------===//
//
// make-test-plans DIR writes:
//   tiny.gplan       x[?,4,4,2] -> conv2d(NHWC, SAME, bias) -> relu ->
//                    flatten -> matmul -> softmax -> y[?,5]
//   tiny_nchw.gplan  the same function computed in NCHW (transposes around
//                    the conv): equal to tiny.gplan up to rounding
//   tiny_other.gplan the same graph with different weights
//   x.npy            an input for them at batch 2; x_bad.npy a wrongly shaped
//                    one
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/Npy.h"
#include "gopt/runtime/PlanBuilder.h"

#include <cstdio>
#include <random>

using namespace gopt::runtime;

namespace {

Tensor weights(const Shape &shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  Tensor t = Tensor::allocate(DType::kF32, shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = dist(rng);
  return t;
}

// HWIO [3,3,2,3] -> OIHW [3,2,3,3].
Tensor toOihw(const Tensor &hwio) {
  Tensor t = Tensor::allocate(DType::kF32, {3, 2, 3, 3});
  for (int h = 0; h < 3; ++h)
    for (int w = 0; w < 3; ++w)
      for (int i = 0; i < 2; ++i)
        for (int o = 0; o < 3; ++o)
          t.data<float>()[((o * 2 + i) * 3 + h) * 3 + w] =
              hwio.data<float>()[((h * 3 + w) * 2 + i) * 3 + o];
  return t;
}

StatusOr<Plan> buildTiny(uint32_t seed, bool nchw) {
  PlanBuilder b(nchw ? "tiny_nchw" : "tiny");
  Tensor filter = weights({3, 3, 2, 3}, seed);
  int x = b.addInput("x", DType::kF32, {-1, 4, 4, 2});
  int bias = b.addConstant("bias", weights({3}, seed + 1));
  int conv = b.addIntermediate("conv", DType::kF32, {-1, 4, 4, 3});
  AttrMap convAttrs = {{"padding", stringAttr("SAME")}};
  if (nchw) {
    int xt = b.addIntermediate("x_nchw", DType::kF32, {-1, 2, 4, 4});
    b.addOp("transpose", "to_nchw", {x}, {xt},
            {{"perm", intsAttr({0, 3, 1, 2})}});
    int f = b.addConstant("filter", toOihw(filter));
    int c = b.addIntermediate("conv_nchw", DType::kF32, {-1, 3, 4, 4});
    convAttrs["data_format"] = stringAttr("NCHW");
    convAttrs["filter_format"] = stringAttr("OIHW");
    b.addOp("conv2d", "conv", {xt, f, bias}, {c}, convAttrs);
    b.addOp("transpose", "to_nhwc", {c}, {conv},
            {{"perm", intsAttr({0, 2, 3, 1})}});
  } else {
    int f = b.addConstant("filter", filter);
    b.addOp("conv2d", "conv", {x, f, bias}, {conv}, convAttrs);
  }
  int act = b.addIntermediate("act", DType::kF32, {-1, 4, 4, 3});
  b.addOp("relu", "relu", {conv}, {act});
  int flat = b.addIntermediate("flat", DType::kF32, {-1, 48});
  b.addOp("flatten", "flatten", {act}, {flat});
  int w2 = b.addConstant("w2", weights({48, 5}, seed + 2));
  int logits = b.addIntermediate("logits", DType::kF32, {-1, 5});
  b.addOp("matmul", "fc", {flat, w2}, {logits});
  int y = b.addOutput("y", DType::kF32, {-1, 5});
  b.addOp("softmax", "softmax", {logits}, {y});
  return b.build();
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make-test-plans DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  struct {
    const char *file;
    uint32_t seed;
    bool nchw;
  } plans[] = {{"tiny.gplan", 1, false},
               {"tiny_nchw.gplan", 1, true},
               {"tiny_other.gplan", 7, false}};
  for (const auto &p : plans) {
    StatusOr<Plan> plan = buildTiny(p.seed, p.nchw);
    Status status =
        plan.ok() ? plan->saveToFile(dir + "/" + p.file) : plan.status();
    if (!status.ok()) {
      std::fprintf(stderr, "make-test-plans: %s: %s\n", p.file,
                   status.toString().c_str());
      return 1;
    }
  }
  Status written = writeNpy(dir + "/x.npy", weights({2, 4, 4, 2}, 11));
  if (written.ok())
    written = writeNpy(dir + "/x_bad.npy", weights({2, 4, 4, 3}, 12));
  if (!written.ok()) {
    std::fprintf(stderr, "make-test-plans: %s\n", written.toString().c_str());
    return 1;
  }
  return 0;
}
