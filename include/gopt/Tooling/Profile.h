//===- Profile.h - gopt-run's per-op profile table --------------*- C++ -*-===//
#ifndef GOPT_TOOLING_PROFILE_H
#define GOPT_TOOLING_PROFILE_H

#include "gopt/runtime/Session.h"

#include <vector>

namespace gopt::tooling {

/// The session's per-op profile, slowest first.
std::vector<runtime::OpProfile> sortedProfiles(const runtime::Session &session);
/// A collective on the communication thread (not an op of the step).
bool isCommunication(const runtime::OpProfile &row);
/// The arithmetic of one step: the rows' flops (convolutions, matmuls,
/// recurrences; ODS flopFunction).
double flopsPerStep(const std::vector<runtime::OpProfile> &rows);
/// The ops' time (communication rows overlap it and are left out).
double sumOpMs(const std::vector<runtime::OpProfile> &rows);
/// One row per op: kind, device, implementation, calls, time, share; then
/// the communication rows: engine, calls, bytes, time, bandwidth.
void printProfile(const std::vector<runtime::OpProfile> &rows);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_PROFILE_H
