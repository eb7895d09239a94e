//===- ElementwiseGradients.cpp - Gradients of the elementwise ops --------===//
//
// DifferentiableOpInterface for shape-preserving elementwise math, written
// with existing ops: the binary ops (each operand's gradient summed over the
// dimensions it was broadcast along), where, the unary functions of
// GoptOps.td, cast and the ops that pass their operand through.
// GoptMathOps.td's family generates its rule (buildUnaryMathGradient).
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"

using namespace mlir;

namespace gopt {

namespace {

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// The gradient of an op whose result is its operand `x`.
LogicalResult passThrough(GradientBuilder &gradients, Value x, Value dy) {
  if (gradients.needsGrad(x))
    gradients.accumulate(x, dy);
  return success();
}

/// A unary op's one operand, which needs a gradient whenever its result
/// does.
LogicalResult accumulateUnary(GradientBuilder &gradients, Value x, Value grad) {
  gradients.accumulate(x, grad);
  return success();
}

/// The gradients `dl` and `dr` (either may be null) of a broadcasting
/// binary op's operands, reduced to their shapes.
LogicalResult accumulateBinary(GradientBuilder &gradients, Operation *op,
                               Value dl, Value dr) {
  if (failed(gradients.accumulateBroadcast(op, op->getOperand(0), dl)))
    return failure();
  return gradients.accumulateBroadcast(op, op->getOperand(1), dr);
}

/// max (`larger` is lhs) or min (`larger` is rhs): the larger (smaller)
/// operand takes the gradient; ties go to rhs.
LogicalResult maxMinGradients(GradientBuilder &gradients, Operation *op,
                              Value larger, Value smaller, Value dz) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = op->getLoc();
  Value diff = b.create<SubOp>(loc, larger, smaller);
  Value dl = b.create<ReluGradOp>(loc, dz, diff);
  Value dr;
  if (gradients.needsGrad(op->getOperand(1)))
    dr = b.create<SubOp>(loc, dz, dl);
  return accumulateBinary(gradients, op, dl, dr);
}

/// The gradient of a clip to [lo, hi] from its output: dy where
/// lo < y < hi (relu_grad twice: y - lo > 0 and hi - y > 0).
Value clipGrad(GradientBuilder &gradients, Location loc, Value dy, Value y,
               float lo, float hi) {
  OpBuilder &b = gradients.getBuilder();
  Type element = tensorType(y).getElementType();
  Value aboveLo =
      b.create<SubOp>(loc, y, gradients.scalarConstant(lo, element));
  Value belowHi =
      b.create<SubOp>(loc, gradients.scalarConstant(hi, element), y);
  return b.create<ReluGradOp>(loc, b.create<ReluGradOp>(loc, dy, aboveLo),
                              belowHi);
}

} // namespace

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  Value dz = resultGrads[0];
  return accumulateBinary(gradients, *this, dz, dz);
}

LogicalResult SubOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  Value dz = resultGrads[0];
  Value dr;
  if (gradients.needsGrad(getRhs()))
    dr = gradients.getBuilder().create<NegOp>(getLoc(), dz);
  return accumulateBinary(gradients, *this, dz, dr);
}

LogicalResult MulOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Value dz = resultGrads[0];
  Value dl, dr;
  if (gradients.needsGrad(getLhs()))
    dl = b.create<MulOp>(getLoc(), dz, getRhs());
  if (gradients.needsGrad(getRhs()))
    dr = b.create<MulOp>(getLoc(), dz, getLhs());
  return accumulateBinary(gradients, *this, dl, dr);
}

LogicalResult PowOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  // z = l ^ r: dl = dz * r * l ^ (r - 1); dr = dz * z * log(l), taken as 0
  // where l <= 0 (TensorFlow's choice: log is undefined there, and a
  // negative base only has a real power for integral exponents).
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dz = resultGrads[0];
  Type element = cast<RankedTensorType>(getZ().getType()).getElementType();
  Value dl, dr;
  if (gradients.needsGrad(getLhs())) {
    Value rMinus1 =
        b.create<SubOp>(loc, getRhs(), gradients.scalarConstant(1.0f, element));
    dl = b.create<MulOp>(
        loc, dz,
        b.create<MulOp>(loc, getRhs(),
                        b.create<PowOp>(loc, getLhs(), rMinus1)));
  }
  if (gradients.needsGrad(getRhs())) {
    Value zero = gradients.scalarConstant(0.0f, element);
    Value positive = b.create<GreaterOp>(loc, getLhs(), zero);
    Value one = gradients.scalarConstant(1.0f, element);
    // log of 1 where the base is not positive, so no NaN reaches the select.
    Value safeBase = b.create<WhereOp>(loc, positive, getLhs(), one);
    Value logBase = b.create<LogOp>(loc, safeBase);
    dr = b.create<MulOp>(loc, dz, b.create<MulOp>(loc, getZ(), logBase));
  }
  return accumulateBinary(gradients, *this, dl, dr);
}

LogicalResult DivOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  // z = l / r: dl = dz / r, dr = -dz * z / r.
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dz = resultGrads[0];
  Value dl, dr;
  if (gradients.needsGrad(getLhs()))
    dl = b.create<DivOp>(loc, dz, getRhs());
  if (gradients.needsGrad(getRhs()))
    dr = b.create<NegOp>(
        loc, b.create<DivOp>(loc, b.create<MulOp>(loc, dz, getZ()), getRhs()));
  return accumulateBinary(gradients, *this, dl, dr);
}

LogicalResult ModOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  // z = l - r * q with q = floor(l / r) (fmod = 0) or trunc(l / r) (fmod =
  // 1), piecewise constant: dl = dz, dr = -dz * q.
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dz = resultGrads[0];
  if (!isa<FloatType>(tensorType(dz).getElementType()))
    return emitNoGradientError(*this) << "integer operands", failure();
  Value dr;
  if (gradients.needsGrad(getRhs())) {
    Value ratio = b.create<DivOp>(loc, getLhs(), getRhs());
    // trunc(v) = sign(v) * floor(|v|).
    Value quotient =
        getFmod() == 0 ? b.create<FloorOp>(loc, ratio).getResult()
                       : b.create<MulOp>(loc, b.create<SignOp>(loc, ratio),
                                         b.create<FloorOp>(
                                             loc, b.create<AbsOp>(loc, ratio)));
    dr = b.create<NegOp>(loc, b.create<MulOp>(loc, dz, quotient));
  }
  return accumulateBinary(gradients, *this, dz, dr);
}

LogicalResult SquaredDifferenceOp::buildGradients(GradientBuilder &gradients,
                                                  ArrayRef<Value> resultGrads) {
  // z = (l - r)^2: dl = 2 (l - r) dz, dr = -dl.
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dz = resultGrads[0];
  Value two = gradients.scalarConstant(2.0f, tensorType(dz).getElementType());
  Value dl = b.create<MulOp>(
      loc, dz,
      b.create<MulOp>(loc, b.create<SubOp>(loc, getLhs(), getRhs()), two));
  Value dr;
  if (gradients.needsGrad(getRhs()))
    dr = b.create<NegOp>(loc, dl);
  return accumulateBinary(gradients, *this, dl, dr);
}

LogicalResult MaxOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  return maxMinGradients(gradients, *this, getLhs(), getRhs(), resultGrads[0]);
}

LogicalResult MinOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  return maxMinGradients(gradients, *this, getRhs(), getLhs(), resultGrads[0]);
}

LogicalResult PReluOp::buildGradients(GradientBuilder &gradients,
                                      ArrayRef<Value> resultGrads) {
  // z = l >= 0 ? l : r * l: dl = dz where l > 0, else r * dz;
  // dr = dz * l where l <= 0.
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dz = resultGrads[0], lhs = getLhs(), rhs = getRhs();
  Value pos = b.create<ReluGradOp>(loc, dz, lhs);
  Value neg = b.create<SubOp>(loc, dz, pos);
  Value dl, dr;
  if (gradients.needsGrad(lhs))
    dl = b.create<AddOp>(loc, pos, b.create<MulOp>(loc, neg, rhs));
  if (gradients.needsGrad(rhs))
    dr = b.create<MulOp>(loc, neg, lhs);
  return accumulateBinary(gradients, *this, dl, dr);
}

LogicalResult WhereOp::buildGradients(GradientBuilder &gradients,
                                      ArrayRef<Value> resultGrads) {
  // Each branch gets dy where it was chosen and 0 elsewhere, summed over the
  // dimensions it was broadcast along.
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  Value zero = gradients.scalarConstant(0.0f, tensorType(dy).getElementType());
  for (auto [branch, chosen] :
       {std::pair(getX(), true), std::pair(getY(), false)}) {
    if (!gradients.needsGrad(branch))
      continue;
    Value grad = chosen ? b.create<WhereOp>(loc, getCondition(), dy, zero)
                        : b.create<WhereOp>(loc, getCondition(), zero, dy);
    if (failed(gradients.accumulateBroadcast(*this, branch, grad)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Unary functions
//===----------------------------------------------------------------------===//

LogicalResult ReluOp::buildGradients(GradientBuilder &gradients,
                                     ArrayRef<Value> resultGrads) {
  return accumulateUnary(gradients, getX(),
                         gradients.getBuilder().create<ReluGradOp>(
                             getLoc(), resultGrads[0], getY()));
}

LogicalResult Relu6Op::buildGradients(GradientBuilder &gradients,
                                      ArrayRef<Value> resultGrads) {
  return accumulateUnary(
      gradients, getX(),
      clipGrad(gradients, getLoc(), resultGrads[0], getY(), 0.0f, 6.0f));
}

LogicalResult ClipOp::buildGradients(GradientBuilder &gradients,
                                     ArrayRef<Value> resultGrads) {
  return accumulateUnary(gradients, getX(),
                         clipGrad(gradients, getLoc(), resultGrads[0], getY(),
                                  getMin().convertToFloat(),
                                  getMax().convertToFloat()));
}

LogicalResult LeakyReluOp::buildGradients(GradientBuilder &gradients,
                                          ArrayRef<Value> resultGrads) {
  // alpha * dy + (1 - alpha) * (y > 0 ? dy : 0)
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  Type element = tensorType(dy).getElementType();
  float alpha = getAlpha().convertToFloat();
  if (alpha < 0)
    return emitNoGradientError(*this) << "a negative alpha", failure();
  Value pos = b.create<ReluGradOp>(loc, dy, getY());
  return accumulateUnary(
      gradients, getX(),
      b.create<AddOp>(
          loc,
          b.create<MulOp>(loc, dy, gradients.scalarConstant(alpha, element)),
          b.create<MulOp>(loc, pos,
                          gradients.scalarConstant(1.0f - alpha, element))));
}

LogicalResult AbsOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  // dy where x > 0, -dy where x < 0.
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  Value neg = b.create<NegOp>(loc, getX());
  return accumulateUnary(gradients, getX(),
                         b.create<SubOp>(loc,
                                         b.create<ReluGradOp>(loc, dy, getX()),
                                         b.create<ReluGradOp>(loc, dy, neg)));
}

LogicalResult SigmoidOp::buildGradients(GradientBuilder &gradients,
                                        ArrayRef<Value> resultGrads) {
  // dy * y * (1 - y)
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  Value one = gradients.scalarConstant(1.0f, tensorType(dy).getElementType());
  Value oneMinus = b.create<SubOp>(loc, one, getY());
  return accumulateUnary(
      gradients, getX(),
      b.create<MulOp>(loc, dy, b.create<MulOp>(loc, getY(), oneMinus)));
}

LogicalResult TanhOp::buildGradients(GradientBuilder &gradients,
                                     ArrayRef<Value> resultGrads) {
  // dy * (1 - y^2)
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  Value one = gradients.scalarConstant(1.0f, tensorType(dy).getElementType());
  Value y2 = b.create<MulOp>(loc, getY(), getY());
  return accumulateUnary(
      gradients, getX(),
      b.create<MulOp>(loc, dy, b.create<SubOp>(loc, one, y2)));
}

LogicalResult ExpOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  return accumulateUnary(
      gradients, getX(),
      gradients.getBuilder().create<MulOp>(getLoc(), resultGrads[0], getY()));
}

LogicalResult LogOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  return accumulateUnary(
      gradients, getX(),
      gradients.getBuilder().create<DivOp>(getLoc(), resultGrads[0], getX()));
}

LogicalResult NegOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  return accumulateUnary(
      gradients, getX(),
      gradients.getBuilder().create<NegOp>(getLoc(), resultGrads[0]));
}

LogicalResult SqrtOp::buildGradients(GradientBuilder &gradients,
                                     ArrayRef<Value> resultGrads) {
  // dy * 0.5 / y
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  Value half = gradients.scalarConstant(0.5f, tensorType(dy).getElementType());
  return accumulateUnary(
      gradients, getX(),
      b.create<DivOp>(loc, b.create<MulOp>(loc, dy, half), getY()));
}

LogicalResult RsqrtOp::buildGradients(GradientBuilder &gradients,
                                      ArrayRef<Value> resultGrads) {
  // d(x^-1/2) = -1/2 x^-3/2 = -1/2 y^3
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  Value y3 = b.create<MulOp>(loc, b.create<MulOp>(loc, getY(), getY()), getY());
  return accumulateUnary(
      gradients, getX(),
      b.create<MulOp>(
          loc, b.create<MulOp>(loc, dy, y3),
          gradients.scalarConstant(-0.5f, tensorType(dy).getElementType())));
}

LogicalResult ErfOp::buildGradients(GradientBuilder &gradients,
                                    ArrayRef<Value> resultGrads) {
  // dy * 2/sqrt(pi) * exp(-x^2)
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  Value x2 = b.create<MulOp>(loc, getX(), getX());
  Value e = b.create<ExpOp>(loc, b.create<NegOp>(loc, x2));
  return accumulateUnary(
      gradients, getX(),
      b.create<MulOp>(loc, dy,
                      b.create<MulOp>(loc, e,
                                      gradients.scalarConstant(
                                          1.1283791670955126f,
                                          tensorType(dy).getElementType()))));
}

// d gelu(x) / dx, times dy. Exact: Phi(x) + x phi(x) with
// Phi(x) = (1 + erf(x / sqrt 2)) / 2 and phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
// tanh form, gelu = x (1 + t) / 2 with t = tanh(u), u = k (x + c x^3):
// (1 + t) / 2 + x (1 - t^2) k (1 + 3 c x^2) / 2.
LogicalResult GeluOp::buildGradients(GradientBuilder &gradients,
                                     ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0];
  Type element = tensorType(dy).getElementType();
  auto constant = [&](float v) { return gradients.scalarConstant(v, element); };
  auto mul = [&](Value l, Value r) -> Value {
    return b.create<MulOp>(loc, l, r);
  };
  auto add = [&](Value l, Value r) -> Value {
    return b.create<AddOp>(loc, l, r);
  };
  Value x = getX();
  Value x2 = mul(x, x);
  Value slope;
  if (getApproximate() == "tanh") {
    const float k = 0.7978845608028654f, c = 0.044715f;
    Value u = mul(constant(k), add(x, mul(constant(c), mul(x2, x))));
    Value t = b.create<TanhOp>(loc, u);
    Value du = mul(constant(k), add(constant(1.0f), mul(constant(3 * c), x2)));
    Value sech2 = b.create<SubOp>(loc, constant(1.0f), mul(t, t));
    slope = add(mul(constant(0.5f), add(constant(1.0f), t)),
                mul(mul(constant(0.5f), x), mul(sech2, du)));
  } else {
    Value cdf =
        mul(constant(0.5f),
            add(constant(1.0f),
                b.create<ErfOp>(loc, mul(x, constant(0.7071067811865476f)))));
    Value pdf = mul(constant(0.3989422804014327f),
                    b.create<ExpOp>(loc, mul(constant(-0.5f), x2)));
    slope = add(cdf, mul(x, pdf));
  }
  return accumulateUnary(gradients, x, mul(dy, slope));
}

//===----------------------------------------------------------------------===//
// Casts and ops that pass their operand through
//===----------------------------------------------------------------------===//

LogicalResult CastOp::buildGradients(GradientBuilder &gradients,
                                     ArrayRef<Value> resultGrads) {
  // Mixed precision casts parameters to bf16/f16 at their use: the
  // gradient goes back to the parameter's (f32 master) type.
  Value dy = resultGrads[0];
  auto xType = tensorType(getX());
  if (!isa<FloatType>(xType.getElementType()))
    return emitNoGradientError(*this)
               << "casts from " << xType << ", which has no gradient",
           failure();
  return accumulateUnary(gradients, getX(),
                         gradients.getBuilder().create<CastOp>(
                             getLoc(),
                             RankedTensorType::get(tensorType(dy).getShape(),
                                                   xType.getElementType()),
                             dy));
}

LogicalResult IdentityOp::buildGradients(GradientBuilder &gradients,
                                         ArrayRef<Value> resultGrads) {
  return passThrough(gradients, getX(), resultGrads[0]);
}

LogicalResult CheckNumericsOp::buildGradients(GradientBuilder &gradients,
                                              ArrayRef<Value> resultGrads) {
  return passThrough(gradients, getX(), resultGrads[0]);
}

// The value is treated as a constant: no gradient flows through.
LogicalResult StopGradientOp::buildGradients(GradientBuilder &,
                                             ArrayRef<Value>) {
  return success();
}

LogicalResult DropoutOp::buildGradients(GradientBuilder &gradients,
                                        ArrayRef<Value> resultGrads) {
  Value dy = resultGrads[0];
  if (!getTraining() || getRatio().isZero())
    return passThrough(gradients, getX(), dy);
  // The mask is recomputed from the seed (--gopt-autodiff gives each
  // training dropout a distinct one).
  return accumulateUnary(gradients, getX(),
                         gradients.getBuilder().create<DropoutGradOp>(
                             getLoc(), dy, getRatioAttr(), getSeedAttr()));
}

} // namespace gopt
