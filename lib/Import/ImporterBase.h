//===- ImporterBase.h - Scaffolding shared by the importers -----*- C++ -*-===//
//
// What the ONNX and GraphDef importers share: the builder and the first
// error with its plumbing (fail, failOp, setResult), input fetching
// (GET_INPUT), the one- and two-operand op templates, the module's main
// function, and the op tables importNode() dispatches through: one entry per
// ONNX or TensorFlow op type, sorted, so that an op type is defined once and
// found by binary search. Internal to lib/Import.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_LIB_IMPORT_IMPORTERBASE_H
#define GOPT_LIB_IMPORT_IMPORTERBASE_H

#include "ImportUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include <string>
#include <string_view>

namespace gopt::import {

/// One entry of an importer's op table: an ONNX or TensorFlow op type and
/// the function that imports a node of that type (aliases such as "Add" and
/// "AddV2" are entries of their own).
template <typename Importer> struct OpHandler {
  std::string_view opType;
  mlir::LogicalResult (*import)(Importer &);
};

/// Whether `table` is sorted by op type, no op type twice; each table is
/// checked by static_assert where it is defined.
template <typename Importer, size_t N>
constexpr bool isSortedAndUnique(const OpHandler<Importer> (&table)[N]) {
  for (size_t i = 1; i < N; ++i)
    if (!(table[i - 1].opType < table[i].opType))
      return false;
  return true;
}

/// The entry of `opType` in `table` (sorted by op type), or nullptr.
template <typename Importer>
const OpHandler<Importer> *
findHandler(llvm::ArrayRef<OpHandler<Importer>> table, llvm::StringRef opType) {
  std::string_view key(opType.data(), opType.size());
  const auto *it = llvm::partition_point(
      table, [&](const OpHandler<Importer> &h) { return h.opType < key; });
  return it != table.end() && it->opType == key ? it : nullptr;
}

/// Declares `Value var` from a FailureOr<Value> expression, returning
/// failure() from the enclosing function when it failed.
#define GOPT_IMPORT_VALUE(var, expr)                                           \
  mlir::FailureOr<mlir::Value> var##OrErr = (expr);                            \
  if (mlir::failed(var##OrErr))                                                \
    return mlir::failure();                                                    \
  mlir::Value var = *var##OrErr;
/// Input `i` of the current node; a missing one fails the node.
#define GET_INPUT(var, i) GOPT_IMPORT_VALUE(var, requiredInput(i))

/// Declares `OpTy var` = createInferred<OpTy>(b, loc, args...), or fails the
/// node with the dialect's diagnostic (failOp) from the enclosing function
/// when the op is invalid. GOPT_INFER_VALUE declares `Value var` instead;
/// GOPT_INFER_ASSIGN assigns an existing variable.
#define GOPT_INFER(var, OpTy, ...)                                             \
  auto var##OrErr = createInferred<OpTy>(b, loc, __VA_ARGS__);                 \
  if (mlir::failed(var##OrErr))                                                \
    return failOp();                                                           \
  OpTy var = *var##OrErr
#define GOPT_INFER_VALUE(var, OpTy, ...)                                       \
  auto var##OrErr = createInferred<OpTy>(b, loc, __VA_ARGS__);                 \
  if (mlir::failed(var##OrErr))                                                \
    return failOp();                                                           \
  mlir::Value var = *var##OrErr
/// As GOPT_INFER in a helper whose null result means failure: fails the
/// node and returns {} when the op is invalid.
#define GOPT_INFER_OR_NULL(var, OpTy, ...)                                     \
  auto var##OrErr = createInferred<OpTy>(b, loc, __VA_ARGS__);                 \
  if (mlir::failed(var##OrErr)) {                                              \
    (void)failOp();                                                            \
    return {};                                                                 \
  }                                                                            \
  OpTy var = *var##OrErr
#define GOPT_INFER_ASSIGN(var, OpTy, ...)                                      \
  do {                                                                         \
    auto inferredOrErr = createInferred<OpTy>(b, loc, __VA_ARGS__);            \
    if (mlir::failed(inferredOrErr))                                           \
      return failOp();                                                         \
    var = *inferredOrErr;                                                      \
  } while (false)

/// The shared part of an importer. Derived (CRTP) provides
/// `build(bytes)` -> OwningOpRef<ModuleOp>, `failNode(reason)` (the error
/// naming the current node), `requiredInput(i)` -> FailureOr<Value> and
/// `setOutput(i, value)`.
template <typename Derived> class ImporterBase {
public:
  ImporterBase(mlir::MLIRContext *ctx, llvm::StringRef filename)
      : ctx(ctx), filename(filename), b(ctx),
        fileLoc(mlir::FileLineColLoc::get(ctx, filename, 0, 0)) {}

  /// The module, or null after emitting one error.
  mlir::OwningOpRef<mlir::ModuleOp> run(llvm::StringRef bytes) {
    mlir::OwningOpRef<mlir::ModuleOp> module = derived().build(bytes);
    if (!module)
      mlir::emitError(fileLoc) << (error.empty() ? "import failed" : error);
    return module;
  }

protected:
  Derived &derived() { return static_cast<Derived &>(*this); }

  // --- errors -------------------------------------------------------------
  /// Keeps `reason` as the import's error unless one came first.
  mlir::LogicalResult fail(const llvm::Twine &reason) {
    if (error.empty())
      error = reason.str();
    return mlir::failure();
  }
  /// After a gopt op failed to build: the dialect's diagnostic, per node.
  mlir::LogicalResult failOp() {
    return derived().failNode(capture->take("invalid op"));
  }
  /// `op`'s first result as the node's output 0; a null `op` (it failed to
  /// build) fails the node.
  mlir::LogicalResult setResult(mlir::Operation *op) {
    if (!op)
      return failOp();
    derived().setOutput(0, op->getResult(0));
    return mlir::success();
  }
  template <typename OpTy>
  mlir::LogicalResult setResult(mlir::FailureOr<OpTy> op) {
    if (mlir::failed(op))
      return failOp();
    return setResult(op->getOperation());
  }

  // --- helpers ------------------------------------------------------------
  llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
    return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape();
  }
  mlir::DenseI64ArrayAttr i64s(llvm::ArrayRef<int64_t> v) {
    return b.getDenseI64ArrayAttr(v);
  }

  /// A node that is one gopt op of its one or two inputs.
  template <typename OpTy> mlir::LogicalResult unary() {
    GOPT_IMPORT_VALUE(x, derived().requiredInput(0));
    return setResult(createInferred<OpTy>(b, loc, x));
  }
  template <typename OpTy> mlir::LogicalResult binary() {
    GOPT_IMPORT_VALUE(lhs, derived().requiredInput(0));
    GOPT_IMPORT_VALUE(rhs, derived().requiredInput(1));
    return setResult(createInferred<OpTy>(b, loc, lhs, rhs));
  }

  // --- the module -----------------------------------------------------------
  /// Creates `func.func @main` in `module`, empty, with the builder at the
  /// start of its entry block.
  mlir::func::FuncOp createMain(mlir::ModuleOp module) {
    ctx->loadDialect<GoptDialect, mlir::func::FuncDialect>();
    b.setInsertionPointToEnd(module.getBody());
    auto func = b.create<mlir::func::FuncOp>(fileLoc, "main",
                                             b.getFunctionType({}, {}));
    b.setInsertionPointToStart(func.addEntryBlock());
    return func;
  }
  /// Returns `results` from `func` and names its arguments and results
  /// (`gopt.name`) after the graph's.
  void finishMain(mlir::func::FuncOp func, llvm::ArrayRef<mlir::Type> argTypes,
                  llvm::ArrayRef<std::string> argNames,
                  llvm::ArrayRef<mlir::Value> results,
                  llvm::ArrayRef<std::string> resultNames) {
    b.create<mlir::func::ReturnOp>(fileLoc, results);
    func.setFunctionType(
        b.getFunctionType(argTypes, mlir::ValueRange(results).getTypes()));
    for (size_t i = 0; i < argNames.size(); ++i)
      func.setArgAttr(i, "gopt.name", b.getStringAttr(argNames[i]));
    for (size_t i = 0; i < resultNames.size(); ++i)
      func.setResultAttr(i, "gopt.name", b.getStringAttr(resultNames[i]));
  }

  mlir::MLIRContext *ctx;
  std::string filename;
  mlir::OpBuilder b;
  mlir::Location fileLoc;
  /// The current node's location.
  mlir::Location loc = fileLoc;
  std::string error;
  ErrorCapture *capture = nullptr;
};

} // namespace gopt::import

#endif // GOPT_LIB_IMPORT_IMPORTERBASE_H
