//===- WaitPolicy.cpp - OpenMP wait policy for a busy machine -------------===//
//
// chooseOpenMPWaitPolicy (CpuInfo.h) on its own, with no oneDNN or OpenMP:
// it must run before the OpenMP runtime starts (libgomp reads its settings
// when it loads), so the Python package calls it from a module of its own
// (python/src/wait_policy.cpp) before it loads the one that links OpenMP.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/CpuInfo.h"

#include <sched.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

namespace gopt::runtime {

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
