//===- Training.cpp - Runtime shape functions of the training ops ---------===//
//
// Losses, gradients, optimizer updates and loss scaling over the shared
// shape functions (gopt/Shape/TrainingShapes.h). What is checked here and
// not there is the element types, which ODS's type constraints check in the
// dialect.
//
//===----------------------------------------------------------------------===//
#include "Training.h"

#include "gopt/Shape/TrainingShapes.h"

namespace gopt::runtime {

namespace {

Status requireFloat(DType type, const char *what) {
  if (!isFloatDType(type))
    return invalidArgument(what,
                           " must have a floating-point element type, "
                           "got ",
                           dtypeName(type));
  return Status::success();
}

Status requireLabels(DType type) {
  if (type != DType::kI32 && type != DType::kI64)
    return invalidArgument("labels must be i32 or i64, got ", dtypeName(type));
  return Status::success();
}

Status requireScalar(const Shape &s, DType got, DType type, const char *what) {
  if (got != type)
    return invalidArgument(what, " must have element type ", dtypeName(type),
                           ", got ", dtypeName(got));
  return toStatus(shape::verifyScalarOperand(s, what));
}

/// Conv parameters of a backprop op; padding is always explicit.
shape::Conv2DParams backpropConvParams(const OpAttrs &attrs) {
  shape::Conv2DParams params;
  params.window.strides = attrs.getWindowInts("strides");
  params.window.dilations = attrs.getWindowInts("dilations");
  params.window.padding = "EXPLICIT";
  params.window.pads = attrs.getWindowInts("pads");
  params.groups = attrs.getInt("groups");
  return params;
}

} // namespace

Status crossEntropyShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                         Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "logits"));
  GOPT_RETURN_IF_ERROR(requireLabels(types[1]));
  GOPT_RETURN_IF_ERROR(toStatus(shape::verifyLogitsAndLabels(in[0], in[1])));
  out[0] = Shape{}; // the mean loss
  return Status::success();
}

Status crossEntropyGradShape(const OpAttrs &attrs, const Shapes &in,
                             const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(crossEntropyShape(attrs, in, types, out));
  out[0] = in[0];
  return Status::success();
}

Status mseLossShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                    Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "prediction"));
  GOPT_RETURN_IF_ERROR(
      toStatus(shape::verifyPredictionAndTarget(in[0], in[1])));
  out[0] = Shape{};
  return Status::success();
}

Status mseLossGradShape(const OpAttrs &attrs, const Shapes &in,
                        const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(mseLossShape(attrs, in, types, out));
  out[0] = in[0];
  return Status::success();
}

Status reluGradShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                     Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "dy"));
  return toStatus(shape::inferReluGradShape(in[0], in[1], out[0]));
}

Status conv2dBackpropInputShape(const OpAttrs &attrs, const Shapes &in,
                                const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "dy"));
  shape::Conv2DParams params = backpropConvParams(attrs);
  std::string dataFormat = attrs.getString("data_format");
  std::string filterFormat = attrs.getString("filter_format");
  params.dataFormat = dataFormat;
  params.filterFormat = filterFormat;
  return toStatus(shape::inferConv2DBackpropInputShape(
      in[0], in[1], attrs.getInts("input_shape"), params, out[0]));
}

Status conv2dBackpropFilterShape(const OpAttrs &attrs, const Shapes &in,
                                 const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "input"));
  shape::Conv2DParams params = backpropConvParams(attrs);
  std::string dataFormat = attrs.getString("data_format");
  std::string filterFormat = attrs.getString("filter_format");
  params.dataFormat = dataFormat;
  params.filterFormat = filterFormat;
  return toStatus(shape::inferConv2DBackpropFilterShape(
      in[0], in[1], attrs.getInts("filter_shape"), params, out[0]));
}

namespace {

// max_pool_grad (explicit padding) and avg_pool_grad (`padding`, ceil mode).
Status poolGradShape(const OpAttrs &attrs, const std::string &padding,
                     const Shapes &in, const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "x"));
  shape::WindowParams window;
  window.kernel = attrs.getInts("kernel");
  window.strides = attrs.getWindowInts("strides");
  window.dilations = {1, 1};
  window.padding = padding;
  window.pads = attrs.getWindowInts("pads");
  window.ceilMode = attrs.has("ceil_mode") && attrs.getBool("ceil_mode");
  return toStatus(shape::inferPoolGradShape(
      in[0], in[1], window, attrs.getString("data_format"), out[0]));
}

} // namespace

Status maxPoolGradShape(const OpAttrs &attrs, const Shapes &in,
                        const DTypes &types, Shapes &out) {
  return poolGradShape(attrs, "EXPLICIT", in, types, out);
}

Status avgPoolGradShape(const OpAttrs &attrs, const Shapes &in,
                        const DTypes &types, Shapes &out) {
  return poolGradShape(attrs, attrs.getString("padding"), in, types, out);
}

Status batchNormGradShape(const OpAttrs &attrs, const Shapes &in,
                          const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 5));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "dy"));
  const shape::DimsRef perChannel[3] = {in[2], in[3], in[4]};
  int64_t channels;
  GOPT_RETURN_IF_ERROR(toStatus(shape::inferBatchNormGradShape(
      in[0], in[1], perChannel, attrs.getString("data_format"),
      static_cast<float>(attrs.getFloat("epsilon")), out[0], channels)));
  out[1] = out[2] = Shape{channels};
  return Status::success();
}

Status sgdUpdateShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 3));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "param"));
  GOPT_RETURN_IF_ERROR(toStatus(shape::verifyUpdateOperands(
      in[0], {{in[1], "grad"}, {in[2], "velocity"}})));
  GOPT_RETURN_IF_ERROR(toStatus(shape::verifySgdUpdateAttrs(
      static_cast<float>(attrs.getFloat("lr")),
      static_cast<float>(attrs.getFloat("momentum")),
      static_cast<float>(attrs.getFloat("weight_decay")))));
  out[0] = out[1] = in[0];
  return Status::success();
}

Status adamUpdateShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 5));
  GOPT_RETURN_IF_ERROR(requireFloat(types[0], "param"));
  GOPT_RETURN_IF_ERROR(toStatus(shape::verifyUpdateOperands(
      in[0], {{in[1], "grad"}, {in[2], "m"}, {in[3], "v"}})));
  GOPT_RETURN_IF_ERROR(toStatus(shape::verifyScalarOperand(in[4], "step")));
  GOPT_RETURN_IF_ERROR(toStatus(shape::verifyAdamUpdateAttrs(
      static_cast<float>(attrs.getFloat("lr")),
      static_cast<float>(attrs.getFloat("beta1")),
      static_cast<float>(attrs.getFloat("beta2")),
      static_cast<float>(attrs.getFloat("epsilon")),
      static_cast<float>(attrs.getFloat("weight_decay")))));
  out[0] = out[1] = out[2] = in[0];
  return Status::success();
}

Status allFiniteShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                      Shapes &out) {
  if (in.empty()) // as the dialect's shape function says
    return invalidArgument("expects at least one operand");
  for (size_t i = 0; i < types.size(); ++i)
    if (!isFloatDType(types[i]))
      return invalidArgument("operand ", i, " ", shapeToString(in[i]),
                             " must have a floating-point element type "
                             "(f32, f16 or bf16), got ",
                             dtypeName(types[i]));
  out[0] = Shape{};
  return Status::success();
}

Status selectShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                   Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireScalar(in[0], types[0], DType::kBool, "pred"));
  if (types[2] != types[1] || in[2] != in[1])
    return invalidArgument("expects on_true and on_false of one type, got ",
                           dtypeName(types[1]), shapeToString(in[1]), " and ",
                           dtypeName(types[2]), shapeToString(in[2]));
  out[0] = in[1];
  return Status::success();
}

Status lossScaleUpdateShape(const OpAttrs &attrs, const Shapes &in,
                            const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireScalar(in[0], types[0], DType::kF32, "scale"));
  GOPT_RETURN_IF_ERROR(
      requireScalar(in[1], types[1], DType::kF32, "good_steps"));
  GOPT_RETURN_IF_ERROR(requireScalar(in[2], types[2], DType::kBool, "finite"));
  GOPT_RETURN_IF_ERROR(toStatus(shape::verifyLossScaleUpdateAttrs(
      attrs.getInt("growth_interval"),
      static_cast<float>(attrs.getFloat("growth_factor")),
      static_cast<float>(attrs.getFloat("backoff_factor")))));
  out[0] = in[0];
  out[1] = in[1];
  return Status::success();
}

} // namespace gopt::runtime
