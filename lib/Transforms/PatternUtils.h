//===- PatternUtils.h - Helpers shared by the rewrite patterns --*- C++ -*-===//

#ifndef GOPT_LIB_TRANSFORMS_PATTERNUTILS_H
#define GOPT_LIB_TRANSFORMS_PATTERNUTILS_H

#include "HostTensor.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"

#include "mlir/IR/PatternMatch.h"
#include <optional>

namespace gopt {

/// The value of a constant whose elements are all equal (a scalar or a
/// splat), as double.
std::optional<double> getScalarConstant(mlir::Value value);

/// True when `shape` broadcasts against a rank-`rank` activation as one value
/// per channel on `axis` (e.g. [C], [1,1,1,C], [C,1,1], [1,C,1,1]).
bool isPerChannelShape(llvm::ArrayRef<int64_t> shape, int64_t rank,
                       int64_t axis, int64_t channels);

/// `value` (per-channel, see above) as a [C] tensor: constants are reshaped
/// at compile time, other values through a gopt.reshape.
mlir::Value toChannelVector(mlir::PatternRewriter &rewriter, mlir::Location loc,
                            mlir::Value value, int64_t channels);

/// A [C] constant of `elementType` filled with `fill`.
mlir::Value createFilledVector(mlir::PatternRewriter &rewriter,
                               mlir::Location loc, mlir::Type elementType,
                               int64_t channels, double fill);

/// Replaces `op` (one result) by `value`, keeping the op's declared result
/// type when it is more static than the new value's inferred one.
void replaceKeepingType(mlir::PatternRewriter &rewriter, mlir::Operation *op,
                        mlir::Value value);

/// True when every user of every result of each op in `ops` is `root` or in
/// `ops`: the ops are private to the matched pattern.
bool onlyUsedWithin(llvm::ArrayRef<mlir::Operation *> ops,
                    mlir::Operation *root);

/// `loc` with `suffix` appended to its name ("conv1.weight" ->
/// "conv1.weight/int8"), so the plan names the tensors a pass adds after
/// the value they come from; unnamed locations are kept.
mlir::Location withNameSuffix(mlir::Location loc, llvm::StringRef suffix);

} // namespace gopt

#endif // GOPT_LIB_TRANSFORMS_PATTERNUTILS_H
