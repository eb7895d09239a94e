//===- ShapeInference.h - Shape functions of gopt ops -----------*- C++ -*-===//
//
// Free functions that compute result shapes from operand shapes and
// attributes, and report invalid combinations. The ops' inferReturnTypes call
// them, so builders and the verifier share one implementation (StableHLO's
// TypeInference.cpp does the same); unit tests call them directly.
//
// Dynamic dimensions are mlir::ShapedType::kDynamic and propagate.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_SHAPEINFERENCE_H
#define GOPT_DIALECT_GOPT_IR_SHAPEINFERENCE_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
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

private:
  std::optional<mlir::Location> loc;
  llvm::StringRef opName;
};

/// Layout of a 4-D activation: where N, C, H and W live.
struct Layout {
  int64_t n, c, h, w;
};

/// Parses "NHWC"/"NCHW".
mlir::FailureOr<Layout> parseDataFormat(llvm::StringRef format,
                                        const ShapeError &error);

/// Channel axis of a rank-`rank` activation in `format` (rank 2: axis 1).
int64_t getChannelAxis(llvm::StringRef format, int64_t rank);

/// Parameters of a 2-D window (convolution or pooling), in (H, W) order.
struct WindowParams {
  llvm::SmallVector<int64_t, 2> kernel;
  llvm::SmallVector<int64_t, 2> strides;
  llvm::SmallVector<int64_t, 2> dilations;
  llvm::StringRef padding;            // "EXPLICIT", "SAME" or "VALID"
  llvm::SmallVector<int64_t, 4> pads; // top, bottom, left, right
  bool ceilMode = false;
};

/// Checks the window attributes (sizes, signs, known padding mode).
mlir::LogicalResult verifyWindowParams(const WindowParams &params,
                                       const ShapeError &error);

/// Output size of one spatial dimension (index 0 = H, 1 = W).
mlir::FailureOr<int64_t> inferWindowOutputSize(int64_t inputSize,
                                               const WindowParams &params,
                                               unsigned spatialIndex,
                                               const ShapeError &error);

/// Resolved (before, after) padding of one spatial dimension; for "SAME"
/// this needs a static input size.
std::pair<int64_t, int64_t> resolvePadding(int64_t inputSize,
                                           const WindowParams &params,
                                           unsigned spatialIndex);

/// Numpy broadcasting of two shapes.
mlir::LogicalResult inferBroadcastShape(llvm::ArrayRef<int64_t> lhs,
                                        llvm::ArrayRef<int64_t> rhs,
                                        Shape &result, const ShapeError &error);

struct Conv2DParams {
  WindowParams window; // kernel is taken from the filter
  int64_t groups = 1;
  llvm::StringRef dataFormat = "NHWC";
  llvm::StringRef filterFormat = "HWIO";
  llvm::StringRef activation = "none";
};

mlir::LogicalResult
inferConv2DShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> filter,
                 std::optional<llvm::ArrayRef<int64_t>> bias,
                 Conv2DParams params, Shape &result, const ShapeError &error);

mlir::LogicalResult inferPoolShape(llvm::ArrayRef<int64_t> input,
                                   const WindowParams &params,
                                   llvm::StringRef dataFormat, Shape &result,
                                   const ShapeError &error);

/// Checks the per-channel operands (rank 1, size C) of a channel-wise op.
mlir::LogicalResult verifyChannelOperand(llvm::ArrayRef<int64_t> operand,
                                         int64_t channels,
                                         llvm::StringRef operandName,
                                         const ShapeError &error);

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
