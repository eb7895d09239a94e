//===- FoldConstants.cpp - Evaluate ops whose operands are constants ------===//
//
// Ops whose operands are all gopt.constants are evaluated on the host with
// the semantics of docs/op-semantics.md and replaced by a constant. Shape
// computations (gopt.shape of a static tensor) fold without constant
// operands. Importers leave such subgraphs behind (TF's Shape/Reshape
// chains, batch-norm parameter arithmetic of frozen graphs).
//
//===----------------------------------------------------------------------===//

#include "FoldLogic.h"
#include "HostTensor.h"
#include "Report.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Transforms/FoldValue.h"
#include "gopt/Transforms/Passes.h"
#include "gopt/runtime/UnaryMath.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include <cmath>

namespace gopt {
#define GEN_PASS_DEF_FOLDCONSTANTS
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

using Result = std::optional<HostTensor>;

/// Odometer over a shape; calls fn(linear index, multi-index).
template <typename Fn> void forEachIndex(ArrayRef<int64_t> shape, Fn fn) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  SmallVector<int64_t, 4> index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    fn(i, ArrayRef<int64_t>(index));
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// Strides that read `operand` broadcast to `resultShape` (0 on broadcast
/// dimensions).
SmallVector<int64_t, 4> broadcastStrides(ArrayRef<int64_t> operand,
                                         ArrayRef<int64_t> resultShape) {
  SmallVector<int64_t, 4> strides(resultShape.size(), 0);
  SmallVector<int64_t, 4> own = stridesOf(operand);
  int64_t offset = resultShape.size() - operand.size();
  for (size_t i = 0; i < operand.size(); ++i)
    strides[offset + i] = operand[i] == 1 ? 0 : own[i];
  return strides;
}

template <typename FloatFn, typename IntFn>
Result evalBinary(const HostTensor &a, const HostTensor &b,
                  ArrayRef<int64_t> shape, FloatFn floatFn, IntFn intFn) {
  HostTensor r = HostTensor::zeros(shape, a.elementType);
  SmallVector<int64_t, 4> sa = broadcastStrides(a.shape, shape);
  SmallVector<int64_t, 4> sb = broadcastStrides(b.shape, shape);
  bool ok = true;
  forEachIndex(shape, [&](int64_t i, ArrayRef<int64_t> index) {
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      ia += index[d] * sa[d];
      ib += index[d] * sb[d];
    }
    if (r.isFloat()) {
      r.floats[i] = floatFn(a.floats[ia], b.floats[ib]);
    } else {
      std::optional<int64_t> v = intFn(a.ints[ia], b.ints[ib]);
      if (!v)
        ok = false;
      else
        r.ints[i] = *v;
    }
  });
  if (!ok)
    return std::nullopt;
  return r;
}

Result evalUnary(const HostTensor &x, llvm::function_ref<double(double)> fn) {
  if (!x.isFloat())
    return std::nullopt;
  HostTensor r = x;
  for (double &v : r.floats)
    v = fn(v);
  return r;
}

Result evalCast(const HostTensor &x, Type to, bool saturate) {
  HostTensor r = HostTensor::zeros(x.shape, to);
  // float8 and 4-bit results round (and saturate) as the runtime's cast.
  bool lowPrecision = lowPrecisionDTypeOf(to) != 0;
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    if (lowPrecision) {
      double v = roundToLowPrecision(to, x.getDouble(i), saturate);
      if (r.isFloat())
        r.floats[i] = v;
      else
        r.ints[i] = static_cast<int64_t>(v);
    } else if (r.isFloat()) {
      r.floats[i] = x.getDouble(i);
    } else if (to.isInteger(1)) {
      r.ints[i] = x.getDouble(i) != 0.0;
    } else if (x.isFloat()) {
      double v = std::trunc(x.floats[i]);
      // Out-of-range conversions saturate at run time; leave them to it.
      unsigned width = to.getIntOrFloatBitWidth();
      bool isUnsigned = to.isUnsignedInteger();
      double lo = isUnsigned ? 0.0 : -std::ldexp(1.0, width - 1);
      double hi = std::ldexp(1.0, isUnsigned ? width : width - 1);
      if (!std::isfinite(v) || v < lo || v >= hi || std::fabs(v) > 9.2e18)
        return std::nullopt;
      r.ints[i] = static_cast<int64_t>(v);
    } else {
      r.ints[i] = x.ints[i];
    }
  }
  return r;
}

/// Copies the elements with a new shape (reshape, flatten).
Result evalReshape(const HostTensor &x, ArrayRef<int64_t> shape) {
  HostTensor r = x;
  r.shape.assign(shape.begin(), shape.end());
  return r;
}

Result evalConcat(ArrayRef<HostTensor> inputs, int64_t axis,
                  ArrayRef<int64_t> shape) {
  HostTensor r = HostTensor::zeros(shape, inputs.front().elementType);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  int64_t pos = 0;
  int64_t rowOut = r.numElements() / outer;
  for (const HostTensor &in : inputs) {
    int64_t row = in.numElements() / outer;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < row; ++k) {
        if (r.isFloat())
          r.floats[o * rowOut + pos + k] = in.floats[o * row + k];
        else
          r.ints[o * rowOut + pos + k] = in.ints[o * row + k];
      }
    pos += row;
  }
  return r;
}

/// Result element at `index` reads operand element map(index).
Result evalGather(
    const HostTensor &x, ArrayRef<int64_t> shape,
    llvm::function_ref<std::optional<int64_t>(ArrayRef<int64_t>)> sourceOffset,
    double fill) {
  HostTensor r = HostTensor::zeros(shape, x.elementType);
  forEachIndex(shape, [&](int64_t i, ArrayRef<int64_t> index) {
    std::optional<int64_t> src = sourceOffset(index);
    if (r.isFloat())
      r.floats[i] = src ? x.floats[*src] : fill;
    else
      r.ints[i] = src ? x.ints[*src] : static_cast<int64_t>(fill);
  });
  return r;
}

Result evalSlice(SliceOp op, const HostTensor &x, ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  ArrayRef<int64_t> starts = op.getStarts(), steps = op.getSteps();
  return evalGather(
      x, shape,
      [&](ArrayRef<int64_t> index) -> std::optional<int64_t> {
        int64_t offset = 0;
        for (size_t d = 0; d < index.size(); ++d)
          offset +=
              (std::min(starts[d], steps[d] < 0 ? x.shape[d] - 1 : x.shape[d]) +
               index[d] * steps[d]) *
              strides[d];
        return offset;
      },
      0.0);
}

Result evalPad(PadOp op, const HostTensor &x, ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  ArrayRef<int64_t> pads = op.getPads();
  StringRef mode = op.getMode();
  return evalGather(
      x, shape,
      [&](ArrayRef<int64_t> index) -> std::optional<int64_t> {
        int64_t offset = 0;
        for (size_t d = 0; d < index.size(); ++d) {
          int64_t n = x.shape[d];
          int64_t i = index[d] - pads[2 * d];
          if (i < 0 || i >= n) {
            if (mode == "edge")
              i = i < 0 ? 0 : n - 1;
            else if (mode == "reflect")
              i = i < 0 ? -i : 2 * (n - 1) - i;
            else if (mode == "wrap")
              i = (i % n + n) % n;
            else
              return std::nullopt;
          }
          offset += i * strides[d];
        }
        return offset;
      },
      op.getValue().convertToDouble());
}

/// gopt.gather on constants; nullopt for an index out of range, which the
/// runtime reports.
Result evalGatherOp(GatherOp op, const HostTensor &x, const HostTensor &indices,
                    ArrayRef<int64_t> shape) {
  int64_t rank = x.shape.size();
  // I64Attr getters return uint64_t: sign the axis before testing it.
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0)
    axis += rank;
  int64_t dim = x.shape[axis];
  SmallVector<int64_t, 4> strides = stridesOf(x.shape);
  SmallVector<int64_t, 4> indexStrides = stridesOf(indices.shape);
  int64_t indexRank = indices.shape.size();
  bool inRange = llvm::all_of(
      indices.ints, [dim](int64_t i) { return i >= -dim && i < dim; });
  if (!inRange)
    return std::nullopt;
  return evalGather(
      x, shape,
      [&](ArrayRef<int64_t> index) -> std::optional<int64_t> {
        // Result dims: x's before axis, indices', x's after axis.
        int64_t at = 0;
        for (int64_t d = 0; d < indexRank; ++d)
          at += index[axis + d] * indexStrides[d];
        int64_t row =
            indices.ints[at] < 0 ? indices.ints[at] + dim : indices.ints[at];
        int64_t offset = row * strides[axis];
        for (int64_t d = 0; d < axis; ++d)
          offset += index[d] * strides[d];
        for (int64_t d = axis + 1; d < rank; ++d)
          offset += index[d - 1 + indexRank] * strides[d];
        return offset;
      },
      0.0);
}

enum class ReduceKind { Mean, Sum, Max, Min, Prod };

Result evalReduce(const HostTensor &x, ArrayRef<int64_t> axesAttr,
                  ReduceKind kind, ArrayRef<int64_t> resultShape) {
  int64_t rank = x.shape.size();
  SmallVector<bool, 4> reduced(rank, axesAttr.empty());
  for (int64_t a : axesAttr)
    reduced[a < 0 ? a + rank : a] = true;
  // Accumulate into the keep-dims shape; the result shape has the same
  // elements in the same order.
  SmallVector<int64_t, 4> kept;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    kept.push_back(reduced[d] ? 1 : x.shape[d]);
    if (reduced[d])
      count *= x.shape[d];
  }
  SmallVector<int64_t, 4> keptStrides = stridesOf(kept);
  HostTensor r = HostTensor::zeros(resultShape, x.elementType);
  double init = kind == ReduceKind::Max    ? -INFINITY
                : kind == ReduceKind::Min  ? INFINITY
                : kind == ReduceKind::Prod ? 1.0
                                           : 0.0;
  int64_t iinit = kind == ReduceKind::Max    ? INT64_MIN
                  : kind == ReduceKind::Min  ? INT64_MAX
                  : kind == ReduceKind::Prod ? 1
                                             : 0;
  std::vector<double> acc(r.numElements(), init);
  std::vector<int64_t> iacc(r.numElements(), iinit);
  auto combine = [kind](auto a, auto v) {
    switch (kind) {
    case ReduceKind::Max:
      return std::max(a, v);
    case ReduceKind::Min:
      return std::min(a, v);
    case ReduceKind::Prod:
      return a * v;
    default:
      return a + v;
    }
  };
  forEachIndex(x.shape, [&](int64_t i, ArrayRef<int64_t> index) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d])
        o += index[d] * keptStrides[d];
    if (x.isFloat())
      acc[o] = combine(acc[o], x.floats[i]);
    else
      iacc[o] = combine(iacc[o], x.ints[i]);
  });
  for (int64_t o = 0, n = r.numElements(); o < n; ++o) {
    if (r.isFloat())
      r.floats[o] = kind == ReduceKind::Mean ? acc[o] / count : acc[o];
    else
      r.ints[o] = kind == ReduceKind::Mean ? iacc[o] / count : iacc[o];
  }
  return r;
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

/// Evaluates `op` on constant operands; nullopt when the op is not foldable.
Result evaluate(Operation *op, ArrayRef<HostTensor> in,
                RankedTensorType resultType) {
  ArrayRef<int64_t> shape = resultType.getShape();
  auto intDiv = [](int64_t a, int64_t b) -> std::optional<int64_t> {
    if (b == 0)
      return std::nullopt;
    return a / b; // C++ truncates toward zero, as the op does
  };
  auto noInt = [](int64_t, int64_t) -> std::optional<int64_t> {
    return std::nullopt;
  };
  if (Result logic = evaluateLogicOp(op, in, resultType))
    return logic;
  if (op->hasTrait<UnaryMath>()) {
    // The runtime kernel's own scalar math (GoptMathOps.td).
    auto readFloat = [op](const char *name, float absent) {
      auto attr = op->getAttrOfType<FloatAttr>(name);
      return attr ? static_cast<float>(attr.getValueAsDouble()) : absent;
    };
    Result result;
    unary_math::visit(
        op->getName().stripDialect(), readFloat, [&](const auto &fn, bool) {
          result = evalUnary(in[0], [&fn](double v) { return fn(v); });
        });
    return result;
  }
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([&](AddOp) {
        return evalBinary(
            in[0], in[1], shape, [](double a, double b) { return a + b; },
            [](int64_t a, int64_t b) -> std::optional<int64_t> {
              return a + b;
            });
      })
      .Case([&](SubOp) {
        return evalBinary(
            in[0], in[1], shape, [](double a, double b) { return a - b; },
            [](int64_t a, int64_t b) -> std::optional<int64_t> {
              return a - b;
            });
      })
      .Case([&](MulOp) {
        return evalBinary(
            in[0], in[1], shape, [](double a, double b) { return a * b; },
            [](int64_t a, int64_t b) -> std::optional<int64_t> {
              return a * b;
            });
      })
      .Case([&](DivOp) {
        return evalBinary(
            in[0], in[1], shape, [](double a, double b) { return a / b; },
            intDiv);
      })
      .Case([&](MaxOp) {
        return evalBinary(
            in[0], in[1], shape,
            [](double a, double b) { return std::fmax(a, b); },
            [](int64_t a, int64_t b) -> std::optional<int64_t> {
              return std::max(a, b);
            });
      })
      .Case([&](MinOp) {
        return evalBinary(
            in[0], in[1], shape,
            [](double a, double b) { return std::fmin(a, b); },
            [](int64_t a, int64_t b) -> std::optional<int64_t> {
              return std::min(a, b);
            });
      })
      .Case([&](PowOp) {
        return evalBinary(
            in[0], in[1], shape,
            [](double a, double b) { return std::pow(a, b); }, noInt);
      })
      .Case([&](PReluOp) {
        return evalBinary(
            in[0], in[1], shape,
            [](double a, double b) { return a >= 0 ? a : b * a; },
            [](int64_t a, int64_t b) -> std::optional<int64_t> {
              return a >= 0 ? a : b * a;
            });
      })
      .Case([&](SquaredDifferenceOp) {
        return evalBinary(
            in[0], in[1], shape,
            [](double a, double b) { return (a - b) * (a - b); },
            [](int64_t a, int64_t b) -> std::optional<int64_t> {
              return (a - b) * (a - b);
            });
      })
      .Case([&](ReluOp) {
        return evalUnary(in[0], [](double v) { return v > 0 ? v : 0.0; });
      })
      .Case([&](Relu6Op) {
        return evalUnary(
            in[0], [](double v) { return std::min(std::max(v, 0.0), 6.0); });
      })
      .Case([&](SigmoidOp) { return evalUnary(in[0], sigmoid); })
      .Case([&](TanhOp) {
        return evalUnary(in[0], [](double v) { return std::tanh(v); });
      })
      .Case([&](ExpOp) {
        return evalUnary(in[0], [](double v) { return std::exp(v); });
      })
      .Case([&](LogOp) {
        return evalUnary(in[0], [](double v) { return std::log(v); });
      })
      .Case([&](SqrtOp) {
        return evalUnary(in[0], [](double v) { return std::sqrt(v); });
      })
      .Case([&](RsqrtOp) {
        return evalUnary(in[0], [](double v) { return 1.0 / std::sqrt(v); });
      })
      .Case(
          [&](NegOp) { return evalUnary(in[0], [](double v) { return -v; }); })
      .Case([&](AbsOp) {
        return evalUnary(in[0], [](double v) { return std::fabs(v); });
      })
      .Case([&](ErfOp) {
        return evalUnary(in[0], [](double v) { return std::erf(v); });
      })
      .Case([&](GeluOp gelu) {
        bool tanhForm = gelu.getApproximate() == "tanh";
        return evalUnary(in[0], [tanhForm](double v) {
          if (tanhForm)
            return 0.5 * v *
                   (1.0 + std::tanh(std::sqrt(2.0 / M_PI) *
                                    (v + 0.044715 * v * v * v)));
          return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
        });
      })
      .Case([&](LeakyReluOp leaky) {
        double alpha = leaky.getAlpha().convertToDouble();
        return evalUnary(in[0],
                         [alpha](double v) { return v >= 0 ? v : alpha * v; });
      })
      .Case([&](ClipOp clip) {
        double lo = clip.getMin().convertToDouble();
        double hi = clip.getMax().convertToDouble();
        return evalUnary(in[0], [lo, hi](double v) {
          return std::min(std::max(v, lo), hi);
        });
      })
      .Case([&](CastOp c) {
        return evalCast(in[0], resultType.getElementType(), c.getSaturate());
      })
      .Case([&](TransposeOp transpose) -> Result {
        return transposeTensor(in[0], transpose.getPerm());
      })
      .Case<ReshapeOp, FlattenOp, IdentityOp>(
          [&](Operation *) { return evalReshape(in[0], shape); })
      .Case([&](ConcatOp concat) {
        int64_t axis = concat.getAxis();
        if (axis < 0)
          axis += shape.size();
        return evalConcat(in, axis, shape);
      })
      .Case([&](SliceOp slice) { return evalSlice(slice, in[0], shape); })
      .Case([&](GatherOp gather) {
        return evalGatherOp(gather, in[0], in[1], shape);
      })
      .Case([&](PadOp pad) { return evalPad(pad, in[0], shape); })
      .Case([&](ReduceMeanOp reduce) {
        return evalReduce(in[0], reduce.getAxes(), ReduceKind::Mean, shape);
      })
      .Case([&](ReduceSumOp reduce) {
        return evalReduce(in[0], reduce.getAxes(), ReduceKind::Sum, shape);
      })
      .Case([&](ReduceMaxOp reduce) {
        return evalReduce(in[0], reduce.getAxes(), ReduceKind::Max, shape);
      })
      .Case([&](ReduceMinOp reduce) {
        return evalReduce(in[0], reduce.getAxes(), ReduceKind::Min, shape);
      })
      .Case([&](ReduceProdOp reduce) {
        return evalReduce(in[0], reduce.getAxes(), ReduceKind::Prod, shape);
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// `op`'s single result from its operands' values (`operandValue`), as a
/// constant attribute; null when `op` does not fold. gopt.shape needs only
/// its operand's static type. Never dequantize: --gopt-quantize-weights put
/// it there so the weights stay int8 in the plan; folding would undo it.
ElementsAttr
foldOp(Operation *op, int64_t maxElements,
       llvm::function_ref<std::optional<HostTensor>(Value)> operandValue) {
  if (!isa<GoptDialect>(op->getDialect()) ||
      isa<ConstantOp, DequantizeOp>(op) || op->getNumResults() != 1)
    return {};
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType || !resultType.hasStaticShape() ||
      resultType.getNumElements() > maxElements)
    return {};
  if (auto shapeOp = dyn_cast<ShapeOp>(op)) {
    auto operandType = cast<RankedTensorType>(shapeOp.getX().getType());
    if (!operandType.hasStaticShape())
      return {};
    return DenseIntElementsAttr::get(resultType, operandType.getShape());
  }
  if (op->getNumOperands() == 0 || !isMemoryEffectFree(op))
    return {};
  SmallVector<HostTensor> operands;
  for (Value operand : op->getOperands()) {
    std::optional<HostTensor> value = operandValue(operand);
    if (!value)
      return {};
    operands.push_back(std::move(*value));
  }
  Result result = evaluate(op, operands, resultType);
  if (!result)
    return {};
  return writeConstant(*result);
}

std::optional<HostTensor> foldRecursively(Value value, int64_t maxElements,
                                          int depth) {
  // A splat constant declares any number of elements in a few bytes; the
  // host tensor would hold them all (a fuzzed GraphDef asked for 2^31).
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (type && type.hasStaticShape() && type.getNumElements() > maxElements)
    return std::nullopt;
  if (std::optional<HostTensor> constant = readConstant(value))
    return constant;
  Operation *def = value.getDefiningOp();
  // Shape subgraphs are short; the bound keeps a pathological graph from
  // exhausting the stack.
  if (!def || depth > 64)
    return std::nullopt;
  ElementsAttr folded = foldOp(def, maxElements, [&](Value operand) {
    return foldRecursively(operand, maxElements, depth + 1);
  });
  if (!folded)
    return std::nullopt;
  return readElements(folded);
}

struct FoldConstantsPass
    : public gopt::impl::FoldConstantsBase<FoldConstantsPass> {
  using FoldConstantsBase::FoldConstantsBase;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      // Never dequantize: --gopt-quantize-weights put it there so the
      // weights stay int8 in the plan; folding it would undo the pass.
      if (isa<GoptDialect>(op->getDialect()) &&
          !isa<ConstantOp, DequantizeOp>(op) && op->getNumResults() == 1)
        ops.push_back(op);
    });

    int64_t folded = 0, tooLarge = 0;
    for (Operation *op : ops) {
      auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
      if (!resultType || !resultType.hasStaticShape())
        continue;
      if (resultType.getNumElements() > maxElements) {
        tooLarge += llvm::all_of(op->getOperands(), [](Value v) {
          return v.getDefiningOp<ConstantOp>() != nullptr;
        });
        continue;
      }
      ElementsAttr value = foldOp(op, maxElements, readConstant);
      if (!value)
        continue;
      OpBuilder builder(op);
      auto constant = builder.create<ConstantOp>(op->getLoc(), value);
      op->getResult(0).replaceAllUsesWith(constant.getResult());
      op->erase();
      ++numFolded;
      ++folded;
    }

    // Constants whose users were all folded.
    SmallVector<Operation *> dead;
    getOperation().walk([&](ConstantOp op) {
      if (op->use_empty())
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();

    std::string message = "folded " + plural(folded, "op") + " to constants";
    if (tooLarge)
      message += ", left " + plural(tooLarge, "op") + " with more than " +
                 std::to_string(maxElements) + " result elements";
    reportChanges(getOperation(), report, getArgument(), message);
  }
};

} // namespace

DenseElementsAttr gopt::foldValue(Value value, int64_t maxElements) {
  std::optional<HostTensor> folded = foldRecursively(value, maxElements, 0);
  return folded ? writeElements(*folded) : DenseElementsAttr();
}
