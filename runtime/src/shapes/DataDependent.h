//===- DataDependent.h - Runtime bounds of data-shaped results --*- C++ -*-===//
//
// non_zero, compress, unique and non_max_suppression
// (GoptDataDependentOps.td): the runtime shape functions the generated op
// table names. They give upper bounds, which the session allocates; the
// kernels report the actual shapes (Kernel::actualResultShapes). They check
// element types and call the shared shape functions
// (lib/Shape/DataDependentShapes.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_DATADEPENDENT_H
#define GOPT_RUNTIME_SRC_SHAPES_DATADEPENDENT_H

#include "ShapeAdapters.h"

namespace gopt::runtime {

Status nonZeroShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                    Shapes &out);
Status compressShape(const OpAttrs &attrs, const Shapes &in,
                     const DTypes &types, Shapes &out);
Status uniqueShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out);
Status nonMaxSuppressionShape(const OpAttrs &attrs, const Shapes &in,
                              const DTypes &types, Shapes &out);

// Reads the image's header: the exact [H, W, channels] (a DataShapeFn).
Status imageDecoderShape(const OpAttrs &attrs, const std::vector<Tensor> &in,
                         Shapes &out);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_DATADEPENDENT_H
