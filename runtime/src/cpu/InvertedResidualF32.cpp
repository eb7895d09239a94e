//===- InvertedResidualF32.cpp - Fused MobileNet block, NHWC f32 ----------===//
//
// Per thread, a band of output rows; per output row: the source rows its
// depthwise window needs are expanded (a 1x1 GEMM on AVX-512, weights
// packed once at creation) into a ring of k padded rows, the depthwise row
// is computed from them into one more row buffer, and the project GEMM
// reads that and writes the result row (adding the residual already in the
// destination). The expanded tensor never leaves the thread's L1/L2.
//
//===----------------------------------------------------------------------===//
#include "InvertedResidualF32.h"

#include "EnvSwitch.h"
#include "OneDnn.h"
#include "gopt/runtime/OpSchema.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#if defined(__x86_64__)
// GCC 12 flags _mm512_max_ps/_mm512_min_ps's _mm512_undefined_ps
// pass-through operand in the unrolled kernels (a false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define GOPT_IR_TARGET __attribute__((target("avx512f")))
#else
#define GOPT_IR_TARGET
#endif

namespace gopt::runtime::cpu {

bool invertedResidualF32Enabled() {
#if defined(__x86_64__)
  static const bool enabled = envSwitchOn("GOPT_INVERTED_RESIDUAL_F32") &&
                              __builtin_cpu_supports("avx512f");
  return enabled;
#else
  return false;
#endif
}

// Measured on two machines: with 2 MiB of L2 per core (the Sapphire Rapids
// Xeon) oneDNN ran the blocks under 1 MiB 5-15% faster; with 1 MiB (the Zen
// 5 EPYC), MobileNetV2 at batch 1 ran faster with every block over 256 KiB
// fused (its 28x28 and 14x14 ones too) than over 1 MiB in 5 interleaved
// rounds of 5, by 0.7-10% (and 400 KB, between the two, lay between them
// in 3 rounds of 3 each way).
size_t invertedResidualMinBytes(long l2Bytes) {
  return l2Bytes > 0 && l2Bytes < (2l << 20) ? size_t(256) << 10
                                             : size_t(1) << 20;
}

namespace {

int64_t roundUp16(int64_t v) { return (v + 15) / 16 * 16; }

// GOPT_INVERTED_RESIDUAL_WHOLE_IMAGE=0: small images split by rows too.
bool wholeImageEnabled() {
  static const bool on = envSwitchOn("GOPT_INVERTED_RESIDUAL_WHOLE_IMAGE");
  return on;
}

// This thread's scratch of at least `floats` floats (64-byte aligned), one
// for every block it runs: the expanded rows stay warm in L2 from one
// block to the next instead of each block's own buffers coming from
// memory (1.9x slower per block with cold buffers, 14x14 and 7x7 ones).
float *threadScratch(size_t floats, int slot = 0) {
  thread_local std::vector<float> scratches[2];
  std::vector<float> &scratch = scratches[slot];
  if (scratch.size() < floats + 16)
    scratch.resize(floats + 16);
  auto p = reinterpret_cast<uintptr_t>(scratch.data());
  return reinterpret_cast<float *>((p + 63) & ~uintptr_t(63));
}

#if defined(__x86_64__)
// What a GEMM's result row gets besides the products: bias + the
// destination's previous contents (sum) to start from, clamp to [lo, hi]
// at the end; the last 16-column vector loaded and stored under `tail`
// (columns past the matrix's width). A GEMM run in blocks of K keeps its
// partial sums in C between them: `first` starts from the bias, `final`
// clamps.
struct Epilogue {
  const float *bias; // padded to the packed width
  bool sum;
  float lo, hi;
  __mmask16 tail;
  bool first = true, final = true;
};

// Where a GEMM's result row m goes: base + m * ldc, or with w > 0 a pixel
// of a ring of padded image rows (m / w rows after firstRow, column m % w
// after padLeft pad columns; ldc the pixel stride).
struct CMap {
  float *base;
  int64_t ldc;
  int64_t w = 0, firstRow = 0, ring = 1, rowFloats = 0, padLeft = 0;
  int64_t x0 = 0; // the first row's first column
  float *row(int64_t m) const {
    if (!w)
      return base + m * ldc;
    int64_t r = (firstRow + m / w) % ring;
    return base + r * rowFloats + (m % w + padLeft) * ldc;
  }
};

// C[MR][NV * 16] (rows at c[0..MR), from column 0) = A[MR][K] (row stride
// lda) x B[K][...] (row stride ldb, columns from b), then the epilogue;
// `last`: whether these columns include the matrix's last vector.
template <int MR, int NV>
GOPT_IR_TARGET void microKernel(const float *a, int64_t lda, const float *b,
                                int64_t ldb, int64_t kDim, float *const *c,
                                const Epilogue &e, bool last) {
  __m512 acc[MR][NV];
  for (int v = 0; v < NV; ++v) {
    const __mmask16 mask = last && v == NV - 1 ? e.tail : __mmask16(0xFFFF);
    const __m512 bias = e.first && e.bias ? _mm512_loadu_ps(e.bias + 16 * v)
                                          : _mm512_setzero_ps();
    for (int m = 0; m < MR; ++m)
      acc[m][v] =
          e.first && !e.sum
              ? bias
              : _mm512_add_ps(bias, _mm512_maskz_loadu_ps(mask, c[m] + 16 * v));
  }
  for (int64_t k = 0; k < kDim; ++k) {
    __m512 bv[NV];
    for (int v = 0; v < NV; ++v)
      bv[v] = _mm512_loadu_ps(b + k * ldb + 16 * v);
    for (int m = 0; m < MR; ++m) {
      __m512 av = _mm512_set1_ps(a[m * lda + k]);
      for (int v = 0; v < NV; ++v)
        acc[m][v] = _mm512_fmadd_ps(av, bv[v], acc[m][v]);
    }
  }
  const __m512 lo = _mm512_set1_ps(e.lo), hi = _mm512_set1_ps(e.hi);
  for (int m = 0; m < MR; ++m)
    for (int v = 0; v < NV; ++v) {
      float *out = c[m] + 16 * v;
      __mmask16 mask = last && v == NV - 1 ? e.tail : __mmask16(0xFFFF);
      __m512 x = acc[m][v];
      if (e.final)
        x = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
      _mm512_mask_storeu_ps(out, mask, x);
    }
}

using MicroFn = void (*)(const float *, int64_t, const float *, int64_t,
                         int64_t, float *const *, const Epilogue &, bool);

template <int NV, int... Ms>
constexpr std::array<MicroFn, sizeof...(Ms)>
microTable(std::integer_sequence<int, Ms...>) {
  return {&microKernel<Ms + 1, NV>...};
}

// The most rows per call for NV vectors: 27-28 accumulators, 24 for four
// (28, the four weight vectors and the broadcast spilled one to the stack;
// one vector: 14, the row table's size). 8-12 rows for one to three
// vectors (24) ran MobileNetV2's fused blocks 4-5% slower: more broadcasts
// per FMA.
constexpr int maxRows(int nv) {
  return nv == 1 ? 14 : nv == 2 ? 14 : nv == 3 ? 9 : 6;
}

GOPT_IR_TARGET void microDispatch(int mr, int nv, const float *a, int64_t lda,
                                  const float *b, int64_t ldb, int64_t kDim,
                                  float *const *c, const Epilogue &e,
                                  bool last) {
  static constexpr auto t1 =
      microTable<1>(std::make_integer_sequence<int, maxRows(1)>());
  static constexpr auto t2 =
      microTable<2>(std::make_integer_sequence<int, maxRows(2)>());
  static constexpr auto t3 =
      microTable<3>(std::make_integer_sequence<int, maxRows(3)>());
  static constexpr auto t4 =
      microTable<4>(std::make_integer_sequence<int, maxRows(4)>());
  const MicroFn fn = nv == 1   ? t1[mr - 1]
                     : nv == 2 ? t2[mr - 1]
                     : nv == 3 ? t3[mr - 1]
                               : t4[mr - 1];
  fn(a, lda, b, ldb, kDim, c, e, last);
}

// The column panels a GEMM of `np` columns (a multiple of 16) runs: 4
// vectors each, the remainder one panel of 1-3 (3 + 2 rather than 4 + 1).
template <typename F> void forPanels(int64_t np, F f) {
  const int64_t vectors = np / 16;
  for (int64_t v0 = 0; v0 < vectors;) {
    int nv = static_cast<int>(std::min<int64_t>(4, vectors - v0));
    if (vectors - v0 == 5)
      nv = 3;
    f(v0, nv);
    v0 += nv;
  }
}

// C[m][n] = A[m][k] x B (np columns, a multiple of 16; C's rows where `c`
// maps them, n <= np of them valid), then the epilogue. B is packed by
// packPanels: per panel, [K][nv * 16] contiguous, the panel streaming
// from L1/L2 without the set conflicts of a long row stride.
GOPT_IR_TARGET void gemm(const float *a, int64_t lda, int64_t m, const float *b,
                         int64_t np, int64_t kDim, const CMap &c,
                         const Epilogue &e) {
  // C's row addresses, computed once (CMap::row divides).
  thread_local std::vector<float *> table;
  if (static_cast<int64_t>(table.size()) < m)
    table.resize(m);
  if (!c.w) {
    for (int64_t i = 0; i < m; ++i)
      table[i] = c.base + i * c.ldc;
  } else {
    int64_t r = c.firstRow % c.ring, x = c.x0;
    for (int64_t i = 0; i < m; ++i) {
      table[i] = c.base + r * c.rowFloats + (x + c.padLeft) * c.ldc;
      if (++x == c.w) {
        x = 0;
        r = r + 1 == c.ring ? 0 : r + 1;
      }
    }
  }
  float *rows[14];
  const int64_t vectors = np / 16;
  forPanels(np, [&](int64_t v0, int nv) {
    const bool last = v0 + nv == vectors;
    Epilogue pe = e;
    if (pe.bias)
      pe.bias += 16 * v0;
    const float *panel = b + kDim * 16 * v0;
    const int most = maxRows(nv);
    // Blocks of K whose slice of the panel (kc x nv x 64 bytes) stays in
    // L1 across the row blocks (the project GEMM's 576-960 deep panels
    // otherwise streamed from L2 for every 6-12 rows).
    const int64_t blocks = (kDim * nv * 64 + (40 << 10) - 1) / (40 << 10);
    const int64_t kc = (kDim + blocks - 1) / blocks;
    for (int64_t k0 = 0; k0 < kDim; k0 += kc) {
      const int64_t kLen = std::min(kc, kDim - k0);
      pe.first = k0 == 0;
      pe.final = k0 + kLen == kDim;
      for (int64_t m0 = 0; m0 < m; m0 += most) {
        int mr = static_cast<int>(std::min<int64_t>(most, m - m0));
        for (int r = 0; r < mr; ++r)
          rows[r] = table[m0 + r] + 16 * v0;
        microDispatch(mr, nv, a + m0 * lda + k0, lda, panel + k0 * nv * 16,
                      nv * 16, kLen, rows, pe, last);
      }
    }
  });
}
#endif

// `w` [kDim][n] as gemm's B: np (n rounded up to 16) columns, zeros past
// n, panel by panel.
std::vector<float> packPanels(const std::vector<float> &w, int64_t kDim,
                              int64_t n, int64_t np) {
  std::vector<float> out(kDim * np, 0.0f);
#if defined(__x86_64__)
  forPanels(np, [&](int64_t v0, int nv) {
    float *panel = out.data() + kDim * 16 * v0;
    for (int64_t k = 0; k < kDim; ++k)
      for (int64_t j = 0; j < nv * 16; ++j) {
        int64_t col = 16 * v0 + j;
        panel[k * nv * 16 + j] = col < n ? w[k * n + col] : 0.0f;
      }
  });
#endif
  return out;
}

#if defined(__x86_64__)
// One depthwise output row: out[ox][c] = clamp(bias[c] + sum over the
// window of w[ky][kx][c] * rows[ky][(ox * stride + kx) * hp + c]), 16
// channels x up to 8 columns at a time.
template <int K, int OB>
GOPT_IR_TARGET inline void dwColumns(const float *const *rows, int,
                                     int64_t stride, int64_t hp, const float *w,
                                     __m512 bias, __m512 lo, __m512 hi,
                                     int64_t ox, float *out) {
  __m512 acc[OB];
  for (int j = 0; j < OB; ++j)
    acc[j] = bias;
  for (int ky = 0; ky < K; ++ky)
    for (int kx = 0; kx < K; ++kx) {
      __m512 wv = _mm512_loadu_ps(w + (ky * K + kx) * hp);
      const float *r = rows[ky] + ((ox * stride) + kx) * hp;
      for (int j = 0; j < OB; ++j)
        acc[j] =
            _mm512_fmadd_ps(_mm512_loadu_ps(r + j * stride * hp), wv, acc[j]);
    }
  for (int j = 0; j < OB; ++j)
    _mm512_storeu_ps(out + j * hp,
                     _mm512_min_ps(_mm512_max_ps(acc[j], lo), hi));
}

// Columns [ox, ox + n) (n <= 8) of every channel block: their windows
// (n + 2 columns of k rows, all channels) stay in L1 while each block's
// FMAs run; channel blocks outermost streamed every row from L2 once per
// block.
template <int K>
GOPT_IR_TARGET inline void dwBlock(const float *const *rows, int k,
                                   int64_t stride, int64_t hp, const float *w,
                                   const float *b, __m512 vlo, __m512 vhi,
                                   int64_t ox, int64_t n, float *out) {
  for (int64_t c = 0; c < hp; c += 16) {
    const float *rc[8];
    for (int ky = 0; ky < k; ++ky)
      rc[ky] = rows[ky] + c;
    const __m512 bias = _mm512_loadu_ps(b + c);
    // A short last block in one call (independent FMA chains: a 7-wide
    // row one column at a time waited on each chain's latency).
    switch (n) {
#define GOPT_IR_DW_COLUMNS(n)                                                  \
  case n:                                                                      \
    dwColumns<K, n>(rc, k, stride, hp, w + c, bias, vlo, vhi, ox, out + c);    \
    break;
      GOPT_IR_DW_COLUMNS(1)
      GOPT_IR_DW_COLUMNS(2)
      GOPT_IR_DW_COLUMNS(3)
      GOPT_IR_DW_COLUMNS(4)
      GOPT_IR_DW_COLUMNS(5)
      GOPT_IR_DW_COLUMNS(6)
      GOPT_IR_DW_COLUMNS(7)
      GOPT_IR_DW_COLUMNS(8)
#undef GOPT_IR_DW_COLUMNS
    default:
      break;
    }
  }
}

// Depthwise output columns [x0, x1) of one row into out (column x0 first).
GOPT_IR_TARGET void dwRow(const float *const *rows, int k, int64_t stride,
                          int64_t x0, int64_t x1, int64_t hp, const float *w,
                          const float *b, float lo, float hi, float *out) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (int64_t ox = x0; ox < x1; ox += 8) {
    const int64_t n = std::min<int64_t>(8, x1 - ox);
    float *o = out + (ox - x0) * hp;
    if (k == 3)
      dwBlock<3>(rows, k, stride, hp, w, b, vlo, vhi, ox, n, o);
    else
      dwBlock<5>(rows, k, stride, hp, w, b, vlo, vhi, ox, n, o);
  }
}
#endif

} // namespace

std::unique_ptr<InvertedResidualF32>
InvertedResidualF32::create(const InvertedResidualShape &s,
                            const InvertedResidualStage &expand,
                            const InvertedResidualStage &depthwise,
                            const InvertedResidualStage &project, int threads) {
  if (!invertedResidualF32Enabled())
    return nullptr;
  if (s.h <= 0 || s.w <= 0 || s.cin <= 0 || s.hidden <= 0 || s.cout <= 0 ||
      (!s.expand && s.hidden != s.cin) || (s.k != 3 && s.k != 5) ||
      s.stride < 1 || s.stride > s.k || s.padTop < 0 || s.padLeft < 0 ||
      s.padTop >= s.k || s.padLeft >= s.k || s.oh <= 0 || s.ow <= 0 ||
      (s.oh - 1) * s.stride - s.padTop + s.k - 1 > s.h + s.k ||
      (s.ow - 1) * s.stride - s.padLeft + s.k - 1 > s.w + s.k)
    return nullptr;
  const int64_t taps = s.k * s.k;
  if ((s.expand &&
       static_cast<int64_t>(expand.weights.size()) != s.cin * s.hidden) ||
      static_cast<int64_t>(depthwise.weights.size()) != taps * s.hidden ||
      static_cast<int64_t>(project.weights.size()) != s.hidden * s.cout)
    return nullptr;
  auto k = std::unique_ptr<InvertedResidualF32>(new InvertedResidualF32());
  k->s_ = s;
  const int64_t hp = k->hp_ = roundUp16(s.hidden);
  const int64_t cp = k->cp_ = roundUp16(s.cout);
  // Padded columns: padLeft zeros before the row, zeros after it up to the
  // last column the window reads.
  const int64_t right =
      std::max<int64_t>(0, (s.ow - 1) * s.stride - s.padLeft + s.k - s.w);
  k->bufW_ = s.padLeft + s.w + right;
  auto padBias = [](const std::vector<float> &b, int64_t n, int64_t np) {
    std::vector<float> out(np, 0.0f);
    if (!b.empty())
      std::copy(b.begin(), b.begin() + n, out.begin());
    return out;
  };
  if (s.expand) {
    k->we_ = packPanels(expand.weights, s.cin, s.hidden, hp);
    k->be_ = padBias(expand.bias, s.hidden, hp);
    k->elo_ = expand.lo;
    k->ehi_ = expand.hi;
  }
  k->wd_.assign(taps * hp, 0.0f);
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t j = 0; j < s.hidden; ++j)
      k->wd_[t * hp + j] = depthwise.weights[t * s.hidden + j];
  k->bd_ = padBias(depthwise.bias, s.hidden, hp);
  k->dlo_ = depthwise.lo;
  k->dhi_ = depthwise.hi;
  // Padded hidden channels (clamp(0) may not be 0) meet zero weights.
  k->threads_ = std::max(1, threads);
  std::vector<float> wp(hp * s.cout, 0.0f);
  std::copy(project.weights.begin(), project.weights.end(), wp.begin());
  k->wp_ = packPanels(wp, hp, s.cout, cp);
  k->bp_ = padBias(project.bias, s.cout, cp);
  k->plo_ = project.lo;
  k->phi_ = project.hi;
  // Output rows run `chunk_` at a time: the project GEMM's rows are
  // chunk_ x ow pixels (about 96: the packed weights, streamed from L2 for
  // every 6-12 rows, would otherwise dominate the small 14x14 and 7x7
  // blocks), the expand GEMM's all the new source rows of the chunk.
  const int64_t perThread = (s.oh + k->threads_ - 1) / k->threads_;
  k->chunk_ = std::clamp<int64_t>((96 + s.ow - 1) / s.ow, 1, perThread);
  // Where rows do not split evenly among the threads (7 rows on 2: one
  // thread idled a seventh of the block), small images run whole: the
  // threads expand a share of the source pixels each into one shared
  // image, then (after a barrier) run the depthwise and project on a
  // share of the result pixels each.
  k->wholeImage_ = k->threads_ > 1 && s.oh % k->threads_ != 0 &&
                   s.h * k->bufW_ * hp * 4 <= (1 << 20) && wholeImageEnabled();
  if (k->wholeImage_) {
    const int64_t share = (s.oh * s.ow + k->threads_ - 1) / k->threads_;
    k->wsFloats_ = share * hp + 16;
    k->zeros_.assign(k->bufW_ * hp, 0.0f);
    return k;
  }
  // Per thread: a ring of the expanded rows a chunk reads, k - 1 halo rows
  // (in place), the chunk's depthwise rows.
  k->ring_ = (k->chunk_ - 1) * s.stride + s.k;
  k->slots_ = k->ring_ + (s.k - 1);
  k->wsFloats_ = (k->slots_ * k->bufW_ + k->chunk_ * s.ow) * hp + 16;
  k->zeros_.assign(k->bufW_ * hp, 0.0f);
  return k;
}

size_t InvertedResidualF32::workspaceBytes() const {
  // Each thread's rows live in its scratch, shared by all the blocks.
  size_t image = wholeImage_ ? s_.h * bufW_ * hp_ : 0;
  return (wsFloats_ * threads_ + image + zeros_.size()) * sizeof(float);
}

#if defined(__x86_64__)
GOPT_IR_TARGET void InvertedResidualF32::expandRows(const float *src,
                                                    int64_t lo, int64_t hi,
                                                    float *ring, int64_t slots,
                                                    int64_t slot0) const {
  // Source rows [lo, hi) into ring slots (slot0 + row - lo) % slots of
  // padded rows; their pad columns stay zero.
  const int64_t rowFloats = bufW_ * hp_;
  const float *in = src + lo * s_.w * s_.cin;
  if (!s_.expand) {
    for (int64_t r = 0; r < hi - lo; ++r) {
      float *row = ring + (slot0 + r) % slots * rowFloats + s_.padLeft * hp_;
      if (s_.cin == hp_) {
        std::memcpy(row, in + r * s_.w * s_.cin, s_.w * s_.cin * sizeof(float));
        continue;
      }
      for (int64_t x = 0; x < s_.w; ++x) {
        std::memcpy(row + x * hp_, in + (r * s_.w + x) * s_.cin,
                    s_.cin * sizeof(float));
        std::fill(row + x * hp_ + s_.cin, row + (x + 1) * hp_, 0.0f);
      }
    }
    return;
  }
  Epilogue e{be_.data(), false, elo_, ehi_, __mmask16(0xFFFF)};
  CMap c{ring, hp_, s_.w, slot0, slots, rowFloats, s_.padLeft};
  gemm(in, s_.cin, (hi - lo) * s_.w, we_.data(), hp_, s_.cin, c, e);
}

GOPT_IR_TARGET void InvertedResidualF32::runRows(const float *src, float *dst,
                                                 int64_t r0, int64_t r1,
                                                 float *ws, bool inPlace,
                                                 int /*thread*/) const {
  if (r0 >= r1) {
    if (inPlace) {
#pragma omp barrier
    }
    return;
  }
  const int64_t rowFloats = bufW_ * hp_;
  const int64_t k = s_.k, st = s_.stride;
  const float *zeros = zeros_.data();
  // The scratch is shared with other blocks: zero the ring's pad columns.
  if (bufW_ > s_.w)
    for (int64_t slot = 0; slot < slots_; ++slot) {
      float *row = ws + slot * rowFloats;
      std::fill(row, row + s_.padLeft * hp_, 0.0f);
      std::fill(row + (s_.padLeft + s_.w) * hp_, row + rowFloats, 0.0f);
    }
  float *halo = ws + ring_ * rowFloats;
  float *dwOut = ws + slots_ * rowFloats;
  // In place, the source rows outside [r0, r1) are other threads' results
  // (stride 1): expanded into the halo slots before anyone writes.
  auto isHalo = [&](int64_t iy) { return inPlace && (iy < r0 || iy >= r1); };
  auto haloIndex = [&](int64_t iy) {
    return iy < r0 ? iy - (r0 - s_.padTop) : s_.padTop + (iy - r1);
  };
  if (inPlace) {
    const int64_t first = std::max<int64_t>(r0 - s_.padTop, 0);
    const int64_t last = std::min(r1 - 1 - s_.padTop + k - 1, s_.h - 1);
    for (int64_t iy = first; iy <= last; ++iy)
      if (isHalo(iy))
        expandRows(src, iy, iy + 1, halo, 1 << 30, haloIndex(iy));
#pragma omp barrier
  }
  const Epilogue pe{bp_.data(), s_.sum, plo_, phi_,
                    __mmask16((1u << (s_.cout % 16 ? s_.cout % 16 : 16)) - 1)};
  // The ring holds source rows [.., ringHi) at slots iy % ring_.
  int64_t ringHi = 0;
  const float *rows[8];
  for (int64_t oy0 = r0; oy0 < r1; oy0 += chunk_) {
    const int64_t oy1 = std::min(r1, oy0 + chunk_);
    const int64_t a = std::max<int64_t>(oy0 * st - s_.padTop, 0);
    const int64_t b = std::min((oy1 - 1) * st - s_.padTop + k, s_.h);
    int64_t lo = std::max(a, ringHi), hi = b;
    if (inPlace) {
      lo = std::max(lo, r0);
      hi = std::min(hi, r1);
    }
    if (lo < hi)
      expandRows(src, lo, hi, ws, ring_, lo % ring_);
    ringHi = std::max(ringHi, b);
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      for (int64_t ky = 0; ky < k; ++ky) {
        const int64_t iy = oy * st - s_.padTop + ky;
        rows[ky] = iy < 0 || iy >= s_.h ? zeros
                   : isHalo(iy)         ? halo + haloIndex(iy) * rowFloats
                                        : ws + iy % ring_ * rowFloats;
      }
      dwRow(rows, static_cast<int>(k), st, 0, s_.ow, hp_, wd_.data(),
            bd_.data(), dlo_, dhi_, dwOut + (oy - oy0) * s_.ow * hp_);
    }
    CMap c{dst + oy0 * s_.ow * s_.cout, s_.cout};
    gemm(dwOut, hp_, (oy1 - oy0) * s_.ow, wp_.data(), cp_, hp_, c, pe);
  }
}
#endif

#if defined(__x86_64__)
GOPT_IR_TARGET void InvertedResidualF32::runImage(const float *src, float *dst,
                                                  float *image, float *ws,
                                                  int t, int nt) const {
  // Source pixels [p0, p1) expanded into the shared padded image.
  const int64_t rowFloats = bufW_ * hp_;
  const int64_t pixels = s_.h * s_.w;
  const int64_t p0 = pixels * t / nt, p1 = pixels * (t + 1) / nt;
  if (!s_.expand) {
    for (int64_t p = p0; p < p1; ++p) {
      float *px =
          image + (p / s_.w) * rowFloats + (p % s_.w + s_.padLeft) * hp_;
      std::memcpy(px, src + p * s_.cin, s_.cin * sizeof(float));
      std::fill(px + s_.cin, px + hp_, 0.0f);
    }
  } else if (p0 < p1) {
    Epilogue e{be_.data(), false, elo_, ehi_, __mmask16(0xFFFF)};
    CMap c{image, hp_, s_.w, p0 / s_.w, s_.h, rowFloats, s_.padLeft};
    c.x0 = p0 % s_.w;
    gemm(src + p0 * s_.cin, s_.cin, p1 - p0, we_.data(), hp_, s_.cin, c, e);
  }
  // Every source pixel is read (in place: before any result is written).
#pragma omp barrier
  const int64_t out = s_.oh * s_.ow;
  const int64_t q0 = out * t / nt, q1 = out * (t + 1) / nt;
  if (q0 >= q1)
    return;
  const float *rows[8];
  for (int64_t oy = q0 / s_.ow; oy * s_.ow < q1; ++oy) {
    const int64_t x0 = std::max<int64_t>(q0 - oy * s_.ow, 0);
    const int64_t x1 = std::min<int64_t>(q1 - oy * s_.ow, s_.ow);
    for (int64_t ky = 0; ky < s_.k; ++ky) {
      const int64_t iy = oy * s_.stride - s_.padTop + ky;
      rows[ky] = iy < 0 || iy >= s_.h ? zeros_.data() : image + iy * rowFloats;
    }
    dwRow(rows, static_cast<int>(s_.k), s_.stride, x0, x1, hp_, wd_.data(),
          bd_.data(), dlo_, dhi_, ws + (oy * s_.ow + x0 - q0) * hp_);
  }
  const Epilogue pe{bp_.data(), s_.sum, plo_, phi_,
                    __mmask16((1u << (s_.cout % 16 ? s_.cout % 16 : 16)) - 1)};
  gemm(ws, hp_, q1 - q0, wp_.data(), cp_, hp_,
       CMap{dst + q0 * s_.cout, s_.cout}, pe);
}
#endif

void InvertedResidualF32::run(const float *src, float *dst) const {
#if defined(__x86_64__)
  bool inPlace = src == dst;
  // In place, output row r overwrites source row r, which the halo logic
  // of runRows expects; any other aliasing reads a copy of the source.
  std::vector<float> copy;
  if (inPlace &&
      (s_.stride != 1 || s_.oh != s_.h || s_.ow != s_.w || s_.cin != s_.cout)) {
    copy.assign(src, src + s_.h * s_.w * s_.cin);
    src = copy.data();
    inPlace = false;
  }
  const int64_t rows = s_.oh;
  if (wholeImage_) {
    // The master's second scratch holds the expanded image all threads
    // share (pad columns zeroed: the scratch is shared with other blocks).
    const int64_t rowFloats = bufW_ * hp_;
    float *image = threadScratch(s_.h * rowFloats, 1);
    if (bufW_ > s_.w)
      for (int64_t r = 0; r < s_.h; ++r) {
        float *row = image + r * rowFloats;
        std::fill(row, row + s_.padLeft * hp_, 0.0f);
        std::fill(row + (s_.padLeft + s_.w) * hp_, row + rowFloats, 0.0f);
      }
#pragma omp parallel num_threads(threads_)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int64_t share = (s_.oh * s_.ow + nt - 1) / nt;
      runImage(src, dst, image, threadScratch(share * hp_ + 16), t, nt);
    }
    return;
  }
  const int threads = static_cast<int>(std::min<int64_t>(threads_, rows));
  if (threads <= 1) {
    runRows(src, dst, 0, rows, threadScratch(wsFloats_), false, 0);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t r0 = rows * t / nt, r1 = rows * (t + 1) / nt;
    runRows(src, dst, r0, r1, threadScratch(wsFloats_), inPlace, t);
  }
#else
  (void)src;
  (void)dst;
#endif
}

//===----------------------------------------------------------------------===//
// The chain's stages as the kernel's parameters
//===----------------------------------------------------------------------===//

namespace {

using dnnl::memory;

// A conv2d's geometry as the block sees it (NCHW data at batch 1).
struct ConvShape {
  int64_t cin, cout, h, w, kh, kw, groups, stride, padTop, padLeft, oh, ow;
  bool oihw;
};

std::optional<ConvShape> convShape(const KernelConfig &c) {
  if (c.inputShapes.size() < 2 || c.inputShapes.size() > 3 ||
      c.outputShapes.size() != 1 || c.inputTypes[0] != DType::kF32 ||
      c.inputTypes[1] != DType::kF32 || !c.constantInputs[1] ||
      (c.inputShapes.size() == 3 &&
       (c.inputTypes[2] != DType::kF32 || !c.constantInputs[2])))
    return std::nullopt;
  OpAttrs attrs = c.attrs();
  if (attrs.getString("data_format") != "NCHW")
    return std::nullopt;
  const Shape &x = c.inputShapes[0], &f = c.inputShapes[1],
              &y = c.outputShapes[0];
  if (x.size() != 4 || f.size() != 4 || y.size() != 4 || x[0] != 1 ||
      y[0] != 1 ||
      (c.inputShapes.size() == 3 && numElements(c.inputShapes[2]) != y[1]))
    return std::nullopt;
  ConvShape s;
  s.oihw = attrs.getString("filter_format") == "OIHW";
  s.cin = x[1];
  s.h = x[2];
  s.w = x[3];
  s.cout = y[1];
  s.oh = y[2];
  s.ow = y[3];
  s.kh = s.oihw ? f[2] : f[0];
  s.kw = s.oihw ? f[3] : f[1];
  s.groups = attrs.getInt("groups");
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> dilations = attrs.getWindowInts("dilations");
  if (strides.size() != 2 || strides[0] != strides[1] ||
      dilations.size() != 2 || dilations[0] != 1 || dilations[1] != 1 ||
      s.kh != s.kw)
    return std::nullopt;
  s.stride = strides[0];
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  if (pads.size() != 4)
    return std::nullopt;
  StatusOr<WindowDim> wh = computeWindowDim(s.h, s.kh, s.stride, 1, padding,
                                            pads[0], pads[1], false);
  StatusOr<WindowDim> ww = computeWindowDim(s.w, s.kw, s.stride, 1, padding,
                                            pads[2], pads[3], false);
  if (!wh.ok() || !ww.ok() || wh->outSize != s.oh || ww->outSize != s.ow)
    return std::nullopt;
  s.padTop = wh->padBefore;
  s.padLeft = ww->padBefore;
  return s;
}

// The stage's clamp, where its post-ops are one (sum allowed on the last).
bool stageClamp(const ConvPostOps &post, InvertedResidualStage &st) {
  if (!post.tail.empty())
    return false;
  if (post.activation == "none")
    return true;
  st.lo = 0;
  if (post.activation == "relu")
    return true;
  if (post.activation == "relu6") {
    st.hi = 6;
    return true;
  }
  if (post.activation == "clip") {
    st.lo = post.clipMin;
    st.hi = post.clipMax;
    return true;
  }
  return false;
}

// A 1x1 stride-1 dense convolution's weights as [cin][cout].
std::vector<float> pointwiseWeights(const KernelConfig &c, const ConvShape &s) {
  const auto *w = static_cast<const float *>(c.constantInputs[1]);
  std::vector<float> out(s.cin * s.cout);
  for (int64_t i = 0; i < s.cin; ++i)
    for (int64_t o = 0; o < s.cout; ++o)
      out[i * s.cout + o] = s.oihw ? w[o * s.cin + i] : w[i * s.cout + o];
  return out;
}

std::vector<float> biasOf(const KernelConfig &c, int64_t n) {
  if (c.inputShapes.size() < 3)
    return {};
  const auto *b = static_cast<const float *>(c.constantInputs[2]);
  return std::vector<float>(b, b + n);
}

class InvertedResidualKernel : public LayoutKernel {
public:
  explicit InvertedResidualKernel(std::unique_ptr<InvertedResidualF32> k)
      : k_(std::move(k)) {
    const InvertedResidualShape &s = k_->shape();
    src_ = memory::desc({1, s.cin, s.h, s.w}, memory::data_type::f32,
                        memory::format_tag::nhwc);
    dst_ = memory::desc({1, s.cout, s.oh, s.ow}, memory::data_type::f32,
                        memory::format_tag::nhwc);
  }
  memory::desc inputDesc(int i) const override {
    return i == 0 ? src_ : memory::desc();
  }
  memory::desc outputDesc() const override { return dst_; }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    k_->run(inputs[0].data<float>(), outputs[0].data<float>());
    return Status::success();
  }
  const char *implementation() const override { return "gopt-ir-f32"; }
  size_t workspaceBytes() const override { return k_->workspaceBytes(); }

private:
  std::unique_ptr<InvertedResidualF32> k_;
  memory::desc src_, dst_;
};

} // namespace

StatusOr<std::unique_ptr<LayoutKernel>>
createInvertedResidualF32(const std::vector<ConvChainStage> &stages) {
  auto none = [] { return std::unique_ptr<LayoutKernel>(); };
  if (!invertedResidualF32Enabled() || stages.size() < 2 || stages.size() > 3)
    return none();
  std::vector<ConvShape> shapes;
  for (size_t i = 0; i < stages.size(); ++i) {
    if (stages[i].int8 || (i + 1 < stages.size() && stages[i].post.sum))
      return none();
    std::optional<ConvShape> s = convShape(stages[i].config);
    if (!s)
      return none();
    shapes.push_back(*s);
  }
  const bool expand = stages.size() == 3;
  const ConvShape &d = shapes[expand ? 1 : 0];
  const ConvShape &p = shapes.back();
  auto pointwise = [](const ConvShape &s) {
    return s.kh == 1 && s.groups == 1 && s.stride == 1 && s.padTop == 0 &&
           s.padLeft == 0 && s.oh == s.h && s.ow == s.w;
  };
  if (!pointwise(p) || d.groups != d.cin || d.cout != d.cin ||
      p.cin != d.cout || p.h != d.oh || p.w != d.ow || (d.kh != 3 && d.kh != 5))
    return none();
  if (expand && (!pointwise(shapes[0]) || shapes[0].cout != d.cin ||
                 shapes[0].h != d.h || shapes[0].w != d.w))
    return none();
  InvertedResidualShape s;
  s.h = d.h;
  s.w = d.w;
  s.cin = expand ? shapes[0].cin : d.cin;
  s.hidden = d.cin;
  s.cout = p.cout;
  s.expand = expand;
  s.k = d.kh;
  s.stride = d.stride;
  s.padTop = d.padTop;
  s.padLeft = d.padLeft;
  s.oh = d.oh;
  s.ow = d.ow;
  s.sum = stages.back().post.sum;
  InvertedResidualStage e, dw, pr;
  size_t at = 0;
  if (expand) {
    if (!stageClamp(stages[0].post, e))
      return none();
    e.weights = pointwiseWeights(stages[0].config, shapes[0]);
    e.bias = biasOf(stages[0].config, s.hidden);
    at = 1;
  }
  if (!stageClamp(stages[at].post, dw))
    return none();
  {
    const auto *w =
        static_cast<const float *>(stages[at].config.constantInputs[1]);
    const int64_t taps = s.k * s.k;
    dw.weights.resize(taps * s.hidden);
    // GOIHW ([C, 1, k, k]) or HWIO ([k, k, 1, C]) to [k][k][C].
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t j = 0; j < s.hidden; ++j)
        dw.weights[t * s.hidden + j] =
            d.oihw ? w[j * taps + t] : w[t * s.hidden + j];
    dw.bias = biasOf(stages[at].config, s.hidden);
  }
  {
    ConvPostOps post = stages.back().post;
    post.sum = false;
    if (!stageClamp(post, pr))
      return none();
    pr.weights = pointwiseWeights(stages.back().config, p);
    pr.bias = biasOf(stages.back().config, s.cout);
  }
  std::unique_ptr<InvertedResidualF32> k =
      InvertedResidualF32::create(s, e, dw, pr, omp_get_max_threads());
  if (!k)
    return none();
  return std::unique_ptr<LayoutKernel>(
      std::make_unique<InvertedResidualKernel>(std::move(k)));
}

} // namespace gopt::runtime::cpu
