//===- ConvertLayout.cpp - Rewrite graphs to NCHW or NHWC -----------------===//
//
// Phase 1 rewrites every layout-sensitive op that is not in the target
// layout to the target layout, with a transpose on its activation input and
// one back on its result; constant filters are transposed at compile time.
// Phase 2 sinks transposes toward the outputs through layout-agnostic ops,
// rewriting the axes of axis-carrying ops on the way, and lets the
// transpose canonicalizations cancel the pairs that meet. What remains are
// the transposes at the graph's boundary.
//
//===----------------------------------------------------------------------===//

#include "OpCategories.h"
#include "PatternUtils.h"
#include "Report.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/ShapeInference.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

namespace gopt {
#define GEN_PASS_DEF_CONVERTLAYOUT
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

constexpr int64_t kNhwcToNchw[] = {0, 3, 1, 2};
constexpr int64_t kNchwToNhwc[] = {0, 2, 3, 1};
constexpr int64_t kHwioToOihw[] = {3, 2, 0, 1};
constexpr int64_t kOihwToHwio[] = {2, 3, 1, 0};

/// transpose(value, perm); a constant is transposed at compile time.
Value createTranspose(OpBuilder &builder, Location loc, Value value,
                      ArrayRef<int64_t> perm) {
  if (std::optional<HostTensor> t = readConstant(value))
    return builder.create<ConstantOp>(loc,
                                      writeConstant(transposeTensor(*t, perm)));
  return builder.create<TransposeOp>(loc, value, perm);
}

/// True when transposing a tensor of `shape` by `perm` only moves size-1
/// dimensions: the transpose is a reshape.
bool movesOnlyUnitDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> perm) {
  int64_t last = -1;
  for (int64_t p : perm) {
    if (shape[p] == 1)
      continue;
    if (p < last)
      return false;
    last = p;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Phase 1: layout-sensitive ops
//===----------------------------------------------------------------------===//

/// Re-infers the result types of `op` after its operands or attributes
/// changed.
LogicalResult reinferTypes(Operation *op) {
  auto inferType = dyn_cast<InferTypeOpInterface>(op);
  SmallVector<Type> types;
  if (!inferType ||
      failed(inferType.inferReturnTypes(
          op->getContext(), op->getLoc(), op->getOperands(),
          op->getAttrDictionary(), op->getPropertiesStorage(), op->getRegions(),
          types)) ||
      types.size() != op->getNumResults() ||
      llvm::any_of(types, llvm::IsaPred<UnrankedTensorType>))
    return failure();
  for (auto [result, type] : llvm::zip(op->getResults(), types))
    result.setType(type);
  return success();
}

/// The layout-sensitive op entry of `op`, or nullptr for an op without a
/// layout.
const LayoutSensitiveOp *getLayoutSensitive(Operation *op) {
  StringRef name = op->getName().getStringRef();
  for (const LayoutSensitiveOp &entry : kLayoutSensitiveOps)
    if (name == entry.opName)
      return &entry;
  return nullptr;
}

/// Clones `op` in the target layout: its activation operands are
/// transposed in, result 0 (when an activation) transposed back; other
/// results are per-channel. `adjust` changes the clone further (a filter's
/// format, a shape attribute) before its types are re-inferred.
LogicalResult convertOp(OpBuilder &builder, Operation *op,
                        const LayoutSensitiveOp &layout, StringRef target,
                        function_ref<void(Operation *)> adjust = nullptr) {
  ArrayRef<int64_t> toTarget =
      target == "NCHW" ? ArrayRef(kNhwcToNchw) : ArrayRef(kNchwToNhwc);
  ArrayRef<int64_t> back =
      target == "NCHW" ? ArrayRef(kNchwToNhwc) : ArrayRef(kNhwcToNchw);
  builder.setInsertionPoint(op);
  Location loc = op->getLoc();
  SmallVector<Value, 2> inputs;
  for (unsigned i : layout.activationOperands())
    inputs.push_back(
        createTranspose(builder, loc, op->getOperand(i), toTarget));
  Operation *clone = builder.clone(*op);
  for (auto [i, input] : llvm::zip(layout.activationOperands(), inputs))
    clone->setOperand(i, input);
  clone->setAttr("data_format", builder.getStringAttr(target));
  if (adjust)
    adjust(clone);
  if (failed(reinferTypes(clone))) {
    clone->erase();
    return failure();
  }
  Value result = clone->getResult(0);
  if (layout.result0)
    result = createTranspose(builder, loc, result, back);
  op->getResult(0).replaceAllUsesWith(result);
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    op->getResult(i).replaceAllUsesWith(clone->getResult(i));
  op->erase();
  return success();
}

/// A 4-d shape attribute (NHWC or NCHW order) in `target`'s order.
SmallVector<int64_t> permuteToLayout(ArrayRef<int64_t> shape,
                                     StringRef target) {
  ArrayRef<int64_t> perm =
      target == "NCHW" ? ArrayRef(kNhwcToNchw) : ArrayRef(kNchwToNhwc);
  SmallVector<int64_t> result;
  for (int64_t p : perm)
    result.push_back(shape[p]);
  return result;
}

//===----------------------------------------------------------------------===//
// Phase 2: transpose sinking
//===----------------------------------------------------------------------===//

/// The transpose that defines `value`, if it moves data. An identity
/// transpose is left to the folder: sinking it would recreate it below the
/// op, and two such sinks can undo each other forever.
TransposeOp sinkableTranspose(Value value) {
  auto transpose = value.getDefiningOp<TransposeOp>();
  if (!transpose ||
      llvm::equal(transpose.getPerm(),
                  llvm::seq<int64_t>(0, transpose.getPerm().size())))
    return TransposeOp();
  return transpose;
}

/// transpose(constant) -> constant.
struct FoldTransposeOfConstantPattern : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<HostTensor> t = readConstant(op.getX());
    if (!t)
      return rewriter.notifyMatchFailure(op, "operand is not a constant");
    rewriter.replaceOpWithNewOp<ConstantOp>(
        op, writeConstant(transposeTensor(*t, op.getPerm())));
    return success();
  }
};

/// A transpose that only moves size-1 dimensions is a reshape (no data
/// moves), e.g. [N,C,1,1] -> [N,1,1,C] after global pooling.
struct TransposeOfUnitDimsToReshapePattern
    : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getX().getType());
    if (!movesOnlyUnitDims(type.getShape(), op.getPerm()))
      return rewriter.notifyMatchFailure(op, "moves data");
    auto resultType = cast<RankedTensorType>(op.getType());
    if (resultType.getNumDynamicDims() > 1)
      return rewriter.notifyMatchFailure(op, "more than one dynamic dim");
    SmallVector<int64_t> shape;
    for (int64_t d : resultType.getShape())
      shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
    auto reshape = rewriter.create<ReshapeOp>(op.getLoc(), op.getX(), shape);
    replaceKeepingType(rewriter, op, reshape.getY());
    return success();
  }
};

/// matmul(flatten(transpose(x, p)), w) -> matmul(flatten(x), w') for a
/// constant w, w' being w with its rows permuted to x's element order at
/// compile time: the transpose back to NCHW before a classifier's flatten
/// moved every activation. Not for a trained weight (a parameter): the
/// step would permute the weight and its gradient every run, which costs
/// more than transposing the activations below a batch of about the
/// layer's output count (the MNIST CNN's [9216, 128] weight: 2-3 ms of
/// CPU per f32 step against 1.5 ms of activation transposes at batch 64,
/// measured; 3.6 ms against 12 ms at batch 1024 in bf16).
struct FoldTransposeIntoMatmulWeightPattern
    : public OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getTransposeA())
      return rewriter.notifyMatchFailure(op, "a is transposed");
    auto flatten = op.getA().getDefiningOp<FlattenOp>();
    if (!flatten || flatten.getAxis() != 1 || !flatten->hasOneUse())
      return rewriter.notifyMatchFailure(op, "a is not a flatten to [N, K]");
    TransposeOp transpose = sinkableTranspose(flatten.getX());
    if (!transpose || !transpose->hasOneUse())
      return rewriter.notifyMatchFailure(op, "flatten of no transpose");
    ArrayRef<int64_t> perm = transpose.getPerm();
    auto xType = cast<RankedTensorType>(transpose.getX().getType());
    if (!op.getB().getDefiningOp<ConstantOp>())
      return rewriter.notifyMatchFailure(op, "w is not a constant");
    auto wType = dyn_cast<RankedTensorType>(op.getB().getType());
    if (perm.empty() || perm[0] != 0 || !wType || wType.getRank() != 2 ||
        !wType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a per-example transpose");
    // x's non-batch dims, and the transposed ones w's rows are ordered by.
    SmallVector<int64_t> xDims, transposedDims;
    for (int64_t i = 1; i < xType.getRank(); ++i) {
      if (ShapedType::isDynamic(xType.getDimSize(i)))
        return rewriter.notifyMatchFailure(op, "dynamic feature dims");
      xDims.push_back(xType.getDimSize(i));
      transposedDims.push_back(xType.getDimSize(perm[i]));
    }
    bool rowsLast = op.getTransposeB(); // w is [M, K]
    int64_t k = wType.getDimSize(rowsLast ? 1 : 0);
    int64_t m = wType.getDimSize(rowsLast ? 0 : 1);
    int64_t featureCount = 1;
    for (int64_t d : xDims)
      featureCount *= d;
    if (k != featureCount)
      return rewriter.notifyMatchFailure(op, "w's rows are not the features");
    // w as [transposed dims..., M] (or [M, transposed dims...]), permuted so
    // that its feature axes follow x's dims: x's dim i is the transposed
    // axis j with perm[j] = i.
    int64_t features = static_cast<int64_t>(xDims.size());
    SmallVector<int64_t> expanded, featurePerm(features);
    for (int64_t j = 0; j < features; ++j)
      featurePerm[perm[j + 1] - 1] = j;
    SmallVector<int64_t> wPerm;
    if (rowsLast) {
      expanded.push_back(m);
      wPerm.push_back(0);
    }
    for (int64_t j = 0; j < features; ++j) {
      expanded.push_back(transposedDims[j]);
      wPerm.push_back(featurePerm[j] + (rowsLast ? 1 : 0));
    }
    if (!rowsLast) {
      expanded.push_back(m);
      wPerm.push_back(features);
    }
    Location loc = op.getLoc();
    Value w = rewriter.create<ReshapeOp>(loc, op.getB(), expanded);
    w = createTranspose(rewriter, loc, w, wPerm);
    SmallVector<int64_t> flat =
        rowsLast ? SmallVector<int64_t>{m, k} : SmallVector<int64_t>{k, m};
    w = rewriter.create<ReshapeOp>(loc, w, flat);
    auto newFlatten =
        rewriter.create<FlattenOp>(flatten.getLoc(), transpose.getX(), 1);
    rewriter.modifyOpInPlace(op, [&] {
      op.getAMutable().assign(newFlatten.getY());
      op.getBMutable().assign(w);
    });
    return success();
  }
};

bool isElementwiseUnary(Operation *op) {
  // A training dropout draws its mask by element index, and its
  // dropout_grad must see the elements in the same order: it stays put.
  if (auto dropout = dyn_cast<DropoutOp>(op))
    return !dropout.getTraining();
  return op->hasTrait<LayoutAgnostic>() && op->getNumOperands() == 1;
}

bool isElementwiseBinary(Operation *op) {
  return op->hasTrait<LayoutAgnostic>() && op->getNumOperands() == 2;
}

/// Clones `op` with new operands and result type.
Operation *cloneWith(PatternRewriter &rewriter, Operation *op,
                     ValueRange operands, Type resultType) {
  Operation *clone = rewriter.clone(*op);
  clone->setOperands(operands);
  clone->getResult(0).setType(resultType);
  return clone;
}

/// op(transpose(x, p)) -> transpose(op(x), p) for elementwise unary ops.
struct SinkTransposeThroughUnaryPattern : public RewritePattern {
  SinkTransposeThroughUnaryPattern(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isElementwiseUnary(op) || op->getNumOperands() != 1)
      return rewriter.notifyMatchFailure(op, "not elementwise unary");
    auto transpose = sinkableTranspose(op->getOperand(0));
    if (!transpose)
      return rewriter.notifyMatchFailure(op, "operand is not a transpose");
    auto xType = cast<RankedTensorType>(transpose.getX().getType());
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Operation *clone = cloneWith(rewriter, op, transpose.getX(),
                                 xType.clone(resultType.getElementType()));
    rewriter.replaceOpWithNewOp<TransposeOp>(op, clone->getResult(0),
                                             transpose.getPerm());
    return success();
  }
};

/// A transpose of `value` by `perm` that already exists.
TransposeOp findTransposeUser(Value value, ArrayRef<int64_t> perm) {
  for (Operation *user : value.getUsers())
    if (auto t = dyn_cast<TransposeOp>(user))
      // A dead one does not count: reusing it would let two layouts of one
      // op ping-pong.
      if (t.getX() == value && t.getPerm() == perm && !t->use_empty())
        return t;
  return TransposeOp();
}

/// op(transpose(a, p), b) -> transpose(op(a, b'), p), where b' is b brought
/// into a's layout without moving data: a transpose by p, a constant, or a
/// lower-rank value whose broadcast dims are all size 1 where they move.
struct SinkTransposeThroughBinaryPattern : public RewritePattern {
  SinkTransposeThroughBinaryPattern(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isElementwiseBinary(op))
      return rewriter.notifyMatchFailure(op, "not elementwise binary");
    // Only a transpose that moves data leads. One that moves only size-1
    // dims (a per-channel [1,1,1,C] operand brought into NCHW) becomes a
    // reshape instead: leading with it would pull the other operand back
    // through that operand's existing transpose, which this pattern sinks
    // again on the next match, forever (TF 1.x batch norms computed from
    // batch moments do exactly this).
    ArrayRef<int64_t> perm;
    for (Value operand : op->getOperands())
      if (auto t = sinkableTranspose(operand)) {
        auto xType = cast<RankedTensorType>(t.getX().getType());
        if (movesOnlyUnitDims(xType.getShape(), t.getPerm()))
          continue;
        perm = t.getPerm();
        break;
      }
    if (perm.empty())
      return rewriter.notifyMatchFailure(op, "no data-moving transpose");
    int64_t rank = perm.size();
    SmallVector<int64_t> inverse = invertPermutation(perm);
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    if (resultType.getRank() != rank)
      return rewriter.notifyMatchFailure(op, "result rank differs");

    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      auto t = sinkableTranspose(operand);
      if (t && t.getPerm() == perm) {
        operands.push_back(t.getX());
        continue;
      }
      auto type = cast<RankedTensorType>(operand.getType());
      SmallVector<int64_t> expanded(rank - type.getRank(), 1);
      llvm::append_range(expanded, type.getShape());
      bool isConstant = readConstant(operand).has_value();
      if (!isConstant && !movesOnlyUnitDims(expanded, inverse) &&
          !findTransposeUser(operand, inverse))
        return rewriter.notifyMatchFailure(op, "would add a real transpose");
      if (llvm::count_if(expanded, ShapedType::isDynamic) > 1)
        return rewriter.notifyMatchFailure(op, "operand too dynamic");
      operands.push_back(operand);
    }

    // Bring the other operands into a's layout.
    Location loc = op->getLoc();
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      auto t = sinkableTranspose(operand);
      if (t && t.getPerm() == perm)
        continue;
      auto type = cast<RankedTensorType>(operand.getType());
      // The graph may already hold the operand in a's layout (the input
      // transpose of a converted op that reads it too): reuse it.
      if (TransposeOp existing = findTransposeUser(operand, inverse)) {
        if (existing->isBeforeInBlock(op) ||
            existing->getBlock() != op->getBlock()) {
          operands[i] = existing.getY();
          continue;
        }
        rewriter.moveOpBefore(existing, op);
        operands[i] = existing.getY();
        continue;
      }
      Value value = operand;
      if (type.getRank() < rank) {
        SmallVector<int64_t> expanded(rank - type.getRank(), 1);
        for (int64_t d : type.getShape())
          expanded.push_back(ShapedType::isDynamic(d) ? -1 : d);
        if (std::optional<HostTensor> c = readConstant(value)) {
          c->shape.assign(expanded.begin(), expanded.end());
          value = rewriter.create<ConstantOp>(loc, writeConstant(*c));
        } else {
          value = rewriter.create<ReshapeOp>(loc, value, expanded);
        }
      }
      operands[i] = createTranspose(rewriter, loc, value, inverse);
    }
    Shape shape;
    ShapeError silent(std::nullopt, op->getName().getStringRef());
    if (failed(inferBroadcastShape(
            cast<RankedTensorType>(operands[0].getType()).getShape(),
            cast<RankedTensorType>(operands[1].getType()).getShape(), shape,
            silent)))
      return rewriter.notifyMatchFailure(op, "operands do not broadcast");
    Operation *clone =
        cloneWith(rewriter, op, operands, resultType.clone(shape));
    rewriter.replaceOpWithNewOp<TransposeOp>(op, clone->getResult(0), perm);
    return success();
  }
};

/// softmax(transpose(x, p), axis a) -> transpose(softmax(x, p[a]), p).
template <typename OpTy>
struct SinkTransposeThroughSoftmaxPattern : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto transpose = sinkableTranspose(op.getX());
    if (!transpose)
      return rewriter.notifyMatchFailure(op, "operand is not a transpose");
    ArrayRef<int64_t> perm = transpose.getPerm();
    int64_t axis = op.getAxis();
    if (axis < 0)
      axis += perm.size();
    auto clone = cast<OpTy>(rewriter.clone(*op));
    clone->setOperand(0, transpose.getX());
    clone.setAxis(perm[axis]);
    clone->getResult(0).setType(transpose.getX().getType());
    rewriter.replaceOpWithNewOp<TransposeOp>(op, clone->getResult(0), perm);
    return success();
  }
};

/// reduce(transpose(x, p), axes) -> reduce(x, p[axes]), followed by the
/// transpose of the kept dimensions when their order changed; for every op
/// with the Reduction trait.
struct SinkTransposeThroughReducePattern
    : public OpTraitRewritePattern<Reduction> {
  using OpTraitRewritePattern<Reduction>::OpTraitRewritePattern;
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    auto transpose = sinkableTranspose(op->getOperand(0));
    if (!transpose)
      return rewriter.notifyMatchFailure(op, "operand is not a transpose");
    ArrayRef<int64_t> opAxes =
        cast<DenseI64ArrayAttr>(op->getAttr("axes")).asArrayRef();
    auto keepAttr = op->getAttrOfType<BoolAttr>("keep_dims");
    bool keepDims = keepAttr && keepAttr.getValue();
    ArrayRef<int64_t> perm = transpose.getPerm();
    int64_t rank = perm.size();
    SmallVector<bool> reduced(rank, opAxes.empty());
    for (int64_t a : opAxes)
      reduced[a < 0 ? a + rank : a] = true;
    SmallVector<int64_t> axes;
    SmallVector<bool> reducedInX(rank, false);
    for (int64_t i = 0; i < rank; ++i)
      if (reduced[i]) {
        axes.push_back(perm[i]);
        reducedInX[perm[i]] = true;
      }
    llvm::sort(axes);
    SmallVector<int64_t> newPerm;
    if (keepDims) {
      newPerm.assign(perm.begin(), perm.end());
    } else {
      // Position of each kept x dim among the kept dims.
      SmallVector<int64_t> position(rank, -1);
      int64_t next = 0;
      for (int64_t d = 0; d < rank; ++d)
        if (!reducedInX[d])
          position[d] = next++;
      for (int64_t i = 0; i < rank; ++i)
        if (!reduced[i])
          newPerm.push_back(position[perm[i]]);
    }
    // The same reduction of the untransposed operand; its result type
    // follows from the shape function.
    Operation *reduce = rewriter.clone(*op);
    reduce->setOperand(0, transpose.getX());
    reduce->setAttr("axes", rewriter.getDenseI64ArrayAttr(axes));
    SmallVector<Type> types;
    if (failed(cast<InferTypeOpInterface>(reduce).inferReturnTypes(
            op->getContext(), op->getLoc(), reduce->getOperands(),
            reduce->getRawDictionaryAttrs(), reduce->getPropertiesStorage(),
            reduce->getRegions(), types))) {
      rewriter.eraseOp(reduce);
      return rewriter.notifyMatchFailure(op, "no result type");
    }
    reduce->getResult(0).setType(types.front());
    Value result = reduce->getResult(0);
    if (!llvm::equal(newPerm, llvm::seq<int64_t>(0, newPerm.size())))
      result = rewriter.create<TransposeOp>(op->getLoc(), result, newPerm);
    replaceKeepingType(rewriter, op, result);
    return success();
  }
};

/// concat(transpose(a, p), transpose(b, p), axis) ->
/// transpose(concat(a, b, p[axis]), p); constants are transposed.
struct SinkTransposeThroughConcatPattern : public OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> perm;
    for (Value input : op.getInputs())
      if (auto t = sinkableTranspose(input)) {
        perm = t.getPerm();
        break;
      }
    if (perm.empty())
      return rewriter.notifyMatchFailure(op, "no transposed operand");
    SmallVector<int64_t> inverse = invertPermutation(perm);
    SmallVector<Value> inputs;
    for (Value input : op.getInputs()) {
      auto t = sinkableTranspose(input);
      if (t && t.getPerm() == perm)
        inputs.push_back(t.getX());
      else if (readConstant(input))
        inputs.push_back(
            createTranspose(rewriter, op.getLoc(), input, inverse));
      else
        return rewriter.notifyMatchFailure(op, "an operand in another layout");
    }
    int64_t axis = op.getAxis();
    if (axis < 0)
      axis += perm.size();
    auto concat = rewriter.create<ConcatOp>(op.getLoc(), inputs, perm[axis]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, concat.getY(), perm);
    return success();
  }
};

/// pad(transpose(x, p)) -> transpose(pad(x), p) with the pads permuted.
struct SinkTransposeThroughPadPattern : public OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = sinkableTranspose(op.getX());
    if (!transpose)
      return rewriter.notifyMatchFailure(op, "operand is not a transpose");
    ArrayRef<int64_t> perm = transpose.getPerm();
    SmallVector<int64_t> pads(op.getPads().size());
    for (auto [i, p] : llvm::enumerate(perm)) {
      pads[2 * p] = op.getPads()[2 * i];
      pads[2 * p + 1] = op.getPads()[2 * i + 1];
    }
    auto pad = rewriter.create<PadOp>(op.getLoc(), transpose.getX(),
                                      rewriter.getDenseI64ArrayAttr(pads),
                                      op.getModeAttr(), op.getValueAttr());
    rewriter.replaceOpWithNewOp<TransposeOp>(op, pad.getY(), perm);
    return success();
  }
};

/// slice(transpose(x, p)) -> transpose(slice(x), p) with permuted bounds.
struct SinkTransposeThroughSlicePattern : public OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = sinkableTranspose(op.getX());
    if (!transpose)
      return rewriter.notifyMatchFailure(op, "operand is not a transpose");
    ArrayRef<int64_t> perm = transpose.getPerm();
    int64_t rank = perm.size();
    SmallVector<int64_t> starts(rank), ends(rank), steps(rank);
    for (auto [i, p] : llvm::enumerate(perm)) {
      starts[p] = op.getStarts()[i];
      ends[p] = op.getEnds()[i];
      steps[p] = op.getSteps()[i];
    }
    auto slice = rewriter.create<SliceOp>(op.getLoc(), transpose.getX(), starts,
                                          ends, steps);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, slice.getY(), perm);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertLayoutPass
    : public gopt::impl::ConvertLayoutBase<ConvertLayoutPass> {
  using ConvertLayoutBase::ConvertLayoutBase;

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    return initializeEnumOptions(*this, options, errorHandler);
  }

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    populateTransposeSinkingPatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  /// The layout `auto` picks, with the reason for the remark.
  std::pair<StringRef, std::string> chooseLayout(func::FuncOp func) {
    Type elementType;
    // gopt-optimize lowers precision after the layout is converted: the
    // convolutions will run in `precision`, not in the graph's f32.
    if (precision == Precision::BF16)
      elementType = BFloat16Type::get(func.getContext());
    else if (precision == Precision::F16)
      elementType = Float16Type::get(func.getContext());
    func.walk([&](Operation *op) {
      if (!elementType && op->hasAttr("data_format") &&
          op->getNumOperands() > 0)
        elementType = getElementTypeOrSelf(op->getOperand(0).getType());
    });
    if (elementType && (elementType.isF16() || elementType.isBF16()) &&
        target == TargetDevice::Gpu)
      return {"NHWC", "tensor cores read f16/bf16 activations in NHWC"};
    if (elementType && (elementType.isF16() || elementType.isBF16()))
      return {"NCHW", "gopt's CPU schedule keeps NCHW convolutions in "
                      "oneDNN's blocked layouts, in bf16 as in f32"};
    std::string why = target == TargetDevice::Gpu
                          ? "cuDNN's fastest f32 kernels are NCHW"
                          : "oneDNN's f32 kernels run fastest on NCHW "
                            "(blocked) layouts";
    return {"NCHW", why};
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    StringRef format = layout == DataFormat::NHWC ? "NHWC" : "NCHW";
    if (layout == DataFormat::Auto) {
      auto [chosen, why] = chooseLayout(func);
      format = chosen;
      emitRemark(func.getLoc()) << "layout=auto chose " << chosen << " for "
                                << stringifyTargetDevice(target) << ": " << why;
    } else if (layout == DataFormat::NCHW && channelsLastIfFewerTransposes &&
               preferChannelsLast(func)) {
      format = "NHWC";
      if (report)
        emitRemark(func.getLoc())
            << getArgument()
            << ": NHWC instead of NCHW: NCHW would leave transposes inside "
               "the network";
    }

    int64_t inInput = countTransposes(func);
    int64_t converted = 0, before = 0, after = 0;
    if (failed(
            convert(func, format, /*trial=*/false, converted, before, after)))
      return signalPassFailure();
    numTransposesRemoved += std::max<int64_t>(before - after, 0);
    numTransposesLeft += after;
    reportChanges(
        func, report, getArgument(),
        "converted " + plural(converted, "op") + " to " + format.str() +
            ", removed " +
            plural(std::max<int64_t>(before - after, 0), "transpose") + ", " +
            std::to_string(after) + " remain (" + std::to_string(inInput) +
            " in the input)");
  }

  static int64_t countTransposes(func::FuncOp func) {
    int64_t n = 0;
    func.walk([&](TransposeOp) { ++n; });
    return n;
  }

  /// Whether NHWC leaves far fewer transposes than NCHW, each converted on
  /// a copy of `func`. A transpose left at the boundary (a TF graph's NHWC
  /// input) is one pass over one tensor; one left in every block (ConvNeXt
  /// permutes to channels-last around each LayerNorm, so NCHW keeps two
  /// transposes and a reorder per block) is a pass per block, more than
  /// oneDNN's blocked NCHW layouts win back on its convolutions. So NHWC
  /// only where it leaves at least 4 fewer, and at least one fewer for
  /// every two layout-sensitive ops (a network's boundary transposes never
  /// are; transposes of attention heads count on both sides alike).
  bool preferChannelsLast(func::FuncOp func) {
    int64_t left[2], converted[2] = {0, 0};
    StringRef formats[2] = {"NCHW", "NHWC"};
    for (int i = 0; i < 2; ++i) {
      func::FuncOp copy = func.clone();
      int64_t before = 0;
      LogicalResult result = convert(copy, formats[i], /*trial=*/true,
                                     converted[i], before, left[i]);
      copy.erase();
      if (failed(result))
        return false;
    }
    // Every rank-4 layout-sensitive op is converted to one of the two.
    int64_t sensitive = std::max(converted[0], converted[1]);
    int64_t saved = left[0] - left[1];
    return saved >= 4 && 2 * saved >= sensitive;
  }

  /// Phase 1 and 2 on `func` to `format`: `converted` layout-sensitive ops,
  /// transposes `before` and `after` sinking. A `trial` (on a copy, to
  /// choose the layout) leaves constant filters in their format, reports
  /// nothing and counts no statistics.
  LogicalResult convert(func::FuncOp func, StringRef format, bool trial,
                        int64_t &converted, int64_t &before, int64_t &after) {
    // Phase 1.
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      if (getLayoutSensitive(op))
        ops.push_back(op);
    });
    OpBuilder builder(&getContext());
    bool failedStrict = false;
    for (Operation *op : ops) {
      auto formatAttr = op->getAttrOfType<StringAttr>("data_format");
      StringRef current = formatAttr ? formatAttr.getValue() : "NHWC";
      if (current == format)
        continue;
      int64_t rank =
          cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
      if (rank == 2 && isa<BatchNormOp, BiasAddOp, BatchNormGradOp>(op))
        continue; // [N, C] has the same layout either way
      if (rank != 4) {
        if (!trial)
          failedStrict |= reportUnconvertible(
              op, "rank-" + std::to_string(rank) + " input");
        continue;
      }
      const LayoutSensitiveOp &layout = *getLayoutSensitive(op);
      LogicalResult result =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](Conv2DOp conv) {
                return convertConv(builder, conv, layout, format, trial);
              })
              .Case([&](Conv2DBackpropInputOp grad) {
                // input_shape is dx's shape in the layout.
                return convertOp(
                    builder, grad, layout, format, [&](Operation *clone) {
                      auto c = cast<Conv2DBackpropInputOp>(clone);
                      c.setInputShape(
                          permuteToLayout(c.getInputShape(), format));
                    });
              })
              .Default([&](Operation *other) {
                return convertOp(builder, other, layout, format);
              });
      if (failed(result)) {
        if (!trial)
          failedStrict |= reportUnconvertible(op, "its shape function failed");
        continue;
      }
      if (!trial)
        ++numConverted;
      ++converted;
    }
    if (failedStrict)
      return failure();

    // Phase 2.
    before = countTransposes(func);
    // Each transpose sinks at most once through each op; the bound turns a
    // pattern cycle into an error instead of a hang.
    int64_t numOps = 0;
    func.walk([&](Operation *) { ++numOps; });
    GreedyRewriteConfig config;
    config.maxNumRewrites = 256 * numOps + 1024;
    if (failed(applyPatternsAndFoldGreedily(func, patterns, config))) {
      if (!trial)
        func.emitError(
            "gopt-convert-layout: transpose sinking did not converge");
      return failure();
    }
    after = countTransposes(func);
    return success();
  }

  LogicalResult convertConv(OpBuilder &builder, Conv2DOp conv,
                            const LayoutSensitiveOp &layout, StringRef format,
                            bool trial) {
    // Constant filters take the target's natural format at compile time;
    // other filters keep theirs (conv2d accepts either with either layout).
    StringRef preferred = format == "NCHW" ? "OIHW" : "HWIO";
    // (A trial leaves them: the transposes it counts are the same.)
    std::optional<HostTensor> filter;
    if (!trial)
      filter = readConstant(conv.getFilter());
    return convertOp(builder, conv, layout, format, [&](Operation *op) {
      auto clone = cast<Conv2DOp>(op);
      if (!filter || clone.getFilterFormat() == preferred)
        return;
      ArrayRef<int64_t> perm =
          preferred == "OIHW" ? ArrayRef(kHwioToOihw) : ArrayRef(kOihwToHwio);
      OpBuilder b(clone);
      Value transposed = b.create<ConstantOp>(
          clone.getLoc(), writeConstant(transposeTensor(*filter, perm)));
      clone.getFilterMutable().assign(transposed);
      clone.setFilterFormat(preferred);
    });
  }

  /// A remark, or an error under strict=true (then returns true).
  bool reportUnconvertible(Operation *op, const std::string &why) {
    if (strict) {
      op->emitError() << "gopt-convert-layout: cannot convert: " << why;
      return true;
    }
    op->emitRemark() << "gopt-convert-layout: left in its layout: " << why;
    return false;
  }

  FrozenRewritePatternSet patterns;
};

} // namespace

void gopt::populateTransposeSinkingPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns
      .add<FoldTransposeOfConstantPattern, TransposeOfUnitDimsToReshapePattern,
           SinkTransposeThroughUnaryPattern, SinkTransposeThroughBinaryPattern,
           SinkTransposeThroughSoftmaxPattern<SoftmaxOp>,
           SinkTransposeThroughSoftmaxPattern<LogSoftmaxOp>,
           SinkTransposeThroughReducePattern, SinkTransposeThroughConcatPattern,
           SinkTransposeThroughPadPattern, SinkTransposeThroughSlicePattern,
           FoldTransposeIntoMatmulWeightPattern>(context);
  TransposeOp::getCanonicalizationPatterns(patterns, context);
  ReshapeOp::getCanonicalizationPatterns(patterns, context);
}
