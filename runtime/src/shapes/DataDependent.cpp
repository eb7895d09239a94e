//===- DataDependent.cpp - Runtime bounds of GoptDataDependentOps.td ------===//
//
// Adapters over gopt_shape that also check the element types, which the
// dialect states in ODS and a plan may get wrong.
//
//===----------------------------------------------------------------------===//
#include "DataDependent.h"

#include "gopt/runtime/ImageDecode.h"
#include "gopt/runtime/OpAttrs.h"

namespace gopt::runtime {

Status nonZeroShape(const OpAttrs &, const Shapes &in, const DTypes &,
                    Shapes &out) {
  return toStatus(shape::inferNonZeroShape(in[0], out[0]));
}

Status compressShape(const OpAttrs &attrs, const Shapes &in,
                     const DTypes &types, Shapes &out) {
  if (types[1] != DType::kBool)
    return invalidArgument("condition must be bool, got ", dtypeName(types[1]));
  int64_t counted = 0;
  return toStatus(shape::inferCompressShape(
      in[0], in[1], attrs.has("axis"), attrs.getInt("axis"), out[0], counted));
}

Status uniqueShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out) {
  if (types[0] == DType::kBool)
    return invalidArgument("x must be numeric, got bool");
  int64_t counted = 0;
  return toStatus(shape::inferUniqueShape(in[0], attrs.has("axis"),
                                          attrs.getInt("axis"), out[0], out[1],
                                          out[2], out[3], counted));
}

Status nonMaxSuppressionShape(const OpAttrs &attrs, const Shapes &in,
                              const DTypes &types, Shapes &out) {
  const char *names[] = {"boxes", "scores", "max_output_boxes_per_class",
                         "iou_threshold", "score_threshold"};
  for (int i : {0, 1, 3, 4})
    if (types[i] != DType::kF32)
      return invalidArgument(names[i], " must be f32, got ",
                             dtypeName(types[i]));
  if (types[2] != DType::kI64)
    return invalidArgument(names[2], " must be i64, got ", dtypeName(types[2]));
  int64_t centerPointBox = attrs.getInt("center_point_box");
  if (centerPointBox != 0 && centerPointBox != 1)
    return invalidArgument("center_point_box must be 0 or 1, got ",
                           centerPointBox);
  return toStatus(shape::inferNonMaxSuppressionShape(in[0], in[1], in[2], in[3],
                                                     in[4], out[0]));
}

Status imageDecoderShape(const OpAttrs &attrs, const std::vector<Tensor> &in,
                         Shapes &out) {
  const Tensor &stream = in[0];
  if (stream.dtype() != DType::kU8)
    return invalidArgument("encoded_stream must be u8, got ",
                           dtypeName(stream.dtype()));
  GOPT_ASSIGN_OR_RETURN(image::PixelFormat format,
                        image::parsePixelFormat(
                            op_attrs::ImageDecoderAttrs(attrs).pixelFormat()));
  Shape shape;
  GOPT_RETURN_IF_ERROR(toStatus(shape::inferImageDecoderShape(
      stream.shape(), image::channelsOf(format), shape)));
  GOPT_ASSIGN_OR_RETURN(
      image::ImageHeader header,
      image::readImageHeader(static_cast<const uint8_t *>(stream.data()),
                             static_cast<size_t>(stream.numElements())));
  out[0] = {header.height, header.width, shape[2]};
  return Status::success();
}

} // namespace gopt::runtime
