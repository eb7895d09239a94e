//===- GoptVolumeOps.cpp - type inference of the 3-D window ops -----------===//
//
// conv3d, conv3d_transpose, max_pool3d and avg_pool3d and their gradients
// (GoptVolumeOps.td): MLIR adapters over the shared shape functions in
// lib/Shape/VolumeShapes.cpp.
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

namespace gopt::detail {
template <>
unsigned getExpectedResultCount<Conv3DGradOp>(Conv3DGradOp::Adaptor) {
  return 2;
}
} // namespace gopt::detail

namespace {

/// Input, filter and the optional bias share one element type.
LogicalResult verifyConvElementTypes(Value input, Value filter, Value bias,
                                     const ShapeError &error) {
  SmallVector<Value> operands = {input, filter};
  SmallVector<StringRef> names = {"input", "filter"};
  if (bias) {
    operands.push_back(bias);
    names.push_back("bias");
  }
  return verifySameElementTypes(operands, names, error);
}

/// conv3d's window (the kernel comes from the filter).
template <typename Adaptor> shape::VolumeWindow convWindow(Adaptor adaptor) {
  shape::VolumeWindow window;
  window.strides = toDims(adaptor.getStrides());
  window.dilations = toDims(adaptor.getDilations());
  window.padding = adaptor.getPadding();
  window.pads = toDims(adaptor.getPads());
  return window;
}

/// The pools' window.
template <typename Adaptor> shape::VolumeWindow poolWindow(Adaptor adaptor) {
  shape::VolumeWindow window;
  window.kernel = toDims(adaptor.getKernel());
  window.strides = toDims(adaptor.getStrides());
  window.dilations = toDims(adaptor.getDilations());
  window.padding = adaptor.getPadding();
  window.pads = toDims(adaptor.getPads());
  window.ceilMode = adaptor.getCeilMode();
  return window;
}

} // namespace

static LogicalResult inferTypes(Conv3DOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifyConvElementTypes(adaptor.getInput(), adaptor.getFilter(),
                                    adaptor.getBias(), error)))
    return failure();
  shape::VolumeWindow window;
  window.strides = toDims(adaptor.getStrides());
  window.dilations = toDims(adaptor.getDilations());
  window.padding = adaptor.getPadding();
  window.pads = toDims(adaptor.getPads());
  shape::DimsRef bias;
  if (adaptor.getBias())
    bias = shapeOf(adaptor.getBias());
  shape::Dims result;
  if (failed(error.check(shape::inferConv3DShape(
          shapeOf(adaptor.getInput()), shapeOf(adaptor.getFilter()),
          adaptor.getBias() ? &bias : nullptr, window,
          static_cast<int64_t>(adaptor.getGroups()), result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getInput())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(Conv3DOp)

static LogicalResult inferTypes(Conv3DTransposeOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifyConvElementTypes(adaptor.getInput(), adaptor.getFilter(),
                                    adaptor.getBias(), error)))
    return failure();
  shape::Conv3DTransposeParams params;
  params.strides = toDims(adaptor.getStrides());
  params.dilations = toDims(adaptor.getDilations());
  params.pads = toDims(adaptor.getPads());
  params.outputPadding = toDims(adaptor.getOutputPadding());
  params.groups = static_cast<int64_t>(adaptor.getGroups());
  shape::DimsRef bias;
  if (adaptor.getBias())
    bias = shapeOf(adaptor.getBias());
  shape::Dims result;
  if (failed(error.check(shape::inferConv3DTransposeShape(
          shapeOf(adaptor.getInput()), shapeOf(adaptor.getFilter()),
          adaptor.getBias() ? &bias : nullptr, params, result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getInput())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(Conv3DTransposeOp)

template <typename Adaptor>
static LogicalResult inferPool3DTypes(Adaptor adaptor, const ShapeError &error,
                                      SmallVectorImpl<Type> &inferred) {
  shape::VolumeWindow window;
  window.kernel = toDims(adaptor.getKernel());
  window.strides = toDims(adaptor.getStrides());
  window.dilations = toDims(adaptor.getDilations());
  window.padding = adaptor.getPadding();
  window.pads = toDims(adaptor.getPads());
  window.ceilMode = adaptor.getCeilMode();
  shape::Dims result;
  if (failed(error.check(
          shape::inferPool3DShape(shapeOf(adaptor.getX()), window, result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getX())));
  return success();
}

static LogicalResult inferTypes(MaxPool3DOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  return inferPool3DTypes(adaptor, error, inferred);
}
GOPT_SHAPE_FUNCTION_HOOKS(MaxPool3DOp)

static LogicalResult inferTypes(AvgPool3DOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  return inferPool3DTypes(adaptor, error, inferred);
}
GOPT_SHAPE_FUNCTION_HOOKS(AvgPool3DOp)

static LogicalResult inferTypes(Conv3DGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  if (failed(verifyConvElementTypes(adaptor.getInput(), adaptor.getFilter(),
                                    adaptor.getDy(), error)))
    return failure();
  shape::Dims y;
  if (failed(error.check(shape::inferConv3DShape(
          shapeOf(adaptor.getInput()), shapeOf(adaptor.getFilter()), nullptr,
          convWindow(adaptor), static_cast<int64_t>(adaptor.getGroups()),
          y))) ||
      failed(error.check(
          shape::checkForwardResultGrad(y, shapeOf(adaptor.getDy())))))
    return failure();
  inferred.push_back(adaptor.getInput().getType());
  inferred.push_back(adaptor.getFilter().getType());
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(Conv3DGradOp)

template <typename Adaptor>
static LogicalResult inferPool3DGradTypes(Adaptor adaptor,
                                          const ShapeError &error,
                                          SmallVectorImpl<Type> &inferred) {
  shape::Dims y;
  if (failed(error.check(shape::inferPool3DShape(shapeOf(adaptor.getX()),
                                                 poolWindow(adaptor), y))) ||
      failed(error.check(
          shape::checkForwardResultGrad(y, shapeOf(adaptor.getDy())))))
    return failure();
  inferred.push_back(adaptor.getX().getType());
  return success();
}

static LogicalResult inferTypes(MaxPool3DGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  return inferPool3DGradTypes(adaptor, error, inferred);
}
GOPT_SHAPE_FUNCTION_HOOKS(MaxPool3DGradOp)

static LogicalResult inferTypes(AvgPool3DGradOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  return inferPool3DGradTypes(adaptor, error, inferred);
}
GOPT_SHAPE_FUNCTION_HOOKS(AvgPool3DGradOp)
