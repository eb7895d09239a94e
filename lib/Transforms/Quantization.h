//===- Quantization.h - Shared int8 quantization helpers --------*- C++ -*-===//
//
// What --gopt-quantize-weights and --gopt-quantize share: symmetric int8
// quantization of constant conv2d/matmul weights (per output channel or per
// tensor) with a gopt.dequantize at the use.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_LIB_TRANSFORMS_QUANTIZATION_H
#define GOPT_LIB_TRANSFORMS_QUANTIZATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace gopt {

/// What quantizeConvMatmulWeights() changed.
struct WeightQuantizationResult {
  int64_t quantized = 0; // int8 constants made (shared weights count once)
  int64_t bytesBefore = 0, bytesAfter = 0;
  int64_t belowMinElements = 0; // weights left f32 for their size
  int64_t nonFinite = 0;        // weights left f32 for NaN/Inf values
};

/// Every constant f32 weight (operand 1) of a conv2d or matmul in `func`
/// with at least `minElements` elements becomes an int8 constant, f32
/// scales and a gopt.dequantize placed before its first user:
/// scale = max|w| / 127 per output channel (or per tensor), an all-zero
/// channel gets scale 1, q = clamp(round(w / scale), -127, 127).
WeightQuantizationResult quantizeConvMatmulWeights(mlir::func::FuncOp func,
                                                   bool perTensor,
                                                   int64_t minElements);

/// "812 B", "4.5 KiB", "11.2 MiB".
std::string formatBytes(int64_t bytes);

} // namespace gopt

#endif // GOPT_LIB_TRANSFORMS_QUANTIZATION_H
