//===- ShapeInference.h - Shape functions of gopt ops -----------*- C++ -*-===//
//
// The ops' shape functions for the dialect: MLIR-typed adapters over the
// shared, MLIR-free implementation in gopt/Shape/ShapeFunctions.h, which the
// runtime's shape resolution runs too. The ops' inferReturnTypes call them,
// so builders and the verifier share one implementation (StableHLO's
// TypeInference.cpp does the same); a failure's message becomes a
// diagnostic through ShapeError.
//
// Dynamic dimensions are mlir::ShapedType::kDynamic (shape::kDynamic) and
// propagate.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_SHAPEINFERENCE_H
#define GOPT_DIALECT_GOPT_IR_SHAPEINFERENCE_H

#include "gopt/Shape/ShapeFunctions.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include <optional>

namespace gopt {

using Shape = llvm::SmallVector<int64_t, 4>;

/// Emits "'gopt.<op>' op <message>" at an optional location; without a
/// location (a builder probing types) errors stay silent.
class ShapeError {
public:
  ShapeError(std::optional<mlir::Location> loc, llvm::StringRef opName)
      : loc(loc), opName(opName) {}

  template <typename... Args>
  mlir::LogicalResult operator()(Args &&...args) const {
    if (!loc)
      return mlir::failure();
    mlir::InFlightDiagnostic diag = mlir::emitError(*loc);
    diag << "'" << opName << "' op ";
    (diag << ... << std::forward<Args>(args));
    return diag;
  }

  /// Success, or the shared shape function's message as a diagnostic.
  mlir::LogicalResult check(const shape::Result &result) const {
    if (result.ok())
      return mlir::success();
    return (*this)(result.message());
  }

private:
  std::optional<mlir::Location> loc;
  llvm::StringRef opName;
};

using shape::Conv2DParams;
using shape::Layout;
using shape::WindowParams;

/// Attribute values as the shared functions' parameters hold them.
inline shape::Dims toDims(llvm::ArrayRef<int64_t> values) {
  return shape::Dims(values.begin(), values.end());
}

/// Parses "NHWC"/"NCHW".
mlir::FailureOr<Layout> parseDataFormat(llvm::StringRef format,
                                        const ShapeError &error);

/// Channel axis of a rank-`rank` activation in `format` (rank 2: axis 1).
inline int64_t getChannelAxis(llvm::StringRef format, int64_t rank) {
  return shape::channelAxis(format, rank);
}

/// Checks the window attributes (sizes, signs, known padding mode).
inline mlir::LogicalResult verifyWindowParams(const WindowParams &params,
                                              const ShapeError &error) {
  return error.check(shape::verifyWindowParams(params));
}

/// Output size of one spatial dimension (index 0 = H, 1 = W).
mlir::FailureOr<int64_t> inferWindowOutputSize(int64_t inputSize,
                                               const WindowParams &params,
                                               unsigned spatialIndex,
                                               const ShapeError &error);

/// Resolved (before, after) padding of one spatial dimension; for "SAME"
/// this needs a static input size.
using shape::resolvePadding;

/// Numpy broadcasting of two shapes.
mlir::LogicalResult inferBroadcastShape(llvm::ArrayRef<int64_t> lhs,
                                        llvm::ArrayRef<int64_t> rhs,
                                        Shape &result, const ShapeError &error);

mlir::LogicalResult
inferConv2DShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> filter,
                 std::optional<llvm::ArrayRef<int64_t>> bias,
                 const Conv2DParams &params, Shape &result,
                 const ShapeError &error);

mlir::LogicalResult inferPoolShape(llvm::ArrayRef<int64_t> input,
                                   const WindowParams &params,
                                   llvm::StringRef dataFormat, Shape &result,
                                   const ShapeError &error);

/// Checks the per-channel operands (rank 1, size C) of a channel-wise op.
inline mlir::LogicalResult verifyChannelOperand(llvm::ArrayRef<int64_t> operand,
                                                int64_t channels,
                                                llvm::StringRef operandName,
                                                const ShapeError &error) {
  return error.check(
      shape::verifyChannelOperand(operand, channels, operandName));
}

mlir::LogicalResult inferMatMulShape(llvm::ArrayRef<int64_t> a,
                                     llvm::ArrayRef<int64_t> b, bool transposeA,
                                     bool transposeB, Shape &result,
                                     const ShapeError &error);

mlir::LogicalResult inferReduceShape(llvm::ArrayRef<int64_t> input,
                                     llvm::ArrayRef<int64_t> axes,
                                     bool keepDims, Shape &result,
                                     const ShapeError &error);

mlir::LogicalResult inferReshapeShape(llvm::ArrayRef<int64_t> input,
                                      llvm::ArrayRef<int64_t> shape,
                                      Shape &result, const ShapeError &error);

mlir::LogicalResult inferFlattenShape(llvm::ArrayRef<int64_t> input,
                                      int64_t axis, Shape &result,
                                      const ShapeError &error);

mlir::LogicalResult inferTransposeShape(llvm::ArrayRef<int64_t> input,
                                        llvm::ArrayRef<int64_t> perm,
                                        Shape &result, const ShapeError &error);

mlir::LogicalResult
inferConcatShape(llvm::ArrayRef<llvm::ArrayRef<int64_t>> inputs, int64_t axis,
                 Shape &result, const ShapeError &error);

mlir::LogicalResult inferSliceShape(llvm::ArrayRef<int64_t> input,
                                    llvm::ArrayRef<int64_t> starts,
                                    llvm::ArrayRef<int64_t> ends,
                                    llvm::ArrayRef<int64_t> steps,
                                    Shape &result, const ShapeError &error);

mlir::LogicalResult inferPadShape(llvm::ArrayRef<int64_t> input,
                                  llvm::ArrayRef<int64_t> pads,
                                  llvm::StringRef mode, Shape &result,
                                  const ShapeError &error);

/// gopt.dequantize: `values` of rank >= 1, `scales` rank 1 with one entry
/// (per-tensor) or one per slice along `axis` (per-channel). The result has
/// the shape of `values`.
mlir::LogicalResult inferDequantizeShape(llvm::ArrayRef<int64_t> values,
                                         llvm::ArrayRef<int64_t> scales,
                                         int64_t axis, Shape &result,
                                         const ShapeError &error);

/// Normalises `axis` in [-rank, rank) to [0, rank).
mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                       llvm::StringRef attrName,
                                       const ShapeError &error);

} // namespace gopt

#endif // GOPT_DIALECT_GOPT_IR_SHAPEINFERENCE_H
