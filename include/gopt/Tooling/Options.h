//===- Options.h - gopt-run's command line ----------------------*- C++ -*-===//
//
// The command line of gopt-run as data: parseToolArgs turns the arguments
// into one mode and its option struct, and runTool runs it. Both are plain
// C++ (no LLVM), so the runtime-only build has them and embedders can build
// the option structs themselves instead.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_TOOLING_OPTIONS_H
#define GOPT_TOOLING_OPTIONS_H

#include "gopt/Tooling/Calibrate.h"
#include "gopt/Tooling/GradCheck.h"
#include "gopt/Tooling/Run.h"
#include "gopt/Tooling/Train.h"

#include <string>
#include <vector>

namespace gopt::tooling {

enum class ToolMode {
  kHelp,      // --help: print toolUsage()
  kRun,       // runModel
  kCompare,   // runCompare
  kTrain,     // runTraining (also --data-only)
  kGradCheck, // runGradCheck
  kCalibrate, // runCalibration
};

struct ToolOptions {
  ToolMode mode = ToolMode::kRun;
  // The options of `mode`; the others keep their defaults.
  RunOptions run;
  TrainOptions train;
  GradCheckOptions gradCheck;
  CalibrateOptions calibrate;
  // --affinity: "none" or "cores" (applied by gopt-run's main before
  // libgomp loads: CpuInfo.h's choosePinnedPlaces).
  std::string affinity = "none";

  /// The intra-op threads `mode` will use (0: the library's default).
  int threads() const {
    switch (mode) {
    case ToolMode::kTrain:
      return train.threads;
    case ToolMode::kCalibrate:
      return calibrate.threads;
    default:
      return run.threads;
    }
  }
};

/// gopt-run's --help text.
const char *toolUsage();

/// Parses gopt-run's arguments (without the program name). An error is a
/// usage error: its message says which argument is wrong and why.
runtime::StatusOr<ToolOptions>
parseToolArgs(const std::vector<std::string> &args);

/// Runs the mode `options` selects. True on success, false when a
/// comparison failed or a failure was already reported (a NaN loss).
runtime::StatusOr<bool> runTool(const ToolOptions &options);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_OPTIONS_H
