//===- DynamicOps.h - Dynamic ops' values as static attributes --*- C++ -*-===//
//
// A dynamic op (Gopt_DynamicOp in GoptDynamicShapeOps.td) runs as its static
// op once the values of its value operands are known: on the host while the
// runtime resolves shapes, or at compile time when they are constants. Both
// sides read the values into ValueAttrs (one per value operand, named by
// ODS's hostValueAttrs) and run the op's adapter, which turns a framework's
// meaning into the static op's attributes. Plain C++, as ShapeFunctions.h.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_SHAPE_DYNAMICOPS_H
#define GOPT_SHAPE_DYNAMICOPS_H

#include "gopt/Shape/ShapeFunctions.h"

#include <string>
#include <vector>

namespace gopt::shape {

/// One attribute of the static op. `ints` holds an integer operand's values
/// (empty for a float operand), `floats` every operand's values as double.
struct ValueAttr {
  std::string name;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  bool isInteger = true;
};
using ValueAttrs = std::vector<ValueAttr>;

/// The attribute named `name`, or nullptr.
ValueAttr *findValueAttr(ValueAttrs &attrs, const std::string &name);

/// Rewrites `attrs` into the static op's attributes; `operands` are the
/// dynamic op's operand shapes (kDynamic where unknown: an adapter that needs
/// such a dimension fails, and the op stays dynamic at compile time).
using ValueAttrAdapter = Result (*)(const std::vector<Dims> &operands,
                                    ValueAttrs &attrs);

/// ONNX Slice's starts, ends, axes, steps (negative bounds and axes count
/// from the end, bounds clamp) -> gopt.slice's starts, ends, steps.
Result adaptOnnxSlice(const std::vector<Dims> &operands, ValueAttrs &attrs);
/// ONNX Unsqueeze's and Squeeze's axes -> gopt.reshape's shape.
Result adaptOnnxUnsqueeze(const std::vector<Dims> &operands, ValueAttrs &attrs);
Result adaptOnnxSqueeze(const std::vector<Dims> &operands, ValueAttrs &attrs);
/// ONNX Pad's [begins..., ends...] -> gopt.pad's [begin0, end0, ...].
Result adaptOnnxPads(const std::vector<Dims> &operands, ValueAttrs &attrs);
/// ONNX Resize's roi, scales and sizes over NCHW (one entry per dimension,
/// roi every start then every end; empty when absent) -> gopt.resize's H
/// and W entries; N and C must keep their size.
Result adaptOnnxResize(const std::vector<Dims> &operands, ValueAttrs &attrs);

/// gopt.range: max(ceil((limit - start) / delta), 0) elements.
Result inferRangeShape(double start, double limit, double delta, Dims &result);

} // namespace gopt::shape

#endif // GOPT_SHAPE_DYNAMICOPS_H
