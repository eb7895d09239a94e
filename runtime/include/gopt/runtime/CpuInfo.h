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
// libgomp's default (spin about 300,000 iterations, then sleep) is fastest
// when every thread has a CPU of its own: parallel regions follow each other
// within microseconds. When other processes already keep the CPUs busy, a
// spinning thread holds the CPU its partner needs and each region waits for
// the scheduler (measured: a transformer at batch 1, 12 ms passive, 300-800
// ms spinning), so passive waiting is chosen. libgomp reads the policy once,
// when it loads: callers set OMP_WAIT_POLICY before that (gopt-run
// re-executes itself).
struct WaitPolicyChoice {
  std::string policy; // "passive", or empty for libgomp's default
  std::string reason; // e.g. "3.2 other runnable tasks on 2 CPUs"
};
WaitPolicyChoice chooseOpenMPWaitPolicy(int threads);

// The cores this process may run on (sched_getaffinity), each as its
// logical CPUs (a core's hyperthreads together), in CPU order.
std::vector<std::vector<int>> allowedCores();

// Where OpenMP threads are pinned (gopt-run --affinity cores): one core per
// thread, `threads` of them (0: the allowed cores shared out among the
// local ranks), local rank r taking the r-th run of cores, so that ranks
// started on one machine never share a core. `places` is OMP_PLACES's
// value (empty: not pinned, `description` says why); the caller sets it
// with OMP_PROC_BIND=close before libgomp loads.
struct PlacesChoice {
  std::string places;
  std::string description; // e.g. "cores {0},{1} (local rank 0 of 2)"
};
PlacesChoice choosePinnedPlaces(int threads, int localRank, int localWorldSize);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_CPUINFO_H
