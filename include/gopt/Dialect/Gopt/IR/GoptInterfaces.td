//===- GoptInterfaces.td - Op interfaces of the gopt dialect -*- tablegen -*-===//
//
// Op categories that need C++ per op (a trait in GoptOps.td when one bit is
// enough). Included by GoptOps.td; the passes ask an op for them.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTINTERFACES_TD
#define GOPT_DIALECT_GOPT_IR_GOPTINTERFACES_TD

include "mlir/IR/OpBase.td"

def Gopt_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::gopt";
  let description = [{
    An op with a gradient: its vector-Jacobian product, which
    `--gopt-autodiff` asks each op between the parameters and the loss for
    as it walks the graph backwards. An op without the interface is refused
    there with an error naming it.

    `buildGradients` writes, with `builder`'s OpBuilder (placed where the
    backward ops go), the ops that compute the gradients of the op's
    operands from those of its results, and hands each to
    `builder.accumulate(operand, grad)`, which sums the gradients of a value
    with several uses. It writes gradients only for operands that
    `builder.needsGrad` (those that depend on a parameter). A rule that cannot
    differentiate this instance (an attribute value, a dynamic dimension)
    fails with `emitNoGradientError(op) << why`.
  }];
  let methods = [
    InterfaceMethod<[{
        Writes the gradients of the operands from `resultGrads`, one per
        result (null for a result the loss does not depend on; at least one
        is set).
      }],
      "::mlir::LogicalResult", "buildGradients",
      (ins "::gopt::GradientBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads)>,
  ];
}

// What the ops' trait lists say: the op implements buildGradients in
// lib/Dialect/Gopt/IR/Gradients/<Family>Gradients.cpp.
def Gopt_Differentiable : DeclareOpInterfaceMethods<Gopt_DifferentiableOpInterface>;

#endif // GOPT_DIALECT_GOPT_IR_GOPTINTERFACES_TD
