//===- ImportUtils.cpp - Helpers shared by the importers ------------------===//

#include "ImportUtils.h"

#include "llvm/Support/Regex.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <vector>

using namespace mlir;

namespace gopt::import {

std::string ErrorCapture::explainTypeConstraint(std::string message) {
  static const llvm::Regex constraint(
      "(operand|result) #[0-9]+ must be .*, but got "
      "'tensor<([0-9?]+x)*(f64|i16|ui8|ui16|ui32|ui64|i4|ui4|f8E4M3FN|"
      "f8E4M3FNUZ|f8E5M2|f8E5M2FNUZ)>'");
  SmallVector<StringRef, 4> groups;
  if (!constraint.match(message, &groups))
    return message;
  return message + " (element type " + groups[3].str() +
         " is not supported by this op)";
}

DenseElementsAttr denseElementsFromBytes(RankedTensorType type,
                                         ArrayRef<char> bytes) {
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bits(bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i)
      bits[i] = bytes[i] != 0;
    return DenseElementsAttr::get(type, bits);
  }
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

std::optional<SmallVector<int64_t>> integerValues(DenseElementsAttr attr) {
  if (!attr.getElementType().isSignlessInteger(64) &&
      !attr.getElementType().isSignlessInteger(32))
    return std::nullopt;
  if (attr.getNumElements() > kMaxIntegerValues)
    return std::nullopt;
  SmallVector<int64_t> result;
  for (const APInt &v : attr.getValues<APInt>())
    result.push_back(v.getSExtValue());
  return result;
}

Value createConstant(OpBuilder &b, Location loc, RankedTensorType type,
                     ArrayRef<char> bytes, StringRef name) {
  ElementsAttr value;
  // One element's bytes for many elements: a splat, kept compact.
  unsigned elementBytes = std::max(1u, type.getElementTypeBitWidth() / 8);
  bool splat = type.getNumElements() > 1 && bytes.size() == elementBytes;
  if (splat || type.getElementType().isInteger(1) ||
      type.getNumElements() <= kMaxInlineElements) {
    value = denseElementsFromBytes(type, bytes);
  } else {
    // Resource keys are printed bare, so keep them to identifier characters;
    // the blob manager makes repeated keys unique.
    std::string key;
    for (char c : name)
      key += (isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')
                 ? c
                 : '_';
    if (key.empty() || isdigit(static_cast<unsigned char>(key[0])))
      key = "c_" + key;
    unsigned width = std::max(1u, type.getElementTypeBitWidth() / 8);
    value = DenseResourceElementsAttr::get(
        type, key, HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, width));
  }
  return b.create<ConstantOp>(loc, value);
}

Value createI64Constant(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                        ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, b.getI64Type());
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, values));
}

Value createScalarConstant(OpBuilder &b, Location loc, Type elementType,
                           double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (isa<FloatType>(elementType))
    element = b.getFloatAttr(elementType, value);
  else
    element = b.getIntegerAttr(elementType, static_cast<int64_t>(value));
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, element));
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return text;
}

mlir::Operation *
createInferredByName(mlir::OpBuilder &b, mlir::Location loc,
                     llvm::StringRef opName, mlir::ValueRange operands,
                     llvm::ArrayRef<mlir::NamedAttribute> attrs) {
  std::optional<mlir::RegisteredOperationName> info =
      mlir::RegisteredOperationName::lookup(opName, b.getContext());
  auto *inferType =
      info ? info->getInterface<mlir::InferTypeOpInterface>() : nullptr;
  if (!inferType) {
    mlir::emitError(loc) << opName << " is not an op with inferred types";
    return nullptr;
  }
  mlir::OperationState state(loc, *info);
  state.addOperands(operands);
  state.addAttributes(attrs);
  // The op's adaptor reads its attributes from properties, which an
  // OperationState built by name does not have: make them from `attrs`
  // (defaults where absent) for type inference.
  int propertyBytes = info->getOpPropertyByteSize();
  std::vector<std::max_align_t> storage(
      propertyBytes ? (propertyBytes + sizeof(std::max_align_t) - 1) /
                          sizeof(std::max_align_t)
                    : 0);
  mlir::OpaqueProperties properties(propertyBytes ? storage.data() : nullptr);
  mlir::DictionaryAttr dictionary =
      state.attributes.getDictionary(b.getContext());
  mlir::LogicalResult inferred = mlir::success();
  if (propertyBytes) {
    info->initOpProperties(properties, nullptr);
    info->populateDefaultProperties(properties);
    inferred =
        info->setOpPropertiesFromAttribute(*info, properties, dictionary, [&] {
          return mlir::emitError(loc) << opName << ": ";
        });
  }
  llvm::SmallVector<mlir::Type, 2> types;
  if (mlir::succeeded(inferred))
    inferred = inferType->inferReturnTypes(b.getContext(), loc, state.operands,
                                           dictionary, properties,
                                           state.regions, types);
  if (propertyBytes)
    info->destroyOpProperties(properties);
  if (mlir::failed(inferred))
    return nullptr;
  // gopt's shape functions give unranked placeholders when the operands are
  // invalid. ODS's type constraints, which verify() checks first, would only
  // say "unranked": ranked stand-ins let the op's own verifier say why.
  bool placeholder = false;
  for (mlir::Type &type : types)
    if (auto unranked = llvm::dyn_cast<mlir::UnrankedTensorType>(type)) {
      type = mlir::RankedTensorType::get({mlir::ShapedType::kDynamic},
                                         unranked.getElementType());
      placeholder = true;
    }
  state.types.assign(types.begin(), types.end());
  mlir::Operation *op = b.create(state);
  bool verified =
      mlir::succeeded(mlir::verify(op, /*verifyRecursively=*/false));
  if (verified && placeholder)
    op->emitOpError("could not infer its result types");
  if (!verified || placeholder) {
    op->erase();
    return nullptr;
  }
  return op;
}

/// The entries of a 0-d or 1-D integer value computed from tensor shapes by
/// the ops exporters write for `x.view(x.size(0), -1)` and channel shuffles
/// (Shape, Gather, Slice, Unsqueeze, Concat, Cast, integer arithmetic,
/// constants), traced through the gopt ops they imported as; nullopt for
/// anything else.
std::optional<SmallVector<ShapeEntry>> traceShapeEntries(Value v) {
  if (!v)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() > 1 || !type.hasStaticShape() ||
      !type.getElementType().isSignlessInteger())
    return std::nullopt;
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  SmallVector<ShapeEntry> entries;
  if (auto constant = dyn_cast<ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    std::optional<SmallVector<int64_t>> ints =
        dense ? integerValues(dense) : std::nullopt;
    if (!ints)
      return std::nullopt;
    for (int64_t i : *ints)
      entries.push_back({i, Value(), 0});
    return entries;
  }
  if (auto shape = dyn_cast<ShapeOp>(def)) {
    ArrayRef<int64_t> dims =
        cast<RankedTensorType>(shape.getX().getType()).getShape();
    for (auto [d, size] : llvm::enumerate(dims))
      entries.push_back(ShapedType::isDynamic(size)
                            ? ShapeEntry{0, shape.getX(), int64_t(d)}
                            : ShapeEntry{size, Value(), 0});
    return entries;
  }
  if (auto gather = dyn_cast<GatherOp>(def)) {
    std::optional<SmallVector<ShapeEntry>> from =
        traceShapeEntries(gather.getX());
    std::optional<SmallVector<ShapeEntry>> at =
        traceShapeEntries(gather.getIndices());
    if (!from || !at)
      return std::nullopt;
    int64_t n = from->size();
    for (const ShapeEntry &index : *at) {
      if (index.source || index.value < -n || index.value >= n)
        return std::nullopt;
      entries.push_back(
          (*from)[index.value < 0 ? index.value + n : index.value]);
    }
    return entries;
  }
  if (auto concat = dyn_cast<ConcatOp>(def)) {
    for (Value input : concat.getInputs()) {
      std::optional<SmallVector<ShapeEntry>> part = traceShapeEntries(input);
      if (!part)
        return std::nullopt;
      entries.append(part->begin(), part->end());
    }
    return entries;
  }
  if (auto slice = dyn_cast<SliceOp>(def)) {
    std::optional<SmallVector<ShapeEntry>> from =
        traceShapeEntries(slice.getX());
    if (!from || slice.getStarts().size() != 1)
      return std::nullopt;
    int64_t n = from->size(), step = slice.getSteps()[0];
    int64_t start = slice.getStarts()[0], end = slice.getEnds()[0];
    if (start < 0 || step <= 0)
      return std::nullopt;
    for (int64_t k = start; k < std::min(end, n); k += step)
      entries.push_back((*from)[k]);
    return entries;
  }
  // Integer arithmetic on static entries (torch.chunk's split points:
  // shape[1] + 1 / 2 * k), numpy-broadcast over a single entry.
  if (isa<AddOp, SubOp, MulOp, DivOp>(def)) {
    std::optional<SmallVector<ShapeEntry>> lhs =
        traceShapeEntries(def->getOperand(0));
    std::optional<SmallVector<ShapeEntry>> rhs =
        traceShapeEntries(def->getOperand(1));
    if (!lhs || !rhs ||
        (lhs->size() != rhs->size() && lhs->size() != 1 && rhs->size() != 1))
      return std::nullopt;
    size_t n = std::max(lhs->size(), rhs->size());
    for (size_t i = 0; i < n; ++i) {
      const ShapeEntry &a = (*lhs)[lhs->size() == 1 ? 0 : i];
      const ShapeEntry &b = (*rhs)[rhs->size() == 1 ? 0 : i];
      if (a.source || b.source || (isa<DivOp>(def) && b.value == 0))
        return std::nullopt;
      int64_t value = isa<AddOp>(def)   ? a.value + b.value
                      : isa<SubOp>(def) ? a.value - b.value
                      : isa<MulOp>(def) ? a.value * b.value
                                        : a.value / b.value;
      entries.push_back({value, Value(), 0});
    }
    return entries;
  }
  // Same entries, another 0-d/1-D shape or integer type.
  if (isa<ReshapeOp, CastOp, IdentityOp>(def))
    return traceShapeEntries(def->getOperand(0));
  return std::nullopt;
}

} // namespace gopt::import
