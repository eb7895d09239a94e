//===- PlanNames.cpp - The names a graph has in its runtime plan ----------===//
#include "gopt/Dialect/Gopt/IR/PlanNames.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/NameLoc.h"
#include "gopt/Dialect/Gopt/IR/TrainingAttrs.h"

using namespace mlir;

namespace gopt {

std::string getPlanOpKind(Operation *op) {
  return op->getName().stripDialect().str();
}

std::string getPlanBindingName(DictionaryAttr attrs, StringRef prefix,
                               unsigned index) {
  if (attrs)
    if (auto name = attrs.getAs<StringAttr>("gopt.name"))
      return name.str();
  return (prefix + Twine(index)).str();
}

namespace {

/// A readable, unique name for an op: its NameLoc if the importer gave one.
std::string getOpName(Operation *op, unsigned index) {
  if (NameLoc named = findNameLoc(op->getLoc()))
    return named.getName().str();
  return getPlanOpKind(op) + "_" + std::to_string(index);
}

/// The name of result `result` of an op named `opName`.
std::string getResultName(StringRef opName, OpResult result) {
  return result.getOwner()->getNumResults() == 1
             ? opName.str()
             : (opName + ":" + Twine(result.getResultNumber())).str();
}

/// Results returned once by `ret` and produced by a non-constant op become
/// output tensors under their output name (state updates excepted).
llvm::DenseMap<Value, std::string> getReturnedOnce(func::FuncOp func,
                                                   func::ReturnOp ret) {
  llvm::DenseMap<Value, unsigned> returnCount;
  for (Value value : ret.getOperands())
    ++returnCount[value];
  llvm::DenseMap<Value, std::string> returnedOnce;
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    if (func.getResultAttr(i, attrs::kUpdates))
      continue;
    Operation *def = value.getDefiningOp();
    if (def && !isa<ConstantOp>(def) && returnCount[value] == 1)
      returnedOnce[value] =
          getPlanBindingName(func.getResultAttrDict(i), "output", i);
  }
  return returnedOnce;
}

/// Names the ops and their results of `body` (constants and ops share one
/// counter, in program order).
void nameOps(Block &body, PlanNames &names) {
  unsigned opIndex = 0;
  for (Operation &op : body.without_terminator()) {
    std::string name = getOpName(&op, opIndex++);
    for (OpResult result : op.getResults()) {
      auto output = names.outputs.find(result);
      names.tensors[result] = output != names.outputs.end()
                                  ? output->second
                                  : getResultName(name, result);
    }
    names.ops[&op] = std::move(name);
  }
}

} // namespace

PlanNames getPlanNames(func::FuncOp func) {
  PlanNames names;
  if (func.isExternal())
    return names;
  Block &body = func.getBody().front();
  if (auto ret = dyn_cast<func::ReturnOp>(body.getTerminator()))
    names.outputs = getReturnedOnce(func, ret);
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    names.tensors[arg] = getPlanBindingName(
        func.getArgAttrDict(i),
        func.getArgAttr(i, attrs::kState) ? "state" : "input", i);
  }
  nameOps(body, names);
  return names;
}

PlanNames getRegionPlanNames(Region &region) {
  PlanNames names;
  Block &body = region.front();
  Operation *yield = body.getTerminator();
  llvm::DenseMap<Value, unsigned> yieldCount;
  for (Value value : yield->getOperands())
    ++yieldCount[value];
  for (auto [i, value] : llvm::enumerate(yield->getOperands())) {
    Operation *def = value.getDefiningOp();
    if (def && !isa<ConstantOp>(def) && yieldCount[value] == 1)
      names.outputs[value] = "output" + std::to_string(i);
  }
  for (BlockArgument arg : body.getArguments())
    names.tensors[arg] = "arg" + std::to_string(arg.getArgNumber());
  nameOps(body, names);
  return names;
}

llvm::DenseMap<Value, std::string> getPlanTensorNames(func::FuncOp func) {
  return getPlanNames(func).tensors;
}

} // namespace gopt
