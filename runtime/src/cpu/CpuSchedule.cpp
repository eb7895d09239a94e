//===- CpuSchedule.cpp - The schedule of backend "cpu" --------------------===//
//
// Walks the plan once and decides, per tensor, which physical layouts it is
// kept in:
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
// - reshape/flatten/identity/inference dropout of an intermediate are
//   zero-copy aliases.
// Everything else runs the registry's kernel (oneDNN, fast or reference) on
// plain tensors.
//
//===----------------------------------------------------------------------===//
#include "../Schedule.h"
#include "FastKernels.h"
#include "OneDnn.h"

#include <climits>

namespace gopt::runtime {
namespace {

using dnnl::memory;

class CpuScheduler {
public:
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
  bool isF32(int t) const { return (*in_.dtypes)[t] == DType::kF32; }
  const Shape &shape(int t) const { return (*in_.shapes)[t]; }
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
    slot.dtype = (*in_.dtypes)[tensor];
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
      if (v.md != cpu::plainDesc(shape(t)))
        return v.md;
    return cpu::plainDesc(shape(t));
  }

  StatusOr<int> plainSlot(int t);
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

  Status scheduleConv(int o);
  Status emitConv(int o);
  Status scheduleLayoutOp(int o);
  Status scheduleElementwise(int o, bool &done);
  Status scheduleAlias(int o, bool &done);
  Status scheduleDefault(int o);

  const ScheduleInput &in_;
  Schedule &s_;
  const plan::Plan &p_;
  int numPlan_ = 0;
  std::vector<int> slotTensor_;                // per slot: the plan tensor
  std::vector<std::vector<Version>> versions_; // per plan tensor
  std::vector<bool> plainReady_;               // slot t holds tensor t
  std::vector<int> lastUse_;                   // per plan tensor: op index
  std::vector<std::vector<int>> consumers_;    // per plan tensor: ops
  // Convolutions fused with later ops run at the last op of their chain.
  struct Fusion {
    int conv = -1;
    std::vector<int> ops; // conv first
    int residual = -1;    // plan tensor added by the sum post-op
    cpu::ConvPostOps post;
  };
  std::vector<int> fusedInto_; // per op: index into fusions_, or -1
  std::vector<Fusion> fusions_;
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
  if (plainReady_[t])
    return t;
  if (versions_[t].empty())
    return internalError("tensor '", info(t).name(), "' is never computed");
  memory::desc plain = cpu::plainDesc(shape(t));
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
  memory::desc plain = cpu::plainDesc(shape(t));
  if (md == plain)
    return plainSlot(t);
  for (const Version &v : versions_[t])
    if (v.md == md)
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

// Looks ahead from an NCHW conv2d without activation for add(residual) and
// relu/relu6/clip consumers to fold into it as post-ops.
Status CpuScheduler::scheduleConv(int o) {
  const plan::Op &conv = p_.ops(o);
  Fusion f;
  f.conv = o;
  f.ops = {o};
  f.post.activation = OpAttrs(conv).getString("activation", "none");
  int cur = conv.outputs(0);
  auto activation = [&](int c) {
    const plan::Op &op = p_.ops(c);
    if (op.kind() == "relu" || op.kind() == "relu6") {
      f.post.activation = op.kind();
      return true;
    }
    if (op.kind() == "clip") {
      f.post.activation = "clip";
      f.post.clipMin = static_cast<float>(OpAttrs(op).getFloat("min", 0));
      f.post.clipMax = static_cast<float>(OpAttrs(op).getFloat("max", 0));
      return true;
    }
    return false;
  };
  if (f.post.activation == "none") {
    int c = soleConsumer(cur);
    if (c >= 0 && p_.ops(c).kind() == "add" && isF32(p_.ops(c).outputs(0))) {
      const plan::Op &add = p_.ops(c);
      int other = add.inputs(0) == cur ? add.inputs(1) : add.inputs(0);
      if (other != cur && shape(other) == shape(cur) &&
          shape(add.outputs(0)) == shape(cur)) {
        f.post.sum = true;
        f.residual = other;
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
  int last = f.ops.back();
  // The conv now reads its operands at `last`: keep them alive until then.
  for (int t : conv.inputs())
    lastUse_[t] = std::max(lastUse_[t], last);
  fusedInto_[last] = static_cast<int>(fusions_.size());
  for (int op : f.ops)
    if (op != last)
      fusedInto_[op] = -2; // runs as part of a later step
  fusions_.push_back(std::move(f));
  if (last == o)
    return emitConv(o);
  return Status::success();
}

Status CpuScheduler::emitConv(int o) {
  Fusion &f = fusions_[fusedInto_[o]];
  const plan::Op &conv = p_.ops(f.conv);
  KernelConfig config = makeKernelConfig(in_, f.conv);
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<cpu::LayoutKernel> kernel,
                        cpu::createLayoutConv(config, f.post));
  if (!kernel)
    return internalError("oneDNN has no convolution for op '", conv.name(),
                         "'");
  memory::desc dst = kernel->outputDesc();
  GOPT_ASSIGN_OR_RETURN(int src, slotIn(conv.inputs(0), kernel->inputDesc(0)));
  std::vector<int> inputs = {src};
  for (int i = 1; i < conv.inputs_size(); ++i) {
    GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(conv.inputs(i)));
    inputs.push_back(slot);
  }
  int result = p_.ops(f.ops.back()).outputs(0);
  int out;
  if (f.post.sum) {
    GOPT_ASSIGN_OR_RETURN(int residual, slotIn(f.residual, dst));
    int accumulator = residual;
    // In place only where nothing reads the residual later and the conv
    // does not read it; else into a copy.
    int addOp = f.ops[1];
    if (!inArena(residual) || !deadAfter(residual, addOp) ||
        root(residual) == root(src)) {
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
  else if (op.kind() == "batch_norm")
    kernel = cpu::createLayoutBatchNorm(config, src);
  GOPT_RETURN_IF_ERROR(kernel.status());
  if (!*kernel)
    return scheduleDefault(o);
  GOPT_ASSIGN_OR_RETURN(int srcSlot, slotIn(x, src));
  std::vector<int> inputs = {srcSlot};
  for (int i = 1; i < op.inputs_size(); ++i) {
    GOPT_ASSIGN_OR_RETURN(int slot, plainSlot(op.inputs(i)));
    inputs.push_back(slot);
  }
  int result = op.outputs(0);
  memory::desc dst = (*kernel)->outputDesc();
  int out = newSlot(result, dst.get_size());
  versions_[result].push_back({dst, out});
  addStep(std::move(kernel).value(), inputs, {out}, op.name(), op.kind());
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
    if (!isF32(t) || shape(t) != shape(result))
      return Status::success();
    if (!plainReady_[t] && !blocked) {
      md = currentDesc(t);
      blocked = md != cpu::plainDesc(shape(t));
    }
  }
  if (!blocked || !isF32(result))
    return Status::success();
  std::vector<int> inputs;
  for (int t : op.inputs()) {
    GOPT_ASSIGN_OR_RETURN(int slot, slotIn(t, md));
    inputs.push_back(slot);
  }
  int out = newSlot(result, md.get_size());
  versions_[result].push_back({md, out});
  addStep(cpu::createFlatElementwise(
              op, static_cast<int64_t>(md.get_size() / sizeof(float))),
          inputs, {out}, op.name(), op.kind());
  done = true;
  return Status::success();
}

// Ops that only reinterpret the row-major data share their input's buffer.
Status CpuScheduler::scheduleAlias(int o, bool &done) {
  const plan::Op &op = p_.ops(o);
  done = false;
  const std::string &k = op.kind();
  bool reinterprets =
      k == "reshape" || k == "flatten" || k == "identity" ||
      k == "stop_gradient" || k == "transfer" ||
      (k == "dropout" && !OpAttrs(op).getBool("training", false));
  if (!reinterprets || op.inputs_size() != 1 || op.outputs_size() != 1)
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
  fusedInto_.assign(numOps, -1);
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
    if (fusedInto_[o] == -2)
      continue;
    if (fusedInto_[o] >= 0) {
      GOPT_RETURN_IF_ERROR(emitConv(o));
      continue;
    }
    const std::string &k = op.kind();
    bool nchw = OpAttrs(op).getString("data_format", "NHWC") == "NCHW";
    if (k == "conv2d" && nchw && op.outputs_size() == 1 &&
        shape(op.inputs(0)).size() == 4) {
      KernelConfig config = makeKernelConfig(in_, o);
      bool f32 = true;
      for (DType t : config.inputTypes)
        f32 &= t == DType::kF32;
      if (f32) {
        GOPT_RETURN_IF_ERROR(scheduleConv(o));
        continue;
      }
    }
    if ((k == "max_pool" || k == "avg_pool" || k == "global_avg_pool" ||
         (k == "batch_norm" && op.outputs_size() == 1)) &&
        nchw && shape(op.inputs(0)).size() == 4 && isF32(op.inputs(0))) {
      GOPT_RETURN_IF_ERROR(scheduleLayoutOp(o));
      continue;
    }
    bool done = false;
    if (op.outputs_size() == 1 && cpu::isZeroPreservingElementwise(op))
      GOPT_RETURN_IF_ERROR(scheduleElementwise(o, done));
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
