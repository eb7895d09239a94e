//===- CpuInfo.cpp - What backend "cpu" computes natively -----------------===//
#include "gopt/runtime/CpuInfo.h"

#include <dnnl.hpp>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

namespace gopt::runtime {

namespace {
// oneDNN's ISA values are bit sets: each includes the bits of the ISAs it
// extends (avx512_core_amx those of avx512_core_bf16, and so on).
bool includes(dnnl::cpu_isa isa, dnnl::cpu_isa subset) {
  return (static_cast<int>(isa) & static_cast<int>(subset)) ==
         static_cast<int>(subset);
}
} // namespace

Bf16Support cpuBf16Support() {
  dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  if (includes(isa, dnnl::cpu_isa::avx512_core_bf16))
    return Bf16Support::kNative;
  if (includes(isa, dnnl::cpu_isa::avx512_core))
    return Bf16Support::kEmulated;
  return Bf16Support::kReference;
}

bool cpuInt8DotProduct() {
  dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return includes(isa, dnnl::cpu_isa::avx512_core_vnni) ||
         includes(isa, dnnl::cpu_isa::avx2_vnni);
}

std::string cpuIsaName() {
  switch (dnnl::get_effective_cpu_isa()) {
  case dnnl::cpu_isa::sse41:
    return "sse41";
  case dnnl::cpu_isa::avx:
    return "avx";
  case dnnl::cpu_isa::avx2:
    return "avx2";
  case dnnl::cpu_isa::avx2_vnni:
    return "avx2_vnni";
  case dnnl::cpu_isa::avx512_mic:
    return "avx512_mic";
  case dnnl::cpu_isa::avx512_mic_4ops:
    return "avx512_mic_4ops";
  case dnnl::cpu_isa::avx512_core:
    return "avx512_core";
  case dnnl::cpu_isa::avx512_core_vnni:
    return "avx512_core_vnni";
  case dnnl::cpu_isa::avx512_core_bf16:
    return "avx512_core_bf16";
  case dnnl::cpu_isa::avx512_core_amx:
    return "avx512_core_amx";
  default:
    return "unknown";
  }
}

namespace {
/// Tasks the kernel has runnable right now (/proc/stat's procs_running),
/// or -1 where it is not readable.
int runnableTasks() {
  std::ifstream stat("/proc/stat");
  std::string key;
  long value = 0;
  while (stat >> key) {
    if (key == "procs_running" && stat >> value)
      return static_cast<int>(value);
    stat.ignore(1 << 16, '\n');
  }
  return -1;
}
} // namespace

WaitPolicyChoice chooseOpenMPWaitPolicy(int threads) {
  cpu_set_t set;
  int cpus = sched_getaffinity(0, sizeof(set), &set) == 0
                 ? CPU_COUNT(&set)
                 : static_cast<int>(std::thread::hardware_concurrency());
  if (cpus <= 0)
    return {};
  if (threads <= 0 || threads > cpus)
    threads = cpus;
  // A few samples over ~10 ms: a single one catches compilers and tests
  // between time slices. This process counts itself once.
  constexpr int kSamples = 5;
  double others = 0;
  for (int i = 0; i < kSamples; ++i) {
    int running = runnableTasks();
    if (running < 0)
      return {};
    others += running - 1;
    if (i + 1 < kSamples)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  others /= kSamples;
  char reason[96];
  std::snprintf(reason, sizeof(reason), "%.1f other runnable tasks on %d CPUs",
                others, cpus);
  // Spin only when the other tasks leave a CPU for each of our threads.
  if (others + threads > cpus + 0.25)
    return {"passive", reason};
  return {"", reason};
}

} // namespace gopt::runtime
