//===- gopt-opt.cpp - mlir-opt for gopt -----------------------------------===//
//
// Parses, verifies, transforms and prints gopt IR, like mlir-opt, with only
// the dialects and passes gopt uses registered. Also reads graph files: an
// ONNX model (.onnx) or TensorFlow GraphDef (.pb, .pbtxt) is imported first,
// chosen by extension or --input-format, then handed to MlirOptMain as
// bytecode so every mlir-opt flag applies unchanged.
//
//===----------------------------------------------------------------------===//

#include "gopt/Import/Import.h"
#include "gopt/InitGopt.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

static llvm::cl::opt<std::string> inputFormat(
    "input-format",
    llvm::cl::desc("Input format: mlir, onnx or graphdef (default: by the "
                   "file's extension; .onnx, .pb and .pbtxt are graphs)"),
    llvm::cl::init(""));

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::DialectRegistry registry;
  gopt::registerGoptDialects(registry);
  gopt::registerGoptPasses();
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "gopt optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();

  gopt::GraphFormat format = gopt::graphFormatFromFilename(inputFilename);
  if (!inputFormat.empty()) {
    std::optional<gopt::GraphFormat> parsed =
        gopt::parseGraphFormat(inputFormat);
    if (!parsed) {
      llvm::errs() << "error: unknown --input-format '" << inputFormat
                   << "' (expected mlir, onnx or graphdef)\n";
      return 1;
    }
    format = *parsed;
  }

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (format != gopt::GraphFormat::MLIR) {
    // Import in a context of its own, then pass the module on as bytecode,
    // which keeps its dense_resource weights and needs no reparse of text.
    mlir::MLIRContext context(registry);
    llvm::SourceMgr sourceMgr;
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    mlir::OwningOpRef<mlir::ModuleOp> module = gopt::importGraph(
        format, file->getBuffer(), file->getBufferIdentifier(), &context);
    if (!module)
      return 1;
    std::string bytecode;
    llvm::raw_string_ostream os(bytecode);
    if (mlir::failed(mlir::writeBytecodeToFile(*module, os)))
      return 1;
    file = llvm::MemoryBuffer::getMemBufferCopy(bytecode, inputFilename);
  }

  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}
