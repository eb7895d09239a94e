//===- LowPrecision.h - Element conversions ---------------------*- C++ -*-===//
//
// float8, 4-bit and single scalars. ONNX's float8 types (FLOAT8E4M3FN,
// FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ) and 4-bit integers (INT4, UINT4).
// In memory and in plans each element takes one byte: float8 is its own bit
// pattern, i4 is the value sign-extended to an int8_t and u4 the value in a
// uint8_t. ONNX packs 4-bit tensors two to a byte (low nibble first); the
// importer and exporter convert with unpackNibbles / packNibbles.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_LOWPRECISION_H
#define GOPT_RUNTIME_LOWPRECISION_H

#include "gopt/runtime/Tensor.h"

#include <cstdint>

namespace gopt::runtime {

// The value of one float8 byte (`dtype` one of the float8 types): NaN for
// each type's NaN encodings, +-infinity only for f8e5m2.
float float8ToFloat(DType dtype, uint8_t bits);

// `value` rounded to nearest even in `dtype` (a float8 type), as ONNX's
// Cast-19 defines it. With `saturate`, infinities and values beyond the
// largest finite value become that value (with their sign); without, they
// become infinity in f8e5m2 and NaN in the others. NaN stays NaN; the FNUZ
// types have no negative zero (-0 and negative values that round to zero are
// +0).
uint8_t floatToFloat8(DType dtype, double value, bool saturate);

// The largest finite value of a float8 type (448, 240, 57344, 57344).
double float8Max(DType dtype);

// `value` rounded to nearest even and clamped to -8..7 (i4) or 0..15 (u4);
// NaN becomes 0.
int8_t doubleToInt4(double value);
uint8_t doubleToUInt4(double value);

// Element i of a low-precision tensor's bytes as a double, and back
// (`saturate` matters for the float8 types only).
double lowPrecisionToDouble(DType dtype, uint8_t byte);
uint8_t lowPrecisionFromDouble(DType dtype, double value, bool saturate);

// Writes `value` as one element of `dtype` at `element` (an attribute such as
// Pad's fill value, which plans keep as a double). Float types round to
// nearest, integers truncate toward zero, float8 and 4-bit types saturate.
// Every backend fills through this one function so no dtype is left out.
void encodeElement(DType dtype, double value, void *element);

// The element of `dtype` at `element` as a double (u64 and i64 beyond 2^53
// round).
double decodeElement(DType dtype, const void *element);

// ONNX's packing of 4-bit tensors: element 2k in the low nibble of byte k,
// element 2k+1 in its high nibble. `unpacked` has `n` bytes (sign-extended
// when `isSigned`), `packed` (n + 1) / 2.
void unpackNibbles(const uint8_t *packed, int64_t n, bool isSigned,
                   uint8_t *unpacked);
void packNibbles(const uint8_t *unpacked, int64_t n, uint8_t *packed);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_LOWPRECISION_H
