//===- LowPrecisionTest.cpp - float8 and 4-bit conversions ----------------===//
//
// Decoding is checked over all 256 bytes of each float8 type against the
// types' definitions written as steps (each code's value is the previous
// one plus the ulp of its binade), encoding at the cases ONNX's Cast-19
// tables single out: ties, the largest values, infinities, NaN, negative
// zero and subnormals.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/LowPrecision.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace gopt::runtime;

namespace {

struct Format {
  DType dtype;
  int mantissaBits;
  int bias;
  // What the codes above the largest finite one are, per type.
  bool fnuz;
  bool ieee; // e5m2: exponent all ones is inf (mantissa 0) or NaN
  double max;
};

const Format kFormats[] = {
    {DType::kF8E4M3FN, 3, 7, false, false, 448.0},
    {DType::kF8E4M3FNUZ, 3, 8, true, false, 240.0},
    {DType::kF8E5M2, 2, 15, false, true, 57344.0},
    {DType::kF8E5M2FNUZ, 2, 16, true, false, 57344.0},
};

TEST(Float8, DecodesAll256BytesOfEachType) {
  for (const Format &f : kFormats) {
    SCOPED_TRACE(dtypeName(f.dtype));
    // Positive codes: 0 is zero, then each step adds the ulp of the binade
    // the previous code is in (subnormals share the first binade's ulp).
    double expected = 0.0;
    int steps = 1 << f.mantissaBits;
    for (int code = 0; code < 128; ++code) {
      if (code > 0) {
        int binade = std::max(1, (code - 1) / steps); // biased exponent
        expected += std::ldexp(1.0, binade - f.bias - f.mantissaBits);
      }
      float pos = float8ToFloat(f.dtype, static_cast<uint8_t>(code));
      float neg = float8ToFloat(f.dtype, static_cast<uint8_t>(code | 0x80));
      bool nan =
          (!f.fnuz && !f.ieee && code == 0x7F) || (f.ieee && code > 0x7C);
      bool inf = f.ieee && code == 0x7C;
      if (nan) {
        EXPECT_TRUE(std::isnan(pos)) << code;
        EXPECT_TRUE(std::isnan(neg)) << code;
      } else if (inf) {
        EXPECT_EQ(pos, std::numeric_limits<float>::infinity());
        EXPECT_EQ(neg, -std::numeric_limits<float>::infinity());
      } else {
        EXPECT_EQ(pos, expected) << code;
        if (f.fnuz && code == 0) {
          EXPECT_TRUE(std::isnan(neg)); // 0x80 is FNUZ's only NaN
        } else {
          EXPECT_EQ(neg, -expected) << code;
          EXPECT_TRUE(std::signbit(neg)) << code; // -0 too
        }
      }
      // Every finite value is exact and encodes back to its code.
      if (!nan && !inf && !(f.fnuz && code == 0))
        EXPECT_EQ(floatToFloat8(f.dtype, expected, false), code);
    }
    EXPECT_EQ(float8Max(f.dtype), f.max);
  }
  EXPECT_EQ(float8ToFloat(DType::kF8E4M3FN, 0x7E), 448.0f);
  EXPECT_EQ(float8ToFloat(DType::kF8E4M3FN, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(float8ToFloat(DType::kF8E4M3FNUZ, 0x7F), 240.0f);
  EXPECT_EQ(float8ToFloat(DType::kF8E4M3FNUZ, 0x01), std::ldexp(1.0f, -10));
  EXPECT_EQ(float8ToFloat(DType::kF8E5M2, 0x7B), 57344.0f);
  EXPECT_EQ(float8ToFloat(DType::kF8E5M2, 0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(float8ToFloat(DType::kF8E5M2FNUZ, 0x7F), 57344.0f);
  EXPECT_EQ(float8ToFloat(DType::kF8E5M2FNUZ, 0x01), std::ldexp(1.0f, -17));
  EXPECT_EQ(float8ToFloat(DType::kF8E4M3FN, 0x38), 1.0f);
  EXPECT_EQ(float8ToFloat(DType::kF8E5M2, 0x3C), 1.0f);
}

TEST(Float8, EncodeRoundsTiesToEven) {
  const DType e4m3 = DType::kF8E4M3FN;
  // 1 + 1/16 lies halfway between 1 (mantissa 000) and 1.125 (001).
  EXPECT_EQ(floatToFloat8(e4m3, 1.0625, true), 0x38);
  // 1.1875 between 1.125 (001) and 1.25 (010): up, to the even one.
  EXPECT_EQ(floatToFloat8(e4m3, 1.1875, true), 0x3A);
  // Just above and below a tie go to the nearer value.
  EXPECT_EQ(floatToFloat8(e4m3, std::nextafter(1.0625, 2.0), true), 0x39);
  EXPECT_EQ(floatToFloat8(e4m3, std::nextafter(1.1875, 0.0), true), 0x39);
  EXPECT_EQ(floatToFloat8(e4m3, -1.0625, true), 0xB8);
  // e5m2: 1.125 between 1 (00) and 1.25 (01) -> 1; 1.375 -> 1.5 (10).
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2, 1.125, true), 0x3C);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2, 1.375, true), 0x3E);
}

TEST(Float8, EncodeSaturatesOrOverflows) {
  const double inf = std::numeric_limits<double>::infinity();
  // e4m3fn: 464 is the tie between 448 and the (NaN) code above: 448.
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FN, 464.0, false), 0x7E);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FN, 465.0, false), 0x7F); // NaN
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FN, 465.0, true), 0x7E);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FN, -1e9, true), 0xFE);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FN, -1e9, false), 0xFF);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FN, inf, true), 0x7E);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FN, -inf, false), 0xFF);
  // e4m3fnuz: 248 is the tie between 240 (odd) and 256: overflows.
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FNUZ, 247.0, false), 0x7F);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FNUZ, 248.0, false), 0x80);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FNUZ, 248.0, true), 0x7F);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FNUZ, -inf, true), 0xFF);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FNUZ, inf, false), 0x80);
  // e5m2: 61440 ties between 57344 (odd) and 65536: infinity, or the max.
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2, 61439.0, false), 0x7B);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2, 61440.0, false), 0x7C);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2, -61440.0, false), 0xFC);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2, 61440.0, true), 0x7B);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2, inf, false), 0x7C);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2, -inf, true), 0xFB);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2FNUZ, 1e6, false), 0x80);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2FNUZ, -1e6, true), 0xFF);
}

TEST(Float8, EncodeNaNAndZeros) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FN, nan, true), 0x7F);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FN, -nan, true), 0xFF);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2, nan, false), 0x7F);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FNUZ, -nan, true), 0x80);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2FNUZ, nan, false), 0x80);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FN, -0.0, true), 0x80);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2, -0.0, true), 0x80);
  // FNUZ has no -0: it and negative values that round to 0 are +0.
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FNUZ, -0.0, true), 0x00);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2FNUZ, -1e-30, false), 0x00);
  EXPECT_EQ(floatToFloat8(DType::kF8E4M3FN, -1e-30, false), 0x80);
}

TEST(Float8, EncodeSubnormals) {
  const DType e4m3 = DType::kF8E4M3FN;
  // Half the smallest subnormal (2^-9) ties between 0 and it: 0.
  EXPECT_EQ(floatToFloat8(e4m3, std::ldexp(1.0, -10), true), 0x00);
  EXPECT_EQ(floatToFloat8(e4m3, std::ldexp(1.01, -10), true), 0x01);
  // 1.5 ulps ties between 1 and 2 ulps: 2.
  EXPECT_EQ(floatToFloat8(e4m3, std::ldexp(3.0, -10), true), 0x02);
  // 7.5 ulps ties between the largest subnormal and the smallest normal.
  EXPECT_EQ(floatToFloat8(e4m3, std::ldexp(15.0, -10), true), 0x08);
  EXPECT_EQ(floatToFloat8(e4m3, std::ldexp(13.0, -10), true), 0x06);
  // f32 subnormals and values far below the range become zero.
  EXPECT_EQ(floatToFloat8(e4m3, std::ldexp(1.0, -140), true), 0x00);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2, std::ldexp(3.0, -18), true), 0x01);
  EXPECT_EQ(floatToFloat8(DType::kF8E5M2FNUZ, std::ldexp(3.0, -18), true),
            0x02);
}

TEST(FourBit, RoundsToNearestEvenAndClamps) {
  EXPECT_EQ(doubleToInt4(2.5), 2);
  EXPECT_EQ(doubleToInt4(3.5), 4);
  EXPECT_EQ(doubleToInt4(-2.5), -2);
  EXPECT_EQ(doubleToInt4(-8.5), -8);
  EXPECT_EQ(doubleToInt4(7.6), 7);
  EXPECT_EQ(doubleToInt4(-100), -8);
  EXPECT_EQ(doubleToInt4(std::numeric_limits<double>::quiet_NaN()), 0);
  EXPECT_EQ(doubleToUInt4(-1.0), 0);
  EXPECT_EQ(doubleToUInt4(14.5), 14);
  EXPECT_EQ(doubleToUInt4(15.5), 15);
  EXPECT_EQ(doubleToUInt4(1e9), 15);
  EXPECT_EQ(lowPrecisionToDouble(DType::kI4, 0xF8), -8.0);
  EXPECT_EQ(lowPrecisionToDouble(DType::kU4, 0x0F), 15.0);
}

TEST(FourBit, PacksLowNibbleFirst) {
  const uint8_t values[] = {0x01, 0xFF, 0x07}; // i4: 1, -1, 7
  uint8_t packed[2];
  packNibbles(values, 3, packed);
  EXPECT_EQ(packed[0], 0xF1);
  EXPECT_EQ(packed[1], 0x07);
  uint8_t back[3];
  unpackNibbles(packed, 3, /*isSigned=*/true, back);
  EXPECT_EQ(back[0], 0x01);
  EXPECT_EQ(back[1], 0xFF);
  EXPECT_EQ(back[2], 0x07);
  unpackNibbles(packed, 3, /*isSigned=*/false, back);
  EXPECT_EQ(back[1], 0x0F);
}

// Every dtype a plan can hold gets its own encoding of a fill value: a dtype
// that fell through would fill with zeros, a silently wrong Pad.
TEST(EncodeElement, WritesEveryDTypeInItsOwnEncoding) {
  for (DType dtype : allDTypes()) {
    if (dtype == DType::kInvalid)
      continue;
    char bytes[8] = {0};
    encodeElement(dtype, 3.0, bytes);
    double back = 0;
    switch (dtype) {
    case DType::kF32: {
      float v;
      std::memcpy(&v, bytes, 4);
      back = v;
      break;
    }
    case DType::kF64:
      std::memcpy(&back, bytes, 8);
      break;
    case DType::kF16: {
      uint16_t v;
      std::memcpy(&v, bytes, 2);
      back = halfToFloat(v);
      break;
    }
    case DType::kBF16: {
      uint16_t v;
      std::memcpy(&v, bytes, 2);
      back = bf16ToFloat(v);
      break;
    }
    case DType::kBool:
      back = bytes[0] ? 3.0 : 0.0;
      break;
    default:
      if (isLowPrecisionDType(dtype)) {
        back = lowPrecisionToDouble(dtype, static_cast<uint8_t>(bytes[0]));
        break;
      }
      // Integers: little-endian, the value in the low byte.
      back = static_cast<uint8_t>(bytes[0]);
      for (size_t i = 1; i < dtypeSize(dtype); ++i)
        EXPECT_EQ(bytes[i], 0) << dtypeName(dtype);
      break;
    }
    EXPECT_EQ(back, 3.0) << dtypeName(dtype);
  }
  char bytes[8];
  encodeElement(DType::kI8, -2.9, bytes);
  EXPECT_EQ(static_cast<int8_t>(bytes[0]), -2);
  encodeElement(DType::kF8E4M3FN, 1e6, bytes);
  EXPECT_EQ(lowPrecisionToDouble(DType::kF8E4M3FN, bytes[0]), 448.0);
  int64_t wide;
  encodeElement(DType::kI64, -5.0, &wide);
  EXPECT_EQ(wide, -5);
}

TEST(DecodeElement, ReadsBackWhatEncodeElementWrote) {
  for (DType dtype : allDTypes()) {
    if (dtype == DType::kInvalid)
      continue;
    for (double value : {0.0, 1.0, 5.0, -2.0}) {
      if (value < 0 && (isUnsignedDType(dtype) || dtype == DType::kU4 ||
                        dtype == DType::kBool))
        continue;
      double expected = dtype == DType::kBool ? value != 0 : value;
      char bytes[8] = {0};
      encodeElement(dtype, value, bytes);
      EXPECT_EQ(decodeElement(dtype, bytes), expected)
          << dtypeName(dtype) << " " << value;
    }
  }
}

} // namespace
