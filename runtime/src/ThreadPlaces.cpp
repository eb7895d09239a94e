//===- ThreadPlaces.cpp - OpenMP places for pinned threads ----------------===//
//
// choosePinnedPlaces (CpuInfo.h): the cores this process may use, grouped
// from the kernel's topology (a core's hyperthreads are one place), and the
// slice of them a local rank takes, as OMP_PLACES. Like WaitPolicy.cpp it
// needs no OpenMP: it runs before the OpenMP runtime starts.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/CpuInfo.h"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace gopt::runtime {

namespace {

/// A topology value of CPU `cpu` (core_id, physical_package_id), or -1.
int topologyValue(int cpu, const char *name) {
  std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                   "/topology/" + name);
  int value = -1;
  if (!(in >> value))
    return -1;
  return value;
}

std::string cpuList(const std::vector<int> &cpus) {
  std::string text;
  for (int c : cpus)
    text += (text.empty() ? "" : ",") + std::to_string(c);
  return text;
}

} // namespace

std::vector<std::vector<int>> allowedCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return {};
  // (package, core) -> its allowed logical CPUs; unknown topology: every
  // CPU a core of its own.
  std::map<std::tuple<int, int, int>, std::vector<int>> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set))
      continue;
    int package = topologyValue(cpu, "physical_package_id");
    int core = topologyValue(cpu, "core_id");
    auto key = core < 0 ? std::make_tuple(package, cpu, cpu)
                        : std::make_tuple(package, core, -1);
    cores[key].push_back(cpu);
  }
  std::vector<std::vector<int>> result;
  for (auto &[key, cpus] : cores)
    result.push_back(cpus);
  // Cores in the order of their first CPU.
  std::sort(result.begin(), result.end());
  return result;
}

PlacesChoice choosePinnedPlaces(int threads, int localRank,
                                int localWorldSize) {
  std::vector<std::vector<int>> cores = allowedCores();
  if (cores.empty())
    return {"", "the allowed CPUs are unknown: threads not pinned"};
  localWorldSize = std::max(localWorldSize, 1);
  localRank = std::clamp(localRank, 0, localWorldSize - 1);
  int perRank =
      threads > 0 ? threads : std::max<int>(1, cores.size() / localWorldSize);
  size_t first = static_cast<size_t>(localRank) * perRank;
  if (first + perRank > cores.size())
    return {"", std::to_string(localWorldSize) + " rank(s) x " +
                    std::to_string(perRank) + " thread(s) need more than the " +
                    std::to_string(cores.size()) +
                    " allowed cores: threads not pinned"};
  std::string places, shown;
  for (int i = 0; i < perRank; ++i) {
    std::string place = "{" + cpuList(cores[first + i]) + "}";
    places += (i ? "," : "") + place;
  }
  shown = "cores " + places;
  if (localWorldSize > 1)
    shown += " (local rank " + std::to_string(localRank) + " of " +
             std::to_string(localWorldSize) + ")";
  return {places, shown};
}

} // namespace gopt::runtime
