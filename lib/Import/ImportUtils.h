//===- ImportUtils.h - Helpers shared by the importers ----------*- C++ -*-===//
//
// Op creation that reports instead of aborting, error capture and constant
// creation. Internal to lib/Import.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_LIB_IMPORT_IMPORTUTILS_H
#define GOPT_LIB_IMPORT_IMPORTUTILS_H

#include "gopt/Dialect/Gopt/IR/GoptOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ArrayRef.h"
#include <optional>
#include <string>

namespace gopt::import {

/// Collects the first error emitted while it is alive, instead of printing
/// it, so the importer can report it once with the node that caused it.
class ErrorCapture {
public:
  explicit ErrorCapture(mlir::MLIRContext *context)
      : handler(context, [this](mlir::Diagnostic &diag) {
          if (diag.getSeverity() == mlir::DiagnosticSeverity::Error &&
              message.empty())
            message = explainTypeConstraint(diag.str());
          return mlir::success();
        }) {}

  /// An ODS type constraint that rejects f64, i16 or an unsigned type means
  /// the op is not implemented for that type (most ops are float or signed
  /// integer only): the message says so, rather than reading as an importer
  /// bug.
  static std::string explainTypeConstraint(std::string message);

  /// The first error since the last take(), or `fallback` when none came.
  std::string take(llvm::StringRef fallback) {
    std::string result = message.empty() ? fallback.str() : message;
    message.clear();
    return result;
  }

private:
  std::string message;
  mlir::ScopedDiagnosticHandler handler;
};

/// Whether OpTy declares a verify() hook (the shape-function ops do).
template <typename T, typename = void>
struct HasVerifyHook : std::false_type {};
template <typename T>
struct HasVerifyHook<T, std::void_t<decltype(std::declval<T &>().verify())>>
    : std::true_type {};

/// Creates an op whose result types the op infers, by its build() overload
/// that takes result types. Unlike builder.create, a failing shape function
/// or verifier emits an error (captured by ErrorCapture) and gives failure()
/// rather than aborting; the FailureOr makes the caller handle it
/// (importers: GOPT_INFER or setResult, which fail the node with it).
template <typename OpTy, typename... Args>
[[nodiscard]] mlir::FailureOr<OpTy>
createInferred(mlir::OpBuilder &b, mlir::Location loc, Args &&...args) {
  mlir::OperationState state(loc, OpTy::getOperationName());
  OpTy::build(b, state, mlir::TypeRange{}, std::forward<Args>(args)...);
  // An operand that failed to build upstream has no type to infer from.
  if (llvm::is_contained(state.operands, mlir::Value()))
    return mlir::failure();
  llvm::SmallVector<mlir::Type, 2> types;
  if (mlir::failed(OpTy::inferReturnTypes(
          b.getContext(), loc, state.operands,
          state.attributes.getDictionary(b.getContext()),
          state.getRawProperties(), state.regions, types)))
    return mlir::failure();
  state.types.assign(types.begin(), types.end());
  mlir::Operation *op = b.create(state);
  // gopt's shape functions give unranked placeholders when the operands are
  // invalid; the op's own verify() says why (ODS would only say "unranked").
  if constexpr (HasVerifyHook<OpTy>::value) {
    if (llvm::any_of(types, llvm::IsaPred<mlir::UnrankedTensorType>)) {
      (void)llvm::cast<OpTy>(op).verify();
      op->erase();
      return mlir::failure();
    }
  }
  if (mlir::failed(mlir::verify(op, /*verifyRecursively=*/false))) {
    op->erase();
    return mlir::failure();
  }
  return llvm::cast<OpTy>(op);
}

/// Creates an op with explicit result types (ops without a shape function),
/// verifying it.
template <typename OpTy, typename... Args>
OpTy createTyped(mlir::OpBuilder &b, mlir::Location loc, Args &&...args) {
  auto op = b.create<OpTy>(loc, std::forward<Args>(args)...);
  if (mlir::failed(mlir::verify(op, /*verifyRecursively=*/false))) {
    op->erase();
    return nullptr;
  }
  return op;
}

/// Constants with more elements than this become `dense_resource` blobs, so
/// printed IR of a large model stays readable; smaller ones (shapes, scalars)
/// stay inline where tests and folders can see them.
constexpr int64_t kMaxInlineElements = 16;

/// Bytes per element in the layout createConstant reads (i1: one byte).
inline size_t elementByteWidth(mlir::Type elementType) {
  // i1 and i4 take a byte each (MLIR's dense storage, the plan's).
  return elementType.getIntOrFloatBitWidth() < 8
             ? 1
             : elementType.getIntOrFloatBitWidth() / 8;
}

/// The elements of `type` from little-endian element bytes laid out as
/// createConstant reads them, inline (no resource blob).
mlir::DenseElementsAttr denseElementsFromBytes(mlir::RankedTensorType type,
                                               llvm::ArrayRef<char> bytes);

/// Most elements integerValues expands: shapes, axes and index lists are
/// short, and a splat constant may declare 2^31 elements in a few bytes.
constexpr int64_t kMaxIntegerValues = int64_t(1) << 16;

/// The values of an i32 or i64 constant, sign-extended; std::nullopt for
/// other element types and for more than kMaxIntegerValues elements.
std::optional<llvm::SmallVector<int64_t>>
integerValues(mlir::DenseElementsAttr attr);

/// Builds a constant from little-endian element bytes in the layout MLIR
/// uses for `type`'s element type (i1 as one byte per element); one
/// element's bytes for a larger type make a splat.
mlir::Value createConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::RankedTensorType type,
                           llvm::ArrayRef<char> bytes, llvm::StringRef name);

/// Builds a small i64 constant.
mlir::Value createI64Constant(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::ArrayRef<int64_t> shape,
                              llvm::ArrayRef<int64_t> values);

/// Builds a scalar-like (rank-0) float constant of `elementType`.
mlir::Value createScalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Type elementType, double value);

/// Creates the registered op `opName` from operands and attributes, its
/// result types inferred by its InferTypeOpInterface: the generic import of
/// FrameworkOps.h. Like createInferred, an invalid op emits an error and
/// yields null.
mlir::Operation *
createInferredByName(mlir::OpBuilder &b, mlir::Location loc,
                     llvm::StringRef opName, mlir::ValueRange operands,
                     llvm::ArrayRef<mlir::NamedAttribute> attrs);

/// Renders dims as "[1, ?, 3]" for messages.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// One entry of a shape computed in the graph: a known value, or dimension
/// `dim` of `source` (dynamic when `source` is set).
struct ShapeEntry {
  int64_t value = 0;
  mlir::Value source;
  int64_t dim = 0;
};

/// The entries of a 0-d or 1-D integer value computed from tensor shapes by
/// the ops exporters write for `x.view(x.size(0), -1)` and channel shuffles
/// (Shape, Gather, Unsqueeze, Concat, Cast, constants; TensorFlow's
/// StridedSlice and Pack of shapes), traced through the gopt ops they
/// imported as; nullopt for anything else. Shared by the importers.
std::optional<llvm::SmallVector<ShapeEntry>> traceShapeEntries(mlir::Value v);

} // namespace gopt::import

#endif // GOPT_LIB_IMPORT_IMPORTUTILS_H
