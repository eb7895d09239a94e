//===- Profile.h - gopt-run's per-op profile table --------------*- C++ -*-===//
#ifndef GOPT_TOOLING_PROFILE_H
#define GOPT_TOOLING_PROFILE_H

#include "gopt/runtime/Session.h"

#include <vector>

namespace gopt::tooling {

/// The session's per-op profile, slowest first.
std::vector<runtime::OpProfile> sortedProfiles(const runtime::Session &session);
double sumOpMs(const std::vector<runtime::OpProfile> &rows);
/// One row per op: kind, device, implementation, calls, time, share.
void printProfile(const std::vector<runtime::OpProfile> &rows);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_PROFILE_H
