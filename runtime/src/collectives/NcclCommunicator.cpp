//===- NcclCommunicator.cpp - Collectives on NCCL (GPUs) ------------------===//
//
// NCCL all-reduces device buffers on a stream of its own; rank 0's unique
// id reaches the other ranks over the Gloo bootstrap communicator (PyTorch
// does the same over its store). The host waits for the stream with the
// run's timeout and aborts the communicator when it passes, so a lost rank
// never hangs the survivors. Built only with CUDA (GOPT_HAVE_NCCL).
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/Collectives.h"

#if GOPT_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <thread>
#endif

namespace gopt::runtime {

#if GOPT_HAVE_NCCL
namespace {

using Clock = std::chrono::steady_clock;

Status ncclStatus(ncclResult_t r, const char *what) {
  if (r == ncclSuccess)
    return Status::success();
  return unavailable("NCCL ", what, ": ", ncclGetErrorString(r));
}

class NcclCommunicator : public Communicator {
public:
  NcclCommunicator(std::shared_ptr<Communicator> bootstrap, ncclComm_t comm,
                   cudaStream_t stream)
      : bootstrap_(std::move(bootstrap)), comm_(comm), stream_(stream) {}
  ~NcclCommunicator() override {
    if (comm_)
      ncclCommDestroy(comm_);
    cudaStreamDestroy(stream_);
  }
  int rank() const override { return bootstrap_->rank(); }
  int size() const override { return bootstrap_->size(); }
  const char *engine() const override { return "nccl"; }

  Status allReduce(const std::vector<CollectiveBuffer> &buffers,
                   Reduction reduction) override {
    if (!comm_)
      return unavailable("the NCCL communicator was aborted after an error");
    auto start = Clock::now();
    GOPT_RETURN_IF_ERROR(ncclStatus(ncclGroupStart(), "group start"));
    for (const CollectiveBuffer &b : buffers) {
      ncclDataType_t type;
      switch (b.dtype) {
      case DType::kF32:
        type = ncclFloat32;
        break;
      case DType::kF16:
        type = ncclFloat16;
        break;
      case DType::kBF16:
        type = ncclBfloat16;
        break;
      case DType::kF64:
        type = ncclFloat64;
        break;
      default:
        ncclGroupEnd();
        return unimplemented("all_reduce on NCCL: element type ",
                             dtypeName(b.dtype));
      }
      ncclResult_t r = ncclAllReduce(
          b.data, b.data, static_cast<size_t>(b.count), type,
          reduction == Reduction::kMean ? ncclAvg : ncclSum, comm_, stream_);
      if (r != ncclSuccess) {
        ncclGroupEnd();
        return ncclStatus(r, "all_reduce");
      }
    }
    GOPT_RETURN_IF_ERROR(ncclStatus(ncclGroupEnd(), "group end"));
    GOPT_RETURN_IF_ERROR(waitForStream("all_reduce"));
    stats_.calls++;
    for (const CollectiveBuffer &b : buffers)
      stats_.bytes += b.count * static_cast<int64_t>(dtypeSize(b.dtype));
    stats_.seconds +=
        std::chrono::duration<double>(Clock::now() - start).count();
    return Status::success();
  }

  StatusOr<std::vector<int64_t>> allGather(int64_t value) override {
    return bootstrap_->allGather(value);
  }
  Status barrier() override { return bootstrap_->barrier(); }
  CollectiveStats stats() const override { return stats_; }

  void setTimeout(double seconds) { timeoutSeconds_ = seconds; }

private:
  // Polls the stream and NCCL's asynchronous error; aborts on timeout.
  Status waitForStream(const char *what) {
    auto deadline =
        Clock::now() + std::chrono::duration<double>(timeoutSeconds_);
    while (true) {
      cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess)
        return Status::success();
      if (e != cudaErrorNotReady)
        return unavailable("NCCL ", what, ": ", cudaGetErrorString(e));
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm_, &async);
      if (async != ncclSuccess || Clock::now() > deadline) {
        ncclCommAbort(comm_);
        comm_ = nullptr;
        if (async != ncclSuccess)
          return ncclStatus(async, what);
        return deadlineExceeded("rank ", rank(), ": NCCL ", what,
                                " timed out after ", timeoutSeconds_,
                                " s (--collective-timeout): a rank is lost "
                                "or hangs");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  std::shared_ptr<Communicator> bootstrap_;
  ncclComm_t comm_;
  cudaStream_t stream_;
  double timeoutSeconds_ = 300;
  CollectiveStats stats_;
};

} // namespace

StatusOr<std::shared_ptr<Communicator>>
createNcclCommunicator(std::shared_ptr<Communicator> bootstrap, int device,
                       double timeoutSeconds) {
  std::string why;
  if (!ncclAvailable(&why))
    return unavailable("NCCL: ", why);
  if (!bootstrap)
    return invalidArgument("NCCL: no bootstrap communicator for the unique id");
  if (cudaSetDevice(device) != cudaSuccess)
    return invalidArgument("NCCL: no CUDA device ", device);
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  if (bootstrap->rank() == 0)
    GOPT_RETURN_IF_ERROR(ncclStatus(ncclGetUniqueId(&id), "get unique id"));
  // The id's bytes travel as words of all_gather, rank 0's taken.
  static_assert(sizeof(ncclUniqueId) % sizeof(int64_t) == 0);
  int64_t words[sizeof(ncclUniqueId) / sizeof(int64_t)];
  std::memcpy(words, &id, sizeof id);
  for (int64_t &word : words) {
    GOPT_ASSIGN_OR_RETURN(std::vector<int64_t> all, bootstrap->allGather(word));
    word = all[0];
  }
  std::memcpy(&id, words, sizeof id);
  ncclComm_t comm = nullptr;
  GOPT_RETURN_IF_ERROR(ncclStatus(
      ncclCommInitRank(&comm, bootstrap->size(), id, bootstrap->rank()),
      "communicator init"));
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) !=
      cudaSuccess) {
    ncclCommDestroy(comm);
    return internalError("NCCL: cannot create the communication stream");
  }
  auto nccl =
      std::make_shared<NcclCommunicator>(std::move(bootstrap), comm, stream);
  nccl->setTimeout(timeoutSeconds);
  return std::shared_ptr<Communicator>(nccl);
}

bool ncclAvailable(std::string *whyNot) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    if (whyNot)
      *whyNot = "no GPU";
    return false;
  }
  return true;
}

#else

StatusOr<std::shared_ptr<Communicator>>
createNcclCommunicator(std::shared_ptr<Communicator>, int, double) {
  std::string why;
  ncclAvailable(&why);
  return unimplemented("NCCL: ", why);
}

bool ncclAvailable(std::string *whyNot) {
  if (whyNot)
    *whyNot = "this build has no CUDA (GOPT_ENABLE_CUDA=OFF)";
  return false;
}

#endif

} // namespace gopt::runtime
