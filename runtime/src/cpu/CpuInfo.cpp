//===- CpuInfo.cpp - What backend "cpu" computes natively -----------------===//
#include "gopt/runtime/CpuInfo.h"

#include <dnnl.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

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

} // namespace gopt::runtime
