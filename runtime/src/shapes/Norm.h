//===- Norm.h - Runtime shape functions of the normalization ops -*- C++
//-*-===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_NORM_H
#define GOPT_RUNTIME_SRC_SHAPES_NORM_H

#include "../ShapeAdapters.h"

namespace gopt::runtime {

Status layerNormShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out);
Status instanceNormShape(const OpAttrs &attrs, const Shapes &in,
                         const DTypes &types, Shapes &out);
Status lrnShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                Shapes &out);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_NORM_H
