//===- NameLoc.h - The name an importer gave an op --------------*- C++ -*-===//
//
// Importers put ONNX/GraphDef node names on ops as NameLocs; passes that
// fuse ops give the result a FusedLoc holding them. The plan lowering,
// training passes and quantization passes all read the name back this way.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_DIALECT_GOPT_IR_NAMELOC_H
#define GOPT_DIALECT_GOPT_IR_NAMELOC_H

#include "mlir/IR/Location.h"

namespace gopt {

/// `loc` if it is a NameLoc, else the first NameLoc inside a FusedLoc, else
/// null.
inline mlir::NameLoc findNameLoc(mlir::Location loc) {
  if (auto named = llvm::dyn_cast<mlir::NameLoc>(loc))
    return named;
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location inner : fused.getLocations())
      if (auto named = llvm::dyn_cast<mlir::NameLoc>(inner))
        return named;
  return {};
}

} // namespace gopt

#endif // GOPT_DIALECT_GOPT_IR_NAMELOC_H
