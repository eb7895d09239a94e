//===- ImportOnnx.cpp - ONNX ModelProto to gopt ---------------------------===//
//
// Parses a ModelProto, runs ONNX's checker and shape inference, then maps
// each node of the default domain to gopt ops (NCHW activations, OIHW
// filters). Every failure becomes one error naming the file, the node and the
// reason; ONNX's own exceptions are caught here and never escape.
//
//===----------------------------------------------------------------------===//

#include "FrameworkOps.h"
#include "ImportUtils.h"
#include "ImporterBase.h"
#include "OnnxLaterSchemas.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/TrainingAttrs.h"
#include "gopt/Import/Import.h"
#include "gopt/Shape/SamplingShapes.h"
#include "gopt/Shape/ShapeFunctions.h"
#include "gopt/Transforms/FoldValue.h"
#include "gopt/runtime/ImageDecode.h"
#include "gopt/runtime/LowPrecision.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <map>

namespace onnx::checker {
// Exported by libonnx (1.12) without a declaration in its header: the check
// of a model with the caller's context, whose schema registry gopt sets.
void check_model(const ModelProto &model, CheckerContext &ctx);
} // namespace onnx::checker

using namespace mlir;
using namespace gopt;
using namespace gopt::import;
namespace rt_image = gopt::runtime::image;

namespace {

/// The MLIR element type of an ONNX TensorProto data type, or null.
Type convertElementType(MLIRContext *ctx, int32_t type) {
  Builder b(ctx);
  switch (type) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::INT32:
    return b.getIntegerType(32);
  case onnx::TensorProto::INT64:
    return b.getIntegerType(64);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, /*isSigned=*/false);
  // Opset 19-21's types, by number: libonnx 1.12's enum lacks them.
  case kOnnxFloat8E4M3FN:
    return b.getFloat8E4M3FNType();
  case kOnnxFloat8E4M3FNUZ:
    return b.getFloat8E4M3FNUZType();
  case kOnnxFloat8E5M2:
    return b.getFloat8E5M2Type();
  case kOnnxFloat8E5M2FNUZ:
    return b.getFloat8E5M2FNUZType();
  case kOnnxUInt4:
    return b.getIntegerType(4, /*isSigned=*/false);
  case kOnnxInt4:
    return b.getIntegerType(4);
  default:
    return nullptr;
  }
}

std::string elementTypeName(int32_t type) {
  switch (type) {
  case kOnnxFloat8E4M3FN:
    return "float8e4m3fn";
  case kOnnxFloat8E4M3FNUZ:
    return "float8e4m3fnuz";
  case kOnnxFloat8E5M2:
    return "float8e5m2";
  case kOnnxFloat8E5M2FNUZ:
    return "float8e5m2fnuz";
  case kOnnxUInt4:
    return "uint4";
  case kOnnxInt4:
    return "int4";
  default:
    break;
  }
  if (!onnx::TensorProto_DataType_IsValid(type))
    return llvm::formatv("data type {0}", type).str();
  std::string name =
      onnx::TensorProto_DataType_Name(onnx::TensorProto_DataType(type));
  for (char &c : name)
    c = tolower(c);
  return name;
}

/// Whether `v` depends on the data of a graph input (not only its shape):
/// the runtime evaluates computed shapes from input shapes and constants
/// only, so such a target stays an import error.
bool dependsOnInputData(Value v) {
  SmallVector<Value> work{v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value next = work.pop_back_val();
    if (!seen.insert(next).second)
      continue;
    Operation *def = next.getDefiningOp();
    if (!def)
      return true;
    if (isa<ShapeOp>(def))
      continue;
    work.append(def->operand_begin(), def->operand_end());
  }
  return false;
}

/// Whether a computed Reshape target can fold to gopt.reshape as
/// symbolicShape reads it: every entry traces to a constant, to `x`'s own
/// dimension at its index (ONNX's 0, unless allowzero), or, for one entry
/// at most, to a value known only at run time. Otherwise the runtime
/// evaluates it (gopt.dynamic_reshape).
bool foldsToStaticTarget(Value shapeValue, Value x, bool allowZero) {
  std::optional<SmallVector<ShapeEntry>> entries =
      traceShapeEntries(shapeValue);
  if (!entries)
    return false;
  // An entry known only at run time and a literal -1 each leave one
  // dimension to the element count; gopt's reshape takes one.
  int runtimeOnly = 0;
  for (auto [i, e] : llvm::enumerate(*entries))
    if (e.source
            ? !(e.source == x && e.dim == static_cast<int64_t>(i) && !allowZero)
            : e.value == -1)
      ++runtimeOnly;
  return runtimeOnly <= 1;
}

class OnnxImporter : public ImporterBase<OnnxImporter> {
public:
  using ImporterBase::ImporterBase;

private:
  friend class ImporterBase<OnnxImporter>;
  OwningOpRef<ModuleOp> build(StringRef bytes);

  LogicalResult failNode(const Twine &reason) {
    nodeFailed = true;
    std::string who = node->name().empty()
                          ? llvm::formatv("#{0}", nodeIndex).str()
                          : "'" + node->name() + "'";
    return fail(llvm::formatv("node {0} ({1}, opset {2}): {3}", who,
                              node->op_type(), opset, reason.str()));
  }

  // --- tensors ------------------------------------------------------------
  LogicalResult decodeTensor(const onnx::TensorProto &t, StringRef what,
                             RankedTensorType &type, std::vector<char> &bytes);
  FailureOr<DenseElementsAttr> constantAttr(StringRef valueName);
  FailureOr<SmallVector<int64_t>> constantInts(StringRef valueName);
  FailureOr<double> constantScalar(StringRef valueName);
  bool isConstant(StringRef name) const { return constants.count(name); }

  // --- node helpers -------------------------------------------------------
  /// Operand `i`, or null when absent/empty.
  FailureOr<Value> input(int i);
  FailureOr<Value> requiredInput(int i);
  const onnx::AttributeProto *attr(StringRef name) const;
  int64_t intAttr(StringRef name, int64_t dflt) const;
  float floatAttr(StringRef name, float dflt) const;
  std::string stringAttr(StringRef name, StringRef dflt) const;
  std::optional<SmallVector<int64_t>> intsAttr(StringRef name) const;
  /// The `pads` attribute of a window over `n` spatial dims (zeros when
  /// absent) as gopt's (begin, end) pairs; fails the node when it does not
  /// have 2 * n values.
  FailureOr<SmallVector<int64_t>> pairedPadsAttr(size_t n);
  void setOutput(int i, Value v);

  LogicalResult importNode();
  /// importNode, and a node whose handler says success but left an output
  /// without a value (an op it built failed) fails, with one error.
  LogicalResult importNodeChecked();
  /// Set by failNode; the output a handler set to a null value.
  bool nodeFailed = false;
  std::string nullOutput;
  /// Before opset 7: succeeds where opset 7's definition of the node's op
  /// means the same for this node, so it imports as that; otherwise the
  /// error says why.
  LogicalResult checkLegacyNode();
  LogicalResult importLegacyPRelu();
  using NodeImporter = LogicalResult (*)(OnnxImporter &);
  LogicalResult importWindowed1D(NodeImporter import2D, int windowedInputs);
  LogicalResult importWithUnitSpatialDims(NodeImporter import,
                                          int windowedInputs, size_t rank);
  LogicalResult importPerChannelAs4D(NodeImporter import4D);
  LogicalResult windowAttrs(Value x, ArrayRef<int64_t> kernel,
                            ArrayRef<int64_t> dilations, StringAttr &padding,
                            DenseI64ArrayAttr &pads,
                            DenseI64ArrayAttr &strides);
  LogicalResult importConv();
  LogicalResult importConvTranspose();
  LogicalResult importPoolNode(bool isMax);
  LogicalResult importLpPool();
  LogicalResult importGlobalLpPool();
  LogicalResult importLpNormalization();
  mlir::Value lpPower(mlir::Value x, int64_t p);
  mlir::Value lpRoot(mlir::Value sums, int64_t p);
  LogicalResult importResize();
  SmallVector<int64_t> resizeAxes();
  LogicalResult expandResizeAxes(SmallVector<float> &scales,
                                 SmallVector<int64_t> &sizes,
                                 SmallVector<float> &roi);
  bool resizeAntialias();
  LogicalResult importDynamicResize(Value x, int scalesIndex, bool usesRoi);
  FailureOr<SmallVector<float>> constantFloats(StringRef valueName);
  FailureOr<SmallVector<int64_t>> symbolicShape(StringRef shapeName, Value x,
                                                StringRef what);
  LogicalResult importPool(bool isMax);
  LogicalResult importBatchNorm();
  LogicalResult importGemm();
  LogicalResult importClip();
  LogicalResult importReshape();
  LogicalResult importDynamicReshape(Value x, StringRef shapeName);
  bool foldsToInts(StringRef name);
  FailureOr<Value> valueOperand(int i, StringRef what, bool asI64 = true);
  FailureOr<Value> i64Range(int64_t count);
  LogicalResult reshapeFromDims(Value x, ArrayRef<int64_t> dims,
                                ArrayRef<int64_t> sources);
  /// x reshaped to `dims`, each either dimension `sources[i]` of x or (for
  /// -1) the literal dims[i]; null when an op failed to build.
  Value reshapedFromDims(Value x, ArrayRef<int64_t> dims,
                         ArrayRef<int64_t> sources);
  /// x with a unit dimension inserted at `axis` (insert) or its unit
  /// dimension `axis` dropped; null when an op failed to build.
  Value reshapedAxis(Value x, int64_t axis, bool insert);
  LogicalResult importSqueeze(bool unsqueeze);
  LogicalResult importDynamicConstantOfShape();
  LogicalResult importSoftmax(bool log);
  LogicalResult importSlice();
  LogicalResult importDynamicSlice(Value x);
  LogicalResult importDynamicSplit(Value x, int64_t axis);
  LogicalResult importPad();
  LogicalResult importReduce(StringRef kind);
  LogicalResult importConstant();
  LogicalResult importQuantization(bool dequantize);
  // Quantization gopt has no op for (zero points, uint8, integer and
  // quantized conv/matmul): float compositions that are exact, or refused.
  LogicalResult importAffineQuantization(bool dequantize);
  LogicalResult importDynamicQuantizeLinear();
  /// HannWindow, HammingWindow, BlackmanWindow: cosine sums over a range.
  LogicalResult importWindow(StringRef kind);
  LogicalResult importIntegerConvOrMatMul(bool conv, bool quantizedLinear);
  /// Imports the current node as a node of `opType` (same attributes) over
  /// `inputs`; `outputs` gets its results. For compositions that end in an
  /// op gopt imports already (Conv, MatMul).
  LogicalResult importAs(StringRef opType, ArrayRef<Value> inputs,
                         int numOutputs, SmallVectorImpl<Value> &outputs);
  /// `v` (a scale or zero point: a scalar or one value per `axis` entry) as
  /// f32, shaped to broadcast along `axis` of a rank-`rank` tensor.
  FailureOr<Value> broadcastAlong(Value v, int64_t axis, int64_t rank);
  /// `v` (opset 21's blocked scale or zero point: `shape` with dim `axis`
  /// ceil(shape[axis] / blockSize)) as f32 of `shape`, each entry repeated
  /// over its block.
  FailureOr<Value> expandBlocks(Value v, int64_t axis, int64_t blockSize,
                                ArrayRef<int64_t> shape);
  /// (f32(q) - f32(zeroPoint)) * scale; a null zeroPoint is 0. A non-zero
  /// blockSize: blocked along `axis`.
  FailureOr<Value> dequantizeAffine(Value q, Value scale, Value zeroPoint,
                                    int64_t axis, int64_t blockSize = 0);
  /// clamp(round(x / scale) + zeroPoint) as an integer `quantized`; for a
  /// float8 `quantized`, x / scale + zeroPoint cast to it (the cast rounds,
  /// saturating where `saturate`).
  FailureOr<Value> quantizeAffine(Value x, Value scale, Value zeroPoint,
                                  int64_t axis, Type quantized,
                                  int64_t blockSize = 0, bool saturate = true);
  LogicalResult importVariadic(StringRef kind);
  LogicalResult importPow();
  LogicalResult importShape();
  LogicalResult importGlobalAveragePool();
  LogicalResult importGlobalMaxPool();
  LogicalResult importLeakyRelu();
  LogicalResult importLayerNorm();
  LogicalResult importInstanceNorm();
  LogicalResult importGroupNorm();
  LogicalResult importGelu();
  LogicalResult importLrn();
  LogicalResult importMatMul();
  LogicalResult importFlatten();
  LogicalResult importTranspose();
  LogicalResult importConcat();
  LogicalResult importDropout();
  /// Every value name some node (in any subgraph) or a graph output reads.
  llvm::StringSet<> readNames;
  void collectReadNames(const onnx::GraphProto &graph);
  LogicalResult importCast();
  template <typename OpTy> LogicalResult importShapedBy();
  LogicalResult importArgReduce(bool max);
  LogicalResult importCumSum();
  LogicalResult importTopK();
  LogicalResult importRecurrent(int64_t gates);
  LogicalResult importScatter(bool elements);
  // Compositions and folds of ops gopt has no op for.
  LogicalResult setConstantOutput(int i, onnx::TensorProto tensor);
  LogicalResult importSplit();
  LogicalResult importSize();
  LogicalResult importConstantOfShape();
  LogicalResult importRange();
  LogicalResult importMean();
  LogicalResult importDepthToSpace(bool toSpace);
  LogicalResult importShrink();
  LogicalResult importHardmax();
  LogicalResult importCastLike();
  LogicalResult importTrilu();
  LogicalResult importNeg();
  LogicalResult importLoss(bool softmax);
  LogicalResult importOneHot();
  LogicalResult importUnique();
  LogicalResult importNonMaxSuppression();
  LogicalResult importEyeLike();
  LogicalResult importMeanVarianceNormalization();
  LogicalResult importReverseSequence();
  LogicalResult importEinsum();
  LogicalResult importRandom(StringRef kind);
  LogicalResult importMultinomial(Value logits, int64_t stream);
  LogicalResult importTfIdfVectorizer();
  Value uniformDraws(Value like, Type elementType, double low, double high,
                     int64_t stream);
  LogicalResult importDrawnDropout(Value x, double ratio, Value runtimeRatio,
                                   Value runtimeTraining);
  // Control flow.
  LogicalResult importIf();
  LogicalResult importLoop();
  LogicalResult importGraphInline(const onnx::GraphProto &graph,
                                  SmallVectorImpl<Value> &results);
  /// A graph's initializers as constants, and its nodes, in order.
  LogicalResult importInitializers(const onnx::GraphProto &graph);
  LogicalResult importNodes(const onnx::GraphProto &graph);
  /// The names `graph` (and the graphs nested in it) reads from enclosing
  /// scopes, in order of first use.
  SmallVector<std::string> freeNames(const onnx::GraphProto &graph);
  /// Imports `graph` as the body of `block`, whose arguments are first
  /// `argNames` (the graph's own inputs) and then `captureNames` (what it
  /// reads from outside but constants, which are copied in); values and
  /// constants defined inside do not leak out. `results` gets the outputs.
  LogicalResult
  importRegionBody(const onnx::GraphProto &graph, Block &block,
                   ArrayRef<std::string> argNames,
                   ArrayRef<std::string> captureNames,
                   SmallVectorImpl<Value> &results,
                   llvm::function_ref<LogicalResult()> prelude = nullptr);
  LogicalResult importScan();
  LogicalResult importBatchedScan();
  LogicalResult
  buildScan(const onnx::GraphProto &graph, ArrayRef<Value> states,
            ArrayRef<std::string> scanNames, SmallVector<int64_t> inAxes,
            ArrayRef<int64_t> inReverse, ArrayRef<int64_t> outAxes,
            ArrayRef<int64_t> outReverse, SmallVector<Value> &results);
  FailureOr<std::unique_ptr<Block>>
  createLoopBlock(ArrayRef<Value> carried, ArrayRef<std::string> captureNames,
                  SmallVectorImpl<Value> &captures);
  FailureOr<LoopOp> finishLoop(std::unique_ptr<Block> block,
                               OpBuilder::InsertPoint outside, Value trips,
                               Value cond, ArrayRef<Value> carried,
                               ArrayRef<Value> captures, ArrayRef<Value> yields,
                               int64_t rows, bool condInvariant);
  /// The outer value a subgraph reads by `name`, or an error naming it.
  FailureOr<Value> capturedValue(StringRef name);
  /// `v` as a rank-0 tensor (a [1] condition or trip count is reshaped).
  FailureOr<Value> asScalar(Value v, StringRef what);
  LogicalResult reshapeTo(Value x, ArrayRef<int64_t> dims);
  LogicalResult importGeneric(const FrameworkOp &entry);
  // Sampling and signal ops (GoptSamplingOps.td, GoptSignalOps.td).
  LogicalResult importMaxPoolWithIndices();
  LogicalResult importMaxUnpool();
  LogicalResult importCol2Im();
  LogicalResult importCenterCropPad();
  LogicalResult importAffineGrid();
  LogicalResult importDeformConv();
  LogicalResult importImageDecoder();
  LogicalResult importRoiAlign();
  LogicalResult importGridSample();
  LogicalResult importDft();
  LogicalResult importStft();
  LogicalResult importDynamicStft(Value signal, Value window, bool hasLength);
  LogicalResult importMelWeightMatrix();
  FailureOr<int64_t> constantIntScalar(int i, StringRef what);

  onnx::ModelProto model;
  int64_t opset = 0;
  const onnx::NodeProto *node = nullptr;
  int nodeIndex = 0;
  llvm::StringMap<Value> values;
  /// Outputs a node produces but gopt does not (Dropout's mask): the
  /// reason, reported only if something uses them.
  llvm::StringMap<std::string> unsupportedValues;
  llvm::StringMap<const onnx::TensorProto *> constants;
  std::deque<onnx::TensorProto> ownedTensors;
};

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

LogicalResult OnnxImporter::decodeTensor(const onnx::TensorProto &t,
                                         StringRef what, RankedTensorType &type,
                                         std::vector<char> &bytes) {
  Type elementType = convertElementType(ctx, t.data_type());
  if (!elementType)
    return fail(llvm::formatv("{0} has unsupported element type {1}", what,
                              elementTypeName(t.data_type())));
  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0)
      return fail(llvm::formatv("{0} has a negative dimension {1}", what, d));
    if (d > 0 && count > (int64_t(1) << 40) / d)
      return fail(llvm::formatv("{0} is too large", what));
    dims.push_back(d);
    count *= d;
  }
  type = RankedTensorType::get(dims, elementType);
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    return fail(
        llvm::formatv("{0} uses external data, which is not supported", what));
  size_t width = elementByteWidth(elementType);
  size_t need = count * width;
  // ONNX packs 4-bit tensors two to a byte, low nibble first (in raw_data,
  // and in int32_data one packed byte per entry); gopt holds a byte each.
  bool fourBit = elementType.isInteger(4);
  auto unpack = [&](const uint8_t *packed) {
    bytes.resize(count);
    gopt::runtime::unpackNibbles(packed, count,
                                 elementType.isSignlessInteger(4),
                                 reinterpret_cast<uint8_t *>(bytes.data()));
  };
  if (t.has_raw_data()) {
    size_t have = fourBit ? (count + 1) / 2 : need;
    if (t.raw_data().size() != have)
      return fail(llvm::formatv(
          "{0} has {1} bytes of data but dims {2} of {3} need {4}", what,
          t.raw_data().size(), formatShape(dims),
          elementTypeName(t.data_type()), have));
    if (fourBit)
      unpack(reinterpret_cast<const uint8_t *>(t.raw_data().data()));
    else
      bytes.assign(t.raw_data().begin(), t.raw_data().end());
    return success();
  }
  if (fourBit) {
    if (static_cast<size_t>(t.int32_data_size()) != size_t(count + 1) / 2)
      return fail(llvm::formatv(
          "{0} has {1} int32_data entries but dims {2} of {3} need {4} (two "
          "4-bit values in each)",
          what, t.int32_data_size(), formatShape(dims),
          elementTypeName(t.data_type()), (count + 1) / 2));
    std::vector<uint8_t> packed;
    for (int32_t v : t.int32_data())
      packed.push_back(static_cast<uint8_t>(v));
    unpack(packed.data());
    return success();
  }
  auto mismatch = [&](size_t have) {
    return fail(llvm::formatv("{0} has {1} values but dims {2} need {3}", what,
                              have, formatShape(dims), count));
  };
  bytes.resize(need);
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (static_cast<size_t>(t.float_data_size()) != size_t(count))
      return mismatch(t.float_data_size());
    memcpy(bytes.data(), t.float_data().data(), need);
    return success();
  case onnx::TensorProto::INT64:
    if (static_cast<size_t>(t.int64_data_size()) != size_t(count))
      return mismatch(t.int64_data_size());
    memcpy(bytes.data(), t.int64_data().data(), need);
    return success();
  case onnx::TensorProto::DOUBLE:
    if (static_cast<size_t>(t.double_data_size()) != size_t(count))
      return mismatch(t.double_data_size());
    memcpy(bytes.data(), t.double_data().data(), need);
    return success();
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    if (static_cast<size_t>(t.uint64_data_size()) != size_t(count))
      return mismatch(t.uint64_data_size());
    for (int64_t i = 0; i < count; ++i) {
      uint64_t v = t.uint64_data(i);
      memcpy(bytes.data() + i * width, &v, width); // little-endian low bytes
    }
    return success();
  default:
    // int32, int16, int8, uint16, uint8, bool, float16 and bfloat16 travel
    // in int32_data.
    if (static_cast<size_t>(t.int32_data_size()) != size_t(count))
      return mismatch(t.int32_data_size());
    for (int64_t i = 0; i < count; ++i) {
      int32_t v = t.int32_data(i);
      memcpy(bytes.data() + i * width, &v, width); // little-endian low bytes
    }
    return success();
  }
}

FailureOr<DenseElementsAttr> OnnxImporter::constantAttr(StringRef name) {
  auto it = constants.find(name);
  if (it == constants.end())
    return failNode(llvm::formatv("input '{0}' must be a constant", name));
  RankedTensorType type;
  std::vector<char> bytes;
  if (failed(decodeTensor(*it->second,
                          llvm::formatv("constant '{0}'", name).str(), type,
                          bytes))) {
    std::string reason = error;
    error.clear();
    return failNode(reason);
  }
  return denseElementsFromBytes(type, bytes);
}

FailureOr<SmallVector<int64_t>> OnnxImporter::constantInts(StringRef name) {
  // Integers computed in the graph from static shapes and constants are as
  // good as constants.
  if (!isConstant(name))
    if (std::optional<SmallVector<ShapeEntry>> entries =
            traceShapeEntries(values.lookup(name));
        entries && llvm::none_of(*entries, [](const ShapeEntry &e) {
          return bool(e.source);
        })) {
      SmallVector<int64_t> ints;
      for (const ShapeEntry &e : *entries)
        ints.push_back(e.value);
      return ints;
    }
  // Anything else the constant folder evaluates from constants and static
  // shapes (PyTorch's expand(-1, ...): Where(Equal(shape, -1), ...)).
  if (!isConstant(name))
    if (DenseElementsAttr folded = foldValue(values.lookup(name)))
      if (std::optional<SmallVector<int64_t>> ints = integerValues(folded))
        return *ints;
  FailureOr<DenseElementsAttr> attr = constantAttr(name);
  if (failed(attr))
    return failure();
  std::optional<SmallVector<int64_t>> ints = integerValues(*attr);
  if (!ints)
    return failNode(llvm::formatv("constant '{0}' must hold integers", name));
  return *ints;
}

FailureOr<double> OnnxImporter::constantScalar(StringRef name) {
  FailureOr<DenseElementsAttr> attr = constantAttr(name);
  if (failed(attr))
    return failure();
  if (attr->getNumElements() != 1)
    return failNode(llvm::formatv("constant '{0}' must be a scalar", name));
  if (isa<FloatType>(attr->getElementType())) {
    APFloat v = *attr->getValues<APFloat>().begin();
    bool lost;
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    return v.convertToDouble();
  }
  APInt v = *attr->getValues<APInt>().begin();
  return attr->getElementType().isUnsignedInteger()
             ? static_cast<double>(v.getZExtValue())
             : static_cast<double>(v.getSExtValue());
}

//===----------------------------------------------------------------------===//
// Node helpers
//===----------------------------------------------------------------------===//

FailureOr<Value> OnnxImporter::input(int i) {
  if (i >= node->input_size() || node->input(i).empty())
    return Value();
  const std::string &name = node->input(i);
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto bad = unsupportedValues.find(name);
  if (bad != unsupportedValues.end())
    return failNode(llvm::formatv("input '{0}' is {1}", name, bad->second));
  return failNode(llvm::formatv("input '{0}' is not defined", name));
}

FailureOr<Value> OnnxImporter::requiredInput(int i) {
  FailureOr<Value> v = input(i);
  if (succeeded(v) && !*v)
    return failNode(llvm::formatv("missing input #{0}", i));
  return v;
}

const onnx::AttributeProto *OnnxImporter::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : node->attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t OnnxImporter::intAttr(StringRef name, int64_t dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->i() : dflt;
}

float OnnxImporter::floatAttr(StringRef name, float dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->f() : dflt;
}

std::string OnnxImporter::stringAttr(StringRef name, StringRef dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->s() : dflt.str();
}

std::optional<SmallVector<int64_t>>
OnnxImporter::intsAttr(StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

/// ONNX lists pads as all begins, then all ends; gopt as (begin, end) per
/// dimension.
static SmallVector<int64_t> interleaveBeginsAndEnds(ArrayRef<int64_t> pads) {
  size_t n = pads.size() / 2;
  SmallVector<int64_t> paired;
  for (size_t i = 0; i < n; ++i)
    paired.append({pads[i], pads[n + i]});
  return paired;
}

FailureOr<SmallVector<int64_t>> OnnxImporter::pairedPadsAttr(size_t n) {
  SmallVector<int64_t> p =
      intsAttr("pads").value_or(SmallVector<int64_t>(2 * n, 0));
  if (p.size() != 2 * n)
    return failNode(llvm::formatv("'pads' must have {0} values", 2 * n));
  return interleaveBeginsAndEnds(p);
}

void OnnxImporter::setOutput(int i, Value v) {
  if (i >= node->output_size() || node->output(i).empty())
    return;
  if (!v) {
    if (nullOutput.empty())
      nullOutput = node->output(i);
    return;
  }
  values[node->output(i)] = v;
}

/// Whether `type` is one of ONNX's float8 or 4-bit types.
static bool isLowPrecision(Type type) {
  return type.isInteger(4) || type.isFloat8E4M3FN() ||
         type.isFloat8E4M3FNUZ() || type.isFloat8E5M2() ||
         type.isFloat8E5M2FNUZ();
}

/// Whether ONNX nodes of `opType` take float8 and 4-bit inputs: the gopt
/// ops they import as (ODS `onnxOpType`, `onnxRuleOpTypes`) admit them
/// (casts, Q/DQ, data movement, control flow). Every other op refuses them
/// here, before its import code, which assumes the types gopt computes in.
static bool readsLowPrecision(StringRef opType) {
  return llvm::is_contained(kOnnxLowPrecisionOps, opType);
}

/// kOnnxLowPrecisionOps for an error message: "A, B, ... and Z".
static std::string lowPrecisionOpList() {
  std::string list;
  size_t n = std::size(kOnnxLowPrecisionOps);
  for (size_t i = 0; i < n; ++i)
    list += std::string(i == 0       ? ""
                        : i + 1 == n ? " and "
                                     : ", ") +
            kOnnxLowPrecisionOps[i];
  return list;
}

LogicalResult OnnxImporter::importNodeChecked() {
  nodeFailed = false;
  nullOutput.clear();
  if (!readsLowPrecision(node->op_type()))
    for (const std::string &name : node->input()) {
      Value v = name.empty() ? Value() : values.lookup(name);
      if (v && isLowPrecision(getElementTypeOrSelf(v.getType()))) {
        std::string type;
        llvm::raw_string_ostream(type) << getElementTypeOrSelf(v.getType());
        return failNode(llvm::formatv(
            "input '{0}' has element type {1}, which {2} does not support "
            "(float8 and 4-bit values are read only by {3})",
            name, type, node->op_type(), lowPrecisionOpList()));
      }
    }
  if (failed(importNode()))
    return failure();
  if (nullOutput.empty())
    return success();
  if (nodeFailed) // its error is out already
    return failure();
  return failNode("output '" + nullOutput + "' could not be computed");
}

#define GET_OPTIONAL_INPUT(var, i) GOPT_IMPORT_VALUE(var, input(i))

/// Pow (opset >= 12) allows an exponent of another type; gopt's binary ops
/// share one element type, so the exponent is cast to the base's.
LogicalResult OnnxImporter::importPow() {
  GET_INPUT(lhs, 0);
  GET_INPUT(rhs, 1);
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  if (lhsType.getElementType() != rhsType.getElementType()) {
    auto cast = createTyped<CastOp>(
        b, loc, rhsType.clone(lhsType.getElementType()), rhs);
    if (!cast)
      return failOp();
    rhs = cast;
  }
  return setResult(createInferred<PowOp>(b, loc, lhs, rhs));
}

LogicalResult OnnxImporter::importVariadic(StringRef kind) {
  if (node->input_size() < 1)
    return failNode("needs at least one input");
  GET_INPUT(acc, 0);
  for (int i = 1; i < node->input_size(); ++i) {
    GET_INPUT(next, i);
    Operation *op;
    if (kind == "Sum")
      GOPT_INFER_ASSIGN(op, AddOp, acc, next);
    else if (kind == "Max")
      GOPT_INFER_ASSIGN(op, MaxOp, acc, next);
    else
      GOPT_INFER_ASSIGN(op, MinOp, acc, next);
    acc = op->getResult(0);
  }
  setOutput(0, acc);
  return success();
}

//===----------------------------------------------------------------------===//
// Windows: Conv, MaxPool, AveragePool
//===----------------------------------------------------------------------===//

/// The window attributes of a Conv or pool over [N, C, spatial...] with two
/// or three spatial dims (the kernel's length): gopt's padding mode, pads as
/// (before, after) per dim and strides.
LogicalResult OnnxImporter::windowAttrs(Value x, ArrayRef<int64_t> kernel,
                                        ArrayRef<int64_t> dilations,
                                        StringAttr &padding,
                                        DenseI64ArrayAttr &pads,
                                        DenseI64ArrayAttr &strides) {
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.size() != 4 && shape.size() != 5)
    return failNode(llvm::formatv("only 2-D and 3-D windows over rank-4 NCHW "
                                  "and rank-5 NCDHW input are supported "
                                  "(input {0})",
                                  formatShape(shape)));
  size_t n = shape.size() - 2;
  if (kernel.size() != n)
    return failNode(llvm::formatv("expects a {0}-D kernel, got {1}", n,
                                  formatShape(kernel)));
  if (dilations.size() != n)
    return failNode(llvm::formatv("'dilations' must have {0} values", n));
  SmallVector<int64_t> s =
      intsAttr("strides").value_or(SmallVector<int64_t>(n, 1));
  if (s.size() != n)
    return failNode(llvm::formatv("'strides' must have {0} values", n));
  strides = i64s(s);
  std::string autoPad = stringAttr("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    FailureOr<SmallVector<int64_t>> paired = pairedPadsAttr(n);
    if (failed(paired))
      return failure();
    padding = b.getStringAttr("EXPLICIT");
    pads = i64s(*paired);
    return success();
  }
  if (autoPad == "VALID") {
    padding = b.getStringAttr("VALID");
    return success();
  }
  if (autoPad == "SAME_UPPER") {
    // TensorFlow's SAME puts the odd pixel at the end, as SAME_UPPER does.
    padding = b.getStringAttr("SAME");
    return success();
  }
  if (autoPad == "SAME_LOWER") {
    SmallVector<int64_t, 6> p;
    for (size_t i = 0; i < n; ++i) {
      int64_t in = shape[2 + i];
      if (ShapedType::isDynamic(in))
        return failNode("auto_pad SAME_LOWER needs static spatial dimensions");
      int64_t out = (in + s[i] - 1) / s[i];
      int64_t total = std::max<int64_t>(
          (out - 1) * s[i] + (kernel[i] - 1) * dilations[i] + 1 - in, 0);
      p.push_back(total - total / 2);
      p.push_back(total / 2);
    }
    padding = b.getStringAttr("EXPLICIT");
    pads = i64s(p);
    return success();
  }
  return failNode(llvm::formatv("unknown auto_pad '{0}'", autoPad));
}

LogicalResult OnnxImporter::importConv() {
  GET_INPUT(x, 0);
  GET_INPUT(w, 1);
  GET_OPTIONAL_INPUT(bias, 2);
  ArrayRef<int64_t> wShape = shapeOf(w);
  if (wShape.size() != 4 && wShape.size() != 5)
    return failNode(llvm::formatv("only 2-D and 3-D convolution is supported "
                                  "(filter {0})",
                                  formatShape(wShape)));
  size_t n = wShape.size() - 2;
  SmallVector<int64_t> kernel =
      intsAttr("kernel_shape")
          .value_or(SmallVector<int64_t>(wShape.begin() + 2, wShape.end()));
  SmallVector<int64_t> dil =
      intsAttr("dilations").value_or(SmallVector<int64_t>(n, 1));
  StringAttr padding;
  DenseI64ArrayAttr pads, strides;
  if (failed(windowAttrs(x, kernel, dil, padding, pads, strides)))
    return failure();
  if (shapeOf(x).size() != wShape.size())
    return failNode(llvm::formatv("expects input {0} and weight {1} of one "
                                  "rank",
                                  formatShape(shapeOf(x)),
                                  formatShape(wShape)));
  IntegerAttr groups = b.getI64IntegerAttr(intAttr("group", 1));
  if (n == 3) {
    if (!pads)
      pads = i64s(SmallVector<int64_t>(6, 0));
    return setResult(createInferred<Conv3DOp>(
        b, loc, x, w, bias, strides, i64s(dil), padding, pads, groups));
  }
  return setResult(createInferred<Conv2DOp>(
      b, loc, x, w, bias, strides, i64s(dil), padding, pads, groups,
      b.getStringAttr("NCHW"), b.getStringAttr("OIHW"),
      b.getStringAttr("none")));
}

/// ConvTranspose: pads, output_padding, output_shape and auto_pad resolve
/// to explicit pads and output_padding here, so gopt.conv2d_transpose and
/// gopt.conv3d_transpose have one padding form: the total padding
/// output_shape (or SAME: in * stride) asks for is split as ONNX's spec
/// says, and output beyond the natural size is output_padding.
LogicalResult OnnxImporter::importConvTranspose() {
  GET_INPUT(x, 0);
  GET_INPUT(w, 1);
  GET_OPTIONAL_INPUT(bias, 2);
  ArrayRef<int64_t> xShape = shapeOf(x), wShape = shapeOf(w);
  if ((wShape.size() != 4 && wShape.size() != 5) ||
      xShape.size() != wShape.size())
    return failNode(llvm::formatv("only 2-D and 3-D transposed convolution "
                                  "over rank-4 NCHW and rank-5 NCDHW input is "
                                  "supported (input {0}, weight {1})",
                                  formatShape(xShape), formatShape(wShape)));
  size_t n = wShape.size() - 2;
  ArrayRef<int64_t> wKernel = wShape.drop_front(2);
  SmallVector<int64_t> kernel =
      intsAttr("kernel_shape").value_or(SmallVector<int64_t>(wKernel));
  if (ArrayRef<int64_t>(kernel) != wKernel)
    return failNode(llvm::formatv("'kernel_shape' {0} does not match the "
                                  "weight {1}",
                                  formatShape(kernel), formatShape(wShape)));
  auto listAttr = [&](StringRef name, int64_t dflt,
                      SmallVector<int64_t> &out) -> LogicalResult {
    out = intsAttr(name).value_or(SmallVector<int64_t>(n, dflt));
    if (out.size() != n)
      return failNode(llvm::formatv("'{0}' must have {1} values", name, n));
    return success();
  };
  SmallVector<int64_t> strides, dil, outPad;
  if (failed(listAttr("strides", 1, strides)) ||
      failed(listAttr("dilations", 1, dil)) ||
      failed(listAttr("output_padding", 0, outPad)))
    return failure();
  FailureOr<SmallVector<int64_t>> pairedPads = pairedPadsAttr(n);
  if (failed(pairedPads))
    return failure();
  SmallVector<int64_t> pads = *pairedPads;
  std::string autoPad = stringAttr("auto_pad", "NOTSET");
  std::optional<SmallVector<int64_t>> outShape = intsAttr("output_shape");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return failNode(llvm::formatv("unknown auto_pad '{0}'", autoPad));
  if (autoPad == "VALID")
    pads.assign(2 * n, 0);
  if (outShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    if (outShape && outShape->size() != n && outShape->size() != n + 2)
      return failNode(llvm::formatv("'output_shape' must have {0} values (the "
                                    "spatial dims)",
                                    n));
    for (size_t i = 0; i < n; ++i) {
      int64_t in = xShape[2 + i];
      if (ShapedType::isDynamic(in))
        return failNode("'output_shape' and auto_pad SAME need static "
                        "spatial dimensions");
      int64_t want =
          outShape ? (*outShape)[outShape->size() - n + i] : in * strides[i];
      int64_t natural =
          (in - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 + outPad[i];
      int64_t total = natural - want;
      if (total < 0) {
        // Rows beyond the full output: only the bias reaches them.
        pads[2 * i] = pads[2 * i + 1] = 0;
        outPad[i] -= total;
        continue;
      }
      // ONNX's rule: SAME_UPPER puts the odd pixel at the end.
      int64_t head = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[2 * i] = head;
      pads[2 * i + 1] = total - head;
    }
  }
  IntegerAttr groups = b.getI64IntegerAttr(intAttr("group", 1));
  if (n == 3)
    return setResult(createInferred<Conv3DTransposeOp>(
        b, loc, x, w, bias, i64s(strides), i64s(dil), i64s(pads), i64s(outPad),
        groups));
  return setResult(createInferred<Conv2DTransposeOp>(
      b, loc, x, w, bias, i64s(strides), i64s(dil), i64s(pads), i64s(outPad),
      groups, b.getStringAttr("NCHW"), b.getStringAttr("OIHW")));
}

FailureOr<SmallVector<float>> OnnxImporter::constantFloats(StringRef name) {
  FailureOr<DenseElementsAttr> attr = constantAttr(name);
  if (failed(attr))
    return failure();
  if (!isa<FloatType>(attr->getElementType()))
    return failNode(llvm::formatv("constant '{0}' must hold floats", name));
  SmallVector<float> values;
  for (APFloat v : attr->getValues<APFloat>()) {
    bool lost;
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(v.convertToFloat());
  }
  return values;
}

/// Resize (opsets 10, 11, 13) and Upsample (7, 9): H and W of a rank-4 NCHW
/// input; N and C must keep their size. Constant scales or sizes (or sizes
/// computed from shapes) become gopt.resize's attributes; values known only
/// at run time make a gopt.dynamic_resize.
LogicalResult OnnxImporter::importResize() {
  GET_INPUT(x, 0);
  ArrayRef<int64_t> xShape = shapeOf(x);
  if (xShape.size() != 4)
    return failNode(llvm::formatv("only rank-4 NCHW input is supported, got "
                                  "{0}",
                                  formatShape(xShape)));
  bool upsample = node->op_type() == "Upsample";
  auto inputName = [&](int i) -> StringRef {
    return i < node->input_size() ? StringRef(node->input(i)) : StringRef();
  };
  std::string mode = stringAttr("mode", "nearest");
  std::string ctm = "asymmetric", nearestMode = "floor";
  if (!upsample || opset >= 9) {
    // Sizes fold when constant or computed from shapes, N and C possibly
    // copied from the input's own (symbolicShape below).
    auto sizesFold = [&](StringRef name) {
      if (isConstant(name))
        return true;
      std::optional<SmallVector<ShapeEntry>> entries =
          traceShapeEntries(values.lookup(name));
      if (!entries)
        return false;
      for (auto [i, e] : llvm::enumerate(*entries))
        if (e.source && !(e.source == x && e.dim == int64_t(i) && i < 2))
          return false;
      return true;
    };
    bool onnx11 = !upsample && opset >= 11;
    int scalesIndex = onnx11 ? 2 : 1;
    StringRef scalesName = inputName(scalesIndex), sizesName = inputName(3);
    std::string ctmHere =
        onnx11 ? stringAttr("coordinate_transformation_mode", "half_pixel")
               : ctm;
    bool usesRoi = onnx11 && ctmHere == "tf_crop_and_resize";
    bool runtime =
        (!scalesName.empty() && !isConstant(scalesName)) ||
        (onnx11 && !sizesName.empty() && !sizesFold(sizesName)) ||
        (usesRoi && !inputName(1).empty() && !isConstant(inputName(1)));
    if (runtime) {
      if (opset >= 18 && (attr("axes") || stringAttr("keep_aspect_ratio_policy",
                                                     "stretch") != "stretch"))
        return failNode("'axes' or keep_aspect_ratio_policy with roi, scales "
                        "or sizes known only at run time is not supported");
      return importDynamicResize(x, scalesIndex, usesRoi);
    }
  }
  SmallVector<float> scales, roi;
  SmallVector<int64_t> sizes;
  if (upsample && opset < 9) {
    auto a = attr("scales");
    if (!a)
      return failNode("missing attribute 'scales'");
    scales.assign(a->floats().begin(), a->floats().end());
  } else if (upsample || opset < 11) {
    if (inputName(1).empty())
      return failNode("missing input #1 (scales)");
    FailureOr<SmallVector<float>> s = constantFloats(inputName(1));
    if (failed(s))
      return failure();
    scales = *s;
  } else {
    ctm = stringAttr("coordinate_transformation_mode", "half_pixel");
    nearestMode = stringAttr("nearest_mode", "round_prefer_floor");
    if (!inputName(3).empty()) {
      // Sizes may copy N and C from the input's shape (Shape -> Slice ->
      // Concat, as gopt's exporter writes a dynamic batch): 0 entries.
      bool computed = !isConstant(inputName(3));
      FailureOr<SmallVector<int64_t>> s =
          computed ? symbolicShape(inputName(3), x, "input #3 (sizes)")
                   : constantInts(inputName(3));
      if (failed(s))
        return failure();
      sizes = *s;
      for (int d = 0;
           computed && !attr("axes") && d < 2 && d < int(sizes.size()); ++d)
        if (sizes[d] == 0)
          sizes[d] = xShape[d];
    }
    if (!inputName(2).empty()) {
      FailureOr<SmallVector<float>> s = constantFloats(inputName(2));
      if (failed(s))
        return failure();
      scales = *s;
    }
    if (ctm == "tf_crop_and_resize") {
      if (inputName(1).empty())
        return failNode("coordinate_transformation_mode tf_crop_and_resize "
                        "needs input #1 (roi)");
      FailureOr<SmallVector<float>> r = constantFloats(inputName(1));
      if (failed(r))
        return failure();
      roi = *r;
    }
  }
  // Opset 11 passes an empty scales tensor along with sizes.
  if (!sizes.empty() && !scales.empty())
    return failNode("expects scales or sizes, not both");
  if (sizes.empty() && scales.empty())
    return failNode("expects constant scales or sizes");
  // Opset 18's coordinate scale where keep_aspect_ratio_policy rounds the
  // output of one scale (gopt.resize with both scales and sizes).
  std::optional<float> keptScale;
  if (!upsample && opset >= 18) {
    if (failed(expandResizeAxes(scales, sizes, roi)))
      return failure();
    std::string policy = stringAttr("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" &&
        policy != "not_smaller")
      return failNode(llvm::formatv("keep_aspect_ratio_policy must be "
                                    "\"stretch\", \"not_larger\" or "
                                    "\"not_smaller\", got \"{0}\"",
                                    policy));
    if (policy != "stretch" && !sizes.empty()) {
      // One scale for the resized axes (all four without 'axes'): the
      // smallest or largest of sizes / input, the sizes rounded from it.
      SmallVector<int64_t> axes = resizeAxes();
      double scale = 0;
      for (auto [i, d] : llvm::enumerate(axes)) {
        double factor = double(sizes[d]) / double(xShape[d]);
        if (i == 0 ||
            (policy == "not_larger" ? factor < scale : factor > scale))
          scale = factor;
      }
      for (int64_t d : axes)
        sizes[d] = static_cast<int64_t>(scale * double(xShape[d]) + 0.5);
      keptScale = static_cast<float>(scale);
    }
  }
  if (ctm == "half_pixel_symmetric" && opset < 19)
    return failNode("coordinate_transformation_mode half_pixel_symmetric "
                    "needs opset 19");
  if (!sizes.empty()) {
    if (sizes.size() != 4)
      return failNode(llvm::formatv("'sizes' must have 4 values, got {0}",
                                    formatShape(sizes)));
    for (int d = 0; d < 2; ++d)
      if (sizes[d] != xShape[d])
        return failNode(llvm::formatv(
            "only H and W can be resized (input {0}, sizes {1}); N and C "
            "must be static and keep their size",
            formatShape(xShape), formatShape(sizes)));
  } else {
    if (scales.size() != 4)
      return failNode(
          llvm::formatv("'scales' must have 4 values, got {0}", scales.size()));
    if (scales[0] != 1.0f || scales[1] != 1.0f)
      return failNode(llvm::formatv("only H and W can be resized; scales of N "
                                    "and C must be 1, got {0} and {1}",
                                    scales[0], scales[1]));
  }
  if (!roi.empty()) {
    if (roi.size() != 8)
      return failNode(
          llvm::formatv("'roi' must have 8 values, got {0}", roi.size()));
    if (roi[0] != 0 || roi[1] != 0 || roi[4] != 1 || roi[5] != 1)
      return failNode("only H and W can be cropped; roi of N and C must be "
                      "[0, 1]");
  }
  // Opset 10 rounds nearest down when upsampling and up when downsampling,
  // as ONNX Runtime does; gopt.resize has one rounding for both axes.
  if (!upsample && opset < 11 && mode == "nearest") {
    bool down[2] = {scales[2] < 1.0f, scales[3] < 1.0f};
    bool up[2] = {scales[2] > 1.0f, scales[3] > 1.0f};
    if ((down[0] && up[1]) || (up[0] && down[1]))
      return failNode("nearest Resize of opset 10 that upsamples one axis and "
                      "downsamples the other is not supported");
    if (down[0] || down[1])
      nearestMode = "ceil";
  }
  if (mode == "bilinear") // Upsample-7's name for linear
    mode = "linear";
  DenseF32ArrayAttr scalesAttr, roiAttr;
  DenseI64ArrayAttr sizesAttr;
  if (!scales.empty())
    scalesAttr = b.getDenseF32ArrayAttr({scales[2], scales[3]});
  else
    sizesAttr = i64s({sizes[2], sizes[3]});
  if (keptScale)
    scalesAttr = b.getDenseF32ArrayAttr({*keptScale, *keptScale});
  if (!roi.empty())
    roiAttr = b.getDenseF32ArrayAttr({roi[2], roi[3], roi[6], roi[7]});
  return setResult(createInferred<ResizeOp>(
      b, loc, x, scalesAttr, sizesAttr, roiAttr, b.getStringAttr(mode),
      b.getStringAttr(ctm), b.getStringAttr(nearestMode),
      b.getF32FloatAttr(floatAttr("cubic_coeff_a", -0.75f)),
      b.getBoolAttr(intAttr("exclude_outside", 0) != 0),
      b.getF32FloatAttr(floatAttr("extrapolation_value", 0.0f)),
      b.getStringAttr("NCHW"), b.getBoolAttr(resizeAntialias())));
}

/// Resize-18's axes, counted from 0 (all four without the attribute); an
/// empty list after a failNode when they are out of range or repeat.
SmallVector<int64_t> OnnxImporter::resizeAxes() {
  std::optional<SmallVector<int64_t>> given = intsAttr("axes");
  if (!given)
    return {0, 1, 2, 3};
  SmallVector<int64_t> axes;
  for (int64_t a : *given) {
    if (a < -4 || a >= 4 || llvm::is_contained(axes, a < 0 ? a + 4 : a)) {
      (void)failNode(llvm::formatv("'axes' must name distinct dims of a "
                                   "rank-4 input, got {0}",
                                   formatShape(*given)));
      return {};
    }
    axes.push_back(a < 0 ? a + 4 : a);
  }
  return axes;
}

/// Resize-18's scales, sizes and roi over the dims 'axes' names, widened to
/// all four: the others keep scale 1, their size, and roi [0, 1].
LogicalResult OnnxImporter::expandResizeAxes(SmallVector<float> &scales,
                                             SmallVector<int64_t> &sizes,
                                             SmallVector<float> &roi) {
  if (!attr("axes"))
    return success();
  SmallVector<int64_t> axes = resizeAxes();
  if (axes.empty())
    return failure();
  size_t n = axes.size();
  auto check = [&](size_t got, size_t want, StringRef what) {
    if (got == 0 || got == want)
      return success();
    return failNode(llvm::formatv("'{0}' must have {1} values (one per entry "
                                  "of 'axes'), got {2}",
                                  what, want, got));
  };
  if (failed(check(scales.size(), n, "scales")) ||
      failed(check(sizes.size(), n, "sizes")) ||
      failed(check(roi.size(), 2 * n, "roi")))
    return failure();
  ArrayRef<int64_t> xShape = shapeOf(values.lookup(node->input(0)));
  if (!scales.empty()) {
    SmallVector<float> all(4, 1.0f);
    for (auto [i, d] : llvm::enumerate(axes))
      all[d] = scales[i];
    scales = all;
  }
  if (!sizes.empty()) {
    SmallVector<int64_t> all(xShape);
    for (auto [i, d] : llvm::enumerate(axes))
      all[d] = sizes[i];
    sizes = all;
  }
  if (!roi.empty()) {
    SmallVector<float> all = {0, 0, 0, 0, 1, 1, 1, 1};
    for (auto [i, d] : llvm::enumerate(axes)) {
      all[d] = roi[i];
      all[4 + d] = roi[n + i];
    }
    roi = all;
  }
  return success();
}

/// Resize-18's antialias (linear and cubic downscaling).
bool OnnxImporter::resizeAntialias() {
  return node->op_type() == "Resize" && opset >= 18 &&
         intAttr("antialias", 0) != 0;
}

/// Resize or Upsample whose roi, scales or sizes are known only at run time:
/// gopt.dynamic_resize reads them on the host in ONNX's form (absent ones
/// empty) and runs as gopt.resize.
LogicalResult OnnxImporter::importDynamicResize(Value x, int scalesIndex,
                                                bool usesRoi) {
  bool upsample = node->op_type() == "Upsample";
  bool onnx11 = !upsample && opset >= 11;
  std::string mode = stringAttr("mode", "nearest");
  if (mode == "bilinear") // Upsample-7's name for linear
    mode = "linear";
  // Opset 10 rounds nearest by whether each scale down- or upsamples, which
  // gopt.resize's one nearest_mode cannot follow for unknown scales.
  if (!upsample && !onnx11 && mode == "nearest")
    return failNode("nearest Resize of opset 10 needs constant scales (its "
                    "rounding depends on them)");
  auto present = [&](int i) {
    return i >= 0 && i < node->input_size() && !node->input(i).empty();
  };
  auto emptyFloats = [&]() -> Value {
    auto type = RankedTensorType::get({0}, b.getF32Type());
    return b
        .create<ConstantOp>(loc,
                            DenseElementsAttr::get(type, ArrayRef<float>{}))
        .getResult();
  };
  auto emptyInts = [&]() -> Value {
    auto type = RankedTensorType::get({0}, b.getI64Type());
    return b
        .create<ConstantOp>(loc,
                            DenseElementsAttr::get(type, ArrayRef<int64_t>{}))
        .getResult();
  };
  auto floats = [&](int i, StringRef what) -> FailureOr<Value> {
    if (!present(i))
      return emptyFloats();
    FailureOr<Value> v = valueOperand(i, what, /*asI64=*/false);
    if (failed(v))
      return failure();
    if (!cast<RankedTensorType>(v->getType()).getElementType().isF32())
      return failNode(llvm::formatv("input '{0}' ({1}) must be f32, got {2}",
                                    node->input(i), what, v->getType()));
    return v;
  };
  if (usesRoi && !present(1))
    return failNode("coordinate_transformation_mode tf_crop_and_resize "
                    "needs input #1 (roi)");
  FailureOr<Value> roi =
      usesRoi ? floats(1, "roi") : FailureOr<Value>(emptyFloats());
  if (failed(roi))
    return failure();
  FailureOr<Value> scales = floats(scalesIndex, "scales");
  if (failed(scales))
    return failure();
  FailureOr<Value> sizes = onnx11 && present(3) ? valueOperand(3, "sizes")
                                                : FailureOr<Value>(emptyInts());
  if (failed(sizes))
    return failure();
  std::string ctm = "asymmetric", nearestMode = "floor";
  if (onnx11) {
    ctm = stringAttr("coordinate_transformation_mode", "half_pixel");
    nearestMode = stringAttr("nearest_mode", "round_prefer_floor");
  }
  if (ctm == "half_pixel_symmetric" && opset < 19)
    return failNode("coordinate_transformation_mode half_pixel_symmetric "
                    "needs opset 19");
  // N and C keep their size (the adapter checks); H and W follow the values.
  ArrayRef<int64_t> xShape = shapeOf(x);
  auto type = RankedTensorType::get(
      {xShape[0], xShape[1], ShapedType::kDynamic, ShapedType::kDynamic},
      cast<RankedTensorType>(x.getType()).getElementType());
  auto op = b.create<DynamicResizeOp>(
      loc, type, x, *roi, *scales, *sizes, b.getStringAttr(mode),
      b.getStringAttr(ctm), b.getStringAttr(nearestMode),
      b.getF32FloatAttr(floatAttr("cubic_coeff_a", -0.75f)),
      b.getBoolAttr(intAttr("exclude_outside", 0) != 0),
      b.getF32FloatAttr(floatAttr("extrapolation_value", 0.0f)),
      b.getStringAttr("NCHW"), b.getBoolAttr(resizeAntialias()));
  if (failed(mlir::verify(op))) {
    op->erase();
    return failOp();
  }
  return setResult(op);
}

/// MaxPool and AveragePool over [N, C, H, W] (gopt.max_pool, avg_pool) or
/// [N, C, D, H, W] (max_pool3d, avg_pool3d, which also take dilations;
/// importWindowedNode lifts dilated 1-D and 2-D pools to them).
LogicalResult OnnxImporter::importPool(bool isMax) {
  GET_INPUT(x, 0);
  std::optional<SmallVector<int64_t>> kernel = intsAttr("kernel_shape");
  if (!kernel)
    return failNode("missing attribute 'kernel_shape'");
  bool volume = shapeOf(x).size() == 5;
  SmallVector<int64_t> dil =
      intsAttr("dilations").value_or(SmallVector<int64_t>(kernel->size(), 1));
  StringAttr padding;
  DenseI64ArrayAttr pads, strides;
  if (failed(windowAttrs(x, *kernel, dil, padding, pads, strides)))
    return failure();
  // importPoolNode lifts dilated 2-D windows to 3-D ones.
  if (!volume && llvm::any_of(dil, [](int64_t d) { return d != 1; }))
    return failNode("dilated 2-D pooling is only imported as a 3-D pool");
  if (volume && !pads)
    pads = i64s(SmallVector<int64_t>(6, 0));
  BoolAttr ceil = b.getBoolAttr(intAttr("ceil_mode", 0) != 0);
  BoolAttr includePad = b.getBoolAttr(intAttr("count_include_pad", 0) != 0);
  Operation *op;
  if (isMax) {
    if (volume)
      GOPT_INFER_ASSIGN(op, MaxPool3DOp, x, i64s(*kernel), strides, i64s(dil),
                        padding, pads, ceil);
    else
      GOPT_INFER_ASSIGN(op, MaxPoolOp, x, i64s(*kernel), strides, padding, pads,
                        b.getStringAttr("NCHW"), ceil);
  } else if (volume) {
    GOPT_INFER_ASSIGN(op, AvgPool3DOp, x, i64s(*kernel), strides, i64s(dil),
                      padding, pads, ceil, includePad);
  } else {
    GOPT_INFER_ASSIGN(op, AvgPoolOp, x, i64s(*kernel), strides, padding, pads,
                      b.getStringAttr("NCHW"), ceil, includePad);
  }
  return setResult(op);
}

//===----------------------------------------------------------------------===//
// Other nodes with attributes
//===----------------------------------------------------------------------===//

LogicalResult OnnxImporter::importBatchNorm() {
  GET_INPUT(x, 0);
  GET_INPUT(scale, 1);
  GET_INPUT(bias, 2);
  GET_INPUT(mean, 3);
  GET_INPUT(var, 4);
  size_t rank = shapeOf(x).size();
  if (rank != 4 && rank != 2)
    return failNode(llvm::formatv(
        "only rank-2 and rank-4 (NCHW) inputs are supported, got {0}",
        formatShape(shapeOf(x))));
  bool training = intAttr("training_mode", 0) != 0;
  if (opset < 9 && intAttr("spatial", 1) != 1)
    return failNode("spatial = 0 is not supported");
  int usedOutputs = 0;
  for (int i = 1; i < node->output_size(); ++i)
    usedOutputs += !node->output(i).empty();
  if (usedOutputs && !training)
    return failNode("batch statistics outputs are only supported with "
                    "training_mode = 1");
  GOPT_INFER(op, BatchNormOp, x, scale, bias, mean, var,
             b.getF32FloatAttr(floatAttr("epsilon", 1e-5f)),
             b.getStringAttr("NCHW"), b.getBoolAttr(training),
             b.getF32FloatAttr(floatAttr("momentum", 0.9f)),
             b.getBoolAttr(false));
  setOutput(0, op->getResult(0));
  // ONNX's training outputs are the running mean and variance. The mean is
  // gopt's 4th result; ONNX updates the variance with the biased batch
  // variance (gopt's, like PyTorch's and TF's, uses the unbiased one), so it
  // is computed here from the biased batch variance (the 3rd result):
  // momentum * var + (1 - momentum) * batch_var.
  if (training) {
    setOutput(1, op->getResult(3));
    Type et = cast<RankedTensorType>(var.getType()).getElementType();
    float momentum = floatAttr("momentum", 0.9f);
    GOPT_INFER(keep, MulOp, var, createScalarConstant(b, loc, et, momentum));
    GOPT_INFER(fresh, MulOp, op->getResult(2),
               createScalarConstant(b, loc, et, 1.0f - momentum));
    GOPT_INFER(running, AddOp, keep, fresh);
    setOutput(2, running);
  }
  return success();
}

LogicalResult OnnxImporter::importGemm() {
  GET_INPUT(a, 0);
  GET_INPUT(w, 1);
  GET_OPTIONAL_INPUT(c, 2);
  GOPT_INFER(mm, MatMulOp, a, w, b.getBoolAttr(intAttr("transA", 0) != 0),
             b.getBoolAttr(intAttr("transB", 0) != 0));
  Value y = mm;
  Type et = cast<RankedTensorType>(y.getType()).getElementType();
  float alpha = floatAttr("alpha", 1.0f), beta = floatAttr("beta", 1.0f);
  if (alpha != 1.0f) {
    GOPT_INFER(op, MulOp, y, createScalarConstant(b, loc, et, alpha));
    y = op;
  }
  if (c && beta != 0.0f) {
    if (beta != 1.0f) {
      GOPT_INFER(op, MulOp, c, createScalarConstant(b, loc, et, beta));
      c = op;
    }
    GOPT_INFER(op, AddOp, y, c);
    y = op;
  }
  setOutput(0, y);
  return success();
}

/// QuantizeLinear / DequantizeLinear in the symmetric int8 form gopt
/// computes (an int8 zero point of 0): gopt.quantize / gopt.dequantize. The
/// scale must be a constant (a scalar: per tensor; 1-D: per `axis`).
LogicalResult OnnxImporter::importAs(StringRef opType, ArrayRef<Value> inputs,
                                     int numOutputs,
                                     SmallVectorImpl<Value> &outputs) {
  onnx::NodeProto synthetic = *node;
  synthetic.set_op_type(opType.str());
  synthetic.clear_input();
  synthetic.clear_output();
  // Names no ONNX value has (they start with a control character).
  std::string prefix = "\x01" + std::to_string(nodeIndex) + "/" +
                       node->op_type() + "/" + opType.str() + "/";
  for (auto [i, v] : llvm::enumerate(inputs)) {
    if (!v) {
      synthetic.add_input("");
      continue;
    }
    std::string name = prefix + "in" + std::to_string(i);
    values[name] = v;
    synthetic.add_input(name);
  }
  for (int i = 0; i < numOutputs; ++i)
    synthetic.add_output(prefix + "out" + std::to_string(i));
  const onnx::NodeProto *outer = node;
  node = &synthetic;
  LogicalResult imported = importNodeChecked();
  node = outer;
  if (failed(imported))
    return failure();
  for (const std::string &name : synthetic.output())
    outputs.push_back(values.lookup(name));
  return success();
}

FailureOr<Value> OnnxImporter::broadcastAlong(Value v, int64_t axis,
                                              int64_t rank) {
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.getElementType().isF32())
    v = createTyped<CastOp>(b, loc, type.clone(b.getF32Type()), v);
  if (!v)
    return failOp();
  if (type.getRank() == 0 || rank <= 1)
    return v;
  // One value in any shape ([1, 1] in QLinearMatMul's tests) is a scalar.
  if (type.hasStaticShape() && type.getNumElements() == 1) {
    Value scalar = createTyped<ReshapeOp>(
        b, loc, RankedTensorType::get({}, b.getF32Type()), v, i64s({}));
    if (!scalar)
      return failOp();
    return scalar;
  }
  if (type.getRank() != 1 || ShapedType::isDynamic(type.getDimSize(0)))
    return failNode(llvm::formatv("a scale or zero point must be a scalar or "
                                  "1-D, got {0}",
                                  type));
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return failNode(llvm::formatv("axis {0} is out of range", axis));
  SmallVector<int64_t> dims(rank, 1);
  dims[axis] = type.getDimSize(0);
  Value shaped = createTyped<ReshapeOp>(
      b, loc, RankedTensorType::get(dims, b.getF32Type()), v, i64s(dims));
  if (!shaped)
    return failOp();
  return shaped;
}

FailureOr<Value> OnnxImporter::expandBlocks(Value v, int64_t axis,
                                            int64_t blockSize,
                                            ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t rank = shape.size();
  if (axis < -rank || axis >= rank)
    return failNode(
        llvm::formatv("axis {0} is out of range for rank {1}", axis, rank));
  if (axis < 0)
    axis += rank;
  if (ShapedType::isDynamic(shape[axis]))
    return failNode("blocked quantization needs a static size along 'axis'");
  SmallVector<int64_t> want(shape);
  want[axis] = (shape[axis] + blockSize - 1) / blockSize;
  bool matches = type.getRank() == rank;
  for (int64_t d = 0; matches && d < rank; ++d)
    matches = type.getDimSize(d) == want[d] ||
              (d != axis && ShapedType::isDynamic(want[d]));
  if (!matches)
    return failNode(llvm::formatv(
        "a blocked scale or zero point (block_size {0} along axis {1}) must "
        "have shape {2}, got {3}",
        blockSize, axis, formatShape(want), formatShape(type.getShape())));
  if (!type.getElementType().isF32())
    v = createTyped<CastOp>(b, loc, type.clone(b.getF32Type()), v);
  if (!v)
    return failOp();
  // Entry i of the input along `axis` reads block i / blockSize.
  SmallVector<int64_t> blockOf;
  for (int64_t i = 0; i < shape[axis]; ++i)
    blockOf.push_back(i / blockSize);
  auto indexType = RankedTensorType::get({shape[axis]}, b.getI64Type());
  Value indices = b.create<ConstantOp>(
      loc, DenseIntElementsAttr::get(indexType, ArrayRef<int64_t>(blockOf)));
  GOPT_INFER_VALUE(expanded, GatherOp, v, indices, b.getI64IntegerAttr(axis));
  if (!expanded)
    return failOp();
  return expanded;
}

FailureOr<Value> OnnxImporter::dequantizeAffine(Value q, Value scale,
                                                Value zeroPoint, int64_t axis,
                                                int64_t blockSize) {
  auto type = cast<RankedTensorType>(q.getType());
  int64_t rank = type.getRank();
  auto along = [&](Value v) {
    return blockSize ? expandBlocks(v, axis, blockSize, type.getShape())
                     : broadcastAlong(v, axis, rank);
  };
  Value x = createTyped<CastOp>(b, loc, type.clone(b.getF32Type()), q);
  FailureOr<Value> s = along(scale);
  if (!x || failed(s))
    return failure();
  if (zeroPoint) {
    FailureOr<Value> z = along(zeroPoint);
    if (failed(z))
      return failure();
    GOPT_INFER_ASSIGN(x, SubOp, x, *z);
  }
  GOPT_INFER_VALUE(y, MulOp, x, *s);
  return y;
}

/// The range of an integer type as floats (uint8: 0..255).
static std::pair<double, double> integerRange(Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  if (type.isUnsignedInteger())
    return {0.0, std::ldexp(1.0, bits) - 1};
  return {-std::ldexp(1.0, bits - 1), std::ldexp(1.0, bits - 1) - 1};
}

FailureOr<Value> OnnxImporter::quantizeAffine(Value x, Value scale,
                                              Value zeroPoint, int64_t axis,
                                              Type quantized, int64_t blockSize,
                                              bool saturate) {
  // ONNX's float8 quantization has no integer rounding step or clamp: the
  // cast itself rounds to nearest even and saturates.
  bool toFloat8 = isa<FloatType>(quantized);
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  auto along = [&](Value v) {
    return blockSize ? expandBlocks(v, axis, blockSize, type.getShape())
                     : broadcastAlong(v, axis, rank);
  };
  FailureOr<Value> s = along(scale);
  if (failed(s))
    return failure();
  if (!type.getElementType().isF32())
    x = createTyped<CastOp>(b, loc, type.clone(b.getF32Type()), x);
  if (!x)
    return failOp();
  GOPT_INFER_VALUE(y, DivOp, x, *s);
  if (!toFloat8)
    GOPT_INFER_ASSIGN(y, RoundOp, y);
  if (zeroPoint) {
    FailureOr<Value> z = along(zeroPoint);
    if (failed(z))
      return failure();
    GOPT_INFER_ASSIGN(y, AddOp, y, *z);
  }
  if (!toFloat8) {
    auto [lo, hi] = integerRange(quantized);
    GOPT_INFER_ASSIGN(y, MaxOp, y,
                      createScalarConstant(b, loc, b.getF32Type(), lo));
    GOPT_INFER_ASSIGN(y, MinOp, y,
                      createScalarConstant(b, loc, b.getF32Type(), hi));
  }
  if (!y)
    return failOp();
  auto resultType = cast<RankedTensorType>(y.getType()).clone(quantized);
  y = toFloat8 ? createTyped<CastOp>(b, loc, resultType, y, saturate)
               : createTyped<CastOp>(b, loc, resultType, y);
  if (!y)
    return failOp();
  return y;
}

/// QuantizeLinear/DequantizeLinear with zero points or an unsigned type:
/// ONNX's definition written with gopt's elementwise ops. gopt's own
/// quantize/dequantize (symmetric int8, what --gopt-quantize emits) stay
/// for the symmetric form.
LogicalResult OnnxImporter::importAffineQuantization(bool dequantize) {
  GET_INPUT(x, 0);
  GET_INPUT(scale, 1);
  GET_OPTIONAL_INPUT(zeroPoint, 2);
  int64_t axis = intAttr("axis", 1);
  int64_t blockSize = opset >= 21 ? intAttr("block_size", 0) : 0;
  if (blockSize < 0)
    return failNode(
        llvm::formatv("block_size must be positive, got {0}", blockSize));
  if (cast<RankedTensorType>(scale.getType()).getRank() == 0 && !blockSize)
    axis = 0;
  if (dequantize) {
    Type in = getElementTypeOrSelf(x.getType());
    if (!in.isInteger(8) && !in.isSignlessInteger(32) && !in.isInteger(4) &&
        !isLowPrecision(in))
      return failNode(llvm::formatv("dequantizes {0}; expected int8, uint8, "
                                    "int32, int4, uint4 or a float8 type",
                                    in));
    FailureOr<Value> y = dequantizeAffine(x, scale, zeroPoint, axis, blockSize);
    if (failed(y))
      return failure();
    // The result has the scale's type (f16 scales in f16 models).
    Type scaleType = getElementTypeOrSelf(scale.getType());
    Value result = *y;
    if (!scaleType.isF32())
      result = createTyped<CastOp>(
          b, loc, cast<RankedTensorType>(result.getType()).clone(scaleType),
          result);
    if (!result)
      return failOp();
    setOutput(0, result);
    return success();
  }
  // Without a zero point ONNX quantizes to uint8, or (opset 21) to
  // output_dtype.
  Type quantized = zeroPoint ? getElementTypeOrSelf(zeroPoint.getType())
                             : b.getIntegerType(8, /*isSigned=*/false);
  if (int64_t dtype = opset >= 21 ? intAttr("output_dtype", 0) : 0) {
    Type wanted = convertElementType(ctx, dtype);
    if (!wanted || !(wanted.isInteger(8) || isLowPrecision(wanted)))
      return failNode(llvm::formatv(
          "output_dtype {0} is not supported (int8, uint8, int4, uint4 or a "
          "float8 type; 16-bit quantized types are not)",
          elementTypeName(dtype)));
    if (zeroPoint && wanted != quantized)
      return failNode(llvm::formatv("output_dtype {0} differs from the zero "
                                    "point's type {1}",
                                    wanted, quantized));
    quantized = wanted;
  }
  if (!quantized.isInteger(8) && !isLowPrecision(quantized))
    return failNode(llvm::formatv("quantizes to {0}; expected int8, uint8, "
                                  "int4, uint4 or a float8 type",
                                  quantized));
  FailureOr<Value> y = quantizeAffine(x, scale, zeroPoint, axis, quantized,
                                      blockSize, intAttr("saturate", 1) != 0);
  if (failed(y))
    return failure();
  setOutput(0, *y);
  return success();
}

/// DynamicQuantizeLinear: uint8 with a scale and zero point from the
/// input's range (which always includes 0), as ONNX's function computes.
LogicalResult OnnxImporter::importDynamicQuantizeLinear() {
  GET_INPUT(x, 0);
  auto type = cast<RankedTensorType>(x.getType());
  if (!type.getElementType().isF32())
    return failNode("expects an f32 input");
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  Type f32 = b.getF32Type();
  Value zero = createScalarConstant(b, loc, f32, 0.0);
  GOPT_INFER_VALUE(lo, ReduceMinOp, x, i64s(all), b.getBoolAttr(false));
  GOPT_INFER_VALUE(hi, ReduceMaxOp, x, i64s(all), b.getBoolAttr(false));
  GOPT_INFER_ASSIGN(lo, MinOp, lo, zero);
  GOPT_INFER_ASSIGN(hi, MaxOp, hi, zero);
  GOPT_INFER_VALUE(scale, SubOp, hi, lo);
  GOPT_INFER_ASSIGN(scale, DivOp, scale,
                    createScalarConstant(b, loc, f32, 255.0));
  // zero point = saturate(round(-min / scale)) in [0, 255].
  Type u8 = b.getIntegerType(8, /*isSigned=*/false);
  GOPT_INFER_VALUE(negLo, NegOp, lo);
  FailureOr<Value> zeroPoint = quantizeAffine(negLo, scale, Value(), 0, u8);
  if (failed(zeroPoint))
    return failure();
  FailureOr<Value> y = quantizeAffine(x, scale, *zeroPoint, 0, u8);
  if (failed(y))
    return failure();
  setOutput(0, *y);
  setOutput(1, scale);
  setOutput(2, *zeroPoint);
  return success();
}

/// ConvInteger/MatMulInteger (int32 results) and QLinearConv/QLinearMatMul
/// (quantized results): the integer products are summed in f32, which is
/// exact while every partial sum stays below 2^24; the importer checks that
/// bound from the reduction length and the operand types, and refuses a
/// node that could exceed it. QLinear* then scale by x_scale * w_scale /
/// y_scale and quantize, as ONNX's reference does.
LogicalResult OnnxImporter::importIntegerConvOrMatMul(bool conv,
                                                      bool quantizedLinear) {
  // Operand positions: ConvInteger/MatMulInteger (x, w, x_zp, w_zp);
  // QLinear* (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, bias]).
  int xi = 0, wi = quantizedLinear ? 3 : 1;
  int xzpi = quantizedLinear ? 2 : 2, wzpi = quantizedLinear ? 5 : 3;
  GET_INPUT(x, xi);
  GET_INPUT(w, wi);
  FailureOr<Value> xzp = input(xzpi), wzp = input(wzpi);
  if (failed(xzp) || failed(wzp))
    return failure();
  Type xt = getElementTypeOrSelf(x.getType()),
       wt = getElementTypeOrSelf(w.getType());
  if (!xt.isInteger(8) || !wt.isInteger(8))
    return failNode(llvm::formatv("expects int8 or uint8 operands, got {0} "
                                  "and {1}",
                                  xt, wt));
  ArrayRef<int64_t> wShape = shapeOf(w);
  int64_t xRank = shapeOf(x).size(), wRank = wShape.size();
  if (conv ? (wRank < 3 || xRank != wRank) : (wRank < 2 || xRank < 2))
    return failNode(llvm::formatv("expects {0}, got x {1} and w {2}",
                                  conv ? "x and w of the same rank, at least 3"
                                       : "x and w of rank at least 2",
                                  x.getType(), w.getType()));
  int64_t reduced = 1;
  if (conv) {
    for (int64_t d : wShape.drop_front())
      reduced = ShapedType::isDynamic(d) || ShapedType::isDynamic(reduced)
                    ? ShapedType::kDynamic
                    : reduced * d;
  } else {
    reduced =
        wShape.size() >= 2 ? wShape[wShape.size() - 2] : ShapedType::kDynamic;
  }
  // Each product of (x - x_zp)(w - w_zp) is at most 255 * 255 in magnitude.
  constexpr double kExact = 16777216.0; // 2^24
  if (ShapedType::isDynamic(reduced) || reduced * 65025.0 >= kExact)
    return failNode(llvm::formatv(
        "sums {0} products per output; gopt computes integer convolutions "
        "and matmuls in f32, which is exact only up to {1} products of 8-bit "
        "values",
        ShapedType::isDynamic(reduced) ? std::string("a dynamic number of")
                                       : std::to_string(reduced),
        static_cast<int64_t>(kExact / 65025.0)));
  // Zero points: x's per tensor (MatMulInteger: per row, axis 0 of a 2-D
  // x), w's per output channel (axis 0 of the filter, or the last axis of
  // a matmul's right operand).
  FailureOr<Value> xs =
      dequantizeAffine(x, createScalarConstant(b, loc, b.getF32Type(), 1.0),
                       *xzp, conv ? 1 : xRank - 2);
  FailureOr<Value> ws =
      dequantizeAffine(w, createScalarConstant(b, loc, b.getF32Type(), 1.0),
                       *wzp, conv ? 0 : wRank - 1);
  if (failed(xs) || failed(ws))
    return failure();
  SmallVector<Value> operands = {*xs, *ws};
  if (conv && quantizedLinear) {
    FailureOr<Value> bias = input(8);
    if (failed(bias))
      return failure();
    if (*bias) {
      auto biasType = cast<RankedTensorType>(bias->getType());
      Value f =
          createTyped<CastOp>(b, loc, biasType.clone(b.getF32Type()), *bias);
      if (!f)
        return failOp();
      operands.push_back(f);
    }
  }
  SmallVector<Value> results;
  if (failed(importAs(conv ? "Conv" : "MatMul", operands, 1, results)))
    return failure();
  Value acc = results[0];
  auto accType = cast<RankedTensorType>(acc.getType());
  if (!quantizedLinear) {
    Value y =
        createTyped<CastOp>(b, loc, accType.clone(b.getIntegerType(32)), acc);
    setOutput(0, y);
    return success();
  }
  GET_INPUT(xScale, 1);
  GET_INPUT(wScale, 4);
  GET_INPUT(yScale, 6);
  GET_OPTIONAL_INPUT(yzp, 7);
  int64_t rank = accType.getRank();
  int64_t channelAxis = conv ? 1 : rank - 1;
  FailureOr<Value> xsf = broadcastAlong(xScale, 0, rank);
  FailureOr<Value> wsf = broadcastAlong(wScale, channelAxis, rank);
  FailureOr<Value> ysf = broadcastAlong(yScale, 0, rank);
  if (failed(xsf) || failed(wsf) || failed(ysf))
    return failure();
  GOPT_INFER_VALUE(multiplier, MulOp, *xsf, *wsf);
  GOPT_INFER_VALUE(scaled, MulOp, acc, multiplier);
  Type quantized = yzp ? getElementTypeOrSelf(yzp.getType())
                       : b.getIntegerType(8, /*isSigned=*/false);
  FailureOr<Value> y = quantizeAffine(scaled, *ysf, yzp, 0, quantized);
  if (failed(y))
    return failure();
  setOutput(0, *y);
  return success();
}

/// The windows of ONNX's signal ops, as their definitions write them:
/// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), n in [0, size), N =
/// size when `periodic`, else size - 1 (a size known only at run time is a
/// dynamic range).
LogicalResult OnnxImporter::importWindow(StringRef kind) {
  GET_INPUT(size, 0);
  auto sizeType = cast<RankedTensorType>(size.getType());
  if (sizeType.getRank() != 0 || !sizeType.getElementType().isSignlessInteger())
    return failNode(
        llvm::formatv("expects a scalar integer size, got {0}", sizeType));
  double a0 = 0.5, a1 = 0.5, a2 = 0.0;
  if (kind == "HammingWindow") {
    a0 = 25.0 / 46.0;
    a1 = 1.0 - a0;
  } else if (kind == "BlackmanWindow") {
    a0 = 0.42;
    a2 = 0.08;
  }
  Type intType = sizeType.getElementType();
  auto scalar = [&](double v) {
    return createScalarConstant(b, loc, intType, v);
  };
  SmallVector<Value> positions;
  if (failed(importAs("Range", {scalar(0), size, scalar(1)}, 1, positions)))
    return failure();
  Type f32 = b.getF32Type();
  auto n = createTyped<CastOp>(
      b, loc, cast<RankedTensorType>(positions[0].getType()).clone(f32),
      positions[0]);
  Value count = createTyped<CastOp>(b, loc, sizeType.clone(f32), size);
  if (!n || !count)
    return failOp();
  if (intAttr("periodic", 1) == 0)
    GOPT_INFER_ASSIGN(count, SubOp, count,
                      createScalarConstant(b, loc, f32, 1.0));
  GOPT_INFER_VALUE(turns, MulOp, n,
                   createScalarConstant(b, loc, f32, 2 * M_PI));
  GOPT_INFER_VALUE(angle, DivOp, turns, count);
  GOPT_INFER_VALUE(cosine, CosOp, angle);
  GOPT_INFER_VALUE(first, MulOp, cosine, createScalarConstant(b, loc, f32, a1));
  GOPT_INFER_VALUE(w, SubOp, createScalarConstant(b, loc, f32, a0), first);
  if (a2 != 0.0) {
    GOPT_INFER_VALUE(twice, MulOp, angle,
                     createScalarConstant(b, loc, f32, 2.0));
    GOPT_INFER_VALUE(cosine2, CosOp, twice);
    GOPT_INFER_VALUE(second, MulOp, cosine2,
                     createScalarConstant(b, loc, f32, a2));
    GOPT_INFER_ASSIGN(w, AddOp, w, second);
  }
  int64_t target = intAttr("output_datatype", onnx::TensorProto::FLOAT);
  Type out = convertElementType(ctx, static_cast<int>(target));
  if (!out)
    return failNode(llvm::formatv("unsupported output_datatype {0}", target));
  if (out != f32) {
    w = createTyped<CastOp>(b, loc,
                            cast<RankedTensorType>(w.getType()).clone(out), w);
  }
  setOutput(0, w);
  return success();
}

LogicalResult OnnxImporter::importQuantization(bool dequantize) {
  GET_INPUT(x, 0);
  if (node->input_size() < 2 || node->input(1).empty())
    return failNode("missing the scale (input 1)");
  // Opset 21's blocked scales and output_dtype: ONNX's definition as a
  // composition.
  if (opset >= 21 &&
      (intAttr("block_size", 0) != 0 || intAttr("output_dtype", 0) != 0))
    return importAffineQuantization(dequantize);
  // gopt's quantize/dequantize are symmetric int8 with constant scales
  // (the form --gopt-quantize writes and the int8 kernels fuse); anything
  // else is ONNX's affine definition as a composition. Without a zero
  // point ONNX quantizes to uint8.
  bool hasZeroPoint = node->input_size() > 2 && !node->input(2).empty();
  bool symmetric = hasZeroPoint || dequantize;
  if (hasZeroPoint) {
    symmetric = isConstant(node->input(2));
    if (symmetric) {
      FailureOr<DenseElementsAttr> zero = constantAttr(node->input(2));
      if (failed(zero))
        return failure();
      symmetric = zero->getElementType().isSignlessInteger(8) &&
                  llvm::all_of(zero->getValues<APInt>(),
                               [](const APInt &v) { return v.isZero(); });
    }
  }
  Type valueType = getElementTypeOrSelf(x.getType());
  symmetric = symmetric && isConstant(node->input(1)) &&
              (dequantize ? valueType.isSignlessInteger(8) : valueType.isF32());
  if (!symmetric)
    return importAffineQuantization(dequantize);
  FailureOr<DenseElementsAttr> scale = constantAttr(node->input(1));
  if (failed(scale))
    return failure();
  auto scaleType = cast<RankedTensorType>(scale->getType());
  if (!scaleType.getElementType().isF32() || scaleType.getRank() > 1)
    return failNode("the scale must be an f32 scalar or 1-D tensor");
  for (float s : scale->getValues<float>())
    if (!(s > 0.0f) || !std::isfinite(s))
      return failNode(
          llvm::formatv("has scale {0}; expected finite positive scales", s));
  int64_t count = scaleType.getNumElements();
  auto scalesType = RankedTensorType::get({count}, b.getF32Type());
  Value scales =
      b.create<ConstantOp>(loc, scale->reshape(scalesType)).getResult();
  int64_t axis = scaleType.getRank() == 1 ? intAttr("axis", 1) : 0;
  Value r;
  if (dequantize) {
    GOPT_INFER_ASSIGN(r, DequantizeOp, x, scales, b.getI64IntegerAttr(axis));
  } else {
    GOPT_INFER_ASSIGN(r, QuantizeOp, x, scales, b.getI64IntegerAttr(axis));
  }
  setOutput(0, r);
  return success();
}

LogicalResult OnnxImporter::importClip() {
  GET_INPUT(x, 0);
  Type elementType = getElementTypeOrSelf(x.getType());
  bool isFloat = isa<FloatType>(elementType);
  double lo = -std::numeric_limits<float>::infinity();
  double hi = std::numeric_limits<float>::infinity();
  if (opset < 11) {
    // Clip-6 is float-only; its bounds are attributes.
    if (!isFloat)
      return failNode("Clip before opset 11 clips floats only");
    lo = floatAttr("min", -std::numeric_limits<float>::max());
    hi = floatAttr("max", std::numeric_limits<float>::max());
  } else {
    GET_OPTIONAL_INPUT(min, 1);
    GET_OPTIONAL_INPUT(max, 2);
    // gopt.clip has f32 bounds fixed at import and clips f32, f16 and bf16;
    // other types and bounds fed at run time are max then min (numpy.clip's
    // order: a lower bound above the upper one gives the upper).
    bool constantBounds = (!min || isConstant(node->input(1))) &&
                          (!max || isConstant(node->input(2)));
    bool clipType =
        elementType.isF32() || elementType.isF16() || elementType.isBF16();
    if (!clipType || !constantBounds) {
      Value y = x;
      if (min) {
        GOPT_INFER(op, MaxOp, y, min);
        y = op;
      }
      if (max) {
        GOPT_INFER(op, MinOp, y, max);
        y = op;
      }
      setOutput(0, y);
      return success();
    }
    for (int i = 1; i <= 2; ++i) {
      if (i >= node->input_size() || node->input(i).empty())
        continue;
      FailureOr<double> v = constantScalar(node->input(i));
      if (failed(v))
        return failure();
      (i == 1 ? lo : hi) = *v;
    }
  }
  Operation *op;
  if (lo == 0.0 && hi == 6.0)
    GOPT_INFER_ASSIGN(op, Relu6Op, x);
  else if (lo == 0.0 && hi >= std::numeric_limits<float>::max())
    GOPT_INFER_ASSIGN(op, ReluOp, x);
  else
    GOPT_INFER_ASSIGN(op, ClipOp, x, b.getF32FloatAttr(lo),
                      b.getF32FloatAttr(hi));
  return setResult(op);
}

LogicalResult OnnxImporter::reshapeTo(Value x, ArrayRef<int64_t> dims) {
  return setResult(createInferred<ReshapeOp>(b, loc, x, i64s(dims)));
}

/// A shape computed in the graph rather than a constant, as exporters write
/// `x.view(x.size(0), -1)` (Shape -> Gather -> Unsqueeze -> Concat) or PP-OCR's
/// classifier (Shape -> Cast -> Slice -> Concat), read through
/// traceShapeEntries: a static dim is its value, a dynamic dim of `x` at its
/// own position is ONNX's 0 (copy), and one other entry known only at run
/// time is -1, which the element count determines.
FailureOr<SmallVector<int64_t>>
OnnxImporter::symbolicShape(StringRef shapeName, Value x, StringRef what) {
  std::optional<SmallVector<ShapeEntry>> entries =
      traceShapeEntries(values.lookup(shapeName));
  if (!entries)
    // "input 'X' must be a constant" first: scripts/conformance.sh bakes X.
    return failNode(llvm::formatv("input '{0}' must be a constant, or computed "
                                  "from tensor shapes and constants ({1})",
                                  shapeName, what));
  SmallVector<int64_t> shape;
  int runtimeOnly = 0;
  for (auto [i, e] : llvm::enumerate(*entries)) {
    if (!e.source) {
      shape.push_back(e.value);
    } else if (e.source == x && e.dim == static_cast<int64_t>(i) &&
               intAttr("allowzero", 0) == 0) {
      shape.push_back(0);
    } else {
      if (runtimeOnly++)
        return failNode(llvm::formatv(
            "{0} has more than one entry known only at run time", what));
      shape.push_back(-1);
    }
  }
  return shape;
}

LogicalResult OnnxImporter::importReshape() {
  GET_INPUT(x, 0);
  SmallVector<int64_t> shape;
  bool computed = false;
  if (opset < 5) {
    std::optional<SmallVector<int64_t>> s = intsAttr("shape");
    if (!s)
      return failNode("missing attribute 'shape'");
    shape = *s;
  } else {
    if (node->input_size() < 2)
      return failNode("missing input #1 (shape)");
    computed = !isConstant(node->input(1));
    GET_INPUT(shapeValue, 1);
    // A computed shape that does not fold (untraceable, more than one entry
    // known only at run time, or a graph input's value) is evaluated by the
    // runtime.
    if (computed &&
        (dependsOnInputData(shapeValue) ||
         !foldsToStaticTarget(shapeValue, x, intAttr("allowzero", 0) != 0)))
      return importDynamicReshape(x, node->input(1));
    FailureOr<SmallVector<int64_t>> s =
        computed ? symbolicShape(node->input(1), x, "input #1 (shape)")
                 : constantInts(node->input(1));
    if (failed(s))
      return failure();
    shape = *s;
  }
  ArrayRef<int64_t> in = shapeOf(x);
  bool allowZero = intAttr("allowzero", 0) != 0;
  // `x.view(x.size(0), -1)` exports as [0, -1] with a dynamic batch: when
  // the copied dims are the only dynamic ones, the -1 is static.
  if (!allowZero && llvm::count(shape, -1) == 1) {
    int64_t inRest = 1, outRest = 1;
    bool resolvable = true;
    for (size_t i = 0; i < in.size(); ++i) {
      bool copied = i < shape.size() && shape[i] == 0;
      if (copied)
        continue;
      if (ShapedType::isDynamic(in[i]))
        resolvable = false;
      else
        inRest *= in[i];
    }
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] > 0)
        outRest *= shape[i];
    bool copiesDynamic = false;
    for (size_t i = 0; i < shape.size() && i < in.size(); ++i)
      copiesDynamic |= shape[i] == 0 && ShapedType::isDynamic(in[i]);
    if (resolvable && copiesDynamic && outRest > 0 && inRest % outRest == 0)
      for (int64_t &d : shape)
        if (d == -1)
          d = inRest / outRest;
  }
  int inferred = llvm::count(shape, -1);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < -1)
      return failNode(llvm::formatv("invalid target dimension {0}", shape[i]));
    if (shape[i] != 0 || allowZero)
      continue;
    // ONNX's 0 copies the input dimension; a dynamic one becomes the single
    // inferred (-1) entry gopt allows.
    if (i >= in.size())
      return failNode(llvm::formatv(
          "target dimension {0} copies a dimension the input {1} lacks", i,
          formatShape(in)));
    if (ShapedType::isDynamic(in[i])) {
      if (inferred++ && computed)
        return importDynamicReshape(x, node->input(1));
      if (inferred > 1)
        return failNode("more than one dynamic dimension in the target shape");
      shape[i] = -1;
    } else {
      shape[i] = in[i];
    }
  }
  return reshapeTo(x, shape);
}

/// Reshape's computed target as gopt.dynamic_reshape: the shape value (as
/// i64) becomes an operand the runtime evaluates while resolving shapes. The
/// entries traceShapeEntries knows statically make the result type as
/// static as they allow, so the ops after it keep their static dimensions.
LogicalResult OnnxImporter::importDynamicReshape(Value x, StringRef shapeName) {
  GET_INPUT(target, 1);
  auto type = dyn_cast<RankedTensorType>(target.getType());
  if (!type || type.getRank() != 1 || type.isDynamicDim(0) ||
      !type.getElementType().isSignlessInteger())
    return failNode(llvm::formatv(
        "input '{0}' (input #1, shape) must be a 1-D integer tensor of "
        "static length, got {1}",
        shapeName, target.getType()));
  if (type.getDimSize(0) > shape::kMaxRank)
    return failNode(llvm::formatv("input '{0}' (input #1, shape) has {1} "
                                  "entries; at most {2} dimensions are "
                                  "supported",
                                  shapeName, type.getDimSize(0),
                                  shape::kMaxRank));
  bool allowZero = intAttr("allowzero", 0) != 0;
  auto i64Type = RankedTensorType::get(type.getShape(), b.getI64Type());
  if (type != i64Type)
    target = b.create<CastOp>(loc, i64Type, target);
  ArrayRef<int64_t> in = shapeOf(x);
  SmallVector<int64_t> dims(type.getDimSize(0), ShapedType::kDynamic);
  if (std::optional<SmallVector<ShapeEntry>> entries =
          traceShapeEntries(target))
    for (auto [i, e] : llvm::enumerate(*entries)) {
      if (e.source)
        continue;
      if (e.value > 0 || (e.value == 0 && allowZero))
        dims[i] = e.value;
      else if (e.value == 0 && i < in.size())
        dims[i] = in[i];
    }
  auto resultType = RankedTensorType::get(
      dims, cast<RankedTensorType>(x.getType()).getElementType());
  return setResult(
      b.create<DynamicReshapeOp>(loc, resultType, x, target, allowZero));
}

/// Whether constantInts reads input `name` without an error: a constant, or
/// integers the importer folds (static shape entries, constant arithmetic).
/// Otherwise the value is known only at run time and the node imports as a
/// dynamic op (GoptDynamicShapeOps.td).
bool OnnxImporter::foldsToInts(StringRef name) {
  if (isConstant(name))
    return true;
  Value v = values.lookup(name);
  if (!v)
    return false;
  if (std::optional<SmallVector<ShapeEntry>> entries = traceShapeEntries(v);
      entries && llvm::none_of(*entries, [](const ShapeEntry &e) {
        return bool(e.source);
      }))
    return true;
  if (DenseElementsAttr folded = foldValue(v))
    return bool(integerValues(folded));
  return false;
}

/// Input i as a dynamic op's value operand: a scalar or 1-D tensor of
/// static length, integers as i64 (asI64) since the runtime reads them so.
FailureOr<Value> OnnxImporter::valueOperand(int i, StringRef what, bool asI64) {
  FailureOr<Value> v = requiredInput(i);
  if (failed(v))
    return failure();
  auto type = dyn_cast<RankedTensorType>(v->getType());
  if (!type || type.getRank() > 1 ||
      (type.getRank() == 1 && type.isDynamicDim(0)))
    return failNode(llvm::formatv("input '{0}' ({1}) must be a scalar or a 1-D "
                                  "tensor of static length, got {2}",
                                  node->input(i), what, v->getType()));
  Type element = type.getElementType();
  if (!asI64 && isLowPrecision(element)) // exact in f32 (Pad's fill value)
    return b
        .create<CastOp>(
            loc, RankedTensorType::get(type.getShape(), b.getF32Type()), *v)
        .getResult();
  if (!asI64) {
    if (!element.isSignlessInteger(64) && !element.isSignlessInteger(32) &&
        !element.isF32())
      return failNode(llvm::formatv("input '{0}' ({1}) known at run time must "
                                    "be i64, i32 or f32, got {2}",
                                    node->input(i), what, element));
    return *v;
  }
  if (!element.isSignlessInteger())
    return failNode(llvm::formatv("input '{0}' ({1}) must be integers, got {2}",
                                  node->input(i), what, element));
  if (element.isSignlessInteger(64))
    return *v;
  return b
      .create<CastOp>(
          loc, RankedTensorType::get(type.getShape(), b.getI64Type()), *v)
      .getResult();
}

/// The i64 constant [0, 1, ..., count - 1].
FailureOr<Value> OnnxImporter::i64Range(int64_t count) {
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(i);
  auto type = RankedTensorType::get({count}, b.getI64Type());
  return b.create<ConstantOp>(loc, DenseIntElementsAttr::get(type, values))
      .getResult();
}

/// A reshape whose result dimensions are x's own (`sources[i]`, the index
/// in x) or constants (`sources[i]` = -1, the value `dims[i]`), for
/// Squeeze and Unsqueeze with more than one dynamic dimension, which
/// gopt.reshape's single -1 cannot say: the target is gathered from
/// concat(shape(x), constants) and evaluated by the runtime.
LogicalResult OnnxImporter::reshapeFromDims(Value x, ArrayRef<int64_t> dims,
                                            ArrayRef<int64_t> sources) {
  Value y = reshapedFromDims(x, dims, sources);
  setOutput(0, y);
  return success();
}

Value OnnxImporter::reshapedFromDims(Value x, ArrayRef<int64_t> dims,
                                     ArrayRef<int64_t> sources) {
  auto i64Vector = [&](ArrayRef<int64_t> values) -> Value {
    auto type = RankedTensorType::get({int64_t(values.size())}, b.getI64Type());
    return b.create<ConstantOp>(loc, DenseIntElementsAttr::get(type, values));
  };
  int64_t rank = shapeOf(x).size();
  SmallVector<int64_t> indices, literals;
  for (auto [d, source] : llvm::zip(dims, sources)) {
    if (source >= 0) {
      indices.push_back(source);
    } else {
      indices.push_back(rank + literals.size());
      literals.push_back(d);
    }
  }
  GOPT_INFER_OR_NULL(shape, ShapeOp, x);
  Value table = shape;
  if (!literals.empty()) {
    GOPT_INFER_OR_NULL(joined, ConcatOp, ValueRange{table, i64Vector(literals)},
                       b.getI64IntegerAttr(0));
    table = joined;
  }
  GOPT_INFER_OR_NULL(target, GatherOp, table, i64Vector(indices),
                     b.getI64IntegerAttr(0));
  auto resultType = RankedTensorType::get(
      dims, cast<RankedTensorType>(x.getType()).getElementType());
  return b.create<DynamicReshapeOp>(loc, resultType, x, target, false);
}

Value OnnxImporter::reshapedAxis(Value x, int64_t axis, bool insert) {
  ArrayRef<int64_t> in = shapeOf(x);
  SmallVector<int64_t> dims, sources;
  for (int64_t i = 0, rank = in.size(); i <= rank; ++i) {
    if (i == axis) {
      if (insert) {
        dims.push_back(1);
        sources.push_back(-1);
      }
      if (!insert)
        continue;
    }
    if (i < rank) {
      dims.push_back(in[i]);
      sources.push_back(i);
    }
  }
  // One dynamic dimension at most: a plain reshape with -1 for it.
  if (llvm::count_if(dims, ShapedType::isDynamic) <= 1) {
    for (int64_t &d : dims)
      if (ShapedType::isDynamic(d))
        d = -1;
    GOPT_INFER_OR_NULL(op, ReshapeOp, x, i64s(dims));
    return op.getResult();
  }
  return reshapedFromDims(x, dims, sources);
}

LogicalResult OnnxImporter::importSqueeze(bool unsqueeze) {
  GET_INPUT(x, 0);
  std::optional<SmallVector<int64_t>> axes;
  if (opset < 13) {
    axes = intsAttr("axes");
  } else if (node->input_size() > 1 && !node->input(1).empty()) {
    if (!foldsToInts(node->input(1))) {
      FailureOr<Value> value = valueOperand(1, "axes");
      if (failed(value))
        return failure();
      if (unsqueeze)
        return setResult(createInferred<DynamicUnsqueezeOp>(b, loc, x, *value));
      return setResult(createInferred<DynamicSqueezeOp>(b, loc, x, *value));
    }
    FailureOr<SmallVector<int64_t>> a = constantInts(node->input(1));
    if (failed(a))
      return failure();
    axes = *a;
  }
  ArrayRef<int64_t> in = shapeOf(x);
  SmallVector<int64_t> out;
  // Per result dimension: the dimension of x it is, or -1 for a new 1.
  SmallVector<int64_t> sources;
  if (unsqueeze) {
    if (!axes)
      return failNode("missing axes");
    int64_t rank = in.size() + axes->size();
    SmallVector<bool> isNew(rank, false);
    for (int64_t a : *axes) {
      if (a < -rank || a >= rank)
        return failNode(llvm::formatv("axis {0} out of range", a));
      isNew[a < 0 ? a + rank : a] = true;
    }
    size_t next = 0;
    for (int64_t i = 0; i < rank; ++i) {
      bool fromInput = !isNew[i] && next < in.size();
      sources.push_back(fromInput ? static_cast<int64_t>(next) : -1);
      out.push_back(fromInput ? in[next++] : 1);
    }
  } else {
    int64_t rank = in.size();
    SmallVector<bool> drop(rank, false);
    if (axes) {
      for (int64_t a : *axes) {
        if (a < -rank || a >= rank)
          return failNode(llvm::formatv("axis {0} out of range", a));
        int64_t n = a < 0 ? a + rank : a;
        if (!ShapedType::isDynamic(in[n]) && in[n] != 1)
          return failNode(
              llvm::formatv("cannot squeeze axis {0} of size {1}", a, in[n]));
        drop[n] = true;
      }
    } else {
      for (int64_t i = 0; i < rank; ++i) {
        if (ShapedType::isDynamic(in[i]))
          return failNode("squeeze without axes needs static dimensions");
        drop[i] = in[i] == 1;
      }
    }
    for (int64_t i = 0; i < rank; ++i)
      if (!drop[i]) {
        sources.push_back(i);
        out.push_back(in[i]);
      }
  }
  // More than one dynamic dimension: the target is x's shape, gathered.
  if (llvm::count_if(out, ShapedType::isDynamic) > 1)
    return reshapeFromDims(x, out, sources);
  for (int64_t &d : out)
    if (ShapedType::isDynamic(d))
      d = -1;
  return reshapeTo(x, out);
}

LogicalResult OnnxImporter::importSoftmax(bool log) {
  GET_INPUT(x, 0);
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  int64_t axis = intAttr("axis", opset < 13 ? 1 : -1);
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    return failNode(
        llvm::formatv("axis {0} out of range for rank {1}", axis, rank));
  if (axis < 0)
    axis += rank;
  auto make = [&](Value v, int64_t a) -> Value {
    if (log) {
      GOPT_INFER_OR_NULL(op, LogSoftmaxOp, v, b.getI64IntegerAttr(a));
      return op;
    }
    GOPT_INFER_OR_NULL(op, SoftmaxOp, v, b.getI64IntegerAttr(a));
    return op;
  };
  // Before opset 13 softmax normalises over the flattened dims >= axis; with
  // axis = rank - 1 that is the same as along the axis.
  if (opset >= 13 || axis == rank - 1) {
    Value y = make(x, axis);
    setOutput(0, y);
    return success();
  }
  int64_t inner = 1;
  for (int64_t i = axis; i < rank; ++i) {
    if (ShapedType::isDynamic(in[i]))
      return failNode("softmax before opset 13 over a dynamic dimension is "
                      "not supported");
    inner *= in[i];
  }
  if (llvm::count_if(in, ShapedType::isDynamic) > 1)
    return failNode("softmax before opset 13 needs at most one dynamic "
                    "dimension");
  GOPT_INFER(flat, ReshapeOp, x, i64s({-1, inner}));
  Value y = make(flat, 1);
  SmallVector<int64_t> back(in.begin(), in.end());
  for (int64_t &d : back)
    if (ShapedType::isDynamic(d))
      d = -1;
  return reshapeTo(y, back);
}

LogicalResult OnnxImporter::importSlice() {
  GET_INPUT(x, 0);
  SmallVector<int64_t> starts, ends, axes, steps;
  if (opset < 10) {
    auto s = intsAttr("starts"), e = intsAttr("ends");
    if (!s || !e)
      return failNode("missing attribute 'starts' or 'ends'");
    starts = *s;
    ends = *e;
    if (auto a = intsAttr("axes"))
      axes = *a;
  } else {
    auto present = [&](int i) {
      return i < node->input_size() && !node->input(i).empty();
    };
    bool dynamic = false;
    for (int i = 1; i <= 4; ++i)
      dynamic |= present(i) && !foldsToInts(node->input(i));
    if (dynamic)
      return importDynamicSlice(x);
    auto get = [&](int i, SmallVector<int64_t> &out) -> LogicalResult {
      if (i >= node->input_size() || node->input(i).empty())
        return success();
      FailureOr<SmallVector<int64_t>> v = constantInts(node->input(i));
      if (failed(v))
        return failure();
      out = *v;
      return success();
    };
    if (failed(get(1, starts)) || failed(get(2, ends)) ||
        failed(get(3, axes)) || failed(get(4, steps)))
      return failure();
  }
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || starts.size() != axes.size() ||
      starts.size() != steps.size())
    return failNode("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> st(rank, 0),
      en(rank, std::numeric_limits<int64_t>::max()), sp(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (a < -rank || a >= rank)
      return failNode(llvm::formatv("axis {0} out of range", a));
    if (a < 0)
      a += rank;
    if (steps[i] == 0)
      return failNode("a slice step of 0 is not allowed");
    int64_t dim = in[a];
    int64_t s = starts[i], e = ends[i];
    if (steps[i] < 0) {
      if (ShapedType::isDynamic(dim)) {
        // ONNX's backward clamping needs the dimension: the session
        // resolves it (dynamic_slice), as for bounds fed at run time.
        if (opset >= 10)
          return importDynamicSlice(x);
        return failNode("negative slice steps on a dynamic dimension are "
                        "not supported before opset 10");
      }
      // ONNX clamps a backward start to [0, dim - 1] and its end to
      // [-1, dim - 1] (-1: before element 0), after counting negative
      // values from the end.
      if (s < 0)
        s += dim;
      if (e < 0)
        e += dim;
      s = std::clamp<int64_t>(s, 0, std::max<int64_t>(dim - 1, 0));
      e = std::clamp<int64_t>(e, -1, dim - 1);
      st[a] = s;
      en[a] = std::min(e, s);
      sp[a] = steps[i];
      continue;
    }
    if ((s < 0 || e < 0) && ShapedType::isDynamic(dim)) {
      // Counted from an end known only at run time: the session resolves
      // them (dynamic_slice), as for bounds fed at run time.
      if (opset >= 10)
        return importDynamicSlice(x);
      return failNode("negative slice indices on a dynamic dimension are not "
                      "supported before opset 10");
    }
    if (!ShapedType::isDynamic(dim)) {
      if (s < 0)
        s += dim;
      if (e < 0)
        e += dim;
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    }
    // An end before the start is an empty slice (gopt.slice wants end >=
    // start going forward).
    e = std::max(e, s);
    st[a] = s;
    en[a] = e;
    sp[a] = steps[i];
  }
  // A null op is checked before it becomes a Value (converting a null
  // single-result op reads through a null pointer).
  GOPT_INFER(slice, SliceOp, x, i64s(st), i64s(en), i64s(sp));
  Value y = slice;
  setOutput(0, y);
  return success();
}

/// Slice with bounds known at run time: gopt.dynamic_slice with ONNX's
/// operands (absent axes: 0..n-1; absent steps: ones). Dimensions outside
/// constant axes keep their static size.
LogicalResult OnnxImporter::importDynamicSlice(Value x) {
  FailureOr<Value> starts = valueOperand(1, "starts");
  FailureOr<Value> ends = valueOperand(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  int64_t count = shapeOf(*starts).empty() ? 1 : shapeOf(*starts)[0];
  auto present = [&](int i) {
    return i < node->input_size() && !node->input(i).empty();
  };
  FailureOr<Value> axes =
      present(3) ? valueOperand(3, "axes") : i64Range(count);
  FailureOr<Value> steps;
  if (present(4)) {
    steps = valueOperand(4, "steps");
  } else {
    auto type = RankedTensorType::get({count}, b.getI64Type());
    steps = b.create<ConstantOp>(loc, DenseIntElementsAttr::get(
                                          type, SmallVector<int64_t>(count, 1)))
                .getResult();
  }
  if (failed(axes) || failed(steps))
    return failure();
  SmallVector<int64_t> dims(shapeOf(x).size(), ShapedType::kDynamic);
  if (!present(3) || foldsToInts(node->input(3))) {
    SmallVector<int64_t> axisList;
    if (present(3)) {
      FailureOr<SmallVector<int64_t>> a = constantInts(node->input(3));
      if (failed(a))
        return failure();
      axisList = *a;
    } else {
      for (int64_t i = 0; i < count; ++i)
        axisList.push_back(i);
    }
    int64_t rank = dims.size();
    SmallVector<bool> sliced(rank, false);
    for (int64_t a : axisList)
      if (a >= -rank && a < rank)
        sliced[a < 0 ? a + rank : a] = true;
    for (int64_t d = 0; d < rank; ++d)
      if (!sliced[d])
        dims[d] = shapeOf(x)[d];
  }
  auto type = RankedTensorType::get(dims, getElementTypeOrSelf(x.getType()));
  return setResult(
      b.create<DynamicSliceOp>(loc, type, x, *starts, *ends, *axes, *steps));
}

LogicalResult OnnxImporter::importPad() {
  GET_INPUT(x, 0);
  std::string mode = stringAttr("mode", "constant");
  if (mode == "wrap" && opset < 19)
    return failNode("mode 'wrap' needs opset 19");
  SmallVector<int64_t> pads;
  std::optional<SmallVector<int64_t>> padAxes;
  double value = 0;
  if (opset < 11) {
    auto p = intsAttr(opset < 2 ? "paddings" : "pads");
    if (!p)
      return failNode("missing attribute 'pads'");
    pads = *p;
    value = floatAttr("value", 0.0f);
  } else {
    if (node->input_size() < 2 || node->input(1).empty())
      return failNode("missing input #1 (pads)");
    // Pad-18's `axes` names the axes `pads` covers; the others get none.
    if (node->input_size() > 3 && !node->input(3).empty()) {
      if (!foldsToInts(node->input(3)))
        return failNode("an 'axes' input known only at run time is not "
                        "supported");
      FailureOr<SmallVector<int64_t>> a = constantInts(node->input(3));
      if (failed(a))
        return failure();
      padAxes = *a;
    }
    bool hasValue = node->input_size() > 2 && !node->input(2).empty();
    if (!foldsToInts(node->input(1)) ||
        (hasValue && !isConstant(node->input(2)))) {
      if (padAxes)
        return failNode("an 'axes' input with pads known only at run time "
                        "is not supported");
      // Known at run time: gopt.dynamic_pad reads pads and value.
      FailureOr<Value> padsValue = valueOperand(1, "pads");
      if (failed(padsValue))
        return failure();
      FailureOr<Value> fill =
          hasValue
              ? valueOperand(2, "constant_value", /*asI64=*/false)
              : FailureOr<Value>(
                    b.create<ConstantOp>(
                         loc,
                         DenseElementsAttr::get(
                             RankedTensorType::get({}, b.getF32Type()), 0.0f))
                        .getResult());
      if (failed(fill))
        return failure();
      if (mode != "constant" && mode != "reflect" && mode != "edge" &&
          mode != "wrap")
        return failNode(llvm::formatv("mode '{0}' is not supported", mode));
      return setResult(createInferred<DynamicPadOp>(
          b, loc, x, *padsValue, *fill, b.getStringAttr(mode)));
    }
    if (hasValue) {
      FailureOr<double> v = constantScalar(node->input(2));
      if (failed(v))
        return failure();
      value = *v;
    }
    FailureOr<SmallVector<int64_t>> p = constantInts(node->input(1));
    if (failed(p))
      return failure();
    pads = *p;
  }
  size_t rank = shapeOf(x).size();
  if (padAxes) {
    size_t count = padAxes->size();
    if (pads.size() != 2 * count)
      return failNode(llvm::formatv("expects {0} pads for {1} axes, got {2}",
                                    2 * count, count, pads.size()));
    SmallVector<int64_t> full(2 * rank, 0);
    SmallVector<bool> seen(rank, false);
    for (size_t i = 0; i < count; ++i) {
      int64_t axis = (*padAxes)[i];
      if (axis < -int64_t(rank) || axis >= int64_t(rank))
        return failNode(
            llvm::formatv("axis {0} out of range for rank {1}", axis, rank));
      if (axis < 0)
        axis += rank;
      if (seen[axis])
        return failNode(
            llvm::formatv("axis {0} appears twice in 'axes'", (*padAxes)[i]));
      seen[axis] = true;
      full[axis] = pads[i];
      full[axis + rank] = pads[i + count];
    }
    pads = full;
  }
  if (pads.size() != 2 * rank)
    return failNode(llvm::formatv("expects {0} pads for rank {1}, got {2}",
                                  2 * rank, rank, pads.size()));
  SmallVector<int64_t> interleaved = interleaveBeginsAndEnds(pads);
  if (llvm::any_of(interleaved, [](int64_t p) { return p < 0; }))
    return failNode("negative pads are not supported");
  return setResult(createInferred<PadOp>(b, loc, x, i64s(interleaved),
                                         b.getStringAttr(mode),
                                         b.getF32FloatAttr(value)));
}

/// The dynamic op of each reduction (axes as an operand).
template <typename OpTy> struct DynamicReduction;
template <> struct DynamicReduction<ReduceSumOp> {
  using type = DynamicReduceSumOp;
};
template <> struct DynamicReduction<ReduceMeanOp> {
  using type = DynamicReduceMeanOp;
};
template <> struct DynamicReduction<ReduceMaxOp> {
  using type = DynamicReduceMaxOp;
};
template <> struct DynamicReduction<ReduceMinOp> {
  using type = DynamicReduceMinOp;
};
template <> struct DynamicReduction<ReduceProdOp> {
  using type = DynamicReduceProdOp;
};

LogicalResult OnnxImporter::importReduce(StringRef kind) {
  GET_INPUT(x, 0);
  // ReduceSum took axes as an input from opset 13, the others from 18.
  int64_t inputFrom = kind == "ReduceSum" ? 13 : 18;
  SmallVector<int64_t> axes;
  // Axes known only at run time: the dynamic reductions read them.
  Value dynamicAxes;
  if (opset < inputFrom) {
    if (auto a = intsAttr("axes"))
      axes = *a;
  } else if (node->input_size() > 1 && !node->input(1).empty() &&
             !foldsToInts(node->input(1))) {
    FailureOr<Value> a = valueOperand(1, "axes");
    if (failed(a))
      return failure();
    dynamicAxes = *a;
  } else if (node->input_size() > 1 && !node->input(1).empty()) {
    FailureOr<SmallVector<int64_t>> a = constantInts(node->input(1));
    if (failed(a))
      return failure();
    axes = *a;
  }
  // Empty axes known only at run time with noop_with_empty_axes must leave x
  // as it is: x gets a leading unit axis that is always reduced too, so the
  // axes are never empty, and a reduction over the unit axis alone keeps
  // every value (the sum, mean, max, min or product of one element).
  bool noopWhenEmpty = dynamicAxes && intAttr("noop_with_empty_axes", 0);
  if (noopWhenEmpty) {
    auto i64s1D = [&](ArrayRef<int64_t> values) -> Value {
      auto type =
          RankedTensorType::get({int64_t(values.size())}, b.getI64Type());
      return b.create<ConstantOp>(loc, DenseIntElementsAttr::get(type, values));
    };
    Value unitAxis = i64s1D({0});
    GOPT_INFER(lifted, DynamicUnsqueezeOp, x, unitAxis);
    // Non-negative axes move one place right; negative ones count from the
    // end, which the leading axis does not change.
    Value zero = createScalarConstant(b, loc, b.getI64Type(), 0.0);
    Value one = createScalarConstant(b, loc, b.getI64Type(), 1.0);
    GOPT_INFER(negative, LessOp, dynamicAxes, zero);
    GOPT_INFER(shifted, AddOp, dynamicAxes, one);
    GOPT_INFER(moved, WhereOp, negative, dynamicAxes, shifted);
    GOPT_INFER(withUnit, ConcatOp, ValueRange{unitAxis, moved.getResult()},
               b.getI64IntegerAttr(0));
    x = lifted.getResult();
    dynamicAxes = withUnit.getResult();
  }
  if (!dynamicAxes && axes.empty() && intAttr("noop_with_empty_axes", 0)) {
    setOutput(0, x);
    return success();
  }
  bool keepDims = intAttr("keepdims", 1) != 0;
  auto reduceWith = [&](auto tag, Value v, bool keep) -> Value {
    using OpTy = decltype(tag);
    if (!v)
      return v;
    if (dynamicAxes) {
      GOPT_INFER_OR_NULL(op, typename DynamicReduction<OpTy>::type, v,
                         dynamicAxes, b.getBoolAttr(keep));
      return op.getResult();
    }
    GOPT_INFER_OR_NULL(op, OpTy, v, i64s(axes), b.getBoolAttr(keep));
    return op.getResult();
  };
  auto unaryOp = [&](auto tag, Value v) -> Value {
    using OpTy = decltype(tag);
    if (!v)
      return v;
    GOPT_INFER_OR_NULL(op, OpTy, v);
    return op.getResult();
  };
  auto square = [&](Value v) -> Value {
    GOPT_INFER_OR_NULL(op, MulOp, v, v);
    return op.getResult();
  };
  // The reductions ONNX defines by a function of the others are imported as
  // that function.
  Value y;
  if (kind == "ReduceMean") {
    y = reduceWith(ReduceMeanOp(), x, keepDims);
  } else if (kind == "ReduceSum") {
    y = reduceWith(ReduceSumOp(), x, keepDims);
  } else if ((kind == "ReduceMax" || kind == "ReduceMin") &&
             cast<RankedTensorType>(x.getType())
                 .getElementType()
                 .isInteger(1)) {
    // ReduceMax-20 and ReduceMin-20 of booleans (any, all): reduced as
    // 8-bit integers, gopt's reductions being numeric.
    if (opset < 20)
      return failNode(llvm::formatv("{0} of booleans needs opset 20", kind));
    auto withElement = [&](Value v, Type element) {
      return RankedTensorType::get(
          cast<RankedTensorType>(v.getType()).getShape(), element);
    };
    Value bytes = b.create<CastOp>(loc, withElement(x, b.getIntegerType(8)), x);
    Value reduced = kind == "ReduceMax"
                        ? reduceWith(ReduceMaxOp(), bytes, keepDims)
                        : reduceWith(ReduceMinOp(), bytes, keepDims);
    if (reduced)
      y = b.create<CastOp>(loc, withElement(reduced, b.getI1Type()), reduced);
  } else if (kind == "ReduceMax") {
    y = reduceWith(ReduceMaxOp(), x, keepDims);
  } else if (kind == "ReduceMin") {
    y = reduceWith(ReduceMinOp(), x, keepDims);
  } else if (kind == "ReduceProd") {
    y = reduceWith(ReduceProdOp(), x, keepDims);
  } else if (kind == "ReduceL1") {
    y = reduceWith(ReduceSumOp(), unaryOp(AbsOp(), x), keepDims);
  } else if (kind == "ReduceL2") {
    y = unaryOp(SqrtOp(), reduceWith(ReduceSumOp(), square(x), keepDims));
  } else if (kind == "ReduceSumSquare") {
    y = reduceWith(ReduceSumOp(), square(x), keepDims);
  } else if (kind == "ReduceLogSum") {
    y = unaryOp(LogOp(), reduceWith(ReduceSumOp(), x, keepDims));
  } else {
    // ReduceLogSumExp, shifted by the maximum so exp cannot overflow; a
    // reduction over the kept unit axes then drops them when asked to.
    Value max = reduceWith(ReduceMaxOp(), x, true);
    if (!max)
      return failOp();
    GOPT_INFER(shifted, SubOp, x, max);
    Value logSum = unaryOp(
        LogOp(),
        reduceWith(ReduceSumOp(), unaryOp(ExpOp(), shifted.getResult()), true));
    if (!logSum)
      return failOp();
    GOPT_INFER(lse, AddOp, logSum, max);
    y = keepDims ? lse.getResult()
                 : reduceWith(ReduceMaxOp(), lse.getResult(), false);
  }
  if (!y)
    return failure(); // the op that failed said why
  if (noopWhenEmpty && keepDims) {
    auto type = RankedTensorType::get({1}, b.getI64Type());
    Value unitAxis = b.create<ConstantOp>(
        loc, DenseIntElementsAttr::get(type, {int64_t(0)}));
    GOPT_INFER(dropped, DynamicSqueezeOp, y, unitAxis);
    y = dropped.getResult();
  }
  setOutput(0, y);
  return success();
}

LogicalResult OnnxImporter::importConstant() {
  onnx::TensorProto &t = ownedTensors.emplace_back();
  if (const onnx::AttributeProto *a = attr("value")) {
    t = a->t();
  } else if (const onnx::AttributeProto *a = attr("value_float")) {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(a->f());
  } else if (const onnx::AttributeProto *a = attr("value_floats")) {
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(a->floats_size());
    *t.mutable_float_data() = a->floats();
  } else if (const onnx::AttributeProto *a = attr("value_int")) {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_int64_data(a->i());
  } else if (const onnx::AttributeProto *a = attr("value_ints")) {
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(a->ints_size());
    *t.mutable_int64_data() = a->ints();
  } else {
    return failNode("only tensor, float(s) and int(s) values are supported");
  }
  RankedTensorType type;
  std::vector<char> bytes;
  if (failed(decodeTensor(t, "its value", type, bytes))) {
    std::string reason = error;
    error.clear();
    return failNode(reason);
  }
  if (node->output_size() < 1)
    return failNode("has no output");
  constants[node->output(0)] = &t;
  Value value = createConstant(b, loc, type, bytes, node->output(0));
  // Not a weight: exporters write those as initializers. Marked only where
  // gopt-lift-params could take it for one (an f32 tensor).
  if (type.getElementType().isF32() && type.getRank() > 0)
    if (Operation *constant = value.getDefiningOp())
      constant->setAttr(attrs::kFixed, b.getUnitAttr());
  setOutput(0, value);
  return success();
}

LogicalResult OnnxImporter::importGeneric(const FrameworkOp &entry) {
  if (node->input_size() != entry.numOperands)
    return failNode(llvm::formatv("expects {0} input(s), got {1}",
                                  entry.numOperands, node->input_size()));
  SmallVector<Value> operands;
  for (int i = 0; i < entry.numOperands; ++i) {
    GET_INPUT(v, i);
    operands.push_back(v);
  }
  SmallVector<NamedAttribute> attrs;
  for (const onnx::AttributeProto &a : node->attribute()) {
    const FrameworkAttr *spec = entry.findAttr(a.name());
    if (!spec)
      return failNode(llvm::formatv("unsupported attribute '{0}'", a.name()));
    using AP = onnx::AttributeProto;
    auto expect = [&](AP::AttributeType type, const char *what) {
      return a.type() == type
                 ? success()
                 : failNode(llvm::formatv("attribute '{0}' must be {1}",
                                          a.name(), what));
    };
    switch (spec->kind) {
    case FrameworkAttrKind::kFloat:
      if (failed(expect(AP::FLOAT, "a float")))
        return failure();
      attrs.push_back(b.getNamedAttr(a.name(), b.getF32FloatAttr(a.f())));
      break;
    case FrameworkAttrKind::kInt:
      if (failed(expect(AP::INT, "an int")))
        return failure();
      attrs.push_back(b.getNamedAttr(a.name(), b.getI64IntegerAttr(a.i())));
      break;
    case FrameworkAttrKind::kString:
      if (failed(expect(AP::STRING, "a string")))
        return failure();
      attrs.push_back(b.getNamedAttr(a.name(), b.getStringAttr(a.s())));
      break;
    case FrameworkAttrKind::kInts:
      if (failed(expect(AP::INTS, "a list of ints")))
        return failure();
      attrs.push_back(
          b.getNamedAttr(a.name(), b.getDenseI64ArrayAttr(SmallVector<int64_t>(
                                       a.ints().begin(), a.ints().end()))));
      break;
    case FrameworkAttrKind::kFloats:
      if (failed(expect(AP::FLOATS, "a list of floats")))
        return failure();
      attrs.push_back(
          b.getNamedAttr(a.name(), b.getDenseF32ArrayAttr(SmallVector<float>(
                                       a.floats().begin(), a.floats().end()))));
      break;
    default:
      return failNode(
          llvm::formatv("attribute '{0}' has a kind the generic import of {1} "
                        "does not read",
                        a.name(), entry.opType));
    }
  }
  return setResult(createInferredByName(b, loc, entry.opName, operands, attrs));
}

LogicalResult OnnxImporter::importGlobalAveragePool() {
  GET_INPUT(x, 0);
  size_t rank = shapeOf(x).size();
  if (rank == 4)
    return setResult(
        createInferred<GlobalAvgPoolOp>(b, loc, x, b.getStringAttr("NCHW")));
  // Empty axes would reduce N and C too.
  if (rank < 3)
    return failNode(llvm::formatv("expects input of rank >= 3 ([N, C, ...]), "
                                  "got {0}",
                                  formatShape(shapeOf(x))));
  // Over [N, C, L] or [N, C, D, H, W]: the mean over every spatial dim,
  // kept as 1s (what global_avg_pool computes for rank 4).
  SmallVector<int64_t> axes;
  for (size_t i = 2; i < rank; ++i)
    axes.push_back(i);
  return setResult(
      createInferred<ReduceMeanOp>(b, loc, x, i64s(axes), b.getBoolAttr(true)));
}

LogicalResult OnnxImporter::importGlobalMaxPool() {
  GET_INPUT(x, 0);
  // Empty axes would reduce N and C too.
  if (shapeOf(x).size() < 3)
    return failNode(llvm::formatv("expects input of rank >= 3 ([N, C, ...]), "
                                  "got {0}",
                                  formatShape(shapeOf(x))));
  SmallVector<int64_t> axes;
  for (size_t i = 2; i < shapeOf(x).size(); ++i)
    axes.push_back(i);
  return setResult(
      createInferred<ReduceMaxOp>(b, loc, x, i64s(axes), b.getBoolAttr(true)));
}

LogicalResult OnnxImporter::importLeakyRelu() {
  GET_INPUT(x, 0);
  return setResult(createInferred<LeakyReluOp>(
      b, loc, x, b.getF32FloatAttr(floatAttr("alpha", 0.01f))));
}

LogicalResult OnnxImporter::importLayerNorm() {
  GET_INPUT(x, 0);
  GET_INPUT(scale, 1);
  GET_OPTIONAL_INPUT(bias, 2);
  if (intAttr("stash_type", 1) != 1)
    return failNode("stash_type other than 1 (f32 statistics) is not "
                    "supported");
  Type et = cast<RankedTensorType>(x.getType()).getElementType();
  if (!bias)
    bias = createScalarConstant(b, loc, et, 0.0f);
  int64_t axis = intAttr("axis", -1);
  float epsilon = floatAttr("epsilon", 1e-5f);
  GOPT_INFER(y, LayerNormOp, x, scale, bias, b.getI64IntegerAttr(axis),
             b.getF32FloatAttr(epsilon));
  setOutput(0, y);
  bool wantsStatistics = false;
  for (int i = 1; i < node->output_size(); ++i)
    wantsStatistics |= !node->output(i).empty();
  if (!wantsStatistics)
    return success();
  // The optional Mean and InvStdDev outputs (dimensions kept), which only
  // training graphs read: computed apart from the fused op with the
  // primitives, and dropped as dead code when nothing uses them.
  int64_t rank = shapeOf(x).size();
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d)
    axes.push_back(d);
  auto mean = [&](Value v) -> Value {
    GOPT_INFER_OR_NULL(op, ReduceMeanOp, v, i64s(axes), b.getBoolAttr(true));
    return op.getResult();
  };
  Value mu = mean(x);
  if (!mu)
    return failOp();
  setOutput(1, mu);
  if (node->output_size() < 3 || node->output(2).empty())
    return success();
  GOPT_INFER(centered, SubOp, x, mu);
  GOPT_INFER(squared, MulOp, centered, centered);
  Value variance = mean(squared);
  GOPT_INFER(shifted, AddOp, variance,
             createScalarConstant(b, loc, et, epsilon));
  GOPT_INFER(invStd, RsqrtOp, shifted);
  setOutput(2, invStd);
  return success();
}

LogicalResult OnnxImporter::importInstanceNorm() {
  GET_INPUT(x, 0);
  GET_INPUT(scale, 1);
  GET_INPUT(bias, 2);
  return setResult(createInferred<InstanceNormOp>(
      b, loc, x, scale, bias, b.getF32FloatAttr(floatAttr("epsilon", 1e-5f)),
      b.getStringAttr("NCHW")));
}

/// GroupNormalization (opsets 18 and 21) as PyTorch exports nn.GroupNorm
/// before it: x reshaped to [N, groups, rest], instance-normalized per
/// group, reshaped back and scaled and shifted per channel. Opset 18's scale
/// and bias hold one value per group, repeated here for its channels;
/// opset 21's one per channel.
LogicalResult OnnxImporter::importGroupNorm() {
  GET_INPUT(x, 0);
  GET_INPUT(scale, 1);
  GET_INPUT(bias, 2);
  if (!attr("num_groups"))
    return failNode("the required attribute 'num_groups' is missing");
  int64_t groups = intAttr("num_groups", 0);
  ArrayRef<int64_t> dims = shapeOf(x);
  int64_t rank = dims.size();
  if (rank < 2)
    return failNode(llvm::formatv("expects an input of rank 2 or more (N, C, "
                                  "...), got rank {0}",
                                  rank));
  int64_t channels = dims[1];
  if (ShapedType::isDynamic(channels))
    return failNode("a dynamic channel dimension is not supported");
  if (groups < 1 || channels % groups != 0)
    return failNode(llvm::formatv("num_groups {0} does not divide the {1} "
                                  "channels",
                                  groups, channels));
  if (llvm::count_if(dims, ShapedType::isDynamic) > 1)
    return failNode("more than one dynamic dimension is not supported");
  bool perChannel = opset >= 21;
  int64_t paramSize = perChannel ? channels : groups;
  for (Value param : {scale, bias})
    if (shapeOf(param).size() != 1 || shapeOf(param)[0] != paramSize)
      return failNode(llvm::formatv(
          "scale and bias must hold {0} values (one per {1}), got {2}",
          paramSize, perChannel ? "channel" : "group", param.getType()));
  Type et = getElementTypeOrSelf(x.getType());
  if (!isa<FloatType>(et))
    return failNode(llvm::formatv("expects a float input, got {0}", et));
  auto splat = [&](ArrayRef<int64_t> shape, double v) -> Value {
    auto type = RankedTensorType::get(shape, et);
    return b.create<ConstantOp>(
        loc, DenseElementsAttr::get(type, b.getFloatAttr(et, v)));
  };
  // [N, groups, C / groups * spatial], the dynamic dimension as -1.
  int64_t rest = channels / groups;
  bool dynamicSpatial = false;
  for (int64_t d = 2; d < rank; ++d) {
    dynamicSpatial |= ShapedType::isDynamic(dims[d]);
    if (!dynamicSpatial)
      rest *= dims[d];
  }
  bool dynamicBatch = ShapedType::isDynamic(dims[0]);
  SmallVector<int64_t> grouped = {dynamicBatch ? -1 : dims[0], groups,
                                  dynamicSpatial ? -1 : rest};
  GOPT_INFER(byGroup, ReshapeOp, x, i64s(grouped));
  GOPT_INFER(normalized, InstanceNormOp, byGroup.getResult(),
             splat({groups}, 1.0), splat({groups}, 0.0),
             b.getF32FloatAttr(floatAttr("epsilon", 1e-5f)),
             b.getStringAttr("NCHW"));
  SmallVector<int64_t> original;
  for (int64_t d : dims)
    original.push_back(ShapedType::isDynamic(d) ? -1 : d);
  GOPT_INFER(restored, ReshapeOp, normalized.getResult(), i64s(original));
  // scale and bias as [C, 1, ...] to broadcast over the spatial axes.
  SmallVector<int64_t> channelShape(rank - 1, 1);
  channelShape[0] = channels;
  auto perChannelParam = [&](Value param) -> FailureOr<Value> {
    if (!perChannel) {
      // [groups] -> [groups, 1] * ones[1, C / groups] -> [C].
      auto column =
          createInferred<ReshapeOp>(b, loc, param, i64s({groups, int64_t(1)}));
      if (failed(column))
        return failure();
      auto repeated = createInferred<MulOp>(b, loc, column->getResult(),
                                            splat({1, channels / groups}, 1.0));
      if (failed(repeated))
        return failure();
      param = repeated->getResult();
    }
    auto shaped = createInferred<ReshapeOp>(b, loc, param, i64s(channelShape));
    if (failed(shaped))
      return failure();
    return shaped->getResult();
  };
  FailureOr<Value> channelScale = perChannelParam(scale);
  if (failed(channelScale))
    return failOp();
  FailureOr<Value> channelBias = perChannelParam(bias);
  if (failed(channelBias))
    return failOp();
  GOPT_INFER(scaled, MulOp, restored.getResult(), *channelScale);
  return setResult(
      createInferred<AddOp>(b, loc, scaled.getResult(), *channelBias));
}

/// Gelu (opset 20): exact, or with the tanh approximation.
LogicalResult OnnxImporter::importGelu() {
  GET_INPUT(x, 0);
  std::string approximate = stringAttr("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return failNode(llvm::formatv("approximate '{0}' is not supported (none "
                                  "or tanh)",
                                  approximate));
  return setResult(
      createInferred<GeluOp>(b, loc, x, b.getStringAttr(approximate)));
}

LogicalResult OnnxImporter::importLrn() {
  GET_INPUT(x, 0);
  if (!attr("size"))
    return failNode("the required attribute 'size' is missing");
  return setResult(createInferred<LrnOp>(
      b, loc, x, b.getI64IntegerAttr(intAttr("size", 0)),
      b.getF32FloatAttr(floatAttr("alpha", 1e-4f)),
      b.getF32FloatAttr(floatAttr("beta", 0.75f)),
      b.getF32FloatAttr(floatAttr("bias", 1.0f)), b.getStringAttr("NCHW")));
}

LogicalResult OnnxImporter::importMatMul() {
  GET_INPUT(lhs, 0);
  GET_INPUT(rhs, 1);
  if (shapeOf(lhs).size() < 2 || shapeOf(rhs).size() < 2)
    return failNode("1-D MatMul operands are not supported");
  return setResult(createInferred<MatMulOp>(
      b, loc, lhs, rhs, b.getBoolAttr(false), b.getBoolAttr(false)));
}

LogicalResult OnnxImporter::importFlatten() {
  GET_INPUT(x, 0);
  int64_t axis = intAttr("axis", 1);
  if (axis < 0)
    axis += shapeOf(x).size();
  return setResult(
      createInferred<FlattenOp>(b, loc, x, b.getI64IntegerAttr(axis)));
}

LogicalResult OnnxImporter::importTranspose() {
  GET_INPUT(x, 0);
  SmallVector<int64_t> perm;
  if (auto p = intsAttr("perm"))
    perm = *p;
  else
    for (int64_t i = shapeOf(x).size() - 1; i >= 0; --i)
      perm.push_back(i);
  return setResult(createInferred<TransposeOp>(b, loc, x, i64s(perm)));
}

LogicalResult OnnxImporter::importConcat() {
  if (!attr("axis"))
    return failNode("missing attribute 'axis'");
  SmallVector<Value> inputs;
  for (int i = 0; i < node->input_size(); ++i) {
    GET_INPUT(v, i);
    inputs.push_back(v);
  }
  return setResult(createInferred<ConcatOp>(
      b, loc, ValueRange(inputs), b.getI64IntegerAttr(intAttr("axis", 0))));
}

void OnnxImporter::collectReadNames(const onnx::GraphProto &graph) {
  for (const onnx::ValueInfoProto &out : graph.output())
    readNames.insert(out.name());
  for (const onnx::NodeProto &n : graph.node()) {
    for (const std::string &in : n.input())
      readNames.insert(in);
    for (const onnx::AttributeProto &a : n.attribute()) {
      if (a.has_g())
        collectReadNames(a.g());
      for (const onnx::GraphProto &g : a.graphs())
        collectReadNames(g);
    }
  }
}

LogicalResult OnnxImporter::importDropout() {
  GET_INPUT(x, 0);
  double ratio = floatAttr("ratio", 0.5f);
  bool training = false;
  // training_mode or the ratio fed at run time: dropout as uniform draws
  // compared with the ratio (importDrawnDropout).
  Value runtimeTraining, runtimeRatio;
  // Input i: its scalar when constant (into `constant`), else the value
  // fed at run time (into `runtime`).
  auto scalarOrRuntime = [&](int i, double &constant,
                             Value &runtime) -> LogicalResult {
    if (!isConstant(node->input(i))) {
      FailureOr<Value> v = requiredInput(i);
      if (failed(v))
        return failure();
      runtime = *v;
      return success();
    }
    FailureOr<double> v = constantScalar(node->input(i));
    if (failed(v))
      return failure();
    constant = *v;
    return success();
  };
  if (opset >= 12) {
    if (node->input_size() > 2 && !node->input(2).empty()) {
      double mode = 0;
      if (failed(scalarOrRuntime(2, mode, runtimeTraining)))
        return failure();
      training = mode != 0;
    }
    // In inference the ratio is unused, so it may be fed at run time.
    if ((training || runtimeTraining) && node->input_size() > 1 &&
        !node->input(1).empty()) {
      if (failed(scalarOrRuntime(1, ratio, runtimeRatio)))
        return failure();
    }
    // The mask in training comes from the draws too (gopt.dropout keeps
    // its mask to itself).
    // PyTorch's training-mode export names the mask even where nothing
    // reads it: gopt.dropout then keeps inference (--eval) drop-free.
    bool wantsMask = node->output_size() > 1 && !node->output(1).empty() &&
                     readNames.count(node->output(1));
    if (runtimeTraining || runtimeRatio ||
        (training && ratio != 0 && wantsMask))
      return importDrawnDropout(x, ratio, runtimeRatio, runtimeTraining);
  } else if (opset < 7) {
    training = intAttr("is_test", 0) == 0;
  }
  // Nothing is dropped at ratio 0, in training too.
  if (ratio == 0)
    training = false;
  if (node->output_size() > 1 && !node->output(1).empty()) {
    if (training) {
      unsupportedValues[node->output(1)] =
          "Dropout's mask output, which gopt does not compute";
    } else {
      // In inference every element is kept: the mask is all true (bool
      // since opset 10, ones of x's type before).
      auto xType = cast<RankedTensorType>(x.getType());
      auto maskType = xType.clone(b.getI1Type());
      Value mask;
      if (xType.hasStaticShape()) {
        mask = b.create<ConstantOp>(
            loc, DenseElementsAttr::get(maskType, b.getBoolAttr(true)));
      } else {
        // x != 0 or not: true at every element of x's run-time shape.
        Value nonzero = createTyped<CastOp>(b, loc, maskType, x);
        if (!nonzero)
          return failOp();
        GOPT_INFER(zeroes, NotOp, nonzero);
        GOPT_INFER_ASSIGN(mask, OrOp, nonzero, zeroes);
      }
      if (opset < 10) {
        mask = createTyped<CastOp>(b, loc, xType, mask);
        if (!mask)
          return failOp();
      }
      setOutput(1, mask);
    }
  }
  return setResult(createInferred<DropoutOp>(
      b, loc, x, b.getF32FloatAttr(ratio), b.getBoolAttr(training)));
}

/// TfIdfVectorizer of integers (gopt.tf_idf_vectorizer); string pools are
/// out of gopt's scope.
LogicalResult OnnxImporter::importTfIdfVectorizer() {
  GET_INPUT(x, 0);
  if (attr("pool_strings"))
    return failNode("pool_strings (string n-grams) are not supported");
  Type et = getElementTypeOrSelf(x.getType());
  if (!et.isSignlessInteger(64) && !et.isSignlessInteger(32))
    return failNode(llvm::formatv(
        "TfIdfVectorizer of {0} is not supported (i32 or i64)", et));
  std::string mode = stringAttr("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return failNode(
        llvm::formatv("mode '{0}' is not one of TF, IDF and TFIDF", mode));
  auto ints = [&](StringRef name) -> SmallVector<int64_t> {
    std::optional<SmallVector<int64_t>> v = intsAttr(name);
    return v ? *v : SmallVector<int64_t>();
  };
  DenseF32ArrayAttr weights;
  if (const onnx::AttributeProto *w = attr("weights"))
    weights = b.getDenseF32ArrayAttr(
        SmallVector<float>(w->floats().begin(), w->floats().end()));
  GOPT_INFER(op, TfIdfVectorizerOp, x, b.getStringAttr(mode),
             b.getI64IntegerAttr(intAttr("min_gram_length", 1)),
             b.getI64IntegerAttr(intAttr("max_gram_length", 1)),
             b.getI64IntegerAttr(intAttr("max_skip_count", 0)),
             i64s(ints("ngram_counts")), i64s(ints("ngram_indexes")),
             i64s(ints("pool_int64s")), weights);
  setOutput(0, op.getResult());
  return success();
}

/// The draws of a gopt.random_uniform_like of `like`'s shape. An ONNX
/// `seed` picks stream `stream` (offset so that it is never 0, which means
/// "the op's place in the plan"); without one each draw has its own stream.
Value OnnxImporter::uniformDraws(Value like, Type elementType, double low,
                                 double high, int64_t stream) {
  auto type = RankedTensorType::get(shapeOf(like), elementType);
  return b
      .create<RandomUniformLikeOp>(loc, type, like, b.getF32FloatAttr(low),
                                   b.getF32FloatAttr(high),
                                   b.getI64IntegerAttr(stream))
      .getResult();
}

/// The stream of an ONNX seed attribute (a float): its bits, offset so it
/// is never 0; 0 (the op's own stream) without one.
static int64_t streamOfSeed(const onnx::AttributeProto *seed) {
  if (!seed)
    return 0;
  uint64_t bits = 0;
  if (seed->type() == onnx::AttributeProto::FLOAT) {
    float f = seed->f();
    uint32_t b32;
    std::memcpy(&b32, &f, sizeof b32);
    bits = b32;
  } else {
    bits = static_cast<uint64_t>(seed->i());
  }
  return static_cast<int64_t>((bits & 0xFFFFFFFFFFull) | (0x5EEDull << 40));
}

/// Training dropout whose training_mode or ratio is known only at run time:
/// keep where a uniform draw in [0, 1) is >= ratio, scaled by
/// 1 / (1 - ratio); x itself (and an all-true mask) when not training.
LogicalResult OnnxImporter::importDrawnDropout(Value x, double ratio,
                                               Value runtimeRatio,
                                               Value runtimeTraining) {
  Type et = getElementTypeOrSelf(x.getType());
  if (!isa<FloatType>(et))
    return failNode("training dropout of a non-float tensor is not supported");
  Value r = runtimeRatio
                ? createTyped<CastOp>(
                      b, loc,
                      cast<RankedTensorType>(runtimeRatio.getType()).clone(et),
                      runtimeRatio)
                : createScalarConstant(b, loc, et, ratio);
  if (!r)
    return failOp();
  Value u = uniformDraws(x, et, 0.0, 1.0, streamOfSeed(attr("seed")));
  Value one = createScalarConstant(b, loc, et, 1.0);
  Value zero = createScalarConstant(b, loc, et, 0.0);
  GOPT_INFER(keep, GreaterEqualOp, u, r);
  GOPT_INFER(kept, SubOp, one, r);
  GOPT_INFER(scale, DivOp, one, kept);
  GOPT_INFER(scaled, MulOp, x, scale);
  GOPT_INFER(dropped, WhereOp, keep, scaled, zero);
  Value y = dropped, mask = keep;
  if (runtimeTraining) {
    Value t = runtimeTraining;
    if (!getElementTypeOrSelf(t.getType()).isInteger(1)) {
      t = createTyped<CastOp>(
          b, loc, cast<RankedTensorType>(t.getType()).clone(b.getI1Type()), t);
      if (!t)
        return failOp();
    }
    GOPT_INFER_ASSIGN(y, WhereOp, t, dropped, x);
    GOPT_INFER(inference, NotOp, t);
    GOPT_INFER_ASSIGN(mask, OrOp, keep, inference);
  }
  if (node->output_size() > 1 && !node->output(1).empty())
    setOutput(1, mask);
  setOutput(0, y);
  return success();
}

/// Multinomial by inverse transform: sample j of row b is the number of
/// classes whose cumulative probability (softmax of the row's
/// log-probabilities, summed along the classes) lies below a uniform draw,
/// capped at the last class (the sum may round below 1).
LogicalResult OnnxImporter::importMultinomial(Value logits, int64_t stream) {
  auto type = cast<RankedTensorType>(logits.getType());
  Type et = type.getElementType();
  if (type.getRank() != 2 || !type.hasStaticShape() || !isa<FloatType>(et))
    return failNode(llvm::formatv("Multinomial needs float log-probabilities "
                                  "of a static [batch, classes] shape, got {0}",
                                  type));
  int64_t batch = type.getDimSize(0), classes = type.getDimSize(1);
  int64_t samples = intAttr("sample_size", 1);
  if (samples < 1)
    return failNode(llvm::formatv("sample_size {0} must be >= 1", samples));
  Type outType = b.getI32Type();
  if (const onnx::AttributeProto *dtype = attr("dtype"))
    outType = convertElementType(ctx, dtype->i());
  if (!outType ||
      !(outType.isSignlessInteger(32) || outType.isSignlessInteger(64)))
    return failNode("Multinomial's dtype must be int32 or int64");
  GOPT_INFER(probabilities, SoftmaxOp, logits, b.getI64IntegerAttr(1));
  GOPT_INFER(cumulative, CumSumOp, probabilities, b.getI64IntegerAttr(1),
             b.getBoolAttr(false), b.getBoolAttr(false));
  GOPT_INFER(rows, ReshapeOp, cumulative, i64s({batch, 1, classes}));
  auto drawType = RankedTensorType::get({batch, samples, 1}, b.getI1Type());
  Value shaped = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(drawType, b.getBoolAttr(false)));
  Value u = uniformDraws(shaped, et, 0.0, 1.0, stream);
  GOPT_INFER(below, LessOp, rows, u);
  Value counts = createTyped<CastOp>(
      b, loc, cast<RankedTensorType>(below.getType()).clone(b.getI64Type()),
      below);
  if (!counts)
    return failOp();
  GOPT_INFER(index, ReduceSumOp, counts, i64s({2}), b.getBoolAttr(false));
  GOPT_INFER(capped, MinOp, index,
             createScalarConstant(b, loc, b.getI64Type(), classes - 1));
  return setResult(createTyped<CastOp>(
      b, loc, cast<RankedTensorType>(capped.getType()).clone(outType), capped));
}

/// RandomUniform(Like), RandomNormal(Like) and Bernoulli from uniform draws:
/// a normal value by Box-Muller from two draws, a Bernoulli value as a
/// draw below the probability.
LogicalResult OnnxImporter::importRandom(StringRef kind) {
  bool like =
      kind.ends_with("Like") || kind == "Bernoulli" || kind == "Multinomial";
  Value shaped;
  Type et;
  if (like) {
    GET_INPUT(x, 0);
    shaped = x;
    et = getElementTypeOrSelf(x.getType());
  } else {
    std::optional<SmallVector<int64_t>> shape = intsAttr("shape");
    if (!shape)
      return failNode("missing attribute 'shape'");
    if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
      return failNode("negative dimensions in 'shape'");
    auto boolType = RankedTensorType::get(*shape, b.getI1Type());
    shaped = b.create<ConstantOp>(
        loc, DenseElementsAttr::get(boolType, b.getBoolAttr(false)));
    et = b.getF32Type();
  }
  if (const onnx::AttributeProto *dtype = attr("dtype")) {
    et = convertElementType(ctx, dtype->i());
    if (!et)
      return failNode(
          llvm::formatv("unsupported dtype {0}", elementTypeName(dtype->i())));
  }
  int64_t stream = streamOfSeed(attr("seed"));
  if (kind == "Multinomial")
    return importMultinomial(shaped, stream);
  if (kind == "Bernoulli") {
    Type pt = getElementTypeOrSelf(shaped.getType());
    if (!isa<FloatType>(pt))
      return failNode("Bernoulli's probabilities must be floating point");
    Value u = uniformDraws(shaped, pt, 0.0, 1.0, stream);
    GOPT_INFER(hit, LessOp, u, shaped);
    return setResult(createTyped<CastOp>(
        b, loc, cast<RankedTensorType>(hit.getType()).clone(et), hit));
  }
  if (!isa<FloatType>(et))
    return failNode(
        llvm::formatv("{0} makes floating point values, not {1}", kind, et));
  if (kind.starts_with("RandomUniform")) {
    setOutput(0, uniformDraws(shaped, et, floatAttr("low", 0.0f),
                              floatAttr("high", 1.0f), stream));
    return success();
  }
  // Box-Muller: sqrt(-2 ln(1 - u1)) cos(2 pi u2); 1 - u1 is in (0, 1].
  Value u1 = uniformDraws(shaped, et, 0.0, 1.0, stream);
  Value u2 = uniformDraws(shaped, et, 0.0, 1.0,
                          stream ? stream ^ (int64_t(1) << 39) : 0);
  GOPT_INFER(complement, SubOp, createScalarConstant(b, loc, et, 1.0), u1);
  GOPT_INFER(logarithm, LogOp, complement);
  GOPT_INFER(scaledLog, MulOp, logarithm,
             createScalarConstant(b, loc, et, -2.0));
  GOPT_INFER(radius, SqrtOp, scaledLog);
  GOPT_INFER(angle, MulOp, u2, createScalarConstant(b, loc, et, 2.0 * M_PI));
  GOPT_INFER(cosine, CosOp, angle);
  GOPT_INFER(z, MulOp, radius, cosine);
  GOPT_INFER(spread, MulOp, z,
             createScalarConstant(b, loc, et, floatAttr("scale", 1.0f)));
  return setResult(createInferred<AddOp>(
      b, loc, spread,
      createScalarConstant(b, loc, et, floatAttr("mean", 0.0f))));
}

LogicalResult OnnxImporter::importCast() {
  GET_INPUT(x, 0);
  const onnx::AttributeProto *to = attr("to");
  if (!to)
    return failNode("missing attribute 'to'");
  Type et = convertElementType(ctx, to->i());
  if (!et)
    return failNode(
        llvm::formatv("unsupported target type {0}", elementTypeName(to->i())));
  // Cast-19's saturate: only casts to float8 read it.
  bool saturate = opset < 19 || intAttr("saturate", 1) != 0;
  return setResult(createTyped<CastOp>(
      b, loc, cast<RankedTensorType>(x.getType()).clone(et), x, saturate));
}

LogicalResult OnnxImporter::importArgReduce(bool max) {
  GET_INPUT(x, 0);
  // ONNX keeps the reduced axis by default, gopt (as TensorFlow) does not.
  BoolAttr keepDims = b.getBoolAttr(intAttr("keepdims", 1) != 0);
  BoolAttr last = b.getBoolAttr(intAttr("select_last_index", 0) != 0);
  IntegerAttr axis = b.getI64IntegerAttr(intAttr("axis", 0));
  if (max)
    return setResult(createInferred<ArgMaxOp>(b, loc, x, axis, keepDims, last));
  return setResult(createInferred<ArgMinOp>(b, loc, x, axis, keepDims, last));
}

LogicalResult OnnxImporter::importCumSum() {
  GET_INPUT(x, 0);
  if (node->input_size() < 2 || node->input(1).empty())
    return failNode("missing input #1 (axis)");
  bool exclusive = intAttr("exclusive", 0) != 0;
  bool reverse = intAttr("reverse", 0) != 0;
  if (!foldsToInts(node->input(1))) {
    // An axis fed at run time: read on the host when the session resolves.
    FailureOr<Value> axisValue = valueOperand(1, "axis");
    if (failed(axisValue))
      return failure();
    return setResult(createInferred<DynamicCumSumOp>(b, loc, x, *axisValue,
                                                     b.getBoolAttr(exclusive),
                                                     b.getBoolAttr(reverse)));
  }
  FailureOr<SmallVector<int64_t>> axis = constantInts(node->input(1));
  if (failed(axis))
    return failure();
  if (axis->size() != 1)
    return failNode(llvm::formatv("axis '{0}' must hold one value, got {1}",
                                  node->input(1), axis->size()));
  return setResult(createInferred<CumSumOp>(
      b, loc, x, b.getI64IntegerAttr(axis->front()), b.getBoolAttr(exclusive),
      b.getBoolAttr(reverse)));
}

/// ScatterElements (and Scatter) and ScatterND; `reduction` since opset 16.
LogicalResult OnnxImporter::importScatter(bool elements) {
  GET_INPUT(x, 0);
  GET_INPUT(indices, 1);
  GET_INPUT(updates, 2);
  std::string reduction = stringAttr("reduction", "none");
  bool minMax = reduction == "max" || reduction == "min";
  if (minMax && opset < 18)
    return failNode(llvm::formatv("reduction '{0}' needs opset 18", reduction));
  if (reduction != "none" && reduction != "add" && reduction != "mul" &&
      !minMax)
    return failNode(llvm::formatv(
        "reduction '{0}' is not supported (none, add, mul, max or min)",
        reduction));
  StringAttr reductionAttr = b.getStringAttr(reduction);
  if (elements)
    return setResult(createInferred<ScatterElementsOp>(
        b, loc, x, indices, updates, b.getI64IntegerAttr(intAttr("axis", 0)),
        reductionAttr));
  return setResult(
      createInferred<ScatterNDOp>(b, loc, x, indices, updates, reductionAttr));
}

/// TopK: K is an attribute before opset 10 and a constant input since.
LogicalResult OnnxImporter::importTopK() {
  GET_INPUT(x, 0);
  int64_t k;
  if (opset < 10) {
    const onnx::AttributeProto *a = attr("k");
    if (!a)
      return failNode("missing attribute 'k'");
    k = a->i();
  } else {
    if (node->input_size() < 2 || node->input(1).empty())
      return failNode("missing input #1 (K)");
    if (!foldsToInts(node->input(1))) {
      FailureOr<Value> kValue = valueOperand(1, "K");
      if (failed(kValue))
        return failure();
      GOPT_INFER(op, DynamicTopKOp, x, *kValue,
                 b.getI64IntegerAttr(intAttr("axis", -1)),
                 b.getBoolAttr(intAttr("largest", 1) != 0),
                 b.getBoolAttr(intAttr("sorted", 1) != 0));
      setOutput(0, op.getValues());
      setOutput(1, op.getIndices());
      return success();
    }
    FailureOr<SmallVector<int64_t>> kValues = constantInts(node->input(1));
    if (failed(kValues))
      return failure();
    if (kValues->size() != 1)
      return failNode(llvm::formatv("K '{0}' must hold one value, got {1}",
                                    node->input(1), kValues->size()));
    k = kValues->front();
  }
  GOPT_INFER(op, TopKOp, x, b.getI64IntegerAttr(k),
             b.getI64IntegerAttr(intAttr("axis", -1)),
             b.getBoolAttr(intAttr("largest", 1) != 0),
             b.getBoolAttr(intAttr("sorted", 1) != 0));
  setOutput(0, op.getValues());
  setOutput(1, op.getIndices());
  return success();
}

/// LSTM, GRU and RNN (opset 7 and later) with their default activations.
/// Absent B, initial_h, initial_c and P become a rank-0 zero, which the ops
/// broadcast (no batch size needed); layout 1 (batch-major) becomes
/// transposes around the sequence-major op.
LogicalResult OnnxImporter::importRecurrent(int64_t gates) {
  GET_INPUT(x, 0);
  GET_INPUT(w, 1);
  GET_INPUT(r, 2);
  GET_OPTIONAL_INPUT(bias, 3);
  GET_OPTIONAL_INPUT(sequenceLens, 4);
  GET_OPTIONAL_INPUT(initialH, 5);
  Value initialC, peepholes;
  const bool lstm = gates == 4;
  if (lstm) {
    GET_OPTIONAL_INPUT(c, 6);
    GET_OPTIONAL_INPUT(p, 7);
    initialC = c;
    peepholes = p;
  }
  std::string direction = stringAttr("direction", "forward");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return failNode(llvm::formatv("direction '{0}' is not one of forward, "
                                  "reverse, bidirectional",
                                  direction));
  int64_t directions = direction == "bidirectional" ? 2 : 1;
  // The defaults (f, g, h) = (Sigmoid, Tanh, Tanh), one set per direction;
  // other activations are not supported.
  SmallVector<StringRef> defaults =
      lstm         ? SmallVector<StringRef>{"Sigmoid", "Tanh", "Tanh"}
      : gates == 3 ? SmallVector<StringRef>{"Sigmoid", "Tanh"}
                   : SmallVector<StringRef>{"Tanh"};
  if (const onnx::AttributeProto *a = attr("activations")) {
    bool isDefault = a->strings_size() == int(defaults.size() * directions);
    for (int i = 0; isDefault && i < a->strings_size(); ++i)
      isDefault = StringRef(a->strings(i))
                      .equals_insensitive(defaults[i % defaults.size()]);
    if (!isDefault) {
      std::string given;
      for (int i = 0; i < a->strings_size(); ++i)
        given += (i ? ", " : "") + a->strings(i);
      return failNode(llvm::formatv(
          "attribute 'activations' [{0}] is not supported (only the "
          "defaults: {1} per direction)",
          given, llvm::join(defaults, ", ")));
    }
  }
  int64_t layout = intAttr("layout", 0);
  if (layout != 0 && layout != 1)
    return failNode(llvm::formatv("layout {0} is not 0 or 1", layout));
  auto r3 = cast<RankedTensorType>(r.getType());
  int64_t hiddenSize;
  if (const onnx::AttributeProto *a = attr("hidden_size"))
    hiddenSize = a->i();
  else if (r3.getRank() == 3 && !r3.isDynamicDim(2))
    hiddenSize = r3.getDimSize(2);
  else
    return failNode("attribute 'hidden_size' is absent and R's last "
                    "dimension is not static");
  float clip = 0.0f;
  if (attr("clip")) {
    clip = floatAttr("clip", 0.0f);
    if (!(clip > 0.0f))
      return failNode(llvm::formatv("attribute 'clip' must be positive, got "
                                    "{0}",
                                    clip));
  }
  Type et = cast<RankedTensorType>(x.getType()).getElementType();
  Value zero = createScalarConstant(b, loc, et, 0.0f);
  bias = bias ? bias : zero;
  initialH = initialH ? initialH : zero;
  auto batchMajor = [&](Value v, ArrayRef<int64_t> perm) -> Value {
    if (layout == 0 || v == zero)
      return v;
    GOPT_INFER_OR_NULL(transposed, TransposeOp, v, i64s(perm));
    return transposed;
  };
  x = batchMajor(x, {1, 0, 2});
  initialH = batchMajor(initialH, {1, 0, 2});
  if (!x || !initialH)
    return failOp();
  auto hiddenAttr = b.getI64IntegerAttr(hiddenSize);
  auto directionAttr = b.getStringAttr(direction);
  auto clipAttr = b.getF32FloatAttr(clip);
  SmallVector<Value> results;
  if (lstm) {
    initialC = batchMajor(initialC ? initialC : zero, {1, 0, 2});
    if (!initialC)
      return failOp();
    GOPT_INFER(op, LstmOp, x, w, r, bias, initialH, initialC,
               peepholes ? peepholes : zero, sequenceLens, hiddenAttr,
               directionAttr, clipAttr,
               b.getBoolAttr(intAttr("input_forget", 0) != 0));
    results.append({op.getY(), op.getYH(), op.getYC()});
  } else if (gates == 3) {
    GOPT_INFER(op, GruOp, x, w, r, bias, initialH, sequenceLens, hiddenAttr,
               directionAttr, clipAttr,
               b.getBoolAttr(intAttr("linear_before_reset", 0) != 0));
    results.append({op.getY(), op.getYH()});
  } else {
    GOPT_INFER(op, RnnOp, x, w, r, bias, initialH, sequenceLens, hiddenAttr,
               directionAttr, clipAttr);
    results.append({op.getY(), op.getYH()});
  }
  for (auto [i, value] : llvm::enumerate(results)) {
    if (int(i) >= node->output_size() || node->output(i).empty())
      continue;
    // y [S, D, B, H] -> [B, S, D, H]; states [D, B, H] -> [B, D, H].
    Value out = value;
    if (layout == 1)
      GOPT_INFER_ASSIGN(out, TransposeOp, value,
                        i64s(i == 0 ? ArrayRef<int64_t>{2, 0, 1, 3}
                                    : ArrayRef<int64_t>{1, 0, 2}));
    setOutput(i, out);
  }
  return success();
}

/// Shape; `start` and `end` (opset 15) slice the dims, negative ones
/// counting from the end, both clamped to the rank.
LogicalResult OnnxImporter::importShape() {
  GET_INPUT(x, 0);
  GOPT_INFER(shape, ShapeOp, x);
  if (!attr("start") && !attr("end")) {
    setOutput(0, shape);
    return success();
  }
  int64_t rank = shapeOf(x).size();
  auto clampToRank = [&](int64_t i) {
    return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
  };
  int64_t start = clampToRank(intAttr("start", 0));
  int64_t end = std::max(start, clampToRank(intAttr("end", rank)));
  return setResult(createInferred<SliceOp>(b, loc, shape, i64s({start}),
                                           i64s({end}), i64s({1})));
}

LogicalResult OnnxImporter::checkLegacyNode() {
  StringRef op = node->op_type();
  auto *registry = onnx::OpSchemaRegistry::Instance();
  const onnx::OpSchema *then = registry->GetSchema(node->op_type(), opset);
  const onnx::OpSchema *at7 = registry->GetSchema(node->op_type(), 7);
  if (then && at7 && then->SinceVersion() == at7->SinceVersion())
    return success();
  auto refuse = [&](StringRef why) {
    return failNode(llvm::formatv(
        "opset {0} is not supported for {1}: {2} (gopt imports the "
        "definition of opset 7 and later)",
        opset, op, why));
  };
  if (!then || !at7)
    return refuse("no such op in that opset");
  // Legacy broadcasting: with `broadcast` = 1 the second operand aligns at
  // `axis` of the first; numpy's rules (opset 7) align it at the end, which
  // is the same unless `axis` says otherwise. Without `broadcast` the shapes
  // are equal, which numpy's rules also cover.
  if (llvm::is_contained({"Add", "Sub", "Mul", "Div", "Pow"}, op)) {
    if (intAttr("broadcast", 0) == 0 || !attr("axis"))
      return success();
    FailureOr<Value> lhs = requiredInput(0), rhs = requiredInput(1);
    if (failed(lhs) || failed(rhs))
      return failure();
    int64_t lhsRank = shapeOf(*lhs).size(), rhsRank = shapeOf(*rhs).size();
    int64_t axis = intAttr("axis", 0);
    if (axis < 0)
      axis += lhsRank;
    if (axis == lhsRank - rhsRank)
      return success();
    return refuse(llvm::formatv("legacy broadcasting at axis {0} of a rank-{1} "
                                "operand differs from numpy broadcasting",
                                axis, lhsRank)
                      .str());
  }
  // Gemm's old `broadcast` of C is what unidirectional broadcasting does.
  // Pools and PRelu only gained attributes whose defaults are the old
  // behaviour.
  if (llvm::is_contained({"Gemm", "AveragePool", "MaxPool", "PRelu"}, op))
    return success();
  // is_test = 0 asked for training behaviour, which these ops changed.
  if (llvm::is_contained({"BatchNormalization", "Dropout"}, op)) {
    if (intAttr("is_test", 0) != 0)
      return success();
    return refuse("is_test = 0 (training mode)");
  }
  return refuse("its definition changed in opset 7");
}

/// Runs `import` on a copy of the current node whose inputs and outputs are
/// renamed to the values `lift` makes, then binds the node's outputs to what
/// `lower` makes of the copy's.
template <typename Lift, typename Lower>
static LogicalResult
importRewritten(onnx::NodeProto rewritten, const onnx::NodeProto *&node,
                llvm::StringMap<Value> &values,
                LogicalResult (*import)(OnnxImporter &), OnnxImporter &importer,
                Lift lift, Lower lower) {
  if (failed(lift(rewritten)))
    return failure();
  const onnx::NodeProto *original = node;
  node = &rewritten;
  LogicalResult imported = import(importer);
  node = original;
  if (failed(imported))
    return failure();
  return lower(rewritten);
}

/// The name a rewritten node gives its copy of value `name`.
static std::string rewrittenName(StringRef name) {
  return ("gopt.rewritten:" + name).str();
}

LogicalResult OnnxImporter::importWindowed1D(NodeImporter import2D,
                                             int windowedInputs) {
  GET_INPUT(x, 0);
  if (shapeOf(x).size() != 3)
    return import2D(*this);
  // A 1-D window over [N, C, L] is the 2-D one over [N, C, 1, L], as
  // TensorFlow runs conv1d.
  return importWithUnitSpatialDims(import2D, windowedInputs, 4);
}

LogicalResult OnnxImporter::importPoolNode(bool isMax) {
  GET_INPUT(x, 0);
  // The Indices output, and 8-bit MaxPool, need the op that computes them.
  bool indicesUsed = node->output_size() > 1 && !node->output(1).empty();
  if (isMax &&
      (indicesUsed ||
       !isa<FloatType>(cast<RankedTensorType>(x.getType()).getElementType())))
    return importMaxPoolWithIndices();
  NodeImporter pool = [](OnnxImporter &i) { return i.importPool(true); };
  if (!isMax)
    pool = [](OnnxImporter &i) { return i.importPool(false); };
  size_t rank = shapeOf(x).size();
  SmallVector<int64_t> dil =
      intsAttr("dilations").value_or(SmallVector<int64_t>());
  // Dilated windows run in the 3-D op only, so the 2-D pools' kernels
  // (oneDNN, CUDA), layout rules and gradients stay undilated.
  if ((rank == 3 || rank == 4) &&
      llvm::any_of(dil, [](int64_t d) { return d != 1; }))
    return importWithUnitSpatialDims(pool, 1, 5);
  return importWindowed1D(pool, 1);
}

/// LpPool: (sum over the window of |x|^p)^(1/p). The window sums are an
/// AveragePool (count_include_pad, no pads) of |x|^p padded with zeros,
/// times the window's size: the zeros stand for ONNX's pads, and for
/// ceil_mode's last windows past them, so every window divides by its size.
LogicalResult OnnxImporter::importLpPool() {
  GET_INPUT(x, 0);
  auto type = cast<RankedTensorType>(x.getType());
  if (!isa<FloatType>(type.getElementType()))
    return failNode(llvm::formatv("expects a float input, got {0}", type));
  ArrayRef<int64_t> shape = type.getShape();
  std::optional<SmallVector<int64_t>> kernel = intsAttr("kernel_shape");
  if (!kernel)
    return failNode("missing attribute 'kernel_shape'");
  size_t n = kernel->size();
  if (shape.size() != n + 2)
    return failNode(llvm::formatv("kernel_shape {0} does not fit input {1}",
                                  formatShape(*kernel), formatShape(shape)));
  SmallVector<int64_t> strides =
      intsAttr("strides").value_or(SmallVector<int64_t>(n, 1));
  SmallVector<int64_t> dilations =
      intsAttr("dilations").value_or(SmallVector<int64_t>(n, 1));
  SmallVector<int64_t> pads =
      intsAttr("pads").value_or(SmallVector<int64_t>(2 * n, 0));
  if (strides.size() != n || dilations.size() != n || pads.size() != 2 * n)
    return failNode("strides, dilations and pads must match kernel_shape");
  std::string autoPad = stringAttr("auto_pad", "NOTSET");
  bool ceil = intAttr("ceil_mode", 0) != 0;
  int64_t p = intAttr("p", 2);
  if (p < 1)
    return failNode(llvm::formatv("p must be positive, got {0}", p));
  // All pads explicit: [begin..., end...] of the spatial dims.
  SmallVector<int64_t> padAll(2 * shape.size(), 0);
  int64_t windowSize = 1;
  for (size_t d = 0; d < n; ++d) {
    int64_t in = shape[d + 2], k = (*kernel)[d], s = strides[d];
    if (ShapedType::isDynamic(in))
      return failNode("needs static spatial dimensions");
    if (k < 1 || s < 1 || dilations[d] < 1)
      return failNode("kernel_shape, strides and dilations must be positive");
    int64_t span = (k - 1) * dilations[d] + 1, begin = pads[d],
            end = pads[d + n];
    windowSize *= k;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>((out - 1) * s + span - in, 0);
      begin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else if (autoPad == "VALID") {
      begin = end = 0;
    } else if (autoPad != "NOTSET") {
      return failNode(
          llvm::formatv("auto_pad '{0}' is not supported", autoPad));
    }
    int64_t room = in + begin + end - span;
    if (room < 0)
      return failNode(llvm::formatv("the window ({0}) is larger than the "
                                    "padded input ({1}) in spatial dim {2}",
                                    span, in + begin + end, d));
    if (ceil && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
      // The last window may start past the end padding's zeros, but not
      // past the input and its begin padding (as PyTorch and ONNX count).
      int64_t out = (room + s - 1) / s + 1;
      if ((out - 1) * s >= in + begin)
        --out;
      end += std::max<int64_t>((out - 1) * s + span - (in + begin + end), 0);
    }
    padAll[2 * (d + 2)] = begin;
    padAll[2 * (d + 2) + 1] = end;
  }
  Type et = type.getElementType();
  Value powered = lpPower(x, p);
  if (!powered)
    return failure();
  GOPT_INFER_VALUE(padded, PadOp, powered, i64s(padAll),
                   b.getStringAttr("constant"), b.getF32FloatAttr(0.0f));
  // The pool as an AveragePool node of this one's window.
  onnx::NodeProto pool = *node;
  pool.clear_attribute();
  auto setInts = [&](const char *name, ArrayRef<int64_t> values) {
    onnx::AttributeProto *a = pool.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values)
      a->add_ints(v);
  };
  setInts("kernel_shape", *kernel);
  setInts("strides", strides);
  setInts("dilations", dilations);
  onnx::AttributeProto *include = pool.add_attribute();
  include->set_name("count_include_pad");
  include->set_type(onnx::AttributeProto::INT);
  include->set_i(1);
  const onnx::NodeProto *outer = node;
  node = &pool;
  SmallVector<Value> pooled;
  LogicalResult imported = importAs("AveragePool", {padded}, 1, pooled);
  node = outer;
  if (failed(imported))
    return failure();
  GOPT_INFER_VALUE(sums, MulOp, pooled[0],
                   createScalarConstant(b, loc, et, double(windowSize)));
  Value root = lpRoot(sums, p);
  if (!root)
    return failure();
  setOutput(0, root);
  return success();
}

/// |x|^p, as x * x for p = 2 and |x| for p = 1 (LpPool, GlobalLpPool,
/// LpNormalization); null (the node failed) on an invalid op.
Value OnnxImporter::lpPower(Value x, int64_t p) {
  Type et = cast<RankedTensorType>(x.getType()).getElementType();
  if (p == 1) {
    GOPT_INFER_OR_NULL(magnitude, AbsOp, x);
    return magnitude.getResult();
  }
  if (p == 2) {
    GOPT_INFER_OR_NULL(square, MulOp, x, x);
    return square.getResult();
  }
  GOPT_INFER_OR_NULL(magnitude, AbsOp, x);
  GOPT_INFER_OR_NULL(power, PowOp, magnitude.getResult(),
                     createScalarConstant(b, loc, et, double(p)));
  return power.getResult();
}

/// sums^(1/p): the p-norm of what lpPower's values summed to.
Value OnnxImporter::lpRoot(Value sums, int64_t p) {
  Type et = cast<RankedTensorType>(sums.getType()).getElementType();
  if (p == 1)
    return sums;
  if (p == 2) {
    GOPT_INFER_OR_NULL(root, SqrtOp, sums);
    return root.getResult();
  }
  GOPT_INFER_OR_NULL(root, PowOp, sums,
                     createScalarConstant(b, loc, et, 1.0 / double(p)));
  return root.getResult();
}

/// GlobalLpPool: the p-norm of every channel over all spatial dims, kept
/// as [N, C, 1, ..., 1].
LogicalResult OnnxImporter::importGlobalLpPool() {
  GET_INPUT(x, 0);
  auto type = cast<RankedTensorType>(x.getType());
  if (!isa<FloatType>(type.getElementType()))
    return failNode(llvm::formatv("expects a float input, got {0}", type));
  if (type.getRank() < 3)
    return failNode(
        llvm::formatv("expects X of rank 3 or more ([N, C, D1, ...]), got {0}",
                      formatShape(type.getShape())));
  int64_t p = intAttr("p", 2);
  if (p < 1)
    return failNode(llvm::formatv("p must be positive, got {0}", p));
  SmallVector<int64_t> spatial;
  for (int64_t d = 2; d < type.getRank(); ++d)
    spatial.push_back(d);
  Value powered = lpPower(x, p);
  if (!powered)
    return failure();
  GOPT_INFER_VALUE(sums, ReduceSumOp, powered, i64s(spatial),
                   b.getBoolAttr(true));
  Value root = lpRoot(sums, p);
  if (!root)
    return failure();
  setOutput(0, root);
  return success();
}

/// LpNormalization: x divided by its p-norm (p 1 or 2) along `axis`, with
/// no epsilon (ONNX's definition: a zero norm gives NaN or Inf, as in ONNX
/// Runtime).
LogicalResult OnnxImporter::importLpNormalization() {
  GET_INPUT(x, 0);
  auto type = cast<RankedTensorType>(x.getType());
  if (!isa<FloatType>(type.getElementType()))
    return failNode(llvm::formatv("expects a float input, got {0}", type));
  int64_t rank = type.getRank();
  int64_t axis = intAttr("axis", -1);
  if (axis < -rank || axis >= rank)
    return failNode(
        llvm::formatv("axis {0} is out of range for rank {1}", axis, rank));
  int64_t p = intAttr("p", 2);
  if (p != 1 && p != 2)
    return failNode(llvm::formatv("p must be 1 or 2, got {0}", p));
  Value powered = lpPower(x, p);
  if (!powered)
    return failure();
  GOPT_INFER_VALUE(sums, ReduceSumOp, powered,
                   i64s({axis < 0 ? axis + rank : axis}), b.getBoolAttr(true));
  Value norm = lpRoot(sums, p);
  if (!norm)
    return failure();
  return setResult(createInferred<DivOp>(b, loc, x, norm));
}

/// Imports the node as the same node over `rank`-D inputs: the first
/// `windowedInputs` inputs gain unit spatial dims after C, the window
/// attributes a leading 1 per added dim (0 for pads and output_padding),
/// and the results lose them again.
LogicalResult OnnxImporter::importWithUnitSpatialDims(NodeImporter import,
                                                      int windowedInputs,
                                                      size_t rank) {
  GET_INPUT(x, 0);
  size_t fromSpatial = shapeOf(x).size() - 2;
  size_t added = rank - shapeOf(x).size();
  auto lift = [&](onnx::NodeProto &n) -> LogicalResult {
    for (int i = 0; i < windowedInputs && i < n.input_size(); ++i) {
      if (n.input(i).empty())
        continue;
      GET_INPUT(v, i);
      SmallVector<int64_t> shape(shapeOf(v));
      if (shape.size() != fromSpatial + 2)
        return failNode(llvm::formatv(
            "input {0} of a {1}-D window must have rank {2}, got {3}", i,
            fromSpatial, fromSpatial + 2, formatShape(shape)));
      shape.insert(shape.begin() + 2, added, 1);
      for (int64_t &d : shape)
        if (ShapedType::isDynamic(d))
          d = -1;
      if (llvm::count(shape, -1) > 1)
        return failNode(llvm::formatv("a {0}-D window over more than one "
                                      "dynamic dimension is not supported",
                                      fromSpatial));
      GOPT_INFER(reshaped, ReshapeOp, v, i64s(shape));
      values[rewrittenName(n.input(i))] = reshaped;
      n.set_input(i, rewrittenName(n.input(i)));
    }
    for (onnx::AttributeProto &a : *n.mutable_attribute()) {
      if (a.type() != onnx::AttributeProto::INTS)
        continue;
      SmallVector<int64_t> v(a.ints().begin(), a.ints().end());
      a.clear_ints();
      if (a.name() == "pads") {
        if (v.size() != 2 * fromSpatial)
          return failNode(
              llvm::formatv("'pads' of a {0}-D window must have {1} values",
                            fromSpatial, 2 * fromSpatial));
        // ONNX: all begins, then all ends.
        v.insert(v.begin() + fromSpatial, added, 0);
        v.insert(v.begin(), added, 0);
      } else if (v.size() == fromSpatial) {
        v.insert(v.begin(), added, a.name() == "output_padding" ? 0 : 1);
      }
      for (int64_t d : v)
        a.add_ints(d);
    }
    for (int i = 0; i < n.output_size(); ++i)
      if (!n.output(i).empty())
        n.set_output(i, rewrittenName(n.output(i)));
    return success();
  };
  auto lower = [&](const onnx::NodeProto &n) -> LogicalResult {
    for (int i = 0; i < n.output_size(); ++i) {
      if (n.output(i).empty())
        continue;
      auto it = values.find(n.output(i));
      if (it == values.end())
        continue;
      SmallVector<int64_t> shape(shapeOf(it->second));
      shape.erase(shape.begin() + 2, shape.begin() + 2 + added);
      for (int64_t &d : shape)
        if (ShapedType::isDynamic(d))
          d = -1;
      GOPT_INFER(reshaped, ReshapeOp, it->second, i64s(shape));
      setOutput(i, reshaped);
    }
    return success();
  };
  return importRewritten(*node, node, values, import, *this, lift, lower);
}

LogicalResult OnnxImporter::importPerChannelAs4D(NodeImporter import4D) {
  GET_INPUT(x, 0);
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.size() != 3 && shape.size() != 5)
    return import4D(*this);
  // A per-channel op over [N, C, L] or [N, C, D, H, W] computes the same on
  // [N, C, L, 1] or [N, C, D, H*W].
  SmallVector<int64_t> as4D(shape.begin(), shape.begin() + 3);
  if (shape.size() == 3)
    as4D.push_back(1);
  else
    as4D.push_back(ShapedType::isDynamic(shape[3]) ||
                           ShapedType::isDynamic(shape[4])
                       ? -1
                       : shape[3] * shape[4]);
  SmallVector<int64_t> original(shape);
  for (SmallVector<int64_t> *dims : {&as4D, &original})
    for (int64_t &d : *dims)
      if (ShapedType::isDynamic(d))
        d = -1;
  if (llvm::count(as4D, -1) > 1 || llvm::count(original, -1) > 1)
    return failNode(llvm::formatv(
        "a rank-{0} input with more than one dynamic dimension is not "
        "supported",
        shape.size()));
  auto lift = [&](onnx::NodeProto &n) -> LogicalResult {
    GOPT_INFER(reshaped, ReshapeOp, x, i64s(as4D));
    values[rewrittenName(n.input(0))] = reshaped;
    n.set_input(0, rewrittenName(n.input(0)));
    n.set_output(0, rewrittenName(n.output(0)));
    return success();
  };
  auto lower = [&](const onnx::NodeProto &n) -> LogicalResult {
    GOPT_INFER(reshaped, ReshapeOp, values[n.output(0)], i64s(original));
    setOutput(0, reshaped);
    return success();
  };
  return importRewritten(*node, node, values, import4D, *this, lift, lower);
}

LogicalResult OnnxImporter::importLegacyPRelu() {
  GET_INPUT(x, 0);
  GET_INPUT(slope, 1);
  // Before opset 7 a 1-D slope holds one value per channel (axis 1), where
  // numpy broadcasting would align it with the last axis.
  ArrayRef<int64_t> xShape = shapeOf(x), slopeShape = shapeOf(slope);
  if (slopeShape.size() == 1 && slopeShape[0] != 1 && xShape.size() > 2) {
    SmallVector<int64_t> perChannel(xShape.size() - 1, 1);
    perChannel[0] = slopeShape[0];
    GOPT_INFER(reshaped, ReshapeOp, slope, i64s(perChannel));
    slope = reshaped;
  }
  return setResult(createInferred<PReluOp>(b, loc, x, slope));
}

//===----------------------------------------------------------------------===//
// Compositions and folds: ONNX ops gopt has no op for
//===----------------------------------------------------------------------===//

/// Output `i` as a constant folded at import time, also registered as a
/// constant so that later nodes (Reshape's shape, Slice's starts) read it.
LogicalResult OnnxImporter::setConstantOutput(int i, onnx::TensorProto tensor) {
  onnx::TensorProto &t = ownedTensors.emplace_back(std::move(tensor));
  RankedTensorType type;
  std::vector<char> bytes;
  if (failed(decodeTensor(t, "its folded value", type, bytes))) {
    std::string reason = error;
    error.clear();
    return failNode(reason);
  }
  if (i >= node->output_size() || node->output(i).empty())
    return success();
  constants[node->output(i)] = &t;
  setOutput(i, createConstant(b, loc, type, bytes, node->output(i)));
  return success();
}

/// Split: one slice per output, sized by `split` (an attribute before opset
/// 13, an input since) or equal parts.
/// Split with sizes known at run time: part i is a gopt.dynamic_slice along
/// `axis` from the sum of the sizes before it to that plus its own size,
/// computed by gopt ops that the session evaluates on the host with the
/// sizes.
LogicalResult OnnxImporter::importDynamicSplit(Value x, int64_t axis) {
  FailureOr<Value> sizes = valueOperand(1, "split");
  if (failed(sizes))
    return failure();
  int64_t parts = node->output_size();
  if (shapeOf(*sizes).size() != 1 || shapeOf(*sizes)[0] != parts)
    return failNode(llvm::formatv("'split' must hold {0} sizes, got {1}", parts,
                                  sizes->getType()));
  auto i64Vector = [&](ArrayRef<int64_t> values) -> Value {
    auto type = RankedTensorType::get({int64_t(values.size())}, b.getI64Type());
    return b.create<ConstantOp>(loc, DenseIntElementsAttr::get(type, values));
  };
  Value axes = i64Vector({axis}), steps = i64Vector({1});
  Value start = i64Vector({0});
  for (int64_t i = 0; i < parts; ++i) {
    GOPT_INFER(size, SliceOp, *sizes, i64s({i}), i64s({i + 1}), i64s({1}));
    GOPT_INFER(add, AddOp, start, size.getResult());
    Value end = add.getResult();
    SmallVector<int64_t> dims(shapeOf(x));
    dims[axis] = ShapedType::kDynamic;
    auto type = RankedTensorType::get(dims, getElementTypeOrSelf(x.getType()));
    setOutput(i, b.create<DynamicSliceOp>(loc, type, x, start, end, axes, steps)
                     .getResult());
    start = end;
  }
  return success();
}

LogicalResult OnnxImporter::importSplit() {
  GET_INPUT(x, 0);
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  int64_t axis = intAttr("axis", 0);
  if (axis < -rank || axis >= rank)
    return failNode(
        llvm::formatv("axis {0} out of range for rank {1}", axis, rank));
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> sizes;
  // Split-18: num_outputs parts of ceil(dim / num_outputs), the last
  // smaller.
  bool hasSplitInput = node->input_size() > 1 && !node->input(1).empty();
  std::optional<int64_t> numOutputs;
  if (opset >= 18 && attr("num_outputs")) {
    if (hasSplitInput)
      return failNode("takes either the input 'split' or the attribute "
                      "'num_outputs', not both");
    numOutputs = intAttr("num_outputs", 0);
  }
  if (opset < 13) {
    if (auto s = intsAttr("split"))
      sizes = *s;
  } else if (hasSplitInput) {
    if (!foldsToInts(node->input(1)))
      return importDynamicSplit(x, axis);
    FailureOr<SmallVector<int64_t>> s = constantInts(node->input(1));
    if (failed(s))
      return failure();
    sizes = *s;
  }
  int64_t parts = node->output_size();
  int64_t dim = in[axis];
  if (numOutputs) {
    if (*numOutputs != parts)
      return failNode(llvm::formatv("num_outputs is {0} but the node has {1} "
                                    "outputs",
                                    *numOutputs, parts));
    if (ShapedType::isDynamic(dim))
      return failNode(llvm::formatv(
          "a split of dynamic axis {0} by num_outputs is not supported", axis));
    int64_t chunk = parts > 0 ? (dim + parts - 1) / parts : 0;
    if (parts == 0 || dim - chunk * (parts - 1) < 0)
      return failNode(llvm::formatv(
          "axis {0} of size {1} does not split into {2} parts of {3}", axis,
          dim, parts, chunk));
    sizes.assign(parts, chunk);
    sizes.back() = dim - chunk * (parts - 1);
  }
  if (sizes.empty()) {
    if (ShapedType::isDynamic(dim))
      return failNode(llvm::formatv(
          "an equal split of dynamic axis {0} is not supported", axis));
    if (parts == 0 || dim % parts != 0)
      return failNode(llvm::formatv(
          "axis {0} of size {1} does not split into {2} equal parts", axis, dim,
          parts));
    sizes.assign(parts, dim / parts);
  }
  if (static_cast<int64_t>(sizes.size()) != parts)
    return failNode(llvm::formatv("'split' has {0} sizes for {1} outputs",
                                  sizes.size(), parts));
  if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }))
    return failNode("'split' sizes must not be negative");
  int64_t total = 0;
  for (int64_t s : sizes)
    total += s;
  if (!ShapedType::isDynamic(dim) && total != dim)
    return failNode(
        llvm::formatv("'split' sizes add up to {0}, but axis {1} has size {2}",
                      total, axis, dim));
  int64_t start = 0;
  for (int64_t i = 0; i < parts; ++i) {
    SmallVector<int64_t> starts(rank, 0),
        ends(rank, std::numeric_limits<int64_t>::max()), steps(rank, 1);
    starts[axis] = start;
    ends[axis] = start + sizes[i];
    start += sizes[i];
    GOPT_INFER(slice, SliceOp, x, i64s(starts), i64s(ends), i64s(steps));
    setOutput(i, slice);
  }
  return success();
}

/// Size folds to a constant: gopt has no op for it, and a static shape's
/// element count is known at import.
LogicalResult OnnxImporter::importSize() {
  GET_INPUT(x, 0);
  ArrayRef<int64_t> shape = shapeOf(x);
  if (llvm::any_of(shape, ShapedType::isDynamic))
    return failNode(llvm::formatv(
        "Size of the dynamic shape {0} is not supported (only static shapes "
        "fold)",
        formatShape(shape)));
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_int64_data(count);
  return setConstantOutput(0, std::move(t));
}

/// ConstantOfShape folds to a constant of its (constant or statically
/// computed) shape.
/// ConstantOfShape of a shape known at run time: its scalar expanded
/// (gopt.dynamic_expand).
LogicalResult OnnxImporter::importDynamicConstantOfShape() {
  FailureOr<Value> shapeValue = valueOperand(0, "shape");
  if (failed(shapeValue))
    return failure();
  onnx::TensorProto element;
  if (const onnx::AttributeProto *a = attr("value")) {
    element = a->t();
  } else {
    element.set_data_type(onnx::TensorProto::FLOAT);
    element.add_float_data(0.0f);
  }
  element.clear_dims();
  RankedTensorType elementType;
  std::vector<char> one;
  if (failed(decodeTensor(element, "attribute 'value'", elementType, one))) {
    std::string reason = error;
    error.clear();
    return failNode(reason);
  }
  if (elementType.getNumElements() != 1 ||
      elementType.getElementType().isInteger(1))
    return failNode("attribute 'value' must hold one non-bool element");
  auto scalarType = RankedTensorType::get({}, elementType.getElementType());
  Value scalar = b.create<ConstantOp>(
      loc, DenseElementsAttr::getFromRawBuffer(scalarType, one));
  return setResult(
      createInferred<DynamicExpandOp>(b, loc, scalar, *shapeValue));
}

LogicalResult OnnxImporter::importConstantOfShape() {
  GET_INPUT(shapeValue, 0);
  SmallVector<int64_t> dims;
  if (isConstant(node->input(0))) {
    FailureOr<SmallVector<int64_t>> d = constantInts(node->input(0));
    if (failed(d))
      return failure();
    dims = *d;
  } else {
    std::optional<SmallVector<ShapeEntry>> entries =
        traceShapeEntries(shapeValue);
    if (!entries || llvm::any_of(*entries, [](const ShapeEntry &e) {
          return static_cast<bool>(e.source);
        }))
      return importDynamicConstantOfShape();
    for (const ShapeEntry &e : *entries)
      dims.push_back(e.value);
  }
  onnx::TensorProto element;
  if (const onnx::AttributeProto *a = attr("value")) {
    element = a->t();
  } else {
    element.set_data_type(onnx::TensorProto::FLOAT);
    element.add_float_data(0.0f);
  }
  RankedTensorType elementType;
  std::vector<char> one;
  if (failed(decodeTensor(element, "attribute 'value'", elementType, one))) {
    std::string reason = error;
    error.clear();
    return failNode(reason);
  }
  if (elementType.getNumElements() != 1)
    return failNode(
        llvm::formatv("attribute 'value' must hold one element, got {0}",
                      elementType.getNumElements()));
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0)
      return failNode(llvm::formatv("negative dimension {0} in shape {1}", d,
                                    formatShape(dims)));
    if (d > 0 && count > (int64_t(1) << 28) / d)
      return failNode(
          llvm::formatv("shape {0} is too large to fold", formatShape(dims)));
    count *= d;
  }
  onnx::TensorProto t;
  t.set_data_type(element.data_type());
  for (int64_t d : dims)
    t.add_dims(d);
  std::string raw;
  raw.reserve(count * one.size());
  for (int64_t i = 0; i < count; ++i)
    raw.append(one.begin(), one.end());
  if (elementType.getElementType().isInteger(4)) {
    // The tensor's raw_data is ONNX's: 4-bit values packed two per byte.
    std::string packed((count + 1) / 2, '\0');
    gopt::runtime::packNibbles(reinterpret_cast<const uint8_t *>(raw.data()),
                               count,
                               reinterpret_cast<uint8_t *>(packed.data()));
    raw = std::move(packed);
  }
  t.set_raw_data(std::move(raw));
  return setConstantOutput(0, std::move(t));
}

/// Range folds to a constant when start, limit and delta are constants.
LogicalResult OnnxImporter::importRange() {
  if (node->input_size() != 3)
    return failNode(
        llvm::formatv("expects 3 inputs, got {0}", node->input_size()));
  if (!isConstant(node->input(0)) || !isConstant(node->input(1)) ||
      !isConstant(node->input(2))) {
    // Bounds known at run time (a sequence length): read on the host.
    SmallVector<Value> bounds;
    for (int i = 0; i < 3; ++i) {
      FailureOr<Value> v = valueOperand(i, "a bound", /*asI64=*/false);
      if (failed(v))
        return failure();
      if (!shapeOf(*v).empty() && shapeOf(*v)[0] != 1)
        return failNode(
            llvm::formatv("input '{0}' must be a scalar", node->input(i)));
      bounds.push_back(*v);
    }
    return setResult(createInferred<DynamicRangeOp>(b, loc, bounds[0],
                                                    bounds[1], bounds[2]));
  }
  SmallVector<DenseElementsAttr> bounds;
  for (int i = 0; i < 3; ++i) {
    FailureOr<DenseElementsAttr> v = constantAttr(node->input(i));
    if (failed(v))
      return failure();
    if (v->getNumElements() != 1)
      return failNode(
          llvm::formatv("input '{0}' must be a scalar", node->input(i)));
    bounds.push_back(*v);
  }
  Type elementType = bounds[0].getElementType();
  int32_t dataType = constants.lookup(node->input(0))->data_type();
  onnx::TensorProto t;
  t.set_data_type(dataType);
  if (isa<FloatType>(elementType)) {
    if (!elementType.isF32())
      return failNode("Range of a float type other than f32 is not supported");
    auto get = [&](int i) {
      return static_cast<double>(*bounds[i].getValues<float>().begin());
    };
    double start = get(0), limit = get(1), delta = get(2);
    if (delta == 0)
      return failNode("delta must not be 0");
    int64_t n = std::max<int64_t>(std::ceil((limit - start) / delta), 0);
    if (n > (int64_t(1) << 28))
      return failNode(llvm::formatv("{0} elements are too many to fold", n));
    t.add_dims(n);
    for (int64_t i = 0; i < n; ++i)
      t.add_float_data(static_cast<float>(start + i * delta));
    return setConstantOutput(0, std::move(t));
  }
  auto get = [&](int i) {
    return (*bounds[i].getValues<APInt>().begin()).getSExtValue();
  };
  int64_t start = get(0), limit = get(1), delta = get(2);
  if (delta == 0)
    return failNode("delta must not be 0");
  // ceil((limit - start) / delta) in integers, either sign of delta.
  int64_t span = limit - start;
  int64_t n =
      span / delta + ((span % delta != 0) && ((span < 0) == (delta < 0)));
  n = std::max<int64_t>(n, 0);
  if (n > (int64_t(1) << 28))
    return failNode(llvm::formatv("{0} elements are too many to fold", n));
  t.add_dims(n);
  for (int64_t i = 0; i < n; ++i) {
    if (dataType == onnx::TensorProto::INT64)
      t.add_int64_data(start + i * delta);
    else
      t.add_int32_data(static_cast<int32_t>(start + i * delta));
  }
  return setConstantOutput(0, std::move(t));
}

/// Mean: the sum of the inputs (broadcast) divided by their count.
LogicalResult OnnxImporter::importMean() {
  if (node->input_size() < 1)
    return failNode("needs at least one input");
  GET_INPUT(acc, 0);
  for (int i = 1; i < node->input_size(); ++i) {
    GET_INPUT(next, i);
    GOPT_INFER(add, AddOp, acc, next);
    acc = add;
  }
  if (node->input_size() == 1) {
    setOutput(0, acc);
    return success();
  }
  Type elementType = getElementTypeOrSelf(acc.getType());
  if (!isa<FloatType>(elementType))
    return failNode("Mean of integers is not supported (gopt averages floats)");
  Value count =
      createScalarConstant(b, loc, elementType, double(node->input_size()));
  return setResult(createInferred<DivOp>(b, loc, acc, count));
}

/// DepthToSpace (DCR and CRD) and SpaceToDepth: a reshape to six dimensions,
/// a transpose and a reshape back, as ONNX defines them.
LogicalResult OnnxImporter::importDepthToSpace(bool toSpace) {
  GET_INPUT(x, 0);
  ArrayRef<int64_t> in = shapeOf(x);
  if (in.size() != 4)
    return failNode(
        llvm::formatv("expects a rank-4 NCHW input, got {0}", formatShape(in)));
  const onnx::AttributeProto *blockAttr = attr("blocksize");
  if (!blockAttr)
    return failNode("missing attribute 'blocksize'");
  int64_t bs = blockAttr->i();
  if (bs < 1)
    return failNode(llvm::formatv("blocksize {0} must be positive", bs));
  int64_t n = ShapedType::isDynamic(in[0]) ? -1 : in[0];
  int64_t c = in[1], h = in[2], w = in[3];
  if (ShapedType::isDynamic(c) || ShapedType::isDynamic(h) ||
      ShapedType::isDynamic(w))
    return failNode(llvm::formatv(
        "dynamic C, H or W (input {0}) is not supported", formatShape(in)));
  SmallVector<int64_t> split, perm, out;
  // Larger blocks than the dims they divide would also overflow bs * bs.
  if (toSpace ? (bs > h || bs > w) : bs > c / bs)
    return failNode(
        llvm::formatv("blocksize {0} is larger than {1} allows (expected {2})",
                      bs, formatShape(in),
                      toSpace ? "H and W to be multiples of it"
                              : "C to be a multiple of its square"));
  if (toSpace) {
    if (h % bs || w % bs)
      return failNode(
          llvm::formatv("H and W of {0} must be multiples of blocksize {1}",
                        formatShape(in), bs));
    split = {n, c, h / bs, bs, w / bs, bs};
    perm = {0, 3, 5, 1, 2, 4};
    out = {n, c * bs * bs, h / bs, w / bs};
  } else {
    if (c % (bs * bs))
      return failNode(
          llvm::formatv("C of {0} must be a multiple of blocksize^2 = {1}",
                        formatShape(in), bs * bs));
    std::string mode = stringAttr("mode", "DCR");
    int64_t depth = c / (bs * bs);
    if (mode == "DCR") {
      split = {n, bs, bs, depth, h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      split = {n, depth, bs, bs, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      return failNode(
          llvm::formatv("unknown mode '{0}' (expected DCR or CRD)", mode));
    }
    out = {n, depth, h * bs, w * bs};
  }
  GOPT_INFER(blocks, ReshapeOp, x, i64s(split));
  GOPT_INFER(moved, TransposeOp, blocks, i64s(perm));
  return reshapeTo(moved, out);
}

/// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
LogicalResult OnnxImporter::importShrink() {
  GET_INPUT(x, 0);
  Type elementType = getElementTypeOrSelf(x.getType());
  if (!isa<FloatType>(elementType))
    return failNode("Shrink of integers is not supported (gopt shrinks "
                    "floats)");
  double lambd = floatAttr("lambd", 0.5f), bias = floatAttr("bias", 0.0f);
  Value low = createScalarConstant(b, loc, elementType, -lambd);
  Value high = createScalarConstant(b, loc, elementType, lambd);
  Value shift = createScalarConstant(b, loc, elementType, bias);
  Value zero = createScalarConstant(b, loc, elementType, 0.0);
  GOPT_INFER(below, LessOp, x, low);
  GOPT_INFER(above, GreaterOp, x, high);
  GOPT_INFER(plus, AddOp, x, shift);
  GOPT_INFER(minus, SubOp, x, shift);
  GOPT_INFER(upper, WhereOp, above, minus, zero);
  return setResult(createInferred<WhereOp>(b, loc, below, plus, upper));
}

/// Hardmax: 1 at the first maximum along the axis, 0 elsewhere, as the
/// arg_max compared with the axis' indices. Before opset 13 the axis
/// flattens the dimensions from it on, as Softmax's does.
LogicalResult OnnxImporter::importHardmax() {
  GET_INPUT(x, 0);
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  int64_t axis = intAttr("axis", opset < 13 ? 1 : -1);
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    return failNode(
        llvm::formatv("axis {0} out of range for rank {1}", axis, rank));
  if (axis < 0)
    axis += rank;
  auto oneHot = [&](Value v, int64_t along) -> Value {
    ArrayRef<int64_t> shape = shapeOf(v);
    int64_t size = shape[along];
    if (ShapedType::isDynamic(size)) {
      (void)failNode(llvm::formatv("Hardmax along the dynamic axis {0} is not "
                                   "supported",
                                   along));
      return Value();
    }
    GOPT_INFER_OR_NULL(index, ArgMaxOp, v, b.getI64IntegerAttr(along),
                       b.getBoolAttr(true), b.getBoolAttr(false));
    SmallVector<int64_t> iotaShape(shape.size(), 1), iota;
    iotaShape[along] = size;
    for (int64_t i = 0; i < size; ++i)
      iota.push_back(i);
    Value positions = createI64Constant(b, loc, iotaShape, iota);
    GOPT_INFER_OR_NULL(hit, EqualOp, index, positions);
    auto hitType = cast<RankedTensorType>(hit.getType());
    Value y = createTyped<CastOp>(
        b, loc, hitType.clone(getElementTypeOrSelf(v.getType())), hit);
    return y;
  };
  if (opset >= 13 || axis == rank - 1) {
    Value y = oneHot(x, axis);
    if (!y)
      return failure();
    setOutput(0, y);
    return success();
  }
  if (llvm::any_of(in, ShapedType::isDynamic))
    return failNode("Hardmax before opset 13 over a dynamic shape is not "
                    "supported");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= in[i];
  GOPT_INFER(flat, ReshapeOp, x, i64s({outer, inner}));
  Value y = oneHot(flat, 1);
  if (!y)
    return failure();
  return reshapeTo(y, in);
}

/// CastLike: Cast to the element type of input 1.
LogicalResult OnnxImporter::importCastLike() {
  GET_INPUT(x, 0);
  GET_INPUT(like, 1);
  Type elementType = getElementTypeOrSelf(like.getType());
  bool saturate = opset < 19 || intAttr("saturate", 1) != 0;
  return setResult(createTyped<CastOp>(
      b, loc, cast<RankedTensorType>(x.getType()).clone(elementType), x,
      saturate));
}

/// Trilu: x where the column minus the row is at least k (upper) or at most
/// k (lower), else 0, as a where over a constant mask of the last two
/// (static) dimensions, broadcast over the others.
LogicalResult OnnxImporter::importTrilu() {
  GET_INPUT(x, 0);
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  if (rank < 2)
    return failNode(
        llvm::formatv("expects rank 2 or more, got {0}", formatShape(in)));
  int64_t rows = in[rank - 2], cols = in[rank - 1];
  if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(cols))
    return failNode(
        llvm::formatv("dynamic rows or columns (input {0}) are not supported",
                      formatShape(in)));
  bool upper = intAttr("upper", 1) != 0;
  Value zero =
      createScalarConstant(b, loc, getElementTypeOrSelf(x.getType()), 0.0);
  int64_t k = 0;
  GET_OPTIONAL_INPUT(kValue, 1);
  if (kValue && !isConstant(node->input(1)) && !foldValue(kValue)) {
    // k fed at run time: the column minus the row of each position compared
    // with k.
    if (!getElementTypeOrSelf(kValue.getType()).isInteger(64) ||
        llvm::any_of(shapeOf(kValue), [](int64_t d) { return d != 1; }))
      return failNode(
          llvm::formatv("k '{0}' must be one i64 value", node->input(1)));
    SmallVector<int64_t> offsets;
    offsets.reserve(rows * cols);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        offsets.push_back(j - i);
    Value diagonals = createI64Constant(b, loc, {rows, cols}, offsets);
    Value mask;
    if (upper)
      GOPT_INFER_ASSIGN(mask, GreaterEqualOp, diagonals, kValue);
    else
      GOPT_INFER_ASSIGN(mask, LessEqualOp, diagonals, kValue);
    return setResult(createInferred<WhereOp>(b, loc, mask, x, zero));
  }
  if (node->input_size() > 1 && !node->input(1).empty()) {
    FailureOr<SmallVector<int64_t>> kValues = constantInts(node->input(1));
    if (failed(kValues))
      return failure();
    if (kValues->size() != 1)
      return failNode(llvm::formatv("k '{0}' must hold one value, got {1}",
                                    node->input(1), kValues->size()));
    k = kValues->front();
  }
  SmallVector<bool> keep;
  keep.reserve(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      keep.push_back(upper ? j - i >= k : j - i <= k);
  auto maskType = RankedTensorType::get({rows, cols}, b.getI1Type());
  Value mask =
      b.create<ConstantOp>(loc, DenseElementsAttr::get(maskType, keep));
  return setResult(createInferred<WhereOp>(b, loc, mask, x, zero));
}

/// Neg: gopt.neg is a float op; an integer Neg (ONNX functions negate
/// axes) is 0 - x.
LogicalResult OnnxImporter::importNeg() {
  GET_INPUT(x, 0);
  Type elementType = getElementTypeOrSelf(x.getType());
  if (isa<FloatType>(elementType))
    return setResult(createInferred<NegOp>(b, loc, x));
  Value zero = createScalarConstant(b, loc, elementType, 0.0);
  return setResult(createInferred<SubOp>(b, loc, zero, x));
}

/// NegativeLogLikelihoodLoss, and SoftmaxCrossEntropyLoss as the same loss
/// of log_softmax along the class axis (its optional second output):
/// loss[n, d...] = -x[n, t[n, d...], d...] * weight[t[n, d...]], and 0 where
/// t is ignore_index, as a gather_elements along the class axis, a gather of
/// the weights and wheres. Mean divides by the sum of the weights of the
/// targets not ignored (their count without weights), as ONNX's reference.
LogicalResult OnnxImporter::importLoss(bool softmax) {
  GET_INPUT(x, 0);
  GET_INPUT(target, 1);
  GET_OPTIONAL_INPUT(weight, 2);
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  Type elementType = getElementTypeOrSelf(x.getType());
  Type indexType = getElementTypeOrSelf(target.getType());
  if (!isa<FloatType>(elementType))
    return failNode("expects float scores as input 0");
  if (rank < 2)
    return failNode(llvm::formatv("expects scores [N, C, d1, ...], got {0}",
                                  formatShape(in)));
  if (!indexType.isInteger(32) && !indexType.isInteger(64))
    return failNode("expects an i32 or i64 target");
  if (int64_t(shapeOf(target).size()) != rank - 1)
    return failNode(llvm::formatv(
        "target {0} must have the dimensions of scores {1} but the class "
        "axis",
        formatShape(shapeOf(target)), formatShape(in)));
  if (weight && (shapeOf(weight).size() != 1 ||
                 getElementTypeOrSelf(weight.getType()) != elementType))
    return failNode("weight must be a 1-D tensor of the scores' element type");
  std::string reduction = stringAttr("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return failNode(llvm::formatv(
        "unknown reduction '{0}' (expected none, sum or mean)", reduction));

  Value logProb = x;
  if (softmax) {
    GOPT_INFER(op, LogSoftmaxOp, x, b.getI64IntegerAttr(1));
    logProb = op;
    setOutput(1, logProb);
  }
  Value zero = createScalarConstant(b, loc, elementType, 0.0);
  // Ignored targets may hold any value, a class or not: they read class 0,
  // and their loss and weight become 0. An i32 target cannot hold an
  // ignore_index outside i32's range, so none is ignored then.
  Value ignored, classes = target;
  const onnx::AttributeProto *ignoreAttr = attr("ignore_index");
  if (ignoreAttr &&
      (indexType.isInteger(64) ||
       (ignoreAttr->i() >= std::numeric_limits<int32_t>::min() &&
        ignoreAttr->i() <= std::numeric_limits<int32_t>::max()))) {
    Value ignoreIndex = b.create<ConstantOp>(
        loc,
        DenseElementsAttr::get(RankedTensorType::get({}, indexType),
                               b.getIntegerAttr(indexType, ignoreAttr->i())));
    GOPT_INFER(isIgnored, EqualOp, target, ignoreIndex);
    GOPT_INFER(safe, WhereOp, isIgnored,
               createScalarConstant(b, loc, indexType, 0.0), target);
    ignored = isIgnored;
    classes = safe;
  }
  Value index = reshapedAxis(classes, 1, /*insert=*/true);
  GOPT_INFER(picked, GatherElementsOp, logProb, index, b.getI64IntegerAttr(1));
  Value pickedFlat = reshapedAxis(picked, 1, /*insert=*/false);
  if (!pickedFlat)
    return failOp();
  GOPT_INFER(negated, NegOp, pickedFlat);
  Value loss = negated;
  // Each target's weight; null while every weight is 1.
  Value targetWeight;
  if (weight) {
    GOPT_INFER(gathered, GatherOp, weight, classes, b.getI64IntegerAttr(0));
    targetWeight = gathered;
    GOPT_INFER(weighted, MulOp, loss, targetWeight);
    loss = weighted;
  }
  if (ignored) {
    GOPT_INFER(keptLoss, WhereOp, ignored, zero, loss);
    Value kept = targetWeight ? targetWeight
                              : createScalarConstant(b, loc, elementType, 1.0);
    GOPT_INFER(keptWeight, WhereOp, ignored, zero, kept);
    loss = keptLoss;
    targetWeight = keptWeight;
  }
  if (reduction == "none") {
    setOutput(0, loss);
    return success();
  }
  if (reduction == "mean" && !targetWeight)
    return setResult(createInferred<ReduceMeanOp>(b, loc, loss, i64s({}),
                                                  b.getBoolAttr(false)));
  GOPT_INFER(sum, ReduceSumOp, loss, i64s({}), b.getBoolAttr(false));
  if (reduction == "sum") {
    setOutput(0, sum);
    return success();
  }
  GOPT_INFER(totalWeight, ReduceSumOp, targetWeight, i64s({}),
             b.getBoolAttr(false));
  return setResult(createInferred<DivOp>(b, loc, sum, totalWeight));
}

/// OneHot: values[1] where the index (a negative one counts from depth)
/// equals the position along the new axis, values[0] elsewhere, as an equal
/// against the axis' positions and a where. A constant depth gives constant
/// positions; one known at run time (fed or computed from shapes) gives
/// them as a gopt.dynamic_range, which the session sizes on the host.
LogicalResult OnnxImporter::importOneHot() {
  GET_INPUT(indices, 0);
  GET_INPUT(depthValue, 1);
  GET_INPUT(values, 2);
  int64_t depth = ShapedType::kDynamic;
  Value runTimeDepth;
  if (isConstant(node->input(1))) {
    FailureOr<double> depthScalar = constantScalar(node->input(1));
    if (failed(depthScalar))
      return failure();
    depth = static_cast<int64_t>(*depthScalar);
    if (depth < 1)
      return failNode(llvm::formatv("depth {0} must be positive", depth));
  } else {
    FailureOr<Value> v = valueOperand(1, "depth", /*asI64=*/false);
    if (failed(v))
      return failure();
    if (!shapeOf(*v).empty() && shapeOf(*v)[0] != 1)
      return failNode(llvm::formatv("input '{0}' (depth) must hold one value",
                                    node->input(1)));
    GOPT_INFER_ASSIGN(runTimeDepth, ReshapeOp, *v, i64s({}));
    if (!getElementTypeOrSelf(*v).isInteger(64))
      runTimeDepth = createTyped<CastOp>(
          b, loc, RankedTensorType::get({}, b.getI64Type()), runTimeDepth);
    if (!runTimeDepth)
      return failOp();
  }
  (void)depthValue;
  if (shapeOf(values) != ArrayRef<int64_t>{2})
    return failNode(llvm::formatv("values must be [off, on], got shape {0}",
                                  formatShape(shapeOf(values))));
  int64_t rank = shapeOf(indices).size() + 1;
  int64_t axis = intAttr("axis", -1);
  if (axis < -rank || axis >= rank)
    return failNode(
        llvm::formatv("axis {0} out of range for rank {1}", axis, rank));
  if (axis < 0)
    axis += rank;
  Value index = indices;
  if (!getElementTypeOrSelf(indices.getType()).isInteger(64)) {
    index = createTyped<CastOp>(
        b, loc, cast<RankedTensorType>(indices.getType()).clone(b.getI64Type()),
        indices);
  }
  Value zero = createI64Constant(b, loc, ArrayRef<int64_t>(), {0});
  Value depthTensor =
      runTimeDepth ? runTimeDepth
                   : createI64Constant(b, loc, ArrayRef<int64_t>(), {depth});
  GOPT_INFER(negative, LessOp, index, zero);
  GOPT_INFER(wrapped, AddOp, index, depthTensor);
  GOPT_INFER(position, WhereOp, negative, wrapped, index);
  Value expanded = reshapedAxis(position, axis, /*insert=*/true);
  if (!expanded)
    return failOp();
  SmallVector<int64_t> positionsShape(rank, 1), positions;
  Value positionsTensor;
  if (runTimeDepth) {
    GOPT_INFER(range, DynamicRangeOp, zero, runTimeDepth,
               createI64Constant(b, loc, ArrayRef<int64_t>(), {1}));
    positionsShape[axis] = -1;
    GOPT_INFER_ASSIGN(positionsTensor, ReshapeOp, range, i64s(positionsShape));
  } else {
    positionsShape[axis] = depth;
    for (int64_t i = 0; i < depth; ++i)
      positions.push_back(i);
    positionsTensor = createI64Constant(b, loc, positionsShape, positions);
  }
  GOPT_INFER(hit, EqualOp, expanded, positionsTensor);
  GOPT_INFER(off, GatherOp, values,
             createI64Constant(b, loc, ArrayRef<int64_t>(), {0}),
             b.getI64IntegerAttr(0));
  GOPT_INFER(on, GatherOp, values,
             createI64Constant(b, loc, ArrayRef<int64_t>(), {1}),
             b.getI64IntegerAttr(0));
  return setResult(createInferred<WhereOp>(b, loc, hit, on, off));
}

/// Unique: gopt.unique, `axis` only when the node has one (its absence
/// flattens), `sorted` as a bool.
LogicalResult OnnxImporter::importUnique() {
  GET_INPUT(x, 0);
  IntegerAttr axis;
  if (attr("axis"))
    axis = b.getI64IntegerAttr(intAttr("axis", 0));
  GOPT_INFER(op, UniqueOp, x, axis, b.getBoolAttr(intAttr("sorted", 1) != 0));
  setOutput(0, op.getY());
  setOutput(1, op.getIndices());
  setOutput(2, op.getInverseIndices());
  setOutput(3, op.getCounts());
  return success();
}

/// NonMaxSuppression: absent limits become their meaning as one-element
/// constants (no boxes kept, IoU 0, no score threshold).
LogicalResult OnnxImporter::importNonMaxSuppression() {
  GET_INPUT(boxes, 0);
  GET_INPUT(scores, 1);
  GET_OPTIONAL_INPUT(maxOutput, 2);
  GET_OPTIONAL_INPUT(iouThreshold, 3);
  GET_OPTIONAL_INPUT(scoreThreshold, 4);
  if (!maxOutput)
    maxOutput = createI64Constant(b, loc, ArrayRef<int64_t>{1}, {0});
  if (!iouThreshold)
    iouThreshold = createScalarConstant(b, loc, b.getF32Type(), 0.0);
  if (!scoreThreshold)
    scoreThreshold = createScalarConstant(
        b, loc, b.getF32Type(), -std::numeric_limits<double>::infinity());
  return setResult(createInferred<NonMaxSuppressionOp>(
      b, loc, boxes, scores, maxOutput, iouThreshold, scoreThreshold,
      b.getI64IntegerAttr(intAttr("center_point_box", 0))));
}

/// EyeLike: ones on diagonal k of a (static) 2-D shape, as a constant mask
/// cast to the element type (dtype, or the input's).
LogicalResult OnnxImporter::importEyeLike() {
  GET_INPUT(x, 0);
  ArrayRef<int64_t> in = shapeOf(x);
  if (in.size() != 2 || llvm::any_of(in, ShapedType::isDynamic))
    return failNode(
        llvm::formatv("expects a static 2-D input, got {0}", formatShape(in)));
  Type elementType = getElementTypeOrSelf(x.getType());
  if (const onnx::AttributeProto *dtype = attr("dtype")) {
    elementType = convertElementType(ctx, dtype->i());
    if (!elementType)
      return failNode(
          llvm::formatv("unsupported dtype {0}", elementTypeName(dtype->i())));
  }
  int64_t k = intAttr("k", 0);
  SmallVector<bool> diagonal;
  diagonal.reserve(in[0] * in[1]);
  for (int64_t i = 0; i < in[0]; ++i)
    for (int64_t j = 0; j < in[1]; ++j)
      diagonal.push_back(j - i == k);
  Value mask = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get(in, b.getI1Type()),
                                  diagonal));
  return setResult(createTyped<CastOp>(
      b, loc, RankedTensorType::get(in, elementType), mask));
}

/// MeanVarianceNormalization as ONNX's function body defines it:
/// (x - mean(x)) / (sqrt(mean(x^2) - mean(x)^2) + 1e-9) over `axes`.
LogicalResult OnnxImporter::importMeanVarianceNormalization() {
  GET_INPUT(x, 0);
  Type elementType = getElementTypeOrSelf(x.getType());
  if (!isa<FloatType>(elementType))
    return failNode("expects a float input");
  SmallVector<int64_t> axes =
      intsAttr("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  GOPT_INFER(mean, ReduceMeanOp, x, i64s(axes), b.getBoolAttr(true));
  GOPT_INFER(squares, MulOp, x, x);
  GOPT_INFER(meanOfSquares, ReduceMeanOp, squares, i64s(axes),
             b.getBoolAttr(true));
  GOPT_INFER(squaredMean, MulOp, mean, mean);
  GOPT_INFER(variance, SubOp, meanOfSquares, squaredMean);
  GOPT_INFER(deviation, SqrtOp, variance);
  GOPT_INFER(denominator, AddOp, deviation,
             createScalarConstant(b, loc, elementType, 1e-9));
  GOPT_INFER(centered, SubOp, x, mean);
  return setResult(createInferred<DivOp>(b, loc, centered, denominator));
}

/// ReverseSequence: y[.., t, .., b, ..] = x[.., t', .., b, ..] with
/// t' = len[b] - 1 - t for t < len[b] and t' = t after, as a gather_elements
/// along the time axis of indices computed from sequence_lens at run time
/// (expanded to x's static shape).
LogicalResult OnnxImporter::importReverseSequence() {
  GET_INPUT(x, 0);
  GET_INPUT(lengths, 1);
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t rank = in.size();
  int64_t batchAxis = intAttr("batch_axis", 1);
  int64_t timeAxis = intAttr("time_axis", 0);
  if (rank < 2 || llvm::any_of(in, ShapedType::isDynamic))
    return failNode(llvm::formatv("expects a static input of rank 2 or more, "
                                  "got {0}",
                                  formatShape(in)));
  if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    return failNode(llvm::formatv(
        "batch_axis {0} and time_axis {1} must be 0 and 1, one each", batchAxis,
        timeAxis));
  if (shapeOf(lengths) != ArrayRef<int64_t>{in[batchAxis]})
    return failNode(llvm::formatv(
        "sequence_lens {0} must hold one length per batch entry ({1})",
        formatShape(shapeOf(lengths)), in[batchAxis]));
  Value lengths64 = lengths;
  if (!getElementTypeOrSelf(lengths.getType()).isInteger(64)) {
    lengths64 = createTyped<CastOp>(
        b, loc, cast<RankedTensorType>(lengths.getType()).clone(b.getI64Type()),
        lengths);
    if (!lengths64)
      return failOp();
  }
  SmallVector<int64_t> lengthsShape(rank, 1), timesShape(rank, 1), times;
  lengthsShape[batchAxis] = in[batchAxis];
  timesShape[timeAxis] = in[timeAxis];
  for (int64_t t = 0; t < in[timeAxis]; ++t)
    times.push_back(t);
  Value time = createI64Constant(b, loc, timesShape, times);
  GOPT_INFER(length, ReshapeOp, lengths64, i64s(lengthsShape));
  GOPT_INFER(last, SubOp, length,
             createI64Constant(b, loc, ArrayRef<int64_t>(), {1}));
  GOPT_INFER(inside, LessOp, time, length);
  GOPT_INFER(mirrored, SubOp, last, time);
  GOPT_INFER(source, WhereOp, inside, mirrored, time);
  GOPT_INFER(index, ExpandOp, source, i64s(in));
  return setResult(createInferred<GatherElementsOp>(
      b, loc, x, index, b.getI64IntegerAttr(timeAxis)));
}

/// Einsum of one or two operands as reduce_sum, transposes, reshapes and
/// one batched matmul: labels of both operands and the output are the
/// matmul's batch dims, labels of both but not the output its contraction,
/// the others its rows and columns. An ellipsis stands for the same leading
/// dims in every operand. Diagonals (a label twice in one operand) and more
/// than two operands are refused.
LogicalResult OnnxImporter::importEinsum() {
  std::string equation;
  for (char c : stringAttr("equation", ""))
    if (c != ' ')
      equation.push_back(c);
  int numInputs = node->input_size();
  if (numInputs < 1 || numInputs > 2)
    return failNode(llvm::formatv(
        "Einsum of {0} operands is not supported (one or two)", numInputs));
  SmallVector<Value> operands;
  for (int i = 0; i < numInputs; ++i) {
    GET_INPUT(v, i);
    operands.push_back(v);
  }
  size_t arrow = equation.find("->");
  std::string lhsText = equation.substr(0, arrow);
  SmallVector<std::string> terms;
  for (StringRef t : llvm::split(StringRef(lhsText), ','))
    terms.push_back(t.str());
  if (static_cast<int>(terms.size()) != numInputs)
    return failNode(llvm::formatv("equation '{0}' has {1} terms for {2} inputs",
                                  equation, terms.size(), numInputs));
  // Labels: letters; an ellipsis' dims get the digits, right-aligned, so the
  // same ellipsis dim has the same label in every operand.
  int64_t ellipsisRank = -1;
  auto expand = [&](StringRef term, int64_t rank,
                    std::string &labels) -> LogicalResult {
    size_t dots = term.find("...");
    int64_t letters = term.size() - (dots == StringRef::npos ? 0 : 3);
    for (char c : term)
      if (c != '.' && !llvm::isAlpha(c))
        return failNode(llvm::formatv("bad label '{0}' in '{1}'", c, equation));
    if (dots == StringRef::npos) {
      if (letters != rank)
        return failNode(llvm::formatv("term '{0}' has {1} labels for rank {2}",
                                      term, letters, rank));
      labels = term.str();
      return success();
    }
    int64_t width = rank - letters;
    if (width < 0 || width > 10 || (ellipsisRank >= 0 && width != ellipsisRank))
      return failNode(llvm::formatv(
          "ellipses of different or invalid widths in '{0}' are not supported",
          equation));
    ellipsisRank = width;
    labels = term.substr(0, dots).str();
    for (int64_t j = 0; j < width; ++j)
      labels.push_back('0' + (10 - width + j));
    labels += term.substr(dots + 3).str();
    return success();
  };
  SmallVector<std::string> labels(numInputs);
  llvm::DenseMap<char, int64_t> dimOf;
  for (int i = 0; i < numInputs; ++i) {
    ArrayRef<int64_t> shape = shapeOf(operands[i]);
    if (failed(expand(terms[i], shape.size(), labels[i])))
      return failure();
    for (auto [j, c] : llvm::enumerate(labels[i])) {
      auto [it, inserted] = dimOf.try_emplace(c, shape[j]);
      if (!inserted && it->second != shape[j]) {
        if (ShapedType::isDynamic(it->second))
          it->second = shape[j];
        else if (!ShapedType::isDynamic(shape[j]))
          return failNode(llvm::formatv("label '{0}' has sizes {1} and {2}", c,
                                        it->second, shape[j]));
      }
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    StringRef outTerm = StringRef(equation).substr(arrow + 2);
    if (outTerm.contains("...")) {
      if (ellipsisRank < 0)
        return failNode("the output has an ellipsis the inputs lack");
      if (failed(expand(outTerm, outTerm.size() - 3 + ellipsisRank, out)))
        return failure();
    } else {
      if (failed(expand(outTerm, outTerm.size(), out)))
        return failure();
    }
    for (char c : out)
      if (!dimOf.count(c) || llvm::count(out, c) > 1)
        return failNode(llvm::formatv("bad output label '{0}'", c));
  } else {
    // Implicit output: the ellipsis, then the labels used once, sorted.
    for (int64_t j = 0; j < std::max<int64_t>(ellipsisRank, 0); ++j)
      out.push_back('0' + (10 - ellipsisRank + j));
    std::string once;
    for (auto &[c, dim] : dimOf) {
      int uses = 0;
      for (const std::string &l : labels)
        uses += llvm::count(l, c);
      if (uses == 1 && llvm::isAlpha(c))
        once.push_back(c);
    }
    llvm::sort(once);
    out += once;
  }
  auto reshapeOrNull = [&](Value v, ArrayRef<int64_t> dims) -> Value {
    if (llvm::equal(dims, shapeOf(v)))
      return v;
    SmallVector<int64_t> target(dims.begin(), dims.end());
    if (llvm::count_if(target, ShapedType::isDynamic) > 1) {
      (void)failNode(
          llvm::formatv("Einsum '{0}' needs a reshape with more than one "
                        "dynamic dimension, which is not supported",
                        equation));
      return Value();
    }
    for (int64_t &d : target)
      if (ShapedType::isDynamic(d))
        d = -1;
    GOPT_INFER_OR_NULL(op, ReshapeOp, v, i64s(target));
    return op;
  };
  auto transposeOrNull = [&](Value v, StringRef from, StringRef to) -> Value {
    SmallVector<int64_t> perm;
    for (char c : to)
      perm.push_back(from.find(c));
    bool identity = true;
    for (auto [i, p] : llvm::enumerate(perm))
      identity &= static_cast<int64_t>(i) == p;
    if (identity)
      return v;
    GOPT_INFER_OR_NULL(op, TransposeOp, v, i64s(perm));
    return op;
  };
  // A label twice in one operand takes the diagonal: the values off it
  // become 0 and the second axis is summed out (adding zeros is exact).
  for (int i = 0; i < numInputs; ++i) {
    for (size_t second = 1; second < labels[i].size(); ++second) {
      size_t first = labels[i].find(labels[i][second]);
      if (first == second)
        continue;
      ArrayRef<int64_t> shape = shapeOf(operands[i]);
      int64_t n = shape[first];
      if (ShapedType::isDynamic(n) || ShapedType::isDynamic(shape[second]))
        return failNode(llvm::formatv(
            "the diagonal of label '{0}' needs its size known at import",
            labels[i][second]));
      if (n != shape[second])
        return failNode(llvm::formatv("label '{0}' has sizes {1} and {2}",
                                      labels[i][second], n, shape[second]));
      SmallVector<int64_t> eyeShape(shape.size(), 1);
      eyeShape[first] = eyeShape[second] = n;
      SmallVector<int64_t> eye(n * n, 0);
      for (int64_t k = 0; k < n; ++k)
        eye[k * n + k] = 1;
      Value eyeValue = createI64Constant(b, loc, eyeShape, eye);
      Value one = createScalarConstant(b, loc, b.getI64Type(), 1.0);
      Value zero = createScalarConstant(
          b, loc, getElementTypeOrSelf(operands[i].getType()), 0.0);
      GOPT_INFER(onDiagonal, EqualOp, eyeValue, one);
      GOPT_INFER(masked, WhereOp, onDiagonal, operands[i], zero);
      GOPT_INFER(diagonal, ReduceSumOp, masked,
                 i64s({static_cast<int64_t>(second)}), b.getBoolAttr(false));
      operands[i] = diagonal;
      labels[i].erase(second, 1);
      --second;
    }
  }
  // Sum out what only one operand has and the output lacks.
  for (int i = 0; i < numInputs; ++i) {
    SmallVector<int64_t> axes;
    std::string kept;
    for (auto [j, c] : llvm::enumerate(labels[i])) {
      bool elsewhere = out.find(c) != std::string::npos;
      for (int k = 0; k < numInputs; ++k)
        elsewhere |= k != i && labels[k].find(c) != std::string::npos;
      if (elsewhere)
        kept.push_back(c);
      else
        axes.push_back(j);
    }
    if (axes.empty())
      continue;
    GOPT_INFER(sum, ReduceSumOp, operands[i], i64s(axes), b.getBoolAttr(false));
    operands[i] = sum;
    labels[i] = kept;
  }
  if (numInputs == 1) {
    Value y = transposeOrNull(operands[0], labels[0], out);
    if (!y)
      return failure();
    setOutput(0, y);
    return success();
  }
  std::string batch, rows, contract, cols;
  for (char c : out) {
    bool inA = labels[0].find(c) != std::string::npos;
    bool inB = labels[1].find(c) != std::string::npos;
    (inA && inB ? batch : inA ? rows : cols).push_back(c);
  }
  for (char c : labels[0])
    if (labels[1].find(c) != std::string::npos &&
        out.find(c) == std::string::npos)
      contract.push_back(c);
  auto sizes = [&](StringRef group) {
    SmallVector<int64_t> dims;
    for (char c : group)
      dims.push_back(dimOf[c]);
    return dims;
  };
  auto product = [&](StringRef group) {
    int64_t p = 1;
    for (char c : group) {
      if (ShapedType::isDynamic(dimOf[c]))
        return ShapedType::kDynamic;
      p *= dimOf[c];
    }
    return p;
  };
  // A as [batch..., rows, contract], B as [batch..., contract, cols].
  Value a = transposeOrNull(operands[0], labels[0], batch + rows + contract);
  Value bt =
      a ? transposeOrNull(operands[1], labels[1], batch + contract + cols)
        : Value();
  if (!a || !bt)
    return failure();
  SmallVector<int64_t> aDims = sizes(batch), bDims = sizes(batch);
  aDims.append({product(rows), product(contract)});
  bDims.append({product(contract), product(cols)});
  a = reshapeOrNull(a, aDims);
  bt = a ? reshapeOrNull(bt, bDims) : Value();
  if (!a || !bt)
    return failure();
  GOPT_INFER(mm, MatMulOp, a, bt, b.getBoolAttr(false), b.getBoolAttr(false));
  SmallVector<int64_t> yDims = sizes(batch + rows + cols);
  Value y = reshapeOrNull(mm, yDims);
  y = y ? transposeOrNull(y, batch + rows + cols, out) : Value();
  if (!y)
    return failure();
  setOutput(0, y);
  return success();
}

/// Expand and Tile: input 1 (the target shape, the repeats) must be a
/// constant, or computed from static shapes (PyTorch's zero initial RNN
/// states: Expand to [layers, x.size(0), hidden]); it becomes the gopt op's
/// array attribute.
template <typename OpTy> LogicalResult OnnxImporter::importShapedBy() {
  if (node->input_size() != 2)
    return failNode(
        llvm::formatv("expects 2 inputs, got {0}", node->input_size()));
  GET_INPUT(x, 0);
  if (!foldsToInts(node->input(1))) {
    // Known at run time: the dynamic op reads it on the host.
    FailureOr<Value> value = valueOperand(1, "shape");
    if (failed(value))
      return failure();
    if constexpr (std::is_same_v<OpTy, ExpandOp>)
      return setResult(createInferred<DynamicExpandOp>(b, loc, x, *value));
    else
      return setResult(createInferred<DynamicTileOp>(b, loc, x, *value));
  }
  FailureOr<SmallVector<int64_t>> shape = constantInts(node->input(1));
  if (failed(shape))
    return failure();
  return setResult(createInferred<OpTy>(b, loc, x, i64s(*shape)));
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

LogicalResult OnnxImporter::importInitializers(const onnx::GraphProto &graph) {
  for (const onnx::TensorProto &t : graph.initializer()) {
    RankedTensorType type;
    std::vector<char> data;
    if (failed(decodeTensor(
            t, llvm::formatv("initializer '{0}'", t.name()).str(), type, data)))
      return failure();
    constants[t.name()] = &t;
    values[t.name()] =
        createConstant(b, NameLoc::get(b.getStringAttr(t.name()), fileLoc),
                       type, data, t.name());
  }
  return success();
}

LogicalResult OnnxImporter::importNodes(const onnx::GraphProto &graph) {
  for (nodeIndex = 0; nodeIndex < graph.node_size(); ++nodeIndex) {
    node = &graph.node(nodeIndex);
    if (!node->domain().empty() && node->domain() != "ai.onnx")
      return failNode(
          llvm::formatv("unsupported domain '{0}'", node->domain()));
    loc = NameLoc::get(
        b.getStringAttr(node->name().empty() ? node->op_type() : node->name()),
        fileLoc);
    if (failed(importNodeChecked()))
      return failure();
  }
  return success();
}

/// Imports a subgraph's initializers and nodes where the builder stands;
/// they see every value of the enclosing scopes (ONNX forbids shadowing).
/// `results` gets the values of the subgraph's outputs.
LogicalResult OnnxImporter::importGraphInline(const onnx::GraphProto &graph,
                                              SmallVectorImpl<Value> &results) {
  const onnx::NodeProto *outerNode = node;
  int outerIndex = nodeIndex;
  Location outerLoc = loc;
  auto restore = llvm::make_scope_exit([&] {
    node = outerNode;
    nodeIndex = outerIndex;
    loc = outerLoc;
  });
  if (failed(importInitializers(graph)) || failed(importNodes(graph)))
    return failure();
  for (const onnx::ValueInfoProto &out : graph.output()) {
    Value v = values.lookup(out.name());
    if (!v) {
      node = outerNode;
      return failNode(llvm::formatv(
          "subgraph '{0}' output '{1}' is not produced by any of its nodes",
          graph.name(), out.name()));
    }
    results.push_back(v);
  }
  return success();
}

SmallVector<std::string>
OnnxImporter::freeNames(const onnx::GraphProto &graph) {
  llvm::StringSet<> defined;
  for (const onnx::ValueInfoProto &in : graph.input())
    defined.insert(in.name());
  for (const onnx::TensorProto &t : graph.initializer())
    defined.insert(t.name());
  SmallVector<std::string> free;
  llvm::StringSet<> seen;
  auto use = [&](const std::string &name) {
    if (!name.empty() && !defined.contains(name) && seen.insert(name).second)
      free.push_back(name);
  };
  for (const onnx::NodeProto &n : graph.node()) {
    for (const std::string &in : n.input())
      use(in);
    for (const onnx::AttributeProto &a : n.attribute()) {
      if (a.has_g())
        for (const std::string &name : freeNames(a.g()))
          use(name);
      for (const onnx::GraphProto &g : a.graphs())
        for (const std::string &name : freeNames(g))
          use(name);
    }
    for (const std::string &out : n.output())
      defined.insert(out);
  }
  for (const onnx::ValueInfoProto &out : graph.output())
    use(out.name());
  return free;
}

LogicalResult OnnxImporter::importRegionBody(
    const onnx::GraphProto &graph, Block &block, ArrayRef<std::string> argNames,
    ArrayRef<std::string> captureNames, SmallVectorImpl<Value> &results,
    llvm::function_ref<LogicalResult()> prelude) {
  // The region is isolated from above: what it reads from outside is a
  // block argument, and what it defines stays inside.
  llvm::StringMap<Value> outerValues = values;
  llvm::StringMap<const onnx::TensorProto *> outerConstants = constants;
  auto restore = llvm::make_scope_exit([&] {
    values = std::move(outerValues);
    constants = std::move(outerConstants);
  });
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&block);
  unsigned arg = 0;
  for (const std::string &name : argNames) {
    // Unnamed arguments (a Scan body's iteration number) bind no name.
    if (!name.empty())
      values[name] = block.getArgument(arg);
    ++arg;
  }
  for (const std::string &name : captureNames) {
    constants.erase(name);
    values[name] = block.getArgument(arg++);
  }
  // Constants are copied in rather than captured, so folding and shape
  // tracing see them inside the region as well.
  for (const std::string &name : freeNames(graph)) {
    auto it = constants.find(name);
    if (it == constants.end() || llvm::is_contained(captureNames, name))
      continue;
    RankedTensorType type;
    std::vector<char> data;
    if (failed(
            decodeTensor(*it->second, "constant '" + name + "'", type, data)))
      return failure();
    values[name] = createConstant(b, values[name].getLoc(), type, data, name);
  }
  if (prelude && failed(prelude()))
    return failure();
  return importGraphInline(graph, results);
}

FailureOr<Value> OnnxImporter::capturedValue(StringRef name) {
  if (Value v = values.lookup(name))
    return v;
  auto bad = unsupportedValues.find(name);
  return failNode(
      bad != unsupportedValues.end()
          ? llvm::formatv("a subgraph reads '{0}', which is {1}", name,
                          bad->second)
                .str()
          : llvm::formatv("a subgraph reads '{0}', which no node defines", name)
                .str());
}

FailureOr<Value> OnnxImporter::asScalar(Value v, StringRef what) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 0)
    return v;
  if (!type.hasStaticShape() || type.getNumElements() != 1)
    return failNode(
        llvm::formatv("{0} must hold one element, got {1}", what, type));
  auto scalar = createTyped<ReshapeOp>(b, loc, type.clone(ArrayRef<int64_t>{}),
                                       v, i64s({}));
  if (!scalar)
    return failOp();
  return scalar.getResult();
}

/// The type both branches' values fit: a dimension they disagree on is
/// dynamic.
static Type joinTypes(Type a, Type b) {
  auto x = cast<RankedTensorType>(a), y = cast<RankedTensorType>(b);
  if (x.getElementType() != y.getElementType() || x.getRank() != y.getRank())
    return nullptr;
  SmallVector<int64_t> dims;
  for (auto [p, q] : llvm::zip(x.getShape(), y.getShape()))
    dims.push_back(p == q ? p : ShapedType::kDynamic);
  return x.clone(dims);
}

/// If: a condition known at compile time (a constant, or computed from
/// static shapes and constants, as exported models compare shapes) selects
/// its branch here, and the branch's nodes replace the If. Otherwise both
/// branches become the regions of a gopt.if that the runtime runs.
LogicalResult OnnxImporter::importIf() {
  GET_INPUT(condValue, 0);
  const onnx::AttributeProto *branches[2] = {attr("then_branch"),
                                             attr("else_branch")};
  for (auto [branch, name] :
       llvm::zip(branches, ArrayRef<StringRef>{"then_branch", "else_branch"}))
    if (!branch || !branch->has_g())
      return failNode(llvm::formatv("missing graph attribute '{0}'", name));
  DenseElementsAttr condAttr;
  if (isConstant(node->input(0))) {
    FailureOr<DenseElementsAttr> c = constantAttr(node->input(0));
    if (failed(c))
      return failure();
    condAttr = *c;
  } else {
    condAttr = foldValue(condValue);
  }
  if (condAttr && (condAttr.getNumElements() != 1 ||
                   !condAttr.getElementType().isInteger(1)))
    return failNode("the condition must be a single bool");
  if (condAttr) {
    bool cond = *condAttr.getValues<bool>().begin();
    SmallVector<Value> results;
    if (failed(importGraphInline(branches[cond ? 0 : 1]->g(), results)))
      return failure();
    if (static_cast<int>(results.size()) != node->output_size())
      return failNode(
          llvm::formatv("the chosen branch has {0} outputs, the If {1}",
                        results.size(), node->output_size()));
    for (auto [i, v] : llvm::enumerate(results))
      setOutput(i, v);
    return success();
  }

  FailureOr<Value> cond = asScalar(condValue, "the condition");
  if (failed(cond))
    return failure();
  // Captures: what either branch reads from outside, constants excepted
  // (importRegionBody copies those in).
  SmallVector<std::string> captureNames;
  llvm::StringSet<> seen;
  for (const onnx::AttributeProto *branch : branches)
    for (const std::string &name : freeNames(branch->g()))
      if (!isConstant(name) && seen.insert(name).second)
        captureNames.push_back(name);
  SmallVector<Value> captures;
  SmallVector<Type> captureTypes;
  SmallVector<Location> captureLocs;
  for (const std::string &name : captureNames) {
    FailureOr<Value> captured = capturedValue(name);
    if (failed(captured))
      return failure();
    Value v = *captured;
    captures.push_back(v);
    captureTypes.push_back(v.getType());
    captureLocs.push_back(v.getLoc());
  }
  Block *blocks[2] = {new Block(), new Block()};
  auto freeBlocks = llvm::make_scope_exit([&] {
    for (Block *block : blocks)
      delete block;
  });
  SmallVector<Value> yields[2];
  for (int i = 0; i < 2; ++i) {
    blocks[i]->addArguments(captureTypes, captureLocs);
    if (failed(importRegionBody(branches[i]->g(), *blocks[i], {}, captureNames,
                                yields[i])))
      return failure();
    if (static_cast<int>(yields[i].size()) != node->output_size())
      return failNode(llvm::formatv(
          "the {0} branch has {1} outputs, the If {2}", i ? "else" : "then",
          yields[i].size(), node->output_size()));
  }
  SmallVector<Type> resultTypes;
  for (auto [a, c] : llvm::zip(yields[0], yields[1])) {
    Type joined = joinTypes(a.getType(), c.getType());
    if (!joined)
      return failNode(llvm::formatv(
          "the branches give {0} and {1} for the same output; gopt needs "
          "the same element type and rank",
          a.getType(), c.getType()));
    resultTypes.push_back(joined);
  }
  for (int i = 0; i < 2; ++i) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(blocks[i]);
    b.create<YieldOp>(loc, yields[i]);
  }
  auto op = b.create<IfOp>(loc, resultTypes, *cond, captures);
  op.getThenRegion().push_back(blocks[0]);
  op.getElseRegion().push_back(blocks[1]);
  blocks[0] = blocks[1] = nullptr;
  if (failed(verify(op)))
    return failOp();
  for (auto [i, v] : llvm::enumerate(op.getResults()))
    setOutput(i, v);
  return success();
}

/// The body block of a gopt.loop: (iteration, condition, one argument per
/// carried value, one per capture); `captures` gets the captured values.
FailureOr<std::unique_ptr<Block>>
OnnxImporter::createLoopBlock(ArrayRef<Value> carried,
                              ArrayRef<std::string> captureNames,
                              SmallVectorImpl<Value> &captures) {
  auto block = std::make_unique<Block>();
  block->addArgument(RankedTensorType::get({}, b.getI64Type()), loc);
  block->addArgument(RankedTensorType::get({}, b.getI1Type()), loc);
  for (Value v : carried)
    block->addArgument(v.getType(), v.getLoc());
  for (const std::string &name : captureNames) {
    FailureOr<Value> v = capturedValue(name);
    if (failed(v))
      return failure();
    captures.push_back(*v);
    block->addArgument(v->getType(), v->getLoc());
  }
  return block;
}

/// Ends `block` in a yield of `yields` (condition, carried, scan slices) and
/// wraps it in a gopt.loop at `outside`; each scan output gets `rows` rows.
FailureOr<LoopOp> OnnxImporter::finishLoop(
    std::unique_ptr<Block> block, OpBuilder::InsertPoint outside, Value trips,
    Value cond, ArrayRef<Value> carried, ArrayRef<Value> captures,
    ArrayRef<Value> yields, int64_t rows, bool condInvariant) {
  b.setInsertionPointToEnd(block.get());
  b.create<YieldOp>(loc, yields);
  b.restoreInsertionPoint(outside);
  SmallVector<Type> resultTypes;
  for (Value v : carried)
    resultTypes.push_back(v.getType());
  for (Value scan : yields.drop_front(1 + carried.size())) {
    auto slice = cast<RankedTensorType>(scan.getType());
    SmallVector<int64_t> dims = {rows};
    llvm::append_range(dims, slice.getShape());
    resultTypes.push_back(slice.clone(dims));
  }
  auto loop = b.create<LoopOp>(loc, resultTypes, trips, cond, carried, captures,
                               condInvariant);
  loop.getBody().push_back(block.release());
  if (failed(verify(loop)))
    return failOp();
  return loop;
}

/// Follows identities back to their source.
static Value stripIdentities(Value v) {
  while (auto identity = v.getDefiningOp<IdentityOp>())
    v = identity.getX();
  return v;
}

/// Loop: the body becomes the region of a gopt.loop. Its scan outputs are
/// stacked along a new leading dimension, whose size the runtime must know
/// before the loop runs, so a loop with scan outputs needs a condition the
/// body passes through unchanged (or true).
LogicalResult OnnxImporter::importLoop() {
  const onnx::AttributeProto *bodyAttr = attr("body");
  if (!bodyAttr || !bodyAttr->has_g())
    return failNode("missing graph attribute 'body'");
  const onnx::GraphProto &graph = bodyAttr->g();
  int numCarried = node->input_size() - 2;
  if (numCarried < 0)
    return failNode("expects the trip count and condition inputs (possibly "
                    "empty names)");
  if (graph.input_size() != 2 + numCarried)
    return failNode(llvm::formatv("the body takes {0} inputs, expected {1} "
                                  "(iteration, condition and {2} carried)",
                                  graph.input_size(), 2 + numCarried,
                                  numCarried));
  int numScans = graph.output_size() - 1 - numCarried;
  if (numScans < 0 || node->output_size() > numCarried + numScans)
    return failNode(llvm::formatv(
        "the body gives {0} outputs for {1} carried values; expected the "
        "condition, the carried values and the scan outputs",
        graph.output_size(), numCarried));

  OpBuilder::InsertPoint outside = b.saveInsertionPoint();
  FailureOr<Value> maxTrips = input(0);
  FailureOr<Value> condIn = input(1);
  if (failed(maxTrips) || failed(condIn))
    return failure();
  Value tripCount =
      *maxTrips ? *maxTrips
                : createI64Constant(b, loc, {},
                                    {std::numeric_limits<int64_t>::max()});
  Value cond = *condIn;
  if (!cond) {
    auto type = RankedTensorType::get({}, b.getI1Type());
    cond = b.create<ConstantOp>(loc, type, DenseElementsAttr::get(type, true));
  }
  FailureOr<Value> tripScalar = asScalar(tripCount, "the trip count");
  FailureOr<Value> condScalar = asScalar(cond, "the condition");
  if (failed(tripScalar) || failed(condScalar))
    return failure();
  if (!cast<RankedTensorType>(tripScalar->getType())
           .getElementType()
           .isInteger(64) ||
      !cast<RankedTensorType>(condScalar->getType())
           .getElementType()
           .isInteger(1))
    return failNode("expects an int64 trip count and a bool condition");
  SmallVector<Value> initial;
  for (int i = 0; i < numCarried; ++i) {
    GET_INPUT(v, 2 + i);
    initial.push_back(v);
  }

  SmallVector<std::string> captureNames;
  for (const std::string &name : freeNames(graph))
    if (!isConstant(name))
      captureNames.push_back(name);
  SmallVector<Value> captures;
  SmallVector<std::string> argNames;
  for (const onnx::ValueInfoProto &in : graph.input())
    argNames.push_back(in.name());
  FailureOr<std::unique_ptr<Block>> body =
      createLoopBlock(initial, captureNames, captures);
  if (failed(body))
    return failure();
  std::unique_ptr<Block> block = std::move(*body);
  SmallVector<Value> outputs;
  if (failed(importRegionBody(graph, *block, argNames, captureNames, outputs)))
    return failure();
  // The yielded condition as a scalar, the condition argument itself when
  // the body passes it through.
  b.setInsertionPointToEnd(block.get());
  auto backOutside =
      llvm::make_scope_exit([&] { b.restoreInsertionPoint(outside); });
  FailureOr<Value> nextCond = asScalar(outputs[0], "the body's condition");
  if (failed(nextCond))
    return failure();
  Value next = stripIdentities(*nextCond);
  DenseElementsAttr nextConstant = foldValue(next);
  bool condInvariant = next == block->getArgument(1) ||
                       (nextConstant && nextConstant.getNumElements() == 1 &&
                        *nextConstant.getValues<bool>().begin());
  if (next == block->getArgument(1))
    outputs[0] = next;
  else if (condInvariant)
    outputs[0] = b.create<ConstantOp>(loc, nextConstant);
  else
    outputs[0] = *nextCond;
  if (numScans > 0 && !condInvariant)
    return failNode("the body computes its condition, so the number of "
                    "iterations (the scan outputs' leading dimension) is known "
                    "only after running; gopt runs loops with scan outputs "
                    "whose condition stays as it entered");
  // Scan outputs have as many rows as iterations: static when the trip
  // count is a constant and the loop cannot end early.
  int64_t rows = ShapedType::kDynamic;
  if (DenseElementsAttr trips = foldValue(*tripScalar))
    if (DenseElementsAttr enter = foldValue(*condScalar))
      if (condInvariant)
        rows = *enter.getValues<bool>().begin()
                   ? (*trips.getValues<APInt>().begin()).getSExtValue()
                   : 0;
  FailureOr<LoopOp> op =
      finishLoop(std::move(block), outside, *tripScalar, *condScalar, initial,
                 captures, outputs, rows, condInvariant);
  if (failed(op))
    return failure();
  for (int i = 0; i < node->output_size(); ++i)
    setOutput(i, op->getResult(i));
  return success();
}

/// Scan (opset 9 and later) is a gopt.loop over the scan axis: the body
/// gathers element i of each scan input (from the end for a reverse
/// direction), and the loop stacks the scan outputs, which a transpose then
/// moves to their scan_output_axes (a reverse output is read backwards).
LogicalResult OnnxImporter::importScan() {
  if (opset < 9)
    return importBatchedScan();
  const onnx::AttributeProto *bodyAttr = attr("body");
  if (!bodyAttr || !bodyAttr->has_g())
    return failNode("missing graph attribute 'body'");
  const onnx::GraphProto &graph = bodyAttr->g();
  int numScanInputs = intAttr("num_scan_inputs", -1);
  int numStates = node->input_size() - numScanInputs;
  int numScanOutputs = node->output_size() - numStates;
  if (numScanInputs < 1 || numStates < 0 || numScanOutputs < 0 ||
      graph.input_size() != node->input_size() ||
      graph.output_size() != node->output_size())
    return failNode(llvm::formatv(
        "num_scan_inputs {0} does not fit {1} inputs, {2} outputs and a body "
        "of {3} inputs and {4} outputs",
        numScanInputs, node->input_size(), node->output_size(),
        graph.input_size(), graph.output_size()));
  auto listAttr = [&](StringRef name, int count) -> SmallVector<int64_t> {
    std::optional<SmallVector<int64_t>> v = intsAttr(name);
    return v ? *v : SmallVector<int64_t>(count, 0);
  };
  SmallVector<int64_t> inAxes = listAttr("scan_input_axes", numScanInputs);
  SmallVector<int64_t> inReverse =
      listAttr("scan_input_directions", numScanInputs);
  SmallVector<int64_t> outAxes = listAttr("scan_output_axes", numScanOutputs);
  SmallVector<int64_t> outReverse =
      listAttr("scan_output_directions", numScanOutputs);
  if (static_cast<int>(inAxes.size()) != numScanInputs ||
      static_cast<int>(inReverse.size()) != numScanInputs ||
      static_cast<int>(outAxes.size()) != numScanOutputs ||
      static_cast<int>(outReverse.size()) != numScanOutputs)
    return failNode("scan_input_axes/directions need one entry per scan "
                    "input, scan_output_axes/directions one per scan output");

  SmallVector<Value> states;
  SmallVector<std::string> scanNames;
  for (int i = 0; i < numStates; ++i) {
    GET_INPUT(v, i);
    states.push_back(v);
  }
  for (int j = 0; j < numScanInputs; ++j) {
    GET_INPUT(v, numStates + j);
    (void)v; // read by name in buildScan
    scanNames.push_back(node->input(numStates + j));
  }
  SmallVector<Value> results;
  if (failed(buildScan(graph, states, scanNames, inAxes, inReverse, outAxes,
                       outReverse, results)))
    return failure();
  for (auto [i, v] : llvm::enumerate(results))
    setOutput(i, v);
  return success();
}

/// Scan-9's loop: `states` carried, the scan inputs (values named
/// `scanNames`) read along `inAxes`, the body's scan outputs stacked along
/// `outAxes`; `results` gets the final states, then the scan outputs.
LogicalResult OnnxImporter::buildScan(
    const onnx::GraphProto &graph, ArrayRef<Value> states,
    ArrayRef<std::string> scanNames, SmallVector<int64_t> inAxes,
    ArrayRef<int64_t> inReverse, ArrayRef<int64_t> outAxes,
    ArrayRef<int64_t> outReverse, SmallVector<Value> &results) {
  int numStates = states.size();
  int numScanInputs = scanNames.size();
  int numScanOutputs = outAxes.size();
  SmallVector<Value> scanInputs;
  int64_t length = ShapedType::kDynamic;
  for (int j = 0; j < numScanInputs; ++j) {
    Value v = values.lookup(scanNames[j]);
    int64_t rank = shapeOf(v).size();
    if (inAxes[j] < -rank || inAxes[j] >= rank)
      return failNode(llvm::formatv("scan axis {0} is out of range for {1}",
                                    inAxes[j], v.getType()));
    if (inAxes[j] < 0)
      inAxes[j] += rank;
    int64_t n = shapeOf(v)[inAxes[j]];
    if (!ShapedType::isDynamic(n)) {
      if (!ShapedType::isDynamic(length) && n != length)
        return failNode(
            llvm::formatv("scan inputs of lengths {0} and {1}", length, n));
      length = n;
    }
    scanInputs.push_back(v);
  }
  // The trip count: the scan length, read from the first scan input's
  // shape at run time when it is dynamic.
  Value trips;
  if (!ShapedType::isDynamic(length)) {
    trips = createI64Constant(b, loc, {}, {length});
  } else {
    GOPT_INFER_VALUE(table, ShapeOp, scanInputs[0]);
    GOPT_INFER_ASSIGN(trips, GatherOp, table,
                      createI64Constant(b, loc, {}, {inAxes[0]}),
                      b.getI64IntegerAttr(0));
  }
  auto boolType = RankedTensorType::get({}, b.getI1Type());
  Value enter = b.create<ConstantOp>(loc, boolType,
                                     DenseElementsAttr::get(boolType, true));

  SmallVector<std::string> captureNames(scanNames);
  for (const std::string &name : freeNames(graph))
    if (!isConstant(name) && !llvm::is_contained(captureNames, name))
      captureNames.push_back(name);
  SmallVector<Value> captures;
  FailureOr<std::unique_ptr<Block>> body =
      createLoopBlock(states, captureNames, captures);
  if (failed(body))
    return failure();
  std::unique_ptr<Block> block = std::move(*body);
  Value iteration = block->getArgument(0), cond = block->getArgument(1);
  SmallVector<std::string> argNames = {"", ""};
  for (int i = 0; i < numStates; ++i)
    argNames.push_back(graph.input(i).name());
  // Before the body's nodes: element i of each scan input.
  auto gatherElements = [&]() -> LogicalResult {
    for (int j = 0; j < numScanInputs; ++j) {
      Value x = values.lookup(scanNames[j]);
      Value index = iteration;
      if (inReverse[j]) {
        GOPT_INFER(shape, ShapeOp, x);
        GOPT_INFER(length, GatherOp, shape,
                   createI64Constant(b, loc, {}, {inAxes[j]}),
                   b.getI64IntegerAttr(0));
        GOPT_INFER(last, SubOp, length, createI64Constant(b, loc, {}, {1}));
        GOPT_INFER_ASSIGN(index, SubOp, last, iteration);
      }
      GOPT_INFER(element, GatherOp, x, index, b.getI64IntegerAttr(inAxes[j]));
      values[graph.input(numStates + j).name()] = element;
    }
    return success();
  };
  OpBuilder::InsertPoint outside = b.saveInsertionPoint();
  SmallVector<Value> outputs;
  if (failed(importRegionBody(graph, *block, argNames, captureNames, outputs,
                              gatherElements)))
    return failure();
  SmallVector<Value> yields = {cond};
  llvm::append_range(yields, outputs);
  FailureOr<LoopOp> loop =
      finishLoop(std::move(block), outside, trips, enter, states, captures,
                 yields, length, /*condInvariant=*/true);
  if (failed(loop))
    return failure();
  for (int i = 0; i < numStates; ++i)
    results.push_back(loop->getResult(i));
  for (int k = 0; k < numScanOutputs; ++k) {
    Value stacked = loop->getResult(numStates + k);
    int64_t rank = shapeOf(stacked).size();
    if (outReverse[k]) {
      if (ShapedType::isDynamic(length))
        return failNode("a reverse scan output of a dynamic scan length is "
                        "not supported");
      SmallVector<int64_t> backwards;
      for (int64_t i = length - 1; i >= 0; --i)
        backwards.push_back(i);
      GOPT_INFER_ASSIGN(stacked, GatherOp, stacked,
                        createI64Constant(b, loc, {length}, backwards),
                        b.getI64IntegerAttr(0));
    }
    int64_t axis = outAxes[k] < 0 ? outAxes[k] + rank : outAxes[k];
    if (axis < 0 || axis >= rank)
      return failNode(llvm::formatv("scan output axis {0} is out of range "
                                    "for rank {1}",
                                    outAxes[k], rank));
    if (axis != 0) {
      // Row i of the stack goes to position i of `axis`.
      SmallVector<int64_t> perm;
      for (int64_t d = 1; d <= axis; ++d)
        perm.push_back(d);
      perm.push_back(0);
      for (int64_t d = axis + 1; d < rank; ++d)
        perm.push_back(d);
      GOPT_INFER_ASSIGN(stacked, TransposeOp, stacked, i64s(perm));
    }
    results.push_back(stacked);
  }
  return success();
}

/// Scan before opset 9: every input and output has a leading batch axis the
/// body does not see, the scan axis is 1, `directions` reverses scan inputs
/// and sequence_lens may cut sequences short. Each batch row (a static
/// count) runs Scan-9's loop on its slices; the rows' results are stacked.
LogicalResult OnnxImporter::importBatchedScan() {
  const onnx::AttributeProto *bodyAttr = attr("body");
  if (!bodyAttr || !bodyAttr->has_g())
    return failNode("missing graph attribute 'body'");
  const onnx::GraphProto &graph = bodyAttr->g();
  int numScanInputs = intAttr("num_scan_inputs", -1);
  int numInputs = node->input_size() - 1; // without sequence_lens
  int numStates = numInputs - numScanInputs;
  int numScanOutputs = node->output_size() - numStates;
  if (numInputs < 1 || numScanInputs < 1 || numStates < 0 ||
      numScanOutputs < 0 || graph.input_size() != numInputs ||
      graph.output_size() != node->output_size())
    return failNode(llvm::formatv(
        "num_scan_inputs {0} does not fit {1} inputs (after sequence_lens), "
        "{2} outputs and a body of {3} inputs and {4} outputs",
        numScanInputs, numInputs, node->output_size(), graph.input_size(),
        graph.output_size()));
  if (!node->input(0).empty())
    return failNode("Scan-8's sequence_lens is not supported (every sequence "
                    "must run the whole scan axis; leave it empty)");
  std::optional<SmallVector<int64_t>> directions = intsAttr("directions");
  SmallVector<int64_t> inReverse =
      directions ? *directions : SmallVector<int64_t>(numScanInputs, 0);
  if (static_cast<int>(inReverse.size()) != numScanInputs)
    return failNode("directions needs one entry per scan input");
  SmallVector<Value> inputs;
  int64_t batch = ShapedType::kDynamic;
  for (int i = 0; i < numInputs; ++i) {
    GET_INPUT(v, i + 1);
    ArrayRef<int64_t> shape = shapeOf(v);
    int64_t minRank = i < numStates ? 1 : 2;
    if (static_cast<int64_t>(shape.size()) < minRank ||
        ShapedType::isDynamic(shape[0]) ||
        (!ShapedType::isDynamic(batch) && shape[0] != batch))
      return failNode(llvm::formatv(
          "input '{0}' ({1}) needs a static batch axis that all inputs share",
          node->input(i + 1), v.getType()));
    batch = shape[0];
    inputs.push_back(v);
  }
  SmallVector<SmallVector<Value>> rows;
  for (int64_t row = 0; row < batch; ++row) {
    Value index = createI64Constant(b, loc, {}, {row});
    SmallVector<Value> states;
    SmallVector<std::string> scanNames;
    for (int i = 0; i < numInputs; ++i) {
      GOPT_INFER(slice, GatherOp, inputs[i], index, b.getI64IntegerAttr(0));
      if (i < numStates) {
        states.push_back(slice);
        continue;
      }
      // Scan-9's loop reads scan inputs by name (they become captures).
      std::string name =
          llvm::formatv("{0}#scan8_row{1}", node->input(i + 1), row).str();
      values[name] = slice;
      scanNames.push_back(name);
    }
    SmallVector<Value> results;
    if (failed(buildScan(graph, states, scanNames,
                         SmallVector<int64_t>(numScanInputs, 0), inReverse,
                         SmallVector<int64_t>(numScanOutputs, 0),
                         SmallVector<int64_t>(numScanOutputs, 0), results)))
      return failure();
    rows.push_back(std::move(results));
  }
  for (int k = 0; k < node->output_size(); ++k) {
    SmallVector<Value> stacked;
    for (SmallVector<Value> &results : rows) {
      GOPT_INFER(lifted, DynamicUnsqueezeOp, results[k],
                 createI64Constant(b, loc, {1}, {0}));
      stacked.push_back(lifted);
    }
    Value y = stacked.front();
    if (stacked.size() > 1)
      GOPT_INFER_ASSIGN(y, ConcatOp, ValueRange(stacked),
                        b.getI64IntegerAttr(0));
    setOutput(k, y);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Sampling and signal ops (GoptSamplingOps.td, GoptSignalOps.td)
//===----------------------------------------------------------------------===//

/// Input `i` as a constant integer scalar (a [1] tensor too).
FailureOr<int64_t> OnnxImporter::constantIntScalar(int i, StringRef what) {
  FailureOr<SmallVector<int64_t>> v = constantInts(node->input(i));
  if (failed(v))
    return failure();
  if (v->size() != 1)
    return failNode(llvm::formatv("input '{0}' ({1}) must be a scalar, got {2} "
                                  "values",
                                  node->input(i), what, v->size()));
  return v->front();
}

/// MaxPool whose Indices output is used, or over integers (gopt.max_pool
/// takes floats): gopt.max_pool_with_indices, whose Indices are ONNX's.
LogicalResult OnnxImporter::importMaxPoolWithIndices() {
  GET_INPUT(x, 0);
  std::optional<SmallVector<int64_t>> kernel = intsAttr("kernel_shape");
  if (!kernel)
    return failNode("missing attribute 'kernel_shape'");
  SmallVector<int64_t> dil =
      intsAttr("dilations").value_or(SmallVector<int64_t>(kernel->size(), 1));
  StringAttr padding;
  DenseI64ArrayAttr pads, strides;
  if (failed(windowAttrs(x, *kernel, dil, padding, pads, strides)))
    return failure();
  if (!pads)
    pads = i64s(SmallVector<int64_t>(2 * kernel->size(), 0));
  int64_t storageOrder = intAttr("storage_order", 0);
  if (storageOrder != 0 && storageOrder != 1)
    return failNode(
        llvm::formatv("storage_order must be 0 or 1, got {0}", storageOrder));
  GOPT_INFER(op, MaxPoolWithIndicesOp, x, i64s(*kernel), strides, i64s(dil),
             padding, pads, b.getBoolAttr(intAttr("ceil_mode", 0) != 0),
             b.getI64IntegerAttr(storageOrder));
  setOutput(0, op.getY());
  if (node->output_size() > 1 && !node->output(1).empty())
    setOutput(1, op.getIndices());
  return success();
}

LogicalResult OnnxImporter::importMaxUnpool() {
  GET_INPUT(x, 0);
  GET_INPUT(indices, 1);
  size_t rank = shapeOf(x).size();
  if (rank < 3 || rank > 5)
    return failNode(llvm::formatv("expects X of rank 3 to 5 ([N, C, "
                                  "spatial...]), got {0}",
                                  formatShape(shapeOf(x))));
  size_t n = rank - 2;
  std::optional<SmallVector<int64_t>> kernel = intsAttr("kernel_shape");
  if (!kernel)
    return failNode("missing attribute 'kernel_shape'");
  SmallVector<int64_t> strides =
      intsAttr("strides").value_or(SmallVector<int64_t>(n, 1));
  FailureOr<SmallVector<int64_t>> pairedPads = pairedPadsAttr(n);
  if (failed(pairedPads))
    return failure();
  SmallVector<int64_t> paired = *pairedPads;
  DenseI64ArrayAttr outputShape;
  if (node->input_size() > 2 && !node->input(2).empty() &&
      !foldsToInts(node->input(2))) {
    // Fed at run time: the session reads it while it resolves shapes.
    FailureOr<Value> shape = valueOperand(2, "output_shape");
    if (failed(shape))
      return failure();
    return setResult(createInferred<DynamicMaxUnpoolOp>(
        b, loc, x, indices, *shape, i64s(*kernel), i64s(strides),
        i64s(paired)));
  }
  if (node->input_size() > 2 && !node->input(2).empty()) {
    FailureOr<SmallVector<int64_t>> shape = constantInts(node->input(2));
    if (failed(shape))
      return failure();
    outputShape = i64s(*shape);
  }
  return setResult(createInferred<MaxUnpoolOp>(b, loc, x, indices,
                                               i64s(*kernel), i64s(strides),
                                               i64s(paired), outputShape));
}

/// The largest image whose constant stream the importer decodes.
constexpr int64_t kMaxFoldedImagePixels = int64_t(1) << 20;

/// ImageDecoder-20: gopt.image_decoder, whose [H, W, C] the image's header
/// decides when it runs; a constant stream of an image up to 2^20 pixels is
/// decoded here instead, so the image is a constant of static shape (and a
/// bad one an import error).
LogicalResult OnnxImporter::importImageDecoder() {
  std::string pixelFormat = stringAttr("pixel_format", "RGB");
  FailureOr<rt_image::PixelFormat> format =
      [&]() -> FailureOr<rt_image::PixelFormat> {
    auto parsed = rt_image::parsePixelFormat(pixelFormat);
    if (!parsed.ok())
      return failNode(parsed.status().message());
    return *parsed;
  }();
  if (failed(format))
    return failure();
  GET_INPUT(stream, 0);
  Type et = getElementTypeOrSelf(stream.getType());
  if (!et.isUnsignedInteger(8) || shapeOf(stream).size() != 1)
    return failNode(llvm::formatv("expects encoded_stream of type uint8 and "
                                  "rank 1 (the file's bytes), got {0}",
                                  stream.getType()));
  if (!isConstant(node->input(0)))
    return setResult(createInferred<ImageDecoderOp>(
        b, loc, stream, b.getStringAttr(pixelFormat)));
  FailureOr<DenseElementsAttr> attr = constantAttr(node->input(0));
  if (failed(attr))
    return failure();
  std::vector<uint8_t> bytes;
  if (attr->isSplat())
    bytes.assign(
        attr->getNumElements(),
        static_cast<uint8_t>(attr->getSplatValue<APInt>().getZExtValue()));
  else
    bytes.assign(attr->getRawData().begin(), attr->getRawData().end());
  // Larger images stay an op, decoded when the step runs: a constant of
  // more than 2^20 pixels would make the IR and the plan that large.
  auto header = rt_image::readImageHeader(bytes.data(), bytes.size());
  if (!header.ok())
    return failNode(header.status().message());
  if (header->height * header->width > kMaxFoldedImagePixels)
    return setResult(createInferred<ImageDecoderOp>(
        b, loc, stream, b.getStringAttr(pixelFormat)));
  auto image = rt_image::decodeImage(bytes.data(), bytes.size(), *format);
  if (!image.ok())
    return failNode(image.status().message());
  auto type =
      RankedTensorType::get({image->height, image->width, image->channels}, et);
  ArrayRef<char> raw(reinterpret_cast<const char *>(image->pixels.data()),
                     image->pixels.size());
  return setResult(b.create<ConstantOp>(
      loc, DenseElementsAttr::getFromRawBuffer(type, raw)));
}

/// DeformConv-19 (2-D): gopt.deform_conv2d, with a zero bias when B is
/// absent; ONNX's pads [top, left, bottom, right] become (before, after)
/// per spatial dim.
LogicalResult OnnxImporter::importDeformConv() {
  GET_INPUT(x, 0);
  GET_INPUT(filter, 1);
  GET_INPUT(offset, 2);
  if (shapeOf(x).size() != 4)
    return failNode(llvm::formatv("only 2-D deformable convolution (X of "
                                  "rank 4, [N, C, H, W]) is supported, got "
                                  "{0}",
                                  x.getType()));
  ArrayRef<int64_t> w = shapeOf(filter);
  if (w.size() != 4)
    return failNode(llvm::formatv("expects W of rank 4 ([Cout, C / group, "
                                  "KH, KW]), got {0}",
                                  filter.getType()));
  if (std::optional<SmallVector<int64_t>> kernel = intsAttr("kernel_shape"))
    if (kernel->size() != 2 || (*kernel)[0] != w[2] || (*kernel)[1] != w[3])
      return failNode(llvm::formatv("kernel_shape {0} differs from W's "
                                    "spatial dims {1}",
                                    formatShape(*kernel),
                                    formatShape(w.drop_front(2))));
  Type et = getElementTypeOrSelf(x.getType());
  if (!isa<FloatType>(et))
    return failNode(llvm::formatv("expects a float X, got {0}", et));
  SmallVector<int64_t> strides =
      intsAttr("strides").value_or(SmallVector<int64_t>(2, 1));
  SmallVector<int64_t> dilations =
      intsAttr("dilations").value_or(SmallVector<int64_t>(2, 1));
  if (strides.size() != 2 || dilations.size() != 2)
    return failNode(llvm::formatv("'strides' and 'dilations' must have 2 "
                                  "values, got {0} and {1}",
                                  strides.size(), dilations.size()));
  FailureOr<SmallVector<int64_t>> pads = pairedPadsAttr(2);
  if (failed(pads))
    return failure();
  Value bias;
  if (node->input_size() > 3 && !node->input(3).empty()) {
    GET_INPUT(given, 3);
    bias = given;
  } else {
    if (ShapedType::isDynamic(w[0]))
      return failNode("a W with a dynamic output channel count and no B is "
                      "not supported");
    bias = b.create<ConstantOp>(
        loc, DenseElementsAttr::get(RankedTensorType::get({w[0]}, et),
                                    b.getFloatAttr(et, 0.0)));
  }
  Value mask;
  if (node->input_size() > 4 && !node->input(4).empty()) {
    GET_INPUT(given, 4);
    mask = given;
  }
  return setResult(createInferred<DeformConv2DOp>(
      b, loc, x, filter, offset, bias, mask, i64s(strides), i64s(dilations),
      i64s(*pads), b.getI64IntegerAttr(intAttr("group", 1)),
      b.getI64IntegerAttr(intAttr("offset_group", 1))));
}

/// AffineGrid-20 as one matmul: the base grid, a constant [positions, r +
/// 1] of each output position's normalized coordinates (x along the last
/// spatial dim, then y, then z) and a 1, times theta [N, r, r + 1]
/// transposed, gives [N, positions, r], reshaped to [N, spatial..., r].
LogicalResult OnnxImporter::importAffineGrid() {
  GET_INPUT(theta, 0);
  if (node->input_size() < 2 || node->input(1).empty())
    return failNode("missing input #1 (size)");
  if (!foldsToInts(node->input(1)))
    return failNode("a 'size' input known only at run time is not supported");
  FailureOr<SmallVector<int64_t>> size = constantInts(node->input(1));
  if (failed(size))
    return failure();
  if (size->size() != 4 && size->size() != 5)
    return failNode(llvm::formatv("expects 'size' to hold 4 (N, C, H, W) or "
                                  "5 (N, C, D, H, W) values, got {0}",
                                  size->size()));
  int64_t r = size->size() - 2;
  ArrayRef<int64_t> t = shapeOf(theta);
  if (t.size() != 3 || t[1] != r || t[2] != r + 1)
    return failNode(llvm::formatv("expects theta of shape [N, {0}, {1}] for "
                                  "{0} spatial dims, got {2}",
                                  r, r + 1, theta.getType()));
  if (!ShapedType::isDynamic(t[0]) && t[0] != (*size)[0])
    return failNode(
        llvm::formatv("'size' has N = {0}, theta {1}", (*size)[0], t[0]));
  ArrayRef<int64_t> spatial = ArrayRef<int64_t>(*size).drop_front(2);
  if (llvm::any_of(spatial, [](int64_t d) { return d < 1; }))
    return failNode(llvm::formatv("expects spatial sizes >= 1, got {0}",
                                  formatShape(spatial)));
  int64_t alignCorners = intAttr("align_corners", 0);
  if (alignCorners != 0 && alignCorners != 1)
    return failNode(
        llvm::formatv("expects align_corners 0 or 1, got {0}", alignCorners));
  Type et = getElementTypeOrSelf(theta.getType());
  if (!isa<FloatType>(et))
    return failNode(llvm::formatv("expects a float theta, got {0}", et));
  // One position cannot be both corners: ONNX's reference divides by zero
  // there, PyTorch gives 0 and ONNX Runtime 1.
  if (alignCorners && llvm::is_contained(spatial, 1))
    return failNode(llvm::formatv("a spatial size of 1 with align_corners 1 "
                                  "is not defined, got sizes {0}",
                                  formatShape(spatial)));
  // Each axis's coordinates as ONNX's reference computes them: pixel
  // centres (align_corners 0) or corners (1) spread over [-1, 1].
  auto coordinate = [&](int64_t i, int64_t n) -> double {
    if (alignCorners)
      return -1.0 + 2.0 * double(i) / double(n - 1);
    return (2.0 * double(i) + 1.0) / double(n) - 1.0;
  };
  // The base grid is a constant of positions * (r + 1) values: refuse sizes
  // whose grid would not fit in 64 MiB of f32 (and products that overflow).
  constexpr int64_t kMaxGridValues = int64_t{1} << 24;
  int64_t positions = 1;
  for (int64_t d : spatial) {
    if (positions > kMaxGridValues / (r + 1) / d)
      return failNode(llvm::formatv(
          "spatial sizes {0} make a base grid of more than {1} values",
          formatShape(spatial), kMaxGridValues));
    positions *= d;
  }
  // Written as raw values (f64 for an f64 theta, else f32 then cast), not
  // one attribute per value, which would cost several times the grid.
  auto buildGrid = [&](auto zero) -> Value {
    using T = decltype(zero);
    std::vector<T> base;
    base.reserve(positions * (r + 1));
    SmallVector<int64_t> at(r);
    for (int64_t p = 0; p < positions; ++p) {
      for (int64_t d = r - 1, rest = p; d >= 0; --d) {
        at[d] = rest % spatial[d];
        rest /= spatial[d];
      }
      for (int64_t c = 0; c < r; ++c)
        base.push_back(
            static_cast<T>(coordinate(at[r - 1 - c], spatial[r - 1 - c])));
      base.push_back(T(1));
    }
    Type stored =
        std::is_same_v<T, double> ? Type(b.getF64Type()) : Type(b.getF32Type());
    auto type = RankedTensorType::get({positions, r + 1}, stored);
    return b.create<ConstantOp>(
        loc, DenseElementsAttr::get(type, llvm::ArrayRef<T>(base)));
  };
  Value grid = et.isF64() ? buildGrid(0.0) : buildGrid(0.0f);
  if (getElementTypeOrSelf(grid.getType()) != et)
    grid = createTyped<CastOp>(
        b, loc, cast<RankedTensorType>(grid.getType()).clone(et), grid);
  GOPT_INFER(product, MatMulOp, grid, theta, b.getBoolAttr(false),
             b.getBoolAttr(true));
  SmallVector<int64_t> shape = {ShapedType::isDynamic(t[0]) ? -1 : t[0]};
  shape.append(spatial.begin(), spatial.end());
  shape.push_back(r);
  return setResult(
      createInferred<ReshapeOp>(b, loc, product.getResult(), i64s(shape)));
}

/// CenterCropPad-18 as ONNX's reference computes it: a slice of the axes
/// the shape makes smaller, centred (an odd surplus leaves the extra
/// element at the end), then a zero pad of the axes it makes larger (the
/// extra element at the end).
LogicalResult OnnxImporter::importCenterCropPad() {
  GET_INPUT(x, 0);
  if (node->input_size() < 2 || node->input(1).empty())
    return failNode("missing input #1 (shape)");
  if (!foldsToInts(node->input(1)))
    return failNode("a 'shape' input known only at run time is not "
                    "supported");
  FailureOr<SmallVector<int64_t>> sizes = constantInts(node->input(1));
  if (failed(sizes))
    return failure();
  ArrayRef<int64_t> dims = shapeOf(x);
  int64_t rank = dims.size();
  SmallVector<int64_t> axes;
  if (std::optional<SmallVector<int64_t>> given = intsAttr("axes"))
    axes = *given;
  else
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (sizes->size() != axes.size())
    return failNode(llvm::formatv("expects 'shape' to hold one size per axis "
                                  "({0}), got {1} values",
                                  axes.size(), sizes->size()));
  // Untouched axes keep all their elements (slice clamps the end).
  SmallVector<int64_t> starts(rank, 0),
      ends(rank, std::numeric_limits<int64_t>::max()), steps(rank, 1),
      pads(2 * rank, 0);
  SmallVector<bool> seen(rank, false);
  bool crop = false, pad = false;
  for (auto [axis, size] : llvm::zip(axes, *sizes)) {
    if (axis < -rank || axis >= rank)
      return failNode(
          llvm::formatv("axis {0} out of range for rank {1}", axis, rank));
    int64_t d = axis < 0 ? axis + rank : axis;
    if (seen[d])
      return failNode(llvm::formatv("axis {0} appears twice in 'axes'", axis));
    seen[d] = true;
    if (size < 0)
      return failNode(
          llvm::formatv("expects sizes >= 0 in 'shape', got {0}", size));
    if (ShapedType::isDynamic(dims[d]))
      return failNode(llvm::formatv("a dynamic dimension ({0}) to crop or "
                                    "pad is not supported",
                                    d));
    if (size < dims[d]) {
      starts[d] = (dims[d] - size) / 2;
      ends[d] = starts[d] + size;
      crop = true;
    } else if (size > dims[d]) {
      pads[2 * d] = (size - dims[d]) / 2;
      pads[2 * d + 1] = size - dims[d] - pads[2 * d];
      pad = true;
    }
  }
  Value y = x;
  if (crop) {
    GOPT_INFER(cropped, SliceOp, y, i64s(starts), i64s(ends), i64s(steps));
    y = cropped.getResult();
  }
  if (pad) {
    GOPT_INFER(padded, PadOp, y, i64s(pads), b.getStringAttr("constant"),
               b.getF32FloatAttr(0.0f));
    y = padded.getResult();
  }
  setOutput(0, y);
  return success();
}

/// Col2Im-18: gopt.col2im holds image_shape and block_shape as attributes,
/// so both inputs must be constants.
LogicalResult OnnxImporter::importCol2Im() {
  GET_INPUT(x, 0);
  if (!isa<FloatType>(getElementTypeOrSelf(x.getType())))
    return failNode(
        llvm::formatv("expects a float input, got {0}", x.getType()));
  SmallVector<int64_t> sizes[2];
  const char *names[2] = {"image_shape", "block_shape"};
  for (int i = 0; i < 2; ++i) {
    if (node->input_size() <= i + 1 || node->input(i + 1).empty())
      return failNode(
          llvm::formatv("missing input #{0} ({1})", i + 1, names[i]));
    if (!foldsToInts(node->input(i + 1)))
      return failNode(llvm::formatv("'{0}' known only at run time is not "
                                    "supported",
                                    names[i]));
    FailureOr<SmallVector<int64_t>> values = constantInts(node->input(i + 1));
    if (failed(values))
      return failure();
    sizes[i] = *values;
  }
  size_t n = sizes[1].size();
  if (n == 0 || sizes[0].size() != n)
    return failNode(llvm::formatv("expects image_shape and block_shape of "
                                  "one spatial rank >= 1, got {0} and {1} "
                                  "values",
                                  sizes[0].size(), n));
  SmallVector<int64_t> strides =
      intsAttr("strides").value_or(SmallVector<int64_t>(n, 1));
  SmallVector<int64_t> dilations =
      intsAttr("dilations").value_or(SmallVector<int64_t>(n, 1));
  if (strides.size() != n || dilations.size() != n)
    return failNode(llvm::formatv("'strides' and 'dilations' must have {0} "
                                  "values (one per spatial dim), got {1} and "
                                  "{2}",
                                  n, strides.size(), dilations.size()));
  FailureOr<SmallVector<int64_t>> pairedPads = pairedPadsAttr(n);
  if (failed(pairedPads))
    return failure();
  return setResult(createInferred<Col2ImOp>(
      b, loc, x, i64s(sizes[0]), i64s(sizes[1]), i64s(strides), i64s(dilations),
      i64s(*pairedPads)));
}

LogicalResult OnnxImporter::importRoiAlign() {
  GET_INPUT(x, 0);
  GET_INPUT(rois, 1);
  GET_INPUT(batchIndices, 2);
  // RoiAlign-10 has no coordinate_transformation_mode: its regions are
  // output_half_pixel's.
  std::string ctm =
      opset >= 16 ? stringAttr("coordinate_transformation_mode", "half_pixel")
                  : std::string("output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return failNode(llvm::formatv("coordinate_transformation_mode '{0}' is "
                                  "not supported",
                                  ctm));
  std::string mode = stringAttr("mode", "avg");
  if (mode != "avg" && mode != "max")
    return failNode(llvm::formatv("mode '{0}' is not supported", mode));
  return setResult(createInferred<RoiAlignOp>(
      b, loc, x, rois, batchIndices, b.getStringAttr(mode),
      b.getI64IntegerAttr(intAttr("output_height", 1)),
      b.getI64IntegerAttr(intAttr("output_width", 1)),
      b.getI64IntegerAttr(intAttr("sampling_ratio", 0)),
      b.getF32FloatAttr(floatAttr("spatial_scale", 1.0f)),
      b.getStringAttr(ctm)));
}

LogicalResult OnnxImporter::importGridSample() {
  GET_INPUT(x, 0);
  GET_INPUT(grid, 1);
  // GridSample-16 samples 2-D images; 20 any number of spatial
  // dimensions (gopt: 1 to 3) and names the modes linear and cubic.
  bool opset20 = opset >= 20;
  size_t rank = shapeOf(x).size();
  if (!opset20 && rank != 4)
    return failNode(llvm::formatv("GridSample-16 takes a 4-D X ([N, C, H, W]), "
                                  "got {0}",
                                  formatShape(shapeOf(x))));
  if (rank < 3 || rank > 2 + shape::kMaxGridSampleDims)
    return failNode(llvm::formatv("X must have 1 to {0} spatial dimensions "
                                  "([N, C, D1, ..., Dr]), got {1}",
                                  shape::kMaxGridSampleDims,
                                  formatShape(shapeOf(x))));
  std::string onnxMode = stringAttr("mode", opset20 ? "linear" : "bilinear");
  std::string mode = onnxMode;
  if (opset20)
    mode = onnxMode == "linear"    ? "bilinear"
           : onnxMode == "cubic"   ? "bicubic"
           : onnxMode == "nearest" ? onnxMode
                                   : "";
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return failNode(llvm::formatv("mode '{0}' is not supported", onnxMode));
  std::string paddingMode = stringAttr("padding_mode", "zeros");
  if (paddingMode != "zeros" && paddingMode != "border" &&
      paddingMode != "reflection")
    return failNode(
        llvm::formatv("padding_mode '{0}' is not supported", paddingMode));
  int64_t alignCorners = intAttr("align_corners", 0);
  if (alignCorners != 0 && alignCorners != 1)
    return failNode(
        llvm::formatv("align_corners must be 0 or 1, got {0}", alignCorners));
  return setResult(createInferred<GridSampleOp>(
      b, loc, x, grid, b.getStringAttr(mode), b.getStringAttr(paddingMode),
      b.getI64IntegerAttr(alignCorners)));
}

LogicalResult OnnxImporter::importDft() {
  GET_INPUT(x, 0);
  auto present = [&](int i) {
    return i < node->input_size() && !node->input(i).empty();
  };
  int64_t dftLength = 0;
  if (present(1)) {
    FailureOr<int64_t> length = constantIntScalar(1, "dft_length");
    if (failed(length))
      return failure();
    if (*length < 1)
      return failNode(
          llvm::formatv("dft_length must be >= 1, got {0}", *length));
    dftLength = *length;
  }
  // DFT-20 takes the axis as input #2 (default -2), DFT-17 as an attribute.
  int64_t axis = intAttr("axis", 1);
  if (opset >= 20) {
    axis = -2;
    if (present(2)) {
      FailureOr<int64_t> a = constantIntScalar(2, "axis");
      if (failed(a))
        return failure();
      axis = *a;
    }
  }
  bool inverse = intAttr("inverse", 0) != 0,
       onesided = intAttr("onesided", 0) != 0;
  if (inverse && onesided)
    return failNode("an inverse DFT with onesided = 1 is not supported");
  return setResult(createInferred<DftOp>(
      b, loc, x, b.getI64IntegerAttr(axis), b.getBoolAttr(inverse),
      b.getBoolAttr(onesided), b.getI64IntegerAttr(dftLength)));
}

LogicalResult OnnxImporter::importStft() {
  GET_INPUT(signal, 0);
  FailureOr<Value> window = input(2);
  if (failed(window))
    return failure();
  bool hasLength = node->input_size() > 3 && !node->input(3).empty();
  if (!foldsToInts(node->input(1)) ||
      (hasLength && !foldsToInts(node->input(3))))
    return importDynamicStft(signal, *window, hasLength);
  FailureOr<int64_t> step = constantIntScalar(1, "frame_step");
  if (failed(step))
    return failure();
  int64_t frameLength = 0;
  if (hasLength) {
    FailureOr<int64_t> length = constantIntScalar(3, "frame_length");
    if (failed(length))
      return failure();
    if (*length < 1)
      return failNode(
          llvm::formatv("frame_length must be >= 1, got {0}", *length));
    frameLength = *length;
  }
  // Neither window nor frame_length: one frame of the whole signal.
  if (!*window && frameLength == 0) {
    ArrayRef<int64_t> shape = shapeOf(signal);
    if (shape.size() != 3 || ShapedType::isDynamic(shape[1]))
      return failNode("without window and frame_length the signal's length "
                      "must be static");
    frameLength = shape[1];
  }
  return setResult(createInferred<StftOp>(
      b, loc, signal, *window, b.getI64IntegerAttr(*step),
      b.getI64IntegerAttr(frameLength),
      b.getBoolAttr(intAttr("onesided", 1) != 0)));
}

/// STFT whose frame_step or frame_length is fed at run time:
/// gopt.dynamic_stft, the frames as long as the window; a frame_length
/// without a window becomes a window of that many ones (ONNX's rectangular
/// default), expanded at run time.
LogicalResult OnnxImporter::importDynamicStft(Value signal, Value window,
                                              bool hasLength) {
  FailureOr<Value> step = valueOperand(1, "frame_step");
  if (failed(step))
    return failure();
  if (!hasLength && !window)
    return failNode("without window and frame_length a frame_step fed at run "
                    "time is not supported");
  int64_t frameLength = 0;
  if (hasLength && foldsToInts(node->input(3))) {
    FailureOr<int64_t> length = constantIntScalar(3, "frame_length");
    if (failed(length))
      return failure();
    if (*length < 1)
      return failNode(
          llvm::formatv("frame_length must be >= 1, got {0}", *length));
    frameLength = *length;
  } else if (hasLength) {
    // Both would need checking against each other at run time.
    if (window)
      return failNode("a frame_length fed at run time together with a window "
                      "is not supported");
    FailureOr<Value> length = valueOperand(3, "frame_length");
    if (failed(length))
      return failure();
    GOPT_INFER(shape, ReshapeOp, *length, i64s({1}));
    Type et = getElementTypeOrSelf(signal.getType());
    GOPT_INFER(ones, DynamicExpandOp, createScalarConstant(b, loc, et, 1.0),
               shape);
    window = ones;
  }
  if (!window) {
    // A constant frame_length without a window: ones of that length.
    Type et = getElementTypeOrSelf(signal.getType());
    window = b.create<ConstantOp>(
        loc, DenseElementsAttr::get(RankedTensorType::get({frameLength}, et),
                                    b.getFloatAttr(et, 1.0)));
  }
  return setResult(createInferred<DynamicStftOp>(
      b, loc, signal, window, *step, b.getI64IntegerAttr(frameLength),
      b.getBoolAttr(intAttr("onesided", 1) != 0)));
}

LogicalResult OnnxImporter::importMelWeightMatrix() {
  if (node->input_size() != 5)
    return failNode(
        llvm::formatv("expects 5 inputs, got {0}", node->input_size()));
  if (intAttr("output_datatype", onnx::TensorProto::FLOAT) !=
      onnx::TensorProto::FLOAT)
    return failNode("only output_datatype FLOAT (1) is supported");
  if (llvm::any_of(node->input(), [&](const std::string &name) {
        return !foldsToInts(name);
      })) {
    // Fed at run time: the session reads all five while it resolves shapes.
    SmallVector<Value, 5> values;
    const char *names[] = {"num_mel_bins", "dft_length", "sample_rate",
                           "lower_edge_hertz", "upper_edge_hertz"};
    for (int i = 0; i < 5; ++i) {
      FailureOr<Value> v = valueOperand(i, names[i], /*asI64=*/i < 3);
      if (failed(v))
        return failure();
      values.push_back(*v);
    }
    if (!getElementTypeOrSelf(values[3].getType()).isF32() ||
        !getElementTypeOrSelf(values[4].getType()).isF32())
      return failNode("lower_edge_hertz and upper_edge_hertz fed at run time "
                      "must be f32");
    return setResult(createInferred<DynamicMelWeightMatrixOp>(
        b, loc, values[0], values[1], values[2], values[3], values[4]));
  }
  SmallVector<int64_t, 3> ints;
  for (int i = 0; i < 3; ++i) {
    FailureOr<int64_t> v = constantIntScalar(
        i, i == 0 ? "num_mel_bins" : (i == 1 ? "dft_length" : "sample_rate"));
    if (failed(v))
      return failure();
    ints.push_back(*v);
  }
  SmallVector<float, 2> hertz;
  for (int i = 3; i < 5; ++i) {
    FailureOr<double> v = constantScalar(node->input(i));
    if (failed(v))
      return failure();
    hertz.push_back(static_cast<float>(*v));
  }
  return setResult(createInferred<MelWeightMatrixOp>(
      b, loc, b.getI64IntegerAttr(ints[0]), b.getI64IntegerAttr(ints[1]),
      b.getI64IntegerAttr(ints[2]), b.getF32FloatAttr(hertz[0]),
      b.getF32FloatAttr(hertz[1])));
}

LogicalResult OnnxImporter::importNode() {
  StringRef op = node->op_type();
  // An op of an older opset imports when its definition is the one opset 7
  // has (Elu-6, Softplus-1, ...); the others changed since (legacy
  // broadcasting, consumed_inputs, is_test).
  if (opset < 7 && failed(checkLegacyNode()))
    return failure();
  if (opset < 7 && op == "PRelu")
    return importLegacyPRelu();
  // Ops whose ODS names their ONNX op type need no code here.
  if (const FrameworkOp *generic = findFrameworkOp(kOnnxOps, op))
    return importGeneric(*generic);
  // The others: one entry per op type, sorted.
  using I = OnnxImporter;
  static constexpr OpHandler<I> kHandlers[] = {
      {"Abs", [](I &i) { return i.unary<AbsOp>(); }},
      {"Add", [](I &i) { return i.binary<AddOp>(); }},
      {"AffineGrid", [](I &i) { return i.importAffineGrid(); }},
      {"ArgMax", [](I &i) { return i.importArgReduce(/*max=*/true); }},
      {"ArgMin", [](I &i) { return i.importArgReduce(/*max=*/false); }},
      {"AveragePool", [](I &i) { return i.importPoolNode(/*isMax=*/false); }},
      {"BatchNormalization",
       [](I &i) {
         return i.importPerChannelAs4D(
             [](I &j) { return j.importBatchNorm(); });
       }},
      {"Bernoulli", [](I &i) { return i.importRandom("Bernoulli"); }},
      {"BlackmanWindow", [](I &i) { return i.importWindow("BlackmanWindow"); }},
      {"Cast", [](I &i) { return i.importCast(); }},
      {"CastLike", [](I &i) { return i.importCastLike(); }},
      {"CenterCropPad", [](I &i) { return i.importCenterCropPad(); }},
      {"Clip", [](I &i) { return i.importClip(); }},
      {"Col2Im", [](I &i) { return i.importCol2Im(); }},
      {"Concat", [](I &i) { return i.importConcat(); }},
      {"Constant", [](I &i) { return i.importConstant(); }},
      {"ConstantOfShape", [](I &i) { return i.importConstantOfShape(); }},
      {"Conv",
       [](I &i) {
         return i.importWindowed1D([](I &j) { return j.importConv(); }, 2);
       }},
      {"ConvInteger",
       [](I &i) {
         return i.importIntegerConvOrMatMul(/*conv=*/true,
                                            /*quantizedLinear=*/false);
       }},
      {"ConvTranspose",
       [](I &i) {
         return i.importWindowed1D([](I &j) { return j.importConvTranspose(); },
                                   2);
       }},
      {"CumSum", [](I &i) { return i.importCumSum(); }},
      {"DFT", [](I &i) { return i.importDft(); }},
      {"DeformConv", [](I &i) { return i.importDeformConv(); }},
      {"DepthToSpace",
       [](I &i) { return i.importDepthToSpace(/*toSpace=*/false); }},
      {"DequantizeLinear",
       [](I &i) { return i.importQuantization(/*dequantize=*/true); }},
      {"Div", [](I &i) { return i.binary<DivOp>(); }},
      {"Dropout", [](I &i) { return i.importDropout(); }},
      {"DynamicQuantizeLinear",
       [](I &i) { return i.importDynamicQuantizeLinear(); }},
      {"Einsum", [](I &i) { return i.importEinsum(); }},
      {"Erf", [](I &i) { return i.unary<ErfOp>(); }},
      {"Exp", [](I &i) { return i.unary<ExpOp>(); }},
      {"Expand", [](I &i) { return i.importShapedBy<ExpandOp>(); }},
      {"EyeLike", [](I &i) { return i.importEyeLike(); }},
      {"Flatten", [](I &i) { return i.importFlatten(); }},
      {"GRU", [](I &i) { return i.importRecurrent(/*gates=*/3); }},
      {"Gelu", [](I &i) { return i.importGelu(); }},
      {"Gemm", [](I &i) { return i.importGemm(); }},
      {"GlobalAveragePool", [](I &i) { return i.importGlobalAveragePool(); }},
      {"GlobalLpPool", [](I &i) { return i.importGlobalLpPool(); }},
      {"GlobalMaxPool", [](I &i) { return i.importGlobalMaxPool(); }},
      {"GridSample", [](I &i) { return i.importGridSample(); }},
      {"GroupNormalization", [](I &i) { return i.importGroupNorm(); }},
      {"HammingWindow", [](I &i) { return i.importWindow("HammingWindow"); }},
      {"HannWindow", [](I &i) { return i.importWindow("HannWindow"); }},
      {"Hardmax", [](I &i) { return i.importHardmax(); }},
      {"Identity", [](I &i) { return i.unary<IdentityOp>(); }},
      {"If", [](I &i) { return i.importIf(); }},
      {"ImageDecoder", [](I &i) { return i.importImageDecoder(); }},
      {"InstanceNormalization", [](I &i) { return i.importInstanceNorm(); }},
      {"LRN", [](I &i) { return i.importLrn(); }},
      {"LSTM", [](I &i) { return i.importRecurrent(/*gates=*/4); }},
      {"LayerNormalization", [](I &i) { return i.importLayerNorm(); }},
      {"LeakyRelu", [](I &i) { return i.importLeakyRelu(); }},
      {"Log", [](I &i) { return i.unary<LogOp>(); }},
      {"LogSoftmax", [](I &i) { return i.importSoftmax(/*log=*/true); }},
      {"Loop", [](I &i) { return i.importLoop(); }},
      {"LpNormalization", [](I &i) { return i.importLpNormalization(); }},
      {"LpPool", [](I &i) { return i.importLpPool(); }},
      {"MatMul", [](I &i) { return i.importMatMul(); }},
      {"MatMulInteger",
       [](I &i) {
         return i.importIntegerConvOrMatMul(/*conv=*/false,
                                            /*quantizedLinear=*/false);
       }},
      {"Max", [](I &i) { return i.importVariadic("Max"); }},
      {"MaxPool", [](I &i) { return i.importPoolNode(/*isMax=*/true); }},
      {"MaxUnpool", [](I &i) { return i.importMaxUnpool(); }},
      {"Mean", [](I &i) { return i.importMean(); }},
      {"MeanVarianceNormalization",
       [](I &i) { return i.importMeanVarianceNormalization(); }},
      {"MelWeightMatrix", [](I &i) { return i.importMelWeightMatrix(); }},
      {"Min", [](I &i) { return i.importVariadic("Min"); }},
      {"Mul", [](I &i) { return i.binary<MulOp>(); }},
      {"Multinomial", [](I &i) { return i.importRandom("Multinomial"); }},
      {"Neg", [](I &i) { return i.importNeg(); }},
      {"NegativeLogLikelihoodLoss",
       [](I &i) { return i.importLoss(/*softmax=*/false); }},
      {"NonMaxSuppression", [](I &i) { return i.importNonMaxSuppression(); }},
      {"OneHot", [](I &i) { return i.importOneHot(); }},
      {"Pad", [](I &i) { return i.importPad(); }},
      {"Pow", [](I &i) { return i.importPow(); }},
      {"QLinearConv",
       [](I &i) {
         return i.importIntegerConvOrMatMul(/*conv=*/true,
                                            /*quantizedLinear=*/true);
       }},
      {"QLinearMatMul",
       [](I &i) {
         return i.importIntegerConvOrMatMul(/*conv=*/false,
                                            /*quantizedLinear=*/true);
       }},
      {"QuantizeLinear",
       [](I &i) { return i.importQuantization(/*dequantize=*/false); }},
      {"RNN", [](I &i) { return i.importRecurrent(/*gates=*/1); }},
      {"RandomNormal", [](I &i) { return i.importRandom("RandomNormal"); }},
      {"RandomNormalLike",
       [](I &i) { return i.importRandom("RandomNormalLike"); }},
      {"RandomUniform", [](I &i) { return i.importRandom("RandomUniform"); }},
      {"RandomUniformLike",
       [](I &i) { return i.importRandom("RandomUniformLike"); }},
      {"Range", [](I &i) { return i.importRange(); }},
      {"ReduceL1", [](I &i) { return i.importReduce("ReduceL1"); }},
      {"ReduceL2", [](I &i) { return i.importReduce("ReduceL2"); }},
      {"ReduceLogSum", [](I &i) { return i.importReduce("ReduceLogSum"); }},
      {"ReduceLogSumExp",
       [](I &i) { return i.importReduce("ReduceLogSumExp"); }},
      {"ReduceMax", [](I &i) { return i.importReduce("ReduceMax"); }},
      {"ReduceMean", [](I &i) { return i.importReduce("ReduceMean"); }},
      {"ReduceMin", [](I &i) { return i.importReduce("ReduceMin"); }},
      {"ReduceProd", [](I &i) { return i.importReduce("ReduceProd"); }},
      {"ReduceSum", [](I &i) { return i.importReduce("ReduceSum"); }},
      {"ReduceSumSquare",
       [](I &i) { return i.importReduce("ReduceSumSquare"); }},
      {"Relu", [](I &i) { return i.unary<ReluOp>(); }},
      {"Reshape", [](I &i) { return i.importReshape(); }},
      {"Resize", [](I &i) { return i.importResize(); }},
      {"ReverseSequence", [](I &i) { return i.importReverseSequence(); }},
      {"RoiAlign", [](I &i) { return i.importRoiAlign(); }},
      {"STFT", [](I &i) { return i.importStft(); }},
      // Scatter (opset 9, deprecated in 11) is ScatterElements.
      {"Scan", [](I &i) { return i.importScan(); }},
      {"Scatter", [](I &i) { return i.importScatter(/*elements=*/true); }},
      {"ScatterElements",
       [](I &i) { return i.importScatter(/*elements=*/true); }},
      {"ScatterND", [](I &i) { return i.importScatter(/*elements=*/false); }},
      {"Shape", [](I &i) { return i.importShape(); }},
      {"Shrink", [](I &i) { return i.importShrink(); }},
      {"Sigmoid", [](I &i) { return i.unary<SigmoidOp>(); }},
      {"Size", [](I &i) { return i.importSize(); }},
      {"Slice", [](I &i) { return i.importSlice(); }},
      {"Softmax", [](I &i) { return i.importSoftmax(/*log=*/false); }},
      {"SoftmaxCrossEntropyLoss",
       [](I &i) { return i.importLoss(/*softmax=*/true); }},
      {"SpaceToDepth",
       [](I &i) { return i.importDepthToSpace(/*toSpace=*/true); }},
      {"Split", [](I &i) { return i.importSplit(); }},
      {"Sqrt", [](I &i) { return i.unary<SqrtOp>(); }},
      {"Squeeze", [](I &i) { return i.importSqueeze(/*unsqueeze=*/false); }},
      {"Sub", [](I &i) { return i.binary<SubOp>(); }},
      {"Sum", [](I &i) { return i.importVariadic("Sum"); }},
      {"Tanh", [](I &i) { return i.unary<TanhOp>(); }},
      {"TfIdfVectorizer", [](I &i) { return i.importTfIdfVectorizer(); }},
      {"Tile", [](I &i) { return i.importShapedBy<TileOp>(); }},
      {"TopK", [](I &i) { return i.importTopK(); }},
      {"Transpose", [](I &i) { return i.importTranspose(); }},
      {"Trilu", [](I &i) { return i.importTrilu(); }},
      {"Unique", [](I &i) { return i.importUnique(); }},
      {"Unsqueeze", [](I &i) { return i.importSqueeze(/*unsqueeze=*/true); }},
      {"Upsample", [](I &i) { return i.importResize(); }},
  };
  static_assert(isSortedAndUnique(kHandlers),
                "keep the ONNX op table sorted, one entry per op type");
  if (const OpHandler<I> *handler = findHandler<I>(kHandlers, op))
    return handler->import(*this);
  return failNode("unsupported op");
}

//===----------------------------------------------------------------------===//
// ONNX shape inference, guarded
//===----------------------------------------------------------------------===//

/// ONNX 1.12's shape functions trust some inputs they should check: Conv
/// without `kernel_shape` takes the kernel from the weight's dims and indexes
/// per-spatial-dim vectors sized by the input's rank, so a weight of another
/// rank reads out of bounds (found by the onnx-import fuzzer). This registry
/// hands out ONNX's own schemas, with such shape functions wrapped in the
/// check they lack; a failed check is an ordinary shape-inference error.
class GuardedSchemaRegistry : public onnx::ISchemaRegistry {
public:
  const onnx::OpSchema *GetSchema(const std::string &key,
                                  const int maxInclusiveVersion,
                                  const std::string &domain) const override {
    // gopt's own later versions check their inputs themselves.
    const onnx::OpSchema *schema =
        onnxSchemaFor(key, maxInclusiveVersion, domain);
    if (!schema || !schema->has_type_and_shape_inference_function() ||
        laterOnnxSchema(key, maxInclusiveVersion) == schema)
      return schema;
    // libonnx's STFT inference reads onesided's default as 0 (ONNX's is 1)
    // and so contradicts the models' own output shapes once frame_length
    // is a constant; gopt's shape function computes them, libonnx only the
    // element type.
    if (key == "STFT" && (domain.empty() || domain == "ai.onnx")) {
      std::string id = "STFT:" + std::to_string(schema->SinceVersion());
      auto it = wrapped.find(id);
      if (it == wrapped.end()) {
        onnx::OpSchema copy = *schema;
        copy.TypeAndShapeInferenceFunction([](onnx::InferenceContext &ctx) {
          onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        });
        it = wrapped.emplace(id, std::move(copy)).first;
      }
      return &it->second;
    }
    Guard guard = guardFor(*schema);
    if (!guard)
      return schema;
    std::string id =
        domain + ":" + key + ":" + std::to_string(schema->SinceVersion());
    auto it = wrapped.find(id);
    if (it == wrapped.end()) {
      onnx::OpSchema copy = *schema;
      copy.TypeAndShapeInferenceFunction(
          [original = schema->GetTypeAndShapeInferenceFunction(),
           guard](onnx::InferenceContext &ctx) {
            guard(ctx);
            original(ctx);
          });
      it = wrapped.emplace(id, std::move(copy)).first;
    }
    return &it->second;
  }

private:
  using Guard = std::function<void(onnx::InferenceContext &)>;

  /// The check `schema`'s shape function lacks, or null.
  static Guard guardFor(const onnx::OpSchema &schema) {
    if (!schema.domain().empty() && schema.domain() != "ai.onnx")
      return nullptr;
    const std::string &name = schema.Name();
    std::pair<int, int> ranked = rankedInputs(schema);
    // The conv and pool functions divide by strides and dilations.
    bool windowed = ranked.first >= 0 || name == "MaxPool" ||
                    name == "AveragePool" || name == "LpPool";
    if (windowed)
      return [ranked](onnx::InferenceContext &ctx) {
        for (const char *positive : {"strides", "dilations", "kernel_shape"})
          if (const onnx::AttributeProto *a = ctx.getAttribute(positive))
            for (int64_t v : a->ints())
              if (v < 1)
                fail_shape_inference(positive, " has ", v,
                                     "; expected values of at least 1");
        if (ranked.first >= 0)
          checkSameRank(ctx, ranked.first, ranked.second);
      };
    // A shape operand's length becomes the result's rank: libonnx builds
    // that many dims before anything checks them (a 2^31-long shape
    // allocates gigabytes).
    static const std::map<std::string, int> kShapeInputs = {
        {"ConstantOfShape", 0}, {"Expand", 1}, {"Reshape", 1}, {"Tile", 1}};
    if (auto it = kShapeInputs.find(name); it != kShapeInputs.end())
      return [input = it->second](onnx::InferenceContext &ctx) {
        if (static_cast<size_t>(input) >= ctx.getNumInputs())
          return;
        const onnx::TypeProto *type = ctx.getInputType(input);
        if (!type || !type->has_tensor_type() ||
            !type->tensor_type().has_shape() ||
            type->tensor_type().shape().dim_size() != 1)
          return;
        const auto &dim = type->tensor_type().shape().dim(0);
        if (dim.has_dim_value() && dim.dim_value() > shape::kMaxRank)
          fail_shape_inference("shape input ", input, " has ", dim.dim_value(),
                               " elements; at most ", shape::kMaxRank,
                               " dimensions are supported");
      };
    // Gemm's function (opsets 6 and before above all) reads A's and B's
    // two dims without checking that they have two.
    if (name == "Gemm")
      return [](onnx::InferenceContext &ctx) {
        for (int input : {0, 1}) {
          int rank = rankOf(ctx, input);
          if (rank >= 0 && rank != 2)
            fail_shape_inference("input ", input, " has rank ", rank,
                                 "; Gemm takes matrices (rank 2)");
        }
      };
    // DepthToSpace's and SpaceToDepth's functions divide by blocksize and
    // by its square without checking either (0, or 2^32 whose square wraps
    // to 0, raises SIGFPE).
    if (name == "DepthToSpace" || name == "SpaceToDepth")
      return [](onnx::InferenceContext &ctx) {
        const onnx::AttributeProto *a = ctx.getAttribute("blocksize");
        if (a && (a->i() < 1 || a->i() > std::numeric_limits<int32_t>::max()))
          fail_shape_inference("blocksize ", a->i(),
                               " is out of range; expected a value in [1, ",
                               std::numeric_limits<int32_t>::max(), "]");
      };
    // LayerNormalization's function indexes the input's dims by `axis`
    // without checking it (a rank-1 input with axis -2 reads before them).
    if (schema.Name() == "LayerNormalization" &&
        (schema.domain().empty() || schema.domain() == "ai.onnx"))
      return [](onnx::InferenceContext &ctx) {
        checkAxisInRange(ctx, /*input=*/0, /*defaultAxis=*/-1);
      };
    return nullptr;
  }

  static void checkAxisInRange(onnx::InferenceContext &ctx, int input,
                               int64_t defaultAxis) {
    int rank = rankOf(ctx, input);
    if (rank < 0)
      return;
    const onnx::AttributeProto *a = ctx.getAttribute("axis");
    int64_t axis = a ? a->i() : defaultAxis;
    if (axis < -rank || axis >= rank)
      fail_shape_inference("axis ", axis, " is out of range for input ", input,
                           " of rank ", rank, " (expected [", -rank, ", ", rank,
                           "))");
  }

  /// The data and weight inputs whose ranks must agree when the kernel
  /// shape is left to inference, or {-1, -1} for ops that need no guard.
  static std::pair<int, int> rankedInputs(const onnx::OpSchema &schema) {
    if (!schema.domain().empty() && schema.domain() != "ai.onnx")
      return {-1, -1};
    const std::string &name = schema.Name();
    if (name == "Conv" || name == "ConvTranspose" || name == "ConvInteger" ||
        name == "DeformConv")
      return {0, 1};
    if (name == "QLinearConv")
      return {0, 3};
    // MaxUnpool's indices have its input's shape.
    if (name == "MaxUnpool")
      return {0, 1};
    return {-1, -1};
  }

  static int rankOf(onnx::InferenceContext &ctx, int index) {
    if (static_cast<size_t>(index) >= ctx.getNumInputs())
      return -1;
    const onnx::TypeProto *type = ctx.getInputType(index);
    if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape())
      return -1;
    return type->tensor_type().shape().dim_size();
  }

  static void checkSameRank(onnx::InferenceContext &ctx, int data, int weight) {
    int dataRank = rankOf(ctx, data), weightRank = rankOf(ctx, weight);
    if (dataRank < 0 || weightRank < 0)
      return;
    if (weightRank != dataRank)
      fail_shape_inference("input ", data, " has rank ", dataRank,
                           " but input ", weight, " has rank ", weightRank,
                           "; they need the same rank");
  }

  mutable std::map<std::string, onnx::OpSchema> wrapped;
};

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

/// The first problem `find` reports in the subgraphs of `graph`'s nodes (If
/// branches, Loop and Scan bodies), or nullopt.
static std::optional<std::string>
findInSubgraphs(const onnx::GraphProto &graph,
                std::optional<std::string> (*find)(const onnx::GraphProto &)) {
  for (const onnx::NodeProto &n : graph.node())
    for (const onnx::AttributeProto &a : n.attribute()) {
      if (a.has_g())
        if (auto bad = find(a.g()))
          return bad;
      for (const onnx::GraphProto &g : a.graphs())
        if (auto bad = find(g))
          return bad;
    }
  return std::nullopt;
}

/// Why a tensor of `graph` (an initializer or a Constant's value, in
/// subgraphs too) holds less or more data than its dims say, or nullopt.
static std::optional<std::string>
findInconsistentTensor(const onnx::GraphProto &graph) {
  auto check = [](const onnx::TensorProto &t,
                  const std::string &what) -> std::optional<std::string> {
    int64_t count = 1;
    for (int64_t d : t.dims()) {
      if (d < 0 || (d > 0 && count > (int64_t(1) << 40) / d))
        return what + " has invalid dims";
      count *= d;
    }
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      return std::nullopt; // refused later, naming the tensor
    size_t width = 0;
    int64_t typed = -1;
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      width = 4, typed = t.float_data_size();
      break;
    case onnx::TensorProto::DOUBLE:
      width = 8, typed = t.double_data_size();
      break;
    case onnx::TensorProto::INT64:
      width = 8, typed = t.int64_data_size();
      break;
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::UINT32:
      width = t.data_type() == onnx::TensorProto::UINT64 ? 8 : 4,
      typed = t.uint64_data_size();
      break;
    case onnx::TensorProto::INT32:
      width = 4, typed = t.int32_data_size();
      break;
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      width = 2, typed = t.int32_data_size();
      break;
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
    case kOnnxFloat8E4M3FN:
    case kOnnxFloat8E4M3FNUZ:
    case kOnnxFloat8E5M2:
    case kOnnxFloat8E5M2FNUZ:
      width = 1, typed = t.int32_data_size();
      break;
    case kOnnxInt4:
    case kOnnxUInt4:
      // Two per byte (or per int32_data entry): counted as half as many
      // one-byte elements.
      width = 1, typed = t.int32_data_size(), count = (count + 1) / 2;
      break;
    default:
      return std::nullopt; // strings and others: refused later by type
    }
    // The messages decodeTensor gives for the same faults.
    SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
    if (t.has_raw_data()) {
      if (t.raw_data().size() != size_t(count) * width)
        return llvm::formatv(
                   "{0} has {1} bytes of data but dims {2} of {3} need {4}",
                   what, t.raw_data().size(), formatShape(dims),
                   elementTypeName(t.data_type()), size_t(count) * width)
            .str();
    } else if (typed != count) {
      return llvm::formatv("{0} has {1} values but dims {2} need {3}", what,
                           typed, formatShape(dims), count)
          .str();
    }
    return std::nullopt;
  };
  for (const onnx::TensorProto &t : graph.initializer())
    if (auto bad = check(t, "initializer '" + t.name() + "'"))
      return bad;
  for (const onnx::NodeProto &n : graph.node())
    for (const onnx::AttributeProto &a : n.attribute()) {
      if (a.has_t())
        if (auto bad = check(a.t(), "attribute '" + a.name() + "' of node '" +
                                        n.name() + "' (" + n.op_type() + ")"))
          return bad;
    }
  return findInSubgraphs(graph, findInconsistentTensor);
}

/// The largest dimension gopt accepts in a declared tensor type: libonnx's
/// shape inference of SAME-padded windows takes time proportional to the
/// input size (a 2^40-wide input ran for minutes), and no tensor this
/// machine can hold has a larger dimension.
static constexpr int64_t kMaxDeclaredDimension = (int64_t(1) << 31) - 1;

/// Why a value's declared type in `graph` (an input, output or value_info,
/// in subgraphs too) is one gopt refuses before libonnx reads it, or
/// nullopt: a dimension out of range, or an opaque or sparse type, which
/// libonnx's shape functions read as a tensor (MaxUnpool's crashed).
static std::optional<std::string>
findUnreadableDeclaration(const onnx::GraphProto &graph) {
  auto check = [](const onnx::ValueInfoProto &v,
                  const char *what) -> std::optional<std::string> {
    if (v.type().has_opaque_type() || v.type().has_sparse_tensor_type())
      return llvm::formatv(
                 "{0} '{1}' has {2} type; gopt imports tensors", what, v.name(),
                 v.type().has_opaque_type() ? "an opaque" : "a sparse tensor")
          .str();
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
      return std::nullopt;
    const onnx::TensorShapeProto &shape = v.type().tensor_type().shape();
    for (int i = 0; i < shape.dim_size(); ++i) {
      const onnx::TensorShapeProto::Dimension &d = shape.dim(i);
      if (d.has_dim_value() &&
          (d.dim_value() < 0 || d.dim_value() > kMaxDeclaredDimension))
        return llvm::formatv("{0} '{1}' declares dimension {2} as {3}; gopt "
                             "accepts dimensions from 0 to {4}",
                             what, v.name(), i, d.dim_value(),
                             kMaxDeclaredDimension)
            .str();
    }
    return std::nullopt;
  };
  for (const onnx::ValueInfoProto &v : graph.input())
    if (auto bad = check(v, "graph input"))
      return bad;
  for (const onnx::ValueInfoProto &v : graph.output())
    if (auto bad = check(v, "graph output"))
      return bad;
  for (const onnx::ValueInfoProto &v : graph.value_info())
    if (auto bad = check(v, "value"))
      return bad;
  return findInSubgraphs(graph, findUnreadableDeclaration);
}

/// `message` without trailing white space, its lines joined by spaces.
static std::string oneLine(std::string message) {
  while (!message.empty() &&
         isspace(static_cast<unsigned char>(message.back())))
    message.pop_back();
  std::replace(message.begin(), message.end(), '\n', ' ');
  return message;
}

/// At an opset after libonnx's newest, the first node of the standard
/// domain in `graph` (or its subgraphs) that `registry` has no schema for
/// or whose inputs and attributes its schema refuses, as one error naming
/// the node; nullopt when all pass. libonnx resolves such a node to its
/// newest version, so an op whose later version changed and that gopt does
/// not define is refused by that version's schema, here by name.
static std::optional<std::string>
findUnverifiedLaterNode(const onnx::GraphProto &graph,
                        const onnx::ISchemaRegistry &registry, int64_t opset) {
  if (opset <= kLibOnnxLatestOpset)
    return std::nullopt;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &n = graph.node(i);
    for (const onnx::AttributeProto &a : n.attribute()) {
      if (a.has_g())
        if (auto bad = findUnverifiedLaterNode(a.g(), registry, opset))
          return bad;
      for (const onnx::GraphProto &g : a.graphs())
        if (auto bad = findUnverifiedLaterNode(g, registry, opset))
          return bad;
    }
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      continue;
    std::string who = n.name().empty() ? llvm::formatv("#{0}", i).str()
                                       : "'" + n.name() + "'";
    std::string where =
        llvm::formatv("node {0} ({1}, opset {2}): ", who, n.op_type(), opset);
    const onnx::OpSchema *schema =
        registry.GetSchema(n.op_type(), static_cast<int>(opset), "");
    if (!schema)
      return where +
             llvm::formatv("no definition at opset {0} (gopt's ONNX library "
                           "defines opsets up to {1}; gopt adds the later "
                           "versions of the ops docs/conformance.md lists)",
                           opset, kLibOnnxLatestOpset)
                 .str();
    try {
      schema->Verify(n);
    } catch (const std::exception &e) {
      return where + "ONNX checker: " + oneLine(e.what());
    }
  }
  return std::nullopt;
}

OwningOpRef<ModuleOp> OnnxImporter::build(StringRef bytes) {
  auto report = [&]() -> OwningOpRef<ModuleOp> { return nullptr; };
  if (bytes.size() > size_t(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error = "not a valid ONNX model (the file is truncated or not a "
            "serialized ModelProto)";
    return report();
  }
  // libonnx's shape inference reads initializers and Constant values
  // without checking their sizes (a short raw_data crashes it): check them
  // first.
  if (std::optional<std::string> bad = findInconsistentTensor(model.graph())) {
    error = *bad;
    return report();
  }
  if (std::optional<std::string> bad =
          findUnreadableDeclaration(model.graph())) {
    error = *bad;
    return report();
  }
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  // ONNX's checker and shape inference report problems by throwing; both
  // read the schemas of opsets 18-21 that gopt defines (OnnxLaterSchemas.h)
  // from the registry.
  GuardedSchemaRegistry registry;
  if (std::optional<std::string> bad =
          findUnverifiedLaterNode(model.graph(), registry, opset)) {
    error = *bad;
    return report();
  }
  // Opsets 19-21 come with IR versions 9 and 10, newer than libonnx's: they
  // add element types (float8, 4-bit integers), which gopt reads by number,
  // and FunctionProto fields the parser skips; the checker reads the rest as
  // IR version 8.
  int64_t irVersion = model.ir_version();
  bool laterIr = irVersion > onnx::IR_VERSION && irVersion <= 10;
  if (laterIr)
    model.set_ir_version(onnx::IR_VERSION);
  try {
    onnx::checker::CheckerContext checkerContext;
    checkerContext.set_schema_registry(&registry);
    onnx::checker::check_model(model, checkerContext);
    onnx::shape_inference::InferShapes(model, &registry);
  } catch (const std::exception &e) {
    error = "ONNX checker: " + oneLine(e.what());
    return report();
  }
  if (laterIr)
    model.set_ir_version(irVersion);
  if (opset == 0) {
    error = "the model imports no opset of the default (ai.onnx) domain";
    return report();
  }
  // Before opset 7 ops are checked one by one (importNode): gopt imports
  // the forms of opset 7 and later.

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  const onnx::GraphProto &graph = model.graph();
  collectReadNames(graph);
  func::FuncOp func = createMain(*module);
  Block *body = &func.front();
  ErrorCapture errors(ctx);
  capture = &errors;

  if (failed(importInitializers(graph)))
    return report();
  if (!graph.sparse_initializer().empty()) {
    error = "sparse initializers are not supported";
    return report();
  }
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    if (values.count(in.name()))
      continue; // an initializer listed as input (IR version < 4)
    const onnx::TypeProto &tp = in.type();
    if (!tp.has_tensor_type()) {
      error = llvm::formatv("graph input '{0}' is not a tensor", in.name());
      return report();
    }
    Type et = convertElementType(ctx, tp.tensor_type().elem_type());
    if (!et) {
      error = llvm::formatv(
          "graph input '{0}' has unsupported element type {1}", in.name(),
          elementTypeName(tp.tensor_type().elem_type()));
      return report();
    }
    if (!tp.tensor_type().has_shape()) {
      error = llvm::formatv("graph input '{0}' has no shape (unranked tensors "
                            "are not supported)",
                            in.name());
      return report();
    }
    SmallVector<int64_t> dims;
    for (const auto &d : tp.tensor_type().shape().dim())
      dims.push_back(d.has_dim_value() && d.dim_value() >= 0
                         ? d.dim_value()
                         : ShapedType::kDynamic);
    auto type = RankedTensorType::get(dims, et);
    argTypes.push_back(type);
    argNames.push_back(in.name());
    BlockArgument arg = body->addArgument(
        type, NameLoc::get(b.getStringAttr(in.name()), fileLoc));
    values[in.name()] = arg;
  }

  if (failed(importNodes(graph)))
    return report();
  node = nullptr;

  SmallVector<Value> results;
  SmallVector<std::string> resultNames;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    auto it = values.find(out.name());
    if (it == values.end()) {
      auto bad = unsupportedValues.find(out.name());
      error = bad != unsupportedValues.end()
                  ? llvm::formatv("graph output '{0}' is {1}", out.name(),
                                  bad->second)
                        .str()
                  : llvm::formatv("graph output '{0}' is not produced by any "
                                  "node",
                                  out.name())
                        .str();
      return report();
    }
    results.push_back(it->second);
    resultNames.push_back(out.name());
  }
  finishMain(func, argTypes, argNames, results, resultNames);
  capture = nullptr;
  return module;
}

} // namespace

OwningOpRef<ModuleOp> gopt::importOnnx(StringRef bytes, StringRef filename,
                                       MLIRContext *context) {
  OnnxImporter importer(context, filename);
  return importer.run(bytes);
}
