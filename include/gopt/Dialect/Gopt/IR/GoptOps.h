//===- GoptOps.h - gopt ops -------------------------------------*- C++ -*-===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTOPS_H
#define GOPT_DIALECT_GOPT_IR_GOPTOPS_H

#include "gopt/Dialect/Gopt/IR/GoptDialect.h"
#include "gopt/Dialect/Gopt/IR/GoptInterfaces.h"
#include "gopt/Dialect/Gopt/IR/GoptTraits.h"
#include "gopt/Shape/ShapeFunctions.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace gopt {

/// True when each pair of types is the same up to dynamic dimensions: the
/// declared result may be more static than the inferred one.
bool areCompatibleReturnTypes(mlir::TypeRange inferred,
                              mlir::TypeRange declared);

/// The values of an optional i64 array attribute, or `defaults` when absent.
llvm::SmallVector<int64_t, 4> getI64ArrayOr(mlir::DenseI64ArrayAttr attr,
                                            llvm::ArrayRef<int64_t> defaults);

} // namespace gopt

#define GET_OP_CLASSES
#include "gopt/Dialect/Gopt/IR/GoptOps.h.inc"

#endif // GOPT_DIALECT_GOPT_IR_GOPTOPS_H
