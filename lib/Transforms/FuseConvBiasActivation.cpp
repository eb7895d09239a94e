//===- FuseConvBiasActivation.cpp - One conv2d for conv + bias + act ------===//
//
// conv2d, then a per-channel bias, then relu/relu6/sigmoid, is one cuDNN
// (cudnnConvolutionBiasActivationForward) or oneDNN (post-op) kernel. The
// conv2d op carries the bias operand and the activation attribute for it.
// Also: an average pool of a 1x1 convolution's result (DenseNet's
// transitions) pools the convolution's input instead, the convolution then
// running on a quarter of the pixels (both are linear per pixel, the pool's
// weights sum to 1, so the bias passes through); the pass option
// pool-before-conv=false turns it off.
//
//===----------------------------------------------------------------------===//

#include "PatternUtils.h"
#include "Report.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/ShapeInference.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace gopt {
#define GEN_PASS_DEF_FUSECONVBIASACTIVATION
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

/// The same conv with another bias and activation.
Conv2DOp cloneConv(PatternRewriter &rewriter, Conv2DOp conv, Value bias,
                   StringRef activation) {
  return rewriter.create<Conv2DOp>(
      conv.getLoc(), conv.getInput(), conv.getFilter(), bias,
      conv.getStridesAttr(), conv.getDilationsAttr(), conv.getPaddingAttr(),
      conv.getPadsAttr(), conv.getGroupsAttr(), conv.getDataFormatAttr(),
      conv.getFilterFormatAttr(), rewriter.getStringAttr(activation));
}

/// conv2d (no activation yet) with one user.
Conv2DOp getFusableConv(Value value) {
  auto conv = value.getDefiningOp<Conv2DOp>();
  if (!conv || conv.getActivation() != "none" || !conv->hasOneUse())
    return Conv2DOp();
  return conv;
}

/// Adds `extra` (a [C] constant) to the conv's bias: a new bias constant, or
/// a gopt.add when the conv's bias is not constant.
Value combineBias(PatternRewriter &rewriter, Location loc, Conv2DOp conv,
                  Value extra) {
  if (!conv.getBias())
    return extra;
  std::optional<HostTensor> a = readConstant(conv.getBias());
  std::optional<HostTensor> b = readConstant(extra);
  if (a && b) {
    for (int64_t i = 0, n = a->numElements(); i < n; ++i)
      a->floats[i] += b->floats[i];
    return rewriter.create<ConstantOp>(loc, writeConstant(*a));
  }
  return rewriter.create<AddOp>(loc, conv.getBias(), extra);
}

/// bias_add(conv, b) -> conv(..., bias = b).
struct FuseBiasAddIntoConvPattern : public OpRewritePattern<BiasAddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BiasAddOp op,
                                PatternRewriter &rewriter) const override {
    Conv2DOp conv = getFusableConv(op.getX());
    if (!conv)
      return rewriter.notifyMatchFailure(op, "not after a private conv2d");
    if (op.getDataFormat() != conv.getDataFormat())
      return rewriter.notifyMatchFailure(op, "bias on another layout");
    Value bias = combineBias(rewriter, op.getLoc(), conv, op.getBias());
    replaceKeepingType(rewriter, op,
                       cloneConv(rewriter, conv, bias, "none").getOutput());
    return success();
  }
};

/// add(conv, per-channel constant) -> conv(..., bias).
struct FuseAddConstantIntoConvPattern : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    for (auto [lhs, rhs] : {std::pair(op.getLhs(), op.getRhs()),
                            std::pair(op.getRhs(), op.getLhs())}) {
      Conv2DOp conv = getFusableConv(lhs);
      if (!conv || !readConstant(rhs))
        continue;
      auto type = cast<RankedTensorType>(conv.getType());
      int64_t axis = getChannelAxis(conv.getDataFormat(), 4);
      int64_t channels = type.getDimSize(axis);
      auto rhsType = cast<RankedTensorType>(rhs.getType());
      if (ShapedType::isDynamic(channels) ||
          !isPerChannelShape(rhsType.getShape(), 4, axis, channels) ||
          op.getType().getShape() != type.getShape())
        continue;
      Value extra = toChannelVector(rewriter, op.getLoc(), rhs, channels);
      Value bias = combineBias(rewriter, op.getLoc(), conv, extra);
      replaceKeepingType(rewriter, op,
                         cloneConv(rewriter, conv, bias, "none").getOutput());
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not conv2d + per-channel constant");
  }
};

/// act(conv) -> conv(..., activation = act). clip to [0, 6] is relu6.
template <typename ActOp>
struct FuseActivationIntoConvPattern : public OpRewritePattern<ActOp> {
  FuseActivationIntoConvPattern(MLIRContext *context, StringRef name)
      : OpRewritePattern<ActOp>(context), name(name) {}

  LogicalResult matchAndRewrite(ActOp op,
                                PatternRewriter &rewriter) const override {
    StringRef activation = name;
    if constexpr (std::is_same_v<ActOp, ClipOp>) {
      if (op.getMin().convertToDouble() != 0.0 ||
          op.getMax().convertToDouble() != 6.0)
        return rewriter.notifyMatchFailure(op, "clip is not relu6");
    }
    Conv2DOp conv = getFusableConv(op.getX());
    if (!conv)
      return rewriter.notifyMatchFailure(op, "not after a private conv2d");
    replaceKeepingType(
        rewriter, op,
        cloneConv(rewriter, conv, conv.getBias(), activation).getOutput());
    return success();
  }

  std::string name;
};

/// avg_pool(conv1x1(x)) -> conv1x1(avg_pool(x)) where that does fewer
/// operations: a 1x1, stride-1, unpadded conv without activation commutes with
/// an unpadded average pool (a per-channel linear map whose weights sum to
/// 1). DenseNet-121's transitions: 4x fewer convolution FLOPs for a pool over
/// twice the channels.
struct PoolBeforeConv1x1Pattern : public OpRewritePattern<AvgPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPoolOp pool,
                                PatternRewriter &rewriter) const override {
    auto conv = pool.getX().getDefiningOp<Conv2DOp>();
    if (!conv || conv.getActivation() != "none" || !conv->hasOneUse())
      return rewriter.notifyMatchFailure(pool, "not after a private conv2d");
    if (conv.getDataFormat() != pool.getDataFormat())
      return rewriter.notifyMatchFailure(pool, "conv on another layout");
    auto allEqual = [](ArrayRef<int64_t> v, int64_t x) {
      return llvm::all_of(v, [&](int64_t e) { return e == x; });
    };
    auto unpadded = [&](StringRef padding, ArrayRef<int64_t> pads) {
      return padding == "VALID" || (padding == "EXPLICIT" && allEqual(pads, 0));
    };
    auto filterType = dyn_cast<RankedTensorType>(conv.getFilter().getType());
    auto xType = dyn_cast<RankedTensorType>(conv.getInput().getType());
    auto yType = dyn_cast<RankedTensorType>(conv.getType());
    auto pType = dyn_cast<RankedTensorType>(pool.getType());
    if (!filterType || !xType || !yType || !pType || xType.getRank() != 4 ||
        !filterType.hasStaticShape())
      return rewriter.notifyMatchFailure(pool, "unranked or dynamic filter");
    bool hwio = conv.getFilterFormat() == "HWIO";
    ArrayRef<int64_t> f = filterType.getShape();
    if ((hwio ? f[0] != 1 || f[1] != 1 : f[2] != 1 || f[3] != 1) ||
        conv.getGroups() != 1 || !allEqual(conv.getStridesOrDefault(), 1) ||
        !allEqual(conv.getDilationsOrDefault(), 1) ||
        !unpadded(conv.getPadding(), conv.getPadsOrDefault()))
      return rewriter.notifyMatchFailure(pool, "not a plain 1x1 conv2d");
    if (!unpadded(pool.getPadding(), pool.getPadsOrDefault()) ||
        pool.getCeilMode())
      return rewriter.notifyMatchFailure(pool, "padded or ceil-mode pool");
    // Operations per image, pool (one add per window element) and conv
    // (2 per multiply-add), in each order.
    int64_t axis = getChannelAxis(conv.getDataFormat(), 4);
    int64_t cin = xType.getDimSize(axis), cout = yType.getDimSize(axis);
    int64_t inPixels = 1, outPixels = 1;
    for (int64_t d = 0; d < 4; ++d)
      if (d != 0 && d != axis) {
        inPixels *= yType.getDimSize(d);
        outPixels *= pType.getDimSize(d);
      }
    int64_t window = 1;
    for (int64_t k : pool.getKernel())
      window *= k;
    if (ShapedType::isDynamic(cin) || ShapedType::isDynamic(cout) ||
        inPixels <= 0 || outPixels <= 0)
      return rewriter.notifyMatchFailure(pool, "dynamic channels or pixels");
    int64_t before = 2 * cin * cout * inPixels + window * cout * outPixels;
    int64_t after = window * cin * outPixels + 2 * cin * cout * outPixels;
    if (after >= before)
      return rewriter.notifyMatchFailure(pool, "no fewer operations");
    auto pooled = rewriter.create<AvgPoolOp>(
        pool.getLoc(), conv.getInput(), pool.getKernelAttr(),
        pool.getStridesAttr(), pool.getPaddingAttr(), pool.getPadsAttr(),
        pool.getDataFormatAttr(), pool.getCeilModeAttr(),
        pool.getCountIncludePadAttr());
    auto moved = rewriter.create<Conv2DOp>(
        conv.getLoc(), pooled.getY(), conv.getFilter(), conv.getBias(),
        conv.getStridesAttr(), conv.getDilationsAttr(), conv.getPaddingAttr(),
        conv.getPadsAttr(), conv.getGroupsAttr(), conv.getDataFormatAttr(),
        conv.getFilterFormatAttr(), conv.getActivationAttr());
    replaceKeepingType(rewriter, pool, moved.getOutput());
    return success();
  }
};

struct FuseConvBiasActivationPass
    : public gopt::impl::FuseConvBiasActivationBase<
          FuseConvBiasActivationPass> {
  using FuseConvBiasActivationBase::FuseConvBiasActivationBase;

  void runOnOperation() override {
    auto count = [&](int64_t &biases, int64_t &acts) {
      biases = acts = 0;
      getOperation().walk([&](Conv2DOp conv) {
        biases += conv.getBias() ? 1 : 0;
        acts += conv.getActivation() != "none" ? 1 : 0;
      });
    };
    int64_t biasesBefore, actsBefore, biasesAfter, actsAfter;
    count(biasesBefore, actsBefore);
    RewritePatternSet patterns(&getContext());
    populateFuseConvBiasActivationPatterns(patterns, poolBeforeConv);
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns)))) {
      getOperation().emitError(
          "gopt-fuse-conv-bias-activation did not converge");
      return signalPassFailure();
    }
    count(biasesAfter, actsAfter);
    numBiasFused += biasesAfter - biasesBefore;
    numActivationFused += actsAfter - actsBefore;
    int64_t convs = 0;
    getOperation().walk([&](Conv2DOp) { ++convs; });
    reportChanges(
        getOperation(), report, getArgument(),
        "fused " + plural(biasesAfter - biasesBefore, "bias", "biases") +
            " and " + plural(actsAfter - actsBefore, "activation") +
            " into conv2d (" + plural(convs, "conv2d", "conv2d") + " in all)");
  }
};

} // namespace

void gopt::populateFuseConvBiasActivationPatterns(RewritePatternSet &patterns,
                                                  bool poolBeforeConv) {
  MLIRContext *context = patterns.getContext();
  patterns.add<FuseBiasAddIntoConvPattern, FuseAddConstantIntoConvPattern>(
      context);
  patterns.add<FuseActivationIntoConvPattern<ReluOp>>(context, "relu");
  patterns.add<FuseActivationIntoConvPattern<Relu6Op>>(context, "relu6");
  patterns.add<FuseActivationIntoConvPattern<ClipOp>>(context, "relu6");
  patterns.add<FuseActivationIntoConvPattern<SigmoidOp>>(context, "sigmoid");
  if (poolBeforeConv)
    patterns.add<PoolBeforeConv1x1Pattern>(context);
}
