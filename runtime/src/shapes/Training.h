//===- Training.h - Runtime shape functions of the training ops -*- C++ -*-===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_TRAINING_H
#define GOPT_RUNTIME_SRC_SHAPES_TRAINING_H

#include "../ShapeAdapters.h"

namespace gopt::runtime {

Status crossEntropyShape(const OpAttrs &attrs, const Shapes &in,
                         const DTypes &types, Shapes &out);
Status crossEntropyGradShape(const OpAttrs &attrs, const Shapes &in,
                             const DTypes &types, Shapes &out);
Status mseLossShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                    Shapes &out);
Status mseLossGradShape(const OpAttrs &attrs, const Shapes &in,
                        const DTypes &types, Shapes &out);
Status reluGradShape(const OpAttrs &attrs, const Shapes &in,
                     const DTypes &types, Shapes &out);
Status conv2dBackpropInputShape(const OpAttrs &attrs, const Shapes &in,
                                const DTypes &types, Shapes &out);
Status conv2dBackpropFilterShape(const OpAttrs &attrs, const Shapes &in,
                                 const DTypes &types, Shapes &out);
Status maxPoolGradShape(const OpAttrs &attrs, const Shapes &in,
                        const DTypes &types, Shapes &out);
Status avgPoolGradShape(const OpAttrs &attrs, const Shapes &in,
                        const DTypes &types, Shapes &out);
Status batchNormGradShape(const OpAttrs &attrs, const Shapes &in,
                          const DTypes &types, Shapes &out);
Status sgdUpdateShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out);
Status adamUpdateShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out);
Status allFiniteShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out);
Status selectShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out);
Status lossScaleUpdateShape(const OpAttrs &attrs, const Shapes &in,
                            const DTypes &types, Shapes &out);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_TRAINING_H
