//===- FuseBatchNorm.cpp - Recognise decomposed batch normalization -------===//
//
// Batch norm written out in primitives, as TF 1.x's unfused path
// (tf.nn.moments + tf.nn.batch_normalization) and ONNX/PyTorch exporters
// write it, becomes one gopt.batch_norm that the backends run as one kernel
// (cuDNN's fused BN, or a conv weight fold for inference).
//
//===----------------------------------------------------------------------===//

#include "PatternUtils.h"
#include "Report.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace gopt {
#define GEN_PASS_DEF_FUSEBATCHNORM
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

/// Walks operand chains, recording the ops it steps over (they must be
/// private to the pattern) and looking through identity/stop_gradient.
struct Matcher {
  SmallVector<Operation *> ops;

  Value skip(Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<IdentityOp, StopGradientOp>(def))
        break;
      ops.push_back(def);
      v = def->getOperand(0);
    }
    return v;
  }
  template <typename OpTy> OpTy get(Value v) {
    auto op = skip(v).getDefiningOp<OpTy>();
    if (op)
      ops.push_back(op);
    return op;
  }
  size_t mark() const { return ops.size(); }
  void reset(size_t m) { ops.truncate(m); }
};

/// What a matched batch norm computes. Null gamma/beta/mean/var stand for
/// ones/zeros/zeros/ones.
struct BatchNormParts {
  Value x, gamma, beta, mean, var;
  double epsilon = 0.0;
  bool training = false;
  int64_t axis = -1; // channel axis, from the reduction axes when training
};

/// rsqrt(var + eps), eps a scalar constant.
bool matchRsqrtOfVarPlusEps(Matcher &m, Value v, Value &var, double &eps) {
  size_t mark = m.mark();
  auto rsqrt = m.get<RsqrtOp>(v);
  auto add = rsqrt ? m.get<AddOp>(rsqrt.getX()) : AddOp();
  if (add) {
    for (auto [a, b] : {std::pair(add.getLhs(), add.getRhs()),
                        std::pair(add.getRhs(), add.getLhs())}) {
      if (std::optional<double> e = getScalarConstant(b)) {
        var = m.skip(a);
        eps = *e;
        return true;
      }
    }
  }
  m.reset(mark);
  return false;
}

/// sqrt(var + eps), for the division form.
bool matchSqrtOfVarPlusEps(Matcher &m, Value v, Value &var, double &eps) {
  size_t mark = m.mark();
  auto sqrt = m.get<SqrtOp>(v);
  auto add = sqrt ? m.get<AddOp>(sqrt.getX()) : AddOp();
  if (add) {
    for (auto [a, b] : {std::pair(add.getLhs(), add.getRhs()),
                        std::pair(add.getRhs(), add.getLhs())}) {
      if (std::optional<double> e = getScalarConstant(b)) {
        var = m.skip(a);
        eps = *e;
        return true;
      }
    }
  }
  m.reset(mark);
  return false;
}

/// rsqrt(var + eps) * gamma, or rsqrt(var + eps) alone.
bool matchInvStd(Matcher &m, Value v, BatchNormParts &p) {
  size_t mark = m.mark();
  if (auto mul = m.get<MulOp>(v)) {
    for (auto [a, b] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())}) {
      if (matchRsqrtOfVarPlusEps(m, a, p.var, p.epsilon)) {
        p.gamma = m.skip(b);
        return true;
      }
    }
  }
  m.reset(mark);
  return matchRsqrtOfVarPlusEps(m, v, p.var, p.epsilon);
}

/// TF's tf.nn.batch_normalization: x * inv + (beta - mean * inv).
bool matchTensorFlowForm(Matcher &m, AddOp root, BatchNormParts &p) {
  for (auto [lhs, rhs] : {std::pair(root.getLhs(), root.getRhs()),
                          std::pair(root.getRhs(), root.getLhs())}) {
    size_t mark = m.mark();
    auto mulX = m.get<MulOp>(lhs);
    auto sub = mulX ? m.get<SubOp>(rhs) : SubOp();
    auto mulMean = sub ? m.get<MulOp>(sub.getRhs()) : MulOp();
    if (mulMean) {
      for (auto [x, inv] : {std::pair(mulX.getLhs(), mulX.getRhs()),
                            std::pair(mulX.getRhs(), mulX.getLhs())}) {
        // The same inverse std scales x and the mean.
        Value mean;
        if (mulMean.getLhs() == inv)
          mean = mulMean.getRhs();
        else if (mulMean.getRhs() == inv)
          mean = mulMean.getLhs();
        else
          continue;
        size_t innerMark = m.mark();
        if (!matchInvStd(m, inv, p)) {
          m.reset(innerMark);
          continue;
        }
        p.x = m.skip(x);
        p.mean = m.skip(mean);
        p.beta = m.skip(sub.getLhs());
        return true;
      }
    }
    m.reset(mark);
  }
  return false;
}

/// The normalized and scaled part of the exporters' form:
///   (x - mean) * (gamma * rsqrt(var + eps))   (ONNX, PyTorch fx)
///   (x - mean) * rsqrt(var + eps) * gamma
///   (x - mean) / sqrt(var + eps) [* gamma]
///   (x - mean) * s                            (s per channel: frozen graphs)
bool matchCenteredScaled(Matcher &m, Value v, BatchNormParts &p) {
  size_t mark = m.mark();
  auto centered = [&](Value c) {
    if (auto sub = m.get<SubOp>(c)) {
      p.x = m.skip(sub.getLhs());
      p.mean = m.skip(sub.getRhs());
      return true;
    }
    return false;
  };
  auto divForm = [&](Value d) {
    size_t dm = m.mark();
    if (auto div = m.get<DivOp>(d))
      if (matchSqrtOfVarPlusEps(m, div.getRhs(), p.var, p.epsilon) &&
          centered(div.getLhs()))
        return true;
    m.reset(dm);
    return false;
  };
  if (divForm(v))
    return true;
  if (auto mul = m.get<MulOp>(v)) {
    for (auto [a, b] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())}) {
      size_t inner = m.mark();
      // (x - mean) * S
      if (centered(a)) {
        if (matchInvStd(m, b, p))
          return true;
        p.gamma = m.skip(b); // a per-channel scale; var 1, eps 0
        p.var = Value();
        p.epsilon = 0.0;
        return true;
      }
      m.reset(inner);
      // ((x - mean) * rsqrt(var + eps)) * gamma, or the division form.
      if (divForm(a)) {
        p.gamma = m.skip(b);
        return true;
      }
      if (auto mul2 = m.get<MulOp>(a)) {
        for (auto [c, r] : {std::pair(mul2.getLhs(), mul2.getRhs()),
                            std::pair(mul2.getRhs(), mul2.getLhs())}) {
          size_t in2 = m.mark();
          if (matchRsqrtOfVarPlusEps(m, r, p.var, p.epsilon) && centered(c)) {
            p.gamma = m.skip(b);
            return true;
          }
          m.reset(in2);
        }
      }
      m.reset(inner);
    }
  }
  m.reset(mark);
  return false;
}

/// (normalized) + beta, or x * s + b with per-channel constants s and b.
bool matchExporterForm(Matcher &m, AddOp root, BatchNormParts &p) {
  for (auto [lhs, rhs] : {std::pair(root.getLhs(), root.getRhs()),
                          std::pair(root.getRhs(), root.getLhs())}) {
    size_t mark = m.mark();
    BatchNormParts q;
    if (matchCenteredScaled(m, lhs, q)) {
      q.beta = m.skip(rhs);
      p = q;
      return true;
    }
    m.reset(mark);
  }
  // x * s + b: what a frozen graph's batch norm is after constant folding.
  for (auto [lhs, rhs] : {std::pair(root.getLhs(), root.getRhs()),
                          std::pair(root.getRhs(), root.getLhs())}) {
    size_t mark = m.mark();
    if (!readConstant(rhs)) {
      continue;
    }
    if (auto mul = m.get<MulOp>(lhs)) {
      for (auto [x, s] : {std::pair(mul.getLhs(), mul.getRhs()),
                          std::pair(mul.getRhs(), mul.getLhs())}) {
        if (!readConstant(s) || readConstant(x))
          continue;
        p.x = m.skip(x);
        p.gamma = s;
        p.beta = rhs;
        return true;
      }
    }
    m.reset(mark);
  }
  return false;
}

/// reduce_mean(x) and reduce_mean(squared_difference(x, mean)) over the same
/// axes: the batch statistics of the training form.
LogicalResult matchBatchMoments(Matcher &m, BatchNormParts &p,
                                SmallVectorImpl<int64_t> &axes) {
  auto meanOp = m.get<ReduceMeanOp>(p.mean);
  auto varOp = meanOp ? m.get<ReduceMeanOp>(p.var) : ReduceMeanOp();
  if (!varOp || m.skip(meanOp.getX()) != p.x)
    return failure();
  auto sq = m.get<SquaredDifferenceOp>(varOp.getX());
  if (!sq)
    return failure();
  Value a = m.skip(sq.getLhs()), b = m.skip(sq.getRhs());
  if (!((a == p.x && b == p.mean) || (b == p.x && a == p.mean)))
    return failure();
  if (meanOp.getAxes() != varOp.getAxes() ||
      meanOp.getKeepDims() != varOp.getKeepDims())
    return failure();
  int64_t rank = cast<RankedTensorType>(p.x.getType()).getRank();
  for (int64_t axis : meanOp.getAxes())
    axes.push_back(axis < 0 ? axis + rank : axis);
  llvm::sort(axes);
  return success();
}

/// Statistics computed from x itself mean a training-form batch norm; with
/// other axes or a different variance formula it is something else.
bool isStatisticOf(Value value, Value x) {
  if (!value)
    return false;
  auto reduce = value.getDefiningOp<ReduceMeanOp>();
  if (!reduce)
    return false;
  if (reduce.getX() == x)
    return true;
  if (auto sq = reduce.getX().getDefiningOp<SquaredDifferenceOp>())
    return sq.getLhs() == x || sq.getRhs() == x;
  return false;
}

struct FuseDecomposedBatchNormPattern : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp root,
                                PatternRewriter &rewriter) const override {
    Matcher m;
    BatchNormParts p;
    if (!matchTensorFlowForm(m, root, p)) {
      m.reset(0);
      if (!matchExporterForm(m, root, p))
        return rewriter.notifyMatchFailure(root, "not a batch-norm formula");
    }

    auto xType = dyn_cast<RankedTensorType>(p.x.getType());
    if (!xType || !isa<FloatType>(xType.getElementType()))
      return rewriter.notifyMatchFailure(root, "x is not a float tensor");
    if (xType.getShape() != root.getType().getShape())
      return rewriter.notifyMatchFailure(root, "the formula broadcasts x");
    int64_t rank = xType.getRank();
    SmallVector<int64_t> candidates;
    if (rank == 4)
      candidates = {3, 1};
    else if (rank == 2)
      candidates = {1};
    else
      return rewriter.notifyMatchFailure(root, "x is not of rank 2 or 4");

    SmallVector<int64_t> axes;
    if (p.mean && p.var && succeeded(matchBatchMoments(m, p, axes))) {
      p.training = true;
      // The reduction axes are all axes but the channel.
      candidates.clear();
      for (int64_t c = 0; c < rank; ++c) {
        SmallVector<int64_t> expected;
        for (int64_t d = 0; d < rank; ++d)
          if (d != c)
            expected.push_back(d);
        if (expected == axes && (rank == 2 || c == 1 || c == 3))
          candidates.push_back(c);
      }
      if (candidates.empty())
        return rewriter.notifyMatchFailure(
            root, "moments reduce over axes other than N and the spatial ones");
    } else if (isStatisticOf(p.mean, p.x) || isStatisticOf(p.var, p.x)) {
      return rewriter.notifyMatchFailure(
          root, "statistics of x that are not the batch moments");
    }

    // Pick the channel axis on which every parameter is per-channel.
    Value params[] = {p.gamma, p.beta, p.training ? Value() : p.mean,
                      p.training ? Value() : p.var};
    std::optional<int64_t> axis;
    for (int64_t c : candidates) {
      int64_t channels = xType.getDimSize(c);
      if (ShapedType::isDynamic(channels))
        continue;
      bool ok = llvm::all_of(params, [&](Value v) {
        if (!v)
          return true;
        auto t = cast<RankedTensorType>(v.getType());
        return t.getElementType() == xType.getElementType() &&
               isPerChannelShape(t.getShape(), rank, c, channels);
      });
      if (ok) {
        axis = c;
        break;
      }
    }
    if (!axis)
      return rewriter.notifyMatchFailure(root,
                                         "parameters are not per-channel");

    if (!onlyUsedWithin(m.ops, root))
      return rewriter.notifyMatchFailure(
          root, "an intermediate value is used outside the pattern");

    int64_t channels = xType.getDimSize(*axis);
    Location loc = root.getLoc();
    Type elementType = xType.getElementType();
    auto channelValue = [&](Value v, double fill) {
      return v ? toChannelVector(rewriter, loc, v, channels)
               : createFilledVector(rewriter, loc, elementType, channels, fill);
    };
    Value gamma = channelValue(p.gamma, 1.0);
    Value beta = channelValue(p.beta, 0.0);
    // The training form's running statistics are not in the decomposed
    // graph; they only feed results 3 and 4, which stay unused.
    Value mean = channelValue(p.training ? Value() : p.mean, 0.0);
    Value var = channelValue(p.training ? Value() : p.var, 1.0);
    StringRef format = *axis == 1 && rank == 4 ? "NCHW" : "NHWC";
    auto bn =
        rewriter.create<BatchNormOp>(loc, p.x, gamma, beta, mean, var,
                                     APFloat(static_cast<float>(p.epsilon)),
                                     format, p.training, APFloat(0.9f),
                                     /*cross_replica=*/false);
    replaceKeepingType(rewriter, root, bn.getY());
    return success();
  }
};

struct FuseBatchNormPass
    : public gopt::impl::FuseBatchNormBase<FuseBatchNormPass> {
  using FuseBatchNormBase::FuseBatchNormBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseBatchNormPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    auto [trainingBefore, inferenceBefore] = countBatchNorms();
    if (failed(applyPatternsAndFoldGreedily(getOperation(), frozen))) {
      getOperation().emitError("gopt-fuse-batch-norm did not converge");
      return signalPassFailure();
    }
    auto [trainingAfter, inferenceAfter] = countBatchNorms();
    int64_t training = trainingAfter - trainingBefore;
    int64_t inference = inferenceAfter - inferenceBefore;
    numFused += training + inference;
    reportChanges(getOperation(), report, getArgument(),
                  "fused " + plural(training + inference, "batch norm") + " (" +
                      std::to_string(training) + " training, " +
                      std::to_string(inference) + " inference)");
  }

  /// Training and inference batch_norm ops in the function.
  std::pair<int64_t, int64_t> countBatchNorms() {
    int64_t training = 0, inference = 0;
    getOperation().walk(
        [&](BatchNormOp bn) { ++(bn.getTraining() ? training : inference); });
    return {training, inference};
  }
};

} // namespace

void gopt::populateFuseBatchNormPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseDecomposedBatchNormPattern>(patterns.getContext());
}
