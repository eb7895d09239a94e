//===- CompileModel.cpp - Model file to plan, in memory -------------------===//

#include "gopt/Driver/CompileModel.h"
#include "gopt/Conversion/GoptToPlan.h"
#include "gopt/Import/Import.h"
#include "gopt/InitGopt.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace gopt {

std::optional<plan::Plan> compileModelFile(const std::string &path,
                                           const ModelCompileOptions &options,
                                           std::string &error) {
  DialectRegistry registry;
  registerGoptDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A pass's error names its op's location; a dump of the whole function
  // after it buries the message in a model's worth of IR.
  context.printOpOnDiagnostic(false);

  llvm::raw_string_ostream errors(error);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, errors);

  GraphFormat format = graphFormatFromFilename(path);
  if (!options.inputFormat.empty()) {
    std::optional<GraphFormat> parsed = parseGraphFormat(options.inputFormat);
    if (!parsed) {
      errors << path << ": unknown input format '" << options.inputFormat
             << "' (expected mlir, onnx or graphdef)\n";
      return std::nullopt;
    }
    format = *parsed;
  }

  std::string fileError;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &fileError);
  if (!file) {
    errors << path << ": " << fileError << "\n";
    return std::nullopt;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = readModel(sourceMgr, &context, format);
  if (!module)
    return std::nullopt;

  if (!options.pipeline.empty()) {
    registerGoptPasses();
    // The textual pipeline names its anchor ("builtin.module(...)"); parsing
    // it on its own and copying it into a pass manager with that anchor runs
    // it on the module itself, not on modules nested in it.
    FailureOr<OpPassManager> parsed =
        parsePassPipeline(options.pipeline, errors);
    if (failed(parsed)) {
      errors
          << "\n"
          << path << ": invalid pass pipeline '" << options.pipeline
          << "' (expected e.g. 'builtin.module(gopt-optimize{target=cpu})')\n";
      return std::nullopt;
    }
    PassManager pm(&context, parsed->getOpAnchorName());
    static_cast<OpPassManager &>(pm) = *parsed;
    if (failed(pm.run(*module)))
      return std::nullopt;
  }

  FailureOr<func::FuncOp> func = findGraphFunction(*module);
  if (failed(func))
    return std::nullopt;
  FailureOr<plan::Plan> plan = lowerToPlan(*func);
  if (failed(plan))
    return std::nullopt;
  plan->set_name(path);
  return std::move(*plan);
}

void registerEmitPlanTranslation() {
  registerModelTranslation(
      "emit-plan",
      "lower a gopt graph (or a graph file) to a runtime plan (.gplan)",
      [](ModuleOp module, llvm::raw_ostream &os) -> LogicalResult {
        FailureOr<func::FuncOp> func = findGraphFunction(module);
        if (failed(func))
          return failure();
        FailureOr<plan::Plan> plan = lowerToPlan(*func);
        if (failed(plan))
          return failure();
        std::string bytes;
        if (!plan->SerializeToString(&bytes))
          return module->emitError("could not serialize the plan");
        os << bytes;
        return success();
      });
}

} // namespace gopt
