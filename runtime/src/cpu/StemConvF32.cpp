//===- StemConvF32.cpp - gopt's AVX-512 f32 stem convolution --------------===//
//
// See StemConvF32.h. Work items are (image, output row), split evenly over
// the threads. An item copies the cin x kh source rows its window reads
// into a padded buffer (zeros where the window leaves the image), then
// runs tiles of T output pixels x NV 16-channel vectors (T x NV <= 24
// accumulators): per tap, NV filter vectors and T broadcast source values.
//
//===----------------------------------------------------------------------===//
#include "StemConvF32.h"

#include "Avx512Lanes.h"
#include "EnvSwitch.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace gopt::runtime::cpu {

bool stemConvF32Enabled() { return envSwitchOn("GOPT_STEM_CONV_F32"); }

#ifdef GOPT_HAVE_AVX512_LANES

namespace {

struct StemTileArgs {
  const float *buf; // [cin * kh][wp]: the item's padded source rows
  int64_t wp;       // floats per padded row
  int64_t rows;     // cin * kh
  int kw;
  int64_t stride; // columns between output pixels in a padded row
  const float *w; // [rows * kw][cout]
  int64_t cout;
  const float *bias;
  float lo, hi;
  bool hardswish;
  float *y;        // the tile's first pixel, first channel
  int64_t yPixel;  // floats between the result's pixels
  int64_t yVector; // floats between 16-channel vectors of a pixel
};

// KW, SW: the window's width and the stride as constants (the inner loop
// unrolled, the T source addresses immediate offsets), or 0: a's.
template <int NV, int T, int KW, int SW>
GOPT_AVX512BW void stemTile(const StemTileArgs &a, int64_t x0) {
  const int kw = KW ? KW : a.kw;
  const int64_t stride = SW ? SW : a.stride;
  __m512 acc[T][NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const __m512 b = _mm512_loadu_ps(a.bias + 16 * v);
#pragma GCC unroll 24
    for (int p = 0; p < T; ++p)
      acc[p][v] = b;
  }
  const float *w = a.w;
  for (int64_t r = 0; r < a.rows; ++r) {
    const float *row = a.buf + r * a.wp + x0;
#pragma GCC unroll 7
    for (int kx = 0; kx < kw; ++kx) {
      __m512 wv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        wv[v] = _mm512_loadu_ps(w + 16 * v);
      w += a.cout;
#pragma GCC unroll 24
      for (int p = 0; p < T; ++p) {
        const __m512 x = _mm512_set1_ps(row[p * stride + kx]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
          acc[p][v] = _mm512_fmadd_ps(x, wv[v], acc[p][v]);
      }
      // Stride 2 makes tap kx + 2's source values tap kx's, shifted by a
      // pixel: GCC kept the broadcasts of all taps of a row live across
      // the unrolled taps and spilled them and the accumulators to the
      // stack (MobileNetV2's stem at 0.18 ms; 0.115 with this). The
      // compiler barrier makes each tap load its own broadcasts, which
      // fold into the FMAs as embedded-broadcast operands.
      asm volatile("" ::: "memory");
    }
  }
  const __m512 lo = _mm512_set1_ps(a.lo), hi = _mm512_set1_ps(a.hi);
  const __m512 sixth = _mm512_set1_ps(1.0f / 6.0f), half = _mm512_set1_ps(0.5f),
               one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps();
#pragma GCC unroll 24
  for (int p = 0; p < T; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      // Zero-masked forms: GCC 12 warns of max/min's undefined
      // pass-through lanes (none with an all-ones mask).
      __m512 x = _mm512_maskz_min_ps(
          0xFFFF, _mm512_maskz_max_ps(0xFFFF, acc[p][v], lo), hi);
      if (a.hardswish) {
        __m512 g = _mm512_fmadd_ps(x, sixth, half);
        g = _mm512_maskz_min_ps(0xFFFF, _mm512_maskz_max_ps(0xFFFF, g, zero),
                                one);
        x = _mm512_mul_ps(x, g);
      }
      _mm512_storeu_ps(a.y + p * a.yPixel + v * a.yVector, x);
    }
}

using StemTileFn = void (*)(const StemTileArgs &, int64_t);

// The most pixels per tile for NV vectors (24 accumulators).
constexpr int maxTile(int nv) { return 24 / nv; }

template <int NV, int KW, int SW, int... Ts>
constexpr std::array<StemTileFn, sizeof...(Ts)>
stemTable(std::integer_sequence<int, Ts...>) {
  return {&stemTile<NV, Ts + 1, KW, SW>...};
}

template <int KW, int SW> StemTileFn stemTileFor(int nv, int pixels) {
  static constexpr auto t1 =
      stemTable<1, KW, SW>(std::make_integer_sequence<int, maxTile(1)>());
  static constexpr auto t2 =
      stemTable<2, KW, SW>(std::make_integer_sequence<int, maxTile(2)>());
  static constexpr auto t3 =
      stemTable<3, KW, SW>(std::make_integer_sequence<int, maxTile(3)>());
  static constexpr auto t4 =
      stemTable<4, KW, SW>(std::make_integer_sequence<int, maxTile(4)>());
  switch (nv) {
  case 1:
    return t1[pixels - 1];
  case 2:
    return t2[pixels - 1];
  case 3:
    return t3[pixels - 1];
  default:
    return t4[pixels - 1];
  }
}

// The common stems (3x3 stride 2: MobileNets, EfficientNets) with
// constant offsets; others read the window and stride at run time.
StemTileFn stemTileFor(int nv, int pixels, int64_t kw, int64_t stride) {
  if (kw == 3 && stride == 2)
    return stemTileFor<3, 2>(nv, pixels);
  return stemTileFor<0, 0>(nv, pixels);
}

} // namespace

std::unique_ptr<StemConvF32> StemConvF32::create(const StemConvF32Shape &s,
                                                 const float *filter,
                                                 const float *bias) {
  if (!avx512bwSupported() || !filter || (s.bias && !bias) || s.n <= 0 ||
      s.cin < 1 || s.cin > 4 || s.cout < 16 || s.cout > 64 ||
      s.cout % 16 != 0 || s.kh < 1 || s.kh > 7 || s.kw < 1 || s.kw > 7 ||
      s.strideH < 1 || s.strideH > 4 || s.strideW < 1 || s.strideW > 4 ||
      s.h <= 0 || s.w <= 0 || s.oh <= 0 || s.ow <= 0 || s.padTop < 0 ||
      s.padLeft < 0 || s.padTop >= s.kh || s.padLeft >= s.kw || !(s.lo <= s.hi))
    return nullptr;
  auto k = std::unique_ptr<StemConvF32>(new StemConvF32());
  k->s_ = s;
  const int64_t taps = s.cin * s.kh * s.kw;
  k->w_.resize(taps * s.cout);
  for (int64_t c = 0; c < s.cin; ++c)
    for (int64_t ky = 0; ky < s.kh; ++ky)
      for (int64_t kx = 0; kx < s.kw; ++kx)
        for (int64_t o = 0; o < s.cout; ++o) {
          const int64_t tap = (c * s.kh + ky) * s.kw + kx;
          k->w_[tap * s.cout + o] =
              s.oihw ? filter[((o * s.cin + c) * s.kh + ky) * s.kw + kx]
                     : filter[((ky * s.kw + kx) * s.cin + c) * s.cout + o];
        }
  k->bias_.assign(s.cout, 0.0f);
  if (s.bias)
    std::copy(bias, bias + s.cout, k->bias_.begin());
  return k;
}

GOPT_AVX512BW void StemConvF32::run(const float *src, float *dst) const {
  const StemConvF32Shape &s = s_;
  const int nv = static_cast<int>(s.cout / 16);
  const int most = maxTile(nv);
  const int64_t items = s.n * s.oh;
  // A padded row: the columns the row's windows read, from -padLeft.
  const int64_t wp = (s.ow - 1) * s.strideW + s.kw;
  const int64_t pixels = s.oh * s.ow;
  const int threads =
      omp_in_parallel()
          ? 1
          : static_cast<int>(std::min<int64_t>(omp_get_max_threads(), items));
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int nt = omp_get_num_threads(), id = omp_get_thread_num();
    const int64_t begin = items * id / nt, end = items * (id + 1) / nt;
    thread_local std::vector<float> scratch;
    scratch.resize(s.cin * s.kh * wp);
    float *buf = scratch.data();
    // Columns of a padded row inside the image: [x0, x1).
    const int64_t x0 = s.padLeft, x1 = std::min(wp, s.padLeft + s.w);
    StemTileArgs a;
    a.buf = buf;
    a.wp = wp;
    a.rows = s.cin * s.kh;
    a.kw = static_cast<int>(s.kw);
    a.stride = s.strideW;
    a.w = w_.data();
    a.cout = s.cout;
    a.bias = bias_.data();
    a.lo = s.lo;
    a.hi = s.hi;
    a.hardswish = s.hardswish;
    a.yPixel = s.blocked ? 16 : s.cout;
    a.yVector = s.blocked ? pixels * 16 : 16;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t n = item / s.oh, oy = item % s.oh;
      for (int64_t c = 0; c < s.cin; ++c)
        for (int64_t ky = 0; ky < s.kh; ++ky) {
          float *row = buf + (c * s.kh + ky) * wp;
          const int64_t iy = oy * s.strideH - s.padTop + ky;
          if (iy < 0 || iy >= s.h || x1 <= x0) {
            std::fill(row, row + wp, 0.0f);
            continue;
          }
          std::fill(row, row + x0, 0.0f);
          std::memcpy(row + x0, src + ((n * s.cin + c) * s.h + iy) * s.w,
                      (x1 - x0) * sizeof(float));
          std::fill(row + x1, row + wp, 0.0f);
        }
      float *y = dst + n * s.cout * pixels + oy * s.ow * a.yPixel;
      // Tiles of as even a size as `most` allows (112 columns of 32
      // channels: 4 x 11 + 6 x 12, not 9 x 12 + 4).
      const int64_t tiles = (s.ow + most - 1) / most;
      int64_t ox = 0;
      for (int64_t t = 0; t < tiles; ++t) {
        const int count =
            static_cast<int>(s.ow / tiles + (t < s.ow % tiles ? 1 : 0));
        a.y = y + ox * a.yPixel;
        stemTileFor(nv, count, s.kw, s.strideW)(a, ox * s.strideW);
        ox += count;
      }
    }
  }
}

#else // !GOPT_HAVE_AVX512_LANES

std::unique_ptr<StemConvF32> StemConvF32::create(const StemConvF32Shape &,
                                                 const float *, const float *) {
  return nullptr;
}
void StemConvF32::run(const float *, float *) const {}

#endif

} // namespace gopt::runtime::cpu
