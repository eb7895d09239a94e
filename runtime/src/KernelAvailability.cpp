//===- KernelAvailability.cpp - Which backend can run an op ---------------===//
#include "gopt/runtime/KernelAvailability.h"
#include "gopt/runtime/cpu/CpuSupport.h"
#include "gopt/runtime/cuda/CudaSupport.h"

namespace gopt::runtime {

namespace {
bool isCpu(std::string_view backend) {
  return backend == "cpu" || backend == "reference";
}
bool isCuda(std::string_view backend) {
  return backend == "cuda" || backend == "gpu";
}
} // namespace

bool hasKernel(const plan::Op &op, std::string_view backend,
               std::string *whyNot) {
  auto fail = [&](const std::string &why) {
    if (whyNot)
      *whyNot = why;
    return false;
  };
  if (isCpu(backend))
    return hasCpuKernel(op, whyNot);
  if (isCuda(backend))
    return hasCudaKernel(op, whyNot);
  return fail("unknown backend '" + std::string(backend) + "'");
}

} // namespace gopt::runtime
