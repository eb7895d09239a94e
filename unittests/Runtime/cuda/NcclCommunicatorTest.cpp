//===- NcclCommunicatorTest.cpp - NCCL on one GPU -------------------------===//
//
// A one-rank NCCL communicator, bootstrapped over Gloo as a multi-rank one
// is, all-reduces device buffers (the identity for sum and mean). Skipped
// without a GPU.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/Collectives.h"
#include "gopt/runtime/PlanBuilder.h"
#include "gopt/runtime/Session.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace gopt::runtime;

namespace {

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

// A one-rank Gloo communicator on loopback and the NCCL one bootstrapped
// over it, as a multi-rank run makes them; skipped without NCCL or a GPU.
class NcclCommunicatorTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!ncclAvailable(&why))
      GTEST_SKIP() << "NCCL: " << why;
    RendezvousOptions o;
    o.masterPort = freePort();
    o.timeoutSeconds = 30;
    StatusOr<std::shared_ptr<Communicator>> bootstrap =
        createGlooCommunicator(o);
    ASSERT_TRUE(bootstrap.ok()) << bootstrap.status().toString();
    gloo = *bootstrap;
    StatusOr<std::shared_ptr<Communicator>> made =
        createNcclCommunicator(gloo, /*device=*/0, 30);
    ASSERT_TRUE(made.ok()) << made.status().toString();
    nccl = *made;
  }
  std::shared_ptr<Communicator> gloo, nccl;
};

TEST_F(NcclCommunicatorTest, OneRank) {
  EXPECT_STREQ(nccl->engine(), "nccl");
  EXPECT_EQ(nccl->size(), 1);

  std::vector<float> host = {1, -2, 3.5f, 4};
  float *device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, host.size() * sizeof(float)), cudaSuccess);
  cudaMemcpy(device, host.data(), host.size() * sizeof(float),
             cudaMemcpyHostToDevice);
  for (Reduction r : {Reduction::kSum, Reduction::kMean}) {
    Status s = nccl->allReduce({{device, 4, DType::kF32}}, r);
    ASSERT_TRUE(s.ok()) << s.toString();
  }
  std::vector<float> back(4);
  cudaMemcpy(back.data(), device, back.size() * sizeof(float),
             cudaMemcpyDeviceToHost);
  cudaFree(device);
  EXPECT_EQ(back, host);
  EXPECT_EQ(nccl->stats().calls, 2);
}

// The all_reduce op on a CUDA session: its kernel copies each operand into
// its result and reduces them through the session's NCCL communicator (one
// rank: the identity, but the NCCL call and its stream hand-over happen);
// every step (eager, a refused capture, eager again) gives the operands
// back. A Gloo communicator is refused by name.
TEST_F(NcclCommunicatorTest, AllReduceOpOnCudaSession) {

  PlanBuilder b("all-reduce");
  int a = b.addInput("a", DType::kF32, {3});
  int w = b.addInput("w", DType::kF32, {2, 2});
  int ra = b.addOutput("ra", DType::kF32, {3});
  int rw = b.addOutput("rw", DType::kF32, {2, 2});
  b.addOp("all_reduce", "bucket0", {a, w}, {ra, rw},
          {{"reduction", stringAttr("mean")}});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();

  SessionOptions options;
  options.backend = "cuda";
  options.communicator = nccl;
  auto session = Session::create(*plan, options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  std::vector<float> av = {1, -2, 3.5f}, wv = {0.5f, 4, -1, 2};
  Tensor at = Tensor::view(DType::kF32, {3}, av.data());
  Tensor wt = Tensor::view(DType::kF32, {2, 2}, wv.data());
  ASSERT_TRUE((*session)->setInput("a", at).ok());
  ASSERT_TRUE((*session)->setInput("w", wt).ok());
  for (int step = 0; step < 3; ++step) {
    Status s = (*session)->run();
    ASSERT_TRUE(s.ok()) << "step " << step << ": " << s.toString();
    auto ya = (*session)->output("ra"), yw = (*session)->output("rw");
    ASSERT_TRUE(ya.ok() && yw.ok());
    EXPECT_EQ(std::vector<float>(ya->data<float>(), ya->data<float>() + 3), av);
    EXPECT_EQ(std::vector<float>(yw->data<float>(), yw->data<float>() + 4), wv);
  }
  EXPECT_EQ(nccl->stats().calls, 3);
  EXPECT_EQ((*session)->opProfiles()[0].implementation, "nccl");

  options.communicator = gloo;
  auto refused = Session::create(*plan, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "all_reduce on the GPU needs an NCCL communicator; the "
                "session has gloo's"),
            std::string::npos)
      << refused.status().toString();
}

} // namespace
