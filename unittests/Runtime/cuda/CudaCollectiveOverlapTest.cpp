//===- CudaCollectiveOverlapTest.cpp - A bucket on its own stream ---------===//
//
// The CUDA all_reduce kernel hands its bucket to the communicator's stream
// and returns; the backend makes the session's stream wait for the bucket
// only before the first op that reads it. A stand-in communicator whose
// "reduction" ends 50 ms after it starts (a host callback on its stream,
// then zeros) shows both: the reader sees the reduced values, never the
// gradients before the reduction, and the op between the all_reduce and
// the reader is not held back. Skipped without a GPU.
//
//===----------------------------------------------------------------------===//
#include "../collectives/StreamCollectives.h"
#include "CudaTestSupport.h"
#include "gopt/runtime/PlanBuilder.h"
#include "gopt/runtime/Session.h"

#include <chrono>
#include <thread>

namespace gopt::runtime::testing {
namespace {

// Two ranks as far as the kernel can tell; reducing a bucket writes zeros
// into it, 50 ms after its gradients are ready.
class SlowZeroingCommunicator : public Communicator, public StreamCollectives {
public:
  SlowZeroingCommunicator() {
    cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
  }
  ~SlowZeroingCommunicator() override {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  int rank() const override { return 0; }
  int size() const override { return 2; }
  const char *engine() const override { return "slow-zeroing"; }
  StreamCollectives *streamCollectives() override { return this; }

  Status allReduce(const std::vector<CollectiveBuffer> &buffers,
                   Reduction reduction) override {
    GOPT_RETURN_IF_ERROR(
        enqueueAllReduce(buffers, reduction, nullptr, nullptr));
    return waitForStream(stream_, "all_reduce");
  }
  Status enqueueAllReduce(const std::vector<CollectiveBuffer> &buffers,
                          Reduction, cudaEvent_t ready,
                          cudaEvent_t done) override {
    if (ready)
      cudaStreamWaitEvent(stream_, ready, 0);
    cudaLaunchHostFunc(
        stream_,
        [](void *) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        },
        nullptr);
    for (const CollectiveBuffer &b : buffers)
      cudaMemsetAsync(b.data, 0, b.count * dtypeSize(b.dtype), stream_);
    if (done)
      cudaEventRecord(done, stream_);
    ++calls_;
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
  cudaStream_t stream_ = nullptr;
};

class CudaCollectiveOverlapTest : public CudaDeviceTest {};

TEST_F(CudaCollectiveOverlapTest, ReaderWaitsForTheBucketAndOnlyIt) {
  const int64_t n = 1 << 16;
  PlanBuilder b("bucket-overlap");
  int g = b.addInput("g", DType::kF32, {n});
  int reduced = b.addIntermediate("reduced", DType::kF32, {n});
  int independent = b.addOutput("independent", DType::kF32, {n});
  int sum = b.addOutput("sum", DType::kF32, {n});
  b.addOp("all_reduce", "bucket0", {g}, {reduced},
          {{"reduction", stringAttr("sum")}});
  // Runs while the bucket is on the communication stream: it reads the
  // gradient, not the bucket.
  b.addOp("relu", "independent", {g}, {independent});
  // Reads the bucket: must see the reduced values (zeros) and so equal g.
  b.addOp("add", "reader", {reduced, g}, {sum});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();

  auto communicator = std::make_shared<SlowZeroingCommunicator>();
  SessionOptions options;
  options.backend = "cuda";
  options.communicator = communicator;
  auto session = Session::create(*plan, options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  std::vector<float> gv(n);
  for (int64_t i = 0; i < n; ++i)
    gv[i] = static_cast<float>(i % 97) - 48.0f;
  ASSERT_TRUE((*session)
                  ->setInput("g", Tensor::view(DType::kF32, {n}, gv.data()))
                  .ok());
  for (int step = 0; step < 2; ++step) {
    Status s = (*session)->run();
    ASSERT_TRUE(s.ok()) << "step " << step << ": " << s.toString();
    auto out = (*session)->output("sum");
    auto relu = (*session)->output("independent");
    ASSERT_TRUE(out.ok() && relu.ok());
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(out->data<float>()[i], gv[i]) << "step " << step << " at " << i;
      ASSERT_EQ(relu->data<float>()[i], std::max(gv[i], 0.0f));
    }
  }
  EXPECT_EQ(communicator->calls_, 2);
  // The host waited for each step through the communicator (its timeout).
  EXPECT_EQ(communicator->waits_, 2);
  EXPECT_EQ((*session)->opProfiles()[0].implementation, "slow-zeroing");
}

} // namespace
} // namespace gopt::runtime::testing
