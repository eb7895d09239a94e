//===- TrainingUtils.h - Shared by the training passes ----------*- C++ -*-===//
#ifndef GOPT_LIB_TRANSFORMS_TRAININGUTILS_H
#define GOPT_LIB_TRANSFORMS_TRAININGUTILS_H

#include "gopt/Dialect/Gopt/IR/TrainingAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace gopt {

/// The name a value's producer was given by its importer (NameLoc, or the
/// resource key of a constant's data), or empty.
std::string getImportedName(mlir::Operation *op);

/// A name not yet used by an argument or result of `func`: `base`, or
/// `base_1`, `base_2`, ...
std::string getUniqueBindingName(mlir::func::FuncOp func, llvm::StringRef base);

/// The value of `gopt.name` of an argument/result, or empty.
llvm::StringRef getArgName(mlir::func::FuncOp func, unsigned index);
llvm::StringRef getResultName(mlir::func::FuncOp func, unsigned index);

/// The index of the result named `name` (`gopt.name`), or an error on
/// `func` prefixed by `pass` that lists the result names and suggests
/// --gopt-add-loss.
mlir::FailureOr<unsigned> findLossResult(mlir::func::FuncOp func,
                                         llvm::StringRef name,
                                         llvm::StringRef pass);

/// Appends an argument marked as runtime state of `kind`
/// (attrs::kStateParam/kStateOptimizer) named `name`, initially `initial`
/// (zeros when null).
mlir::BlockArgument addStateArgument(mlir::func::FuncOp func,
                                     mlir::RankedTensorType type,
                                     llvm::StringRef name, llvm::StringRef kind,
                                     mlir::Attribute initial);

/// Replaces the function's results by `values` with `attrs` (one dictionary
/// per value), updating the return op and the function type.
void setFunctionResults(mlir::func::FuncOp func, mlir::ValueRange values,
                        llvm::ArrayRef<mlir::DictionaryAttr> attrs);

/// A result dictionary `{gopt.name = name}` plus `extra` (name, value) pairs.
mlir::DictionaryAttr makeResultAttrs(
    mlir::MLIRContext *context, llvm::StringRef name,
    llvm::ArrayRef<std::pair<llvm::StringRef, llvm::StringRef>> extra = {});

} // namespace gopt

#endif // GOPT_LIB_TRANSFORMS_TRAININGUTILS_H
