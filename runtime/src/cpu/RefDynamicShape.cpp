//===- RefDynamicShape.cpp - Reference kernels of GoptDynamicShapeOps.td --===//
//
// dynamic_reshape: the session resolved the result shape from the target
// shape's value before the run, so the kernel copies the row-major bytes
// (operand 1 is not read again).
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include <cstring>

namespace gopt::runtime::ref {
namespace {

Status dynamicReshapeKernel(const RefContext &, const std::vector<Tensor> &in,
                            std::vector<Tensor> &out) {
  if (in[0].byteSize() != out[0].byteSize())
    return internalError("result of ", out[0].byteSize(),
                         " bytes for an operand of ", in[0].byteSize());
  if (in[0].byteSize())
    std::memcpy(out[0].data(), in[0].data(), in[0].byteSize());
  return Status::success();
}

} // namespace

void registerDynamicShapeKernels(KernelRegistry &r) {
  registerKernel(r, "dynamic_reshape", dynamicReshapeKernel,
                 DTypeSupport::kAny);
}

} // namespace gopt::runtime::ref
