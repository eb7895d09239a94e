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

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

/// libgomp's default wait policy spins at barriers; with 2 threads on a
/// loaded machine a pre-empted thread stalls every parallel region (measured:
/// 100 ms vs. 0.35 ms per mnist_cnn inference at batch 1). libgomp reads the
/// policy only when it loads, so gopt-run re-executes itself once with
/// OMP_WAIT_POLICY=passive unless the user chose a policy.
void preferPassiveOpenMPWaiting(char **argv) {
  if (std::getenv("OMP_WAIT_POLICY"))
    return;
  setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  execv("/proc/self/exe", argv);
  // If re-executing fails, run on with the default policy.
}

} // namespace

int main(int argc, char **argv) {
  preferPassiveOpenMPWaiting(argv);
  gopt::runtime::StatusOr<gopt::tooling::ToolOptions> options =
      gopt::tooling::parseToolArgs(
          std::vector<std::string>(argv + 1, argv + argc));
  if (!options.ok()) {
    std::fprintf(stderr, "gopt-run: error: %s\n%s",
                 options.status().message().c_str(),
                 "run 'gopt-run --help' for usage\n");
    return kExitUsage;
  }
  gopt::runtime::StatusOr<bool> result = gopt::tooling::runTool(*options);
  if (!result.ok()) {
    std::fprintf(stderr, "gopt-run: error: %s\n",
                 result.status().message().c_str());
    return kExitRuntime;
  }
  return *result ? 0 : kExitRuntime;
}
