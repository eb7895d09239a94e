//===- gopt-run.cpp - Execute, time, profile and compare plans ------------===//
//
// gopt-run MODEL [options]: runs MODEL on a backend with given or
// deterministic random inputs, reports latency, throughput and memory, and
// optionally a per-op profile, a Chrome trace, a JSON report, or a numeric
// comparison with another model or stored outputs; also trains, checks
// gradients and calibrates. The modes live in the gopt_tooling library
// (include/gopt/Tooling); this is its command line.
//
// Exit status: 0 success, 1 runtime error or comparison beyond tolerance,
// 2 usage error.
//
//===----------------------------------------------------------------------===//
#include "gopt/Tooling/Options.h"
#include "gopt/runtime/CpuInfo.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

std::string envOr(const char *name, const char *other, const char *fallback) {
  if (const char *v = std::getenv(name))
    return v;
  if (const char *v = std::getenv(other))
    return v;
  return fallback;
}

/// libgomp reads its wait policy and places once, when it loads, so when
/// the user set none gopt-run chooses them and re-executes itself with
/// them: OMP_WAIT_POLICY=passive when the machine is busy
/// (chooseOpenMPWaitPolicy), else libomp's KMP_BLOCKTIME for a short spin
/// (libomp reads it at its first parallel region), OMP_PLACES and
/// OMP_PROC_BIND=close for --affinity cores (choosePinnedPlaces).
/// GOPT_OMP_WAIT_CHOICE and GOPT_AFFINITY_CHOICE carry the reasons to the
/// report.
void chooseThreadEnvironment(char **argv,
                             const gopt::tooling::ToolOptions &options) {
  bool reexecute = false;
  if (!std::getenv("OMP_WAIT_POLICY")) {
    gopt::runtime::WaitPolicyChoice choice =
        gopt::runtime::chooseOpenMPWaitPolicy(options.threads());
    setenv("GOPT_OMP_WAIT_CHOICE", choice.reason.c_str(), /*overwrite=*/1);
    if (!choice.policy.empty()) {
      setenv("OMP_WAIT_POLICY", choice.policy.c_str(), /*overwrite=*/1);
      reexecute = true;
    } else {
      setenv("KMP_BLOCKTIME",
             std::to_string(gopt::runtime::kOpenMPSpinMilliseconds).c_str(),
             /*overwrite=*/0);
    }
  }
  // --nproc's launcher only waits for its ranks, which pin themselves.
  bool launcher = options.mode == gopt::tooling::ToolMode::kTrain &&
                  options.train.nproc > 0;
  if (options.affinity == "cores" && !launcher) {
    if (const char *places = std::getenv("OMP_PLACES")) {
      // Ours, from before the re-execution, keeps its description.
      if (!std::getenv("GOPT_AFFINITY_CHOICE"))
        setenv("GOPT_AFFINITY_CHOICE",
               (std::string("OMP_PLACES=") + places + " (set before gopt-run)")
                   .c_str(),
               /*overwrite=*/1);
    } else {
      int rank = std::atoi(
          envOr("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "0").c_str());
      int size = std::atoi(
          envOr("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "1").c_str());
      gopt::runtime::PlacesChoice choice =
          gopt::runtime::choosePinnedPlaces(options.threads(), rank, size);
      setenv("GOPT_AFFINITY_CHOICE", choice.description.c_str(),
             /*overwrite=*/1);
      if (!choice.places.empty()) {
        setenv("OMP_PLACES", choice.places.c_str(), /*overwrite=*/1);
        setenv("OMP_PROC_BIND", "close", /*overwrite=*/1);
        // One thread per place when --threads leaves the count to OpenMP.
        if (options.threads() <= 0 && !std::getenv("OMP_NUM_THREADS"))
          setenv("OMP_NUM_THREADS",
                 std::to_string(std::count(choice.places.begin(),
                                           choice.places.end(), '{'))
                     .c_str(),
                 /*overwrite=*/1);
        reexecute = true;
      }
    }
  }
  if (!reexecute)
    return;
  execv("/proc/self/exe", argv);
  // Re-executing failed: OpenMP keeps its defaults, and the report says so.
  unsetenv("OMP_WAIT_POLICY");
  unsetenv("OMP_PLACES");
  unsetenv("GOPT_AFFINITY_CHOICE");
}

} // namespace

int main(int argc, char **argv) {
  gopt::runtime::StatusOr<gopt::tooling::ToolOptions> options =
      gopt::tooling::parseToolArgs(
          std::vector<std::string>(argv + 1, argv + argc));
  if (!options.ok()) {
    std::fprintf(stderr, "gopt-run: error: %s\n%s",
                 options.status().message().c_str(),
                 "run 'gopt-run --help' for usage\n");
    return kExitUsage;
  }
  chooseThreadEnvironment(argv, *options);
  gopt::runtime::StatusOr<bool> result = gopt::tooling::runTool(*options);
  if (!result.ok()) {
    std::fprintf(stderr, "gopt-run: error: %s\n",
                 result.status().message().c_str());
    return kExitRuntime;
  }
  return *result ? 0 : kExitRuntime;
}
