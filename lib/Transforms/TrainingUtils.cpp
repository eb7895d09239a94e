//===- TrainingUtils.cpp - Shared by the training passes ------------------===//

#include "TrainingUtils.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/NameLoc.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace gopt {

std::string getImportedName(Operation *op) {
  if (auto constant = dyn_cast<ConstantOp>(op))
    if (auto resource =
            dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
      return resource.getRawHandle().getKey().str();
  if (NameLoc named = findNameLoc(op->getLoc()))
    return named.getName().str();
  return "";
}

StringRef getArgName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(index, attrs::kName))
    return name.getValue();
  return "";
}

StringRef getResultName(func::FuncOp func, unsigned index) {
  if (auto name = func.getResultAttrOfType<StringAttr>(index, attrs::kName))
    return name.getValue();
  return "";
}

std::string getUniqueBindingName(func::FuncOp func, StringRef base) {
  llvm::StringSet<> used;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    used.insert(getArgName(func, i));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    used.insert(getResultName(func, i));
  std::string name = base.str();
  for (int suffix = 1; used.contains(name); ++suffix)
    name = (base + "_" + Twine(suffix)).str();
  return name;
}

FailureOr<unsigned> findLossResult(func::FuncOp func, StringRef name,
                                   StringRef pass) {
  std::string known;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    if (getResultName(func, i) == name)
      return i;
    known += (known.empty() ? "" : ", ") + getResultName(func, i).str();
  }
  func.emitError(pass) << ": no result named '" << name
                       << "' (results: " << known
                       << "); add one with --gopt-add-loss";
  return failure();
}

BlockArgument addStateArgument(func::FuncOp func, RankedTensorType type,
                               StringRef name, StringRef kind,
                               Attribute initial) {
  Builder b(func.getContext());
  SmallVector<NamedAttribute> attrList = {
      b.getNamedAttr(attrs::kName, b.getStringAttr(name)),
      b.getNamedAttr(attrs::kState, b.getStringAttr(kind))};
  if (initial)
    attrList.push_back(b.getNamedAttr(attrs::kInitialValue, initial));
  unsigned index = func.getNumArguments();
  func.insertArgument(index, type, b.getDictionaryAttr(attrList),
                      func.getLoc());
  return func.getArgument(index);
}

void setFunctionResults(func::FuncOp func, ValueRange values,
                        ArrayRef<DictionaryAttr> attrs) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  ret->setOperands(values);
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 TypeRange(values)));
  func.setAllResultAttrs(attrs);
}

DictionaryAttr
makeResultAttrs(MLIRContext *context, StringRef name,
                ArrayRef<std::pair<StringRef, StringRef>> extra) {
  Builder b(context);
  SmallVector<NamedAttribute> list = {
      b.getNamedAttr(attrs::kName, b.getStringAttr(name))};
  for (auto [key, value] : extra)
    list.push_back(b.getNamedAttr(key, b.getStringAttr(value)));
  return b.getDictionaryAttr(list);
}

} // namespace gopt
