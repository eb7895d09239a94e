//===- ExportOnnx.cpp - gopt to ONNX ModelProto ---------------------------===//
//
// Writes a gopt function as an ONNX model of the lowest opset, 14 or later,
// that its ops need (or of an opset the caller names). NCHW/OIHW ops map
// directly; NHWC activations and HWIO filters get Transposes around the ONNX
// node, so any gopt graph the ops below cover exports. The model is checked
// with ONNX's checker before it is written. gopt.if / gopt.loop regions
// become If / Loop subgraphs that read their captures by outer name, and
// the dynamic_* ops the ONNX ops that take their run-time values as inputs
// (docs/architecture.md, "Decisions and why").
//
//===----------------------------------------------------------------------===//

#include "FrameworkOps.h"
#include "OnnxLaterSchemas.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Import/Import.h"
#include "gopt/runtime/LowPrecision.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace gopt;
using namespace gopt::import;

namespace {

/// The opset an export starts from: what every ONNX consumer of the last
/// years reads, and the opset of PyTorch's default export.
constexpr int64_t kDefaultOpset = 14;
/// The newest opset whose changes to the ops written below this exporter
/// knows (RoiAlign-16's default mode, the reductions' axes input at 18,
/// GridSample-20's mode names, DFT-20's axis input).
constexpr int64_t kNewestOpset = 21;

/// The ONNX IR version that introduced `opset`'s standard domain.
int64_t irVersionFor(int64_t opset) {
  return opset <= 14 ? 7 : opset <= 18 ? 8 : opset <= 20 ? 9 : 10;
}

/// Schemas for checking an export: gopt's own definitions of the versions
/// after libonnx's newest opset (the ones its importer reads), libonnx's
/// otherwise.
class ExportSchemaRegistry : public onnx::ISchemaRegistry {
public:
  const onnx::OpSchema *GetSchema(const std::string &key,
                                  const int maxInclusiveVersion,
                                  const std::string &domain) const override {
    return onnxSchemaFor(key, maxInclusiveVersion, domain);
  }
};

std::optional<int32_t> onnxElementType(Type t) {
  if (t.isF32())
    return onnx::TensorProto::FLOAT;
  if (t.isF16())
    return onnx::TensorProto::FLOAT16;
  if (t.isBF16())
    return onnx::TensorProto::BFLOAT16;
  if (t.isF64())
    return onnx::TensorProto::DOUBLE;
  if (t.isInteger(1))
    return onnx::TensorProto::BOOL;
  if (t.isSignlessInteger(8))
    return onnx::TensorProto::INT8;
  if (t.isSignlessInteger(16))
    return onnx::TensorProto::INT16;
  if (t.isSignlessInteger(32))
    return onnx::TensorProto::INT32;
  if (t.isSignlessInteger(64))
    return onnx::TensorProto::INT64;
  if (t.isUnsignedInteger(8))
    return onnx::TensorProto::UINT8;
  if (t.isUnsignedInteger(16))
    return onnx::TensorProto::UINT16;
  if (t.isUnsignedInteger(32))
    return onnx::TensorProto::UINT32;
  if (t.isUnsignedInteger(64))
    return onnx::TensorProto::UINT64;
  // Opset 19-21's types, by number (libonnx 1.12's enum lacks them).
  if (t.isFloat8E4M3FN())
    return kOnnxFloat8E4M3FN;
  if (t.isFloat8E4M3FNUZ())
    return kOnnxFloat8E4M3FNUZ;
  if (t.isFloat8E5M2())
    return kOnnxFloat8E5M2;
  if (t.isFloat8E5M2FNUZ())
    return kOnnxFloat8E5M2FNUZ;
  if (t.isUnsignedInteger(4))
    return kOnnxUInt4;
  if (t.isSignlessInteger(4))
    return kOnnxInt4;
  return std::nullopt;
}

class OnnxExporter {
public:
  OnnxExporter(func::FuncOp func, int64_t opset) : func(func), opset(opset) {
    graph = model.mutable_graph();
  }

  LogicalResult run(llvm::raw_ostream &os);
  /// The opset an op this export refused needs (0 when none asked).
  int64_t neededOpset() const { return needed; }

private:
  /// Whether this export's opset has `what`, which ONNX defines from opset
  /// `since` on; if not, says so on `op` and notes the opset it needs.
  bool hasOpset(Operation *op, int64_t since, const llvm::Twine &what) {
    if (opset >= since)
      return true;
    needed = std::max(needed, since);
    op->emitOpError("has no ONNX export at opset ")
        << opset << " (" << what << " needs opset " << since << ")";
    return false;
  }

  std::string nameOf(Value v) {
    auto it = names.find(v);
    if (it != names.end())
      return it->second;
    std::string name = llvm::formatv("v{0}", counter++).str();
    names[v] = name;
    return name;
  }
  std::string fresh() { return llvm::formatv("t{0}", counter++).str(); }

  onnx::NodeProto *add(StringRef opType, ArrayRef<std::string> inputs,
                       ArrayRef<std::string> outputs) {
    onnx::NodeProto *n = graph->add_node();
    n->set_op_type(opType.str());
    n->set_name(llvm::formatv("n{0}_{1}", nodeCounter++, opType).str());
    for (const std::string &i : inputs)
      n->add_input(i);
    for (const std::string &o : outputs)
      n->add_output(o);
    return n;
  }
  static void setInts(onnx::NodeProto *n, StringRef name,
                      ArrayRef<int64_t> values) {
    onnx::AttributeProto *a = n->add_attribute();
    a->set_name(name.str());
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values)
      a->add_ints(v);
  }
  static void setFloats(onnx::NodeProto *n, StringRef name,
                        ArrayRef<float> values) {
    onnx::AttributeProto *a = n->add_attribute();
    a->set_name(name.str());
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float v : values)
      a->add_floats(v);
  }
  static void setInt(onnx::NodeProto *n, StringRef name, int64_t v) {
    onnx::AttributeProto *a = n->add_attribute();
    a->set_name(name.str());
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void setFloat(onnx::NodeProto *n, StringRef name, float v) {
    onnx::AttributeProto *a = n->add_attribute();
    a->set_name(name.str());
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void setString(onnx::NodeProto *n, StringRef name, StringRef v) {
    onnx::AttributeProto *a = n->add_attribute();
    a->set_name(name.str());
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v.str());
  }

  /// A new initializer holding `values`.
  std::string i64Initializer(ArrayRef<int64_t> values, bool scalar = false) {
    onnx::TensorProto *t = graph->add_initializer();
    t->set_name(fresh());
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar)
      t->add_dims(values.size());
    for (int64_t v : values)
      t->add_int64_data(v);
    return t->name();
  }
  std::string scalarInitializer(Type elementType, double value);
  LogicalResult addConstant(ConstantOp op);
  /// Q/DQ: ONNX's QuantizeLinear / DequantizeLinear with an int8 zero point
  /// of 0 (gopt's quantization is symmetric) and, for one scale, a scalar
  /// scale (ONNX reads a 1-D scale as per-axis).
  LogicalResult exportQuantization(Operation *op, StringRef onnxOp, Value x,
                                   Value scales, int64_t axis, Value result);

  /// ONNX's name for a recurrent op's broadcastable operand: "" (absent)
  /// for a rank-0 zero constant, an Expand to `fullShape` for another
  /// rank-0 value, the value itself otherwise.
  FailureOr<std::string> recurrentOperand(Operation *op, Value v,
                                          StringRef what,
                                          ArrayRef<int64_t> fullShape) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() != 0)
      return nameOf(v);
    if (auto c = v.getDefiningOp<ConstantOp>())
      if (auto dense = dyn_cast<DenseElementsAttr>(c.getValue()))
        if (dense.isSplat() && dense.getSplatValue<APFloat>().isZero())
          return std::string();
    if (llvm::any_of(fullShape, ShapedType::isDynamic)) {
      op->emitError("has no ONNX export: rank-0 ")
          << what << " other than a zero constant needs a static shape";
      return failure();
    }
    std::string out = fresh();
    add("Expand", {nameOf(v), i64Initializer(fullShape)}, {out});
    return out;
  }

  /// LSTM / GRU / RNN (layout 0): operands in ONNX's order, sequence_lens
  /// as i32.
  template <typename OpTy> LogicalResult exportRecurrent(OpTy rnn) {
    Operation *op = rnn.getOperation();
    constexpr bool lstm = std::is_same_v<OpTy, LstmOp>;
    constexpr int64_t gates = lstm ? 4 : std::is_same_v<OpTy, GruOp> ? 3 : 1;
    int64_t hidden = rnn.getHiddenSize();
    int64_t directions = rnn.getDirection() == "bidirectional" ? 2 : 1;
    int64_t batch = cast<RankedTensorType>(rnn.getX().getType()).getDimSize(1);
    SmallVector<int64_t> state = {directions, batch, hidden};
    FailureOr<std::string> b =
        recurrentOperand(op, rnn.getB(), "b", {directions, 2 * gates * hidden});
    FailureOr<std::string> h0 =
        recurrentOperand(op, rnn.getInitialH(), "initial_h", state);
    if (failed(b) || failed(h0))
      return failure();
    std::string lens;
    if (Value l = rnn.getSequenceLens()) {
      lens = nameOf(l);
      if (!cast<RankedTensorType>(l.getType())
               .getElementType()
               .isSignlessInteger(32)) {
        std::string cast32 = fresh();
        setInt(add("Cast", {lens}, {cast32}), "to", onnx::TensorProto::INT32);
        lens = cast32;
      }
    }
    std::vector<std::string> ins = {nameOf(rnn.getX()),
                                    nameOf(rnn.getW()),
                                    nameOf(rnn.getR()),
                                    *b,
                                    lens,
                                    *h0};
    std::vector<std::string> outs;
    for (Value result : op->getResults())
      outs.push_back(nameOf(result));
    StringRef opType = "RNN";
    if constexpr (lstm) {
      opType = "LSTM";
      FailureOr<std::string> c0 =
          recurrentOperand(op, rnn.getInitialC(), "initial_c", state);
      FailureOr<std::string> p =
          recurrentOperand(op, rnn.getP(), "p", {directions, 3 * hidden});
      if (failed(c0) || failed(p))
        return failure();
      ins.push_back(*c0);
      ins.push_back(*p);
    } else if constexpr (gates == 3) {
      opType = "GRU";
    }
    // Trailing absent inputs are dropped; inner ones stay "".
    while (!ins.empty() && ins.back().empty())
      ins.pop_back();
    onnx::NodeProto *n = add(opType, ins, outs);
    setInt(n, "hidden_size", hidden);
    setString(n, "direction", rnn.getDirection());
    if (rnn.getClip().convertToFloat() > 0)
      setFloat(n, "clip", rnn.getClip().convertToFloat());
    if constexpr (lstm)
      setInt(n, "input_forget", rnn.getInputForget());
    if constexpr (gates == 3)
      setInt(n, "linear_before_reset", rnn.getLinearBeforeReset());
    return success();
  }

  /// ONNX's `opType` reduction of `x` over `axes` (all when empty) into
  /// `out`: the axes are an input from opset 18 on (ReduceSum's from 13),
  /// an attribute before.
  void addReduce(StringRef opType, const std::string &x, ArrayRef<int64_t> axes,
                 bool keepDims, const std::string &out) {
    bool axesInput = opType == "ReduceSum" ? opset >= 13 : opset >= 18;
    std::vector<std::string> ins{x};
    if (!axes.empty() && axesInput)
      ins.push_back(i64Initializer(axes));
    onnx::NodeProto *n = add(opType, ins, {out});
    if (!axes.empty() && !axesInput)
      setInts(n, "axes", axes);
    setInt(n, "keepdims", keepDims);
  }

  /// A training batch_norm written out: ONNX's BatchNormalization in
  /// training mode returns neither the batch statistics nor the running
  /// variance of the unbiased estimate that gopt's returns.
  LogicalResult exportTrainingBatchNorm(BatchNormOp bn);

  /// Transposes `input` with `perm` into a fresh value.
  std::string transpose(const std::string &input, ArrayRef<int64_t> perm) {
    std::string out = fresh();
    setInts(add("Transpose", {input}, {out}), "perm", perm);
    return out;
  }
  /// Runs `emit` on NCHW input and returns its NCHW output, transposing
  /// around it when the op is NHWC.
  template <typename Fn>
  void withNCHW(StringRef format, Value in, Value out, Fn emit) {
    if (format == "NCHW") {
      emit(nameOf(in), nameOf(out));
      return;
    }
    std::string y = fresh();
    emit(transpose(nameOf(in), {0, 3, 1, 2}), y);
    setInts(add("Transpose", {y}, {nameOf(out)}), "perm", {0, 2, 3, 1});
  }
  void windowAttrs(onnx::NodeProto *n, StringRef padding,
                   ArrayRef<int64_t> pads, ArrayRef<int64_t> strides) {
    setInts(n, "strides", strides);
    if (padding == "SAME")
      setString(n, "auto_pad", "SAME_UPPER");
    else if (padding == "VALID")
      setString(n, "auto_pad", "VALID");
    else
      setInts(n, "pads", onnxPads(pads));
  }
  /// gopt's (begin, end) per spatial dim ([top, bottom, left, right]) as
  /// ONNX's pads: all begins, then all ends ([top, left, bottom, right]).
  static SmallVector<int64_t> onnxPads(ArrayRef<int64_t> pads) {
    SmallVector<int64_t> out;
    for (size_t i = 0; i < pads.size(); i += 2)
      out.push_back(pads[i]);
    for (size_t i = 1; i < pads.size(); i += 2)
      out.push_back(pads[i]);
    return out;
  }
  LogicalResult activation(StringRef act, const std::string &in,
                           const std::string &out, Type elementType);
  LogicalResult exportOp(Operation *op);
  /// Exports `block`'s ops up to its terminator into the current graph.
  LogicalResult exportBlock(Block &block);
  /// A value's type as ONNX's; subgraph values leave dynamic dimensions
  /// unnamed (a shared symbol would claim they are equal).
  LogicalResult setType(onnx::ValueInfoProto *info, Type t, bool symbolic);
  /// Exports `region` as the graph `out`: its first `numInputs` block
  /// arguments become the graph's inputs, the rest read `outerNames` (an
  /// ONNX subgraph sees the enclosing graphs' values by name), and the
  /// values its gopt.yield gives become the graph's outputs.
  LogicalResult exportRegion(Region &region, onnx::GraphProto *out,
                             unsigned numInputs,
                             ArrayRef<std::string> outerNames);
  LogicalResult exportIf(IfOp op);
  LogicalResult exportLoop(LoopOp op);
  /// `v` as a rank-0 tensor (ONNX's Range, CumSum's axis, Pad's value).
  std::string asScalar(Value v) {
    if (cast<RankedTensorType>(v.getType()).getRank() == 0)
      return nameOf(v);
    std::string out = fresh();
    add("Reshape", {nameOf(v), i64Initializer({})}, {out});
    return out;
  }
  /// `v` as a 1-D tensor (TopK's k).
  std::string asVector(Value v) {
    if (cast<RankedTensorType>(v.getType()).getRank() == 1)
      return nameOf(v);
    std::string out = fresh();
    add("Reshape", {nameOf(v), i64Initializer({-1})}, {out});
    return out;
  }

  func::FuncOp func;
  int64_t opset;
  int64_t needed = 0;
  onnx::ModelProto model;
  onnx::GraphProto *graph;
  llvm::DenseMap<Value, std::string> names;
  int counter = 0;
  int nodeCounter = 1;
};

std::string OnnxExporter::scalarInitializer(Type elementType, double value) {
  onnx::TensorProto *t = graph->add_initializer();
  t->set_name(fresh());
  t->set_data_type(*onnxElementType(elementType));
  if (elementType.isF32()) {
    t->add_float_data(static_cast<float>(value));
  } else if (elementType.isF64()) {
    t->add_double_data(value);
  } else {
    // Other types: the value's bits as raw_data (little-endian; a 4-bit
    // value in the low nibble), which also keeps libonnx's checker, which
    // knows no float8 or 4-bit type, from looking at the type.
    APInt bits;
    if (auto f = dyn_cast<FloatType>(elementType)) {
      APFloat v(value);
      bool lost;
      v.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      bits = v.bitcastToAPInt();
    } else {
      unsigned width = elementType.getIntOrFloatBitWidth();
      bits = elementType.isUnsignedInteger()
                 ? APInt(width, static_cast<uint64_t>(value))
                 : APInt(width, static_cast<int64_t>(value), /*isSigned=*/true);
    }
    std::string raw((bits.getBitWidth() + 7) / 8, '\0');
    for (size_t i = 0; i < raw.size(); ++i)
      raw[i] = static_cast<char>(bits.extractBitsAsZExtValue(
          std::min(8u, bits.getBitWidth() - unsigned(8 * i)), 8 * i));
    t->set_raw_data(raw);
  }
  return t->name();
}

LogicalResult OnnxExporter::addConstant(ConstantOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  std::optional<int32_t> et = onnxElementType(type.getElementType());
  if (!et)
    return op.emitError("cannot export element type ") << type.getElementType();
  onnx::TensorProto *t = graph->add_initializer();
  t->set_name(nameOf(op));
  t->set_data_type(*et);
  for (int64_t d : type.getShape())
    t->add_dims(d);
  size_t width =
      type.getElementTypeBitWidth() < 8 ? 1 : type.getElementTypeBitWidth() / 8;
  std::string raw;
  Attribute value = op.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (type.getElementType().isInteger(1)) {
      for (bool v : dense.getValues<bool>())
        raw.push_back(v ? 1 : 0);
    } else if (dense.isSplat()) {
      ArrayRef<char> one = dense.getRawData();
      for (int64_t i = 0; i < type.getNumElements(); ++i)
        raw.append(one.data(), width);
    } else {
      raw.assign(dense.getRawData().begin(), dense.getRawData().end());
    }
  } else if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return op.emitError("constant's resource blob is missing");
    raw.assign(blob->getData().begin(), blob->getData().end());
  } else {
    return op.emitError("cannot export this constant attribute");
  }
  if (raw.size() != type.getNumElements() * width)
    return op.emitError("constant data does not match its type");
  if (type.getElementType().isInteger(4)) {
    // ONNX packs 4-bit values two to a byte, low nibble first.
    std::string packed((raw.size() + 1) / 2, '\0');
    gopt::runtime::packNibbles(reinterpret_cast<const uint8_t *>(raw.data()),
                               raw.size(),
                               reinterpret_cast<uint8_t *>(packed.data()));
    raw = std::move(packed);
  }
  t->set_raw_data(raw);
  return success();
}

LogicalResult OnnxExporter::exportQuantization(Operation *op, StringRef onnxOp,
                                               Value x, Value scales,
                                               int64_t axis, Value result) {
  auto scalesType = cast<RankedTensorType>(scales.getType());
  std::string scale = nameOf(scales);
  bool perTensor = scalesType.getNumElements() == 1;
  if (perTensor) {
    auto constant = scales.getDefiningOp<ConstantOp>();
    auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                          : DenseElementsAttr();
    if (!dense)
      return op->emitError("exports to ONNX only with a constant scale");
    scale = scalarInitializer(scalesType.getElementType(),
                              *dense.getValues<float>().begin());
  }
  onnx::TensorProto *zero = graph->add_initializer();
  zero->set_name(fresh());
  zero->set_data_type(onnx::TensorProto::INT8);
  if (!perTensor)
    zero->add_dims(scalesType.getNumElements());
  zero->set_raw_data(std::string(scalesType.getNumElements(), '\0'));
  onnx::NodeProto *n =
      add(onnxOp, {nameOf(x), scale, zero->name()}, {nameOf(result)});
  if (!perTensor)
    setInt(n, "axis", axis);
  return success();
}

LogicalResult OnnxExporter::exportTrainingBatchNorm(BatchNormOp bn) {
  if (bn.getCrossReplica())
    return bn.emitOpError("has no ONNX export with cross_replica (ONNX has no "
                          "collectives)");
  auto type = cast<RankedTensorType>(bn.getX().getType());
  Type et = type.getElementType();
  int64_t rank = type.getRank();
  int64_t channelAxis =
      rank != 2 && bn.getDataFormat() == "NHWC" ? rank - 1 : 1;
  SmallVector<int64_t> axes, channelShape(rank, 1);
  for (int64_t d = 0; d < rank; ++d)
    if (d != channelAxis)
      axes.push_back(d);
  channelShape[channelAxis] = -1;
  auto binary = [&](StringRef opType, const std::string &lhs,
                    const std::string &rhs) {
    std::string out = fresh();
    add(opType, {lhs, rhs}, {out});
    return out;
  };
  auto reshape = [&](const std::string &v, ArrayRef<int64_t> shape,
                     std::string out) {
    add("Reshape", {v, i64Initializer(shape)}, {out});
    return out;
  };
  auto scalar = [&](double v) { return scalarInitializer(et, v); };
  // The batch statistics, kept as [1, C, 1, 1] (or [1, 1, 1, C]).
  std::string x = nameOf(bn.getX());
  std::string mean = fresh(), variance = fresh();
  addReduce("ReduceMean", x, axes, /*keepDims=*/true, mean);
  std::string centered = binary("Sub", x, mean);
  addReduce("ReduceMean", binary("Mul", centered, centered), axes,
            /*keepDims=*/true, variance);
  std::string stddev = fresh();
  add("Sqrt",
      {binary("Add", variance, scalar(bn.getEpsilon().convertToFloat()))},
      {stddev});
  std::string scale = reshape(nameOf(bn.getScale()), channelShape, fresh());
  std::string offset = reshape(nameOf(bn.getOffset()), channelShape, fresh());
  add("Add", {binary("Mul", binary("Div", centered, stddev), scale), offset},
      {nameOf(bn.getY())});
  ValueRange stats = bn.getStatistics();
  if (stats.size() != 4)
    return bn.emitOpError("has no ONNX export: a training batch_norm "
                          "expects four statistics results");
  std::string batchMean = reshape(mean, {-1}, nameOf(stats[0]));
  std::string batchVariance = reshape(variance, {-1}, nameOf(stats[1]));
  // The running variance takes the unbiased estimate, var * n / (n - 1),
  // with n the elements per channel (1 leaves var as it is).
  std::string shape = fresh(), ones = fresh(), count = fresh();
  add("Shape", {x}, {shape});
  add("Expand", {scalar(1.0), shape}, {ones});
  addReduce("ReduceSum", ones, axes, /*keepDims=*/false, count);
  std::string unbiased =
      binary("Div", binary("Mul", batchVariance, count),
             binary("Max", binary("Sub", count, scalar(1.0)), scalar(1.0)));
  double momentum = bn.getMomentum().convertToDouble();
  auto runningAverage = [&](Value running, const std::string &batch,
                            Value result) {
    add("Add",
        {binary("Mul", nameOf(running), scalar(momentum)),
         binary("Mul", batch, scalar(1.0 - momentum))},
        {nameOf(result)});
  };
  runningAverage(bn.getMean(), batchMean, stats[2]);
  runningAverage(bn.getVariance(), unbiased, stats[3]);
  return success();
}

LogicalResult OnnxExporter::activation(StringRef act, const std::string &in,
                                       const std::string &out,
                                       Type elementType) {
  if (act == "relu")
    add("Relu", {in}, {out});
  else if (act == "sigmoid")
    add("Sigmoid", {in}, {out});
  else if (act == "relu6")
    add("Clip",
        {in, scalarInitializer(elementType, 0),
         scalarInitializer(elementType, 6)},
        {out});
  else
    add("Identity", {in}, {out});
  return success();
}

LogicalResult OnnxExporter::exportOp(Operation *op) {
  auto unaryName = [&](StringRef onnxOp) {
    add(onnxOp, {nameOf(op->getOperand(0))}, {nameOf(op->getResult(0))});
    return success();
  };
  auto binaryName = [&](StringRef onnxOp) {
    add(onnxOp, {nameOf(op->getOperand(0)), nameOf(op->getOperand(1))},
        {nameOf(op->getResult(0))});
    return success();
  };
  auto elementType = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType();
  };
  // ONNX's Mod requires fmod = 1 for floats; gopt's fmod = 0 (TF's
  // FloorMod) of floats is lhs - rhs * floor(lhs / rhs).
  if (auto mod = dyn_cast<ModOp>(op);
      mod && mod.getFmod() == 0 && isa<FloatType>(elementType(mod.getLhs()))) {
    std::string lhs = nameOf(mod.getLhs()), rhs = nameOf(mod.getRhs());
    std::string quotient = fresh(), floored = fresh(), product = fresh();
    add("Div", {lhs, rhs}, {quotient});
    add("Floor", {quotient}, {floored});
    add("Mul", {rhs, floored}, {product});
    add("Sub", {lhs, product}, {nameOf(mod.getZ())});
    return success();
  }
  // Ops whose ODS names their ONNX op type: operands and attributes as is.
  if (const FrameworkOp *generic = findFrameworkOp(
          kOnnxOps, op->getName().getStringRef(), /*byOpName=*/true)) {
    if (!hasOpset(op, generic->onnxSinceOpset, generic->opType))
      return failure();
    SmallVector<std::string> inputs;
    for (Value operand : op->getOperands())
      inputs.push_back(nameOf(operand));
    onnx::NodeProto *n =
        add(generic->opType, inputs, {nameOf(op->getResult(0))});
    for (const FrameworkAttr &a : generic->attributes()) {
      Attribute value = op->getAttr(a.name);
      if (!value) // ODS's default, which is ONNX's too
        continue;
      if (auto f = dyn_cast<FloatAttr>(value))
        setFloat(n, a.name, f.getValueAsDouble());
      else if (auto i = dyn_cast<IntegerAttr>(value))
        setInt(n, a.name, i.getInt());
      else if (auto s = dyn_cast<StringAttr>(value))
        setString(n, a.name, s.getValue());
      else if (auto ints = dyn_cast<DenseI64ArrayAttr>(value))
        setInts(n, a.name, ints.asArrayRef());
      else if (auto floats = dyn_cast<DenseF32ArrayAttr>(value))
        setFloats(n, a.name, floats.asArrayRef());
      else
        return op->emitError("attribute '") << a.name << "' has no ONNX form";
    }
    return success();
  }
  // ONNX's scatters take a reduction since opset 16 (max and min since 18);
  // before, they replace.
  auto scatterNode = [&](Operation *scatter, StringRef onnxOp,
                         StringRef reduction) -> onnx::NodeProto * {
    int64_t since = reduction == "none"                        ? 1
                    : reduction == "add" || reduction == "mul" ? 16
                                                               : 18;
    if (!hasOpset(scatter, since,
                  onnxOp + " with reduction \"" + reduction + "\""))
      return nullptr;
    std::vector<std::string> inputs;
    for (Value operand : scatter->getOperands())
      inputs.push_back(nameOf(operand));
    onnx::NodeProto *n = add(onnxOp, inputs, {nameOf(scatter->getResult(0))});
    if (reduction != "none")
      setString(n, "reduction", reduction);
    return n;
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ConstantOp c) {
        // Unused constants, and a single scale read only by Q/DQ ops
        // (exportQuantization writes it as a scalar there), would be
        // initializers no node reads.
        bool onlyScalarScale =
            cast<RankedTensorType>(c.getType()).getNumElements() == 1 &&
            llvm::all_of(c->getUses(), [](OpOperand &use) {
              return isa<QuantizeOp, DequantizeOp>(use.getOwner()) &&
                     use.getOperandNumber() == 1;
            });
        return c->use_empty() || onlyScalarScale ? success() : addConstant(c);
      })
      .Case([&](Conv2DOp c) {
        // The filter in OIHW, the layout ONNX's Conv takes.
        std::string w = nameOf(c.getFilter());
        if (c.getFilterFormat() == "HWIO")
          w = transpose(w, {3, 2, 0, 1});
        bool fusedAct = c.getActivation() != "none";
        std::string finalOut = nameOf(c.getOutput());
        Type et = elementType(c.getOutput());
        auto emit = [&](const std::string &x, const std::string &y) {
          std::vector<std::string> ins{x, w};
          if (c.getBias())
            ins.push_back(nameOf(c.getBias()));
          std::string convOut = fusedAct ? fresh() : y;
          onnx::NodeProto *n = add("Conv", ins, {convOut});
          windowAttrs(n, c.getPadding(), c.getPadsOrDefault(),
                      c.getStridesOrDefault());
          setInts(n, "dilations", c.getDilationsOrDefault());
          setInt(n, "group", c.getGroups());
          if (fusedAct)
            (void)activation(c.getActivation(), convOut, y, et);
        };
        withNCHW(c.getDataFormat(), c.getInput(), c.getOutput(), emit);
        (void)finalOut;
        return success();
      })
      .Case([&](LayerNormOp ln) -> LogicalResult {
        // LayerNormalization is opset 17; at this exporter's opset it is
        // written as PyTorch writes it for older opsets: the mean and
        // biased variance over the trailing axes, then scale and shift.
        Type et = elementType(ln.getX());
        int64_t rank = cast<RankedTensorType>(ln.getX().getType()).getRank();
        int64_t axis = static_cast<int64_t>(ln.getAxis()); // I64Attr: uint64_t
        if (axis < 0)
          axis += rank;
        SmallVector<int64_t> axes;
        for (int64_t d = axis; d < rank; ++d)
          axes.push_back(d);
        auto mean = [&](const std::string &in) {
          std::string out = fresh();
          addReduce("ReduceMean", in, axes, /*keepDims=*/true, out);
          return out;
        };
        std::string x = nameOf(ln.getX());
        std::string centered = fresh(), squared = fresh(), shifted = fresh(),
                    stddev = fresh(), normalized = fresh(), scaled = fresh();
        add("Sub", {x, mean(x)}, {centered});
        add("Mul", {centered, centered}, {squared});
        add("Add",
            {mean(squared),
             scalarInitializer(et, ln.getEpsilon().convertToFloat())},
            {shifted});
        add("Sqrt", {shifted}, {stddev});
        add("Div", {centered, stddev}, {normalized});
        add("Mul", {normalized, nameOf(ln.getScale())}, {scaled});
        add("Add", {scaled, nameOf(ln.getBias())}, {nameOf(ln.getY())});
        return success();
      })
      .Case([&](InstanceNormOp in) -> LogicalResult {
        int64_t rank = cast<RankedTensorType>(in.getX().getType()).getRank();
        auto emit = [&](const std::string &x, const std::string &y) {
          onnx::NodeProto *n =
              add("InstanceNormalization",
                  {x, nameOf(in.getScale()), nameOf(in.getBias())}, {y});
          setFloat(n, "epsilon", in.getEpsilon().convertToFloat());
        };
        withNCHW(rank == 4 ? in.getDataFormat() : StringRef("NCHW"), in.getX(),
                 in.getY(), emit);
        return success();
      })
      .Case([&](LrnOp lrn) -> LogicalResult {
        int64_t rank = cast<RankedTensorType>(lrn.getX().getType()).getRank();
        auto emit = [&](const std::string &x, const std::string &y) {
          onnx::NodeProto *n = add("LRN", {x}, {y});
          setInt(n, "size", lrn.getSize());
          setFloat(n, "alpha", lrn.getAlpha().convertToFloat());
          setFloat(n, "beta", lrn.getBeta().convertToFloat());
          setFloat(n, "bias", lrn.getBias().convertToFloat());
        };
        withNCHW(rank == 4 ? lrn.getDataFormat() : StringRef("NCHW"),
                 lrn.getX(), lrn.getY(), emit);
        return success();
      })
      .Case([&](Conv2DTransposeOp c) {
        // The filter in ONNX's [Cin, Cout/groups, KH, KW].
        std::string w = nameOf(c.getFilter());
        if (c.getFilterFormat() == "HWIO")
          w = transpose(w, {3, 2, 0, 1});
        auto emit = [&](const std::string &x, const std::string &y) {
          std::vector<std::string> ins{x, w};
          if (c.getBias())
            ins.push_back(nameOf(c.getBias()));
          onnx::NodeProto *n = add("ConvTranspose", ins, {y});
          setInts(n, "pads", onnxPads(c.getPads()));
          setInts(n, "strides", c.getStrides());
          setInts(n, "dilations", c.getDilations());
          setInts(n, "output_padding", c.getOutputPadding());
          setInt(n, "group", c.getGroups());
        };
        withNCHW(c.getDataFormat(), c.getInput(), c.getOutput(), emit);
        return success();
      })
      .Case([&](ResizeOp r) -> LogicalResult {
        // Opset 13's Resize: X, roi, scales, sizes over all four dims.
        auto floats = [&](ArrayRef<float> values) {
          onnx::TensorProto *t = graph->add_initializer();
          t->set_name(fresh());
          t->set_data_type(onnx::TensorProto::FLOAT);
          t->add_dims(values.size());
          for (float v : values)
            t->add_float_data(v);
          return t->name();
        };
        ArrayRef<int64_t> in =
            cast<RankedTensorType>(r.getInput().getType()).getShape();
        bool nchw = r.getDataFormat() == "NCHW";
        std::string roi, scales;
        if (auto attr = r.getRoiAttr()) {
          ArrayRef<float> a = attr.asArrayRef();
          roi = floats({0, 0, a[0], a[1], 1, 1, a[2], a[3]});
        }
        if (auto attr = r.getScalesAttr()) {
          ArrayRef<float> a = attr.asArrayRef();
          scales = floats({1, 1, a[0], a[1]});
        }
        auto emit = [&](const std::string &x, const std::string &y) {
          std::vector<std::string> ins{x, roi, scales};
          if (!r.getScalesAttr()) {
            // Resize's sizes cover N and C too: the input's own, read from
            // its shape when they are dynamic.
            ArrayRef<int64_t> hw = *r.getSizes();
            int64_t n = in[0], c = in[nchw ? 1 : 3];
            if (!ShapedType::isDynamic(n) && !ShapedType::isDynamic(c)) {
              ins.push_back(i64Initializer({n, c, hw[0], hw[1]}));
            } else {
              std::string shape = fresh(), nc = fresh(), all = fresh();
              add("Shape", {x}, {shape});
              add("Slice", {shape, i64Initializer({0}), i64Initializer({2})},
                  {nc});
              onnx::NodeProto *cat =
                  add("Concat", {nc, i64Initializer({hw[0], hw[1]})}, {all});
              setInt(cat, "axis", 0);
              ins.push_back(all);
            }
          }
          onnx::NodeProto *n = add("Resize", ins, {y});
          setString(n, "mode", r.getMode());
          setString(n, "coordinate_transformation_mode",
                    r.getCoordinateTransformationMode());
          setString(n, "nearest_mode", r.getNearestMode());
          setFloat(n, "cubic_coeff_a", r.getCubicCoeffA().convertToFloat());
          setInt(n, "exclude_outside", r.getExcludeOutside());
          setFloat(n, "extrapolation_value",
                   r.getExtrapolationValue().convertToFloat());
          if (r.getAntialias())
            setInt(n, "antialias", 1);
        };
        // Resize-13 dropped tf_half_pixel_for_nn.
        if (r.getCoordinateTransformationMode() == "tf_half_pixel_for_nn")
          return r.emitError("coordinate_transformation_mode "
                             "tf_half_pixel_for_nn has no ONNX export (Resize "
                             "dropped it at opset 13)");
        if (r.getAntialias() && !hasOpset(r, 18, "Resize with antialias"))
          return failure();
        if (r.getCoordinateTransformationMode() == "half_pixel_symmetric" &&
            !hasOpset(r, 19, "Resize with half_pixel_symmetric"))
          return failure();
        // ONNX's keep_aspect_ratio_policy recomputes the scale from the
        // sizes, and scales alone floor the output size: neither gives an
        // output size with its own coordinate scale.
        if (r.getScalesAttr() && r.getSizesAttr())
          return r.emitOpError("has no ONNX export: sizes with their own "
                               "coordinate scales (ONNX's Resize takes "
                               "scales or sizes, not both)");
        withNCHW(r.getDataFormat(), r.getInput(), r.getOutput(), emit);
        return success();
      })
      .Case([&](BatchNormOp bn) -> LogicalResult {
        if (bn.getTraining())
          return exportTrainingBatchNorm(bn);
        int64_t rank = cast<RankedTensorType>(bn.getX().getType()).getRank();
        auto emit = [&](const std::string &x, const std::string &y) {
          onnx::NodeProto *n =
              add("BatchNormalization",
                  {x, nameOf(bn.getScale()), nameOf(bn.getOffset()),
                   nameOf(bn.getMean()), nameOf(bn.getVariance())},
                  {y});
          setFloat(n, "epsilon", bn.getEpsilon().convertToFloat());
        };
        withNCHW(rank == 4 ? bn.getDataFormat() : StringRef("NCHW"), bn.getX(),
                 bn.getY(), emit);
        return success();
      })
      .Case([&](BiasAddOp ba) {
        std::string bias = nameOf(ba.getBias());
        int64_t rank = cast<RankedTensorType>(ba.getX().getType()).getRank();
        if (rank == 4 && ba.getDataFormat() == "NCHW") {
          std::string r = fresh();
          add("Reshape", {bias, i64Initializer({-1, 1, 1})}, {r});
          bias = r;
        }
        add("Add", {nameOf(ba.getX()), bias}, {nameOf(ba.getY())});
        return success();
      })
      .Case([&](MatMulOp mm) {
        auto flip = [&](Value v, bool t) {
          std::string name = nameOf(v);
          if (!t)
            return name;
          int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
          SmallVector<int64_t> perm;
          for (int64_t i = 0; i < rank; ++i)
            perm.push_back(i);
          std::swap(perm[rank - 1], perm[rank - 2]);
          return transpose(name, perm);
        };
        add("MatMul",
            {flip(mm.getA(), mm.getTransposeA()),
             flip(mm.getB(), mm.getTransposeB())},
            {nameOf(mm.getY())});
        return success();
      })
      .Case([&](AddOp) { return binaryName("Add"); })
      .Case([&](SubOp) { return binaryName("Sub"); })
      .Case([&](MulOp) { return binaryName("Mul"); })
      .Case([&](DivOp) { return binaryName("Div"); })
      .Case([&](MaxOp) { return binaryName("Max"); })
      .Case([&](MinOp) { return binaryName("Min"); })
      .Case([&](PowOp) { return binaryName("Pow"); })
      .Case([&](SquaredDifferenceOp s) {
        std::string d = fresh();
        add("Sub", {nameOf(s.getLhs()), nameOf(s.getRhs())}, {d});
        add("Mul", {d, d}, {nameOf(s.getZ())});
        return success();
      })
      .Case([&](ReluOp) { return unaryName("Relu"); })
      .Case([&](SigmoidOp) { return unaryName("Sigmoid"); })
      .Case([&](TanhOp) { return unaryName("Tanh"); })
      .Case([&](ExpOp) { return unaryName("Exp"); })
      .Case([&](LogOp) { return unaryName("Log"); })
      .Case([&](SqrtOp) { return unaryName("Sqrt"); })
      .Case([&](NegOp) { return unaryName("Neg"); })
      .Case([&](AbsOp) { return unaryName("Abs"); })
      .Case([&](ErfOp) { return unaryName("Erf"); })
      .Case([&](RsqrtOp r) {
        std::string s = fresh();
        add("Sqrt", {nameOf(r.getX())}, {s});
        add("Reciprocal", {s}, {nameOf(r.getY())});
        return success();
      })
      .Case([&](Relu6Op r) {
        return activation("relu6", nameOf(r.getX()), nameOf(r.getY()),
                          elementType(r.getX()));
      })
      .Case([&](ClipOp c) {
        Type et = elementType(c.getX());
        add("Clip",
            {nameOf(c.getX()),
             scalarInitializer(et, c.getMin().convertToFloat()),
             scalarInitializer(et, c.getMax().convertToFloat())},
            {nameOf(c.getY())});
        return success();
      })
      .Case([&](LeakyReluOp l) {
        setFloat(add("LeakyRelu", {nameOf(l.getX())}, {nameOf(l.getY())}),
                 "alpha", l.getAlpha().convertToFloat());
        return success();
      })
      .Case<MaxPoolOp, AvgPoolOp>([&](auto p) {
        bool isMax = std::is_same<decltype(p), MaxPoolOp>::value;
        auto emit = [&](const std::string &x, const std::string &y) {
          onnx::NodeProto *n = add(isMax ? "MaxPool" : "AveragePool", {x}, {y});
          setInts(n, "kernel_shape", p.getKernel());
          windowAttrs(n, p.getPadding(), p.getPadsOrDefault(),
                      p.getStridesOrDefault());
          setInt(n, "ceil_mode", p.getCeilMode());
          if constexpr (std::is_same<decltype(p), AvgPoolOp>::value)
            setInt(n, "count_include_pad", p.getCountIncludePad());
        };
        withNCHW(p.getDataFormat(), p.getX(), p.getY(), emit);
        return success();
      })
      .Case([&](Conv3DOp c) {
        std::vector<std::string> ins{nameOf(c.getInput()),
                                     nameOf(c.getFilter())};
        if (c.getBias())
          ins.push_back(nameOf(c.getBias()));
        onnx::NodeProto *n = add("Conv", ins, {nameOf(c.getOutput())});
        windowAttrs(n, c.getPadding(), c.getPads(), c.getStrides());
        setInts(n, "dilations", c.getDilations());
        setInt(n, "group", c.getGroups());
        return success();
      })
      .Case([&](Conv3DTransposeOp c) {
        std::vector<std::string> ins{nameOf(c.getInput()),
                                     nameOf(c.getFilter())};
        if (c.getBias())
          ins.push_back(nameOf(c.getBias()));
        onnx::NodeProto *n = add("ConvTranspose", ins, {nameOf(c.getOutput())});
        setInts(n, "pads", onnxPads(c.getPads()));
        setInts(n, "strides", c.getStrides());
        setInts(n, "dilations", c.getDilations());
        setInts(n, "output_padding", c.getOutputPadding());
        setInt(n, "group", c.getGroups());
        return success();
      })
      .Case<MaxPool3DOp, AvgPool3DOp>([&](auto p) -> LogicalResult {
        constexpr bool isMax = std::is_same<decltype(p), MaxPool3DOp>::value;
        bool dilated =
            llvm::any_of(p.getDilations(), [](int64_t d) { return d != 1; });
        if (!isMax && dilated && !hasOpset(p, 19, "AveragePool with dilations"))
          return failure();
        onnx::NodeProto *n = add(isMax ? "MaxPool" : "AveragePool",
                                 {nameOf(p.getX())}, {nameOf(p.getY())});
        setInts(n, "kernel_shape", p.getKernel());
        windowAttrs(n, p.getPadding(), p.getPads(), p.getStrides());
        setInt(n, "ceil_mode", p.getCeilMode());
        if (dilated)
          setInts(n, "dilations", p.getDilations());
        if constexpr (!isMax)
          setInt(n, "count_include_pad", p.getCountIncludePad());
        return success();
      })
      .Case([&](MaxPoolWithIndicesOp p) -> LogicalResult {
        if (!isa<FloatType>(elementType(p.getX())) &&
            !hasOpset(p, 12, "MaxPool of integers"))
          return failure();
        std::vector<std::string> outs = {nameOf(p.getY())};
        if (!p.getIndices().use_empty())
          outs.push_back(nameOf(p.getIndices()));
        onnx::NodeProto *n = add("MaxPool", {nameOf(p.getX())}, outs);
        setInts(n, "kernel_shape", p.getKernel());
        windowAttrs(n, p.getPadding(), p.getPads(), p.getStrides());
        setInt(n, "ceil_mode", p.getCeilMode());
        if (llvm::any_of(p.getDilations(), [](int64_t d) { return d != 1; }))
          setInts(n, "dilations", p.getDilations());
        if (p.getStorageOrder() != 0)
          setInt(n, "storage_order", p.getStorageOrder());
        return success();
      })
      .Case([&](MaxUnpoolOp u) {
        std::vector<std::string> ins = {nameOf(u.getX()),
                                        nameOf(u.getIndices())};
        if (std::optional<ArrayRef<int64_t>> shape = u.getOutputShape())
          ins.push_back(i64Initializer(*shape));
        onnx::NodeProto *n = add("MaxUnpool", ins, {nameOf(u.getY())});
        setInts(n, "kernel_shape", u.getKernel());
        setInts(n, "strides", u.getStrides());
        setInts(n, "pads", onnxPads(u.getPads()));
        return success();
      })
      .Case([&](DynamicMaxUnpoolOp u) {
        onnx::NodeProto *n = add("MaxUnpool",
                                 {nameOf(u.getX()), nameOf(u.getIndices()),
                                  nameOf(u.getOutputShape())},
                                 {nameOf(u.getY())});
        setInts(n, "kernel_shape", u.getKernel());
        setInts(n, "strides", u.getStrides());
        setInts(n, "pads", onnxPads(u.getPads()));
        return success();
      })
      .Case([&](GlobalAvgPoolOp g) {
        withNCHW(g.getDataFormat(), g.getX(), g.getY(),
                 [&](const std::string &x, const std::string &y) {
                   add("GlobalAveragePool", {x}, {y});
                 });
        return success();
      })
      .Case<SoftmaxOp, LogSoftmaxOp>([&](auto s) {
        bool isLog = std::is_same<decltype(s), LogSoftmaxOp>::value;
        setInt(add(isLog ? "LogSoftmax" : "Softmax", {nameOf(s.getX())},
                   {nameOf(s.getY())}),
               "axis", s.getAxis());
        return success();
      })
      .Case<ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp>([&](auto r) {
        using OpTy = decltype(r);
        const char *onnxOp = std::is_same_v<OpTy, ReduceMeanOp>  ? "ReduceMean"
                             : std::is_same_v<OpTy, ReduceMaxOp> ? "ReduceMax"
                             : std::is_same_v<OpTy, ReduceMinOp> ? "ReduceMin"
                                                                 : "ReduceProd";
        addReduce(onnxOp, nameOf(r.getX()), r.getAxes(), r.getKeepDims(),
                  nameOf(r.getY()));
        return success();
      })
      .Case([&](ReduceSumOp r) {
        addReduce("ReduceSum", nameOf(r.getX()), r.getAxes(), r.getKeepDims(),
                  nameOf(r.getY()));
        return success();
      })
      .Case([&](ReshapeOp r) {
        onnx::NodeProto *n =
            add("Reshape", {nameOf(r.getX()), i64Initializer(r.getShape())},
                {nameOf(r.getY())});
        // gopt's 0 is an empty dimension, not ONNX's "copy".
        if (llvm::is_contained(r.getShape(), 0))
          setInt(n, "allowzero", 1);
        return success();
      })
      .Case([&](DynamicReshapeOp r) {
        // ONNX's Reshape with its shape as a graph value, the same 0 and -1.
        onnx::NodeProto *n =
            add("Reshape", {nameOf(r.getX()), nameOf(r.getShape())},
                {nameOf(r.getY())});
        if (r.getAllowZero())
          setInt(n, "allowzero", 1);
        return success();
      })
      .Case([&](GeluOp g) {
        // Gelu is opset 20: x * Phi(x) written out, as PyTorch does.
        Type et = elementType(g.getX());
        std::string x = nameOf(g.getX());
        std::string inner = fresh(), squashed = fresh(), plusOne = fresh(),
                    half = fresh();
        if (g.getApproximate() == "tanh") {
          // tanh(sqrt(2 / pi) * (x + 0.044715 x^3))
          std::string square = fresh(), cube = fresh(), scaled = fresh(),
                      sum = fresh();
          add("Mul", {x, x}, {square});
          add("Mul", {square, x}, {cube});
          add("Mul", {cube, scalarInitializer(et, 0.044715)}, {scaled});
          add("Add", {x, scaled}, {sum});
          add("Mul", {sum, scalarInitializer(et, std::sqrt(2.0 / M_PI))},
              {inner});
          add("Tanh", {inner}, {squashed});
        } else {
          add("Mul", {x, scalarInitializer(et, M_SQRT1_2)}, {inner});
          add("Erf", {inner}, {squashed});
        }
        add("Add", {squashed, scalarInitializer(et, 1.0)}, {plusOne});
        add("Mul", {x, scalarInitializer(et, 0.5)}, {half});
        add("Mul", {half, plusOne}, {nameOf(g.getY())});
        return success();
      })
      .Case([&](RangeOp r) {
        // ONNX's Range of the result's type; integers run in i64 and cast.
        Type et = elementType(r.getY());
        std::vector<std::string> bounds;
        for (double v :
             {r.getStart().convertToDouble(), r.getLimit().convertToDouble(),
              r.getDelta().convertToDouble()})
          bounds.push_back(isa<FloatType>(et)
                               ? scalarInitializer(et, v)
                               : i64Initializer({static_cast<int64_t>(v)},
                                                /*scalar=*/true));
        if (isa<FloatType>(et) || et.isSignlessInteger(64)) {
          add("Range", bounds, {nameOf(r.getY())});
          return success();
        }
        std::string wide = fresh();
        add("Range", bounds, {wide});
        setInt(add("Cast", {wide}, {nameOf(r.getY())}), "to",
               *onnxElementType(et));
        return success();
      })
      .Case([&](SelectOp s) -> LogicalResult {
        // Where broadcasts; gopt's select picks a whole tensor, the same
        // only when both have the result's type.
        if (s.getOnTrue().getType() != s.getOnFalse().getType())
          return s.emitOpError("has an ONNX export (Where) only when both "
                               "choices have one type");
        add("Where",
            {nameOf(s.getPred()), nameOf(s.getOnTrue()),
             nameOf(s.getOnFalse())},
            {nameOf(s.getResult())});
        return success();
      })
      .Case([&](RoiAlignOp r) -> LogicalResult {
        // RoiAlign-10 has no coordinate_transformation_mode and means
        // output_half_pixel; RoiAlign-16's default is half_pixel.
        StringRef coordinates = r.getCoordinateTransformationMode();
        if (coordinates != "output_half_pixel" &&
            !hasOpset(r, 16,
                      "RoiAlign with coordinate_transformation_mode " +
                          coordinates))
          return failure();
        onnx::NodeProto *n = add("RoiAlign",
                                 {nameOf(r.getX()), nameOf(r.getRois()),
                                  nameOf(r.getBatchIndices())},
                                 {nameOf(r.getY())});
        if (opset >= 16)
          setString(n, "coordinate_transformation_mode", coordinates);
        setString(n, "mode", r.getMode());
        setInt(n, "output_height", r.getOutputHeight());
        setInt(n, "output_width", r.getOutputWidth());
        setInt(n, "sampling_ratio", r.getSamplingRatio());
        setFloat(n, "spatial_scale", r.getSpatialScale().convertToFloat());
        return success();
      })
      .Case([&](GridSampleOp g) -> LogicalResult {
        bool twoD = cast<ShapedType>(g.getX().getType()).getRank() == 4;
        if (!hasOpset(g, twoD ? 16 : 20,
                      twoD ? "GridSample" : "GridSample of 1-D or 3-D data"))
          return failure();
        // GridSample-20 renamed bilinear and bicubic.
        StringRef mode = g.getMode();
        if (opset >= 20)
          mode = mode == "bilinear"  ? "linear"
                 : mode == "bicubic" ? "cubic"
                                     : mode;
        onnx::NodeProto *n =
            add("GridSample", {nameOf(g.getX()), nameOf(g.getGrid())},
                {nameOf(g.getY())});
        setString(n, "mode", mode);
        setString(n, "padding_mode", g.getPaddingMode());
        setInt(n, "align_corners", g.getAlignCorners());
        return success();
      })
      .Case([&](Col2ImOp c) -> LogicalResult {
        if (!hasOpset(c, 18, "Col2Im"))
          return failure();
        onnx::NodeProto *n =
            add("Col2Im",
                {nameOf(c.getX()), i64Initializer(c.getImageShape()),
                 i64Initializer(c.getBlockShape())},
                {nameOf(c.getY())});
        setInts(n, "strides", c.getStrides());
        setInts(n, "dilations", c.getDilations());
        setInts(n, "pads", onnxPads(c.getPads()));
        return success();
      })
      .Case([&](DeformConv2DOp d) -> LogicalResult {
        if (!hasOpset(d, 19, "DeformConv"))
          return failure();
        std::vector<std::string> ins{nameOf(d.getX()), nameOf(d.getFilter()),
                                     nameOf(d.getOffset()),
                                     nameOf(d.getBias())};
        if (d.getMask())
          ins.push_back(nameOf(d.getMask()));
        onnx::NodeProto *n = add("DeformConv", ins, {nameOf(d.getY())});
        setInts(n, "strides", d.getStrides());
        setInts(n, "dilations", d.getDilations());
        setInts(n, "pads", onnxPads(d.getPads()));
        setInt(n, "group", d.getGroup());
        setInt(n, "offset_group", d.getOffsetGroup());
        return success();
      })
      .Case([&](ImageDecoderOp d) -> LogicalResult {
        if (!hasOpset(d, 20, "ImageDecoder"))
          return failure();
        onnx::NodeProto *n = add("ImageDecoder", {nameOf(d.getEncodedStream())},
                                 {nameOf(d.getImage())});
        setString(n, "pixel_format", d.getPixelFormat());
        return success();
      })
      .Case([&](DftOp d) -> LogicalResult {
        if (!hasOpset(d, 17, "DFT"))
          return failure();
        int64_t rank = cast<RankedTensorType>(d.getInput().getType()).getRank();
        int64_t axis = static_cast<int64_t>(d.getAxis());
        if (axis < 0)
          axis += rank;
        std::vector<std::string> ins{nameOf(d.getInput())};
        ins.push_back(
            d.getDftLength() > 0
                ? i64Initializer({static_cast<int64_t>(d.getDftLength())}, true)
                : std::string());
        // DFT-20 takes the axis as an input (default -2 rather than 1).
        if (opset >= 20)
          ins.push_back(i64Initializer({axis}, true));
        while (ins.back().empty())
          ins.pop_back();
        onnx::NodeProto *n = add("DFT", ins, {nameOf(d.getOutput())});
        if (opset < 20)
          setInt(n, "axis", axis);
        setInt(n, "inverse", d.getInverse());
        setInt(n, "onesided", d.getOnesided());
        return success();
      })
      .Case<StftOp, DynamicStftOp>([&](auto o) -> LogicalResult {
        if (!hasOpset(o, 17, "STFT"))
          return failure();
        std::string step;
        if constexpr (std::is_same_v<decltype(o), StftOp>)
          step = i64Initializer({static_cast<int64_t>(o.getFrameStep())}, true);
        else
          step = asScalar(o.getFrameStep());
        std::vector<std::string> ins{nameOf(o.getSignal()), step,
                                     o.getWindow() ? nameOf(o.getWindow())
                                                   : std::string()};
        if (o.getFrameLength() > 0)
          ins.push_back(
              i64Initializer({static_cast<int64_t>(o.getFrameLength())}, true));
        while (ins.back().empty())
          ins.pop_back();
        setInt(add("STFT", ins, {nameOf(o.getOutput())}), "onesided",
               o.getOnesided());
        return success();
      })
      .Case([&](DynamicMelWeightMatrixOp m) -> LogicalResult {
        if (!hasOpset(m, 17, "MelWeightMatrix"))
          return failure();
        add("MelWeightMatrix",
            {asScalar(m.getNumMelBins()), asScalar(m.getDftLength()),
             asScalar(m.getSampleRate()), asScalar(m.getLowerEdgeHertz()),
             asScalar(m.getUpperEdgeHertz())},
            {nameOf(m.getOutput())});
        return success();
      })
      .Case([&](MelWeightMatrixOp m) -> LogicalResult {
        if (!hasOpset(m, 17, "MelWeightMatrix"))
          return failure();
        Type f32 = Float32Type::get(m.getContext());
        add("MelWeightMatrix",
            {i64Initializer({static_cast<int64_t>(m.getNumMelBins())}, true),
             i64Initializer({static_cast<int64_t>(m.getDftLength())}, true),
             i64Initializer({static_cast<int64_t>(m.getSampleRate())}, true),
             scalarInitializer(f32, m.getLowerEdgeHertz().convertToFloat()),
             scalarInitializer(f32, m.getUpperEdgeHertz().convertToFloat())},
            {nameOf(m.getOutput())});
        return success();
      })
      .Case([&](TransferOp) {
        // Device placement is not ONNX's concern.
        return unaryName("Identity");
      })
      .Case([&](IfOp i) { return exportIf(i); })
      .Case([&](LoopOp l) { return exportLoop(l); })
      // The dynamic ops: ONNX's op with the run-time values as its inputs.
      .Case([&](DynamicExpandOp e) {
        add("Expand", {nameOf(e.getX()), nameOf(e.getShape())},
            {nameOf(e.getY())});
        return success();
      })
      .Case([&](DynamicTileOp t) {
        add("Tile", {nameOf(t.getX()), nameOf(t.getRepeats())},
            {nameOf(t.getY())});
        return success();
      })
      .Case([&](DynamicSliceOp s) {
        add("Slice",
            {nameOf(s.getX()), nameOf(s.getStarts()), nameOf(s.getEnds()),
             nameOf(s.getAxes()), nameOf(s.getSteps())},
            {nameOf(s.getY())});
        return success();
      })
      .Case<DynamicUnsqueezeOp, DynamicSqueezeOp>([&](auto u) {
        // Opset 13 made Unsqueeze's and Squeeze's axes an input.
        add(isa<DynamicUnsqueezeOp>(u.getOperation()) ? "Unsqueeze" : "Squeeze",
            {nameOf(u.getX()), nameOf(u.getAxes())}, {nameOf(u.getY())});
        return success();
      })
      .Case([&](DynamicPadOp p) -> LogicalResult {
        if (p.getMode() == "wrap" && !hasOpset(p, 19, "Pad with mode wrap"))
          return failure();
        std::vector<std::string> ins{nameOf(p.getX()), nameOf(p.getPads())};
        if (p.getMode() == "constant") {
          // ONNX's constant_value is a scalar of the data's type.
          std::string value = asScalar(p.getValue());
          Type et = elementType(p.getX());
          if (elementType(p.getValue()) != et) {
            std::string cast = fresh();
            setInt(add("Cast", {value}, {cast}), "to", *onnxElementType(et));
            value = cast;
          }
          ins.push_back(value);
        }
        setString(add("Pad", ins, {nameOf(p.getY())}), "mode", p.getMode());
        return success();
      })
      .Case([&](DynamicResizeOp r) -> LogicalResult {
        if (r.getAntialias() && !hasOpset(r, 18, "Resize with antialias"))
          return failure();
        if (r.getCoordinateTransformationMode() == "half_pixel_symmetric" &&
            !hasOpset(r, 19, "Resize with half_pixel_symmetric"))
          return failure();
        // gopt's empty roi / scales / sizes are ONNX's absent inputs; an
        // empty sizes is left off, as Resize refuses both it and scales.
        std::vector<std::string> ins{nameOf(r.getInput()), nameOf(r.getRoi()),
                                     nameOf(r.getScales())};
        auto sizesType = cast<RankedTensorType>(r.getSizes().getType());
        if (!sizesType.hasStaticShape() || sizesType.getNumElements() != 0)
          ins.push_back(nameOf(r.getSizes()));
        onnx::NodeProto *n = add("Resize", ins, {nameOf(r.getOutput())});
        setString(n, "mode", r.getMode());
        setString(n, "coordinate_transformation_mode",
                  r.getCoordinateTransformationMode());
        setString(n, "nearest_mode", r.getNearestMode());
        setFloat(n, "cubic_coeff_a", r.getCubicCoeffA().convertToFloat());
        setInt(n, "exclude_outside", r.getExcludeOutside());
        setFloat(n, "extrapolation_value",
                 r.getExtrapolationValue().convertToFloat());
        if (r.getAntialias())
          setInt(n, "antialias", 1);
        return success();
      })
      .Case([&](DynamicTopKOp t) {
        onnx::NodeProto *n =
            add("TopK", {nameOf(t.getX()), asVector(t.getK())},
                {nameOf(t.getValues()), nameOf(t.getIndices())});
        setInt(n, "axis", t.getAxis());
        setInt(n, "largest", t.getLargest());
        setInt(n, "sorted", t.getSorted());
        return success();
      })
      .Case([&](DynamicCumSumOp c) {
        onnx::NodeProto *n =
            add("CumSum", {nameOf(c.getX()), asScalar(c.getAxis())},
                {nameOf(c.getY())});
        setInt(n, "exclusive", c.getExclusive());
        setInt(n, "reverse", c.getReverse());
        return success();
      })
      .Case([&](DynamicRangeOp r) {
        add("Range",
            {asScalar(r.getStart()), asScalar(r.getLimit()),
             asScalar(r.getDelta())},
            {nameOf(r.getY())});
        return success();
      })
      .Case([&](DynamicReduceSumOp r) {
        // ReduceSum takes its axes as an input from opset 13 on.
        setInt(add("ReduceSum", {nameOf(r.getX()), nameOf(r.getAxes())},
                   {nameOf(r.getY())}),
               "keepdims", r.getKeepDims());
        return success();
      })
      .Case<DynamicReduceMeanOp, DynamicReduceMaxOp, DynamicReduceMinOp,
            DynamicReduceProdOp>([&](auto r) -> LogicalResult {
        using OpTy = decltype(r);
        const char *onnxOp =
            std::is_same_v<OpTy, DynamicReduceMeanOp>  ? "ReduceMean"
            : std::is_same_v<OpTy, DynamicReduceMaxOp> ? "ReduceMax"
            : std::is_same_v<OpTy, DynamicReduceMinOp> ? "ReduceMin"
                                                       : "ReduceProd";
        if (opset >= 18) {
          setInt(add(onnxOp, {nameOf(r.getX()), nameOf(r.getAxes())},
                     {nameOf(r.getY())}),
                 "keepdims", r.getKeepDims());
          return success();
        }
        // Before opset 18, a float mean is the sum over the axes divided
        // by the count, itself the sum of ones over them.
        Type et = elementType(r.getX());
        if (!std::is_same_v<OpTy, DynamicReduceMeanOp> || !isa<FloatType>(et)) {
          (void)hasOpset(r, 18, Twine(onnxOp) + " with an axes input");
          return failure();
        }
        std::string x = nameOf(r.getX()), axes = nameOf(r.getAxes());
        std::string sum = fresh(), shape = fresh(), ones = fresh(),
                    count = fresh();
        setInt(add("ReduceSum", {x, axes}, {sum}), "keepdims", r.getKeepDims());
        add("Shape", {x}, {shape});
        add("Expand", {scalarInitializer(et, 1.0), shape}, {ones});
        setInt(add("ReduceSum", {ones, axes}, {count}), "keepdims",
               r.getKeepDims());
        add("Div", {sum, count}, {nameOf(r.getY())});
        return success();
      })
      .Case([&](ExpandOp e) {
        add("Expand", {nameOf(e.getX()), i64Initializer(e.getShape())},
            {nameOf(e.getY())});
        return success();
      })
      .Case([&](TileOp t) {
        add("Tile", {nameOf(t.getX()), i64Initializer(t.getRepeats())},
            {nameOf(t.getY())});
        return success();
      })
      .Case([&](FloorDivOp d) {
        // Floats: floor(lhs / rhs). Integers: ONNX's Div truncates, but
        // lhs - floor_mod(lhs, rhs) is a multiple of rhs, divided exactly.
        std::string lhs = nameOf(d.getLhs()), rhs = nameOf(d.getRhs());
        std::string out = nameOf(d.getZ()), tmp = fresh();
        if (isa<FloatType>(elementType(d.getLhs()))) {
          add("Div", {lhs, rhs}, {tmp});
          add("Floor", {tmp}, {out});
          return success();
        }
        std::string multiple = fresh();
        setInt(add("Mod", {lhs, rhs}, {tmp}), "fmod", 0);
        add("Sub", {lhs, tmp}, {multiple});
        add("Div", {multiple, rhs}, {out});
        return success();
      })
      .Case([&](FlattenOp f) {
        setInt(add("Flatten", {nameOf(f.getX())}, {nameOf(f.getY())}), "axis",
               f.getAxis());
        return success();
      })
      .Case([&](TransposeOp t) {
        setInts(add("Transpose", {nameOf(t.getX())}, {nameOf(t.getY())}),
                "perm", t.getPerm());
        return success();
      })
      .Case([&](ConcatOp c) {
        std::vector<std::string> ins;
        for (Value v : c.getInputs())
          ins.push_back(nameOf(v));
        setInt(add("Concat", ins, {nameOf(c.getY())}), "axis", c.getAxis());
        return success();
      })
      .Case([&](SliceOp s) {
        SmallVector<int64_t> axes;
        SmallVector<int64_t> ends(s.getEnds());
        for (size_t i = 0; i < s.getStarts().size(); ++i) {
          axes.push_back(i);
          // gopt's backward end -1 is "before element 0"; ONNX reads -1 as
          // the last element, and clamps anything below -dim to before 0.
          if (s.getSteps()[i] < 0 && ends[i] == -1)
            ends[i] = std::numeric_limits<int64_t>::min();
        }
        add("Slice",
            {nameOf(s.getX()), i64Initializer(s.getStarts()),
             i64Initializer(ends), i64Initializer(axes),
             i64Initializer(s.getSteps())},
            {nameOf(s.getY())});
        return success();
      })
      .Case([&](PadOp p) -> LogicalResult {
        if (p.getMode() == "wrap" && !hasOpset(p, 19, "Pad with mode wrap"))
          return failure();
        ArrayRef<int64_t> pads = p.getPads();
        SmallVector<int64_t> onnxPads;
        for (size_t i = 0; i < pads.size(); i += 2)
          onnxPads.push_back(pads[i]);
        for (size_t i = 1; i < pads.size(); i += 2)
          onnxPads.push_back(pads[i]);
        std::vector<std::string> ins{nameOf(p.getX()),
                                     i64Initializer(onnxPads)};
        Type et = elementType(p.getX());
        // The fill value, of x's type; integer zero is ONNX's default.
        double fill = p.getValue().convertToFloat();
        if (p.getMode() == "constant" && !et.isInteger(1) &&
            (isa<FloatType>(et) || fill != 0))
          ins.push_back(scalarInitializer(et, fill));
        setString(add("Pad", ins, {nameOf(p.getY())}), "mode", p.getMode());
        return success();
      })
      .Case([&](CastOp c) {
        std::optional<int32_t> to = onnxElementType(elementType(c.getY()));
        if (!to)
          return c.emitError("cannot export element type ")
                     << elementType(c.getY()),
                 failure();
        onnx::NodeProto *n =
            add("Cast", {nameOf(c.getX())}, {nameOf(c.getY())});
        setInt(n, "to", *to);
        // Cast-19's saturate (default 1) matters only for float8 results.
        if (!c.getSaturate() && isa<FloatType>(elementType(c.getY())) &&
            elementType(c.getY()).getIntOrFloatBitWidth() == 8) {
          if (opset < 19)
            return c.emitError("a non-saturating cast to ")
                       << elementType(c.getY()) << " needs opset 19",
                   failure();
          setInt(n, "saturate", 0);
        }
        return success();
      })
      .Case([&](ShapeOp) { return unaryName("Shape"); })
      .Case<ArgMaxOp, ArgMinOp>([&](auto a) {
        onnx::NodeProto *n =
            add(isa<ArgMaxOp>(a.getOperation()) ? "ArgMax" : "ArgMin",
                {nameOf(a.getX())}, {nameOf(a.getIndices())});
        setInt(n, "axis", a.getAxis());
        setInt(n, "keepdims", a.getKeepDims());
        setInt(n, "select_last_index", a.getSelectLastIndex());
        return success();
      })
      .Case([&](ScatterElementsOp o) -> LogicalResult {
        onnx::NodeProto *n =
            scatterNode(o, "ScatterElements", o.getReduction());
        if (!n)
          return failure();
        setInt(n, "axis", o.getAxis());
        return success();
      })
      .Case([&](ScatterNDOp o) -> LogicalResult {
        return success(scatterNode(o, "ScatterND", o.getReduction()));
      })
      .Case<LstmOp, GruOp, RnnOp>(
          [&](auto rnn) -> LogicalResult { return exportRecurrent(rnn); })
      .Case([&](TopKOp t) {
        onnx::NodeProto *n =
            add("TopK", {nameOf(t.getX()), i64Initializer({t.getK()})},
                {nameOf(t.getValues()), nameOf(t.getIndices())});
        setInt(n, "axis", t.getAxis());
        setInt(n, "largest", t.getLargest());
        setInt(n, "sorted", t.getSorted());
        return success();
      })
      .Case([&](UniqueOp u) {
        onnx::NodeProto *n =
            add("Unique", {nameOf(u.getX())},
                {nameOf(u.getY()), nameOf(u.getIndices()),
                 nameOf(u.getInverseIndices()), nameOf(u.getCounts())});
        if (std::optional<uint64_t> axis = u.getAxis())
          setInt(n, "axis", static_cast<int64_t>(*axis));
        setInt(n, "sorted", u.getSorted());
        return success();
      })
      .Case([&](NonMaxSuppressionOp m) {
        onnx::NodeProto *n =
            add("NonMaxSuppression",
                {nameOf(m.getBoxes()), nameOf(m.getScores()),
                 nameOf(m.getMaxOutputBoxesPerClass()),
                 nameOf(m.getIouThreshold()), nameOf(m.getScoreThreshold())},
                {nameOf(m.getSelectedIndices())});
        setInt(n, "center_point_box", m.getCenterPointBox());
        return success();
      })
      .Case([&](CumSumOp c) {
        onnx::NodeProto *n = add(
            "CumSum",
            {nameOf(c.getX()), i64Initializer({c.getAxis()}, /*scalar=*/true)},
            {nameOf(c.getY())});
        setInt(n, "exclusive", c.getExclusive());
        setInt(n, "reverse", c.getReverse());
        return success();
      })
      .Case([&](QuantizeOp q) {
        return exportQuantization(q, "QuantizeLinear", q.getX(), q.getScales(),
                                  q.getAxis(), q.getY());
      })
      .Case([&](DequantizeOp d) {
        return exportQuantization(d, "DequantizeLinear", d.getX(),
                                  d.getScales(), d.getAxis(), d.getY());
      })
      .Case<IdentityOp, StopGradientOp, CheckNumericsOp>(
          [&](auto) { return unaryName("Identity"); })
      .Case([&](RandomUniformLikeOp r) -> LogicalResult {
        std::optional<int32_t> dtype = onnxElementType(elementType(r.getY()));
        if (!dtype)
          return r.emitOpError("has no ONNX export: result element type ")
                 << elementType(r.getY()) << " has no ONNX form";
        // The importer maps ONNX's float seed to a stream tagged 0x5EED
        // above its 32 bits; other streams (a seed from TensorFlow, the
        // second draw of a seeded RandomNormal) have no ONNX seed.
        uint64_t stream = static_cast<uint64_t>(r.getSeed());
        constexpr uint64_t kOnnxSeedTag = 0x5EEDull << 40;
        if (stream && (stream & ~0xFFFFFFFFull) != kOnnxSeedTag)
          return r.emitOpError("has no ONNX export: seed ")
                 << r.getSeed()
                 << " is not the stream of an ONNX seed (a float; only "
                    "unseeded draws and ONNX-imported seeds export)";
        onnx::NodeProto *n =
            add("RandomUniformLike", {nameOf(r.getX())}, {nameOf(r.getY())});
        setInt(n, "dtype", *dtype);
        setFloat(n, "low", r.getLow().convertToFloat());
        setFloat(n, "high", r.getHigh().convertToFloat());
        if (stream) {
          uint32_t bits = static_cast<uint32_t>(stream);
          float seed;
          std::memcpy(&seed, &bits, sizeof seed);
          setFloat(n, "seed", seed);
        }
        return success();
      })
      .Case([&](TfIdfVectorizerOp t) {
        onnx::NodeProto *n =
            add("TfIdfVectorizer", {nameOf(t.getX())}, {nameOf(t.getY())});
        setString(n, "mode", t.getMode());
        setInt(n, "min_gram_length", t.getMinGramLength());
        setInt(n, "max_gram_length", t.getMaxGramLength());
        setInt(n, "max_skip_count", t.getMaxSkipCount());
        setInts(n, "ngram_counts", t.getNgramCounts());
        setInts(n, "ngram_indexes", t.getNgramIndexes());
        setInts(n, "pool_int64s", t.getPoolInt64s());
        if (std::optional<ArrayRef<float>> weights = t.getWeights()) {
          onnx::AttributeProto *a = n->add_attribute();
          a->set_name("weights");
          a->set_type(onnx::AttributeProto::FLOATS);
          for (float w : *weights)
            a->add_floats(w);
        }
        return success();
      })
      .Case([&](ResizeGradOp g) {
        return g.emitOpError(
            "has no ONNX export: it is resize's gradient, a training op "
            "ONNX has no operator for (export the inference graph)");
      })
      .Case([&](DropoutOp d) -> LogicalResult {
        if (d.getTraining())
          return d.emitError("training dropout has no ONNX export");
        return unaryName("Identity");
      })
      .Default([&](Operation *other) -> LogicalResult {
        return other->emitOpError("has no ONNX export");
      });
}

LogicalResult OnnxExporter::setType(onnx::ValueInfoProto *info, Type t,
                                    bool symbolic) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  std::optional<int32_t> et =
      tensor ? onnxElementType(tensor.getElementType()) : std::nullopt;
  if (!et)
    return func.emitError("cannot export value of type ") << t;
  onnx::TypeProto_Tensor *tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(*et);
  onnx::TensorShapeProto *shape = tt->mutable_shape();
  for (int64_t d : tensor.getShape()) {
    auto *dim = shape->add_dim();
    if (!ShapedType::isDynamic(d))
      dim->set_dim_value(d);
    else if (symbolic)
      dim->set_dim_param("N"); // dynamic; one symbol, as for a batch size
  }
  return success();
}

LogicalResult OnnxExporter::exportBlock(Block &block) {
  for (Operation &op : block.without_terminator())
    if (failed(exportOp(&op)))
      return failure();
  return success();
}

LogicalResult OnnxExporter::exportRegion(Region &region, onnx::GraphProto *out,
                                         unsigned numInputs,
                                         ArrayRef<std::string> outerNames) {
  Block &block = region.front();
  out->set_name(fresh());
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    if (i < numInputs) {
      std::string name = fresh();
      names[arg] = name;
      onnx::ValueInfoProto *info = out->add_input();
      info->set_name(name);
      if (failed(setType(info, arg.getType(), /*symbolic=*/false)))
        return failure();
    } else {
      names[arg] = outerNames[i - numInputs];
    }
  }
  onnx::GraphProto *outer = graph;
  graph = out;
  LogicalResult result = exportBlock(block);
  if (succeeded(result)) {
    // Identity gives each output a name of this graph's own: a yielded
    // value may be an input, an outer value, or yielded twice.
    for (Value v : block.getTerminator()->getOperands()) {
      std::string name = fresh();
      add("Identity", {nameOf(v)}, {name});
      onnx::ValueInfoProto *info = out->add_output();
      info->set_name(name);
      if (failed(setType(info, v.getType(), /*symbolic=*/false))) {
        result = failure();
        break;
      }
    }
  }
  graph = outer;
  return result;
}

LogicalResult OnnxExporter::exportIf(IfOp op) {
  // ONNX's branches take no inputs: the captures are read from outside.
  std::vector<std::string> captures;
  for (Value v : op.getCaptures())
    captures.push_back(nameOf(v));
  std::vector<std::string> outs;
  for (Value r : op.getResults())
    outs.push_back(nameOf(r));
  onnx::NodeProto *n = add("If", {nameOf(op.getCond())}, outs);
  for (auto [attrName, region] :
       {std::pair<const char *, Region *>{"then_branch", &op.getThenRegion()},
        {"else_branch", &op.getElseRegion()}}) {
    onnx::AttributeProto *a = n->add_attribute();
    a->set_name(attrName);
    a->set_type(onnx::AttributeProto::GRAPH);
    if (failed(exportRegion(*region, a->mutable_g(), 0, captures)))
      return failure();
  }
  return success();
}

LogicalResult OnnxExporter::exportLoop(LoopOp op) {
  // The body's inputs are the iteration number, the condition and the
  // carried values, as in ONNX; the captures are read from outside.
  std::vector<std::string> ins = {nameOf(op.getMaxTripCount()),
                                  nameOf(op.getCond())};
  for (Value v : op.getInitial())
    ins.push_back(nameOf(v));
  std::vector<std::string> captures;
  for (Value v : op.getCaptures())
    captures.push_back(nameOf(v));
  std::vector<std::string> outs;
  for (Value r : op.getResults())
    outs.push_back(nameOf(r));
  onnx::NodeProto *n = add("Loop", ins, outs);
  onnx::AttributeProto *a = n->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  return exportRegion(op.getBody(), a->mutable_g(), 2 + op.getInitial().size(),
                      captures);
}

LogicalResult OnnxExporter::run(llvm::raw_ostream &os) {
  model.set_ir_version(irVersionFor(opset));
  model.set_producer_name("gopt");
  onnx::OperatorSetIdProto *opsetImport = model.add_opset_import();
  opsetImport->set_domain("");
  opsetImport->set_version(opset);
  graph->set_name(func.getName().str());

  Block &body = func.getBody().front();
  // ONNX defines float8 from opset 19 (IR 9) and 4-bit integers from 21
  // (IR 10).
  WalkResult lowPrecision = func.walk([&](Operation *op) {
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    for (Type t : types) {
      Type et = getElementTypeOrSelf(t);
      if (et.isInteger(4) && !hasOpset(op, 21, "a 4-bit integer type"))
        return WalkResult::interrupt();
      if (isa<FloatType>(et) && et.getIntOrFloatBitWidth() == 8 &&
          !hasOpset(op, 19, "a float8 type"))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (lowPrecision.wasInterrupted())
    return failure();
  for (BlockArgument arg : body.getArguments()) {
    auto attr =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "gopt.name");
    std::string name =
        attr ? attr.str() : llvm::formatv("input{0}", arg.getArgNumber()).str();
    names[arg] = name;
    onnx::ValueInfoProto *info = graph->add_input();
    info->set_name(name);
    if (failed(setType(info, arg.getType(), /*symbolic=*/true)))
      return failure();
  }
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        auto attr = func.getResultAttrOfType<StringAttr>(i, "gopt.name");
        std::string name =
            attr ? attr.str() : llvm::formatv("output{0}", i).str();
        // Identity gives each output its own name even when two results (or
        // a result and an input) are one value.
        std::string outName = name;
        if (llvm::any_of(names, [&](auto &kv) { return kv.second == name; }))
          outName = name + "_out";
        add("Identity", {nameOf(v)}, {outName});
        onnx::ValueInfoProto *info = graph->add_output();
        info->set_name(outName);
        if (failed(setType(info, v.getType(), /*symbolic=*/true)))
          return failure();
      }
      continue;
    }
    if (failed(exportOp(&op)))
      return failure();
  }
  try {
    if (opset <= kLibOnnxLatestOpset) {
      onnx::checker::check_model(model);
    } else {
      // libonnx's checker knows neither the later versions' schemas nor
      // their IR versions: check the graph against gopt's.
      static const ExportSchemaRegistry registry;
      onnx::checker::CheckerContext ctx;
      ctx.set_ir_version(std::min<int64_t>(model.ir_version(), 8));
      ctx.set_opset_imports({{"", static_cast<int>(opset)}});
      ctx.set_schema_registry(&registry);
      onnx::checker::LexicalScopeContext scope;
      onnx::checker::check_graph(model.graph(), ctx, scope);
    }
  } catch (const std::exception &e) {
    return func.emitError("exported model fails ONNX's checker: ") << e.what();
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return func.emitError("cannot serialize the ONNX model");
  os << bytes;
  return success();
}

} // namespace

LogicalResult gopt::exportOnnx(ModuleOp module, llvm::raw_ostream &os,
                               int64_t opset) {
  func::FuncOp func = module.lookupSymbol<func::FuncOp>("main");
  if (!func) {
    auto funcs = module.getOps<func::FuncOp>();
    if (std::distance(funcs.begin(), funcs.end()) != 1)
      return module.emitError("expects a function @main or exactly one "
                              "function");
    func = *funcs.begin();
  }
  if (!func.getBody().hasOneBlock())
    return func.emitError("expects a function with one block");
  if (opset != 0 && (opset < kDefaultOpset || opset > kNewestOpset))
    return func.emitError("cannot export at ONNX opset ")
           << opset << " (expected " << kDefaultOpset << " to " << kNewestOpset
           << ", or 0 for the lowest the graph needs)";
  if (opset != 0)
    return OnnxExporter(func, opset).run(os);
  // The lowest opset the graph needs: each try stops at the first op its
  // opset lacks, so raise the opset to what that op needs until the export
  // succeeds or fails for another reason, then report that try's errors.
  int64_t chosen = kDefaultOpset;
  while (true) {
    std::string bytes;
    llvm::raw_string_ostream buffer(bytes);
    OnnxExporter exporter(func, chosen);
    LogicalResult result = success();
    {
      ScopedDiagnosticHandler quiet(module.getContext(),
                                    [](Diagnostic &) { return success(); });
      result = exporter.run(buffer);
    }
    if (succeeded(result)) {
      os << buffer.str();
      return success();
    }
    int64_t needed = exporter.neededOpset();
    if (needed <= chosen || needed > kNewestOpset)
      return OnnxExporter(func, chosen).run(os);
    chosen = needed;
  }
}
