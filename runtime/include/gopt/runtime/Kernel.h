//===- Kernel.h - Kernels and their (kind, backend) registry ----*- C++ -*-===//
#ifndef GOPT_RUNTIME_KERNEL_H
#define GOPT_RUNTIME_KERNEL_H

#include "gopt/runtime/OpSchema.h"
#include "gopt/runtime/Status.h"
#include "gopt/runtime/Tensor.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gopt::runtime {

// Everything a kernel factory may use to prepare for one op at concrete
// shapes (create primitives, reorder constant weights). Created when a
// session resolves shapes, never per run.
class Session;
class Communicator;
class CommunicationQueue;

struct KernelConfig {
  const plan::Op *op = nullptr;
  std::vector<DType> inputTypes;
  std::vector<Shape> inputShapes;
  std::vector<DType> outputTypes;
  std::vector<Shape> outputShapes;
  // Per input: the constant's data when the input is a CONSTANT, else null.
  std::vector<const void *> constantInputs;
  int threads = 0;
  // Random numbers (training dropout): the session's seed and the op's
  // index in the plan; an op's random stream depends on both.
  uint64_t seed = 0;
  int opIndex = 0;
  // Every run draws the random numbers of the first run (gradient checks
  // by finite differences need the same dropout mask in every run).
  bool repeatRandomness = false;
  // Control flow (if, loop): a session per region of the op, which the
  // enclosing session owns and has resolved for the operands' shapes.
  std::vector<Session *> regions;
  // Collectives (all_reduce): the session's communicator; null for a
  // single replica.
  Communicator *communicator = nullptr;
  // The CPU schedule's communication thread: a collective kernel given one
  // runs asynchronously (Kernel::pending/finish); null: synchronously.
  CommunicationQueue *communicationQueue = nullptr;
  OpAttrs attrs() const { return OpAttrs(*op); }
  // Every operand and result is of element type `t` (what most fast kernels
  // check before they claim an op).
  bool allOfType(DType t) const {
    for (DType d : inputTypes)
      if (d != t)
        return false;
    for (DType d : outputTypes)
      if (d != t)
        return false;
    return true;
  }
};

class Kernel {
public:
  virtual ~Kernel() = default;
  // `inputs` and `outputs` are views with the shapes of the KernelConfig;
  // outputs are preallocated. Errors need not name the op: the session
  // prefixes it.
  virtual Status run(const std::vector<Tensor> &inputs,
                     std::vector<Tensor> &outputs) = 0;
  // "reference" or "onednn": shown by --profile.
  virtual const char *implementation() const = 0;
  // Extra memory the kernel holds (scratchpads, reordered weights).
  virtual size_t workspaceBytes() const { return 0; }
  // Ops with data-dependent result shapes (OpSchema::
  // dataDependentResultShapes): after run(), the shapes of what it wrote,
  // each within the bound its outputs were allocated at (their leading
  // elements, row-major). Null for every other kernel.
  virtual const std::vector<Shape> *actualResultShapes() const {
    return nullptr;
  }
  // Asynchronous kernels (a collective on the communication thread): run()
  // starts the work and returns, and the outputs are valid once finish()
  // returned. The CPU schedule calls finish() before the first step that
  // reads an output, and at the end of the run.
  virtual bool pending() const { return false; }
  virtual Status finish() { return Status::success(); }
};

// Returns a kernel, an error, or a null kernel meaning "this backend has no
// kernel for this configuration" (the session then falls back to the
// reference kernel).
using KernelFactory = std::function<StatusOr<std::unique_ptr<Kernel>>(
    const KernelConfig &config)>;

class KernelRegistry {
public:
  // The process-wide registry with the built-in backends registered.
  static KernelRegistry &global();

  void registerKernel(const std::string &kind, const std::string &backend,
                      KernelFactory factory);
  const KernelFactory *find(const std::string &kind,
                            const std::string &backend) const;
  bool hasKernel(const std::string &kind, const std::string &backend) const {
    return find(kind, backend) != nullptr;
  }
  // The op kinds with a kernel registered for `backend`, sorted.
  std::vector<std::string> kinds(const std::string &backend) const;
  // Instantiates the best kernel for `backend`: its own if it has one that
  // accepts the configuration, else the reference kernel (backend "cpu");
  // an error naming the op when there is none.
  StatusOr<std::unique_ptr<Kernel>> create(const std::string &backend,
                                           const KernelConfig &config) const;

private:
  std::map<std::pair<std::string, std::string>, KernelFactory> factories_;
};

// Registration of the built-in CPU kernels (called by global()).
void registerReferenceKernels(KernelRegistry &registry);
void registerOneDnnKernels(KernelRegistry &registry);

// Backends a session can be created for in this build.
bool isBackendAvailable(const std::string &backend, std::string *whyNot);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_KERNEL_H
