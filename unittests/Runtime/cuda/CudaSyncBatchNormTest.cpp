//===- CudaSyncBatchNormTest.cpp - cross_replica batch norm on the GPU ----===//
//
// Training batch_norm and its batch_norm_grad with cross_replica
// (--sync-batch-norm) in one plan, on CUDA against the reference kernels:
// - two replicas in one process, each a session in its own thread with its
//   own half of the batch, joined by a stand-in communicator that sums the
//   two ranks' buffers on the host (device buffers are copied through it),
//   so the global statistics differ from either replica's own;
// - a one-rank NCCL communicator (the real stream-ordered path);
// - a Gloo communicator, which a CUDA session cannot use: a clear refusal.
// The stand-in itself is checked on the reference backend, without a GPU:
// two replicas with global statistics give what one session computes on
// the whole batch. The GPU tests skip without a device.
//
//===----------------------------------------------------------------------===//
#include "../collectives/StreamCollectives.h"
#include "CudaTestSupport.h"
#include "gopt/runtime/Collectives.h"
#include "gopt/runtime/PlanBuilder.h"
#include "gopt/runtime/Session.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace gopt::runtime::testing {
namespace {

constexpr DType F32 = DType::kF32;

// What two PairedCommunicators share: each call's buffers, summed once both
// ranks have arrived.
struct Rendezvous {
  std::mutex mutex;
  std::condition_variable arrived;
  int waiting = 0;
  int64_t generation = 0;
  std::vector<double> sum, result;

  StatusOr<std::vector<double>> exchange(const std::vector<double> &mine) {
    std::unique_lock<std::mutex> lock(mutex);
    if (waiting == 0) {
      sum = mine;
      waiting = 1;
      int64_t g = generation;
      if (!arrived.wait_for(lock, std::chrono::seconds(30),
                            [&] { return generation != g; }))
        return deadlineExceeded("the other rank never reached the collective");
      return result;
    }
    if (sum.size() != mine.size())
      return invalidArgument("ranks reduce ", sum.size(), " and ", mine.size(),
                             " values");
    for (size_t i = 0; i < sum.size(); ++i)
      sum[i] += mine[i];
    result = sum;
    waiting = 0;
    ++generation;
    arrived.notify_all();
    return result;
  }
};

// One of two ranks in this process: host buffers (the reference backend)
// are summed directly, device buffers (the CUDA backend) through host
// copies, all before enqueueAllReduce returns, so `done` is recorded after
// the reduced values are back on the device.
class PairedCommunicator : public Communicator, public StreamCollectives {
public:
  PairedCommunicator(int rank, std::shared_ptr<Rendezvous> rendezvous)
      : rank_(rank), rendezvous_(std::move(rendezvous)) {}
  ~PairedCommunicator() override {
    if (stream_)
      cudaStreamDestroy(stream_);
  }
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  const char *engine() const override { return "paired"; }
  StreamCollectives *streamCollectives() override { return this; }

  Status allReduce(const std::vector<CollectiveBuffer> &buffers,
                   Reduction reduction) override {
    ++calls_;
    return reduceHost(buffers, reduction);
  }

  Status enqueueAllReduce(const std::vector<CollectiveBuffer> &buffers,
                          Reduction reduction, cudaEvent_t ready,
                          cudaEvent_t done) override {
    ++calls_;
    if (!stream_ && cudaStreamCreateWithFlags(
                        &stream_, cudaStreamNonBlocking) != cudaSuccess)
      return internalError("cannot create the stand-in's stream");
    if (ready && cudaEventSynchronize(ready) != cudaSuccess)
      return internalError("the buffers' event failed");
    for (const CollectiveBuffer &b : buffers) {
      size_t bytes = b.count * dtypeSize(b.dtype);
      std::vector<char> host(bytes);
      cudaMemcpyAsync(host.data(), b.data, bytes, cudaMemcpyDeviceToHost,
                      stream_);
      if (cudaStreamSynchronize(stream_) != cudaSuccess)
        return internalError("device-to-host copy failed");
      GOPT_RETURN_IF_ERROR(
          reduceHost({{host.data(), b.count, b.dtype}}, reduction));
      cudaMemcpyAsync(b.data, host.data(), bytes, cudaMemcpyHostToDevice,
                      stream_);
      if (cudaStreamSynchronize(stream_) != cudaSuccess)
        return internalError("host-to-device copy failed");
    }
    if (done && cudaEventRecord(done, stream_) != cudaSuccess)
      return internalError("cannot record the end event");
    return Status::success();
  }
  Status waitForStream(cudaStream_t stream, const char *) override {
    ++waits_;
    return cudaStreamSynchronize(stream) == cudaSuccess
               ? Status::success()
               : internalError("stream failed");
  }
  StatusOr<std::vector<int64_t>> allGather(int64_t value) override {
    return std::vector<int64_t>{value, value};
  }
  Status barrier() override { return Status::success(); }
  CollectiveStats stats() const override { return {calls_, 0, 0}; }

  int64_t calls_ = 0, waits_ = 0;

private:
  Status reduceHost(const std::vector<CollectiveBuffer> &buffers,
                    Reduction reduction) {
    for (const CollectiveBuffer &b : buffers) {
      if (b.dtype != DType::kF64 && b.dtype != DType::kF32)
        return unimplemented("the stand-in reduces f32 and f64");
      std::vector<double> values(b.count);
      for (int64_t i = 0; i < b.count; ++i)
        values[i] = b.dtype == DType::kF64 ? static_cast<double *>(b.data)[i]
                                           : static_cast<float *>(b.data)[i];
      GOPT_ASSIGN_OR_RETURN(std::vector<double> total,
                            rendezvous_->exchange(values));
      double scale = reduction == Reduction::kMean ? 0.5 : 1.0;
      for (int64_t i = 0; i < b.count; ++i) {
        if (b.dtype == DType::kF64)
          static_cast<double *>(b.data)[i] = total[i] * scale;
        else
          static_cast<float *>(b.data)[i] =
              static_cast<float>(total[i] * scale);
      }
    }
    return Status::success();
  }

  int rank_;
  std::shared_ptr<Rendezvous> rendezvous_;
  cudaStream_t stream_ = nullptr;
};

// Forward and backward of one synchronized batch norm over x of `shape`.
struct Case {
  Shape shape;
  const char *format;
  int64_t channels() const {
    return shape[std::string(format) == "NCHW" && shape.size() > 2
                     ? 1
                     : shape.size() - 1];
  }
};

// Results, in order: y, batch_mean, batch_variance, running_mean,
// running_variance, dx, dscale, doffset.
const std::vector<std::string> kResults = {
    "y",       "batch_mean", "batch_var", "run_mean",
    "run_var", "dx",         "dscale",    "doffset"};

Plan syncBatchNormPlan(const Case &c, bool crossReplica) {
  PlanBuilder b("sync-batch-norm");
  Shape ch = {c.channels()};
  int x = b.addInput("x", F32, c.shape);
  int scale = b.addInput("scale", F32, ch);
  int offset = b.addInput("offset", F32, ch);
  int mean = b.addInput("mean", F32, ch);
  int var = b.addInput("var", F32, ch);
  int dy = b.addInput("dy", F32, c.shape);
  int y = b.addOutput("y", F32, c.shape);
  int bm = b.addOutput("batch_mean", F32, ch);
  int bv = b.addOutput("batch_var", F32, ch);
  int rm = b.addOutput("run_mean", F32, ch);
  int rv = b.addOutput("run_var", F32, ch);
  int dx = b.addOutput("dx", F32, c.shape);
  int dscale = b.addOutput("dscale", F32, ch);
  int doffset = b.addOutput("doffset", F32, ch);
  b.addOp("batch_norm", "bn", {x, scale, offset, mean, var},
          {y, bm, bv, rm, rv},
          {{"epsilon", floatAttr(1e-3)},
           {"momentum", floatAttr(0.9)},
           {"training", boolAttr(true)},
           {"cross_replica", boolAttr(crossReplica)},
           {"data_format", stringAttr(c.format)}});
  b.addOp("batch_norm_grad", "bn/grad", {dy, x, scale, bm, bv},
          {dx, dscale, doffset},
          {{"epsilon", floatAttr(1e-3)},
           {"cross_replica", boolAttr(crossReplica)},
           {"data_format", stringAttr(c.format)}});
  auto plan = b.build();
  EXPECT_TRUE(plan.ok()) << plan.status().toString();
  return *plan;
}

Tensor affine(Tensor t, float factor, float offset) {
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = t.data<float>()[i] * factor + offset;
  return t;
}

// x, scale, offset, mean, var, dy of one replica (a batch of shape[0]).
std::vector<Tensor> replicaInputs(const Case &c, int rank) {
  Shape ch = {c.channels()};
  uint32_t seed = 100 + 10 * rank;
  // Another mean per replica, so that the global statistics are neither's.
  return {affine(randomF32(c.shape, seed), 2, 3 + 2 * rank),
          randomF32(ch, 1),
          randomF32(ch, 2),
          randomF32(ch, 3),
          affine(randomF32(ch, 4), 0.1f, 1),
          randomF32(c.shape, seed + 1)};
}

// The batch of both replicas, concatenated along axis 0.
Tensor concatBatch(const Tensor &a, const Tensor &b) {
  Shape s = a.shape();
  s[0] += b.shape()[0];
  Tensor t = Tensor::allocate(F32, s);
  std::copy(a.data<float>(), a.data<float>() + a.numElements(),
            t.data<float>());
  std::copy(b.data<float>(), b.data<float>() + b.numElements(),
            t.data<float>() + a.numElements());
  return t;
}

// Elements [from, from + count) of t, as a tensor of `shape`.
Tensor part(const Tensor &t, int64_t from, const Shape &shape) {
  Tensor p = Tensor::allocate(F32, shape);
  std::copy(t.data<float>() + from, t.data<float>() + from + p.numElements(),
            p.data<float>());
  return p;
}

StatusOr<std::vector<Tensor>>
runReplica(const Plan &plan, const std::string &backend,
           std::shared_ptr<Communicator> communicator,
           const std::vector<Tensor> &inputs) {
  SessionOptions options;
  options.backend = backend;
  options.threads = 1;
  options.communicator = std::move(communicator);
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                        Session::create(plan, options));
  std::vector<TensorDesc> ins = session->inputs();
  for (size_t i = 0; i < inputs.size(); ++i)
    GOPT_RETURN_IF_ERROR(session->setInput(ins[i].name, inputs[i]));
  // Twice: nothing may carry over between steps (events, scratch).
  for (int step = 0; step < 2; ++step)
    GOPT_RETURN_IF_ERROR(session->run());
  std::vector<Tensor> results;
  for (const std::string &name : kResults) {
    GOPT_ASSIGN_OR_RETURN(Tensor t, session->output(name));
    results.push_back(t.clone());
  }
  return results;
}

// Both replicas of `c` on `backend`, each in its own thread with its own
// PairedCommunicator; the communicators are returned in `used`.
std::vector<StatusOr<std::vector<Tensor>>>
runPair(const Case &c, const std::string &backend,
        std::vector<std::shared_ptr<PairedCommunicator>> *used = nullptr) {
  Plan plan = syncBatchNormPlan(c, true);
  auto rendezvous = std::make_shared<Rendezvous>();
  std::vector<std::shared_ptr<PairedCommunicator>> communicators = {
      std::make_shared<PairedCommunicator>(0, rendezvous),
      std::make_shared<PairedCommunicator>(1, rendezvous)};
  std::vector<StatusOr<std::vector<Tensor>>> results(
      2, internalError("did not run"));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      results[rank] = runReplica(plan, backend, communicators[rank],
                                 replicaInputs(c, rank));
    });
  for (std::thread &t : threads)
    t.join();
  if (used)
    *used = communicators;
  return results;
}

const std::vector<Case> kCases = {
    {{3, 6, 5, 4}, "NCHW"}, {{3, 5, 4, 6}, "NHWC"}, {{7, 6}, "NHWC"}};

// The stand-in and the harness, on the reference backend (runs anywhere):
// two replicas with global statistics compute what one session computes on
// the whole batch, except dscale and doffset, which stay each replica's
// (they add up to the whole batch's).
TEST(SyncBatchNormHarness, ReferencePairMatchesTheWholeBatch) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.format + shapeToString(c.shape));
    auto pair = runPair(c, "reference");
    ASSERT_TRUE(pair[0].ok()) << pair[0].status().toString();
    ASSERT_TRUE(pair[1].ok()) << pair[1].status().toString();
    std::vector<Tensor> r0 = replicaInputs(c, 0), r1 = replicaInputs(c, 1);
    std::vector<Tensor> whole = r0;
    whole[0] = concatBatch(r0[0], r1[0]);
    whole[5] = concatBatch(r0[5], r1[5]);
    Case wc = c;
    wc.shape[0] *= 2;
    auto expected =
        runReplica(syncBatchNormPlan(wc, false), "reference", nullptr, whole);
    ASSERT_TRUE(expected.ok()) << expected.status().toString();
    const std::vector<Tensor> &e = *expected;
    int64_t half = r0[0].numElements();
    for (int rank = 0; rank < 2; ++rank) {
      const std::vector<Tensor> &got = *pair[rank];
      for (size_t i : {size_t(0), size_t(5)})
        EXPECT_TRUE(
            allClose(got[i], part(e[i], rank * half, c.shape), 1e-5, 1e-5))
            << kResults[i] << " of rank " << rank;
      for (size_t i = 1; i < 5; ++i)
        EXPECT_TRUE(allClose(got[i], e[i], 1e-5, 1e-5))
            << kResults[i] << " of rank " << rank;
    }
    for (size_t i : {size_t(6), size_t(7)}) {
      Tensor sum = (*pair[0])[i].clone();
      for (int64_t k = 0; k < sum.numElements(); ++k)
        sum.data<float>()[k] += (*pair[1])[i].data<float>()[k];
      EXPECT_TRUE(allClose(sum, e[i], 1e-4, 1e-4)) << kResults[i];
    }
  }
}

class CudaSyncBatchNorm : public CudaDeviceTest {};

TEST_F(CudaSyncBatchNorm, TwoReplicasMatchTheReference) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.format + shapeToString(c.shape));
    auto expected = runPair(c, "reference");
    std::vector<std::shared_ptr<PairedCommunicator>> communicators;
    auto got = runPair(c, "cuda", &communicators);
    for (int rank = 0; rank < 2; ++rank) {
      ASSERT_TRUE(expected[rank].ok()) << expected[rank].status().toString();
      ASSERT_TRUE(got[rank].ok()) << got[rank].status().toString();
      for (size_t i = 0; i < kResults.size(); ++i)
        EXPECT_TRUE(allClose((*got[rank])[i], (*expected[rank])[i], 1e-4, 1e-5))
            << kResults[i] << " of rank " << rank;
      // Per step: the forward's two sums and the backward's; the host
      // waited for each step through the communicator (its timeout).
      EXPECT_EQ(communicators[rank]->calls_, 2 * 3);
      EXPECT_EQ(communicators[rank]->waits_, 2);
    }
  }
}

int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr *>(&addr), len);
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::shared_ptr<Communicator> oneRankGloo() {
  RendezvousOptions o;
  o.masterPort = freePort();
  o.timeoutSeconds = 30;
  auto gloo = createGlooCommunicator(o);
  EXPECT_TRUE(gloo.ok()) << gloo.status().toString();
  return gloo.ok() ? *gloo : nullptr;
}

// One rank over NCCL: the batch is the global batch, so the results are
// the reference's without a communicator.
TEST_F(CudaSyncBatchNorm, OneRankNcclMatchesTheReference) {
  std::string why;
  if (!ncclAvailable(&why))
    GTEST_SKIP() << "NCCL: " << why;
  std::shared_ptr<Communicator> gloo = oneRankGloo();
  ASSERT_TRUE(gloo);
  auto nccl = createNcclCommunicator(gloo, /*device=*/0, 30);
  ASSERT_TRUE(nccl.ok()) << nccl.status().toString();
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.format + shapeToString(c.shape));
    Plan plan = syncBatchNormPlan(c, true);
    std::vector<Tensor> inputs = replicaInputs(c, 1);
    auto expected = runReplica(plan, "reference", nullptr, inputs);
    auto got = runReplica(plan, "cuda", *nccl, inputs);
    ASSERT_TRUE(expected.ok()) << expected.status().toString();
    ASSERT_TRUE(got.ok()) << got.status().toString();
    for (size_t i = 0; i < kResults.size(); ++i)
      EXPECT_TRUE(allClose((*got)[i], (*expected)[i], 1e-4, 1e-5))
          << kResults[i];
  }
  // Two steps of three all-reduces each.
  EXPECT_EQ((*nccl)->stats().calls,
            3 * 2 * static_cast<int64_t>(kCases.size()));
}

// Gloo reduces host memory: a CUDA session refuses the synchronized batch
// norm at creation, naming it, rather than normalizing with local
// statistics.
TEST_F(CudaSyncBatchNorm, GlooCommunicatorIsRefused) {
  std::shared_ptr<Communicator> gloo = oneRankGloo();
  ASSERT_TRUE(gloo);
  auto got = runReplica(syncBatchNormPlan(kCases[0], true), "cuda", gloo,
                        replicaInputs(kCases[0], 0));
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find(
                "cross_replica batch_norm on the GPU needs an NCCL "
                "communicator; the session has gloo's"),
            std::string::npos)
      << got.status().toString();
}

} // namespace
} // namespace gopt::runtime::testing
