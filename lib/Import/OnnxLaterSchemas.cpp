//===- OnnxLaterSchemas.cpp - ONNX op versions newer than libonnx ---------===//
//
// The opset 18-21 versions of the ops gopt imports whose inputs or
// attributes changed after opset 17, written with libonnx's schema builder:
// the checker verifies a node's inputs and attributes against them, and
// shape inference runs their shape functions. gopt's importer computes its
// own shapes; these functions give ONNX's inference what later nodes read.
//
//===----------------------------------------------------------------------===//

#include "OnnxLaterSchemas.h"

#include <onnx/defs/shape_inference.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <vector>

using gopt::import::kLibOnnxLatestOpset;
using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;

namespace {

const std::vector<std::string> kFloatTypes = {
    "tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"};

/// The types libonnx's newest version of `op` allows for `param`: the later
/// versions gopt defines keep them (opsets 18-21 added only types gopt
/// does not import, float8 and 4-bit integers).
std::vector<std::string> typesOf(const std::string &op,
                                 const std::string &param) {
  const OpSchema *old = onnx::OpSchemaRegistry::Schema(op, kLibOnnxLatestOpset);
  if (old)
    for (const OpSchema::TypeConstraintParam &t : old->typeConstraintParams())
      if (t.type_param_str == param)
        return t.allowed_type_strs;
  return kFloatTypes;
}

bool hasInput(InferenceContext &ctx, size_t i) {
  return i < ctx.getNumInputs() && ctx.getInputType(i) != nullptr;
}

/// The integers of a constant int64 or int32 tensor, or false when it holds
/// others (or its data lie outside the model).
bool readInts(const onnx::TensorProto &t, std::vector<int64_t> &values) {
  values.clear();
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.has_raw_data()) {
      const std::string &raw = t.raw_data();
      values.resize(raw.size() / sizeof(int64_t));
      std::memcpy(values.data(), raw.data(), values.size() * sizeof(int64_t));
    } else {
      values.assign(t.int64_data().begin(), t.int64_data().end());
    }
    return true;
  }
  if (t.data_type() == onnx::TensorProto::INT32) {
    if (t.has_raw_data()) {
      const std::string &raw = t.raw_data();
      std::vector<int32_t> narrow(raw.size() / sizeof(int32_t));
      std::memcpy(narrow.data(), raw.data(), narrow.size() * sizeof(int32_t));
      values.assign(narrow.begin(), narrow.end());
    } else {
      values.assign(t.int32_data().begin(), t.int32_data().end());
    }
    return true;
  }
  return false;
}

/// The constant integers of input `i`, or false when it is absent or known
/// only at run time.
bool constantInts(InferenceContext &ctx, size_t i,
                  std::vector<int64_t> &values) {
  if (!hasInput(ctx, i))
    return false;
  const onnx::TensorProto *data = ctx.getInputData(i);
  return data && readInts(*data, values);
}

onnx::TensorShapeProto *outputShape(InferenceContext &ctx, size_t i) {
  return ctx.getOutputType(i)->mutable_tensor_type()->mutable_shape();
}

/// An output of `rank` dimensions, none of them known.
void setUnknownDims(InferenceContext &ctx, size_t i, int rank) {
  onnx::TensorShapeProto *shape = outputShape(ctx, i);
  shape->clear_dim();
  for (int d = 0; d < rank; ++d)
    shape->add_dim();
}

/// `axis` counted from 0, or fails shape inference when out of range.
int64_t normalizeAxis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank)
    fail_shape_inference("axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

/// ReduceMean-18 and the others: `axes` an optional input, all axes when it
/// is absent or empty unless noop_with_empty_axes.
void inferReduce(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const onnx::TensorShapeProto &in = onnx::getInputShape(ctx, 0);
  int rank = in.dim_size();
  bool keepDims = onnx::getAttribute(ctx, "keepdims", 1) != 0;
  std::vector<int64_t> axes;
  if (hasInput(ctx, 1) && !constantInts(ctx, 1, axes)) {
    // Axes known at run time: the rank is known where the axes are kept.
    if (keepDims)
      setUnknownDims(ctx, 0, rank);
    return;
  }
  onnx::TensorShapeProto *out = outputShape(ctx, 0);
  out->clear_dim();
  if (axes.empty() && onnx::getAttribute(ctx, "noop_with_empty_axes", 0)) {
    *out = in;
    return;
  }
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes)
    reduced[normalizeAxis(axis, rank)] = true;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d])
      *out->add_dim() = in.dim(d);
    else if (keepDims)
      out->add_dim()->set_dim_value(1);
  }
}

OpSchema reduceSchema(const std::string &op) {
  OpSchema s(op, __FILE__, __LINE__);
  s.SinceVersion(18)
      .Input(0, "data", "", "T")
      .Input(1, "axes", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "reduced", "", "T")
      .Attr("keepdims", "", AttributeProto::INT, int64_t{1})
      .Attr("noop_with_empty_axes", "", AttributeProto::INT, int64_t{0})
      .TypeConstraint("T", typesOf(op, "T"), "")
      .TypeAndShapeInferenceFunction(inferReduce);
  return s;
}

/// Pad-18: `axes` (optional) names the axes `pads` covers.
void inferPad(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const onnx::TensorShapeProto &in = onnx::getInputShape(ctx, 0);
  int rank = in.dim_size();
  std::vector<int64_t> pads, axes;
  bool axesKnown = !hasInput(ctx, 3) || constantInts(ctx, 3, axes);
  if (!constantInts(ctx, 1, pads) || !axesKnown) {
    setUnknownDims(ctx, 0, rank);
    return;
  }
  if (!hasInput(ctx, 3))
    for (int d = 0; d < rank; ++d)
      axes.push_back(d);
  if (pads.size() != 2 * axes.size())
    fail_shape_inference("pads has ", pads.size(), " values for ", axes.size(),
                         " axes; expected ", 2 * axes.size());
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t d = normalizeAxis(axes[i], rank);
    begin[d] = pads[i];
    end[d] = pads[i + axes.size()];
  }
  onnx::TensorShapeProto *out = outputShape(ctx, 0);
  out->clear_dim();
  for (int d = 0; d < rank; ++d) {
    onnx::TensorShapeProto::Dimension *dim = out->add_dim();
    if (in.dim(d).has_dim_value())
      dim->set_dim_value(in.dim(d).dim_value() + begin[d] + end[d]);
  }
}

OpSchema padSchema() {
  OpSchema s("Pad", __FILE__, __LINE__);
  s.SinceVersion(18)
      .Input(0, "data", "", "T")
      .Input(1, "pads", "", "tensor(int64)")
      .Input(2, "constant_value", "", "T", OpSchema::Optional)
      .Input(3, "axes", "", "Tind", OpSchema::Optional)
      .Output(0, "output", "", "T")
      .Attr("mode", "", AttributeProto::STRING, std::string("constant"))
      .TypeConstraint("T", typesOf("Pad", "T"), "")
      .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(inferPad);
  return s;
}

/// Split-18: sizes from `split`, from num_outputs (equal parts, the last
/// smaller) or equal parts, one per output.
void inferSplit(InferenceContext &ctx) {
  size_t parts = ctx.getNumOutputs();
  for (size_t i = 0; i < parts; ++i)
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, i);
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const onnx::TensorShapeProto &in = onnx::getInputShape(ctx, 0);
  int rank = in.dim_size();
  int64_t axis = normalizeAxis(onnx::getAttribute(ctx, "axis", 0), rank);
  const onnx::AttributeProto *numOutputs = ctx.getAttribute("num_outputs");
  if (numOutputs && hasInput(ctx, 1))
    fail_shape_inference("takes either the input 'split' or the attribute "
                         "'num_outputs', not both");
  if (numOutputs && numOutputs->i() != static_cast<int64_t>(parts))
    fail_shape_inference("num_outputs is ", numOutputs->i(),
                         " but the node has ", parts, " outputs");
  std::vector<int64_t> sizes;
  bool sized = false;
  if (hasInput(ctx, 1)) {
    sized = constantInts(ctx, 1, sizes) && sizes.size() == parts;
  } else if (in.dim(axis).has_dim_value() && parts > 0) {
    int64_t dim = in.dim(axis).dim_value(), n = static_cast<int64_t>(parts);
    int64_t chunk = numOutputs ? (dim + n - 1) / n : dim / n;
    sized = (numOutputs || dim % n == 0) && dim - chunk * (n - 1) >= 0;
    for (int64_t i = 0; sized && i < n; ++i)
      sizes.push_back(i + 1 < n ? chunk : dim - chunk * (n - 1));
  }
  for (size_t i = 0; i < parts; ++i) {
    onnx::TensorShapeProto *out = outputShape(ctx, i);
    *out = in;
    onnx::TensorShapeProto::Dimension *dim = out->mutable_dim(axis);
    dim->Clear();
    if (sized)
      dim->set_dim_value(sizes[i]);
  }
}

OpSchema splitSchema() {
  OpSchema s("Split", __FILE__, __LINE__);
  s.SinceVersion(18)
      .Input(0, "input", "", "T")
      .Input(1, "split", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "outputs", "", "T", OpSchema::Variadic)
      .Attr("axis", "", AttributeProto::INT, int64_t{0})
      .Attr("num_outputs", "", AttributeProto::INT, /*required=*/false)
      .TypeConstraint("T", typesOf("Split", "T"), "")
      .TypeAndShapeInferenceFunction(inferSplit);
  return s;
}

/// GroupNormalization-18 (scale and bias per group) and -21 (per channel,
/// and stash_type).
OpSchema groupNormSchema(int version) {
  OpSchema s("GroupNormalization", __FILE__, __LINE__);
  s.SinceVersion(version)
      .Input(0, "X", "", "T")
      .Input(1, "scale", "", "T")
      .Input(2, "bias", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("epsilon", "", AttributeProto::FLOAT, 1e-5f)
      .Attr("num_groups", "", AttributeProto::INT, /*required=*/true)
      .TypeConstraint("T", kFloatTypes, "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  if (version >= 21)
    s.Attr("stash_type", "", AttributeProto::INT, int64_t{1});
  return s;
}

OpSchema mishSchema() {
  OpSchema s("Mish", __FILE__, __LINE__);
  s.SinceVersion(18)
      .Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint(
          "T", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return s;
}

OpSchema geluSchema() {
  OpSchema s("Gelu", __FILE__, __LINE__);
  s.SinceVersion(20)
      .Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .Attr("approximate", "", AttributeProto::STRING, std::string("none"))
      .TypeConstraint("T", kFloatTypes, "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return s;
}

/// DFT-20: the axis is an optional input (default -2), no longer an
/// attribute. The importer computes the shape; ONNX's inference gets the
/// rank.
OpSchema dftSchema() {
  OpSchema s("DFT", __FILE__, __LINE__);
  s.SinceVersion(20)
      .Input(0, "input", "", "T1")
      .Input(1, "dft_length", "", "T2", OpSchema::Optional)
      .Input(2, "axis", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "output", "", "T1")
      .Attr("inverse", "", AttributeProto::INT, int64_t{0})
      .Attr("onesided", "", AttributeProto::INT, int64_t{0})
      .TypeConstraint("T1", kFloatTypes, "")
      .TypeConstraint("T2", {"tensor(int32)", "tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        if (onnx::hasInputShape(ctx, 0))
          setUnknownDims(ctx, 0, onnx::getInputShape(ctx, 0).dim_size());
      });
  return s;
}

//===----------------------------------------------------------------------===//
// Ops gopt imported before whose opset 18-21 versions added attributes or
// inputs (the `ops-attrs` block).
//===----------------------------------------------------------------------===//

/// The floats of a constant f32 tensor, or false when it holds others.
bool constantFloats(InferenceContext &ctx, size_t i,
                    std::vector<float> &values) {
  values.clear();
  if (!hasInput(ctx, i))
    return false;
  const onnx::TensorProto *t = ctx.getInputData(i);
  if (!t || t->data_type() != onnx::TensorProto::FLOAT)
    return false;
  if (t->has_raw_data()) {
    const std::string &raw = t->raw_data();
    values.resize(raw.size() / sizeof(float));
    std::memcpy(values.data(), raw.data(), values.size() * sizeof(float));
  } else {
    values.assign(t->float_data().begin(), t->float_data().end());
  }
  return true;
}

/// Resize-18/19: scales or sizes over the dims `axes` names (all without
/// it); keep_aspect_ratio_policy rounds the sizes of one scale.
void inferResize(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const onnx::TensorShapeProto &in = onnx::getInputShape(ctx, 0);
  int rank = in.dim_size();
  std::vector<int64_t> axes;
  if (const AttributeProto *a = ctx.getAttribute("axes"))
    for (int64_t axis : a->ints())
      axes.push_back(normalizeAxis(axis, rank));
  else
    for (int d = 0; d < rank; ++d)
      axes.push_back(d);
  // Repeated axes: the importer says so; no shape here.
  for (size_t i = 0; i < axes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (axes[i] == axes[j]) {
        setUnknownDims(ctx, 0, rank);
        return;
      }
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  bool haveScales = constantFloats(ctx, 2, scales) && !scales.empty();
  bool haveSizes = constantInts(ctx, 3, sizes) && !sizes.empty();
  if ((haveScales && scales.size() != axes.size()) ||
      (haveSizes && sizes.size() != axes.size()))
    fail_shape_inference("scales or sizes need one value per axis (",
                         axes.size(), ")");
  onnx::TensorShapeProto *out = outputShape(ctx, 0);
  *out = in;
  std::string policy = onnx::getAttribute(ctx, "keep_aspect_ratio_policy",
                                          std::string("stretch"));
  // An unknown policy: the importer says so; no shape here.
  if (policy != "stretch" && policy != "not_larger" &&
      policy != "not_smaller") {
    setUnknownDims(ctx, 0, rank);
    return;
  }
  double kept = 0;
  bool keep = haveSizes && policy != "stretch";
  for (size_t i = 0; keep && i < axes.size(); ++i) {
    const auto &dim = in.dim(static_cast<int>(axes[i]));
    if (!dim.has_dim_value() || dim.dim_value() == 0) {
      keep = false;
      break;
    }
    double factor = double(sizes[i]) / double(dim.dim_value());
    if (i == 0 || (policy == "not_larger" ? factor < kept : factor > kept))
      kept = factor;
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    onnx::TensorShapeProto::Dimension *dim =
        out->mutable_dim(static_cast<int>(axes[i]));
    const auto &inDim = in.dim(static_cast<int>(axes[i]));
    if (haveSizes && policy == "stretch") {
      dim->Clear();
      dim->set_dim_value(sizes[i]);
    } else if (keep) {
      dim->Clear();
      dim->set_dim_value(
          static_cast<int64_t>(kept * double(inDim.dim_value()) + 0.5));
    } else if (haveScales && inDim.has_dim_value()) {
      dim->Clear();
      dim->set_dim_value(static_cast<int64_t>(
          std::floor(double(inDim.dim_value()) * double(scales[i]))));
    } else {
      dim->Clear();
    }
  }
}

OpSchema resizeSchema(int version) {
  OpSchema s("Resize", __FILE__, __LINE__);
  s.SinceVersion(version)
      .Input(0, "X", "", "T1")
      .Input(1, "roi", "", "T2", OpSchema::Optional)
      .Input(2, "scales", "", "tensor(float)", OpSchema::Optional)
      .Input(3, "sizes", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "Y", "", "T1")
      .Attr("antialias", "", AttributeProto::INT, int64_t{0})
      .Attr("axes", "", AttributeProto::INTS, /*required=*/false)
      .Attr("coordinate_transformation_mode", "", AttributeProto::STRING,
            std::string("half_pixel"))
      .Attr("cubic_coeff_a", "", AttributeProto::FLOAT, -0.75f)
      .Attr("exclude_outside", "", AttributeProto::INT, int64_t{0})
      .Attr("extrapolation_value", "", AttributeProto::FLOAT, 0.0f)
      .Attr("keep_aspect_ratio_policy", "", AttributeProto::STRING,
            std::string("stretch"))
      .Attr("mode", "", AttributeProto::STRING, std::string("nearest"))
      .Attr("nearest_mode", "", AttributeProto::STRING,
            std::string("round_prefer_floor"))
      .TypeConstraint("T1", typesOf("Resize", "T1"), "")
      .TypeConstraint("T2", typesOf("Resize", "T2"), "")
      .TypeAndShapeInferenceFunction(inferResize);
  return s;
}

/// libonnx's newest schema of `op` as version `version`, for versions that
/// changed only which attribute values are valid (the checker does not
/// look at values; the importer does). Already finalized: a second
/// Finalize would count its inputs twice.
OpSchema sameAsLatest(const std::string &op, int version) {
  OpSchema s = *onnx::OpSchemaRegistry::Schema(op, kLibOnnxLatestOpset);
  s.SinceVersion(version);
  return s;
}

/// AveragePool-19 (dilations) and LpPool-18 (dilations, ceil_mode).
/// libonnx's shape functions of the older versions ignore them, so such a
/// pool's dims are left to gopt's own shapes.
OpSchema laterPoolSchema(const std::string &op, int version,
                         bool addsCeilMode) {
  OpSchema s = sameAsLatest(op, version);
  s.Attr("dilations", "", AttributeProto::INTS, /*required=*/false);
  if (addsCeilMode)
    s.Attr("ceil_mode", "", AttributeProto::INT, int64_t{0});
  onnx::InferenceFunction older = s.GetTypeAndShapeInferenceFunction();
  s.TypeAndShapeInferenceFunction([older, addsCeilMode](InferenceContext &ctx) {
    bool changed =
        addsCeilMode && onnx::getAttribute(ctx, "ceil_mode", int64_t{0}) != 0;
    if (const AttributeProto *d = ctx.getAttribute("dilations"))
      for (int64_t v : d->ints())
        changed = changed || v != 1;
    if (!changed)
      return older(ctx);
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (onnx::hasInputShape(ctx, 0))
      setUnknownDims(ctx, 0, onnx::getInputShape(ctx, 0).dim_size());
  });
  return s;
}

/// ReduceMax-20 and ReduceMin-20: Reduce*-18 taking booleans too.
OpSchema boolReduceSchema(const std::string &op) {
  std::vector<std::string> types = typesOf(op, "T");
  types.push_back("tensor(bool)");
  OpSchema s(op, __FILE__, __LINE__);
  s.SinceVersion(20)
      .Input(0, "data", "", "T")
      .Input(1, "axes", "", "tensor(int64)", OpSchema::Optional)
      .Output(0, "reduced", "", "T")
      .Attr("keepdims", "", AttributeProto::INT, int64_t{1})
      .Attr("noop_with_empty_axes", "", AttributeProto::INT, int64_t{0})
      .TypeConstraint("T", types, "")
      .TypeAndShapeInferenceFunction(inferReduce);
  return s;
}

/// QuantizeLinear-19 (saturate, for float8) and -21 (block_size,
/// output_dtype); DequantizeLinear-19 and -21 (block_size). The output's
/// element type: the zero point's, else output_dtype, else uint8
/// (QuantizeLinear); the scale's (DequantizeLinear).
OpSchema quantizeSchema(bool dequantize, int version) {
  OpSchema s =
      sameAsLatest(dequantize ? "DequantizeLinear" : "QuantizeLinear", version);
  if (!dequantize)
    s.Attr("saturate", "", AttributeProto::INT, int64_t{1});
  if (version >= 21) {
    s.Attr("block_size", "", AttributeProto::INT, int64_t{0});
    if (!dequantize)
      s.Attr("output_dtype", "", AttributeProto::INT, int64_t{0});
  }
  s.TypeAndShapeInferenceFunction([dequantize](InferenceContext &ctx) {
    onnx::TypeProto_Tensor *out = ctx.getOutputType(0)->mutable_tensor_type();
    if (dequantize) {
      onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
    } else if (hasInput(ctx, 2)) {
      onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
    } else {
      int64_t dtype = onnx::getAttribute(ctx, "output_dtype", int64_t{0});
      out->set_elem_type(dtype ? static_cast<int32_t>(dtype)
                               : int32_t{onnx::TensorProto::UINT8});
    }
    if (onnx::hasInputShape(ctx, 0))
      *out->mutable_shape() = onnx::getInputShape(ctx, 0);
  });
  return s;
}

/// Cast-19 and CastLike-19: `saturate` (float8 results; Cast-21 and
/// CastLike-21 only added types). The output's element type is `to` as a
/// number, or input 1's: libonnx's own inference refuses the float8 and
/// 4-bit types its enum lacks.
OpSchema castSchema(bool like) {
  OpSchema s = sameAsLatest(like ? "CastLike" : "Cast", 19);
  s.Attr("saturate", "", AttributeProto::INT, int64_t{1});
  s.TypeAndShapeInferenceFunction([like](InferenceContext &ctx) {
    onnx::TypeProto_Tensor *out = ctx.getOutputType(0)->mutable_tensor_type();
    if (!like)
      out->set_elem_type(
          static_cast<int32_t>(onnx::getAttribute(ctx, "to", int64_t{0})));
    else if (hasInput(ctx, 1))
      onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
    if (onnx::hasInputShape(ctx, 0))
      *out->mutable_shape() = onnx::getInputShape(ctx, 0);
  });
  return s;
}

/// The later versions of the ops of this block: `add` finalizes new
/// schemas, `addFinalized` takes copies of libonnx's as they are.
void addChangedAttrSchemas(const std::function<void(OpSchema)> &add,
                           const std::function<void(OpSchema)> &addFinalized) {
  add(resizeSchema(18));
  add(resizeSchema(19));
  // Pad-19: mode "wrap".
  OpSchema pad19 = padSchema();
  pad19.SinceVersion(19);
  add(pad19);
  // ScatterElements-18 and ScatterND-18: reduction "max" and "min".
  addFinalized(sameAsLatest("ScatterElements", 18));
  addFinalized(sameAsLatest("ScatterND", 18));
  addFinalized(laterPoolSchema("AveragePool", 19, /*addsCeilMode=*/false));
  addFinalized(laterPoolSchema("LpPool", 18, /*addsCeilMode=*/true));
  for (const char *op : {"ReduceMax", "ReduceMin"})
    add(boolReduceSchema(op));
  for (bool dequantize : {false, true})
    for (int version : {19, 21})
      addFinalized(quantizeSchema(dequantize, version));
  for (bool like : {false, true})
    addFinalized(castSchema(like));
}

//===----------------------------------------------------------------------===//
// Ops new in opsets 18-20 (no version in libonnx 1.12 at all)
//===----------------------------------------------------------------------===//
//
// Their schemas give the checker their inputs and attributes and shape
// inference their results, as for the changed ops above.

const std::vector<std::string> kIntegerTypes = {
    "tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)",
    "tensor(int8)",  "tensor(int16)",  "tensor(int32)",  "tensor(int64)"};

/// BitwiseAnd, BitwiseOr, BitwiseXor (opset 18): numpy broadcasting.
OpSchema bitwiseBinarySchema(const std::string &op) {
  OpSchema s(op, __FILE__, __LINE__);
  s.SinceVersion(18)
      .Input(0, "A", "", "T")
      .Input(1, "B", "", "T")
      .Output(0, "C", "", "T")
      .TypeConstraint("T", kIntegerTypes, "")
      .TypeAndShapeInferenceFunction([](InferenceContext &ctx) {
        onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        if (onnx::hasNInputShapes(ctx, 2))
          onnx::bidirectionalBroadcastShapeInference(
              onnx::getInputShape(ctx, 0), onnx::getInputShape(ctx, 1),
              *outputShape(ctx, 0));
      });
  return s;
}

OpSchema bitwiseNotSchema() {
  OpSchema s("BitwiseNot", __FILE__, __LINE__);
  s.SinceVersion(18)
      .Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint("T", kIntegerTypes, "")
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return s;
}

/// Col2Im (opset 18): [N, C * prod(block_shape), L] -> [N, C, image...].
void inferCol2Im(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::vector<int64_t> image, block;
  bool imageKnown = constantInts(ctx, 1, image);
  bool blockKnown = constantInts(ctx, 2, block);
  if (!onnx::hasInputShape(ctx, 0) || !imageKnown)
    return;
  const onnx::TensorShapeProto &in = onnx::getInputShape(ctx, 0);
  if (in.dim_size() != 3)
    fail_shape_inference("input must have rank 3 ([N, C * block size, L]), "
                         "got rank ",
                         in.dim_size());
  onnx::TensorShapeProto *out = outputShape(ctx, 0);
  out->clear_dim();
  *out->add_dim() = in.dim(0);
  onnx::TensorShapeProto::Dimension *channels = out->add_dim();
  int64_t blockSize = 1;
  for (int64_t size : block)
    blockSize *= size;
  if (blockKnown && blockSize > 0 && in.dim(1).has_dim_value())
    channels->set_dim_value(in.dim(1).dim_value() / blockSize);
  for (int64_t size : image)
    out->add_dim()->set_dim_value(size);
}

OpSchema col2imSchema() {
  OpSchema s("Col2Im", __FILE__, __LINE__);
  s.SinceVersion(18)
      .Input(0, "input", "", "T")
      .Input(1, "image_shape", "", "tensor(int64)")
      .Input(2, "block_shape", "", "tensor(int64)")
      .Output(0, "output", "", "T")
      .Attr("dilations", "", AttributeProto::INTS, /*required=*/false)
      .Attr("pads", "", AttributeProto::INTS, /*required=*/false)
      .Attr("strides", "", AttributeProto::INTS, /*required=*/false)
      .TypeConstraint("T", OpSchema::all_tensor_types(), "")
      .TypeAndShapeInferenceFunction(inferCol2Im);
  return s;
}

/// CenterCropPad (opset 18): the axes named (all by default) take the
/// sizes of `shape`.
void inferCenterCropPad(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const onnx::TensorShapeProto &in = onnx::getInputShape(ctx, 0);
  int rank = in.dim_size();
  std::vector<int64_t> sizes, axes;
  if (!constantInts(ctx, 1, sizes)) {
    setUnknownDims(ctx, 0, rank);
    return;
  }
  if (const AttributeProto *given = ctx.getAttribute("axes"))
    axes.assign(given->ints().begin(), given->ints().end());
  else
    for (int d = 0; d < rank; ++d)
      axes.push_back(d);
  if (sizes.size() != axes.size())
    fail_shape_inference("shape has ", sizes.size(), " values for ",
                         axes.size(), " axes");
  onnx::TensorShapeProto *out = outputShape(ctx, 0);
  *out = in;
  for (size_t i = 0; i < axes.size(); ++i)
    out->mutable_dim(normalizeAxis(axes[i], rank))->set_dim_value(sizes[i]);
}

OpSchema centerCropPadSchema() {
  OpSchema s("CenterCropPad", __FILE__, __LINE__);
  s.SinceVersion(18)
      .Input(0, "input_data", "", "T")
      .Input(1, "shape", "", "Tind")
      .Output(0, "output_data", "", "T")
      .Attr("axes", "", AttributeProto::INTS, /*required=*/false)
      .TypeConstraint("T", OpSchema::all_tensor_types(), "")
      .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(inferCenterCropPad);
  return s;
}

/// AffineGrid (opset 20): theta [N, r, r + 1] and size (N, C, spatial...)
/// -> [N, spatial..., r].
void inferAffineGrid(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::vector<int64_t> size;
  if (!constantInts(ctx, 1, size))
    return;
  if (size.size() != 4 && size.size() != 5)
    fail_shape_inference("size must hold 4 (N, C, H, W) or 5 (N, C, D, H, W) "
                         "values, got ",
                         size.size());
  onnx::TensorShapeProto *out = outputShape(ctx, 0);
  out->clear_dim();
  out->add_dim()->set_dim_value(size[0]);
  for (size_t d = 2; d < size.size(); ++d)
    out->add_dim()->set_dim_value(size[d]);
  out->add_dim()->set_dim_value(static_cast<int64_t>(size.size()) - 2);
}

OpSchema affineGridSchema() {
  OpSchema s("AffineGrid", __FILE__, __LINE__);
  s.SinceVersion(20)
      .Input(0, "theta", "", "T1")
      .Input(1, "size", "", "T2")
      .Output(0, "grid", "", "T1")
      .Attr("align_corners", "", AttributeProto::INT, int64_t{0})
      .TypeConstraint("T1", kFloatTypes, "")
      .TypeConstraint("T2", {"tensor(int64)"}, "")
      .TypeAndShapeInferenceFunction(inferAffineGrid);
  return s;
}

/// DeformConv (opset 19): [N, Cout, the offsets' spatial dims].
void inferDeformConv(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 3))
    return;
  const onnx::TensorShapeProto &x = onnx::getInputShape(ctx, 0);
  const onnx::TensorShapeProto &w = onnx::getInputShape(ctx, 1);
  const onnx::TensorShapeProto &offset = onnx::getInputShape(ctx, 2);
  if (x.dim_size() < 3 || w.dim_size() != x.dim_size() ||
      offset.dim_size() != x.dim_size())
    fail_shape_inference("X, W and offset must have one rank of 3 or more");
  onnx::TensorShapeProto *out = outputShape(ctx, 0);
  out->clear_dim();
  *out->add_dim() = x.dim(0);
  *out->add_dim() = w.dim(0);
  for (int d = 2; d < offset.dim_size(); ++d)
    *out->add_dim() = offset.dim(d);
}

OpSchema deformConvSchema() {
  OpSchema s("DeformConv", __FILE__, __LINE__);
  s.SinceVersion(19)
      .Input(0, "X", "", "T")
      .Input(1, "W", "", "T")
      .Input(2, "offset", "", "T")
      .Input(3, "B", "", "T", OpSchema::Optional)
      .Input(4, "mask", "", "T", OpSchema::Optional)
      .Output(0, "Y", "", "T")
      .Attr("dilations", "", AttributeProto::INTS, /*required=*/false)
      .Attr("group", "", AttributeProto::INT, int64_t{1})
      .Attr("kernel_shape", "", AttributeProto::INTS, /*required=*/false)
      .Attr("offset_group", "", AttributeProto::INT, int64_t{1})
      .Attr("pads", "", AttributeProto::INTS, /*required=*/false)
      .Attr("strides", "", AttributeProto::INTS, /*required=*/false)
      .TypeConstraint("T", kFloatTypes, "")
      .TypeAndShapeInferenceFunction(inferDeformConv);
  return s;
}

/// ImageDecoder (opset 20): [H, W, 3] (RGB, BGR) or [H, W, 1] (Grayscale),
/// H and W known only from the image. A bad pixel_format is left to the
/// importer, whose error names the node.
void inferImageDecoder(InferenceContext &ctx) {
  ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::UINT8);
  const AttributeProto *format = ctx.getAttribute("pixel_format");
  std::string name = format ? format->s() : "RGB";
  onnx::TensorShapeProto *out = outputShape(ctx, 0);
  out->clear_dim();
  out->add_dim();
  out->add_dim();
  if (name == "Grayscale")
    out->add_dim()->set_dim_value(1);
  else if (name == "RGB" || name == "BGR")
    out->add_dim()->set_dim_value(3);
  else
    out->add_dim();
}

OpSchema imageDecoderSchema() {
  OpSchema s("ImageDecoder", __FILE__, __LINE__);
  s.SinceVersion(20)
      .Input(0, "encoded_stream", "", "T1")
      .Output(0, "image", "", "T2")
      .Attr("pixel_format", "", AttributeProto::STRING, std::string("RGB"))
      .TypeConstraint("T1", {"tensor(uint8)"}, "")
      .TypeConstraint("T2", {"tensor(uint8)"}, "")
      .TypeAndShapeInferenceFunction(inferImageDecoder);
  return s;
}

/// The schemas of the ops new after opset 17 that gopt imports.
std::vector<OpSchema> newOpSchemas() {
  std::vector<OpSchema> schemas;
  for (const char *op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    schemas.push_back(bitwiseBinarySchema(op));
  schemas.push_back(bitwiseNotSchema());
  schemas.push_back(col2imSchema());
  schemas.push_back(centerCropPadSchema());
  schemas.push_back(affineGridSchema());
  schemas.push_back(deformConvSchema());
  schemas.push_back(imageDecoderSchema());
  return schemas;
}

using SchemaVersions = std::map<int, OpSchema>;

std::map<std::string, SchemaVersions> buildSchemas() {
  std::map<std::string, SchemaVersions> schemas;
  auto add = [&](OpSchema s) {
    s.Finalize();
    std::string name = s.Name();
    int version = s.SinceVersion();
    schemas[name].emplace(version, std::move(s));
  };
  for (OpSchema &s : newOpSchemas())
    add(std::move(s));
  for (const char *op :
       {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
        "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"})
    add(reduceSchema(op));
  add(padSchema());
  add(splitSchema());
  add(groupNormSchema(18));
  add(groupNormSchema(21));
  add(mishSchema());
  add(geluSchema());
  add(dftSchema());
  addChangedAttrSchemas(add, [&](OpSchema s) {
    std::string name = s.Name();
    int version = s.SinceVersion();
    schemas[name].emplace(version, std::move(s));
  });
  return schemas;
}

} // namespace

const onnx::OpSchema *gopt::import::laterOnnxSchema(const std::string &op,
                                                    int opset) {
  if (opset <= kLibOnnxLatestOpset)
    return nullptr;
  static const std::map<std::string, SchemaVersions> schemas = buildSchemas();
  auto it = schemas.find(op);
  if (it == schemas.end())
    return nullptr;
  auto version = it->second.upper_bound(opset);
  if (version == it->second.begin())
    return nullptr;
  return &std::prev(version)->second;
}
