//===- Indexing.h - Runtime shape functions of the indexing ops -*- C++ -*-===//
//
// gather, scatter, arg_max/arg_min and cumsum (GoptIndexingOps.td): the
// runtime shape functions the generated op table names. They check what
// only the runtime checks (element types, attribute values a plan may get
// wrong) and call the shared shape functions (lib/Shape/IndexingShapes.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_INDEXING_H
#define GOPT_RUNTIME_SRC_SHAPES_INDEXING_H

#include "ShapeAdapters.h"

namespace gopt::runtime {

Status gatherShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out);
Status gatherGradShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out);
Status gatherElementsShape(const OpAttrs &attrs, const Shapes &in,
                           const DTypes &types, Shapes &out);
Status gatherNDShape(const OpAttrs &attrs, const Shapes &in,
                     const DTypes &types, Shapes &out);
Status scatterElementsShape(const OpAttrs &attrs, const Shapes &in,
                            const DTypes &types, Shapes &out);
Status scatterNDShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out);
Status argReduceShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out);
Status cumSumShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out);
Status tfIdfVectorizerShape(const OpAttrs &attrs, const Shapes &in,
                            const DTypes &types, Shapes &out);
Status topKShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                 Shapes &out);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_INDEXING_H
