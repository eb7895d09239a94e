//===- StreamCollectives.h - Collectives ordered on CUDA streams -*- C++
//-*-===//
//
// NCCL's calls are stream-ordered: a collective can start when an event on
// the compute stream fires and signal another event when it ends, with no
// host wait between. The CUDA all_reduce kernel uses this so that a bucket
// is reduced on the communication stream while backward goes on computing
// the next gradients; the compute stream waits for the bucket only before
// the first op that reads it. Only CUDA-enabled sources include this.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_COLLECTIVES_STREAMCOLLECTIVES_H
#define GOPT_RUNTIME_SRC_COLLECTIVES_STREAMCOLLECTIVES_H

#include "gopt/runtime/Collectives.h"

#include <cuda_runtime.h>

namespace gopt::runtime {

class StreamCollectives {
public:
  virtual ~StreamCollectives() = default;
  // Enqueues the all-reduce of `buffers` (device memory) on the
  // communicator's stream, behind `ready` (an event the caller recorded on
  // its own stream once the buffers hold their values), and records `done`
  // on that stream after it. Returns without waiting.
  virtual Status enqueueAllReduce(const std::vector<CollectiveBuffer> &buffers,
                                  Reduction reduction, cudaEvent_t ready,
                                  cudaEvent_t done) = 0;
  // Waits on the host until `stream` is idle, at most the communicator's
  // timeout, watching NCCL's asynchronous errors: a stream that waits on a
  // collective of a lost rank fails with a message instead of hanging.
  virtual Status waitForStream(cudaStream_t stream, const char *what) = 0;
};

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_COLLECTIVES_STREAMCOLLECTIVES_H
