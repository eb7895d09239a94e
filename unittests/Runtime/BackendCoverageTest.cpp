//===- BackendCoverageTest.cpp - Coverage tables equal the backends -------===//
//
// What the compiler is told a backend runs (the coverage tables of
// gopt/runtime/cpu/CpuSupport.h and gopt/runtime/cuda/CudaSupport.h, plain
// data in gopt_plan) must be what the backend dispatches. Built in every
// configuration: the CUDA rows are checked without CUDA, and CUDA builds also
// check that the dispatch table binds exactly these rows
// (unittests/Runtime/cuda/CudaDispatchTest.cpp).
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/KernelAvailability.h"
#include "gopt/runtime/OpSchema.h"
#include "gopt/runtime/PlanBuilder.h"
#include "gopt/runtime/cpu/CpuSupport.h"
#include "gopt/runtime/cuda/CudaSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace gopt::runtime {
namespace {

plan::Op opOfKind(const std::string &kind) {
  plan::Op op;
  op.set_kind(kind);
  return op;
}

bool sortedUnique(const std::vector<std::string> &kinds) {
  return std::adjacent_find(kinds.begin(), kinds.end(),
                            [](const std::string &a, const std::string &b) {
                              return a >= b;
                            }) == kinds.end();
}

TEST(CpuCoverageTest, EqualsTheKernelRegistry) {
  const KernelRegistry &registry = KernelRegistry::global();
  const std::vector<std::string> &kinds = cpuOpKinds();
  EXPECT_TRUE(sortedUnique(kinds));
  // Every CPU op has a reference kernel, and the table lists all of them;
  // dynamic ops run as their static ops' kernels.
  std::vector<std::string> withKernels;
  for (const std::string &kind : kinds)
    if (!findOpSchema(kind)->staticKind)
      withKernels.push_back(kind);
  EXPECT_EQ(registry.kinds("reference"), withKernels);
  // Backend "cpu" adds faster kernels, never kinds of its own.
  for (const std::string &kind : registry.kinds("cpu"))
    EXPECT_TRUE(hasCpuKernel(kind)) << kind << " has a fast kernel only";
}

TEST(CpuCoverageTest, EveryKindIsARuntimeOp) {
  for (const std::string &kind : cpuOpKinds())
    EXPECT_NE(findOpSchema(kind), nullptr) << kind;
}

TEST(CudaCoverageTest, EqualsTheDispatchTable) {
  const std::vector<CudaOpEntry> &table = cudaOpTable();
  std::vector<std::string> tableKinds;
  for (const CudaOpEntry &entry : table) {
    tableKinds.push_back(entry.kind);
    // Each row names the handler CUDA builds bind and a predicate.
    EXPECT_NE(std::string(entry.handler), "") << entry.kind;
    EXPECT_NE(entry.accepts, nullptr) << entry.kind;
  }
  EXPECT_TRUE(sortedUnique(tableKinds));
  EXPECT_EQ(cudaOpKinds(), tableKinds);

  // The coverage answers follow the table: every row's kind is covered (with
  // default attributes, except gru, whose default linear_before_reset =
  // false cuDNN does not compute), and no other op kind is.
  std::set<std::string> covered(tableKinds.begin(), tableKinds.end());
  for (const std::string &kind : tableKinds) {
    plan::Op op = opOfKind(kind);
    if (kind == "gru")
      (*op.mutable_attrs())["linear_before_reset"] = boolAttr(true);
    std::string why;
    EXPECT_TRUE(hasCudaKernel(op, &why)) << kind << ": " << why;
    EXPECT_TRUE(hasKernel(op, "cuda")) << kind;
  }
  for (const OpSchema &schema : allOpSchemas()) {
    std::string kind = schema.kind;
    if (covered.count(kind))
      continue;
    std::string why;
    EXPECT_FALSE(hasCudaKernel(opOfKind(kind), &why)) << kind;
    EXPECT_EQ(why, "'" + kind + "' has no CUDA kernel");
  }
}

TEST(CudaCoverageTest, EveryKindIsARuntimeOp) {
  for (const std::string &kind : cudaOpKinds()) {
    EXPECT_NE(findOpSchema(kind), nullptr) << kind;
    // Plans need a reference kernel for every op (validatePlan).
    EXPECT_TRUE(hasCpuKernel(kind)) << kind;
  }
}

TEST(CudaCoverageTest, TrainingDropoutIsCpuOnlyTrainingBatchNormIsNot) {
  plan::Op dropout = opOfKind("dropout");
  (*dropout.mutable_attrs())["training"].set_b(true);
  std::string why;
  EXPECT_FALSE(hasCudaKernel(dropout, &why));
  EXPECT_EQ(why, "training-mode dropout is CPU-only");
  EXPECT_TRUE(hasKernel(dropout, "cpu"));
  (*dropout.mutable_attrs())["training"].set_b(false);
  EXPECT_TRUE(hasCudaKernel(dropout));
  plan::Op bn = opOfKind("batch_norm");
  (*bn.mutable_attrs())["training"].set_b(true);
  EXPECT_TRUE(hasCudaKernel(bn, &why)) << why;
  EXPECT_TRUE(hasKernel(bn, "cuda"));
}

} // namespace
} // namespace gopt::runtime
