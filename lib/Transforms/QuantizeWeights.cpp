//===- QuantizeWeights.cpp - Weight-only int8 quantization ----------------===//
//
// Large constant f32 weights of conv2d and matmul become an int8 constant,
// f32 scales and a gopt.dequantize at the use (Quantization.h): the plan
// stores one byte per weight instead of four, and the ops still compute in
// f32.
//
//===----------------------------------------------------------------------===//

#include "Quantization.h"
#include "Report.h"
#include "gopt/Transforms/Passes.h"

namespace gopt {
#define GEN_PASS_DEF_QUANTIZEWEIGHTS
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

struct QuantizeWeightsPass
    : public gopt::impl::QuantizeWeightsBase<QuantizeWeightsPass> {
  using QuantizeWeightsBase::QuantizeWeightsBase;

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    return initializeEnumOptions(*this, options, errorHandler);
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (bits != 8) {
      // On the location, not the op: MlirOptMain would print the whole
      // function after the error.
      emitError(func.getLoc())
          << "gopt-quantize-weights: bits=" << static_cast<int64_t>(bits)
          << " is not supported (only 8-bit weights, bits=8)";
      return signalPassFailure();
    }
    if (minElements < 0) {
      emitError(func.getLoc())
          << "gopt-quantize-weights: min-elements must be >= 0, got "
          << static_cast<int64_t>(minElements);
      return signalPassFailure();
    }
    bool perTensor = granularity == WeightGranularity::PerTensor;

    WeightQuantizationResult result =
        quantizeConvMatmulWeights(func, perTensor, minElements);
    numQuantized += result.quantized;
    std::string message = "quantized " + plural(result.quantized, "weight") +
                          " to int8 (" + formatBytes(result.bytesBefore) +
                          " -> " + formatBytes(result.bytesAfter) + ")";
    if (result.belowMinElements)
      message += ", left " + std::to_string(result.belowMinElements) +
                 " below min-elements";
    if (result.nonFinite)
      message += ", left " + std::to_string(result.nonFinite) +
                 " with NaN or infinite values";
    reportChanges(func, report, getArgument(), message);
  }
};

} // namespace
