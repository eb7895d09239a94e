//===- ShapeInference.cpp - Shape functions of gopt ops -------------------===//
//
// Adapters from MLIR types to the shared shape functions
// (lib/Shape/ShapeFunctions.cpp), which hold the implementation.
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/ShapeInference.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace gopt {

static_assert(shape::kDynamic == ShapedType::kDynamic,
              "the shared shape functions' dynamic dimension is MLIR's");

namespace {

/// Runs a shared shape function writing a shape::Dims and copies the result
/// into `result` on success.
template <typename Fn>
LogicalResult inferInto(Shape &result, const ShapeError &error, Fn &&fn) {
  shape::Dims dims;
  if (failed(error.check(fn(dims))))
    return failure();
  result.assign(dims.begin(), dims.end());
  return success();
}

} // namespace

FailureOr<Layout> parseDataFormat(StringRef format, const ShapeError &error) {
  Layout layout;
  if (failed(error.check(shape::parseDataFormat(format, layout))))
    return failure();
  return layout;
}

FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank, StringRef attrName,
                                 const ShapeError &error) {
  int64_t normalized;
  if (failed(
          error.check(shape::normalizeAxis(axis, rank, attrName, normalized))))
    return failure();
  return normalized;
}

FailureOr<int64_t> inferWindowOutputSize(int64_t inputSize,
                                         const WindowParams &params, unsigned i,
                                         const ShapeError &error) {
  int64_t size;
  if (failed(error.check(
          shape::inferWindowOutputSize(inputSize, params, i, size))))
    return failure();
  return size;
}

LogicalResult inferBroadcastShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                                  Shape &result, const ShapeError &error) {
  return inferInto(result, error, [&](shape::Dims &dims) {
    return shape::inferBroadcastShape(lhs, rhs, dims);
  });
}

LogicalResult inferConv2DShape(ArrayRef<int64_t> input,
                               ArrayRef<int64_t> filter,
                               std::optional<ArrayRef<int64_t>> bias,
                               const Conv2DParams &params, Shape &result,
                               const ShapeError &error) {
  return inferInto(result, error, [&](shape::Dims &dims) {
    shape::DimsRef biasDims;
    if (bias)
      biasDims = *bias;
    return shape::inferConv2DShape(input, filter, bias ? &biasDims : nullptr,
                                   params, dims);
  });
}

LogicalResult inferPoolShape(ArrayRef<int64_t> input,
                             const WindowParams &params, StringRef dataFormat,
                             Shape &result, const ShapeError &error) {
  return inferInto(result, error, [&](shape::Dims &dims) {
    return shape::inferPoolShape(input, params, dataFormat, dims);
  });
}

LogicalResult inferMatMulShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                               bool transposeA, bool transposeB, Shape &result,
                               const ShapeError &error) {
  return inferInto(result, error, [&](shape::Dims &dims) {
    return shape::inferMatMulShape(a, b, transposeA, transposeB, dims);
  });
}

LogicalResult inferReduceShape(ArrayRef<int64_t> input, ArrayRef<int64_t> axes,
                               bool keepDims, Shape &result,
                               const ShapeError &error) {
  return inferInto(result, error, [&](shape::Dims &dims) {
    return shape::inferReduceShape(input, axes, keepDims, dims);
  });
}

LogicalResult inferReshapeShape(ArrayRef<int64_t> input,
                                ArrayRef<int64_t> shape, Shape &result,
                                const ShapeError &error) {
  return inferInto(result, error, [&](shape::Dims &dims) {
    return shape::inferReshapeShape(input, shape, dims);
  });
}

LogicalResult inferFlattenShape(ArrayRef<int64_t> input, int64_t axis,
                                Shape &result, const ShapeError &error) {
  return inferInto(result, error, [&](shape::Dims &dims) {
    return shape::inferFlattenShape(input, axis, dims);
  });
}

LogicalResult inferTransposeShape(ArrayRef<int64_t> input,
                                  ArrayRef<int64_t> perm, Shape &result,
                                  const ShapeError &error) {
  return inferInto(result, error, [&](shape::Dims &dims) {
    return shape::inferTransposeShape(input, perm, dims);
  });
}

LogicalResult inferConcatShape(ArrayRef<ArrayRef<int64_t>> inputs, int64_t axis,
                               Shape &result, const ShapeError &error) {
  std::vector<shape::DimsRef> refs(inputs.begin(), inputs.end());
  return inferInto(result, error, [&](shape::Dims &dims) {
    return shape::inferConcatShape(refs, axis, dims);
  });
}

LogicalResult inferSliceShape(ArrayRef<int64_t> input, ArrayRef<int64_t> starts,
                              ArrayRef<int64_t> ends, ArrayRef<int64_t> steps,
                              Shape &result, const ShapeError &error) {
  return inferInto(result, error, [&](shape::Dims &dims) {
    return shape::inferSliceShape(input, starts, ends, steps, dims);
  });
}

LogicalResult inferPadShape(ArrayRef<int64_t> input, ArrayRef<int64_t> pads,
                            StringRef mode, Shape &result,
                            const ShapeError &error) {
  return inferInto(result, error, [&](shape::Dims &dims) {
    return shape::inferPadShape(input, pads, mode, dims);
  });
}

LogicalResult inferDequantizeShape(ArrayRef<int64_t> values,
                                   ArrayRef<int64_t> scales, int64_t axis,
                                   Shape &result, const ShapeError &error) {
  return inferInto(result, error, [&](shape::Dims &dims) {
    return shape::inferDequantizeShape(values, scales, axis, dims);
  });
}

} // namespace gopt
