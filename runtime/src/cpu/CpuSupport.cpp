//===- CpuSupport.cpp - Which ops the CPU backend runs --------------------===//
//
// Plain C++, part of gopt_plan: the CPU runs every op of the op table
// generated from the ODS; CpuCoverageTest keeps the kernel registry
// (KernelRegistry.cpp) equal to it.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/cpu/CpuSupport.h"
#include "gopt/runtime/OpSchema.h"

#include <algorithm>

namespace gopt::runtime {

const std::vector<std::string> &cpuOpKinds() {
  // The CPU runs every op of the ODS-generated op table: OpTableTest checks
  // that each has a reference kernel, CpuCoverageTest that the registry has
  // no others.
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> k;
    for (const OpSchema &schema : allOpSchemas())
      k.push_back(schema.kind);
    std::sort(k.begin(), k.end());
    return k;
  }();
  return kinds;
}

bool hasCpuKernel(std::string_view opKind) {
  const std::vector<std::string> &kinds = cpuOpKinds();
  return std::binary_search(kinds.begin(), kinds.end(), opKind);
}

bool hasCpuKernel(const plan::Op &op, std::string *whyNot) {
  if (hasCpuKernel(op.kind()))
    return true;
  if (whyNot)
    *whyNot = "'" + op.kind() + "' has no CPU kernel";
  return false;
}

} // namespace gopt::runtime
