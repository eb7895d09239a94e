//===- GoptSignalOps.cpp - type inference of the signal ops ---------------===//
//
// dft, stft, mel_weight_matrix and det (GoptSignalOps.td): MLIR adapters
// over the shared shape functions in lib/Shape/SignalShapes.cpp.
//
//===----------------------------------------------------------------------===//

#include "OpUtils.h"
#include "gopt/Shape/SignalShapes.h"

using namespace mlir;
using namespace gopt;
using namespace gopt::detail;

static LogicalResult inferTypes(DftOp::Adaptor adaptor, const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  shape::Dims result;
  int64_t axis = 0, length = 0;
  if (failed(error.check(shape::inferDftShape(
          shapeOf(adaptor.getInput()), static_cast<int64_t>(adaptor.getAxis()),
          adaptor.getInverse(), adaptor.getOnesided(),
          static_cast<int64_t>(adaptor.getDftLength()), result, axis, length))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getInput())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(DftOp)

static LogicalResult inferTypes(StftOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  shape::DimsRef window;
  if (adaptor.getWindow()) {
    if (failed(
            verifySameElementTypes({adaptor.getSignal(), adaptor.getWindow()},
                                   {"signal", "window"}, error)))
      return failure();
    window = shapeOf(adaptor.getWindow());
  }
  shape::Dims result;
  int64_t frameLength = 0;
  if (failed(error.check(shape::inferStftShape(
          shapeOf(adaptor.getSignal()), adaptor.getWindow() ? &window : nullptr,
          static_cast<int64_t>(adaptor.getFrameStep()),
          static_cast<int64_t>(adaptor.getFrameLength()), adaptor.getOnesided(),
          result, frameLength))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getSignal())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(StftOp)

static LogicalResult inferTypes(MelWeightMatrixOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  // Without operands the attributes are the only way to the context; a
  // missing one is reported by the ODS verifier.
  if (!adaptor.getNumMelBinsAttr() || !adaptor.getDftLengthAttr() ||
      !adaptor.getSampleRateAttr() || !adaptor.getLowerEdgeHertzAttr() ||
      !adaptor.getUpperEdgeHertzAttr())
    return error("expects num_mel_bins, dft_length, sample_rate, "
                 "lower_edge_hertz and upper_edge_hertz");
  shape::Dims result;
  if (failed(error.check(shape::inferMelWeightMatrixShape(
          static_cast<int64_t>(adaptor.getNumMelBins()),
          static_cast<int64_t>(adaptor.getDftLength()),
          static_cast<int64_t>(adaptor.getSampleRate()),
          adaptor.getLowerEdgeHertz().convertToDouble(),
          adaptor.getUpperEdgeHertz().convertToDouble(), result))))
    return failure();
  inferred.push_back(tensorOf(
      result, Float32Type::get(adaptor.getNumMelBinsAttr().getContext())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(MelWeightMatrixOp)

static LogicalResult inferTypes(DetOp::Adaptor adaptor, const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  shape::Dims result;
  if (failed(
          error.check(shape::inferDetShape(shapeOf(adaptor.getX()), result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(DetOp)

static LogicalResult inferTypes(MatrixInverseOp::Adaptor adaptor,
                                const ShapeError &error,
                                SmallVectorImpl<Type> &inferred) {
  shape::Dims result;
  if (failed(error.check(
          shape::inferMatrixInverseShape(shapeOf(adaptor.getX()), result))))
    return failure();
  inferred.push_back(tensorOf(result, elementTypeOf(adaptor.getX())));
  return success();
}
GOPT_SHAPE_FUNCTION_HOOKS(MatrixInverseOp)
