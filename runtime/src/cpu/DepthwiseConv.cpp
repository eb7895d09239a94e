//===- DepthwiseConv.cpp - 3x3 depthwise convolution, NHWC bf16 -----------===//
//
// Per output row and block of 16 channels, a run of WB output pixels is
// accumulated in WB registers: each source pixel of the three source rows
// is loaded and widened to f32 once and multiplied into every output of
// the run whose window holds it (3 for stride 1), the nine weights of the
// block in registers. The bias starts the sums, the clamp and one
// round-to-nearest-even to bf16 end them, as oneDNN's bf16 convolution
// computes them.
//
//===----------------------------------------------------------------------===//

#include "DepthwiseConv.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GOPT_DW_X86 1
#define GOPT_DW_TARGET                                                         \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#endif

namespace gopt::runtime::cpu {

bool depthwiseBf16Enabled() {
#ifdef GOPT_DW_X86
  static const bool enabled = [] {
    const char *setting = std::getenv("GOPT_DEPTHWISE_KERNEL");
    if (setting && std::strcmp(setting, "0") == 0)
      return false;
    return __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bf16");
  }();
  return enabled;
#else
  return false;
#endif
}

std::unique_ptr<DepthwiseBf16>
DepthwiseBf16::create(const DepthwiseGeometry &g,
                      const std::vector<float> &weights,
                      const std::vector<float> &bias, bool clamp, float lo,
                      float hi, int threads) {
  if (!depthwiseBf16Enabled() || (g.stride != 1 && g.stride != 2) || g.n < 1 ||
      g.c < 1 || g.h < 1 || g.w < 1 || g.oh < 1 || g.ow < 1 ||
      static_cast<int64_t>(weights.size()) != 9 * g.c ||
      (!bias.empty() && static_cast<int64_t>(bias.size()) != g.c))
    return nullptr;
  auto k = std::unique_ptr<DepthwiseBf16>(new DepthwiseBf16());
  k->g_ = g;
  k->cp_ = (g.c + 15) / 16 * 16;
  k->w_.assign(9 * k->cp_, 0.0f);
  k->b_.assign(k->cp_, 0.0f);
  for (int64_t t = 0; t < 9; ++t)
    std::copy(weights.begin() + t * g.c, weights.begin() + (t + 1) * g.c,
              k->w_.begin() + t * k->cp_);
  std::copy(bias.begin(), bias.end(), k->b_.begin());
  k->clamp_ = clamp;
  k->lo_ = lo;
  k->hi_ = hi;
  k->threads_ = std::max(1, threads);
  return k;
}

#ifdef GOPT_DW_X86
namespace {

GOPT_DW_TARGET inline __m512 loadBf16(const uint16_t *p, __mmask16 m) {
  __m512i wide = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}

struct RowArgs {
  const uint16_t *rows[3]; // the source rows of kh = 0, 1, 2; null: padding
  int64_t w, c;            // source width, channels (pixel stride)
  const float *wt;         // the block's weights: wt[(kh * 3 + kw) * cp]
  int64_t cp;
  __m512 bias, lo, hi;
  bool clamp;
  __mmask16 mask;
};

// Outputs [ow0, ow0 + WB) of one row and block of 16 channels, the first
// source column iw0 = ow0 * S - padLeft; `Check`: some columns fall
// outside the source (read as zeros).
template <int S, int WB, bool Check>
GOPT_DW_TARGET inline void runBlock(const RowArgs &a, int64_t iw0,
                                    uint16_t *out) {
  __m512 acc[WB];
#pragma GCC unroll 16
  for (int j = 0; j < WB; ++j)
    acc[j] = a.bias;
  constexpr int cols = (WB - 1) * S + 3;
#pragma GCC unroll 3
  for (int kh = 0; kh < 3; ++kh) {
    const uint16_t *row = a.rows[kh];
    if (!row)
      continue;
    const __m512 w0 = _mm512_loadu_ps(a.wt + (kh * 3 + 0) * a.cp);
    const __m512 w1 = _mm512_loadu_ps(a.wt + (kh * 3 + 1) * a.cp);
    const __m512 w2 = _mm512_loadu_ps(a.wt + (kh * 3 + 2) * a.cp);
#pragma GCC unroll 64
    for (int t = 0; t < cols; ++t) {
      const int64_t iw = iw0 + t;
      __m512 x;
      if (Check && (iw < 0 || iw >= a.w))
        continue;
      x = loadBf16(row + iw * a.c, a.mask);
      // Output j reads column t at kw = t - j * S.
      if (t % S == 0 && t / S < WB)
        acc[t / S] = _mm512_fmadd_ps(x, w0, acc[t / S]);
      if (t >= 1 && (t - 1) % S == 0 && (t - 1) / S < WB)
        acc[(t - 1) / S] = _mm512_fmadd_ps(x, w1, acc[(t - 1) / S]);
      if (t >= 2 && (t - 2) % S == 0 && (t - 2) / S < WB)
        acc[(t - 2) / S] = _mm512_fmadd_ps(x, w2, acc[(t - 2) / S]);
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < WB; ++j) {
    __m512 v = acc[j];
    if (a.clamp)
      v = _mm512_min_ps(_mm512_max_ps(v, a.lo), a.hi);
    __m256i r = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v));
    _mm256_mask_storeu_epi16(out + j * a.c, a.mask, r);
  }
}

// One output row: per block of 16 channels, runs of WB outputs (WB
// accumulators, 3 weights and a source vector stay in registers); runs
// reaching past the source's left or right edge read zeros there, and the
// last outputs that make no whole run go one at a time.
template <int S>
GOPT_DW_TARGET void runRow(RowArgs a, const float *weights, const float *bias,
                           int64_t ow, int64_t padLeft, uint16_t *dstRow) {
  constexpr int WB = 8;
  const uint16_t *rows[3] = {a.rows[0], a.rows[1], a.rows[2]};
  for (int64_t c0 = 0; c0 < a.cp; c0 += 16) {
    a.mask = static_cast<__mmask16>(c0 + 16 <= a.c ? 0xFFFF
                                                   : (1u << (a.c - c0)) - 1);
    a.wt = weights + c0;
    a.bias = _mm512_loadu_ps(bias + c0);
    for (int kh = 0; kh < 3; ++kh)
      a.rows[kh] = rows[kh] ? rows[kh] + c0 : nullptr;
    uint16_t *out = dstRow + c0;
    int64_t o = 0;
    for (; o + WB <= ow; o += WB) {
      const int64_t iw0 = o * S - padLeft;
      if (iw0 >= 0 && iw0 + (WB - 1) * S + 2 < a.w)
        runBlock<S, WB, false>(a, iw0, out + o * a.c);
      else
        runBlock<S, WB, true>(a, iw0, out + o * a.c);
    }
    for (; o < ow; ++o)
      runBlock<S, 1, true>(a, o * S - padLeft, out + o * a.c);
  }
}

// The rows of every image, split among `threads`.
GOPT_DW_TARGET void runAll(const DepthwiseGeometry &g, int64_t cp,
                           const float *weights, const float *bias, bool clamp,
                           float lo, float hi, int threads, const uint16_t *src,
                           uint16_t *dst) {
  const int64_t rows = g.n * g.oh;
  const size_t srcRow = static_cast<size_t>(g.w * g.c);
  const size_t dstRow = static_cast<size_t>(g.ow * g.c);
  RowArgs base{};
  base.w = g.w;
  base.c = g.c;
  base.cp = cp;
  base.clamp = clamp;
  base.lo = _mm512_set1_ps(lo);
  base.hi = _mm512_set1_ps(hi);
#pragma omp parallel for num_threads(threads) if (threads > 1 && rows > 1)     \
    schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / g.oh, y = r % g.oh;
    RowArgs a = base;
    for (int kh = 0; kh < 3; ++kh) {
      const int64_t ih = y * g.stride - g.padTop + kh;
      a.rows[kh] =
          ih >= 0 && ih < g.h ? src + (n * g.h + ih) * srcRow : nullptr;
    }
    uint16_t *out = dst + r * dstRow;
    if (g.stride == 1)
      runRow<1>(a, weights, bias, g.ow, g.padLeft, out);
    else
      runRow<2>(a, weights, bias, g.ow, g.padLeft, out);
  }
}

} // namespace
#endif

void DepthwiseBf16::run(const uint16_t *src, uint16_t *dst) const {
#ifdef GOPT_DW_X86
  runAll(g_, cp_, w_.data(), b_.data(), clamp_, lo_, hi_, threads_, src, dst);
#endif
}

} // namespace gopt::runtime::cpu
