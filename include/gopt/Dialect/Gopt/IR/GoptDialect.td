//===- GoptDialect.td - The gopt dialect -------------------*- tablegen -*-===//
//
// The gopt dialect models deep-learning training and inference graphs over
// builtin ranked tensors, in the shape TensorFlow and ONNX users write them.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTDIALECT_TD
#define GOPT_DIALECT_GOPT_IR_GOPTDIALECT_TD

include "mlir/IR/OpBase.td"

def Gopt_Dialect : Dialect {
  let name = "gopt";
  let cppNamespace = "::gopt";
  let summary = "Deep-learning graphs for gopt's rewrites and runtime.";
  let description = [{
    The gopt dialect models training and inference graphs: forward ops
    (convolution, batch norm, matmul, pooling, elementwise), the unfused
    primitives that importers produce (reductions, rsqrt, squared
    difference), and the plumbing ops of real graphs (reshape, transpose,
    concat, cast, identity, check_numerics). A graph is a `func.func`.

    Layout-sensitive ops carry a `data_format` attribute (`"NHWC"` or
    `"NCHW"`), as TensorFlow does. Any op may carry a discardable `device`
    attribute (`"cpu"` or `"gpu"`) set by placement. Every op infers its
    result type and verifies its operands with a diagnostic naming the operand
    and what was expected.
  }];
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    /// Name of the discardable attribute holding an op's device.
    static constexpr ::llvm::StringLiteral getDeviceAttrName() {
      return ::llvm::StringLiteral("device");
    }
  }];
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTDIALECT_TD
