//===- RefSignal.cpp - Reference kernels of the signal ops ----------------===//
//
// dft, stft, mel_weight_matrix and det (GoptSignalOps.td) in double
// precision. The transforms are direct O(L^2) sums over a twiddle table
// indexed by (k * n) mod L, so every angle is reduced exactly before its
// cosine is taken.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"
#include "shapes/Signal.h"

#include "gopt/runtime/OpAttrs.h"

#include <cmath>
#include <complex>
#include <utility>
#include <vector>

namespace gopt::runtime::ref {
namespace {

using Complex = std::complex<double>;

/// exp(sign * 2 pi i * m / length) for m in [0, length).
std::vector<Complex> twiddles(int64_t length, double sign) {
  std::vector<Complex> t(length);
  for (int64_t m = 0; m < length; ++m) {
    double angle = sign * 2.0 * M_PI * static_cast<double>(m) /
                   static_cast<double>(length);
    t[m] = Complex(std::cos(angle), std::sin(angle));
  }
  return t;
}

/// The first `bins` bins of the `length`-point DFT of `x` (zero beyond its
/// end), scaled by `scale`.
void directDft(const std::vector<Complex> &x, int64_t length, int64_t bins,
               const std::vector<Complex> &table, double scale,
               std::vector<Complex> &result) {
  result.assign(bins, Complex());
  int64_t used = std::min<int64_t>(length, static_cast<int64_t>(x.size()));
  for (int64_t k = 0; k < bins; ++k) {
    Complex acc;
    for (int64_t n = 0; n < used; ++n)
      acc += x[n] * table[(k * n) % length];
    result[k] = acc * scale;
  }
}

Status dftKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  op_attrs::DftAttrs a(ctx.attrs());
  const Shape &xs = in[0].shape();
  Shape ys;
  int64_t axis = 0, length = 0;
  GOPT_RETURN_IF_ERROR(
      toStatus(shape::inferDftShape(xs, a.axis(), a.inverse(), a.onesided(),
                                    a.dftLength(), ys, axis, length)));
  int64_t rank = static_cast<int64_t>(xs.size());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= xs[i];
  for (int64_t i = axis + 1; i < rank - 1; ++i)
    inner *= xs[i];
  int64_t inLen = xs[axis], bins = ys[axis], comps = xs.back();
  std::vector<Complex> table = twiddles(length, a.inverse() ? 1.0 : -1.0);
  double scale = a.inverse() ? 1.0 / static_cast<double>(length) : 1.0;
  const float *px = in[0].data<float>();
  float *py = out[0].data<float>();
  std::vector<Complex> signal(inLen), spectrum;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t n = 0; n < inLen; ++n) {
        const float *v = px + ((o * inLen + n) * inner + i) * comps;
        signal[n] = Complex(v[0], comps == 2 ? v[1] : 0.0);
      }
      directDft(signal, length, bins, table, scale, spectrum);
      for (int64_t k = 0; k < bins; ++k) {
        float *v = py + ((o * bins + k) * inner + i) * 2;
        v[0] = static_cast<float>(spectrum[k].real());
        v[1] = static_cast<float>(spectrum[k].imag());
      }
    }
  return Status::success();
}

Status stftKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  op_attrs::StftAttrs a(ctx.attrs());
  const Shape &xs = in[0].shape();
  bool hasWindow = in.size() == 2;
  Shape windowShape = hasWindow ? in[1].shape() : Shape();
  shape::DimsRef window(windowShape);
  Shape ys;
  int64_t frameLength = 0;
  GOPT_RETURN_IF_ERROR(toStatus(
      shape::inferStftShape(xs, hasWindow ? &window : nullptr, a.frameStep(),
                            a.frameLength(), a.onesided(), ys, frameLength)));
  int64_t batch = xs[0], length = xs[1], comps = xs[2];
  int64_t frames = ys[1], bins = ys[2], step = a.frameStep();
  std::vector<Complex> table = twiddles(frameLength, -1.0);
  const float *px = in[0].data<float>();
  const float *pw = hasWindow ? in[1].data<float>() : nullptr;
  float *py = out[0].data<float>();
  std::vector<Complex> frame(frameLength), spectrum;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t n = 0; n < frameLength; ++n) {
        const float *v = px + (b * length + f * step + n) * comps;
        double w = pw ? pw[n] : 1.0;
        frame[n] = Complex(v[0] * w, comps == 2 ? v[1] * w : 0.0);
      }
      directDft(frame, frameLength, bins, table, 1.0, spectrum);
      for (int64_t k = 0; k < bins; ++k) {
        float *v = py + ((b * frames + f) * bins + k) * 2;
        v[0] = static_cast<float>(spectrum[k].real());
        v[1] = static_cast<float>(spectrum[k].imag());
      }
    }
  return Status::success();
}

Status melWeightMatrixKernel(const RefContext &ctx, const std::vector<Tensor> &,
                             std::vector<Tensor> &out) {
  op_attrs::MelWeightMatrixAttrs a(ctx.attrs());
  int64_t numMel = a.numMelBins(), dftLength = a.dftLength();
  int64_t sampleRate = a.sampleRate();
  int64_t spectrumBins = dftLength / 2 + 1;
  auto toMel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  double lowMel = toMel(a.lowerEdgeHertz()),
         highMel = toMel(a.upperEdgeHertz());
  // ONNX's definition spaces the num_mel_bins + 2 edges by the range over
  // num_mel_bins + 2 (not + 1), so the top edge stays below the upper one.
  double melStep = (highMel - lowMel) / static_cast<double>(numMel + 2);
  std::vector<int64_t> edges(numMel + 2);
  for (int64_t i = 0; i < numMel + 2; ++i) {
    double hz = 700.0 * (std::pow(10.0, (i * melStep + lowMel) / 2595.0) - 1);
    edges[i] = static_cast<int64_t>(
        std::floor((dftLength + 1) * hz / static_cast<double>(sampleRate)));
    if (edges[i] < 0 || edges[i] >= spectrumBins)
      return invalidArgument("mel band edge ", i, " falls in spectrum bin ",
                             edges[i], ", outside the ", spectrumBins,
                             " bins of a ", dftLength, "-point DFT");
  }
  float *py = out[0].data<float>();
  std::fill(py, py + spectrumBins * numMel, 0.0f);
  for (int64_t m = 0; m < numMel; ++m) {
    int64_t lo = edges[m], centre = edges[m + 1], hi = edges[m + 2];
    if (centre == lo) {
      py[centre * numMel + m] = 1.0f;
    } else {
      for (int64_t j = lo; j <= centre; ++j)
        py[j * numMel + m] =
            static_cast<float>(static_cast<double>(j - lo) / (centre - lo));
    }
    for (int64_t j = centre; j < hi; ++j)
      py[j * numMel + m] =
          static_cast<float>(static_cast<double>(hi - j) / (hi - centre));
  }
  return Status::success();
}

Status detKernel(const RefContext &, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  const Shape &xs = in[0].shape();
  int64_t m = xs.back();
  int64_t count = out[0].numElements();
  const float *px = in[0].data<float>();
  float *py = out[0].data<float>();
  std::vector<double> lu(m * m);
  for (int64_t b = 0; b < count; ++b) {
    for (int64_t i = 0; i < m * m; ++i)
      lu[i] = px[b * m * m + i];
    double det = 1.0;
    for (int64_t col = 0; col < m && det != 0.0; ++col) {
      // Partial pivoting: the largest magnitude in the column.
      int64_t pivot = col;
      for (int64_t r = col + 1; r < m; ++r)
        if (std::abs(lu[r * m + col]) > std::abs(lu[pivot * m + col]))
          pivot = r;
      if (lu[pivot * m + col] == 0.0) {
        det = 0.0;
        break;
      }
      if (pivot != col) {
        for (int64_t c = 0; c < m; ++c)
          std::swap(lu[pivot * m + c], lu[col * m + c]);
        det = -det;
      }
      double d = lu[col * m + col];
      det *= d;
      for (int64_t r = col + 1; r < m; ++r) {
        double f = lu[r * m + col] / d;
        for (int64_t c = col; c < m; ++c)
          lu[r * m + c] -= f * lu[col * m + c];
      }
    }
    py[b] = static_cast<float>(det);
  }
  return Status::success();
}

Status matrixInverseKernel(const RefContext &, const std::vector<Tensor> &in,
                           std::vector<Tensor> &out) {
  const Shape &xs = in[0].shape();
  int64_t m = xs.back();
  int64_t count = m == 0 ? 0 : in[0].numElements() / (m * m);
  const float *px = in[0].data<float>();
  float *py = out[0].data<float>();
  // Gauss-Jordan on [A | I] with partial pivoting: the right half ends as
  // A's inverse.
  std::vector<double> a(m * m), inv(m * m);
  for (int64_t b = 0; b < count; ++b) {
    for (int64_t i = 0; i < m * m; ++i) {
      a[i] = px[b * m * m + i];
      inv[i] = i / m == i % m ? 1.0 : 0.0;
    }
    for (int64_t col = 0; col < m; ++col) {
      int64_t pivot = col;
      for (int64_t r = col + 1; r < m; ++r)
        if (std::abs(a[r * m + col]) > std::abs(a[pivot * m + col]))
          pivot = r;
      if (a[pivot * m + col] == 0.0)
        return invalidArgument("matrix ", b, " of x is singular");
      if (pivot != col)
        for (int64_t c = 0; c < m; ++c) {
          std::swap(a[pivot * m + c], a[col * m + c]);
          std::swap(inv[pivot * m + c], inv[col * m + c]);
        }
      double scale = 1.0 / a[col * m + col];
      for (int64_t c = 0; c < m; ++c) {
        a[col * m + c] *= scale;
        inv[col * m + c] *= scale;
      }
      for (int64_t r = 0; r < m; ++r) {
        double f = a[r * m + col];
        if (r == col || f == 0.0)
          continue;
        for (int64_t c = 0; c < m; ++c) {
          a[r * m + c] -= f * a[col * m + c];
          inv[r * m + c] -= f * inv[col * m + c];
        }
      }
    }
    for (int64_t i = 0; i < m * m; ++i)
      py[b * m * m + i] = static_cast<float>(inv[i]);
  }
  return Status::success();
}

} // namespace

void registerSignalKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  registerKernel(r, "dft", dftKernel, D::kFloat);
  registerKernel(r, "stft", stftKernel, D::kFloat);
  registerKernel(r, "mel_weight_matrix", melWeightMatrixKernel, D::kFloat);
  registerKernel(r, "det", detKernel, D::kFloat);
  registerKernel(r, "matrix_inverse", matrixInverseKernel, D::kFloat);
}

} // namespace gopt::runtime::ref
