//===- WinogradConv.cpp - gopt's own Winograd convolutions ----------------===//
//
// See WinogradConv.h. The wide kernel, per image: the input transform V = B^T d
// B of every 4x4 input tile (stride 2) is split over the threads; then each
// thread takes whole blocks of 64 output channels, runs that block's 16 GEMMs
// (tiles x cin times cin x 64, the transformed filter read once from L3 and
// then from L2 for every group of up to 6 tiles) and its output transform
// Y = A^T M A with bias, residual and relu. At 7x7 and 14x14 the spatial
// tiles are too few to split, the channel blocks are not (4 or 8 per layer).
//
//===----------------------------------------------------------------------===//
#include "WinogradConv.h"

#include "Avx512Lanes.h"
#include "BlockClaims.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gopt::runtime::cpu {

namespace {
// Whether a stride-1 kernel's own switch `name` is not 0, nor
// GOPT_CONV_WINOGRAD 0 or 4x3 (oneDNN's 4x3 kernel only).
bool stride1WinogradSwitchOn(const char *name) {
  const char *all = std::getenv("GOPT_CONV_WINOGRAD");
  if (all && (std::strcmp(all, "0") == 0 || std::strcmp(all, "4x3") == 0))
    return false;
  const char *own = std::getenv(name);
  return !own || std::strcmp(own, "0") != 0;
}
} // namespace

bool winogradWideEnabled() {
  return stride1WinogradSwitchOn("GOPT_CONV_WINOGRAD_WIDE");
}

bool winogradWideFewTilesPays(int64_t cin, int64_t cout, int64_t h, int64_t w,
                              int threads, double streamGBps) {
  if (threads < 1 || streamGBps <= 0)
    return false;
  // An AVX-512 core's f32 rate on a matmul chain (roofline.py: 165 GFLOP/s
  // a core on the Xeon, 189 on the EPYC); the direct kernel runs near it.
  constexpr double kFlopsPerThread = 175e9;
  const double directSeconds =
      2.0 * 9 * cin * cout * h * w / (kFlopsPerThread * threads);
  const double filterSeconds =
      16.0 * cin * cout * sizeof(float) / (streamGBps * 1e9);
  // A margin for the transforms and the filter read not overlapping the
  // multiplies fully: ResNet-18's 7x7 layers measured 0.86-0.96 -> 0.72-0.78
  // ms on the EPYC (filter read 0.26 of the direct kernel's 0.66 ms of
  // arithmetic) and slower in the network on the Xeon (0.73 of 0.70).
  return filterSeconds < 0.8 * directSeconds;
}

bool winogradTiledEnabled() {
  return stride1WinogradSwitchOn("GOPT_CONV_WINOGRAD_TILED");
}

int winogradTiledTile(const WinogradTiledShape &s, int threads) {
  const char *setting = std::getenv("GOPT_CONV_WINOGRAD_TILED");
  if (setting && std::strcmp(setting, "2x2") == 0)
    return 2;
  auto tiles = [&](int64_t size) {
    return s.n * ((s.h + size - 1) / size) * ((s.w + size - 1) / size);
  };
  const bool fewerProducts = 36 * tiles(4) < 0.75 * 16 * tiles(2);
  return fewerProducts && tiles(4) >= 16 * std::max(1, threads) ? 4 : 2;
}

bool winogradStride2Enabled() {
  const char *all = std::getenv("GOPT_CONV_WINOGRAD");
  if (all && std::strcmp(all, "0") == 0)
    return false;
  const char *setting = std::getenv("GOPT_CONV_WINOGRAD_STRIDE2");
  return !setting || std::strcmp(setting, "0") != 0;
}

#ifdef GOPT_HAVE_AVX512_LANES

namespace {

constexpr int64_t kBlock = 64; // output channels per block: 4 zmm
constexpr int kMaxRows = 6;    // tiles per GEMM micro-kernel: 24 accumulators

constexpr int64_t kDepth = 128; // input channels per pass: 32 KiB of filter

// m[r][0..63] (+)= sum_c v[r * ldv + c] * u[c][0..63] for r < R and c <
// depth (added to m's contents when `accumulate`). Meanwhile it prefetches
// `pfLines` cache lines from `pf` into L2 (at most 2 per c): the next
// filter slice arrives while this one computes instead of stalling the
// loads of its first pass.
template <int R>
GOPT_AVX512BW void gemmRows(const float *v, int64_t ldv, const float *u,
                            int64_t depth, float *m, bool accumulate,
                            const char *pf, int64_t pfLines) {
  __m512 acc[R][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j)
      acc[r][j] = accumulate ? _mm512_loadu_ps(m + r * kBlock + j * 16)
                             : _mm512_setzero_ps();
  for (int64_t c = 0; c < depth; ++c) {
    if (2 * c < pfLines) {
      _mm_prefetch(pf + 2 * c * 64, _MM_HINT_T1);
      if (2 * c + 1 < pfLines)
        _mm_prefetch(pf + (2 * c + 1) * 64, _MM_HINT_T1);
    }
    const float *uc = u + c * kBlock;
    __m512 u0 = _mm512_loadu_ps(uc), u1 = _mm512_loadu_ps(uc + 16),
           u2 = _mm512_loadu_ps(uc + 32), u3 = _mm512_loadu_ps(uc + 48);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      __m512 b = _mm512_set1_ps(v[r * ldv + c]);
      acc[r][0] = _mm512_fmadd_ps(b, u0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(b, u1, acc[r][1]);
      acc[r][2] = _mm512_fmadd_ps(b, u2, acc[r][2]);
      acc[r][3] = _mm512_fmadd_ps(b, u3, acc[r][3]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j)
      _mm512_storeu_ps(m + r * kBlock + j * 16, acc[r][j]);
}

GOPT_AVX512BW void gemmAnyRows(int rows, const float *v, int64_t ldv,
                               const float *u, int64_t depth, float *m,
                               bool accumulate, const char *pf,
                               int64_t pfLines) {
  switch (rows) {
  case 1:
    return gemmRows<1>(v, ldv, u, depth, m, accumulate, pf, pfLines);
  case 2:
    return gemmRows<2>(v, ldv, u, depth, m, accumulate, pf, pfLines);
  case 3:
    return gemmRows<3>(v, ldv, u, depth, m, accumulate, pf, pfLines);
  case 4:
    return gemmRows<4>(v, ldv, u, depth, m, accumulate, pf, pfLines);
  case 5:
    return gemmRows<5>(v, ldv, u, depth, m, accumulate, pf, pfLines);
  default:
    return gemmRows<6>(v, ldv, u, depth, m, accumulate, pf, pfLines);
  }
}

// Where a tensor's pixels lie, NHWC or nChw16c: pixel (y, x) of image
// `img`, channels [c, c + 16) start at at(img, y, x, c).
struct PixelStrides {
  bool blocked;
  int64_t image, row, pixel, channelBlock; // channelBlock: per 16 channels
  PixelStrides(bool blocked, int64_t channels, int64_t h, int64_t w)
      : blocked(blocked), image(channels * h * w),
        row(blocked ? w * 16 : w * channels), pixel(blocked ? 16 : channels),
        channelBlock(blocked ? h * w * 16 : 16) {}
  // c: a multiple of 16 where blocked.
  int64_t at(int64_t img, int64_t y, int64_t x, int64_t c) const {
    return img * image + y * row + x * pixel +
           (blocked ? (c / 16) * channelBlock : c);
  }
};

// The rows [ylo, yhi) and columns [xlo, xhi) of a tile's 4x4 input patch
// (or 2x2 output) that lie inside the image.
struct TileBounds {
  int ylo, yhi, xlo, xhi;
  TileBounds(int64_t y0, int64_t x0, int size, int64_t h, int64_t w)
      : ylo(static_cast<int>(std::max<int64_t>(0, -y0))),
        yhi(static_cast<int>(std::min<int64_t>(size, h - y0))),
        xlo(static_cast<int>(std::max<int64_t>(0, -x0))),
        xhi(static_cast<int>(std::min<int64_t>(size, w - x0))) {}
  bool whole(int size) const {
    return ylo == 0 && xlo == 0 && yhi == size && xhi == size;
  }
};

// One output vector: the transform's `y` plus bias `add`, plus the
// residual already at `o` with `sum`, through relu with `relu`.
GOPT_AVX512BW inline void storeOutput(float *o, __m512 y, __m512 add, bool sum,
                                      bool relu) {
  __m512 value = _mm512_add_ps(y, add);
  if (sum)
    value = _mm512_add_ps(value, _mm512_loadu_ps(o));
  if (relu)
    value = _mm512_max_ps(value, _mm512_setzero_ps());
  _mm512_storeu_ps(o, value);
}

// V = B^T d B (F(2x2, 3x3)) for 16 channels of a 4x4 input patch whose
// top-left pixel is `offset` floats from `src` (outside the image where
// the bounds say: the zero padding), rows and pixels as strided.
template <bool kWhole>
GOPT_AVX512BW inline void
tiledInputTile(const float *src, int64_t offset, const PixelStrides &st,
               const TileBounds &in, float *v, int64_t planeStride) {
  __m512 d[4][4];
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      d[a][b] =
          kWhole || (a >= in.ylo && a < in.yhi && b >= in.xlo && b < in.xhi)
              ? _mm512_loadu_ps(src + (offset + a * st.row + b * st.pixel))
              : _mm512_setzero_ps();
  __m512 e[4][4];
  for (int b = 0; b < 4; ++b) {
    e[0][b] = _mm512_sub_ps(d[0][b], d[2][b]);
    e[1][b] = _mm512_add_ps(d[1][b], d[2][b]);
    e[2][b] = _mm512_sub_ps(d[2][b], d[1][b]);
    e[3][b] = _mm512_sub_ps(d[1][b], d[3][b]);
  }
  for (int a = 0; a < 4; ++a) {
    float *row = v + (a * 4) * planeStride;
    _mm512_storeu_ps(row, _mm512_sub_ps(e[a][0], e[a][2]));
    _mm512_storeu_ps(row + planeStride, _mm512_add_ps(e[a][1], e[a][2]));
    _mm512_storeu_ps(row + 2 * planeStride, _mm512_sub_ps(e[a][2], e[a][1]));
    _mm512_storeu_ps(row + 3 * planeStride, _mm512_sub_ps(e[a][1], e[a][3]));
  }
}

// Y = A^T M A for 16 output channels of one tile, then bias, residual and
// relu, into the tile's 2x2 pixels from `offset` inside the bounds. bias:
// the 16 channels' or null.
GOPT_AVX512BW inline void tiledOutputTile(const float *m, int64_t planeStride,
                                          const float *bias, bool sum,
                                          bool relu, float *dst, int64_t offset,
                                          const PixelStrides &st,
                                          const TileBounds &out) {
  __m512 t[4][4];
  for (int p = 0; p < 16; ++p)
    t[p / 4][p % 4] = _mm512_loadu_ps(m + p * planeStride);
  __m512 r[2][4];
  for (int b = 0; b < 4; ++b) {
    r[0][b] = _mm512_add_ps(_mm512_add_ps(t[0][b], t[1][b]), t[2][b]);
    r[1][b] = _mm512_sub_ps(_mm512_sub_ps(t[1][b], t[2][b]), t[3][b]);
  }
  const __m512 add = bias ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
  for (int a = 0; a < out.yhi; ++a) {
    __m512 y[2] = {_mm512_add_ps(_mm512_add_ps(r[a][0], r[a][1]), r[a][2]),
                   _mm512_sub_ps(_mm512_sub_ps(r[a][1], r[a][2]), r[a][3])};
    for (int b = 0; b < out.xhi; ++b) {
      storeOutput(dst + offset + a * st.row + b * st.pixel, y[b], add, sum,
                  relu);
    }
  }
}

// U = G g G^T for every (output, input) channel pair of a 3x3 filter (OIHW
// or HWIO), with an N x 3 transform G, in double and stored per 64-output
// block as the GEMMs read it: [cout / kBlock][N * N][cin][kBlock]. Zero
// entries add nothing, so sums of taps stay exact.
template <int N>
std::vector<float> transformFilter(const float *filter, bool oihw, int64_t cin,
                                   int64_t cout, const double (&G)[N][3]) {
  auto apply = [&](const double(&row)[3], const double(&v)[3]) {
    double sum = 0;
    bool any = false;
    for (int c = 0; c < 3; ++c)
      if (row[c] != 0) {
        sum = any ? sum + row[c] * v[c] : row[c] * v[c];
        any = true;
      }
    return sum;
  };
  std::vector<float> u(N * N * cin * cout, 0.0f);
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t i = 0; i < cin; ++i) {
      double g[3][3], t[N][3];
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          g[a][b] = oihw ? filter[((o * cin + i) * 3 + a) * 3 + b]
                         : filter[((a * 3 + b) * cin + i) * cout + o];
      for (int b = 0; b < 3; ++b)
        for (int r = 0; r < N; ++r)
          t[r][b] = apply(G[r], {g[0][b], g[1][b], g[2][b]});
      for (int a = 0; a < N; ++a)
        for (int b = 0; b < N; ++b)
          u[(((o / kBlock) * N * N + a * N + b) * cin + i) * kBlock +
            o % kBlock] = static_cast<float>(apply(G[b], t[a]));
    }
  return u;
}

} // namespace

std::unique_ptr<WinogradWideConv>
WinogradWideConv::create(const WinogradWideShape &s, const float *filter) {
  if (!avx512fSupported() || s.cin <= 0 || s.cin % 16 != 0 || s.cout <= 0 ||
      s.cout % kBlock != 0 || s.h <= 0 || s.w <= 0 || !filter)
    return nullptr;
  auto k = std::unique_ptr<WinogradWideConv>(new WinogradWideConv());
  k->s_ = s;
  k->tilesH_ = (s.h + 1) / 2;
  k->tilesW_ = (s.w + 1) / 2;
  k->tiles_ = k->tilesH_ * k->tilesW_;
  // F(2x2, 3x3)'s filter transform, in double.
  static constexpr double G[4][3] = {
      {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  k->u_ = transformFilter(filter, s.oihw, s.cin, s.cout, G);
  k->v_.assign(16 * k->tiles_ * s.cin, 0.0f);
  k->m_.resize(std::max(1, omp_get_max_threads()));
  k->claims_ = convBlockClaimsEnabled();
  return k;
}

size_t WinogradWideConv::workspaceBytes() const {
  return (u_.size() + v_.size() + m_.size() * 16 * tiles_ * kBlock) *
         sizeof(float);
}

void WinogradWideConv::run(const float *src, const float *bias, float *dst) {
  const WinogradWideShape s = s_;
  const int64_t tiles = tiles_, tilesW = tilesW_, cin = s.cin;
  const int64_t groups = cin / 16, blocks = s.cout / kBlock;
  const int threads = static_cast<int>(std::min<int64_t>(
      blocks, std::min<int64_t>(omp_get_max_threads(), m_.size())));
  float *v = v_.data();
  const float *u = u_.data();
  const int64_t chunks = (tiles + kMaxRows - 1) / kMaxRows;
  const bool claims = claims_;
  BlockCounter counter;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int nt = omp_get_num_threads(), id = omp_get_thread_num();
    // Input transform: an even share of (tile, 16 channels) items each.
    const int64_t items = tiles * groups;
    const int64_t begin = items * id / nt, end = items * (id + 1) / nt;
    const PixelStrides in(/*blocked=*/false, cin, s.h, s.w);
    for (int64_t it = begin; it < end; ++it) {
      const int64_t t = it / groups, c = (it % groups) * 16;
      const int64_t y0 = 2 * (t / tilesW) - 1, x0 = 2 * (t % tilesW) - 1;
      const TileBounds bounds(y0, x0, 4, s.h, s.w);
      const int64_t at = in.at(0, y0, x0, c);
      if (bounds.whole(4))
        tiledInputTile<true>(src, at, in, bounds, v + t * cin + c, tiles * cin);
      else
        tiledInputTile<false>(src, at, in, bounds, v + t * cin + c,
                              tiles * cin);
    }
#pragma omp barrier
    std::vector<float> &m = m_[id];
    if (m.size() != static_cast<size_t>(16 * tiles * kBlock))
      m.assign(16 * tiles * kBlock, 0.0f);
    // The filter slices this thread reads, in order: (ob, p) for its ob.
    const int64_t sliceLines = cin * kBlock * sizeof(float) / 64;
    const int64_t depths = (cin + kDepth - 1) / kDepth;
    const int64_t pfPerCall = std::min<int64_t>(
        2 * kDepth, (sliceLines + depths * chunks - 1) / (depths * chunks));
    BlockCursor cursor(counter, claims, id, nt);
    for (int64_t ob = cursor.next(), after = blocks; ob < blocks; ob = after) {
      for (int p = 0; p < 16; ++p) {
        const float *up = u + (ob * 16 + p) * cin * kBlock;
        // This thread's next block, taken as the last point starts: its
        // first slice is prefetched meanwhile.
        if (p == 15)
          after = cursor.next();
        int64_t nextOb = p < 15 ? ob : after;
        const char *next =
            nextOb < blocks
                ? reinterpret_cast<const char *>(
                      u + (nextOb * 16 + (p + 1) % 16) * cin * kBlock)
                : nullptr;
        int64_t call = 0;
        for (int64_t k0 = 0; k0 < cin; k0 += kDepth) {
          int64_t depth = std::min(kDepth, cin - k0);
          // Tiles in `chunks` near-equal groups of at most kMaxRows.
          for (int64_t ch = 0, t0 = 0; ch < chunks; ++ch, ++call) {
            int64_t rows = tiles / chunks + (ch < tiles % chunks ? 1 : 0);
            int64_t pfBegin = std::min(sliceLines, call * pfPerCall);
            int64_t pfLines =
                next ? std::min(sliceLines - pfBegin, pfPerCall) : 0;
            gemmAnyRows(static_cast<int>(rows), v + (p * tiles + t0) * cin + k0,
                        cin, up + k0 * kBlock, depth,
                        m.data() + (p * tiles + t0) * kBlock, k0 > 0,
                        next ? next + pfBegin * 64 : nullptr, pfLines);
            t0 += rows;
          }
        }
      }
      const PixelStrides out(/*blocked=*/false, s.cout, s.h, s.w);
      for (int64_t t = 0; t < tiles; ++t) {
        const int64_t y0 = 2 * (t / tilesW), x0 = 2 * (t % tilesW);
        const TileBounds bounds(y0, x0, 2, s.h, s.w);
        for (int64_t j = 0; j < kBlock; j += 16) {
          const int64_t oc = ob * kBlock + j;
          tiledOutputTile(m.data() + t * kBlock + j, tiles * kBlock,
                          bias ? bias + oc : nullptr, s.sum, s.relu, dst,
                          out.at(0, y0, x0, oc), out, bounds);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Stride 2. Output row y reads input rows 2y - 1, 2y, 2y + 1 with taps w0,
// w1, w2; a 2x2 output tile at output (2ti, 2tj) reads the 5x5 input patch
// d at (4ti - 1, 4tj - 1). Along one axis, per tile: rows d0, d2, d4 (taps
// w0, w2 at stride 1: Winograd F(2, 2)) and d1, d3 (tap w1):
//   T(d) = (d0 - d2, d2, d4 - d2, d1, d3), Gt(w) = (w0, w0 + w2, w2, w1, w1)
//   y0 = m0 + m1 + m3, y1 = m1 + m2 + m4    (m = T(d) * Gt(w))
// In 2-D the 25 points' filters are Gt x Gt with points 3 and 4 of an axis
// alike: 16 distinct, point (k, l) taking filter (min(k, 3), min(l, 3)).

namespace {

// Element offset of pixel (y, x), channel c (a multiple of 16) of image
// `img` in NHWC or nChw16c.
inline int64_t pixelAt(bool blocked, int64_t channels, int64_t h, int64_t w,
                       int64_t img, int64_t y, int64_t x, int64_t c) {
  return blocked ? (((img * (channels / 16) + c / 16) * h + y) * w + x) * 16
                 : ((img * h + y) * w + x) * channels + c;
}

GOPT_AVX512BW void stride2InputTile(const float *src,
                                    const WinogradStride2Shape &s, int64_t img,
                                    int64_t y0, int64_t x0, int64_t c, float *v,
                                    int64_t planeStride) {
  __m512 d[5][5];
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b) {
      int64_t y = y0 + a, x = x0 + b;
      d[a][b] = (y >= 0 && y < s.h && x >= 0 && x < s.w)
                    ? _mm512_loadu_ps(src + pixelAt(s.blocked, s.cin, s.h, s.w,
                                                    img, y, x, c))
                    : _mm512_setzero_ps();
    }
  __m512 e[5][5];
  for (int b = 0; b < 5; ++b) {
    e[0][b] = _mm512_sub_ps(d[0][b], d[2][b]);
    e[1][b] = d[2][b];
    e[2][b] = _mm512_sub_ps(d[4][b], d[2][b]);
    e[3][b] = d[1][b];
    e[4][b] = d[3][b];
  }
  for (int a = 0; a < 5; ++a) {
    float *row = v + (a * 5) * planeStride;
    _mm512_storeu_ps(row, _mm512_sub_ps(e[a][0], e[a][2]));
    _mm512_storeu_ps(row + planeStride, e[a][2]);
    _mm512_storeu_ps(row + 2 * planeStride, _mm512_sub_ps(e[a][4], e[a][2]));
    _mm512_storeu_ps(row + 3 * planeStride, e[a][1]);
    _mm512_storeu_ps(row + 4 * planeStride, e[a][3]);
  }
}

GOPT_AVX512BW void stride2OutputTile(const float *m, int64_t planeStride,
                                     const WinogradStride2Shape &s,
                                     const float *bias, int64_t img, int64_t y0,
                                     int64_t x0, int64_t oc, float *dst) {
  __m512 t[5][5];
  for (int p = 0; p < 25; ++p)
    t[p / 5][p % 5] = _mm512_loadu_ps(m + p * planeStride);
  __m512 r[2][5];
  for (int b = 0; b < 5; ++b) {
    r[0][b] = _mm512_add_ps(_mm512_add_ps(t[0][b], t[1][b]), t[3][b]);
    r[1][b] = _mm512_add_ps(_mm512_add_ps(t[1][b], t[2][b]), t[4][b]);
  }
  __m512 add = bias ? _mm512_loadu_ps(bias + oc) : _mm512_setzero_ps();
  const int64_t oh = s.outH(), ow = s.outW();
  for (int a = 0; a < 2; ++a) {
    __m512 y[2] = {_mm512_add_ps(_mm512_add_ps(r[a][0], r[a][1]), r[a][3]),
                   _mm512_add_ps(_mm512_add_ps(r[a][1], r[a][2]), r[a][4])};
    for (int b = 0; b < 2; ++b) {
      int64_t py = y0 + a, px = x0 + b;
      if (py >= oh || px >= ow)
        continue;
      float *out = dst + pixelAt(s.blocked, s.cout, oh, ow, img, py, px, oc);
      __m512 value = _mm512_add_ps(y[b], add);
      if (s.sum)
        value = _mm512_add_ps(value, _mm512_loadu_ps(out));
      if (s.relu)
        value = _mm512_max_ps(value, _mm512_setzero_ps());
      _mm512_storeu_ps(out, value);
    }
  }
}

// Tiles of one pass over the filter: enough to reuse each filter element
// (it streams from L3), few enough that the transformed input (25 x tiles
// x cin floats) and a thread's products stay within a few MiB.
constexpr int64_t kStride2MaxTiles = 128;
constexpr int64_t kStride2MaxInputFloats = int64_t(4) << 20;

} // namespace

std::unique_ptr<WinogradStride2Conv>
WinogradStride2Conv::create(const WinogradStride2Shape &s,
                            const float *filter) {
  if (!avx512fSupported() || s.n <= 0 || s.cin <= 0 || s.cin % 16 != 0 ||
      s.cout <= 0 || s.cout % kBlock != 0 || s.h <= 0 || s.w <= 0 || !filter)
    return nullptr;
  auto k = std::unique_ptr<WinogradStride2Conv>(new WinogradStride2Conv());
  k->s_ = s;
  k->tilesH_ = (s.outH() + 1) / 2;
  k->tilesW_ = (s.outW() + 1) / 2;
  const int64_t perImage = k->tilesH_ * k->tilesW_;
  k->groupImages_ = std::max<int64_t>(
      1, std::min({s.n, kStride2MaxTiles / perImage,
                   kStride2MaxInputFloats / (25 * perImage * s.cin)}));
  // U = Gt g Gt^T per (output, input) channel pair (points 0..3 of each
  // axis; point 4 repeats 3). Sums of at most four taps: exact in double.
  static constexpr double Gt[4][3] = {
      {1, 0, 0}, {1, 0, 1}, {0, 0, 1}, {0, 1, 0}};
  k->u_ = transformFilter(filter, s.oihw, s.cin, s.cout, Gt);
  k->v_.assign(25 * k->groupImages_ * perImage * s.cin, 0.0f);
  k->m_.resize(std::max(1, omp_get_max_threads()));
  k->claims_ = convBlockClaimsEnabled();
  return k;
}

size_t WinogradStride2Conv::workspaceBytes() const {
  return (u_.size() + v_.size() +
          m_.size() * 25 * groupImages_ * tilesH_ * tilesW_ * kBlock) *
         sizeof(float);
}

void WinogradStride2Conv::run(const float *src, const float *bias, float *dst) {
  const WinogradStride2Shape s = s_;
  const int64_t perImage = tilesH_ * tilesW_, tilesW = tilesW_;
  const int64_t cin = s.cin, groups = cin / 16, blocks = s.cout / kBlock;
  const int threads = static_cast<int>(std::min<int64_t>(
      blocks, std::min<int64_t>(omp_get_max_threads(), m_.size())));
  float *v = v_.data();
  const float *u = u_.data();
  for (int64_t img0 = 0; img0 < s.n; img0 += groupImages_) {
    const int64_t images = std::min(groupImages_, s.n - img0);
    const int64_t tiles = images * perImage;
    const int64_t chunks = (tiles + kMaxRows - 1) / kMaxRows;
    const bool claims = claims_;
    BlockCounter counter;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int nt = omp_get_num_threads(), id = omp_get_thread_num();
      const int64_t items = tiles * groups;
      const int64_t begin = items * id / nt, end = items * (id + 1) / nt;
      for (int64_t it = begin; it < end; ++it) {
        // nChw16c: a block's tiles in a row, whose patches share lines.
        int64_t t = s.blocked ? it % tiles : it / groups;
        int64_t c = (s.blocked ? it / tiles : it % groups) * 16;
        int64_t img = img0 + t / perImage, tt = t % perImage;
        stride2InputTile(src, s, img, 4 * (tt / tilesW) - 1,
                         4 * (tt % tilesW) - 1, c, v + t * cin + c,
                         tiles * cin);
      }
#pragma omp barrier
      std::vector<float> &m = m_[id];
      if (m.size() < static_cast<size_t>(25 * tiles * kBlock))
        m.assign(25 * tiles * kBlock, 0.0f);
      BlockCursor cursor(counter, claims, id, nt);
      for (int64_t ob = cursor.next(), after = blocks; ob < blocks;
           ob = after) {
        // Points by filter: a filter's slice serves its 1, 2 or 4 points.
        // Meanwhile the next filter's slice is prefetched into L2, an even
        // share of its lines per GEMM call (as WinogradWideConv does).
        const int64_t sliceLines = cin * kBlock * sizeof(float) / 64;
        const int64_t depths = (cin + kDepth - 1) / kDepth;
        for (int f = 0; f < 16; ++f) {
          const float *up = u + (ob * 16 + f) * cin * kBlock;
          const int fk = f / 4, fl = f % 4;
          const int kEnd = fk == 3 ? 5 : fk + 1, lEnd = fl == 3 ? 5 : fl + 1;
          const int64_t calls = (kEnd - fk) * (lEnd - fl) * depths * chunks;
          const int64_t pfPerCall =
              std::min<int64_t>(2 * kDepth, (sliceLines + calls - 1) / calls);
          // This thread's next block, taken as the last filter starts.
          if (f == 15)
            after = cursor.next();
          const int64_t nextOb = f < 15 ? ob : after;
          const char *next =
              nextOb < blocks
                  ? reinterpret_cast<const char *>(
                        u + (nextOb * 16 + (f + 1) % 16) * cin * kBlock)
                  : nullptr;
          int64_t call = 0;
          for (int k = fk; k < kEnd; ++k)
            for (int l = fl; l < lEnd; ++l) {
              const int p = k * 5 + l;
              for (int64_t k0 = 0; k0 < cin; k0 += kDepth) {
                int64_t depth = std::min(kDepth, cin - k0);
                for (int64_t ch = 0, t0 = 0; ch < chunks; ++ch, ++call) {
                  int64_t rows = tiles / chunks + (ch < tiles % chunks ? 1 : 0);
                  int64_t pfBegin = std::min(sliceLines, call * pfPerCall);
                  int64_t pfLines =
                      next ? std::min(sliceLines - pfBegin, pfPerCall) : 0;
                  gemmAnyRows(static_cast<int>(rows),
                              v + (p * tiles + t0) * cin + k0, cin,
                              up + k0 * kBlock, depth,
                              m.data() + (p * tiles + t0) * kBlock, k0 > 0,
                              next ? next + pfBegin * 64 : nullptr, pfLines);
                  t0 += rows;
                }
              }
            }
        }
        for (int64_t t = 0; t < tiles; ++t) {
          int64_t img = img0 + t / perImage, tt = t % perImage;
          for (int64_t j = 0; j < kBlock; j += 16)
            stride2OutputTile(m.data() + t * kBlock + j, tiles * kBlock, s,
                              bias, img, 2 * (tt / tilesW), 2 * (tt % tilesW),
                              ob * kBlock + j, dst);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Tiled: all images' 2x2 tiles in groups; a group's input transform, then
// per 64-channel block its 16 GEMMs and the output transform, on one
// thread.

namespace {

// F(4x4, 3x3) along one axis: B^T d of a 6-point patch and A^T m of 6
// products (Lavin and Gray's points 0, +-1, +-2 and infinity).
GOPT_AVX512BW inline void inputTransform6(const __m512 (&d)[6],
                                          __m512 (&v)[6]) {
  const __m512 two = _mm512_set1_ps(2), four = _mm512_set1_ps(4),
               five = _mm512_set1_ps(5);
  const __m512 t0 = _mm512_fnmadd_ps(four, d[2], d[4]); // d4 - 4 d2
  const __m512 t1 = _mm512_fnmadd_ps(four, d[1], d[3]); // d3 - 4 d1
  const __m512 t2 = _mm512_sub_ps(d[4], d[2]);
  const __m512 t3 = _mm512_mul_ps(two, _mm512_sub_ps(d[3], d[1]));
  v[0] = _mm512_fmadd_ps(four, d[0], _mm512_fnmadd_ps(five, d[2], d[4]));
  v[1] = _mm512_add_ps(t1, t0);
  v[2] = _mm512_sub_ps(t0, t1);
  v[3] = _mm512_add_ps(t2, t3);
  v[4] = _mm512_sub_ps(t2, t3);
  v[5] = _mm512_fmadd_ps(four, d[1], _mm512_fnmadd_ps(five, d[3], d[5]));
}

GOPT_AVX512BW inline void outputTransform6(const __m512 (&m)[6],
                                           __m512 (&y)[4]) {
  const __m512 a = _mm512_add_ps(m[1], m[2]), b = _mm512_sub_ps(m[1], m[2]);
  const __m512 c = _mm512_add_ps(m[3], m[4]), d = _mm512_sub_ps(m[3], m[4]);
  y[0] = _mm512_add_ps(_mm512_add_ps(m[0], a), c);
  y[1] = _mm512_fmadd_ps(_mm512_set1_ps(2), d, b);
  y[2] = _mm512_fmadd_ps(_mm512_set1_ps(4), c, a);
  y[3] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8), d, b), m[5]);
}

// V = B^T d B for 16 channels of a 6x6 input patch, as tiledInputTile.
template <bool kWhole>
GOPT_AVX512BW inline void
tiledInputTile4(const float *src, int64_t offset, const PixelStrides &st,
                const TileBounds &in, float *v, int64_t planeStride) {
  __m512 e[6][6];
  for (int b = 0; b < 6; ++b) {
    __m512 d[6], t[6];
    for (int a = 0; a < 6; ++a)
      d[a] = kWhole || (a >= in.ylo && a < in.yhi && b >= in.xlo && b < in.xhi)
                 ? _mm512_loadu_ps(src + (offset + a * st.row + b * st.pixel))
                 : _mm512_setzero_ps();
    inputTransform6(d, t);
    for (int a = 0; a < 6; ++a)
      e[a][b] = t[a];
  }
  for (int a = 0; a < 6; ++a) {
    __m512 t[6];
    inputTransform6(e[a], t);
    for (int b = 0; b < 6; ++b)
      _mm512_storeu_ps(v + (a * 6 + b) * planeStride, t[b]);
  }
}

// Y = A^T M A for 16 output channels of one 4x4 tile, then bias, residual
// and relu, as tiledOutputTile.
GOPT_AVX512BW inline void
tiledOutputTile4(const float *m, int64_t planeStride, const float *bias,
                 bool sum, bool relu, float *dst, int64_t offset,
                 const PixelStrides &st, const TileBounds &out) {
  __m512 r[4][6];
  for (int b = 0; b < 6; ++b) {
    __m512 t[6], y[4];
    for (int a = 0; a < 6; ++a)
      t[a] = _mm512_loadu_ps(m + (a * 6 + b) * planeStride);
    outputTransform6(t, y);
    for (int a = 0; a < 4; ++a)
      r[a][b] = y[a];
  }
  const __m512 add = bias ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
  for (int a = 0; a < out.yhi; ++a) {
    __m512 y[4];
    outputTransform6(r[a], y);
    for (int b = 0; b < out.xhi; ++b) {
      storeOutput(dst + offset + a * st.row + b * st.pixel, y[b], add, sum,
                  relu);
    }
  }
}

// A group's transformed input (points x group x cin floats) and one
// block's products (points x group x 64) within about a third of a 1 MiB
// L2, where each 64-channel filter block passes over them.
constexpr int64_t kTiledGroupBytes = 384 << 10;
constexpr int64_t kTiledMaxGroup = 48; // 8 GEMM calls of kMaxRows tiles

} // namespace

std::unique_ptr<WinogradTiledConv>
WinogradTiledConv::create(const WinogradTiledShape &s, const float *filter) {
  WinogradTiledShape shape = s;
  if (shape.dstChannels == 0)
    shape.dstChannels = shape.cout;
  if (!avx512fSupported() || (shape.tile != 2 && shape.tile != 4) ||
      shape.n <= 0 || shape.cin <= 0 || shape.cin % 16 != 0 ||
      shape.cout <= 0 || shape.cout % kBlock != 0 || shape.h <= 0 ||
      shape.w <= 0 || !filter || shape.dstOffset < 0 ||
      shape.dstOffset + shape.cout > shape.dstChannels ||
      (shape.dstBlocked &&
       (shape.dstChannels % 16 != 0 || shape.dstOffset % 16 != 0)))
    return nullptr;
  auto k = std::unique_ptr<WinogradTiledConv>(new WinogradTiledConv());
  k->s_ = shape;
  k->tilesH_ = (shape.h + shape.tile - 1) / shape.tile;
  k->tilesW_ = (shape.w + shape.tile - 1) / shape.tile;
  const int64_t points = (shape.tile + 2) * (shape.tile + 2);
  const int64_t perTile =
      points * (shape.cin + kBlock) * int64_t(sizeof(float));
  k->groupTiles_ = std::max<int64_t>(
      kMaxRows, std::min(kTiledMaxGroup, kTiledGroupBytes / perTile));
  std::vector<float> u;
  if (shape.tile == 2) {
    static constexpr double G[4][3] = {
        {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    u = transformFilter(filter, shape.oihw, shape.cin, shape.cout, G);
  } else {
    static constexpr double G[6][3] = {{1.0 / 4, 0, 0},
                                       {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                       {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                       {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                       {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                       {0, 0, 1}};
    u = transformFilter(filter, shape.oihw, shape.cin, shape.cout, G);
  }
  k->u_.assign(u.begin(), u.end());
  const size_t threads = std::max(1, omp_get_max_threads());
  k->v_.assign(threads,
               AlignedVector<float>(points * k->groupTiles_ * shape.cin));
  k->m_.assign(threads, AlignedVector<float>(points * k->groupTiles_ * kBlock));
  return k;
}

size_t WinogradTiledConv::workspaceBytes() const {
  return (u_.size() + v_.size() * (v_.empty() ? 0 : v_[0].size()) +
          m_.size() * (m_.empty() ? 0 : m_[0].size())) *
         sizeof(float);
}

void WinogradTiledConv::run(const float *src, const float *bias, float *dst) {
  if (s_.tile == 4)
    runTiles<4>(src, bias, dst);
  else
    runTiles<2>(src, bias, dst);
}

template <int kTile>
void WinogradTiledConv::runTiles(const float *src, const float *bias,
                                 float *dst) {
  constexpr int kPatch = kTile + 2, kPoints = kPatch * kPatch;
  const WinogradTiledShape s = s_;
  const int64_t perImage = tilesH_ * tilesW_, tilesW = tilesW_;
  const int64_t tiles = s.n * perImage, cin = s.cin;
  const int64_t channelGroups = cin / 16, blocks = s.cout / kBlock;
  const PixelStrides in(s.srcBlocked, cin, s.h, s.w);
  const PixelStrides out(s.dstBlocked, s.dstChannels, s.h, s.w);
  const int maxThreads = static_cast<int>(
      std::min<int64_t>({static_cast<int64_t>(omp_get_max_threads()),
                         static_cast<int64_t>(v_.size()), tiles}));
  // Near-equal groups of at most groupTiles_, a whole number per thread.
  int64_t groups = (tiles + groupTiles_ - 1) / groupTiles_;
  groups = (groups + maxThreads - 1) / maxThreads * maxThreads;
  groups = std::min(groups, tiles);
  const int threads = static_cast<int>(std::min<int64_t>(maxThreads, groups));
  const float *u = u_.data();
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int nt = omp_get_num_threads(), id = omp_get_thread_num();
    float *v = v_[id].data();
    float *m = m_[id].data();
    for (int64_t g = groups * id / nt; g < groups * (id + 1) / nt; ++g) {
      const int64_t first = tiles * g / groups;
      const int64_t count = tiles * (g + 1) / groups - first;
      for (int64_t r = 0; r < count; ++r) {
        const int64_t t = first + r, img = t / perImage, tt = t % perImage;
        const int64_t y0 = kTile * (tt / tilesW) - 1,
                      x0 = kTile * (tt % tilesW) - 1;
        const TileBounds bounds(y0, x0, kPatch, s.h, s.w);
        const int64_t offset = in.at(img, y0, x0, 0);
        float *vr = v + r * cin;
        const bool whole = bounds.whole(kPatch);
        for (int64_t c = 0; c < channelGroups; ++c) {
          const int64_t at = offset + c * in.channelBlock;
          if constexpr (kTile == 2) {
            if (whole)
              tiledInputTile<true>(src, at, in, bounds, vr + c * 16,
                                   count * cin);
            else
              tiledInputTile<false>(src, at, in, bounds, vr + c * 16,
                                    count * cin);
          } else {
            if (whole)
              tiledInputTile4<true>(src, at, in, bounds, vr + c * 16,
                                    count * cin);
            else
              tiledInputTile4<false>(src, at, in, bounds, vr + c * 16,
                                     count * cin);
          }
        }
      }
      // Per 64-channel block: each point's filter slice (cin x 64) stays
      // in L1 across the group's GEMM calls, the products (points x group
      // x 64, in L2) wait for the block's output transform. Taking the
      // points per chunk of kMaxRows tiles instead, products in L1,
      // streamed the block's whole filter from L2 for every chunk: 1.25-1.4x
      // slower on SqueezeNet's 16- and 32-channel layers.
      const int64_t chunks = (count + kMaxRows - 1) / kMaxRows;
      for (int64_t ob = 0; ob < blocks; ++ob) {
        for (int p = 0; p < kPoints; ++p) {
          const float *up = u + (ob * kPoints + p) * cin * kBlock;
          for (int64_t k0 = 0; k0 < cin; k0 += kDepth) {
            const int64_t depth = std::min(kDepth, cin - k0);
            for (int64_t ch = 0, t0 = 0; ch < chunks; ++ch) {
              const int rows = static_cast<int>(count / chunks +
                                                (ch < count % chunks ? 1 : 0));
              gemmAnyRows(rows, v + (p * count + t0) * cin + k0, cin,
                          up + k0 * kBlock, depth,
                          m + (p * count + t0) * kBlock, k0 > 0, nullptr, 0);
              t0 += rows;
            }
          }
        }
        for (int64_t r = 0; r < count; ++r) {
          const int64_t t = first + r, img = t / perImage, tt = t % perImage;
          const int64_t y0 = kTile * (tt / tilesW), x0 = kTile * (tt % tilesW);
          const TileBounds bounds(y0, x0, kTile, s.h, s.w);
          for (int64_t j = 0; j < kBlock; j += 16) {
            const int64_t oc = ob * kBlock + j;
            const int64_t at = out.at(img, y0, x0, s.dstOffset + oc);
            if constexpr (kTile == 2)
              tiledOutputTile(m + r * kBlock + j, count * kBlock,
                              bias ? bias + oc : nullptr, s.sum, s.relu, dst,
                              at, out, bounds);
            else
              tiledOutputTile4(m + r * kBlock + j, count * kBlock,
                               bias ? bias + oc : nullptr, s.sum, s.relu, dst,
                               at, out, bounds);
          }
        }
      }
    }
  }
}

#else // !GOPT_HAVE_AVX512_LANES

std::unique_ptr<WinogradWideConv>
WinogradWideConv::create(const WinogradWideShape &, const float *) {
  return nullptr;
}
size_t WinogradWideConv::workspaceBytes() const { return 0; }
void WinogradWideConv::run(const float *, const float *, float *) {}
std::unique_ptr<WinogradStride2Conv>
WinogradStride2Conv::create(const WinogradStride2Shape &, const float *) {
  return nullptr;
}
size_t WinogradStride2Conv::workspaceBytes() const { return 0; }
void WinogradStride2Conv::run(const float *, const float *, float *) {}
std::unique_ptr<WinogradTiledConv>
WinogradTiledConv::create(const WinogradTiledShape &, const float *) {
  return nullptr;
}
size_t WinogradTiledConv::workspaceBytes() const { return 0; }
void WinogradTiledConv::run(const float *, const float *, float *) {}

#endif

} // namespace gopt::runtime::cpu
