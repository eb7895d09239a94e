//===- LowPrecision.cpp - float8 and 4-bit element conversions ------------===//
//
// Value-based rather than bit-twiddling: a float8 value is a small integer
// times a power of two, so rounding is one nearbyint-free RNE step on an
// exactly scaled double, and encoding reads the rounded value's exponent.
// Every case ONNX's tables distinguish (NaN, infinities, saturation, -0 in
// the FNUZ types, subnormals) is one explicit branch.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/LowPrecision.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace gopt::runtime {
namespace {

struct Float8Format {
  int mantissaBits;
  int bias;
  bool hasInf; // f8e5m2: exponent all ones is infinity / NaN (IEEE)
  bool uz;     // FNUZ: 0x80 is the only NaN, no -0, no infinity
  double max;  // largest finite value
  uint8_t maxBits;
};

const Float8Format &format(DType dtype) {
  static const Float8Format e4m3fn{3, 7, false, false, 448.0, 0x7E};
  static const Float8Format e4m3fnuz{3, 8, false, true, 240.0, 0x7F};
  static const Float8Format e5m2{2, 15, true, false, 57344.0, 0x7B};
  static const Float8Format e5m2fnuz{2, 16, false, true, 57344.0, 0x7F};
  switch (dtype) {
  case DType::kF8E4M3FNUZ:
    return e4m3fnuz;
  case DType::kF8E5M2:
    return e5m2;
  case DType::kF8E5M2FNUZ:
    return e5m2fnuz;
  default:
    return e4m3fn;
  }
}

/// Round half to even, independent of the floating-point environment.
double roundHalfEven(double q) {
  double lower = std::floor(q);
  double diff = q - lower;
  if (diff > 0.5 || (diff == 0.5 && std::fmod(lower, 2.0) != 0.0))
    return lower + 1.0;
  return lower;
}

} // namespace

float float8ToFloat(DType dtype, uint8_t bits) {
  const Float8Format &f = format(dtype);
  const bool negative = bits & 0x80;
  const int exponentMask = (0x7F >> f.mantissaBits);
  const int exponent = (bits >> f.mantissaBits) & exponentMask;
  const int mantissa = bits & ((1 << f.mantissaBits) - 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (f.uz && bits == 0x80)
    return nan;
  if (!f.uz && !f.hasInf && (bits & 0x7F) == 0x7F) // e4m3fn: S.1111.111
    return negative ? -nan : nan;
  if (f.hasInf && exponent == exponentMask) {
    if (mantissa != 0)
      return negative ? -nan : nan;
    float inf = std::numeric_limits<float>::infinity();
    return negative ? -inf : inf;
  }
  double value = exponent == 0
                     ? std::ldexp(double(mantissa), 1 - f.bias - f.mantissaBits)
                     : std::ldexp(double(mantissa + (1 << f.mantissaBits)),
                                  exponent - f.bias - f.mantissaBits);
  return static_cast<float>(negative ? -value : value);
}

double float8Max(DType dtype) { return format(dtype).max; }

uint8_t floatToFloat8(DType dtype, double value, bool saturate) {
  const Float8Format &f = format(dtype);
  const uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  const uint8_t nanBits = f.uz ? 0x80 : static_cast<uint8_t>(sign | 0x7F);
  if (std::isnan(value))
    return nanBits;
  // What a value beyond the largest finite one becomes.
  auto overflow = [&]() -> uint8_t {
    if (saturate)
      return sign | f.maxBits;
    if (f.hasInf)
      return sign | 0x7C;
    return nanBits;
  };
  double a = std::fabs(value);
  if (std::isinf(a))
    return overflow();
  const int minExponent = 1 - f.bias; // of the normal numbers
  int e;
  std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1): floor(log2 a) = e - 1
  int exponent = a == 0 ? minExponent : std::max(e - 1, minExponent);
  // Multiples of `quantum` are exactly the values near `a`.
  int quantumExponent = exponent - f.mantissaBits;
  double rounded = std::ldexp(roundHalfEven(std::ldexp(a, -quantumExponent)),
                              quantumExponent);
  if (rounded > f.max)
    return overflow();
  if (rounded == 0)
    return f.uz ? 0x00 : sign;
  std::frexp(rounded, &e);
  exponent = e - 1;
  int biased, mantissa;
  if (exponent < minExponent) { // subnormal
    biased = 0;
    mantissa =
        static_cast<int>(std::ldexp(rounded, f.mantissaBits - minExponent));
  } else {
    biased = exponent + f.bias;
    mantissa =
        static_cast<int>(std::ldexp(rounded, f.mantissaBits - exponent)) -
        (1 << f.mantissaBits);
  }
  return sign | static_cast<uint8_t>((biased << f.mantissaBits) | mantissa);
}

int8_t doubleToInt4(double value) {
  if (std::isnan(value))
    return 0;
  double r = roundHalfEven(std::fmin(std::fmax(value, -8.0), 7.0));
  return static_cast<int8_t>(r);
}

uint8_t doubleToUInt4(double value) {
  if (std::isnan(value))
    return 0;
  double r = roundHalfEven(std::fmin(std::fmax(value, 0.0), 15.0));
  return static_cast<uint8_t>(r);
}

double lowPrecisionToDouble(DType dtype, uint8_t byte) {
  switch (dtype) {
  case DType::kI4:
    return static_cast<double>(static_cast<int8_t>(byte));
  case DType::kU4:
    return static_cast<double>(byte);
  default:
    return float8ToFloat(dtype, byte);
  }
}

uint8_t lowPrecisionFromDouble(DType dtype, double value, bool saturate) {
  switch (dtype) {
  case DType::kI4:
    return static_cast<uint8_t>(doubleToInt4(value));
  case DType::kU4:
    return doubleToUInt4(value);
  default:
    return floatToFloat8(dtype, value, saturate);
  }
}

void encodeElement(DType dtype, double value, void *element) {
  char *bytes = static_cast<char *>(element);
  switch (dtype) {
  case DType::kF32: {
    float v = static_cast<float>(value);
    std::memcpy(bytes, &v, 4);
    break;
  }
  case DType::kF16: {
    uint16_t v = floatToHalf(static_cast<float>(value));
    std::memcpy(bytes, &v, 2);
    break;
  }
  case DType::kBF16: {
    uint16_t v = floatToBf16(static_cast<float>(value));
    std::memcpy(bytes, &v, 2);
    break;
  }
  case DType::kI8:
    bytes[0] = static_cast<int8_t>(value);
    break;
  case DType::kU8:
    bytes[0] = static_cast<char>(static_cast<uint8_t>(value));
    break;
  case DType::kBool:
    bytes[0] = value != 0;
    break;
  case DType::kI32: {
    int32_t v = static_cast<int32_t>(value);
    std::memcpy(bytes, &v, 4);
    break;
  }
  case DType::kI64: {
    int64_t v = static_cast<int64_t>(value);
    std::memcpy(bytes, &v, 8);
    break;
  }
  case DType::kF64:
    std::memcpy(bytes, &value, 8);
    break;
  case DType::kI16: {
    int16_t v = static_cast<int16_t>(value);
    std::memcpy(bytes, &v, 2);
    break;
  }
  case DType::kU16: {
    uint16_t v = static_cast<uint16_t>(value);
    std::memcpy(bytes, &v, 2);
    break;
  }
  case DType::kU32: {
    uint32_t v = static_cast<uint32_t>(value);
    std::memcpy(bytes, &v, 4);
    break;
  }
  case DType::kU64: {
    uint64_t v = static_cast<uint64_t>(value);
    std::memcpy(bytes, &v, 8);
    break;
  }
  case DType::kF8E4M3FN:
  case DType::kF8E4M3FNUZ:
  case DType::kF8E5M2:
  case DType::kF8E5M2FNUZ:
  case DType::kI4:
  case DType::kU4:
    bytes[0] = static_cast<char>(
        lowPrecisionFromDouble(dtype, value, /*saturate=*/true));
    break;
  case DType::kInvalid:
    break;
  }
}

namespace {
template <typename T> double load(const void *element) {
  T v;
  std::memcpy(&v, element, sizeof(T));
  return static_cast<double>(v);
}
} // namespace

double decodeElement(DType dtype, const void *element) {
  switch (dtype) {
  case DType::kF32:
    return load<float>(element);
  case DType::kF64:
    return load<double>(element);
  case DType::kF16: {
    uint16_t bits;
    std::memcpy(&bits, element, 2);
    return halfToFloat(bits);
  }
  case DType::kBF16: {
    uint16_t bits;
    std::memcpy(&bits, element, 2);
    return bf16ToFloat(bits);
  }
  case DType::kBool:
    return *static_cast<const uint8_t *>(element) != 0;
  case DType::kI8:
    return load<int8_t>(element);
  case DType::kU8:
    return load<uint8_t>(element);
  case DType::kI16:
    return load<int16_t>(element);
  case DType::kU16:
    return load<uint16_t>(element);
  case DType::kI32:
    return load<int32_t>(element);
  case DType::kU32:
    return load<uint32_t>(element);
  case DType::kI64:
    return load<int64_t>(element);
  case DType::kU64:
    return load<uint64_t>(element);
  case DType::kF8E4M3FN:
  case DType::kF8E4M3FNUZ:
  case DType::kF8E5M2:
  case DType::kF8E5M2FNUZ:
  case DType::kI4:
  case DType::kU4:
    return lowPrecisionToDouble(dtype, *static_cast<const uint8_t *>(element));
  case DType::kInvalid:
    break;
  }
  return 0;
}

void unpackNibbles(const uint8_t *packed, int64_t n, bool isSigned,
                   uint8_t *unpacked) {
  for (int64_t i = 0; i < n; ++i) {
    uint8_t nibble = (packed[i / 2] >> (4 * (i % 2))) & 0x0F;
    if (isSigned && (nibble & 0x08))
      nibble |= 0xF0; // sign-extend
    unpacked[i] = nibble;
  }
}

void packNibbles(const uint8_t *unpacked, int64_t n, uint8_t *packed) {
  for (int64_t k = 0; k < (n + 1) / 2; ++k)
    packed[k] = 0;
  for (int64_t i = 0; i < n; ++i)
    packed[i / 2] |=
        static_cast<uint8_t>((unpacked[i] & 0x0F) << (4 * (i % 2)));
}

} // namespace gopt::runtime
