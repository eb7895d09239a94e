//===- SignalShapes.h - Shape functions of the signal ops -------*- C++ -*-===//
//
// dft, stft, mel_weight_matrix and det (GoptSignalOps.td;
// lib/Shape/SignalShapes.cpp). Kept apart from ShapeFunctions.h, whose
// conventions they follow, so that the family's declarations live together.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_SHAPE_SIGNALSHAPES_H
#define GOPT_SHAPE_SIGNALSHAPES_H

#include "gopt/Shape/ShapeFunctions.h"

namespace gopt::shape {

/// gopt.dft: input [..., 1 or 2]; `axis` normalized into `signalAxis`, and
/// `length` the transform's length (dft_length, or the axis's size).
Result inferDftShape(DimsRef input, int64_t axis, bool inverse, bool onesided,
                     int64_t dftLength, Dims &result, int64_t &signalAxis,
                     int64_t &length);

/// gopt.stft: signal [batch, length, 1 or 2], `window` [frame_length] or
/// null; `frameLength` 0 takes the window's; `resolvedFrameLength` gets the
/// frame length used.
Result inferStftShape(DimsRef signal, const DimsRef *window, int64_t frameStep,
                      int64_t frameLength, bool onesided, Dims &result,
                      int64_t &resolvedFrameLength);

/// gopt.mel_weight_matrix: [dft_length / 2 + 1, num_mel_bins].
Result inferMelWeightMatrixShape(int64_t numMelBins, int64_t dftLength,
                                 int64_t sampleRate, double lowerEdgeHertz,
                                 double upperEdgeHertz, Dims &result);

/// gopt.det: x [..., M, M] -> [...].
Result inferDetShape(DimsRef x, Dims &result);

/// gopt.matrix_inverse: x [..., M, M] -> [..., M, M].
Result inferMatrixInverseShape(DimsRef x, Dims &result);

} // namespace gopt::shape

#endif // GOPT_SHAPE_SIGNALSHAPES_H
