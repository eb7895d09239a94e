//===- Signal.h - Runtime shape functions of the signal ops -----*- C++ -*-===//
//
// dft, stft, mel_weight_matrix, det and matrix_inverse (GoptSignalOps.td): the
// op table (OpTable.inc) names the shape functions.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_SIGNAL_H
#define GOPT_RUNTIME_SRC_SHAPES_SIGNAL_H

#include "ShapeAdapters.h"
#include "gopt/Shape/SignalShapes.h"

namespace gopt::runtime {

Status dftShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                Shapes &out);
Status stftShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                 Shapes &out);
Status melWeightMatrixShape(const OpAttrs &attrs, const Shapes &in,
                            const DTypes &types, Shapes &out);
Status detShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                Shapes &out);
Status matrixInverseShape(const OpAttrs &attrs, const Shapes &in,
                          const DTypes &types, Shapes &out);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_SIGNAL_H
