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
#include <functional>
#include <optional>

namespace llvm {
class raw_ostream;
class SourceMgr;
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

/// Reads the model in the main buffer of `sourceMgr`, as gopt-opt, gopt-run
/// and gopt-translate do: MLIR (text or bytecode) is parsed, an ONNX or
/// GraphDef file imported. `format` defaults to the one the buffer's name
/// implies (graphFormatFromFilename). Null after emitting an error.
mlir::OwningOpRef<mlir::ModuleOp>
readModel(llvm::SourceMgr &sourceMgr, mlir::MLIRContext *context,
          std::optional<GraphFormat> format = std::nullopt);

/// Writes the module's `main` function (or its only function) as an ONNX
/// ModelProto that passes ONNX's checker, at `opset` (14 to 21), or with 0 at
/// the lowest opset from 14 on that its ops need. Emits an error on an op
/// that has no ONNX equivalent at that opset.
mlir::LogicalResult exportOnnx(mlir::ModuleOp module, llvm::raw_ostream &os,
                               int64_t opset = 0);

/// Registers --import-onnx, --import-graphdef and --export-onnx with
/// mlir-translate's registry.
void registerImportTranslations();

/// Registers an mlir-translate translation from a model to bytes whose input
/// may be a graph file: the input is read with readModel (by its extension),
/// so `--NAME model.onnx` works as `--NAME model.mlir` does.
void registerModelTranslation(
    llvm::StringRef name, llvm::StringRef description,
    std::function<mlir::LogicalResult(mlir::ModuleOp, llvm::raw_ostream &)>
        translate);

} // namespace gopt

#endif // GOPT_IMPORT_IMPORT_H
