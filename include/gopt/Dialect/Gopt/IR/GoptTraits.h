//===- GoptTraits.h - Traits shared by all gopt ops -------------*- C++ -*-===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTTRAITS_H
#define GOPT_DIALECT_GOPT_IR_GOPTTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace gopt {

/// Checks the optional discardable `device` attribute ("cpu" or "gpu") that
/// device placement sets on any gopt op.
mlir::LogicalResult verifyDeviceAttr(mlir::Operation *op);

template <typename ConcreteType>
class DeviceAttrTrait
    : public mlir::OpTrait::TraitBase<ConcreteType, DeviceAttrTrait> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyDeviceAttr(op);
  }
};

} // namespace gopt

#endif // GOPT_DIALECT_GOPT_IR_GOPTTRAITS_H
