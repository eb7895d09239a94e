//===- FoldValue.h - Evaluate a value computed from constants ---*- C++ -*-===//
//
// The host evaluator of --gopt-fold-constants, for one value: importers use
// it to read shape-taking inputs that the graph computes from constants and
// static shapes (TensorFlow's Shape -> StridedSlice -> Pack -> Reshape).
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_TRANSFORMS_FOLDVALUE_H
#define GOPT_TRANSFORMS_FOLDVALUE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"

namespace gopt {

/// The value of `value` when gopt.constants and gopt.shape of static
/// tensors determine it, through side-effect-free gopt ops the constant
/// folder evaluates, none with more than `maxElements` result elements;
/// null otherwise. The IR is left as it is.
mlir::DenseElementsAttr foldValue(mlir::Value value,
                                  int64_t maxElements = 1 << 16);

} // namespace gopt

#endif // GOPT_TRANSFORMS_FOLDVALUE_H
