//===- Registration.cpp - Translations and format selection ---------------===//

#include "gopt/Import/Import.h"
#include "gopt/InitGopt.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

std::optional<gopt::GraphFormat> gopt::parseGraphFormat(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<GraphFormat>>(name.lower())
      .Case("mlir", GraphFormat::MLIR)
      .Case("onnx", GraphFormat::ONNX)
      .Cases("graphdef", "pb", "pbtxt", GraphFormat::GraphDef)
      .Default(std::nullopt);
}

gopt::GraphFormat gopt::graphFormatFromFilename(llvm::StringRef filename) {
  llvm::StringRef ext = llvm::sys::path::extension(filename);
  if (ext.equals_insensitive(".onnx"))
    return GraphFormat::ONNX;
  if (ext.equals_insensitive(".pb") || ext.equals_insensitive(".pbtxt"))
    return GraphFormat::GraphDef;
  return GraphFormat::MLIR;
}

OwningOpRef<ModuleOp> gopt::importGraph(GraphFormat format,
                                        llvm::StringRef bytes,
                                        llvm::StringRef filename,
                                        MLIRContext *context) {
  if (format == GraphFormat::ONNX)
    return importOnnx(bytes, filename, context);
  if (format == GraphFormat::GraphDef)
    return importGraphDef(bytes, filename, context);
  return nullptr;
}

/// The main buffer of `sourceMgr` and its name.
static std::pair<llvm::StringRef, llvm::StringRef>
mainBuffer(llvm::SourceMgr &sourceMgr) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  return {buffer->getBuffer(), buffer->getBufferIdentifier()};
}

OwningOpRef<ModuleOp> gopt::readModel(llvm::SourceMgr &sourceMgr,
                                      MLIRContext *context,
                                      std::optional<GraphFormat> format) {
  auto [bytes, name] = mainBuffer(sourceMgr);
  GraphFormat chosen = format.value_or(graphFormatFromFilename(name));
  if (chosen == GraphFormat::MLIR)
    return parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(context));
  return importGraph(chosen, bytes, name, context);
}

void gopt::registerModelTranslation(
    llvm::StringRef name, llvm::StringRef description,
    std::function<LogicalResult(ModuleOp, llvm::raw_ostream &)> translate) {
  // TranslateFromMLIRRegistration would parse every input as MLIR (an
  // .onnx file fails with "unexpected character"); this reads it as
  // gopt-opt does.
  TranslateRegistration registration(
      name, description,
      [translate](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                  llvm::raw_ostream &os, MLIRContext *context) {
        DialectRegistry registry;
        registerGoptDialects(registry);
        context->appendDialectRegistry(registry);
        OwningOpRef<ModuleOp> module = readModel(*sourceMgr, context);
        if (!module || failed(verify(*module)))
          return failure();
        return translate(*module, os);
      });
}

void gopt::registerImportTranslations() {
  auto dialects = [](DialectRegistry &registry) {
    registerGoptDialects(registry);
  };
  static TranslateToMLIRRegistration importOnnxReg(
      "import-onnx", "import an ONNX model (.onnx) into gopt IR",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        auto [bytes, name] = mainBuffer(sourceMgr);
        return importOnnx(bytes, name, context);
      },
      dialects);
  static TranslateToMLIRRegistration importGraphDefReg(
      "import-graphdef",
      "import a TensorFlow GraphDef (.pb binary or .pbtxt text) into gopt IR",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        auto [bytes, name] = mainBuffer(sourceMgr);
        return importGraphDef(bytes, name, context);
      },
      dialects);
  static llvm::cl::opt<int64_t> onnxOpset(
      "onnx-opset",
      llvm::cl::desc("the ONNX opset --export-onnx writes (14 to 21; "
                     "default 0: the lowest from 14 on that the graph needs)"),
      llvm::cl::init(0));
  registerModelTranslation("export-onnx",
                           "export gopt IR (or a graph file) as an ONNX model",
                           [](ModuleOp module, llvm::raw_ostream &os) {
                             return exportOnnx(module, os, onnxOpset);
                           });
}
