//===- Session.cpp - Execute a plan on a backend --------------------------===//
#include "gopt/runtime/Session.h"
#include "Schedule.h"
#include "cpu/CpuBackend.h"
#include "cuda/CudaBackend.h"
#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/MemoryPlanner.h"
#include "gopt/runtime/OpSchema.h"

#include <chrono>
#include <cstring>
#include <map>
#include <unistd.h>

namespace gopt::runtime {

using Clock = std::chrono::steady_clock;

struct Session::Impl {
  Plan plan;
  SessionOptions options;
  const plan::Plan &p;

  std::vector<DType> dtypes;
  std::vector<Shape> shapes; // resolved
  // Per schedule slot (the plan's tensors first): where its data lives.
  std::vector<void *> storage;

  std::shared_ptr<void> constantBlob;
  // Per input binding: what the user set or bound (empty until then).
  std::vector<Tensor> boundInputs;
  std::map<int, Tensor> outputBuffers; // OUTPUT tensors
  std::map<int, Tensor> stateBuffers;  // STATE tensors
  std::shared_ptr<void> arena;
  size_t arenaBytes = 0;
  size_t intermediateBytes = 0;
  Schedule schedule;
  // Per step: the kernel's argument views, made when memory is planned so
  // that run() allocates nothing; remade only when a bound input moves.
  std::vector<std::vector<Tensor>> stepInputs, stepOutputs;
  std::vector<void *> viewedInputData; // per input binding
  std::vector<OpProfile> profiles;     // per step
  bool needsResolve = true;
  // Backend "cuda": runs whole steps; the members above stay unused.
  std::unique_ptr<DeviceBackend> device;

  Impl(Plan planIn, SessionOptions opts)
      : plan(std::move(planIn)), options(std::move(opts)), p(plan.proto()) {}

  std::string opLabel(int o) const {
    return "op '" + p.ops(o).name() + "' (" + p.ops(o).kind() + ")";
  }
  std::string tensorName(int t) const { return p.tensors(t).name(); }

  Status init();
  Status resolve();
  Status resolveShapes();
  Status checkTensorSize(int t, int producer) const;
  size_t memoryLimit() const { return memoryLimitBytes; }
  // options.memoryLimitBytes, or physical memory; set once by init().
  size_t memoryLimitBytes = SIZE_MAX;
  Status buildSchedule();
  Status planMemory();
  void makeViews();
  Status run();
  StatusOr<int> inputIndex(const std::string &name) const;
  Status checkInput(int binding, const Tensor &value) const;
};

Status Session::Impl::init() {
  std::string whyNot;
#ifdef GOPT_HAVE_CUDA_BACKEND
  if (options.backend == "cuda") {
    GOPT_ASSIGN_OR_RETURN(device, createCudaBackend(plan, options));
  } else
#endif
      if (!isBackendAvailable(options.backend, &whyNot))
    return unimplemented(whyNot);
  if (options.batchSize < 1)
    return invalidArgument("batch size must be >= 1, got ", options.batchSize);
  if (options.threads > 0)
    setCpuThreads(options.threads);
  if (options.memoryLimitBytes) {
    memoryLimitBytes = options.memoryLimitBytes;
  } else {
    long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && pageSize > 0)
      memoryLimitBytes =
          static_cast<size_t>(pages) * static_cast<size_t>(pageSize);
  }
  if (p.constants().size() > memoryLimit())
    return resourceExhausted("the plan's ", p.constants().size(),
                             " bytes of constants exceed the memory limit of ",
                             memoryLimit(), " bytes");
  const int n = p.tensors_size();
  dtypes.resize(n);
  shapes.resize(n);
  for (int i = 0; i < n; ++i)
    dtypes[i] = fromProtoDType(p.tensors(i).dtype());
  // Copy the blob once so that every constant is 64-byte aligned in memory.
  constantBlob = allocateAligned(p.constants().size());
  if (!constantBlob)
    return resourceExhausted("cannot allocate ", p.constants().size(),
                             " bytes of constants");
  std::memcpy(constantBlob.get(), p.constants().data(), p.constants().size());
  boundInputs.resize(p.inputs_size());
  viewedInputData.assign(p.inputs_size(), nullptr);
  // An op's device is where a mixed host/device run would execute it
  // (placement, lib/Transforms/PlaceDevices.cpp). A session runs the whole
  // plan on its one backend: a CPU session runs "cuda" ops on the host and
  // its `transfer` ops are plain copies; a CUDA session runs "cpu" ops on the
  // device when it has a kernel for them (else its backend says "no CUDA
  // kernel ...; place it on the CPU"). Only unknown devices are rejected.
  for (int o = 0; o < p.ops_size(); ++o) {
    const std::string &device = p.ops(o).device();
    if (!device.empty() && device != "cpu" && device != "cuda")
      return invalidArgument(opLabel(o), " is placed on unknown device '",
                             device, "' (known: cpu, cuda)");
  }
  return resolve();
}

Status Session::Impl::resolve() {
  GOPT_RETURN_IF_ERROR(resolveShapes());
  if (device) {
    GOPT_RETURN_IF_ERROR(device->prepare(dtypes, shapes, storage, profiles));
    needsResolve = false;
    return Status::success();
  }
  GOPT_RETURN_IF_ERROR(buildSchedule());
  GOPT_RETURN_IF_ERROR(planMemory());
  makeViews();
  needsResolve = false;
  return Status::success();
}

/// A resolved tensor must have a size that fits in memory: shapes come from
/// plan files and bound inputs, and a huge pad must be an error, not a 4 GiB
/// allocation or an overflowed element count.
Status Session::Impl::checkTensorSize(int t, int producer) const {
  std::string where =
      producer >= 0 ? opLabel(producer) + ": result '" + tensorName(t) + "'"
                    : "tensor '" + tensorName(t) + "'";
  std::optional<int64_t> bytes = checkedByteSize(shapes[t], dtypes[t]);
  if (!bytes)
    return invalidArgument(where, " has shape ", shapeToString(shapes[t]),
                           ", whose size does not fit in 64 bits");
  if (static_cast<uint64_t>(*bytes) > memoryLimit())
    return resourceExhausted(
        where, " of shape ", shapeToString(shapes[t]), " needs ", *bytes,
        " bytes, more than the memory limit of ", memoryLimit(), " bytes");
  return Status::success();
}

Status Session::Impl::resolveShapes() {
  const int n = p.tensors_size();
  for (int i = 0; i < n; ++i) {
    const auto &dims = p.tensors(i).shape();
    shapes[i].assign(dims.begin(), dims.end());
    // Dynamic dims of inputs (and state without a value) take the batch size
    // unless a bound tensor says otherwise (below).
    auto kind = p.tensors(i).kind();
    if (kind == plan::TensorInfo::INPUT || kind == plan::TensorInfo::STATE)
      for (int64_t &d : shapes[i])
        if (d < 0)
          d = options.batchSize;
  }
  for (int b = 0; b < p.inputs_size(); ++b)
    if (!boundInputs[b].empty())
      shapes[p.inputs(b).tensor()] = boundInputs[b].shape();
  for (int i = 0; i < n; ++i) {
    auto kind = p.tensors(i).kind();
    if (kind == plan::TensorInfo::INPUT || kind == plan::TensorInfo::STATE)
      GOPT_RETURN_IF_ERROR(checkTensorSize(i, -1));
  }

  for (int o = 0; o < p.ops_size(); ++o) {
    const plan::Op &op = p.ops(o);
    const OpSchema *schema = findOpSchema(op.kind());
    std::vector<Shape> inShapes;
    std::vector<DType> inTypes;
    for (int t : op.inputs()) {
      inShapes.push_back(shapes[t]);
      inTypes.push_back(dtypes[t]);
    }
    std::vector<Shape> outShapes(op.outputs_size());
    if (Status s =
            schema->inferShapes(OpAttrs(op), inShapes, inTypes, outShapes);
        !s.ok())
      return Status(s.code(), opLabel(o) + ": " + s.message());
    for (int r = 0; r < op.outputs_size(); ++r) {
      int t = op.outputs(r);
      DType expected = expectedResultDType(schema->resultDType, inTypes);
      if (schema->resultDType != ResultDType::kAny && dtypes[t] != expected)
        return invalidArgument(opLabel(o), ": result '", tensorName(t),
                               "' has element type ", dtypeName(dtypes[t]),
                               ", the op produces ", dtypeName(expected));
      const auto &planDims = p.tensors(t).shape();
      bool match = planDims.size() == static_cast<int>(outShapes[r].size());
      for (int d = 0; match && d < planDims.size(); ++d)
        match = planDims[d] < 0 || planDims[d] == outShapes[r][d];
      if (!match)
        return invalidArgument(
            opLabel(o), ": result '", tensorName(t), "' has shape ",
            shapeToString(outShapes[r]), " but the plan declares ",
            shapeToString(Shape(planDims.begin(), planDims.end())));
      shapes[t] = outShapes[r];
      GOPT_RETURN_IF_ERROR(checkTensorSize(t, o));
    }
  }
  return Status::success();
}

Status Session::Impl::buildSchedule() {
  ScheduleInput in;
  in.plan = &p;
  in.dtypes = &dtypes;
  in.shapes = &shapes;
  in.backend = options.backend;
  in.threads = options.threads;
  in.seed = options.seed;
  in.repeatRandomness = options.repeatRandomness;
  in.constants.assign(p.tensors_size(), nullptr);
  for (int t = 0; t < p.tensors_size(); ++t)
    if (p.tensors(t).kind() == plan::TensorInfo::CONSTANT)
      in.constants[t] = static_cast<char *>(constantBlob.get()) +
                        p.tensors(t).constant_offset();
  schedule = Schedule();
  for (int t = 0; t < p.tensors_size(); ++t) {
    Slot slot;
    slot.dtype = dtypes[t];
    slot.shape = shapes[t];
    slot.bytes = numElements(shapes[t]) * dtypeSize(dtypes[t]);
    schedule.slots.push_back(std::move(slot));
  }
  if (options.backend == "cpu") {
    GOPT_RETURN_IF_ERROR(buildCpuSchedule(in, schedule));
  } else {
    for (int o = 0; o < p.ops_size(); ++o)
      GOPT_RETURN_IF_ERROR(appendDefaultStep(in, o, schedule));
  }
  // Keep accumulated timings when re-resolving to the same schedule.
  bool same = profiles.size() == schedule.steps.size();
  for (size_t s = 0; same && s < profiles.size(); ++s)
    same = profiles[s].name == schedule.steps[s].name &&
           profiles[s].kind == schedule.steps[s].kind;
  if (!same) {
    profiles.clear();
    for (const Step &step : schedule.steps) {
      OpProfile prof;
      prof.name = step.name;
      prof.kind = step.kind;
      // Where the op ran: a CPU session runs "cuda"-placed ops on the host.
      prof.device = step.device.empty() || step.device == "cuda"
                        ? options.backend
                        : step.device;
      prof.implementation =
          step.isAlias ? "alias" : step.kernel->implementation();
      profiles.push_back(prof);
    }
  }
  return Status::success();
}

Status Session::Impl::planMemory() {
  const int numPlan = p.tensors_size();
  const int numSlots = static_cast<int>(schedule.slots.size());
  const int numSteps = static_cast<int>(schedule.steps.size());
  storage.assign(numSlots, nullptr);
  auto root = [&](int s) {
    while (schedule.slots[s].aliasOf >= 0)
      s = schedule.slots[s].aliasOf;
    return s;
  };
  // Lifetimes of storage roots over the steps, aliases included.
  std::vector<Lifetime> lifetimes(numSlots, Lifetime{-1, -1});
  auto touch = [&](int s, int step) {
    Lifetime &l = lifetimes[root(s)];
    if (l.firstUse < 0 || step < l.firstUse)
      l.firstUse = step;
    l.lastUse = std::max(l.lastUse, step);
  };
  for (int st = 0; st < numSteps; ++st) {
    for (int s : schedule.steps[st].outputs)
      touch(s, st);
    for (int s : schedule.steps[st].inputs)
      touch(s, st);
  }
  // Bound outputs and state updates must survive until the end of the run.
  for (const plan::Binding &b : p.outputs())
    touch(b.tensor(), numSteps);
  for (const plan::StateBinding &b : p.states())
    if (b.has_update_tensor())
      touch(b.update_tensor(), numSteps);

  std::vector<size_t> rootBytes(numSlots, 0);
  for (int s = 0; s < numSlots; ++s)
    rootBytes[root(s)] = std::max(rootBytes[root(s)], schedule.slots[s].bytes);
  std::vector<int> arenaSlots;
  std::vector<size_t> sizes;
  std::vector<Lifetime> spans;
  intermediateBytes = 0;
  for (int t = 0; t < numSlots; ++t) {
    size_t bytes = schedule.slots[t].bytes;
    auto kind =
        t < numPlan ? p.tensors(t).kind() : plan::TensorInfo::INTERMEDIATE;
    if (schedule.slots[t].precomputed) {
      storage[t] = schedule.slots[t].precomputed.get();
      continue;
    }
    if (kind == plan::TensorInfo::INTERMEDIATE) {
      if (t < numPlan)
        intermediateBytes += bytes;
      if (schedule.slots[t].aliasOf < 0 && lifetimes[t].firstUse >= 0) {
        arenaSlots.push_back(t);
        sizes.push_back(rootBytes[t]);
        spans.push_back(lifetimes[t]);
      }
      continue;
    }
    switch (kind) {
    case plan::TensorInfo::OUTPUT: {
      Tensor &buf = outputBuffers[t];
      if (buf.empty() || buf.shape() != shapes[t])
        buf = Tensor::allocate(dtypes[t], shapes[t]);
      if (!buf.data() && bytes)
        return resourceExhausted("cannot allocate output '", tensorName(t),
                                 "' (", bytes, " bytes)");
      storage[t] = buf.data();
      break;
    }
    case plan::TensorInfo::CONSTANT:
      storage[t] = static_cast<char *>(constantBlob.get()) +
                   p.tensors(t).constant_offset();
      break;
    case plan::TensorInfo::STATE: {
      Tensor &buf = stateBuffers[t];
      if (buf.empty() || buf.shape() != shapes[t]) {
        buf = Tensor::allocate(dtypes[t], shapes[t]);
        if (p.tensors(t).constant_size())
          std::memcpy(buf.data(),
                      static_cast<char *>(constantBlob.get()) +
                          p.tensors(t).constant_offset(),
                      p.tensors(t).constant_size());
      }
      storage[t] = buf.data();
      break;
    }
    default:
      break; // inputs are attached at run()
    }
  }
  ArenaPlan arenaPlan = planArena(sizes, spans, 64);
  if (arenaPlan.arenaBytes > memoryLimit())
    return resourceExhausted(
        "the plan's intermediates need a ", arenaPlan.arenaBytes,
        "-byte arena, more than the memory limit of ", memoryLimit(), " bytes");
  if (arenaPlan.arenaBytes > arenaBytes || !arena) {
    arena = allocateAligned(arenaPlan.arenaBytes);
    if (!arena)
      return resourceExhausted("cannot allocate the ", arenaPlan.arenaBytes,
                               "-byte arena");
  }
  arenaBytes = arenaPlan.arenaBytes;
  for (size_t i = 0; i < arenaSlots.size(); ++i)
    storage[arenaSlots[i]] =
        static_cast<char *>(arena.get()) + arenaPlan.offsets[i];
  for (int s = 0; s < numSlots; ++s)
    if (schedule.slots[s].aliasOf >= 0)
      storage[s] = storage[root(s)];
  for (int b = 0; b < p.inputs_size(); ++b)
    storage[p.inputs(b).tensor()] = boundInputs[b].data();
  return Status::success();
}

void Session::Impl::makeViews() {
  const size_t numSteps = schedule.steps.size();
  stepInputs.assign(numSteps, {});
  stepOutputs.assign(numSteps, {});
  for (size_t st = 0; st < numSteps; ++st) {
    const Step &step = schedule.steps[st];
    for (int s : step.inputs)
      stepInputs[st].push_back(Tensor::view(
          schedule.slots[s].dtype, schedule.slots[s].shape, storage[s]));
    for (int s : step.outputs)
      stepOutputs[st].push_back(Tensor::view(
          schedule.slots[s].dtype, schedule.slots[s].shape, storage[s]));
  }
  for (int b = 0; b < p.inputs_size(); ++b)
    viewedInputData[b] = storage[p.inputs(b).tensor()];
}

Status Session::Impl::run() {
  bool inputsMoved = false;
  for (int b = 0; b < p.inputs_size(); ++b) {
    if (boundInputs[b].empty())
      return failedPrecondition("missing input '", p.inputs(b).name(),
                                "': set or bind it before run()");
    void *data = boundInputs[b].data();
    storage[p.inputs(b).tensor()] = data;
    inputsMoved |= data != viewedInputData[b];
  }
  if (needsResolve)
    GOPT_RETURN_IF_ERROR(resolve());
  else if (inputsMoved)
    makeViews();
  if (device)
    return device->run(storage, profiles);
  Clock::time_point stepStart = Clock::now();
  Clock::time_point start = stepStart;
  const size_t numSteps = schedule.steps.size();
  for (size_t st = 0; st < numSteps; ++st) {
    Step &step = schedule.steps[st];
    OpProfile &prof = profiles[st];
    if (!step.isAlias) {
      Status s = step.kernel->run(stepInputs[st], stepOutputs[st]);
      if (!s.ok())
        return Status(s.code(), "op '" + step.name + "' (" + step.kind +
                                    "): " + s.message());
    }
    Clock::time_point end = Clock::now();
    prof.calls++;
    prof.lastStartMs =
        std::chrono::duration<double, std::milli>(start - stepStart).count();
    prof.lastMs =
        std::chrono::duration<double, std::milli>(end - start).count();
    prof.totalMs += prof.lastMs;
    start = end;
  }
  for (const plan::StateBinding &b : p.states()) {
    if (!b.has_update_tensor())
      continue;
    int u = b.update_tensor();
    if (shapes[u] != shapes[b.tensor()])
      return invalidArgument("state '", b.name(), "' update '", tensorName(u),
                             "' has shape ", shapeToString(shapes[u]),
                             ", the state has ",
                             shapeToString(shapes[b.tensor()]));
    std::memmove(storage[b.tensor()], storage[u],
                 numElements(shapes[u]) * dtypeSize(dtypes[u]));
  }
  return Status::success();
}

StatusOr<int> Session::Impl::inputIndex(const std::string &name) const {
  for (int b = 0; b < p.inputs_size(); ++b)
    if (p.inputs(b).name() == name)
      return b;
  std::string known;
  for (const plan::Binding &b : p.inputs())
    known += (known.empty() ? "" : ", ") + b.name();
  return notFound("no input named '", name, "' (inputs: ", known, ")");
}

Status Session::Impl::checkInput(int b, const Tensor &value) const {
  int t = p.inputs(b).tensor();
  const std::string &name = p.inputs(b).name();
  if (value.dtype() != dtypes[t])
    return invalidArgument("input '", name, "' has element type ",
                           dtypeName(dtypes[t]), ", got ",
                           dtypeName(value.dtype()));
  const auto &dims = p.tensors(t).shape();
  bool match = static_cast<int64_t>(dims.size()) == value.rank();
  for (int d = 0; match && d < dims.size(); ++d)
    match = dims[d] < 0 || dims[d] == value.dim(d);
  if (!match)
    return invalidArgument("input '", name, "' expects shape ",
                           shapeToString(Shape(dims.begin(), dims.end())),
                           ", got ", shapeToString(value.shape()));
  if (value.numElements() && !value.data())
    return invalidArgument("input '", name, "' has no data");
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

StatusOr<std::unique_ptr<Session>>
Session::create(const Plan &plan, const SessionOptions &options) {
  auto impl = std::make_unique<Impl>(plan, options);
  GOPT_RETURN_IF_ERROR(impl->init());
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const SessionOptions &Session::options() const { return impl_->options; }
const Plan &Session::plan() const { return impl_->plan; }

std::vector<TensorDesc> Session::inputs() const {
  std::vector<TensorDesc> result;
  for (const plan::Binding &b : impl_->p.inputs())
    result.push_back(
        {b.name(), impl_->dtypes[b.tensor()], impl_->shapes[b.tensor()]});
  return result;
}

std::vector<TensorDesc> Session::outputs() const {
  std::vector<TensorDesc> result;
  for (const plan::Binding &b : impl_->p.outputs())
    result.push_back(
        {b.name(), impl_->dtypes[b.tensor()], impl_->shapes[b.tensor()]});
  return result;
}

Status Session::setInput(const std::string &name, const Tensor &value) {
  GOPT_ASSIGN_OR_RETURN(int b, impl_->inputIndex(name));
  GOPT_RETURN_IF_ERROR(impl_->checkInput(b, value));
  Tensor &slot = impl_->boundInputs[b];
  if (slot.empty() || !slot.isOwning() || slot.shape() != value.shape())
    slot = Tensor::allocate(value.dtype(), value.shape());
  if (!slot.data())
    return resourceExhausted("cannot allocate ", value.byteSize(),
                             " bytes for input '", name, "'");
  if (value.byteSize())
    std::memcpy(slot.data(), value.data(), value.byteSize());
  if (value.shape() != impl_->shapes[impl_->p.inputs(b).tensor()])
    impl_->needsResolve = true;
  return Status::success();
}

Status Session::bindInput(const std::string &name, const Tensor &value) {
  GOPT_ASSIGN_OR_RETURN(int b, impl_->inputIndex(name));
  GOPT_RETURN_IF_ERROR(impl_->checkInput(b, value));
  impl_->boundInputs[b] = Tensor::view(value.dtype(), value.shape(),
                                       const_cast<void *>(value.data()));
  if (value.shape() != impl_->shapes[impl_->p.inputs(b).tensor()])
    impl_->needsResolve = true;
  return Status::success();
}

Status Session::run() { return impl_->run(); }

StatusOr<Tensor> Session::output(const std::string &name) const {
  int t = impl_->plan.outputTensor(name);
  if (t < 0)
    return notFound("no output named '", name, "'");
  if (!impl_->storage[t])
    return failedPrecondition("output '", name, "' is not computed yet");
  return Tensor::view(impl_->dtypes[t], impl_->shapes[t], impl_->storage[t]);
}

static int stateTensor(const plan::Plan &p, const std::string &name) {
  for (const plan::StateBinding &b : p.states())
    if (b.name() == name)
      return b.tensor();
  return -1;
}

StatusOr<Tensor> Session::state(const std::string &name) const {
  int t = stateTensor(impl_->p, name);
  if (t < 0)
    return notFound("no state named '", name, "'");
  return Tensor::view(impl_->dtypes[t], impl_->shapes[t], impl_->storage[t]);
}

Status Session::setState(const std::string &name, const Tensor &value) {
  int t = stateTensor(impl_->p, name);
  if (t < 0)
    return notFound("no state named '", name, "'");
  if (value.dtype() != impl_->dtypes[t] || value.shape() != impl_->shapes[t])
    return invalidArgument(
        "state '", name, "' is ", dtypeName(impl_->dtypes[t]),
        shapeToString(impl_->shapes[t]), ", got ", dtypeName(value.dtype()),
        shapeToString(value.shape()));
  std::memcpy(impl_->storage[t], value.data(), value.byteSize());
  return Status::success();
}

const std::vector<OpProfile> &Session::opProfiles() const {
  return impl_->profiles;
}

void Session::resetProfiles() {
  for (OpProfile &p : impl_->profiles) {
    p.calls = 0;
    p.totalMs = p.lastMs = p.lastStartMs = 0;
  }
}

MemoryStats Session::memoryStats() const {
  if (impl_->device)
    return impl_->device->memoryStats();
  MemoryStats m;
  const Impl &s = *impl_;
  m.arenaBytes = s.arenaBytes;
  m.intermediateBytes = s.intermediateBytes;
  m.constantBytes = s.p.constants().size();
  for (const Tensor &t : s.boundInputs)
    if (t.isOwning())
      m.inputBytes += t.byteSize();
  for (const auto &[index, t] : s.outputBuffers)
    m.outputBytes += t.byteSize();
  for (const auto &[index, t] : s.stateBuffers)
    m.stateBytes += t.byteSize();
  for (const Step &step : s.schedule.steps)
    if (step.kernel)
      m.workspaceBytes += step.kernel->workspaceBytes();
  for (const Slot &slot : s.schedule.slots)
    if (slot.precomputed)
      m.workspaceBytes += slot.bytes;
  return m;
}

const Shape &Session::tensorShape(int tensor) const {
  return impl_->shapes[tensor];
}

} // namespace gopt::runtime
