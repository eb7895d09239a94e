//===- ImportGraphDef.cpp - TensorFlow GraphDef to gopt -------------------===//
//
// Parses a GraphDef (binary or text format) with the project's own schema
// (graph.proto), orders the nodes topologically and maps TF 1.x inference
// and training-graph ops to gopt ops. data_format defaults to NHWC and
// filters are HWIO, as in TensorFlow. Graph inputs are the Placeholders;
// graph outputs are the first outputs of the nodes nothing else consumes.
//
//===----------------------------------------------------------------------===//

#include "FrameworkOps.h"
#include "ImportUtils.h"
#include "ImporterBase.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Import/Import.h"
#include "gopt/Shape/ShapeFunctions.h"
#include "gopt/Transforms/FoldValue.h"

#include "gopt_tf_graph.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <cmath>
#include <limits>
#include <map>

using namespace mlir;
using namespace gopt;
using namespace gopt::import;
namespace tf = gopt::tf;

namespace {

/// More outputs than this (Split, Unpack) is not a real graph.
constexpr int64_t kMaxOutputs = 1 << 16;

Type convertDataType(MLIRContext *ctx, int type) {
  Builder b(ctx);
  if (type > 100)
    type -= 100; // reference types of TF 1.x variables
  switch (type) {
  case tf::DT_FLOAT:
    return b.getF32Type();
  case tf::DT_HALF:
    return b.getF16Type();
  case tf::DT_BFLOAT16:
    return b.getBF16Type();
  case tf::DT_INT8:
    return b.getIntegerType(8);
  case tf::DT_INT32:
    return b.getIntegerType(32);
  case tf::DT_INT64:
    return b.getIntegerType(64);
  case tf::DT_BOOL:
    return b.getI1Type();
  case tf::DT_DOUBLE:
    return b.getF64Type();
  case tf::DT_INT16:
    return b.getIntegerType(16);
  case tf::DT_UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case tf::DT_UINT16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case tf::DT_UINT32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case tf::DT_UINT64:
    return b.getIntegerType(64, /*isSigned=*/false);
  default:
    return nullptr;
  }
}

std::string dataTypeName(int type) {
  if (tf::DataType_IsValid(type))
    return tf::DataType_Name(tf::DataType(type));
  return llvm::formatv("data type {0}", type).str();
}

/// Keeps the first text-format parse error.
class FirstError : public google::protobuf::io::ErrorCollector {
public:
  void AddError(int line, int column, const std::string &message) override {
    if (text.empty())
      text = llvm::formatv("line {0}, column {1}: {2}", line + 1, column + 1,
                           message)
                 .str();
  }
  std::string text;
};

class GraphDefImporter : public ImporterBase<GraphDefImporter> {
public:
  using ImporterBase::ImporterBase;

private:
  friend class ImporterBase<GraphDefImporter>;
  OwningOpRef<ModuleOp> build(StringRef bytes);
  LogicalResult parse(StringRef bytes);
  LogicalResult sortNodes(SmallVectorImpl<const tf::NodeDef *> &order);

  LogicalResult failNode(const Twine &reason) {
    return fail(llvm::formatv("node '{0}' ({1}): {2}", node->name(), node->op(),
                              reason.str()));
  }

  LogicalResult decodeTensor(const tf::TensorProto &t, RankedTensorType &type,
                             std::vector<char> &bytes);
  FailureOr<SmallVector<int64_t>> constantInts(int inputIndex);

  static std::pair<std::string, int> splitInput(StringRef input);
  /// Data inputs (control inputs "^x" dropped).
  SmallVector<std::string> dataInputs() const;
  FailureOr<Value> requiredInput(int i);
  const tf::AttrValue *attr(StringRef name) const {
    auto it = node->attr().find(name.str());
    return it == node->attr().end() ? nullptr : &it->second;
  }
  FailureOr<std::string> dataFormat();
  /// A 4-entry per-dimension list attribute (strides, ksize, dilations) as
  /// its (H, W) entries for `format`.
  FailureOr<SmallVector<int64_t>> spatialAttr(StringRef name, StringRef format,
                                              bool required);
  FailureOr<std::pair<StringAttr, DenseI64ArrayAttr>>
  paddingAttr(StringRef format);
  void setOutput(int i, Value v) { values[{node->name(), i}] = v; }

  LogicalResult importNode();
  LogicalResult importGeneric(const FrameworkOp &entry);
  LogicalResult importPlaceholder();
  LogicalResult importConst();
  LogicalResult importConv(bool depthwise);
  LogicalResult importConvBackpropInput();
  LogicalResult importFused(StringRef base);
  FailureOr<Value> applyFusedOps(Value y, int firstArg);
  LogicalResult importResize(bool bilinear);
  LogicalResult importPool(bool isMax);
  LogicalResult importFusedBatchNorm();
  LogicalResult importReduce(StringRef kind);
  LogicalResult importReshapeLike(StringRef kind);
  FailureOr<SmallVector<int64_t>> reshapeTarget(Value x);
  LogicalResult importConcat(bool v2);
  FailureOr<int64_t> constantAxis(int inputIndex);
  LogicalResult importGather(bool v2);
  LogicalResult importGatherNd();
  LogicalResult importArgReduce(bool max);
  LogicalResult importCumsum();
  LogicalResult importTopK();
  LogicalResult importPad();
  LogicalResult importSquare();
  LogicalResult importCheckNumerics();
  LogicalResult importLeakyRelu();
  LogicalResult importBiasAdd();
  LogicalResult importMatMul(bool batch);
  LogicalResult importTranspose();
  LogicalResult importSoftmax(bool log);
  LogicalResult importShape();
  LogicalResult importCast();
  LogicalResult importEqual(bool negate);
  LogicalResult importSelect();
  LogicalResult importWhere();
  LogicalResult importUnique();
  template <typename OpTy> LogicalResult importShapedBy();
  LogicalResult importStridedSlice();
  LogicalResult importSlice();
  LogicalResult importAddN();
  LogicalResult importPack();
  LogicalResult importUnpack();
  LogicalResult importSplit(bool v);
  LogicalResult importFill();
  LogicalResult importConstantLike(double value);
  LogicalResult importRange();
  LogicalResult importSparseToDense();
  /// `x` reshaped to `dims`, whose dynamic entries (at most one) become -1.
  FailureOr<Value> reshapeTo(Value x, ArrayRef<int64_t> dims);
  /// Elements [start, start + size) of `x` along `axis`.
  FailureOr<Value> sliceAxis(Value x, int64_t axis, int64_t start,
                             int64_t size);
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);

  tf::GraphDef graph;
  const tf::NodeDef *node = nullptr;
  llvm::StringMap<const tf::NodeDef *> nodesByName;
  std::map<std::pair<std::string, int>, Value> values;
  std::map<std::pair<std::string, int>, std::string> unsupportedValues;
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  Block *body = nullptr;
};

//===----------------------------------------------------------------------===//
// Parsing and ordering
//===----------------------------------------------------------------------===//

LogicalResult GraphDefImporter::parse(StringRef bytes) {
  StringRef ext = llvm::sys::path::extension(filename);
  bool textFirst = ext == ".pbtxt" || ext == ".txt";
  auto parseBinary = [&] {
    return bytes.size() <= size_t(std::numeric_limits<int>::max()) &&
           graph.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  };
  FirstError textError;
  auto parseText = [&] {
    google::protobuf::TextFormat::Parser parser;
    parser.RecordErrorsTo(&textError);
    // TensorFlow writes fields this schema leaves out (library, debug info).
    parser.AllowUnknownField(true);
    return parser.ParseFromString(std::string(bytes), &graph);
  };
  if (textFirst ? parseText() : (parseBinary() || parseText()))
    return success();
  if (textFirst)
    return fail("not a valid text-format GraphDef: " + textError.text);
  return fail("not a valid GraphDef (the file is truncated, or neither a "
              "binary nor a text-format GraphDef)");
}

std::pair<std::string, int> GraphDefImporter::splitInput(StringRef input) {
  size_t colon = input.rfind(':');
  int index = 0;
  if (colon != StringRef::npos &&
      !input.substr(colon + 1).getAsInteger(10, index) && index >= 0)
    return {input.substr(0, colon).str(), index};
  return {input.str(), 0};
}

LogicalResult
GraphDefImporter::sortNodes(SmallVectorImpl<const tf::NodeDef *> &order) {
  for (const tf::NodeDef &n : graph.node()) {
    if (n.name().empty())
      return fail(llvm::formatv("a node ({0}) has no name", n.op()));
    if (!nodesByName.try_emplace(n.name(), &n).second)
      return fail(llvm::formatv("two nodes are named '{0}'", n.name()));
  }
  // Iterative depth-first search (graphs can be deep enough to overflow the
  // stack recursively); 1 = on the stack, 2 = done.
  llvm::StringMap<int> state;
  for (const tf::NodeDef &root : graph.node()) {
    if (state[root.name()])
      continue;
    SmallVector<std::pair<const tf::NodeDef *, int>> stack{{&root, 0}};
    state[root.name()] = 1;
    while (!stack.empty()) {
      auto &[n, next] = stack.back();
      if (next == n->input_size()) {
        state[n->name()] = 2;
        order.push_back(n);
        stack.pop_back();
        continue;
      }
      StringRef in = n->input(next++);
      in.consume_front("^");
      std::string producer = splitInput(in).first;
      auto it = nodesByName.find(producer);
      if (it == nodesByName.end())
        return fail(llvm::formatv("node '{0}' ({1}): input '{2}' names no node",
                                  n->name(), n->op(), in));
      int &s = state[producer];
      if (s == 1)
        return fail(llvm::formatv("node '{0}' ({1}): the graph has a cycle "
                                  "through '{2}' (control flow is not "
                                  "supported)",
                                  n->name(), n->op(), producer));
      if (s == 0) {
        s = 1;
        stack.push_back({it->second, 0});
      }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Tensors and attributes
//===----------------------------------------------------------------------===//

LogicalResult GraphDefImporter::decodeTensor(const tf::TensorProto &t,
                                             RankedTensorType &type,
                                             std::vector<char> &bytes) {
  Type et = convertDataType(ctx, t.dtype());
  if (!et)
    return failNode(
        llvm::formatv("unsupported element type {0}", dataTypeName(t.dtype())));
  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (const auto &d : t.tensor_shape().dim()) {
    if (d.size() < 0)
      return failNode(llvm::formatv("constant has an unknown dimension"));
    if (d.size() > 0 && count > (int64_t(1) << 40) / d.size())
      return failNode("constant is too large");
    dims.push_back(d.size());
    count *= d.size();
  }
  type = RankedTensorType::get(dims, et);
  size_t width = elementByteWidth(et);
  size_t need = count * width;
  if (!t.tensor_content().empty()) {
    if (t.tensor_content().size() != need)
      return failNode(llvm::formatv(
          "tensor_content has {0} bytes but shape {1} of {2} needs {3}",
          t.tensor_content().size(), formatShape(dims), dataTypeName(t.dtype()),
          need));
    bytes.assign(t.tensor_content().begin(), t.tensor_content().end());
    return success();
  }
  // Typed values: TensorFlow repeats the last one to fill the shape. One
  // value (or none: zeros) stays one element, which createConstant makes a
  // splat, so a tiny file cannot ask for gigabytes; a few values repeated
  // are written out up to kMaxRepeatedBytes.
  constexpr size_t kMaxRepeatedBytes = size_t(64) << 20;
  auto fill = [&](auto &&vals, auto convert) -> LogicalResult {
    int64_t n = vals.size();
    if (n > count)
      return failNode(llvm::formatv("has {0} values but shape {1} holds {2}", n,
                                    formatShape(dims), count));
    if (n <= 1 && count > 1) {
      bytes.assign(width, 0);
      if (n == 1) {
        auto v = convert(vals[0]);
        memcpy(bytes.data(), &v, width);
      }
      return success();
    }
    if (n < count && need > kMaxRepeatedBytes)
      return failNode(llvm::formatv(
          "repeats {0} values to fill shape {1} ({2} bytes); at most {3} bytes "
          "of repeated values are supported",
          n, formatShape(dims), need, kMaxRepeatedBytes));
    bytes.assign(need, 0);
    for (int64_t i = 0; i < count && n > 0; ++i) {
      auto v = convert(vals[std::min(i, n - 1)]);
      memcpy(bytes.data() + i * width, &v, width);
    }
    return success();
  };
  int base = t.dtype() > 100 ? t.dtype() - 100 : t.dtype();
  switch (base) {
  case tf::DT_FLOAT:
    return fill(t.float_val(), [](float v) { return v; });
  case tf::DT_INT64:
    return fill(t.int64_val(), [](int64_t v) { return v; });
  case tf::DT_BOOL:
    return fill(t.bool_val(), [](bool v) { return uint8_t(v); });
  case tf::DT_HALF:
  case tf::DT_BFLOAT16:
    return fill(t.half_val(), [](int32_t v) { return uint16_t(v); });
  case tf::DT_DOUBLE:
    return fill(t.double_val(), [](double v) { return v; });
  case tf::DT_UINT32:
    return fill(t.uint32_val(), [](uint32_t v) { return v; });
  case tf::DT_UINT64:
    return fill(t.uint64_val(), [](uint64_t v) { return v; });
  default: // int32, int16, int8, uint16, uint8: the low bytes of int_val
    return fill(t.int_val(), [](int32_t v) { return v; });
  }
}

SmallVector<std::string> GraphDefImporter::dataInputs() const {
  SmallVector<std::string> result;
  for (const std::string &in : node->input())
    if (!StringRef(in).starts_with("^"))
      result.push_back(in);
  return result;
}

FailureOr<Value> GraphDefImporter::requiredInput(int i) {
  SmallVector<std::string> ins = dataInputs();
  if (i >= static_cast<int>(ins.size()))
    return failNode(llvm::formatv("missing input #{0}", i));
  auto key = splitInput(ins[i]);
  auto it = values.find(key);
  if (it != values.end())
    return it->second;
  auto bad = unsupportedValues.find(key);
  if (bad != unsupportedValues.end())
    return failNode(llvm::formatv("input '{0}' is {1}", ins[i], bad->second));
  return failNode(
      llvm::formatv("input '{0}' is not produced by its node", ins[i]));
}

FailureOr<SmallVector<int64_t>> GraphDefImporter::constantInts(int i) {
  SmallVector<std::string> ins = dataInputs();
  if (i >= static_cast<int>(ins.size()))
    return failNode(llvm::formatv("missing input #{0}", i));
  // A Const, or what TensorFlow computes from constants and static shapes
  // (Shape -> StridedSlice -> Pack, Identity chains of frozen graphs):
  // the constant folder's evaluator reads it from the imported ops.
  auto it = values.find(splitInput(ins[i]));
  if (it != values.end())
    if (auto type = dyn_cast<RankedTensorType>(it->second.getType());
        type && type.hasStaticShape() &&
        type.getNumElements() > kMaxIntegerValues)
      return failNode(llvm::formatv(
          "input #{0} ('{1}') holds {2} values; at most {3} are supported here",
          i, ins[i], type.getNumElements(), kMaxIntegerValues));
  DenseElementsAttr folded =
      it == values.end() ? DenseElementsAttr() : foldValue(it->second);
  if (!folded)
    return failNode(llvm::formatv("input #{0} ('{1}') must be a constant, or "
                                  "computed from constants and static shapes",
                                  i, ins[i]));
  std::optional<SmallVector<int64_t>> ints = integerValues(folded);
  if (!ints)
    return failNode(
        llvm::formatv("input #{0} ('{1}') must hold integers", i, ins[i]));
  return *ints;
}

FailureOr<std::string> GraphDefImporter::dataFormat() {
  const tf::AttrValue *a = attr("data_format");
  std::string format = a ? a->s() : "NHWC";
  if (format != "NHWC" && format != "NCHW")
    return failNode(llvm::formatv("unsupported data_format '{0}'", format));
  return format;
}

FailureOr<SmallVector<int64_t>>
GraphDefImporter::spatialAttr(StringRef name, StringRef format, bool required) {
  const tf::AttrValue *a = attr(name);
  if (!a) {
    if (required)
      return failNode(llvm::formatv("missing attribute '{0}'", name));
    return SmallVector<int64_t>{1, 1};
  }
  if (a->list().i_size() != 4)
    return failNode(llvm::formatv("attribute '{0}' must have 4 entries", name));
  int h = format == "NHWC" ? 1 : 2;
  return SmallVector<int64_t>{a->list().i(h), a->list().i(h + 1)};
}

FailureOr<std::pair<StringAttr, DenseI64ArrayAttr>>
GraphDefImporter::paddingAttr(StringRef format) {
  const tf::AttrValue *a = attr("padding");
  if (!a)
    return failNode("missing attribute 'padding'");
  std::string padding = a->s();
  if (padding == "SAME" || padding == "VALID")
    return std::make_pair(b.getStringAttr(padding), DenseI64ArrayAttr());
  if (padding != "EXPLICIT")
    return failNode(llvm::formatv("unknown padding '{0}'", padding));
  const tf::AttrValue *e = attr("explicit_paddings");
  if (!e || e->list().i_size() != 8)
    return failNode("EXPLICIT padding needs 8 explicit_paddings");
  int h = format == "NHWC" ? 1 : 2;
  const auto &p = e->list().i();
  return std::make_pair(
      b.getStringAttr("EXPLICIT"),
      i64s({p[2 * h], p[2 * h + 1], p[2 * h + 2], p[2 * h + 3]}));
}

LogicalResult GraphDefImporter::importGeneric(const FrameworkOp &entry) {
  SmallVector<Value> operands;
  for (int i = 0; i < entry.numOperands; ++i) {
    GET_INPUT(v, i);
    operands.push_back(v);
  }
  if (static_cast<int>(dataInputs().size()) != entry.numOperands)
    return failNode(llvm::formatv("expects {0} input(s), got {1}",
                                  entry.numOperands, dataInputs().size()));
  SmallVector<NamedAttribute> attrs;
  for (const auto &[name, value] : node->attr()) {
    const FrameworkAttr *spec = entry.findAttr(name);
    // "T" and "_"-prefixed attributes are TensorFlow's bookkeeping.
    if (!spec) {
      if (name == "T" || StringRef(name).starts_with("_"))
        continue;
      return failNode(llvm::formatv("unsupported attribute '{0}'", name));
    }
    if (spec->kind == FrameworkAttrKind::kFloat &&
        value.value_case() == tf::AttrValue::kF)
      attrs.push_back(b.getNamedAttr(name, b.getF32FloatAttr(value.f())));
    else if (spec->kind == FrameworkAttrKind::kInt &&
             value.value_case() == tf::AttrValue::kI)
      attrs.push_back(b.getNamedAttr(name, b.getI64IntegerAttr(value.i())));
    else
      return failNode(
          llvm::formatv("attribute '{0}' has an unexpected type", name));
  }
  return setResult(createInferredByName(b, loc, entry.opName, operands, attrs));
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

LogicalResult GraphDefImporter::importPlaceholder() {
  const tf::AttrValue *dtype = attr("dtype");
  if (!dtype)
    return failNode("missing attribute 'dtype'");
  Type et = convertDataType(ctx, dtype->type());
  if (!et)
    return failNode(llvm::formatv("unsupported element type {0}",
                                  dataTypeName(dtype->type())));
  const tf::AttrValue *shape = attr("shape");
  if (!shape || shape->shape().unknown_rank())
    return failNode("needs a 'shape' attribute of known rank");
  SmallVector<int64_t> dims;
  for (const auto &d : shape->shape().dim())
    dims.push_back(d.size() < 0 ? ShapedType::kDynamic : d.size());
  auto type = RankedTensorType::get(dims, et);
  argTypes.push_back(type);
  argNames.push_back(node->name());
  setOutput(0, body->addArgument(type, loc));
  return success();
}

LogicalResult GraphDefImporter::importConst() {
  const tf::AttrValue *value = attr("value");
  if (!value || value->value_case() != tf::AttrValue::kTensor)
    return failNode("missing attribute 'value'");
  RankedTensorType type;
  std::vector<char> bytes;
  if (failed(decodeTensor(value->tensor(), type, bytes)))
    return failure();
  setOutput(0, createConstant(b, loc, type, bytes, node->name()));
  return success();
}

LogicalResult GraphDefImporter::importConv(bool depthwise) {
  GET_INPUT(x, 0);
  GET_INPUT(w, 1);
  FailureOr<std::string> format = dataFormat();
  if (failed(format))
    return failure();
  auto strides = spatialAttr("strides", *format, /*required=*/true);
  auto dilations = spatialAttr("dilations", *format, /*required=*/false);
  auto padding = paddingAttr(*format);
  if (failed(strides) || failed(dilations) || failed(padding))
    return failure();
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w);
  if (xs.size() != 4 || ws.size() != 4)
    return failNode(llvm::formatv("expects rank-4 input and filter, got {0} "
                                  "and {1}",
                                  formatShape(xs), formatShape(ws)));
  int64_t groups = 1;
  int64_t channels = xs[*format == "NHWC" ? 3 : 1];
  if (depthwise) {
    // [KH, KW, Cin, mult] -> [KH, KW, 1, Cin*mult]: output channel c*mult+m
    // is group c, as gopt's grouped conv numbers them.
    if (llvm::any_of(ws, ShapedType::isDynamic))
      return failNode("depthwise filter needs a static shape");
    groups = ws[2];
    GOPT_INFER(reshaped, ReshapeOp, w, i64s({ws[0], ws[1], 1, ws[2] * ws[3]}));
    w = reshaped;
  } else if (!ShapedType::isDynamic(channels) &&
             !ShapedType::isDynamic(ws[2]) && ws[2] > 0 && channels != ws[2] &&
             channels % ws[2] == 0) {
    groups = channels / ws[2]; // TensorFlow's grouped convolution
  }
  return setResult(createInferred<Conv2DOp>(
      b, loc, x, w, Value(), i64s(*strides), i64s(*dilations), padding->first,
      padding->second, b.getI64IntegerAttr(groups), b.getStringAttr(*format),
      b.getStringAttr("HWIO"), b.getStringAttr("none")));
}

/// Grappler's fusions (_FusedConv2D, _FusedDepthwiseConv2dNative,
/// _FusedMatMul): the base op of inputs 0 and 1, then `fused_ops` in order,
/// each reading its extra inputs (`num_args` in all) from input 2 on. They
/// import unfused; --gopt-fuse-conv-bias-activation fuses again what a
/// backend runs as one kernel.
LogicalResult GraphDefImporter::importFused(StringRef base) {
  LogicalResult ok = base == "MatMul" ? importMatMul(/*batch=*/false)
                                      : importConv(base == "Depthwise");
  if (failed(ok))
    return failure();
  FailureOr<Value> y = applyFusedOps(values[{node->name(), 0}], 2);
  if (failed(y))
    return failure();
  setOutput(0, *y);
  return success();
}

FailureOr<Value> GraphDefImporter::applyFusedOps(Value y, int firstArg) {
  const tf::AttrValue *ops = attr("fused_ops");
  if (!ops || ops->list().s_size() == 0)
    return failNode("missing attribute 'fused_ops'");
  int numInputs = dataInputs().size();
  if (const tf::AttrValue *numArgs = attr("num_args");
      numArgs && numArgs->i() != numInputs - firstArg)
    return failNode(llvm::formatv("num_args = {0} but the node has {1} extra "
                                  "input(s)",
                                  numArgs->i(), numInputs - firstArg));
  FailureOr<std::string> format = dataFormat();
  if (failed(format))
    return failure();
  int next = firstArg;
  auto nextArg = [&](StringRef fusedOp) -> FailureOr<Value> {
    if (next >= numInputs)
      return failNode(llvm::formatv("fused op '{0}' needs input #{1}, which "
                                    "is missing",
                                    fusedOp, next));
    return requiredInput(next++);
  };
  auto floatAttr = [&](StringRef name, float tfDefault) {
    const tf::AttrValue *a = attr(name);
    return b.getF32FloatAttr(a ? a->f() : tfDefault);
  };
  for (const std::string &fusedOp : ops->list().s()) {
    Operation *op = nullptr;
    if (fusedOp == "BiasAdd") {
      GOPT_IMPORT_VALUE(bias, nextArg(fusedOp));
      GOPT_INFER_ASSIGN(op, BiasAddOp, y, bias, b.getStringAttr(*format));
    } else if (fusedOp == "Add" || fusedOp == "AddV2") {
      GOPT_IMPORT_VALUE(other, nextArg(fusedOp));
      GOPT_INFER_ASSIGN(op, AddOp, y, other);
    } else if (fusedOp == "FusedBatchNorm") {
      Value stats[4];
      for (Value &v : stats) {
        GOPT_IMPORT_VALUE(arg, nextArg(fusedOp));
        v = arg;
      }
      // Grappler fuses only inference batch norms (TF's epsilon default).
      GOPT_INFER_ASSIGN(op, BatchNormOp, y, stats[0], stats[1], stats[2],
                        stats[3], floatAttr("epsilon", 1e-4f),
                        b.getStringAttr(*format), b.getBoolAttr(false),
                        b.getF32FloatAttr(0.0f), b.getBoolAttr(false));
    } else if (fusedOp == "Relu") {
      GOPT_INFER_ASSIGN(op, ReluOp, y);
    } else if (fusedOp == "Relu6") {
      GOPT_INFER_ASSIGN(op, Relu6Op, y);
    } else if (fusedOp == "Elu") {
      GOPT_INFER_ASSIGN(op, EluOp, y, b.getF32FloatAttr(1.0f));
    } else if (fusedOp == "LeakyRelu") {
      GOPT_INFER_ASSIGN(op, LeakyReluOp, y, floatAttr("leakyrelu_alpha", 0.2f));
    } else if (fusedOp == "Sigmoid") {
      GOPT_INFER_ASSIGN(op, SigmoidOp, y);
    } else if (fusedOp == "Tanh") {
      GOPT_INFER_ASSIGN(op, TanhOp, y);
    } else if (fusedOp == "GeluExact" || fusedOp == "GeluApproximate") {
      GOPT_INFER_ASSIGN(
          op, GeluOp, y,
          b.getStringAttr(fusedOp == "GeluExact" ? "none" : "tanh"));
    } else {
      return failNode(llvm::formatv("unsupported fused op '{0}' (fused_ops "
                                    "may hold BiasAdd, Add, FusedBatchNorm, "
                                    "Relu, Relu6, Elu, LeakyRelu, Sigmoid, "
                                    "Tanh, GeluExact, GeluApproximate)",
                                    fusedOp));
    }
    y = op->getResult(0);
  }
  if (next != numInputs)
    return failNode(llvm::formatv("fused_ops read {0} extra input(s) but the "
                                  "node has {1}",
                                  next - firstArg, numInputs - firstArg));
  return y;
}

/// Conv2DBackpropInput with a constant input_sizes, as Keras'
/// Conv2DTranspose writes it: a transposed convolution whose pads are the
/// forward conv's and whose output_padding makes up the rows the forward
/// conv's floor dropped.
LogicalResult GraphDefImporter::importConvBackpropInput() {
  GET_INPUT(w, 1);
  GET_INPUT(dy, 2);
  FailureOr<SmallVector<int64_t>> sizes = constantInts(0);
  if (failed(sizes))
    return failure();
  FailureOr<std::string> format = dataFormat();
  if (failed(format))
    return failure();
  auto strides = spatialAttr("strides", *format, /*required=*/true);
  auto dilations = spatialAttr("dilations", *format, /*required=*/false);
  auto padding = paddingAttr(*format);
  if (failed(strides) || failed(dilations) || failed(padding))
    return failure();
  ArrayRef<int64_t> ws = shapeOf(w), ys = shapeOf(dy);
  if (sizes->size() != 4 || ws.size() != 4 || ys.size() != 4)
    return failNode(llvm::formatv("expects 4 input_sizes and rank-4 filter "
                                  "and out_backprop, got {0}, {1} and {2}",
                                  formatShape(*sizes), formatShape(ws),
                                  formatShape(ys)));
  bool nhwc = *format == "NHWC";
  int64_t channels = (*sizes)[nhwc ? 3 : 1];
  if (ShapedType::isDynamic(ws[0]) || ShapedType::isDynamic(ws[1]) ||
      ws[2] != channels)
    return failNode(llvm::formatv("expects a static filter [KH, KW, {0}, "
                                  "Cout] for input_sizes {1} (grouped "
                                  "transposed convolution is not supported), "
                                  "got {2}",
                                  channels, formatShape(*sizes),
                                  formatShape(ws)));
  SmallVector<int64_t> pads, outPad;
  ArrayRef<int64_t> explicitPads =
      padding->second ? padding->second.asArrayRef() : ArrayRef<int64_t>();
  for (int i = 0; i < 2; ++i) {
    int64_t in = (*sizes)[nhwc ? 1 + i : 2 + i];
    int64_t k = ws[i], s = (*strides)[i], d = (*dilations)[i];
    shape::WindowDim dim;
    shape::Result r = shape::computeWindowDim(
        in, k, s, d, padding->first.getValue(),
        explicitPads.empty() ? 0 : explicitPads[2 * i],
        explicitPads.empty() ? 0 : explicitPads[2 * i + 1], false, dim);
    if (r.failed())
      return failNode(r.message());
    int64_t natural =
        (dim.outSize - 1) * s + (k - 1) * d + 1 - dim.padBefore - dim.padAfter;
    if (natural > in)
      return failNode(llvm::formatv("input_sizes {0} is smaller than the "
                                    "transposed convolution's output",
                                    formatShape(*sizes)));
    pads.append({dim.padBefore, dim.padAfter});
    outPad.push_back(in - natural);
  }
  return setResult(createInferred<Conv2DTransposeOp>(
      b, loc, dy, w, Value(), i64s(*strides), i64s(*dilations), i64s(pads),
      i64s(outPad), b.getI64IntegerAttr(1), b.getStringAttr(*format),
      b.getStringAttr("HWIO")));
}

/// ResizeBilinear / ResizeNearestNeighbor with a constant size: NHWC
/// images, TensorFlow's align_corners and half_pixel_centers as ONNX's
/// coordinate transformations.
LogicalResult GraphDefImporter::importResize(bool bilinear) {
  GET_INPUT(x, 0);
  FailureOr<SmallVector<int64_t>> size = constantInts(1);
  if (failed(size))
    return failure();
  if (size->size() != 2)
    return failNode(llvm::formatv("expects a size of 2 entries, got {0}",
                                  formatShape(*size)));
  const tf::AttrValue *ac = attr("align_corners");
  const tf::AttrValue *hp = attr("half_pixel_centers");
  bool alignCorners = ac && ac->b(), halfPixel = hp && hp->b();
  if (alignCorners && halfPixel)
    return failNode("align_corners and half_pixel_centers are exclusive");
  std::string ctm = alignCorners ? "align_corners"
                    : halfPixel
                        ? (bilinear ? "half_pixel" : "tf_half_pixel_for_nn")
                        : "asymmetric";
  // TensorFlow rounds align_corners coordinates half away from zero.
  std::string nearestMode =
      alignCorners && !bilinear ? "round_prefer_ceil" : "floor";
  return setResult(createInferred<ResizeOp>(
      b, loc, x, DenseF32ArrayAttr(), i64s(*size), DenseF32ArrayAttr(),
      b.getStringAttr(bilinear ? "linear" : "nearest"), b.getStringAttr(ctm),
      b.getStringAttr(nearestMode), b.getF32FloatAttr(-0.75f),
      b.getBoolAttr(false), b.getF32FloatAttr(0.0f), b.getStringAttr("NHWC")));
}

LogicalResult GraphDefImporter::importPool(bool isMax) {
  GET_INPUT(x, 0);
  FailureOr<std::string> format = dataFormat();
  if (failed(format))
    return failure();
  auto kernel = spatialAttr("ksize", *format, /*required=*/true);
  auto strides = spatialAttr("strides", *format, /*required=*/true);
  auto padding = paddingAttr(*format);
  if (failed(kernel) || failed(strides) || failed(padding))
    return failure();
  if (isMax)
    return setResult(createInferred<MaxPoolOp>(
        b, loc, x, i64s(*kernel), i64s(*strides), padding->first,
        padding->second, b.getStringAttr(*format), b.getBoolAttr(false)));
  return setResult(createInferred<AvgPoolOp>(
      b, loc, x, i64s(*kernel), i64s(*strides), padding->first, padding->second,
      b.getStringAttr(*format), b.getBoolAttr(false), b.getBoolAttr(false)));
}

LogicalResult GraphDefImporter::importFusedBatchNorm() {
  GET_INPUT(x, 0);
  GET_INPUT(scale, 1);
  GET_INPUT(offset, 2);
  GET_INPUT(mean, 3);
  GET_INPUT(var, 4);
  FailureOr<std::string> format = dataFormat();
  if (failed(format))
    return failure();
  const tf::AttrValue *t = attr("is_training");
  bool training = t ? t->b() : true; // TensorFlow's default
  const tf::AttrValue *eps = attr("epsilon");
  const tf::AttrValue *factor = attr("exponential_avg_factor");
  // TF: running = (1 - factor) * running + factor * batch.
  float momentum = 1.0f - (factor ? factor->f() : 1.0f);
  GOPT_INFER(op, BatchNormOp, x, scale, offset, mean, var,
             b.getF32FloatAttr(eps ? eps->f() : 1e-4f),
             b.getStringAttr(*format), b.getBoolAttr(training),
             b.getF32FloatAttr(momentum), b.getBoolAttr(false));
  setOutput(0, op->getResult(0));
  if (training) {
    setOutput(1, op->getResult(3));
    setOutput(2, op->getResult(4));
  } else {
    // Inference: TensorFlow passes the given statistics through.
    setOutput(1, mean);
    setOutput(2, var);
  }
  for (int i = 3; i < 6; ++i)
    unsupportedValues[{node->name(), i}] =
        "a FusedBatchNorm reserve space, which gopt does not compute";
  return success();
}

LogicalResult GraphDefImporter::importReduce(StringRef kind) {
  GET_INPUT(x, 0);
  FailureOr<SmallVector<int64_t>> axes = constantInts(1);
  if (failed(axes))
    return failure();
  // An empty list in TensorFlow reduces nothing; gopt's empty means all.
  if (axes->empty()) {
    setOutput(0, x);
    return success();
  }
  const tf::AttrValue *k = attr("keep_dims");
  BoolAttr keep = b.getBoolAttr(k && k->b());
  if (kind == "Mean")
    return setResult(
        createInferred<ReduceMeanOp>(b, loc, x, i64s(*axes), keep));
  if (kind == "Sum")
    return setResult(createInferred<ReduceSumOp>(b, loc, x, i64s(*axes), keep));
  return setResult(createInferred<ReduceMaxOp>(b, loc, x, i64s(*axes), keep));
}

/// Reshape's shape (input 1): a constant or a constant-foldable value, or,
/// with dynamic dimensions, what traceShapeEntries reads from the graph
/// (Keras' Flatten: Shape -> StridedSlice -> Pack([batch, -1])). Entries
/// known only at run time become -1; with two of them (the batch copied
/// and a -1), the -1 is computed from x's static dimensions.
FailureOr<SmallVector<int64_t>> GraphDefImporter::reshapeTarget(Value x) {
  SmallVector<std::string> ins = dataInputs();
  if (ins.size() < 2)
    return failNode("missing input #1 (shape)");
  auto it = values.find(splitInput(ins[1]));
  if (it == values.end())
    return constantInts(1); // its error
  if (DenseElementsAttr folded = foldValue(it->second))
    if (std::optional<SmallVector<int64_t>> ints = integerValues(folded))
      return *ints;
  std::optional<SmallVector<ShapeEntry>> entries =
      traceShapeEntries(it->second);
  if (!entries)
    return constantInts(1); // its error
  ArrayRef<int64_t> in = shapeOf(x);
  SmallVector<int64_t> shape;
  SmallVector<bool> copied;
  int64_t inferred = 0;
  for (auto [i, e] : llvm::enumerate(*entries)) {
    bool copy = e.source == x && e.dim == static_cast<int64_t>(i);
    copied.push_back(copy);
    shape.push_back(e.source ? -1 : e.value);
    inferred += shape.back() == -1;
  }
  if (inferred > 1) {
    // x's dimensions not copied must all be static for the one true -1.
    int64_t inRest = 1, outRest = 1, literal = -1;
    for (size_t i = 0; i < in.size(); ++i) {
      if (i < copied.size() && copied[i])
        continue;
      if (ShapedType::isDynamic(in[i]))
        inRest = -1;
      else if (inRest != -1)
        inRest *= in[i];
    }
    for (auto [i, d] : llvm::enumerate(shape)) {
      if (d > 0)
        outRest *= d;
      else if (d == -1 && !copied[i])
        literal = literal == -1 ? int64_t(i) : -2;
    }
    if (inRest < 0 || literal < 0 || outRest <= 0 || inRest % outRest != 0 ||
        inferred != 1 + llvm::count(copied, true))
      return failNode(llvm::formatv("the shape {0} has more than one entry "
                                    "known only at run time",
                                    formatShape(shape)));
    shape[literal] = inRest / outRest;
    if (llvm::count(copied, true) > 1)
      return failNode(llvm::formatv("the shape copies more than one dynamic "
                                    "dimension of {0}",
                                    formatShape(in)));
  }
  return shape;
}

LogicalResult GraphDefImporter::importReshapeLike(StringRef kind) {
  GET_INPUT(x, 0);
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  SmallVector<int64_t> out;
  if (kind == "Reshape") {
    FailureOr<SmallVector<int64_t>> shape = reshapeTarget(x);
    if (failed(shape))
      return failure();
    out = *shape;
  } else if (kind == "Squeeze") {
    SmallVector<bool> drop(rank, false);
    const tf::AttrValue *dims = attr("squeeze_dims");
    if (!dims)
      dims = attr("axis");
    if (dims && dims->list().i_size() > 0) {
      for (int64_t a : dims->list().i()) {
        if (a < -rank || a >= rank)
          return failNode(llvm::formatv("squeeze axis {0} out of range", a));
        drop[a < 0 ? a + rank : a] = true;
      }
    } else {
      for (int64_t i = 0; i < rank; ++i) {
        if (ShapedType::isDynamic(in[i]))
          return failNode("squeeze without dims needs static dimensions");
        drop[i] = in[i] == 1;
      }
    }
    for (int64_t i = 0; i < rank; ++i)
      if (!drop[i])
        out.push_back(in[i]);
  } else { // ExpandDims
    FailureOr<SmallVector<int64_t>> dim = constantInts(1);
    if (failed(dim))
      return failure();
    if (dim->size() != 1 || (*dim)[0] < -rank - 1 || (*dim)[0] > rank)
      return failNode("expects one axis in range");
    int64_t a = (*dim)[0] < 0 ? (*dim)[0] + rank + 1 : (*dim)[0];
    out.assign(in.begin(), in.end());
    out.insert(out.begin() + a, 1);
  }
  if (kind != "Reshape") {
    if (llvm::count_if(out, ShapedType::isDynamic) > 1)
      return failNode("needs at most one dynamic dimension");
    for (int64_t &d : out)
      if (ShapedType::isDynamic(d))
        d = -1;
  }
  return setResult(createInferred<ReshapeOp>(b, loc, x, i64s(out)));
}

LogicalResult GraphDefImporter::importConcat(bool v2) {
  int n = dataInputs().size();
  if (n < 2)
    return failNode("needs at least one value and an axis");
  FailureOr<SmallVector<int64_t>> axis = constantInts(v2 ? n - 1 : 0);
  if (failed(axis))
    return failure();
  if (axis->size() != 1)
    return failNode("the axis must be a scalar");
  SmallVector<Value> inputs;
  for (int i = v2 ? 0 : 1; i < (v2 ? n - 1 : n); ++i) {
    GET_INPUT(v, i);
    inputs.push_back(v);
  }
  return setResult(createInferred<ConcatOp>(b, loc, ValueRange(inputs),
                                            b.getI64IntegerAttr((*axis)[0])));
}

FailureOr<int64_t> GraphDefImporter::constantAxis(int inputIndex) {
  FailureOr<SmallVector<int64_t>> axis = constantInts(inputIndex);
  if (failed(axis))
    return failure();
  if (axis->size() != 1)
    return failNode(
        llvm::formatv("input #{0} (the axis) must be a scalar", inputIndex));
  return axis->front();
}

/// Gather (axis 0) and GatherV2 (the axis an input), without batch
/// dimensions.
LogicalResult GraphDefImporter::importGather(bool v2) {
  GET_INPUT(x, 0);
  GET_INPUT(indices, 1);
  int64_t axis = 0;
  if (v2) {
    FailureOr<int64_t> a = constantAxis(2);
    if (failed(a))
      return failure();
    axis = *a;
    if (const tf::AttrValue *batchDims = attr("batch_dims");
        batchDims && batchDims->i() != 0)
      return failNode(llvm::formatv(
          "batch_dims = {0} is not supported (only 0)", batchDims->i()));
  }
  return setResult(
      createInferred<GatherOp>(b, loc, x, indices, b.getI64IntegerAttr(axis)));
}

LogicalResult GraphDefImporter::importGatherNd() {
  GET_INPUT(x, 0);
  GET_INPUT(indices, 1);
  return setResult(
      createInferred<GatherNDOp>(b, loc, x, indices, b.getI64IntegerAttr(0)));
}

/// ArgMax/ArgMin: the axis is input #1; `output_type` i32 casts gopt's i64.
LogicalResult GraphDefImporter::importArgReduce(bool max) {
  GET_INPUT(x, 0);
  FailureOr<int64_t> axis = constantAxis(1);
  if (failed(axis))
    return failure();
  int outputType = tf::DT_INT64;
  if (const tf::AttrValue *type = attr("output_type"))
    outputType = type->type();
  if (outputType != tf::DT_INT64 && outputType != tf::DT_INT32)
    return failNode(
        llvm::formatv("unsupported output_type {0}", dataTypeName(outputType)));
  IntegerAttr axisAttr = b.getI64IntegerAttr(*axis);
  BoolAttr no = b.getBoolAttr(false);
  Operation *op;
  if (max)
    GOPT_INFER_ASSIGN(op, ArgMaxOp, x, axisAttr, no, no);
  else
    GOPT_INFER_ASSIGN(op, ArgMinOp, x, axisAttr, no, no);
  if (outputType == tf::DT_INT64)
    return setResult(op);
  auto i64Type = cast<RankedTensorType>(op->getResult(0).getType());
  return setResult(createTyped<CastOp>(
      b, loc, i64Type.clone(b.getIntegerType(32)), op->getResult(0)));
}

LogicalResult GraphDefImporter::importCumsum() {
  GET_INPUT(x, 0);
  FailureOr<int64_t> axis = constantAxis(1);
  if (failed(axis))
    return failure();
  auto flag = [&](StringRef name) {
    const tf::AttrValue *value = attr(name);
    return b.getBoolAttr(value && value->b());
  };
  return setResult(
      createInferred<CumSumOp>(b, loc, x, b.getI64IntegerAttr(*axis),
                               flag("exclusive"), flag("reverse")));
}

/// TopKV2: k is a constant input, the axis the last; TensorFlow's indices
/// are i32 (index_type), gopt's i64 are cast.
LogicalResult GraphDefImporter::importTopK() {
  GET_INPUT(x, 0);
  FailureOr<int64_t> k = constantAxis(1);
  if (failed(k))
    return failure();
  int indexType = tf::DT_INT32;
  if (const tf::AttrValue *type = attr("index_type"))
    indexType = type->type();
  if (indexType != tf::DT_INT64 && indexType != tf::DT_INT32)
    return failNode(
        llvm::formatv("unsupported index_type {0}", dataTypeName(indexType)));
  const tf::AttrValue *sorted = attr("sorted");
  GOPT_INFER(op, TopKOp, x, b.getI64IntegerAttr(*k), b.getI64IntegerAttr(-1),
             b.getBoolAttr(true), b.getBoolAttr(!sorted || sorted->b()));
  setOutput(0, op.getValues());
  Value indices = op.getIndices();
  if (indexType == tf::DT_INT32) {
    auto narrowed = createTyped<CastOp>(
        b, loc,
        cast<RankedTensorType>(indices.getType()).clone(b.getIntegerType(32)),
        indices);
    if (!narrowed)
      return failOp();
    indices = narrowed;
  }
  setOutput(1, indices);
  return success();
}

LogicalResult GraphDefImporter::importPad() {
  GET_INPUT(x, 0);
  FailureOr<SmallVector<int64_t>> pads = constantInts(1);
  if (failed(pads))
    return failure();
  std::string mode = "constant";
  double value = 0;
  if (node->op() == "MirrorPad") {
    const tf::AttrValue *m = attr("mode");
    if (!m || m->s() != "REFLECT")
      return failNode("only MirrorPad mode REFLECT is supported");
    mode = "reflect";
  } else if (node->op() == "PadV2") {
    SmallVector<std::string> ins = dataInputs();
    if (ins.size() < 3)
      return failNode("missing input #2 (constant_values)");
    auto c = nodesByName.find(splitInput(ins[2]).first);
    if (c->second->op() != "Const")
      return failNode("constant_values must be a constant");
    RankedTensorType type;
    std::vector<char> bytes;
    const tf::NodeDef *self = node;
    node = c->second;
    LogicalResult ok =
        decodeTensor(node->attr().at("value").tensor(), type, bytes);
    node = self;
    if (failed(ok))
      return failure();
    if (type.getNumElements() != 1 || !type.getElementType().isF32())
      return failNode("constant_values must be one f32");
    float f;
    memcpy(&f, bytes.data(), 4);
    value = f;
  }
  // TensorFlow's [rank, 2] paddings are gopt's (before, after) pairs.
  if (llvm::any_of(*pads, [](int64_t p) { return p < 0; }))
    return failNode("negative paddings are not supported");
  return setResult(createInferred<PadOp>(
      b, loc, x, i64s(*pads), b.getStringAttr(mode), b.getF32FloatAttr(value)));
}

LogicalResult GraphDefImporter::importSquare() {
  GET_INPUT(x, 0);
  return setResult(createInferred<MulOp>(b, loc, x, x));
}

LogicalResult GraphDefImporter::importCheckNumerics() {
  GET_INPUT(x, 0);
  const tf::AttrValue *m = attr("message");
  return setResult(createInferred<CheckNumericsOp>(
      b, loc, x, b.getStringAttr(m ? m->s() : "")));
}

LogicalResult GraphDefImporter::importLeakyRelu() {
  GET_INPUT(x, 0);
  const tf::AttrValue *a = attr("alpha");
  return setResult(createInferred<LeakyReluOp>(
      b, loc, x, b.getF32FloatAttr(a ? a->f() : 0.2f)));
}

LogicalResult GraphDefImporter::importBiasAdd() {
  GET_INPUT(x, 0);
  GET_INPUT(bias, 1);
  FailureOr<std::string> format = dataFormat();
  if (failed(format))
    return failure();
  return setResult(
      createInferred<BiasAddOp>(b, loc, x, bias, b.getStringAttr(*format)));
}

/// MatMul, and the BatchMatMul versions (adj_x/adj_y for transpose_a/b).
LogicalResult GraphDefImporter::importMatMul(bool batch) {
  GET_INPUT(lhs, 0);
  GET_INPUT(rhs, 1);
  const tf::AttrValue *ta = attr(batch ? "adj_x" : "transpose_a");
  const tf::AttrValue *tb = attr(batch ? "adj_y" : "transpose_b");
  return setResult(createInferred<MatMulOp>(b, loc, lhs, rhs,
                                            b.getBoolAttr(ta && ta->b()),
                                            b.getBoolAttr(tb && tb->b())));
}

LogicalResult GraphDefImporter::importTranspose() {
  GET_INPUT(x, 0);
  FailureOr<SmallVector<int64_t>> perm = constantInts(1);
  if (failed(perm))
    return failure();
  return setResult(createInferred<TransposeOp>(b, loc, x, i64s(*perm)));
}

LogicalResult GraphDefImporter::importSoftmax(bool log) {
  GET_INPUT(x, 0);
  if (!log)
    return setResult(
        createInferred<SoftmaxOp>(b, loc, x, b.getI64IntegerAttr(-1)));
  return setResult(
      createInferred<LogSoftmaxOp>(b, loc, x, b.getI64IntegerAttr(-1)));
}

LogicalResult GraphDefImporter::importShape() {
  GET_INPUT(x, 0);
  GOPT_INFER(shape, ShapeOp, x);
  const tf::AttrValue *outType = attr("out_type");
  if (outType && outType->type() == tf::DT_INT64)
    return setResult(shape);
  // TensorFlow's default out_type is int32.
  return setResult(createTyped<CastOp>(
      b, loc, shape.getType().clone(b.getIntegerType(32)), shape));
}

LogicalResult GraphDefImporter::importCast() {
  GET_INPUT(x, 0);
  const tf::AttrValue *dst = attr("DstT");
  if (!dst)
    return failNode("missing attribute 'DstT'");
  Type et = convertDataType(ctx, dst->type());
  if (!et)
    return failNode(llvm::formatv("unsupported target type {0}",
                                  dataTypeName(dst->type())));
  return setResult(createTyped<CastOp>(
      b, loc, cast<RankedTensorType>(x.getType()).clone(et), x));
}

/// Equal and NotEqual (as not(equal)). `incompatible_shape_error = false`
/// only changes shapes that do not broadcast, which gopt rejects anyway.
LogicalResult GraphDefImporter::importEqual(bool negate) {
  for (const auto &entry : node->attr()) {
    StringRef name = entry.first;
    if (name != "T" && name != "incompatible_shape_error" &&
        !name.starts_with("_"))
      return failNode(llvm::formatv("unsupported attribute '{0}'", name));
  }
  GET_INPUT(lhs, 0);
  GET_INPUT(rhs, 1);
  GOPT_INFER(equal, EqualOp, lhs, rhs);
  if (!negate)
    return setResult(equal);
  return setResult(createInferred<NotOp>(b, loc, equal));
}

/// Select: as SelectV2, except that a rank-1 condition with values of
/// higher rank picks whole rows (dimension 0); it is reshaped to broadcast
/// that way.
LogicalResult GraphDefImporter::importSelect() {
  GET_INPUT(condition, 0);
  GET_INPUT(x, 1);
  GET_INPUT(y, 2);
  ArrayRef<int64_t> conditionShape = shapeOf(condition);
  size_t rank = shapeOf(x).size();
  if (conditionShape.size() == 1 && rank > 1) {
    SmallVector<int64_t> rows(rank, 1);
    rows[0] = ShapedType::isDynamic(conditionShape[0]) ? -1 : conditionShape[0];
    GOPT_INFER(reshaped, ReshapeOp, condition, i64s(rows));
    condition = reshaped;
  } else if (!conditionShape.empty() && conditionShape != shapeOf(x)) {
    return failNode(llvm::formatv(
        "the condition {0} must be a scalar, have the shape of x {1}, or be "
        "a vector of its first dimension",
        formatShape(conditionShape), formatShape(shapeOf(x))));
  }
  return setResult(createInferred<WhereOp>(b, loc, condition, x, y));
}

/// Where with one operand: the coordinates of its nonzero (true) elements
/// as rows [n, rank], gopt.non_zero's columns.
LogicalResult GraphDefImporter::importWhere() {
  if (node->input_size() != 1)
    return failNode(llvm::formatv(
        "expects one input (the three-input form is Select), got {0}",
        node->input_size()));
  GET_INPUT(x, 0);
  GOPT_INFER(nonZero, NonZeroOp, x);
  return setResult(createInferred<TransposeOp>(b, loc, nonZero, i64s({1, 0})));
}

/// Unique of a vector: the distinct elements in order of first occurrence
/// and each element's position among them (out_idx i32 or i64).
LogicalResult GraphDefImporter::importUnique() {
  GET_INPUT(x, 0);
  if (shapeOf(x).size() != 1)
    return failNode(llvm::formatv("expects a vector, got shape {0}",
                                  formatShape(shapeOf(x))));
  int indexType = tf::DT_INT32;
  if (const tf::AttrValue *type = attr("out_idx"))
    indexType = type->type();
  if (indexType != tf::DT_INT64 && indexType != tf::DT_INT32)
    return failNode(
        llvm::formatv("unsupported out_idx {0}", dataTypeName(indexType)));
  GOPT_INFER(op, UniqueOp, x, IntegerAttr(), b.getBoolAttr(false));
  setOutput(0, op.getY());
  Value inverse = op.getInverseIndices();
  if (indexType == tf::DT_INT32) {
    auto narrowed = createTyped<CastOp>(
        b, loc,
        cast<RankedTensorType>(inverse.getType()).clone(b.getIntegerType(32)),
        inverse);
    if (!narrowed)
      return failOp();
    inverse = narrowed;
  }
  setOutput(1, inverse);
  return success();
}

/// BroadcastTo and Tile: input 1 (the shape, the multiples) must be a
/// constant; it becomes the gopt op's array attribute.
template <typename OpTy> LogicalResult GraphDefImporter::importShapedBy() {
  GET_INPUT(x, 0);
  FailureOr<SmallVector<int64_t>> values = constantInts(1);
  if (failed(values))
    return failure();
  return setResult(createInferred<OpTy>(b, loc, x, i64s(*values)));
}

//===----------------------------------------------------------------------===//
// Slicing, stacking and splitting
//===----------------------------------------------------------------------===//

FailureOr<Value> GraphDefImporter::reshapeTo(Value x, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> shape(dims);
  if (llvm::count_if(shape, ShapedType::isDynamic) > 1)
    return failNode(llvm::formatv("the result {0} has more than one dynamic "
                                  "dimension",
                                  formatShape(dims)));
  for (int64_t &d : shape)
    if (ShapedType::isDynamic(d))
      d = -1;
  GOPT_INFER(op, ReshapeOp, x, i64s(shape));
  return Value(op);
}

FailureOr<Value> GraphDefImporter::sliceAxis(Value x, int64_t axis,
                                             int64_t start, int64_t size) {
  ArrayRef<int64_t> in = shapeOf(x);
  SmallVector<int64_t> starts(in.size(), 0), steps(in.size(), 1);
  SmallVector<int64_t> ends;
  for (int64_t d : in)
    ends.push_back(
        ShapedType::isDynamic(d) ? std::numeric_limits<int64_t>::max() : d);
  starts[axis] = start;
  ends[axis] = start + size;
  GOPT_INFER(op, SliceOp, x, i64s(starts), i64s(ends), i64s(steps));
  return Value(op);
}

FailureOr<int64_t> GraphDefImporter::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return failNode(
        llvm::formatv("axis {0} is out of range for rank {1}", axis, rank));
  return axis < 0 ? axis + rank : axis;
}

/// StridedSlice with constant begin, end and strides, and all five masks
/// (TensorFlow's ValidateStridedSliceOp): positive strides are one
/// gopt.slice, each negative-stride dimension a gopt.gather of its indices,
/// and new and shrunk axes one reshape at the end.
LogicalResult GraphDefImporter::importStridedSlice() {
  GET_INPUT(x, 0);
  FailureOr<SmallVector<int64_t>> begin = constantInts(1);
  if (failed(begin))
    return failure();
  FailureOr<SmallVector<int64_t>> end = constantInts(2);
  if (failed(end))
    return failure();
  FailureOr<SmallVector<int64_t>> strides = constantInts(3);
  if (failed(strides))
    return failure();
  int64_t n = begin->size();
  if (end->size() != size_t(n) || strides->size() != size_t(n))
    return failNode(llvm::formatv("begin {0}, end {1} and strides {2} differ "
                                  "in length",
                                  formatShape(*begin), formatShape(*end),
                                  formatShape(*strides)));
  auto mask = [&](StringRef name) -> uint64_t {
    const tf::AttrValue *a = attr(name);
    return a ? uint64_t(a->i()) : 0;
  };
  uint64_t beginMask = mask("begin_mask"), endMask = mask("end_mask");
  uint64_t ellipsisMask = mask("ellipsis_mask");
  uint64_t newAxisMask = mask("new_axis_mask");
  uint64_t shrinkMask = mask("shrink_axis_mask");
  auto bit = [](uint64_t m, int64_t i) { return i < 64 && (m >> i & 1); };
  if (llvm::popcount(ellipsisMask) > 1)
    return failNode("ellipsis_mask has more than one bit set");
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  // Spec entries that consume an input dimension; the ellipsis (explicit,
  // or implicit at the end) covers the rest.
  int64_t consumed = 0;
  bool hasEllipsis = false;
  for (int64_t i = 0; i < n; ++i) {
    if (bit(ellipsisMask, i))
      hasEllipsis = true;
    else if (!bit(newAxisMask, i))
      ++consumed;
  }
  if (consumed > rank)
    return failNode(llvm::formatv("the slice spec indexes {0} dimensions of "
                                  "a rank-{1} input",
                                  consumed, rank));
  int64_t ellipsisDims = rank - consumed;
  SmallVector<int64_t> starts, ends, steps, resultShape;
  // (dimension, gather indices) for negative strides.
  SmallVector<std::pair<int64_t, SmallVector<int64_t>>> reversed;
  bool needReshape = false;
  auto fullDim = [&](int64_t d) {
    starts.push_back(0);
    ends.push_back(ShapedType::isDynamic(in[d])
                       ? std::numeric_limits<int64_t>::max()
                       : in[d]);
    steps.push_back(1);
    resultShape.push_back(in[d]);
  };
  int64_t dim = 0;
  for (int64_t i = 0; i < n + (hasEllipsis ? 0 : 1); ++i) {
    if (i == n || bit(ellipsisMask, i)) {
      for (int64_t k = 0; k < ellipsisDims; ++k)
        fullDim(dim++);
      continue;
    }
    if (bit(newAxisMask, i)) {
      resultShape.push_back(1);
      needReshape = true;
      continue;
    }
    int64_t size = in[dim], bgn = (*begin)[i], e = (*end)[i],
            step = (*strides)[i];
    if (step == 0)
      return failNode(llvm::formatv("strides[{0}] is 0", i));
    if (step == std::numeric_limits<int64_t>::min())
      return failNode(llvm::formatv("strides[{0}] is out of range", i));
    bool dynamic = ShapedType::isDynamic(size);
    if (bit(shrinkMask, i)) {
      if (dynamic && bgn < 0)
        return failNode(llvm::formatv("shrinking dimension {0} at a negative "
                                      "index needs its static size",
                                      dim));
      int64_t index = bgn < 0 ? bgn + size : bgn;
      if (index < 0 || (!dynamic && index >= size))
        return failNode(llvm::formatv("index {0} is out of range for "
                                      "dimension {1} of size {2}",
                                      bgn, dim, size));
      starts.push_back(index);
      ends.push_back(index + 1);
      steps.push_back(1);
      needReshape = true;
      ++dim;
      continue;
    }
    if (dynamic) {
      // Only what needs no size: a forward slice from a non-negative begin.
      bool fromStart = bit(beginMask, i) || bgn >= 0;
      bool toEnd = bit(endMask, i) || e >= 0;
      if (step < 0 || !fromStart || !toEnd)
        return failNode(llvm::formatv("slicing dynamic dimension {0} with "
                                      "negative indices or strides needs its "
                                      "static size",
                                      dim));
      starts.push_back(bit(beginMask, i) ? 0 : bgn);
      ends.push_back(bit(endMask, i) ? std::numeric_limits<int64_t>::max() : e);
      steps.push_back(step);
      resultShape.push_back(ShapedType::kDynamic);
      ++dim;
      continue;
    }
    auto clampIndex = [&](int64_t v, int64_t lo, int64_t hi) {
      return std::clamp(v < 0 ? v + size : v, lo, hi);
    };
    int64_t first, last; // TensorFlow's canonical begin and end
    if (step > 0) {
      first = bit(beginMask, i) ? 0 : clampIndex(bgn, 0, size);
      last = bit(endMask, i) ? size : clampIndex(e, 0, size);
    } else {
      first = bit(beginMask, i) ? size - 1 : clampIndex(bgn, -1, size - 1);
      last = bit(endMask, i) ? -1 : clampIndex(e, -1, size - 1);
    }
    // Written so that no huge stride overflows.
    int64_t count = step > 0
                        ? (last > first ? 1 + (last - first - 1) / step : 0)
                        : (first > last ? 1 + (first - last - 1) / -step : 0);
    if (step > 0) {
      starts.push_back(first);
      ends.push_back(last);
      steps.push_back(step);
    } else {
      SmallVector<int64_t> indices;
      for (int64_t k = 0; k < count; ++k)
        indices.push_back(first + k * step);
      reversed.push_back({dim, std::move(indices)});
      starts.push_back(0);
      ends.push_back(size);
      steps.push_back(1);
    }
    resultShape.push_back(count);
    ++dim;
  }
  Value y = x;
  bool identity = true;
  for (int64_t d = 0; d < rank; ++d)
    identity &= starts[d] == 0 && steps[d] == 1 &&
                (ShapedType::isDynamic(in[d])
                     ? ends[d] == std::numeric_limits<int64_t>::max()
                     : ends[d] >= in[d]);
  if (!identity) {
    GOPT_INFER(slice, SliceOp, y, i64s(starts), i64s(ends), i64s(steps));
    y = slice;
  }
  for (auto &[d, indices] : reversed) {
    Value index = createI64Constant(b, loc, {int64_t(indices.size())}, indices);
    GOPT_INFER(gather, GatherOp, y, index, b.getI64IntegerAttr(d));
    y = gather;
  }
  if (needReshape) {
    FailureOr<Value> reshaped = reshapeTo(y, resultShape);
    if (failed(reshaped))
      return failure();
    y = *reshaped;
  }
  if (y == x) {
    GOPT_INFER(copy, IdentityOp, x);
    y = copy;
  }
  setOutput(0, y);
  return success();
}

/// Slice: constant begin and size (-1: to the end).
LogicalResult GraphDefImporter::importSlice() {
  GET_INPUT(x, 0);
  FailureOr<SmallVector<int64_t>> begin = constantInts(1);
  if (failed(begin))
    return failure();
  FailureOr<SmallVector<int64_t>> size = constantInts(2);
  if (failed(size))
    return failure();
  ArrayRef<int64_t> in = shapeOf(x);
  if (begin->size() != in.size() || size->size() != in.size())
    return failNode(llvm::formatv("begin {0} and size {1} must have an entry "
                                  "per dimension of {2}",
                                  formatShape(*begin), formatShape(*size),
                                  formatShape(in)));
  SmallVector<int64_t> ends, steps(in.size(), 1);
  for (size_t d = 0; d < in.size(); ++d) {
    if ((*begin)[d] < 0 || (*size)[d] < -1)
      return failNode(llvm::formatv("begin {0} and size {1} must be "
                                    "non-negative (size -1: to the end)",
                                    formatShape(*begin), formatShape(*size)));
    ends.push_back((*size)[d] == -1 ? std::numeric_limits<int64_t>::max()
                                    : (*begin)[d] + (*size)[d]);
  }
  return setResult(createInferred<SliceOp>(b, loc, x, i64s(*begin), i64s(ends),
                                           i64s(steps)));
}

LogicalResult GraphDefImporter::importAddN() {
  int n = dataInputs().size();
  if (n == 0)
    return failNode("needs at least one input");
  GET_INPUT(sum, 0);
  if (n == 1)
    return setResult(createInferred<IdentityOp>(b, loc, sum));
  for (int i = 1; i < n; ++i) {
    GET_INPUT(term, i);
    GOPT_INFER(add, AddOp, sum, term);
    sum = add;
  }
  setOutput(0, sum);
  return success();
}

/// Pack: each input gains the axis (a reshape), then one concat.
LogicalResult GraphDefImporter::importPack() {
  int n = dataInputs().size();
  if (n == 0)
    return failNode("needs at least one input");
  const tf::AttrValue *axisAttr = attr("axis");
  SmallVector<Value> parts;
  for (int i = 0; i < n; ++i) {
    GET_INPUT(v, i);
    ArrayRef<int64_t> in = shapeOf(v);
    FailureOr<int64_t> axis =
        normalizeAxis(axisAttr ? axisAttr->i() : 0, in.size() + 1);
    if (failed(axis))
      return failure();
    SmallVector<int64_t> dims(in);
    dims.insert(dims.begin() + *axis, 1);
    FailureOr<Value> part = reshapeTo(v, dims);
    if (failed(part))
      return failure();
    parts.push_back(*part);
  }
  if (n == 1) {
    setOutput(0, parts[0]);
    return success();
  }
  int64_t rank = shapeOf(parts[0]).size();
  FailureOr<int64_t> axis = normalizeAxis(axisAttr ? axisAttr->i() : 0, rank);
  if (failed(axis))
    return failure();
  return setResult(createInferred<ConcatOp>(b, loc, ValueRange(parts),
                                            b.getI64IntegerAttr(*axis)));
}

/// Unpack: output k is slice k of the axis, the axis dropped.
LogicalResult GraphDefImporter::importUnpack() {
  GET_INPUT(x, 0);
  ArrayRef<int64_t> in = shapeOf(x);
  const tf::AttrValue *axisAttr = attr("axis");
  FailureOr<int64_t> axis =
      normalizeAxis(axisAttr ? axisAttr->i() : 0, in.size());
  if (failed(axis))
    return failure();
  int64_t count = in[*axis];
  const tf::AttrValue *num = attr("num");
  if (ShapedType::isDynamic(count) || (num && num->i() != count) ||
      count > kMaxOutputs)
    return failNode(llvm::formatv("num = {0} must be the static size of "
                                  "dimension {1} of {2}",
                                  num ? num->i() : -1, *axis, formatShape(in)));
  SmallVector<int64_t> dims(in);
  dims.erase(dims.begin() + *axis);
  for (int64_t k = 0; k < count; ++k) {
    FailureOr<Value> part = sliceAxis(x, *axis, k, 1);
    if (failed(part))
      return failure();
    FailureOr<Value> dropped = reshapeTo(*part, dims);
    if (failed(dropped))
      return failure();
    setOutput(k, *dropped);
  }
  return success();
}

/// Split (axis, value; num_split equal parts) and SplitV (value,
/// size_splits with at most one -1, axis): one slice per output.
LogicalResult GraphDefImporter::importSplit(bool v) {
  GET_INPUT(x, v ? 0 : 1);
  FailureOr<int64_t> axisValue = constantAxis(v ? 2 : 0);
  if (failed(axisValue))
    return failure();
  ArrayRef<int64_t> in = shapeOf(x);
  FailureOr<int64_t> axis = normalizeAxis(*axisValue, in.size());
  if (failed(axis))
    return failure();
  int64_t size = in[*axis];
  SmallVector<int64_t> sizes;
  if (v) {
    FailureOr<SmallVector<int64_t>> given = constantInts(1);
    if (failed(given))
      return failure();
    sizes = *given;
    int64_t known = 0, unknown = 0;
    for (int64_t s : sizes) {
      if (s == -1)
        ++unknown;
      else if (s < 0 || (!ShapedType::isDynamic(size) && s > size))
        return failNode(llvm::formatv("size_splits {0} do not split dimension "
                                      "{1} of {2}",
                                      formatShape(sizes), *axis,
                                      formatShape(in)));
      else
        known += s;
    }
    if (unknown > 1 || (unknown && ShapedType::isDynamic(size)) ||
        (!ShapedType::isDynamic(size) &&
         (unknown ? known > size : known != size)))
      return failNode(llvm::formatv("size_splits {0} do not split dimension "
                                    "{1} of {2}",
                                    formatShape(sizes), *axis,
                                    formatShape(in)));
    for (int64_t &s : sizes)
      if (s == -1)
        s = size - known;
  } else {
    const tf::AttrValue *num = attr("num_split");
    if (!num || num->i() <= 0)
      return failNode("needs a positive 'num_split'");
    if (ShapedType::isDynamic(size) || size % num->i() != 0 ||
        num->i() > kMaxOutputs)
      return failNode(llvm::formatv("num_split = {0} does not divide "
                                    "dimension {1} of {2}",
                                    num->i(), *axis, formatShape(in)));
    sizes.assign(num->i(), size / num->i());
  }
  int64_t start = 0;
  for (auto [k, s] : llvm::enumerate(sizes)) {
    FailureOr<Value> part = sliceAxis(x, *axis, start, s);
    if (failed(part))
      return failure();
    setOutput(k, *part);
    start += s;
  }
  return success();
}

/// Fill: the scalar value broadcast to the constant (or constant-foldable)
/// dims.
LogicalResult GraphDefImporter::importFill() {
  FailureOr<SmallVector<int64_t>> dims = constantInts(0);
  if (failed(dims))
    return failure();
  GET_INPUT(value, 1);
  if (!shapeOf(value).empty())
    return failNode(llvm::formatv("the value must be a scalar, got {0}",
                                  formatShape(shapeOf(value))));
  if (llvm::any_of(*dims, [](int64_t d) { return d < 0; }))
    return failNode(
        llvm::formatv("dims {0} must be non-negative", formatShape(*dims)));
  return setResult(createInferred<ExpandOp>(b, loc, value, i64s(*dims)));
}

/// ZerosLike / OnesLike of a statically shaped tensor: a constant.
LogicalResult GraphDefImporter::importConstantLike(double value) {
  GET_INPUT(x, 0);
  auto type = cast<RankedTensorType>(x.getType());
  if (!type.hasStaticShape())
    return failNode(llvm::formatv("needs a static shape, got {0}",
                                  formatShape(type.getShape())));
  Type et = type.getElementType();
  Attribute element;
  if (isa<FloatType>(et))
    element = b.getFloatAttr(et, value);
  else if (isa<IntegerType>(et))
    element = b.getIntegerAttr(et, int64_t(value));
  else
    return failNode("needs a float or integer tensor");
  return setResult(
      b.create<ConstantOp>(loc, DenseElementsAttr::get(type, element)));
}

/// Range with constant (or constant-foldable) start, limit and delta: a
/// constant of start's element type.
LogicalResult GraphDefImporter::importRange() {
  double bounds[3];
  Type et;
  for (int i = 0; i < 3; ++i) {
    GET_INPUT(v, i);
    DenseElementsAttr folded = foldValue(v);
    if (!folded || folded.getNumElements() != 1)
      return failNode(llvm::formatv("input #{0} must be a constant scalar", i));
    if (i == 0)
      et = folded.getElementType();
    Attribute first = *folded.value_begin<Attribute>();
    if (auto f = dyn_cast<FloatAttr>(first))
      bounds[i] = f.getValueAsDouble();
    else
      bounds[i] = double(cast<IntegerAttr>(first).getInt());
  }
  auto [start, limit, delta] = bounds;
  if (delta == 0 || (delta > 0 ? start > limit : start < limit)) {
    auto text = [](double v) {
      return llvm::formatv("{0}", llvm::format("%g", v)).str();
    };
    return failNode(llvm::formatv("start {0}, limit {1} and delta {2} give "
                                  "no range",
                                  text(start), text(limit), text(delta)));
  }
  double length = std::ceil(std::abs((limit - start) / delta));
  if (!std::isfinite(length) || length > double(1 << 24))
    return failNode("the range is not finite or has more than 2^24 elements");
  int64_t count = int64_t(length);
  auto type = RankedTensorType::get({count}, et);
  SmallVector<Attribute> elements;
  for (int64_t k = 0; k < count; ++k) {
    double v = start + k * delta;
    if (isa<FloatType>(et))
      elements.push_back(b.getFloatAttr(et, v));
    else
      elements.push_back(b.getIntegerAttr(et, int64_t(v)));
  }
  return setResult(
      b.create<ConstantOp>(loc, DenseElementsAttr::get(type, elements)));
}

/// SparseToDense whose inputs are all constants (as converted graphs hold
/// it for masks and one-hot tables): the dense constant.
LogicalResult GraphDefImporter::importSparseToDense() {
  DenseElementsAttr in[4];
  for (int i = 0; i < 4; ++i) {
    GET_INPUT(v, i);
    in[i] = foldValue(v);
    if (!in[i])
      return failNode(llvm::formatv("input #{0} must be a constant, or "
                                    "computed from constants and static "
                                    "shapes",
                                    i));
  }
  std::optional<SmallVector<int64_t>> indices = integerValues(in[0]);
  std::optional<SmallVector<int64_t>> shape = integerValues(in[1]);
  if (!indices || !shape)
    return failNode("sparse_indices and output_shape must hold integers");
  if (in[3].getNumElements() != 1)
    return failNode("default_value must be a scalar");
  int64_t rank = shape->size();
  auto indicesType = cast<RankedTensorType>(in[0].getType());
  // sparse_indices: a scalar, a vector (rank-1 output) or [N, rank].
  int64_t count = indicesType.getRank() == 2 ? indicesType.getDimSize(0)
                  : rank == 1                ? int64_t(indices->size())
                                             : 1;
  if (int64_t(indices->size()) != count * rank)
    return failNode(llvm::formatv("sparse_indices {0} do not index an "
                                  "output of rank {1}",
                                  formatShape(indicesType.getShape()), rank));
  if (in[2].getNumElements() != 1 && in[2].getNumElements() != count)
    return failNode(llvm::formatv("sparse_values must be a scalar or hold {0} "
                                  "values",
                                  count));
  int64_t total = 1;
  for (int64_t d : *shape) {
    if (d < 0 || (d > 0 && total > (int64_t(1) << 26) / d))
      return failNode(llvm::formatv("output_shape {0} is negative or too large",
                                    formatShape(*shape)));
    total *= d;
  }
  auto values = llvm::to_vector(in[2].getValues<Attribute>());
  Attribute fill = *in[3].value_begin<Attribute>();
  SmallVector<Attribute> dense(total, fill);
  const tf::AttrValue *validate = attr("validate_indices");
  bool checkOrder = !validate || validate->b();
  int64_t previous = -1;
  for (int64_t k = 0; k < count; ++k) {
    int64_t linear = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t i = (*indices)[k * rank + d];
      if (i < 0 || i >= (*shape)[d])
        return failNode(llvm::formatv("sparse index {0} is out of range for "
                                      "output_shape {1}",
                                      i, formatShape(*shape)));
      linear = linear * (*shape)[d] + i;
    }
    if (checkOrder && linear <= previous)
      return failNode("sparse_indices are not sorted and unique "
                      "(validate_indices)");
    previous = linear;
    dense[linear] = values[values.size() == 1 ? 0 : k];
  }
  auto type = RankedTensorType::get(*shape, in[2].getElementType());
  return setResult(
      b.create<ConstantOp>(loc, DenseElementsAttr::get(type, dense)));
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

LogicalResult GraphDefImporter::importNode() {
  StringRef op = node->op();
  // Ops whose ODS names their TensorFlow op type need no code here.
  if (const FrameworkOp *generic = findFrameworkOp(kTfOps, op))
    return importGeneric(*generic);
  // The others: one entry per op type, sorted.
  using I = GraphDefImporter;
  static constexpr OpHandler<I> kHandlers[] = {
      {"Abs", [](I &i) { return i.unary<AbsOp>(); }},
      {"Add", [](I &i) { return i.binary<AddOp>(); }},
      {"AddN", [](I &i) { return i.importAddN(); }},
      {"AddV2", [](I &i) { return i.binary<AddOp>(); }},
      {"ArgMax", [](I &i) { return i.importArgReduce(/*max=*/true); }},
      {"ArgMin", [](I &i) { return i.importArgReduce(/*max=*/false); }},
      {"AvgPool", [](I &i) { return i.importPool(/*isMax=*/false); }},
      {"BatchMatMul", [](I &i) { return i.importMatMul(/*batch=*/true); }},
      {"BatchMatMulV2", [](I &i) { return i.importMatMul(/*batch=*/true); }},
      {"BatchMatMulV3", [](I &i) { return i.importMatMul(/*batch=*/true); }},
      {"BiasAdd", [](I &i) { return i.importBiasAdd(); }},
      {"BiasAddV1", [](I &i) { return i.importBiasAdd(); }},
      {"BroadcastTo", [](I &i) { return i.importShapedBy<ExpandOp>(); }},
      {"Cast", [](I &i) { return i.importCast(); }},
      {"CheckNumerics", [](I &i) { return i.importCheckNumerics(); }},
      {"Concat", [](I &i) { return i.importConcat(/*v2=*/false); }},
      {"ConcatV2", [](I &i) { return i.importConcat(/*v2=*/true); }},
      {"Const", [](I &i) { return i.importConst(); }},
      {"Conv2D", [](I &i) { return i.importConv(/*depthwise=*/false); }},
      {"Conv2DBackpropInput", [](I &i) { return i.importConvBackpropInput(); }},
      {"Cumsum", [](I &i) { return i.importCumsum(); }},
      {"DepthwiseConv2dNative",
       [](I &i) { return i.importConv(/*depthwise=*/true); }},
      {"Div", [](I &i) { return i.binary<DivOp>(); }},
      {"Equal", [](I &i) { return i.importEqual(/*negate=*/false); }},
      {"Erf", [](I &i) { return i.unary<ErfOp>(); }},
      {"Exp", [](I &i) { return i.unary<ExpOp>(); }},
      {"ExpandDims", [](I &i) { return i.importReshapeLike("ExpandDims"); }},
      {"Fill", [](I &i) { return i.importFill(); }},
      {"FusedBatchNorm", [](I &i) { return i.importFusedBatchNorm(); }},
      {"FusedBatchNormV2", [](I &i) { return i.importFusedBatchNorm(); }},
      {"FusedBatchNormV3", [](I &i) { return i.importFusedBatchNorm(); }},
      {"FusedDepthwiseConv2dNative",
       [](I &i) { return i.importFused("Depthwise"); }},
      {"Gather", [](I &i) { return i.importGather(/*v2=*/false); }},
      {"GatherNd", [](I &i) { return i.importGatherNd(); }},
      {"GatherV2", [](I &i) { return i.importGather(/*v2=*/true); }},
      {"Identity", [](I &i) { return i.unary<IdentityOp>(); }},
      // TensorFlow's old name of Reciprocal.
      {"Inv",
       [](I &i) {
         return i.importGeneric(*findFrameworkOp(kTfOps, "Reciprocal"));
       }},
      {"LeakyRelu", [](I &i) { return i.importLeakyRelu(); }},
      {"Log", [](I &i) { return i.unary<LogOp>(); }},
      {"LogSoftmax", [](I &i) { return i.importSoftmax(/*log=*/true); }},
      {"MatMul", [](I &i) { return i.importMatMul(/*batch=*/false); }},
      {"Max", [](I &i) { return i.importReduce("Max"); }},
      {"MaxPool", [](I &i) { return i.importPool(/*isMax=*/true); }},
      {"Maximum", [](I &i) { return i.binary<MaxOp>(); }},
      {"Mean", [](I &i) { return i.importReduce("Mean"); }},
      {"Minimum", [](I &i) { return i.binary<MinOp>(); }},
      {"MirrorPad", [](I &i) { return i.importPad(); }},
      {"Mul", [](I &i) { return i.binary<MulOp>(); }},
      {"Neg", [](I &i) { return i.unary<NegOp>(); }},
      {"NoOp", [](I &) { return success(); }},
      {"NotEqual", [](I &i) { return i.importEqual(/*negate=*/true); }},
      {"OnesLike", [](I &i) { return i.importConstantLike(1.0); }},
      {"Pack", [](I &i) { return i.importPack(); }},
      {"Pad", [](I &i) { return i.importPad(); }},
      {"PadV2", [](I &i) { return i.importPad(); }},
      {"Placeholder", [](I &i) { return i.importPlaceholder(); }},
      {"Pow", [](I &i) { return i.binary<PowOp>(); }},
      // Keras' PReLU as converters write it: alpha broadcasts to x.
      {"Prelu", [](I &i) { return i.binary<PReluOp>(); }},
      {"Range", [](I &i) { return i.importRange(); }},
      {"RealDiv", [](I &i) { return i.binary<DivOp>(); }},
      {"Relu", [](I &i) { return i.unary<ReluOp>(); }},
      {"Relu6", [](I &i) { return i.unary<Relu6Op>(); }},
      {"Reshape", [](I &i) { return i.importReshapeLike("Reshape"); }},
      {"ResizeBilinear",
       [](I &i) { return i.importResize(/*bilinear=*/true); }},
      {"ResizeNearestNeighbor",
       [](I &i) { return i.importResize(/*bilinear=*/false); }},
      {"Rsqrt", [](I &i) { return i.unary<RsqrtOp>(); }},
      {"Select", [](I &i) { return i.importSelect(); }},
      {"Shape", [](I &i) { return i.importShape(); }},
      {"Sigmoid", [](I &i) { return i.unary<SigmoidOp>(); }},
      {"Slice", [](I &i) { return i.importSlice(); }},
      {"Snapshot", [](I &i) { return i.unary<IdentityOp>(); }},
      {"Softmax", [](I &i) { return i.importSoftmax(/*log=*/false); }},
      {"SparseToDense", [](I &i) { return i.importSparseToDense(); }},
      {"Split", [](I &i) { return i.importSplit(/*v=*/false); }},
      {"SplitV", [](I &i) { return i.importSplit(/*v=*/true); }},
      {"Sqrt", [](I &i) { return i.unary<SqrtOp>(); }},
      {"Square", [](I &i) { return i.importSquare(); }},
      {"SquaredDifference",
       [](I &i) { return i.binary<SquaredDifferenceOp>(); }},
      {"Squeeze", [](I &i) { return i.importReshapeLike("Squeeze"); }},
      {"StopGradient", [](I &i) { return i.unary<StopGradientOp>(); }},
      {"StridedSlice", [](I &i) { return i.importStridedSlice(); }},
      {"Sub", [](I &i) { return i.binary<SubOp>(); }},
      {"Sum", [](I &i) { return i.importReduce("Sum"); }},
      {"Tanh", [](I &i) { return i.unary<TanhOp>(); }},
      {"Tile", [](I &i) { return i.importShapedBy<TileOp>(); }},
      {"TopKV2", [](I &i) { return i.importTopK(); }},
      {"Transpose", [](I &i) { return i.importTranspose(); }},
      {"Unique", [](I &i) { return i.importUnique(); }},
      {"Unpack", [](I &i) { return i.importUnpack(); }},
      {"Where", [](I &i) { return i.importWhere(); }},
      {"ZerosLike", [](I &i) { return i.importConstantLike(0.0); }},
      {"_FusedConv2D", [](I &i) { return i.importFused("Conv2D"); }},
      {"_FusedDepthwiseConv2dNative",
       [](I &i) { return i.importFused("Depthwise"); }},
      {"_FusedMatMul", [](I &i) { return i.importFused("MatMul"); }},
  };
  static_assert(isSortedAndUnique(kHandlers),
                "keep the TensorFlow op table sorted, one entry per op type");
  if (const OpHandler<I> *handler = findHandler<I>(kHandlers, op))
    return handler->import(*this);
  if (op.starts_with("Variable") || op == "VarHandleOp" ||
      op == "ReadVariableOp" || op == "Assign")
    return failNode("unsupported op (variables: freeze the graph first)");
  return failNode("unsupported op");
}

OwningOpRef<ModuleOp> GraphDefImporter::build(StringRef bytes) {
  if (failed(parse(bytes)))
    return nullptr;
  SmallVector<const tf::NodeDef *> order;
  if (failed(sortNodes(order)))
    return nullptr;

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  func::FuncOp func = createMain(*module);
  body = &func.front();
  ErrorCapture errors(ctx);
  capture = &errors;

  llvm::StringSet<> consumed;
  for (const tf::NodeDef *n : order) {
    node = n;
    loc = NameLoc::get(b.getStringAttr(n->name()), fileLoc);
    if (failed(importNode()))
      return nullptr;
    for (const std::string &in : n->input())
      if (!StringRef(in).starts_with("^"))
        consumed.insert(splitInput(in).first);
  }
  // Outputs: the first result of every node nothing consumes, in file order.
  SmallVector<Value> results;
  SmallVector<std::string> resultNames;
  for (const tf::NodeDef &n : graph.node()) {
    if (consumed.contains(n.name()) || n.op() == "NoOp" ||
        n.op() == "Placeholder")
      continue;
    auto it = values.find({n.name(), 0});
    if (it == values.end())
      continue;
    results.push_back(it->second);
    resultNames.push_back(n.name());
  }
  if (results.empty()) {
    error = "the graph has no outputs";
    return nullptr;
  }
  finishMain(func, argTypes, argNames, results, resultNames);
  capture = nullptr;
  return module;
}

} // namespace

OwningOpRef<ModuleOp> gopt::importGraphDef(StringRef bytes, StringRef filename,
                                           MLIRContext *context) {
  GraphDefImporter importer(context, filename);
  return importer.run(bytes);
}
