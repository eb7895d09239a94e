//===- CudaBackend.cpp - Whole steps of a plan on one CUDA stream ---------===//
//
// One stream per session; the arena of intermediates (planArena offsets) is
// allocated once on the device; constants are uploaded once; inputs and
// outputs travel through pinned host buffers with async copies; after the
// first (eager) step the step is captured into a CUDA graph and replayed.
// Per-op times come from CUDA events recorded between ops (in the graph
// too, as external event nodes).
//
// Environment: GOPT_CUDA_GRAPHS=0 keeps every step eager;
// GOPT_CUDA_OP_TIMING=0 records only the step's copies and total;
// GOPT_CUDA_TF32=0/1 (CudaCommon.h); GOPT_CUDNN_ALGO_CACHE (AlgoCache.h).
//
//===----------------------------------------------------------------------===//
#include "CudaBackend.h"
#include "../collectives/StreamCollectives.h"
#include "CudaCommon.h"
#include "QuantizedOps.h"
#include "gopt/runtime/MemoryPlanner.h"
#include "gopt/runtime/OpSchema.h"
#include "gopt/runtime/cuda/CudaSupport.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

namespace gopt::runtime {
namespace cuda {
// Defined in CudaOps.cpp: matmul with a bias / relu epilogue.
StatusOr<std::unique_ptr<CudaKernel>>
createMatmulKernel(const CudaKernelConfig &config, const void *bias, bool relu);
} // namespace cuda

namespace {

using namespace cuda;

bool envEnabled(const char *name) {
  const char *v = std::getenv(name);
  return !v || std::strcmp(v, "0") != 0;
}

std::string formatBytes(size_t bytes) {
  char buf[64];
  if (bytes >= (1u << 20))
    std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  else if (bytes >= 1024)
    std::snprintf(buf, sizeof(buf), "%.1f KiB", bytes / 1024.0);
  else
    std::snprintf(buf, sizeof(buf), "%zu B", bytes);
  return buf;
}

// A host tensor staged through pinned memory and its device copy.
struct Staged {
  PinnedBuffer host;
  DeviceBuffer device;
  size_t bytes = 0;
  // Reallocates when the size changes; returns true if it did.
  StatusOr<bool> ensure(size_t n) {
    if (host.ptr && n == bytes)
      return false;
    // Never null, so that views of empty tensors are valid.
    GOPT_RETURN_IF_ERROR(host.allocate(std::max<size_t>(n, 64)));
    GOPT_RETURN_IF_ERROR(device.allocate(std::max<size_t>(n, 64)));
    bytes = n;
    return true;
  }
};

// matmul -> bias (add/bias_add of a constant [N]) -> relu chains run as one
// cuBLASLt call with an epilogue.
struct Fusion {
  int bias = -1;   // op index of the bias add, or -1
  int relu = -1;   // op index of the relu, or -1
  int result = -1; // tensor the fused kernel writes
  int biasTensor = -1;
};

class CudaBackend : public Backend {
public:
  CudaBackend(Plan plan, SessionOptions options)
      : plan_(std::move(plan)), p_(plan_.proto()),
        options_(std::move(options)) {}
  ~CudaBackend() override;

  Status init();
  Status prepare(const std::vector<DType> &dtypes,
                 const std::vector<Shape> &shapes, std::vector<void *> &storage,
                 std::vector<OpProfile> &profiles) override;
  Status run(std::vector<void *> &storage,
             std::vector<OpProfile> &profiles) override;
  MemoryStats
  memoryStats(const std::vector<Tensor> &sessionInputs) const override;

private:
  std::string opLabel(int o) const {
    return "op '" + p_.ops(o).name() + "' (" + p_.ops(o).kind() + ")";
  }
  size_t bytesOf(int t) const {
    return numElements(shapes_[t]) * dtypeSize(dtypes_[t]);
  }
  void planFusions();
  Status planMemory(std::vector<void *> &storage);
  Status createKernels(std::vector<OpProfile> &profiles);
  void planJoins();
  Status enqueueStep(bool capturing);
  Status record(cudaEvent_t event, bool capturing);
  Status capture();
  void dropGraph();
  Status collectTimings(std::vector<OpProfile> &profiles);

  Plan plan_;
  const plan::Plan &p_;
  SessionOptions options_;
  DeviceContext ctx_;
  bool graphsEnabled_ = true, opTiming_ = true;

  std::vector<DType> dtypes_;
  std::vector<Shape> shapes_;
  std::vector<void *> dev_; // device address per tensor

  DeviceBuffer constants_;
  DeviceBuffer arena_;
  size_t arenaBytes_ = 0, intermediateBytes_ = 0;
  std::map<int, Staged> inputs_, outputs_, states_;

  std::map<int, Fusion> fusions_; // by matmul op index
  std::vector<int> fusedInto_;    // per op: the matmul it is part of, or -1
  // Static int8 chains (QuantizedOps.h), by anchor op; their other ops are
  // in fusedInto_.
  std::map<int, Int8Chain> int8Chains_;
  // Weight-only int8: dequantizes of constants, computed once at set-up
  // into foldedConstants_ (per op, whether it was folded).
  std::vector<bool> foldedOps_;
  DeviceBuffer foldedConstants_;
  std::vector<std::unique_ptr<CudaKernel>> kernels_;
  // Asynchronous kernels (collectives on their own stream): the ops whose
  // kernels must join the session's stream before op o runs (the first
  // that reads one of their results), and all of them.
  std::vector<std::vector<int>> joinsBefore_;
  std::vector<int> asynchronousOps_;
  DeviceBuffer flags_;
  PinnedBuffer hostFlags_;

  // Events: [0] step start, [1] after H2D (= start of op 0), [2 + o] after
  // op o, then after D2H.
  std::vector<cudaEvent_t> events_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graphExec_ = nullptr;
  bool graphFailed_ = false;
  int steps_ = 0;
  size_t h2dBytes_ = 0, d2hBytes_ = 0;
  int copyRows_ = -1; // index of the h2d row in the profiles
};

CudaBackend::~CudaBackend() {
  if (ctx_.stream)
    cudaStreamSynchronize(ctx_.stream);
  dropGraph();
  for (cudaEvent_t e : events_)
    cudaEventDestroy(e);
  kernels_.clear();
}

Status CudaBackend::init() {
  GOPT_RETURN_IF_ERROR(ctx_.init());
  graphsEnabled_ = envEnabled("GOPT_CUDA_GRAPHS");
  opTiming_ = envEnabled("GOPT_CUDA_OP_TIMING");
  // Constants once: one device blob, the plan's 64-byte aligned offsets.
  size_t bytes = p_.constants().size();
  GOPT_RETURN_IF_ERROR(constants_.allocate(bytes));
  if (bytes)
    GOPT_CUDA_CHECK(cudaMemcpy(constants_.ptr, p_.constants().data(), bytes,
                               cudaMemcpyHostToDevice));
  events_.resize(p_.ops_size() + 3);
  for (cudaEvent_t &e : events_)
    GOPT_CUDA_CHECK(cudaEventCreate(&e));
  int flagCount = std::max(p_.ops_size(), 1);
  GOPT_RETURN_IF_ERROR(flags_.allocate(flagCount * sizeof(int)));
  GOPT_RETURN_IF_ERROR(hostFlags_.allocate(flagCount * sizeof(int)));
  return Status::success();
}

void CudaBackend::dropGraph() {
  if (graphExec_)
    cudaGraphExecDestroy(graphExec_);
  if (graph_)
    cudaGraphDestroy(graph_);
  graphExec_ = nullptr;
  graph_ = nullptr;
}

void CudaBackend::planFusions() {
  const int numOps = p_.ops_size();
  fusions_.clear();
  fusedInto_.assign(numOps, -1);
  // Static int8 chains first: a quantized matmul followed by a relu is an
  // int8 chain, not an f32 matmul with a relu epilogue.
  int8Chains_ = planInt8Chains(p_, dtypes_, shapes_, &ctx_);
  for (const auto &[anchor, chain] : int8Chains_)
    for (int a : chain.absorbed)
      fusedInto_[a] = anchor;
  std::vector<int> users(p_.tensors_size(), 0), consumer(p_.tensors_size(), -1);
  for (int o = 0; o < numOps; ++o)
    for (int t : p_.ops(o).inputs()) {
      users[t]++;
      consumer[t] = o;
    }
  auto internal = [&](int t) {
    return p_.tensors(t).kind() == plan::TensorInfo::INTERMEDIATE &&
           users[t] == 1;
  };
  for (int o = 0; o < numOps; ++o) {
    const plan::Op &mm = p_.ops(o);
    if (mm.kind() != "matmul" || !isFloatDType(dtypes_[mm.outputs(0)]) ||
        int8Chains_.count(o))
      continue;
    int t = mm.outputs(0);
    Fusion f;
    f.result = t;
    int64_t n = shapes_[t].back();
    if (internal(t)) {
      const plan::Op &b = p_.ops(consumer[t]);
      int other = -1;
      if ((b.kind() == "add" || b.kind() == "bias_add") &&
          b.inputs_size() == 2 && b.inputs(0) == t)
        other = b.inputs(1);
      bool lastAxis =
          b.kind() == "add" ||
          channelAxis(OpAttrs(b).getString("data_format"), shapes_[t].size()) ==
              static_cast<int64_t>(shapes_[t].size()) - 1;
      if (other >= 0 && lastAxis &&
          p_.tensors(other).kind() == plan::TensorInfo::CONSTANT &&
          dtypes_[other] == dtypes_[t] && numElements(shapes_[other]) == n &&
          shapes_[other].back() == n && shapes_[b.outputs(0)] == shapes_[t]) {
        f.bias = consumer[t];
        f.biasTensor = other;
        f.result = b.outputs(0);
      }
    }
    if (internal(f.result)) {
      const plan::Op &r = p_.ops(consumer[f.result]);
      if (r.kind() == "relu" && r.inputs(0) == f.result) {
        f.relu = consumer[f.result];
        f.result = r.outputs(0);
      }
    }
    if (f.bias < 0 && f.relu < 0)
      continue;
    fusions_[o] = f;
    if (f.bias >= 0)
      fusedInto_[f.bias] = o;
    if (f.relu >= 0)
      fusedInto_[f.relu] = o;
  }
  foldedOps_.assign(numOps, false);
  for (int o = 0; o < numOps; ++o)
    foldedOps_[o] = fusedInto_[o] < 0 && isConstantDequantize(p_, o);
}

Status CudaBackend::planMemory(std::vector<void *> &storage) {
  const int n = p_.tensors_size(), numOps = p_.ops_size();
  dev_.assign(n, nullptr);
  std::vector<Lifetime> lifetimes(n, Lifetime{-1, -1});
  for (int o = 0; o < numOps; ++o) {
    for (int t : p_.ops(o).outputs())
      lifetimes[t] = {o, o};
    for (int t : p_.ops(o).inputs())
      lifetimes[t].lastUse = o;
  }
  // A fused matmul writes the chain's result at its own step.
  for (const auto &[o, f] : fusions_)
    lifetimes[f.result].firstUse = o;
  // An int8 chain reads its int8 input and writes its result at the
  // anchor; what its absorbed ops wrote is never written (no memory).
  std::vector<bool> unwritten(n, false);
  for (const auto &[o, chain] : int8Chains_) {
    for (int t : {chain.input, chain.residual})
      if (t >= 0)
        lifetimes[t].lastUse = std::max(lifetimes[t].lastUse, o);
    for (int a : chain.absorbed)
      for (int t : p_.ops(a).outputs())
        unwritten[t] = true;
    for (int t : p_.ops(o).outputs())
      unwritten[t] = true;
    unwritten[chain.result] = false;
    lifetimes[chain.result].firstUse = o;
  }
  // Folded dequantizes (constants) live outside the arena, for the session.
  std::vector<std::pair<int, size_t>> folded;
  size_t foldedBytes = 0;
  for (int o = 0; o < numOps; ++o)
    if (foldedOps_[o]) {
      int t = p_.ops(o).outputs(0);
      folded.push_back({t, foldedBytes});
      foldedBytes += (bytesOf(t) + 255) / 256 * 256;
      unwritten[t] = true;
    }
  if (foldedBytes > foldedConstants_.bytes)
    GOPT_RETURN_IF_ERROR(foldedConstants_.allocate(foldedBytes));
  for (const plan::Binding &b : p_.outputs())
    lifetimes[b.tensor()].lastUse = numOps;
  for (const plan::StateBinding &b : p_.states())
    if (b.has_update_tensor())
      lifetimes[b.update_tensor()].lastUse = numOps;

  std::vector<int> intermediates;
  std::vector<size_t> sizes;
  std::vector<Lifetime> spans;
  intermediateBytes_ = 0;
  for (int t = 0; t < n; ++t) {
    const plan::TensorInfo &info = p_.tensors(t);
    size_t bytes = bytesOf(t);
    switch (info.kind()) {
    case plan::TensorInfo::INTERMEDIATE:
      if (unwritten[t])
        break;
      intermediates.push_back(t);
      sizes.push_back(bytes);
      spans.push_back(lifetimes[t]);
      intermediateBytes_ += bytes;
      break;
    case plan::TensorInfo::CONSTANT:
      dev_[t] = static_cast<char *>(constants_.ptr) + info.constant_offset();
      break;
    case plan::TensorInfo::INPUT: {
      GOPT_ASSIGN_OR_RETURN(bool fresh, inputs_[t].ensure(bytes));
      (void)fresh;
      dev_[t] = inputs_[t].device.ptr;
      break;
    }
    case plan::TensorInfo::OUTPUT: {
      GOPT_ASSIGN_OR_RETURN(bool fresh, outputs_[t].ensure(bytes));
      (void)fresh;
      dev_[t] = outputs_[t].device.ptr;
      storage[t] = outputs_[t].host.ptr;
      break;
    }
    case plan::TensorInfo::STATE: {
      GOPT_ASSIGN_OR_RETURN(bool fresh, states_[t].ensure(bytes));
      if (fresh) {
        std::memset(states_[t].host.ptr, 0, bytes);
        if (info.constant_size())
          std::memcpy(states_[t].host.ptr,
                      p_.constants().data() + info.constant_offset(),
                      std::min<size_t>(info.constant_size(), bytes));
      }
      dev_[t] = states_[t].device.ptr;
      storage[t] = states_[t].host.ptr;
      break;
    }
    default:
      break;
    }
  }
  // 256-byte offsets: what cuDNN and cuBLASLt prefer.
  ArenaPlan arenaPlan = planArena(sizes, spans, 256);
  if (arenaPlan.arenaBytes > arena_.bytes)
    GOPT_RETURN_IF_ERROR(arena_.allocate(arenaPlan.arenaBytes));
  arenaBytes_ = arenaPlan.arenaBytes;
  for (size_t i = 0; i < intermediates.size(); ++i)
    dev_[intermediates[i]] =
        static_cast<char *>(arena_.ptr) + arenaPlan.offsets[i];
  for (const auto &[t, offset] : folded)
    dev_[t] = static_cast<char *>(foldedConstants_.ptr) + offset;
  h2dBytes_ = d2hBytes_ = 0;
  for (const auto &[t, s] : inputs_)
    h2dBytes_ += s.bytes;
  for (const auto &[t, s] : outputs_)
    d2hBytes_ += s.bytes;
  for (const auto &[t, s] : states_)
    h2dBytes_ += s.bytes;
  for (const plan::StateBinding &b : p_.states())
    if (b.has_update_tensor())
      d2hBytes_ += bytesOf(b.tensor());
  return Status::success();
}

Status CudaBackend::createKernels(std::vector<OpProfile> &profiles) {
  kernels_.clear();
  kernels_.resize(p_.ops_size());
  for (int o = 0; o < p_.ops_size(); ++o) {
    const plan::Op &op = p_.ops(o);
    if (fusedInto_[o] >= 0) {
      profiles[o].implementation =
          "fused into '" + p_.ops(fusedInto_[o]).name() + "'";
      continue;
    }
    if (auto chain = int8Chains_.find(o); chain != int8Chains_.end()) {
      profiles[o].implementation = chain->second.implementation;
      kernels_[o] = std::move(chain->second.kernel);
      continue;
    }
    CudaKernelConfig config;
    config.op = &op;
    config.ctx = &ctx_;
    config.errorFlag = static_cast<int *>(flags_.ptr) + o;
    config.communicator = options_.communicator.get();
    for (int t : op.inputs()) {
      config.inputTypes.push_back(dtypes_[t]);
      config.inputShapes.push_back(shapes_[t]);
      // Folded dequantizes are constants too (their kernel ran already,
      // earlier on the stream).
      bool folded = p_.tensors(t).kind() == plan::TensorInfo::INTERMEDIATE &&
                    dev_[t] && foldedConstants_.ptr &&
                    dev_[t] >= foldedConstants_.ptr &&
                    dev_[t] < static_cast<char *>(foldedConstants_.ptr) +
                                  foldedConstants_.bytes;
      config.constantInputs.push_back(
          p_.tensors(t).kind() == plan::TensorInfo::CONSTANT || folded
              ? dev_[t]
              : nullptr);
    }
    for (int t : op.outputs()) {
      config.outputTypes.push_back(dtypes_[t]);
      config.outputShapes.push_back(shapes_[t]);
    }
    // The CUDA kernels are written for these types only; the newer ones (f64,
    // i16, the wide unsigned types, float8 and 4-bit) run on the CPU.
    for (const std::vector<DType> *types :
         {&config.inputTypes, &config.outputTypes})
      for (DType t : *types)
        if (t == DType::kF64 || t == DType::kI16 || t == DType::kU16 ||
            t == DType::kU32 || t == DType::kU64 || isLowPrecisionDType(t))
          return unimplemented(opLabel(o), ": element type ", dtypeName(t),
                               " is not supported by the CUDA backend; place "
                               "the op on the CPU");
    StatusOr<std::unique_ptr<CudaKernel>> kernel = [&] {
      auto f = fusions_.find(o);
      if (f == fusions_.end())
        return createCudaKernel(config);
      const void *bias =
          f->second.biasTensor >= 0 ? dev_[f->second.biasTensor] : nullptr;
      return createMatmulKernel(config, bias, f->second.relu >= 0);
    }();
    if (!kernel.ok())
      return Status(kernel.status().code(),
                    opLabel(o) + ": " + kernel.status().message());
    profiles[o].implementation = (*kernel)->implementation();
    if (fusions_.count(o))
      profiles[o].implementation += std::string("+") +
                                    (fusions_[o].bias >= 0 ? "bias" : "") +
                                    (fusions_[o].relu >= 0 ? "relu" : "");
    kernels_[o] = std::move(kernel).value();
    if (foldedOps_[o]) {
      // Weight-only int8: dequantized once here, not every step.
      std::vector<const void *> ins;
      for (int t : op.inputs())
        ins.push_back(dev_[t]);
      std::vector<void *> outs{dev_[op.outputs(0)]};
      Status st = kernels_[o]->run(ins, outs);
      if (!st.ok())
        return Status(st.code(), opLabel(o) + ": " + st.message());
      profiles[o].implementation += " (once, at set-up)";
      kernels_[o].reset();
    }
  }
  // Filter reorders and other setup work enqueued by the kernels.
  GOPT_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
  return Status::success();
}

void CudaBackend::planJoins() {
  const int numOps = p_.ops_size();
  joinsBefore_.assign(numOps, {});
  asynchronousOps_.clear();
  std::map<int, int> producer; // tensor -> asynchronous op writing it
  for (int o = 0; o < numOps; ++o) {
    // A fused op's inputs are read when its anchor's kernel runs.
    const int runsAt = fusedInto_[o] >= 0 ? fusedInto_[o] : o;
    for (int t : p_.ops(o).inputs()) {
      auto it = producer.find(t);
      if (it == producer.end())
        continue;
      std::vector<int> &joins = joinsBefore_[std::min(runsAt, o)];
      if (std::find(joins.begin(), joins.end(), it->second) == joins.end())
        joins.push_back(it->second);
    }
    if (kernels_[o] && kernels_[o]->asynchronous()) {
      asynchronousOps_.push_back(o);
      for (int t : p_.ops(o).outputs())
        producer[t] = o;
    }
  }
  // A result no op reads may share its arena bytes with the next ops'
  // results, which the collective must not overwrite while they run: such
  // a collective is joined before the next op.
  for (int a : asynchronousOps_) {
    bool read = false;
    for (const std::vector<int> &joins : joinsBefore_)
      read = read || std::find(joins.begin(), joins.end(), a) != joins.end();
    if (!read && a + 1 < numOps)
      joinsBefore_[a + 1].push_back(a);
  }
}

Status CudaBackend::prepare(const std::vector<DType> &dtypes,
                            const std::vector<Shape> &shapes,
                            std::vector<void *> &storage,
                            std::vector<OpProfile> &profiles) {
  GOPT_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
  dropGraph();
  graphFailed_ = false;
  steps_ = 0;
  inputsChanged = true; // the staging buffers may be new
  dtypes_ = dtypes;
  shapes_ = shapes;
  if (storage.size() < shapes.size())
    storage.resize(shapes.size(), nullptr);
  // One row per op, then the copy rows; kept (with their totals) across
  // re-resolutions.
  const int numOps = p_.ops_size();
  if (copyRows_ != numOps || static_cast<int>(profiles.size()) != numOps + 2) {
    profiles.assign(numOps + 2, OpProfile());
    for (int o = 0; o < numOps; ++o) {
      profiles[o].name = p_.ops(o).name();
      profiles[o].kind = p_.ops(o).kind();
      profiles[o].device = "cuda";
    }
    copyRows_ = numOps;
  }
  planFusions();
  GOPT_RETURN_IF_ERROR(planMemory(storage));
  GOPT_RETURN_IF_ERROR(createKernels(profiles));
  planJoins();
  OpProfile &h2d = profiles[copyRows_], &d2h = profiles[copyRows_ + 1];
  h2d.name = "h2d " + formatBytes(h2dBytes_);
  d2h.name = "d2h " + formatBytes(d2hBytes_);
  h2d.kind = "memcpy_h2d";
  d2h.kind = "memcpy_d2h";
  h2d.device = d2h.device = "cuda";
  h2d.implementation = d2h.implementation = "cudaMemcpyAsync (pinned)";
  return Status::success();
}

Status CudaBackend::record(cudaEvent_t event, bool capturing) {
  if (capturing)
    return fromCuda(
        cudaEventRecordWithFlags(event, ctx_.stream, cudaEventRecordExternal),
        "cudaEventRecordWithFlags");
  return fromCuda(cudaEventRecord(event, ctx_.stream), "cudaEventRecord");
}

Status CudaBackend::enqueueStep(bool capturing) {
  const int numOps = p_.ops_size();
  cudaStream_t s = ctx_.stream;
  GOPT_RETURN_IF_ERROR(record(events_[0], capturing));
  for (auto &[t, staged] : inputs_)
    if (staged.bytes)
      GOPT_CUDA_CHECK(cudaMemcpyAsync(staged.device.ptr, staged.host.ptr,
                                      staged.bytes, cudaMemcpyHostToDevice, s));
  for (auto &[t, staged] : states_)
    if (staged.bytes)
      GOPT_CUDA_CHECK(cudaMemcpyAsync(staged.device.ptr, staged.host.ptr,
                                      staged.bytes, cudaMemcpyHostToDevice, s));
  GOPT_CUDA_CHECK(
      cudaMemsetAsync(flags_.ptr, 0, std::max(numOps, 1) * sizeof(int), s));
  GOPT_RETURN_IF_ERROR(record(events_[1], capturing));
  std::vector<const void *> ins;
  std::vector<void *> outs;
  for (int o = 0; o < numOps; ++o) {
    const plan::Op &op = p_.ops(o);
    for (int a : joinsBefore_[o])
      GOPT_RETURN_IF_ERROR(kernels_[a]->join());
    if (kernels_[o]) {
      ins.clear();
      outs.clear();
      for (int t : op.inputs())
        ins.push_back(dev_[t]);
      auto f = fusions_.find(o);
      auto chain = int8Chains_.find(o);
      if (chain != int8Chains_.end()) {
        ins.assign(1, dev_[chain->second.input]);
        if (chain->second.residual >= 0)
          ins.push_back(dev_[chain->second.residual]);
        outs.push_back(dev_[chain->second.result]);
      } else if (f != fusions_.end())
        outs.push_back(dev_[f->second.result]);
      else
        for (int t : op.outputs())
          outs.push_back(dev_[t]);
      Status st = kernels_[o]->run(ins, outs);
      if (!st.ok())
        return Status(st.code(), opLabel(o) + ": " + st.message());
    }
    if (opTiming_ || o == numOps - 1)
      GOPT_RETURN_IF_ERROR(record(events_[2 + o], capturing));
  }
  // Every collective ends within the step.
  for (int a : asynchronousOps_)
    GOPT_RETURN_IF_ERROR(kernels_[a]->join());
  for (const plan::StateBinding &b : p_.states()) {
    if (!b.has_update_tensor())
      continue;
    int u = b.update_tensor(), t = b.tensor();
    if (shapes_[u] != shapes_[t])
      return invalidArgument("state '", b.name(), "' update '",
                             p_.tensors(u).name(), "' has shape ",
                             shapeToString(shapes_[u]), ", the state has ",
                             shapeToString(shapes_[t]));
    if (dev_[u] != dev_[t] && bytesOf(t))
      GOPT_CUDA_CHECK(cudaMemcpyAsync(dev_[t], dev_[u], bytesOf(t),
                                      cudaMemcpyDeviceToDevice, s));
    if (bytesOf(t))
      GOPT_CUDA_CHECK(cudaMemcpyAsync(states_[t].host.ptr, dev_[t], bytesOf(t),
                                      cudaMemcpyDeviceToHost, s));
  }
  for (auto &[t, staged] : outputs_)
    if (staged.bytes)
      GOPT_CUDA_CHECK(cudaMemcpyAsync(staged.host.ptr, staged.device.ptr,
                                      staged.bytes, cudaMemcpyDeviceToHost, s));
  GOPT_CUDA_CHECK(cudaMemcpyAsync(hostFlags_.ptr, flags_.ptr,
                                  std::max(numOps, 1) * sizeof(int),
                                  cudaMemcpyDeviceToHost, s));
  return record(events_[2 + numOps], capturing);
}

Status CudaBackend::capture() {
  GOPT_CUDA_CHECK(
      cudaStreamBeginCapture(ctx_.stream, cudaStreamCaptureModeThreadLocal));
  Status enqueued = enqueueStep(true);
  cudaGraph_t graph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(ctx_.stream, &graph);
  cudaError_t inst = cudaErrorUnknown;
  if (enqueued.ok() && ended == cudaSuccess && graph)
    inst = cudaGraphInstantiate(&graphExec_, graph, 0);
  if (inst != cudaSuccess) {
    // Some library call refused capture: stay eager (the eager step reports
    // real errors).
    (void)cudaGetLastError();
    if (graph)
      cudaGraphDestroy(graph);
    graphExec_ = nullptr;
    graphFailed_ = true;
    return Status::success();
  }
  graph_ = graph;
  return Status::success();
}

Status CudaBackend::collectTimings(std::vector<OpProfile> &profiles) {
  const int numOps = p_.ops_size();
  auto elapsed = [&](int a, int b, float *ms) {
    return fromCuda(cudaEventElapsedTime(ms, events_[a], events_[b]),
                    "cudaEventElapsedTime");
  };
  float h2d = 0, d2h = 0;
  GOPT_RETURN_IF_ERROR(elapsed(0, 1, &h2d));
  GOPT_RETURN_IF_ERROR(elapsed(2 + numOps - 1, 2 + numOps, &d2h));
  if (numOps == 0)
    d2h = 0;
  if (opTiming_) {
    for (int o = 0; o < numOps; ++o) {
      float start = 0, ms = 0;
      // Op o runs between event 1 + o and event 2 + o.
      GOPT_RETURN_IF_ERROR(elapsed(0, 1 + o, &start));
      GOPT_RETURN_IF_ERROR(elapsed(1 + o, 2 + o, &ms));
      OpProfile &prof = profiles[o];
      prof.calls++;
      prof.lastStartMs = start;
      prof.lastMs = ms;
      prof.totalMs += ms;
    }
  }
  OpProfile &ph = profiles[copyRows_], &pd = profiles[copyRows_ + 1];
  ph.calls++;
  ph.lastStartMs = 0;
  ph.lastMs = h2d;
  ph.totalMs += h2d;
  float toD2h = 0;
  GOPT_RETURN_IF_ERROR(elapsed(0, 2 + numOps - 1, &toD2h));
  pd.calls++;
  pd.lastStartMs = toD2h;
  pd.lastMs = d2h;
  pd.totalMs += d2h;
  return Status::success();
}

Status CudaBackend::run(std::vector<void *> &storage,
                        std::vector<OpProfile> &profiles) {
  // Staged again only when set or bound since the last step: an 18 MB
  // batch costs more to copy on the host than the step on the GPU.
  if (inputsChanged) {
    for (auto &[t, staged] : inputs_)
      if (staged.bytes)
        std::memcpy(staged.host.ptr, storage[t], staged.bytes);
    inputsChanged = false;
  }
  if (graphsEnabled_ && !graphExec_ && !graphFailed_ && steps_ >= 1)
    GOPT_RETURN_IF_ERROR(capture());
  if (graphExec_)
    GOPT_CUDA_CHECK(cudaGraphLaunch(graphExec_, ctx_.stream));
  else
    GOPT_RETURN_IF_ERROR(enqueueStep(false));
  // A step that waits on collectives waits with the communicator's
  // timeout: a lost rank fails the step instead of hanging it.
  StreamCollectives *collectives =
      asynchronousOps_.empty() || !options_.communicator
          ? nullptr
          : options_.communicator->streamCollectives();
  if (collectives)
    GOPT_RETURN_IF_ERROR(collectives->waitForStream(ctx_.stream, "step"));
  else
    GOPT_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
  steps_++;
  const int *flags = static_cast<const int *>(hostFlags_.ptr);
  for (int o = 0; o < p_.ops_size(); ++o)
    if (flags[o] && kernels_[o])
      return invalidArgument(opLabel(o), ": ",
                             kernels_[o]->flagMessage(flags[o]));
  if (p_.ops_size())
    GOPT_RETURN_IF_ERROR(collectTimings(profiles));
  return Status::success();
}

MemoryStats
CudaBackend::memoryStats(const std::vector<Tensor> &sessionInputs) const {
  // Inputs are counted as the staging buffers they are copied into.
  MemoryStats m;
  m.arenaBytes = arenaBytes_;
  m.intermediateBytes = intermediateBytes_;
  // Folded (dequantized once) weights are constants of the session too.
  m.constantBytes = p_.constants().size() + foldedConstants_.bytes;
  // Pinned host staging and its device copy, both counted.
  for (const auto &[t, s] : inputs_)
    m.inputBytes += 2 * s.bytes;
  for (const auto &[t, s] : outputs_)
    m.outputBytes += 2 * s.bytes;
  for (const auto &[t, s] : states_)
    m.stateBytes += 2 * s.bytes;
  m.workspaceBytes = ctx_.workspace.bytes;
  for (const auto &k : kernels_)
    if (k)
      m.workspaceBytes += k->workspaceBytes();
  return m;
}

} // namespace

StatusOr<std::unique_ptr<Backend>>
createCudaBackend(const Plan &plan, const SessionOptions &options) {
  GOPT_RETURN_IF_ERROR(checkCudaDevice());
  for (int o = 0; o < plan.proto().ops_size(); ++o) {
    const plan::Op &op = plan.proto().ops(o);
    std::string why;
    if (!hasCudaKernel(op, &why))
      return unimplemented("no CUDA kernel for '", op.name(), "' (", op.kind(),
                           "): ", why, "; place it on the CPU");
  }
  auto backend = std::make_unique<CudaBackend>(plan, options);
  GOPT_RETURN_IF_ERROR(backend->init());
  return std::unique_ptr<Backend>(std::move(backend));
}

} // namespace gopt::runtime
