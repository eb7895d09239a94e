//===- Rnn.h - Runtime shape functions of the recurrent ops -----*- C++ -*-===//
//
// lstm, gru and rnn and their gradients (GoptRnnOps.td): the runtime shape
// functions the generated op table names. They check element types and call the
// shared shape function (lib/Shape/RnnShapes.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_RNN_H
#define GOPT_RUNTIME_SRC_SHAPES_RNN_H

#include "ShapeAdapters.h"

namespace gopt::runtime {

Status lstmShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                 Shapes &out);
Status gruShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                Shapes &out);
Status rnnShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                Shapes &out);
Status lstmGradShape(const OpAttrs &attrs, const Shapes &in,
                     const DTypes &types, Shapes &out);
Status gruGradShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                    Shapes &out);
Status rnnGradShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                    Shapes &out);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_RNN_H
