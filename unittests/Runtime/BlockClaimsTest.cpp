//===- BlockClaimsTest.cpp - Output blocks claimed from a shared counter --===//
//
// gopt's batch-1 wide convolutions (ConvBatch1, WinogradWideConv,
// WinogradStride2Conv) hand out their 64-channel output blocks from a
// shared counter with GOPT_CONV_BLOCK_CLAIMS=1 (BlockClaims.h; otherwise
// a fixed share per thread). Every block must be computed exactly once
// whoever takes it: at 2, 3 and 5 threads, claimed or fixed, each kernel's
// result (with a residual summed in place, which a block done twice or
// not at all gets wrong) has the bits of one thread's. And a thread held
// back leaves its blocks to the one that runs.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/BlockClaims.h"
#include "../../runtime/src/cpu/ConvBatch1.h"
#include "../../runtime/src/cpu/WinogradConv.h"

#include <gtest/gtest.h>
#include <omp.h> // omp_set_num_threads: the runtime links OpenMP

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

using namespace gopt::runtime::cpu;

namespace {

bool haveAvx512() { return __builtin_cpu_supports("avx512f"); }

std::vector<float> randomVector(size_t n, unsigned seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = u(rng) * scale;
  return v;
}

// A kernel made with claims on or off, run at `threads` on `residual`.
using RunKernel = std::function<std::vector<float>(bool claims, int threads)>;

// The result at 1 thread (fixed share) against every other setting.
void expectSameBits(const RunKernel &run, const char *what) {
  const std::vector<float> one = run(false, 1);
  ASSERT_FALSE(one.empty()) << what;
  for (bool claims : {true, false})
    for (int threads : {2, 3, 5}) {
      std::vector<float> y = run(claims, threads);
      ASSERT_EQ(y.size(), one.size());
      EXPECT_EQ(std::memcmp(y.data(), one.data(), y.size() * sizeof(float)), 0)
          << what << ": claims " << claims << ", " << threads << " threads";
    }
}

// Runs `fn` at `threads` OpenMP threads, with the claim switch set as the
// kernel is created inside it.
template <typename Fn> auto withSettings(bool claims, int threads, Fn fn) {
  setenv("GOPT_CONV_BLOCK_CLAIMS", claims ? "1" : "0", 1);
  int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  auto result = fn();
  omp_set_num_threads(before);
  unsetenv("GOPT_CONV_BLOCK_CLAIMS");
  return result;
}

TEST(BlockClaims, ConvBatch1SameBits) {
  if (!haveAvx512())
    GTEST_SKIP() << "no AVX-512";
  // ResNet's 512 -> 512 3x3 at 7x7 (8 blocks) with bias, residual and relu,
  // and 144 -> 192 at stride 2 (3 blocks, fewer than 5 threads).
  for (int64_t cin : {512, 144}) {
    ConvBatch1Shape s;
    s.cin = cin;
    s.cout = cin == 512 ? 512 : 192;
    s.h = s.w = cin == 512 ? 7 : 13;
    s.kh = s.kw = 3;
    s.stride = cin == 512 ? 1 : 2;
    s.padT = s.padL = s.padB = s.padR = 1;
    s.bias = s.sum = s.relu = true;
    const std::vector<float> f = randomVector(s.cout * s.cin * 9, 1, 1.0f / 16);
    const std::vector<float> x = randomVector(s.h * s.w * s.cin, 2, 1.0f);
    const std::vector<float> b = randomVector(s.cout, 3, 1.0f);
    const std::vector<float> r =
        randomVector(s.outH() * s.outW() * s.cout, 4, 1.0f);
    expectSameBits(
        [&](bool claims, int threads) {
          return withSettings(claims, threads, [&] {
            std::unique_ptr<ConvBatch1> k = ConvBatch1::create(s, f.data());
            std::vector<float> y = r;
            if (!k)
              return std::vector<float>();
            k->run(x.data(), b.data(), y.data());
            return y;
          });
        },
        cin == 512 ? "conv-batch1 512" : "conv-batch1 144");
  }
}

TEST(BlockClaims, WinogradWideSameBits) {
  if (!haveAvx512())
    GTEST_SKIP() << "no AVX-512";
  // 256 -> 320 at 14x14: 5 blocks.
  WinogradWideShape s;
  s.cin = 256;
  s.cout = 320;
  s.h = s.w = 14;
  s.bias = s.sum = s.relu = true;
  const std::vector<float> f = randomVector(s.cout * s.cin * 9, 5, 1.0f / 16);
  const std::vector<float> x = randomVector(s.h * s.w * s.cin, 6, 1.0f);
  const std::vector<float> b = randomVector(s.cout, 7, 1.0f);
  const std::vector<float> r = randomVector(s.h * s.w * s.cout, 8, 1.0f);
  expectSameBits(
      [&](bool claims, int threads) {
        return withSettings(claims, threads, [&] {
          std::unique_ptr<WinogradWideConv> k =
              WinogradWideConv::create(s, f.data());
          std::vector<float> y = r;
          if (!k)
            return std::vector<float>();
          k->run(x.data(), b.data(), y.data());
          return y;
        });
      },
      "winograd-wide");
}

TEST(BlockClaims, WinogradStride2SameBits) {
  if (!haveAvx512())
    GTEST_SKIP() << "no AVX-512";
  // 256 -> 320 at 28x28 -> 14x14, NHWC and nChw16c: 5 blocks.
  for (bool blocked : {false, true}) {
    WinogradStride2Shape s;
    s.cin = 256;
    s.cout = 320;
    s.h = s.w = 28;
    s.blocked = blocked;
    s.bias = s.sum = s.relu = true;
    const std::vector<float> f = randomVector(s.cout * s.cin * 9, 9, 1.0f / 16);
    const std::vector<float> x = randomVector(s.h * s.w * s.cin, 10, 1.0f);
    const std::vector<float> b = randomVector(s.cout, 11, 1.0f);
    const std::vector<float> r =
        randomVector(s.outH() * s.outW() * s.cout, 12, 1.0f);
    expectSameBits(
        [&](bool claims, int threads) {
          return withSettings(claims, threads, [&] {
            std::unique_ptr<WinogradStride2Conv> k =
                WinogradStride2Conv::create(s, f.data());
            std::vector<float> y = r;
            if (!k)
              return std::vector<float>();
            k->run(x.data(), b.data(), y.data());
            return y;
          });
        },
        blocked ? "winograd-stride2 nChw16c" : "winograd-stride2 NHWC");
  }
}

// Thread 1 starts only once thread 0 has run out of blocks (a thread the
// host holds back): with claims thread 0 has taken all of them; with a
// fixed share each takes half. Each block is taken once either way.
std::vector<int> takers(bool claims, int64_t blocks) {
  std::vector<int> owner(blocks, -1);
  BlockCounter counter;
  std::mutex mutex;
  std::atomic<bool> zeroDone{false};
  bool twice = false;
  auto work = [&](int id) {
    if (id == 1)
      while (!zeroDone.load())
        std::this_thread::yield();
    BlockCursor cursor(counter, claims, id, 2);
    for (int64_t b = cursor.next(); b < blocks; b = cursor.next()) {
      std::lock_guard<std::mutex> lock(mutex);
      twice |= owner[b] >= 0;
      owner[b] = id;
    }
    if (id == 0)
      zeroDone.store(true);
  };
  std::thread late(work, 1);
  work(0);
  late.join();
  EXPECT_FALSE(twice);
  return owner;
}

TEST(BlockClaims, HeldBackThreadLeavesItsBlocks) {
  const int64_t blocks = 8;
  std::vector<int> claimed = takers(true, blocks);
  for (int64_t b = 0; b < blocks; ++b)
    EXPECT_EQ(claimed[b], 0) << b;
  std::vector<int> fixed = takers(false, blocks);
  for (int64_t b = 0; b < blocks; ++b)
    EXPECT_EQ(fixed[b], b % 2) << b;
}

} // namespace
