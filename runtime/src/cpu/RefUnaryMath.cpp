//===- RefUnaryMath.cpp - Reference kernels of the math op family ---------===//
//
// One kernel for every op of GoptMathOps.td and its gradient: the scalar
// math is the ODS's own (gopt/runtime/UnaryMath.h), computed in double and
// rounded once to f32 (f64 keeps the double).
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include "gopt/runtime/UnaryMath.h"

namespace gopt::runtime::ref {
namespace {

Status unaryMathKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  auto readFloat = [&](const char *name, float dflt) {
    return static_cast<float>(attrs.getFloat(name, dflt));
  };
  const int64_t n = in[0].numElements();
  // f64 computes and stores in double; f32 rounds the double result once.
  auto compute = [&](auto zero) {
    using T = decltype(zero);
    const T *x = in[0].data<T>();
    T *y = out[0].data<T>();
    return unary_math::visit(
        ctx.op->kind(), readFloat, [&](const auto &fn, bool gradient) {
          if (gradient) {
            const T *dy = in[1].data<T>();
            for (int64_t i = 0; i < n; ++i)
              y[i] = static_cast<T>(static_cast<double>(dy[i]) *
                                    fn.derivative(static_cast<double>(x[i])));
            return;
          }
          for (int64_t i = 0; i < n; ++i)
            y[i] = static_cast<T>(fn(static_cast<double>(x[i])));
        });
  };
  bool known =
      in[0].dtype() == DType::kF64 ? compute(double{}) : compute(float{});
  if (!known)
    return internalError("no unary math function for '", ctx.op->kind(), "'");
  return Status::success();
}

} // namespace

void registerUnaryMathKernels(KernelRegistry &registry) {
  for (const char *kind : unary_math::kOpNames)
    registerKernel(registry, kind, unaryMathKernel, DTypeSupport::kFloatF64);
}

} // namespace gopt::runtime::ref
