//===- SignalShapes.cpp - Shape functions of the signal ops ---------------===//
//
// gopt.dft, stft, mel_weight_matrix and det (GoptSignalOps.td), following
// docs/op-semantics.md. No LLVM or MLIR, as ShapeFunctions.cpp.
//
//===----------------------------------------------------------------------===//

#include "gopt/Shape/SignalShapes.h"
#include "Failure.h"

namespace gopt::shape {

using detail::fail;

namespace {

bool sameDim(int64_t a, int64_t b) {
  return isDynamic(a) || isDynamic(b) || a == b;
}

/// The trailing dim of a real (1) or complex (2) signal.
Result requireComplexDim(DimsRef shape, std::string_view name) {
  if (shape.empty() ||
      (!isDynamic(shape.back()) && shape.back() != 1 && shape.back() != 2))
    return fail("expects ", name,
                " with a trailing dim of 1 (real) or 2 (complex), got ",
                formatShape(shape));
  return Result::success();
}

} // namespace

Result inferDftShape(DimsRef input, int64_t axis, bool inverse, bool onesided,
                     int64_t dftLength, Dims &result, int64_t &signalAxis,
                     int64_t &length) {
  if (input.size() < 2)
    return fail("expects input of rank >= 2 ([..., signal, 1 or 2]), got ",
                formatShape(input));
  if (Result r = requireComplexDim(input, "input"); r.failed())
    return r;
  int64_t rank = static_cast<int64_t>(input.size());
  signalAxis = axis < 0 ? axis + rank : axis;
  if (signalAxis < 0 || signalAxis >= rank - 1)
    return fail("expects axis in [", -rank, ", ", -2, "] or [0, ", rank - 2,
                "] (not the trailing complex dim), got ", axis);
  if (dftLength < 0)
    return fail("expects dft_length >= 0 (0: the axis's size), got ",
                dftLength);
  if (inverse && onesided)
    return fail("expects onesided = false with inverse = true");
  if (onesided && input.back() == 2)
    return fail("expects a real input (trailing dim 1) with onesided = true, "
                "got ",
                formatShape(input));
  length = dftLength ? dftLength : input[signalAxis];
  if (!isDynamic(length) && length < 1)
    return fail("expects a transform length >= 1, got ", length);
  result.assign(input.begin(), input.end());
  result[signalAxis] =
      isDynamic(length) ? kDynamic : (onesided ? length / 2 + 1 : length);
  result.back() = 2;
  return Result::success();
}

Result inferStftShape(DimsRef signal, const DimsRef *window, int64_t frameStep,
                      int64_t frameLength, bool onesided, Dims &result,
                      int64_t &resolvedFrameLength) {
  if (signal.size() != 3)
    return fail("expects signal of rank 3 ([batch, length, 1 or 2]), got ",
                formatShape(signal));
  if (Result r = requireComplexDim(signal, "signal"); r.failed())
    return r;
  if (frameStep < 1)
    return fail("expects frame_step >= 1, got ", frameStep);
  if (frameLength < 0)
    return fail("expects frame_length >= 0 (0: the window's length), got ",
                frameLength);
  if (window && window->size() != 1)
    return fail("expects window of rank 1, got ", formatShape(*window));
  if (!window && frameLength == 0)
    return fail("expects a window or frame_length > 0");
  if (window && frameLength && !sameDim((*window)[0], frameLength))
    return fail("expects window of frame_length ", frameLength,
                " entries, got ", formatShape(*window));
  if (onesided && signal.back() == 2)
    return fail("expects a real signal (trailing dim 1) with onesided = true, "
                "got ",
                formatShape(signal));
  resolvedFrameLength = frameLength ? frameLength : (*window)[0];
  int64_t frames = kDynamic, bins = kDynamic;
  if (!isDynamic(resolvedFrameLength)) {
    if (resolvedFrameLength < 1)
      return fail("expects a frame length >= 1, got ", resolvedFrameLength);
    bins = onesided ? resolvedFrameLength / 2 + 1 : resolvedFrameLength;
    if (!isDynamic(signal[1])) {
      if (signal[1] < resolvedFrameLength)
        return fail("expects a signal of at least frame length ",
                    resolvedFrameLength, " samples, got ", formatShape(signal));
      frames = (signal[1] - resolvedFrameLength) / frameStep + 1;
    }
  }
  result = {signal[0], frames, bins, 2};
  return Result::success();
}

Result inferMelWeightMatrixShape(int64_t numMelBins, int64_t dftLength,
                                 int64_t sampleRate, double lowerEdgeHertz,
                                 double upperEdgeHertz, Dims &result) {
  if (numMelBins < 1)
    return fail("expects num_mel_bins >= 1, got ", numMelBins);
  if (dftLength < 1)
    return fail("expects dft_length >= 1, got ", dftLength);
  if (sampleRate < 1)
    return fail("expects sample_rate >= 1, got ", sampleRate);
  if (!(lowerEdgeHertz >= 0.0 && lowerEdgeHertz <= upperEdgeHertz))
    return fail("expects 0 <= lower_edge_hertz <= upper_edge_hertz, got ",
                lowerEdgeHertz, " and ", upperEdgeHertz);
  // Higher edges would fall past the onesided spectrum's last bin.
  if (2 * upperEdgeHertz > static_cast<double>(sampleRate))
    return fail("expects upper_edge_hertz <= sample_rate / 2 (", sampleRate,
                " / 2), got ", upperEdgeHertz);
  result = {dftLength / 2 + 1, numMelBins};
  return Result::success();
}

Result inferDetShape(DimsRef x, Dims &result) {
  if (x.size() < 2 || !sameDim(x[x.size() - 1], x[x.size() - 2]))
    return fail("expects x of shape [..., M, M], got ", formatShape(x));
  result.assign(x.begin(), x.end() - 2);
  return Result::success();
}

Result inferMatrixInverseShape(DimsRef x, Dims &result) {
  if (x.size() < 2 || !sameDim(x[x.size() - 1], x[x.size() - 2]))
    return fail("expects x of shape [..., M, M], got ", formatShape(x));
  result.assign(x.begin(), x.end());
  // A dynamic dimension of the pair takes the other's size.
  size_t rank = x.size();
  if (isDynamic(result[rank - 1]))
    result[rank - 1] = result[rank - 2];
  if (isDynamic(result[rank - 2]))
    result[rank - 2] = result[rank - 1];
  return Result::success();
}

} // namespace gopt::shape
