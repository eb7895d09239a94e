//===- RefDynamicShape.cpp - Reference kernels of GoptDynamicShapeOps.td --===//
//
// dynamic_reshape: the session resolved the result shape from the target
// shape's value before the run, so the kernel copies the row-major bytes
// (operand 1 is not read again). range: what dynamic_range runs as (the
// other dynamic ops run as their static ops' kernels).
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include "gopt/runtime/OpAttrs.h"

#include <cstring>
#include <type_traits>

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

// start + i * delta in the result's type (ONNX computes integer ranges in
// integers, so an i64 range is exact).
Status rangeKernel(const RefContext &ctx, const std::vector<Tensor> &,
                   std::vector<Tensor> &out) {
  op_attrs::RangeAttrs a(ctx.attrs());
  double start = a.start(), delta = a.delta();
  return visitElementType(out[0].dtype(), [&](auto zero) -> Status {
    using T = decltype(zero);
    T *y = out[0].data<T>();
    for (int64_t i = 0; i < out[0].numElements(); ++i) {
      if constexpr (std::is_integral_v<T>)
        y[i] = static_cast<T>(static_cast<int64_t>(start) +
                              i * static_cast<int64_t>(delta));
      else
        y[i] = static_cast<T>(start + static_cast<double>(i) * delta);
    }
    return Status::success();
  });
}

} // namespace

void registerDynamicShapeKernels(KernelRegistry &r) {
  registerKernel(r, "dynamic_reshape", dynamicReshapeKernel,
                 DTypeSupport::kAny);
  registerKernel(r, "range", rangeKernel, DTypeSupport::kNumeric);
}

} // namespace gopt::runtime::ref
