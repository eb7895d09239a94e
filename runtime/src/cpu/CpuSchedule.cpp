//===- CpuSchedule.cpp - The schedule of backend "cpu" --------------------===//
//
// Walks the plan once and decides, per tensor, which physical layouts it is
// kept in (f32 and bf16 tensors alike):
// - NCHW convolutions let oneDNN choose source and destination layouts
//   (blocked nChw8c/nChw16c where they pay); pooling, global average
//   pooling, batch norm and zero-preserving elementwise ops (relu, add, ...)
//   then work on whatever layout their input arrives in, so activations stay
//   blocked from one oneDNN op to the next. A plain copy is made (a reorder
//   step) only where another kernel or a graph output needs the plan's
//   row-major layout.
// - conv2d followed by add (residual) and/or relu/relu6/clip becomes one
//   oneDNN convolution with sum and eltwise post-ops; the sum accumulates in
//   place into the residual's buffer when the residual is dead afterwards,
//   else into a copy of it.
// - convolutions where each result is read only by the next (MobileNet's
//   expand, depthwise and project convolutions, f32, bf16 or static int8)
//   run as one step, a few images of the batch at a time, so the
//   intermediates stay in cache instead of going to memory and back
//   (createConvChain); only where the batch's intermediate would not stay
//   in cache anyway and one convolution of a pair is memory-bound. With
//   several threads each runs its own images through its own copy.
// - an f32 matmul followed by the add of a row of N values (a bias), an add
//   of a residual of the result's size (through reshapes) and/or relu/gelu
//   becomes one oneDNN matmul with a bias and sum and eltwise post-ops, the
//   sum in place as for convolutions.
// - multi-head attention as PyTorch exports it (transposes of sequence-major
//   heads, an optional scaling of the queries, matmul, softmax, matmul and a
//   transpose back) is one kernel reading the heads in place.
// - reshape/dynamic_reshape/flatten/identity/inference dropout of an
//   intermediate are zero-copy aliases.
// - a cast between f32 and bf16 of a blocked tensor is a converting reorder
//   (mixed precision's casts at the borders of a bf16 region); a cast or
//   per-tensor quantize of a plain tensor (the graph's input) waits for its
//   reader and converts straight into the layout that reader asks for.
// - quantize/dequantize chains (static int8 plans) run in int8, as ONNX
//   Runtime's QDQ transformer does: a conv2d or matmul reading
//   dequantize(q, s) with a constant int8 weight behind its own dequantize
//   becomes a oneDNN int8 primitive reading q directly; a quantize of its
//   result becomes the primitive's int8 destination, and conv -> quantize ->
//   dequantize -> add(dequantized residual) -> relu -> quantize one
//   primitive with a sum post-op. A dequantize runs (as a fast kernel, in its
//   input's layout) only when an op that is not int8 reads its result.
//   Convs and matmuls only where oneDNN accumulates int8 exactly
//   (cpuInt8DotProduct: VNNI or AMX); elsewhere the chain runs as written,
//   f32 ops on the dequantized values, which is what the reference computes.
// Everything else runs the registry's kernel (oneDNN, fast or reference) on
// plain tensors.
//
//===----------------------------------------------------------------------===//
#include "BlockedBatchNorm.h"
#include "ChannelShuffle.h"
#include "EnvSwitch.h"
#include "FastKernels.h"
#include "Int8Pool.h"
#include "InvertedResidualF32.h"
#include "OneDnn.h"
#include "ReluGradBias.h"
#include "Schedule.h"
#include "SingleChannelConv.h"
#include "SmallConvTraining.h"
#include "SqueezeExcite.h"
#include "gopt/runtime/CpuInfo.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

namespace gopt::runtime {
namespace {

using dnnl::memory;

class CpuScheduler {
public:
  // `in` is copied: constants computed while scheduling join its list.
  CpuScheduler(const ScheduleInput &in, Schedule &schedule)
      : in_(in), s_(schedule), p_(*in.plan) {}

  Status build();

private:
  struct Version {
    memory::desc md;
    int slot;
  };

  const plan::TensorInfo &info(int t) const { return p_.tensors(t); }
  bool isIntermediate(int t) const {
    return info(t).kind() == plan::TensorInfo::INTERMEDIATE;
  }
  DType dtype(int t) const { return (*in_.dtypes)[t]; }
  // The element types oneDNN's kernels and the flat elementwise kernels
  // handle in blocked layouts.
  bool hasLayouts(int t) const {
    return cpu::oneDnnType(dtype(t)) != memory::data_type::undef;
  }
  const Shape &shape(int t) const { return (*in_.shapes)[t]; }
  // A CONSTANT tensor's data, else null.
  const void *constant(int t) const { return in_.constants[t]; }
  // A constant, or a dequantize of constants (a weight-only int8 weight):
  // materialize computes the latter once, before its reader runs, so to a
  // schedule deciding ahead of that (chainSuccessor) it is constant too.
  bool constantWhenRead(int t) const {
    if (constant(t))
      return true;
    int d = producer_[t];
    return d >= 0 && deferrable(d) && constant(p_.ops(d).inputs(0));
  }
  memory::desc plain(int t) const { return cpu::plainDesc(shape(t), dtype(t)); }
  int root(int slot) const {
    while (s_.slots[slot].aliasOf >= 0)
      slot = s_.slots[slot].aliasOf;
    return slot;
  }
  // Storage a kernel may overwrite in place: planned in the arena.
  bool inArena(int slot) const {
    int r = root(slot);
    return r >= numPlan_ || isIntermediate(r);
  }

  int newSlot(int tensor, size_t bytes, int aliasOf = -1) {
    Slot slot;
    slot.dtype = dtype(tensor);
    slot.shape = shape(tensor);
    slot.bytes = bytes;
    slot.aliasOf = aliasOf;
    s_.slots.push_back(std::move(slot));
    slotTensor_.push_back(tensor);
    return static_cast<int>(s_.slots.size()) - 1;
  }

  void addStep(std::unique_ptr<Kernel> kernel, std::vector<int> inputs,
               std::vector<int> outputs, std::string name, std::string kind,
               bool isAlias = false) {
    Step step;
    step.kernel = std::move(kernel);
    step.inputs = std::move(inputs);
    step.outputs = std::move(outputs);
    step.name = std::move(name);
    step.kind = std::move(kind);
    step.device = "cpu";
    step.isAlias = isAlias;
    s_.steps.push_back(std::move(step));
  }

  // A blocked version of `t` if it has one (what layout-aware ops prefer),
  // else its plain layout.
  memory::desc currentDesc(int t) const {
    if (!plainReady_[t] && !versions_[t].empty())
      return versions_[t].front().md;
    for (const Version &v : versions_[t])
      if (v.md != plain(t))
        return v.md;
    return plain(t);
  }

  StatusOr<int> plainSlot(int t);
  // Runs the dequantize that computes `t` if it was deferred, and with
  // `casts` a deferred cast (into the plain layout).
  Status materialize(int t, bool casts = true);
  StatusOr<int> slotIn(int t, const memory::desc &md);
  Status reorder(int fromSlot, const memory::desc &from, int toSlot,
                 const memory::desc &to, int tensor);
  // Whether every tensor sharing `slot`'s storage is dead after plan op
  // `o`.
  bool deadAfter(int slot, int o) const {
    int r = root(slot);
    for (size_t s = 0; s < s_.slots.size(); ++s)
      if (root(static_cast<int>(s)) == r && lastUse_[slotTensor_[s]] > o)
        return false;
    return true;
  }
  // The only op reading intermediate `t`, if it is not fused already
  // (a residual add is claimed by the first of its two convolutions).
  int soleConsumer(int t) const {
    if (consumers_[t].size() != 1 || !isIntermediate(t) ||
        fusedInto_[consumers_[t][0]] != -1)
      return -1;
    return consumers_[t][0];
  }
  // Whether an op reading `t` works on blocked layouts.
  bool hasBlockedConsumer(int t) const;
  // The mul of x * sigmoid(x) (SiLU as PyTorch exports it) when `t`'s
  // only readers are that sigmoid and mul; the sigmoid op in `sigmoidOp`.
  int swishConsumer(int t, int &sigmoidOp) const;

  Status scheduleConv(int o);
  Status scheduleConvResidual(int o, bool &done);
  Status scheduleConcat(int o, bool &done);
  struct Fusion;
  // Whether fusion `f` is a network's first convolution reading its plain
  // image `src` that should write nChw16c.
  bool stemImage(const Fusion &f, const memory::desc &src) const;
  // Channel concats whose sources are convolutions read by nothing else:
  // each writes straight into the concat's nChw16c destination
  // (createConvIntoConcat) and the concat copies nothing.
  struct ConcatInPlace {
    int concat = -1;
    memory::desc dst;
    int slot = -1; // made when the first source runs
  };
  std::vector<ConcatInPlace> concatsInPlace_;
  std::vector<int> intoConcat_; // per op: a conv2d's concatsInPlace_ entry
  std::vector<std::unique_ptr<cpu::LayoutKernel>> intoConcatKernel_; // per op
  std::vector<bool> concatTried_; // per op: planConcatInPlace ran
  // The conv2d (activation in `activation`) computing concat `c`'s source
  // `t`, alone or with one relu, read only by the concat; -1 otherwise.
  int concatSourceConv(int t, int c, std::string &activation) const;
  Status planConcatInPlace(int c);
  Status emitIntoConcat(int o);
  // DenseNet's blocks: every layer concatenates the block's input with all
  // earlier layers' results, a copy of the whole block so far per layer.
  // The concats reading prefixes of the widest one's sources share its
  // nChw16c buffer instead: each source is copied into its slice once (or
  // its conv writes it there), and each concat's result is the buffer's
  // first channels (at batch 1 a dense nChw16c tensor; past it, images as
  // far apart as the buffer's, which the batch norms read as they are).
  // GOPT_DENSE_CONCAT=0 turns it off, =all takes it past batch 1 too.
  struct DenseBlock {
    int concat = -1;              // the widest concat
    memory::desc dst;             // its result's nChw16c layout
    int slot = -1;                // its storage, made at the first concat
    std::vector<int> sources;     // the widest concat's inputs
    std::vector<int64_t> offsets; // their first channels
    std::vector<bool> inSlice;    // per source: written into its slice
  };
  std::vector<DenseBlock> denseBlocks_;
  std::vector<int> denseBlockOf_; // per op: a concat's denseBlocks_ entry
  // GOPT_DENSE_CONCAT=copy copies every source into its slice.
  bool denseIntoSlice_ = true;
  void planDenseBlocks();
  // A conv2d computing a dense block's source that only the block's
  // concats read writes its slice itself (createConvIntoConcat); whether
  // it did.
  StatusOr<bool> emitIntoDenseBlock(int o);
  // Whether `t` is computed by elementwise ops and batch norms from a
  // concat sharing a dense block's buffer.
  bool readsDenseBlock(int t) const {
    for (int depth = 0; depth < 4 && producer_[t] >= 0; ++depth) {
      const plan::Op &op = p_.ops(producer_[t]);
      if (op.kind() == "concat")
        return denseBlockOf_[producer_[t]] >= 0;
      if (op.kind() != "batch_norm" && op.kind() != "relu")
        return false;
      t = op.inputs(0);
    }
    return false;
  }
  Status emitDenseConcat(int o);
  Status emitConv(int o);
  Status scheduleMatmul(int o, bool &done);
  Status emitMatmul(int o);
  void matchAttention(int softmax);
  Status emitAttention(int o);
  // Static int8 (quantize/dequantize chains).
  bool perTensorScale(const plan::Op &op, float &scale) const;
  bool quantizedSource(int x, int &q, float &scale) const;
  bool quantizedWeight(int w, int64_t axis, const int8_t *&data,
                       std::vector<float> &scales) const;
  int soleQuantize(int t, float &scale) const;
  bool deferrable(int o) const;
  Status scheduleInt8Conv(int o, bool &done);
  Status scheduleInt8Matmul(int o, bool &done);
  Status scheduleInt8MaxPool(int o, bool &done);
  Status scheduleQuantization(int o, bool &done);
  Status scheduleLayoutOp(int o);
  Status scheduleElementwise(int o, bool &done);
  Status scheduleCast(int o, bool &done);
  Status scheduleChannelMul(int o, bool &done);
  // The only op reading intermediate `t`'s data, where every other reader
  // is a shape op (an exporter's reshape targets); -1 otherwise.
  int soleDataReader(int t) const;
  // f32 nChw16c / nChw8c, or NHWC for any other block.
  static memory::desc blockedDesc(const Shape &shape, int64_t block);
  // The slices of [N, C, H, W] tensor `t` along channels that read its
  // data, each with its first channel, in order, if they are all its data
  // readers, cover its channels and do not overlap; else empty.
  std::vector<std::pair<int, int64_t>> channelSlices(int t) const;
  Status scheduleConcatShuffle(int o, bool &done);
  // Squeeze-and-excitation from global average pool `o` to the gating
  // multiply as one step (SqueezeExcite.cpp).
  Status scheduleSqueezeExcite(int o, bool &done);
  Status scheduleInt8GlobalPool(int o, bool &done);
  // Whether `c` is an f32 1x1 convolution of `from` (stride 1, no padding,
  // one group) with constant weights, of `in` to `out` channels; its
  // weights and bias (zeros where it has none) in `w`, `b`.
  bool pointwiseConstConv(int c, int from, int64_t in, int64_t &out,
                          std::vector<float> &w, std::vector<float> &b) const;
  Status scheduleAlias(int o, bool &done);
  Status scheduleReluGradBiasPair(int o, bool &done);
  bool matchConvGrads(int dx, int o, int &dataGrad, int &filterGrad) const;
  // relu_grad op `o`'s readers when they are one gradient op (a
  // conv2d_backprop_filter or max_pool_grad reading its result as dy) and a
  // bias gradient's reduce_sum over N, H and W: their op indices.
  bool matchReluGradBiasPair(int o, int &gradient, int &biasSum) const;
  // The transposes around a training step's 2x2 pool and its flatten
  // (NHWC pool -> NCHW -> flatten; the flattened gradient -> NHWC ->
  // relu_grad + max_pool_grad + bias sum) run inside the pool steps: the
  // relu mask comes from the pool's windows, so the NHWC pool result is
  // never needed, and the fused gradient step reads g in NCHW. Planned
  // before the ops are scheduled, the kernels made then, because the
  // transposes come before the steps that take them over.
  void planPoolTransposes();
  struct PoolGradPlan {
    int g = -1;              // the tensor the fused step reads as g
    bool windowMask = false; // y > 0 from the windows: y not read
    std::unique_ptr<Kernel> kernel;
  };
  std::unordered_map<int, PoolGradPlan> poolGradPlans_; // by relu_grad op
  // relu_grad(g, y) whose g is an add read by it alone and/or whose dy a
  // per-channel reduce_sum (a bias gradient) reads, as one pass
  // (ReluGradBias.h). Planned before the ops are scheduled: the add comes
  // first.
  void planReluGradBias();
  Status scheduleReluGradBias(int o, bool &done);
  struct ReluBiasPlan {
    int add = -1, biasSum = -1;
    std::unique_ptr<Kernel> kernel;
  };
  std::unordered_map<int, ReluBiasPlan> reluBiasPlans_; // by relu_grad op
  // adam_update / sgd_update whose gradient is a cast from bf16 read by it
  // alone read the bf16 gradient (the cast is not run): by optimizer op,
  // the cast and the kernel.
  void planOptimizerBf16Grads();
  std::unordered_map<int, std::pair<int, std::unique_ptr<Kernel>>>
      optimizerBf16Grads_;
  // By max_pool op: the transpose to NCHW it runs, and its kernel.
  std::unordered_map<int, std::pair<int, std::unique_ptr<Kernel>>> poolToNchw_;
  // bf16 conv2d op -> {its max_pool in poolToNchw_, the AMX conv + pool +
  // transpose kernel} (SmallConvTraining.cpp).
  std::unordered_map<int, std::pair<int, std::unique_ptr<Kernel>>> convPool_;
  // The pool winners those kernels record for the pool's gradient: by conv
  // op until its step is made, then by the conv's result with the pool op
  // (PoolWinnerMasks).
  std::unordered_map<int, std::shared_ptr<cpu::PoolWinnerMasks>> convMasks_;
  std::unordered_map<int, std::pair<int, std::shared_ptr<cpu::PoolWinnerMasks>>>
      poolMasks_;
  // The one-channel conv2d whose result is such a conv's source, run
  // inside that step instead (its result recomputed there from the 28x28
  // images rather than read back): by the AMX conv op, the source conv op,
  // the step's kernel with it and whether it was taken (the source conv's
  // own step then skipped); skipResult set where the backward recomputes
  // the result too and nothing else reads it.
  struct SourceConvPlan {
    int source = -1;
    std::unique_ptr<Kernel> kernel;
    std::shared_ptr<cpu::SourceConvResult> result;
    bool taken = false;
  };
  std::unordered_map<int, SourceConvPlan> convSource_;
  std::unordered_map<int, int> sourceConvOf_; // source conv op -> AMX conv op
  Status scheduleDefault(int o);
  Status precomputeDequantize(int o);

  ScheduleInput in_;
  Schedule &s_;
  const plan::Plan &p_;
  int numPlan_ = 0;
  std::vector<int> slotTensor_;                // per slot: the plan tensor
  std::vector<std::vector<Version>> versions_; // per plan tensor
  std::vector<bool> plainReady_;               // slot t holds tensor t
  std::vector<int> lastUse_;                   // per plan tensor: op index
  std::vector<std::vector<int>> consumers_;    // per plan tensor: ops
  std::vector<int> producer_;                  // per plan tensor: op or -1
  // Per plan tensor: the dequantize op computing it, not yet run.
  std::vector<int> deferred_;
  // Per plan tensor: the cast or per-tensor quantize of a plain tensor
  // computing it, not yet run: it converts straight into the layout its
  // first reader asks for.
  std::vector<int> pendingCast_;
  // The reorder computing pending cast `o` from its plain input into `to`.
  StatusOr<std::unique_ptr<Kernel>> pendingCastKernel(int o,
                                                      const memory::desc &to);
  // Per plan tensor: never negative, whatever the inputs (after relu, ...).
  std::vector<bool> nonNegative_;
  // Convolutions fused with later ops run at the last op of their chain.
  struct Fusion {
    int conv = -1;
    std::vector<int> ops; // conv first
    int residual = -1;    // plan tensor added by the sum post-op
    int addOp = -1;       // the op whose add the sum post-op computes
    // An int8 conv reads `src` (the quantized source) and has its weights
    // and bias inside; else src is the conv's input 0.
    bool int8 = false;
    int src = -1;
    // A matmul's bias row (plan tensor), or -1.
    bool matmul = false;
    int bias = -1;
    // Attention: q, k and v (plan tensors), the kernel.
    bool attention = false;
    int q = -1, k = -1, v = -1;
    std::unique_ptr<Kernel> attentionKernel;
    cpu::ConvPostOps post;
    std::unique_ptr<cpu::LayoutKernel> kernel;
    // A chain of convolutions (the weights are inside the kernel).
    bool chained = false;
    // What an int8 conv computes (for a chain to make it again).
    cpu::Int8Params int8Params;
  };
  std::vector<int> fusedInto_; // per op: index into fusions_, or -1
  std::vector<Fusion> fusions_;
  // Convolutions that run chunk by chunk of the batch (createConvChain):
  // each stage is a conv fusion; a stage waits for the next until the
  // chain ends.
  std::vector<std::vector<Fusion>> chains_;
  std::vector<int> chainOf_; // per op: the chain it would continue, or -1
  Status emitConvFusion(Fusion &f);
  // The conv2d reading the result of fusion `f` that may run with it
  // chunk by chunk of the batch, or -1.
  int chainSuccessor(const Fusion &f) const;
  // Adds fusion `f` of op `o` to the chain waiting for `o`, or starts one
  // where a convolution can follow; whether a chain took `f`.
  StatusOr<bool> joinChain(Fusion &f, int o);
  // Emits chain `chain`'s stages (as one step where they can be) when
  // scheduling op `o`: now if its last op is not after `o`.
  Status emitChain(int chain, int o);
};

Status CpuScheduler::reorder(int fromSlot, const memory::desc &from, int toSlot,
                             const memory::desc &to, int tensor) {
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel,
                        cpu::createReorder(from, to));
  addStep(std::move(kernel), {fromSlot}, {toSlot},
          "reorder:" + info(tensor).name(), "reorder");
  return Status::success();
}

StatusOr<int> CpuScheduler::plainSlot(int t) {
  GOPT_RETURN_IF_ERROR(materialize(t));
  if (plainReady_[t])
    return t;
  if (versions_[t].empty())
    return internalError("tensor '", info(t).name(), "' is never computed");
  memory::desc plain = this->plain(t);
  for (const Version &v : versions_[t])
    if (v.md == plain && isIntermediate(t)) {
      s_.slots[t].aliasOf = v.slot; // already plain: share it
      plainReady_[t] = true;
      return t;
    }
  const Version &v = versions_[t].front();
  GOPT_RETURN_IF_ERROR(reorder(v.slot, v.md, t, plain, t));
  plainReady_[t] = true;
  return t;
}

StatusOr<int> CpuScheduler::slotIn(int t, const memory::desc &md) {
  memory::desc plain = this->plain(t);
  if (pendingCast_[t] >= 0 && md != plain) {
    int o = pendingCast_[t];
    pendingCast_[t] = -1;
    const plan::Op &op = p_.ops(o);
    int x = op.inputs(0);
    GOPT_ASSIGN_OR_RETURN(int src, plainSlot(x));
    GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel,
                          pendingCastKernel(o, md));
    int slot = newSlot(t, md.get_size());
    addStep(std::move(kernel), {src}, {slot}, op.name(), op.kind());
    versions_[t].push_back({md, slot});
    return slot;
  }
  GOPT_RETURN_IF_ERROR(materialize(t));
  if (md == plain)
    return plainSlot(t);
  // A version in a layout with the same bytes (nChw16c of 16 channels for
  // NHWC: EfficientNet-B0's first projection) is that layout already.
  static const bool sameBytesAlias = envSwitchOn("GOPT_LAYOUT_SAME_BYTES");
  for (const Version &v : versions_[t])
    if (sameBytesAlias ? cpu::sameBytes(v.md, md) : v.md == md)
      return v.slot;
  int slot = newSlot(t, md.get_size());
  if (plainReady_[t]) {
    GOPT_RETURN_IF_ERROR(reorder(t, plain, slot, md, t));
  } else {
    const Version &v = versions_[t].front();
    GOPT_RETURN_IF_ERROR(reorder(v.slot, v.md, slot, md, t));
  }
  versions_[t].push_back({md, slot});
  return slot;
}

// A network's first convolution (a plain NCHW image of fewer than 16
// channels) whose result goes through one max pool into one convolution
// (SqueezeNet's and GoogLeNet's stems): oneDNN's JIT kernel reads the image
// as it is and writes nChw16c (one thread, SqueezeNet's stem at batch 8:
// 2.4 ms vs. 3.2 + 0.35 for the brgemm kernel and the image's reorder),
// and the pool and that convolution keep nChw16c. Not before a batch norm
// (DenseNet-121's concats ran 15% slower in the all-nChw16c network). The
// pool may also feed several ops where one is a convolution that keeps
// nChw16c at batch 1 (below; an earlier all-nChw16c ResNet-50, 3x3 layers
// included, ran 2% slower, hence not past batch 1).
bool CpuScheduler::stemImage(const Fusion &f, const memory::desc &src) const {
  if (dtype(f.src) != DType::kF32 || shape(f.src).size() != 4 ||
      shape(f.src)[1] >= 16 || src != plain(f.src) || f.post.sum ||
      !f.post.tail.empty())
    return false;
  int pool = soleConsumer(p_.ops(f.ops.back()).outputs(0));
  if (pool < 0 || p_.ops(pool).kind() != "max_pool" ||
      p_.ops(pool).outputs_size() != 1)
    return false;
  int pooled = p_.ops(pool).outputs(0);
  int next = soleConsumer(pooled);
  if (next >= 0)
    return p_.ops(next).kind() == "conv2d" && p_.ops(next).inputs(0) == pooled;
  // ResNet-18's stem at batch 1: the pool feeds a Winograd convolution,
  // which reads nChw16c, and the residual sum beside it, which then reads
  // the pool's nChw16c as the Winograd result's layout: neither the image
  // nor the pool's result is reordered.
  if (!envSwitchOn("GOPT_CONV_STEM_BLOCKED") || !isIntermediate(pooled) ||
      shape(pooled)[0] != 1)
    return false;
  // ResNet-50's: the pool feeds two 1x1 convolutions, which at batch 1
  // read nChw16c as well (GOPT_CONV_BLOCKED_POINTWISE, in scheduleConv).
  for (int c : consumers_[pooled]) {
    const plan::Op &op = p_.ops(c);
    if (op.kind() != "conv2d" || op.inputs(0) != pooled)
      continue;
    if (cpu::winogradSourceDesc(makeKernelConfig(in_, c)))
      return true;
    const std::vector<int64_t> &w = shape(op.inputs(1));
    bool oihw = OpAttrs(op).getString("filter_format") == "OIHW";
    if (w.size() == 4 && (oihw ? w[2] * w[3] : w[0] * w[1]) == 1 &&
        envSwitchOn("GOPT_CONV_BLOCKED_POINTWISE"))
      return true;
  }
  return false;
}

// Looks ahead from an NCHW conv2d without activation for add(residual) and
// relu/relu6/clip consumers to fold into it as post-ops; runs the conv on
// its own where oneDNN has no kernel for it (bf16 without AVX-512).
Status CpuScheduler::scheduleConv(int o) {
  const plan::Op &conv = p_.ops(o);
  if (intoConcat_[o] < 0) {
    int t = conv.outputs(0);
    int relu = soleConsumer(t);
    if (relu >= 0 && p_.ops(relu).kind() == "relu")
      t = p_.ops(relu).outputs(0);
    int c = soleConsumer(t);
    if (c >= 0 && p_.ops(c).kind() == "concat" && !concatTried_[c] &&
        denseBlockOf_[c] < 0)
      GOPT_RETURN_IF_ERROR(planConcatInPlace(c));
  }
  if (intoConcat_[o] >= 0)
    return emitIntoConcat(o);
  if (denseIntoSlice_) {
    GOPT_ASSIGN_OR_RETURN(bool done, emitIntoDenseBlock(o));
    if (done)
      return Status::success();
  }
  Fusion f;
  f.conv = o;
  f.src = conv.inputs(0);
  f.ops = {o};
  f.post.activation = OpAttrs(conv).getString("activation");
  int cur = conv.outputs(0);
  auto activation = [&](int c) {
    const plan::Op &op = p_.ops(c);
    if (op.kind() == "relu" || op.kind() == "relu6") {
      f.post.activation = op.kind();
      return true;
    }
    if (op.kind() == "clip") {
      f.post.activation = "clip";
      f.post.clipMin = static_cast<float>(OpAttrs(op).getFloat("min"));
      f.post.clipMax = static_cast<float>(OpAttrs(op).getFloat("max"));
      return true;
    }
    return false;
  };
  if (f.post.activation == "none") {
    int c = soleConsumer(cur);
    if (c >= 0 && p_.ops(c).kind() == "add" &&
        dtype(p_.ops(c).outputs(0)) == dtype(cur)) {
      const plan::Op &add = p_.ops(c);
      int other = add.inputs(0) == cur ? add.inputs(1) : add.inputs(0);
      if (other != cur && shape(other) == shape(cur) &&
          shape(add.outputs(0)) == shape(cur)) {
        f.post.sum = true;
        f.residual = other;
        f.addOp = c;
        f.ops.push_back(c);
        cur = add.outputs(0);
        int a = soleConsumer(cur);
        if (a >= 0 && activation(a))
          f.ops.push_back(a);
      }
    } else if (c >= 0 && activation(c)) {
      f.ops.push_back(c);
    }
  }
  // Then hard_swish and multiplies and adds by a constant scalar, as eltwise
  // post-ops (PP-LCNet's activation and learnable affine block): one pass
  // over the conv's output, in oneDNN's layout, instead of three, each
  // reordering to the plain layout and back.
  cur = p_.ops(f.ops.back()).outputs(0);
  for (;;) {
    int sigmoidOp = -1;
    int c = soleConsumer(cur);
    if (c < 0)
      c = swishConsumer(cur, sigmoidOp);
    if (c < 0)
      break;
    const plan::Op &op = p_.ops(c);
    if (dtype(op.outputs(0)) != dtype(cur) ||
        shape(op.outputs(0)) != shape(cur))
      break;
    cpu::ConvPostOps::Eltwise e;
    // oneDNN 2.6 computes a second linear post-op with the first one's
    // alpha and beta (measured), so the tail holds at most one hard_swish
    // or swish and then at most one linear, which consecutive multiplies
    // and adds compose into.
    if (sigmoidOp >= 0) {
      if (!f.post.tail.empty())
        break;
      // x * sigmoid(alpha * x), SiLU with alpha 1.
      e.algorithm = dnnl::algorithm::eltwise_swish;
      e.alpha = 1.0f;
      f.ops.push_back(sigmoidOp);
    } else if (op.kind() == "hard_swish" && f.post.tail.empty()) {
      // x * max(0, min(1, alpha * x + beta)), ONNX's HardSwish.
      e.algorithm = dnnl::algorithm::eltwise_hardswish;
      e.alpha = 1.0f / 6.0f;
      e.beta = 0.5f;
    } else if (op.kind() == "mul" || op.kind() == "add") {
      int other = op.inputs(0) == cur ? op.inputs(1) : op.inputs(0);
      if (other == cur || !constant(other) || dtype(other) != DType::kF32 ||
          numElements(shape(other)) != 1)
        break;
      float v = *static_cast<const float *>(constant(other));
      e.algorithm = dnnl::algorithm::eltwise_linear;
      e.alpha = op.kind() == "mul" ? v : 1.0f;
      e.beta = op.kind() == "mul" ? 0.0f : v;
    } else {
      break;
    }
    // Consecutive multiplies and adds compose into one alpha * x + beta.
    if (e.algorithm == dnnl::algorithm::eltwise_linear &&
        !f.post.tail.empty() &&
        f.post.tail.back().algorithm == dnnl::algorithm::eltwise_linear) {
      cpu::ConvPostOps::Eltwise &prev = f.post.tail.back();
      prev.beta = prev.beta * e.alpha + e.beta;
      prev.alpha *= e.alpha;
    } else {
      f.post.tail.push_back(e);
    }
    f.ops.push_back(c);
    cur = op.outputs(0);
  }
  // A global average pool reading the result alone (SqueezeNet's
  // classifier, MobileNetV3's last 1x1 layer) sums it as gopt's 1x1 kernel
  // computes it: the result is never written (createConv1x1GlobalPool).
  if (int gap = soleConsumer(cur);
      gap >= 0 && p_.ops(gap).kind() == "global_avg_pool" && chainOf_[o] < 0 &&
      p_.ops(gap).outputs_size() == 1 &&
      OpAttrs(p_.ops(gap)).getString("data_format") == "NCHW" &&
      dtype(p_.ops(gap).outputs(0)) == DType::kF32) {
    std::unique_ptr<cpu::LayoutKernel> pooled = cpu::createConv1x1GlobalPool(
        makeKernelConfig(in_, o), f.post, currentDesc(f.src),
        shape(p_.ops(gap).outputs(0)));
    if (pooled) {
      f.kernel = std::move(pooled);
      f.ops.push_back(gap);
      for (int t : conv.inputs())
        lastUse_[t] = std::max(lastUse_[t], gap);
      fusedInto_[gap] = static_cast<int>(fusions_.size());
      for (int op : f.ops)
        if (op != gap)
          fusedInto_[op] = -2;
      fusions_.push_back(std::move(f));
      return Status::success();
    }
  }
  // A Winograd convolution reading the result wants its own blocked
  // layout, gopt's f32 depthwise kernel NHWC (unless this convolution is
  // chained): written so at once, the result needs no reorder.
  std::optional<memory::desc> readerLayout;
  int reader = soleConsumer(cur);
  if (reader >= 0 && p_.ops(reader).kind() == "conv2d" &&
      p_.ops(reader).inputs(0) == cur) {
    const KernelConfig readerConfig = makeKernelConfig(in_, reader);
    readerLayout = cpu::winogradSourceDesc(readerConfig);
    if (!readerLayout && chainOf_[o] < 0)
      readerLayout = cpu::depthwiseF32SourceDesc(readerConfig);
  }
  // A source a Winograd convolution (or one next to it) left in nChw16c,
  // or a stem's image (below).
  memory::desc source = currentDesc(f.src);
  bool blockedSource =
      dtype(f.src) == DType::kF32 && shape(f.src).size() == 4 &&
      source == memory::desc(shape(f.src), memory::data_type::f32,
                             memory::format_tag::aBcd16b);
  // At batch 1, past the Winograd convolutions (neither this one nor its
  // reader), a convolution with more than 128 x 128 channels reorders a
  // blocked source to what the direct kernel picks: ResNet-18's 256- and
  // 512-channel layers ran 3-10% slower in nChw16c than in the brgemm
  // kernel's NHWC, its 64- and 128-channel ones as fast. Larger batches
  // keep the layout (ResNet-50 at batch 8 ran 8% faster all blocked).
  const std::vector<int64_t> &filter = shape(conv.inputs(1));
  bool wideFilter = filter.size() == 4 && filter[0] * filter[1] > 128 * 128;
  // Not a 1x1 one: oneDNN's jit_1x1 kernel on nChw16c ran ResNet-50's wide
  // 1x1 layers as fast as or faster than brgconv_1x1 on NHWC (256 -> 1024
  // at 14x14 0.71 vs 0.85 ms, 2048 -> 512 at 7x7 0.98 vs 1.13, one
  // thread), so the source stays blocked and the block's reorders go.
  bool oihw = OpAttrs(conv).getString("filter_format") == "OIHW";
  bool blockedPointwise =
      filter.size() == 4 && envSwitchOn("GOPT_CONV_BLOCKED_POINTWISE") &&
      (oihw ? filter[2] * filter[3] : filter[0] * filter[1]) == 1;
  if (blockedPointwise)
    wideFilter = false;
  // Likewise a 1x1 convolution at batch 1 whose source is also kept in
  // nChw16c (for a neighbour) reads that copy: ResNet-50's first
  // downsample read the pool's NHWC and its result was reordered for the
  // residual sum (0.6 ms of 58).
  const memory::desc blocked16(shape(f.src), memory::data_type::f32,
                               memory::format_tag::aBcd16b);
  if (!blockedSource && blockedPointwise && dtype(f.src) == DType::kF32 &&
      shape(f.src).size() == 4 && shape(f.src)[0] == 1)
    for (const Version &v : versions_[f.src])
      if (v.md == blocked16) {
        source = blocked16;
        blockedSource = true;
      }
  // A DenseNet layer's source (batch norm and relu of its block's shared
  // nChw16c buffer) keeps it: reordering each layer's source cost more
  // than the direct kernel's NHWC gains.
  if (blockedSource && wideFilter && shape(f.src)[0] == 1 && !readerLayout &&
      !readsDenseBlock(f.src) &&
      !cpu::winogradSourceDesc(makeKernelConfig(in_, o)))
    blockedSource = false;
  GOPT_ASSIGN_OR_RETURN(
      f.kernel, cpu::createLayoutConv(
                    makeKernelConfig(in_, o), f.post,
                    readerLayout ? &*readerLayout : nullptr,
                    blockedSource || stemImage(f, source) ? &source : nullptr));
  if (!f.kernel) {
    if (chainOf_[o] >= 0)
      GOPT_RETURN_IF_ERROR(emitChain(chainOf_[o], o));
    return scheduleDefault(o);
  }
  int last = f.ops.back();
  // The conv now reads its operands at `last`: keep them alive until then.
  for (int t : conv.inputs())
    lastUse_[t] = std::max(lastUse_[t], last);
  GOPT_ASSIGN_OR_RETURN(bool chained, joinChain(f, o));
  if (chained)
    return Status::success();
  fusedInto_[last] = static_cast<int>(fusions_.size());
  for (int op : f.ops)
    if (op != last)
      fusedInto_[op] = -2; // runs as part of a later step
  fusions_.push_back(std::move(f));
  if (last == o)
    return emitConv(o);
  return Status::success();
}

// The bytes of one image of a chain's intermediate results that should stay
// in cache: about one core's L2 (2 MiB here); a chain runs as many images
// at a time as fit.
constexpr size_t kChainChunkBytes = size_t(2) << 20;

// The largest divisor of `batch` whose images of `imageBytes` fit in
// kChainChunkBytes (at least 1).
int64_t chainChunk(int64_t batch, size_t imageBytes) {
  int64_t chunk = 1;
  for (int64_t d = 1; d <= batch; ++d)
    if (batch % d == 0 &&
        static_cast<size_t>(d) * imageBytes <= kChainChunkBytes)
      chunk = d;
  return chunk;
}

// A convolution's multiply-adds per result element above which computing an
// element costs about what writing it out and reading it back does (bf16 on
// this AMX machine: ~1.9 TFLOP/s, ~12 GB/s): a chain pays only where one
// of its convolutions is cheaper than that (MobileNet's 1x1 and depthwise
// ones), not between ResNet's 3x3 ones.
constexpr int64_t kChainMacsPerElement = 256;

// Multiply-adds per result element of conv2d `op` (filter elements per
// output channel).
int64_t macsPerElement(const plan::Op &op, const Shape &filter) {
  bool oihw = OpAttrs(op).getString("filter_format") == "OIHW";
  int64_t out = filter.size() == 4 ? filter[oihw ? 0 : 3] : 0;
  return out > 0 ? numElements(filter) / out : 0;
}

// Whether conv2d ops `a` then `b` are the 1x1 -> depthwise (1) or
// depthwise -> 1x1 (0) halves of an inverted residual block
// (InvertedResidualF32.cpp); -1 otherwise.
int invertedResidualPair(const plan::Op &a, const Shape &fa, const plan::Op &b,
                         const Shape &fb) {
  auto kind = [](const plan::Op &op, const Shape &f) {
    OpAttrs attrs(op);
    bool oihw = attrs.getString("filter_format") == "OIHW";
    if (f.size() != 4)
      return 0;
    int64_t kh = oihw ? f[2] : f[0], kw = oihw ? f[3] : f[1];
    int64_t out = oihw ? f[0] : f[3], in = oihw ? f[1] : f[2];
    int64_t groups = attrs.getInt("groups");
    if (groups == 1 && kh == 1 && kw == 1)
      return 1; // pointwise
    if (groups > 1 && groups == out && in == 1 && kh == kw &&
        (kh == 3 || kh == 5))
      return 2; // depthwise
    return 0;
  };
  int ka = kind(a, fa), kb = kind(b, fb);
  return ka == 1 && kb == 2 ? 1 : ka == 2 && kb == 1 ? 0 : -1;
}

// Whether batch-1 f32 chains with a depthwise stage run as row bands
// (GOPT_CONV_CHAIN_BATCH1), and only on one thread
// (GOPT_CONV_CHAIN_BATCH1_ONE_THREAD=0: on any): each band's stages are
// small oneDNN and gopt calls that every thread forks and joins for, so
// at two threads EfficientNet-B0's 112x112 expand + stride-2 depthwise
// ran 1.15 ms banded against 0.61 ms as two whole-image steps (one
// thread: 0.94 against 1.08; per-op minima, architecture.md).
static bool batchOneBandedChains() {
  static const bool on = envSwitchOn("GOPT_CONV_CHAIN_BATCH1");
  // Read at each schedule (the tests set it).
  const bool oneThread = envSwitchOn("GOPT_CONV_CHAIN_BATCH1_ONE_THREAD");
  return on && (!oneThread || omp_get_max_threads() == 1);
}

int CpuScheduler::chainSuccessor(const Fusion &f) const {
  if (f.post.sum || f.int8Params.sum || f.matmul || f.attention)
    return -1;
  const plan::Op &conv = p_.ops(f.conv);
  for (int i = 1; i < conv.inputs_size() && !f.int8; ++i)
    if (!constant(conv.inputs(i)))
      return -1;
  int r = p_.ops(f.ops.back()).outputs(0);
  if (shape(r).size() != 4 ||
      (f.int8 ? dtype(r) != DType::kI8 : !hasLayouts(r)))
    return -1;
  // An int8 result is read through a dequantize by the next conv, which
  // reads the int8 values instead.
  int read = r;
  float scale;
  if (f.int8) {
    int d = soleConsumer(r);
    if (d < 0 || p_.ops(d).kind() != "dequantize" || !deferrable(d) ||
        !perTensorScale(p_.ops(d), scale))
      return -1;
    read = p_.ops(d).outputs(0);
  }
  int c = soleConsumer(read);
  if (c < 0 || intoConcat_[c] >= 0)
    return -1;
  const plan::Op &next = p_.ops(c);
  if (next.kind() != "conv2d" || next.inputs(0) != read ||
      next.inputs_size() < 2 || next.outputs_size() != 1 ||
      OpAttrs(next).getString("data_format") != "NCHW" ||
      (!f.int8 && dtype(next.outputs(0)) != dtype(r)))
    return -1;
  const int8_t *weights;
  std::vector<float> scales;
  bool oihw = OpAttrs(next).getString("filter_format") == "OIHW";
  if (f.int8 && !quantizedWeight(next.inputs(1), oihw ? 0 : 3, weights, scales))
    return -1;
  for (int i = f.int8 ? 2 : 1; i < next.inputs_size(); ++i)
    if (next.inputs(i) == read || !constantWhenRead(next.inputs(i)))
      return -1;
  if (macsPerElement(conv, shape(conv.inputs(1))) > kChainMacsPerElement &&
      macsPerElement(next, shape(next.inputs(1))) > kChainMacsPerElement)
    return -1;
  // Winograd's kernel runs only on whole batches above a size (the MNIST
  // CNN's second convolution ran 1.12x slower chained, a chunk at a time
  // without it, than unchained with it).
  if (cpu::winogradSourceDesc(makeKernelConfig(in_, f.conv)) ||
      cpu::winogradSourceDesc(makeKernelConfig(in_, c)))
    return -1;
  // Only where the whole batch's result would not stay in cache anyway
  // and a chunk of it would.
  int64_t batch = shape(r)[0];
  size_t image =
      static_cast<size_t>(numElements(shape(r)) / batch) * dtypeSize(dtype(r));
  // At batch 1 an f32 image over the budget (MobileNet's first expanded
  // blocks: 112x112x96 f32 is 4.8 MB) runs as row bands, the expanded band
  // staying in L2 between the expand and depthwise stages; only pairs with
  // a grouped (depthwise) convolution, so dense stems (Inception's) keep
  // their schedule (GOPT_CONV_CHAIN_BATCH1=0: unchained).
  const bool batchOne = batchOneBandedChains();
  // At batch 1 an f32 inverted residual block (1x1 -> depthwise -> 1x1)
  // whose expanded tensor (the depthwise's source) is over
  // GOPT_INVERTED_RESIDUAL_MIN_BYTES runs as one kernel, that tensor never
  // written out (emitChain; GOPT_INVERTED_RESIDUAL_F32=0: the schedule
  // before it). Smaller blocks stay in cache between oneDNN's kernels; how
  // small depends on the L2 (invertedResidualMinBytes).
  static const size_t irMinBytes = [] {
    if (const char *e = std::getenv("GOPT_INVERTED_RESIDUAL_MIN_BYTES"))
      return static_cast<size_t>(std::strtoull(e, nullptr, 10));
    return cpu::invertedResidualMinBytes(sysconf(_SC_LEVEL2_CACHE_SIZE));
  }();
  if (batch == 1 && !f.int8 && dtype(r) == DType::kF32 &&
      cpu::invertedResidualF32Enabled()) {
    int dw = invertedResidualPair(conv, shape(conv.inputs(1)), next,
                                  shape(next.inputs(1)));
    if (dw >= 0) {
      const Shape &expanded = shape((dw ? next : conv).inputs(0));
      if (static_cast<size_t>(numElements(expanded)) * sizeof(float) >
          irMinBytes)
        return c;
    }
  }
  if (batch == 1 && batchOne && !f.int8 && dtype(r) == DType::kF32 &&
      image > kChainChunkBytes &&
      (OpAttrs(conv).getInt("groups") > 1 ||
       OpAttrs(next).getInt("groups") > 1))
    return c;
  if (batch < 2 || image * batch <= kChainChunkBytes ||
      chainChunk(batch, image) >= batch)
    return -1;
  // An f32 chain of dense convolutions only (ResNet-50's stride-2
  // bottleneck at batch 8) ran its stages no faster than one by one, and its
  // NHWC stages cost reorders from and back to the blocked layout the rest
  // of the network runs in (12 of 570 ms a step): chains pay where a grouped
  // (depthwise) stage's intermediates would otherwise go to memory.
  if (envSwitchOn("GOPT_CONV_CHAIN_F32_NEEDS_GROUPED") && !f.int8 &&
      dtype(r) == DType::kF32) {
    auto grouped = [&](const plan::Op &op) {
      return OpAttrs(op).getInt("groups") > 1;
    };
    bool any = grouped(conv) || grouped(next);
    if (int pending = chainOf_[f.conv]; pending >= 0)
      for (const Fusion &stage : chains_[pending])
        any = any || grouped(p_.ops(stage.conv));
    if (!any)
      return -1;
  }
  return c;
}

StatusOr<bool> CpuScheduler::joinChain(Fusion &f, int o) {
  int pending = chainOf_[o];
  int next = chainSuccessor(f);
  if (pending < 0 && next < 0)
    return false;
  if (pending < 0) {
    pending = static_cast<int>(chains_.size());
    chains_.emplace_back();
  }
  for (int op : f.ops)
    fusedInto_[op] = -2;
  chains_[pending].push_back(std::move(f));
  if (next < 0) {
    GOPT_RETURN_IF_ERROR(emitChain(pending, o));
    return true;
  }
  chainOf_[next] = pending;
  // The chain reads its first source when it runs.
  int first = chains_[pending].front().src;
  lastUse_[first] = std::max(lastUse_[first], next);
  return true;
}

Status CpuScheduler::emitChain(int chain, int o) {
  std::vector<Fusion> stages = std::move(chains_[chain]);
  int last = stages.back().ops.back();
  std::unique_ptr<cpu::LayoutKernel> kernel;
  if (stages.size() > 1) {
    std::vector<cpu::ConvChainStage> configs;
    size_t image = 0;
    int64_t batch = shape(stages[0].src)[0];
    for (size_t k = 0; k < stages.size(); ++k) {
      cpu::ConvChainStage stage;
      stage.config = makeKernelConfig(in_, stages[k].conv);
      stage.post = stages[k].post;
      stage.int8 = stages[k].int8 ? &stages[k].int8Params : nullptr;
      configs.push_back(std::move(stage));
      int r = p_.ops(stages[k].ops.back()).outputs(0);
      if (k + 1 < stages.size())
        image =
            std::max(image, static_cast<size_t>(numElements(shape(r)) / batch) *
                                dtypeSize(dtype(r)));
    }
    // A chain whose first source is the network's input, still to be
    // quantized or cast to bf16 (pendingCast_) and read by nothing else,
    // may read the f32 input instead and convert it inside its stem
    // (StemAmx): the converted image is then never written.
    const int src0 = stages[0].src, cast = pendingCast_[src0];
    // The conv reads src0, or int8 src0 through its (deferred) dequantize
    // (soleConsumer would not name the conv: it is fused by now).
    auto only = [&](int t) {
      return consumers_[t].size() == 1 ? consumers_[t][0] : -1;
    };
    int reader = cast >= 0 ? only(src0) : -1;
    if (reader >= 0 && reader != stages[0].conv && deferrable(reader))
      reader = only(p_.ops(reader).outputs(0));
    float inputScale = 0;
    if (cast >= 0 && reader == stages[0].conv &&
        dtype(p_.ops(cast).inputs(0)) == DType::kF32 &&
        shape(src0).size() == 4 && shape(src0)[1] == 3) {
      const plan::Op &c = p_.ops(cast);
      if (c.kind() == "quantize" && perTensorScale(c, inputScale))
        inputScale = 1.0f / inputScale; // as pendingCastKernel
      else if (c.kind() == "cast" && dtype(src0) == DType::kBF16)
        inputScale = 1.0f;
      if (!(inputScale > 0 && std::isfinite(inputScale)))
        inputScale = 0;
    }
    configs[0].f32SourceScale = inputScale;
    if (batch == 1 && !stages[0].int8) {
      GOPT_ASSIGN_OR_RETURN(kernel, cpu::createInvertedResidualF32(configs));
    }
    // A batch-1 chain only chainSuccessor's inverted-residual rule made
    // (intermediates under the banding threshold) that the fused kernel
    // did not take runs its stages one by one, as without that rule.
    const bool batchOne = batchOneBandedChains();
    if (!kernel && (batch > 1 || (batchOne && image > kChainChunkBytes))) {
      GOPT_ASSIGN_OR_RETURN(
          kernel, cpu::createConvChain(configs, chainChunk(batch, image)));
    }
  }
  if (kernel) {
    Fusion f;
    f.conv = stages.back().conv;
    f.src = stages.front().src;
    // It reads the f32 input (see above): the cast never runs.
    const int cast = pendingCast_[f.src];
    if (cast >= 0 && dtype(f.src) != DType::kF32 &&
        kernel->inputDesc(0).data_type() == memory::data_type::f32) {
      const int x = p_.ops(cast).inputs(0);
      lastUse_[x] = std::max(lastUse_[x], lastUse_[f.src]);
      f.src = x;
    }
    f.residual = stages.back().residual;
    f.addOp = stages.back().addOp;
    f.post = stages.back().post;
    f.int8 = stages.back().int8;
    f.int8Params = stages.back().int8Params;
    f.chained = true;
    f.kernel = std::move(kernel);
    for (const Fusion &stage : stages)
      f.ops.insert(f.ops.end(), stage.ops.begin(), stage.ops.end());
    stages.clear();
    stages.push_back(std::move(f));
  }
  // Stages that are not one kernel run one by one, the last at its last op.
  for (size_t k = 0; k + 1 < stages.size(); ++k)
    GOPT_RETURN_IF_ERROR(emitConvFusion(stages[k]));
  fusedInto_[last] = static_cast<int>(fusions_.size());
  fusions_.push_back(std::move(stages.back()));
  if (last <= o)
    return emitConv(last);
  return Status::success();
}

Status CpuScheduler::emitConv(int o) {
  return emitConvFusion(fusions_[fusedInto_[o]]);
}

Status CpuScheduler::emitConvFusion(Fusion &f) {
  const plan::Op &conv = p_.ops(f.conv);
  std::unique_ptr<cpu::LayoutKernel> kernel = std::move(f.kernel);
  int result = p_.ops(f.ops.back()).outputs(0);
  // An int8 kernel may read or write u8 where the plan's tensor is i8 (the
  // same bits: the values are in [0, 127]); slots keep the plan's types.
  memory::desc dst = cpu::withType(kernel->outputDesc(), dtype(result));
  GOPT_ASSIGN_OR_RETURN(
      int src,
      slotIn(f.src, cpu::withType(kernel->inputDesc(0), dtype(f.src))));
  std::vector<int> inputs = {src};
  for (int i = 1; i < conv.inputs_size() && !f.int8 && !f.chained; ++i) {
    GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(conv.inputs(i)));
    inputs.push_back(slot);
  }
  int out;
  if (f.residual >= 0) {
    GOPT_ASSIGN_OR_RETURN(int residual, slotIn(f.residual, dst));
    int accumulator = residual;
    // In place only where nothing reads the residual later and the conv
    // does not read it, else into a copy; a chain may read it: it reads
    // each chunk of images before it writes them.
    int addOp = f.addOp;
    bool readsResidual =
        root(residual) == root(src) && !(f.chained && residual == src);
    if (!inArena(residual) || !deadAfter(residual, addOp) || readsResidual) {
      accumulator = newSlot(f.residual, dst.get_size());
      GOPT_RETURN_IF_ERROR(
          reorder(residual, dst, accumulator, dst, f.residual));
    }
    inputs.push_back(accumulator); // read by the sum post-op
    out = newSlot(result, dst.get_size(), accumulator);
  } else {
    out = newSlot(result, dst.get_size());
  }
  versions_[result].push_back({dst, out});
  std::string name, kind;
  for (int op : f.ops) {
    name += (name.empty() ? "" : "+") + p_.ops(op).name();
    kind += (kind.empty() ? "" : "+") + p_.ops(op).kind();
  }
  addStep(std::move(kernel), inputs, {out}, name, kind);
  return Status::success();
}

// Looks ahead from an f32 matmul for what oneDNN's matmul computes in the
// same pass over its result (a transformer layer's bias adds, residual adds
// and feed-forward activation), in oneDNN's order: add of a bias row, add of
// a residual of the result's size (reshapes of the row-major result in
// between are free), then relu or gelu. A matmul with none of them runs as
// before.
Status CpuScheduler::scheduleMatmul(int o, bool &done) {
  const plan::Op &op = p_.ops(o);
  done = false;
  if (op.inputs_size() != 2 || op.outputs_size() != 1)
    return Status::success();
  int cur = op.outputs(0);
  if (dtype(cur) != DType::kF32 || shape(cur).empty() ||
      dtype(op.inputs(0)) != DType::kF32 || dtype(op.inputs(1)) != DType::kF32)
    return Status::success();
  const int64_t n = shape(cur).back();
  Fusion f;
  f.conv = o;
  f.src = op.inputs(0);
  f.ops = {o};
  f.matmul = true;
  cpu::MatmulPostOps post;
  // The other operand of binary op `c` reading `t`, or -1.
  auto otherOperand = [&](const plan::Op &c, int t) {
    if (c.inputs_size() != 2 || c.outputs_size() != 1)
      return -1;
    int other = c.inputs(0) == t ? c.inputs(1) : c.inputs(0);
    return other == t ? -1 : other;
  };
  int c = soleConsumer(cur);
  if (c >= 0 && p_.ops(c).kind() == "add") {
    const plan::Op &add = p_.ops(c);
    int other = otherOperand(add, cur);
    if (other >= 0 && dtype(other) == DType::kF32 &&
        shape(add.outputs(0)) == shape(cur) && !shape(other).empty() &&
        shape(other).size() <= shape(cur).size() && shape(other).back() == n &&
        numElements(shape(other)) == n) {
      post.bias = true;
      f.bias = other;
      f.ops.push_back(c);
      cur = add.outputs(0);
    }
  }
  // [reshape ...] add(residual): the sum post-op.
  std::vector<int> reshapes;
  int t = cur;
  for (c = soleConsumer(t); c >= 0; c = soleConsumer(t)) {
    const plan::Op &r = p_.ops(c);
    const std::string &k = r.kind();
    if ((k != "reshape" && k != "flatten" && k != "identity") ||
        r.outputs_size() != 1 || dtype(r.outputs(0)) != DType::kF32)
      break;
    reshapes.push_back(c);
    t = r.outputs(0);
  }
  if (c >= 0 && p_.ops(c).kind() == "add") {
    const plan::Op &add = p_.ops(c);
    int other = otherOperand(add, t);
    if (other >= 0 && dtype(other) == DType::kF32 &&
        dtype(add.outputs(0)) == DType::kF32 && shape(other) == shape(t) &&
        shape(add.outputs(0)) == shape(t) && hasLayouts(other)) {
      post.sum = true;
      f.residual = other;
      f.addOp = c;
      f.ops.insert(f.ops.end(), reshapes.begin(), reshapes.end());
      f.ops.push_back(c);
      cur = add.outputs(0);
    }
  }
  c = soleConsumer(cur);
  if (c >= 0 && dtype(p_.ops(c).outputs(0)) == DType::kF32) {
    const plan::Op &a = p_.ops(c);
    cpu::ConvPostOps::Eltwise e;
    e.algorithm = dnnl::algorithm::undef;
    if (a.kind() == "relu")
      e.algorithm = dnnl::algorithm::eltwise_relu;
    else if (a.kind() == "gelu")
      e.algorithm = OpAttrs(a).getString("approximate") == "tanh"
                        ? dnnl::algorithm::eltwise_gelu_tanh
                        : dnnl::algorithm::eltwise_gelu_erf;
    if (e.algorithm != dnnl::algorithm::undef) {
      post.eltwise.push_back(e);
      f.ops.push_back(c);
    }
  }
  if (f.ops.size() == 1)
    return Status::success();
  GOPT_ASSIGN_OR_RETURN(f.kernel,
                        cpu::createFusedMatmul(makeKernelConfig(in_, o), post));
  if (!f.kernel)
    return Status::success();
  int last = f.ops.back();
  // The matmul now reads its operands at `last`: keep them alive until then.
  for (int in : op.inputs())
    lastUse_[in] = std::max(lastUse_[in], last);
  if (f.bias >= 0)
    lastUse_[f.bias] = std::max(lastUse_[f.bias], last);
  fusedInto_[last] = static_cast<int>(fusions_.size());
  for (int fused : f.ops)
    if (fused != last)
      fusedInto_[fused] = -2;
  fusions_.push_back(std::move(f));
  done = true;
  return Status::success();
}

// Emits the fused matmul at the last op of its chain: inputs a, b, the
// bias and the accumulator (the residual, in place when nothing reads it
// later, else a copy); the result is the last op's, in the plain layout.
Status CpuScheduler::emitMatmul(int o) {
  Fusion &f = fusions_[fusedInto_[o]];
  const plan::Op &op = p_.ops(f.conv);
  std::unique_ptr<cpu::LayoutKernel> kernel = std::move(f.kernel);
  int result = p_.ops(f.ops.back()).outputs(0);
  std::vector<int> inputs;
  for (int t : op.inputs()) {
    GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(t));
    inputs.push_back(slot);
  }
  if (f.bias >= 0) {
    GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(f.bias));
    inputs.push_back(slot);
  }
  memory::desc dst = plain(result);
  int out = result;
  if (f.residual >= 0) {
    GOPT_ASSIGN_OR_RETURN(int residual, plainSlot(f.residual));
    int accumulator = residual;
    bool readByMatmul = false;
    for (int slot : inputs)
      readByMatmul |= root(slot) == root(residual);
    if (!isIntermediate(result)) {
      // A graph result has storage of its own: the residual is copied in.
      accumulator = result;
      GOPT_RETURN_IF_ERROR(reorder(residual, plain(f.residual), result,
                                   plain(f.residual), f.residual));
    } else {
      if (!inArena(residual) || !deadAfter(residual, f.addOp) || readByMatmul) {
        accumulator = newSlot(f.residual, dst.get_size());
        GOPT_RETURN_IF_ERROR(reorder(residual, plain(f.residual), accumulator,
                                     plain(f.residual), f.residual));
      }
      s_.slots[result].aliasOf = accumulator;
    }
    inputs.push_back(accumulator); // read by the sum post-op
  }
  plainReady_[result] = true;
  std::string name, kind;
  for (int fused : f.ops) {
    name += (name.empty() ? "" : "+") + p_.ops(fused).name();
    kind += (kind.empty() ? "" : "+") + p_.ops(fused).kind();
  }
  addStep(std::move(kernel), inputs, {out}, name, kind);
  return Status::success();
}

// Matches, around softmax op `sm`, the attention PyTorch's
// nn.MultiheadAttention exports over sequence-major [L, N, d] heads:
//   s = matmul(transpose(q' , [1,0,2]), transpose(k, [1,2,0]))
//   o = matmul(softmax(s, axis=-1), transpose(v, [1,0,2]))
//   [result = transpose(o, [1,0,2])]
// with q' = q / c or q * c for a constant scalar c, or q itself; every
// intermediate read by the chain alone. The chain becomes one step at its
// last op (createAttention); q, k and v stay alive until then.
void CpuScheduler::matchAttention(int sm) {
  const plan::Op &softmax = p_.ops(sm);
  if (softmax.inputs_size() != 1 || softmax.outputs_size() != 1 ||
      fusedInto_[sm] != -1)
    return;
  int s = softmax.inputs(0), probs = softmax.outputs(0);
  if (shape(s).size() != 3 || dtype(s) != DType::kF32)
    return;
  int64_t axis = OpAttrs(softmax).getInt("axis");
  if (axis != 2 && axis != -1)
    return;
  auto plainMatmul = [&](int o) {
    if (o < 0 || p_.ops(o).kind() != "matmul" || p_.ops(o).inputs_size() != 2)
      return false;
    OpAttrs attrs(p_.ops(o));
    return !attrs.getBool("transpose_a") && !attrs.getBool("transpose_b");
  };
  // The transpose with permutation `perm` producing `t` for its sole reader
  // `reader`, or -1.
  auto transposeOf = [&](int t, int reader, std::vector<int64_t> perm) {
    int o = producer_[t];
    if (o < 0 || soleConsumer(t) != reader || p_.ops(o).kind() != "transpose" ||
        OpAttrs(p_.ops(o)).getInts("perm") != perm || fusedInto_[o] != -1)
      return -1;
    return o;
  };
  int mm1 = producer_[s];
  if (!plainMatmul(mm1) || soleConsumer(s) != sm)
    return;
  int mm2 = soleConsumer(probs);
  if (!plainMatmul(mm2) || p_.ops(mm2).inputs(0) != probs)
    return;
  int tq = transposeOf(p_.ops(mm1).inputs(0), mm1, {1, 0, 2});
  int tk = transposeOf(p_.ops(mm1).inputs(1), mm1, {1, 2, 0});
  int tv = transposeOf(p_.ops(mm2).inputs(1), mm2, {1, 0, 2});
  if (tq < 0 || tk < 0 || tv < 0)
    return;
  cpu::AttentionShape a;
  std::vector<int> ops = {tq, tk, tv, mm1, sm, mm2};
  int q = p_.ops(tq).inputs(0);
  int scaleOp = producer_[q];
  if (scaleOp >= 0 && fusedInto_[scaleOp] == -1 && soleConsumer(q) == tq &&
      (p_.ops(scaleOp).kind() == "div" || p_.ops(scaleOp).kind() == "mul") &&
      p_.ops(scaleOp).inputs_size() == 2) {
    const plan::Op &op = p_.ops(scaleOp);
    bool divide = op.kind() == "div";
    // The constant is the divisor, or either factor.
    int c = op.inputs(1), x = op.inputs(0);
    if (!divide && constant(x) && !constant(c))
      std::swap(c, x);
    if (constant(c) && dtype(c) == DType::kF32 && numElements(shape(c)) == 1 &&
        shape(x) == shape(q) && shape(c).size() <= shape(q).size()) {
      a.hasScale = true;
      a.divide = divide;
      a.scale = *static_cast<const float *>(constant(c));
      ops.push_back(scaleOp);
      q = x;
    }
  }
  int k = p_.ops(tk).inputs(0), v = p_.ops(tv).inputs(0);
  // [L, N, d] operands, plain; the shapes are checked below.
  for (auto [t, operand] : {std::pair{q, &a.q}, {k, &a.k}, {v, &a.v}})
    if (shape(t).size() == 3)
      *operand = {shape(t)[1] * shape(t)[2], shape(t)[1], 0, shape(t)[2], 0};
  const std::vector<int> chain = ops;
  std::vector<int> sliceResults; // slices read in place
  // The chain's op reading `t`, if it is its only reader.
  auto readByChainOnly = [&](int t) {
    int c = soleConsumer(t);
    return c >= 0 && std::find(chain.begin(), chain.end(), c) != chain.end();
  };
  // A head operand that is a reshape of a slice of the last axis of a
  // [L, B, W] tensor (PyTorch's q, k, v of one fused projection) is read in
  // place: the slice and the reshape join the chain.
  auto viewOfSlice = [&](int &t, cpu::AttentionOperand &operand) {
    int reshape = producer_[t];
    if (reshape < 0 || !readByChainOnly(t) || shape(t).size() != 3 ||
        (p_.ops(reshape).kind() != "reshape" &&
         p_.ops(reshape).kind() != "dynamic_reshape") ||
        fusedInto_[reshape] != -1)
      return;
    int sliced = p_.ops(reshape).inputs(0);
    int slice = producer_[sliced];
    if (slice < 0 || p_.ops(slice).kind() != "slice" ||
        fusedInto_[slice] != -1 || p_.ops(slice).inputs_size() != 1 ||
        !isIntermediate(sliced))
      return;
    // Besides the reshape, only shape ops (the exporter's reshape targets)
    // may read the slice: they read its dimensions, not its data.
    for (int c : consumers_[sliced])
      if (c != reshape && p_.ops(c).kind() != "shape")
        return;
    int whole = p_.ops(slice).inputs(0);
    const Shape &in = shape(whole), &part = shape(sliced), &heads = shape(t);
    OpAttrs attrs(p_.ops(slice));
    std::vector<int64_t> starts = attrs.getInts("starts"),
                         steps = attrs.getInts("steps");
    if (dtype(whole) != DType::kF32 || in.size() != 3 || part.size() != 3 ||
        starts.size() != 3 || steps != std::vector<int64_t>{1, 1, 1} ||
        starts[0] != 0 || starts[1] != 0 || starts[2] < 0 || part[0] != in[0] ||
        part[1] != in[1] || starts[2] + part[2] > in[2] || heads[0] != in[0] ||
        heads[2] == 0 || part[2] % heads[2] != 0 ||
        heads[1] != in[1] * (part[2] / heads[2]))
      return;
    operand = {in[1] * in[2], part[2] / heads[2], in[2], heads[2], starts[2]};
    ops.push_back(reshape);
    ops.push_back(slice);
    sliceResults.push_back(sliced);
    t = whole;
  };
  int headsOfQ = shape(q).size() == 3 ? shape(q)[1] : 0;
  const Shape qHeads = shape(q), kHeads = shape(k), vHeads = shape(v);
  viewOfSlice(q, a.q);
  viewOfSlice(k, a.k);
  viewOfSlice(v, a.v);
  int result = p_.ops(mm2).outputs(0);
  int to = soleConsumer(result);
  if (to >= 0 && p_.ops(to).kind() == "transpose" &&
      OpAttrs(p_.ops(to)).getInts("perm") == std::vector<int64_t>{1, 0, 2}) {
    ops.push_back(to);
    result = p_.ops(to).outputs(0);
  } else {
    a.sequenceMajorOut = false;
  }
  for (int t : {q, k, v, result})
    if (dtype(t) != DType::kF32 || shape(t).size() != 3)
      return;
  const Shape &qs = qHeads, &ks = kHeads, &vs = vHeads;
  a.queries = qs[0];
  a.heads = headsOfQ;
  a.depth = qs[2];
  a.keys = ks[0];
  a.valueDepth = vs[2];
  if (ks[1] != a.heads || ks[2] != a.depth || vs[0] != a.keys ||
      vs[1] != a.heads || a.heads == 0 || a.queries == 0 || a.keys == 0)
    return;
  // The slices are never computed; their shape readers see a planned
  // buffer of the right dimensions.
  for (int t : sliceResults)
    plainReady_[t] = true;
  Fusion f;
  f.attention = true;
  f.q = q;
  f.k = k;
  f.v = v;
  f.attentionKernel = cpu::createAttention(a);
  int last = *std::max_element(ops.begin(), ops.end());
  for (int t : {q, k, v})
    lastUse_[t] = std::max(lastUse_[t], last);
  // Profiles name the step after its ops in plan order.
  std::sort(ops.begin(), ops.end());
  f.ops = ops;
  fusedInto_[last] = static_cast<int>(fusions_.size());
  for (int op : ops)
    if (op != last)
      fusedInto_[op] = -2;
  fusions_.push_back(std::move(f));
}

Status CpuScheduler::emitAttention(int o) {
  Fusion &f = fusions_[fusedInto_[o]];
  std::vector<int> inputs;
  for (int t : {f.q, f.k, f.v}) {
    GOPT_RETURN_IF_ERROR(materialize(t));
    GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(t));
    inputs.push_back(slot);
  }
  int result = p_.ops(o).outputs(0);
  std::string name, kind;
  for (int fused : f.ops) {
    name += (name.empty() ? "" : "+") + p_.ops(fused).name();
    kind += (kind.empty() ? "" : "+") + p_.ops(fused).kind();
  }
  addStep(std::move(f.attentionKernel), inputs, {result}, name, kind);
  plainReady_[result] = true;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Static int8: quantize/dequantize chains
//===----------------------------------------------------------------------===//

// Whether `op` (quantize or dequantize) has one constant scale.
bool CpuScheduler::perTensorScale(const plan::Op &op, float &scale) const {
  if (op.inputs_size() != 2)
    return false;
  int s = op.inputs(1);
  if (!constant(s) || dtype(s) != DType::kF32 || numElements(shape(s)) != 1)
    return false;
  scale = *static_cast<const float *>(constant(s));
  return true;
}

// Whether `x` is dequantize(q, scale) of an int8 `q` with one constant
// scale: q's values then stand for x.
bool CpuScheduler::quantizedSource(int x, int &q, float &scale) const {
  int d = producer_[x];
  if (d < 0 || p_.ops(d).kind() != "dequantize" ||
      !perTensorScale(p_.ops(d), scale))
    return false;
  q = p_.ops(d).inputs(0);
  return dtype(q) == DType::kI8;
}

// Whether `w` is dequantize(constant int8, constant scales) with one scale
// or one per index along `axis`.
bool CpuScheduler::quantizedWeight(int w, int64_t axis, const int8_t *&data,
                                   std::vector<float> &scales) const {
  int d = producer_[w];
  if (d < 0 || p_.ops(d).kind() != "dequantize")
    return false;
  const plan::Op &op = p_.ops(d);
  int q = op.inputs(0), s = op.inputs(1);
  if (dtype(q) != DType::kI8 || !constant(q) || !constant(s) ||
      dtype(s) != DType::kF32)
    return false;
  int64_t rank = static_cast<int64_t>(shape(q).size());
  int64_t opAxis = OpAttrs(op).getInt("axis");
  if (opAxis < 0)
    opAxis += rank;
  int64_t n = numElements(shape(s));
  if (n != 1 && (opAxis != axis || axis >= rank || n != shape(q)[axis]))
    return false;
  data = static_cast<const int8_t *>(constant(q));
  const float *values = static_cast<const float *>(constant(s));
  scales.assign(values, values + n);
  return true;
}

// The quantize with one constant scale that alone reads `t`, or -1.
int CpuScheduler::soleQuantize(int t, float &scale) const {
  int c = soleConsumer(t);
  if (c < 0 || p_.ops(c).kind() != "quantize" ||
      dtype(p_.ops(c).outputs(0)) != DType::kI8 ||
      !perTensorScale(p_.ops(c), scale))
    return -1;
  return c;
}

// A dequantize of an intermediate result with constant scales waits until
// something other than an int8 kernel reads its result.
bool CpuScheduler::deferrable(int o) const {
  const plan::Op &op = p_.ops(o);
  return op.kind() == "dequantize" && op.inputs_size() == 2 &&
         op.outputs_size() == 1 && isIntermediate(op.outputs(0)) &&
         dtype(op.inputs(0)) == DType::kI8 && constant(op.inputs(1));
}

StatusOr<std::unique_ptr<Kernel>>
CpuScheduler::pendingCastKernel(int o, const memory::desc &to) {
  const plan::Op &op = p_.ops(o);
  float scale = 1.0f;
  if (op.kind() == "quantize" && perTensorScale(op, scale))
    scale = 1.0f / scale;
  return cpu::createReorder(plain(op.inputs(0)), to, scale);
}

Status CpuScheduler::materialize(int t, bool casts) {
  if (casts && pendingCast_[t] >= 0) {
    int o = pendingCast_[t];
    pendingCast_[t] = -1;
    const plan::Op &op = p_.ops(o);
    int x = op.inputs(0);
    GOPT_ASSIGN_OR_RETURN(int src, plainSlot(x));
    GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel,
                          pendingCastKernel(o, plain(t)));
    addStep(std::move(kernel), {src}, {t}, op.name(), op.kind());
    plainReady_[t] = true;
    return Status::success();
  }
  int d = deferred_[t];
  if (d < 0)
    return Status::success();
  deferred_[t] = -1;
  if (constant(p_.ops(d).inputs(0)))
    return precomputeDequantize(d);
  bool done = false;
  // In its input's layout where a reader takes that layout too.
  if (hasBlockedConsumer(t))
    GOPT_RETURN_IF_ERROR(scheduleQuantization(d, done));
  if (!done)
    GOPT_RETURN_IF_ERROR(scheduleDefault(d));
  return Status::success();
}

// Per-tensor quantize/dequantize of a tensor held only in a blocked layout:
// one pass over the blocked buffer into the same layout in the other type.
Status CpuScheduler::scheduleQuantization(int o, bool &done) {
  const plan::Op &op = p_.ops(o);
  done = false;
  float scale;
  int x = op.inputs(0), y = op.outputs(0);
  if (!perTensorScale(op, scale))
    return Status::success();
  bool quantize = op.kind() == "quantize";
  // A plain f32 tensor (a graph input) is quantized when a reader asks for
  // it, into the layout it asks for (oneDNN's reorder multiplies by 1 /
  // scale where the kernel divides: the same int8 values but at rare
  // rounding ties).
  if (quantize && versions_[x].empty() && dtype(x) == DType::kF32 &&
      dtype(y) == DType::kI8 && isIntermediate(y) && shape(x).size() == 4 &&
      scale > 0 && std::isfinite(scale) && hasBlockedConsumer(y)) {
    GOPT_RETURN_IF_ERROR(plainSlot(x).status());
    pendingCast_[y] = o;
    lastUse_[x] = std::max(lastUse_[x], lastUse_[y]);
    done = true;
    return Status::success();
  }
  if (plainReady_[x] || versions_[x].empty())
    return Status::success();
  if (dtype(x) != (quantize ? DType::kF32 : DType::kI8) ||
      dtype(y) != (quantize ? DType::kI8 : DType::kF32))
    return Status::success();
  memory::desc from = currentDesc(x);
  GOPT_ASSIGN_OR_RETURN(int src, slotIn(x, from));
  GOPT_ASSIGN_OR_RETURN(int scales, plainSlot(op.inputs(1)));
  memory::desc to = cpu::withType(from, dtype(y));
  int out = newSlot(y, to.get_size());
  versions_[y].push_back({to, out});
  addStep(cpu::createFlatQuantization(
              quantize,
              static_cast<int64_t>(from.get_size() / dtypeSize(dtype(x)))),
          {src, scales}, {out}, op.name(), op.kind());
  done = true;
  return Status::success();
}

// conv2d(dequantize(q_x), dequantize(constant int8 W)) and the ops after
// it that one int8 primitive computes:
//   conv [-> relu/relu6/clip] [-> quantize]
//   conv -> quantize -> dequantize -> add(residual) [-> activation]
//        [-> quantize]
// The residual chain keeps the intermediate quantize's rounding and
// saturation (round and clip post-ops), so it computes what the plan does;
// its destination is int8 when the chain ends in a quantize and the
// residual is dequantized int8 too (summed from its int8 values), else f32.
Status CpuScheduler::scheduleInt8Conv(int o, bool &done) {
  const plan::Op &conv = p_.ops(o);
  done = false;
  OpAttrs attrs(conv);
  cpu::Int8Params p;
  int qx;
  bool oihw = attrs.getString("filter_format") == "OIHW";
  if (conv.inputs_size() < 2 ||
      !quantizedSource(conv.inputs(0), qx, p.srcScale) ||
      !quantizedWeight(conv.inputs(1), oihw ? 0 : 3, p.weights, p.weightScales))
    return Status::success();
  if (conv.inputs_size() == 3) {
    int b = conv.inputs(2);
    if (!constant(b) || dtype(b) != DType::kF32)
      return Status::success();
    p.bias = static_cast<const float *>(constant(b));
  }
  p.srcUnsigned = nonNegative_[qx];
  p.activation = attrs.getString("activation");
  Fusion f;
  f.conv = o;
  f.ops = {o};
  f.int8 = true;
  f.src = qx;
  int cur = conv.outputs(0);
  auto activation = [&](int c) {
    const plan::Op &op = p_.ops(c);
    if (op.kind() == "relu" || op.kind() == "relu6") {
      p.activation = op.kind();
      return true;
    }
    if (op.kind() == "clip") {
      p.activation = "clip";
      p.clipMin = static_cast<float>(OpAttrs(op).getFloat("min"));
      p.clipMax = static_cast<float>(OpAttrs(op).getFloat("max"));
      return true;
    }
    return false;
  };
  if (p.activation == "none") {
    int c = soleConsumer(cur);
    float requantScale;
    if (c >= 0 && activation(c)) {
      f.ops.push_back(c);
      cur = p_.ops(c).outputs(0);
    } else if (c >= 0 && soleQuantize(cur, requantScale) == c) {
      // conv -> quantize -> dequantize -> add(residual)?
      int qa = p_.ops(c).outputs(0);
      int d = soleConsumer(qa);
      float dqScale;
      int add = -1;
      if (d >= 0 && p_.ops(d).kind() == "dequantize" &&
          perTensorScale(p_.ops(d), dqScale) && dqScale == requantScale)
        add = soleConsumer(p_.ops(d).outputs(0));
      int xa = d >= 0 ? p_.ops(d).outputs(0) : -1;
      int other = -1;
      if (add >= 0 && p_.ops(add).kind() == "add" &&
          p_.ops(add).inputs_size() == 2) {
        const plan::Op &a = p_.ops(add);
        other = a.inputs(0) == xa ? a.inputs(1) : a.inputs(0);
        if (other == xa || dtype(other) != DType::kF32 ||
            dtype(a.outputs(0)) != DType::kF32 || shape(other) != shape(xa) ||
            shape(a.outputs(0)) != shape(xa))
          other = -1;
      }
      if (other >= 0) {
        p.requantize = true;
        p.requantScale = requantScale;
        p.sum = true;
        f.ops.insert(f.ops.end(), {c, d, add});
        f.addOp = add;
        cur = p_.ops(add).outputs(0);
        int act = soleConsumer(cur);
        if (act >= 0 && activation(act)) {
          f.ops.push_back(act);
          cur = p_.ops(act).outputs(0);
        }
        float dstScale, otherScale;
        int qo;
        int q = soleQuantize(cur, dstScale);
        if (q >= 0 && quantizedSource(other, qo, otherScale)) {
          // Summed from the residual's int8 values: scaled by its scale.
          p.sumScale = otherScale;
          f.residual = qo;
        } else {
          f.residual = other; // f32; a final quantize runs on its own
        }
      } else { // conv -> quantize only
        f.ops.push_back(c);
        cur = qa;
        p.dstScale = requantScale;
      }
    }
  }
  // A quantize after the chain writes the int8 destination (with an int8
  // residual only: oneDNN sums values of the destination's size).
  float dstScale;
  int q = dtype(cur) == DType::kI8 ? -1 : soleQuantize(cur, dstScale);
  if (q >= 0 && (!p.sum || dtype(f.residual) == DType::kI8)) {
    f.ops.push_back(q);
    cur = p_.ops(q).outputs(0);
    p.dstScale = dstScale;
  }
  if (dtype(cur) == DType::kI8) {
    p.dstUnsigned = p.activation == "relu" || p.activation == "relu6" ||
                    (p.activation == "clip" && p.clipMin >= 0);
    p.sumSigned = p.sum && p.dstUnsigned;
  }
  GOPT_ASSIGN_OR_RETURN(f.kernel,
                        cpu::createInt8Conv(makeKernelConfig(in_, o), p));
  if (!f.kernel)
    return Status::success(); // the ops run one by one
  f.int8Params = p;
  int last = f.ops.back();
  lastUse_[qx] = std::max(lastUse_[qx], last);
  GOPT_ASSIGN_OR_RETURN(bool chained, joinChain(f, o));
  if (chained) {
    done = true;
    return Status::success();
  }
  fusedInto_[last] = static_cast<int>(fusions_.size());
  for (int op : f.ops)
    if (op != last)
      fusedInto_[op] = -2;
  fusions_.push_back(std::move(f));
  done = true;
  if (last == o)
    return emitConv(o);
  return Status::success();
}

// matmul(dequantize(q_a), dequantize(constant int8 B)) [-> quantize] as one
// oneDNN int8 matmul on plain layouts.
Status CpuScheduler::scheduleInt8Matmul(int o, bool &done) {
  const plan::Op &op = p_.ops(o);
  done = false;
  cpu::Int8Params p;
  int qa;
  bool transposeB = OpAttrs(op).getBool("transpose_b");
  if (op.inputs_size() != 2 || op.outputs_size() != 1 ||
      !quantizedSource(op.inputs(0), qa, p.srcScale) ||
      !quantizedWeight(op.inputs(1), transposeB ? 0 : 1, p.weights,
                       p.weightScales))
    return Status::success();
  p.srcUnsigned = nonNegative_[qa];
  int result = op.outputs(0);
  float dstScale;
  int q = soleQuantize(result, dstScale);
  if (q >= 0) {
    p.dstScale = dstScale;
    result = p_.ops(q).outputs(0);
  }
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel,
                        cpu::createInt8Matmul(makeKernelConfig(in_, o), p));
  if (!kernel)
    return Status::success();
  GOPT_ASSIGN_OR_RETURN(int src, plainSlot(qa));
  addStep(std::move(kernel), {src}, {result},
          q >= 0 ? op.name() + "+" + p_.ops(q).name() : op.name(),
          q >= 0 ? "matmul+quantize" : "matmul");
  plainReady_[result] = true;
  if (q >= 0)
    fusedInto_[q] = -2;
  done = true;
  return Status::success();
}

// max_pool(dequantize(q, s)) -> quantize(., s): the maximum commutes with a
// positive scale and with rounding, so the pool runs on q's int8 values in
// q's layout and writes the quantize's result (--gopt-quantize gives a
// max_pool's result its input's scale).
Status CpuScheduler::scheduleInt8MaxPool(int o, bool &done) {
  const plan::Op &op = p_.ops(o);
  done = false;
  int q;
  float srcScale, dstScale;
  if (op.kind() != "max_pool" || op.outputs_size() != 1 ||
      !quantizedSource(op.inputs(0), q, srcScale))
    return Status::success();
  int quant = soleQuantize(op.outputs(0), dstScale);
  if (quant < 0 || dstScale != srcScale)
    return Status::success();
  memory::desc src = currentDesc(q);
  KernelConfig config = makeKernelConfig(in_, o);
  config.inputTypes[0] = config.outputTypes[0] = DType::kI8;
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<cpu::LayoutKernel> kernel,
                        cpu::createLayoutPool(config, src));
  if (!kernel)
    return Status::success();
  GOPT_ASSIGN_OR_RETURN(int srcSlot, slotIn(q, src));
  int result = p_.ops(quant).outputs(0);
  memory::desc dst = kernel->outputDesc();
  int out = newSlot(result, dst.get_size());
  versions_[result].push_back({dst, out});
  addStep(std::move(kernel), {srcSlot}, {out},
          op.name() + "+" + p_.ops(quant).name(), "max_pool+quantize");
  fusedInto_[quant] = -2;
  done = true;
  return Status::success();
}

// A global average pooling whose input is a deferred dequantize(q, scale)
// read by nothing else (a static-int8 network's head: MobileNetV2's last
// convolution's int8 result): one pass summing q's int8 values in q's
// layout (cpu::createDequantizeGlobalAvgPool), so the dequantized f32
// tensor is never written. GOPT_INT8_GLOBAL_POOL=0 keeps the two steps.
Status CpuScheduler::scheduleInt8GlobalPool(int o, bool &done) {
  const plan::Op &op = p_.ops(o);
  const int x = op.inputs(0), d = deferred_[x];
  float scale;
  if (d < 0 || soleConsumer(x) != o || shape(x).size() != 4 ||
      dtype(op.outputs(0)) != DType::kF32 || !perTensorScale(p_.ops(d), scale))
    return Status::success();
  const int q = p_.ops(d).inputs(0);
  if (dtype(q) != DType::kI8 || versions_[q].empty())
    return Status::success();
  memory::desc src = currentDesc(q);
  std::unique_ptr<cpu::LayoutKernel> kernel =
      cpu::createDequantizeGlobalAvgPool(src, scale);
  if (!kernel)
    return Status::success();
  GOPT_ASSIGN_OR_RETURN(int srcSlot, slotIn(q, src));
  const int result = op.outputs(0);
  memory::desc dst = kernel->outputDesc();
  int out = newSlot(result, dst.get_size());
  versions_[result].push_back({dst, out});
  addStep(std::move(kernel), {srcSlot}, {out},
          p_.ops(d).name() + "+" + op.name(), "dequantize+global_avg_pool");
  deferred_[x] = -1;
  done = true;
  return Status::success();
}

// pooling, global average pooling and batch norm on the input's layout.
Status CpuScheduler::scheduleLayoutOp(int o) {
  const plan::Op &op = p_.ops(o);
  int x = op.inputs(0);
  memory::desc src = currentDesc(x);
  KernelConfig config = makeKernelConfig(in_, o);
  StatusOr<std::unique_ptr<cpu::LayoutKernel>> kernel =
      std::unique_ptr<cpu::LayoutKernel>();
  if (op.kind() == "max_pool" || op.kind() == "avg_pool")
    kernel = cpu::createLayoutPool(config, src);
  else if (op.kind() == "global_avg_pool")
    kernel = cpu::createLayoutGlobalAvgPool(config, src);
  // A relu reading only the batch norm's result (DenseNet's pre-activation
  // BN -> ReLU -> conv) runs in the batch norm's pass.
  int relu = -1;
  if (op.kind() == "batch_norm") {
    int c = soleConsumer(op.outputs(0));
    if (c >= 0 && p_.ops(c).kind() == "relu" && p_.ops(c).outputs_size() == 1 &&
        dtype(p_.ops(c).outputs(0)) == dtype(op.outputs(0)))
      relu = c;
    if (std::unique_ptr<cpu::LayoutKernel> own =
            cpu::createBlockedBatchNorm(config, src, relu >= 0))
      kernel = std::move(own);
    else
      kernel = cpu::createLayoutBatchNorm(config, src, relu >= 0);
  }
  GOPT_RETURN_IF_ERROR(kernel.status());
  if (!*kernel)
    return scheduleDefault(o);
  GOPT_ASSIGN_OR_RETURN(int srcSlot, slotIn(x, src));
  std::vector<int> inputs = {srcSlot};
  for (int i = 1; i < op.inputs_size(); ++i) {
    GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(op.inputs(i)));
    inputs.push_back(slot);
  }
  int result = relu >= 0 ? p_.ops(relu).outputs(0) : op.outputs(0);
  memory::desc dst = (*kernel)->outputDesc();
  int out = newSlot(result, dst.get_size());
  versions_[result].push_back({dst, out});
  if (relu >= 0) {
    fusedInto_[relu] = -2;
    addStep(std::move(kernel).value(), inputs, {out},
            op.name() + "+" + p_.ops(relu).name(), "batch_norm+relu");
  } else {
    addStep(std::move(kernel).value(), inputs, {out}, op.name(), op.kind());
  }
  return Status::success();
}

// concat along the channels of NCHW tensors some of which are blocked (a
// DenseNet or Inception block's convolution results): in that layout, so
// neither the sources nor the result go through the plain layout.
Status CpuScheduler::scheduleConcat(int o, bool &done) {
  const plan::Op &op = p_.ops(o);
  done = false;
  int result = op.outputs(0);
  const Shape &outShape = shape(result);
  int64_t axis = OpAttrs(op).getInt("axis");
  if (axis < 0)
    axis += static_cast<int64_t>(outShape.size());
  if (outShape.size() != 4 || axis != 1 || !hasLayouts(result))
    return Status::success();
  memory::data_type type = cpu::oneDnnType(dtype(result));
  for (int t : op.inputs())
    if (dtype(t) != dtype(result) || shape(t).size() != 4)
      return Status::success();
  // The blocking of a source, nChw16c first (Winograd's and its
  // neighbours'): DenseNet concatenates a block's input (NHWC, from a
  // pooling) with every layer's nChw16c features, and one reorder of the
  // input (kept for the block's later concats) keeps the block in nChw16c.
  std::optional<memory::format_tag> tag;
  for (memory::format_tag candidate :
       {memory::format_tag::aBcd16b, memory::format_tag::aBcd8b,
        memory::format_tag::acdb})
    for (int t : op.inputs())
      if (!tag && currentDesc(t) == memory::desc(shape(t), type, candidate))
        tag = candidate;
  if (!tag)
    return Status::success();
  // Channel blocks: each source must start on a block boundary.
  int64_t block = *tag == memory::format_tag::aBcd16b  ? 16
                  : *tag == memory::format_tag::aBcd8b ? 8
                                                       : 1;
  std::vector<memory::desc> srcs;
  for (int t : op.inputs()) {
    if (shape(t)[1] % block != 0)
      return Status::success();
    srcs.emplace_back(shape(t), type, *tag);
  }
  memory::desc dst(outShape, type, *tag);
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<cpu::LayoutKernel> kernel,
                        cpu::createLayoutConcat(srcs, dst));
  if (!kernel)
    return Status::success();
  std::vector<int> inputs;
  for (size_t i = 0; i < srcs.size(); ++i) {
    GOPT_ASSIGN_OR_RETURN(int slot,
                          slotIn(op.inputs(static_cast<int>(i)), srcs[i]));
    inputs.push_back(slot);
  }
  int out = newSlot(result, dst.get_size());
  versions_[result].push_back({dst, out});
  addStep(std::move(kernel), inputs, {out}, op.name(), op.kind());
  done = true;
  return Status::success();
}

int CpuScheduler::concatSourceConv(int t, int c,
                                   std::string &activation) const {
  if (!isIntermediate(t) || consumers_[t] != std::vector<int>{c} ||
      producer_[t] < 0)
    return -1;
  int conv = producer_[t];
  activation = "none";
  if (p_.ops(conv).kind() == "relu") {
    int x = p_.ops(conv).inputs(0);
    if (!isIntermediate(x) || consumers_[x] != std::vector<int>{conv} ||
        producer_[x] < 0)
      return -1;
    conv = producer_[x];
    activation = "relu";
    if (p_.ops(conv).kind() != "conv2d" ||
        OpAttrs(p_.ops(conv)).getString("activation") != "none")
      return -1;
  } else if (p_.ops(conv).kind() == "conv2d") {
    activation = OpAttrs(p_.ops(conv)).getString("activation");
  } else {
    return -1;
  }
  const plan::Op &op = p_.ops(conv);
  if (op.outputs_size() != 1 || op.inputs_size() < 2 ||
      OpAttrs(op).getString("data_format") != "NCHW" ||
      dtype(op.inputs(0)) != DType::kF32 ||
      dtype(op.outputs(0)) != DType::kF32 || shape(op.inputs(0)).size() != 4 ||
      fusedInto_[conv] != -1 || chainOf_[conv] >= 0)
    return -1;
  for (int i = 1; i < op.inputs_size(); ++i)
    if (!constant(op.inputs(i)))
      return -1;
  return conv;
}

// SqueezeNet's fire modules concatenate two convolutions' results, which the
// next fire module or pooling reads: a copy of the whole tensor (15% of a
// batch-8 step) that writing each result into its place avoids. All of the
// concat's sources or none: the kernels are made here, before the first
// source runs.
Status CpuScheduler::planConcatInPlace(int c) {
  concatTried_[c] = true;
  const plan::Op &op = p_.ops(c);
  if (op.outputs_size() != 1 || op.inputs_size() < 2)
    return Status::success();
  int result = op.outputs(0);
  const Shape &outShape = shape(result);
  int64_t axis = OpAttrs(op).getInt("axis");
  if (axis < 0)
    axis += static_cast<int64_t>(outShape.size());
  if (outShape.size() != 4 || axis != 1 || dtype(result) != DType::kF32)
    return Status::success();
  memory::desc dst(outShape, memory::data_type::f32,
                   memory::format_tag::aBcd16b);
  std::vector<int> convs;
  std::vector<std::unique_ptr<cpu::LayoutKernel>> kernels;
  int64_t offset = 0;
  for (int t : op.inputs()) {
    std::string activation;
    int conv = concatSourceConv(t, c, activation);
    if (conv < 0 || std::find(convs.begin(), convs.end(), conv) != convs.end())
      return Status::success();
    // The source's layout where it is computed already (the squeeze
    // convolution's), else nChw16c, which its producer then writes.
    int x = p_.ops(conv).inputs(0);
    memory::desc src(shape(x), memory::data_type::f32,
                     memory::format_tag::aBcd16b);
    if (pendingCast_[x] < 0 && deferred_[x] < 0 &&
        (plainReady_[x] || !versions_[x].empty()))
      src = currentDesc(x);
    cpu::ConvPostOps post;
    post.activation = activation;
    GOPT_ASSIGN_OR_RETURN(std::unique_ptr<cpu::LayoutKernel> kernel,
                          cpu::createConvIntoConcat(makeKernelConfig(in_, conv),
                                                    post, src, dst, offset));
    if (!kernel) { // the source's layout may have no kernel: try nChw16c
      GOPT_ASSIGN_OR_RETURN(kernel,
                            cpu::createConvIntoConcat(
                                makeKernelConfig(in_, conv), post,
                                memory::desc(shape(x), memory::data_type::f32,
                                             memory::format_tag::aBcd16b),
                                dst, offset));
    }
    if (!kernel)
      return Status::success();
    convs.push_back(conv);
    kernels.push_back(std::move(kernel));
    offset += shape(t)[1];
  }
  ConcatInPlace entry;
  entry.concat = c;
  entry.dst = dst;
  concatsInPlace_.push_back(entry);
  for (size_t i = 0; i < convs.size(); ++i) {
    intoConcat_[convs[i]] = static_cast<int>(concatsInPlace_.size()) - 1;
    intoConcatKernel_[convs[i]] = std::move(kernels[i]);
  }
  fusedInto_[c] = -2; // its sources write its result
  return Status::success();
}

Status CpuScheduler::emitIntoConcat(int o) {
  const plan::Op &conv = p_.ops(o);
  ConcatInPlace &entry = concatsInPlace_[intoConcat_[o]];
  std::unique_ptr<cpu::LayoutKernel> kernel = std::move(intoConcatKernel_[o]);
  if (!kernel)
    return internalError("conv2d '", conv.name(), "' has no kernel");
  GOPT_ASSIGN_OR_RETURN(int src, slotIn(conv.inputs(0), kernel->inputDesc(0)));
  std::vector<int> inputs = {src};
  for (int i = 1; i < conv.inputs_size(); ++i) {
    GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(conv.inputs(i)));
    inputs.push_back(slot);
  }
  int result = p_.ops(entry.concat).outputs(0);
  if (entry.slot < 0) {
    entry.slot = newSlot(result, entry.dst.get_size());
    versions_[result].push_back({entry.dst, entry.slot});
  }
  std::string name = conv.name(), kind = conv.kind();
  int relu = soleConsumer(conv.outputs(0));
  if (relu >= 0 && p_.ops(relu).kind() == "relu") {
    fusedInto_[relu] = -2;
    name += "+" + p_.ops(relu).name();
    kind += "+relu";
  }
  // Each source's step names the concat it writes into (its profile row).
  addStep(std::move(kernel), inputs, {entry.slot},
          name + "+" + p_.ops(entry.concat).name(), kind + "+concat");
  return Status::success();
}

// Zero-preserving elementwise ops on tensors that are only blocked run on
// the blocked buffer, padding included.
Status CpuScheduler::scheduleElementwise(int o, bool &done) {
  const plan::Op &op = p_.ops(o);
  done = false;
  int result = op.outputs(0);
  memory::desc md;
  bool blocked = false;
  for (int t : op.inputs()) {
    if (dtype(t) != dtype(result) || shape(t) != shape(result))
      return Status::success();
    if (!plainReady_[t] && !blocked) {
      md = currentDesc(t);
      blocked = md != plain(t);
    }
  }
  if (!blocked || !hasLayouts(result))
    return Status::success();
  std::vector<int> inputs;
  for (int t : op.inputs()) {
    GOPT_ASSIGN_OR_RETURN(int slot, slotIn(t, md));
    inputs.push_back(slot);
  }
  int out = newSlot(result, md.get_size());
  versions_[result].push_back({md, out});
  addStep(cpu::createFlatElementwise(
              op, dtype(result),
              static_cast<int64_t>(md.get_size() / dtypeSize(dtype(result)))),
          inputs, {out}, op.name(), op.kind());
  done = true;
  return Status::success();
}

int CpuScheduler::swishConsumer(int t, int &sigmoidOp) const {
  sigmoidOp = -1;
  if (consumers_[t].size() != 2 || !isIntermediate(t))
    return -1;
  for (int i = 0; i < 2; ++i) {
    int s = consumers_[t][i], m = consumers_[t][1 - i];
    const plan::Op &sig = p_.ops(s), &mul = p_.ops(m);
    if (fusedInto_[s] != -1 || fusedInto_[m] != -1 || sig.kind() != "sigmoid" ||
        mul.kind() != "mul" || sig.inputs_size() != 1 ||
        mul.inputs_size() != 2 || sig.outputs_size() != 1 ||
        mul.outputs_size() != 1)
      continue;
    int g = sig.outputs(0);
    bool reads = (mul.inputs(0) == t && mul.inputs(1) == g) ||
                 (mul.inputs(1) == t && mul.inputs(0) == g);
    if (!reads || !isIntermediate(g) || consumers_[g].size() != 1 ||
        dtype(g) != dtype(t) || shape(g) != shape(t) || s > m)
      continue;
    sigmoidOp = s;
    return m;
  }
  return -1;
}

bool CpuScheduler::hasBlockedConsumer(int t) const {
  for (int c : consumers_[t]) {
    const plan::Op &op = p_.ops(c);
    const std::string &k = op.kind();
    bool nchw = OpAttrs(op).getString("data_format") == "NCHW";
    float scale;
    if (((k == "conv2d" || k == "max_pool" || k == "avg_pool" ||
          k == "global_avg_pool" || k == "batch_norm") &&
         nchw) ||
        cpu::isZeroPreservingElementwise(op) ||
        ((k == "quantize" || k == "dequantize") && perTensorScale(op, scale)))
      return true;
  }
  return false;
}

// x * s with x [N, C, H, W] held only in a blocked layout and s one value
// per (N, C) (squeeze-and-excitation's gate) runs on x's blocked buffer,
// reading s in whatever layout it has: else x is reordered to the plain
// layout for the multiply and its result back for the next conv.
Status CpuScheduler::scheduleChannelMul(int o, bool &done) {
  const plan::Op &op = p_.ops(o);
  done = false;
  if (op.inputs_size() != 2 || op.outputs_size() != 1)
    return Status::success();
  int result = op.outputs(0);
  const Shape &y = shape(result);
  int x = shape(op.inputs(0)) == y ? op.inputs(0) : op.inputs(1);
  int gate = x == op.inputs(0) ? op.inputs(1) : op.inputs(0);
  const Shape &g = shape(gate);
  if (y.size() != 4 || shape(x) != y || !hasLayouts(result) ||
      dtype(x) != dtype(result) || dtype(gate) != dtype(result) ||
      g.size() != 4 || g[0] != y[0] || g[1] != y[1] || g[2] != 1 || g[3] != 1 ||
      plainReady_[x] || versions_[x].empty())
    return Status::success();
  memory::desc md = currentDesc(x);
  if (md == plain(x))
    return Status::success();
  memory::desc gateMd = plainReady_[gate] || versions_[gate].empty()
                            ? plain(gate)
                            : currentDesc(gate);
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel,
                        cpu::createChannelMul(md, gateMd));
  if (!kernel && gateMd != plain(gate)) {
    gateMd = plain(gate);
    GOPT_ASSIGN_OR_RETURN(kernel, cpu::createChannelMul(md, gateMd));
  }
  if (!kernel)
    return Status::success();
  GOPT_ASSIGN_OR_RETURN(int src, slotIn(x, md));
  GOPT_ASSIGN_OR_RETURN(int gateSlot, slotIn(gate, gateMd));
  int out = newSlot(result, md.get_size());
  versions_[result].push_back({md, out});
  addStep(std::move(kernel), {src, gateSlot}, {out}, op.name(), op.kind());
  done = true;
  return Status::success();
}

memory::desc CpuScheduler::blockedDesc(const Shape &shape, int64_t block) {
  return memory::desc(shape, memory::data_type::f32,
                      block == 16  ? memory::format_tag::aBcd16b
                      : block == 8 ? memory::format_tag::aBcd8b
                                   : memory::format_tag::acdb);
}

int CpuScheduler::soleDataReader(int t) const {
  if (!isIntermediate(t))
    return -1;
  int reader = -1;
  for (int c : consumers_[t]) {
    if (fusedInto_[c] != -1)
      return -1;
    if (p_.ops(c).kind() == "shape")
      continue;
    if (reader >= 0 && reader != c)
      return -1;
    reader = c;
  }
  return reader;
}

// ShuffleNet's concat(x1, branch) along channels, then reshape to
// [N, g, C/g, H, W], transpose of axes 1 and 2 and reshape to [N, C, H, W]
// (torchvision's channel_shuffle), runs as one step that reads each source
// in the layout it has and writes the shuffled NCHW result: otherwise a
// oneDNN concat of blocked sources (the plain x1 reordered to blocked
// first), a reorder to plain and a transpose. The concat's and reshapes'
// results are never computed; their shape readers (the exporter's reshape
// targets) see planned buffers of the right dimensions.
Status CpuScheduler::scheduleConcatShuffle(int o, bool &done) {
  done = false;
  if (!cpu::channelShuffleEnabled())
    return Status::success();
  const plan::Op &concat = p_.ops(o);
  int t0 = concat.outputs(0);
  const Shape &y = shape(t0);
  if (y.size() != 4 || dtype(t0) != DType::kF32 || concat.inputs_size() < 1)
    return Status::success();
  int64_t axis = OpAttrs(concat).getInt("axis");
  if (axis < 0)
    axis += 4;
  if (axis != 1)
    return Status::success();
  auto isReshape = [&](int op) {
    const std::string &k = p_.ops(op).kind();
    return k == "reshape" || k == "dynamic_reshape";
  };
  int r1 = soleDataReader(t0);
  if (r1 < 0 || !isReshape(r1))
    return Status::success();
  int t1 = p_.ops(r1).outputs(0);
  const Shape &split = shape(t1);
  if (split.size() != 5 || split[0] != y[0] || split[1] <= 0 ||
      split[1] * split[2] != y[1] || split[3] != y[2] || split[4] != y[3])
    return Status::success();
  int tr = soleDataReader(t1);
  if (tr < 0 || p_.ops(tr).kind() != "transpose" ||
      OpAttrs(p_.ops(tr)).getInts("perm") !=
          std::vector<int64_t>{0, 2, 1, 3, 4})
    return Status::success();
  int t2 = p_.ops(tr).outputs(0);
  int r2 = soleDataReader(t2);
  if (r2 < 0 || !isReshape(r2))
    return Status::success();
  int t3 = p_.ops(r2).outputs(0);
  if (shape(t3) != y || dtype(t3) != DType::kF32)
    return Status::success();
  // Each source as it is: a blocked version where it has one, else plain.
  std::vector<cpu::ShuffleLayout> sources;
  std::vector<int> inputs;
  for (int x : concat.inputs()) {
    const Shape &xs = shape(x);
    if (dtype(x) != DType::kF32 || xs.size() != 4 || xs[0] != y[0] ||
        xs[2] != y[2] || xs[3] != y[3])
      return Status::success();
  }
  for (int x : concat.inputs()) {
    const Shape &xs = shape(x);
    cpu::ShuffleLayout source;
    source.channels = xs[1];
    int slot = -1;
    if (!plainReady_[x] && pendingCast_[x] < 0)
      for (const Version &v : versions_[x])
        for (int64_t b : {int64_t(16), int64_t(8), xs[1]})
          if (slot < 0 && v.md == blockedDesc(xs, b)) {
            slot = v.slot;
            source.block = b;
          }
    if (slot < 0) {
      GOPT_ASSIGN_OR_RETURN(slot, plainSlot(x));
    }
    sources.push_back(source);
    inputs.push_back(slot);
  }
  // The next unit's halves are written straight away, the half a
  // convolution reads in nChw16c (f32 convolutions' layout here), the other
  // plain (the next concat's source); else the whole result, plain.
  std::vector<std::pair<int, int64_t>> slices = channelSlices(t3);
  std::vector<cpu::ShuffleLayout> outputs;
  std::vector<int> results;
  for (const auto &[slice, first] : slices) {
    int t = p_.ops(slice).outputs(0);
    int reader = soleDataReader(t);
    cpu::ShuffleLayout l;
    l.channels = shape(t)[1];
    if (reader >= 0 && p_.ops(reader).kind() == "conv2d" &&
        OpAttrs(p_.ops(reader)).getString("data_format") == "NCHW")
      l.block = 16;
    outputs.push_back(l);
    results.push_back(t);
  }
  if (outputs.empty()) {
    outputs.push_back({y[1], 0});
    results.push_back(t3);
  }
  std::unique_ptr<Kernel> kernel =
      cpu::createConcatShuffle(y[0], y[2], y[3], sources, split[1], outputs);
  if (!kernel)
    return Status::success();
  std::vector<int> outSlots;
  for (size_t i = 0; i < results.size(); ++i) {
    int t = results[i];
    if (outputs[i].block == 0) {
      outSlots.push_back(t);
      plainReady_[t] = true;
    } else {
      memory::desc md = blockedDesc(shape(t), outputs[i].block);
      int slot = newSlot(t, md.get_size());
      versions_[t].push_back({md, slot});
      outSlots.push_back(slot);
    }
  }
  std::string name = concat.name() + "+" + p_.ops(tr).name(),
              kind = "concat+shuffle";
  for (const auto &slice : slices) {
    fusedInto_[slice.first] = -2;
    name += "+" + p_.ops(slice.first).name();
  }
  if (!slices.empty())
    kind += "+slice";
  addStep(std::move(kernel), inputs, outSlots, name, kind);
  for (int op : {r1, tr, r2})
    fusedInto_[op] = -2;
  // The shape readers of the fused ops' results see planned buffers.
  for (int t : {t0, t1, t2})
    plainReady_[t] = true;
  if (!slices.empty())
    plainReady_[t3] = true;
  done = true;
  return Status::success();
}

bool CpuScheduler::pointwiseConstConv(int c, int from, int64_t in, int64_t &out,
                                      std::vector<float> &w,
                                      std::vector<float> &b) const {
  const plan::Op &op = p_.ops(c);
  if (op.kind() != "conv2d" || op.inputs_size() < 2 || op.inputs_size() > 3 ||
      op.outputs_size() != 1 || op.inputs(0) != from)
    return false;
  OpAttrs attrs(op);
  if (attrs.getString("data_format") != "NCHW" ||
      attrs.getString("filter_format") != "OIHW" ||
      attrs.getInt("groups") != 1 ||
      attrs.getWindowInts("strides") != std::vector<int64_t>{1, 1} ||
      attrs.getWindowInts("dilations") != std::vector<int64_t>{1, 1} ||
      attrs.getWindowInts("pads") != std::vector<int64_t>{0, 0, 0, 0} ||
      attrs.getString("padding") == "SAME")
    return false;
  int wt = op.inputs(1);
  const Shape &ws = shape(wt);
  if (dtype(wt) != DType::kF32 || !constant(wt) || ws.size() != 4 ||
      ws[1] != in || ws[2] != 1 || ws[3] != 1 ||
      dtype(op.outputs(0)) != DType::kF32)
    return false;
  out = ws[0];
  const float *wd = static_cast<const float *>(constant(wt));
  w.assign(wd, wd + out * in);
  b.assign(out, 0.0f);
  if (op.inputs_size() == 3) {
    int bt = op.inputs(2);
    if (dtype(bt) != DType::kF32 || !constant(bt) ||
        numElements(shape(bt)) != out)
      return false;
    const float *bd = static_cast<const float *>(constant(bt));
    b.assign(bd, bd + out);
  }
  return true;
}

// MobileNetV3's and EfficientNet's squeeze-and-excitation (global average
// pool of x, 1x1 conv, relu or SiLU, 1x1 conv, sigmoid or hard sigmoid,
// times x) is one step of gopt's kernel on x's layout: otherwise five to
// seven steps, four of them oneDNN calls on [N, C, 1, 1] tensors whose
// fixed cost outweighs their work.
Status CpuScheduler::scheduleSqueezeExcite(int o, bool &done) {
  done = false;
  const plan::Op &pool = p_.ops(o);
  int x = pool.inputs(0), pooled = pool.outputs(0);
  const Shape &xs = shape(x);
  if (xs.size() != 4 || dtype(x) != DType::kF32 || pool.outputs_size() != 1 ||
      shape(pooled) != Shape{xs[0], xs[1], 1, 1})
    return Status::success();
  // The one-step kernel alone (the gated x written) at batch 1; at any
  // batch where it folds into the projection after it (below).
  const bool alone = cpu::squeezeExciteEnabled(xs[0]);
  if (!alone && !cpu::squeezeExciteProjectEnabled())
    return Status::success();
  auto activation = [](const std::string &a, cpu::SeActivation &act) {
    act.kind = a.empty() || a == "none" ? cpu::SeActivation::kNone
               : a == "relu"            ? cpu::SeActivation::kRelu
               : a == "relu6"           ? cpu::SeActivation::kRelu6
                                        : cpu::SeActivation::kSigmoid;
    return a.empty() || a == "none" || a == "relu" || a == "relu6" ||
           a == "sigmoid";
  };
  cpu::SqueezeExciteParams p;
  p.n = xs[0];
  p.channels = xs[1];
  p.hw = xs[2] * xs[3];
  std::vector<int> ops;
  std::string name = pool.name(), kind = pool.kind();
  auto take = [&](int op) {
    ops.push_back(op);
    name += "+" + p_.ops(op).name();
    kind += "+" + p_.ops(op).kind();
  };
  int c1 = soleConsumer(pooled);
  if (c1 < 0 ||
      !pointwiseConstConv(c1, pooled, p.channels, p.squeezed, p.w1, p.b1) ||
      !activation(OpAttrs(p_.ops(c1)).getString("activation"), p.act1))
    return Status::success();
  take(c1);
  int h = p_.ops(c1).outputs(0);
  if (p.act1.kind == cpu::SeActivation::kNone) {
    int sig = -1, m = swishConsumer(h, sig);
    if (m >= 0) {
      p.act1.kind = cpu::SeActivation::kSilu;
      take(sig);
      take(m);
      h = p_.ops(m).outputs(0);
    }
  }
  int64_t back = 0;
  int c2 = soleConsumer(h);
  if (c2 < 0 || !pointwiseConstConv(c2, h, p.squeezed, back, p.w2, p.b2) ||
      back != p.channels ||
      !activation(OpAttrs(p_.ops(c2)).getString("activation"), p.act2))
    return Status::success();
  take(c2);
  int gate = p_.ops(c2).outputs(0);
  int g = soleConsumer(gate);
  if (p.act2.kind == cpu::SeActivation::kNone && g >= 0 &&
      p_.ops(g).outputs_size() == 1 &&
      shape(p_.ops(g).outputs(0)) == shape(gate)) {
    const plan::Op &gop = p_.ops(g);
    if (gop.kind() == "hard_sigmoid") {
      p.act2.kind = cpu::SeActivation::kHardSigmoid;
      p.act2.alpha = static_cast<float>(OpAttrs(gop).getFloat("alpha"));
      p.act2.beta = static_cast<float>(OpAttrs(gop).getFloat("beta"));
    } else if (gop.kind() == "sigmoid") {
      p.act2.kind = cpu::SeActivation::kSigmoid;
    }
    if (p.act2.kind != cpu::SeActivation::kNone) {
      take(g);
      gate = gop.outputs(0);
    }
  }
  int mul = soleConsumer(gate);
  if (mul < 0 || p_.ops(mul).kind() != "mul" ||
      p_.ops(mul).inputs_size() != 2 || p_.ops(mul).outputs_size() != 1)
    return Status::success();
  const plan::Op &m = p_.ops(mul);
  int result = m.outputs(0);
  if (!((m.inputs(0) == x && m.inputs(1) == gate) ||
        (m.inputs(1) == x && m.inputs(0) == gate)) ||
      shape(result) != xs || dtype(result) != DType::kF32)
    return Status::success();
  take(mul);
  // x as it is: its blocked version where it has one, else plain.
  int src = -1;
  memory::desc md = plain(x);
  if (!plainReady_[x] && pendingCast_[x] < 0)
    for (const Version &v : versions_[x])
      for (int64_t b : {int64_t(16), int64_t(8), xs[1]})
        if (src < 0 && v.md == blockedDesc(xs, b)) {
          src = v.slot;
          p.block = b;
          md = v.md;
        }
  // Fold the gate into the 1x1 projection that follows (and its residual
  // add) where its weights are small next to x (at most a quarter of x's
  // pixels as output channels: EfficientNet-B0's blocks to 28x28): the
  // gate rescales the weights' input channels, per image, and x * gate is
  // never written nor read back (SqueezeExcite.h).
  int proj = soleConsumer(result), addOp = -1, residual = -1;
  memory::desc projMd;
  if (proj >= 0 && cpu::squeezeExciteProjectEnabled() &&
      (p.block == 16 || p.block == xs[1]) &&
      pointwiseConstConv(proj, result, xs[1], p.projOut, p.projW, p.projBias) &&
      p.hw >= 4 * p.projOut) {
    const std::string a = OpAttrs(p_.ops(proj)).getString("activation");
    int y = p_.ops(proj).outputs(0);
    const Shape &ys = shape(y);
    if ((a.empty() || a == "none") && ys.size() == 4 && ys[2] * ys[3] == p.hw) {
      projMd = blockedDesc(ys, p.block == 16 ? 16 : ys[1]);
      int add = soleConsumer(y);
      if (add >= 0 && p_.ops(add).kind() == "add" &&
          p_.ops(add).inputs_size() == 2 && p_.ops(add).outputs_size() == 1) {
        const plan::Op &ao = p_.ops(add);
        int other = ao.inputs(0) == y ? ao.inputs(1) : ao.inputs(0);
        if (other != y && shape(other) == ys && dtype(other) == DType::kF32 &&
            shape(ao.outputs(0)) == ys && dtype(ao.outputs(0)) == DType::kF32 &&
            (plainReady_[other] || !versions_[other].empty())) {
          addOp = add;
          residual = other;
        }
      }
    } else {
      p.projOut = 0;
    }
  } else {
    p.projOut = 0;
  }
  if (p.projOut == 0) {
    p.projW.clear();
    p.projBias.clear();
    proj = -1;
    if (!alone)
      return Status::success();
  }
  if (src < 0) {
    GOPT_ASSIGN_OR_RETURN(src, plainSlot(x));
  }
  p.residual = residual >= 0;
  std::unique_ptr<Kernel> kernel = cpu::createSqueezeExcite(std::move(p));
  if (!kernel)
    return Status::success();
  if (proj >= 0) {
    std::vector<int> inputs = {src};
    if (residual >= 0) {
      GOPT_ASSIGN_OR_RETURN(int r, slotIn(residual, projMd));
      inputs.push_back(r);
    }
    take(proj);
    if (addOp >= 0)
      take(addOp);
    int t = p_.ops(ops.back()).outputs(0);
    int out = newSlot(t, projMd.get_size());
    versions_[t].push_back({projMd, out});
    addStep(std::move(kernel), inputs, {out}, name, kind);
    for (int op : ops)
      fusedInto_[op] = -2;
    done = true;
    return Status::success();
  }
  int out = result;
  if (md != plain(x)) {
    out = newSlot(result, md.get_size());
    versions_[result].push_back({md, out});
  } else {
    plainReady_[result] = true;
  }
  addStep(std::move(kernel), {src}, {out}, name, kind);
  for (int op : ops)
    fusedInto_[op] = -2;
  done = true;
  return Status::success();
}

std::vector<std::pair<int, int64_t>> CpuScheduler::channelSlices(int t) const {
  std::vector<std::pair<int, int64_t>> none, slices;
  const Shape &x = shape(t);
  if (!isIntermediate(t) || x.size() != 4)
    return none;
  // Per slice: its op, first channel (-1: not known yet) and the tensor
  // holding its end (dynamic_slice; -1 for slice).
  struct Found {
    int op;
    int64_t first;
    int endsTensor;
    int startsTensor;
  };
  std::vector<Found> found;
  auto scalar = [&](int tensor, int64_t &v) {
    const void *data = constant(tensor);
    if (!data || dtype(tensor) != DType::kI64 ||
        numElements(shape(tensor)) != 1)
      return false;
    std::memcpy(&v, data, sizeof v);
    return true;
  };
  for (int c : consumers_[t]) {
    const plan::Op &op = p_.ops(c);
    if (fusedInto_[c] != -1)
      return none;
    if (op.kind() == "shape")
      continue;
    const Shape &part = shape(op.outputs(0));
    if (part.size() != 4 || part[0] != x[0] || part[2] != x[2] ||
        part[3] != x[3] || part[1] <= 0 || dtype(op.outputs(0)) != dtype(t) ||
        op.inputs(0) != t)
      return none;
    if (op.kind() == "slice") {
      OpAttrs attrs(op);
      std::vector<int64_t> starts = attrs.getInts("starts"),
                           steps = attrs.getInts("steps");
      if (starts.size() != 4 || steps != std::vector<int64_t>{1, 1, 1, 1} ||
          starts[0] != 0 || starts[2] != 0 || starts[3] != 0)
        return none;
      found.push_back({c, starts[1], -1, -1});
    } else if (op.kind() == "dynamic_slice" && op.inputs_size() == 5) {
      int64_t axis, step, start = -1;
      if (!scalar(op.inputs(3), axis) || (axis != 1 && axis != -3) ||
          !scalar(op.inputs(4), step) || step != 1)
        return none;
      if (scalar(op.inputs(1), start) && start < 0)
        start += x[1];
      found.push_back({c, start, op.inputs(2), op.inputs(1)});
    } else {
      return none;
    }
  }
  // A start computed at run time that is another slice's end (the
  // exporter's chunk: [0, e) and [e, 2e)) is where that slice ends: its
  // resolved size is that end, clamped and normalized alike.
  for (size_t round = 0; round < found.size(); ++round)
    for (Found &f : found)
      for (const Found &g : found)
        if (f.first < 0 && g.first >= 0 && f.startsTensor >= 0 &&
            f.startsTensor == g.endsTensor)
          f.first = g.first + shape(p_.ops(g.op).outputs(0))[1];
  std::sort(found.begin(), found.end(),
            [](const Found &a, const Found &b) { return a.first < b.first; });
  int64_t next = 0;
  for (const Found &f : found) {
    if (f.first != next)
      return none;
    next += shape(p_.ops(f.op).outputs(0))[1];
    slices.push_back({f.op, f.first});
  }
  if (next != x[1] || slices.size() < 2)
    return none;
  return slices;
}

// A cast between f32 and bf16 of a tensor held only in a blocked layout
// converts while it reorders: into the same layout where a consumer keeps
// blocked layouts (a bf16 region starts), else straight into the plain
// layout (a bf16 region ends), one pass over the data either way.
Status CpuScheduler::scheduleCast(int o, bool &done) {
  const plan::Op &op = p_.ops(o);
  done = false;
  int x = op.inputs(0), y = op.outputs(0);
  if (!hasLayouts(x) || !hasLayouts(y))
    return Status::success();
  // A plain tensor (a graph input) converts when a reader asks for it, into
  // the layout it asks for.
  if (versions_[x].empty() && isIntermediate(y) && hasBlockedConsumer(y) &&
      shape(x).size() == 4) {
    GOPT_RETURN_IF_ERROR(plainSlot(x).status());
    pendingCast_[y] = o;
    lastUse_[x] = std::max(lastUse_[x], lastUse_[y]);
    done = true;
    return Status::success();
  }
  if (plainReady_[x] || versions_[x].empty())
    return Status::success();
  memory::desc from = currentDesc(x);
  GOPT_ASSIGN_OR_RETURN(int src, slotIn(x, from));
  memory::desc to =
      hasBlockedConsumer(y) ? cpu::withType(from, dtype(y)) : plain(y);
  int out = y;
  if (to == plain(y)) {
    plainReady_[y] = true;
  } else {
    out = newSlot(y, to.get_size());
    versions_[y].push_back({to, out});
  }
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel,
                        cpu::createReorder(from, to));
  addStep(std::move(kernel), {src}, {out}, op.name(), op.kind());
  done = true;
  return Status::success();
}

// Ops that only reinterpret the row-major data share their input's buffer.
Status CpuScheduler::scheduleAlias(int o, bool &done) {
  const plan::Op &op = p_.ops(o);
  done = false;
  const std::string &k = op.kind();
  bool reinterprets = k == "reshape" || k == "flatten" || k == "identity" ||
                      k == "stop_gradient" || k == "transfer" ||
                      (k == "dropout" && !OpAttrs(op).getBool("training"));
  // dynamic_reshape's target shape was read when the session resolved
  // shapes; at run time it only reinterprets its data operand.
  bool dynamicReshape = k == "dynamic_reshape" && op.inputs_size() == 2;
  if (!(reinterprets && op.inputs_size() == 1) && !dynamicReshape)
    return Status::success();
  if (op.outputs_size() != 1)
    return Status::success();
  int x = op.inputs(0), y = op.outputs(0);
  if (!isIntermediate(y) || (*in_.dtypes)[x] != (*in_.dtypes)[y])
    return Status::success();
  if (!plainReady_[x] && !isIntermediate(x))
    return Status::success();
  GOPT_ASSIGN_OR_RETURN(int src, plainSlot(x));
  if (!inArena(src))
    return Status::success();
  s_.slots[y].aliasOf = src;
  plainReady_[y] = true;
  addStep(nullptr, {src}, {y}, op.name(), op.kind(), /*isAlias=*/true);
  done = true;
  return Status::success();
}

// A dequantize of a constant (weight-only int8 weights read by f32 ops) is
// computed here, once: the f32 weight then is a constant to its readers (a
// oneDNN conv reorders it once), instead of being dequantized every run.
Status CpuScheduler::precomputeDequantize(int o) {
  const plan::Op &op = p_.ops(o);
  int t = op.outputs(0);
  GOPT_ASSIGN_OR_RETURN(
      std::unique_ptr<Kernel> kernel,
      KernelRegistry::global().create("cpu", makeKernelConfig(in_, o)));
  std::shared_ptr<void> data = allocateAligned(s_.slots[t].bytes);
  if (!data && s_.slots[t].bytes)
    return resourceExhausted("cannot allocate the dequantized weight '",
                             info(t).name(), "'");
  std::vector<Tensor> inputs,
      outputs = {Tensor::view(dtype(t), shape(t), data.get())};
  for (int in : op.inputs())
    inputs.push_back(
        Tensor::view(dtype(in), shape(in), const_cast<void *>(constant(in))));
  GOPT_RETURN_IF_ERROR(kernel->run(inputs, outputs));
  in_.constants[t] = data.get();
  s_.slots[t].precomputed = std::move(data);
  plainReady_[t] = true;
  return Status::success();
}

// relu_grad(g, y) whose result dy only a gradient op and dy's per-channel
// reduce_sum (a bias gradient) read, where one step computes both from g
// and y and dy is never written (docs/architecture.md, "Decisions and
// why"): a one-channel NHWC filter gradient (the first convolution of a
// grayscale CNN) or a max_pool_grad of tiling NHWC windows (a relu before
// a 2x2 pool). The gradient op's other operand (the convolution's source,
// the pool's input) was computed in the forward pass, before the
// relu_grad, which is where the step runs.
bool CpuScheduler::matchReluGradBiasPair(int o, int &gradient,
                                         int &biasSum) const {
  const plan::Op &op = p_.ops(o);
  if (op.inputs_size() != 2 || op.outputs_size() != 1)
    return false;
  const int dy = op.outputs(0);
  if (!isIntermediate(dy) || consumers_[dy].size() != 2 ||
      shape(dy).size() != 4)
    return false;
  gradient = biasSum = -1;
  for (int c : consumers_[dy]) {
    const plan::Op &reader = p_.ops(c);
    if (fusedInto_[c] != -1 || reader.outputs_size() != 1)
      return false;
    if ((reader.kind() == "conv2d_backprop_filter" ||
         reader.kind() == "max_pool_grad") &&
        reader.inputs_size() == 2 && reader.inputs(1) == dy &&
        reader.inputs(0) != dy)
      gradient = c;
    else if (reader.kind() == "reduce_sum" && reader.inputs_size() == 1)
      biasSum = c;
  }
  if (gradient < 0 || biasSum < 0)
    return false;
  // The sum over N, H and W of dy's channels: axes {0, 1, 2}, either sign.
  std::vector<int64_t> axes = OpAttrs(p_.ops(biasSum)).getInts("axes");
  std::vector<bool> reduced(4, false);
  for (int64_t a : axes)
    if (a >= -4 && a < 4)
      reduced[a < 0 ? a + 4 : a] = true;
  const int bias = p_.ops(biasSum).outputs(0);
  int64_t biasElements = 1;
  for (int64_t d : shape(bias))
    biasElements *= d;
  if (axes.size() != 3 || !reduced[0] || !reduced[1] || !reduced[2] ||
      reduced[3] || biasElements != shape(dy)[3])
    return false;
  return producer_[p_.ops(gradient).inputs(0)] < o;
}

// dx (a pool gradient's result at op `o`) read only by an NHWC
// conv2d_backprop_input (as dy) and conv2d_backprop_filter (as dy) whose
// other operands (the filter, the conv's source) exist before `o`.
bool CpuScheduler::matchConvGrads(int dx, int o, int &dataGrad,
                                  int &filterGrad) const {
  dataGrad = filterGrad = -1;
  if (!isIntermediate(dx) || consumers_[dx].size() != 2)
    return false;
  for (int c : consumers_[dx]) {
    const plan::Op &reader = p_.ops(c);
    if (fusedInto_[c] != -1 || reader.inputs_size() != 2 ||
        reader.outputs_size() != 1 ||
        OpAttrs(reader).getString("data_format") != "NHWC")
      return false;
    if (reader.kind() == "conv2d_backprop_input" && reader.inputs(0) == dx &&
        reader.inputs(1) != dx && producer_[reader.inputs(1)] < o)
      dataGrad = c;
    else if (reader.kind() == "conv2d_backprop_filter" &&
             reader.inputs(1) == dx && reader.inputs(0) != dx &&
             producer_[reader.inputs(0)] < o)
      filterGrad = c;
  }
  return dataGrad >= 0 && filterGrad >= 0;
}

void CpuScheduler::planDenseBlocks() {
  const char *setting = std::getenv("GOPT_DENSE_CONCAT");
  if (setting && std::strcmp(setting, "0") == 0)
    return;
  denseIntoSlice_ = !(setting && std::strcmp(setting, "copy") == 0);
  // Past batch 1 only with GOPT_DENSE_CONCAT=all: at batch 8 the copies
  // went (oneDNN's primitives 533 -> 420 ms a step) but whole steps were
  // no faster on the loaded machine it was measured on.
  const bool anyBatch = setting && std::strcmp(setting, "all") == 0;
  // f32 channel concats of one image in whole 16-channel blocks, by their
  // first source (a dense block's input).
  std::map<int, std::vector<int>> byFirst;
  for (int o = 0; o < p_.ops_size(); ++o) {
    const plan::Op &op = p_.ops(o);
    if (op.kind() != "concat" || op.outputs_size() != 1 ||
        op.inputs_size() < 1 || !isIntermediate(op.outputs(0)))
      continue;
    const Shape &s = shape(op.outputs(0));
    int64_t axis = OpAttrs(op).getInt("axis");
    if (axis < 0)
      axis += static_cast<int64_t>(s.size());
    if (s.size() != 4 || axis != 1 || dtype(op.outputs(0)) != DType::kF32 ||
        (s[0] != 1 && !anyBatch))
      continue;
    bool ok = true;
    for (int t : op.inputs())
      ok = ok && dtype(t) == DType::kF32 && shape(t).size() == 4 &&
           shape(t)[1] % 16 == 0;
    if (ok)
      byFirst[op.inputs(0)].push_back(o);
  }
  for (const auto &[first, concats] : byFirst) {
    if (concats.size() < 2)
      continue;
    int widest = concats[0];
    for (int c : concats)
      if (p_.ops(c).inputs_size() > p_.ops(widest).inputs_size())
        widest = c;
    const plan::Op &w = p_.ops(widest);
    std::vector<int> sources(w.inputs().begin(), w.inputs().end());
    // Each source once (a slice each), each concat a prefix of them.
    std::vector<int> sorted = sources;
    std::sort(sorted.begin(), sorted.end());
    bool ok = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
    for (int c : concats)
      for (int i = 0; ok && i < p_.ops(c).inputs_size(); ++i)
        ok = p_.ops(c).inputs(i) == sources[i];
    if (!ok)
      continue;
    DenseBlock b;
    b.concat = widest;
    b.dst = memory::desc(shape(w.outputs(0)), memory::data_type::f32,
                         memory::format_tag::aBcd16b);
    b.sources = sources;
    b.inSlice.assign(sources.size(), false);
    int64_t offset = 0;
    for (int t : sources) {
      b.offsets.push_back(offset);
      offset += shape(t)[1];
    }
    denseBlocks_.push_back(std::move(b));
    for (int c : concats)
      denseBlockOf_[c] = static_cast<int>(denseBlocks_.size()) - 1;
  }
}

Status CpuScheduler::emitDenseConcat(int o) {
  DenseBlock &b = denseBlocks_[denseBlockOf_[o]];
  const plan::Op &op = p_.ops(o);
  const int result = op.outputs(0);
  if (b.slot < 0)
    b.slot = newSlot(p_.ops(b.concat).outputs(0), b.dst.get_size());
  // The sources not in the buffer yet (one per layer) go into their slices.
  for (int i = 0; i < op.inputs_size(); ++i) {
    if (b.inSlice[i])
      continue;
    b.inSlice[i] = true;
    const int t = b.sources[i];
    GOPT_RETURN_IF_ERROR(materialize(t));
    memory::desc from = currentDesc(t);
    GOPT_ASSIGN_OR_RETURN(int src, slotIn(t, from));
    const Shape &s = shape(t);
    memory::desc to =
        b.dst.submemory_desc({s[0], s[1], s[2], s[3]}, {0, b.offsets[i], 0, 0});
    GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel,
                          cpu::createReorder(from, to));
    addStep(std::move(kernel), {src}, {b.slot},
            op.name() + ":" + info(t).name(), "concat-slice");
  }
  if (o == b.concat) {
    versions_[result].push_back({b.dst, b.slot});
    return Status::success();
  }
  // Past one image, the prefix's images lie as far apart as the buffer's:
  // its readers get that strided layout (the batch norms read it as it is,
  // others through a reorder).
  const Shape &s = shape(result);
  memory::desc md =
      s[0] == 1
          ? memory::desc(s, memory::data_type::f32, memory::format_tag::aBcd16b)
          : b.dst.submemory_desc({s[0], s[1], s[2], s[3]}, {0, 0, 0, 0});
  int alias = newSlot(result, b.dst.get_size(), b.slot);
  versions_[result].push_back({md, alias});
  return Status::success();
}

StatusOr<bool> CpuScheduler::emitIntoDenseBlock(int o) {
  const plan::Op &conv = p_.ops(o);
  const int t = conv.outputs(0);
  if (!isIntermediate(t) || consumers_[t].empty() || conv.inputs_size() < 2)
    return false;
  const int block = denseBlockOf_[consumers_[t][0]];
  for (int c : consumers_[t])
    if (block < 0 || denseBlockOf_[c] != block)
      return false;
  DenseBlock &b = denseBlocks_[block];
  auto it = std::find(b.sources.begin(), b.sources.end(), t);
  if (it == b.sources.end())
    return false;
  const size_t i = it - b.sources.begin();
  const int x = conv.inputs(0);
  for (int k = 1; k < conv.inputs_size(); ++k)
    if (!constant(conv.inputs(k)))
      return false;
  cpu::ConvPostOps post;
  post.activation = OpAttrs(conv).getString("activation");
  // oneDNN's Winograd 2x3 kernel ran DenseNet's 128 -> 32 convolutions
  // slower than the direct one (see winogradConv): only where it is taken
  // anyway.
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<cpu::LayoutKernel> kernel,
                        cpu::createConvIntoConcat(makeKernelConfig(in_, o),
                                                  post, currentDesc(x), b.dst,
                                                  b.offsets[i],
                                                  /*anyWinogradTile=*/false));
  if (!kernel)
    return false;
  GOPT_ASSIGN_OR_RETURN(int src, slotIn(x, kernel->inputDesc(0)));
  std::vector<int> inputs = {src};
  for (int k = 1; k < conv.inputs_size(); ++k) {
    GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(conv.inputs(k)));
    inputs.push_back(slot);
  }
  if (b.slot < 0)
    b.slot = newSlot(p_.ops(b.concat).outputs(0), b.dst.get_size());
  b.inSlice[i] = true;
  addStep(std::move(kernel), inputs, {b.slot},
          conv.name() + "+" + p_.ops(b.concat).name(), "conv2d+concat");
  return true;
}

void CpuScheduler::planPoolTransposes() {
  if (!cpu::poolTransposeFusionEnabled())
    return;
  // Transpose op `t` (an intermediate result read by one op) with `perm`.
  auto isTranspose = [&](int t, const std::vector<int64_t> &perm) {
    return t >= 0 && p_.ops(t).kind() == "transpose" &&
           p_.ops(t).inputs_size() == 1 && p_.ops(t).outputs_size() == 1 &&
           fusedInto_[t] == -1 && OpAttrs(p_.ops(t)).getInts("perm") == perm;
  };
  const std::vector<int64_t> toNhwc = {0, 2, 3, 1}, toNchw = {0, 3, 1, 2};
  for (int o = 0; o < p_.ops_size(); ++o) {
    int gradient = -1, biasSum = -1;
    if (p_.ops(o).kind() != "relu_grad" ||
        !matchReluGradBiasPair(o, gradient, biasSum) ||
        p_.ops(gradient).kind() != "max_pool_grad")
      continue;
    const plan::Op &op = p_.ops(o), &gradOp = p_.ops(gradient);
    // y (relu_grad's second operand) is max_pool(x) over the gradient's
    // windows.
    const int y = op.inputs(1), pool = producer_[y];
    bool windowMask = pool >= 0 && p_.ops(pool).kind() == "max_pool" &&
                      p_.ops(pool).inputs_size() == 1 &&
                      p_.ops(pool).inputs(0) == gradOp.inputs(0) &&
                      fusedInto_[pool] == -1;
    if (windowMask) {
      // The same windows from the same corner (the fused kernel takes only
      // windows that tile from the top left, unpadded, and y has dy's
      // shape, so the pool's windows are those).
      OpAttrs a(p_.ops(pool)), b(gradOp);
      std::vector<int64_t> pads = a.getWindowInts("pads");
      const std::string padding = a.getString("padding");
      windowMask = a.getInts("kernel") == b.getInts("kernel") &&
                   a.getWindowInts("strides") == b.getWindowInts("strides") &&
                   a.getString("data_format") == b.getString("data_format") &&
                   (padding == "VALID" ||
                    (padding == "EXPLICIT" && pads[0] == 0 && pads[2] == 0));
    }
    // g is dy's NHWC transpose, read by this relu_grad alone.
    const int g = op.inputs(0), gOp = producer_[g];
    const bool gradNchw = isTranspose(gOp, toNhwc) && isIntermediate(g) &&
                          consumers_[g].size() == 1;
    if (!windowMask && !gradNchw)
      continue;
    const int bias = p_.ops(biasSum).outputs(0);
    std::unique_ptr<Kernel> kernel = cpu::createMaxPoolReluBiasGrad(
        makeKernelConfig(in_, gradient), dtype(bias), gradNchw, windowMask);
    if (!kernel)
      continue;
    PoolGradPlan &plan = poolGradPlans_[o];
    plan.g = g;
    plan.windowMask = windowMask;
    plan.kernel = std::move(kernel);
    if (gradNchw) {
      plan.g = p_.ops(gOp).inputs(0);
      fusedInto_[gOp] = -2;
      lastUse_[plan.g] = std::max(lastUse_[plan.g], o);
    }
  }
  // A max_pool whose result only NCHW transposes and window-masked fused
  // gradients read writes the transpose's result instead.
  for (int o = 0; o < p_.ops_size(); ++o) {
    const plan::Op &op = p_.ops(o);
    if (op.kind() != "max_pool" || op.outputs_size() != 1 ||
        fusedInto_[o] != -1 || !isIntermediate(op.outputs(0)))
      continue;
    int transpose = -1;
    bool others = false;
    for (int c : consumers_[op.outputs(0)]) {
      auto plan = poolGradPlans_.find(c);
      if (plan != poolGradPlans_.end() && plan->second.windowMask &&
          p_.ops(c).inputs(0) != op.outputs(0))
        continue;
      if (transpose < 0 && isTranspose(c, toNchw))
        transpose = c;
      else
        others = true;
    }
    if (others || transpose < 0)
      continue;
    std::unique_ptr<Kernel> kernel =
        cpu::createTiledMaxPoolToNchw(makeKernelConfig(in_, o));
    if (!kernel)
      continue;
    fusedInto_[transpose] = -2;
    poolToNchw_[o] = {transpose, std::move(kernel)};
    // A bf16 conv before it may pool each image while its result is in
    // cache (the result is still written for its other readers, unless
    // the only other one is the window-masked pool gradient that takes the
    // winners the step records instead: scheduleReluGradBiasPair).
    const int conv = producer_[op.inputs(0)];
    if (conv >= 0 && p_.ops(conv).kind() == "conv2d" &&
        p_.ops(conv).outputs_size() == 1 && fusedInto_[conv] == -1) {
      auto masks = cpu::poolWinnerMaskEnabled()
                       ? std::make_shared<cpu::PoolWinnerMasks>()
                       : nullptr;
      if (std::unique_ptr<Kernel> fused = cpu::createAmxConvMaxPoolToNchw(
              makeKernelConfig(in_, conv), makeKernelConfig(in_, o), masks)) {
        convPool_[conv] = {o, std::move(fused)};
        // And the one-channel conv before it, where no reader of its result
        // comes before this conv (the step then writes that result).
        const int src = p_.ops(conv).inputs(0), source = producer_[src];
        bool early = false;
        for (int c : consumers_[src])
          early |= c < conv;
        if (source >= 0 && !early && p_.ops(source).kind() == "conv2d" &&
            p_.ops(source).outputs_size() == 1 && fusedInto_[source] == -1) {
          const KernelConfig sourceConfig = makeKernelConfig(in_, source);
          auto result = std::make_shared<cpu::SourceConvResult>();
          if (std::unique_ptr<Kernel> withSource =
                  cpu::createAmxConvMaxPoolToNchw(
                      makeKernelConfig(in_, conv), makeKernelConfig(in_, o),
                      masks, &sourceConfig, result)) {
            // Read by this conv alone (inference), the result is not
            // written at all.
            result->skipResult =
                consumers_[src].size() == 1 && isIntermediate(src);
            convSource_[conv] = {source, std::move(withSource),
                                 std::move(result), false};
            sourceConvOf_[source] = conv;
            // Its operands are read where its result is (here, and by a
            // backward that recomputes it).
            for (int t : p_.ops(source).inputs())
              lastUse_[t] = std::max(lastUse_[t], lastUse_[src]);
          }
        }
        if (masks)
          convMasks_[conv] = std::move(masks);
      }
    }
  }
}

Status CpuScheduler::scheduleReluGradBiasPair(int o, bool &done) {
  const plan::Op &op = p_.ops(o);
  int gradient = -1, biasSum = -1;
  auto planned = poolGradPlans_.find(o);
  if (planned == poolGradPlans_.end() &&
      !matchReluGradBiasPair(o, gradient, biasSum))
    return Status::success();
  if (planned != poolGradPlans_.end()) {
    // Planned with the transposes before them: the readers are as matched
    // then.
    for (int c : consumers_[op.outputs(0)])
      (p_.ops(c).kind() == "reduce_sum" ? biasSum : gradient) = c;
  }
  const int bias = p_.ops(biasSum).outputs(0);
  const plan::Op &gradientOp = p_.ops(gradient);
  const int x = gradientOp.inputs(0);
  KernelConfig config = makeKernelConfig(in_, gradient);
  std::unique_ptr<Kernel> kernel =
      planned != poolGradPlans_.end() ? std::move(planned->second.kernel)
      : gradientOp.kind() == "max_pool_grad"
          ? cpu::createMaxPoolReluBiasGrad(config, dtype(bias))
          : cpu::createSingleChannelReluFilterBiasGrad(config, dtype(bias));
  if (!kernel)
    return Status::success();
  // The conv gradients that alone read a pool gradient's dx run with it,
  // a chunk of the batch at a time.
  int dataGrad = -1, filterGrad = -1;
  // And the first layer's relu + filter + bias gradient when that relu_grad
  // alone reads the source's gradient (a one-channel conv, whose operands
  // exist before `o`): the source's gradient is then never stored.
  int firstRelu = -1, firstGrad = -1, firstBias = -1;
  // The recomputed source's plan (below).
  SourceConvPlan *sourcePlan = nullptr;
  if (gradientOp.kind() == "max_pool_grad" &&
      matchConvGrads(gradientOp.outputs(0), o, dataGrad, filterGrad)) {
    const bool windowMask =
        planned != poolGradPlans_.end() && planned->second.windowMask;
    const bool gradNchw =
        planned != poolGradPlans_.end() && planned->second.g != op.inputs(0);
    const int dsrc = p_.ops(dataGrad).outputs(0);
    firstRelu = soleConsumer(dsrc);
    std::optional<KernelConfig> firstConfig;
    if (firstRelu >= 0 && p_.ops(firstRelu).kind() == "relu_grad" &&
        p_.ops(firstRelu).inputs_size() == 2 &&
        p_.ops(firstRelu).inputs(0) == dsrc &&
        p_.ops(firstRelu).inputs(1) != dsrc &&
        producer_[p_.ops(firstRelu).inputs(1)] < o &&
        matchReluGradBiasPair(firstRelu, firstGrad, firstBias) &&
        p_.ops(firstGrad).kind() == "conv2d_backprop_filter" &&
        producer_[p_.ops(firstGrad).inputs(0)] < o &&
        dtype(p_.ops(firstBias).outputs(0)) == dtype(dsrc) &&
        shape(p_.ops(firstRelu).inputs(1)) == shape(dsrc))
      firstConfig = makeKernelConfig(in_, firstGrad);
    // The winners of the pool the fused conv + pool step ran on x.
    std::shared_ptr<cpu::PoolWinnerMasks> masks;
    if (auto m = poolMasks_.find(gradientOp.inputs(0));
        windowMask && m != poolMasks_.end())
      masks = m->second.second;
    // The conv's source, the result of a one-channel conv + relu that the
    // forward's AMX conv + pool step ran (sourceConv_) and the first
    // layer's relu output too, recomputed per chunk from the first layer's
    // images instead of read back.
    const int src = p_.ops(filterGrad).inputs(0);
    if (auto sc = sourceConvOf_.find(producer_[src]);
        firstConfig && src >= 0 && sc != sourceConvOf_.end() &&
        p_.ops(firstRelu).inputs(1) == src &&
        p_.ops(sc->first).inputs(0) == p_.ops(firstGrad).inputs(0))
      if (auto plan = convSource_.find(sc->second);
          plan != convSource_.end() && plan->second.taken)
        sourcePlan = &plan->second;
    std::unique_ptr<Kernel> chunked;
    if (sourcePlan) {
      const KernelConfig sourceConfig =
          makeKernelConfig(in_, sourcePlan->source);
      chunked = cpu::createChunkedPoolConvGrad(
          config, makeKernelConfig(in_, dataGrad),
          makeKernelConfig(in_, filterGrad), gradNchw, windowMask,
          &*firstConfig, masks, &sourceConfig);
      if (!chunked)
        sourcePlan = nullptr;
    }
    if (!chunked && firstConfig)
      chunked = cpu::createChunkedPoolConvGrad(
          config, makeKernelConfig(in_, dataGrad),
          makeKernelConfig(in_, filterGrad), gradNchw, windowMask,
          &*firstConfig, masks);
    if (!chunked) {
      firstRelu = firstGrad = firstBias = -1;
      chunked = cpu::createChunkedPoolConvGrad(
          config, makeKernelConfig(in_, dataGrad),
          makeKernelConfig(in_, filterGrad), gradNchw, windowMask, nullptr,
          masks);
    }
    // Read by the fused pool (its step) and this gradient alone, which
    // takes the winners instead, the conv's result need not be written.
    if (chunked && masks && masks->record &&
        isIntermediate(gradientOp.inputs(0))) {
      bool others = false;
      for (int c : consumers_[gradientOp.inputs(0)])
        others |= c != gradient && c != poolMasks_[gradientOp.inputs(0)].first;
      masks->skipResult = !others;
    }
    // Read by the forward step that computes it and recomputed here, the
    // source need not be written either.
    if (chunked && sourcePlan) {
      bool others = false;
      for (int c : consumers_[src])
        others |= c != sourceConvOf_[sourcePlan->source] && c != filterGrad &&
                  c != firstRelu;
      sourcePlan->result->skipResult = !others && isIntermediate(src);
    }
    if (chunked)
      kernel = std::move(chunked);
    else
      dataGrad = filterGrad = -1;
  }
  GOPT_RETURN_IF_ERROR(materialize(x));
  std::vector<int> operands = {x, op.inputs(0), op.inputs(1)};
  if (planned != poolGradPlans_.end()) {
    operands[1] = planned->second.g;
    if (planned->second.windowMask)
      operands.pop_back();
  }
  if (dataGrad >= 0) {
    const plan::Op &data = p_.ops(dataGrad), &filter = p_.ops(filterGrad);
    std::vector<int> more = {data.inputs(1), filter.inputs(0)};
    if (firstRelu >= 0) {
      more.push_back(p_.ops(firstGrad).inputs(0));
      more.push_back(p_.ops(firstRelu).inputs(1));
    }
    if (sourcePlan) // the recomputed conv's filter [and bias]
      for (int i = 1; i < p_.ops(sourcePlan->source).inputs_size(); ++i)
        more.push_back(p_.ops(sourcePlan->source).inputs(i));
    for (int t : more) {
      GOPT_RETURN_IF_ERROR(materialize(t));
      operands.push_back(t);
    }
    std::vector<int> inputs;
    for (int t : operands) {
      GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(t));
      inputs.push_back(slot);
    }
    const int dsrc = data.outputs(0), dfilter = filter.outputs(0);
    fusedInto_[gradient] = fusedInto_[biasSum] = -2;
    fusedInto_[dataGrad] = fusedInto_[filterGrad] = -2;
    if (firstRelu >= 0) {
      const plan::Op &relu0 = p_.ops(firstRelu), &grad0 = p_.ops(firstGrad),
                     &sum0 = p_.ops(firstBias);
      const int dfilter0 = grad0.outputs(0), dbias0 = sum0.outputs(0);
      fusedInto_[firstRelu] = fusedInto_[firstGrad] = fusedInto_[firstBias] =
          -2;
      addStep(std::move(kernel), inputs, {dfilter, bias, dfilter0, dbias0},
              op.name() + "+" + gradientOp.name() + "+" + data.name() + "+" +
                  filter.name() + "+" + p_.ops(biasSum).name() + "+" +
                  relu0.name() + "+" + grad0.name() + "+" + sum0.name(),
              "relu_grad+max_pool_grad+conv2d_backprop_input+"
              "conv2d_backprop_filter+reduce_sum+relu_grad+"
              "conv2d_backprop_filter+reduce_sum");
      plainReady_[dfilter] = plainReady_[bias] = true;
      plainReady_[dfilter0] = plainReady_[dbias0] = true;
      done = true;
      return Status::success();
    }
    addStep(std::move(kernel), inputs, {dsrc, dfilter, bias},
            op.name() + "+" + gradientOp.name() + "+" + data.name() + "+" +
                filter.name() + "+" + p_.ops(biasSum).name(),
            "relu_grad+max_pool_grad+conv2d_backprop_input+"
            "conv2d_backprop_filter+reduce_sum");
    plainReady_[dsrc] = plainReady_[dfilter] = plainReady_[bias] = true;
    done = true;
    return Status::success();
  }
  std::vector<int> inputs;
  for (int t : operands) {
    GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(t));
    inputs.push_back(slot);
  }
  const int result = gradientOp.outputs(0);
  fusedInto_[gradient] = fusedInto_[biasSum] = -2;
  addStep(std::move(kernel), inputs, {result, bias},
          op.name() + "+" + gradientOp.name() + "+" + p_.ops(biasSum).name(),
          "relu_grad+" + gradientOp.kind() + "+reduce_sum");
  plainReady_[result] = plainReady_[bias] = true;
  done = true;
  return Status::success();
}

// relu_grad(g, y) of NHWC training (dy 4-D, read by NHWC convolution
// gradients and the like) with g = add(a, b) read by it alone and/or a
// reduce_sum of dy over N, H and W: one step (ReluGradBias.h). Not where
// scheduleReluGradBiasPair or the pool steps take the relu_grad, nor in
// NCHW's blocked layouts (the step reads plain operands).
void CpuScheduler::planReluGradBias() {
  for (int o = 0; o < p_.ops_size(); ++o) {
    const plan::Op &op = p_.ops(o);
    int gradient = -1, pairBias = -1;
    if (op.kind() != "relu_grad" || op.inputs_size() != 2 ||
        op.outputs_size() != 1 || fusedInto_[o] != -1 ||
        poolGradPlans_.count(o))
      continue;
    // The pair's step takes it where its kernel applies; a max_pool_grad of
    // overlapping windows (ResNet's stem, whose bias sum canonicalization
    // moved onto the pooled gradient) has none, and the pass here runs.
    if (matchReluGradBiasPair(o, gradient, pairBias) &&
        (p_.ops(gradient).kind() != "max_pool_grad" ||
         cpu::createMaxPoolReluBiasGrad(makeKernelConfig(in_, gradient),
                                        dtype(p_.ops(pairBias).outputs(0)))))
      continue;
    const int g = op.inputs(0), y = op.inputs(1), dy = op.outputs(0);
    const DType type = dtype(dy);
    if ((type != DType::kBF16 && type != DType::kF32) || dtype(g) != type ||
        dtype(y) != type || shape(dy).size() != 4 || shape(g) != shape(dy) ||
        shape(y) != shape(dy) || !isIntermediate(dy))
      continue;
    int biasSum = -1;
    bool plainReaders = true;
    for (int c : consumers_[dy]) {
      const plan::Op &reader = p_.ops(c);
      if (fusedInto_[c] != -1) {
        plainReaders = false;
        continue;
      }
      if (reader.kind() == "reduce_sum" && reader.inputs_size() == 1 &&
          reader.outputs_size() == 1 && biasSum < 0) {
        std::vector<int64_t> axes = OpAttrs(reader).getInts("axes");
        std::vector<bool> reduced(4, false);
        for (int64_t a : axes)
          if (a >= -4 && a < 4)
            reduced[a < 0 ? a + 4 : a] = true;
        const int bias = reader.outputs(0);
        int64_t elements = 1;
        for (int64_t d : shape(bias))
          elements *= d;
        if (axes.size() == 3 && reduced[0] && reduced[1] && reduced[2] &&
            !reduced[3] && elements == shape(dy)[3] && dtype(bias) == type) {
          biasSum = c;
          continue;
        }
      }
      // Convolution gradients must read dy in NHWC (plain): blocked NCHW
      // readers would make the step's plain dy a reorder.
      const std::string &kind = reader.kind();
      if ((kind == "conv2d_backprop_input" ||
           kind == "conv2d_backprop_filter" || kind == "conv2d") &&
          OpAttrs(reader).getString("data_format") != "NHWC")
        plainReaders = false;
    }
    if (!plainReaders)
      continue;
    int add = producer_[g];
    if (add < 0 || p_.ops(add).kind() != "add" ||
        p_.ops(add).inputs_size() != 2 || p_.ops(add).outputs_size() != 1 ||
        fusedInto_[add] != -1 || deferrable(add) || !isIntermediate(g) ||
        consumers_[g].size() != 1 || shape(p_.ops(add).inputs(0)) != shape(g) ||
        shape(p_.ops(add).inputs(1)) != shape(g) ||
        dtype(p_.ops(add).inputs(0)) != type ||
        dtype(p_.ops(add).inputs(1)) != type)
      add = -1;
    if (add < 0 && biasSum < 0)
      continue;
    const Shape &s = shape(dy);
    std::unique_ptr<Kernel> kernel = cpu::createAddReluBiasGrad(
        type, s[0] * s[1] * s[2], s[3], add >= 0, biasSum >= 0);
    if (!kernel)
      continue;
    ReluBiasPlan &plan = reluBiasPlans_[o];
    plan.add = add;
    plan.biasSum = biasSum;
    plan.kernel = std::move(kernel);
    if (add >= 0) {
      fusedInto_[add] = -2;
      for (int t : p_.ops(add).inputs())
        lastUse_[t] = std::max(lastUse_[t], o);
    }
    if (biasSum >= 0)
      fusedInto_[biasSum] = -2;
  }
}

void CpuScheduler::planOptimizerBf16Grads() {
  for (int o = 0; o < p_.ops_size(); ++o) {
    const plan::Op &op = p_.ops(o);
    if ((op.kind() != "adam_update" && op.kind() != "sgd_update") ||
        op.inputs_size() < 2 || fusedInto_[o] != -1)
      continue;
    const int grad = op.inputs(1), cast = producer_[grad];
    if (cast < 0 || p_.ops(cast).kind() != "cast" ||
        p_.ops(cast).inputs_size() != 1 || fusedInto_[cast] != -1 ||
        !isIntermediate(grad) || consumers_[grad].size() != 1 ||
        dtype(grad) != DType::kF32 ||
        dtype(p_.ops(cast).inputs(0)) != DType::kBF16)
      continue;
    std::unique_ptr<Kernel> kernel =
        cpu::createOptimizerUpdateBf16Grad(makeKernelConfig(in_, o));
    if (!kernel)
      continue;
    fusedInto_[cast] = -2;
    const int source = p_.ops(cast).inputs(0);
    lastUse_[source] = std::max(lastUse_[source], o);
    optimizerBf16Grads_[o] = {cast, std::move(kernel)};
  }
}

Status CpuScheduler::scheduleReluGradBias(int o, bool &done) {
  auto planned = reluBiasPlans_.find(o);
  if (planned == reluBiasPlans_.end())
    return Status::success();
  const plan::Op &op = p_.ops(o);
  ReluBiasPlan &plan = planned->second;
  std::vector<int> operands;
  if (plan.add >= 0)
    operands = {p_.ops(plan.add).inputs(0), p_.ops(plan.add).inputs(1)};
  else
    operands = {op.inputs(0)};
  operands.push_back(op.inputs(1));
  std::vector<int> inputs;
  for (int t : operands) {
    GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(t));
    inputs.push_back(slot);
  }
  const int dy = op.outputs(0);
  std::vector<int> outputs = {dy};
  std::string name = op.name(), kind = "relu_grad";
  if (plan.add >= 0) {
    name = p_.ops(plan.add).name() + "+" + name;
    kind = "add+" + kind;
  }
  if (plan.biasSum >= 0) {
    outputs.push_back(p_.ops(plan.biasSum).outputs(0));
    name += "+" + p_.ops(plan.biasSum).name();
    kind += "+reduce_sum";
  }
  addStep(std::move(plan.kernel), inputs, outputs, name, kind);
  for (int t : outputs)
    plainReady_[t] = true;
  done = true;
  return Status::success();
}

// GOPT_CONV_RESIDUAL_ADD=0 keeps the adds and relus of plain-layout
// residual blocks as steps of their own (for comparing).
bool convResidualAddEnabled() { return envSwitchOn("GOPT_CONV_RESIDUAL_ADD"); }

// A plain-layout (NHWC: the CPU training steps) conv2d without activation
// whose result only an add of a residual reads, and that add's result only
// a relu (or nothing else): one convolution with the residual copied into
// its result and added by a sum post-op, then the relu. ResNet's blocks end
// so; the add and relu were two more passes over three and two tensors of
// the block's size. The residual must be computed before the conv (the
// other branch of a downsampling block's add may come later in the plan:
// then that branch's conv takes the add).
Status CpuScheduler::scheduleConvResidual(int o, bool &done) {
  const plan::Op &conv = p_.ops(o);
  if (!convResidualAddEnabled() || conv.outputs_size() != 1 ||
      conv.inputs_size() < 2 || conv.inputs_size() > 3 ||
      OpAttrs(conv).getString("activation") != "none")
    return Status::success();
  const int y = conv.outputs(0);
  if (dtype(y) != DType::kF32 && dtype(y) != DType::kBF16)
    return Status::success();
  const int addOp = soleConsumer(y);
  if (addOp < 0 || p_.ops(addOp).kind() != "add" ||
      p_.ops(addOp).inputs_size() != 2 || p_.ops(addOp).outputs_size() != 1)
    return Status::success();
  const plan::Op &add = p_.ops(addOp);
  const int residual = add.inputs(0) == y ? add.inputs(1) : add.inputs(0);
  int result = add.outputs(0);
  if (residual == y || shape(residual) != shape(y) ||
      shape(result) != shape(y) || dtype(residual) != dtype(y) ||
      dtype(result) != dtype(y) || shape(y).size() != 4 ||
      (producer_[residual] >= 0 && producer_[residual] > o))
    return Status::success();
  std::string activation = "none";
  int reluOp = soleConsumer(result);
  if (reluOp >= 0 && p_.ops(reluOp).kind() == "relu" &&
      p_.ops(reluOp).outputs_size() == 1 &&
      dtype(p_.ops(reluOp).outputs(0)) == dtype(y)) {
    activation = "relu";
    result = p_.ops(reluOp).outputs(0);
  } else {
    reluOp = -1;
  }
  std::unique_ptr<Kernel> kernel =
      cpu::createConvResidualAdd(makeKernelConfig(in_, o), activation);
  if (!kernel)
    return Status::success();
  GOPT_RETURN_IF_ERROR(materialize(residual));
  std::vector<int> inputs;
  for (int t : conv.inputs()) {
    GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(t));
    inputs.push_back(slot);
  }
  GOPT_ASSIGN_OR_RETURN(int residualSlot, plainSlot(residual));
  inputs.push_back(residualSlot);
  fusedInto_[addOp] = -2;
  std::string name = conv.name() + "+" + add.name(), kind = "conv2d+add";
  if (reluOp >= 0) {
    fusedInto_[reluOp] = -2;
    name += "+" + p_.ops(reluOp).name();
    kind += "+relu";
  }
  addStep(std::move(kernel), inputs, {result}, name, kind);
  plainReady_[result] = true;
  done = true;
  return Status::success();
}

Status CpuScheduler::scheduleDefault(int o) {
  const plan::Op &op = p_.ops(o);
  for (int t : op.inputs())
    GOPT_RETURN_IF_ERROR(plainSlot(t).status());
  GOPT_RETURN_IF_ERROR(appendDefaultStep(in_, o, s_));
  for (int t : op.outputs())
    plainReady_[t] = true;
  return Status::success();
}

Status CpuScheduler::build() {
  numPlan_ = p_.tensors_size();
  const int numOps = p_.ops_size();
  slotTensor_.resize(numPlan_);
  for (int t = 0; t < numPlan_; ++t)
    slotTensor_[t] = t;
  versions_.assign(numPlan_, {});
  plainReady_.assign(numPlan_, false);
  lastUse_.assign(numPlan_, -1);
  consumers_.assign(numPlan_, {});
  producer_.assign(numPlan_, -1);
  deferred_.assign(numPlan_, -1);
  pendingCast_.assign(numPlan_, -1);
  nonNegative_.assign(numPlan_, false);
  fusedInto_.assign(numOps, -1);
  chainOf_.assign(numOps, -1);
  intoConcat_.assign(numOps, -1);
  intoConcatKernel_.resize(numOps);
  concatTried_.assign(numOps, false);
  denseBlockOf_.assign(numOps, -1);
  for (int t = 0; t < numPlan_; ++t) {
    auto kind = info(t).kind();
    if (kind == plan::TensorInfo::INPUT || kind == plan::TensorInfo::CONSTANT ||
        kind == plan::TensorInfo::STATE)
      plainReady_[t] = true;
  }
  for (int o = 0; o < numOps; ++o)
    for (int t : p_.ops(o).inputs()) {
      lastUse_[t] = o;
      if (consumers_[t].empty() || consumers_[t].back() != o)
        consumers_[t].push_back(o);
    }
  // Graph results are read after the last op.
  for (const plan::Binding &b : p_.outputs())
    lastUse_[b.tensor()] = INT_MAX;
  for (const plan::StateBinding &b : p_.states())
    if (b.has_update_tensor())
      lastUse_[b.update_tensor()] = INT_MAX;
  for (int o = 0; o < numOps; ++o) {
    const plan::Op &op = p_.ops(o);
    for (int t : op.outputs())
      producer_[t] = o;
    // Whoever reads a dequantize's result may read its int8 input instead,
    // at any time until then.
    if (deferrable(o))
      lastUse_[op.inputs(0)] =
          std::max(lastUse_[op.inputs(0)], lastUse_[op.outputs(0)]);
    // u8 where int8 kernels may read a tensor as unsigned.
    const std::string &k = op.kind();
    OpAttrs attrs(op);
    std::string activation = attrs.getString("activation");
    bool sameAsInput = k == "quantize" || k == "dequantize" ||
                       k == "max_pool" || k == "avg_pool" ||
                       k == "global_avg_pool" || k == "reshape" ||
                       k == "flatten" || k == "identity";
    if (op.outputs_size() == 1 && op.inputs_size() > 0)
      nonNegative_[op.outputs(0)] =
          k == "relu" || k == "relu6" ||
          (k == "clip" && attrs.getFloat("min") >= 0) ||
          (k == "conv2d" && (activation == "relu" || activation == "relu6")) ||
          (sameAsInput && nonNegative_[op.inputs(0)]);
  }

  for (int o = 0; o < numOps; ++o)
    if (p_.ops(o).kind() == "softmax")
      matchAttention(o);
  planPoolTransposes();
  planDenseBlocks();
  planReluGradBias();
  planOptimizerBf16Grads();

  const bool int8DotProduct = cpuInt8DotProduct();
  for (int o = 0; o < numOps; ++o) {
    const plan::Op &op = p_.ops(o);
    if (fusedInto_[o] == -2)
      continue;
    if (fusedInto_[o] >= 0) {
      const Fusion &f = fusions_[fusedInto_[o]];
      GOPT_RETURN_IF_ERROR(f.attention ? emitAttention(o)
                           : f.matmul  ? emitMatmul(o)
                                       : emitConv(o));
      continue;
    }
    if (deferrable(o)) {
      deferred_[op.outputs(0)] = o;
      continue;
    }
    if (denseBlockOf_[o] >= 0) {
      GOPT_RETURN_IF_ERROR(emitDenseConcat(o));
      continue;
    }
    const std::string &k = op.kind();
    bool nchw = OpAttrs(op).getString("data_format") == "NCHW";
    bool done = false;
    // A conv writing into its concat runs its planned kernel.
    if (k == "conv2d" && nchw && op.outputs_size() == 1 &&
        shape(op.inputs(0)).size() == 4 && int8DotProduct && intoConcat_[o] < 0)
      GOPT_RETURN_IF_ERROR(scheduleInt8Conv(o, done));
    // An int8 chain waiting for a conv that does not run in int8 ends.
    if (!done && chainOf_[o] >= 0 && chains_[chainOf_[o]].front().int8) {
      GOPT_RETURN_IF_ERROR(emitChain(chainOf_[o], o));
      chainOf_[o] = -1;
    }
    if (!done && k == "matmul" && int8DotProduct)
      GOPT_RETURN_IF_ERROR(scheduleInt8Matmul(o, done));
    if (!done && k == "max_pool" && nchw)
      GOPT_RETURN_IF_ERROR(scheduleInt8MaxPool(o, done));
    if (done)
      continue;
    // A one-channel conv whose result the AMX conv + pool step after it
    // computes (that step runs: the conditions below hold from here on).
    if (auto sc = sourceConvOf_.find(o); sc != sourceConvOf_.end()) {
      const int conv = sc->second;
      auto cp = convPool_.find(conv);
      if (cp != convPool_.end() && chainOf_[conv] < 0 &&
          intoConcat_[conv] < 0 && poolToNchw_.count(cp->second.first)) {
        convSource_[conv].taken = true;
        continue;
      }
      convSource_.erase(conv);
    }
    if (auto cp = convPool_.find(o); cp != convPool_.end() && chainOf_[o] < 0 &&
                                     intoConcat_[o] < 0 &&
                                     poolToNchw_.count(cp->second.first)) {
      const int pool = cp->second.first;
      const plan::Op &transpose = p_.ops(poolToNchw_[pool].first);
      auto sc = convSource_.find(o);
      const bool withSource = sc != convSource_.end() && sc->second.taken;
      std::vector<int> operands(op.inputs().begin(), op.inputs().end());
      std::vector<int> outputs = {op.outputs(0)};
      std::string name = op.name(), kind = "conv2d";
      if (withSource) {
        const plan::Op &source = p_.ops(sc->second.source);
        operands.assign(source.inputs().begin(), source.inputs().end());
        operands.insert(operands.end(), op.inputs().begin() + 1,
                        op.inputs().end());
        outputs.insert(outputs.begin(), source.outputs(0));
        name = source.name() + "+" + name;
        kind = "conv2d+conv2d";
        cp->second.second = std::move(sc->second.kernel);
      }
      std::vector<int> inputs;
      for (int t : operands) {
        GOPT_RETURN_IF_ERROR(materialize(t));
        GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(t));
        inputs.push_back(slot);
      }
      const int result = transpose.outputs(0);
      outputs.push_back(result);
      addStep(std::move(cp->second.second), inputs, outputs,
              name + "+" + p_.ops(pool).name() + "+" + transpose.name(),
              kind + "+max_pool+transpose");
      for (int t : outputs)
        plainReady_[t] = true;
      if (auto m = convMasks_.find(o); m != convMasks_.end())
        poolMasks_[op.outputs(0)] = {pool, m->second};
      poolToNchw_.erase(pool);
      fusedInto_[pool] = -2;
      continue;
    }
    if (auto toNchw = poolToNchw_.find(o); toNchw != poolToNchw_.end()) {
      GOPT_RETURN_IF_ERROR(materialize(op.inputs(0)));
      GOPT_ASSIGN_OR_RETURN(int src, plainSlot(op.inputs(0)));
      const plan::Op &transpose = p_.ops(toNchw->second.first);
      const int result = transpose.outputs(0);
      addStep(std::move(toNchw->second.second), {src}, {result},
              op.name() + "+" + transpose.name(), "max_pool+transpose");
      plainReady_[result] = true;
      continue;
    }
    // Before its deferred dequantize runs, which it replaces.
    if (k == "global_avg_pool" && nchw) {
      bool pooled = false;
      GOPT_RETURN_IF_ERROR(scheduleInt8GlobalPool(o, pooled));
      if (pooled)
        continue;
    }
    // Everything else reads its operands' values (a conv2d converts a
    // deferred cast into its own layout).
    for (int t : op.inputs())
      GOPT_RETURN_IF_ERROR(materialize(t, k != "conv2d"));
    if (k == "conv2d" && nchw && op.outputs_size() == 1 &&
        shape(op.inputs(0)).size() == 4 && hasLayouts(op.inputs(0))) {
      GOPT_RETURN_IF_ERROR(scheduleConv(o));
      continue;
    }
    if (k == "conv2d" && !nchw)
      GOPT_RETURN_IF_ERROR(scheduleConvResidual(o, done));
    if (done)
      continue;
    if (k == "relu_grad")
      GOPT_RETURN_IF_ERROR(scheduleReluGradBiasPair(o, done));
    if (!done && k == "relu_grad")
      GOPT_RETURN_IF_ERROR(scheduleReluGradBias(o, done));
    if (auto update = optimizerBf16Grads_.find(o);
        !done && update != optimizerBf16Grads_.end()) {
      std::vector<int> inputs;
      for (int i = 0; i < op.inputs_size(); ++i) {
        const int t =
            i == 1 ? p_.ops(update->second.first).inputs(0) : op.inputs(i);
        GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(t));
        inputs.push_back(slot);
      }
      std::vector<int> outputs(op.outputs().begin(), op.outputs().end());
      addStep(std::move(update->second.second), inputs, outputs,
              p_.ops(update->second.first).name() + "+" + op.name(),
              "cast+" + k);
      for (int t : outputs)
        plainReady_[t] = true;
      continue;
    }
    if (done)
      continue;
    if (k == "global_avg_pool" && nchw)
      GOPT_RETURN_IF_ERROR(scheduleSqueezeExcite(o, done));
    if (done)
      continue;
    if ((k == "max_pool" || k == "avg_pool" || k == "global_avg_pool" ||
         (k == "batch_norm" && op.outputs_size() == 1)) &&
        nchw && shape(op.inputs(0)).size() == 4 && hasLayouts(op.inputs(0))) {
      GOPT_RETURN_IF_ERROR(scheduleLayoutOp(o));
      continue;
    }
    if (k == "matmul")
      GOPT_RETURN_IF_ERROR(scheduleMatmul(o, done));
    if (!done && op.outputs_size() == 1 && cpu::isZeroPreservingElementwise(op))
      GOPT_RETURN_IF_ERROR(scheduleElementwise(o, done));
    if (!done && k == "mul")
      GOPT_RETURN_IF_ERROR(scheduleChannelMul(o, done));
    if (!done && k == "concat" && op.outputs_size() == 1)
      GOPT_RETURN_IF_ERROR(scheduleConcatShuffle(o, done));
    if (!done && k == "concat" && op.outputs_size() == 1)
      GOPT_RETURN_IF_ERROR(scheduleConcat(o, done));
    if (!done && (k == "quantize" || k == "dequantize") &&
        op.outputs_size() == 1)
      GOPT_RETURN_IF_ERROR(scheduleQuantization(o, done));
    if (!done && k == "cast")
      GOPT_RETURN_IF_ERROR(scheduleCast(o, done));
    if (!done)
      GOPT_RETURN_IF_ERROR(scheduleAlias(o, done));
    if (!done)
      GOPT_RETURN_IF_ERROR(scheduleDefault(o));
  }
  // Graph results and state updates are read in the plan's layout.
  for (const plan::Binding &b : p_.outputs())
    GOPT_RETURN_IF_ERROR(plainSlot(b.tensor()).status());
  for (const plan::StateBinding &b : p_.states())
    if (b.has_update_tensor())
      GOPT_RETURN_IF_ERROR(plainSlot(b.update_tensor()).status());
  return Status::success();
}

} // namespace

Status buildCpuSchedule(const ScheduleInput &in, Schedule &schedule) {
  return CpuScheduler(in, schedule).build();
}

} // namespace gopt::runtime
