//===- ControlFlowGradients.cpp - Gradients through gopt.if and loop -----===//
//
// DifferentiableOpInterface for gopt.if: the backward pass is another if on
// the same condition. Each of its branches recomputes the forward branch
// (a clone) and differentiates it with the pass's reverse walk
// (GradientBuilder::differentiateBlock), so the backward if takes the
// forward's captures plus the results' gradients and gives one gradient
// per capture that needs one (zeros from a branch that does not use it).
// Recomputing keeps the forward if as it is: yielding the branches'
// intermediates instead would need both branches to yield the same
// values, which they do not have.
//
// gopt.loop's backward pass is backpropagation through its iterations: a
// replay of the forward loop that also stacks each iteration's carried
// values as scan outputs, then a reverse loop over the same trip count
// whose iteration j recomputes forward iteration T-1-j from its stacked
// carried values (a clone of the body) and differentiates it: the carried
// values' gradients are its carried values, the captures' gradients sums
// carried along. Only loops without an early exit (cond_invariant) have
// one: the stacks need the number of iterations before the loop runs.
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace gopt {

LogicalResult IfOp::buildGradients(GradientBuilder &gradients,
                                   ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  SmallVector<unsigned> wrtIndices, gradIndices;
  for (auto [i, capture] : llvm::enumerate(getCaptures()))
    if (gradients.needsGrad(capture))
      wrtIndices.push_back(i);
  if (wrtIndices.empty())
    return success();
  SmallVector<Value> captures(getCaptures());
  size_t numCaptures = captures.size();
  for (auto [i, grad] : llvm::enumerate(resultGrads))
    if (grad) {
      gradIndices.push_back(i);
      captures.push_back(grad);
    }
  SmallVector<Type> resultTypes, argTypes;
  for (unsigned i : wrtIndices)
    resultTypes.push_back(getCaptures()[i].getType());
  for (Value capture : captures)
    argTypes.push_back(capture.getType());
  SmallVector<Location> argLocs(argTypes.size(), loc);
  auto backward = b.create<IfOp>(loc, resultTypes, getCond(), captures);
  for (auto [forwardRegion, backwardRegion] :
       {std::make_pair(&getThenRegion(), &backward.getThenRegion()),
        std::make_pair(&getElseRegion(), &backward.getElseRegion())}) {
    Block &forward = forwardRegion->front();
    Block *block = new Block();
    backwardRegion->push_back(block);
    block->addArguments(argTypes, argLocs);
    IRMapping mapping;
    for (auto [from, to] :
         llvm::zip(forward.getArguments(), block->getArguments()))
      mapping.map(from, to);
    OpBuilder inner = OpBuilder::atBlockEnd(block);
    for (Operation &op : forward.without_terminator())
      inner.clone(op, mapping);
    auto yield = inner.create<YieldOp>(loc, ValueRange{});
    auto forwardYield = cast<YieldOp>(forward.getTerminator());
    SmallVector<Value> outputs, outputGrads, wrt;
    for (auto [k, i] : llvm::enumerate(gradIndices)) {
      outputs.push_back(mapping.lookupOrDefault(forwardYield.getValues()[i]));
      outputGrads.push_back(block->getArgument(numCaptures + k));
    }
    for (unsigned i : wrtIndices)
      wrt.push_back(block->getArgument(i));
    FailureOr<SmallVector<Value>> grads =
        gradients.differentiateBlock(*block, outputs, outputGrads, wrt);
    if (failed(grads))
      return failure();
    yield->setOperands(*grads);
  }
  for (auto [k, i] : llvm::enumerate(wrtIndices))
    gradients.accumulate(getCaptures()[i], backward.getResult(k));
  return success();
}

LogicalResult LoopOp::buildGradients(GradientBuilder &gradients,
                                     ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  size_t numCarried = getInitial().size();
  auto isFloat = [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && isa<FloatType>(type.getElementType());
  };
  SmallVector<unsigned> floatCarried, captureWrt;
  bool anyCarried = false;
  for (auto [k, initial] : llvm::enumerate(getInitial()))
    if (isFloat(initial)) {
      floatCarried.push_back(k);
      anyCarried = anyCarried || gradients.needsGrad(initial);
    }
  for (auto [k, capture] : llvm::enumerate(getCaptures()))
    if (gradients.needsGrad(capture))
      captureWrt.push_back(k);
  if (!anyCarried && captureWrt.empty())
    return success();
  if (!getCondInvariant())
    return emitNoGradientError(*this)
               << "it may end before max_trip_count (no cond_invariant), and "
                  "backpropagation through its iterations stacks their "
                  "carried values, which needs the number of iterations "
                  "before it runs",
           failure();

  // The forward again, also yielding each iteration's carried values (the
  // body's carried arguments) as scan outputs.
  SmallVector<Type> replayTypes(getResultTypes());
  for (Value initial : getInitial()) {
    auto type = cast<RankedTensorType>(initial.getType());
    SmallVector<int64_t> dims = {ShapedType::kDynamic};
    llvm::append_range(dims, type.getShape());
    replayTypes.push_back(RankedTensorType::get(dims, type.getElementType()));
  }
  auto replay =
      b.create<LoopOp>(loc, replayTypes, getMaxTripCount(), getCond(),
                       getInitial(), getCaptures(), getCondInvariantAttr());
  IRMapping replayMapping;
  getBody().cloneInto(&replay.getBody(), replayMapping);
  Block &replayBody = replay.getBody().front();
  Operation *replayYield = replayBody.getTerminator();
  replayYield->insertOperands(replayYield->getNumOperands(),
                              replayBody.getArguments().slice(2, numCarried));
  ValueRange stacks = replay.getResults().drop_front(getNumResults());

  // The reverse loop: carried (the float carried values' gradients, then
  // the captures' sums), captures (the trip count, the stacks, the scan
  // outputs' gradients, the forward's captures).
  SmallVector<Value> initial, captures;
  for (unsigned k : floatCarried)
    initial.push_back(resultGrads[k] ? resultGrads[k]
                                     : gradients.zerosLike(getInitial()[k]));
  for (unsigned k : captureWrt)
    initial.push_back(gradients.zerosLike(getCaptures()[k]));
  captures.push_back(getMaxTripCount());
  llvm::append_range(captures, stacks);
  SmallVector<unsigned> scanGrads;
  for (size_t s = numCarried; s < getNumResults(); ++s)
    if (resultGrads[s]) {
      scanGrads.push_back(s);
      captures.push_back(resultGrads[s]);
    }
  llvm::append_range(captures, getCaptures());
  SmallVector<Type> reverseTypes;
  for (Value v : initial)
    reverseTypes.push_back(v.getType());
  auto reverse =
      b.create<LoopOp>(loc, reverseTypes, getMaxTripCount(), getCond(), initial,
                       captures, getCondInvariantAttr());
  Block *block = new Block();
  reverse.getBody().push_back(block);
  SmallVector<Type> argTypes = {getMaxTripCount().getType(),
                                getCond().getType()};
  for (Value v : initial)
    argTypes.push_back(v.getType());
  for (Value v : captures)
    argTypes.push_back(v.getType());
  block->addArguments(argTypes, SmallVector<Location>(argTypes.size(), loc));
  ValueRange args = block->getArguments();
  Value j = args[0], cond = args[1];
  ValueRange carriedGrads = args.slice(2, floatCarried.size());
  ValueRange sums = args.slice(2 + floatCarried.size(), captureWrt.size());
  size_t at = 2 + initial.size();
  Value tripCount = args[at++];
  ValueRange stacked = args.slice(at, numCarried);
  at += numCarried;
  ValueRange scanGradArgs = args.slice(at, scanGrads.size());
  at += scanGrads.size();
  ValueRange forwardCaptures = args.slice(at, getCaptures().size());

  OpBuilder inner = OpBuilder::atBlockEnd(block);
  auto i64 = RankedTensorType::get({}, inner.getI64Type());
  Value one = inner.create<ConstantOp>(
      loc, DenseElementsAttr::get(i64, ArrayRef<int64_t>{1}));
  // Forward iteration T-1-j, and its carried values and scan gradients.
  Value last = inner.create<SubOp>(loc, tripCount, one);
  Value index = inner.create<SubOp>(loc, last, j);
  IRMapping mapping;
  Block &body = getBody().front();
  mapping.map(body.getArgument(0), index);
  mapping.map(body.getArgument(1), cond);
  SmallVector<Value> carriedAt;
  for (size_t k = 0; k < numCarried; ++k) {
    Value value =
        inner.create<GatherOp>(loc, getInitial()[k].getType(), stacked[k],
                               index, inner.getI64IntegerAttr(0));
    carriedAt.push_back(value);
    mapping.map(body.getArgument(2 + k), value);
  }
  for (auto [k, capture] : llvm::enumerate(forwardCaptures))
    mapping.map(body.getArgument(2 + numCarried + k), capture);
  for (Operation &op : body.without_terminator())
    inner.clone(op, mapping);
  auto yield = inner.create<YieldOp>(loc, ValueRange{});
  auto forwardYield = cast<YieldOp>(body.getTerminator());
  SmallVector<Value> outputs, outputGrads, wrt;
  for (auto [n, k] : llvm::enumerate(floatCarried)) {
    outputs.push_back(mapping.lookupOrDefault(forwardYield.getValues()[1 + k]));
    outputGrads.push_back(carriedGrads[n]);
  }
  for (auto [n, s] : llvm::enumerate(scanGrads)) {
    OpBuilder before(yield);
    Value slice = mapping.lookupOrDefault(forwardYield.getValues()[1 + s]);
    outputs.push_back(slice);
    outputGrads.push_back(before.create<GatherOp>(loc, slice.getType(),
                                                  scanGradArgs[n], index,
                                                  before.getI64IntegerAttr(0)));
  }
  for (unsigned k : floatCarried)
    wrt.push_back(carriedAt[k]);
  for (unsigned k : captureWrt)
    wrt.push_back(forwardCaptures[k]);
  FailureOr<SmallVector<Value>> grads =
      gradients.differentiateBlock(*block, outputs, outputGrads, wrt);
  if (failed(grads))
    return failure();
  SmallVector<Value> yielded = {cond};
  OpBuilder before(yield);
  for (size_t n = 0; n < floatCarried.size(); ++n)
    yielded.push_back((*grads)[n]);
  for (size_t n = 0; n < captureWrt.size(); ++n)
    yielded.push_back(
        before.create<AddOp>(loc, sums[n], (*grads)[floatCarried.size() + n]));
  yield->setOperands(yielded);

  for (auto [n, k] : llvm::enumerate(floatCarried))
    if (gradients.needsGrad(getInitial()[k]))
      gradients.accumulate(getInitial()[k], reverse.getResult(n));
  for (auto [n, k] : llvm::enumerate(captureWrt))
    gradients.accumulate(getCaptures()[k],
                         reverse.getResult(floatCarried.size() + n));
  return success();
}

} // namespace gopt
