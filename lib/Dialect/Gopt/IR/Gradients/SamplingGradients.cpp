//===- SamplingGradients.cpp - Gradients of the sampling ops -------------===//
//
// DifferentiableOpInterface for grid_sample (with respect to x and grid),
// roi_align (with respect to x; its regions are refused) and max_roi_pool
// (with respect to x; its rounded regions have none): each writes its
// gradient op (GoptSamplingOps.td) with the forward's attributes.
// col2im's gradient is im2col of dy: a gather with an index map built here.
// deform_conv2d writes deform_conv2d_grad (x, filter, offset, mask) and its
// bias's gradient as a reduce_sum of dy.
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/GradientBuilder.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace gopt {

LogicalResult GridSampleOp::buildGradients(GradientBuilder &gradients,
                                           ArrayRef<Value> resultGrads) {
  auto grad = gradients.getBuilder().create<GridSampleGradOp>(
      getLoc(), TypeRange{getX().getType(), getGrid().getType()},
      ValueRange{getX(), getGrid(), resultGrads[0]}, forwardAttributes(*this));
  if (gradients.needsGrad(getX()))
    gradients.accumulate(getX(), grad.getDx());
  if (gradients.needsGrad(getGrid()))
    gradients.accumulate(getGrid(), grad.getDgrid());
  return success();
}

LogicalResult RoiAlignOp::buildGradients(GradientBuilder &gradients,
                                         ArrayRef<Value> resultGrads) {
  // The regions' gradient (how bins move with their corners) is not
  // written; the usual detector trains through x with fixed proposals.
  if (gradients.needsGrad(getRois()))
    return emitNoGradientError(*this)
               << "the loss depends on its rois through a parameter (only "
                  "the gradient with respect to x is implemented)",
           failure();
  if (!gradients.needsGrad(getX()))
    return success();
  Value dx = gradients.getBuilder().create<RoiAlignGradOp>(
      getLoc(), TypeRange{getX().getType()},
      ValueRange{getX(), getRois(), getBatchIndices(), resultGrads[0]},
      forwardAttributes(*this));
  gradients.accumulate(getX(), dx);
  return success();
}

LogicalResult MaxRoiPoolOp::buildGradients(GradientBuilder &gradients,
                                           ArrayRef<Value> resultGrads) {
  // The rounded corners are piecewise constant: no gradient reaches rois.
  if (!gradients.needsGrad(getX()))
    return success();
  Value dx = gradients.getBuilder().create<MaxRoiPoolGradOp>(
      getLoc(), TypeRange{getX().getType()},
      ValueRange{getX(), getRois(), resultGrads[0]}, forwardAttributes(*this));
  gradients.accumulate(getX(), dx);
  return success();
}

// col2im sums x's block elements onto image positions, so x's gradient is
// dy read back at each element's position (im2col), 0 for an element in
// the padding: a gather of dy's flattened image, with one zero appended
// for the padding to read, by the `[K, L]` map of every element's pixel.
LogicalResult Col2ImOp::buildGradients(GradientBuilder &gradients,
                                       ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  ArrayRef<int64_t> image = getImageShape(), block = getBlockShape(),
                    strides = getStrides(), dilations = getDilations(),
                    pads = getPads();
  Value dy = resultGrads[0];
  int64_t channels = cast<RankedTensorType>(dy.getType()).getDimSize(1);
  if (ShapedType::isDynamic(channels))
    return emitNoGradientError(*this) << "a dynamic channel count", failure();
  size_t rank = image.size();
  SmallVector<int64_t> grid;
  int64_t pixels = 1, blockSize = 1, blocks = 1;
  for (size_t d = 0; d < rank; ++d) {
    int64_t extent = dilations[d] * (block[d] - 1) + 1;
    grid.push_back(
        (image[d] + pads[2 * d] + pads[2 * d + 1] - extent) / strides[d] + 1);
    pixels *= image[d];
    blockSize *= block[d];
    blocks *= grid.back();
  }
  // pixel[k][l]: where element k of block l lands; `pixels` (the appended
  // zero) when that is in the padding.
  SmallVector<int64_t> pixelOf(blockSize * blocks);
  for (int64_t k = 0; k < blockSize; ++k)
    for (int64_t l = 0; l < blocks; ++l) {
      int64_t pixel = 0, stride = 1;
      bool inside = true;
      for (int64_t d = static_cast<int64_t>(rank) - 1, restK = k, restL = l;
           d >= 0; --d) {
        int64_t pos = restL % grid[d] * strides[d] - pads[2 * d] +
                      restK % block[d] * dilations[d];
        restK /= block[d];
        restL /= grid[d];
        inside = inside && pos >= 0 && pos < image[d];
        pixel += pos * stride;
        stride *= image[d];
      }
      pixelOf[k * blocks + l] = inside ? pixel : pixels;
    }
  Value indices = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               RankedTensorType::get({blockSize, blocks}, b.getI64Type()),
               ArrayRef<int64_t>(pixelOf)));
  Value flat =
      b.create<ReshapeOp>(loc, dy, ArrayRef<int64_t>{-1, channels, pixels});
  Value withZero =
      b.create<PadOp>(loc, flat, b.getDenseI64ArrayAttr({0, 0, 0, 0, 0, 1}),
                      b.getStringAttr("constant"), b.getF32FloatAttr(0.0f));
  Value columns =
      b.create<GatherOp>(loc, withZero, indices, b.getI64IntegerAttr(2));
  FailureOr<Value> dx = gradients.reshapeTo(*this, columns, getX());
  if (failed(dx))
    return failure();
  gradients.accumulate(getX(), *dx);
  return success();
}

LogicalResult DeformConv2DOp::buildGradients(GradientBuilder &gradients,
                                             ArrayRef<Value> resultGrads) {
  OpBuilder &b = gradients.getBuilder();
  Location loc = getLoc();
  Value dy = resultGrads[0], mask = getMask();
  bool needsMask = mask && gradients.needsGrad(mask);
  if (gradients.needsGrad(getX()) || gradients.needsGrad(getFilter()) ||
      gradients.needsGrad(getOffset()) || needsMask) {
    SmallVector<Value> operands = {getX(), getFilter(), getOffset(), dy};
    if (mask)
      operands.push_back(mask);
    // Without a mask, dmask is that of an all-ones one: offset's shape
    // with one channel per tap instead of two.
    Type maskType = mask ? mask.getType() : Type();
    if (!mask) {
      auto offsetType = cast<RankedTensorType>(getOffset().getType());
      SmallVector<int64_t> dims(offsetType.getShape());
      if (!ShapedType::isDynamic(dims[1]))
        dims[1] /= 2;
      maskType = RankedTensorType::get(dims, offsetType.getElementType());
    }
    auto grad = b.create<DeformConv2DGradOp>(
        loc,
        TypeRange{getX().getType(), getFilter().getType(),
                  getOffset().getType(), maskType},
        operands, forwardAttributes(*this));
    if (gradients.needsGrad(getX()))
      gradients.accumulate(getX(), grad.getDx());
    if (gradients.needsGrad(getFilter()))
      gradients.accumulate(getFilter(), grad.getDfilter());
    if (gradients.needsGrad(getOffset()))
      gradients.accumulate(getOffset(), grad.getDoffset());
    if (needsMask)
      gradients.accumulate(mask, grad.getDmask());
  }
  if (gradients.needsGrad(getBias()))
    gradients.accumulate(
        getBias(),
        b.create<ReduceSumOp>(loc, dy, b.getDenseI64ArrayAttr({0, 2, 3}),
                              b.getBoolAttr(false)));
  return success();
}

} // namespace gopt
