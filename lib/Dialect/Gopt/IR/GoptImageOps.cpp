//===- GoptImageOps.cpp - shape functions of the image ops ----------------===//
//
// gopt.conv2d_transpose and gopt.resize (GoptImageOps.td): MLIR adapters
// over the shared shape functions in lib/Shape/ImageShapes.cpp.
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

static LogicalResult inferTypes(Conv2DTransposeOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  SmallVector<Value> operands = {adaptor.getInput(), adaptor.getFilter()};
  SmallVector<StringRef> names = {"input", "filter"};
  if (adaptor.getBias()) {
    operands.push_back(adaptor.getBias());
    names.push_back("bias");
  }
  if (failed(verifySameElementTypes(operands, names, error)))
    return failure();
  shape::Conv2DTransposeParams params;
  params.strides = toDims(adaptor.getStrides());
  params.dilations = toDims(adaptor.getDilations());
  params.pads = toDims(adaptor.getPads());
  params.outputPadding = toDims(adaptor.getOutputPadding());
  params.groups = static_cast<int64_t>(adaptor.getGroups());
  params.dataFormat = adaptor.getDataFormat();
  params.filterFormat = adaptor.getFilterFormat();
  shape::DimsRef bias;
  if (adaptor.getBias())
    bias = shapeOf(adaptor.getBias());
  shape::Dims result;
  if (failed(error.check(shape::inferConv2DTransposeShape(
          shapeOf(adaptor.getInput()), shapeOf(adaptor.getFilter()),
          adaptor.getBias() ? &bias : nullptr, params, result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getInput())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(Conv2DTransposeOp)

/// The result shape of resize (or of the resize a resize_grad undoes) for
/// input shape `input` and the op's attributes.
template <typename Adaptor>
static LogicalResult inferResizeResult(Adaptor adaptor, shape::DimsRef input,
                                       const ShapeError &error,
                                       shape::Dims &result) {
  shape::ResizeParams params;
  std::vector<float> scales, roi;
  shape::Dims sizes;
  if (auto attr = adaptor.getScalesAttr()) {
    scales.assign(attr.asArrayRef().begin(), attr.asArrayRef().end());
    params.scales = &scales;
  }
  if (auto attr = adaptor.getSizesAttr()) {
    sizes = toDims(attr.asArrayRef());
    params.sizes = &sizes;
  }
  if (auto attr = adaptor.getRoiAttr()) {
    roi.assign(attr.asArrayRef().begin(), attr.asArrayRef().end());
    params.roi = &roi;
  }
  params.mode = adaptor.getMode();
  params.coordinateTransformationMode =
      adaptor.getCoordinateTransformationMode();
  params.nearestMode = adaptor.getNearestMode();
  params.dataFormat = adaptor.getDataFormat();
  return error.check(shape::inferResizeShape(input, params, result));
}

static LogicalResult inferTypes(ResizeOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  shape::Dims result;
  if (failed(inferResizeResult(adaptor, shapeOf(adaptor.getInput()), error,
                               result)))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getInput())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(ResizeOp)

/// resize_grad: dx has x's type; dy must have the shape resize gives x.
static LogicalResult inferTypes(ResizeGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifySameElementTypes({adaptor.getX(), adaptor.getDy()},
                                    {"x", "dy"}, error)))
    return failure();
  shape::Dims forward;
  if (failed(
          inferResizeResult(adaptor, shapeOf(adaptor.getX()), error, forward)))
    return failure();
  shape::DimsRef dy = shapeOf(adaptor.getDy());
  bool compatible = dy.size() == forward.size();
  for (size_t i = 0; compatible && i < forward.size(); ++i)
    compatible = shape::isDynamic(dy[i]) || shape::isDynamic(forward[i]) ||
                 dy[i] == forward[i];
  if (!compatible)
    return error("expects dy of the shape resize gives x, ",
                 adaptor.getX().getType(), ", got ", adaptor.getDy().getType());
  inferred.push_back(adaptor.getX().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(ResizeGradOp)
