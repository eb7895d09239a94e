//===- UnaryMath.h - Scalar math of the elementwise ops ---------*- C++ -*-===//
//
// For each op of GoptMathOps.td a functor, generated from its ODS: `fn(x)` is
// the op, `fn.derivative(x)` its derivative, the attributes are members with
// ODS's defaults. The runtime's kernels and the compiler's constant folder
// both evaluate ops through these, so the two cannot disagree.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_UNARYMATH_H
#define GOPT_RUNTIME_UNARYMATH_H

#include "gopt/runtime/ScalarMath.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "gopt/runtime/UnaryMath.h.inc"

#endif // GOPT_RUNTIME_UNARYMATH_H
