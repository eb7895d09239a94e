//===- ScalarMath.h - Numerically careful scalar functions ------*- C++ -*-===//
//
// Helpers that the scalar math of GoptMathOps.td may call; plain C++ so the
// runtime, the compiler and device code can share them.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SCALARMATH_H
#define GOPT_RUNTIME_SCALARMATH_H

#include <cmath>

namespace gopt::scalar {

template <typename T> T sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }

// log(1 + exp(x)) without overflow for large x or loss for very negative x.
template <typename T> T softplus(T x) {
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

} // namespace gopt::scalar

#endif // GOPT_RUNTIME_SCALARMATH_H
