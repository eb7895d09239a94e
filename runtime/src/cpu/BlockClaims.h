//===- BlockClaims.h - Output blocks handed out as threads ask --*- C++ -*-===//
//
// gopt's batch-1 wide convolutions (ConvBatch1, WinogradWideConv,
// WinogradStride2Conv) split one image's work over the threads by blocks of
// 64 output channels: 4 to 32 blocks, each a stream of its filter. With a
// fixed share (id, id + nt, ...) the step waits for the slowest thread,
// and on a busy host one of two threads is often held back for a time
// slice while the other idles at the barrier. Claiming the next block from
// a shared counter lets the thread that runs take the blocks of the one
// that does not. Each block is computed the same way by whichever thread
// takes it: same bits. Opt-in (GOPT_CONV_BLOCK_CLAIMS=1): on the loaded
// 2-core machine it measured no faster (docs/architecture.md).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_BLOCKCLAIMS_H
#define GOPT_RUNTIME_SRC_CPU_BLOCKCLAIMS_H

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace gopt::runtime::cpu {

/// GOPT_CONV_BLOCK_CLAIMS=1 claims blocks; otherwise each thread takes its
/// fixed share. Read when a kernel is created.
inline bool convBlockClaimsEnabled() {
  const char *setting = std::getenv("GOPT_CONV_BLOCK_CLAIMS");
  return setting && std::strcmp(setting, "1") == 0;
}

/// The blocks [0, blocks) of one parallel region. Shared by its threads
/// (declared before `#pragma omp parallel`); each thread asks through its
/// own BlockCursor.
struct BlockCounter {
  std::atomic<int64_t> next{0};
};

/// One thread's view: next() is its next block, or a value >= blocks when
/// none is left. Claimed blocks come from the shared counter; fixed ones
/// are id, id + nt, ...
class BlockCursor {
public:
  BlockCursor(BlockCounter &counter, bool claims, int id, int nt)
      : counter_(counter), claims_(claims), fixed_(id), nt_(nt) {}
  int64_t next() {
    if (claims_)
      return counter_.next.fetch_add(1, std::memory_order_relaxed);
    int64_t b = fixed_;
    fixed_ += nt_;
    return b;
  }

private:
  BlockCounter &counter_;
  bool claims_;
  int64_t fixed_;
  int nt_;
};

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_BLOCKCLAIMS_H
