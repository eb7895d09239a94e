//===- Passes.h - gopt graph rewrites ---------------------------*- C++ -*-===//

#ifndef GOPT_TRANSFORMS_PASSES_H
#define GOPT_TRANSFORMS_PASSES_H

#include "gopt/Dialect/Gopt/IR/GoptDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include <memory>

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace gopt {

#define GEN_PASS_DECL
#include "gopt/Transforms/Passes.h.inc"

/// Patterns of the passes, for reuse in other pattern sets.
void populateFuseBatchNormPatterns(mlir::RewritePatternSet &patterns);
void populateFoldBatchNormPatterns(mlir::RewritePatternSet &patterns);
void populateFuseConvBiasActivationPatterns(mlir::RewritePatternSet &patterns);
/// Sink transposes through layout-agnostic and axis-carrying ops and fold
/// transposes of constants (convert-layout's second phase).
void populateTransposeSinkingPatterns(mlir::RewritePatternSet &patterns);

/// Options of the `gopt-optimize` pipeline.
struct OptimizePipelineOptions {
  std::string target = "gpu";
  std::string precision = "f32";
  /// NCHW, NHWC or auto; empty: NHWC for bf16/f16 on the gpu target (tensor
  /// cores), else NCHW.
  std::string layout;
  /// Every pass reports what it changed as a remark.
  bool report = false;
};

/// Adds the default pipeline to `pm`: on `pm`'s own function when it is
/// anchored on func.func (`func.func(gopt-optimize)`), otherwise on every
/// function nested in its op (`builtin.module(gopt-optimize)`).
void buildOptimizePipeline(mlir::OpPassManager &pm,
                           const OptimizePipelineOptions &options);

/// Registers `--gopt-optimize`.
void registerOptimizePipeline();

/// registerGoptPasses() and one register function per pass (in a namespace
/// of their own: gopt::registerGoptPasses in InitGopt.h registers more).
namespace registration {
#define GEN_PASS_REGISTRATION
#include "gopt/Transforms/Passes.h.inc"
} // namespace registration

} // namespace gopt

#endif // GOPT_TRANSFORMS_PASSES_H
