//===- GoptOps.td - gopt op definitions --------------------*- tablegen -*-===//
//
// Ops of the gopt dialect. docs/op-semantics.md pins down what each op
// computes; the runtime's reference kernels implement exactly that.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTOPS_TD

include "gopt/Dialect/Gopt/IR/GoptDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "gopt/Dialect/Gopt/IR/GoptInterfaces.td"

//===----------------------------------------------------------------------===//
// Types and attribute constraints
//===----------------------------------------------------------------------===//

// Integers are signless (i8, i16, i32, i64) or unsigned (ui8 ... ui64): the
// unsigned types keep ONNX's and TF's unsigned data types apart from the
// signed ones, and the plan's u8 ... u64 follow from them.
def Gopt_ElementType : AnyTypeOf<[F32, F16, BF16, F64, I8, I16, I32, I64, I1,
                                  UI8, UI16, UI32, UI64]>;
def Gopt_Tensor : RankedTensorOf<[F32, F16, BF16, F64, I8, I16, I32, I64, I1,
                                  UI8, UI16, UI32, UI64]>;
def Gopt_FloatTensor : RankedTensorOf<[F32, F16, BF16, F64]>;
def Gopt_NumericTensor : RankedTensorOf<[F32, F16, BF16, F64, I8, I16, I32,
                                         I64, UI8, UI16, UI32, UI64]>;
def Gopt_UnsignedTensor : RankedTensorOf<[UI8, UI16, UI32, UI64]>;
// ONNX's float8 and 4-bit types (opsets 19-21): storage types that only the
// ops moving data, `cast` and constants take; arithmetic reads them after a
// cast to f32 (docs/architecture.md, "float8 and 4-bit types...").
def Gopt_LowPrecisionTensor : RankedTensorOf<[F8E4M3FN, F8E4M3FNUZ, F8E5M2,
                                              F8E5M2FNUZ, I<4>, UI<4>]>;
def Gopt_AnyTensor : RankedTensorOf<[F32, F16, BF16, F64, I8, I16, I32, I64, I1,
                                     UI8, UI16, UI32, UI64, F8E4M3FN,
                                     F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, I<4>,
                                     UI<4>]>;
def Gopt_I64Tensor : RankedTensorOf<[I64]>;

// A string attribute with a fixed set of values. The values are stated here
// once: the runtime's op table (generated from this file) checks plans
// against them, and each op's verifier checks the IR so that its diagnostic
// names the op and the value found.
class Gopt_StrEnum<list<string> values> {
  list<string> allowedValues = values;
}
class Gopt_StrEnumAttr<list<string> values, string default>
    : DefaultValuedStrAttr<StrAttr, default>, Gopt_StrEnum<values>;
class Gopt_RequiredStrEnumAttr<list<string> values>
    : StringBasedAttr<CPred<"::llvm::isa<::mlir::StringAttr>($_self)">,
                      "string attribute">, Gopt_StrEnum<values>;

def Gopt_DataFormatAttr : Gopt_StrEnumAttr<["NHWC", "NCHW"], "NHWC">;
def Gopt_FilterFormatAttr : Gopt_StrEnumAttr<["HWIO", "OIHW"], "HWIO">;
def Gopt_PaddingAttr : Gopt_StrEnumAttr<["EXPLICIT", "SAME", "VALID"], "EXPLICIT">;
def Gopt_ActivationAttr : Gopt_StrEnumAttr<["none", "relu", "relu6", "sigmoid"], "none">;
def Gopt_DeviceNameAttr : Gopt_RequiredStrEnumAttr<["cpu", "gpu"]>;

//===----------------------------------------------------------------------===//
// Op categories: the passes ask an op for these instead of keeping lists.
//===----------------------------------------------------------------------===//

// Each result element depends only on the operand elements at the same
// (broadcast) index, whatever the layout: layout conversion moves transposes
// through it.
def Gopt_LayoutAgnostic : NativeOpTrait<"LayoutAgnostic"> {
  let cppNamespace = "::gopt";
}
// Mixed precision (TensorFlow's lists): `allow` ops gain from bf16/f16 and
// always take it; `infer` ops take it when their inputs have it; `clear` ops
// do not change values and follow their inputs. Ops without one are denied.
def Gopt_MixedPrecisionAllow : NativeOpTrait<"MixedPrecisionAllow"> {
  let cppNamespace = "::gopt";
}
def Gopt_MixedPrecisionInfer : NativeOpTrait<"MixedPrecisionInfer"> {
  let cppNamespace = "::gopt";
}
def Gopt_MixedPrecisionClear : NativeOpTrait<"MixedPrecisionClear"> {
  let cppNamespace = "::gopt";
}
// Device placement: heavy compute is worth a device; data movement only
// moves or reinterprets data and costs no more than a copy on the host.
def Gopt_ComputeHeavy : NativeOpTrait<"ComputeHeavy"> {
  let cppNamespace = "::gopt";
}
def Gopt_DataMovement : NativeOpTrait<"DataMovement"> {
  let cppNamespace = "::gopt";
}

// A reduction over `axes` with `keep_dims` (Gopt_ReduceOp).
def Gopt_Reduction : NativeOpTrait<"Reduction"> {
  let cppNamespace = "::gopt";
}

// Every gopt op may carry a `device` attribute; the trait checks its value.
def Gopt_DeviceAttrTrait : NativeOpTrait<"DeviceAttrTrait"> {
  let cppNamespace = "::gopt";
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

// Besides the usual ODS fields, an op states here what the runtime and the
// importers need; tools/gen-op-tables turns it into the runtime's op table
// (docs/architecture.md, "One op, one definition").
class Gopt_Op<string mnemonic, list<Trait> traits = []>
    : Op<Gopt_Dialect, mnemonic, !listconcat(traits, [Gopt_DeviceAttrTrait])> {
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
  // The runtime shape function (runtime/src/OpSchema.cpp) that computes the
  // result shapes from concrete operand shapes.
  string runtimeShapeFunction = "";
  // The runtime function (runtime/src/shapes/Cost.h) that counts the op's
  // floating-point operations from its resolved shapes, for profiles and
  // the roofline report; empty for memory-bound ops.
  string flopFunction = "";
  // The results' element type: "operand:N" (that of operand N), "any" (the
  // plan says), or one type ("f32", "i64", "i8", "i1"); for results of
  // different types, one per result separated by commas ("operand:0, i64").
  string resultElementType = "operand:0";
  // Folded or materialized before a plan is written: no runtime kernel.
  bit compileTimeOnly = 0;
  // The ONNX and TensorFlow op types imported generically as this op: the
  // node's inputs in order, each attribute by its name (absent: the default
  // above). Ops whose import needs more keep a hand-written rule.
  string onnxOpType = "";
  string tfOpType = "";
  // The first ONNX opset with `onnxOpType` (the exporter's opset must reach it).
  int onnxSinceOpset = 1;
  // The ONNX op types whose hand-written import rule reads the node's data
  // through this op. With `onnxOpType`, they decide which ONNX nodes take
  // float8 and 4-bit inputs: those of ops whose operands admit them
  // (Gopt_AnyTensor); every op a type names must agree (tools/gen-op-tables
  // checks), and the importer refuses the others by this table.
  list<string> onnxRuleOpTypes = [];
  // Layout-sensitive ops: the operands (and, with layoutActivationResult,
  // result 0) that `data_format` lays out; layout conversion transposes
  // exactly these. Empty for ops without a layout.
  list<int> layoutActivationOperands = [];
  bit layoutActivationResult = 1;
  // Operands that hold learned weights: a named f32 constant there becomes a
  // parameter (gopt-lift-params) the training step updates. On an
  // elementwise (layout-agnostic) op the other operand must be computed, and
  // where both operands are listed (add, sub) the constant must have more
  // than one element: a dense layer's bias, not an offset.
  list<int> trainableOperands = [];
  // Operands whose values (small integer tensors: a computed target shape)
  // decide the result shapes. The session computes them on the host while
  // it resolves shapes, and `runtimeShapeFunction` then names a shape
  // function that also receives those values (runtime OpSchema.h,
  // ValueShapeFn).
  list<int> hostValueOperands = [];
  // The results depend only on the operands' shapes (gopt.shape), so the
  // host computes them without the operands' data.
  bit readsOperandShapesOnly = 0;
  // Some result dimensions depend on the operands' data (non_zero's count):
  // they are dynamic in the dialect, `runtimeShapeFunction` gives an upper
  // bound, and the kernel reports the actual shapes after it ran; the
  // session runs the op on the host between the pieces of the plan before
  // and after it (see "Results shaped by data" in docs/architecture.md).
  bit dataDependentResultShapes = 0;
  // With dataDependentResultShapes, for an op whose results no function of
  // the operands' shapes bounds (image_decoder: the size is in the image's
  // header): `runtimeShapeFunction` names a function that reads the
  // operands' data (runtime OpSchema.h, DataShapeFn) and gives the exact
  // result shapes; the session calls it on the host, where the op runs,
  // before it allocates the results.
  bit resultShapesFromOperandData = 0;
  // Control flow: the op's regions become subplans, and the session
  // resolves the result shapes by resolving those (no runtimeShapeFunction).
  bit regionPlans = 0;
  // A dynamic op (Gopt_DynamicOp): the static op it runs as once the values
  // of its hostValueOperands are known, the attribute each of those
  // operands becomes (one name per entry of hostValueOperands), and the
  // function in gopt/Shape/DynamicOps.h that turns those values into the
  // static op's attributes where the framework's meaning differs (ONNX's
  // negative slice bounds); empty: each value is the attribute as it is.
  string staticOp = "";
  list<string> hostValueAttrs = [];
  string valueAttrAdapter = "";
  // Gradient coverage: an op without Gopt_Differentiable says why, in one
  // line. `notDifferentiable`: it has no gradient worth writing (integer or
  // boolean results, piecewise constant, an optimizer step, a gradient op).
  // `missingGradient`: it has one that gopt does not write yet, and what
  // that would take. tools/gen-op-tables refuses an op with none or more
  // than one of the three, and docs/op-semantics.md's "Gradient coverage"
  // tables are checked against these fields (DifferentiableOpsTest).
  string notDifferentiable = "";
  string missingGradient = "";
}

// An op whose result types come from a shape function in ShapeInference.cpp.
// Declared result types may be more static than the inferred ones (e.g. an
// importer that knows the batch size), never incompatible.
class Gopt_InferredOp<string mnemonic, list<Trait> traits = []>
    : Gopt_Op<mnemonic, !listconcat(traits, [InferTypeOpAdaptorWithIsCompatible])> {
  // verify() runs the shape function with the op's location.
  let hasVerifier = 1;
  let extraClassDefinition = [{
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange l,
                                            ::mlir::TypeRange r) {
      return ::gopt::areCompatibleReturnTypes(l, r);
    }
  }];
}

class Gopt_UnaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Gopt_InferredOp<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultElementType])> {
  let summary = "elementwise " # what;
  let description = "Computes " # what # [{ elementwise; the result has the
    operand's type.

    ```mlir
    %y = gopt.}] # mnemonic # [{ %x : (tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x);
  let results = (outs Gopt_FloatTensor:$y);
  let hasVerifier = 0;
  let runtimeShapeFunction = "sameShape";
  // The result is the operand's type; no per-op C++.
  let extraClassDefinition = [{
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange l,
                                            ::mlir::TypeRange r) {
      return ::gopt::areCompatibleReturnTypes(l, r);
    }
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, ::std::optional<::mlir::Location>,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      inferred.push_back(adaptor.getX().getType());
      return ::mlir::success();
    }
  }];
}

class Gopt_BinaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Gopt_InferredOp<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultElementType])> {
  let summary = "elementwise " # what # " with numpy broadcasting";
  let description = "Computes " # what # [{ elementwise. Operand shapes
    broadcast as in numpy: aligned from the last dimension, each pair of
    dimensions must be equal or one of them 1.

    ```mlir
    %z = gopt.}] # mnemonic # [{ %a, %b : (tensor<8x1x64xf32>, tensor<64xf32>) -> tensor<8x1x64xf32>
    ```
  }];
  let arguments = (ins Gopt_NumericTensor:$lhs, Gopt_NumericTensor:$rhs);
  let results = (outs Gopt_NumericTensor:$z);
  let runtimeShapeFunction = "binaryShape";
  // Broadcasting, defined once for every binary op (see OpUtils.h).
  let extraClassDefinition = [{
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange l,
                                            ::mlir::TypeRange r) {
      return ::gopt::areCompatibleReturnTypes(l, r);
    }
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, ::std::optional<::mlir::Location>,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      ::gopt::ShapeError silent(::std::nullopt, getOperationName());
      if (::mlir::succeeded(::gopt::detail::inferBroadcastTypes(
              adaptor.getLhs(), adaptor.getRhs(), silent, inferred)))
        return ::mlir::success();
      inferred.assign(1, ::gopt::detail::getPlaceholderType(
                             context, adaptor.getOperands()));
      return ::mlir::success();
    }
    ::mlir::LogicalResult $cppClass::verify() {
      ::llvm::SmallVector<::mlir::Type> inferred;
      return ::gopt::detail::inferBroadcastTypes(
          getLhs(), getRhs(), ::gopt::ShapeError(getLoc(), getOperationName()),
          inferred);
    }
  }];
}

// An op whose result is its operand unchanged at inference time. (ODS infers
// the result type from SameOperandsAndResultType.)
class Gopt_PassThroughOp<string mnemonic, list<Trait> traits = []>
    : Gopt_Op<mnemonic, !listconcat(traits, [SameOperandsAndResultType])> {
  let arguments = (ins Gopt_Tensor:$x);
  let results = (outs Gopt_Tensor:$y);
  let runtimeShapeFunction = "sameShape";
}

//===----------------------------------------------------------------------===//
// Constants and plumbing
//===----------------------------------------------------------------------===//

def Gopt_ConstantOp : Gopt_Op<"constant", [ConstantLike, Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let notDifferentiable = "no operands";
  let summary = "a constant tensor";
  let description = [{
    A tensor-valued constant: weights, biases, shapes. Large values (imported
    initializers) are `dense_resource` blobs so the IR stays readable.

    ```mlir
    %w = gopt.constant dense<1.0> : tensor<3x3x16x32xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Gopt_AnyTensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
  let compileTimeOnly = 1;
  let builders = [OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
    build($_builder, $_state, value.getType(), value);
  }]>];
}

def Gopt_IdentityOp : Gopt_PassThroughOp<"identity", [Pure, Gopt_LayoutAgnostic, Gopt_MixedPrecisionClear, Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Identity"];
  let arguments = (ins Gopt_AnyTensor:$x);
  let results = (outs Gopt_AnyTensor:$y);
  let summary = "returns its operand";
  let description = [{
    TensorFlow's `Identity` and ONNX's `Identity`. Folds away.

    ```mlir
    %y = gopt.identity %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let hasFolder = 1;
}

def Gopt_StopGradientOp : Gopt_PassThroughOp<"stop_gradient", [Pure, Gopt_LayoutAgnostic, Gopt_DataMovement, Gopt_Differentiable]> {
  let summary = "returns its operand; blocks gradients";
  let description = [{
    The value passes through unchanged; autodiff treats it as a constant.
    Kept by the canonicalizer (it matters for training graphs); removed for
    inference by `--gopt-strip-debug-ops`.

    ```mlir
    %y = gopt.stop_gradient %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
}

def Gopt_CheckNumericsOp : Gopt_PassThroughOp<"check_numerics", [MemoryEffects<[MemWrite]>, Gopt_LayoutAgnostic, Gopt_Differentiable]> {
  let summary = "fails at run time if its operand holds NaN or Inf";
  let description = [{
    TensorFlow's `CheckNumerics`: passes the operand through, and the runtime
    stops with `message` and the op's name if any element is NaN or Inf. It
    has an effect, so dead-code elimination keeps it; `--gopt-strip-debug-ops`
    removes it.

    ```mlir
    %y = gopt.check_numerics %x {message = "conv1 output"} : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, DefaultValuedStrAttr<StrAttr, "">:$message);
  let results = (outs Gopt_FloatTensor:$y);
}

def Gopt_DropoutOp : Gopt_PassThroughOp<"dropout", [Gopt_LayoutAgnostic, Gopt_Differentiable]> {
  let summary = "dropout (identity for inference)";
  let description = [{
    With `training = false` (the default) the op is the identity and folds
    away. With `training = true` each element is zeroed with probability
    `ratio` and the rest scaled by `1 / (1 - ratio)`. The mask is a pure
    function of the session's seed, `seed`, the run number and the element
    index (docs/op-semantics.md), so `gopt.dropout_grad` with the same
    `seed` recomputes it instead of storing it; `--gopt-autodiff` gives
    each training dropout a distinct `seed`.

    ```mlir
    %y = gopt.dropout %x {ratio = 2.500000e-01 : f32} : (tensor<8x128xf32>) -> tensor<8x128xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x,
                   DefaultValuedAttr<F32Attr, "0.5f">:$ratio,
                   DefaultValuedAttr<BoolAttr, "false">:$training,
                   DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Gopt_FloatTensor:$y);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Gopt_RandomUniformLikeOp : Gopt_Op<"random_uniform_like", [SameOperandsAndResultShape, Gopt_LayoutAgnostic]> {
  let notDifferentiable = "random draws: they do not depend on the operand's values";
  let summary = "uniform random values of an operand's shape";
  let description = [{
    Element i is `low + (high - low) * u`, `u` in [0, 1) from the top 53
    bits of `mix64(key + i * 0x9E3779B97F4A7C15)` with dropout's key
    (`runtime/src/cpu/DropoutMask.h`: the session seed, `seed` or else the
    op's place in the plan, and the run number): a pure function of those,
    so runs are reproducible for a session seed and differ from run to run.
    Only `x`'s shape is read. Not `Pure`: two draws must not merge (ONNX
    RandomUniform(Like); RandomNormal(Like), Bernoulli and training dropout
    with a ratio fed at run time are built from it).

    ```mlir
    %u = gopt.random_uniform_like %x {low = 0.0 : f32, high = 1.0 : f32} : (tensor<3x4xf32>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Gopt_Tensor:$x,
                   DefaultValuedAttr<F32Attr, "0.0f">:$low,
                   DefaultValuedAttr<F32Attr, "1.0f">:$high,
                   DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Gopt_FloatTensor:$y);
  let runtimeShapeFunction = "sameShape";
  let resultElementType = "any";
}

def Gopt_CastOp : Gopt_Op<"cast", [Pure, SameOperandsAndResultShape, Gopt_LayoutAgnostic, Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Cast", "CastLike", "QuantizeLinear", "DequantizeLinear"];
  let summary = "element type conversion";
  let description = [{
    Converts each element to the result's element type: float to integer
    truncates toward zero, anything to `i1` is `x != 0`. A cast to the same
    type folds away. To a float8 type (`f8E4M3FN`, `f8E4M3FNUZ`, `f8E5M2`,
    `f8E5M2FNUZ`) it rounds to nearest even; `saturate` (ONNX Cast-19's)
    clamps values beyond the type's largest finite value (and infinities) to
    it, otherwise they become NaN, or infinity for `f8E5M2`. To `i4`/`ui4`
    (one element per byte in the runtime) it rounds to nearest even and
    clamps to the type's range, as ONNX's reference does.

    ```mlir
    %y = gopt.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf16>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x,
                   DefaultValuedAttr<BoolAttr, "true">:$saturate);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "sameShape";
  let resultElementType = "any";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Gopt_ShapeOp : Gopt_InferredOp<"shape", [Pure, Gopt_DataMovement]> {
  let onnxRuleOpTypes = ["Shape", "Size"];
  let notDifferentiable = "an integer result (the operand's shape)";
  let summary = "the dimensions of a tensor as a 1-D i64 tensor";
  let description = [{
    TensorFlow's `Shape` and ONNX's `Shape`. Folds to a constant when the
    operand's shape is static.

    ```mlir
    %s = gopt.shape %x : (tensor<?x224x224x3xf32>) -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x);
  let results = (outs Gopt_I64Tensor:$shape);
  let runtimeShapeFunction = "shapeOfShape";
  let readsOperandShapesOnly = 1;
  let resultElementType = "i64";
  let hasFolder = 1;
  let hasVerifier = 0;
}

def Gopt_ReshapeOp : Gopt_InferredOp<"reshape", [Pure, SameOperandsAndResultElementType, Gopt_MixedPrecisionClear, Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Reshape", "Squeeze", "Unsqueeze"];
  let summary = "same elements, new dimensions";
  let description = [{
    Reinterprets the row-major elements with the dimensions `shape`; one
    entry may be -1, inferred from the element count (dynamic when the
    operand has dynamic dimensions). Reshape of reshape combines; a reshape
    to the operand's own static type folds away.

    ```mlir
    %y = gopt.reshape %x {shape = array<i64: -1, 512>} : (tensor<?x512x1x1xf32>) -> tensor<?x512xf32>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x, DenseI64ArrayAttr:$shape);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "reshapeShape";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Gopt_FlattenOp : Gopt_InferredOp<"flatten", [Pure, SameOperandsAndResultElementType, Gopt_MixedPrecisionClear, Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Flatten"];
  let summary = "collapse to 2-D around an axis";
  let description = [{
    ONNX's `Flatten`: the result is `[prod(dims < axis), prod(dims >= axis)]`.

    ```mlir
    %y = gopt.flatten %x {axis = 1 : i64} : (tensor<?x64x7x7xf32>) -> tensor<?x3136xf32>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x, DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "flattenShape";
}

def Gopt_TransposeOp : Gopt_InferredOp<"transpose", [Pure, SameOperandsAndResultElementType, Gopt_MixedPrecisionClear, Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Transpose"];
  let summary = "permute dimensions";
  let description = [{
    Result dimension `i` is operand dimension `perm[i]`. A transpose of a
    transpose composes; an identity permutation folds away.

    ```mlir
    %y = gopt.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<?x224x224x3xf32>) -> tensor<?x3x224x224xf32>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x, DenseI64ArrayAttr:$perm);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "transposeShape";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Gopt_ConcatOp : Gopt_InferredOp<"concat", [Pure, SameOperandsAndResultElementType, Gopt_MixedPrecisionClear, Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Concat"];
  let summary = "join tensors along an axis";
  let description = [{
    All operands have the same rank and equal dimensions except along `axis`
    (negative counts from the end).

    ```mlir
    %y = gopt.concat %a, %b {axis = 1 : i64} : (tensor<?x64x8x8xf32>, tensor<?x32x8x8xf32>) -> tensor<?x96x8x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Gopt_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "concatShape";
}

def Gopt_SliceOp : Gopt_InferredOp<"slice", [Pure, SameOperandsAndResultElementType, Gopt_MixedPrecisionClear, Gopt_DataMovement, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Slice", "Split"];
  let summary = "strided slice";
  let description = [{
    Takes elements `starts[i], starts[i] + steps[i], ...` before `ends[i]` in
    every dimension `i`. Starts are non-negative (importers normalise
    negative indices) and steps non-zero. A positive step goes forward:
    `ends[i] >= starts[i]`, both clamped to the dimension. A negative step
    goes backward: `-1 <= ends[i] <= starts[i]` (-1: down to element 0),
    both clamped to the last element (ONNX's rule).

    ```mlir
    %y = gopt.slice %x {starts = array<i64: 0, 1>, ends = array<i64: 4, 3>, steps = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<4x2xf32>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "sliceShape";
}

def Gopt_PadOp : Gopt_InferredOp<"pad", [Pure, SameOperandsAndResultElementType, Gopt_MixedPrecisionClear, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Pad"];
  let summary = "pad a tensor";
  let description = [{
    `pads` holds `[before_0, after_0, before_1, after_1, ...]`, non-negative.
    `mode` is `"constant"` (fill with `value`), `"reflect"`, `"edge"` or
    `"wrap"` (the opposite end's elements, periodically: ONNX Pad-19).

    ```mlir
    %y = gopt.pad %x {pads = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x8x8x3xf32>) -> tensor<1x10x10x3xf32>
    ```
  }];
  let arguments = (ins Gopt_AnyTensor:$x, DenseI64ArrayAttr:$pads,
                   Gopt_StrEnumAttr<["constant", "reflect", "edge", "wrap"], "constant">:$mode,
                   DefaultValuedAttr<F32Attr, "0.0f">:$value);
  let results = (outs Gopt_AnyTensor:$y);
  let runtimeShapeFunction = "padShape";
  // No padding (PyTorch exports avg_pool2d as such a pad and the pool).
  let hasFolder = 1;
}

def Gopt_TransferOp : Gopt_Op<"transfer", [Pure, SameOperandsAndResultType]> {
  let notDifferentiable = "inserted by device placement after autodiff";
  let summary = "copies a tensor to another device";
  let description = [{
    Device placement inserts a transfer wherever a value produced on one
    device (`from`) is used on another (`to`); each is a host<->device copy
    at run time, so placement keeps them few. The value is unchanged.

    ```mlir
    %y = gopt.transfer %x {from = "cpu", to = "gpu"} : (tensor<?x224x224x3xf32>) -> tensor<?x224x224x3xf32>
    ```
  }];
  let arguments = (ins Gopt_Tensor:$x, Gopt_DeviceNameAttr:$from,
                   Gopt_DeviceNameAttr:$to);
  let results = (outs Gopt_Tensor:$y);
  let runtimeShapeFunction = "sameShape";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Neural-network ops
//===----------------------------------------------------------------------===//

def Gopt_DequantizeOp : Gopt_InferredOp<"dequantize", [Pure]> {
  let notDifferentiable = "an integer (quantized) input";
  let summary = "int8 values times per-channel (or per-tensor) f32 scales";
  let description = [{
    Symmetric dequantization: `y = x * scales[c]`, where `c` is the index of
    the element along `axis` (negative counts from the end) when `scales`
    has one entry per slice along `axis`, and `c = 0` when `scales` has one
    entry (per-tensor). `--gopt-quantize-weights` puts one after each int8
    weight constant so conv2d and matmul still consume f32.

    ```mlir
    %w = gopt.dequantize %q, %s {axis = 0 : i64} : (tensor<64x3x7x7xi8>, tensor<64xf32>) -> tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I8]>:$x, RankedTensorOf<[F32]>:$scales,
                   DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs RankedTensorOf<[F32]>:$y);
  let runtimeShapeFunction = "dequantizeShape";
  let resultElementType = "f32";
}

def Gopt_QuantizeOp : Gopt_InferredOp<"quantize", [Pure]> {
  let notDifferentiable = "an integer (quantized) result";
  let summary = "f32 values to int8 with per-channel (or per-tensor) scales";
  let description = [{
    Symmetric quantization, the inverse of `gopt.dequantize`:
    `q = clamp(round_half_to_even(x / scales[c]), -128, 127)` with `c` as
    in `gopt.dequantize` (ONNX QuantizeLinear with zero point 0; NaN
    becomes 0). Scales must be positive. `--gopt-quantize` puts a
    quantize/dequantize pair on each calibrated activation that a
    conv2d or matmul reads (the explicit Q/DQ form of ONNX Runtime and
    TensorRT).

    ```mlir
    %q = gopt.quantize %x, %s : (tensor<?x64x56x56xf32>, tensor<1xf32>) -> tensor<?x64x56x56xi8>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$x, RankedTensorOf<[F32]>:$scales,
                   DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs RankedTensorOf<[I8]>:$y);
  let runtimeShapeFunction = "quantizeShape";
  let resultElementType = "i8";
}


def Gopt_Conv2DOp : Gopt_InferredOp<"conv2d", [Pure, Gopt_MixedPrecisionAllow, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let trainableOperands = [1, 2];
  let summary = "2-D convolution, optionally with bias and activation";
  let description = [{
    Convolves `input` (`data_format` NHWC or NCHW) with `filter`
    (`filter_format` HWIO `[KH, KW, Cin/groups, Cout]` or OIHW
    `[Cout, Cin/groups, KH, KW]`). `padding` is `"EXPLICIT"` (with `pads` =
    `[top, bottom, left, right]`), `"SAME"` or `"VALID"` (TensorFlow's rules).
    `groups = Cin` is a depthwise convolution. The optional `bias` (`[Cout]`)
    and `activation` (`"none"`, `"relu"`, `"relu6"`, `"sigmoid"`) are what
    `--gopt-fuse-conv-bias-activation` folds in, so a backend runs one kernel.

    ```mlir
    %y = gopt.conv2d %x, %w, %b {strides = array<i64: 2, 2>, padding = "SAME", activation = "relu"}
        : (tensor<?x224x224x3xf32>, tensor<7x7x3x64xf32>, tensor<64xf32>) -> tensor<?x112x112x64xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$input, Gopt_FloatTensor:$filter,
                   Optional<Gopt_FloatTensor>:$bias,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   OptionalAttr<DenseI64ArrayAttr>:$dilations,
                   Gopt_PaddingAttr:$padding,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   DefaultValuedAttr<I64Attr, "1">:$groups,
                   Gopt_DataFormatAttr:$data_format,
                   Gopt_FilterFormatAttr:$filter_format,
                   Gopt_ActivationAttr:$activation);
  let layoutActivationOperands = [0];
  let results = (outs Gopt_FloatTensor:$output);
  let runtimeShapeFunction = "conv2dShape";
  let flopFunction = "conv2dFlops";
  let extraClassDeclaration = [{
    ::llvm::SmallVector<int64_t, 2> getStridesOrDefault() {
      return ::gopt::getI64ArrayOr(getStridesAttr(),
        ::gopt::shape::absentWindowAttr("strides"));
    }
    ::llvm::SmallVector<int64_t, 2> getDilationsOrDefault() {
      return ::gopt::getI64ArrayOr(getDilationsAttr(),
        ::gopt::shape::absentWindowAttr("dilations"));
    }
    ::llvm::SmallVector<int64_t, 4> getPadsOrDefault() {
      return ::gopt::getI64ArrayOr(getPadsAttr(),
        ::gopt::shape::absentWindowAttr("pads"));
    }
  }];
  // conv2d(pad(x)) with zero padding of the spatial dims only becomes one
  // conv2d with explicit pads: no padded copy of the activation.
  let hasCanonicalizer = 1;
}

def Gopt_BatchNormOp : Gopt_InferredOp<"batch_norm", [Pure, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let trainableOperands = [1, 2];
  let summary = "batch normalization, inference or training form";
  let description = [{
    Normalizes `x` per channel (`data_format` picks the channel axis; rank-2
    inputs use axis 1). Inference form (`training = false`, one result):
    `y = (x - mean) * rsqrt(variance + epsilon) * scale + offset`.
    Training form (five results): `y` normalized with the batch statistics,
    the batch mean and (biased) variance, and the running mean and variance
    updated with `momentum` (the variance update uses the unbiased estimate),
    as TensorFlow's FusedBatchNorm and PyTorch do. With `cross_replica`
    (training form only; `--gopt-data-parallel{sync-batch-norm=true}` sets
    it) the batch statistics are those of the global batch, all replicas'
    local batches together, as PyTorch's SyncBatchNorm computes them; with
    one replica that is the local batch.

    ```mlir
    %y = gopt.batch_norm %x, %scale, %offset, %mean, %var {epsilon = 1.0e-05 : f32, data_format = "NCHW"}
        : (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64x56x56xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$scale,
                   Gopt_FloatTensor:$offset, Gopt_FloatTensor:$mean,
                   Gopt_FloatTensor:$variance,
                   DefaultValuedAttr<F32Attr, "0.001f">:$epsilon,
                   Gopt_DataFormatAttr:$data_format,
                   DefaultValuedAttr<BoolAttr, "false">:$training,
                   DefaultValuedAttr<F32Attr, "0.9f">:$momentum,
                   DefaultValuedAttr<BoolAttr, "false">:$cross_replica);
  let layoutActivationOperands = [0];
  let results = (outs Gopt_FloatTensor:$y, Variadic<Gopt_FloatTensor>:$statistics);
  let runtimeShapeFunction = "batchNormShape";
}

def Gopt_BiasAddOp : Gopt_InferredOp<"bias_add", [Pure, SameOperandsAndResultElementType, Gopt_MixedPrecisionInfer, Gopt_Differentiable]> {
  let trainableOperands = [1];
  let summary = "add a per-channel bias";
  let description = [{
    TensorFlow's `BiasAdd`: adds the 1-D `bias` along the channel axis
    (`data_format`; axis 1 for rank 2).

    ```mlir
    %y = gopt.bias_add %x, %b {data_format = "NHWC"} : (tensor<?x8x8x64xf32>, tensor<64xf32>) -> tensor<?x8x8x64xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$bias,
                   Gopt_DataFormatAttr:$data_format);
  let layoutActivationOperands = [0];
  let results = (outs Gopt_FloatTensor:$y);
  let runtimeShapeFunction = "biasAddShape";
}

def Gopt_MatMulOp : Gopt_InferredOp<"matmul", [Pure, SameOperandsAndResultElementType, Gopt_MixedPrecisionAllow, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let trainableOperands = [0, 1];
  let summary = "batched matrix multiplication";
  let description = [{
    Multiplies the last two dimensions of `a` and `b` (each transposed first
    when its flag is set); leading dimensions broadcast as in numpy.

    ```mlir
    %y = gopt.matmul %x, %w {transpose_b = true} : (tensor<?x512xf32>, tensor<1000x512xf32>) -> tensor<?x1000xf32>
    ```
  }];
  let arguments = (ins Gopt_NumericTensor:$a, Gopt_NumericTensor:$b,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_b);
  let results = (outs Gopt_NumericTensor:$y);
  let runtimeShapeFunction = "matmulShape";
  let flopFunction = "matmulFlops";
}

class Gopt_PoolOp<string mnemonic, string what, list<Trait> traits = []>
    : Gopt_InferredOp<mnemonic, !listconcat(traits,
                                            [Pure, SameOperandsAndResultElementType])> {
  let summary = what # " pooling over 2-D windows";
  let results = (outs Gopt_FloatTensor:$y);
  let runtimeShapeFunction = "poolShape";
  let extraClassDeclaration = [{
    ::llvm::SmallVector<int64_t, 2> getStridesOrDefault() {
      return ::gopt::getI64ArrayOr(getStridesAttr(),
        ::gopt::shape::absentWindowAttr("strides"));
    }
    ::llvm::SmallVector<int64_t, 4> getPadsOrDefault() {
      return ::gopt::getI64ArrayOr(getPadsAttr(),
        ::gopt::shape::absentWindowAttr("pads"));
    }
  }];
}

def Gopt_MaxPoolOp : Gopt_PoolOp<"max_pool", "max", [Gopt_MixedPrecisionClear, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let description = [{
    Maximum over `kernel`-sized windows; padding follows conv2d's rules and
    padded elements never win. `ceil_mode` rounds the output size up.

    ```mlir
    %y = gopt.max_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, data_format = "NCHW"}
        : (tensor<?x64x112x112xf32>) -> tensor<?x64x56x56xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, DenseI64ArrayAttr:$kernel,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   Gopt_PaddingAttr:$padding,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   Gopt_DataFormatAttr:$data_format,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let layoutActivationOperands = [0];
}

def Gopt_AvgPoolOp : Gopt_PoolOp<"avg_pool", "average", [Gopt_MixedPrecisionInfer, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let description = [{
    Mean over `kernel`-sized windows. Padded elements are not counted unless
    `count_include_pad`.

    ```mlir
    %y = gopt.avg_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x8x8x16xf32>) -> tensor<?x4x4x16xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, DenseI64ArrayAttr:$kernel,
                   OptionalAttr<DenseI64ArrayAttr>:$strides,
                   Gopt_PaddingAttr:$padding,
                   OptionalAttr<DenseI64ArrayAttr>:$pads,
                   Gopt_DataFormatAttr:$data_format,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let layoutActivationOperands = [0];
  // A zero pad before it becomes its own, counted padding.
  let hasCanonicalizer = 1;
}

def Gopt_GlobalAvgPoolOp : Gopt_InferredOp<"global_avg_pool", [Pure, SameOperandsAndResultElementType, Gopt_MixedPrecisionInfer, Gopt_ComputeHeavy, Gopt_Differentiable]> {
  let summary = "mean over the spatial dimensions";
  let description = [{
    Averages over H and W, keeping them as size 1 (`[N, 1, 1, C]` or
    `[N, C, 1, 1]`).

    ```mlir
    %y = gopt.global_avg_pool %x {data_format = "NCHW"} : (tensor<?x512x7x7xf32>) -> tensor<?x512x1x1xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, Gopt_DataFormatAttr:$data_format);
  let layoutActivationOperands = [0];
  let results = (outs Gopt_FloatTensor:$y);
  let runtimeShapeFunction = "globalPoolShape";
}

class Gopt_SoftmaxLikeOp<string mnemonic, string what, list<Trait> traits = []>
    : Gopt_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType])> {
  let summary = what # " along an axis";
  let description = "Computes " # what # [{ along `axis` (negative counts
    from the end), numerically stable (the maximum is subtracted first).

    ```mlir
    %p = gopt.}] # mnemonic # [{ %logits {axis = -1 : i64} : (tensor<?x1000xf32>) -> tensor<?x1000xf32>
    ```
  }];
  let arguments = (ins Gopt_FloatTensor:$x, DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Gopt_FloatTensor:$y);
  let runtimeShapeFunction = "softmaxShape";  let hasVerifier = 1;
}
def Gopt_SoftmaxOp : Gopt_SoftmaxLikeOp<"softmax", "softmax", [Gopt_ComputeHeavy, Gopt_Differentiable]>;
def Gopt_LogSoftmaxOp : Gopt_SoftmaxLikeOp<"log_softmax", "log-softmax", [Gopt_ComputeHeavy, Gopt_Differentiable]>;

class Gopt_ReduceOp<string mnemonic, string what, list<Trait> traits = []>
    : Gopt_InferredOp<mnemonic, !listconcat(traits,
                                            [Pure, SameOperandsAndResultElementType, Gopt_Reduction])> {
  let summary = what # " over axes";
  let description = "Reduces with " # what # [{ over `axes` (negative count
    from the end; empty means all). Reduced axes are dropped unless
    `keep_dims`.

    ```mlir
    %m = gopt.}] # mnemonic # [{ %x {axes = array<i64: 1, 2>, keep_dims = true} : (tensor<?x7x7x64xf32>) -> tensor<?x1x1x64xf32>
    ```
  }];
  let arguments = (ins Gopt_NumericTensor:$x, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "false">:$keep_dims);
  let results = (outs Gopt_NumericTensor:$y);
  let runtimeShapeFunction = "reduceShape";
  // One shape function for the family (OpUtils.h).
  let extraClassDefinition = [{
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange l,
                                            ::mlir::TypeRange r) {
      return ::gopt::areCompatibleReturnTypes(l, r);
    }
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, ::std::optional<::mlir::Location>,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      ::gopt::ShapeError silent(::std::nullopt, getOperationName());
      if (::mlir::succeeded(::gopt::detail::inferReductionTypes(
              adaptor.getX(), adaptor.getAxes(), adaptor.getKeepDims(), silent,
              inferred)))
        return ::mlir::success();
      inferred.assign(1, ::gopt::detail::getPlaceholderType(
                             context, adaptor.getOperands()));
      return ::mlir::success();
    }
    ::mlir::LogicalResult $cppClass::verify() {
      ::llvm::SmallVector<::mlir::Type> inferred;
      return ::gopt::detail::inferReductionTypes(
          getX(), getAxes(), getKeepDims(),
          ::gopt::ShapeError(getLoc(), getOperationName()), inferred);
    }
  }];
}
def Gopt_ReduceMeanOp : Gopt_ReduceOp<"reduce_mean", "the mean", [Gopt_MixedPrecisionInfer, Gopt_Differentiable]>;
def Gopt_ReduceSumOp : Gopt_ReduceOp<"reduce_sum", "the sum", [Gopt_Differentiable]>;
def Gopt_ReduceMaxOp : Gopt_ReduceOp<"reduce_max", "the maximum", [Gopt_Differentiable]>;
def Gopt_ReduceMinOp : Gopt_ReduceOp<"reduce_min", "the minimum", [Gopt_Differentiable]>;
def Gopt_ReduceProdOp : Gopt_ReduceOp<"reduce_prod", "the product", [Gopt_Differentiable]>;

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

def Gopt_AddOp : Gopt_BinaryOp<"add", "lhs + rhs", [Commutative, Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer, Gopt_Differentiable]> {
  let trainableOperands = [0, 1];
}
def Gopt_SubOp : Gopt_BinaryOp<"sub", "lhs - rhs", [Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer, Gopt_Differentiable]> {
  let trainableOperands = [0, 1];
}
def Gopt_MulOp : Gopt_BinaryOp<"mul", "lhs * rhs", [Commutative, Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer, Gopt_Differentiable]> {
  // A per-channel scale (an exported norm's affine weight); as for add's
  // bias, only a tensor beside a computed value.
  let trainableOperands = [0, 1];
}
def Gopt_DivOp : Gopt_BinaryOp<"div", "lhs / rhs (integers truncate toward zero)", [Gopt_LayoutAgnostic, Gopt_Differentiable]> {
  // The decomposed hard_sigmoid and hard_swish exporters write become the ops.
  let hasCanonicalizer = 1;
}
def Gopt_MaxOp : Gopt_BinaryOp<"max", "max(lhs, rhs)", [Commutative, Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer, Gopt_Differentiable]>;
def Gopt_MinOp : Gopt_BinaryOp<"min", "min(lhs, rhs)", [Commutative, Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer, Gopt_Differentiable]>;
def Gopt_PowOp : Gopt_BinaryOp<"pow", "lhs ^ rhs", [Gopt_LayoutAgnostic, Gopt_Differentiable]> {
  // x^2, x^1 and x^0.5 by a constant exponent become mul, x and sqrt.
  let hasCanonicalizer = 1;
}
def Gopt_SquaredDifferenceOp : Gopt_BinaryOp<"squared_difference", "(lhs - rhs)^2", [Commutative, Gopt_LayoutAgnostic, Gopt_Differentiable]>;

def Gopt_ReluOp : Gopt_UnaryOp<"relu", "max(x, 0)", [Gopt_LayoutAgnostic, Gopt_MixedPrecisionClear, Gopt_Differentiable]>;
def Gopt_Relu6Op : Gopt_UnaryOp<"relu6", "min(max(x, 0), 6)", [Gopt_LayoutAgnostic, Gopt_MixedPrecisionClear, Gopt_Differentiable]>;
def Gopt_SigmoidOp : Gopt_UnaryOp<"sigmoid", "1 / (1 + exp(-x))", [Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer, Gopt_Differentiable]>;
def Gopt_TanhOp : Gopt_UnaryOp<"tanh", "tanh(x)", [Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer, Gopt_Differentiable]>;
def Gopt_ExpOp : Gopt_UnaryOp<"exp", "exp(x)", [Gopt_LayoutAgnostic, Gopt_Differentiable]>;
def Gopt_LogOp : Gopt_UnaryOp<"log", "log(x)", [Gopt_LayoutAgnostic, Gopt_Differentiable]>;
def Gopt_SqrtOp : Gopt_UnaryOp<"sqrt", "sqrt(x)", [Gopt_LayoutAgnostic, Gopt_Differentiable]>;
def Gopt_RsqrtOp : Gopt_UnaryOp<"rsqrt", "1 / sqrt(x)", [Gopt_LayoutAgnostic, Gopt_Differentiable]>;
def Gopt_NegOp : Gopt_UnaryOp<"neg", "-x", [Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer, Gopt_Differentiable]>;
def Gopt_AbsOp : Gopt_UnaryOp<"abs", "|x|", [Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer, Gopt_Differentiable]>;
def Gopt_ErfOp : Gopt_UnaryOp<"erf", "the error function erf(x)", [Gopt_LayoutAgnostic, Gopt_Differentiable]>;

def Gopt_GeluOp : Gopt_UnaryOp<"gelu", "GELU, x * Phi(x)", [Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer, Gopt_Differentiable]> {
  let arguments = (ins Gopt_FloatTensor:$x,
                   Gopt_StrEnumAttr<["none", "tanh"], "none">:$approximate);
  let hasVerifier = 1;
}

def Gopt_LeakyReluOp : Gopt_UnaryOp<"leaky_relu", "x >= 0 ? x : alpha * x", [Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer, Gopt_Differentiable]> {
  let arguments = (ins Gopt_FloatTensor:$x,
                   DefaultValuedAttr<F32Attr, "0.01f">:$alpha);
}

def Gopt_ClipOp : Gopt_UnaryOp<"clip", "min(max(x, min), max)", [Gopt_LayoutAgnostic, Gopt_MixedPrecisionClear, Gopt_Differentiable]> {
  let arguments = (ins Gopt_FloatTensor:$x, F32Attr:$min, F32Attr:$max);
  let hasVerifier = 1;
}

include "gopt/Dialect/Gopt/IR/GoptMathOps.td"
include "gopt/Dialect/Gopt/IR/GoptTrainingOps.td"
include "gopt/Dialect/Gopt/IR/GoptNormOps.td"
include "gopt/Dialect/Gopt/IR/GoptLogicOps.td"
include "gopt/Dialect/Gopt/IR/GoptImageOps.td"
include "gopt/Dialect/Gopt/IR/GoptIndexingOps.td"
include "gopt/Dialect/Gopt/IR/GoptRnnOps.td"
include "gopt/Dialect/Gopt/IR/GoptVolumeOps.td"
include "gopt/Dialect/Gopt/IR/GoptDynamicShapeOps.td"
include "gopt/Dialect/Gopt/IR/GoptControlFlowOps.td"
include "gopt/Dialect/Gopt/IR/GoptSamplingOps.td"
include "gopt/Dialect/Gopt/IR/GoptSignalOps.td"
include "gopt/Dialect/Gopt/IR/GoptDataDependentOps.td"
include "gopt/Dialect/Gopt/IR/GoptCollectiveOps.td"

#endif // GOPT_DIALECT_GOPT_IR_GOPTOPS_TD
