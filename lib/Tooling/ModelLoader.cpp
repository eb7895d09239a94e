//===- ModelLoader.cpp - Turn a model file into a plan --------------------===//
//
// The one place where gopt-run learns about model formats. A build with the
// compiler adds, under GOPT_HAVE_COMPILER, a function that imports a graph
// file, runs the default pipeline for options.backend and lowers to a plan
// in memory; everything else in gopt-run only sees the resulting Plan.
//
//===----------------------------------------------------------------------===//
#include "gopt/Tooling/ModelLoader.h"
#include "gopt/Tooling/FileExtension.h"
#include "gopt/runtime/CpuInfo.h"

#ifdef GOPT_HAVE_COMPILER
#include "gopt/Driver/CompileModel.h"
#endif

#include <algorithm>
#include <cstdio>

namespace gopt::tooling {

using runtime::Plan;
using runtime::StatusOr;

StatusOr<Plan> loadModelAsPlan(const std::string &path,
                               const ModelLoadOptions &options) {
  std::string ext = fileExtension(path);
  if (ext == ".gplan")
    return Plan::loadFromFile(path);
  if (ext == ".mlir" || ext == ".mlirbc" || ext == ".onnx" || ext == ".pb" ||
      ext == ".pbtxt") {
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
      "' (expected .gplan, or .mlir/.mlirbc/.onnx/.pb/.pbtxt with the "
      "compiler)");
}

// A bf16 plan (mixed precision) is only fast where oneDNN has bf16
// instructions, an f16 plan never is on the CPU, and a static int8 plan
// needs VNNI or AMX; say so once, on stderr.
void warnIfReducedPrecisionIsSlow(const runtime::Plan &plan,
                                  const std::string &backend) {
  static bool warned = false;
  if (warned || backend != "cpu")
    return;
  bool hasBf16 = false, hasF16 = false, hasQuantize = false;
  for (const auto &tensor : plan.proto().tensors()) {
    hasBf16 |= runtime::fromProtoDType(tensor.dtype()) == runtime::DType::kBF16;
    hasF16 |= runtime::fromProtoDType(tensor.dtype()) == runtime::DType::kF16;
  }
  for (const auto &op : plan.proto().ops())
    hasQuantize |= op.kind() == "quantize";
  if (hasQuantize && !runtime::cpuInt8DotProduct()) {
    warned = true;
    std::fprintf(stderr,
                 "gopt-run: remark: this CPU has no int8 dot-product "
                 "instructions (VNNI or AMX; oneDNN uses %s): int8 convs and "
                 "matmuls run as f32 ops on the dequantized values, no faster "
                 "than f32\n",
                 runtime::cpuIsaName().c_str());
  }
  runtime::Bf16Support support = runtime::cpuBf16Support();
  if (hasF16) {
    warned = true;
    std::fprintf(stderr, "gopt-run: remark: f16 ops run on the reference "
                         "kernels on the CPU, far slower than f32; use "
                         "precision=bf16 or f32 here\n");
  } else if (hasBf16 && support != runtime::Bf16Support::kNative) {
    warned = true;
    std::fprintf(stderr,
                 "gopt-run: remark: this CPU has no bf16 instructions (oneDNN "
                 "uses %s): bf16 ops run %s, slower than f32; use "
                 "precision=f32 here\n",
                 runtime::cpuIsaName().c_str(),
                 support == runtime::Bf16Support::kEmulated
                     ? "emulated"
                     : "on the reference kernels");
  }
}

} // namespace gopt::tooling
