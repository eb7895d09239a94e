//===- Backend.h - What every execution backend implements ------*- C++ -*-===//
//
// A session (Session.cpp) resolves the plan's shapes and hands them to its
// backend; the backend executes whole steps. Each backend lives in its own
// directory and implements this interface:
//
//   src/cpu   "cpu" and "reference": kernels from the CPU KernelRegistry
//             (oneDNN, fast and reference kernels) over one host arena
//             (cpu/CpuBackend.h)
//   src/cuda  "cuda": cuDNN, cuBLASLt and own kernels on one stream, with
//             pinned host staging (cuda/CudaBackend.h; GOPT_ENABLE_CUDA)
//
// Which op kinds a backend runs is data that does not need the backend
// linked: gopt/runtime/cpu/CpuSupport.h and gopt/runtime/cuda/CudaSupport.h,
// answered together by gopt/runtime/KernelAvailability.h.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_BACKEND_H
#define GOPT_RUNTIME_SRC_BACKEND_H

#include "gopt/runtime/Plan.h"
#include "gopt/runtime/Session.h"
#include "gopt/runtime/Status.h"
#include "gopt/runtime/Tensor.h"

#include <memory>
#include <vector>

namespace gopt::runtime {

class Backend {
public:
  virtual ~Backend() = default;
  // After shapes are (re)resolved: plans memory, makes constants available
  // (once), creates kernels, and points `storage` of OUTPUT and STATE
  // tensors at host buffers the backend owns (`storage` may grow past the
  // plan's tensors; INPUT entries hold the bound inputs and are kept).
  // `profiles` gets the backend's rows (one per step, plus any copy rows);
  // rows and their totals are kept when the steps stay the same.
  virtual Status prepare(const std::vector<DType> &dtypes,
                         const std::vector<Shape> &shapes,
                         std::vector<void *> &storage,
                         std::vector<OpProfile> &profiles) = 0;
  // One step: inputs are read from storage[input tensor] (host memory,
  // which may have moved since prepare), outputs and states land in their
  // host buffers before it returns.
  virtual Status run(std::vector<void *> &storage,
                     std::vector<OpProfile> &profiles) = 0;
  // Memory the backend holds; `sessionInputs` are the session's bound
  // inputs, which a backend that reads them in place counts as its own.
  virtual MemoryStats
  memoryStats(const std::vector<Tensor> &sessionInputs) const = 0;

  // Per plan op: the sessions of its regions (control flow), which the
  // enclosing session owns and resolves; the op's kernel runs them.
  std::vector<std::vector<Session *>> regionSessions;
  // Set when an input is set or bound. By the Session's contract an input's
  // memory is unchanged until then, so a backend that stages inputs (CUDA's
  // pinned buffers) copies them from storage only when this is set, and
  // clears it.
  bool inputsChanged = true;
};

// options.memoryLimitBytes, or the machine's physical memory when it is 0
// (SIZE_MAX when unknown).
size_t sessionMemoryLimit(const SessionOptions &options);

// The backend named by options.backend, or why there is none in this build
// ("CUDA backend not built ...", "no CUDA device: ...").
StatusOr<std::unique_ptr<Backend>> createBackend(const Plan &plan,
                                                 const SessionOptions &options);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_BACKEND_H
