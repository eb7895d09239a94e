//===- Passes.h - gopt graph rewrites ---------------------------*- C++ -*-===//

#ifndef GOPT_TRANSFORMS_PASSES_H
#define GOPT_TRANSFORMS_PASSES_H

#include "gopt/Dialect/Gopt/IR/GoptDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include <memory>
#include <optional>

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace gopt {

/// The values of the passes' and gopt-optimize's enum options. Each option
/// lists its spellings (`gopt-opt --help`); any other value is rejected, in
/// one line naming the option and its values, when the pipeline is parsed.
enum class TargetDevice { Cpu, Gpu };
enum class DataFormat { NCHW, NHWC, Auto };
/// F32 as ConvertLayout's `precision` means "the graph's own type".
enum class Precision { F32, BF16, F16 };
enum class WeightGranularity { PerChannel, PerTensor };
enum class QuantizeMode { Static };
enum class LossKind { SoftmaxCrossEntropy, Mse };
enum class LabelType { I64, I32 };
enum class OptimizerKind { Sgd, Adam };

/// "cpu" or "gpu", as devices are named in the IR.
llvm::StringRef stringifyTargetDevice(TargetDevice device);

/// Pass::initializeOptions for a pass with enum options: an unknown value
/// becomes one diagnostic through `errorHandler` ("gopt-convert-layout:
/// unknown layout 'x' (expected NCHW, NHWC or auto)"), instead of llvm::cl's
/// line on stderr followed by an empty error.
mlir::LogicalResult initializeEnumOptions(
    mlir::Pass &pass, llvm::StringRef options,
    llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> errorHandler);

/// PassOptions::parseFromString for the options of pipeline `name`, with
/// errors reported as by initializeEnumOptions.
mlir::LogicalResult parseEnumOptions(
    mlir::detail::PassOptions &options, llvm::StringRef text,
    llvm::StringRef name,
    llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> errorHandler);

} // namespace gopt

// llvm::cl's enum parser says only "Cannot find option named 'x'!"; these
// list the values instead (PassOptions.cpp).
namespace llvm::cl {
#define GOPT_DECLARE_ENUM_OPTION_PARSER(T)                                     \
  template <>                                                                  \
  bool parser<T>::parse(Option &option, StringRef argName, StringRef arg,      \
                        T &value);
GOPT_DECLARE_ENUM_OPTION_PARSER(gopt::TargetDevice)
GOPT_DECLARE_ENUM_OPTION_PARSER(gopt::DataFormat)
GOPT_DECLARE_ENUM_OPTION_PARSER(gopt::Precision)
GOPT_DECLARE_ENUM_OPTION_PARSER(gopt::WeightGranularity)
GOPT_DECLARE_ENUM_OPTION_PARSER(gopt::QuantizeMode)
GOPT_DECLARE_ENUM_OPTION_PARSER(gopt::LossKind)
GOPT_DECLARE_ENUM_OPTION_PARSER(gopt::LabelType)
GOPT_DECLARE_ENUM_OPTION_PARSER(gopt::OptimizerKind)
#undef GOPT_DECLARE_ENUM_OPTION_PARSER
} // namespace llvm::cl

namespace gopt {

#define GEN_PASS_DECL
#include "gopt/Transforms/Passes.h.inc"

/// Patterns of the passes, for reuse in other pattern sets.
void populateFuseBatchNormPatterns(mlir::RewritePatternSet &patterns);
void populateFoldBatchNormPatterns(mlir::RewritePatternSet &patterns,
                                   bool foldMatmulScale = true);
void populateFuseConvBiasActivationPatterns(mlir::RewritePatternSet &patterns,
                                            bool poolBeforeConv = true);
/// Sink transposes through layout-agnostic and axis-carrying ops and fold
/// transposes of constants (convert-layout's second phase).
void populateTransposeSinkingPatterns(mlir::RewritePatternSet &patterns);

/// Options of the `gopt-optimize` pipeline.
struct OptimizePipelineOptions {
  TargetDevice target = TargetDevice::Gpu;
  Precision precision = Precision::F32;
  /// Unset: NHWC for bf16/f16 on the gpu target (tensor cores), else NCHW.
  std::optional<DataFormat> layout;
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
