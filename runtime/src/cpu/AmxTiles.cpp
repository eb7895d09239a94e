//===- AmxTiles.cpp - What gopt's own AMX kernels share -------------------===//
#include "AmxTiles.h"

#include <dnnl.hpp>

#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace gopt::runtime::cpu {

bool amxBf16Usable() {
  static const bool usable = [] {
#if defined(__x86_64__) && defined(__linux__)
    const int amx = static_cast<int>(dnnl::cpu_isa::avx512_core_amx);
    if ((static_cast<int>(dnnl::get_effective_cpu_isa()) & amx) != amx)
      return false;
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
  }();
  return usable;
}

} // namespace gopt::runtime::cpu
