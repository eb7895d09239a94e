//===- Report.cpp - gopt-run's timing report, JSON and trace --------------===//
#include "gopt/Tooling/Report.h"
#include "gopt/Tooling/Profile.h"
#include "gopt/Tooling/Run.h"
#include "gopt/runtime/CpuInfo.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace gopt::tooling {

using namespace runtime;

std::string jsonEscape(const std::string &s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    default:
      if (static_cast<unsigned char>(ch) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", ch);
        out += buf;
      } else {
        out += ch;
      }
    }
  }
  return out;
}

std::string formatBytes(size_t bytes) {
  char buf[64];
  if (bytes >= (1u << 20))
    std::snprintf(buf, sizeof(buf), "%.2f MiB", bytes / 1048576.0);
  else if (bytes >= 1024)
    std::snprintf(buf, sizeof(buf), "%.2f KiB", bytes / 1024.0);
  else
    std::snprintf(buf, sizeof(buf), "%zu B", bytes);
  return buf;
}

namespace {

double percentile(std::vector<double> sorted, double q) {
  size_t rank = static_cast<size_t>(std::ceil(q * sorted.size()));
  return sorted[std::min(sorted.size() - 1, rank ? rank - 1 : 0)];
}

} // namespace

Timing summarizeTimes(const std::vector<double> &timesMs) {
  std::vector<double> sorted = timesMs;
  std::sort(sorted.begin(), sorted.end());
  Timing t;
  t.medianMs = percentile(sorted, 0.5);
  t.p90Ms = percentile(sorted, 0.9);
  t.minMs = sorted.front();
  for (double v : timesMs)
    t.meanMs += v / timesMs.size();
  return t;
}

Status writeTrace(const std::string &path, const Session &session,
                  double stepMs) {
  std::ofstream out(path);
  if (!out)
    return notFound("cannot open trace file '", path, "' for writing");
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  out << "{\"name\":\"step\",\"cat\":\"step\",\"ph\":\"X\",\"ts\":0,\"dur\":"
      << stepMs * 1000 << ",\"pid\":1,\"tid\":0}";
  // Tracks: 0 the step, 1 the ops, 2 the collectives on the communication
  // thread (named, so that a viewer labels them).
  out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,"
         "\"args\":{\"name\":\"ops\"}}";
  bool communication = false;
  for (const OpProfile &p : session.opProfiles()) {
    bool comm = isCommunication(p);
    communication |= comm;
    out << ",\n{\"name\":\"" << jsonEscape(p.name) << "\",\"cat\":\""
        << jsonEscape(p.kind)
        << "\",\"ph\":\"X\",\"ts\":" << p.lastStartMs * 1000
        << ",\"dur\":" << p.lastMs * 1000
        << ",\"pid\":1,\"tid\":" << (comm ? 2 : 1) << ",\"args\":{\"kind\":\""
        << jsonEscape(p.kind) << "\",\"device\":\"" << jsonEscape(p.device)
        << "\",\"implementation\":\"" << jsonEscape(p.implementation) << "\"";
    if (comm)
      out << ",\"bytes\":" << p.bytes;
    out << "}}";
  }
  if (communication)
    out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,"
           "\"args\":{\"name\":\"communication\"}}";
  out << "\n]}\n";
  out.close();
  if (!out)
    return dataLoss("error writing trace file '", path, "'");
  return Status::success();
}

std::string openMPWaitDescription() {
  const char *policy = std::getenv("OMP_WAIT_POLICY");
  const char *choice = std::getenv("GOPT_OMP_WAIT_CHOICE");
  std::string text = std::string(policy ? policy : "default") + " (" +
                     openMPWaitBehaviour() + ")";
  if (choice && *choice)
    text += std::string(policy ? " (chosen: " : " (") + choice + ")";
  return text;
}

Status writeJsonReport(const std::string &path, const RunOptions &options,
                       const Timing &t, double throughput, const MemoryStats &m,
                       const std::vector<OpProfile> &rows) {
  std::ofstream out(path);
  if (!out)
    return notFound("cannot open JSON file '", path, "' for writing");
  double total = sumOpMs(rows);
  out << "{\n  \"model\": \"" << jsonEscape(options.model) << "\",\n"
      << "  \"backend\": \"" << jsonEscape(options.backend) << "\",\n"
      << "  \"batch\": " << options.batch << ",\n"
      << "  \"threads\": " << options.threads << ",\n"
      << "  \"omp_wait\": \"" << jsonEscape(openMPWaitDescription()) << "\",\n"
      << "  \"warmup\": " << options.warmup << ",\n"
      << "  \"iterations\": " << options.iterations << ",\n"
      << "  \"median_ms\": " << t.medianMs << ",\n"
      << "  \"p90_ms\": " << t.p90Ms << ",\n"
      << "  \"min_ms\": " << t.minMs << ",\n"
      << "  \"mean_ms\": " << t.meanMs << ",\n"
      << "  \"throughput_per_s\": " << throughput << ",\n"
      << "  \"flops_per_step\": " << flopsPerStep(rows) << ",\n"
      << "  \"peak_memory_bytes\": " << m.totalBytes() << ",\n"
      << "  \"arena_bytes\": " << m.arenaBytes << ",\n"
      << "  \"intermediate_bytes\": " << m.intermediateBytes << ",\n"
      << "  \"constant_bytes\": " << m.constantBytes << ",\n"
      << "  \"workspace_bytes\": " << m.workspaceBytes << ",\n"
      << "  \"ops\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const OpProfile &p = rows[i];
    out << (i ? "," : "") << "\n    {\"name\": \"" << jsonEscape(p.name)
        << "\", \"kind\": \"" << jsonEscape(p.kind) << "\", \"device\": \""
        << jsonEscape(p.device) << "\", \"implementation\": \""
        << jsonEscape(p.implementation) << "\", \"calls\": " << p.calls
        << ", \"total_ms\": " << p.totalMs
        << ", \"mean_ms\": " << (p.calls ? p.totalMs / p.calls : 0.0)
        << ", \"min_run_ms\": " << p.minRunMs << ", \"flops\": " << p.flops;
    if (isCommunication(p))
      out << ", \"bytes\": " << p.bytes; // overlaps the ops: no percent
    else
      out << ", \"percent\": " << (total > 0 ? 100.0 * p.totalMs / total : 0.0);
    out << "}";
  }
  out << "\n  ]\n}\n";
  out.close();
  if (!out)
    return dataLoss("error writing JSON file '", path, "'");
  return Status::success();
}

} // namespace gopt::tooling
