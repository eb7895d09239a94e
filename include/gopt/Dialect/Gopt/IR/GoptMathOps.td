//===- GoptMathOps.td - elementwise math and activations ---*- tablegen -*-===//
//
// Elementwise float functions defined entirely here: each `defm` gives an op,
// its gradient op and their scalar math. tools/gen-op-tables turns the math
// into the C++ that the runtime's kernels, the constant folder and autodiff
// share, and the ONNX/TF op types into the importers' and exporter's tables,
// so adding such an op is one entry in this file. Included by GoptOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTMATHOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTMATHOPS_TD

// Marks the ops of this file for the passes (FoldConstants) and the
// generated tables.
def Gopt_UnaryMathTrait : NativeOpTrait<"UnaryMath"> {
  let cppNamespace = "::gopt";
}
def Gopt_UnaryMathGradTrait : NativeOpTrait<"UnaryMathGrad"> {
  let cppNamespace = "::gopt";
}

// The scalar function and its derivative: C++ of `x` and the op's float
// attributes, all of the element's computation type `T` (float or double),
// with <cmath> and gopt/runtime/ScalarMath.h in scope. A body that contains
// `return` is used as is; otherwise it is one expression.
class Gopt_ScalarMath<code function, code derivative> {
  code scalarFunction = function;
  code scalarDerivative = derivative;
}

// `y = f(x)` and `dx = dy * f'(x)`, with `attrs` on both. The gradient op
// is `<mnemonic>_grad`; the op's gradient rule (generated here, so the
// family has no per-op C++) creates it with the forward op's attributes.
multiclass Gopt_UnaryMath<string mnemonic, string formula, dag attrs,
                          code function, code derivative,
                          string onnx = "", string tf = "",
                          int onnxSince = 1> {
  def Op : Gopt_Op<mnemonic, [Pure, SameOperandsAndResultType,
                              InferTypeOpInterface, Gopt_UnaryMathTrait,
                              Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer,
                              Gopt_Differentiable]>,
           Gopt_ScalarMath<function, derivative> {
    let summary = "elementwise " # formula;
    let description = "Computes `" # formula # [{` elementwise on a float
      tensor; the result has the operand's type.

      ```mlir
      %y = gopt.}] # mnemonic # [{ %x : (tensor<?x64xf32>) -> tensor<?x64xf32>
      ```
    }];
    let arguments = !con((ins Gopt_FloatTensor:$x), attrs);
    let results = (outs Gopt_FloatTensor:$y);
    let runtimeShapeFunction = "sameShape";
    let onnxOpType = onnx;
    let tfOpType = tf;
    let onnxSinceOpset = onnxSince;
    // `NAME` is the defm's (Gopt_Elu): its GradOp below is ::gopt::EluGradOp.
    let extraClassDefinition = [{
      ::mlir::LogicalResult $cppClass::buildGradients(
          ::gopt::GradientBuilder &builder,
          ::mlir::ArrayRef<::mlir::Value> resultGrads) {
        return ::gopt::buildUnaryMathGradient<::gopt::}]
        # !subst("Gopt_", "", NAME) # [{GradOp>(*this, builder, resultGrads);
      }
    }];
  }
  def GradOp : Gopt_Op<mnemonic # "_grad", [Pure, SameOperandsAndResultType,
                       InferTypeOpInterface, Gopt_UnaryMathGradTrait,
                       Gopt_LayoutAgnostic]> {
    let notDifferentiable = "a gradient op: autodiff writes first-order gradients only";
    let summary = "gradient of gopt." # mnemonic;
    let description = "`dx = dy * f'(x)` for `f` of `gopt." # mnemonic # [{`,
      with its attributes; written by `--gopt-autodiff`.

      ```mlir
      %dx = gopt.}] # mnemonic # [{_grad %x, %dy : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
      ```
    }];
    let arguments = !con((ins Gopt_FloatTensor:$x, Gopt_FloatTensor:$dy), attrs);
    let results = (outs Gopt_FloatTensor:$dx);
    let runtimeShapeFunction = "matchingOperandsShape";
  }
}

defm Gopt_HardSigmoid : Gopt_UnaryMath<"hard_sigmoid",
    "max(0, min(1, alpha * x + beta))",
    (ins DefaultValuedAttr<F32Attr, "0.2f">:$alpha,
         DefaultValuedAttr<F32Attr, "0.5f">:$beta),
    [{ std::max(T(0), std::min(T(1), alpha * x + beta)) }],
    [{ alpha * x + beta > T(0) && alpha * x + beta < T(1) ? alpha : T(0) }],
    "HardSigmoid">;

defm Gopt_HardSwish : Gopt_UnaryMath<"hard_swish",
    "x * max(0, min(1, x / 6 + 1 / 2))", (ins),
    [{ x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5))) }],
    [{ x < T(-3) ? T(0) : (x > T(3) ? T(1) : x / T(3) + T(0.5)) }],
    "HardSwish", "", 14>;

defm Gopt_Softplus : Gopt_UnaryMath<"softplus", "log(1 + exp(x))", (ins),
    [{ gopt::scalar::softplus(x) }],
    [{ gopt::scalar::sigmoid(x) }],
    "Softplus", "Softplus">;

defm Gopt_Softsign : Gopt_UnaryMath<"softsign", "x / (1 + |x|)", (ins),
    [{ x / (T(1) + std::fabs(x)) }],
    [{ T(1) / ((T(1) + std::fabs(x)) * (T(1) + std::fabs(x))) }],
    "Softsign", "Softsign">;

defm Gopt_Elu : Gopt_UnaryMath<"elu", "x > 0 ? x : alpha * (exp(x) - 1)",
    (ins DefaultValuedAttr<F32Attr, "1.0f">:$alpha),
    [{ x > T(0) ? x : alpha * std::expm1(x) }],
    [{ x > T(0) ? T(1) : alpha * std::exp(x) }],
    "Elu", "Elu">;

// The defaults are SELU's constants (ONNX's and TensorFlow's, to f32).
defm Gopt_Selu : Gopt_UnaryMath<"selu",
    "gamma * (x > 0 ? x : alpha * (exp(x) - 1))",
    (ins DefaultValuedAttr<F32Attr, "1.67326319217681884765625f">:$alpha,
         DefaultValuedAttr<F32Attr, "1.05070102214813232421875f">:$gamma),
    [{ gamma * (x > T(0) ? x : alpha * std::expm1(x)) }],
    [{ gamma * (x > T(0) ? T(1) : alpha * std::exp(x)) }],
    "Selu", "Selu">;

defm Gopt_Celu : Gopt_UnaryMath<"celu",
    "max(0, x) + min(0, alpha * (exp(x / alpha) - 1))",
    (ins DefaultValuedAttr<F32Attr, "1.0f">:$alpha),
    [{ std::max(T(0), x) + std::min(T(0), alpha * std::expm1(x / alpha)) }],
    [{ x > T(0) ? T(1) : std::exp(x / alpha) }],
    "Celu", "", 12>;

defm Gopt_Mish : Gopt_UnaryMath<"mish", "x * tanh(log(1 + exp(x)))", (ins),
    [{ x * std::tanh(gopt::scalar::softplus(x)) }],
    [{
      T t = std::tanh(gopt::scalar::softplus(x));
      return t + x * gopt::scalar::sigmoid(x) * (T(1) - t * t);
    }],
    "Mish", "", 18>;

defm Gopt_ThresholdedRelu : Gopt_UnaryMath<"thresholded_relu",
    "x > alpha ? x : 0",
    (ins DefaultValuedAttr<F32Attr, "1.0f">:$alpha),
    [{ x > alpha ? x : T(0) }],
    [{ x > alpha ? T(1) : T(0) }],
    "ThresholdedRelu">;

// Piecewise-constant functions have a zero gradient (as in PyTorch); NaN
// stays NaN.
defm Gopt_Sign : Gopt_UnaryMath<"sign", "x > 0 ? 1 : (x < 0 ? -1 : x)", (ins),
    [{ x > T(0) ? T(1) : (x < T(0) ? T(-1) : x) }], [{ T(0) }],
    "Sign", "Sign">;

defm Gopt_Floor : Gopt_UnaryMath<"floor", "floor(x)", (ins),
    [{ std::floor(x) }], [{ T(0) }], "Floor", "Floor">;

defm Gopt_Ceil : Gopt_UnaryMath<"ceil", "ceil(x)", (ins),
    [{ std::ceil(x) }], [{ T(0) }], "Ceil", "Ceil">;

// Halves round to even, as ONNX, TensorFlow and numpy do.
defm Gopt_Round : Gopt_UnaryMath<"round", "round half to even(x)", (ins),
    [{ std::nearbyint(x) }], [{ T(0) }], "Round", "Round">;

defm Gopt_Reciprocal : Gopt_UnaryMath<"reciprocal", "1 / x", (ins),
    [{ T(1) / x }], [{ T(-1) / (x * x) }], "Reciprocal", "Reciprocal">;

defm Gopt_Sin : Gopt_UnaryMath<"sin", "sin(x)", (ins),
    [{ std::sin(x) }], [{ std::cos(x) }], "Sin", "Sin">;

defm Gopt_Cos : Gopt_UnaryMath<"cos", "cos(x)", (ins),
    [{ std::cos(x) }], [{ -std::sin(x) }], "Cos", "Cos">;

defm Gopt_Tan : Gopt_UnaryMath<"tan", "tan(x)", (ins),
    [{ std::tan(x) }], [{ T(1) + std::tan(x) * std::tan(x) }], "Tan", "Tan">;

defm Gopt_Asin : Gopt_UnaryMath<"asin", "asin(x)", (ins),
    [{ std::asin(x) }], [{ T(1) / std::sqrt(T(1) - x * x) }], "Asin", "Asin">;

defm Gopt_Acos : Gopt_UnaryMath<"acos", "acos(x)", (ins),
    [{ std::acos(x) }], [{ T(-1) / std::sqrt(T(1) - x * x) }], "Acos", "Acos">;

defm Gopt_Atan : Gopt_UnaryMath<"atan", "atan(x)", (ins),
    [{ std::atan(x) }], [{ T(1) / (T(1) + x * x) }], "Atan", "Atan">;

defm Gopt_Sinh : Gopt_UnaryMath<"sinh", "sinh(x)", (ins),
    [{ std::sinh(x) }], [{ std::cosh(x) }], "Sinh", "Sinh">;

defm Gopt_Cosh : Gopt_UnaryMath<"cosh", "cosh(x)", (ins),
    [{ std::cosh(x) }], [{ std::sinh(x) }], "Cosh", "Cosh">;

defm Gopt_Asinh : Gopt_UnaryMath<"asinh", "asinh(x)", (ins),
    [{ std::asinh(x) }], [{ T(1) / std::sqrt(x * x + T(1)) }], "Asinh", "Asinh">;

defm Gopt_Acosh : Gopt_UnaryMath<"acosh", "acosh(x)", (ins),
    [{ std::acosh(x) }], [{ T(1) / std::sqrt(x * x - T(1)) }], "Acosh", "Acosh">;

defm Gopt_Atanh : Gopt_UnaryMath<"atanh", "atanh(x)", (ins),
    [{ std::atanh(x) }], [{ T(1) / (T(1) - x * x) }], "Atanh", "Atanh">;

// TensorFlow's accurate forms near zero (no ONNX counterpart).
defm Gopt_Log1p : Gopt_UnaryMath<"log1p", "log(1 + x)", (ins),
    [{ std::log1p(x) }], [{ T(1) / (T(1) + x) }], "", "Log1p">;

defm Gopt_Expm1 : Gopt_UnaryMath<"expm1", "exp(x) - 1", (ins),
    [{ std::expm1(x) }], [{ std::exp(x) }], "", "Expm1">;

// ONNX's PRelu: `slope` broadcasts to `x` (per channel: [C, 1, 1] for NCHW).
def Gopt_PReluOp : Gopt_BinaryOp<"prelu",
    "lhs >= 0 ? lhs : rhs * lhs (rhs is the slope)",
    [Gopt_LayoutAgnostic, Gopt_MixedPrecisionInfer,
     Gopt_Differentiable]> {
  let onnxOpType = "PRelu";
  let trainableOperands = [1]; // the learned slope
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTMATHOPS_TD
