//===- CollectivesTest.cpp - Gloo and NCCL communicators ------------------===//
//
// Ranks are threads of this process on loopback, each with its own Gloo
// context, as separate processes would have.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/Collectives.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <functional>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace gopt::runtime;

namespace {

int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&addr), len), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

RendezvousOptions rankOptions(int rank, int size, int port,
                              double timeout = 10) {
  RendezvousOptions o;
  o.rank = rank;
  o.worldSize = size;
  o.masterAddr = "127.0.0.1";
  o.masterPort = port;
  o.timeoutSeconds = timeout;
  return o;
}

// Runs body(rank, communicator) on `size` threads.
void runRanks(int size, const std::function<void(int, Communicator &)> &body) {
  int port = freePort();
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      StatusOr<std::shared_ptr<Communicator>> comm =
          createGlooCommunicator(rankOptions(r, size, port));
      ASSERT_TRUE(comm.ok()) << comm.status().toString();
      body(r, **comm);
      EXPECT_TRUE((*comm)->barrier().ok());
    });
  for (std::thread &t : threads)
    t.join();
}

TEST(GlooCommunicatorTest, AllReduceSumsAndAveragesABucket) {
  runRanks(2, [](int rank, Communicator &comm) {
    EXPECT_EQ(comm.size(), 2);
    EXPECT_STREQ(comm.engine(), "gloo");
    // A bucket of tensors of different lengths and types.
    std::vector<float> a = {1.0f + rank, 2.0f * rank, -3.0f};
    std::vector<float> b = {10.0f * (rank + 1)};
    std::vector<double> c = {0.5 + rank, 4};
    ASSERT_TRUE(comm.allReduce({{a.data(), 3, DType::kF32},
                                {b.data(), 1, DType::kF32},
                                {c.data(), 2, DType::kF64}},
                               Reduction::kSum)
                    .ok());
    EXPECT_EQ(a, (std::vector<float>{3, 2, -6}));
    EXPECT_EQ(b, (std::vector<float>{30}));
    EXPECT_EQ(c, (std::vector<double>{2, 8}));
    std::vector<float> m = {static_cast<float>(rank), 6};
    ASSERT_TRUE(
        comm.allReduce({{m.data(), 2, DType::kF32}}, Reduction::kMean).ok());
    EXPECT_EQ(m, (std::vector<float>{0.5f, 6}));
    CollectiveStats stats = comm.stats();
    EXPECT_EQ(stats.calls, 2);
    EXPECT_EQ(stats.bytes, 4 * 4 + 2 * 8 + 2 * 4);
  });
}

TEST(GlooCommunicatorTest, AllGatherIndexesByRank) {
  runRanks(3, [](int rank, Communicator &comm) {
    StatusOr<std::vector<int64_t>> all = comm.allGather(100 + rank);
    ASSERT_TRUE(all.ok()) << all.status().toString();
    EXPECT_EQ(*all, (std::vector<int64_t>{100, 101, 102}));
  });
}

TEST(GlooCommunicatorTest, RankOutOfRange) {
  StatusOr<std::shared_ptr<Communicator>> comm =
      createGlooCommunicator(rankOptions(2, 2, freePort()));
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().message(),
            "RANK 2 is out of range for WORLD_SIZE 2 (ranks 0..1)");
}

TEST(GlooCommunicatorTest, PortInUse) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
  ::listen(fd, 1);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len);
  int port = ntohs(addr.sin_port);
  StatusOr<std::shared_ptr<Communicator>> comm =
      createGlooCommunicator(rankOptions(0, 2, port));
  ::close(fd);
  ASSERT_FALSE(comm.ok());
  EXPECT_NE(comm.status().message().find("cannot serve the rendezvous store "
                                         "on port " +
                                         std::to_string(port)),
            std::string::npos)
      << comm.status().message();
  EXPECT_NE(comm.status().message().find("Address already in use"),
            std::string::npos);
}

TEST(GlooCommunicatorTest, UnreachableMasterTimesOut) {
  // Nobody serves the port: rank 1 retries until its timeout.
  auto start = std::chrono::steady_clock::now();
  StatusOr<std::shared_ptr<Communicator>> comm =
      createGlooCommunicator(rankOptions(1, 2, freePort(), 1.0));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(comm.status().message().find(
                "could not reach rank 0's rendezvous store at 127.0.0.1:"),
            std::string::npos)
      << comm.status().message();
  EXPECT_LT(seconds, 5);
}

TEST(GlooCommunicatorTest, WorldSizeMismatchIsRefused) {
  int port = freePort();
  Status rank0, rank1;
  std::thread t0([&] {
    rank0 = createGlooCommunicator(rankOptions(0, 2, port, 2.0)).status();
  });
  std::thread t1([&] {
    rank1 = createGlooCommunicator(rankOptions(1, 3, port, 2.0)).status();
  });
  t0.join();
  t1.join();
  ASSERT_FALSE(rank1.ok());
  EXPECT_NE(rank1.message().find(
                "rank 0 refused rank 1: rank 1 has WORLD_SIZE 3, rank 0 has 2"),
            std::string::npos)
      << rank1.message();
  // Rank 0 waits for a rank 1 that never joins, and says so in time.
  EXPECT_FALSE(rank0.ok());
}

// Without a GPU (or without CUDA) an NCCL communicator is a clear error; the
// GPU test is unittests/Runtime/cuda/NcclCommunicatorTest.cpp.
TEST(NcclCommunicatorTest, WithoutGpuIsAClearError) {
  std::string why;
  if (ncclAvailable(&why))
    GTEST_SKIP() << "a GPU is present: NcclCommunicatorTest.OneRank runs";
  std::shared_ptr<Communicator> none;
  StatusOr<std::shared_ptr<Communicator>> nccl =
      createNcclCommunicator(none, /*device=*/0, 1);
  ASSERT_FALSE(nccl.ok());
  EXPECT_NE(nccl.status().message().find(why), std::string::npos)
      << nccl.status().message();
}

} // namespace
