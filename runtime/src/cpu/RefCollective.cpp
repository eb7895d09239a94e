//===- RefCollective.cpp - The all_reduce kernel --------------------------===//
//
// all_reduce copies each operand into its result and reduces the results in
// place on the session's communicator, one call per op (a bucket). Given
// the CPU schedule's communication thread it only starts the reduction
// there, and the schedule waits for it (finish) before the first step that
// reads a result, so backward goes on meanwhile. Without a communicator
// (one replica) it is the copy alone.
//
//===----------------------------------------------------------------------===//
#include "../collectives/CommunicationQueue.h"
#include "Reference.h"
#include "gopt/runtime/Collectives.h"

#include <cstring>
#include <future>

namespace gopt::runtime::ref {

namespace {

class AllReduceKernel : public Kernel {
public:
  explicit AllReduceKernel(const KernelConfig &config)
      : communicator_(config.communicator), queue_(config.communicationQueue),
        name_(config.op->name()),
        reduction_(config.attrs().getString("reduction") == "mean"
                       ? Reduction::kMean
                       : Reduction::kSum) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    std::vector<CollectiveBuffer> buffers;
    for (size_t i = 0; i < in.size(); ++i) {
      if (out[i].dtype() != in[i].dtype())
        return invalidArgument("result ", i, " has element type ",
                               dtypeName(out[i].dtype()), ", operand ", i,
                               " has ", dtypeName(in[i].dtype()));
      if (out[i].data() != in[i].data())
        std::memcpy(out[i].data(), in[i].data(), in[i].byteSize());
      buffers.push_back({out[i].data(), out[i].numElements(), out[i].dtype()});
    }
    if (!communicator_ || communicator_->size() == 1)
      return Status::success();
    if (queue_) {
      done_ = queue_->allReduce(std::move(buffers), reduction_, name_);
      return Status::success();
    }
    return communicator_->allReduce(buffers, reduction_);
  }

  bool pending() const override { return done_.valid(); }
  Status finish() override {
    if (!done_.valid())
      return Status::success();
    Status status = done_.get();
    done_ = {};
    return status;
  }

  const char *implementation() const override {
    return communicator_ && communicator_->size() > 1 ? communicator_->engine()
                                                      : "reference";
  }

private:
  Communicator *communicator_;
  CommunicationQueue *queue_;
  std::string name_;
  Reduction reduction_;
  std::shared_future<Status> done_;
};

} // namespace

void registerCollectiveKernels(KernelRegistry &r) {
  r.registerKernel(
      "all_reduce", "reference",
      [](const KernelConfig &config) -> StatusOr<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(
            std::make_unique<AllReduceKernel>(config));
      });
}

} // namespace gopt::runtime::ref
