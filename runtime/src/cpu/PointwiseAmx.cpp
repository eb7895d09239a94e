//===- PointwiseAmx.cpp - 1x1 convolution on NHWC bf16 with AMX -----------===//
//
// Per 32 pixels (two 16-row A tiles read in place from the NHWC source,
// the row stride being the input channels) and 32 output channels (two B
// tiles of VNNI-packed weights), four C tiles accumulate the k chunks;
// the chunk is the largest even divisor of k up to 32, so that one tile
// configuration serves every chunk (16, 24 and 144 input channels have no
// 32-channel tail to configure apart). The tiles go to a 4 KiB buffer in
// L1 and the epilogue adds the bias (and the residual already in the
// destination, oneDNN's sum post-op), clamps and rounds to bf16 with the
// same round-to-nearest-even oneDNN uses. The last pixels (fewer than 32)
// are copied into a zero-padded block so no tile reads past the source.
// The int8 kernel (PointwiseInt8Amx, below) is the same scheme with
// TDPBUSD/TDPBSSD and oneDNN's int8 output formula as its epilogue.
//
//===----------------------------------------------------------------------===//

#include "PointwiseAmx.h"
#include "AmxTiles.h"
#include "Bf16Clamp.h"
#include "EnvSwitch.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GOPT_PW_X86 1
// GCC 12 reports the undefined pass-through operand inside avx512fintrin's
// unmasked conversion and rounding wrappers as "maybe uninitialized"
// wherever the epilogues inline them (false reports, hundreds per build).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define GOPT_PW_TARGET                                                         \
  __attribute__((                                                              \
      target("avx512f,avx512bw,avx512vl,avx512bf16,amx-tile,amx-bf16")))
#endif

namespace gopt::runtime::cpu {

namespace {

// The largest multiple of `group` up to `maxKc` that divides k: the k chunk
// one A tile row holds (64 bytes).
int64_t largestChunk(int64_t k, int64_t maxKc, int64_t group) {
  for (int64_t kc = maxKc; kc >= group; kc -= group)
    if (k % kc == 0)
      return kc;
  return group;
}

// Weights [n][k] as B tiles in VNNI order: per block of 16 outputs and k
// chunk of `kc`, kc / group rows of 16 outputs x `group` consecutive inputs.
// Outputs past n (the last block pair's padding) are zero.
template <typename T>
std::vector<T> packVnniBlocks(const std::vector<T> &weights, int64_t k,
                              int64_t n, int64_t kc, int64_t group,
                              int64_t nBlocks) {
  const int64_t chunks = k / kc;
  std::vector<T> packed(nBlocks * chunks * kc * 16, T(0));
  for (int64_t nb = 0; nb < nBlocks; ++nb)
    for (int64_t ch = 0; ch < chunks; ++ch)
      for (int64_t r = 0; r < kc / group; ++r)
        for (int64_t col = 0; col < 16; ++col)
          for (int64_t e = 0; e < group; ++e) {
            const int64_t o = nb * 16 + col, i = ch * kc + group * r + e;
            if (o < n)
              packed[((nb * chunks + ch) * (kc / group) + r) * 16 * group +
                     col * group + e] = weights[o * k + i];
          }
  return packed;
}

} // namespace

bool pointwiseAmxEnabled() {
#ifdef GOPT_PW_X86
  static const bool enabled = [] {
    if (!envSwitchOn("GOPT_POINTWISE_AMX"))
      return false;
    return amxBf16Usable();
  }();
  return enabled;
#else
  return false;
#endif
}

std::unique_ptr<PointwiseBf16Amx>
PointwiseBf16Amx::create(int64_t k, int64_t n,
                         const std::vector<uint16_t> &weights,
                         const std::vector<float> &bias, bool clamp, float lo,
                         float hi, bool sum, int threads) {
  if (!pointwiseAmxEnabled() || k < 2 || k % 2 != 0 || n < 1 ||
      static_cast<int64_t>(weights.size()) != k * n ||
      (!bias.empty() && static_cast<int64_t>(bias.size()) != n))
    return nullptr;
  auto p = std::unique_ptr<PointwiseBf16Amx>(new PointwiseBf16Amx());
  p->k_ = k;
  p->n_ = n;
  p->kc_ = largestChunk(k, 32, 2);
  // Whole pairs of 16-channel blocks: the last one's padding has zero
  // weights and bias, its results are not stored.
  p->nBlocks_ = (n + 31) / 32 * 2;
  p->packed_ = packVnniBlocks(weights, k, n, p->kc_, 2, p->nBlocks_);
  p->bias_.assign(p->nBlocks_ * 16, 0.0f);
  for (int64_t o = 0; o < n && !bias.empty(); ++o)
    p->bias_[o] = bias[o];
  p->clamp_ = clamp;
  p->lo_ = lo;
  p->hi_ = hi;
  p->sum_ = sum;
  p->threads_ = std::max(1, threads);
  // Read per kernel, not once per process, so one process can time both.
  p->fastEpilogue_ = envSwitchOn("GOPT_POINTWISE_AMX_EPILOGUE");
  p->interleave_ = envSwitchOn("GOPT_POINTWISE_AMX_INTERLEAVE");
  p->halfBlocks_ = pointwiseAmxBf16Narrow();
  return p;
}

#ifdef GOPT_PW_X86
namespace {

struct Job {
  int64_t k, n, kc, chunks;
  const uint16_t *packed;
  const float *bias;
  bool clamp, sum;
  float lo, hi;
  // The clamp on the rounded bf16 bits as int16 (bf16Clamp), not in f32.
  bool clamp16;
  uint16_t lo16, hi16;
  // The epilogue specialized per option (epilogueFast), not epilogueGeneric.
  bool fastEpilogue;
  // Tile loads interleaved with the products (tiles32).
  bool interleave;
  // A block of at most 16 outputs on tiles 0 and 1 only (tiles32).
  bool halfBlocks;
};

// The four C tiles of pixels [m0, m0 + 32) by output channels [n0, n0 + 32)
// into `buf` (rows 0-15 then 16-31 of the first 16 outputs, then of the
// second 16). `a0`: the block's first pixel row.
GOPT_PW_TARGET inline void tiles32(const Job &j, const uint16_t *a0,
                                   int64_t strideA, int64_t n0, float *buf) {
  const int64_t nb = n0 / 16;
  const size_t chunkElems = static_cast<size_t>(j.kc) * 16;
  const uint16_t *b0 = j.packed + nb * j.chunks * chunkElems;
  const uint16_t *b1 = b0 + j.chunks * chunkElems;
  const uint16_t *a1 = a0 + 16 * strideA / 2;
  _tile_zero(0);
  _tile_zero(1);
  if (j.halfBlocks && j.n - n0 <= 16) {
    // The second 16 outputs are padding: not computed, not stored (the
    // epilogue's mask drops them). MobileNetV2's 32 -> 16 projection.
    for (int64_t c = 0; c < j.chunks; ++c) {
      _tile_loadd(4, a0 + c * j.kc, strideA);
      _tile_loadd(6, b0 + c * chunkElems, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_loadd(5, a1 + c * j.kc, strideA);
      _tile_dpbf16ps(1, 5, 6);
    }
    _tile_stored(0, buf, 64);
    _tile_stored(1, buf + 256, 64);
    return;
  }
  _tile_zero(2);
  _tile_zero(3);
  if (j.interleave) {
    // Each load just before its first product: a chunk's products start
    // while its other tiles load (576 -> 96 without the epilogue: 23
    // against 27 ns a product). Each C tile sums the chunks in the same
    // order, so the same bits.
    for (int64_t c = 0; c < j.chunks; ++c) {
      _tile_loadd(4, a0 + c * j.kc, strideA);
      _tile_loadd(6, b0 + c * chunkElems, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_loadd(7, b1 + c * chunkElems, 64);
      _tile_dpbf16ps(2, 4, 7);
      _tile_loadd(5, a1 + c * j.kc, strideA);
      _tile_dpbf16ps(1, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  } else {
    for (int64_t c = 0; c < j.chunks; ++c) {
      _tile_loadd(4, a0 + c * j.kc, strideA);
      _tile_loadd(5, a1 + c * j.kc, strideA);
      _tile_loadd(6, b0 + c * chunkElems, 64);
      _tile_loadd(7, b1 + c * chunkElems, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 5, 6);
      _tile_dpbf16ps(2, 4, 7);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, buf, 64);
  _tile_stored(1, buf + 256, 64);
  _tile_stored(2, buf + 512, 64);
  _tile_stored(3, buf + 768, 64);
}

__mmask32 outputMask(const Job &j, int64_t n0) {
  const int64_t valid = std::min<int64_t>(32, j.n - n0);
  return valid == 32 ? 0xFFFFFFFFu : static_cast<__mmask32>((1u << valid) - 1);
}

// The epilogue as first written, its options tested per row
// (GOPT_POINTWISE_AMX_EPILOGUE=0).
GOPT_PW_TARGET void epilogueGeneric(const Job &j, int64_t n0, int64_t rows,
                                    uint16_t *dst, const float *buf) {
  const __mmask32 mask = outputMask(j, n0);
  const __m512 bias0 = _mm512_loadu_ps(j.bias + n0);
  const __m512 bias1 = _mm512_loadu_ps(j.bias + n0 + 16);
  const __m512 lo = _mm512_set1_ps(j.lo), hi = _mm512_set1_ps(j.hi);
  const __m512i lo16 = _mm512_set1_epi16(static_cast<int16_t>(j.lo16));
  const __m512i hi16 = _mm512_set1_epi16(static_cast<int16_t>(j.hi16));
  const bool clamp32 = j.clamp && !j.clamp16;
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = buf + (r / 16) * 256 + (r % 16) * 16;
    __m512 v0 = _mm512_add_ps(_mm512_load_ps(row), bias0);
    __m512 v1 = _mm512_add_ps(_mm512_load_ps(row + 512), bias1);
    uint16_t *out = dst + r * j.n + n0;
    if (j.sum) {
      const __m512i old = _mm512_maskz_loadu_epi16(mask, out);
      const __m512i w0 = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(old));
      const __m512i w1 =
          _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(old, 1));
      v0 = _mm512_add_ps(v0, _mm512_castsi512_ps(_mm512_slli_epi32(w0, 16)));
      v1 = _mm512_add_ps(v1, _mm512_castsi512_ps(_mm512_slli_epi32(w1, 16)));
    }
    if (clamp32) {
      v0 = _mm512_min_ps(_mm512_max_ps(v0, lo), hi);
      v1 = _mm512_min_ps(_mm512_max_ps(v1, lo), hi);
    }
    __m512i packed = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(v1, v0));
    if (j.clamp16)
      packed = _mm512_min_epi16(_mm512_max_epi16(packed, lo16), hi16);
    _mm512_mask_storeu_epi16(out, mask, packed);
  }
}

enum class Clamp { none, f32, bf16 };

struct EpilogueRegs {
  __mmask32 mask;
  __m512 bias0, bias1, lo, hi;
  __m512i lo16, hi16;
};

// One pixel's 32 outputs: the same operations in the same order as
// epilogueGeneric (so the same bits), `old` the residual's bf16 row.
template <bool Sum, Clamp C>
GOPT_PW_TARGET inline __attribute__((always_inline)) void
epilogueRow(const EpilogueRegs &e, const float *row, __m512i old,
            uint16_t *out) {
  __m512 v0 = _mm512_add_ps(_mm512_load_ps(row), e.bias0);
  __m512 v1 = _mm512_add_ps(_mm512_load_ps(row + 512), e.bias1);
  if (Sum) {
    const __m512i w0 = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(old));
    const __m512i w1 = _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(old, 1));
    v0 = _mm512_add_ps(v0, _mm512_castsi512_ps(_mm512_slli_epi32(w0, 16)));
    v1 = _mm512_add_ps(v1, _mm512_castsi512_ps(_mm512_slli_epi32(w1, 16)));
  }
  if (C == Clamp::f32) {
    v0 = _mm512_min_ps(_mm512_max_ps(v0, e.lo), e.hi);
    v1 = _mm512_min_ps(_mm512_max_ps(v1, e.lo), e.hi);
  }
  __m512i packed = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(v1, v0));
  if (C == Clamp::bf16)
    packed = _mm512_min_epi16(_mm512_max_epi16(packed, e.lo16), e.hi16);
  _mm512_mask_storeu_epi16(out, e.mask, packed);
}

// Rows [r0, r0 + count) of a block. With the residual sum and rows
// narrower than a cache line (`Grouped`), the old rows of a group of 8 are
// loaded before any of the group's stores: a masked load right after a
// masked store to the same cache line (24 outputs, 48-byte rows) waited
// for that store, one row after another (144 -> 24 with the residual: 80
// us a 2688-pixel band, 32 us with the loads grouped; wider rows gain
// nothing, 0-3% slower).
template <bool Sum, bool Grouped, Clamp C, int Count>
GOPT_PW_TARGET inline __attribute__((always_inline)) void
epilogueRows(const EpilogueRegs &e, const float *buf, uint16_t *out, int64_t n,
             int64_t r0, int64_t count) {
  const int64_t rows = Count ? Count : count;
  if (!Grouped) {
#pragma GCC unroll 4
    for (int64_t r = r0; r < r0 + rows; ++r)
      epilogueRow<Sum, C>(e, buf + r * 16,
                          Sum ? _mm512_maskz_loadu_epi16(e.mask, out + r * n)
                              : _mm512_setzero_si512(),
                          out + r * n);
    return;
  }
  constexpr int kGroup = 8;
  for (int64_t g = r0; g < r0 + rows; g += kGroup) {
    const int64_t m = std::min<int64_t>(kGroup, r0 + rows - g);
    __m512i old[kGroup];
#pragma GCC unroll 8
    for (int i = 0; i < kGroup; ++i)
      old[i] = i < m ? _mm512_maskz_loadu_epi16(e.mask, out + (g + i) * n)
                     : _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int i = 0; i < kGroup; ++i)
      if (i < m)
        epilogueRow<true, C>(e, buf + (g + i) * 16, old[i], out + (g + i) * n);
  }
}

// The epilogue with its options as template arguments (the per-row tests
// and reloads of Job's fields were most of its instructions: the kernel
// alone takes 0.7-0.85 of the time on MobileNetV2's few-channel expansions
// without them) and whole blocks of 32 rows as a constant trip count.
template <bool Sum, bool Grouped, Clamp C>
GOPT_PW_TARGET void epilogueFast(const Job &j, int64_t n0, int64_t rows,
                                 uint16_t *dst, const float *buf) {
  const EpilogueRegs e{outputMask(j, n0),
                       _mm512_loadu_ps(j.bias + n0),
                       _mm512_loadu_ps(j.bias + n0 + 16),
                       _mm512_set1_ps(j.lo),
                       _mm512_set1_ps(j.hi),
                       _mm512_set1_epi16(static_cast<int16_t>(j.lo16)),
                       _mm512_set1_epi16(static_cast<int16_t>(j.hi16))};
  if (rows == 32)
    epilogueRows<Sum, Grouped, C, 32>(e, buf, dst + n0, j.n, 0, 32);
  else
    epilogueRows<Sum, Grouped, C, 0>(e, buf, dst + n0, j.n, 0, rows);
}

using Epilogue = void (*)(const Job &, int64_t, int64_t, uint16_t *,
                          const float *);

Epilogue chooseEpilogue(const Job &j, bool fast) {
  if (!fast)
    return epilogueGeneric;
  const Clamp c = !j.clamp ? Clamp::none : j.clamp16 ? Clamp::bf16 : Clamp::f32;
  static const Epilogue table[3][3] = {
      {epilogueFast<false, false, Clamp::none>,
       epilogueFast<false, false, Clamp::f32>,
       epilogueFast<false, false, Clamp::bf16>},
      {epilogueFast<true, false, Clamp::none>,
       epilogueFast<true, false, Clamp::f32>,
       epilogueFast<true, false, Clamp::bf16>},
      {epilogueFast<true, true, Clamp::none>,
       epilogueFast<true, true, Clamp::f32>,
       epilogueFast<true, true, Clamp::bf16>}};
  // Rows of fewer than 32 outputs share cache lines.
  const int residual = !j.sum ? 0 : j.n < 32 ? 2 : 1;
  return table[residual][static_cast<int>(c)];
}

GOPT_PW_TARGET void runRange(const Job &j, const uint16_t *src, uint16_t *dst,
                             int64_t pixels, int64_t firstBlock,
                             int64_t endBlock) {
  if (firstBlock >= endBlock)
    return;
  const Epilogue epilogue = chooseEpilogue(j, j.fastEpilogue);
  TileConfig cfg;
  for (int t = 0; t < 4; ++t) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  for (int t = 4; t < 6; ++t) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = static_cast<uint16_t>(j.kc * 2);
  }
  for (int t = 6; t < 8; ++t) {
    cfg.rows[t] = static_cast<uint8_t>(j.kc / 2);
    cfg.colsb[t] = 64;
  }
  // Zeroed: half blocks leave the upper 16 outputs' tiles unwritten.
  alignas(64) float buf[1024] = {};
  std::vector<uint16_t> tail;
  loadTileConfig(cfg);
  const int64_t strideA = j.k * 2;
  for (int64_t mb = firstBlock; mb < endBlock; ++mb) {
    const int64_t m0 = mb * 32, rows = std::min<int64_t>(32, pixels - m0);
    const uint16_t *a = src + m0 * j.k;
    if (rows < 32) {
      tail.assign(32 * j.k, 0);
      std::memcpy(tail.data(), a, rows * j.k * sizeof(uint16_t));
      a = tail.data();
    }
    for (int64_t n0 = 0; n0 < j.n; n0 += 32) {
      tiles32(j, a, strideA, n0, buf);
      epilogue(j, n0, rows, dst + m0 * j.n, buf);
    }
  }
  _tile_release();
}

} // namespace
#endif

// Clamps on the rounded bf16 bits where bf16ClampBounds allows;
// GOPT_POINTWISE_AMX_BF16_CLAMP=0 clamps in f32.
static bool bf16Clamp(float lo, float hi, uint16_t &lo16, uint16_t &hi16) {
  static const bool on = envSwitchOn("GOPT_POINTWISE_AMX_BF16_CLAMP");
  return on && bf16ClampBounds(lo, hi, lo16, hi16);
}

void PointwiseBf16Amx::run(const uint16_t *src, uint16_t *dst,
                           int64_t pixels) const {
#ifdef GOPT_PW_X86
  Job j{k_,           n_,     kc_,  k_ / kc_,      packed_.data(),
        bias_.data(), clamp_, sum_, lo_,           hi_,
        false,        0,      0,    fastEpilogue_, interleave_,
        halfBlocks_};
  j.clamp16 = clamp_ && bf16Clamp(lo_, hi_, j.lo16, j.hi16);
  const int64_t blocks = (pixels + 31) / 32;
  const int threads = static_cast<int>(
      std::min<int64_t>(threads_, std::max<int64_t>(1, blocks / 4)));
  if (threads <= 1) {
    runRange(j, src, dst, pixels, 0, blocks);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    runRange(j, src, dst, pixels, blocks * t / nt, blocks * (t + 1) / nt);
  }
#endif
}

} // namespace gopt::runtime::cpu

//===----------------------------------------------------------------------===//
// int8: the same blocks with TDPBUSD / TDPBSSD (four input channels a
// dword, k chunks of the largest multiple of 4 dividing k up to 64) and
// oneDNN's int8 epilogue in f32.
//===----------------------------------------------------------------------===//

#ifdef GOPT_PW_X86
#define GOPT_PW_TARGET_I8                                                      \
  __attribute__((                                                              \
      target("avx512f,avx512bw,avx512vl,avx512bf16,amx-tile,amx-int8")))
#endif

namespace gopt::runtime::cpu {

bool pointwiseAmxInt8Enabled() {
#ifdef GOPT_PW_X86
  static const bool enabled = [] {
    if (!envSwitchOn("GOPT_POINTWISE_AMX_INT8"))
      return false;
    return amxBf16Usable(); // AMX-BF16 and AMX-INT8 come together
  }();
  return enabled;
#else
  return false;
#endif
}

bool pointwiseAmxBf16Narrow() {
  return envSwitchOn("GOPT_POINTWISE_AMX_BF16_NARROW");
}

bool pointwiseAmxInt8Narrow() {
  static const bool on = envSwitchOn("GOPT_POINTWISE_AMX_INT8_NARROW");
  return on;
}

std::unique_ptr<PointwiseInt8Amx>
PointwiseInt8Amx::create(int64_t k, int64_t n,
                         const std::vector<int8_t> &weights,
                         const PointwiseInt8Params &params, int threads) {
  if (!pointwiseAmxInt8Enabled() || k < 4 || k % 4 != 0 || n < 1 ||
      static_cast<int64_t>(weights.size()) != k * n ||
      static_cast<int64_t>(params.scale.size()) != n ||
      (!params.biasScaled.empty() &&
       static_cast<int64_t>(params.biasScaled.size()) != n))
    return nullptr;
  auto p = std::unique_ptr<PointwiseInt8Amx>(new PointwiseInt8Amx());
  p->k_ = k;
  p->n_ = n;
  p->kc_ = largestChunk(k, 64, 4);
  p->nBlocks_ = (n + 31) / 32 * 2;
  const std::vector<int8_t> packed =
      packVnniBlocks(weights, k, n, p->kc_, 4, p->nBlocks_);
  p->packed_.assign(packed.begin(), packed.end());
  p->scale_.assign(p->nBlocks_ * 16, 0.0f);
  p->bias_.assign(p->nBlocks_ * 16, 0.0f);
  for (int64_t o = 0; o < n; ++o) {
    p->scale_[o] = params.scale[o];
    if (!params.biasScaled.empty())
      p->bias_[o] = params.biasScaled[o];
  }
  p->p_ = params;
  p->p_.scale.clear();
  p->p_.biasScaled.clear();
  // The conversion saturates to the destination's range.
  p->p_.lo = std::max(params.lo, params.dstUnsigned ? 0.0f : -128.0f);
  p->p_.hi = std::min(params.hi, params.dstUnsigned ? 255.0f : 127.0f);
  p->threads_ = std::max(1, threads);
  p->groupResidualLoads_ = envSwitchOn("GOPT_POINTWISE_AMX_INT8_GROUPED");
  // The packed epilogue rounds before it clamps: round(clamp(v, lo, hi))
  // is clamp(round(v), round(lo), round(hi)) (rounding and saturating are
  // monotonic), provided the int32 conversion cannot overflow (it would
  // give INT_MIN for a large positive v). Bound |v| from the largest
  // possible sum; a NaN or infinite bound keeps the f32 clamp.
  const double accMax =
      double(k) * 128.0 * (params.srcUnsigned ? 255.0 : 128.0);
  double bound = 0;
  for (int64_t o = 0; o < n; ++o)
    bound = std::max(bound, (accMax + std::fabs(double(p->bias_[o]))) *
                                std::fabs(double(p->scale_[o])));
  if (params.requantize)
    bound = 128.0 * std::fabs(double(params.requantScale));
  if (params.sum)
    bound += 255.0 * std::fabs(double(params.sumScale));
  const float byteMin = params.dstUnsigned ? 0.0f : -128.0f,
              byteMax = params.dstUnsigned ? 255.0f : 127.0f;
  auto toByte = [&](float v) {
    const int i = static_cast<int>(
        std::nearbyint(std::min(std::max(v, byteMin), byteMax)));
    return static_cast<int8_t>(static_cast<uint8_t>(i));
  };
  // Per-call minima, one thread: 1.1-1.3x for 96 to 576 outputs (the
  // expansions), 1.05x for 96 -> 24 and the 144 -> 24 residual.
  p->packedEpilogue_ = envSwitchOn("GOPT_POINTWISE_AMX_INT8_PACKED") &&
                       bound < 1073741824.0 && !std::isnan(p->p_.lo) &&
                       !std::isnan(p->p_.hi);
  // Pipelining: 1.0-1.1x (per-call minima, one thread), never slower
  // beyond the noise once the weights sat on cache lines.
  p->pipeline_ = envSwitchOn("GOPT_POINTWISE_AMX_INT8_PIPELINE");
  p->keepA_ = p->kc_ == k && envSwitchOn("GOPT_POINTWISE_AMX_INT8_KEEP_A");
  p->halfBlocks_ = envSwitchOn("GOPT_POINTWISE_AMX_INT8_NARROW");
  p->loByte_ = toByte(p->p_.lo);
  p->hiByte_ = toByte(p->p_.hi);
  return p;
}

#ifdef GOPT_PW_X86
namespace {

struct JobI8 {
  int64_t k, n, kc, chunks;
  const int8_t *packed;
  const float *scale, *bias;
  const PointwiseInt8Params *p;
  bool groupResidualLoads;
  bool packedEpilogue;
  int8_t loByte, hiByte;
  bool pipeline, keepA, halfBlocks;
};

// The epilogue's constants in registers: the byte stores could alias a
// PointwiseInt8Params read through a reference, so the compiler would
// reload them every row.
struct EpilogueI8 {
  __m512 lo, hi, requantScale, sumScale;
  bool oldSigned;
};

// One 16-channel vector of the epilogue: int32 sums -> f32 -> the int8
// formula -> int32 (rounded to nearest even, as oneDNN's cvtps2dq).
template <bool Requantize, bool Sum>
GOPT_PW_TARGET_I8 inline __m512i epilogue16(const EpilogueI8 &e, __m512i acc,
                                            __m512 bias, __m512 scale,
                                            __m128i old) {
  __m512 v = _mm512_mul_ps(_mm512_add_ps(_mm512_cvtepi32_ps(acc), bias), scale);
  if (Requantize) {
    v = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-128.0f)),
                      _mm512_set1_ps(127.0f));
    v = _mm512_mul_ps(v, e.requantScale);
  }
  if (Sum) {
    const __m512i wide =
        e.oldSigned ? _mm512_cvtepi8_epi32(old) : _mm512_cvtepu8_epi32(old);
    v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(wide), e.sumScale, v);
  }
  v = _mm512_min_ps(_mm512_max_ps(v, e.lo), e.hi);
  return _mm512_cvtps_epi32(v);
}

// The epilogue's per-block registers: the output masks, bias and scale of
// a block's 32 outputs.
struct RowRegsI8 {
  __mmask16 mask0, mask1;
  __m512 bias0, bias1, scale0, scale1;
};

// Row r of a 32x32 block of int32 sums stored as four 16x16 tiles.
inline const int32_t *rowOfTiles(const int32_t *buf, int64_t r) {
  return buf + (r / 16) * 256 + (r % 16) * 16;
}

// One pixel's 32 outputs; `old0`/`old1` the residual's bytes.
template <bool Requantize, bool Sum, bool DstUnsigned>
GOPT_PW_TARGET_I8 inline __attribute__((always_inline)) void
epilogueRowI8(const EpilogueI8 &e, const RowRegsI8 &regs, const int32_t *row,
              __m128i old0, __m128i old1, uint8_t *out) {
  const __m512i i0 = epilogue16<Requantize, Sum>(e, _mm512_load_si512(row),
                                                 regs.bias0, regs.scale0, old0);
  const __m512i i1 = epilogue16<Requantize, Sum>(
      e, _mm512_load_si512(row + 512), regs.bias1, regs.scale1, old1);
  // Values are within the destination's range: the saturating pack only
  // narrows.
  if (DstUnsigned) {
    _mm512_mask_cvtusepi32_storeu_epi8(out, regs.mask0, i0);
    _mm512_mask_cvtusepi32_storeu_epi8(out + 16, regs.mask1, i1);
  } else {
    _mm512_mask_cvtsepi32_storeu_epi8(out, regs.mask0, i0);
    _mm512_mask_cvtsepi32_storeu_epi8(out + 16, regs.mask1, i1);
  }
}

// The optional steps are template arguments: branches in the per-row
// epilogue (the kernel's bottleneck for few input channels) cost 10-20%.
// `Grouped`: with a residual on rows of fewer than 32 bytes, the old bytes
// of 8 rows are loaded before any of their stores, as in the bf16 epilogue
// (a masked load right after a masked store to the same cache line waits
// for that store).
// The int32 sums of 32 pixels x outputs [n0, n0 + 32) in the four C
// tiles (0-3: 16x16 each).
GOPT_PW_TARGET_I8 inline __attribute__((always_inline)) void
tilesI8(const JobI8 &j, bool srcUnsigned, const uint8_t *a0, int64_t strideA,
        int64_t n0, bool loadA = true, bool half = false) {
  const int64_t nb = n0 / 16;
  const size_t chunkElems = static_cast<size_t>(j.kc) * 16;
  const int8_t *b0 = j.packed + nb * j.chunks * chunkElems;
  const int8_t *b1 = b0 + j.chunks * chunkElems;
  const uint8_t *a1 = a0 + 16 * strideA;
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  if (srcUnsigned) {
    for (int64_t c = 0; c < j.chunks; ++c) {
      if (loadA) {
        _tile_loadd(4, a0 + c * j.kc, strideA);
        _tile_loadd(5, a1 + c * j.kc, strideA);
      }
      _tile_loadd(6, b0 + c * chunkElems, 64);
      _tile_dpbusd(0, 4, 6);
      _tile_dpbusd(1, 5, 6);
      if (!half) {
        _tile_loadd(7, b1 + c * chunkElems, 64);
        _tile_dpbusd(2, 4, 7);
        _tile_dpbusd(3, 5, 7);
      }
    }
  } else {
    for (int64_t c = 0; c < j.chunks; ++c) {
      if (loadA) {
        _tile_loadd(4, a0 + c * j.kc, strideA);
        _tile_loadd(5, a1 + c * j.kc, strideA);
      }
      _tile_loadd(6, b0 + c * chunkElems, 64);
      _tile_dpbssd(0, 4, 6);
      _tile_dpbssd(1, 5, 6);
      if (!half) {
        _tile_loadd(7, b1 + c * chunkElems, 64);
        _tile_dpbssd(2, 4, 7);
        _tile_dpbssd(3, 5, 7);
      }
    }
  }
}

// The four C tiles to `buf` (with `half`, tiles 0 and 1 only: at most 16
// outputs).
GOPT_PW_TARGET_I8 inline __attribute__((always_inline)) void
storeTilesI8(int32_t *buf, bool half = false) {
  _tile_stored(0, buf, 64);
  _tile_stored(1, buf + 256, 64);
  if (half)
    return;
  _tile_stored(2, buf + 512, 64);
  _tile_stored(3, buf + 768, 64);
}

template <bool Requantize, bool Sum, bool DstUnsigned, bool Grouped>
GOPT_PW_TARGET_I8 void block32I8(const JobI8 &j, bool srcUnsigned,
                                 const uint8_t *a0, int64_t strideA, int64_t n0,
                                 int64_t rows, uint8_t *dst, int32_t *buf) {
  tilesI8(j, srcUnsigned, a0, strideA, n0);
  storeTilesI8(buf);
  const PointwiseInt8Params &p = *j.p;
  const EpilogueI8 e{_mm512_set1_ps(p.lo), _mm512_set1_ps(p.hi),
                     _mm512_set1_ps(p.requantScale), _mm512_set1_ps(p.sumScale),
                     p.sumSigned || !p.dstUnsigned};
  const int64_t valid = std::min<int64_t>(32, j.n - n0);
  const __mmask16 mask0 =
      valid >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << valid) - 1);
  const __mmask16 mask1 = valid >= 32 ? 0xFFFF
                          : valid > 16
                              ? static_cast<__mmask16>((1u << (valid - 16)) - 1)
                              : 0;
  const RowRegsI8 regs{mask0,
                       mask1,
                       _mm512_loadu_ps(j.bias + n0),
                       _mm512_loadu_ps(j.bias + n0 + 16),
                       _mm512_loadu_ps(j.scale + n0),
                       _mm512_loadu_ps(j.scale + n0 + 16)};
  uint8_t *out = dst + n0;
  if (!Sum || !Grouped) {
    for (int64_t r = 0; r < rows; ++r) {
      __m128i old0 = _mm_setzero_si128(), old1 = _mm_setzero_si128();
      if (Sum) {
        old0 = _mm_maskz_loadu_epi8(mask0, out + r * j.n);
        old1 = _mm_maskz_loadu_epi8(mask1, out + r * j.n + 16);
      }
      epilogueRowI8<Requantize, Sum, DstUnsigned>(e, regs, rowOfTiles(buf, r),
                                                  old0, old1, out + r * j.n);
    }
    return;
  }
  constexpr int kGroup = 8;
  for (int64_t g = 0; g < rows; g += kGroup) {
    const int64_t m = std::min<int64_t>(kGroup, rows - g);
    __m128i old0[kGroup], old1[kGroup];
#pragma GCC unroll 8
    for (int i = 0; i < kGroup; ++i) {
      old0[i] = i < m ? _mm_maskz_loadu_epi8(mask0, out + (g + i) * j.n)
                      : _mm_setzero_si128();
      old1[i] = i < m ? _mm_maskz_loadu_epi8(mask1, out + (g + i) * j.n + 16)
                      : _mm_setzero_si128();
    }
#pragma GCC unroll 8
    for (int i = 0; i < kGroup; ++i)
      if (i < m)
        epilogueRowI8<Requantize, Sum, DstUnsigned>(
            e, regs, rowOfTiles(buf, g + i), old0[i], old1[i],
            out + (g + i) * j.n);
  }
}

// One 16-channel vector of the epilogue up to the rounded int32 values,
// without the f32 clamp (epiloguePackedI8 clamps the bytes).
template <bool Requantize, bool Sum>
GOPT_PW_TARGET_I8 inline __m512i unclamped16(const EpilogueI8 &e, __m512i acc,
                                             __m512 bias, __m512 scale,
                                             __m128i old) {
  __m512 v = _mm512_mul_ps(_mm512_add_ps(_mm512_cvtepi32_ps(acc), bias), scale);
  if (Requantize) {
    v = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-128.0f)),
                      _mm512_set1_ps(127.0f));
    v = _mm512_mul_ps(v, e.requantScale);
  }
  if (Sum) {
    const __m512i wide =
        e.oldSigned ? _mm512_cvtepi8_epi32(old) : _mm512_cvtepu8_epi32(old);
    v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(wide), e.sumScale, v);
  }
  return _mm512_cvtps_epi32(v);
}

// block32I8's epilogue with the clamp after rounding, on bytes: two rows' four
// vectors of int32 narrow with two VPACKSSDW and one VPACKUSWB/VPACKSSWB
// (saturating, so only values the clamp would move are changed), one byte
// min/max clamps 64 outputs, and one VPERMD puts each row's 32 bytes in
// order; the two rows are stored from the halves. Saturating and rounding
// are monotonic, so this is the same as clamping in f32 and narrowing each
// vector with VPMOVUSDB (8 fewer shuffle-port operations for 64 outputs and
// no f32 min/max). The residual's old bytes of 8 rows are loaded before
// their stores (as Grouped).
template <bool Requantize, bool Sum, bool DstUnsigned>
GOPT_PW_TARGET_I8 void epiloguePackedI8(const JobI8 &j, int64_t n0,
                                        int64_t rows, uint8_t *dst,
                                        const int32_t *buf) {
  const PointwiseInt8Params &p = *j.p;
  const EpilogueI8 e{_mm512_setzero_ps(), _mm512_setzero_ps(),
                     _mm512_set1_ps(p.requantScale), _mm512_set1_ps(p.sumScale),
                     p.sumSigned || !p.dstUnsigned};
  const int64_t valid = std::min<int64_t>(32, j.n - n0);
  const __mmask16 mask0 =
      valid >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << valid) - 1);
  const __mmask16 mask1 = valid >= 32 ? 0xFFFF
                          : valid > 16
                              ? static_cast<__mmask16>((1u << (valid - 16)) - 1)
                              : 0;
  const __mmask32 mask32 =
      valid >= 32 ? 0xFFFFFFFFu : static_cast<__mmask32>((1u << valid) - 1);
  const __m512 bias0 = _mm512_loadu_ps(j.bias + n0),
               bias1 = _mm512_loadu_ps(j.bias + n0 + 16),
               scale0 = _mm512_loadu_ps(j.scale + n0),
               scale1 = _mm512_loadu_ps(j.scale + n0 + 16);
  const __m512i lo = _mm512_set1_epi8(j.loByte),
                hi = _mm512_set1_epi8(j.hiByte);
  // Dword d of the packed vector holds outputs 4(d/4)..+3 of vector d%4
  // (row r's two, then row r + 1's): row r's 32 bytes first.
  const __m512i order =
      _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  uint8_t *out = dst + n0;
  constexpr int kGroup = 8;
  if (valid <= 16) {
    // At most 16 outputs (tiles 0 and 1 only, as tilesI8 leaves them):
    // four rows' vectors make one packed vector, each row's 16 bytes in
    // its own lane after the same permute.
    for (int64_t g = 0; g < rows; g += kGroup) {
      const int64_t m = std::min<int64_t>(kGroup, rows - g);
      __m128i old0[kGroup];
#pragma GCC unroll 8
      for (int i = 0; i < kGroup; ++i) {
        old0[i] = _mm_setzero_si128();
        if (Sum && i < m)
          old0[i] = _mm_maskz_loadu_epi8(mask0, out + (g + i) * j.n);
      }
#pragma GCC unroll 2
      for (int i = 0; i < kGroup; i += 4) {
        if (i >= m)
          break;
        __m512i v[4];
        for (int r = 0; r < 4; ++r)
          v[r] = unclamped16<Requantize, Sum>(
              e, _mm512_load_si512(rowOfTiles(buf, g + i + r)), bias0, scale0,
              old0[i + r]);
        const __m512i w01 = _mm512_packs_epi32(v[0], v[1]),
                      w23 = _mm512_packs_epi32(v[2], v[3]);
        __m512i b;
        if (DstUnsigned) {
          b = _mm512_packus_epi16(w01, w23);
          b = _mm512_min_epu8(_mm512_max_epu8(b, lo), hi);
        } else {
          b = _mm512_packs_epi16(w01, w23);
          b = _mm512_min_epi8(_mm512_max_epi8(b, lo), hi);
        }
        b = _mm512_permutexvar_epi32(order, b);
        _mm_mask_storeu_epi8(out + (g + i) * j.n, mask0,
                             _mm512_castsi512_si128(b));
        if (i + 1 < m)
          _mm_mask_storeu_epi8(out + (g + i + 1) * j.n, mask0,
                               _mm512_extracti32x4_epi32(b, 1));
        if (i + 2 < m)
          _mm_mask_storeu_epi8(out + (g + i + 2) * j.n, mask0,
                               _mm512_extracti32x4_epi32(b, 2));
        if (i + 3 < m)
          _mm_mask_storeu_epi8(out + (g + i + 3) * j.n, mask0,
                               _mm512_extracti32x4_epi32(b, 3));
      }
    }
    return;
  }
  for (int64_t g = 0; g < rows; g += kGroup) {
    const int64_t m = std::min<int64_t>(kGroup, rows - g);
    __m128i old0[kGroup], old1[kGroup];
#pragma GCC unroll 8
    for (int i = 0; i < kGroup; ++i) {
      old0[i] = old1[i] = _mm_setzero_si128();
      if (Sum && i < m) {
        old0[i] = _mm_maskz_loadu_epi8(mask0, out + (g + i) * j.n);
        old1[i] = _mm_maskz_loadu_epi8(mask1, out + (g + i) * j.n + 16);
      }
    }
#pragma GCC unroll 4
    for (int i = 0; i < kGroup; i += 2) {
      if (i >= m)
        break;
      // Rows past `rows` (at most the odd last one) are the padded block's:
      // computed, never stored.
      const int32_t *r0 = rowOfTiles(buf, g + i),
                    *r1 = rowOfTiles(buf, g + i + 1);
      const __m512i v0 = unclamped16<Requantize, Sum>(e, _mm512_load_si512(r0),
                                                      bias0, scale0, old0[i]);
      const __m512i v1 = unclamped16<Requantize, Sum>(
          e, _mm512_load_si512(r0 + 512), bias1, scale1, old1[i]);
      const __m512i v2 = unclamped16<Requantize, Sum>(
          e, _mm512_load_si512(r1), bias0, scale0, old0[i + 1]);
      const __m512i v3 = unclamped16<Requantize, Sum>(
          e, _mm512_load_si512(r1 + 512), bias1, scale1, old1[i + 1]);
      const __m512i w01 = _mm512_packs_epi32(v0, v1),
                    w23 = _mm512_packs_epi32(v2, v3);
      __m512i b;
      if (DstUnsigned) {
        b = _mm512_packus_epi16(w01, w23);
        b = _mm512_min_epu8(_mm512_max_epu8(b, lo), hi);
      } else {
        b = _mm512_packs_epi16(w01, w23);
        b = _mm512_min_epi8(_mm512_max_epi8(b, lo), hi);
      }
      b = _mm512_permutexvar_epi32(order, b);
      _mm256_mask_storeu_epi8(out + (g + i) * j.n, mask32,
                              _mm512_castsi512_si256(b));
      if (i + 1 < m)
        _mm256_mask_storeu_epi8(out + (g + i + 1) * j.n, mask32,
                                _mm512_extracti64x4_epi64(b, 1));
    }
  }
}

GOPT_PW_TARGET_I8 void runRangeI8(const JobI8 &j, const uint8_t *src,
                                  uint8_t *dst, int64_t pixels,
                                  int64_t firstBlock, int64_t endBlock) {
  if (firstBlock >= endBlock)
    return;
  TileConfig cfg;
  for (int t = 0; t < 4; ++t) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = 64;
  }
  for (int t = 4; t < 6; ++t) {
    cfg.rows[t] = 16;
    cfg.colsb[t] = static_cast<uint16_t>(j.kc);
  }
  for (int t = 6; t < 8; ++t) {
    cfg.rows[t] = static_cast<uint8_t>(j.kc / 4);
    cfg.colsb[t] = 64;
  }
  alignas(64) int32_t buf[1024];
  std::vector<uint8_t> tail;
  loadTileConfig(cfg);
  const bool srcUnsigned = j.p->srcUnsigned;
  using Block = void (*)(const JobI8 &, bool, const uint8_t *, int64_t, int64_t,
                         int64_t, uint8_t *, int32_t *);
  static const Block blocks[2][8] = {
      {block32I8<false, false, false, false>,
       block32I8<false, false, true, false>,
       block32I8<false, true, false, false>,
       block32I8<false, true, true, false>,
       block32I8<true, false, false, false>,
       block32I8<true, false, true, false>, block32I8<true, true, false, false>,
       block32I8<true, true, true, false>},
      {block32I8<false, false, false, true>,
       block32I8<false, false, true, true>, block32I8<false, true, false, true>,
       block32I8<false, true, true, true>, block32I8<true, false, false, true>,
       block32I8<true, false, true, true>, block32I8<true, true, false, true>,
       block32I8<true, true, true, true>}};
  // Measured on one thread, 40 rounds' minimum: 144 -> 24 channels with
  // the residual 133 -> 63 us an image of 56x56, 64 -> 16 0.975x; 32, 40,
  // 48, 64 and 96 outputs gain nothing or lose up to 9%.
  const bool grouped = j.groupResidualLoads && j.p->sum && j.n < 32;
  const int variant = (j.p->requantize ? 4 : 0) + (j.p->sum ? 2 : 0) +
                      (j.p->dstUnsigned ? 1 : 0);
  // A 32-pixel block's source: in place, or the last pixels zero-padded.
  auto blockSource = [&](int64_t mb) {
    const int64_t m0 = mb * 32, rows = std::min<int64_t>(32, pixels - m0);
    const uint8_t *a = src + m0 * j.k;
    if (rows < 32) {
      tail.assign(32 * j.k, 0);
      std::memcpy(tail.data(), a, rows * j.k);
      a = tail.data();
    }
    return a;
  };
  if (j.packedEpilogue) {
    using Epilogue =
        void (*)(const JobI8 &, int64_t, int64_t, uint8_t *, const int32_t *);
    static const Epilogue epilogues[8] = {epiloguePackedI8<false, false, false>,
                                          epiloguePackedI8<false, false, true>,
                                          epiloguePackedI8<false, true, false>,
                                          epiloguePackedI8<false, true, true>,
                                          epiloguePackedI8<true, false, false>,
                                          epiloguePackedI8<true, false, true>,
                                          epiloguePackedI8<true, true, false>,
                                          epiloguePackedI8<true, true, true>};
    const Epilogue epilogue = epilogues[variant];
    // Pipelined: the next block's tile products are issued before this
    // block's epilogue and stored after it, so the AMX unit works while the
    // vector units run the epilogue instead of each waiting for the other
    // (GOPT_POINTWISE_AMX_INT8_PIPELINE=0: one block at a time). The tile
    // stores come after the epilogue: before it, its stores would wait
    // behind them (stores retire in order).
    alignas(64) int32_t bufs[2][1024];
    int64_t mb = firstBlock, n0 = 0;
    const uint8_t *a = blockSource(mb);
    // A block of at most 16 outputs skips the products and stores of the
    // tiles past them (the 32 -> 16 projection: half the work).
    auto half = [&](int64_t n0) { return j.halfBlocks && j.n - n0 <= 16; };
    tilesI8(j, srcUnsigned, a, j.k, n0, true, half(n0));
    storeTilesI8(bufs[0], half(n0));
    for (int cur = 0;; cur ^= 1) {
      int64_t nextMb = mb, nextN0 = n0 + 32;
      if (nextN0 >= j.n)
        nextN0 = 0, ++nextMb;
      const bool more = nextMb < endBlock;
      const uint8_t *nextA = nextMb == mb ? a : nullptr;
      // One k chunk: the A tiles still hold this block's pixels for the
      // next 32 outputs (GOPT_POINTWISE_AMX_INT8_KEEP_A).
      const bool loadA = nextMb != mb || !j.keepA;
      if (more && j.pipeline) {
        nextA = nextA ? nextA : blockSource(nextMb);
        tilesI8(j, srcUnsigned, nextA, j.k, nextN0, loadA, half(nextN0));
      }
      epilogue(j, n0, std::min<int64_t>(32, pixels - mb * 32),
               dst + mb * 32 * j.n, bufs[cur]);
      if (!more)
        break;
      if (!j.pipeline) {
        nextA = nextA ? nextA : blockSource(nextMb);
        tilesI8(j, srcUnsigned, nextA, j.k, nextN0, loadA, half(nextN0));
      }
      storeTilesI8(bufs[cur ^ 1], half(nextN0));
      mb = nextMb, n0 = nextN0, a = nextA;
    }
    _tile_release();
    return;
  }
  const Block block = blocks[grouped ? 1 : 0][variant];
  for (int64_t mb = firstBlock; mb < endBlock; ++mb) {
    const uint8_t *a = blockSource(mb);
    const int64_t rows = std::min<int64_t>(32, pixels - mb * 32);
    for (int64_t n0 = 0; n0 < j.n; n0 += 32)
      block(j, srcUnsigned, a, j.k, n0, rows, dst + mb * 32 * j.n, buf);
  }
  _tile_release();
}

} // namespace
#endif

void PointwiseInt8Amx::run(const uint8_t *src, uint8_t *dst,
                           int64_t pixels) const {
#ifdef GOPT_PW_X86
  JobI8 j{k_,
          n_,
          kc_,
          k_ / kc_,
          packed_.data(),
          scale_.data(),
          bias_.data(),
          &p_,
          groupResidualLoads_,
          packedEpilogue_,
          loByte_,
          hiByte_,
          pipeline_,
          keepA_,
          halfBlocks_};
  const int64_t blocks = (pixels + 31) / 32;
  const int threads = static_cast<int>(
      std::min<int64_t>(threads_, std::max<int64_t>(1, blocks / 4)));
  if (threads <= 1) {
    runRangeI8(j, src, dst, pixels, 0, blocks);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    runRangeI8(j, src, dst, pixels, blocks * t / nt, blocks * (t + 1) / nt);
  }
#endif
}

} // namespace gopt::runtime::cpu
