//===- wait_policy.cpp - gopt._wait_policy --------------------------------===//
//
// runtime::chooseOpenMPWaitPolicy for the package's __init__, which must set
// OMP_WAIT_POLICY (or libomp's KMP_BLOCKTIME) before gopt._gopt loads the
// OpenMP runtime (gopt-run re-executes itself instead). Links no OpenMP.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/CpuInfo.h"

#include <pybind11/pybind11.h>

namespace py = pybind11;

PYBIND11_MODULE(_wait_policy, m) {
  m.doc() = "The OpenMP wait policy gopt chooses on a busy machine.";
  m.def(
      "choose",
      [](int threads) {
        gopt::runtime::WaitPolicyChoice choice =
            gopt::runtime::chooseOpenMPWaitPolicy(threads);
        return py::make_tuple(choice.policy, choice.reason);
      },
      py::arg("threads") = 0,
      "(policy, reason): 'passive' when other tasks keep the CPUs busy, "
      "else '' (a short spin: SPIN_MILLISECONDS in libomp's KMP_BLOCKTIME).");
  m.attr("SPIN_MILLISECONDS") = gopt::runtime::kOpenMPSpinMilliseconds;
}
