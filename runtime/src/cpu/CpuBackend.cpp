//===- CpuBackend.cpp - Schedules of CPU kernels over one arena -----------===//
//
// Per resolution: a schedule of kernel calls (CpuSchedule.cpp for "cpu", one
// registry kernel per op for "reference"), the slots' lifetimes packed into
// one arena (MemoryPlanner), and the kernels' argument views, made once so
// that run() allocates nothing.
//
//===----------------------------------------------------------------------===//
#include "CpuBackend.h"
#include "../collectives/CommunicationQueue.h"
#include "Schedule.h"
#include "gopt/runtime/MemoryPlanner.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>

namespace gopt::runtime {

namespace {

// The profile's clock: wall time, or with GOPT_PROFILE_THREAD_CPU=1 the
// calling thread's CPU time, which lets a single-threaded profile on a
// loaded machine (OMP_NUM_THREADS=1) count only this step's own work.
struct Clock {
  using duration = std::chrono::steady_clock::duration;
  using time_point = std::chrono::steady_clock::time_point;
  static bool threadCpu() {
    static const bool on = [] {
      const char *e = std::getenv("GOPT_PROFILE_THREAD_CPU");
      return e && e[0] == '1';
    }();
    return on;
  }
  static time_point now() {
    if (!threadCpu())
      return std::chrono::steady_clock::now();
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return time_point(std::chrono::duration_cast<duration>(
        std::chrono::seconds(ts.tv_sec) +
        std::chrono::nanoseconds(ts.tv_nsec)));
  }
};

class CpuBackend : public Backend {
public:
  CpuBackend(Plan plan, SessionOptions options)
      : plan_(std::move(plan)), p(plan_.proto()), options(std::move(options)),
        memoryLimitBytes(sessionMemoryLimit(this->options)) {}

  Status prepare(const std::vector<DType> &dtypes,
                 const std::vector<Shape> &shapes, std::vector<void *> &storage,
                 std::vector<OpProfile> &profiles) override;
  Status run(std::vector<void *> &storage,
             std::vector<OpProfile> &profiles) override;
  MemoryStats
  memoryStats(const std::vector<Tensor> &sessionInputs) const override;

private:
  std::string tensorName(int t) const { return p.tensors(t).name(); }
  size_t memoryLimit() const { return memoryLimitBytes; }
  Status buildSchedule(const std::vector<DType> &dtypes,
                       const std::vector<Shape> &shapes,
                       std::vector<OpProfile> &profiles);
  Status planMemory(const std::vector<DType> &dtypes,
                    const std::vector<Shape> &shapes,
                    std::vector<void *> &storage);
  void makeViews(const std::vector<void *> &storage);

  Plan plan_;
  const plan::Plan &p;
  SessionOptions options;
  size_t memoryLimitBytes;

  std::vector<DType> dtypes;
  std::vector<Shape> shapes; // resolved
  std::shared_ptr<void> constantBlob;
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
  // Profile rows of the collectives the thread ran, after the steps' rows,
  // by label (an all_reduce bucket, a synchronized batch norm's sums).
  std::map<std::string, size_t> communicationRows;
  // Several replicas: the collectives' thread. Last, so that it finishes
  // what it holds before the arena and buffers it writes go away.
  std::unique_ptr<CommunicationQueue> communicationQueue;

  // The collectives finished during the step starting at `stepStart`, as
  // "communication" rows (their own track in a trace).
  void recordCommunication(std::vector<OpProfile> &profiles,
                           Clock::time_point stepStart);
};

void CpuBackend::recordCommunication(std::vector<OpProfile> &profiles,
                                     Clock::time_point stepStart) {
  for (const CommunicationRecord &r : communicationQueue->takeRecords()) {
    auto [it, added] = communicationRows.try_emplace(r.label, profiles.size());
    if (added) {
      OpProfile row;
      row.name = r.label;
      row.kind = "communication";
      row.device = communicationQueue->engine();
      row.implementation = "all-reduce";
      profiles.push_back(row);
    }
    OpProfile &row = profiles[it->second];
    row.calls++;
    row.bytes = r.bytes;
    row.lastStartMs =
        std::chrono::duration<double, std::milli>(r.start - stepStart).count();
    row.lastMs =
        std::chrono::duration<double, std::milli>(r.end - r.start).count();
    row.totalMs += row.lastMs;
  }
}

Status CpuBackend::prepare(const std::vector<DType> &dtypesIn,
                           const std::vector<Shape> &shapesIn,
                           std::vector<void *> &storage,
                           std::vector<OpProfile> &profiles) {
  if (!constantBlob) {
    // Copy the blob once so that every constant is 64-byte aligned in
    // memory.
    constantBlob = allocateAligned(p.constants().size());
    if (!constantBlob)
      return resourceExhausted("cannot allocate ", p.constants().size(),
                               " bytes of constants");
    std::memcpy(constantBlob.get(), p.constants().data(), p.constants().size());
    viewedInputData.assign(p.inputs_size(), nullptr);
  }
  dtypes = dtypesIn;
  shapes = shapesIn;
  GOPT_RETURN_IF_ERROR(buildSchedule(dtypes, shapes, profiles));
  GOPT_RETURN_IF_ERROR(planMemory(dtypes, shapes, storage));
  makeViews(storage);
  return Status::success();
}

Status CpuBackend::buildSchedule(const std::vector<DType> &dtypes,
                                 const std::vector<Shape> &shapes,
                                 std::vector<OpProfile> &profiles) {
  ScheduleInput in;
  in.plan = &p;
  in.dtypes = &dtypes;
  in.shapes = &shapes;
  in.backend = options.backend;
  in.threads = options.threads;
  in.seed = options.seed;
  in.repeatRandomness = options.repeatRandomness;
  in.communicator = options.communicator.get();
  // Several replicas: collectives overlap the steps after them.
  if (options.communicator && options.communicator->size() > 1 &&
      !communicationQueue)
    communicationQueue =
        std::make_unique<CommunicationQueue>(*options.communicator);
  in.communicationQueue = communicationQueue.get();
  in.regionSessions = &regionSessions;
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
  // Keep accumulated timings when re-resolving to the same schedule (the
  // communication rows after the steps' too).
  bool same = profiles.size() >= schedule.steps.size();
  for (size_t s = 0; same && s < schedule.steps.size(); ++s)
    same = profiles[s].name == schedule.steps[s].name &&
           profiles[s].kind == schedule.steps[s].kind;
  if (!same) {
    profiles.clear();
    communicationRows.clear();
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

Status CpuBackend::planMemory(const std::vector<DType> &dtypes,
                              const std::vector<Shape> &shapes,
                              std::vector<void *> &storage) {
  const int numPlan = p.tensors_size();
  const int numSlots = static_cast<int>(schedule.slots.size());
  const int numSteps = static_cast<int>(schedule.steps.size());
  // The session's bound inputs, kept across the reassignment.
  std::vector<void *> inputData(p.inputs_size(), nullptr);
  for (int b = 0; b < p.inputs_size(); ++b)
    if (p.inputs(b).tensor() < static_cast<int>(storage.size()))
      inputData[b] = storage[p.inputs(b).tensor()];
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
      break; // inputs are attached below
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
    storage[p.inputs(b).tensor()] = inputData[b];
  return Status::success();
}

void CpuBackend::makeViews(const std::vector<void *> &storage) {
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

Status CpuBackend::run(std::vector<void *> &storage,
                       std::vector<OpProfile> &profiles) {
  // A bound input that moved since the views were made: remake them.
  for (int b = 0; b < p.inputs_size(); ++b) {
    if (storage[p.inputs(b).tensor()] != viewedInputData[b]) {
      makeViews(storage);
      break;
    }
  }
  Clock::time_point stepStart = Clock::now();
  Clock::time_point start = stepStart;
  const size_t numSteps = schedule.steps.size();
  // Asynchronous steps (collectives) whose outputs are not valid yet, by
  // storage root; a step reading one first waits for it, and its profile
  // gets the wait (the communication backward did not hide).
  const int numSlots = static_cast<int>(schedule.slots.size());
  auto root = [&](int s) {
    while (schedule.slots[s].aliasOf >= 0)
      s = schedule.slots[s].aliasOf;
    return s;
  };
  std::vector<int> pendingStepOf;
  auto finishStep = [&](size_t ps) -> Status {
    Step &step = schedule.steps[ps];
    Clock::time_point waitStart = Clock::now();
    Status s = step.kernel->finish();
    double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - waitStart)
            .count();
    profiles[ps].totalMs += ms;
    profiles[ps].lastMs += ms;
    for (int o : step.outputs)
      pendingStepOf[root(o)] = -1;
    if (!s.ok())
      return Status(s.code(), "op '" + step.name + "' (" + step.kind +
                                  "): " + s.message());
    return Status::success();
  };
  auto finishAll = [&]() -> Status {
    Status first;
    for (size_t ps = 0; ps < numSteps; ++ps)
      if (schedule.steps[ps].kernel && schedule.steps[ps].kernel->pending()) {
        Status s = finishStep(ps);
        if (first.ok())
          first = s;
      }
    return first;
  };
  for (size_t st = 0; st < numSteps; ++st) {
    Step &step = schedule.steps[st];
    OpProfile &prof = profiles[st];
    if (!pendingStepOf.empty()) {
      for (int in : step.inputs) {
        int owner = pendingStepOf[root(in)];
        if (owner < 0)
          continue;
        Status s = finishStep(owner);
        if (!s.ok()) {
          (void)finishAll();
          return s;
        }
        start = Clock::now();
      }
    }
    if (!step.isAlias) {
      Status s = step.kernel->run(stepInputs[st], stepOutputs[st]);
      if (!s.ok()) {
        (void)finishAll();
        return Status(s.code(), "op '" + step.name + "' (" + step.kind +
                                    "): " + s.message());
      }
      if (step.kernel->pending()) {
        if (pendingStepOf.empty())
          pendingStepOf.assign(numSlots, -1);
        for (int o : step.outputs)
          pendingStepOf[root(o)] = static_cast<int>(st);
      }
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
  if (!pendingStepOf.empty())
    GOPT_RETURN_IF_ERROR(finishAll());
  if (communicationQueue)
    recordCommunication(profiles, stepStart);
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

MemoryStats
CpuBackend::memoryStats(const std::vector<Tensor> &sessionInputs) const {
  MemoryStats m;
  m.arenaBytes = arenaBytes;
  m.intermediateBytes = intermediateBytes;
  m.constantBytes = p.constants().size();
  // Kernels read the session's copies of inputs in place.
  for (const Tensor &t : sessionInputs)
    if (t.isOwning())
      m.inputBytes += t.byteSize();
  for (const auto &[index, t] : outputBuffers)
    m.outputBytes += t.byteSize();
  for (const auto &[index, t] : stateBuffers)
    m.stateBytes += t.byteSize();
  for (const Step &step : schedule.steps)
    if (step.kernel)
      m.workspaceBytes += step.kernel->workspaceBytes();
  for (const Slot &slot : schedule.slots)
    if (slot.precomputed)
      m.workspaceBytes += slot.bytes;
  return m;
}

} // namespace

StatusOr<std::unique_ptr<Backend>>
createCpuBackend(const Plan &plan, const SessionOptions &options) {
  if (options.threads > 0)
    setCpuThreads(options.threads);
  return std::unique_ptr<Backend>(std::make_unique<CpuBackend>(plan, options));
}

} // namespace gopt::runtime
