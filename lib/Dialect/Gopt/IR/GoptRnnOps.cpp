//===- GoptRnnOps.cpp - type inference of the recurrent ops ---------------===//
//
// lstm, gru and rnn and their gradients (GoptRnnOps.td): adapters over the
// shared shape functions (lib/Shape/RnnShapes.cpp).
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
template <> unsigned getExpectedResultCount<LstmGradOp>(LstmGradOp::Adaptor) {
  return 7;
}
template <> unsigned getExpectedResultCount<GruGradOp>(GruGradOp::Adaptor) {
  return 5;
}
template <> unsigned getExpectedResultCount<RnnGradOp>(RnnGradOp::Adaptor) {
  return 5;
}
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

/// The gradient ops: the forward's operands as the forward checks them,
/// then the result gradients (`stateGrads`: dy_h, and lstm's dy_c) against
/// the forward's result shapes. Each operand's gradient has its type.
LogicalResult inferRecurrentGradTypes(ValueRange forwardOperands,
                                      ArrayRef<Type> forwardTypes, Value dy,
                                      ValueRange stateGrads,
                                      const ShapeError &error,
                                      SmallVectorImpl<Type> &types) {
  SmallVector<Value> floats = {forwardOperands.front(), dy};
  SmallVector<StringRef> names = {"x", "dy"};
  for (auto [value, name] :
       llvm::zip(stateGrads, ArrayRef<StringRef>{"dy_h", "dy_c"})) {
    floats.push_back(value);
    names.push_back(name);
  }
  if (failed(verifySameElementTypes(floats, names, error)))
    return failure();
  std::vector<shape::DimsRef> stateGradDims;
  for (Value value : stateGrads)
    stateGradDims.push_back(shapeOf(value));
  if (failed(error.check(shape::checkRecurrentResultGrads(
          cast<RankedTensorType>(forwardTypes[0]).getShape(),
          cast<RankedTensorType>(forwardTypes[1]).getShape(), shapeOf(dy),
          stateGradDims))))
    return failure();
  for (Value operand : forwardOperands)
    types.push_back(operand.getType());
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

static LogicalResult inferTypes(LstmGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  SmallVector<Type> forward;
  if (failed(inferRecurrentTypes(
          adaptor.getX(), adaptor.getW(), adaptor.getR(), adaptor.getB(),
          adaptor.getInitialH(), adaptor.getInitialC(), adaptor.getP(),
          adaptor.getSequenceLens(),
          static_cast<int64_t>(adaptor.getHiddenSize()), adaptor.getDirection(),
          /*gates=*/4, /*stateCount=*/2, error, forward)))
    return failure();
  return inferRecurrentGradTypes(
      {adaptor.getX(), adaptor.getW(), adaptor.getR(), adaptor.getB(),
       adaptor.getInitialH(), adaptor.getInitialC(), adaptor.getP()},
      forward, adaptor.getDy(), {adaptor.getDyH(), adaptor.getDyC()}, error,
      types);
}
GOPT_SHAPE_FUNCTION_HOOKS(LstmGradOp)

/// gru_grad and rnn_grad.
template <typename Adaptor>
static LogicalResult inferGruOrRnnGradTypes(Adaptor adaptor, int64_t gates,
                                            const ShapeError &error,
                                            SmallVectorImpl<Type> &types) {
  SmallVector<Type> forward;
  if (failed(inferRecurrentTypes(
          adaptor.getX(), adaptor.getW(), adaptor.getR(), adaptor.getB(),
          adaptor.getInitialH(), Value(), Value(), adaptor.getSequenceLens(),
          static_cast<int64_t>(adaptor.getHiddenSize()), adaptor.getDirection(),
          gates, /*stateCount=*/1, error, forward)))
    return failure();
  return inferRecurrentGradTypes(
      {adaptor.getX(), adaptor.getW(), adaptor.getR(), adaptor.getB(),
       adaptor.getInitialH()},
      forward, adaptor.getDy(), {adaptor.getDyH()}, error, types);
}

static LogicalResult inferTypes(GruGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  return inferGruOrRnnGradTypes(adaptor, /*gates=*/3, error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(GruGradOp)

static LogicalResult inferTypes(RnnGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &types) {
  return inferGruOrRnnGradTypes(adaptor, /*gates=*/1, error, types);
}
GOPT_SHAPE_FUNCTION_HOOKS(RnnGradOp)
