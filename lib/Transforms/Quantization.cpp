//===- Quantization.cpp - Shared int8 quantization helpers ----------------===//
//
// Symmetric int8 weights, per output channel (or per tensor):
//   scale = max|w| / 127 (1 for an all-zero channel),
//   q = clamp(round(w / scale), -127, 127), w ~ q * scale,
// so each weight is off by at most scale / 2.
//
//===----------------------------------------------------------------------===//

#include "Quantization.h"
#include "HostTensor.h"
#include "PatternUtils.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Format.h"
#include <cmath>

using namespace mlir;
using namespace gopt;

namespace {

/// The axis of weight operand 1 of `user` that indexes the output channels:
/// conv2d OIHW 0, HWIO 3; matmul N (the last axis, or the one before with
/// transpose_b). nullopt when `user` has no such weight.
std::optional<int64_t> getOutputChannelAxis(Operation *user,
                                            RankedTensorType weight) {
  if (auto conv = dyn_cast<Conv2DOp>(user)) {
    if (weight.getRank() != 4)
      return std::nullopt;
    return conv.getFilterFormat() == "OIHW" ? 0 : 3;
  }
  if (auto matmul = dyn_cast<MatMulOp>(user)) {
    int64_t rank = weight.getRank();
    if (rank < 2)
      return std::nullopt;
    return matmul.getTransposeB() ? rank - 2 : rank - 1;
  }
  return std::nullopt;
}

struct QuantizedWeight {
  HostTensor values; // i8
  HostTensor scales; // f32, [channels]
};

/// Symmetric int8 quantization of `w` with one scale per slice along `axis`,
/// or one for the whole tensor when `perTensor`. nullopt when a weight is
/// NaN or infinite (no scale represents it).
std::optional<QuantizedWeight> quantize(const HostTensor &w, int64_t axis,
                                        bool perTensor, MLIRContext *context) {
  int64_t n = w.numElements();
  int64_t channels = perTensor ? 1 : w.shape[axis];
  int64_t inner = 1;
  if (!perTensor)
    for (int64_t d = axis + 1, rank = w.shape.size(); d < rank; ++d)
      inner *= w.shape[d];
  auto channelOf = [&](int64_t i) {
    return perTensor ? 0 : (i / inner) % channels;
  };

  SmallVector<double> maxAbs(channels, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    double v = w.floats[i];
    if (!std::isfinite(v))
      return std::nullopt;
    maxAbs[channelOf(i)] = std::max(maxAbs[channelOf(i)], std::fabs(v));
  }

  QuantizedWeight q;
  q.scales = HostTensor::zeros({channels}, Float32Type::get(context));
  for (int64_t c = 0; c < channels; ++c) {
    // Rounded to f32 first: the runtime multiplies by the stored f32 scale.
    float scale = static_cast<float>(maxAbs[c] / 127.0);
    q.scales.floats[c] = maxAbs[c] > 0.0 && scale > 0.0f ? scale : 1.0f;
  }
  q.values = HostTensor::zeros(w.shape, IntegerType::get(context, 8));
  for (int64_t i = 0; i < n; ++i) {
    double r = std::round(w.floats[i] / q.scales.floats[channelOf(i)]);
    q.values.ints[i] = static_cast<int64_t>(std::clamp(r, -127.0, 127.0));
  }
  return q;
}

} // namespace

std::string gopt::formatBytes(int64_t bytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (bytes < 1024)
    os << bytes << " B";
  else if (bytes < 1024 * 1024)
    os << llvm::format("%.1f KiB", static_cast<double>(bytes) / 1024);
  else
    os << llvm::format("%.1f MiB", static_cast<double>(bytes) / (1024 * 1024));
  return text;
}

WeightQuantizationResult gopt::quantizeConvMatmulWeights(func::FuncOp func,
                                                         bool perTensor,
                                                         int64_t minElements) {
  WeightQuantizationResult result;
  SmallVector<Operation *> users;
  func.walk([&](Operation *op) {
    if (isa<Conv2DOp, MatMulOp>(op))
      users.push_back(op);
  });

  // One int8 constant and dequantize per (weight constant, axis), shared
  // by every conv/matmul that uses the weight.
  llvm::DenseMap<std::pair<Operation *, int64_t>, Value> dequantized;
  llvm::SmallPtrSet<Operation *, 8> belowMin, nonFinite, replaced;
  int64_t bytesBefore = 0, bytesAfter = 0;
  for (Operation *user : users) {
    OpOperand &use = user->getOpOperand(1);
    auto constant = use.get().getDefiningOp<ConstantOp>();
    if (!constant)
      continue;
    auto type = cast<RankedTensorType>(constant.getType());
    if (!type.getElementType().isF32() || !type.hasStaticShape() ||
        type.getNumElements() == 0)
      continue;
    std::optional<int64_t> axis = getOutputChannelAxis(user, type);
    if (!axis)
      continue;
    if (type.getNumElements() < minElements) {
      belowMin.insert(constant);
      continue;
    }
    int64_t key = perTensor ? -1 : *axis;
    auto it = dequantized.find({constant, key});
    if (it != dequantized.end()) {
      use.set(it->second);
      continue;
    }
    std::optional<HostTensor> weight = readConstant(constant);
    if (!weight)
      continue;
    std::optional<QuantizedWeight> q =
        quantize(*weight, *axis, perTensor, func.getContext());
    if (!q) {
      nonFinite.insert(constant);
      continue;
    }

    // Right before the first user (users are visited in program order),
    // so the runtime's memory planner keeps each dequantized f32 weight
    // alive only from there to its last use, not all of them from the
    // start of the graph.
    OpBuilder builder(constant);
    if (user->getBlock() == constant->getBlock())
      builder.setInsertionPoint(user);
    else
      builder.setInsertionPointAfter(constant);
    Location loc = constant.getLoc();
    auto values = builder.create<ConstantOp>(withNameSuffix(loc, "/int8"),
                                             writeConstant(q->values));
    auto scales = builder.create<ConstantOp>(withNameSuffix(loc, "/scales"),
                                             writeConstant(q->scales));
    auto dequantize = builder.create<DequantizeOp>(
        withNameSuffix(loc, "/dequantize"), type, values, scales,
        builder.getI64IntegerAttr(perTensor ? 0 : *axis));
    dequantized[{constant, key}] = dequantize.getResult();
    use.set(dequantize.getResult());
    replaced.insert(constant);
    result.bytesBefore += type.getNumElements() * 4;
    result.bytesAfter += type.getNumElements() + q->scales.numElements() * 4;
    ++result.quantized;
  }

  // Weights whose every use now reads the dequantized copy.
  for (Operation *constant : replaced)
    if (constant->use_empty())
      constant->erase();

  // Weights whose every use now reads the dequantized copy.
  for (Operation *constant : replaced)
    if (constant->use_empty())
      constant->erase();
  result.belowMinElements = belowMin.size();
  result.nonFinite = nonFinite.size();
  return result;
}
