//===- Report.h - gopt-run's timing report, JSON and trace ------*- C++ -*-===//
#ifndef GOPT_TOOLING_REPORT_H
#define GOPT_TOOLING_REPORT_H

#include "gopt/runtime/Session.h"

#include <string>
#include <vector>

namespace gopt::tooling {

struct RunOptions;

struct Timing {
  double medianMs = 0, p90Ms = 0, minMs = 0, meanMs = 0;
};

/// Median, p90, min and mean of per-run times in milliseconds (not empty).
Timing summarizeTimes(const std::vector<double> &timesMs);

/// `s` as the inside of a JSON string literal.
std::string jsonEscape(const std::string &s);

/// "512 B", "1.50 KiB", "2.00 MiB".
std::string formatBytes(size_t bytes);

/// A Chrome/Perfetto trace of the session's last step: the step, then one
/// event per op at its start and duration.
runtime::Status writeTrace(const std::string &path,
                           const runtime::Session &session, double stepMs);

/// The OpenMP wait policy this process runs with, and why: OMP_WAIT_POLICY
/// as gopt-run set or found it, with the reason gopt-run recorded in
/// GOPT_OMP_WAIT_CHOICE when it chose one (a timing read without it may
/// have paid a thread wake-up per op).
std::string openMPWaitDescription();

/// The timing report as JSON: the run's settings, timings, memory, and
/// `rows` (the per-op profile, slowest first).
runtime::Status writeJsonReport(const std::string &path,
                                const RunOptions &options, const Timing &t,
                                double throughput,
                                const runtime::MemoryStats &memory,
                                const std::vector<runtime::OpProfile> &rows);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_REPORT_H
