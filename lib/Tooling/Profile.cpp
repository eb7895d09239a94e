//===- Profile.cpp - gopt-run's per-op profile table ----------------------===//
#include "gopt/Tooling/Profile.h"

#include <algorithm>
#include <cstdio>

namespace gopt::tooling {

using runtime::OpProfile;
using runtime::Session;

std::vector<OpProfile> sortedProfiles(const Session &session) {
  std::vector<OpProfile> rows = session.opProfiles();
  std::stable_sort(rows.begin(), rows.end(),
                   [](const OpProfile &a, const OpProfile &b) {
                     return a.totalMs > b.totalMs;
                   });
  return rows;
}

bool isCommunication(const OpProfile &row) {
  return row.kind == "communication";
}

double flopsPerStep(const std::vector<OpProfile> &rows) {
  double flops = 0;
  for (const OpProfile &p : rows)
    if (!isCommunication(p))
      flops += p.flops;
  return flops;
}

double sumOpMs(const std::vector<OpProfile> &rows) {
  double total = 0;
  for (const OpProfile &p : rows)
    if (!isCommunication(p))
      total += p.totalMs;
  return total;
}

void printProfile(const std::vector<OpProfile> &rows) {
  double total = sumOpMs(rows);
  std::printf("\n%-28s %-18s %-8s %-10s %7s %11s %10s %7s %9s\n", "op", "kind",
              "device", "impl", "calls", "total_ms", "mean_ms", "%step",
              "GFLOP/s");
  bool communication = false;
  for (const OpProfile &p : rows) {
    if (isCommunication(p)) {
      communication = true;
      continue;
    }
    double meanMs = p.calls ? p.totalMs / p.calls : 0.0;
    std::printf("%-28s %-18s %-8s %-10s %7lld %11.4f %10.4f %6.2f%%",
                p.name.c_str(), p.kind.c_str(), p.device.c_str(),
                p.implementation.c_str(), static_cast<long long>(p.calls),
                p.totalMs, meanMs, total > 0 ? 100.0 * p.totalMs / total : 0.0);
    if (p.flops > 0 && meanMs > 0)
      std::printf(" %9.1f", p.flops / (meanMs * 1e6));
    std::printf("\n");
  }
  if (!communication)
    return;
  // On the communication thread: overlapping the ops above, so not part
  // of their total; the all_reduce rows above are what backward waited.
  std::printf("\ncommunication (own thread, overlaps the ops)\n"
              "%-28s %-8s %7s %12s %11s %10s %10s\n",
              "collective", "engine", "calls", "bytes/call", "total_ms",
              "mean_ms", "GB/s");
  for (const OpProfile &p : rows) {
    if (!isCommunication(p))
      continue;
    double meanMs = p.calls ? p.totalMs / p.calls : 0.0;
    std::printf("%-28s %-8s %7lld %12lld %11.4f %10.4f %10.3f\n",
                p.name.c_str(), p.device.c_str(),
                static_cast<long long>(p.calls),
                static_cast<long long>(p.bytes), p.totalMs, meanMs,
                meanMs > 0 ? p.bytes / (meanMs * 1e6) : 0.0);
  }
}

} // namespace gopt::tooling
