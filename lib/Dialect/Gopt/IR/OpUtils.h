//===- OpUtils.h - Helpers shared by the gopt op definitions ----*- C++ -*-===//
//
// Internal to lib/Dialect/Gopt/IR: the shape-function plumbing that
// GoptOps.cpp and GoptTrainingOps.cpp share.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_LIB_DIALECT_GOPT_IR_OPUTILS_H
#define GOPT_LIB_DIALECT_GOPT_IR_OPUTILS_H

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/ShapeInference.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace gopt::detail {
using namespace mlir;

inline ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

inline Type elementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

inline RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type elementType) {
  return RankedTensorType::get(shape, elementType);
}

/// Operands of ops with several float operands must agree on element type.
inline LogicalResult verifySameElementTypes(ValueRange values,
                                            ArrayRef<StringRef> names,
                                            const ShapeError &error) {
  Type expected = elementTypeOf(values.front());
  for (auto [value, name] : llvm::zip(values, names))
    if (elementTypeOf(value) != expected)
      return error("expects ", name, " to have element type ", expected,
                   " (that of ", names.front(), "), got ",
                   elementTypeOf(value));
  return success();
}

/// Shape functions run twice: silently from inferReturnTypes (builders and
/// the interface's verifier), and with the op's location from verify(), so an
/// invalid op gets exactly one diagnostic that says what is wrong instead of
/// a second, generic "failed to infer returned types". On failure
/// inferReturnTypes gives unranked placeholders, which
/// areCompatibleReturnTypes accepts so that verify() reports the cause.
template <typename OpTy>
unsigned getExpectedResultCount(typename OpTy::Adaptor) {
  return 1;
}

inline Type getPlaceholderType(MLIRContext *context, ValueRange operands) {
  if (operands.empty())
    return UnrankedTensorType::get(NoneType::get(context));
  return UnrankedTensorType::get(elementTypeOf(operands.front()));
}

#define GOPT_SHAPE_FUNCTION_HOOKS(OpClass)                                     \
  LogicalResult OpClass::inferReturnTypes(                                     \
      MLIRContext *context, std::optional<Location>, Adaptor adaptor,          \
      SmallVectorImpl<Type> &inferred) {                                       \
    ShapeError silent(std::nullopt, getOperationName());                       \
    if (succeeded(inferTypes(adaptor, silent, inferred)))                      \
      return success();                                                        \
    inferred.assign(getExpectedResultCount<OpClass>(adaptor),                  \
                    getPlaceholderType(context, adaptor.getOperands()));       \
    return success();                                                          \
  }                                                                            \
  LogicalResult OpClass::verify() {                                            \
    SmallVector<Type> inferred;                                                \
    return inferTypes(Adaptor(*this),                                          \
                      ShapeError(getLoc(), getOperationName()), inferred);     \
  }

/// Numpy broadcasting of two operands of one element type: Gopt_BinaryOp's
/// shape function (its hooks are defined in ODS, once for every binary op).
LogicalResult inferBroadcastTypes(Value lhs, Value rhs, const ShapeError &error,
                                  SmallVectorImpl<Type> &inferred);

/// The result type of a Gopt_ReduceOp (its hooks are defined in ODS, once
/// for the family).
LogicalResult inferReductionTypes(Value x, ArrayRef<int64_t> axes,
                                  bool keepDims, const ShapeError &error,
                                  SmallVectorImpl<Type> &inferred);

/// The result types of a Gopt_DynamicOp: the rank its ODS `rankRule` gives
/// (GoptDynamicShapeOps.td), every dimension dynamic, element types by
/// `elementRule` (resultElementType). `keepDims` is a reduction's.
LogicalResult inferDynamicOpTypes(StringRef opName, ValueRange operands,
                                  bool keepDims, StringRef rankRule,
                                  StringRef elementRule,
                                  std::optional<Location> loc,
                                  SmallVectorImpl<Type> &inferred);

/// The canonicalization of every dynamic op: with constant value operands it
/// is its static op (DynamicOps.inc).
void addDynamicToStaticPattern(RewritePatternSet &results, MLIRContext *context,
                               StringRef opName);

/// Whether `v` is a float constant whose every element is `expected`.
inline bool isSplatOf(Value v, double expected) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()))
    return false;
  return attr.getSplatValue<APFloat>().convertToDouble() == expected;
}

} // namespace gopt::detail

#endif // GOPT_LIB_DIALECT_GOPT_IR_OPUTILS_H
