//===- Collectives.h - Communicators of data-parallel runs ------*- C++ -*-===//
//
// One interface over existing collective engines: Gloo between CPU
// processes (TCP transport), NCCL between GPUs (bootstrapped over Gloo's
// rendezvous store). gopt never implements an all-reduce algorithm itself.
// A session gets its communicator through SessionOptions; the all_reduce
// kernel runs on it. Every call has a timeout, and a lost peer becomes an
// unavailable/deadline-exceeded Status naming the rank where it can be known.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_COLLECTIVES_H
#define GOPT_RUNTIME_COLLECTIVES_H

#include "gopt/runtime/Status.h"
#include "gopt/runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gopt::runtime {

enum class Reduction { kSum, kMean };

// The stream-ordered calls of a communicator on GPUs (NCCL's); defined in
// runtime/src/collectives/StreamCollectives.h, for CUDA code only.
class StreamCollectives;

// A buffer reduced in place: host memory for Gloo, device memory for NCCL.
struct CollectiveBuffer {
  void *data = nullptr;
  int64_t count = 0; // elements
  DType dtype = DType::kF32;
};

// Accumulated over a communicator's life: what --profile reports.
struct CollectiveStats {
  int64_t calls = 0;
  int64_t bytes = 0; // payload per rank, before the algorithm's traffic
  double seconds = 0;
};

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "gloo" or "nccl".
  virtual const char *engine() const = 0;
  // Every buffer becomes the sum (or mean) of that buffer over all ranks. All
  // ranks must pass buffers of the same counts and types in the same order.
  virtual Status allReduce(const std::vector<CollectiveBuffer> &buffers,
                           Reduction reduction) = 0;
  // Every rank's `value`, indexed by rank (start-up agreement checks).
  virtual StatusOr<std::vector<int64_t>> allGather(int64_t value) = 0;
  virtual Status barrier() = 0;
  virtual CollectiveStats stats() const = 0;
  // Its stream-ordered interface where it reduces device buffers on a CUDA
  // stream (NCCL); null where every call waits on the host (Gloo).
  virtual StreamCollectives *streamCollectives() { return nullptr; }
};

// Where the ranks of a run meet: rank 0 serves a small key-value store on
// masterAddr:masterPort (torchrun's MASTER_ADDR/MASTER_PORT), which Gloo's
// rendezvous uses to exchange the ranks' own addresses.
struct RendezvousOptions {
  int rank = 0;
  int worldSize = 1;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  // The address this rank's Gloo transport binds (its own interface's);
  // empty: the address that reaches masterAddr.
  std::string bindAddr;
  // Every collective call, and start-up, fails after this long.
  double timeoutSeconds = 300;
};

// The Gloo communicator (TCP transport, ring all-reduce). Fails with a clear
// message for a rank out of range, a port in use, an unreachable master, or
// ranks that disagree on the world size.
StatusOr<std::shared_ptr<Communicator>>
createGlooCommunicator(const RendezvousOptions &options);

// The NCCL communicator on CUDA device `device`: the unique id travels from
// rank 0 over `bootstrap` (a Gloo communicator of the same ranks); calls
// wait at most `timeoutSeconds`. Available only in builds with CUDA;
// unimplemented otherwise.
StatusOr<std::shared_ptr<Communicator>>
createNcclCommunicator(std::shared_ptr<Communicator> bootstrap, int device,
                       double timeoutSeconds = 300);

// Whether NCCL communicators can be created here (CUDA build, a GPU
// present); why not otherwise.
bool ncclAvailable(std::string *whyNot);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_COLLECTIVES_H
