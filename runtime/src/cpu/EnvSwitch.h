//===- EnvSwitch.h - GOPT_* switches of the CPU kernels ---------*- C++ -*-===//
//
// Every gopt-owned kernel and fusion of the CPU backend has an environment
// switch that is on by default and that "0" turns off: A/B timings run the
// same binary both ways, and a user can route around a kernel suspected of
// a wrong result without rebuilding.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_ENVSWITCH_H
#define GOPT_RUNTIME_SRC_CPU_ENVSWITCH_H

#include <cstdlib>
#include <cstring>

namespace gopt::runtime {

/// Whether the switch `name` is on: unset or anything but "0".
inline bool envSwitchOn(const char *name) {
  const char *setting = std::getenv(name);
  return !setting || std::strcmp(setting, "0") != 0;
}

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CPU_ENVSWITCH_H
