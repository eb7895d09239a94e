//===- GoptLogicOps.td - comparisons, logic, where, tiling -*- tablegen -*-===//
//
// Comparisons and logical ops (results and operands of type i1), the
// elementwise `where`, integer-and-float remainders and floor division, the
// bitwise ops on integers, the float predicates, and `expand`/`tile`. Their shape functions are in
// lib/Shape/LogicShapes.cpp (shared with runtime/src/shapes/Logic.cpp),
// their reference kernels in runtime/src/cpu/RefLogic.cpp. Included by
// GoptOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTLOGICOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTLOGICOPS_TD

def Gopt_BoolTensor : RankedTensorOf<[I1]>;

//===----------------------------------------------------------------------===//
// Comparisons
//===----------------------------------------------------------------------===//

// Comparing values rounded to bf16/f16 is exact, so mixed precision may move
// a comparison with its operands (TensorFlow's clear list has them).
class Gopt_CompareOp<string mnemonic, string what, string onnx, string tf,
                     int onnxSince, list<Trait> traits = []>
    : Gopt_InferredOp<mnemonic, !listconcat(traits, [Pure, Gopt_LayoutAgnostic,
                                                     Gopt_MixedPrecisionClear])> {
  let notDifferentiable = "boolean results";
  let summary = "elementwise lhs " # what # " rhs with numpy broadcasting";
  let description = "True where `lhs " # what # [{ rhs`, elementwise. The
    operands have one element type; their shapes broadcast as in numpy. The
    result is i1 of the broadcast shape. NaN compares unequal to everything.

    ```mlir
    %m = gopt.}] # mnemonic # [{ %a, %b : (tensor<8x1x64xf32>, tensor<64xf32>) -> tensor<8x1x64xi1>
    ```
  }];
  let arguments = (ins Gopt_Tensor:$lhs, Gopt_Tensor:$rhs);
  let results = (outs Gopt_BoolTensor:$z);
  let runtimeShapeFunction = "compareShape";
  let resultElementType = "i1";
  let onnxOpType = onnx;
  let tfOpType = tf;
  let onnxSinceOpset = onnxSince;
}

// TensorFlow's Equal and NotEqual carry `incompatible_shape_error`, so they
// are imported by hand (NotEqual as not(equal)).
def Gopt_EqualOp : Gopt_CompareOp<"equal", "==", "Equal", "", 7, [Commutative]>;
def Gopt_LessOp : Gopt_CompareOp<"less", "<", "Less", "Less", 7>;
def Gopt_LessEqualOp : Gopt_CompareOp<"less_equal", "<=", "LessOrEqual", "LessEqual", 12>;
def Gopt_GreaterOp : Gopt_CompareOp<"greater", ">", "Greater", "Greater", 7>;
def Gopt_GreaterEqualOp : Gopt_CompareOp<"greater_equal", ">=", "GreaterOrEqual", "GreaterEqual", 12>;

//===----------------------------------------------------------------------===//
// Logical ops
//===----------------------------------------------------------------------===//

// No float operands: mixed precision has nothing to decide.
class Gopt_LogicalBinaryOp<string mnemonic, string what, string onnx, string tf>
    : Gopt_InferredOp<mnemonic, [Pure, Commutative, Gopt_LayoutAgnostic,
                                 SameOperandsAndResultElementType]> {
  let notDifferentiable = "boolean results";
  let summary = "elementwise logical " # what # " with numpy broadcasting";
  let description = "`lhs " # what # [{ rhs` on i1 tensors, elementwise;
    shapes broadcast as in numpy.

    ```mlir
    %m = gopt.}] # mnemonic # [{ %a, %b : (tensor<4x5xi1>, tensor<5xi1>) -> tensor<4x5xi1>
    ```
  }];
  let arguments = (ins Gopt_BoolTensor:$lhs, Gopt_BoolTensor:$rhs);
  let results = (outs Gopt_BoolTensor:$z);
  let runtimeShapeFunction = "logicalShape";
  let onnxOpType = onnx;
  let tfOpType = tf;
  let onnxSinceOpset = 7;
}

def Gopt_AndOp : Gopt_LogicalBinaryOp<"and", "and", "And", "LogicalAnd">;
def Gopt_OrOp : Gopt_LogicalBinaryOp<"or", "or", "Or", "LogicalOr">;
def Gopt_XorOp : Gopt_LogicalBinaryOp<"xor", "xor", "Xor", "">;

def Gopt_NotOp : Gopt_Op<"not", [Pure, SameOperandsAndResultType,
                                 InferTypeOpInterface, Gopt_LayoutAgnostic]> {
  let notDifferentiable = "boolean results";
  let summary = "elementwise logical not";
  let description = [{
    Negates an i1 tensor elementwise.

    ```mlir
    %n = gopt.not %m : (tensor<4x5xi1>) -> tensor<4x5xi1>
    ```
  }];
  let arguments = (ins Gopt_BoolTensor:$x);
  let results = (outs Gopt_BoolTensor:$y);
  let runtimeShapeFunction = "logicalShape";
  let onnxOpType = "Not";
  let tfOpType = "LogicalNot";
}

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

def Gopt_WhereOp : Gopt_InferredOp<"where", [Pure, Gopt_LayoutAgnostic,
                                             Gopt_MixedPrecisionClear,
                                             Gopt_Differentiable]> {
  let summary = "elementwise choice between two tensors";
  let description = [{
    `condition ? x : y` elementwise, the three shapes broadcast together as
    in numpy (ONNX `Where`, TensorFlow `SelectV2`; TensorFlow's `Select`
    with a rank-1 condition is imported as a reshape of the condition).
    `x` and `y` have one element type, the result's. The gradient flows to
    the branch chosen, summed over the dimensions it was broadcast along.
    (`gopt.select` is a different op: a scalar predicate, whole tensors.)

    ```mlir
    %r = gopt.where %c, %x, %y : (tensor<4x1xi1>, tensor<4x5xf32>, tensor<f32>) -> tensor<4x5xf32>
    ```
  }];
  let arguments = (ins Gopt_BoolTensor:$condition, Gopt_AnyTensor:$x,
                   Gopt_AnyTensor:$y);
  let results = (outs Gopt_AnyTensor:$z);
  let runtimeShapeFunction = "whereShape";
  let resultElementType = "operand:1";
  let onnxOpType = "Where";
  let tfOpType = "SelectV2";
  let onnxSinceOpset = 9;
}

//===----------------------------------------------------------------------===//
// Remainder and floor division
//===----------------------------------------------------------------------===//

def Gopt_ModOp : Gopt_InferredOp<"mod", [Pure, SameOperandsAndResultElementType,
                                         Gopt_LayoutAgnostic, Gopt_Differentiable]> {
  let summary = "elementwise remainder with numpy broadcasting";
  let description = [{
    `fmod = 0`: the remainder has the divisor's sign (Python's `%`, numpy's
    `mod`, TensorFlow's `FloorMod`), for integers and floats alike.
    `fmod = 1`: the remainder has the dividend's sign (C's `fmod`, integer
    `%`). ONNX `Mod` is both (it requires `fmod = 1` for floats). An
    integer divisor of 0 is an error at run time.

    ```mlir
    %r = gopt.mod %a, %b {fmod = 1 : i64} : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    ```
  }];
  let arguments = (ins Gopt_NumericTensor:$lhs, Gopt_NumericTensor:$rhs,
                   DefaultValuedAttr<I64Attr, "0">:$fmod);
  let results = (outs Gopt_NumericTensor:$z);
  let runtimeShapeFunction = "modShape";
  let onnxOpType = "Mod";
  let tfOpType = "FloorMod";
  let onnxSinceOpset = 10;
}

def Gopt_FloorDivOp : Gopt_BinaryOp<"floor_div", "floor(lhs / rhs) (integers round toward negative infinity)", [Gopt_LayoutAgnostic]> {
  let notDifferentiable = "piecewise constant: its derivative is zero almost everywhere";
  let tfOpType = "FloorDiv";
}

def Gopt_BitShiftOp : Gopt_InferredOp<"bit_shift", [Pure,
    SameOperandsAndResultElementType, Gopt_LayoutAgnostic]> {
  let notDifferentiable = "integer operands and result";
  let summary = "elementwise bit shift of unsigned integers";
  let description = [{
    `lhs << rhs` (`direction = "LEFT"`) or `lhs >> rhs` (`"RIGHT"`),
    elementwise, with numpy broadcasting (ONNX `BitShift`). The operands are
    unsigned integers of one type; bits shifted out are lost, and a shift
    by the type's width or more gives 0.

    ```mlir
    %z = gopt.bit_shift %a, %b {direction = "LEFT"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
    ```
  }];
  let arguments = (ins Gopt_UnsignedTensor:$lhs, Gopt_UnsignedTensor:$rhs,
                   Gopt_RequiredStrEnumAttr<["LEFT", "RIGHT"]>:$direction);
  let results = (outs Gopt_UnsignedTensor:$z);
  let runtimeShapeFunction = "bitShiftShape";
  let onnxOpType = "BitShift";
  let onnxSinceOpset = 11;
}

//===----------------------------------------------------------------------===//
// Bitwise ops (ONNX opset 18)
//===----------------------------------------------------------------------===//

def Gopt_IntegerTensor : RankedTensorOf<[I8, I16, I32, I64, UI8, UI16, UI32,
                                         UI64]>;

class Gopt_BitwiseBinaryOp<string mnemonic, string what, string onnx>
    : Gopt_InferredOp<mnemonic, [Pure, Commutative, Gopt_LayoutAgnostic,
                                 SameOperandsAndResultElementType]> {
  let notDifferentiable = "integer operands and result";
  let summary = "elementwise bitwise " # what # " with numpy broadcasting";
  let description = "`lhs " # what # [{ rhs` bit by bit on integers of one
    type (signed or unsigned), elementwise; shapes broadcast as in numpy
    (ONNX `}] # onnx # [{`, opset 18).

    ```mlir
    %z = gopt.}] # mnemonic # [{ %a, %b : (tensor<4x5xi32>, tensor<5xi32>) -> tensor<4x5xi32>
    ```
  }];
  let arguments = (ins Gopt_IntegerTensor:$lhs, Gopt_IntegerTensor:$rhs);
  let results = (outs Gopt_IntegerTensor:$z);
  let runtimeShapeFunction = "bitwiseShape";
  let onnxOpType = onnx;
  let onnxSinceOpset = 18;
}

def Gopt_BitwiseAndOp : Gopt_BitwiseBinaryOp<"bitwise_and", "&", "BitwiseAnd">;
def Gopt_BitwiseOrOp : Gopt_BitwiseBinaryOp<"bitwise_or", "|", "BitwiseOr">;
def Gopt_BitwiseXorOp : Gopt_BitwiseBinaryOp<"bitwise_xor", "^", "BitwiseXor">;

def Gopt_BitwiseNotOp : Gopt_Op<"bitwise_not", [Pure, SameOperandsAndResultType,
                                                 InferTypeOpInterface,
                                                 Gopt_LayoutAgnostic]> {
  let notDifferentiable = "integer operands and result";
  let summary = "elementwise bitwise complement";
  let description = [{
    `~x` bit by bit on a signed or unsigned integer tensor (ONNX
    `BitwiseNot`, opset 18).

    ```mlir
    %n = gopt.bitwise_not %x : (tensor<4x5xui8>) -> tensor<4x5xui8>
    ```
  }];
  let arguments = (ins Gopt_IntegerTensor:$x);
  let results = (outs Gopt_IntegerTensor:$y);
  let runtimeShapeFunction = "bitwiseShape";
  let onnxOpType = "BitwiseNot";
  let onnxSinceOpset = 18;
}

//===----------------------------------------------------------------------===//
// Float predicates
//===----------------------------------------------------------------------===//

class Gopt_FloatPredicateOp<string mnemonic, string what, list<Trait> traits = []>
    : Gopt_InferredOp<mnemonic, !listconcat(traits, [Pure, Gopt_LayoutAgnostic,
                                                     Gopt_MixedPrecisionClear])> {
  let notDifferentiable = "boolean results";
  let summary = "elementwise test for " # what;
  let results = (outs Gopt_BoolTensor:$y);
  let runtimeShapeFunction = "floatPredicateShape";
  let resultElementType = "i1";
}

def Gopt_IsNaNOp : Gopt_FloatPredicateOp<"is_nan", "NaN"> {
  let description = [{
    True where the float operand is NaN; the result is i1 of its shape.

    ```mlir
    %m = gopt.is_nan %x : (tensor<?x64xf32>) -> tensor<?x64xi1>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x);
  let onnxOpType = "IsNaN";
  let tfOpType = "IsNan";
  let onnxSinceOpset = 9;
}

def Gopt_IsInfOp : Gopt_FloatPredicateOp<"is_inf", "infinities"> {
  let description = [{
    True where the float operand is +inf (with `detect_positive` != 0) or
    -inf (with `detect_negative` != 0); the result is i1 of its shape.

    ```mlir
    %m = gopt.is_inf %x {detect_negative = 0 : i64} : (tensor<?x64xf32>) -> tensor<?x64xi1>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x,
                   DefaultValuedAttr<I64Attr, "1">:$detect_negative,
                   DefaultValuedAttr<I64Attr, "1">:$detect_positive);
  let onnxOpType = "IsInf";
  let tfOpType = "IsInf";
  let onnxSinceOpset = 10;
}

//===----------------------------------------------------------------------===//
// Expand and tile
//===----------------------------------------------------------------------===//

def Gopt_ExpandOp : Gopt_InferredOp<"expand", [Pure, SameOperandsAndResultElementType,
                                               Gopt_MixedPrecisionClear, Gopt_DataMovement,
                                               Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Expand"];
  let summary = "broadcast to a shape";
  let description = [{
    Broadcasts `x` against `shape` as numpy broadcasts two operands: the
    result has the broadcast of both (ONNX `Expand`; TensorFlow
    `BroadcastTo`, whose shape is the result's). Importers take `shape`
    from a constant operand. The gradient sums over the broadcast
    dimensions.

    ```mlir
    %y = gopt.expand %x {shape = array<i64: 2, 3, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x, DenseI64ArrayAttr:$shape);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "expandShape";
}

def Gopt_TileOp : Gopt_InferredOp<"tile", [Pure, SameOperandsAndResultElementType,
                                           Gopt_MixedPrecisionClear, Gopt_DataMovement,
                                           Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Tile"];
  let summary = "repeat a tensor along every dimension";
  let description = [{
    Dimension `i` of the result is `repeats[i]` copies of `x` along it
    (ONNX and TensorFlow `Tile`): one non-negative repeat per dimension.
    Importers take `repeats` from a constant operand. The gradient sums the
    copies.

    ```mlir
    %y = gopt.tile %x {repeats = array<i64: 2, 1>} : (tensor<3x4xf32>) -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x, DenseI64ArrayAttr:$repeats);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "tileShape";
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTLOGICOPS_TD
