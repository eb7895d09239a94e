//===- ConvOperands.h - Checks every convolution shares ---------*- C++ -*-===//
//
// Internal to lib/Shape: conv2d and conv2d_transpose take the same rank-4
// operands, layouts and filter formats.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_LIB_SHAPE_CONVOPERANDS_H
#define GOPT_LIB_SHAPE_CONVOPERANDS_H

#include "gopt/Shape/ShapeFunctions.h"

namespace gopt::shape::detail {

/// Rank-4 input and filter, a known data_format (its layout in `layout`)
/// and filter_format "HWIO" or "OIHW".
Result verifyConvOperands(DimsRef input, DimsRef filter,
                          std::string_view dataFormat,
                          std::string_view filterFormat, Layout &layout);

} // namespace gopt::shape::detail

#endif // GOPT_LIB_SHAPE_CONVOPERANDS_H
