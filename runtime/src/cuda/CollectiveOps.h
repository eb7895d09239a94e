//===- CollectiveOps.h - CUDA kernel of all_reduce --------------*- C++ -*-===//
//
// The handler of CudaOps.def's all_reduce row (CollectiveOps.cpp), and the
// stream-ordered all-reduce it shares with cross_replica batch norm
// (TrainingOps.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_COLLECTIVEOPS_H
#define GOPT_RUNTIME_SRC_CUDA_COLLECTIVEOPS_H

#include "CudaCommon.h"
#include "gopt/runtime/Collectives.h"

namespace gopt::runtime::cuda {

StatusOr<std::unique_ptr<CudaKernel>>
createAllReduce(const CudaKernelConfig &c);

// One all-reduce site of a kernel: the session's communicator (NCCL's)
// reduces device buffers on its own stream, behind an event recorded on the
// session's stream, and records an end event, which join() makes the
// session's stream wait for. Each site has its own events, so that each
// collective's time is its own in --profile.
class StreamAllReduce {
public:
  StreamAllReduce() = default;
  StreamAllReduce(const StreamAllReduce &) = delete;
  StreamAllReduce &operator=(const StreamAllReduce &) = delete;
  ~StreamAllReduce();

  // The session's communicator must reduce on a stream; `what` names the
  // use in the refusal ("all_reduce", "cross_replica batch_norm").
  Status init(const CudaKernelConfig &c, const std::string &what);
  // Enqueues the all-reduce after the work already on `stream`; returns
  // without waiting. Refused while `stream` is captured into a CUDA graph:
  // the host waits for such a step with the communicator's timeout, so the
  // step runs eagerly (before any rank could call the collective).
  Status start(cudaStream_t stream,
               const std::vector<CollectiveBuffer> &buffers,
               Reduction reduction);
  // Makes `stream` wait for the last start()'s end (no host wait).
  Status join(cudaStream_t stream);

private:
  std::string what_;
  StreamCollectives *collectives_ = nullptr;
  // Never timed by the host (cudaEventDisableTiming is cheaper), except
  // done_, whose span from the communicator's start event is the
  // collective's time in --profile.
  cudaEvent_t ready_ = nullptr, done_ = nullptr;
  bool pending_ = false;
};

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_COLLECTIVEOPS_H
