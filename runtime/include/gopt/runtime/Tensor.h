//===- Tensor.h - Element types, shapes and tensors -------------*- C++ -*-===//
#ifndef GOPT_RUNTIME_TENSOR_H
#define GOPT_RUNTIME_TENSOR_H

#include "gopt/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gopt::runtime {

// Values match gopt.plan.DType in plan.proto.
enum class DType : int {
  kInvalid = 0,
  kF32 = 1,
  kF16 = 2,
  kBF16 = 3,
  kI8 = 4,
  kI32 = 5,
  kI64 = 6,
  kBool = 7,
  kU8 = 8,
  kF64 = 9,
  kI16 = 10,
  kU16 = 11,
  kU32 = 12,
  kU64 = 13,
  // ONNX's float8 (one byte) and 4-bit types; each takes one byte per
  // element in memory and in plans (gopt/runtime/LowPrecision.h).
  kF8E4M3FN = 14,
  kF8E4M3FNUZ = 15,
  kF8E5M2 = 16,
  kF8E5M2FNUZ = 17,
  kI4 = 18, // -8..7 sign-extended into an int8_t
  kU4 = 19, // 0..15 in a uint8_t
};

size_t dtypeSize(DType dtype);
// "f32", "f16", "bf16", "i8", "i32", "i64", "bool", "u8", "f64", "i16",
// "u16", "u32", "u64", "f8e4m3fn", "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz",
// "i4", "u4".
const char *dtypeName(DType dtype);
bool isFloatDType(DType dtype);
bool isUnsignedDType(DType dtype);
// The float8 and 4-bit storage types (kF8E4M3FN ... kU4): only data movement
// and cast read or write them.
bool isLowPrecisionDType(DType dtype);
// Every valid element type, in enum order.
const std::vector<DType> &allDTypes();
StatusOr<DType> parseDType(const std::string &name);

// Dimensions of a tensor; -1 marks a dynamic dimension (only in plans).
using Shape = std::vector<int64_t>;

int64_t numElements(const Shape &shape);
// Bytes a tensor of `shape` and `dtype` takes; nullopt when a dimension is
// negative or the size does not fit in int64 (shapes from untrusted plans).
std::optional<int64_t> checkedByteSize(const Shape &shape, DType dtype);
bool isFullyStatic(const Shape &shape);
// "[2,3,?]".
std::string shapeToString(const Shape &shape);

// IEEE half and bfloat16 conversions (round to nearest even).
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bf16ToFloat(uint16_t bits);
uint16_t floatToBf16(float value);

// A dense row-major tensor. It either owns its (64-byte aligned) storage or
// views memory owned by someone else; copies share the storage.
class Tensor {
public:
  Tensor() = default;
  // Zero-initialized owning tensor.
  static Tensor allocate(DType dtype, Shape shape);
  // A non-owning view; `data` must outlive every use of the view.
  static Tensor view(DType dtype, Shape shape, void *data);
  // An owning deep copy.
  Tensor clone() const;

  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  int64_t numElements() const { return gopt::runtime::numElements(shape_); }
  size_t byteSize() const { return numElements() * dtypeSize(dtype_); }
  bool isOwning() const { return owner_ != nullptr; }
  bool empty() const { return dtype_ == DType::kInvalid; }

  void *data() { return data_; }
  const void *data() const { return data_; }
  template <typename T> T *data() { return static_cast<T *>(data_); }
  template <typename T> const T *data() const {
    return static_cast<const T *>(data_);
  }

private:
  DType dtype_ = DType::kInvalid;
  Shape shape_;
  void *data_ = nullptr;
  std::shared_ptr<void> owner_;
};

// Allocates `bytes` aligned to 64 bytes; freed by the shared_ptr.
std::shared_ptr<void> allocateAligned(size_t bytes);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_TENSOR_H
