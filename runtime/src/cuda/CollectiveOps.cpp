//===- CollectiveOps.cpp - CUDA kernel of all_reduce ----------------------===//
//
// all_reduce on the GPU: each operand is copied into its result on the
// session's stream, then the results are reduced in place across the
// replicas by the session's communicator, which must be NCCL's (device
// buffers). The communicator runs on its own stream and waits for it with a
// timeout (--collective-timeout), so the kernel first waits for the
// gradients on the session's stream; a step with a collective is therefore
// not captured into a CUDA graph (the capture is refused here, before any
// rank could call the collective, and the backend stays eager). Without a
// communicator it is the copy alone and captures.
//
//===----------------------------------------------------------------------===//
#include "CollectiveOps.h"
#include "OpHelpers.h"
#include "gopt/runtime/Collectives.h"

#include <cstring>

namespace gopt::runtime::cuda {

namespace {

class AllReduceKernel : public CudaKernel {
public:
  AllReduceKernel(const CudaKernelConfig &c, Reduction reduction)
      : ctx_(c.ctx), communicator_(c.communicator), reduction_(reduction) {
    for (size_t i = 0; i < c.inputShapes.size(); ++i) {
      counts_.push_back(product(c.inputShapes[i]));
      types_.push_back(c.inputTypes[i]);
    }
  }

  Status run(const std::vector<const void *> &in,
             const std::vector<void *> &out) override {
    for (size_t i = 0; i < in.size(); ++i)
      if (out[i] != in[i] && counts_[i])
        GOPT_CUDA_CHECK(
            cudaMemcpyAsync(out[i], in[i], counts_[i] * dtypeSize(types_[i]),
                            cudaMemcpyDeviceToDevice, ctx_->stream));
    if (!communicator_)
      return Status::success();
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    GOPT_CUDA_CHECK(cudaStreamIsCapturing(ctx_->stream, &capturing));
    if (capturing != cudaStreamCaptureStatusNone)
      return unimplemented("all_reduce across replicas waits on the host: "
                           "the step runs eagerly");
    GOPT_CUDA_CHECK(cudaStreamSynchronize(ctx_->stream));
    std::vector<CollectiveBuffer> buffers;
    for (size_t i = 0; i < out.size(); ++i)
      buffers.push_back({out[i], counts_[i], types_[i]});
    return communicator_->allReduce(buffers, reduction_);
  }

  const char *implementation() const override {
    return communicator_ ? "nccl" : "cuda";
  }

private:
  DeviceContext *ctx_;
  Communicator *communicator_;
  Reduction reduction_;
  std::vector<int64_t> counts_;
  std::vector<DType> types_;
};

} // namespace

StatusOr<std::unique_ptr<CudaKernel>>
createAllReduce(const CudaKernelConfig &c) {
  if (c.communicator && std::strcmp(c.communicator->engine(), "nccl") != 0)
    return noKernel(c, std::string("all_reduce on the GPU needs an NCCL "
                                   "communicator; the session has ") +
                           c.communicator->engine() + "'s");
  for (size_t i = 0; i < c.inputTypes.size(); ++i)
    if (c.outputTypes[i] != c.inputTypes[i])
      return noKernel(c, "result " + std::to_string(i) +
                             " has another element type than its operand");
  Reduction reduction = c.attrs().getString("reduction") == "mean"
                            ? Reduction::kMean
                            : Reduction::kSum;
  return std::unique_ptr<CudaKernel>(
      std::make_unique<AllReduceKernel>(c, reduction));
}

} // namespace gopt::runtime::cuda
