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

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

/// libgomp reads its wait policy once, when it loads, so when the user set
/// none and the machine is busy (chooseOpenMPWaitPolicy), gopt-run
/// re-executes itself with OMP_WAIT_POLICY=passive. GOPT_OMP_WAIT_CHOICE
/// carries the reason to the report.
void chooseWaitPolicy(char **argv, int threads) {
  if (std::getenv("OMP_WAIT_POLICY"))
    return;
  gopt::runtime::WaitPolicyChoice choice =
      gopt::runtime::chooseOpenMPWaitPolicy(threads);
  setenv("GOPT_OMP_WAIT_CHOICE", choice.reason.c_str(), /*overwrite=*/1);
  if (choice.policy.empty())
    return;
  setenv("OMP_WAIT_POLICY", choice.policy.c_str(), /*overwrite=*/1);
  execv("/proc/self/exe", argv);
  // Re-executing failed: libgomp keeps its default, and the report says so.
  unsetenv("OMP_WAIT_POLICY");
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
  chooseWaitPolicy(argv, options->threads());
  gopt::runtime::StatusOr<bool> result = gopt::tooling::runTool(*options);
  if (!result.ok()) {
    std::fprintf(stderr, "gopt-run: error: %s\n",
                 result.status().message().c_str());
    return kExitRuntime;
  }
  return *result ? 0 : kExitRuntime;
}
