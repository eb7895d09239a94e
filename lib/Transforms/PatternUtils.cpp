//===- PatternUtils.cpp - Helpers shared by gopt's rewrite patterns -------===//

#include "PatternUtils.h"
#include "gopt/Dialect/Gopt/IR/NameLoc.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace gopt {

std::optional<double> getScalarConstant(Value value) {
  std::optional<HostTensor> t = readConstant(value);
  if (!t || t->numElements() == 0)
    return std::nullopt;
  double first = t->getDouble(0);
  for (int64_t i = 1, n = t->numElements(); i < n; ++i)
    if (t->getDouble(i) != first)
      return std::nullopt;
  return first;
}

bool isPerChannelShape(ArrayRef<int64_t> shape, int64_t rank, int64_t axis,
                       int64_t channels) {
  int64_t size = shape.size();
  if (size > rank || size == 0)
    return false;
  int64_t offset = rank - size;
  if (axis < offset)
    return false;
  for (int64_t d = 0; d < size; ++d)
    if (shape[d] != (offset + d == axis ? channels : 1))
      return false;
  return true;
}

Value toChannelVector(PatternRewriter &rewriter, Location loc, Value value,
                      int64_t channels) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  if (std::optional<HostTensor> t = readConstant(value)) {
    t->shape = {channels};
    return rewriter.create<ConstantOp>(loc, writeConstant(*t));
  }
  return rewriter.create<ReshapeOp>(loc, value, ArrayRef<int64_t>{channels});
}

Value createFilledVector(PatternRewriter &rewriter, Location loc,
                         Type elementType, int64_t channels, double fill) {
  HostTensor t = HostTensor::zeros({channels}, elementType);
  for (double &v : t.floats)
    v = fill;
  return rewriter.create<ConstantOp>(loc, writeConstant(t));
}

void replaceKeepingType(PatternRewriter &rewriter, Operation *op, Value value) {
  Type declared = op->getResult(0).getType();
  // Only a fresh value (no users yet) takes the declared type; the two are
  // compatible (same shape up to dynamic dimensions) by construction.
  if (value.getType() != declared && value.use_empty())
    value.setType(declared);
  rewriter.replaceOp(op, value);
}

bool onlyUsedWithin(ArrayRef<Operation *> ops, Operation *root) {
  llvm::SmallPtrSet<Operation *, 16> inside(ops.begin(), ops.end());
  inside.insert(root);
  for (Operation *op : ops)
    for (Operation *user : op->getUsers())
      if (!inside.contains(user))
        return false;
  return true;
}

Location withNameSuffix(Location loc, StringRef suffix) {
  NameLoc name = findNameLoc(loc);
  if (!name)
    return loc;
  return NameLoc::get(
      StringAttr::get(loc.getContext(), name.getName().str() + suffix.str()),
      name.getChildLoc());
}

} // namespace gopt
