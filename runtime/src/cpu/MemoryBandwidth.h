//===- MemoryBandwidth.h - This machine's streaming read rate ---*- C++ -*-===//
//
// How fast this process's threads read a buffer larger than their private
// caches: the rate at which a kernel whose operands do not stay in cache
// (a large constant filter read once per run) gets them. Kernels that trade
// arithmetic for bytes (the few-tile Winograd convolutions) ask it, since
// machines differ by 3x here where their arithmetic differs by 15%: 23 GB/s
// on an Intel Xeon with AMX, 64 GB/s on an AMD EPYC (2 threads,
// benchmarks/roofline.py's weight streaming roof; this probe read 88-108
// GB/s on the EPYC over 64 MiB, part of it from its L3, in 12-56 ms).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_MEMORYBANDWIDTH_H
#define GOPT_RUNTIME_SRC_CPU_MEMORYBANDWIDTH_H

#include <cstddef>

namespace gopt::runtime::cpu {

// Reads `bytes` (rounded down to 64) with omp_get_max_threads() threads a
// few times and returns the best pass's rate in GB/s (10^9 bytes per
// second); 0 where it cannot be measured (no AVX-512, allocation failed).
double measureStreamingReadGBps(size_t bytes);

// GOPT_STREAM_GBPS where set (a positive number: tests, or a user pinning
// the choices made from it), else measureStreamingReadGBps over 64 MiB,
// measured once per process and thread count.
double streamingReadGBps();

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_MEMORYBANDWIDTH_H
