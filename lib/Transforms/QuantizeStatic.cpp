//===- QuantizeStatic.cpp - int8 activations from calibrated ranges -------===//
//
// --gopt-quantize=mode=static: the explicit Q/DQ form. Each f32 activation
// a conv2d or matmul reads or writes gets one quantize/dequantize pair after
// its definition, and every user (not the function's return) reads the
// dequantized value: the graph computes exactly what int8 storage of that
// activation gives, and a backend can fuse DQ -> conv -> Q into one int8
// kernel. Scales are per tensor, symmetric: threshold / 127, the threshold
// coming from gopt-run --calibrate's file, matched by plan tensor name.
//
//===----------------------------------------------------------------------===//

#include "HostTensor.h"
#include "PatternUtils.h"
#include "Quantization.h"
#include "Report.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/PlanNames.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include <cmath>
#include <cstdio>

namespace gopt {
#define GEN_PASS_DEF_QUANTIZE
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

/// `v` as the calibration file would spell it (%g, up to 9 digits).
static std::string formatNumber(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", v);
  return buffer;
}

/// The thresholds of a gopt-run --calibrate file, by plan tensor name.
/// Errors name the file and what was expected.
FailureOr<llvm::StringMap<double>> readCalibration(StringRef path,
                                                   Location loc) {
  auto fail = [&](const Twine &message) {
    emitError(loc) << "gopt-quantize: calibration file '" << path
                   << "': " << message;
    return failure();
  };
  if (path.empty())
    return emitError(loc) << "gopt-quantize: mode=static needs "
                             "calibration=FILE (from gopt-run --calibrate)",
           failure();
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail(buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail("not JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root || root->getString("format") != "gopt-calibration")
    return fail("expected an object with \"format\": \"gopt-calibration\"");
  if (root->getInteger("version") != 1)
    return fail("expected \"version\": 1");
  const llvm::json::Object *tensors = root->getObject("tensors");
  if (!tensors)
    return fail("expected a \"tensors\" object");
  llvm::StringMap<double> thresholds;
  for (const auto &[name, entry] : *tensors) {
    const llvm::json::Object *range = entry.getAsObject();
    std::optional<double> threshold =
        range ? range->getNumber("threshold") : std::nullopt;
    if (!threshold)
      return fail("tensor '" + name.str() + "' has no numeric \"threshold\"");
    // 0 is an all-zero tensor (a zero-width range, handled per tensor);
    // negative or beyond f32 is a broken file.
    if (!(*threshold >= 0) || !std::isfinite(static_cast<float>(*threshold)))
      return fail("tensor '" + name.str() + "' has \"threshold\" " +
                  formatNumber(*threshold) +
                  ", expected a finite non-negative f32 number");
    thresholds[name.str()] = *threshold;
  }
  return thresholds;
}

struct QuantizePass : public gopt::impl::QuantizeBase<QuantizePass> {
  using QuantizeBase::QuantizeBase;

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    return initializeEnumOptions(*this, options, errorHandler);
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    FailureOr<llvm::StringMap<double>> thresholds =
        readCalibration(calibration, func.getLoc());
    if (failed(thresholds))
      return signalPassFailure();

    // Names first: the pass adds ops, which would shift the `<kind>_<n>`
    // names of unnamed ops.
    llvm::DenseMap<Value, std::string> names = getPlanTensorNames(func);
    llvm::SetVector<Value> activations = collectActivations(func);
    int64_t matched = 0;
    for (Value value : activations)
      matched += thresholds->count(names.lookup(value));
    if (matched == 0 && !activations.empty()) {
      emitError(func.getLoc())
          << "gopt-quantize: calibration file '" << calibration
          << "' matches none of the graph's " << activations.size()
          << " conv2d/matmul activations (e.g. '"
          << names.lookup(activations.front())
          << "'): it was made for another graph or another pipeline";
      return signalPassFailure();
    }

    int64_t quantized = 0, leftF32 = 0;
    // The scale of each dequantized value the pass made.
    llvm::DenseMap<Value, float> scales;
    for (Value value : activations) {
      // A max_pool of a quantized value keeps its scale (as ONNX Runtime's
      // quantizer does): pooling the int8 values is then exact, and a
      // backend pools int8 without requantizing.
      if (auto pool = value.getDefiningOp<MaxPoolOp>()) {
        auto it = scales.find(pool.getX());
        if (it != scales.end()) {
          float scale = it->second;
          scales[insertQuantizeDequantize(value, scale)] = scale;
          ++quantized;
          continue;
        }
      }
      std::string name = names.lookup(value);
      auto it = thresholds->find(name);
      double threshold = it == thresholds->end() ? 0.0 : it->second;
      // A threshold so small that threshold / 127 rounds to 0 in f32 is as
      // unusable as 0.
      float scale = static_cast<float>(threshold / 127.0);
      bool usable = scale > 0.0f && std::isfinite(scale);
      if (!usable) {
        Location loc = getLoc(value);
        std::string why = it == thresholds->end()
                              ? "has no range in the calibration file"
                              : "has a range of zero width (threshold " +
                                    formatNumber(threshold) + ")";
        if (!fallback) {
          emitError(loc) << "gopt-quantize: tensor '" << name << "' " << why
                         << " (fallback=true leaves it in f32)";
          return signalPassFailure();
        }
        emitRemark(loc) << "gopt-quantize: left tensor '" << name
                        << "' in f32: it " << why;
        ++leftF32;
        continue;
      }
      scales[insertQuantizeDequantize(value, scale)] = scale;
      ++quantized;
    }
    WeightQuantizationResult weights =
        quantizeConvMatmulWeights(func, /*perTensor=*/false, /*minElements=*/1);
    numActivations += quantized;
    reportChanges(func, report, getArgument(),
                  "stored " + plural(quantized, "activation") + " and " +
                      plural(weights.quantized, "weight") + " in int8" +
                      (leftF32 ? ", left " + std::to_string(leftF32) +
                                     " activations in f32"
                               : ""));
  }

private:
  /// The f32 activations (not constants) that conv2d and matmul read or
  /// write, in program order.
  static llvm::SetVector<Value> collectActivations(func::FuncOp func) {
    llvm::SetVector<Value> values;
    auto isActivation = [](Value v) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      return type && type.getElementType().isF32() &&
             !v.getDefiningOp<ConstantOp>();
    };
    func.walk([&](Operation *op) {
      if (!isa<Conv2DOp, MatMulOp>(op))
        return;
      // conv2d's bias stays f32 (an int8 kernel adds it in the int32/f32
      // accumulator); matmul's second operand is an activation when it is
      // not a constant weight.
      unsigned count = isa<Conv2DOp>(op) ? 2 : op->getNumOperands();
      for (Value operand : op->getOperands().take_front(count))
        if (isActivation(operand))
          values.insert(operand);
      for (Value result : op->getResults())
        if (isActivation(result))
          values.insert(result);
    });
    return values;
  }

  static Location getLoc(Value value) {
    if (Operation *def = value.getDefiningOp())
      return def->getLoc();
    return value.getLoc();
  }

  /// value -> quantize -> dequantize after its definition; every user but
  /// the function's return reads the dequantized value, which is returned.
  Value insertQuantizeDequantize(Value value, float scale) {
    OpBuilder b(&getContext());
    b.setInsertionPointAfterValue(value);
    Location loc = getLoc(value);
    auto type = cast<RankedTensorType>(value.getType());
    auto scaleType = RankedTensorType::get({1}, b.getF32Type());
    auto scales = b.create<ConstantOp>(
        withNameSuffix(loc, "/scale"),
        DenseElementsAttr::get(scaleType, ArrayRef<float>(scale)));
    auto quantize = b.create<QuantizeOp>(withNameSuffix(loc, "/quantize"),
                                         type.clone(b.getI8Type()), value,
                                         scales, b.getI64IntegerAttr(0));
    auto dequantize =
        b.create<DequantizeOp>(withNameSuffix(loc, "/dequantize"), type,
                               quantize, scales, b.getI64IntegerAttr(0));
    value.replaceUsesWithIf(dequantize, [&](OpOperand &use) {
      return use.getOwner() != quantize && !isa<func::ReturnOp>(use.getOwner());
    });
    return dequantize;
  }
};

} // namespace
