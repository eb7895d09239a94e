//===- FrameworkOps.h - ONNX/TF op types imported generically ---*- C++ -*-===//
//
// The ops whose ODS names an ONNX or TensorFlow op type (`onnxOpType`,
// `tfOpType`) import and export without op-specific code: the node's inputs
// in order and each attribute by its gopt name. The tables are generated
// from the ODS (FrameworkOps.inc). Internal to lib/Import.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_LIB_IMPORT_FRAMEWORKOPS_H
#define GOPT_LIB_IMPORT_FRAMEWORKOPS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace gopt::import {

enum class FrameworkAttrKind { kInt, kFloat, kString, kBool, kInts, kFloats };

struct FrameworkAttr {
  const char *name;
  FrameworkAttrKind kind;
};

struct FrameworkOp {
  const char *opType; // ONNX or TF
  const char *opName; // "gopt.hard_sigmoid"
  int numOperands;
  int onnxSinceOpset; // 0 for TF
  int numAttrs;
  FrameworkAttr attrs[4];

  llvm::ArrayRef<FrameworkAttr> attributes() const {
    return llvm::ArrayRef<FrameworkAttr>(attrs, numAttrs);
  }
  const FrameworkAttr *findAttr(llvm::StringRef name) const {
    for (const FrameworkAttr &a : attributes())
      if (name == a.name)
        return &a;
    return nullptr;
  }
};

#include "gopt/runtime/FrameworkOps.inc"

/// The entry of `table` for `opType` (or, with byOpName, for the gopt op
/// name), or nullptr.
inline const FrameworkOp *findFrameworkOp(llvm::ArrayRef<FrameworkOp> table,
                                          llvm::StringRef key,
                                          bool byOpName = false) {
  for (const FrameworkOp &op : table)
    if (key == (byOpName ? op.opName : op.opType))
      return &op;
  return nullptr;
}

} // namespace gopt::import

#endif // GOPT_LIB_IMPORT_FRAMEWORKOPS_H
