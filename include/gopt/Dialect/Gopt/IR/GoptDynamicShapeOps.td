//===- GoptDynamicShapeOps.td - shapes computed at run time -*- tablegen -*-===//
//
// Ops whose result shapes depend on the values of an operand that the graph
// computes from other tensors' shapes (Shape -> Slice -> Cast -> Concat ->
// Reshape) and that cannot fold at compile time because more than one
// dimension is dynamic. The runtime session evaluates those small integer
// computations on the host while it resolves shapes (docs/architecture.md,
// "Shapes computed in the graph"). Included by GoptOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTDYNAMICSHAPEOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTDYNAMICSHAPEOPS_TD

def Gopt_DynamicReshapeOp : Gopt_InferredOp<"dynamic_reshape", [Pure, Gopt_DataMovement]> {
  let summary = "reshape to a target shape computed at run time";
  let description = [{
    ONNX's `Reshape` with a target shape that is a value of the graph rather
    than an attribute: `shape` is a 1-D i64 tensor with one entry per result
    dimension. An entry of -1 (at most one) is inferred from the element
    count; an entry of 0 copies the operand's dimension at the same index
    unless `allow_zero` is set, in which case it is a zero-sized dimension.
    The result keeps the operand's elements in row-major order, so the
    target must hold exactly the operand's element count.

    The importers emit it only when a computed shape does not fold to a
    `gopt.reshape` (more than one dimension known only at run time). The
    runtime computes `shape` on the host while resolving shapes
    (`hostValueOperands`), so the memory plan follows every input size. The
    declared result type may be more static than the inferred one (all
    dynamic, or exact when `shape` is a constant). With a constant `shape`
    it canonicalizes to `gopt.reshape`.

    ```mlir
    %y = gopt.dynamic_reshape %x, %s : (tensor<?x120x?xf32>, tensor<5xi64>) -> tensor<?x?x3x8x15xf32>
    ```
  }];
  let arguments = (ins Gopt_Tensor:$x, Gopt_I64Tensor:$shape,
                   DefaultValuedAttr<BoolAttr, "false">:$allow_zero);
  let results = (outs Gopt_Tensor:$y);
  let runtimeShapeFunction = "dynamicReshapeShape";
  let hostValueOperands = [1];
  let hasCanonicalizer = 1;
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTDYNAMICSHAPEOPS_TD
