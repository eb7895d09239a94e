//===- Tensor.cpp - Element types, shapes and tensors ---------------------===//
#include "gopt/runtime/Tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace gopt::runtime {

const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::kOk:
    return "ok";
  case StatusCode::kInvalidArgument:
    return "invalid argument";
  case StatusCode::kNotFound:
    return "not found";
  case StatusCode::kFailedPrecondition:
    return "failed precondition";
  case StatusCode::kUnimplemented:
    return "unimplemented";
  case StatusCode::kInternal:
    return "internal error";
  case StatusCode::kDataLoss:
    return "data loss";
  case StatusCode::kResourceExhausted:
    return "resource exhausted";
  case StatusCode::kUnavailable:
    return "unavailable";
  case StatusCode::kDeadlineExceeded:
    return "deadline exceeded";
  }
  return "unknown";
}

std::string Status::toString() const {
  if (ok())
    return "ok";
  return std::string(statusCodeName(code_)) + ": " + message_;
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::kF32:
  case DType::kI32:
  case DType::kU32:
    return 4;
  case DType::kF16:
  case DType::kBF16:
  case DType::kI16:
  case DType::kU16:
    return 2;
  case DType::kI8:
  case DType::kU8:
  case DType::kBool:
  case DType::kF8E4M3FN:
  case DType::kF8E4M3FNUZ:
  case DType::kF8E5M2:
  case DType::kF8E5M2FNUZ:
  case DType::kI4:
  case DType::kU4:
    return 1;
  case DType::kI64:
  case DType::kU64:
  case DType::kF64:
    return 8;
  case DType::kInvalid:
    return 0;
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::kF32:
    return "f32";
  case DType::kF16:
    return "f16";
  case DType::kBF16:
    return "bf16";
  case DType::kI8:
    return "i8";
  case DType::kI32:
    return "i32";
  case DType::kI64:
    return "i64";
  case DType::kBool:
    return "bool";
  case DType::kU8:
    return "u8";
  case DType::kF64:
    return "f64";
  case DType::kI16:
    return "i16";
  case DType::kU16:
    return "u16";
  case DType::kU32:
    return "u32";
  case DType::kU64:
    return "u64";
  case DType::kF8E4M3FN:
    return "f8e4m3fn";
  case DType::kF8E4M3FNUZ:
    return "f8e4m3fnuz";
  case DType::kF8E5M2:
    return "f8e5m2";
  case DType::kF8E5M2FNUZ:
    return "f8e5m2fnuz";
  case DType::kI4:
    return "i4";
  case DType::kU4:
    return "u4";
  case DType::kInvalid:
    return "invalid";
  }
  return "invalid";
}

bool isFloatDType(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 ||
         dtype == DType::kBF16 || dtype == DType::kF64;
}

bool isUnsignedDType(DType dtype) {
  return dtype == DType::kU8 || dtype == DType::kU16 || dtype == DType::kU32 ||
         dtype == DType::kU64;
}

bool isLowPrecisionDType(DType dtype) {
  return dtype >= DType::kF8E4M3FN && dtype <= DType::kU4;
}

const std::vector<DType> &allDTypes() {
  static const std::vector<DType> all = {
      DType::kF32,        DType::kF16,      DType::kBF16,       DType::kI8,
      DType::kI32,        DType::kI64,      DType::kBool,       DType::kU8,
      DType::kF64,        DType::kI16,      DType::kU16,        DType::kU32,
      DType::kU64,        DType::kF8E4M3FN, DType::kF8E4M3FNUZ, DType::kF8E5M2,
      DType::kF8E5M2FNUZ, DType::kI4,       DType::kU4};
  return all;
}

StatusOr<DType> parseDType(const std::string &name) {
  for (DType d : allDTypes())
    if (name == dtypeName(d))
      return d;
  return invalidArgument("unknown element type '", name, "'");
}

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::optional<int64_t> checkedByteSize(const Shape &shape, DType dtype) {
  int64_t bytes = static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(bytes, d, &bytes))
      return std::nullopt;
  return bytes;
}

bool isFullyStatic(const Shape &shape) {
  for (int64_t d : shape)
    if (d < 0)
      return false;
  return true;
}

std::string shapeToString(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ",";
    s += shape[i] < 0 ? "?" : std::to_string(shape[i]);
  }
  return s + "]";
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalize
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  uint16_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or nan
    return sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0);
  if (absx >= 0x477ff000u) // rounds to >= 65520: overflow to inf
    return sign | 0x7c00;
  if (absx < 0x38800000u) { // below the smallest normal half: subnormal
    if (absx < 0x33000000u)
      return sign;
    // value = mant * 2^(e-150) and a half subnormal counts units of 2^-24.
    uint32_t mant = (absx & 0x7fffff) | 0x800000;
    int rshift = 126 - static_cast<int>(absx >> 23);
    uint32_t half = mant >> rshift;
    uint32_t rem = mant & ((1u << rshift) - 1);
    uint32_t halfway = 1u << (rshift - 1);
    if (rem > halfway || (rem == halfway && (half & 1)))
      ++half;
    return sign | static_cast<uint16_t>(half);
  }
  uint32_t e = (absx >> 23) - 127 + 15;
  uint32_t mant = absx & 0x7fffff;
  uint32_t half = (e << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, which is the right rounding
  return sign | static_cast<uint16_t>(half);
}

float bf16ToFloat(uint16_t bits) {
  uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t floatToBf16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) // keep NaN a NaN
    return static_cast<uint16_t>((x >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

std::shared_ptr<void> allocateAligned(size_t bytes) {
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0)
    rounded = 64;
  void *p = std::aligned_alloc(64, rounded);
  if (!p)
    return nullptr;
  std::memset(p, 0, rounded);
  return std::shared_ptr<void>(p, [](void *q) { std::free(q); });
}

Tensor Tensor::allocate(DType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.owner_ = allocateAligned(t.byteSize());
  t.data_ = t.owner_.get();
  return t;
}

Tensor Tensor::view(DType dtype, Shape shape, void *data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = data;
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = allocate(dtype_, shape_);
  if (byteSize())
    std::memcpy(t.data_, data_, byteSize());
  return t;
}

} // namespace gopt::runtime
