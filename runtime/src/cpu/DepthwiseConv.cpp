//===- DepthwiseConv.cpp - 3x3 depthwise convolution, NHWC bf16 -----------===//
//
// Per output row and block of 32 channels, a run of WB output pixels is
// accumulated in registers: each source pixel of the three source rows is
// loaded once (64 bytes, its 32 channels) and multiplied into every output
// of the run whose window holds it (3 for stride 1), the block's weights
// in registers. A load of 32 bf16 values is, read as 16 f32 lanes, the odd
// channels' values with the even channels' bits below them: one AND and
// one shift give both halves as f32, where widening 16 channels at a time
// costs a shuffle and a shift per 16 (the shuffle port is the FMAs' own).
// The bias starts the sums, the clamp and one round-to-nearest-even to
// bf16 end them, as oneDNN's bf16 convolution computes them (its results
// are matched bit for bit but for rare one-ulp differences).
//
//===----------------------------------------------------------------------===//

#include "DepthwiseConv.h"
#include "Bf16Clamp.h"
#include "EnvSwitch.h"
#include "SiluAvx512.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GOPT_DW_X86 1
// GCC 12 reports the undefined pass-through operand inside avx512fintrin's
// unmasked min/max/shift wrappers as "maybe uninitialized" wherever these
// row kernels inline them (about 900 false reports per build).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define GOPT_DW_TARGET                                                         \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#endif

namespace gopt::runtime::cpu {

bool depthwiseBf16Enabled() {
#ifdef GOPT_DW_X86
  static const bool enabled = [] {
    if (!envSwitchOn("GOPT_DEPTHWISE_KERNEL"))
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
  const int64_t blocks = (g.c + 31) / 32;
  // Per block of 32 channels and tap: the even channels' 16 weights, then
  // the odd channels' (a 64-byte load of 32 bf16 channels is the odd
  // channels' f32 values with the even ones' bits below them: masking
  // and shifting give both halves in f32 without a shuffle).
  k->w_.assign(blocks * 9 * 32, 0.0f);
  k->b_.assign(blocks * 32, 0.0f);
  for (int64_t c = 0; c < g.c; ++c) {
    const int64_t block = c / 32, lane = c % 32;
    const int64_t at = (lane % 2) * 16 + lane / 2;
    for (int64_t t = 0; t < 9; ++t)
      k->w_[(block * 9 + t) * 32 + at] = weights[t * g.c + c];
    if (!bias.empty())
      k->b_[block * 32 + at] = bias[c];
  }
  k->clamp_ = clamp;
  k->lo_ = lo;
  k->hi_ = hi;
  k->threads_ = std::max(1, threads);
  return k;
}

#ifdef GOPT_DW_X86
namespace {

struct RowArgs {
  const uint16_t *rows[3]; // the source rows of kh = 0, 1, 2; null: padding
  int64_t w, c;            // source width, channels (pixel stride)
  const float *wt;         // the block's weights (see create)
  __m512 biasEven, biasOdd, lo, hi;
  __m512i interleave; // word i of the result: even i / 2 or odd i / 2
  bool clamp;
  // The clamp on the rounded bf16 bits as int16 (see bf16Clamp), not in
  // f32: `clamp` is false then.
  bool clamp16;
  __m512i lo16, hi16;
  __mmask32 mask; // the block's channels
};

// Outputs [ow0, ow0 + WB) of one row and block of 32 channels, the first
// source column iw0 = ow0 * S - padLeft; `Check`: some columns fall
// outside the source (read as zeros). Each source pixel's 32 channels are
// loaded once and go into every output whose window holds it.
template <int S, int WB, bool Check>
GOPT_DW_TARGET inline void runBlock(const RowArgs &a, int64_t iw0,
                                    uint16_t *out) {
  __m512 even[WB], odd[WB];
#pragma GCC unroll 16
  for (int j = 0; j < WB; ++j) {
    even[j] = a.biasEven;
    odd[j] = a.biasOdd;
  }
  constexpr int cols = (WB - 1) * S + 3;
#pragma GCC unroll 3
  for (int kh = 0; kh < 3; ++kh) {
    const uint16_t *row = a.rows[kh];
    if (!row)
      continue;
    __m512 we[3], wo[3];
#pragma GCC unroll 3
    for (int kw = 0; kw < 3; ++kw) {
      const float *w = a.wt + (kh * 3 + kw) * 32;
      we[kw] = _mm512_loadu_ps(w);
      wo[kw] = _mm512_loadu_ps(w + 16);
    }
#pragma GCC unroll 64
    for (int t = 0; t < cols; ++t) {
      const int64_t iw = iw0 + t;
      if (Check && (iw < 0 || iw >= a.w))
        continue;
      const __m512i x = _mm512_maskz_loadu_epi16(a.mask, row + iw * a.c);
      const __m512 xe = _mm512_castsi512_ps(_mm512_slli_epi32(x, 16));
      const __m512 xo = _mm512_castsi512_ps(
          _mm512_and_si512(x, _mm512_set1_epi32(int32_t(0xFFFF0000u))));
      // Output j reads column t at kw = t - j * S.
#pragma GCC unroll 3
      for (int kw = 0; kw < 3; ++kw) {
        if (t >= kw && (t - kw) % S == 0 && (t - kw) / S < WB) {
          const int j = (t - kw) / S;
          even[j] = _mm512_fmadd_ps(xe, we[kw], even[j]);
          odd[j] = _mm512_fmadd_ps(xo, wo[kw], odd[j]);
        }
      }
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < WB; ++j) {
    __m512 e = even[j], o = odd[j];
    if (a.clamp) {
      e = _mm512_min_ps(_mm512_max_ps(e, a.lo), a.hi);
      o = _mm512_min_ps(_mm512_max_ps(o, a.lo), a.hi);
    }
    // [even 0..15, odd 0..15] rounded to bf16, then interleaved.
    __m512i packed = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(o, e));
    if (a.clamp16)
      packed = _mm512_min_epi16(_mm512_max_epi16(packed, a.lo16), a.hi16);
    _mm512_mask_storeu_epi16(out + j * a.c, a.mask,
                             _mm512_permutexvar_epi16(a.interleave, packed));
  }
}

// One output row: per block of 32 channels, runs of WB outputs (2 WB
// accumulators and 6 weight vectors stay in registers; 7, which divides
// MobileNet's widths 112 to 7, ran fastest of 4 to 8); runs reaching past
// the source's left or right edge read zeros there, and the outputs left
// after the whole runs make one shorter run.
template <int S>
GOPT_DW_TARGET void runRow(RowArgs a, const float *weights, const float *bias,
                           int64_t ow, int64_t padLeft, uint16_t *dstRow) {
  constexpr int WB = 7;
  const uint16_t *rows[3] = {a.rows[0], a.rows[1], a.rows[2]};
  for (int64_t c0 = 0, block = 0; c0 < a.c; c0 += 32, ++block) {
    const int64_t lanes = std::min<int64_t>(32, a.c - c0);
    a.mask =
        static_cast<__mmask32>(lanes == 32 ? 0xFFFFFFFFu : (1u << lanes) - 1);
    a.wt = weights + block * 9 * 32;
    a.biasEven = _mm512_loadu_ps(bias + block * 32);
    a.biasOdd = _mm512_loadu_ps(bias + block * 32 + 16);
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
    // The last ow % WB outputs as one shorter run.
    const int64_t iw0 = o * S - padLeft;
    switch (ow - o) {
    case 6:
      runBlock<S, 6, true>(a, iw0, out + o * a.c);
      break;
    case 5:
      runBlock<S, 5, true>(a, iw0, out + o * a.c);
      break;
    case 4:
      runBlock<S, 4, true>(a, iw0, out + o * a.c);
      break;
    case 3:
      runBlock<S, 3, true>(a, iw0, out + o * a.c);
      break;
    case 2:
      runBlock<S, 2, true>(a, iw0, out + o * a.c);
      break;
    case 1:
      runBlock<S, 1, true>(a, iw0, out + o * a.c);
      break;
    default:
      break;
    }
  }
}

// Clamps on the rounded bf16 bits where bf16ClampBounds allows;
// GOPT_DEPTHWISE_BF16_CLAMP=0 clamps in f32.
bool bf16Clamp(float lo, float hi, uint16_t &lo16, uint16_t &hi16) {
  static const bool on = envSwitchOn("GOPT_DEPTHWISE_BF16_CLAMP");
  return on && bf16ClampBounds(lo, hi, lo16, hi16);
}

// The rows of every image, split among `threads`.
GOPT_DW_TARGET void runAll(const DepthwiseGeometry &g, const float *weights,
                           const float *bias, bool clamp, float lo, float hi,
                           int threads, const uint16_t *src, uint16_t *dst) {
  const int64_t rows = g.n * g.oh;
  const size_t srcRow = static_cast<size_t>(g.w * g.c);
  const size_t dstRow = static_cast<size_t>(g.ow * g.c);
  RowArgs base{};
  base.w = g.w;
  base.c = g.c;
  base.clamp = clamp;
  base.lo = _mm512_set1_ps(lo);
  base.hi = _mm512_set1_ps(hi);
  uint16_t lo16 = 0, hi16 = 0;
  base.clamp16 = clamp && bf16Clamp(lo, hi, lo16, hi16);
  if (base.clamp16)
    base.clamp = false;
  base.lo16 = _mm512_set1_epi16(static_cast<int16_t>(lo16));
  base.hi16 = _mm512_set1_epi16(static_cast<int16_t>(hi16));
  alignas(64) uint16_t order[32];
  for (int i = 0; i < 32; ++i)
    order[i] = static_cast<uint16_t>(i % 2 ? 16 + i / 2 : i / 2);
  base.interleave = _mm512_load_si512(order);
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
  runAll(g_, w_.data(), b_.data(), clamp_, lo_, hi_, threads_, src, dst);
#endif
}

//===----------------------------------------------------------------------===//
// f32: per output row and block of 16 channels, a run of WB outputs is
// accumulated in registers, each source pixel of the k source rows loaded
// once and multiplied into every output of the run whose window holds it.
// The epilogue (bias, clamp, hardswish or SiLU) is applied in registers
// before the one store, where oneDNN's brdgmm_dw at batch 1 ran 10-40
// GFLOP/s on MobileNet's layers.
//===----------------------------------------------------------------------===//

bool siluDirectEnabled() {
  static const bool on = envSwitchOn("GOPT_SILU_DIRECT");
  return on;
}

bool siluExp2Enabled() {
  static const bool on = envSwitchOn("GOPT_SILU_EXP2");
  return on;
}

bool depthwiseF32RowPairs() {
  static const bool on = envSwitchOn("GOPT_DEPTHWISE_F32_ROW_PAIRS");
  return on;
}

bool depthwiseF32Enabled() {
#ifdef GOPT_DW_X86
  static const bool enabled =
      envSwitchOn("GOPT_DEPTHWISE_F32") && __builtin_cpu_supports("avx512f");
  return enabled;
#else
  return false;
#endif
}

std::unique_ptr<DepthwiseF32>
DepthwiseF32::create(const DepthwiseGeometry &g, int k,
                     const std::vector<float> &weights,
                     const std::vector<float> &bias, bool clamp, float lo,
                     float hi, DepthwiseTail tail, int threads) {
  if (!depthwiseF32Enabled() || (k != 3 && k != 5) ||
      (g.stride != 1 && g.stride != 2) || g.n < 1 || g.c < 1 || g.h < 1 ||
      g.w < 1 || g.oh < 1 || g.ow < 1 ||
      static_cast<int64_t>(weights.size()) != k * k * g.c ||
      (!bias.empty() && static_cast<int64_t>(bias.size()) != g.c))
    return nullptr;
  auto kernel = std::unique_ptr<DepthwiseF32>(new DepthwiseF32());
  kernel->g_ = g;
  kernel->k_ = k;
  const int64_t blocks = (g.c + 15) / 16, taps = k * k;
  kernel->w_.assign(blocks * taps * 16, 0.0f);
  kernel->b_.assign(blocks * 16, 0.0f);
  for (int64_t c = 0; c < g.c; ++c) {
    for (int64_t t = 0; t < taps; ++t)
      kernel->w_[((c / 16) * taps + t) * 16 + c % 16] = weights[t * g.c + c];
    if (!bias.empty())
      kernel->b_[c] = bias[c];
  }
  kernel->clamp_ = clamp;
  kernel->lo_ = lo;
  kernel->hi_ = hi;
  kernel->tail_ = tail;
  kernel->threads_ = std::max(1, threads);
  return kernel;
}

#ifdef GOPT_DW_X86
namespace {

#define GOPT_DW_F32_TARGET __attribute__((target("avx512f")))

struct F32RowArgs {
  // The source rows of kh = 0..k-1 (of the first output row where two
  // rows run together: k + stride rows); null: padding.
  const float *rows[7];
  int64_t w, c;    // source width, channels (pixel stride)
  int64_t outRow;  // floats from one output row to the next
  const float *wt; // the block's weights [k * k][16]
  __m512 bias, lo, hi;
  bool clamp;
  DepthwiseTail tail;
  bool directSigmoid; // SiLU as v / (1 + exp(-v)) (see siluDirect)
  bool exp2;          // ... with exp(-v) in base 2 (see siluExp2)
  __mmask16 mask;     // the block's channels
};

// exp(x) for x <= 0 (SiLU's exp(-|x|)): Cephes' expf polynomial on
// x - n ln 2, scaled by 2^n; within 2 ulp.
GOPT_DW_F32_TARGET inline __m512 expNonPositive(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.3f));
  const __m512 n = _mm512_roundscale_ps(
      _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
  p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// v * sigmoid(v) = v / (1 + exp(-v)), exp(-v) as expNonPositive computes
// it, with -v clamped to [-87.3, 87] (no overflow: at v = -87 the result
// is below 1e-35 and rounds to what it should be within 1e-30). Five
// fewer operations than the |v| form below (no abs, negate, compare or
// masked multiply; the negation folds into the reduction), ~16% faster
// (architecture.md, "f32 depthwise: two output rows per pass").
GOPT_DW_F32_TARGET inline __m512 siluDirect(__m512 v) {
  const __m512 c = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-87.0f)),
                                 _mm512_set1_ps(87.3f));
  // -c = n ln 2 + r.
  const __m512 n = _mm512_roundscale_ps(
      _mm512_mul_ps(c, _mm512_set1_ps(-1.44269504088896341f)),
      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmsub_ps(n, _mm512_set1_ps(0.693359375f), c);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
  p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
  const __m512 d = _mm512_add_ps(_mm512_scalef_ps(p, n), _mm512_set1_ps(1.0f));
  return _mm512_div_ps(v, d);
}

// siluExp2: SiluAvx512.h (shared with Conv1x1F32's epilogue).

GOPT_DW_F32_TARGET inline __m512 epilogue(const F32RowArgs &a, __m512 v) {
  if (a.clamp)
    v = _mm512_min_ps(_mm512_max_ps(v, a.lo), a.hi);
  if (a.tail == DepthwiseTail::kHardSwish) {
    __m512 gate =
        _mm512_fmadd_ps(v, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
    gate = _mm512_min_ps(_mm512_max_ps(gate, _mm512_setzero_ps()),
                         _mm512_set1_ps(1.0f));
    v = _mm512_mul_ps(v, gate);
  } else if (a.tail == DepthwiseTail::kSwish && a.directSigmoid) {
    v = a.exp2 ? siluExp2(v) : siluDirect(v);
  } else if (a.tail == DepthwiseTail::kSwish) {
    // sigmoid(v) = 1 / (1 + e) for v >= 0 and e / (1 + e) below, with
    // e = exp(-|v|) <= 1: no overflow either way.
    const __m512 absV = _mm512_abs_ps(v);
    const __m512 e = expNonPositive(_mm512_sub_ps(_mm512_setzero_ps(), absV));
    const __m512 inv = _mm512_div_ps(_mm512_set1_ps(1.0f),
                                     _mm512_add_ps(_mm512_set1_ps(1.0f), e));
    const __mmask16 negative =
        _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
    const __m512 sig = _mm512_mask_mul_ps(inv, negative, inv, e);
    v = _mm512_mul_ps(v, sig);
  }
  return v;
}

// Outputs [ow0, ow0 + WB) of R (1 or 2) consecutive rows and one block of
// 16 channels, the first source column iw0 = ow0 * S - padLeft; `Check`:
// some columns fall outside the source (read as zeros). Each source pixel
// is loaded once and multiplied into every output of the run whose window
// holds it: with two rows, the source rows both windows share are read
// once for both (stride 1: 4 rows for 2 output rows instead of 6).
template <int K, int S, int WB, int R, bool Check>
GOPT_DW_F32_TARGET inline void runBlockF32(const F32RowArgs &a, int64_t iw0,
                                           float *out) {
  __m512 acc[R][WB];
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int j = 0; j < WB; ++j)
      acc[r][j] = a.bias;
  constexpr int cols = (WB - 1) * S + K;
  constexpr int sourceRows = (R - 1) * S + K;
#pragma GCC unroll 7
  for (int ir = 0; ir < sourceRows; ++ir) {
    const float *row = a.rows[ir];
    if (!row)
      continue;
    // Output row r reads this source row at kh = ir - r * S.
    __m512 wk[R][K];
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) {
      const int kh = ir - r * S;
      if (kh >= 0 && kh < K)
#pragma GCC unroll 5
        for (int kw = 0; kw < K; ++kw)
          wk[r][kw] = _mm512_loadu_ps(a.wt + (kh * K + kw) * 16);
    }
#pragma GCC unroll 64
    for (int t = 0; t < cols; ++t) {
      const int64_t iw = iw0 + t;
      if (Check && (iw < 0 || iw >= a.w))
        continue;
      const __m512 x = _mm512_maskz_loadu_ps(a.mask, row + iw * a.c);
      // Output j reads column t at kw = t - j * S.
#pragma GCC unroll 2
      for (int r = 0; r < R; ++r) {
        const int kh = ir - r * S;
        if (kh < 0 || kh >= K)
          continue;
#pragma GCC unroll 5
        for (int kw = 0; kw < K; ++kw) {
          if (t >= kw && (t - kw) % S == 0 && (t - kw) / S < WB) {
            const int j = (t - kw) / S;
            acc[r][j] = _mm512_fmadd_ps(x, wk[r][kw], acc[r][j]);
          }
        }
      }
    }
  }
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int j = 0; j < WB; ++j)
      _mm512_mask_storeu_ps(out + r * a.outRow + j * a.c, a.mask,
                            epilogue(a, acc[r][j]));
}

// Outputs [o, o + n) (n <= 7) of channel block `block` of R rows.
template <int K, int S, int R>
GOPT_DW_F32_TARGET inline void
runSpanF32(F32RowArgs &a, const float *const *rows, const float *weights,
           const float *bias, int64_t block, int64_t o, int64_t n,
           int64_t padLeft, float *dstRow) {
  constexpr int WB = 7;
  const int64_t c0 = block * 16;
  const int64_t lanes = std::min<int64_t>(16, a.c - c0);
  a.mask = static_cast<__mmask16>(lanes == 16 ? 0xFFFFu : (1u << lanes) - 1);
  a.wt = weights + block * K * K * 16;
  a.bias = _mm512_loadu_ps(bias + c0);
  for (int ir = 0; ir < (R - 1) * S + K; ++ir)
    a.rows[ir] = rows[ir] ? rows[ir] + c0 : nullptr;
  float *out = dstRow + c0 + o * a.c;
  const int64_t iw0 = o * S - padLeft;
  switch (n) {
  case WB:
    if (iw0 >= 0 && iw0 + (WB - 1) * S + K - 1 < a.w)
      runBlockF32<K, S, WB, R, false>(a, iw0, out);
    else
      runBlockF32<K, S, WB, R, true>(a, iw0, out);
    break;
  case 6:
    runBlockF32<K, S, 6, R, true>(a, iw0, out);
    break;
  case 5:
    runBlockF32<K, S, 5, R, true>(a, iw0, out);
    break;
  case 4:
    runBlockF32<K, S, 4, R, true>(a, iw0, out);
    break;
  case 3:
    runBlockF32<K, S, 3, R, true>(a, iw0, out);
    break;
  case 2:
    runBlockF32<K, S, 2, R, true>(a, iw0, out);
    break;
  case 1:
    runBlockF32<K, S, 1, R, true>(a, iw0, out);
    break;
  default:
    break;
  }
}

// Channel blocks [b0, b1) of one output row in runs of 7 outputs
// (MobileNet's widths 112 to 7 are multiples of 7), the rest as one
// shorter run. Pixel-major: each run sweeps its channel blocks, so the
// source pixels it reads are read whole and in order (contiguous lines
// that stay in L1 for the next run's overlap), where sweeping a row per
// block strides across lines by the pixel size (measured: block-major ran
// up to 1.5x slower at two threads on the 112x112 layers).
// R = 2 computes two consecutive output rows together.
template <int K, int S, int R>
GOPT_DW_F32_TARGET void runRowF32(F32RowArgs a, const float *weights,
                                  const float *bias, int64_t b0, int64_t b1,
                                  int64_t ow, int64_t padLeft, float *dstRow) {
  const float *rows[7];
  for (int ir = 0; ir < (R - 1) * S + K; ++ir)
    rows[ir] = a.rows[ir];
  for (int64_t o = 0; o < ow; o += 7)
    for (int64_t block = b0; block < b1; ++block)
      runSpanF32<K, S, R>(a, rows, weights, bias, block, o,
                          std::min<int64_t>(7, ow - o), padLeft, dstRow);
}

using RowFn = void (*)(F32RowArgs, const float *, const float *, int64_t,
                       int64_t, int64_t, int64_t, float *);

// Items [lo, hi) of `groups` channel groups per output row.
GOPT_DW_F32_TARGET void runItemsF32(const DepthwiseGeometry &g, int k,
                                    const float *weights, const float *bias,
                                    bool clamp, float lo, float hi,
                                    DepthwiseTail tail, int64_t groups,
                                    int64_t first, int64_t last,
                                    const float *src, float *dst) {
  const int64_t blocks = (g.c + 15) / 16;
  const size_t srcRow = static_cast<size_t>(g.w * g.c);
  const size_t dstRow = static_cast<size_t>(g.ow * g.c);
  const RowFn one =
      k == 3 ? (g.stride == 1 ? &runRowF32<3, 1, 1> : &runRowF32<3, 2, 1>)
             : (g.stride == 1 ? &runRowF32<5, 1, 1> : &runRowF32<5, 2, 1>);
  const RowFn two =
      k == 3 ? (g.stride == 1 ? &runRowF32<3, 1, 2> : &runRowF32<3, 2, 2>)
             : (g.stride == 1 ? &runRowF32<5, 1, 2> : &runRowF32<5, 2, 2>);
  // Rows in pairs where a pair is this range's, in one image and of the
  // whole channel range (groups == 1), and where the two rows share most
  // of their source rows: at stride 1 (k - 1 of k) and 5x5 stride 2 (3 of
  // 5); 3x3 stride 2 shares one of three and measured no gain.
  const bool pairs =
      groups == 1 && (g.stride == 1 || k == 5) && depthwiseF32RowPairs();
  F32RowArgs base{};
  base.w = g.w;
  base.c = g.c;
  base.clamp = clamp;
  base.lo = _mm512_set1_ps(lo);
  base.hi = _mm512_set1_ps(hi);
  base.tail = tail;
  base.directSigmoid = siluDirectEnabled();
  base.exp2 = siluExp2Enabled();
  base.outRow = static_cast<int64_t>(dstRow);
  for (int64_t i = first; i < last;) {
    const int64_t r = i / groups, group = i % groups;
    const int64_t b0 = blocks * group / groups,
                  b1 = blocks * (group + 1) / groups;
    const int64_t n = r / g.oh, y = r % g.oh;
    const int rowsHere = pairs && i + 1 < last && y + 1 < g.oh ? 2 : 1;
    F32RowArgs a = base;
    for (int ir = 0; ir < (rowsHere - 1) * g.stride + k; ++ir) {
      const int64_t ih = y * g.stride - g.padTop + ir;
      a.rows[ir] =
          ih >= 0 && ih < g.h ? src + (n * g.h + ih) * srcRow : nullptr;
    }
    (rowsHere == 2 ? two : one)(a, weights, bias, b0, b1, g.ow, g.padLeft,
                                dst + r * dstRow);
    i += rowsHere;
  }
}

} // namespace
#endif

void DepthwiseF32::run(const float *src, float *dst) const {
#ifdef GOPT_DW_X86
  const DepthwiseGeometry &g = g_;
  const int64_t rows = g.n * g.oh, blocks = (g.c + 15) / 16;
  // Rows x channel groups, split evenly among the threads: at batch 1 the
  // 7x7 layers have 7 rows for 2 threads (4 against 3 by rows alone), so
  // rows are split into channel groups where they are few.
  int64_t groups = 1;
  if (threads_ > 1 && rows < 8 * threads_)
    groups = std::min<int64_t>(blocks, (8 * threads_ + rows - 1) / rows);
  const int64_t items = rows * groups;
  const int threads = static_cast<int>(std::min<int64_t>(threads_, items));
  if (threads <= 1) {
    runItemsF32(g, k_, w_.data(), b_.data(), clamp_, lo_, hi_, tail_, groups, 0,
                items, src, dst);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    runItemsF32(g, k_, w_.data(), b_.data(), clamp_, lo_, hi_, tail_, groups,
                items * t / nt, items * (t + 1) / nt, src, dst);
  }
#else
  (void)src;
  (void)dst;
#endif
}

bool siluInPlaceEnabled() {
#ifdef GOPT_DW_X86
  static const bool enabled =
      envSwitchOn("GOPT_CONV_SILU_PASS") && __builtin_cpu_supports("avx512f");
  return enabled;
#else
  return false;
#endif
}

bool hardSwishInPlaceEnabled() {
#ifdef GOPT_DW_X86
  static const bool enabled = envSwitchOn("GOPT_CONV_HARDSWISH_PASS") &&
                              __builtin_cpu_supports("avx512f");
  return enabled;
#else
  return false;
#endif
}

#ifdef GOPT_DW_X86
namespace {
GOPT_DW_F32_TARGET void tailRange(float *x, int64_t n, DepthwiseTail tail) {
  F32RowArgs a{};
  a.tail = tail;
  a.directSigmoid = siluDirectEnabled();
  a.exp2 = siluExp2Enabled();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(x + i, epilogue(a, _mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(x + i, m,
                          epilogue(a, _mm512_maskz_loadu_ps(m, x + i)));
  }
}
} // namespace
#endif

void tailInPlace(float *x, int64_t n, DepthwiseTail tail, int threads) {
#ifdef GOPT_DW_X86
  // Below ~64K elements a thread, a fork costs more than it saves.
  const int64_t parts =
      std::max<int64_t>(1, std::min<int64_t>(threads, n / 65536));
  if (parts <= 1) {
    tailRange(x, n, tail);
    return;
  }
#pragma omp parallel num_threads(static_cast <int>(parts))
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    // Whole vectors per thread: cut at multiples of 16.
    const int64_t lo = (n * t / nt) & ~int64_t(15);
    const int64_t hi = t + 1 == nt ? n : (n * (t + 1) / nt) & ~int64_t(15);
    tailRange(x + lo, hi - lo, tail);
  }
#else
  (void)x;
  (void)n;
  (void)tail;
  (void)threads;
#endif
}

void siluInPlace(float *x, int64_t n, int threads) {
  tailInPlace(x, n, DepthwiseTail::kSwish, threads);
}

} // namespace gopt::runtime::cpu
