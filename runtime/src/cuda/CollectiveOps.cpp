//===- CollectiveOps.cpp - CUDA kernel of all_reduce ----------------------===//
//
// all_reduce on the GPU: each operand is copied into its result on the
// session's stream, then the results are reduced in place across the
// replicas by the session's communicator, which must be NCCL's (device
// buffers). The bucket goes to NCCL's own stream behind an event, and run()
// returns: backward goes on computing the next gradients on the session's
// stream while the bucket is on the wire, and the backend makes the session
// stream wait for the bucket's end event (join) only before the first op
// that reads a result (PyTorch DDP's bucket overlap, on streams). The host
// waits only for the whole step, with the communicator's timeout. Such a
// step runs eagerly, not as a CUDA graph: capture is refused here, before
// any rank could call the collective. Without a communicator it is the copy
// alone and captures. The event handling is StreamAllReduce's, which
// cross_replica batch norm uses too.
//
//===----------------------------------------------------------------------===//
#include "CollectiveOps.h"
#include "../collectives/StreamCollectives.h"
#include "OpHelpers.h"
#include "gopt/runtime/Collectives.h"

#include <cstring>

namespace gopt::runtime::cuda {

StreamAllReduce::~StreamAllReduce() {
  if (ready_)
    cudaEventDestroy(ready_);
  if (done_)
    cudaEventDestroy(done_);
}

Status StreamAllReduce::init(const CudaKernelConfig &c,
                             const std::string &what) {
  what_ = what;
  collectives_ = c.communicator ? c.communicator->streamCollectives() : nullptr;
  if (!collectives_)
    return noKernel(c, what +
                           " on the GPU needs an NCCL communicator; the "
                           "session has " +
                           (c.communicator
                                ? std::string(c.communicator->engine()) + "'s"
                                : std::string("none")));
  GOPT_CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
  GOPT_CUDA_CHECK(cudaEventCreate(&done_));
  return Status::success();
}

Status StreamAllReduce::start(cudaStream_t stream,
                              const std::vector<CollectiveBuffer> &buffers,
                              Reduction reduction) {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  GOPT_CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing));
  if (capturing != cudaStreamCaptureStatusNone)
    return unimplemented(what_, " across replicas waits for its "
                                "communicator's timeout on the host: the step "
                                "runs eagerly");
  GOPT_CUDA_CHECK(cudaEventRecord(ready_, stream));
  GOPT_RETURN_IF_ERROR(
      collectives_->enqueueAllReduce(buffers, reduction, ready_, done_));
  pending_ = true;
  return Status::success();
}

Status StreamAllReduce::join(cudaStream_t stream) {
  if (!pending_)
    return Status::success();
  pending_ = false;
  GOPT_CUDA_CHECK(cudaStreamWaitEvent(stream, done_, 0));
  return Status::success();
}

namespace {

class AllReduceKernel : public CudaKernel {
public:
  AllReduceKernel(const CudaKernelConfig &c, Reduction reduction)
      : ctx_(c.ctx), reduces_(c.communicator != nullptr),
        reduction_(reduction) {
    for (size_t i = 0; i < c.inputShapes.size(); ++i) {
      counts_.push_back(product(c.inputShapes[i]));
      types_.push_back(c.inputTypes[i]);
    }
    engine_ = c.communicator ? c.communicator->engine() : "cuda";
  }

  Status init(const CudaKernelConfig &c) {
    return reduces_ ? collective_.init(c, "all_reduce") : Status::success();
  }

  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    for (size_t i = 0; i < in.size(); ++i)
      if (out[i] != in[i] && counts_[i])
        GOPT_CUDA_CHECK(
            cudaMemcpyAsync(out[i], in[i], counts_[i] * dtypeSize(types_[i]),
                            cudaMemcpyDeviceToDevice, ctx_->stream));
    if (!reduces_)
      return Status::success();
    std::vector<CollectiveBuffer> buffers;
    for (size_t i = 0; i < out.size(); ++i)
      buffers.push_back({out[i], counts_[i], types_[i]});
    return collective_.start(ctx_->stream, buffers, reduction_);
  }

  bool asynchronous() const override { return reduces_; }
  Status join() override { return collective_.join(ctx_->stream); }

  const char *implementation() const override { return engine_; }

private:
  DeviceContext *ctx_;
  bool reduces_;
  const char *engine_;
  StreamAllReduce collective_;
  Reduction reduction_;
  std::vector<int64_t> counts_;
  std::vector<DType> types_;
};

} // namespace

StatusOr<std::unique_ptr<CudaKernel>>
createAllReduce(const CudaKernelConfig &c) {
  for (size_t i = 0; i < c.inputTypes.size(); ++i)
    if (c.outputTypes[i] != c.inputTypes[i])
      return noKernel(c, "result " + std::to_string(i) +
                             " has another element type than its operand");
  Reduction reduction = c.attrs().getString("reduction") == "mean"
                            ? Reduction::kMean
                            : Reduction::kSum;
  auto kernel = std::make_unique<AllReduceKernel>(c, reduction);
  GOPT_RETURN_IF_ERROR(kernel->init(c));
  return std::unique_ptr<CudaKernel>(std::move(kernel));
}

} // namespace gopt::runtime::cuda
