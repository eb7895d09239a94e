//===- VolumeShapes.cpp - Shape functions of the 3-D window ops -----------===//
//
// gopt.conv3d, conv3d_transpose, max_pool3d and avg_pool3d
// (GoptVolumeOps.td), over NCDHW, following docs/op-semantics.md. Each
// spatial dim goes through computeWindowDim (conv2d's and the 2-D pools'
// arithmetic) or conv2dTransposeOutputSize. No LLVM or MLIR, as
// ShapeFunctions.cpp.
//
//===----------------------------------------------------------------------===//

#include "Failure.h"
#include "gopt/Shape/ShapeFunctions.h"

namespace gopt::shape {

using detail::fail;
using detail::requireSize;

namespace {

constexpr const char *kSpatialNames[3] = {"D", "H", "W"};

Result requireRank5(DimsRef shape, std::string_view name) {
  if (shape.size() != 5)
    return fail("expects ", name, " of rank 5 ([N, C, D, H, W]), got ",
                formatShape(shape));
  return Result::success();
}

Result requireAtLeast(DimsRef values, int64_t least, std::string_view name) {
  for (int64_t v : values)
    if (v < least)
      return fail("expects ", name, " >= ", least, ", got ",
                  formatList(values));
  return Result::success();
}

} // namespace

Result resolveVolumeWindow(DimsRef input, const VolumeWindow &window,
                           WindowDim dims[3]) {
  if (Result r = requireRank5(input, "input"); r.failed())
    return r;
  if (Result r = requireSize(window.kernel, 3, "kernel"); r.failed())
    return r;
  if (Result r = requireSize(window.strides, 3, "strides"); r.failed())
    return r;
  if (Result r = requireSize(window.dilations, 3, "dilations"); r.failed())
    return r;
  if (Result r = requireSize(window.pads, 6, "pads"); r.failed())
    return r;
  for (int i = 0; i < 3; ++i) {
    Result r = computeWindowDim(
        input[2 + i], window.kernel[i], window.strides[i], window.dilations[i],
        window.padding, window.pads[2 * i], window.pads[2 * i + 1],
        window.ceilMode, dims[i]);
    if (r.failed())
      return Result::failure(r.message() + " in spatial dimension " +
                             kSpatialNames[i]);
  }
  return Result::success();
}

Result inferConv3DShape(DimsRef input, DimsRef filter, const DimsRef *bias,
                        const VolumeWindow &window, int64_t groups,
                        Dims &result) {
  if (Result r = requireRank5(input, "input"); r.failed())
    return r;
  if (filter.size() != 5)
    return fail("expects an OIDHW filter of rank 5, got ", formatShape(filter));
  if (groups < 1)
    return fail("expects groups >= 1, got ", groups);
  for (int i = 2; i < 5; ++i)
    if (isDynamic(filter[i]))
      return fail("expects a filter with static spatial size, got shape ",
                  formatShape(filter));
  int64_t cin = input[1], cout = filter[0], cinPerGroup = filter[1];
  if (!isDynamic(cout) && cout % groups != 0)
    return fail("expects the filter's output channels (", cout,
                ") divisible by groups (", groups, ")");
  if (!isDynamic(cin) && !isDynamic(cinPerGroup) && cin != cinPerGroup * groups)
    return fail("expects the input channels (", cin,
                ") to equal the filter's input channels per group (",
                cinPerGroup, ") times groups (", groups, "); input ",
                formatShape(input), ", filter ", formatShape(filter));
  if (bias)
    if (Result r = verifyChannelOperand(*bias, cout, "bias"); r.failed())
      return r;
  VolumeWindow w = window;
  w.kernel = {filter[2], filter[3], filter[4]};
  w.ceilMode = false;
  WindowDim dims[3];
  if (Result r = resolveVolumeWindow(input, w, dims); r.failed())
    return r;
  result = {input[0], cout, dims[0].outSize, dims[1].outSize, dims[2].outSize};
  return Result::success();
}

Result inferConv3DTransposeShape(DimsRef input, DimsRef filter,
                                 const DimsRef *bias,
                                 const Conv3DTransposeParams &params,
                                 Dims &result) {
  if (Result r = requireRank5(input, "input"); r.failed())
    return r;
  if (filter.size() != 5)
    return fail("expects a filter [Cin, Cout/groups, KD, KH, KW] of rank 5, "
                "got ",
                formatShape(filter));
  if (Result r = requireSize(params.strides, 3, "strides"); r.failed())
    return r;
  if (Result r = requireSize(params.dilations, 3, "dilations"); r.failed())
    return r;
  if (Result r = requireSize(params.pads, 6, "pads"); r.failed())
    return r;
  if (Result r = requireSize(params.outputPadding, 3, "output_padding");
      r.failed())
    return r;
  if (Result r = requireAtLeast(params.strides, 1, "strides"); r.failed())
    return r;
  if (Result r = requireAtLeast(params.dilations, 1, "dilations"); r.failed())
    return r;
  if (Result r = requireAtLeast(params.pads, 0, "pads"); r.failed())
    return r;
  if (Result r = requireAtLeast(params.outputPadding, 0, "output_padding");
      r.failed())
    return r;
  if (params.groups < 1)
    return fail("expects groups >= 1, got ", params.groups);
  for (int i = 2; i < 5; ++i) {
    if (isDynamic(filter[i]))
      return fail("expects a filter with static spatial size, got shape ",
                  formatShape(filter));
    if (filter[i] < 1)
      return fail("expects a non-empty filter window, got shape ",
                  formatShape(filter));
  }
  // The filter of the forward conv: its O is this op's input channels.
  int64_t cin = input[1], filterIn = filter[0], coutPerGroup = filter[1];
  if (!isDynamic(filterIn) && filterIn % params.groups != 0)
    return fail("expects the filter's input channels (", filterIn,
                ") divisible by groups (", params.groups, ")");
  if (!isDynamic(cin) && !isDynamic(filterIn) && cin != filterIn)
    return fail("expects the input channels (", cin,
                ") to equal the filter's input channels (", filterIn,
                "); input ", formatShape(input), ", filter ",
                formatShape(filter));
  int64_t cout =
      isDynamic(coutPerGroup) ? kDynamic : coutPerGroup * params.groups;
  if (bias)
    if (Result r = verifyChannelOperand(*bias, cout, "bias"); r.failed())
      return r;
  Dims out = {input[0], cout, 0, 0, 0};
  bool empty = false;
  for (int i = 0; i < 3; ++i) {
    out[2 + i] = conv2dTransposeOutputSize(
        input[2 + i], filter[2 + i], params.strides[i], params.dilations[i],
        params.pads[2 * i], params.pads[2 * i + 1], params.outputPadding[i]);
    empty |= !isDynamic(out[2 + i]) && out[2 + i] < 1;
  }
  if (empty)
    return fail("expects pads that leave a non-empty output, got output "
                "shape ",
                formatShape(out), " for input ", formatShape(input),
                " and pads ", formatList(params.pads));
  result = std::move(out);
  return Result::success();
}

Result inferPool3DShape(DimsRef input, const VolumeWindow &window,
                        Dims &result) {
  WindowDim dims[3];
  if (Result r = resolveVolumeWindow(input, window, dims); r.failed())
    return r;
  result = {input[0], input[1], dims[0].outSize, dims[1].outSize,
            dims[2].outSize};
  return Result::success();
}

Result checkForwardResultGrad(DimsRef y, DimsRef dy) {
  bool ok = y.size() == dy.size();
  for (size_t i = 0; ok && i < y.size(); ++i)
    ok = isDynamic(y[i]) || isDynamic(dy[i]) || y[i] == dy[i];
  if (!ok)
    return fail("expects dy of the forward's result shape ", formatShape(y),
                ", got ", formatShape(dy));
  return Result::success();
}

} // namespace gopt::shape
