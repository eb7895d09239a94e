//===- OpAttrs.h - Typed attribute accessors for kernels --------*- C++ -*-===//
//
// One class per runtime op, generated from the ODS: `Conv2DAttrs(attrs)
// .dataFormat()` reads the attribute or ODS's default, so a kernel never
// restates a default.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_OPATTRS_H
#define GOPT_RUNTIME_OPATTRS_H

#include "gopt/runtime/OpSchema.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gopt/runtime/OpAttrs.h.inc"

#endif // GOPT_RUNTIME_OPATTRS_H
