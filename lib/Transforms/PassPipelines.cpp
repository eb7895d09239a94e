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
using namespace gopt;

namespace {
struct OptimizeOptions : public PassPipelineOptions<OptimizeOptions> {
  Option<gopt::TargetDevice> target{
      *this, "target", llvm::cl::desc("Device to optimize for"),
      llvm::cl::init(gopt::TargetDevice::Gpu),
      llvm::cl::values(
          clEnumValN(gopt::TargetDevice::Cpu, "cpu", "the CPU"),
          clEnumValN(gopt::TargetDevice::Gpu, "gpu", "a CUDA GPU"))};
  Option<gopt::Precision> precision{
      *this, "precision",
      llvm::cl::desc("Element type conv2d/matmul and their neighbours run "
                     "in (bf16/f16: gopt-mixed-precision, and NHWC on the "
                     "gpu target)"),
      llvm::cl::init(gopt::Precision::F32),
      llvm::cl::values(clEnumValN(gopt::Precision::F32, "f32", "float"),
                       clEnumValN(gopt::Precision::BF16, "bf16", "bfloat16"),
                       clEnumValN(gopt::Precision::F16, "f16", "IEEE half"))};
  Option<gopt::DataFormat> layout{
      *this, "layout",
      llvm::cl::desc("Data format the graph is converted to; default: NHWC "
                     "for f16/bf16 on the gpu target, else NCHW"),
      llvm::cl::init(gopt::DataFormat::NCHW),
      llvm::cl::values(
          clEnumValN(gopt::DataFormat::NCHW, "NCHW", "channels first"),
          clEnumValN(gopt::DataFormat::NHWC, "NHWC", "channels last"),
          clEnumValN(gopt::DataFormat::Auto, "auto",
                     "per element type and target, with a remark"))};
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
  bool lowPrecision = options.precision != Precision::F32;
  layout.layout = options.layout ? *options.layout
                  : lowPrecision && options.target == TargetDevice::Gpu
                      ? DataFormat::NHWC
                      : DataFormat::NCHW;
  // Except a graph that works channels-last between its convolutions
  // (ConvNeXt): NCHW would keep transposes in every block. f32 on the cpu
  // only, where it was measured; an explicit layout is kept as given.
  layout.channelsLastIfFewerTransposes =
      !options.layout && !lowPrecision && options.target == TargetDevice::Cpu;
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
  // Registered by hand rather than with PassPipelineRegistration so that a
  // bad option value is one diagnostic, as for the passes.
  registerPassPipeline(
      "gopt-optimize",
      "gopt's default inference pipeline: strip debug ops, fold constants, "
      "fuse and fold batch norm, convert layout, fuse conv + bias + "
      "activation (then mixed precision with precision=bf16|f16)",
      [](OpPassManager &pm, StringRef optionsString,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        OptimizeOptions options;
        if (failed(parseEnumOptions(options, optionsString, "gopt-optimize",
                                    errorHandler)))
          return failure();
        OptimizePipelineOptions o;
        o.target = options.target;
        o.precision = options.precision;
        if (options.layout.hasValue())
          o.layout = static_cast<DataFormat>(options.layout);
        o.report = options.report;
        buildOptimizePipeline(pm, o);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(OptimizeOptions());
      });
}
