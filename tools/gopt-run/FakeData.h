//===- FakeData.h - Deterministic random inputs -----------------*- C++ -*-===//
#ifndef GOPT_TOOLS_GOPT_RUN_FAKEDATA_H
#define GOPT_TOOLS_GOPT_RUN_FAKEDATA_H

#include "gopt/runtime/Session.h"

#include <cstdint>

namespace gopt::run {

// Deterministic data in the spirit of a FakeData source: the same seed for
// the same input name and shape every run. Floats are uniform in [-1, 1),
// integers in [0, 9].
runtime::Tensor fakeData(const runtime::TensorDesc &desc, uint32_t seed);

} // namespace gopt::run

#endif // GOPT_TOOLS_GOPT_RUN_FAKEDATA_H
