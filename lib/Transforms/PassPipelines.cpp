//===- PassPipelines.cpp - gopt's default pipeline ------------------------===//
//
// --gopt-optimize: the passes in the order that lets each see what the last
// made: debug ops go first so patterns match across them, constant folding
// exposes frozen BN arithmetic to the BN fusion, layout conversion works on
// fused batch norms, and BN folding needs conv and BN in one layout.
//
//===----------------------------------------------------------------------===//

#include "gopt/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
struct OptimizeOptions : public PassPipelineOptions<OptimizeOptions> {
  Option<std::string> target{
      *this, "target", llvm::cl::desc("Device to optimize for: cpu or gpu"),
      llvm::cl::init("gpu")};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("Element type conv2d/matmul and their neighbours run "
                     "in: f32, or bf16/f16 (gopt-mixed-precision, and NHWC "
                     "on the gpu target)"),
      llvm::cl::init("f32")};
  Option<std::string> layout{
      *this, "layout",
      llvm::cl::desc("Data format the graph is converted to: NCHW, NHWC or "
                     "auto (chosen per element type and target, with a "
                     "remark saying why); default: NHWC for f16/bf16 on the "
                     "gpu target, else NCHW"),
      llvm::cl::init("")};
  Option<bool> report{
      *this, "report",
      llvm::cl::desc("Every gopt pass reports what it changed as a remark "
                     "(as --gopt-report does)"),
      llvm::cl::init(false)};
};
} // namespace

void gopt::buildOptimizePipeline(OpPassManager &pm,
                                 const OptimizePipelineOptions &options) {
  // `func.func(gopt-optimize)` must optimize that function: nesting another
  // func.func inside it would match nothing and silently run nothing.
  OpPassManager &fpm = pm.getOpName() == func::FuncOp::getOperationName()
                           ? pm
                           : pm.nest<func::FuncOp>();
  bool report = options.report;
  StripDebugOpsOptions strip;
  strip.report = report;
  FoldConstantsOptions fold;
  fold.report = report;
  FuseBatchNormOptions fuseBn;
  fuseBn.report = report;
  ConvertLayoutOptions layout;
  // Tensor cores want f16/bf16 activations in NHWC; everything else runs
  // fastest NCHW (cuDNN's f32 kernels, and the CPU schedule's oneDNN
  // blocked layouts in any precision). layout=auto lets the pass decide
  // from the graph's element type and say why.
  bool lowPrecision = options.precision != "f32";
  layout.layout = !options.layout.empty()                   ? options.layout
                  : lowPrecision && options.target == "gpu" ? "NHWC"
                                                            : "NCHW";
  layout.target = options.target;
  layout.precision = options.precision;
  layout.report = report;
  FoldBatchNormOptions foldBn;
  foldBn.report = report;
  FuseConvBiasActivationOptions fuseConv;
  fuseConv.report = report;

  fpm.addPass(createStripDebugOps(strip));
  fpm.addPass(createCanonicalizerPass());
  fpm.addPass(createFoldConstants(fold));
  fpm.addPass(createFuseBatchNorm(fuseBn));
  fpm.addPass(createCanonicalizerPass());
  fpm.addPass(createCSEPass());
  fpm.addPass(createConvertLayout(layout));
  fpm.addPass(createCanonicalizerPass());
  fpm.addPass(createFoldBatchNorm(foldBn));
  fpm.addPass(createFoldConstants(fold));
  fpm.addPass(createFuseConvBiasActivation(fuseConv));
  fpm.addPass(createCanonicalizerPass());
  fpm.addPass(createCSEPass());
  // Last, so the fused ops move as a whole and folded constants are
  // converted once.
  if (lowPrecision) {
    MixedPrecisionOptions mixed;
    mixed.type = options.precision;
    mixed.report = report;
    fpm.addPass(createMixedPrecision(mixed));
    fpm.addPass(createCanonicalizerPass());
  }
}

void gopt::registerOptimizePipeline() {
  PassPipelineRegistration<OptimizeOptions>(
      "gopt-optimize",
      "gopt's default inference pipeline: strip debug ops, fold constants, "
      "fuse and fold batch norm, convert layout, fuse conv + bias + "
      "activation (then mixed precision with precision=bf16|f16)",
      [](OpPassManager &pm, const OptimizeOptions &options) {
        OptimizePipelineOptions o;
        o.target = options.target;
        o.precision = options.precision;
        o.layout = options.layout;
        o.report = options.report;
        buildOptimizePipeline(pm, o);
      });
}
