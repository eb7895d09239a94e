//===- ModelLoader.cpp - Turn a model file into a plan --------------------===//
//
// The one place where gopt-run learns about model formats. A build with the
// compiler adds, under GOPT_HAVE_COMPILER, a function that imports a graph
// file, runs the default pipeline for options.backend and lowers to a plan
// in memory; everything else in gopt-run only sees the resulting Plan.
//
//===----------------------------------------------------------------------===//
#include "ModelLoader.h"

#ifdef GOPT_HAVE_COMPILER
#include "gopt/Driver/CompileModel.h"
#endif

#include <algorithm>

namespace gopt::run {

using runtime::Plan;
using runtime::StatusOr;

static std::string extensionOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return "";
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
  return ext;
}

StatusOr<Plan> loadModelAsPlan(const std::string &path,
                               const ModelLoadOptions &options) {
  std::string ext = extensionOf(path);
  if (ext == ".gplan")
    return Plan::loadFromFile(path);
  if (ext == ".mlir" || ext == ".onnx" || ext == ".pb" || ext == ".pbtxt") {
#ifdef GOPT_HAVE_COMPILER
    ModelCompileOptions compile;
    compile.pipeline = options.pipeline;
    std::string error;
    std::optional<plan::Plan> proto = compileModelFile(path, compile, error);
    if (!proto) {
      while (!error.empty() && error.back() == '\n')
        error.pop_back();
      return runtime::invalidArgument(
          error.empty() ? "'" + path + "': cannot compile" : error);
    }
    return Plan::fromProto(std::move(*proto), path);
#else
    (void)options;
    return runtime::unimplemented(
        "'", path, "': this gopt-run cannot compile ", ext,
        " models; compile it first with gopt-translate --emit-plan ", path,
        " -o MODEL.gplan");
#endif
  }
  return runtime::invalidArgument(
      "'", path, "': unknown model file type '", ext,
      "' (expected .gplan, or .mlir/.onnx/.pb/.pbtxt with the compiler)");
}

} // namespace gopt::run
