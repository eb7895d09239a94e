//===- CpuInfo.h - What backend "cpu" computes natively ---------*- C++ -*-===//
//
// Tools ask this before running a bf16 plan (mixed precision) or an int8
// plan on backend "cpu" and tell the user when it will not be fast, and
// before starting OpenMP, how its threads should wait.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_CPUINFO_H
#define GOPT_RUNTIME_CPUINFO_H

#include <string>
#include <vector>

namespace gopt::runtime {

// How backend "cpu" computes bf16 convolutions, matmuls, pooling and batch
// norms on this CPU, as oneDNN sees it (DNNL_MAX_CPU_ISA included).
enum class Bf16Support {
  kNative,    // AVX512-BF16 or AMX instructions: faster than f32
  kEmulated,  // AVX-512 without bf16 instructions: oneDNN emulates them,
              // slower than f32
  kReference, // no AVX-512: oneDNN has no bf16 kernels, the reference
              // kernels run (far slower than f32)
};
Bf16Support cpuBf16Support();

// Whether oneDNN's int8 convolutions and matmuls accumulate exactly here:
// with VNNI (AVX2-VNNI, AVX512-VNNI) or AMX they sum u8*s8 products in s32.
// Without, their AVX2/AVX-512 kernels add pairs of products in saturating
// s16 (vpmaddubsw), which clips sums of large weights, so backend "cpu"
// runs static int8 convs and matmuls as f32 ops on the dequantized values.
bool cpuInt8DotProduct();

// oneDNN's name for the instruction set its kernels use, e.g.
// "avx512_core_bf16" or "avx2".
std::string cpuIsaName();

// How OpenMP's idle threads should wait in a process about to run
// `threads` threads (0: one per CPU), when the user set no policy.
// A short spin, then sleep, is fastest when every thread has a CPU of its
// own: parallel regions follow each other within microseconds. When other
// processes already keep the CPUs busy, a spinning thread holds the CPU its
// partner needs and each region waits for the scheduler (measured: a
// transformer at batch 1, 12 ms passive, 300-800 ms spinning), so passive
// waiting is chosen. libgomp reads the policy once, when it loads, libomp at
// its first parallel region: callers set OMP_WAIT_POLICY before either
// (gopt-run re-executes itself).
struct WaitPolicyChoice {
  std::string policy; // "passive", or empty for the short spin
  std::string reason; // e.g. "3.2 other runnable tasks on 2 CPUs"
};
WaitPolicyChoice chooseOpenMPWaitPolicy(int threads);

// The short spin's length in libomp's terms (KMP_BLOCKTIME, milliseconds),
// which callers set with an empty policy unless the user set KMP_BLOCKTIME:
// about what libgomp's 300,000 spins take (6 ms on a Zen 5), where libomp's
// own default spins 200 ms, long enough to take a CPU from the training
// input pipeline's threads between steps.
constexpr int kOpenMPSpinMilliseconds = 5;

// The OpenMP runtime this process's parallel regions run on: the file name
// of the library that defines the GOMP_parallel gopt calls (e.g.
// "libomp.so.5", "libgomp.so.1"), as the dynamic linker resolved it; oneDNN
// resolves it the same way. Empty where it cannot be told.
std::string openMPRuntimeName();

// What openMPRuntimeName's runtime does with idle threads under
// OMP_WAIT_POLICY and KMP_BLOCKTIME as they are now, e.g. "libomp.so.5:
// spin 5 ms, then sleep".
std::string openMPWaitBehaviour();

// The cores this process may run on (sched_getaffinity), each as its
// logical CPUs (a core's hyperthreads together), in CPU order.
std::vector<std::vector<int>> allowedCores();

// Where OpenMP threads are pinned (gopt-run --affinity cores): one core per
// thread, `threads` of them (0: the allowed cores shared out among the
// local ranks), local rank r taking the r-th run of cores, so that ranks
// started on one machine never share a core. `places` is OMP_PLACES's
// value (empty: not pinned, `description` says why); the caller sets it
// with OMP_PROC_BIND=close before the OpenMP runtime starts.
struct PlacesChoice {
  std::string places;
  std::string description; // e.g. "cores {0},{1} (local rank 0 of 2)"
};
PlacesChoice choosePinnedPlaces(int threads, int localRank, int localWorldSize);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_CPUINFO_H
