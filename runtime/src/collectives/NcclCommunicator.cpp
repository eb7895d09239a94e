//===- NcclCommunicator.cpp - Collectives on NCCL (GPUs) ------------------===//
//
// NCCL all-reduces device buffers on a stream of its own; rank 0's unique
// id reaches the other ranks over the Gloo bootstrap communicator (PyTorch
// does the same over its store). Calls are stream-ordered
// (StreamCollectives.h): the all_reduce kernel enqueues a bucket behind an
// event and the host waits only for the step's stream, with the run's
// timeout, aborting the communicator when it passes, so a lost rank never
// hangs the survivors. Built only with CUDA (GOPT_HAVE_NCCL).
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/Collectives.h"

#if GOPT_HAVE_NCCL
#include "StreamCollectives.h"

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

class NcclCommunicator : public Communicator, public StreamCollectives {
public:
  NcclCommunicator(std::shared_ptr<Communicator> bootstrap, ncclComm_t comm,
                   cudaStream_t stream)
      : bootstrap_(std::move(bootstrap)), comm_(comm), stream_(stream) {}
  ~NcclCommunicator() override {
    if (comm_)
      ncclCommDestroy(comm_);
    for (const Timed &t : timed_)
      cudaEventDestroy(t.start);
    for (cudaEvent_t e : freeStarts_)
      cudaEventDestroy(e);
    cudaStreamDestroy(stream_);
  }
  int rank() const override { return bootstrap_->rank(); }
  int size() const override { return bootstrap_->size(); }
  const char *engine() const override { return "nccl"; }
  StreamCollectives *streamCollectives() override { return this; }

  Status allReduce(const std::vector<CollectiveBuffer> &buffers,
                   Reduction reduction) override {
    auto start = Clock::now();
    GOPT_RETURN_IF_ERROR(enqueue(buffers, reduction));
    GOPT_RETURN_IF_ERROR(waitForStream(stream_, "all_reduce"));
    stats_.seconds +=
        std::chrono::duration<double>(Clock::now() - start).count();
    return Status::success();
  }

  Status enqueueAllReduce(const std::vector<CollectiveBuffer> &buffers,
                          Reduction reduction, cudaEvent_t ready,
                          cudaEvent_t done) override {
    if (ready && cudaStreamWaitEvent(stream_, ready, 0) != cudaSuccess)
      return internalError("NCCL all_reduce: cannot wait for the gradients' "
                           "event on the communication stream");
    // Its time is the span between two events on the communication stream,
    // read once the step's stream is idle (waitForStream).
    cudaEvent_t start = nullptr;
    if (!freeStarts_.empty()) {
      start = freeStarts_.back();
      freeStarts_.pop_back();
    } else if (cudaEventCreate(&start) != cudaSuccess) {
      return internalError("NCCL all_reduce: cannot create an event");
    }
    cudaEventRecord(start, stream_);
    timed_.push_back({start, done});
    GOPT_RETURN_IF_ERROR(enqueue(buffers, reduction));
    if (cudaEventRecord(done, stream_) != cudaSuccess)
      return internalError("NCCL all_reduce: cannot record its end event");
    return Status::success();
  }

  // Polls the stream and NCCL's asynchronous error; aborts on timeout.
  Status waitForStream(cudaStream_t stream, const char *what) override {
    auto deadline =
        Clock::now() + std::chrono::duration<double>(timeoutSeconds_);
    while (true) {
      cudaError_t e = cudaStreamQuery(stream);
      if (e == cudaSuccess) {
        collectTimes();
        return Status::success();
      }
      if (e != cudaErrorNotReady)
        return unavailable("NCCL ", what, ": ", cudaGetErrorString(e));
      ncclResult_t async = ncclSuccess;
      if (comm_)
        ncclCommGetAsyncError(comm_, &async);
      if (!comm_ || async != ncclSuccess || Clock::now() > deadline) {
        if (comm_)
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

  StatusOr<std::vector<int64_t>> allGather(int64_t value) override {
    return bootstrap_->allGather(value);
  }
  Status barrier() override { return bootstrap_->barrier(); }
  CollectiveStats stats() const override { return stats_; }

  void setTimeout(double seconds) { timeoutSeconds_ = seconds; }

private:
  // One group of ncclAllReduce calls on the communication stream.
  Status enqueue(const std::vector<CollectiveBuffer> &buffers,
                 Reduction reduction) {
    if (!comm_)
      return unavailable("the NCCL communicator was aborted after an error");
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
    stats_.calls++;
    for (const CollectiveBuffer &b : buffers)
      stats_.bytes += b.count * static_cast<int64_t>(dtypeSize(b.dtype));
    return Status::success();
  }

  // Adds the times of the enqueued collectives, all finished now.
  void collectTimes() {
    for (const Timed &t : timed_) {
      float ms = 0;
      if (cudaEventElapsedTime(&ms, t.start, t.done) == cudaSuccess)
        stats_.seconds += ms / 1000.0;
      freeStarts_.push_back(t.start);
    }
    timed_.clear();
    (void)cudaGetLastError();
  }

  struct Timed {
    cudaEvent_t start, done;
  };

  std::shared_ptr<Communicator> bootstrap_;
  ncclComm_t comm_;
  cudaStream_t stream_;
  double timeoutSeconds_ = 300;
  CollectiveStats stats_;
  std::vector<Timed> timed_;
  std::vector<cudaEvent_t> freeStarts_;
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
