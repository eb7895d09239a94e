//===- NcclCommunicatorTest.cpp - NCCL on one GPU -------------------------===//
//
// A one-rank NCCL communicator, bootstrapped over Gloo as a multi-rank one
// is, all-reduces device buffers (the identity for sum and mean). Skipped
// without a GPU.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/Collectives.h"

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

TEST(NcclCommunicatorTest, OneRank) {
  std::string why;
  if (!ncclAvailable(&why))
    GTEST_SKIP() << "NCCL: " << why;
  RendezvousOptions o;
  o.masterPort = freePort();
  o.timeoutSeconds = 30;
  StatusOr<std::shared_ptr<Communicator>> gloo = createGlooCommunicator(o);
  ASSERT_TRUE(gloo.ok()) << gloo.status().toString();
  StatusOr<std::shared_ptr<Communicator>> nccl =
      createNcclCommunicator(*gloo, /*device=*/0, 30);
  ASSERT_TRUE(nccl.ok()) << nccl.status().toString();
  EXPECT_STREQ((*nccl)->engine(), "nccl");
  EXPECT_EQ((*nccl)->size(), 1);

  std::vector<float> host = {1, -2, 3.5f, 4};
  float *device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, host.size() * sizeof(float)), cudaSuccess);
  cudaMemcpy(device, host.data(), host.size() * sizeof(float),
             cudaMemcpyHostToDevice);
  for (Reduction r : {Reduction::kSum, Reduction::kMean}) {
    Status s = (*nccl)->allReduce({{device, 4, DType::kF32}}, r);
    ASSERT_TRUE(s.ok()) << s.toString();
  }
  std::vector<float> back(4);
  cudaMemcpy(back.data(), device, back.size() * sizeof(float),
             cudaMemcpyDeviceToHost);
  cudaFree(device);
  EXPECT_EQ(back, host);
  EXPECT_EQ((*nccl)->stats().calls, 2);
}

} // namespace
