//===- DynamicShape.h - Runtime shapes computed in the graph ----*- C++ -*-===//
//
// dynamic_reshape (GoptDynamicShapeOps.td): its shape function reads the
// target shape's value, which the session computes on the host while it
// resolves shapes (OpSchema.h, ValueShapeFn).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_DYNAMICSHAPE_H
#define GOPT_RUNTIME_SRC_SHAPES_DYNAMICSHAPE_H

#include "ShapeAdapters.h"

namespace gopt::runtime {

Status
dynamicReshapeShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                    const std::vector<const std::vector<int64_t> *> &hostValues,
                    Shapes &out);

// range: the count its start, limit and delta attributes give.
Status rangeShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                  Shapes &out);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_DYNAMICSHAPE_H
