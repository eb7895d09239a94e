//===- ModelLoader.h - Turn a model file into a plan ------------*- C++ -*-===//
#ifndef GOPT_TOOLING_MODELLOADER_H
#define GOPT_TOOLING_MODELLOADER_H

#include "gopt/runtime/Plan.h"

#include <string>

namespace gopt::tooling {

struct ModelLoadOptions {
  std::string backend = "cpu"; // the target a compiler hook would optimize for
  int64_t batchSize = 1;
  // A pass pipeline the compiler runs before lowering; empty runs none, so
  // the plan computes exactly what the file says (what --compare needs).
  std::string pipeline;
};

// Loads MODEL as a plan. `.gplan` files are read directly; graph files
// (.mlir, .onnx, .pb, .pbtxt) need the compiler, which is compiled in only
// with GOPT_HAVE_COMPILER.
runtime::StatusOr<runtime::Plan>
loadModelAsPlan(const std::string &path, const ModelLoadOptions &options);

// On backend "cpu", a remark on stderr (once per process) when `plan` will
// run slower than f32: bf16 without bf16 instructions, f16, or static int8
// without VNNI/AMX.
void warnIfReducedPrecisionIsSlow(const runtime::Plan &plan,
                                  const std::string &backend);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_MODELLOADER_H
