//===- SamplingShapes.cpp - Shape functions of the sampling ops -----------===//
//
// gopt.grid_sample, roi_align, max_pool_with_indices, max_unpool and col2im
// (GoptSamplingOps.td), following docs/op-semantics.md. No LLVM or MLIR, as
// ShapeFunctions.cpp.
//
//===----------------------------------------------------------------------===//

#include "gopt/Shape/SamplingShapes.h"

#include "Failure.h"
#include <cmath>

namespace gopt::shape {

using detail::fail;
using detail::requireSize;

namespace {

bool sameDim(int64_t a, int64_t b) {
  return isDynamic(a) || isDynamic(b) || a == b;
}

/// [N, C, spatial...] with one to three spatial dims.
Result requireSpatialRank(DimsRef shape, std::string_view name) {
  if (shape.size() < 3 || shape.size() > 5)
    return fail("expects ", name, " of rank 3 to 5 ([N, C, spatial...]), got ",
                formatShape(shape));
  return Result::success();
}

} // namespace

Result inferGridSampleShape(DimsRef x, DimsRef grid, std::string_view mode,
                            std::string_view paddingMode, int64_t alignCorners,
                            Dims &result) {
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return fail("expects mode \"bilinear\", \"nearest\" or \"bicubic\", got \"",
                mode, "\"");
  if (paddingMode != "zeros" && paddingMode != "border" &&
      paddingMode != "reflection")
    return fail("expects padding_mode \"zeros\", \"border\" or "
                "\"reflection\", got \"",
                paddingMode, "\"");
  if (alignCorners != 0 && alignCorners != 1)
    return fail("expects align_corners 0 or 1, got ", alignCorners);
  // 1 to 3 spatial dimensions (ONNX GridSample-20 is N-d; 16 is 2-D).
  if (x.size() < 3 || x.size() > 2 + kMaxGridSampleDims)
    return fail("expects x of rank 3 to 5 ([N, C, D1, ..., Dr], 1 to 3 "
                "spatial dimensions), got ",
                formatShape(x));
  int64_t r = static_cast<int64_t>(x.size()) - 2;
  if (grid.size() != x.size() || !sameDim(grid.back(), r))
    return fail("expects grid of shape [N, D1_out, ..., Dr_out, ", r,
                "] for x ", formatShape(x), ", got ", formatShape(grid));
  if (!sameDim(x[0], grid[0]))
    return fail("expects x and grid to have the same batch size, got ",
                formatShape(x), " and ", formatShape(grid));
  result = {isDynamic(x[0]) ? grid[0] : x[0], x[1]};
  result.insert(result.end(), grid.begin() + 1, grid.end() - 1);
  return Result::success();
}

Result inferRoiAlignShape(DimsRef x, DimsRef rois, DimsRef batchIndices,
                          const RoiAlignParams &params, Dims &result) {
  if (params.mode != "avg" && params.mode != "max")
    return fail("expects mode \"avg\" or \"max\", got \"", params.mode, "\"");
  if (params.coordinateMode != "half_pixel" &&
      params.coordinateMode != "output_half_pixel")
    return fail("expects coordinate_transformation_mode \"half_pixel\" or "
                "\"output_half_pixel\", got \"",
                params.coordinateMode, "\"");
  if (params.outputHeight < 1 || params.outputWidth < 1)
    return fail("expects output_height and output_width >= 1, got ",
                params.outputHeight, " and ", params.outputWidth);
  if (params.samplingRatio < 0)
    return fail("expects sampling_ratio >= 0, got ", params.samplingRatio);
  if (x.size() != 4)
    return fail("expects x of rank 4 ([N, C, H, W]), got ", formatShape(x));
  if (rois.size() != 2 || !sameDim(rois[1], 4))
    return fail("expects rois of shape [R, 4], got ", formatShape(rois));
  if (batchIndices.size() != 1 || !sameDim(batchIndices[0], rois[0]))
    return fail("expects batch_indices of shape [R] (R = ", rois[0],
                " rois), got ", formatShape(batchIndices));
  int64_t r = isDynamic(rois[0]) ? batchIndices[0] : rois[0];
  result = {r, x[1], params.outputHeight, params.outputWidth};
  return Result::success();
}

Result inferMaxRoiPoolShape(DimsRef x, DimsRef rois, DimsRef pooledShape,
                            float spatialScale, Dims &result) {
  if (x.size() != 4)
    return fail("expects x of rank 4 ([N, C, H, W]), got ", formatShape(x));
  if (rois.size() != 2 || !sameDim(rois[1], 5))
    return fail("expects rois of shape [R, 5] ([batch, x1, y1, x2, y2] rows), "
                "got ",
                formatShape(rois));
  if (pooledShape.size() != 2 || pooledShape[0] < 1 || pooledShape[1] < 1)
    return fail("expects pooled_shape of two positive sizes, got ",
                formatShape(pooledShape));
  if (!(spatialScale > 0.0f) || !std::isfinite(spatialScale))
    return fail("expects a finite positive spatial_scale, got ", spatialScale);
  result = {rois[0], x[1], pooledShape[0], pooledShape[1]};
  return Result::success();
}

Result resolvePoolWindowND(DimsRef input, const PoolWindowND &window,
                           std::vector<WindowDim> &dims) {
  if (Result r = requireSpatialRank(input, "x"); r.failed())
    return r;
  size_t k = input.size() - 2;
  if (Result r = requireSize(window.kernel, k, "kernel"); r.failed())
    return r;
  if (Result r = requireSize(window.strides, k, "strides"); r.failed())
    return r;
  if (Result r = requireSize(window.dilations, k, "dilations"); r.failed())
    return r;
  if (Result r = requireSize(window.pads, 2 * k, "pads"); r.failed())
    return r;
  dims.assign(k, WindowDim());
  for (size_t i = 0; i < k; ++i) {
    Result r = computeWindowDim(
        input[2 + i], window.kernel[i], window.strides[i], window.dilations[i],
        window.padding, window.pads[2 * i], window.pads[2 * i + 1],
        window.ceilMode, dims[i]);
    if (r.failed())
      return Result::failure(r.message() + " in spatial dimension " +
                             std::to_string(i));
  }
  return Result::success();
}

Result inferMaxPoolWithIndicesShape(DimsRef x, const PoolWindowND &window,
                                    int64_t storageOrder, Dims &result) {
  if (storageOrder != 0 && storageOrder != 1)
    return fail("expects storage_order 0 or 1, got ", storageOrder);
  std::vector<WindowDim> dims;
  if (Result r = resolvePoolWindowND(x, window, dims); r.failed())
    return r;
  result = {x[0], x[1]};
  for (const WindowDim &d : dims)
    result.push_back(d.outSize);
  return Result::success();
}

Result inferMaxUnpoolShape(DimsRef x, DimsRef indices, DimsRef kernel,
                           DimsRef strides, DimsRef pads,
                           const DimsRef *outputShape, Dims &result) {
  if (Result r = requireSpatialRank(x, "x"); r.failed())
    return r;
  bool same = indices.size() == x.size();
  for (size_t i = 0; same && i < x.size(); ++i)
    same = sameDim(x[i], indices[i]);
  if (!same)
    return fail("expects indices of x's shape ", formatShape(x), ", got ",
                formatShape(indices));
  size_t k = x.size() - 2;
  if (Result r = requireSize(kernel, k, "kernel"); r.failed())
    return r;
  if (Result r = requireSize(strides, k, "strides"); r.failed())
    return r;
  if (Result r = requireSize(pads, 2 * k, "pads"); r.failed())
    return r;
  for (size_t i = 0; i < k; ++i) {
    if (kernel[i] < 1 || strides[i] < 1)
      return fail("expects kernel and strides >= 1, got ", formatList(kernel),
                  " and ", formatList(strides));
    if (pads[2 * i] < 0 || pads[2 * i + 1] < 0)
      return fail("expects pads >= 0, got ", formatList(pads));
  }
  if (outputShape) {
    if (outputShape->size() != x.size())
      return fail("expects output_shape of rank ", x.size(), ", got ",
                  formatList(*outputShape));
    for (size_t i = 0; i < x.size(); ++i)
      if ((*outputShape)[i] < (i < 2 ? 1 : 0) ||
          (i < 2 && !sameDim(x[i], (*outputShape)[i])))
        return fail("expects output_shape with x's N and C and sizes >= 0, "
                    "got ",
                    formatList(*outputShape), " for x ", formatShape(x));
    result.assign(outputShape->begin(), outputShape->end());
    return Result::success();
  }
  result = {x[0], x[1]};
  for (size_t i = 0; i < k; ++i) {
    int64_t in = x[2 + i];
    if (isDynamic(in)) {
      result.push_back(kDynamic);
      continue;
    }
    int64_t out =
        (in - 1) * strides[i] + kernel[i] - pads[2 * i] - pads[2 * i + 1];
    if (out < 0)
      return fail("expects pads that leave a non-negative output size, got ",
                  out, " in spatial dimension ", i);
    result.push_back(out);
  }
  return Result::success();
}

Result inferCol2ImShape(DimsRef x, DimsRef imageShape, DimsRef blockShape,
                        DimsRef strides, DimsRef dilations, DimsRef pads,
                        Dims &result, Dims *blocks) {
  if (x.size() != 3)
    return fail("expects x of rank 3 ([N, C * block size, L]), got ",
                formatShape(x));
  size_t k = blockShape.size();
  if (k < 1)
    return fail("expects a block_shape of one or more spatial dims");
  if (Result r = requireSize(imageShape, k, "image_shape"); r.failed())
    return r;
  if (Result r = requireSize(strides, k, "strides"); r.failed())
    return r;
  if (Result r = requireSize(dilations, k, "dilations"); r.failed())
    return r;
  if (Result r = requireSize(pads, 2 * k, "pads"); r.failed())
    return r;
  int64_t blockSize = 1, count = 1;
  Dims grid;
  for (size_t i = 0; i < k; ++i) {
    if (blockShape[i] < 1 || strides[i] < 1 || dilations[i] < 1)
      return fail("expects block_shape, strides and dilations >= 1, got ",
                  formatList(blockShape), ", ", formatList(strides), " and ",
                  formatList(dilations));
    if (imageShape[i] < 1 || pads[2 * i] < 0 || pads[2 * i + 1] < 0)
      return fail("expects image_shape >= 1 and pads >= 0, got ",
                  formatList(imageShape), " and ", formatList(pads));
    int64_t span = dilations[i] * (blockShape[i] - 1) + 1;
    int64_t padded = imageShape[i] + pads[2 * i] + pads[2 * i + 1];
    if (padded < span)
      return fail("expects blocks that fit the padded image, got a block "
                  "spanning ",
                  span, " in a padded size of ", padded, " in spatial dim ", i);
    grid.push_back((padded - span) / strides[i] + 1);
    blockSize *= blockShape[i];
    count *= grid.back();
  }
  if (!isDynamic(x[1]) && x[1] % blockSize != 0)
    return fail("expects x's dim 1 (", x[1],
                ") to be a multiple of the block size ", blockSize);
  if (!isDynamic(x[2]) && x[2] != count)
    return fail("expects x's dim 2 to be the number of blocks, ", count, " (",
                formatList(grid), "), got ", x[2]);
  result = {x[0], isDynamic(x[1]) ? kDynamic : x[1] / blockSize};
  result.insert(result.end(), imageShape.begin(), imageShape.end());
  if (blocks)
    *blocks = grid;
  return Result::success();
}

Result inferDeformConvShape(DimsRef x, DimsRef filter, DimsRef offset,
                            DimsRef bias, const DimsRef *mask,
                            const DeformConvParams &params, Dims &result) {
  const DeformConvParams &p = params;
  if (x.size() != 4)
    return fail("expects x of rank 4 ([N, C, H, W]), got ", formatShape(x));
  if (filter.size() != 4 || isDynamic(filter[2]) || isDynamic(filter[3]))
    return fail("expects a filter [Cout, C / group, KH, KW] with static KH "
                "and KW, got ",
                formatShape(filter));
  if (Result r = requireSize(p.strides, 2, "strides"); r.failed())
    return r;
  if (Result r = requireSize(p.dilations, 2, "dilations"); r.failed())
    return r;
  if (Result r = requireSize(p.pads, 4, "pads"); r.failed())
    return r;
  for (size_t i = 0; i < 2; ++i)
    if (p.strides[i] < 1 || p.dilations[i] < 1)
      return fail("expects strides and dilations >= 1, got ",
                  formatList(p.strides), " and ", formatList(p.dilations));
  for (int64_t pad : p.pads)
    if (pad < 0)
      return fail("expects pads >= 0, got ", formatList(p.pads));
  if (p.group < 1 || p.offsetGroup < 1)
    return fail("expects group and offset_group >= 1, got ", p.group, " and ",
                p.offsetGroup);
  int64_t channels = x[1], cout = filter[0];
  if (!isDynamic(channels) && !isDynamic(filter[1]) &&
      channels != filter[1] * p.group)
    return fail("expects x's ", channels, " channels to be the filter's ",
                filter[1], " times group ", p.group);
  if (!isDynamic(cout) && cout % p.group != 0)
    return fail("expects the filter's ", cout,
                " output channels to be a multiple of group ", p.group);
  if (!isDynamic(channels) && channels % p.offsetGroup != 0)
    return fail("expects x's ", channels,
                " channels to be a multiple of offset_group ", p.offsetGroup);
  if (bias.size() != 1 || !sameDim(bias[0], cout))
    return fail("expects bias of shape [", cout, "], got ", formatShape(bias));
  Dims out = {x[0], cout, kDynamic, kDynamic};
  for (size_t i = 0; i < 2; ++i) {
    int64_t in = x[2 + i];
    if (isDynamic(in))
      continue;
    int64_t span = p.dilations[i] * (filter[2 + i] - 1) + 1;
    int64_t padded = in + p.pads[2 * i] + p.pads[2 * i + 1];
    if (padded < span)
      return fail("expects a kernel spanning ", span,
                  " to fit the padded input of ", padded, " in spatial dim ",
                  i);
    out[2 + i] = (padded - span) / p.strides[i] + 1;
  }
  int64_t taps = filter[2] * filter[3];
  auto check = [&](DimsRef operand, const char *name,
                   int64_t perGroup) -> Result {
    Dims want = {out[0], p.offsetGroup * perGroup * taps, out[2], out[3]};
    bool same = operand.size() == 4;
    for (size_t i = 0; same && i < 4; ++i)
      same = sameDim(operand[i], want[i]);
    if (!same)
      return fail("expects ", name, " of shape ", formatShape(want), ", got ",
                  formatShape(operand));
    for (size_t i : {size_t(0), size_t(2), size_t(3)})
      if (isDynamic(out[i]))
        out[i] = operand[i];
    return Result::success();
  };
  if (Result r = check(offset, "offset", 2); r.failed())
    return r;
  if (mask)
    if (Result r = check(*mask, "mask", 1); r.failed())
      return r;
  result = out;
  return Result::success();
}

Result inferDeformConvGradShape(DimsRef x, DimsRef filter, DimsRef offset,
                                DimsRef dy, const DimsRef *mask,
                                const DeformConvParams &params, Dims &dmask) {
  Dims bias = {filter.empty() ? kDynamic : filter[0]}, y;
  if (Result r = inferDeformConvShape(x, filter, offset, bias, mask, params, y);
      r.failed())
    return r;
  if (Result r = checkForwardResultGrad(y, dy); r.failed())
    return r;
  if (mask) {
    dmask.assign(mask->begin(), mask->end());
  } else {
    dmask.assign(offset.begin(), offset.end());
    if (!isDynamic(dmask[1]))
      dmask[1] /= 2;
  }
  return Result::success();
}

} // namespace gopt::shape
