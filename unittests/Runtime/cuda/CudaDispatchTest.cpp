//===- CudaDispatchTest.cpp - The dispatch table binds the coverage -------===//
//
// CUDA builds only: the handlers CudaOps.cpp binds are exactly the rows the
// coverage (cudaOpKinds, compiled in every build) reads. Needs no GPU.
//
//===----------------------------------------------------------------------===//
#include "CudaCommon.h"
#include "gopt/runtime/cuda/CudaSupport.h"

#include <gtest/gtest.h>

namespace gopt::runtime::cuda {
namespace {

TEST(CudaDispatchTest, HandlersEqualCoverage) {
  std::vector<std::string> dispatched;
  for (const auto &[kind, handler] : cudaDispatchTable()) {
    dispatched.push_back(kind);
    EXPECT_NE(handler, nullptr) << kind;
  }
  EXPECT_EQ(dispatched, cudaOpKinds());
}

} // namespace
} // namespace gopt::runtime::cuda
