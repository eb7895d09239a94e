//===- Launch.h - Launch configuration and index helpers --------*- C++ -*-===//
//
// Host-only arithmetic shared by the launchers and the kernel wrappers; no
// CUDA types, so it is unit-tested without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_LAUNCH_H
#define GOPT_RUNTIME_SRC_CUDA_LAUNCH_H

#include "Kernels.h"
#include "gopt/runtime/Status.h"
#include "gopt/runtime/Tensor.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gopt::runtime::cuda {

constexpr int kBlockSize = 256;
// Grid-stride loops cover the rest; enough blocks to fill any current GPU.
constexpr int64_t kMaxBlocks = 65535;

// Blocks for `n` elements at `block` threads each: at least 1, at most
// kMaxBlocks.
inline int64_t gridBlocks(int64_t n, int block = kBlockSize) {
  int64_t blocks = (n + block - 1) / block;
  return std::max<int64_t>(1, std::min<int64_t>(blocks, kMaxBlocks));
}

// Row-major strides of `shape`.
inline std::vector<int64_t> contiguousStrides(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

// The index of operand `in` (numpy-broadcast into `out`) over the output's
// dims, after merging adjacent dims that are contiguous in both. Errors
// when the rank exceeds kMaxRank.
StatusOr<StridedIndex> broadcastIndex(const Shape &out, const Shape &in);

// Builds a StridedIndex from dims and strides, dropping size-1 dims and
// merging dims where strides[d] == strides[d+1] * dims[d+1].
StatusOr<StridedIndex> makeIndex(const std::vector<int64_t> &dims,
                                 const std::vector<int64_t> &strides);

// The element offset `index` maps flat index `i` to (host mirror of the
// device code, for tests).
int64_t stridedOffset(const StridedIndex &index, int64_t i);

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_LAUNCH_H
