//===- CompileModel.h - Model file to plan, in memory -----------*- C++ -*-===//
//
// What gopt-run (and embedders that have the compiler) call to run a graph
// file directly: read it (.mlir, or a graph file through the importers), run
// an optional pass pipeline, and lower it to a plan. gopt-translate's
// --emit-plan is the same without the pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DRIVER_COMPILEMODEL_H
#define GOPT_DRIVER_COMPILEMODEL_H

#include "gopt/runtime/plan.pb.h"

#include <optional>
#include <string>

namespace gopt {

struct ModelCompileOptions {
  /// A textual pass pipeline run on the module before lowering, e.g.
  /// "builtin.module(gopt-optimize{target=cpu})" (or the same nested in
  /// func.func) or "builtin.module(func.func(gopt-fuse-batch-norm))"; empty
  /// runs nothing, so the plan computes exactly what the file says.
  std::string pipeline;
  /// "mlir", "onnx" or "graphdef"; empty picks by the file's extension.
  std::string inputFormat;
};

/// Compiles the model at `path` to a plan. On failure returns nullopt and
/// sets `error` to the diagnostics, each naming the file and what is wrong.
std::optional<plan::Plan> compileModelFile(const std::string &path,
                                           const ModelCompileOptions &options,
                                           std::string &error);

/// Registers `gopt-translate --emit-plan`: the model, MLIR or a graph file
/// read by its extension as here, lowered to a serialized plan (.gplan).
void registerEmitPlanTranslation();

} // namespace gopt

#endif // GOPT_DRIVER_COMPILEMODEL_H
