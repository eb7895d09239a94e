//===- HostTensor.cpp - Constant tensors evaluated at compile time --------===//

#include "HostTensor.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "mlir/IR/AsmState.h"
#include "llvm/ADT/STLExtras.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

#include "gopt/runtime/LowPrecision.h"
#include <cstring>

using namespace mlir;

namespace gopt {

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

HostTensor HostTensor::zeros(ArrayRef<int64_t> shape, Type type) {
  HostTensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.elementType = type;
  if (t.isFloat())
    t.floats.assign(t.numElements(), 0.0);
  else
    t.ints.assign(t.numElements(), 0);
  return t;
}

SmallVector<int64_t, 4> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t, 4> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

int lowPrecisionDTypeOf(Type type) {
  using runtime::DType;
  DType d = type.isFloat8E4M3FN()       ? DType::kF8E4M3FN
            : type.isFloat8E4M3FNUZ()   ? DType::kF8E4M3FNUZ
            : type.isFloat8E5M2()       ? DType::kF8E5M2
            : type.isFloat8E5M2FNUZ()   ? DType::kF8E5M2FNUZ
            : type.isSignlessInteger(4) ? DType::kI4
            : type.isUnsignedInteger(4) ? DType::kU4
                                        : DType::kInvalid;
  return static_cast<int>(d);
}

double roundToLowPrecision(Type type, double value, bool saturate) {
  auto dtype = static_cast<runtime::DType>(lowPrecisionDTypeOf(type));
  return runtime::lowPrecisionToDouble(
      dtype, runtime::lowPrecisionFromDouble(dtype, value, saturate));
}

/// float8 and 4-bit blobs (the importers' initializers): one byte per
/// element, float8 bit patterns or 4-bit values in the low nibble.
static bool readLowPrecisionResource(ElementsAttr attr, HostTensor &t) {
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  auto dtype = static_cast<runtime::DType>(lowPrecisionDTypeOf(t.elementType));
  if (!resource || dtype == runtime::DType::kInvalid)
    return false;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob || static_cast<int64_t>(blob->getData().size()) != t.numElements())
    return false;
  for (char c : blob->getData()) {
    auto byte = static_cast<uint8_t>(c);
    if (t.isFloat()) {
      t.floats.push_back(runtime::float8ToFloat(dtype, byte));
    } else {
      int64_t v = byte & 0x0F;
      t.ints.push_back(dtype == runtime::DType::kI4 && v >= 8 ? v - 16 : v);
    }
  }
  return true;
}

template <typename T>
static bool readResource(ElementsAttr attr, HostTensor &t) {
  auto resource =
      dyn_cast<mlir::detail::DenseResourceElementsAttrBase<T>>(attr);
  if (!resource)
    return false;
  std::optional<ArrayRef<T>> values = resource.tryGetAsArrayRef();
  if (!values || static_cast<int64_t>(values->size()) != t.numElements())
    return false;
  if constexpr (std::is_floating_point_v<T>)
    t.floats.assign(values->begin(), values->end());
  else
    t.ints.assign(values->begin(), values->end());
  return true;
}

/// f16/bf16 blobs (writeConstant's, for mixed precision) have no typed
/// resource attribute: their bytes are the 16-bit patterns.
static bool readHalfResource(ElementsAttr attr, HostTensor &t) {
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  auto floatType = dyn_cast<FloatType>(t.elementType);
  if (!resource || !floatType || floatType.getWidth() != 16)
    return false;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob ||
      static_cast<int64_t>(blob->getData().size()) != 2 * t.numElements())
    return false;
  ArrayRef<char> bytes = blob->getData();
  t.floats.reserve(t.numElements());
  for (int64_t i = 0, n = t.numElements(); i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    t.floats.push_back(APFloat(floatType.getFloatSemantics(), APInt(16, bits))
                           .convertToDouble());
  }
  return true;
}

/// `t`, or nullopt when it is ui64 with a value int64 cannot hold: folding
/// computes in int64, so such constants are left to the runtime.
static std::optional<HostTensor> checkedUnsigned(HostTensor t) {
  if (t.elementType.isUnsignedInteger(64) &&
      llvm::any_of(t.ints, [](int64_t v) { return v < 0; }))
    return std::nullopt;
  return t;
}

std::optional<HostTensor> readElements(ElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  HostTensor t;
  t.shape.assign(type.getShape().begin(), type.getShape().end());
  t.elementType = type.getElementType();
  int64_t n = t.numElements();
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (t.isFloat()) {
      t.floats.reserve(n);
      if (t.elementType.isF32()) {
        for (float v : dense.getValues<float>())
          t.floats.push_back(v);
      } else {
        for (APFloat v : dense.getValues<APFloat>()) {
          bool losesInfo;
          v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
          t.floats.push_back(v.convertToDouble());
        }
      }
    } else if (isa<IntegerType>(t.elementType)) {
      t.ints.reserve(n);
      // i1 and the unsigned types zero-extend.
      bool zeroExtend =
          t.elementType.isInteger(1) || t.elementType.isUnsignedInteger();
      for (APInt v : dense.getValues<APInt>())
        t.ints.push_back(zeroExtend ? static_cast<int64_t>(v.getZExtValue())
                                    : v.getSExtValue());
    } else {
      return std::nullopt;
    }
    return checkedUnsigned(std::move(t));
  }
  if (readResource<float>(attr, t) || readResource<double>(attr, t) ||
      readResource<int64_t>(attr, t) || readResource<int32_t>(attr, t) ||
      readResource<int16_t>(attr, t) || readResource<int8_t>(attr, t) ||
      readResource<uint64_t>(attr, t) || readResource<uint32_t>(attr, t) ||
      readResource<uint16_t>(attr, t) || readResource<uint8_t>(attr, t) ||
      readHalfResource(attr, t) || readLowPrecisionResource(attr, t))
    return checkedUnsigned(std::move(t));
  return std::nullopt;
}

std::optional<HostTensor> readConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  return readElements(constant.getValue());
}

DenseElementsAttr writeElements(const HostTensor &t) {
  auto type = RankedTensorType::get(t.shape, t.elementType);
  if (t.elementType.isF32()) {
    SmallVector<float> values(t.floats.begin(), t.floats.end());
    return DenseElementsAttr::get(type, ArrayRef<float>(values));
  }
  if (auto floatType = dyn_cast<FloatType>(t.elementType)) {
    SmallVector<APFloat> values;
    values.reserve(t.floats.size());
    for (double d : t.floats) {
      APFloat v(d);
      bool losesInfo;
      v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &losesInfo);
      values.push_back(v);
    }
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = t.elementType.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  values.reserve(t.ints.size());
  for (int64_t v : t.ints) {
    if (width == 1)
      values.push_back(APInt(1, v != 0 ? 1 : 0));
    else
      values.push_back(APInt(64, static_cast<uint64_t>(v)).trunc(width));
  }
  return DenseElementsAttr::get(type, values);
}

template <typename T>
static ElementsAttr writeResource(RankedTensorType type, ArrayRef<T> values) {
  return DenseResourceElementsAttr::get(
      type, "gopt_folded",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(values));
}

ElementsAttr writeConstant(const HostTensor &t) {
  int64_t n = t.numElements();
  auto type = RankedTensorType::get(t.shape, t.elementType);
  bool large = n > kMaxInlineElements;
  if (large) {
    // A splat prints as one value: keep it inline.
    bool splat =
        t.isFloat() ? llvm::all_equal(t.floats) : llvm::all_equal(t.ints);
    large = !splat;
  }
  if (large && t.elementType.isF32()) {
    std::vector<float> values(t.floats.begin(), t.floats.end());
    return writeResource<float>(type, values);
  }
  if (auto floatType = dyn_cast<FloatType>(t.elementType);
      large && floatType && floatType.getWidth() == 16) {
    // Mixed precision's f16/bf16 weights: their bit patterns, two bytes
    // each in the IR and in the plan.
    std::vector<uint16_t> bits;
    bits.reserve(t.floats.size());
    for (double d : t.floats) {
      APFloat v(d);
      bool losesInfo;
      v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &losesInfo);
      bits.push_back(static_cast<uint16_t>(v.bitcastToAPInt().getZExtValue()));
    }
    return DenseResourceElementsAttr::get(
        type, "gopt_folded",
        HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef(bits)));
  }
  if (large && t.elementType.isSignlessInteger(32)) {
    std::vector<int32_t> values(t.ints.begin(), t.ints.end());
    return writeResource<int32_t>(type, values);
  }
  if (large && t.elementType.isSignlessInteger(64))
    return writeResource<int64_t>(type, t.ints);
  if (auto dtype =
          static_cast<runtime::DType>(lowPrecisionDTypeOf(t.elementType));
      large && dtype != runtime::DType::kInvalid) {
    // float8 and 4-bit: one byte each, as the importer writes them.
    std::vector<uint8_t> bytes;
    bytes.reserve(n);
    for (int64_t i = 0; i < n; ++i)
      bytes.push_back(runtime::lowPrecisionFromDouble(dtype, t.getDouble(i),
                                                      /*saturate=*/true));
    return DenseResourceElementsAttr::get(
        type, "gopt_folded",
        HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef(bytes)));
  }
  if (large && t.elementType.isSignlessInteger(8)) {
    // Quantized weights: one byte each in the IR and in the plan.
    std::vector<int8_t> values(t.ints.begin(), t.ints.end());
    return writeResource<int8_t>(type, values);
  }
  return writeElements(t);
}

HostTensor transposeTensor(const HostTensor &t, ArrayRef<int64_t> perm) {
  SmallVector<int64_t, 4> shape;
  for (int64_t p : perm)
    shape.push_back(t.shape[p]);
  HostTensor result = HostTensor::zeros(shape, t.elementType);
  SmallVector<int64_t, 4> inStrides = stridesOf(t.shape);
  // Stride in the operand of each result dimension.
  SmallVector<int64_t, 4> strides;
  for (int64_t p : perm)
    strides.push_back(inStrides[p]);
  int64_t n = result.numElements();
  SmallVector<int64_t, 4> index(shape.size(), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (t.isFloat())
      result.floats[i] = t.floats[offset];
    else
      result.ints[i] = t.ints[offset];
    // Odometer increment of the result index, tracking the operand offset.
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) {
        offset += strides[d];
        break;
      }
      offset -= strides[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
  return result;
}

SmallVector<int64_t, 4> invertPermutation(ArrayRef<int64_t> perm) {
  SmallVector<int64_t, 4> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  return inverse;
}

} // namespace gopt
