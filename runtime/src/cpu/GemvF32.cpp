//===- GemvF32.cpp - gopt's AVX-512 f32 matrix-vector product -------------===//
//
// See GemvF32.h. Panel p holds columns [64p, 64p + width) as [K][width]
// (width 64, the last one's rounded up to 16 with zero columns), so a
// panel is one contiguous stream; each of its rows is 1-4 zmm loads and
// FMAs by the broadcast x[k].
//
//===----------------------------------------------------------------------===//
#include "GemvF32.h"

#include "Avx512Lanes.h"
#include "EnvSwitch.h"

#include <omp.h>

#include <algorithm>

namespace gopt::runtime::cpu {

// Read at each kernel's creation: A/B timings build both in one process.
bool gemvF32Enabled() { return envSwitchOn("GOPT_GEMV_F32"); }

#ifdef GOPT_HAVE_AVX512_LANES

namespace {

constexpr int64_t kPanel = 64; // columns per panel: 4 zmm

// y[0 .. cols) = relu?(sum_k x[k] * w[k][..] + bias), w: [k][NB * 16].
template <int NB>
GOPT_AVX512BW void panel(const float *x, const float *w, int64_t k,
                         const float *bias, float *y, int64_t cols, bool relu) {
  __m512 acc[NB];
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j)
    acc[j] = _mm512_setzero_ps();
  for (int64_t i = 0; i < k; ++i) {
    const __m512 v = _mm512_set1_ps(x[i]);
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j)
      acc[j] =
          _mm512_fmadd_ps(v, _mm512_load_ps(w + (i * NB + j) * 16), acc[j]);
  }
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    const int64_t left = cols - j * 16;
    const __mmask16 m =
        left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    __m512 r = acc[j];
    if (bias)
      r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(m, bias + j * 16));
    if (relu)
      r = _mm512_maskz_max_ps(0xFFFF, r, zero);
    _mm512_mask_storeu_ps(y + j * 16, m, r);
  }
}

} // namespace

std::unique_ptr<GemvF32> GemvF32::create(const GemvF32Shape &s,
                                         const float *weight) {
  if (!avx512bwSupported() || s.k <= 0 || s.n <= 0 || !weight)
    return nullptr;
  auto g = std::unique_ptr<GemvF32>(new GemvF32());
  g->s_ = s;
  const int64_t padded = (s.n + 15) / 16 * 16;
  g->w_ = HugePageBuffer(static_cast<size_t>(s.k * padded));
  for (int64_t p0 = 0; p0 < s.n; p0 += kPanel) {
    const int64_t cols = std::min(kPanel, s.n - p0);
    const int64_t width = (cols + 15) / 16 * 16;
    float *dst = g->w_.data() + p0 * s.k;
    for (int64_t i = 0; i < s.k; ++i)
      for (int64_t o = 0; o < cols; ++o)
        dst[i * width + o] =
            s.transB ? weight[(p0 + o) * s.k + i] : weight[i * s.n + p0 + o];
  }
  return g;
}

GOPT_AVX512BW std::pair<int64_t, int64_t> GemvF32::runShare(const float *x,
                                                            const float *bias,
                                                            float *y, int id,
                                                            int nt) const {
  const int64_t k = s_.k, n = s_.n;
  const int64_t panels = (n + kPanel - 1) / kPanel;
  const int64_t first = panels * id / nt, last = panels * (id + 1) / nt;
  for (int64_t p = first; p < last; ++p) {
    const int64_t p0 = p * kPanel, cols = std::min(kPanel, n - p0);
    const float *w = w_.data() + p0 * k;
    const float *b = bias ? bias + p0 : nullptr;
    switch ((cols + 15) / 16) {
    case 1:
      panel<1>(x, w, k, b, y + p0, cols, s_.relu);
      break;
    case 2:
      panel<2>(x, w, k, b, y + p0, cols, s_.relu);
      break;
    case 3:
      panel<3>(x, w, k, b, y + p0, cols, s_.relu);
      break;
    default:
      panel<4>(x, w, k, b, y + p0, cols, s_.relu);
      break;
    }
  }
  return {std::min(n, first * kPanel), std::min(n, last * kPanel)};
}

void GemvF32::run(const float *x, const float *bias, float *y) const {
  const int64_t panels = (s_.n + kPanel - 1) / kPanel;
  const int threads =
      omp_in_parallel()
          ? 1
          : static_cast<int>(std::min<int64_t>(omp_get_max_threads(), panels));
#pragma omp parallel num_threads(threads) if (threads > 1)
  runShare(x, bias, y, omp_get_thread_num(), omp_get_num_threads());
}

#else // !GOPT_HAVE_AVX512_LANES

std::unique_ptr<GemvF32> GemvF32::create(const GemvF32Shape &, const float *) {
  return nullptr;
}
void GemvF32::run(const float *, const float *, float *) const {}
std::pair<int64_t, int64_t> GemvF32::runShare(const float *, const float *,
                                              float *, int, int) const {
  return {0, 0};
}

#endif

} // namespace gopt::runtime::cpu
