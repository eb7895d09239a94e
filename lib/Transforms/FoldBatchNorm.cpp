//===- FoldBatchNorm.cpp - Fold inference batch norm into conv/matmul -----===//
//
// For inference, batch_norm(conv(x, w) + b) with constant parameters is
// conv(x, w * s) + ((b - mean) * s + offset), s = scale * rsqrt(var + eps):
// the batch norm disappears and its arithmetic is done once, at compile time.
// A constant per-channel (or scalar) multiply or add after a conv, such as
// PP-LCNet's learnable affine blocks, folds the same way.
//
//===----------------------------------------------------------------------===//

#include "PatternUtils.h"
#include "Report.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/ShapeInference.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include <cmath>

namespace gopt {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

/// Scales output channel `o` of a weight tensor by s[o]; `channelOf` maps a
/// linear element index to its output channel.
void scaleWeights(HostTensor &w, ArrayRef<double> s,
                  llvm::function_ref<int64_t(int64_t)> channelOf) {
  for (int64_t i = 0, n = w.numElements(); i < n; ++i)
    w.floats[i] *= s[channelOf(i)];
}

struct FoldBatchNormIntoProducerPattern : public OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    if (bn.getTraining())
      return rewriter.notifyMatchFailure(bn, "training batch norm");
    std::optional<HostTensor> scale = readConstant(bn.getScale());
    std::optional<HostTensor> offset = readConstant(bn.getOffset());
    std::optional<HostTensor> mean = readConstant(bn.getMean());
    std::optional<HostTensor> var = readConstant(bn.getVariance());
    if (!scale || !offset || !mean || !var)
      return rewriter.notifyMatchFailure(bn, "parameters are not constant");
    auto xType = cast<RankedTensorType>(bn.getX().getType());
    int64_t axis = getChannelAxis(bn.getDataFormat(), xType.getRank());
    int64_t channels = scale->numElements();

    // An optional bias between the producer and the batch norm.
    Value producer = bn.getX();
    std::optional<HostTensor> bias;
    Operation *biasOp = nullptr;
    if (auto biasAdd = producer.getDefiningOp<BiasAddOp>()) {
      if (getChannelAxis(biasAdd.getDataFormat(), xType.getRank()) != axis)
        return rewriter.notifyMatchFailure(bn, "bias on another axis");
      bias = readConstant(biasAdd.getBias());
      biasOp = biasAdd;
      producer = biasAdd.getX();
    }
    if (biasOp && (!bias || !biasOp->hasOneUse()))
      return rewriter.notifyMatchFailure(bn, "bias is not a private constant");
    if (!producer.hasOneUse())
      return rewriter.notifyMatchFailure(bn, "producer has other users");

    // s = scale * rsqrt(var + eps), in double.
    double eps = bn.getEpsilon().convertToDouble();
    SmallVector<double> s(channels), shift(channels);
    for (int64_t c = 0; c < channels; ++c) {
      s[c] = scale->floats[c] / std::sqrt(var->floats[c] + eps);
      double b = bias ? bias->floats[c] : 0.0;
      shift[c] = (b - mean->floats[c]) * s[c] + offset->floats[c];
    }
    HostTensor newBias = HostTensor::zeros({channels}, xType.getElementType());
    newBias.floats.assign(shift.begin(), shift.end());
    Location loc = bn.getLoc();

    if (auto conv = producer.getDefiningOp<Conv2DOp>()) {
      if (conv.getActivation() != "none")
        return rewriter.notifyMatchFailure(bn, "conv has an activation");
      if (getChannelAxis(conv.getDataFormat(), 4) != axis)
        return rewriter.notifyMatchFailure(bn,
                                           "conv and BN disagree on layout");
      if (conv.getBias() && biasOp)
        return rewriter.notifyMatchFailure(bn, "two biases");
      std::optional<HostTensor> w = readConstant(conv.getFilter());
      if (!w)
        return rewriter.notifyMatchFailure(bn, "filter is not constant");
      if (conv.getBias()) {
        std::optional<HostTensor> convBias = readConstant(conv.getBias());
        if (!convBias)
          return rewriter.notifyMatchFailure(bn, "conv bias is not constant");
        for (int64_t c = 0; c < channels; ++c)
          newBias.floats[c] += convBias->floats[c] * s[c];
      }
      bool hwio = conv.getFilterFormat() == "HWIO";
      int64_t perChannel = w->numElements() / channels;
      scaleWeights(*w, s, [&](int64_t i) {
        return hwio ? i % channels : i / perChannel;
      });
      Value filter = rewriter.create<ConstantOp>(loc, writeConstant(*w));
      Value biasValue =
          rewriter.create<ConstantOp>(loc, writeConstant(newBias));
      auto folded = rewriter.create<Conv2DOp>(
          loc, conv.getInput(), filter, biasValue, conv.getStridesAttr(),
          conv.getDilationsAttr(), conv.getPaddingAttr(), conv.getPadsAttr(),
          conv.getGroupsAttr(), conv.getDataFormatAttr(),
          conv.getFilterFormatAttr(), conv.getActivationAttr());
      replaceKeepingType(rewriter, bn, folded.getOutput());
      return success();
    }

    if (auto matmul = producer.getDefiningOp<MatMulOp>()) {
      if (xType.getRank() != 2 || axis != 1)
        return rewriter.notifyMatchFailure(bn, "matmul result is not [N, C]");
      std::optional<HostTensor> w = readConstant(matmul.getB());
      if (!w || w->shape.size() != 2)
        return rewriter.notifyMatchFailure(bn,
                                           "weights are not a 2-D constant");
      bool rows = matmul.getTransposeB(); // [Cout, K] instead of [K, Cout]
      int64_t k = w->numElements() / channels;
      scaleWeights(*w, s,
                   [&](int64_t i) { return rows ? i / k : i % channels; });
      Value weights = rewriter.create<ConstantOp>(loc, writeConstant(*w));
      Value biasValue =
          rewriter.create<ConstantOp>(loc, writeConstant(newBias));
      auto scaled = rewriter.create<MatMulOp>(loc, matmul.getA(), weights,
                                              matmul.getTransposeAAttr(),
                                              matmul.getTransposeBAttr());
      auto added = rewriter.create<BiasAddOp>(loc, scaled.getY(), biasValue,
                                              StringRef("NHWC"));
      replaceKeepingType(rewriter, bn, added.getY());
      return success();
    }
    return rewriter.notifyMatchFailure(bn, "not after a conv2d or matmul");
  }
};

/// The per-output-channel values of a constant `operand` of a binary op
/// on a conv's [N, C, H, W] or [N, H, W, C] result: a scalar, or a tensor
/// that varies only along the channel axis. Empty when it is neither.
std::optional<SmallVector<double>>
perChannelValues(Value operand, int64_t channelAxis, int64_t channels) {
  std::optional<HostTensor> t = readConstant(operand);
  if (!t || !t->isFloat() || t->shape.size() > 4)
    return std::nullopt;
  if (t->numElements() == 1)
    return SmallVector<double>(channels, t->floats[0]);
  // Aligned from the last dimension, as broadcasting aligns it.
  int64_t offset = 4 - static_cast<int64_t>(t->shape.size());
  for (int64_t d = 0; d < static_cast<int64_t>(t->shape.size()); ++d) {
    int64_t size = t->shape[d];
    if (size != 1 && !(d + offset == channelAxis && size == channels))
      return std::nullopt;
  }
  if (t->numElements() != channels)
    return std::nullopt;
  return SmallVector<double>(t->floats.begin(), t->floats.end());
}

/// conv2d(x, w, b) * s -> conv2d(x, w * s, b * s) and conv2d(x, w, b) + t ->
/// conv2d(x, w, b + t), for constant s and t that are scalars or vary only
/// along the output channels: one kernel instead of two or three, with the
/// arithmetic done once, at compile time.
template <typename AffineOp>
struct FoldAffineIntoConvPattern : public OpRewritePattern<AffineOp> {
  using OpRewritePattern<AffineOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(AffineOp op,
                                PatternRewriter &rewriter) const override {
    constexpr bool kScales = std::is_same_v<AffineOp, MulOp>;
    for (auto [lhs, rhs] : {std::pair{op.getLhs(), op.getRhs()},
                            std::pair{op.getRhs(), op.getLhs()}}) {
      auto conv = lhs.template getDefiningOp<Conv2DOp>();
      if (!conv || !conv->hasOneUse() || conv.getActivation() != "none" ||
          conv.getType() != op.getType())
        continue;
      auto type = cast<RankedTensorType>(conv.getType());
      int64_t axis = getChannelAxis(conv.getDataFormat(), 4);
      int64_t channels = type.getDimSize(axis);
      if (ShapedType::isDynamic(channels))
        continue;
      std::optional<SmallVector<double>> values =
          perChannelValues(rhs, axis, channels);
      std::optional<HostTensor> w = readConstant(conv.getFilter());
      if (!values || !w || !w->isFloat())
        continue;
      HostTensor bias = HostTensor::zeros({channels}, type.getElementType());
      bias.floats.assign(channels, 0.0);
      if (conv.getBias()) {
        std::optional<HostTensor> b = readConstant(conv.getBias());
        if (!b || b->numElements() != channels)
          continue;
        bias.floats.assign(b->floats.begin(), b->floats.end());
      }
      for (int64_t c = 0; c < channels; ++c)
        bias.floats[c] = kScales ? bias.floats[c] * (*values)[c]
                                 : bias.floats[c] + (*values)[c];
      Location loc = op.getLoc();
      Value filter = conv.getFilter();
      if (kScales) {
        bool hwio = conv.getFilterFormat() == "HWIO";
        int64_t perChannel = w->numElements() / channels;
        scaleWeights(*w, *values, [&](int64_t i) {
          return hwio ? i % channels : i / perChannel;
        });
        filter = rewriter.create<ConstantOp>(loc, writeConstant(*w));
      }
      Value biasValue = rewriter.create<ConstantOp>(loc, writeConstant(bias));
      auto folded = rewriter.create<Conv2DOp>(
          loc, conv.getInput(), filter, biasValue, conv.getStridesAttr(),
          conv.getDilationsAttr(), conv.getPaddingAttr(), conv.getPadsAttr(),
          conv.getGroupsAttr(), conv.getDataFormatAttr(),
          conv.getFilterFormatAttr(), conv.getActivationAttr());
      replaceKeepingType(rewriter, op, folded.getOutput());
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a constant affine of a conv");
  }
};

/// matmul(x, w) [+ b] * s -> matmul(x, w * s) [+ b * s] for a constant 2-D
/// w, a constant bias b and a constant s that vary only along the result's
/// last dimension (or are scalars): ConvNeXt's layer scale after its second
/// Linear. The multiply's pass over the result disappears and the residual
/// add after it becomes the CPU matmul's sum post-op.
struct FoldScaleIntoMatmulPattern : public OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The values of constant `v` along the last of `rank` dims of size `n`
  /// (a scalar, or 1 in every other dim), else empty.
  static std::optional<SmallVector<double>> lastDimValues(Value v, int64_t rank,
                                                          int64_t n) {
    std::optional<HostTensor> t = readConstant(v);
    if (!t || !t->isFloat() || static_cast<int64_t>(t->shape.size()) > rank)
      return std::nullopt;
    if (t->numElements() == 1)
      return SmallVector<double>(n, t->floats[0]);
    for (size_t d = 0; d < t->shape.size(); ++d)
      if (t->shape[d] != (d + 1 == t->shape.size() ? n : 1))
        return std::nullopt;
    return SmallVector<double>(t->floats.begin(), t->floats.end());
  }

  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || type.getRank() < 1 || !type.getElementType().isF32() ||
        ShapedType::isDynamic(type.getShape().back()))
      return rewriter.notifyMatchFailure(op, "not an f32 result of known N");
    int64_t rank = type.getRank(), n = type.getShape().back();
    for (auto [lhs, rhs] : {std::pair{op.getLhs(), op.getRhs()},
                            std::pair{op.getRhs(), op.getLhs()}}) {
      if (lhs.getType() != op.getType() || !lhs.hasOneUse())
        continue;
      std::optional<SmallVector<double>> s = lastDimValues(rhs, rank, n);
      if (!s)
        continue;
      // An optional bias add between the matmul and the multiply.
      AddOp add = lhs.getDefiningOp<AddOp>();
      Value product = lhs, biasValue;
      if (add) {
        for (auto [a, b] : {std::pair{add.getLhs(), add.getRhs()},
                            std::pair{add.getRhs(), add.getLhs()}})
          if (a.getDefiningOp<MatMulOp>() && a.getType() == op.getType() &&
              lastDimValues(b, rank, n)) {
            product = a;
            biasValue = b;
          }
        if (!biasValue)
          continue;
      }
      auto matmul = product.getDefiningOp<MatMulOp>();
      if (!matmul || !product.hasOneUse())
        continue;
      std::optional<HostTensor> w = readConstant(matmul.getB());
      if (!w || !w->isFloat() || w->shape.size() != 2)
        continue;
      bool rows = matmul.getTransposeB(); // [N, K] instead of [K, N]
      if ((rows ? w->shape[0] : w->shape[1]) != n)
        continue;
      int64_t k = w->numElements() / n;
      scaleWeights(*w, *s, [&](int64_t i) { return rows ? i / k : i % n; });
      // The new ops keep the matmul's and the add's names (profiles).
      Location loc = matmul.getLoc();
      Value weights = rewriter.create<ConstantOp>(loc, writeConstant(*w));
      Value result = rewriter
                         .create<MatMulOp>(loc, matmul.getA(), weights,
                                           matmul.getTransposeAAttr(),
                                           matmul.getTransposeBAttr())
                         .getY();
      if (biasValue) {
        std::optional<HostTensor> b = readConstant(biasValue);
        SmallVector<double> values = *lastDimValues(biasValue, rank, n);
        HostTensor scaled = HostTensor::zeros({n}, b->elementType);
        scaled.floats.assign(n, 0.0);
        for (int64_t c = 0; c < n; ++c)
          scaled.floats[c] = values[c] * (*s)[c];
        Value bias = rewriter.create<ConstantOp>(loc, writeConstant(scaled));
        result = rewriter.create<AddOp>(add.getLoc(), result, bias).getZ();
      }
      replaceKeepingType(rewriter, op, result);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a constant scale of a matmul");
  }
};

struct FoldBatchNormPass
    : public gopt::impl::FoldBatchNormBase<FoldBatchNormPass> {
  using FoldBatchNormBase::FoldBatchNormBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFoldBatchNormPatterns(patterns, foldMatmulScale);
    auto count = [&] {
      int64_t n = 0;
      getOperation().walk([&](BatchNormOp) { ++n; });
      return n;
    };
    // Only the affine pattern removes multiplies and adds.
    auto countAffine = [&] {
      int64_t n = 0;
      getOperation().walk([&](Operation *op) { n += isa<MulOp, AddOp>(op); });
      return n;
    };
    int64_t before = count(), affineBefore = countAffine();
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns)))) {
      getOperation().emitError("gopt-fold-batch-norm did not converge");
      return signalPassFailure();
    }
    int64_t after = count();
    int64_t affineFolded = std::max<int64_t>(affineBefore - countAffine(), 0);
    numFolded += before - after;
    numAffineFolded += affineFolded;
    reportChanges(getOperation(), report, getArgument(),
                  "folded " + plural(before - after, "batch norm") +
                      " into conv2d/matmul weights, " + std::to_string(after) +
                      " remain; folded " + std::to_string(affineFolded) +
                      " constant multiplies and adds into conv2d and matmul");
  }
};

} // namespace

void gopt::populateFoldBatchNormPatterns(RewritePatternSet &patterns,
                                         bool foldMatmulScale) {
  patterns
      .add<FoldBatchNormIntoProducerPattern, FoldAffineIntoConvPattern<MulOp>,
           FoldAffineIntoConvPattern<AddOp>>(patterns.getContext());
  if (foldMatmulScale)
    patterns.add<FoldScaleIntoMatmulPattern>(patterns.getContext());
}
