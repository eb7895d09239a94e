//===- GlooCommunicator.cpp - Collectives on Gloo (CPU processes) ---------===//
//
// Gloo's TCP transport, its rendezvous over TcpStore, gloo::allreduce (ring)
// and gloo::allgather. A bucket of several tensors is packed into one
// contiguous buffer per element type, so that it is one collective call
// (gloo::allreduce reduces equally long buffers only).
//
//===----------------------------------------------------------------------===//
#include "TcpStore.h"
#include "gopt/runtime/Collectives.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>

#include <cstring>
#include <thread>

namespace gopt::runtime {

namespace {

using namespace collectives;
using Clock = std::chrono::steady_clock;

class GlooCommunicator : public Communicator {
public:
  GlooCommunicator(const RendezvousOptions &options,
                   std::unique_ptr<TcpStoreServer> server,
                   std::unique_ptr<TcpStoreClient> store,
                   std::shared_ptr<gloo::rendezvous::Context> context)
      : options_(options), server_(std::move(server)), store_(std::move(store)),
        context_(std::move(context)) {}

  ~GlooCommunicator() override {
    // A clean exit is no lost rank; rank 0 waits for the others to leave
    // before its store goes away.
    store_->goodbye();
    context_.reset();
  }

  int rank() const override { return options_.rank; }
  int size() const override { return options_.worldSize; }
  const char *engine() const override { return "gloo"; }

  Status allReduce(const std::vector<CollectiveBuffer> &buffers,
                   Reduction reduction) override {
    auto start = Clock::now();
    for (DType dtype : {DType::kF32, DType::kF64, DType::kF16}) {
      std::vector<const CollectiveBuffer *> group;
      int64_t count = 0;
      for (const CollectiveBuffer &b : buffers)
        if (b.dtype == dtype) {
          group.push_back(&b);
          count += b.count;
        }
      if (group.empty())
        continue;
      GOPT_RETURN_IF_ERROR(reduceGroup(group, count, dtype, reduction));
    }
    for (const CollectiveBuffer &b : buffers)
      if (b.dtype != DType::kF32 && b.dtype != DType::kF64 &&
          b.dtype != DType::kF16)
        return unimplemented("all_reduce on Gloo supports f32, f64 and f16, "
                             "got ",
                             dtypeName(b.dtype));
    stats_.calls++;
    for (const CollectiveBuffer &b : buffers)
      stats_.bytes += b.count * static_cast<int64_t>(dtypeSize(b.dtype));
    stats_.seconds +=
        std::chrono::duration<double>(Clock::now() - start).count();
    return Status::success();
  }

  StatusOr<std::vector<int64_t>> allGather(int64_t value) override {
    std::vector<int64_t> all(options_.worldSize);
    try {
      gloo::AllgatherOptions opts(context_);
      opts.setInput(&value, 1);
      opts.setOutput(all.data(), all.size());
      opts.setTag(nextTag());
      opts.setTimeout(timeout());
      gloo::allgather(opts);
    } catch (const std::exception &e) {
      return failure("all_gather", e.what());
    }
    return all;
  }

  Status barrier() override {
    try {
      gloo::BarrierOptions opts(context_);
      opts.setTag(nextTag());
      opts.setTimeout(timeout());
      gloo::barrier(opts);
    } catch (const std::exception &e) {
      return failure("barrier", e.what());
    }
    return Status::success();
  }

  CollectiveStats stats() const override { return stats_; }

private:
  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(
        static_cast<int64_t>(options_.timeoutSeconds * 1000));
  }
  uint32_t nextTag() { return tag_++; }

  Status reduceGroup(const std::vector<const CollectiveBuffer *> &group,
                     int64_t count, DType dtype, Reduction reduction) {
    size_t elementSize = dtypeSize(dtype);
    // One tensor reduces in place; several are packed.
    char *data = static_cast<char *>(group[0]->data);
    if (group.size() > 1) {
      packed_.resize(count * elementSize);
      size_t offset = 0;
      for (const CollectiveBuffer *b : group) {
        std::memcpy(packed_.data() + offset, b->data, b->count * elementSize);
        offset += b->count * elementSize;
      }
      data = packed_.data();
    }
    try {
      gloo::AllreduceOptions opts(context_);
      opts.setTag(nextTag());
      opts.setTimeout(timeout());
      opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
      if (dtype == DType::kF32) {
        opts.setOutput(reinterpret_cast<float *>(data), count);
        opts.setReduceFunction(
            static_cast<void (*)(void *, const void *, const void *, size_t)>(
                &gloo::sum<float>));
      } else if (dtype == DType::kF64) {
        opts.setOutput(reinterpret_cast<double *>(data), count);
        opts.setReduceFunction(
            static_cast<void (*)(void *, const void *, const void *, size_t)>(
                &gloo::sum<double>));
      } else {
        opts.setOutput(reinterpret_cast<gloo::float16 *>(data), count);
        opts.setReduceFunction(
            static_cast<void (*)(void *, const void *, const void *, size_t)>(
                &gloo::sum<gloo::float16>));
      }
      gloo::allreduce(opts);
    } catch (const std::exception &e) {
      return failure("all_reduce", e.what());
    }
    if (reduction == Reduction::kMean)
      divide(data, count, dtype, options_.worldSize);
    if (group.size() > 1) {
      size_t offset = 0;
      for (const CollectiveBuffer *b : group) {
        std::memcpy(b->data, packed_.data() + offset, b->count * elementSize);
        offset += b->count * elementSize;
      }
    }
    return Status::success();
  }

  static void divide(char *data, int64_t count, DType dtype, int n) {
    if (dtype == DType::kF32) {
      float *p = reinterpret_cast<float *>(data);
      for (int64_t i = 0; i < count; ++i)
        p[i] /= static_cast<float>(n);
    } else if (dtype == DType::kF64) {
      double *p = reinterpret_cast<double *>(data);
      for (int64_t i = 0; i < count; ++i)
        p[i] /= n;
    } else {
      gloo::float16 *p = reinterpret_cast<gloo::float16 *>(data);
      for (int64_t i = 0; i < count; ++i)
        p[i] = gloo::cpu_float2half_rn(gloo::cpu_half2float(p[i]) / n);
    }
  }

  // A failed call: names the lost rank when the store knows it (a process
  // that exited closes its store connection, which the server may see a
  // moment after the transport did).
  Status failure(const char *what, const std::string &detail) {
    std::vector<int> lost;
    bool storeLost = false;
    // After a timeout the store is asked once: a hung rank's connection
    // stays open.
    bool timedOut = detail.find("imed out") != std::string::npos;
    for (int attempt = 0, attempts = timedOut ? 1 : 20;
         attempt < attempts && lost.empty() && !storeLost; ++attempt) {
      if (server_) {
        lost = server_->lostRanks();
      } else {
        StatusOr<std::vector<int>> ranks = store_->lostRanks();
        if (!ranks.ok())
          storeLost = true;
        else
          lost = *ranks;
      }
      if (lost.empty() && !storeLost)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (storeLost)
      lost = {0};
    std::string who;
    for (int r : lost)
      who += (who.empty() ? "" : ", ") + std::to_string(r);
    if (!lost.empty())
      return unavailable(
          "rank ", options_.rank, ": ", what, " failed: rank",
          lost.size() > 1 ? "s " : " ", who, lost.size() > 1 ? " are" : " is",
          " lost (process exited or connection closed) (", detail, ")");
    if (timedOut)
      return deadlineExceeded(
          "rank ", options_.rank, ": ", what, " timed out after ",
          options_.timeoutSeconds,
          " s (--collective-timeout); no rank exited, so one hangs or is "
          "slow (",
          detail, ")");
    return unavailable("rank ", options_.rank, ": ", what, " failed: ", detail);
  }

  RendezvousOptions options_;
  std::unique_ptr<TcpStoreServer> server_;
  std::unique_ptr<TcpStoreClient> store_;
  std::shared_ptr<gloo::rendezvous::Context> context_;
  std::vector<char> packed_;
  uint32_t tag_ = 1;
  CollectiveStats stats_;
};

} // namespace

StatusOr<std::shared_ptr<Communicator>>
createGlooCommunicator(const RendezvousOptions &options) {
  if (options.worldSize < 1)
    return invalidArgument("WORLD_SIZE must be at least 1, got ",
                           options.worldSize);
  if (options.rank < 0 || options.rank >= options.worldSize)
    return invalidArgument(
        "RANK ", options.rank, " is out of range for WORLD_SIZE ",
        options.worldSize, " (ranks 0..", options.worldSize - 1, ")");
  if (options.masterPort <= 0 || options.masterPort > 65535)
    return invalidArgument("MASTER_PORT ", options.masterPort,
                           " is not a TCP port");
  auto timeout = std::chrono::milliseconds(
      static_cast<int64_t>(options.timeoutSeconds * 1000));
  std::unique_ptr<TcpStoreServer> server;
  if (options.rank == 0) {
    GOPT_ASSIGN_OR_RETURN(
        server, TcpStoreServer::start(options.masterPort, options.worldSize));
  }
  GOPT_ASSIGN_OR_RETURN(
      std::unique_ptr<TcpStoreClient> store,
      TcpStoreClient::connect(options.masterAddr, options.masterPort,
                              options.rank, options.worldSize, timeout));
  std::shared_ptr<gloo::rendezvous::Context> context;
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname =
        options.bindAddr.empty() ? store->localAddress() : options.bindAddr;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    context = std::make_shared<gloo::rendezvous::Context>(options.rank,
                                                          options.worldSize);
    context->setTimeout(timeout);
    context->connectFullMesh(*store, device);
  } catch (const std::exception &e) {
    return deadlineExceeded(
        "rank ", options.rank, ": the ranks did not all connect within ",
        options.timeoutSeconds, " s (is every rank of WORLD_SIZE ",
        options.worldSize, " started?): ", e.what());
  }
  return std::shared_ptr<Communicator>(std::make_shared<GlooCommunicator>(
      options, std::move(server), std::move(store), std::move(context)));
}

} // namespace gopt::runtime
