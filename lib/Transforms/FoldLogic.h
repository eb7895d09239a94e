//===- FoldLogic.h - Constant evaluation of GoptLogicOps.td ----*- C++ -*-===//
//
// The ops of GoptLogicOps.td on host tensors, for gopt-fold-constants: the
// comparisons and selects of shape subgraphs (TF's `Equal`/`Select` over
// `Shape` results, ONNX's `Where`/`Expand` in exported dynamic reshapes).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_LIB_TRANSFORMS_FOLDLOGIC_H
#define GOPT_LIB_TRANSFORMS_FOLDLOGIC_H

#include "HostTensor.h"

#include "mlir/IR/Operation.h"

namespace gopt {

/// `op` evaluated on constant operands `in`, with semantics of
/// docs/op-semantics.md; nullopt when `op` is not one of these ops or the
/// value is left to run time (an integer division by zero).
std::optional<HostTensor> evaluateLogicOp(mlir::Operation *op,
                                          llvm::ArrayRef<HostTensor> in,
                                          mlir::RankedTensorType resultType);

} // namespace gopt

#endif // GOPT_LIB_TRANSFORMS_FOLDLOGIC_H
