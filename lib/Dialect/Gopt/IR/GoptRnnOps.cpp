//===- GoptRnnOps.cpp - type inference of the recurrent ops ---------------===//
//
// lstm, gru and rnn (GoptRnnOps.td): adapters over the shared shape
// function (lib/Shape/RnnShapes.cpp).
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

namespace gopt::detail {
template <> unsigned getExpectedResultCount<LstmOp>(LstmOp::Adaptor) {
  return 3;
}
template <> unsigned getExpectedResultCount<GruOp>(GruOp::Adaptor) { return 2; }
template <> unsigned getExpectedResultCount<RnnOp>(RnnOp::Adaptor) { return 2; }
} // namespace gopt::detail

namespace {

/// The shape function of all three ops; `initialC` and `peepholes` are null
/// for gru and rnn. Pushes y and then `stateCount` final states.
LogicalResult inferRecurrentTypes(Value x, Value w, Value r, Value b,
                                  Value initialH, Value initialC,
                                  Value peepholes, Value sequenceLens,
                                  int64_t hiddenSize, StringRef direction,
                                  int64_t gates, unsigned stateCount,
                                  const ShapeError &error,
                                  SmallVectorImpl<Type> &types) {
  SmallVector<Value> floats = {x, w, r, b, initialH};
  SmallVector<StringRef> names = {"x", "w", "r", "b", "initial_h"};
  if (initialC) {
    floats.append({initialC, peepholes});
    names.append({"initial_c", "p"});
  }
  if (failed(verifySameElementTypes(floats, names, error)))
    return failure();
  shape::DimsRef bDims = shapeOf(b), hDims = shapeOf(initialH);
  shape::DimsRef cDims, pDims, lensDims;
  shape::RecurrentOperands operands;
  operands.b = &bDims;
  operands.initialH = &hDims;
  if (initialC) {
    cDims = shapeOf(initialC);
    pDims = shapeOf(peepholes);
    operands.initialC = &cDims;
    operands.peepholes = &pDims;
  }
  if (sequenceLens) {
    lensDims = shapeOf(sequenceLens);
    operands.sequenceLens = &lensDims;
  }
  shape::Dims y, state;
  if (failed(error.check(shape::inferRecurrentShape(
          shapeOf(x), shapeOf(w), shapeOf(r), operands, hiddenSize,
          std::string_view(direction.data(), direction.size()), gates, y,
          state))))
    return failure();
  Type elementType = elementTypeOf(x);
  types.push_back(tensorOf(y, elementType));
  types.append(stateCount, tensorOf(state, elementType));
  return success();
}

} // namespace

static LogicalResult inferTypes(LstmOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  return inferRecurrentTypes(
      adaptor.getX(), adaptor.getW(), adaptor.getR(), adaptor.getB(),
      adaptor.getInitialH(), adaptor.getInitialC(), adaptor.getP(),
      adaptor.getSequenceLens(), static_cast<int64_t>(adaptor.getHiddenSize()),
      adaptor.getDirection(), /*gates=*/4, /*stateCount=*/2, error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(LstmOp)

static LogicalResult inferTypes(GruOp::Adaptor adaptor, const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  return inferRecurrentTypes(
      adaptor.getX(), adaptor.getW(), adaptor.getR(), adaptor.getB(),
      adaptor.getInitialH(), Value(), Value(), adaptor.getSequenceLens(),
      static_cast<int64_t>(adaptor.getHiddenSize()), adaptor.getDirection(),
      /*gates=*/3, /*stateCount=*/1, error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(GruOp)

static LogicalResult inferTypes(RnnOp::Adaptor adaptor, const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  return inferRecurrentTypes(
      adaptor.getX(), adaptor.getW(), adaptor.getR(), adaptor.getB(),
      adaptor.getInitialH(), Value(), Value(), adaptor.getSequenceLens(),
      static_cast<int64_t>(adaptor.getHiddenSize()), adaptor.getDirection(),
      /*gates=*/1, /*stateCount=*/1, error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(RnnOp)
