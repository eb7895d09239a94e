//===- CpuInfo.cpp - What backend "cpu" computes natively -----------------===//
#include "gopt/runtime/CpuInfo.h"

#include <dlfcn.h>
#include <dnnl.hpp>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

// What GCC compiles `#pragma omp parallel` to, in libgomp and in libomp.
extern "C" void GOMP_parallel(void (*fn)(void *), void *data, unsigned threads,
                              unsigned flags);

namespace gopt::runtime {

namespace {
// oneDNN's ISA values are bit sets: each includes the bits of the ISAs it
// extends (avx512_core_amx those of avx512_core_bf16, and so on).
bool includes(dnnl::cpu_isa isa, dnnl::cpu_isa subset) {
  return (static_cast<int>(isa) & static_cast<int>(subset)) ==
         static_cast<int>(subset);
}
} // namespace

Bf16Support cpuBf16Support() {
  dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  if (includes(isa, dnnl::cpu_isa::avx512_core_bf16))
    return Bf16Support::kNative;
  if (includes(isa, dnnl::cpu_isa::avx512_core))
    return Bf16Support::kEmulated;
  return Bf16Support::kReference;
}

bool cpuInt8DotProduct() {
  dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return includes(isa, dnnl::cpu_isa::avx512_core_vnni) ||
         includes(isa, dnnl::cpu_isa::avx2_vnni);
}

std::string cpuIsaName() {
  switch (dnnl::get_effective_cpu_isa()) {
  case dnnl::cpu_isa::sse41:
    return "sse41";
  case dnnl::cpu_isa::avx:
    return "avx";
  case dnnl::cpu_isa::avx2:
    return "avx2";
  case dnnl::cpu_isa::avx2_vnni:
    return "avx2_vnni";
  case dnnl::cpu_isa::avx512_mic:
    return "avx512_mic";
  case dnnl::cpu_isa::avx512_mic_4ops:
    return "avx512_mic_4ops";
  case dnnl::cpu_isa::avx512_core:
    return "avx512_core";
  case dnnl::cpu_isa::avx512_core_vnni:
    return "avx512_core_vnni";
  case dnnl::cpu_isa::avx512_core_bf16:
    return "avx512_core_bf16";
  case dnnl::cpu_isa::avx512_core_amx:
    return "avx512_core_amx";
  default:
    return "unknown";
  }
}

std::string openMPRuntimeName() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&GOMP_parallel), &info) == 0 ||
      !info.dli_fname)
    return "";
  const char *slash = std::strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

std::string openMPWaitBehaviour() {
  std::string runtime = openMPRuntimeName();
  const char *env = std::getenv("OMP_WAIT_POLICY");
  std::string policy = env ? env : "";
  for (char &c : policy)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string behaviour;
  if (runtime.rfind("libomp", 0) == 0) {
    // libomp: KMP_BLOCKTIME, where set, overrides the policy's spin.
    const char *blocktime = std::getenv("KMP_BLOCKTIME");
    if (blocktime && std::strcmp(blocktime, "infinite") == 0)
      behaviour = "spin, never sleep";
    else if (blocktime && std::atoi(blocktime) == 0)
      behaviour = "sleep at once";
    else if (blocktime)
      behaviour = std::string("spin ") + blocktime + " ms, then sleep";
    else if (policy == "active")
      behaviour = "spin, never sleep";
    else if (policy == "passive")
      behaviour = "sleep at once";
    else
      behaviour = "spin 200 ms, then sleep";
  } else {
    // libgomp: GOMP_SPINCOUNT's 300,000 spins, 30,000,000 when active.
    if (policy == "active")
      behaviour = "a long spin, then sleep";
    else if (policy == "passive")
      behaviour = "sleep at once";
    else
      behaviour = "a short spin, then sleep";
  }
  return (runtime.empty() ? std::string("OpenMP") : runtime) + ": " + behaviour;
}

} // namespace gopt::runtime
