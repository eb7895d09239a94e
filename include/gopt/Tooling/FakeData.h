//===- FakeData.h - Deterministic random inputs -----------------*- C++ -*-===//
#ifndef GOPT_TOOLING_FAKEDATA_H
#define GOPT_TOOLING_FAKEDATA_H

#include "gopt/runtime/Session.h"

#include <cstdint>

namespace gopt::tooling {

// Deterministic data in the spirit of a FakeData source: the same seed for
// the same input name and shape every run. Floats are uniform in [-1, 1),
// integers in [0, 9].
runtime::Tensor fakeData(const runtime::TensorDesc &desc, uint32_t seed);

} // namespace gopt::tooling

#endif // GOPT_TOOLING_FAKEDATA_H
