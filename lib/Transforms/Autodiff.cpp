//===- Autodiff.cpp - Reverse-mode differentiation of a loss --------------===//
//
// Walks the graph backwards from the loss, writing for each op between the
// parameters and the loss the ops that compute its operands' gradients
// from its results' gradients (vector-Jacobian products), summing where a
// value has several uses. Gradients of shape-preserving elementwise math
// are written with existing ops; ops whose gradient needs a kernel of its
// own (conv2d, max_pool, batch_norm, the losses) use the gradient ops of
// GoptTrainingOps.td.
//
//===----------------------------------------------------------------------===//

#include "TrainingUtils.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/ShapeInference.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace gopt {
#define GEN_PASS_DEF_AUTODIFF
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// The static shape of `value` for a reshape attribute: a dynamic dimension
/// becomes -1; failure when there is more than one.
FailureOr<SmallVector<int64_t>> getReshapeTarget(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> target;
  int dynamic = 0;
  for (int64_t d : shape) {
    dynamic += ShapedType::isDynamic(d);
    target.push_back(ShapedType::isDynamic(d) ? -1 : d);
  }
  if (dynamic > 1)
    return failure();
  return target;
}

class Differentiator {
public:
  Differentiator(func::FuncOp func, Operation *insertBefore)
      : func(func), b(insertBefore) {}

  /// Differentiates `loss` with respect to `params`; gradients of params the
  /// loss does not depend on are zeros.
  FailureOr<SmallVector<Value>> run(Value loss, ArrayRef<BlockArgument> params,
                                    Value lossScale);

private:
  /// Adds `grad` to the gradient of `value`.
  void accumulate(Value value, Value grad);
  LogicalResult backprop(Operation *op);
  bool needsGrad(Value value) const { return needed.contains(value); }
  /// The gradient of result `i` of `op`, or null when nothing flows back.
  Value gradOf(Value value) const { return grads.lookup(value); }

  // Builders of the common pieces.
  Value scalarConstant(float value, Type elementType);
  Value constantLike(ArrayRef<int64_t> shape, float value, Type elementType);
  /// Reduces `grad` (of the broadcast result's shape) to `operand`'s shape.
  FailureOr<Value> unbroadcast(Operation *op, Value grad, Value operand);
  FailureOr<Value> reshapeTo(Operation *op, Value grad, Value like);
  Value scaleBySeed(Value grad, Value dy);

  LogicalResult backpropBinary(Operation *op, Value dz);
  LogicalResult backpropConv2D(Conv2DOp op, Value dy);
  LogicalResult backpropMatMul(MatMulOp op, Value dy);
  Value geluGrad(Location loc, GeluOp op, Value dy);
  LogicalResult backpropMaxPool(MaxPoolOp op, Value dy);
  LogicalResult backpropAvgPool(AvgPoolOp op, Value dy);
  LogicalResult backpropReduce(Operation *op, ArrayRef<int64_t> axes,
                               bool keepDims, bool mean, Value dy);
  LogicalResult backpropConcat(ConcatOp op, Value dy);
  LogicalResult backpropPad(PadOp op, Value dy);
  LogicalResult backpropSlice(SliceOp op, Value dy);
  LogicalResult backpropWhere(WhereOp op, Value dy);
  LogicalResult backpropTile(TileOp op, Value dy);
  /// The gradient of a clip to [lo, hi] from its output: dy where
  /// lo < y < hi (relu_grad twice: y - lo > 0 and hi - y > 0).
  Value clipGrad(Location loc, Value dy, Value y, float lo, float hi);

  InFlightDiagnostic error(Operation *op) {
    return op->emitOpError("has no gradient in gopt-autodiff: ");
  }

  func::FuncOp func;
  OpBuilder b;
  llvm::DenseSet<Value> needed;
  DenseMap<Value, Value> grads;
  /// The seed d(loss)/d(loss) = 1 (null for a scaled loss): ops consuming it
  /// skip the multiply.
  Value seed;
};

Value Differentiator::scalarConstant(float value, Type elementType) {
  return constantLike({}, value, elementType);
}

Value Differentiator::constantLike(ArrayRef<int64_t> shape, float value,
                                   Type elementType) {
  auto type = RankedTensorType::get(shape, elementType);
  // Through a FloatAttr, which rounds `value` to the element type:
  // DenseElementsAttr::get(type, float) stores four bytes whatever the type
  // (a malformed bf16/f16 constant that plan lowering rejects).
  return b.create<ConstantOp>(
      func.getLoc(),
      DenseElementsAttr::get(type, b.getFloatAttr(elementType, value)));
}

void Differentiator::accumulate(Value value, Value grad) {
  auto it = grads.find(value);
  if (it == grads.end()) {
    grads[value] = grad;
    return;
  }
  it->second = b.create<AddOp>(func.getLoc(), it->second, grad);
}

Value Differentiator::scaleBySeed(Value grad, Value dy) {
  if (dy == seed)
    return grad;
  return b.create<MulOp>(func.getLoc(), grad, dy);
}

FailureOr<Value> Differentiator::reshapeTo(Operation *op, Value grad,
                                           Value like) {
  if (tensorType(grad) == tensorType(like))
    return grad;
  FailureOr<SmallVector<int64_t>> target =
      getReshapeTarget(tensorType(like).getShape());
  if (failed(target))
    return error(op) << "its operand " << like.getType()
                     << " has more than one dynamic dimension",
           failure();
  return b.create<ReshapeOp>(op->getLoc(), grad, *target).getResult();
}

FailureOr<Value> Differentiator::unbroadcast(Operation *op, Value grad,
                                             Value operand) {
  ArrayRef<int64_t> result = tensorType(grad).getShape();
  ArrayRef<int64_t> shape = tensorType(operand).getShape();
  int64_t lead = result.size() - shape.size();
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < static_cast<int64_t>(result.size()); ++i) {
    if (i < lead) {
      axes.push_back(i);
      continue;
    }
    // A dynamic operand dim equals the result's; a size-1 dim against a
    // dynamic one is summed (harmless when it is 1 at run time too).
    if (shape[i - lead] == 1 && result[i] != 1)
      axes.push_back(i);
  }
  if (axes.empty())
    return reshapeTo(op, grad, operand);
  Value sum = b.create<ReduceSumOp>(
      op->getLoc(), grad, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
  return reshapeTo(op, sum, operand);
}

LogicalResult Differentiator::backpropBinary(Operation *op, Value dz) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Value z = op->getResult(0);
  Location loc = op->getLoc();
  Value dl, dr;
  if (isa<AddOp>(op)) {
    dl = dz;
    dr = dz;
  } else if (isa<SubOp>(op)) {
    dl = dz;
    if (needsGrad(rhs))
      dr = b.create<NegOp>(loc, dz);
  } else if (isa<MulOp>(op)) {
    if (needsGrad(lhs))
      dl = b.create<MulOp>(loc, dz, rhs);
    if (needsGrad(rhs))
      dr = b.create<MulOp>(loc, dz, lhs);
  } else if (isa<SquaredDifferenceOp>(op)) {
    // z = (l - r)^2: dl = 2 (l - r) dz, dr = -dl.
    Value two = scalarConstant(2.0f, tensorType(dz).getElementType());
    dl = b.create<MulOp>(
        loc, dz, b.create<MulOp>(loc, b.create<SubOp>(loc, lhs, rhs), two));
    if (needsGrad(rhs))
      dr = b.create<NegOp>(loc, dl);
  } else if (isa<MaxOp, MinOp>(op)) {
    // The larger (smaller) operand takes the gradient; ties go to rhs.
    Value diff = isa<MaxOp>(op) ? b.create<SubOp>(loc, lhs, rhs)
                                : b.create<SubOp>(loc, rhs, lhs);
    dl = b.create<ReluGradOp>(loc, dz, diff);
    if (needsGrad(rhs))
      dr = b.create<SubOp>(loc, dz, dl);
  } else if (isa<PReluOp>(op)) {
    // z = l >= 0 ? l : r * l: dl = dz where l > 0, else r * dz;
    // dr = dz * l where l <= 0.
    Value pos = b.create<ReluGradOp>(loc, dz, lhs);
    Value neg = b.create<SubOp>(loc, dz, pos);
    if (needsGrad(lhs))
      dl = b.create<AddOp>(loc, pos, b.create<MulOp>(loc, neg, rhs));
    if (needsGrad(rhs))
      dr = b.create<MulOp>(loc, neg, lhs);
  } else if (isa<DivOp>(op)) {
    // z = l / r: dl = dz / r, dr = -dz * z / r.
    if (needsGrad(lhs))
      dl = b.create<DivOp>(loc, dz, rhs);
    if (needsGrad(rhs))
      dr = b.create<NegOp>(
          loc, b.create<DivOp>(loc, b.create<MulOp>(loc, dz, z), rhs));
  }
  for (auto [operand, grad] : {std::pair(lhs, dl), std::pair(rhs, dr)}) {
    if (!grad || !needsGrad(operand))
      continue;
    FailureOr<Value> reduced = unbroadcast(op, grad, operand);
    if (failed(reduced))
      return failure();
    accumulate(operand, *reduced);
  }
  return success();
}

LogicalResult Differentiator::backpropConv2D(Conv2DOp op, Value dy) {
  Location loc = op.getLoc();
  Value dz = dy;
  if (op.getActivation() == "relu")
    dz = b.create<ReluGradOp>(loc, dy, op.getOutput());
  else if (op.getActivation() != "none")
    return error(op) << "fused activation '" << op.getActivation()
                     << "' (only none and relu are differentiated)";

  RankedTensorType inputType = tensorType(op.getInput());
  FailureOr<Layout> layout = parseDataFormat(
      op.getDataFormat(), ShapeError(op.getLoc(), "gopt.conv2d"));
  if (failed(layout))
    return failure();
  // Explicit pads for the gradient ops: SAME/VALID resolved at the input's
  // (static) spatial size.
  SmallVector<int64_t, 4> pads = op.getPadsOrDefault();
  if (op.getPadding() != "EXPLICIT") {
    if (inputType.isDynamicDim(layout->h) || inputType.isDynamicDim(layout->w))
      return error(op) << "padding \"" << op.getPadding()
                       << "\" with dynamic spatial dimensions",
             failure();
    RankedTensorType filterType = tensorType(op.getFilter());
    bool oihw = op.getFilterFormat() == "OIHW";
    WindowParams window;
    window.kernel = {filterType.getDimSize(oihw ? 2 : 0),
                     filterType.getDimSize(oihw ? 3 : 1)};
    window.strides = toDims(op.getStridesOrDefault());
    window.dilations = toDims(op.getDilationsOrDefault());
    window.padding = op.getPadding();
    window.pads = toDims(pads);
    auto [top, bottom] =
        resolvePadding(inputType.getDimSize(layout->h), window, 0);
    auto [left, right] =
        resolvePadding(inputType.getDimSize(layout->w), window, 1);
    pads = {top, bottom, left, right};
  }
  auto strides = b.getDenseI64ArrayAttr(op.getStridesOrDefault());
  auto dilations = b.getDenseI64ArrayAttr(op.getDilationsOrDefault());
  auto padsAttr = b.getDenseI64ArrayAttr(pads);

  if (needsGrad(op.getInput())) {
    FailureOr<SmallVector<int64_t>> inputShape =
        getReshapeTarget(inputType.getShape());
    if (failed(inputShape) || (inputType.getShape().size() == 4 &&
                               llvm::any_of(inputType.getShape().drop_front(),
                                            ShapedType::isDynamic)))
      return error(op) << "an input with dynamic dimensions other than the "
                          "batch: "
                       << inputType,
             failure();
    Value dx = b.create<Conv2DBackpropInputOp>(
        loc, inputType, dz, op.getFilter(), b.getDenseI64ArrayAttr(*inputShape),
        strides, dilations, padsAttr, op.getGroupsAttr(),
        op.getDataFormatAttr(), op.getFilterFormatAttr());
    accumulate(op.getInput(), dx);
  }
  if (needsGrad(op.getFilter())) {
    RankedTensorType filterType = tensorType(op.getFilter());
    Value dw = b.create<Conv2DBackpropFilterOp>(
        loc, filterType, op.getInput(), dz,
        b.getDenseI64ArrayAttr(filterType.getShape()), strides, dilations,
        padsAttr, op.getGroupsAttr(), op.getDataFormatAttr(),
        op.getFilterFormatAttr());
    accumulate(op.getFilter(), dw);
  }
  if (op.getBias() && needsGrad(op.getBias())) {
    SmallVector<int64_t> axes = {layout->n, layout->h, layout->w};
    llvm::sort(axes);
    Value db = b.create<ReduceSumOp>(loc, dz, b.getDenseI64ArrayAttr(axes),
                                     b.getBoolAttr(false));
    accumulate(op.getBias(), db);
  }
  return success();
}

// d gelu(x) / dx, times dy. Exact: Phi(x) + x phi(x) with
// Phi(x) = (1 + erf(x / sqrt 2)) / 2 and phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
// tanh form, gelu = x (1 + t) / 2 with t = tanh(u), u = k (x + c x^3):
// (1 + t) / 2 + x (1 - t^2) k (1 + 3 c x^2) / 2.
Value Differentiator::geluGrad(Location loc, GeluOp op, Value dy) {
  Type element = tensorType(dy).getElementType();
  auto constant = [&](float v) { return scalarConstant(v, element); };
  auto mul = [&](Value l, Value r) -> Value {
    return b.create<MulOp>(loc, l, r);
  };
  auto add = [&](Value l, Value r) -> Value {
    return b.create<AddOp>(loc, l, r);
  };
  Value x = op.getX();
  Value x2 = mul(x, x);
  Value slope;
  if (op.getApproximate() == "tanh") {
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
  return mul(dy, slope);
}

LogicalResult Differentiator::backpropMatMul(MatMulOp op, Value dy) {
  Value a = op.getA(), bv = op.getB();
  if (tensorType(a).getRank() < 2 || tensorType(bv).getRank() < 2)
    return error(op) << "a rank-1 operand (only matrices and batches of "
                        "them are differentiated)",
           failure();
  Location loc = op.getLoc();
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  auto mm = [&](Value x, Value y, bool tx, bool ty) -> Value {
    return b.create<MatMulOp>(loc, x, y, b.getBoolAttr(tx), b.getBoolAttr(ty));
  };
  // y = op(A) op(B) with op = transpose or not. Batched operands use the
  // same formulas per batch (matmul broadcasts batch dims); an operand
  // broadcast over batch dims (fewer of them, or size 1) sums its
  // gradient over those dims.
  if (needsGrad(a)) {
    Value da = !ta ? (!tb ? mm(dy, bv, false, true) : mm(dy, bv, false, false))
                   : (!tb ? mm(bv, dy, false, true) : mm(bv, dy, true, true));
    FailureOr<Value> reduced = unbroadcast(op, da, a);
    if (failed(reduced))
      return failure();
    accumulate(a, *reduced);
  }
  if (needsGrad(bv)) {
    Value db = !tb ? (!ta ? mm(a, dy, true, false) : mm(a, dy, false, false))
                   : (!ta ? mm(dy, a, true, false) : mm(dy, a, true, true));
    FailureOr<Value> reduced = unbroadcast(op, db, bv);
    if (failed(reduced))
      return failure();
    accumulate(bv, *reduced);
  }
  return success();
}

LogicalResult Differentiator::backpropMaxPool(MaxPoolOp op, Value dy) {
  RankedTensorType xType = tensorType(op.getX());
  FailureOr<Layout> layout = parseDataFormat(
      op.getDataFormat(), ShapeError(op.getLoc(), "gopt.max_pool"));
  if (failed(layout))
    return failure();
  SmallVector<int64_t, 4> pads = op.getPadsOrDefault();
  SmallVector<int64_t, 2> strides = op.getStridesOrDefault();
  ArrayRef<int64_t> kernel = op.getKernel();
  bool needStatic = op.getPadding() != "EXPLICIT" || op.getCeilMode();
  if (needStatic &&
      (xType.isDynamicDim(layout->h) || xType.isDynamicDim(layout->w)))
    return error(op) << "SAME padding or ceil_mode with dynamic spatial "
                        "dimensions",
           failure();
  WindowParams window;
  window.kernel = toDims(kernel);
  window.strides = toDims(strides);
  window.dilations = {1, 1};
  window.padding = op.getPadding();
  window.pads = toDims(pads);
  window.ceilMode = op.getCeilMode();
  if (op.getPadding() != "EXPLICIT") {
    auto [top, bottom] = resolvePadding(xType.getDimSize(layout->h), window, 0);
    auto [left, right] = resolvePadding(xType.getDimSize(layout->w), window, 1);
    pads = {top, bottom, left, right};
  }
  if (op.getCeilMode()) {
    // ceil_mode's extra last window reads past the end: pad bottom/right
    // so the floor-mode output size matches (padding never wins a max).
    RankedTensorType yType = tensorType(op.getY());
    int64_t dims[2] = {layout->h, layout->w};
    for (int i = 0; i < 2; ++i) {
      int64_t in = xType.getDimSize(dims[i]);
      int64_t out = yType.getDimSize(dims[i]);
      int64_t need = (out - 1) * strides[i] + kernel[i];
      int64_t have = in + pads[2 * i] + pads[2 * i + 1];
      if (need > have)
        pads[2 * i + 1] += need - have;
    }
  }
  Value dx = b.create<MaxPoolGradOp>(
      op.getLoc(), xType, op.getX(), dy, op.getKernelAttr(),
      b.getDenseI64ArrayAttr(strides), b.getDenseI64ArrayAttr(pads),
      op.getDataFormatAttr());
  accumulate(op.getX(), dx);
  return success();
}

// avg_pool_grad takes avg_pool's attributes as they are: its divisor is
// the forward's (count_include_pad, ceil_mode), which resolving SAME or
// ceil_mode into explicit pads would change.
LogicalResult Differentiator::backpropAvgPool(AvgPoolOp op, Value dy) {
  Value dx = b.create<AvgPoolGradOp>(
      op.getLoc(), op.getX().getType(), op.getX(), dy, op.getKernelAttr(),
      op.getStridesAttr(), op.getPaddingAttr(), op.getPadsAttr(),
      op.getDataFormatAttr(), op.getCeilModeAttr(),
      op.getCountIncludePadAttr());
  accumulate(op.getX(), dx);
  return success();
}

LogicalResult Differentiator::backpropReduce(Operation *op,
                                             ArrayRef<int64_t> axesAttr,
                                             bool keepDims, bool mean,
                                             Value dy) {
  Value x = op->getOperand(0);
  RankedTensorType xType = tensorType(x);
  int64_t rank = xType.getRank();
  SmallVector<bool> reduced(rank, axesAttr.empty());
  for (int64_t axis : axesAttr)
    reduced[axis < 0 ? axis + rank : axis] = true;
  // dy broadcast back over the reduced axes: reshape to the keep-dims shape,
  // then multiply by a constant that has the reduced extents (1 or 1/count).
  SmallVector<int64_t> keptShape, spread;
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t d = xType.getDimSize(i);
    if (reduced[i] && ShapedType::isDynamic(d))
      return error(op) << "a reduction over dynamic dimension " << i, failure();
    keptShape.push_back(reduced[i] ? 1 : d);
    spread.push_back(reduced[i] ? d : 1);
    if (reduced[i])
      count *= d;
  }
  Value kept = dy;
  if (!keepDims) {
    FailureOr<SmallVector<int64_t>> target = getReshapeTarget(keptShape);
    if (failed(target))
      return error(op) << "more than one dynamic dimension", failure();
    kept = b.create<ReshapeOp>(op->getLoc(), dy, *target);
  }
  Value dx = b.create<MulOp>(
      op->getLoc(), kept,
      constantLike(spread, mean ? 1.0f / count : 1.0f, xType.getElementType()));
  accumulate(x, dx);
  return success();
}

Value Differentiator::clipGrad(Location loc, Value dy, Value y, float lo,
                               float hi) {
  Type element = tensorType(y).getElementType();
  Value aboveLo = b.create<SubOp>(loc, y, scalarConstant(lo, element));
  Value belowHi = b.create<SubOp>(loc, scalarConstant(hi, element), y);
  return b.create<ReluGradOp>(loc, b.create<ReluGradOp>(loc, dy, aboveLo),
                              belowHi);
}

/// A slice of every dimension of `shape`: `[0, end)` where `end` is the
/// static size or, for a dynamic one, a bound the runtime clamps.
static SmallVector<int64_t> fullEnds(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> ends;
  for (int64_t d : shape)
    ends.push_back(
        ShapedType::isDynamic(d) ? std::numeric_limits<int64_t>::max() : d);
  return ends;
}

LogicalResult Differentiator::backpropConcat(ConcatOp op, Value dy) {
  int64_t rank = tensorType(op.getY()).getRank();
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + rank : op.getAxis();
  int64_t offset = 0;
  for (Value input : op.getInputs()) {
    int64_t size = tensorType(input).getDimSize(axis);
    if (ShapedType::isDynamic(size))
      return error(op) << "an operand of dynamic size along the axis",
             failure();
    if (needsGrad(input)) {
      SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
      SmallVector<int64_t> ends = fullEnds(tensorType(dy).getShape());
      starts[axis] = offset;
      ends[axis] = offset + size;
      accumulate(input, b.create<SliceOp>(op.getLoc(), dy,
                                          b.getDenseI64ArrayAttr(starts),
                                          b.getDenseI64ArrayAttr(ends),
                                          b.getDenseI64ArrayAttr(steps)));
    }
    offset += size;
  }
  return success();
}

LogicalResult Differentiator::backpropPad(PadOp op, Value dy) {
  if (op.getMode() != "constant")
    return error(op) << "pad mode \"" << op.getMode()
                     << "\" (only constant padding is differentiated)",
           failure();
  ArrayRef<int64_t> shape = tensorType(op.getX()).getShape();
  ArrayRef<int64_t> pads = op.getPads();
  SmallVector<int64_t> starts, ends = fullEnds(shape), steps;
  for (auto [i, d] : llvm::enumerate(shape)) {
    starts.push_back(pads[2 * i]);
    steps.push_back(1);
    if (!ShapedType::isDynamic(d))
      ends[i] = pads[2 * i] + d;
    else if (pads[2 * i] != 0 || pads[2 * i + 1] != 0)
      return error(op) << "padding of dynamic dimension " << i, failure();
  }
  accumulate(op.getX(),
             b.create<SliceOp>(op.getLoc(), dy, b.getDenseI64ArrayAttr(starts),
                               b.getDenseI64ArrayAttr(ends),
                               b.getDenseI64ArrayAttr(steps)));
  return success();
}

LogicalResult Differentiator::backpropWhere(WhereOp op, Value dy) {
  // Each branch gets dy where it was chosen and 0 elsewhere, summed over the
  // dimensions it was broadcast along.
  Location loc = op.getLoc();
  Value zero = scalarConstant(0.0f, tensorType(dy).getElementType());
  for (auto [branch, chosen] :
       {std::pair(op.getX(), true), std::pair(op.getY(), false)}) {
    if (!needsGrad(branch))
      continue;
    Value grad = chosen ? b.create<WhereOp>(loc, op.getCondition(), dy, zero)
                        : b.create<WhereOp>(loc, op.getCondition(), zero, dy);
    FailureOr<Value> reduced = unbroadcast(op, grad, branch);
    if (failed(reduced))
      return failure();
    accumulate(branch, *reduced);
  }
  return success();
}

LogicalResult Differentiator::backpropTile(TileOp op, Value dy) {
  // dy viewed as [r0, d0, r1, d1, ...], summed over the repeats; one
  // dynamic dimension is the reshape's inferred (-1) one.
  ArrayRef<int64_t> shape = tensorType(op.getX()).getShape();
  if (llvm::count_if(shape, ShapedType::isDynamic) > 1)
    return error(op) << "a tile of more than one dynamic dimension", failure();
  SmallVector<int64_t> split, repeatAxes;
  for (auto [i, d] : llvm::enumerate(shape)) {
    repeatAxes.push_back(split.size());
    split.append({op.getRepeats()[i], ShapedType::isDynamic(d) ? -1 : d});
  }
  Value view = b.create<ReshapeOp>(op.getLoc(), dy, split);
  accumulate(op.getX(),
             b.create<ReduceSumOp>(op.getLoc(), view,
                                   b.getDenseI64ArrayAttr(repeatAxes),
                                   b.getBoolAttr(false)));
  return success();
}

LogicalResult Differentiator::backpropSlice(SliceOp op, Value dy) {
  // The slice's gradient is dy zero-padded back to the input's shape.
  ArrayRef<int64_t> shape = tensorType(op.getX()).getShape();
  SmallVector<int64_t> pads;
  for (auto [i, d] : llvm::enumerate(shape)) {
    int64_t start = op.getStarts()[i], end = op.getEnds()[i];
    if (op.getSteps()[i] != 1)
      return error(op) << "a strided slice (step " << op.getSteps()[i]
                       << " in dimension " << i << ")",
             failure();
    if (ShapedType::isDynamic(d)) {
      if (start != 0 || end < std::numeric_limits<int32_t>::max())
        return error(op) << "a slice of dynamic dimension " << i, failure();
      pads.append({0, 0});
      continue;
    }
    end = std::min(end, d);
    pads.append({start, d - std::max(end, start)});
  }
  accumulate(op.getX(),
             b.create<PadOp>(op.getLoc(), dy, b.getDenseI64ArrayAttr(pads),
                             b.getStringAttr("constant"),
                             b.getF32FloatAttr(0.0f)));
  return success();
}

LogicalResult Differentiator::backprop(Operation *op) {
  Location loc = op->getLoc();
  // Ops whose results carry no gradient contribute nothing.
  bool any = llvm::any_of(op->getResults(),
                          [&](Value r) { return gradOf(r) != nullptr; });
  if (!any)
    return success();
  Value dy = gradOf(op->getResult(0));
  auto passThrough = [&](Value x) -> LogicalResult {
    if (needsGrad(x))
      accumulate(x, dy);
    return success();
  };
  auto unary = [&](Value x, Value grad) -> LogicalResult {
    accumulate(x, grad);
    return success();
  };
  // Constants in a gradient have the gradient's element type (bf16/f16
  // after --gopt-mixed-precision), as binary ops take one element type.
  Type element = tensorType(dy).getElementType();
  if (op->hasTrait<UnaryMath>()) {
    // dx = <op>_grad(x, dy) with the op's attributes (GoptMathOps.td).
    OperationState state(loc, op->getName().getStringRef().str() + "_grad");
    state.addOperands({op->getOperand(0), dy});
    state.addTypes(op->getOperand(0).getType());
    for (NamedAttribute attr : op->getAttrs())
      if (attr.getName() != GoptDialect::getDeviceAttrName())
        state.addAttribute(attr.getName(), attr.getValue());
    return unary(op->getOperand(0), b.create(state)->getResult(0));
  }
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case<AddOp, SubOp, MulOp, DivOp, SquaredDifferenceOp, MaxOp, MinOp,
            PReluOp>(
          [&](Operation *binary) { return backpropBinary(binary, dy); })
      .Case<IdentityOp, CheckNumericsOp>(
          [&](Operation *o) { return passThrough(o->getOperand(0)); })
      .Case([&](DropoutOp o) -> LogicalResult {
        if (!o.getTraining() || o.getRatio().isZero())
          return passThrough(o.getX());
        return unary(o.getX(), b.create<DropoutGradOp>(
                                   loc, dy, o.getRatioAttr(), o.getSeedAttr()));
      })
      .Case([&](StopGradientOp) { return success(); })
      .Case([&](WhereOp o) { return backpropWhere(o, dy); })
      .Case([&](ExpandOp o) -> LogicalResult {
        FailureOr<Value> reduced = unbroadcast(o, dy, o.getX());
        if (failed(reduced))
          return failure();
        return unary(o.getX(), *reduced);
      })
      .Case([&](TileOp o) { return backpropTile(o, dy); })
      .Case([&](CastOp o) -> LogicalResult {
        // Mixed precision casts parameters to bf16/f16 at their use: the
        // gradient goes back to the parameter's (f32 master) type.
        auto xType = tensorType(o.getX());
        if (!isa<FloatType>(xType.getElementType()))
          return error(o) << "casts from " << xType
                          << ", which has no gradient",
                 failure();
        return unary(o.getX(), b.create<CastOp>(loc,
                                                RankedTensorType::get(
                                                    tensorType(dy).getShape(),
                                                    xType.getElementType()),
                                                dy));
      })
      .Case([&](ReluOp o) {
        return unary(o.getX(), b.create<ReluGradOp>(loc, dy, o.getY()));
      })
      .Case([&](SigmoidOp o) {
        // dy * y * (1 - y)
        Value one = scalarConstant(1.0f, element);
        Value oneMinus = b.create<SubOp>(loc, one, o.getY());
        return unary(
            o.getX(),
            b.create<MulOp>(loc, dy, b.create<MulOp>(loc, o.getY(), oneMinus)));
      })
      .Case([&](TanhOp o) {
        Value one = scalarConstant(1.0f, element);
        Value y2 = b.create<MulOp>(loc, o.getY(), o.getY());
        return unary(o.getX(),
                     b.create<MulOp>(loc, dy, b.create<SubOp>(loc, one, y2)));
      })
      .Case([&](ExpOp o) {
        return unary(o.getX(), b.create<MulOp>(loc, dy, o.getY()));
      })
      .Case([&](LogOp o) {
        return unary(o.getX(), b.create<DivOp>(loc, dy, o.getX()));
      })
      .Case([&](NegOp o) { return unary(o.getX(), b.create<NegOp>(loc, dy)); })
      .Case([&](ErfOp o) {
        // dy * 2/sqrt(pi) * exp(-x^2)
        Value x2 = b.create<MulOp>(loc, o.getX(), o.getX());
        Value e = b.create<ExpOp>(loc, b.create<NegOp>(loc, x2));
        return unary(
            o.getX(),
            b.create<MulOp>(
                loc, dy,
                b.create<MulOp>(loc, e,
                                scalarConstant(1.1283791670955126f, element))));
      })
      .Case([&](GeluOp o) { return unary(o.getX(), geluGrad(loc, o, dy)); })
      .Case([&](SqrtOp o) {
        // dy * 0.5 / y
        Value half = scalarConstant(0.5f, element);
        return unary(
            o.getX(),
            b.create<DivOp>(loc, b.create<MulOp>(loc, dy, half), o.getY()));
      })
      .Case([&](Relu6Op o) {
        return unary(o.getX(), clipGrad(loc, dy, o.getY(), 0.0f, 6.0f));
      })
      .Case([&](ClipOp o) {
        return unary(o.getX(),
                     clipGrad(loc, dy, o.getY(), o.getMin().convertToFloat(),
                              o.getMax().convertToFloat()));
      })
      .Case([&](LeakyReluOp o) -> LogicalResult {
        // alpha * dy + (1 - alpha) * (y > 0 ? dy : 0)
        float alpha = o.getAlpha().convertToFloat();
        if (alpha < 0)
          return error(o) << "a negative alpha", failure();
        Value pos = b.create<ReluGradOp>(loc, dy, o.getY());
        return unary(
            o.getX(),
            b.create<AddOp>(
                loc, b.create<MulOp>(loc, dy, scalarConstant(alpha, element)),
                b.create<MulOp>(loc, pos,
                                scalarConstant(1.0f - alpha, element))));
      })
      .Case([&](AbsOp o) {
        // dy where x > 0, -dy where x < 0.
        Value neg = b.create<NegOp>(loc, o.getX());
        return unary(o.getX(), b.create<SubOp>(
                                   loc, b.create<ReluGradOp>(loc, dy, o.getX()),
                                   b.create<ReluGradOp>(loc, dy, neg)));
      })
      .Case([&](RsqrtOp o) {
        // d(x^-1/2) = -1/2 x^-3/2 = -1/2 y^3
        Value y3 = b.create<MulOp>(
            loc, b.create<MulOp>(loc, o.getY(), o.getY()), o.getY());
        return unary(o.getX(),
                     b.create<MulOp>(loc, b.create<MulOp>(loc, dy, y3),
                                     scalarConstant(-0.5f, element)));
      })
      .Case([&](SoftmaxOp o) -> LogicalResult {
        // y * (dy - sum(dy * y, axis))
        auto axis = b.getDenseI64ArrayAttr({o.getAxis()});
        Value dot = b.create<ReduceSumOp>(
            loc, b.create<MulOp>(loc, dy, o.getY()), axis, b.getBoolAttr(true));
        return unary(o.getX(), b.create<MulOp>(loc, o.getY(),
                                               b.create<SubOp>(loc, dy, dot)));
      })
      .Case([&](LogSoftmaxOp o) -> LogicalResult {
        // dy - exp(y) * sum(dy, axis)
        auto axis = b.getDenseI64ArrayAttr({o.getAxis()});
        Value sum = b.create<ReduceSumOp>(loc, dy, axis, b.getBoolAttr(true));
        return unary(
            o.getX(),
            b.create<SubOp>(
                loc, dy,
                b.create<MulOp>(loc, b.create<ExpOp>(loc, o.getY()), sum)));
      })
      .Case([&](ConcatOp o) { return backpropConcat(o, dy); })
      .Case([&](PadOp o) { return backpropPad(o, dy); })
      .Case([&](SliceOp o) { return backpropSlice(o, dy); })
      .Case([&](GatherOp o) -> LogicalResult {
        // A scatter-add of dy into zeros of x's shape: rows gathered twice
        // (an embedding used twice in a batch) get both gradients.
        if (needsGrad(o.getIndices()))
          return error(o) << "indices that depend on a parameter", failure();
        return unary(o.getX(),
                     b.create<GatherGradOp>(loc, o.getX(), o.getIndices(), dy,
                                            o.getAxisAttr()));
      })
      .Case<ReshapeOp, FlattenOp>([&](Operation *o) -> LogicalResult {
        FailureOr<Value> dx = reshapeTo(o, dy, o->getOperand(0));
        if (failed(dx))
          return failure();
        return unary(o->getOperand(0), *dx);
      })
      .Case([&](TransposeOp o) {
        ArrayRef<int64_t> perm = o.getPerm();
        SmallVector<int64_t> inverse(perm.size());
        for (auto [i, p] : llvm::enumerate(perm))
          inverse[p] = i;
        return unary(o.getX(), b.create<TransposeOp>(
                                   loc, dy, b.getDenseI64ArrayAttr(inverse)));
      })
      .Case([&](BiasAddOp o) -> LogicalResult {
        if (needsGrad(o.getX()))
          accumulate(o.getX(), dy);
        if (needsGrad(o.getBias())) {
          int64_t rank = tensorType(o.getX()).getRank();
          int64_t channel = getChannelAxis(o.getDataFormat(), rank);
          SmallVector<int64_t> axes;
          for (int64_t i = 0; i < rank; ++i)
            if (i != channel)
              axes.push_back(i);
          accumulate(o.getBias(), b.create<ReduceSumOp>(
                                      loc, dy, b.getDenseI64ArrayAttr(axes),
                                      b.getBoolAttr(false)));
        }
        return success();
      })
      .Case([&](Conv2DOp o) { return backpropConv2D(o, dy); })
      .Case([&](MatMulOp o) { return backpropMatMul(o, dy); })
      .Case([&](MaxPoolOp o) { return backpropMaxPool(o, dy); })
      .Case([&](AvgPoolOp o) { return backpropAvgPool(o, dy); })
      .Case([&](GlobalAvgPoolOp o) -> LogicalResult {
        RankedTensorType xType = tensorType(o.getX());
        FailureOr<Layout> layout = parseDataFormat(
            o.getDataFormat(), ShapeError(loc, "gopt.global_avg_pool"));
        if (failed(layout))
          return failure();
        int64_t h = xType.getDimSize(layout->h),
                w = xType.getDimSize(layout->w);
        if (ShapedType::isDynamic(h) || ShapedType::isDynamic(w))
          return error(o) << "dynamic spatial dimensions", failure();
        SmallVector<int64_t> spread(4, 1);
        spread[layout->h] = h;
        spread[layout->w] = w;
        return unary(o.getX(),
                     b.create<MulOp>(loc, dy,
                                     constantLike(spread, 1.0f / (h * w),
                                                  xType.getElementType())));
      })
      .Case([&](ReduceSumOp o) {
        return backpropReduce(o, o.getAxes(), o.getKeepDims(), false, dy);
      })
      .Case([&](ReduceMeanOp o) {
        return backpropReduce(o, o.getAxes(), o.getKeepDims(), true, dy);
      })
      .Case([&](BatchNormOp o) -> LogicalResult {
        if (!o.getTraining())
          return error(o) << "inference-form batch_norm (train with "
                             "training = true, which normalizes with batch "
                             "statistics)",
                 failure();
        for (Value stat : o.getStatistics())
          if (gradOf(stat))
            return error(o) << "the loss depends on its batch statistics "
                               "(only y is differentiated)",
                   failure();
        auto grad = b.create<BatchNormGradOp>(
            loc, dy, o.getX(), o.getScale(), o.getStatistics()[0],
            o.getStatistics()[1], o.getEpsilonAttr(), o.getDataFormatAttr());
        if (needsGrad(o.getX()))
          accumulate(o.getX(), grad.getDx());
        if (needsGrad(o.getScale()))
          accumulate(o.getScale(), grad.getDscale());
        if (needsGrad(o.getOffset()))
          accumulate(o.getOffset(), grad.getDoffset());
        if (needsGrad(o.getMean()) || needsGrad(o.getVariance()))
          return error(o) << "trainable running statistics (mean and "
                             "variance are not parameters)",
                 failure();
        return success();
      })
      .Case([&](SoftmaxCrossEntropyOp o) -> LogicalResult {
        if (needsGrad(o.getLabels()))
          return error(o) << "gradient with respect to labels", failure();
        Value d = b.create<SoftmaxCrossEntropyGradOp>(loc, o.getLogits(),
                                                      o.getLabels());
        return unary(o.getLogits(), scaleBySeed(d, dy));
      })
      .Case([&](MseLossOp o) -> LogicalResult {
        Value d = scaleBySeed(
            b.create<MseLossGradOp>(loc, o.getPrediction(), o.getTarget()), dy);
        if (needsGrad(o.getPrediction()))
          accumulate(o.getPrediction(), d);
        if (needsGrad(o.getTarget()))
          accumulate(o.getTarget(), b.create<NegOp>(loc, d));
        return success();
      })
      .Default([&](Operation *o) -> LogicalResult {
        return error(o) << "the loss depends on it through a parameter; "
                           "differentiable ops are listed in "
                           "--gopt-autodiff's description",
               failure();
      });
}

FailureOr<SmallVector<Value>>
Differentiator::run(Value loss, ArrayRef<BlockArgument> params,
                    Value lossScale) {
  Block &body = func.getBody().front();
  // Values that depend on a parameter...
  llvm::DenseSet<Value> fromParams(params.begin(), params.end());
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return fromParams.contains(v); }))
      for (Value r : op.getResults())
        fromParams.insert(r);
  // ... and that the loss depends on.
  llvm::SetVector<Value> worklist;
  worklist.insert(loss);
  for (size_t i = 0; i < worklist.size(); ++i) {
    Value v = worklist[i];
    if (!fromParams.contains(v))
      continue;
    needed.insert(v);
    if (Operation *def = v.getDefiningOp())
      for (Value operand : def->getOperands())
        worklist.insert(operand);
  }

  // Every training dropout draws its own mask: give those without a seed
  // distinct ones (the gradient op recomputes the mask from it).
  int64_t nextSeed = 1;
  llvm::DenseSet<int64_t> usedSeeds;
  body.walk([&](DropoutOp o) { usedSeeds.insert(o.getSeed()); });
  body.walk([&](DropoutOp o) {
    if (!o.getTraining() || o.getSeed() != 0)
      return;
    while (usedSeeds.contains(nextSeed))
      ++nextSeed;
    o.setSeed(nextSeed);
    usedSeeds.insert(nextSeed);
  });

  // d(loss)/d(loss) = 1, or the loss scale: then every gradient is scaled
  // (and the ops consuming it multiply by it).
  if (lossScale) {
    grads[loss] = lossScale;
  } else {
    seed = scalarConstant(1.0f, tensorType(loss).getElementType());
    grads[loss] = seed;
  }
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getResults(),
                     [&](Value r) { return needed.contains(r); }))
      ops.push_back(&op);
  Operation *terminator = body.getTerminator();
  int unnamed = 0;
  for (Operation *op : llvm::reverse(ops)) {
    Operation *last = terminator->getPrevNode();
    if (failed(backprop(op)))
      return failure();
    // Name the gradient ops after their forward op ("conv1/grad"), so
    // profiles tell the forward and the backward pass apart.
    Location forwardLoc = op->getLoc();
    std::string name = getImportedName(op);
    if (name.empty()) {
      // Unnamed ops get a name too, so both passes show up apart.
      name =
          op->getName().stripDialect().str() + "_" + std::to_string(unnamed++);
      op->setLoc(NameLoc::get(b.getStringAttr(name), forwardLoc));
    }
    Location gradLoc =
        NameLoc::get(b.getStringAttr(name + "/grad"), forwardLoc);
    for (Operation *created = last->getNextNode(); created != terminator;
         created = created->getNextNode())
      if (created->getLoc() == forwardLoc)
        created->setLoc(gradLoc);
  }

  SmallVector<Value> result;
  for (BlockArgument param : params) {
    Value grad = grads.lookup(param);
    if (!grad) {
      auto type = tensorType(param);
      grad = b.create<ConstantOp>(
          func.getLoc(), DenseElementsAttr::get(
                             type, b.getFloatAttr(type.getElementType(), 0.0)));
    } else if (grad.getType() != param.getType()) {
      // Gradients are computed at the shapes ops infer; a parameter's
      // type is static, so cast the (compatible) shape back.
      FailureOr<SmallVector<int64_t>> target =
          getReshapeTarget(tensorType(param).getShape());
      grad = b.create<ReshapeOp>(func.getLoc(), param.getType(), grad,
                                 b.getDenseI64ArrayAttr(*target));
    }
    result.push_back(grad);
  }
  return result;
}

struct AutodiffPass : public gopt::impl::AutodiffBase<AutodiffPass> {
  using AutodiffBase::AutodiffBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getBody().hasOneBlock())
      return;
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    FailureOr<unsigned> found = findLossResult(func, loss, "gopt-autodiff");
    if (failed(found))
      return signalPassFailure();
    unsigned lossIndex = *found;
    Value lossValue = ret.getOperand(lossIndex);
    auto lossType = tensorType(lossValue);
    if (lossType.getRank() != 0 || !lossType.getElementType().isF32()) {
      func.emitError("gopt-autodiff: loss '")
          << loss << "' must be an f32 scalar, got " << lossType;
      return signalPassFailure();
    }
    // A loss-scaled step (--gopt-loss-scaling): seed with the scale.
    Value lossScale;
    auto scaleName =
        func.getResultAttrOfType<StringAttr>(lossIndex, attrs::kLossScale);
    if (scaleName) {
      for (BlockArgument arg : func.getArguments())
        if (getArgName(func, arg.getArgNumber()) == scaleName.getValue())
          lossScale = arg;
      if (!lossScale || tensorType(lossScale) != lossType) {
        func.emitError("gopt-autodiff: the loss is scaled by '")
            << scaleName.getValue() << "', which is not an f32 scalar argument";
        return signalPassFailure();
      }
    }
    SmallVector<BlockArgument> params;
    for (BlockArgument arg : func.getArguments()) {
      auto state =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attrs::kState);
      if (state && state.getValue() == attrs::kStateParam)
        params.push_back(arg);
    }
    if (params.empty()) {
      func.emitError("gopt-autodiff: the function has no parameters "
                     "(arguments with gopt.state = \"param\"); run "
                     "--gopt-lift-params first");
      return signalPassFailure();
    }

    Differentiator differentiator(func, ret);
    FailureOr<SmallVector<Value>> gradients =
        differentiator.run(lossValue, params, lossScale);
    if (failed(gradients))
      return signalPassFailure();

    SmallVector<Value> values(ret.getOperands());
    SmallVector<DictionaryAttr> resultAttrs;
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      resultAttrs.push_back(func.getResultAttrDict(i)
                                ? func.getResultAttrDict(i)
                                : DictionaryAttr::get(&getContext()));
    for (auto [param, grad] : llvm::zip(params, *gradients)) {
      StringRef name = getArgName(func, param.getArgNumber());
      values.push_back(grad);
      SmallVector<std::pair<StringRef, StringRef>> marks = {
          {attrs::kGradientOf, name}};
      if (scaleName)
        marks.push_back({attrs::kLossScale, scaleName.getValue()});
      resultAttrs.push_back(makeResultAttrs(
          &getContext(), getUniqueBindingName(func, "grad/" + name.str()),
          marks));
    }
    setFunctionResults(func, values, resultAttrs);
  }
};

} // namespace
