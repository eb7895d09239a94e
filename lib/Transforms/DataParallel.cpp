//===- DataParallel.cpp - All-reduce the gradients in buckets -------------===//
//
// Data-parallel training: every replica runs the same step on its slice of
// the batch, and the gradients are averaged across replicas before the
// optimizer, so every replica applies the same update. Gradients go in
// buckets (PyTorch DDP's): few collective calls for many small tensors, and
// each bucket placed where its last gradient exists, so that the runtime
// may communicate it while backward goes on. With sync-batch-norm, training
// batch norms are marked cross_replica (their statistics all-reduced by the
// runtime kernels).
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/Dialect/Gopt/IR/NameLoc.h"
#include "gopt/Dialect/Gopt/IR/TrainingAttrs.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace gopt {
#define GEN_PASS_DEF_DATAPARALLEL
#include "gopt/Transforms/Passes.h.inc"
} // namespace gopt

using namespace mlir;
using namespace gopt;

namespace {

struct Gradient {
  unsigned resultIndex;
  Value value;
  // Position of the defining op in the block (-1: an argument): when
  // backward has computed it.
  int64_t position;
  int64_t bytes;
};

struct DataParallelPass
    : public gopt::impl::DataParallelBase<DataParallelPass> {
  using DataParallelBase::DataParallelBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.getBody().hasOneBlock())
      return;
    if (reduction != "mean" && reduction != "sum") {
      func.emitError("gopt-data-parallel: reduction must be 'mean' or 'sum', "
                     "got '")
          << reduction << "'";
      return signalPassFailure();
    }
    if (!(bucketMb >= 0)) {
      func.emitError("gopt-data-parallel: bucket-mb must be >= 0, got ")
          << bucketMb;
      return signalPassFailure();
    }
    Block &body = func.getBody().front();
    if (syncBatchNorm) {
      BoolAttr yes = BoolAttr::get(&getContext(), true);
      func.walk([&](BatchNormOp bn) {
        if (bn.getTraining())
          bn.setCrossReplicaAttr(yes);
      });
      func.walk([&](BatchNormGradOp grad) { grad.setCrossReplicaAttr(yes); });
    }
    llvm::DenseMap<Operation *, int64_t> positions;
    int64_t index = 0;
    for (Operation &op : body)
      positions[&op] = index++;

    auto ret = cast<func::ReturnOp>(body.getTerminator());
    SmallVector<Gradient> gradients;
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      if (!func.getResultAttrOfType<StringAttr>(i, attrs::kGradientOf))
        continue;
      Value value = ret.getOperand(i);
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (!type || !type.hasStaticShape()) {
        func.emitError("gopt-data-parallel: gradient result ")
            << i << " has type " << value.getType()
            << "; a bucket needs static shapes (parameters have them)";
        return signalPassFailure();
      }
      Operation *def = value.getDefiningOp();
      int64_t bytes = type.getNumElements() *
                      std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      gradients.push_back({i, value, def ? positions[def] : -1, bytes});
    }
    if (gradients.empty())
      return;
    // Backward's order: the last layer's gradients exist first.
    llvm::stable_sort(gradients, [](const Gradient &a, const Gradient &b) {
      return a.position < b.position;
    });

    int64_t bucketBytes = static_cast<int64_t>(bucketMb * 1e6);
    SmallVector<SmallVector<Gradient>> buckets(1);
    int64_t filled = 0;
    for (const Gradient &g : gradients) {
      if (!buckets.back().empty() && filled + g.bytes > bucketBytes) {
        buckets.emplace_back();
        filled = 0;
      }
      buckets.back().push_back(g);
      filled += g.bytes;
    }

    OpBuilder b(&getContext());
    for (auto [n, bucket] : llvm::enumerate(buckets)) {
      SmallVector<Value> operands;
      for (const Gradient &g : bucket)
        operands.push_back(g.value);
      // Right after the bucket's last gradient (or at the top of the body
      // when every gradient is an argument).
      Value last = bucket.back().value;
      if (Operation *def = last.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(&body);
      Location loc =
          NameLoc::get(b.getStringAttr("all_reduce/bucket" + std::to_string(n)),
                       ret.getLoc());
      auto reduce = b.create<AllReduceOp>(
          loc, operands, b.getStringAttr(reduction.getValue()));
      for (auto [g, result] : llvm::zip(bucket, reduce.getResults()))
        ret.setOperand(g.resultIndex, result);
    }
  }
};

} // namespace
