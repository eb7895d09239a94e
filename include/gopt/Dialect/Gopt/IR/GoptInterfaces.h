//===- GoptInterfaces.h - Op interfaces of the gopt dialect -----*- C++ -*-===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTINTERFACES_H
#define GOPT_DIALECT_GOPT_IR_GOPTINTERFACES_H

#include "mlir/IR/OpDefinition.h"

namespace gopt {
// GradientBuilder.h; the rules that use it include it.
class GradientBuilder;
} // namespace gopt

#include "gopt/Dialect/Gopt/IR/GoptInterfaces.h.inc"

#endif // GOPT_DIALECT_GOPT_IR_GOPTINTERFACES_H
