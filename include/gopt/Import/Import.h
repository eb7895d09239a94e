//===- Import.h - Graph-file importers and exporters ------------*- C++ -*-===//
//
// ONNX ModelProto and TensorFlow GraphDef in, ONNX out. Each importer returns
// a module holding one `func.func @main` of gopt ops, or null after emitting
// one error at the file's location that names the node (name and op type) and
// the reason.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_IMPORT_IMPORT_H
#define GOPT_IMPORT_IMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include <optional>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace gopt {

enum class GraphFormat { MLIR, ONNX, GraphDef };

/// "mlir", "onnx" or "graphdef"; nullopt for anything else.
std::optional<GraphFormat> parseGraphFormat(llvm::StringRef name);

/// The format a file name implies: .onnx, .pb/.pbtxt, else MLIR.
GraphFormat graphFormatFromFilename(llvm::StringRef filename);

/// Imports a serialized ONNX ModelProto. `filename` only names the input in
/// diagnostics.
mlir::OwningOpRef<mlir::ModuleOp> importOnnx(llvm::StringRef bytes,
                                             llvm::StringRef filename,
                                             mlir::MLIRContext *context);

/// Imports a TensorFlow GraphDef, binary or text format (text when the file
/// name ends in .pbtxt/.txt, or when the bytes are not a binary GraphDef).
mlir::OwningOpRef<mlir::ModuleOp> importGraphDef(llvm::StringRef bytes,
                                                 llvm::StringRef filename,
                                                 mlir::MLIRContext *context);

/// Imports `bytes` in `format` (not MLIR).
mlir::OwningOpRef<mlir::ModuleOp> importGraph(GraphFormat format,
                                              llvm::StringRef bytes,
                                              llvm::StringRef filename,
                                              mlir::MLIRContext *context);

/// Writes the module's `main` function (or its only function) as an ONNX
/// ModelProto that passes ONNX's checker. Emits an error on an op that has no
/// ONNX equivalent.
mlir::LogicalResult exportOnnx(mlir::ModuleOp module, llvm::raw_ostream &os);

/// Registers --import-onnx, --import-graphdef and --export-onnx with
/// mlir-translate's registry.
void registerImportTranslations();

} // namespace gopt

#endif // GOPT_IMPORT_IMPORT_H
