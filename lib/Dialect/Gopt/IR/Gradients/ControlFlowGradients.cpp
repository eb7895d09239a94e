//===- ControlFlowGradients.cpp - Gradients through gopt.if --------------===//
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

} // namespace gopt
