//===- CpuSupport.h - Which ops the CPU backend runs ------------*- C++ -*-===//
//
// The CPU backend's op coverage as data, queryable without linking its
// kernels (oneDNN, OpenMP): the compiler's placement and plan validation use
// it. The kinds are those of the ODS-generated op table; every one has a
// reference kernel in the CPU kernel registry, and the registry has no
// other: CpuCoverageTest (unittests/Runtime) checks that they are equal.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_CPU_CPUSUPPORT_H
#define GOPT_RUNTIME_CPU_CPUSUPPORT_H

#include "gopt/runtime/plan.pb.h"

#include <string>
#include <string_view>
#include <vector>

namespace gopt::runtime {

// Op kinds with a CPU kernel (backends "cpu" and "reference"), sorted.
const std::vector<std::string> &cpuOpKinds();

// Whether ops of kind `opKind` have a CPU kernel.
bool hasCpuKernel(std::string_view opKind);

// Whether `op` has a CPU kernel; if not, `whyNot` says why.
bool hasCpuKernel(const plan::Op &op, std::string *whyNot = nullptr);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_CPU_CPUSUPPORT_H
