//===- CpuBackend.h - The CPU backend ---------------------------*- C++ -*-===//
//
// Backends "cpu" (oneDNN blocked layouts, runtime fusion and the fast
// kernels: CpuSchedule.cpp) and "reference" (one reference kernel per op):
// a schedule of kernels from the CPU KernelRegistry over one host arena
// (CpuBackend.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_CPUBACKEND_H
#define GOPT_RUNTIME_SRC_CPU_CPUBACKEND_H

#include "../Backend.h"

namespace gopt::runtime {

// The backend for options.backend "cpu" or "reference".
StatusOr<std::unique_ptr<Backend>>
createCpuBackend(const Plan &plan, const SessionOptions &options);

// Sets the intra-op thread count of the CPU kernels (OpenMP for oneDNN).
void setCpuThreads(int threads);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CPU_CPUBACKEND_H
