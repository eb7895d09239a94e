//===- PlanOp.cpp - One gopt op as the runtime sees it --------------------===//
#include "gopt/Conversion/PlanOp.h"
#include "gopt/Dialect/Gopt/IR/GoptDialect.h"
#include "gopt/Dialect/Gopt/IR/PlanNames.h"

#include "gopt/runtime/PlanBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OperationSupport.h"

#include <optional>

using namespace mlir;
namespace rt = gopt::runtime;

namespace gopt {

namespace {

/// An attribute in the plan's generic form, or nullopt for attribute kinds
/// the runtime has no use for.
std::optional<plan::AttrValue> toPlanAttr(Attribute attr) {
  if (auto str = dyn_cast<StringAttr>(attr))
    return rt::stringAttr(str.str());
  if (auto flag = dyn_cast<BoolAttr>(attr))
    return rt::boolAttr(flag.getValue());
  if (isa<UnitAttr>(attr))
    return rt::boolAttr(true);
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return rt::intAttr(integer.getValue().getSExtValue());
  if (auto real = dyn_cast<FloatAttr>(attr))
    return rt::floatAttr(real.getValueAsDouble());
  if (auto array = dyn_cast<DenseI32ArrayAttr>(attr))
    return rt::intsAttr(std::vector<int64_t>(array.asArrayRef().begin(),
                                             array.asArrayRef().end()));
  if (auto array = dyn_cast<DenseI64ArrayAttr>(attr))
    return rt::intsAttr(std::vector<int64_t>(array.asArrayRef().begin(),
                                             array.asArrayRef().end()));
  if (auto array = dyn_cast<DenseF32ArrayAttr>(attr))
    return rt::floatsAttr(std::vector<double>(array.asArrayRef().begin(),
                                              array.asArrayRef().end()));
  return std::nullopt;
}

} // namespace

plan::Op toPlanOp(Operation *op) {
  plan::Op planOp;
  planOp.set_kind(getPlanOpKind(op));
  NamedAttrList attributes(op->getAttrDictionary());
  op->getName().populateDefaultAttrs(attributes);
  for (NamedAttribute attr : attributes) {
    if (attr.getName() == GoptDialect::getDeviceAttrName()) {
      if (auto device = dyn_cast<StringAttr>(attr.getValue()))
        planOp.set_device(device.getValue() == "gpu" ? "cuda" : device.str());
      continue;
    }
    if (std::optional<plan::AttrValue> value = toPlanAttr(attr.getValue()))
      (*planOp.mutable_attrs())[attr.getName().str()] = *value;
  }
  return planOp;
}

} // namespace gopt
