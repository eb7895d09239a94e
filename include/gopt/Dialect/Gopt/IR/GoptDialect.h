//===- GoptDialect.h - The gopt dialect -------------------------*- C++ -*-===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTDIALECT_H
#define GOPT_DIALECT_GOPT_IR_GOPTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "gopt/Dialect/Gopt/IR/GoptOpsDialect.h.inc"

#endif // GOPT_DIALECT_GOPT_IR_GOPTDIALECT_H
