//===- Session.h - Execute a plan on a backend ------------------*- C++ -*-===//
#ifndef GOPT_RUNTIME_SESSION_H
#define GOPT_RUNTIME_SESSION_H

#include "gopt/runtime/Plan.h"
#include "gopt/runtime/Status.h"
#include "gopt/runtime/Tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace gopt::runtime {

class Communicator; // gopt/runtime/Collectives.h

struct SessionOptions {
  // "cpu" (oneDNN where it has a kernel, reference otherwise), "reference"
  // (reference kernels only: the oracle), "cuda" (not in this build).
  std::string backend = "cpu";
  // Intra-op threads; 0 keeps the library default.
  int threads = 0;
  // Value of every dynamic input dimension until inputs of another shape are
  // bound.
  int64_t batchSize = 1;
  // Seed of ops that draw random numbers (dropout in training).
  uint64_t seed = 0;
  // Every run draws the random numbers of the first (the same dropout
  // masks): for gradient checks by finite differences.
  bool repeatRandomness = false;
  // Largest memory a session may plan (arena, outputs, state), in bytes; a
  // plan whose shapes need more is an error, not an allocation attempt.
  // 0: the machine's physical memory.
  size_t memoryLimitBytes = 0;
  // Data-parallel training: the communicator the plan's collectives
  // (all_reduce) run on; null: a single replica, where they are identities.
  std::shared_ptr<Communicator> communicator;
};

// Per-op timing, accumulated over runs.
struct OpProfile {
  std::string name;
  std::string kind;
  std::string device;
  std::string implementation; // "reference" / "onednn"
  int64_t calls = 0;
  double totalMs = 0;
  // Runs of the session that timed this row, and the least time one run
  // spent in it (all its calls): the figure least disturbed by other load.
  int64_t runs = 0;
  double minRunMs = 0;
  // The last run: start relative to the start of that run, and duration.
  double lastStartMs = 0;
  double lastMs = 0;
  // Rows of kind "communication" (a collective on the communication
  // thread, overlapping the ops): bytes each call reduces.
  int64_t bytes = 0;
  // Floating-point operations of one call (the ops' ODS flopFunction at the
  // resolved shapes, summed over a fused step's ops); 0: memory-bound.
  double flops = 0;
};

struct MemoryStats {
  size_t arenaBytes = 0;        // the planned arena of intermediates
  size_t intermediateBytes = 0; // sum of all intermediate tensor sizes
  size_t constantBytes = 0;
  size_t inputBytes = 0;  // copies of inputs held by the session
  size_t outputBytes = 0; // output buffers
  size_t stateBytes = 0;
  // Kernel-held memory (reordered weights) and weights dequantized once
  // when the session was set up.
  size_t workspaceBytes = 0;
  size_t totalBytes() const {
    return arenaBytes + constantBytes + inputBytes + outputBytes + stateBytes +
           workspaceBytes;
  }
};

struct TensorDesc {
  std::string name;
  DType dtype = DType::kInvalid;
  Shape shape; // resolved (concrete) shape
};

class Session {
public:
  // Resolves shapes for options.batchSize, plans memory and creates kernels.
  static StatusOr<std::unique_ptr<Session>>
  create(const Plan &plan, const SessionOptions &options = {});
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  const SessionOptions &options() const;
  const Plan &plan() const;

  std::vector<TensorDesc> inputs() const;
  std::vector<TensorDesc> outputs() const;

  // Copies `value` into the session. A shape other than the current one
  // (compatible with the plan's static dims) re-resolves shapes at the next
  // run().
  Status setInput(const std::string &name, const Tensor &value);
  // Zero-copy: the session reads `value`'s memory during run(); it must stay
  // alive and unchanged until the input is bound again.
  Status bindInput(const std::string &name, const Tensor &value);

  // Runs the schedule once. Every input must have been set or bound.
  Status run();

  // A view of an output, valid until the next run() or re-resolution.
  StatusOr<Tensor> output(const std::string &name) const;
  StatusOr<Tensor> state(const std::string &name) const;
  Status setState(const std::string &name, const Tensor &value);

  const std::vector<OpProfile> &opProfiles() const;
  void resetProfiles();
  MemoryStats memoryStats() const;
  // Resolved shape of any tensor of the plan by index.
  const Shape &tensorShape(int tensor) const;

  struct Impl;

private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SESSION_H
