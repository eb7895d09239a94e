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

/// The elementwise functions of GoptMathOps.td, whose scalar math is
/// generated (gopt/runtime/UnaryMath.h.inc), and their gradient ops.
template <typename ConcreteType>
class UnaryMath : public mlir::OpTrait::TraitBase<ConcreteType, UnaryMath> {};
template <typename ConcreteType>
class UnaryMathGrad
    : public mlir::OpTrait::TraitBase<ConcreteType, UnaryMathGrad> {};

/// Op categories declared in GoptOps.td; the passes ask for them.
/// A reduction over the `axes` attribute (negative from the end, empty means
/// all) of its one operand, keeping reduced axes as 1s when `keep_dims`:
/// passes move transposes through any of them alike.
template <typename ConcreteType>
class Reduction : public mlir::OpTrait::TraitBase<ConcreteType, Reduction> {};

template <typename ConcreteType>
class LayoutAgnostic
    : public mlir::OpTrait::TraitBase<ConcreteType, LayoutAgnostic> {};
template <typename ConcreteType>
class MixedPrecisionAllow
    : public mlir::OpTrait::TraitBase<ConcreteType, MixedPrecisionAllow> {};
template <typename ConcreteType>
class MixedPrecisionInfer
    : public mlir::OpTrait::TraitBase<ConcreteType, MixedPrecisionInfer> {};
template <typename ConcreteType>
class MixedPrecisionClear
    : public mlir::OpTrait::TraitBase<ConcreteType, MixedPrecisionClear> {};
template <typename ConcreteType>
class ComputeHeavy
    : public mlir::OpTrait::TraitBase<ConcreteType, ComputeHeavy> {};
template <typename ConcreteType>
class DataMovement
    : public mlir::OpTrait::TraitBase<ConcreteType, DataMovement> {};

} // namespace gopt

#endif // GOPT_DIALECT_GOPT_IR_GOPTTRAITS_H
