//===- Schedule.h - What a session executes ---------------------*- C++ -*-===//
//
// A plan is lowered per session into a schedule: kernel calls ("steps")
// over slots. Slots 0..numPlanTensors-1 are the plan's tensors in their
// plain row-major layout; a backend may add slots for other physical
// layouts of a plan tensor (oneDNN's blocked formats) and the reorders
// between them, fuse several plan ops into one step, and make a slot share
// another's storage (zero-copy reshapes, in-place results). The memory
// planner then places slots by the steps' lifetimes, aliases included.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_SCHEDULE_H
#define GOPT_RUNTIME_SRC_CPU_SCHEDULE_H

#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/Plan.h"

#include <memory>
#include <string>
#include <vector>

namespace gopt::runtime {

struct Slot {
  DType dtype = DType::kInvalid;
  Shape shape;      // logical shape, what kernels see
  size_t bytes = 0; // physical size (blocked layouts pad channels)
  // Shares the storage of this slot (which must be planned in the arena);
  // -1 when the slot has its own.
  int aliasOf = -1;
  // Computed once when the schedule was built (a dequantized constant
  // weight): bound instead of arena memory, written by no step.
  std::shared_ptr<void> precomputed;
};

struct Step {
  std::unique_ptr<Kernel> kernel;
  std::vector<int> inputs, outputs; // slots
  std::string name, kind;           // the profile row: fused ops joined by +
  std::string device;
  // A step whose outputs alias its inputs and that computes nothing.
  bool isAlias = false;
};

struct ScheduleInput {
  const plan::Plan *plan = nullptr;
  const std::vector<DType> *dtypes = nullptr;
  const std::vector<Shape> *shapes = nullptr; // resolved
  // Per plan tensor: the constant's data, else null.
  std::vector<const void *> constants;
  std::string backend;
  int threads = 0;
  uint64_t seed = 0;
  bool repeatRandomness = false;
  Communicator *communicator = nullptr;
  CommunicationQueue *communicationQueue = nullptr;
  // Per plan op: its region sessions (control flow), else empty.
  const std::vector<std::vector<Session *>> *regionSessions = nullptr;
};

struct Schedule {
  std::vector<Slot> slots; // starts with one plain slot per plan tensor
  std::vector<Step> steps;
};

// The kernel config of plan op `o` at the resolved shapes.
KernelConfig makeKernelConfig(const ScheduleInput &in, int o);
// One step per plan op, kernels from the registry.
Status appendDefaultStep(const ScheduleInput &in, int o, Schedule &schedule);
// The schedule of backend "cpu": oneDNN blocked layouts, runtime fusion,
// zero-copy reshapes and the fast CPU kernels (src/cpu/CpuSchedule.cpp).
Status buildCpuSchedule(const ScheduleInput &in, Schedule &schedule);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CPU_SCHEDULE_H
