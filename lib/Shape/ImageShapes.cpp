//===- ImageShapes.cpp - Shape functions of the image ops -----------------===//
//
// gopt.conv2d_transpose and gopt.resize (GoptImageOps.td), following
// docs/op-semantics.md. No LLVM or MLIR, as ShapeFunctions.cpp.
//
//===----------------------------------------------------------------------===//

#include "ConvOperands.h"
#include "Failure.h"
#include "gopt/Shape/ShapeFunctions.h"

#include <cmath>
#include <sstream>

namespace gopt::shape {

using detail::fail;
using detail::requireSize;

namespace {} // namespace

int64_t conv2dTransposeOutputSize(int64_t inSize, int64_t kernel,
                                  int64_t stride, int64_t dilation,
                                  int64_t padBefore, int64_t padAfter,
                                  int64_t outputPadding) {
  if (isDynamic(inSize))
    return kDynamic;
  return (inSize - 1) * stride + (kernel - 1) * dilation + 1 - padBefore -
         padAfter + outputPadding;
}

Result inferConv2DTransposeShape(DimsRef input, DimsRef filter,
                                 const DimsRef *bias,
                                 const Conv2DTransposeParams &params,
                                 Dims &result) {
  Layout layout;
  if (Result r = detail::verifyConvOperands(input, filter, params.dataFormat,
                                            params.filterFormat, layout);
      r.failed())
    return r;
  if (Result r = requireSize(params.strides, 2, "strides"); r.failed())
    return r;
  if (Result r = requireSize(params.dilations, 2, "dilations"); r.failed())
    return r;
  if (Result r = requireSize(params.pads, 4, "pads"); r.failed())
    return r;
  if (Result r = requireSize(params.outputPadding, 2, "output_padding");
      r.failed())
    return r;
  for (int64_t v : params.strides)
    if (v < 1)
      return fail("expects strides >= 1, got ", formatList(params.strides));
  for (int64_t v : params.dilations)
    if (v < 1)
      return fail("expects dilations >= 1, got ", formatList(params.dilations));
  for (int64_t v : params.pads)
    if (v < 0)
      return fail("expects pads >= 0, got ", formatList(params.pads));
  for (int64_t v : params.outputPadding)
    if (v < 0)
      return fail("expects output_padding >= 0, got ",
                  formatList(params.outputPadding));
  if (params.groups < 1)
    return fail("expects groups >= 1, got ", params.groups);

  // The filter of the forward conv: its O is this op's input channels.
  bool hwio = params.filterFormat == "HWIO";
  int64_t kh = filter[hwio ? 0 : 2], kw = filter[hwio ? 1 : 3];
  int64_t filterIn = filter[hwio ? 3 : 0];
  int64_t filterOut = filter[hwio ? 2 : 1]; // output channels per group
  if (isDynamic(kh) || isDynamic(kw))
    return fail("expects a filter with static spatial size, got shape ",
                formatShape(filter));
  if (kh < 1 || kw < 1)
    return fail("expects a non-empty filter window, got shape ",
                formatShape(filter));
  int64_t cin = input[layout.c];
  if (!isDynamic(filterIn) && filterIn % params.groups != 0)
    return fail("expects the filter's input channels (", filterIn,
                ") divisible by groups (", params.groups, ")");
  if (!isDynamic(cin) && !isDynamic(filterIn) && cin != filterIn)
    return fail("expects the input channels (", cin,
                ") to equal the filter's input channels (", filterIn,
                "); input ", formatShape(input), " (", params.dataFormat,
                "), filter ", formatShape(filter), " (", params.filterFormat,
                ")");
  int64_t cout = isDynamic(filterOut) ? kDynamic : filterOut * params.groups;
  if (bias)
    if (Result r = verifyChannelOperand(*bias, cout, "bias"); r.failed())
      return r;
  int64_t ih = input[layout.h], iw = input[layout.w];
  int64_t oh = conv2dTransposeOutputSize(
      ih, kh, params.strides[0], params.dilations[0], params.pads[0],
      params.pads[1], params.outputPadding[0]);
  int64_t ow = conv2dTransposeOutputSize(
      iw, kw, params.strides[1], params.dilations[1], params.pads[2],
      params.pads[3], params.outputPadding[1]);
  if ((!isDynamic(oh) && oh < 1) || (!isDynamic(ow) && ow < 1))
    return fail("expects pads that leave a non-empty output, got output "
                "size [",
                isDynamic(oh) ? "?" : std::to_string(oh), ", ",
                isDynamic(ow) ? "?" : std::to_string(ow), "] for input ",
                formatShape(input), " and pads ", formatList(params.pads));
  result.assign(4, 0);
  result[layout.n] = input[layout.n];
  result[layout.c] = cout;
  result[layout.h] = oh;
  result[layout.w] = ow;
  return Result::success();
}

Result inferResizeShape(DimsRef input, const ResizeParams &params,
                        Dims &result) {
  if (input.size() != 4)
    return fail("expects a rank-4 input, got shape ", formatShape(input));
  Layout layout;
  if (Result r = parseDataFormat(params.dataFormat, layout); r.failed())
    return r;
  if (params.mode != "nearest" && params.mode != "linear" &&
      params.mode != "cubic")
    return fail("expects mode \"nearest\", \"linear\" or \"cubic\", got \"",
                params.mode, "\"");
  std::string_view ctm = params.coordinateTransformationMode;
  if (ctm != "half_pixel" && ctm != "pytorch_half_pixel" &&
      ctm != "align_corners" && ctm != "asymmetric" &&
      ctm != "tf_half_pixel_for_nn" && ctm != "tf_crop_and_resize" &&
      ctm != "half_pixel_symmetric")
    return fail("expects a coordinate_transformation_mode of ONNX Resize, "
                "got \"",
                ctm, "\"");
  std::string_view nm = params.nearestMode;
  if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" &&
      nm != "floor" && nm != "ceil")
    return fail("expects nearest_mode \"round_prefer_floor\", "
                "\"round_prefer_ceil\", \"floor\" or \"ceil\", got \"",
                nm, "\"");
  // Both: sizes give the output, scales the coordinate map (ONNX's
  // keep_aspect_ratio_policy rounds the output of one scale per axis).
  if (!params.scales && !params.sizes)
    return fail("expects scales or sizes");
  if (ctm == "tf_crop_and_resize") {
    if (!params.roi || params.roi->size() != 4)
      return fail("expects a roi of 4 entries [h_start, w_start, h_end, "
                  "w_end] with coordinate_transformation_mode "
                  "\"tf_crop_and_resize\"");
  } else if (params.roi) {
    return fail("expects no roi unless coordinate_transformation_mode is "
                "\"tf_crop_and_resize\"");
  }
  int64_t out[2];
  int64_t in[2] = {input[layout.h], input[layout.w]};
  if (params.sizes) {
    if (Result r = requireSize(*params.sizes, 2, "sizes"); r.failed())
      return r;
    // An empty image has no pixel to read from.
    for (int i = 0; i < 2; ++i)
      if (in[i] == 0)
        return fail("expects an input with non-empty H and W for sizes, got ",
                    formatShape(input));
    for (int i = 0; i < 2; ++i) {
      if ((*params.sizes)[i] < 1)
        return fail("expects sizes >= 1, got ", formatList(*params.sizes));
      out[i] = (*params.sizes)[i];
    }
  }
  if (params.scales) {
    const std::vector<float> &s = *params.scales;
    if (s.size() != 2)
      return fail("expects scales of 2 entries, got ", s.size());
    for (int i = 0; i < 2; ++i) {
      if (!(s[i] > 0.0f) || !std::isfinite(s[i]))
        return fail("expects scales > 0, got [", s[0], ", ", s[1], "]");
      if (params.sizes)
        continue;
      if (isDynamic(in[i])) {
        out[i] = kDynamic;
        continue;
      }
      // ONNX: floor(in * scale), the f32 scale widened as onnx's
      // reference (numpy) does.
      out[i] =
          static_cast<int64_t>(std::floor(static_cast<double>(in[i]) * s[i]));
      if (out[i] < 1 && in[i] > 0)
        return fail("expects scales that leave a non-empty output, got [", s[0],
                    ", ", s[1], "] for input ", formatShape(input));
    }
  }
  result.assign(input.begin(), input.end());
  result[layout.h] = out[0];
  result[layout.w] = out[1];
  return Result::success();
}

} // namespace gopt::shape
