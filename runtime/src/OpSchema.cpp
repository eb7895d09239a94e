//===- OpSchema.cpp - Op kinds, attributes and shape functions ------------===//
//
// The op table is generated from the ODS (OpTable.inc); this file holds the
// shape functions it names, which follow docs/op-semantics.md.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/OpSchema.h"
#include "ShapeAdapters.h"
#include "gopt/runtime/PlanBuilder.h"
#include "shapes/Collective.h"
#include "shapes/Cost.h"
#include "shapes/DataDependent.h"
#include "shapes/DynamicShape.h"
#include "shapes/Image.h"
#include "shapes/Indexing.h"
#include "shapes/Logic.h"
#include "shapes/Norm.h"
#include "shapes/Rnn.h"
#include "shapes/Sampling.h"
#include "shapes/Signal.h"
#include "shapes/Training.h"
#include "shapes/Volume.h"

#include <algorithm>
#include <map>
#include <set>

namespace gopt::runtime {

const char *attrTypeName(AttrType type) {
  switch (type) {
  case AttrType::kInt:
    return "int (i)";
  case AttrType::kFloat:
    return "float (f)";
  case AttrType::kString:
    return "string (s)";
  case AttrType::kBool:
    return "bool (b)";
  case AttrType::kInts:
    return "int list (ints)";
  case AttrType::kFloats:
    return "float list (floats)";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// OpAttrs
//===----------------------------------------------------------------------===//

bool OpAttrs::has(const std::string &name) const {
  return op_->attrs().count(name) != 0;
}

const plan::AttrValue *OpAttrs::find(const std::string &name) const {
  auto it = op_->attrs().find(name);
  if (it != op_->attrs().end())
    return &it->second;
  // Only absent attributes need the schema; look it up once, lazily.
  if (!schema_)
    schema_ = findOpSchema(op_->kind());
  if (!schema_)
    return nullptr;
  for (const AttrSpec &spec : schema_->attrs)
    if (name == spec.name)
      return spec.defaultValue ? &*spec.defaultValue : nullptr;
  return uniformDefault(name);
}

// The default of attribute `name` when every op declaring it has the same
// one: what a helper shared by an op and its gradient op reads for the
// gradient op, which may not declare the attribute (conv2d_backprop_input
// has no `padding`; its pads are explicit).
const plan::AttrValue *OpAttrs::uniformDefault(const std::string &name) {
  static const std::map<std::string, const plan::AttrValue *> defaults = [] {
    std::map<std::string, const plan::AttrValue *> m;
    std::set<std::string> conflicting;
    for (const OpSchema &schema : allOpSchemas())
      for (const AttrSpec &spec : schema.attrs) {
        const plan::AttrValue *d =
            spec.defaultValue ? &*spec.defaultValue : nullptr;
        auto [it, inserted] = m.emplace(spec.name, d);
        if (!inserted &&
            (!d || !it->second ||
             d->SerializeAsString() != it->second->SerializeAsString()))
          conflicting.insert(spec.name);
      }
    for (const std::string &name : conflicting)
      m.erase(name);
    return m;
  }();
  auto it = defaults.find(name);
  return it == defaults.end() ? nullptr : it->second;
}

int64_t OpAttrs::getInt(const std::string &name) const {
  const plan::AttrValue *v = find(name);
  return v ? v->i() : 0;
}

int64_t OpAttrs::getInt(const std::string &name, int64_t absent) const {
  auto it = op_->attrs().find(name);
  return it == op_->attrs().end() ? absent : it->second.i();
}

double OpAttrs::getFloat(const std::string &name) const {
  const plan::AttrValue *v = find(name);
  return v ? v->f() : 0.0;
}

double OpAttrs::getFloat(const std::string &name, double absent) const {
  auto it = op_->attrs().find(name);
  return it == op_->attrs().end() ? absent : it->second.f();
}

std::string OpAttrs::getString(const std::string &name) const {
  const plan::AttrValue *v = find(name);
  return v ? v->s() : std::string();
}

std::string OpAttrs::getString(const std::string &name,
                               const std::string &absent) const {
  auto it = op_->attrs().find(name);
  return it == op_->attrs().end() ? absent : it->second.s();
}

bool OpAttrs::getBool(const std::string &name) const {
  const plan::AttrValue *v = find(name);
  return v && v->b();
}

bool OpAttrs::getBool(const std::string &name, bool absent) const {
  auto it = op_->attrs().find(name);
  return it == op_->attrs().end() ? absent : it->second.b();
}

std::vector<int64_t> OpAttrs::getInts(const std::string &name) const {
  return getInts(name, {});
}

std::vector<int64_t>
OpAttrs::getInts(const std::string &name,
                 const std::vector<int64_t> &absent) const {
  auto it = op_->attrs().find(name);
  if (it == op_->attrs().end())
    return absent;
  const auto &v = it->second.ints().values();
  return std::vector<int64_t>(v.begin(), v.end());
}

std::vector<int64_t> OpAttrs::getWindowInts(const std::string &name) const {
  return has(name) ? getInts(name) : shape::absentWindowAttr(name);
}

std::vector<double> OpAttrs::getFloats(const std::string &name) const {
  auto it = op_->attrs().find(name);
  if (it == op_->attrs().end())
    return {};
  const auto &v = it->second.floats().values();
  return std::vector<double>(v.begin(), v.end());
}

//===----------------------------------------------------------------------===//
// Adapters over the shared shape functions (gopt/Shape/ShapeFunctions.h)
//===----------------------------------------------------------------------===//

StatusOr<WindowDim> computeWindowDim(int64_t in, int64_t kernel, int64_t stride,
                                     int64_t dilation,
                                     const std::string &padding, int64_t before,
                                     int64_t after, bool ceilMode) {
  WindowDim w;
  GOPT_RETURN_IF_ERROR(toStatus(shape::computeWindowDim(
      in, kernel, stride, dilation, padding, before, after, ceilMode, w)));
  return w;
}

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

namespace {

Status sameShape(const OpAttrs &, const Shapes &in, const DTypes &,
                 Shapes &out) {
  for (Shape &s : out)
    s = in[0];
  return Status::success();
}

// Operands of one shape and element type, the result alike (a unary math
// op's gradient: x, dy -> dx).
Status matchingOperandsShape(const OpAttrs &, const Shapes &in,
                             const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, in.size()));
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i] != in[0])
      return invalidArgument("operand ", i, " ", shapeToString(in[i]),
                             " must have the shape of operand 0 ",
                             shapeToString(in[0]));
  out[0] = in[0];
  return Status::success();
}

Status binaryShape(const OpAttrs &, const Shapes &in, const DTypes &types,
                   Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  return toStatus(shape::inferBroadcastShape(in[0], in[1], out[0]));
}

// The window attributes of a convolution or pooling op.
shape::WindowParams windowParams(const OpAttrs &attrs,
                                 const std::string &padding) {
  shape::WindowParams window;
  window.kernel = attrs.getInts("kernel");
  window.strides = attrs.getWindowInts("strides");
  window.dilations = attrs.getWindowInts("dilations");
  window.padding = padding;
  window.pads = attrs.getWindowInts("pads");
  window.ceilMode = attrs.getBool("ceil_mode");
  return window;
}

Status conv2dShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  // Mixed precision keeps a bf16 convolution's bias in f32.
  if (types.size() == 3 && types[2] != types[0] && types[2] != DType::kF32)
    return invalidArgument("bias has element type ", dtypeName(types[2]),
                           ", expected ", dtypeName(types[0]), " or f32");
  std::string padding = attrs.getString("padding");
  std::string dataFormat = attrs.getString("data_format");
  std::string filterFormat = attrs.getString("filter_format");
  std::string activation = attrs.getString("activation");
  shape::Conv2DParams params;
  params.window = windowParams(attrs, padding);
  params.groups = attrs.getInt("groups");
  params.dataFormat = dataFormat;
  params.filterFormat = filterFormat;
  params.activation = activation;
  shape::DimsRef bias;
  if (in.size() == 3)
    bias = in[2];
  return toStatus(shape::inferConv2DShape(
      in[0], in[1], in.size() == 3 ? &bias : nullptr, params, out[0]));
}

Status batchNormShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 5));
  bool training = attrs.getBool("training");
  size_t expected = training ? 5 : 1;
  if (out.size() != expected)
    return invalidArgument(
        "batch_norm with training=", training ? "true" : "false", " has ",
        expected, " results, the op lists ", out.size());
  const shape::DimsRef perChannel[4] = {in[1], in[2], in[3], in[4]};
  int64_t channels;
  GOPT_RETURN_IF_ERROR(toStatus(shape::inferBatchNormShape(
      in[0], perChannel, attrs.getString("data_format"),
      static_cast<float>(attrs.getFloat("epsilon")),
      static_cast<float>(attrs.getFloat("momentum")), channels)));
  out[0] = in[0];
  for (size_t i = 1; i < out.size(); ++i)
    out[i] = Shape{channels};
  return Status::success();
}

Status biasAddShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                    Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  return toStatus(shape::inferBiasAddShape(
      in[0], in[1], attrs.getString("data_format"), out[0]));
}

Status matmulShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 2));
  return toStatus(
      shape::inferMatMulShape(in[0], in[1], attrs.getBool("transpose_a"),
                              attrs.getBool("transpose_b"), out[0]));
}

Status poolShape(const OpAttrs &attrs, const Shapes &in, const DTypes &,
                 Shapes &out) {
  std::string padding = attrs.getString("padding");
  shape::WindowParams window = windowParams(attrs, padding);
  window.dilations = {1, 1};
  return toStatus(shape::inferPoolShape(
      in[0], window, attrs.getString("data_format"), out[0]));
}

Status globalPoolShape(const OpAttrs &attrs, const Shapes &in, const DTypes &,
                       Shapes &out) {
  return toStatus(shape::inferGlobalPoolShape(
      in[0], attrs.getString("data_format"), out[0]));
}

Status softmaxShape(const OpAttrs &attrs, const Shapes &in, const DTypes &,
                    Shapes &out) {
  int64_t axis;
  GOPT_RETURN_IF_ERROR(toStatus(
      shape::normalizeAxis(attrs.getInt("axis"), in[0].size(), "axis", axis)));
  out[0] = in[0];
  return Status::success();
}

Status reduceShape(const OpAttrs &attrs, const Shapes &in, const DTypes &,
                   Shapes &out) {
  return toStatus(shape::inferReduceShape(in[0], attrs.getInts("axes"),
                                          attrs.getBool("keep_dims"), out[0]));
}

Status reshapeShape(const OpAttrs &attrs, const Shapes &in, const DTypes &,
                    Shapes &out) {
  return toStatus(
      shape::inferReshapeShape(in[0], attrs.getInts("shape"), out[0]));
}

Status flattenShape(const OpAttrs &attrs, const Shapes &in, const DTypes &,
                    Shapes &out) {
  return toStatus(
      shape::inferFlattenShape(in[0], attrs.getInt("axis"), out[0]));
}

Status transposeShape(const OpAttrs &attrs, const Shapes &in, const DTypes &,
                      Shapes &out) {
  return toStatus(
      shape::inferTransposeShape(in[0], attrs.getInts("perm"), out[0]));
}

Status concatShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, types.size()));
  std::vector<shape::DimsRef> inputs(in.begin(), in.end());
  return toStatus(
      shape::inferConcatShape(inputs, attrs.getInt("axis"), out[0]));
}

Status sliceShape(const OpAttrs &attrs, const Shapes &in, const DTypes &,
                  Shapes &out) {
  return toStatus(shape::inferSliceShape(in[0], attrs.getInts("starts"),
                                         attrs.getInts("ends"),
                                         attrs.getInts("steps"), out[0]));
}

Status padShape(const OpAttrs &attrs, const Shapes &in, const DTypes &,
                Shapes &out) {
  return toStatus(shape::inferPadShape(in[0], attrs.getInts("pads"),
                                       attrs.getString("mode"), out[0]));
}

Status shapeOfShape(const OpAttrs &, const Shapes &in, const DTypes &,
                    Shapes &out) {
  out[0] = {static_cast<int64_t>(in[0].size())};
  return Status::success();
}

// Values (i8 for dequantize, f32 for quantize) and f32 scales; the shapes
// are the dialect's (shape::inferDequantizeShape), the element types are
// checked here as ODS checks them in the dialect.
Status quantizationShape(const char *op, DType valueType, const OpAttrs &attrs,
                         const Shapes &in, const DTypes &types, Shapes &out) {
  if (types[0] != valueType)
    return invalidArgument(op, " values must be ", dtypeName(valueType),
                           ", got ", dtypeName(types[0]));
  if (types[1] != DType::kF32)
    return invalidArgument(op, " scales must be f32, got ",
                           dtypeName(types[1]));
  return toStatus(
      shape::inferDequantizeShape(in[0], in[1], attrs.getInt("axis"), out[0]));
}

Status dequantizeShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out) {
  return quantizationShape("dequantize", DType::kI8, attrs, in, types, out);
}

Status quantizeShape(const OpAttrs &attrs, const Shapes &in,
                     const DTypes &types, Shapes &out) {
  return quantizationShape("quantize", DType::kF32, attrs, in, types, out);
}

// buildSchemas(): one entry per runtime op of the ODS.
#include "gopt/runtime/OpTable.inc"

} // namespace

DType expectedResultDType(ResultDType resultDType,
                          const std::vector<DType> &inTypes) {
  switch (resultDType) {
  case ResultDType::kSameAsFirstInput:
    return inTypes.empty() ? DType::kInvalid : inTypes[0];
  case ResultDType::kSameAsSecondInput:
    return inTypes.size() < 2 ? DType::kInvalid : inTypes[1];
  case ResultDType::kAny:
    return DType::kInvalid;
  case ResultDType::kI64:
    return DType::kI64;
  case ResultDType::kF32:
    return DType::kF32;
  case ResultDType::kI8:
    return DType::kI8;
  case ResultDType::kBool:
    return DType::kBool;
  }
  return DType::kInvalid;
}

const std::vector<OpSchema> &allOpSchemas() {
  static const std::vector<OpSchema> schemas = buildSchemas();
  return schemas;
}

const OpSchema *findOpSchema(const std::string &kind) {
  static const std::map<std::string, const OpSchema *> byKind = [] {
    std::map<std::string, const OpSchema *> m;
    for (const OpSchema &s : allOpSchemas())
      m[s.kind] = &s;
    return m;
  }();
  auto it = byKind.find(kind);
  return it == byKind.end() ? nullptr : it->second;
}

static bool attrHasType(const plan::AttrValue &value, AttrType type) {
  switch (type) {
  case AttrType::kInt:
    return value.value_case() == plan::AttrValue::kI;
  case AttrType::kFloat:
    return value.value_case() == plan::AttrValue::kF;
  case AttrType::kString:
    return value.value_case() == plan::AttrValue::kS;
  case AttrType::kBool:
    return value.value_case() == plan::AttrValue::kB;
  case AttrType::kInts:
    return value.value_case() == plan::AttrValue::kInts;
  case AttrType::kFloats:
    return value.value_case() == plan::AttrValue::kFloats;
  }
  return false;
}

Status checkOpAgainstSchema(const plan::Op &op, const OpSchema &schema) {
  int numIn = op.inputs_size(), numOut = op.outputs_size();
  if (numIn < schema.minInputs ||
      (schema.maxInputs >= 0 && numIn > schema.maxInputs))
    return invalidArgument(
        "has ", numIn, " operands, expected ", schema.minInputs,
        schema.maxInputs < 0 ? std::string(" or more")
                             : " to " + std::to_string(schema.maxInputs));
  if (numOut < schema.minResults ||
      (schema.maxResults >= 0 && numOut > schema.maxResults))
    return invalidArgument(
        "has ", numOut, " results, expected ", schema.minResults,
        schema.maxResults < 0 ? std::string(" or more")
                              : " to " + std::to_string(schema.maxResults));
  // An attribute the op does not declare would be ignored by its shape
  // function and read by nothing, or worse, by a kernel helper shared with an
  // op that declares it.
  for (const auto &[name, value] : op.attrs())
    if (std::none_of(schema.attrs.begin(), schema.attrs.end(),
                     [&](const AttrSpec &spec) { return name == spec.name; }))
      return invalidArgument("has attribute '", name, "', which ", op.kind(),
                             " does not declare");
  for (const AttrSpec &spec : schema.attrs) {
    auto it = op.attrs().find(spec.name);
    if (it == op.attrs().end()) {
      if (spec.required)
        return invalidArgument("missing required attribute '", spec.name, "'");
      continue;
    }
    if (!attrHasType(it->second, spec.type))
      return invalidArgument("attribute '", spec.name, "' must be a ",
                             attrTypeName(spec.type));
    if (!spec.allowed.empty() &&
        std::find(spec.allowed.begin(), spec.allowed.end(), it->second.s()) ==
            spec.allowed.end())
      return invalidArgument("attribute '", spec.name, "' has unknown value '",
                             it->second.s(), "'");
  }
  return Status::success();
}

} // namespace gopt::runtime
