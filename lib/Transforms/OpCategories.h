//===- OpCategories.h - Op properties the passes look up by name -*- C++
//-*-===//
//
// What ODS states per op beyond traits (GoptOps.td's layoutActivationOperands
// and trainableOperands), as tables tools/gen-op-tables generates
// (OpCategories.inc). Internal to lib/Transforms.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_LIB_TRANSFORMS_OPCATEGORIES_H
#define GOPT_LIB_TRANSFORMS_OPCATEGORIES_H

#include "llvm/ADT/ArrayRef.h"

namespace gopt {

/// Which operands and results of a layout-sensitive op are activations in
/// its data_format (the rest are filters or per-channel vectors).
struct LayoutSensitiveOp {
  const char *opName;
  unsigned numOperands;
  unsigned operands[2];
  bool result0;

  llvm::ArrayRef<unsigned> activationOperands() const {
    return llvm::ArrayRef<unsigned>(operands, numOperands);
  }
};

/// The operands of an op that hold learned weights.
struct TrainableOperands {
  const char *opName;
  unsigned numOperands;
  unsigned operands[4];

  llvm::ArrayRef<unsigned> indices() const {
    return llvm::ArrayRef<unsigned>(operands, numOperands);
  }
};

#include "gopt/runtime/OpCategories.inc"

} // namespace gopt

#endif // GOPT_LIB_TRANSFORMS_OPCATEGORIES_H
