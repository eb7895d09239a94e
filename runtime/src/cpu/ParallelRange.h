//===- ParallelRange.h - Split a loop over OpenMP threads -------*- C++ -*-===//
//
// Shared by the fast CPU kernels (FastKernels.cpp, TrainingKernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_PARALLELRANGE_H
#define GOPT_RUNTIME_SRC_CPU_PARALLELRANGE_H

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace gopt::runtime::cpu {

// Below this many elements a parallel region costs more than it saves.
constexpr int64_t kParallelThreshold = 1 << 15;

// Calls fn(begin, end) on one contiguous range of [0, n) per thread, in
// chunks of whole cache lines (16 floats); serially for small n.
template <typename Fn> void parallelRange(int64_t n, Fn fn) {
  if (n < kParallelThreshold || omp_get_max_threads() == 1) {
    fn(0, n);
    return;
  }
#pragma omp parallel
  {
    int threads = omp_get_num_threads(), id = omp_get_thread_num();
    int64_t chunk = ((n + threads - 1) / threads + 15) / 16 * 16;
    int64_t begin = std::min(n, id * chunk), end = std::min(n, begin + chunk);
    if (begin < end)
      fn(begin, end);
  }
}

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_PARALLELRANGE_H
