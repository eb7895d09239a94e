//===- AmxConvFilterGrad.cpp - wide bf16 conv filter gradients on AMX -----===//
//
// dW[t][ci][co] = sum over pixels p of x-window(t)[p][ci] * dy[p][co] for an
// NHWC bf16 convolution with many channels (ResNet's 3x3 and 1x1 layers):
// a reduction over all the batch's pixels (N * OH * OW, 1,568 to 100,352 at
// batch 32) with M = Cin and N = Cout of 64-512 per tap. oneDNN 2.6's
// backward-weights kernel and the im2col matmuls (a column buffer 9x the
// activations) ran these at 1.0-2.0x the time of the forward convolution.
// Here the tiles read shifted views:
// - the output pixels are laid on a padded grid, `cols_` a row and
//   `rows_` an image (with enough zero columns and rows that a window's
//   reads past an edge land on zeros), and x, per phase of the stride
//   (ih mod sh, iw mod sw), on the same grid: then tap (kh, kw) reads, for
//   grid pixel q, the phase plane's element q + off(kh, kw), a constant
//   shift. x is transposed into channel rows of that grid ([phase][ci]
//   [pixels]), so an A tile of 16 channels x 32 pixels is one tileloadd at
//   any tap's offset;
// - dy is packed as pixel pairs of the grid (the B operand's VNNI layout),
//   in blocks of 16 output channels whose tiles are 1 KiB contiguous, zero
//   at the grid's padding pixels (so what the shifted reads see there is
//   multiplied by zero);
// - C tiles of 32 input x 32 output channels per tap accumulate in f32
//   over blocks of 256 pixels, rounded to bf16 once.
// Sums of at most 1.5 MiB (64 and 128 channels) go in chunks of 1,024 grid
// pixels, each transposed and packed just before its products (in L2), each
// thread a run of chunks into its own sums, added in thread order. Larger
// ones (256 and 512 channels, small images) transpose and pack the whole
// batch first and split the output channels between threads (the sums'
// order then does not depend on the thread count).
// The grid's padding costs (cols * rows) / (OW * OH) of the products: 1.04
// at 56x56, 1.15 at 14x14, 1.31 at 7x7 (3x3 / pad 1), 1.0 for the 1x1
// stride-2 downsamples.
//
//===----------------------------------------------------------------------===//
#include "AmxConvFilterGrad.h"
#include "AmxTiles.h"
#include "ConvGradBf16.h"
#include "ElementLoops.h"
#include "EnvSwitch.h"
#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/OpSchema.h"

#include <omp.h>
#if defined(__x86_64__) && defined(__linux__)
#include <immintrin.h>
#define GOPT_AMX_WIDE_FILTER_GRAD 1
#endif

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

namespace gopt::runtime::cpu {

#ifndef GOPT_AMX_WIDE_FILTER_GRAD
std::unique_ptr<Kernel> createAmxConvFilterGrad(const KernelConfig &) {
  return nullptr;
}
#else
namespace {

// GOPT_CONV_FILTER_AMX_WIDE=0 keeps the im2col matmuls / oneDNN.
bool wideFilterGradEnabled() {
  return envSwitchOn("GOPT_CONV_FILTER_AMX_WIDE");
}

int64_t floorDiv(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Tiles 0-3: C (16 input x 16 output channels, f32), 4-5: A (16 input
// channels x 32 pixels), 6-7: B (16 pixel pairs x 16 output channels).
TileConfig fullTiles() {
  TileConfig t;
  for (int i = 0; i < 8; ++i) {
    t.colsb[i] = 64;
    t.rows[i] = 16;
  }
  return t;
}

// The 2x2 C tiles at `c` (1 KiB each: [A0B0, A0B1, A1B0, A1B1]) plus the
// products of `steps` k-steps of 32 pixels: A rows `aStride` bytes apart,
// B tiles 1 KiB contiguous per k-step. Zero: the C tiles start at zero.
template <bool Zero>
__attribute__((target("amx-tile,amx-bf16"))) void
block2x2(float *c, const uint16_t *a0, const uint16_t *a1, int64_t aStride,
         const uint16_t *b0, const uint16_t *b1, int64_t steps) {
  if constexpr (Zero) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  } else {
    _tile_loadd(0, c, 64);
    _tile_loadd(1, c + 256, 64);
    _tile_loadd(2, c + 512, 64);
    _tile_loadd(3, c + 768, 64);
  }
  for (int64_t s = 0; s < steps; ++s) {
    _tile_loadd(4, a0 + s * 32, aStride);
    _tile_loadd(6, b0 + s * 512, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(7, b1 + s * 512, 64);
    _tile_dpbf16ps(1, 4, 7);
    _tile_loadd(5, a1 + s * 32, aStride);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, 64);
  _tile_stored(1, c + 256, 64);
  _tile_stored(2, c + 512, 64);
  _tile_stored(3, c + 768, 64);
}

__attribute__((target("amx-tile"))) void releaseTiles() { _tile_release(); }

// 16 rows of 16 32-bit elements transposed in place (unpacks within 128-bit
// lanes, then a 4x4 transpose of the lanes).
__attribute__((target("avx512f"))) inline void transpose16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // u[4g + k]: lane L holds column 4L + k of rows 4g..4g+3.
  __m512i u[16];
  for (int g = 0; g < 4; ++g) {
    u[4 * g + 0] = _mm512_unpacklo_epi64(t[4 * g + 0], t[4 * g + 2]);
    u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g + 0], t[4 * g + 2]);
    u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
    u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    __m512i v0 = _mm512_shuffle_i32x4(u[k], u[4 + k], 0x88);
    __m512i v1 = _mm512_shuffle_i32x4(u[k], u[4 + k], 0xDD);
    __m512i w0 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0x88);
    __m512i w1 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0xDD);
    r[k] = _mm512_shuffle_i32x4(v0, w0, 0x88);
    r[8 + k] = _mm512_shuffle_i32x4(v0, w0, 0xDD);
    r[4 + k] = _mm512_shuffle_i32x4(v1, w1, 0x88);
    r[12 + k] = _mm512_shuffle_i32x4(v1, w1, 0xDD);
  }
}

// Zeroed storage on 64-byte boundaries: tile rows and the transposes'
// stores are whole cache lines only when the buffers start on one.
template <typename T> class LineBuffer {
public:
  void assign(size_t n) {
    const size_t bytes = n * sizeof(T);
    const size_t align = 64;
    data_.reset(static_cast<T *>(std::aligned_alloc(
        align, std::max<size_t>(align, (bytes + align - 1) / align * align))));

    std::memset(data_.get(), 0, n * sizeof(T));
    size_ = n;
  }
  T *data() { return data_.get(); }
  const T *data() const { return data_.get(); }
  size_t size() const { return size_; }

private:
  struct Free {
    void operator()(T *p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  size_t size_ = 0;
};

// 16 f32 (as bits) rounded to bf16 as fromF32<uint16_t> rounds them:
// to nearest even, NaNs kept quiet.
__attribute__((target("avx512f,avx512bw"))) inline __m256i
roundToBf16(__m512i x) {
  const __m512i lsb =
      _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(
      _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb),
      16);
  const __m512i nan =
      _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
  const __mmask16 isNan = _mm512_cmpgt_epu32_mask(
      _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
      _mm512_set1_epi32(0x7f800000));
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(isNan, rounded, nan));
}

class AmxConvFilterGrad : public Kernel {
public:
  explicit AmxConvFilterGrad(const NhwcConvGeometry &g)
      : oihw_(g.oihw), n_(g.n), h_(g.h), w_(g.w), cin_(g.cin), cout_(g.cout),
        kh_(g.kh), kw_(g.kw), oh_(g.oh), ow_(g.ow), sh_(g.sh), sw_(g.sw) {
    const int64_t padTop = g.padTop, padLeft = g.padLeft;
    taps_ = kh_ * kw_;
    // Tap (r, s) reads phase (r - padTop) mod sh, (s - padLeft) mod sw at
    // plane row oh + qh, column ow + qw (qh, qw the floor quotients).
    int64_t qhMin = 0, qhMax = 0, qwMin = 0, qwMax = 0;
    std::vector<int64_t> qh(kh_), rh(kh_), qw(kw_), rw(kw_);
    for (int64_t r = 0; r < kh_; ++r) {
      qh[r] = floorDiv(r - padTop, sh_);
      rh[r] = r - padTop - qh[r] * sh_;
      qhMin = std::min(qhMin, qh[r]);
      qhMax = r ? std::max(qhMax, qh[r]) : qh[r];
    }
    for (int64_t s = 0; s < kw_; ++s) {
      qw[s] = floorDiv(s - padLeft, sw_);
      rw[s] = s - padLeft - qw[s] * sw_;
      qwMin = std::min(qwMin, qw[s]);
      qwMax = s ? std::max(qwMax, qw[s]) : qw[s];
    }
    lh_ = -qhMin, lw_ = -qwMin;
    const int64_t hph = (h_ + sh_ - 1) / sh_, wph = (w_ + sw_ - 1) / sw_;
    // A row's data and its leading zeros fit, and reads past its end (up
    // to column ow + qwMax) wrap into the next row's leading zeros at most.
    cols_ = std::max({wph + lw_, ow_ + qwMax, ow_});
    rows_ = std::max({hph + lh_, oh_ + qhMax, oh_});
    const int64_t grid = n_ * rows_ * cols_;
    kSteps_ = (grid + 31) / 32;
    std::vector<int> phaseIndex(sh_ * sw_, -1);
    for (int64_t r = 0; r < kh_; ++r)
      for (int64_t s = 0; s < kw_; ++s) {
        const int64_t phase = rh[r] * sw_ + rw[s];
        if (phaseIndex[phase] < 0) {
          phaseIndex[phase] = static_cast<int>(phases_.size());
          phases_.push_back({rh[r], rw[s]});
        }
        const int64_t off = (qh[r] + lh_) * cols_ + qw[s] + lw_;
        offMax_ = std::max(offMax_, off);
        tapPhase_.push_back(phaseIndex[phase]);
        tapOffset_.push_back(off);
      }
    // emit's interleaving of [t][ci] rows into [ci][t].
    interleaveIndex_.assign(taps_ * taps_ * 32);
    interleaveMask_.assign(taps_ * taps_, 0);
    for (int64_t v = 0; v < taps_; ++v)
      for (int64_t e = 0; e < 32; ++e) {
        const int64_t g = v * 32 + e, t = g % taps_;
        interleaveIndex_.data()[(v * taps_ + t) * 32 + e] =
            static_cast<uint16_t>(g / taps_);
        interleaveMask_[v * taps_ + t] |= uint32_t(1) << e;
      }
    const int threads = std::max(1, omp_get_max_threads());
    // Sums of at most 1.5 MiB (ResNet's 64- and 128-channel layers, whose
    // operands are 6-13 MiB at batch 32, and layer 3's 128 -> 256 3x3/2):
    // chunks of 1,024 grid pixels, each transposed and packed right before
    // its products while it is in L2, each thread a run of chunks into sums
    // of its own, added in thread order. Larger sums: the whole batch
    // transposed and packed first, and output channels split between
    // threads (the sums' order then does not depend on the thread count).
    // Measured one thread, batch 32: layer 3's 3x3/2 10.2-10.9 ms whole,
    // 8.5-8.7 in chunks; layer 3's 3x3/1 (2.3 MiB of sums) the same either
    // way; layer 4's 3x3/1 (9.4 MiB) 15-16 whole, 17-21 in chunks.
    chunked_ =
        taps_ * cin_ * cout_ * 4 <= (int64_t(3) << 19) && kSteps_ > kChunkSteps;
    if (chunked_) {
      const int64_t chunks = (kSteps_ + kChunkSteps - 1) / kChunkSteps;
      lanes_.resize(std::min<int64_t>(threads, chunks));
      for (Buffers &b : lanes_)
        b.allocate(phases_.size() * cin_, cout_, cin_ * cout_ * taps_,
                   kChunkSteps, offMax_);
    } else {
      lanes_.resize(1);
      lanes_[0].allocate(phases_.size() * cin_, cout_, cin_ * cout_ * taps_,
                         kSteps_, offMax_);
      threads_ = static_cast<int>(std::min<int64_t>(threads, cout_ / 32));
    }
  }

  static size_t workspaceFor(int64_t phases, int64_t cin, int64_t cout,
                             int64_t grid) {
    return (phases * cin + cout) * (grid + 32) * 2;
  }

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    const uint16_t *x = inputs[0].data<uint16_t>();
    const uint16_t *dy = inputs[1].data<uint16_t>();
    if (chunked_)
      runChunked(x, dy, outputs[0]);
    else
      runWhole(x, dy, outputs[0]);
    return Status::success();
  }
  const char *implementation() const override { return "amx-wide"; }
  size_t workspaceBytes() const override {
    size_t bytes = 0;
    for (const Buffers &b : lanes_)
      bytes += b.xt.size() * 2 + b.dy.size() * 2 + b.acc.size() * 4;
    return bytes;
  }

private:
  // Grid steps [k0, k0 + steps) of 32 pixels: x's phases transposed into
  // `rowLen`-long channel rows (the steps' pixels plus the taps' reach),
  // dy packed into `pairs`-long blocks of 16 output channels, and the f32
  // sums.
  struct Buffers {
    LineBuffer<uint16_t> xt; // [phase][ci][rowLen]
    LineBuffer<uint16_t> dy; // [Cout / 16][pairs][16][2]
    LineBuffer<float> acc;   // [Cout/32][taps][Cin/32][2x2 tiles of 16x16]
    int64_t rowLen = 0, pairs = 0;
    void allocate(int64_t xRows, int64_t cout, int64_t sums, int64_t steps,
                  int64_t reach) {
      // Rows an odd number of cache lines apart: a tile's 16 rows fall
      // into 16 different L1 sets.
      rowLen = (steps * 32 + reach + 31) / 32 * 32;
      if ((rowLen / 32) % 2 == 0)
        rowLen += 32;
      pairs = steps * 16;
      xt.assign(xRows * rowLen);
      dy.assign(cout * pairs * 2);
      acc.assign(sums);
    }
  };

  void runWhole(const uint16_t *x, const uint16_t *dy, Tensor &out) {
    Buffers &b = lanes_[0];
    const int64_t blocks = b.rowLen / 32, phases = phases_.size();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < phases * blocks; ++i)
      transposeBlock(x, i / blocks, (i % blocks) * 32, b, 0);
    const int64_t pairs = kSteps_ * 16;
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < pairs; p += 16)
      packDy(dy, p, std::min<int64_t>(16, pairs - p), b, 0);
    // The tile loads (asm statements) read what plain stores wrote.
    asm volatile("" ::: "memory");
    const int64_t coPairs = cout_ / 32;
#pragma omp parallel num_threads(threads_) if (threads_ > 1)
    {
      const int l = omp_get_thread_num(), lanes = omp_get_num_threads();
      const int64_t cp0 = l * coPairs / lanes, cp1 = (l + 1) * coPairs / lanes;
      if (cp0 < cp1) {
        loadTileConfig(fullTiles());
        std::vector<uint16_t> stage(32 * 32 * taps_);
        // Groups of output-channel pairs whose sums fit in about half of
        // L2 stay there over all blocks of pixels.
        const int64_t pairBytes = taps_ * cin_ * 32 * 4;
        const int64_t group =
            std::max<int64_t>(1, (int64_t(1) << 20) / pairBytes);
        for (int64_t g0 = cp0; g0 < cp1; g0 += group) {
          const int64_t g1 = std::min(cp1, g0 + group);
          products(b, 0, 0, kSteps_, g0, g1, true);
          // The tiles' stores (asm statements) wrote what plain loads read.
          asm volatile("" ::: "memory");
          for (int64_t cp = g0; cp < g1; ++cp)
            emit(b.acc.data(), cp, out, stage.data());
        }
        releaseTiles();
      }
    }
  }

  void runChunked(const uint16_t *x, const uint16_t *dy, Tensor &out) {
    const int lanes = static_cast<int>(lanes_.size());
    const int64_t chunks = (kSteps_ + kChunkSteps - 1) / kChunkSteps;
    const int64_t phases = phases_.size(), coPairs = cout_ / 32;
#pragma omp parallel for num_threads(lanes) schedule(static, 1) if (lanes > 1)
    for (int l = 0; l < lanes; ++l) {
      Buffers &b = lanes_[l];
      loadTileConfig(fullTiles());
      const int64_t c0 = l * chunks / lanes, c1 = (l + 1) * chunks / lanes;
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t k0 = c * kChunkSteps,
                      k1 = std::min(kSteps_, k0 + kChunkSteps);
        const int64_t blocks = ((k1 - k0) * 32 + offMax_ + 31) / 32;
        for (int64_t phase = 0; phase < phases; ++phase)
          for (int64_t i = 0; i < blocks; ++i)
            transposeBlock(x, phase, k0 * 32 + i * 32, b, k0 * 32);
        packDy(dy, k0 * 16, (k1 - k0) * 16, b, k0 * 16);
        asm volatile("" ::: "memory");
        Prefetch next;
        if (c + 1 < c1)
          next = nextChunk(x, dy, c + 1);
        products(b, k0, k0, k1, 0, coPairs, c == c0, &next);
        asm volatile("" ::: "memory");
      }
      releaseTiles();
    }
    float *sum = lanes_[0].acc.data();
    const int64_t size = lanes_[0].acc.size();
    for (int l = 1; l < lanes; ++l) {
      const float *part = lanes_[l].acc.data();
#pragma omp simd
      for (int64_t i = 0; i < size; ++i)
        sum[i] += part[i];
    }
#pragma omp parallel
    {
      std::vector<uint16_t> stage(32 * 32 * taps_);
#pragma omp for schedule(static)
      for (int64_t cp = 0; cp < coPairs; ++cp)
        emit(sum, cp, out, stage.data());
    }
  }

  // Output channels [32 cp, 32 cp + 32) of the sums rounded to bf16 into
  // `out` right after their products, while their tiles are still in L2.
  // HWIO rows are a C tile's rows; OIHW ones ([co][ci][taps]) come from
  // the tiles transposed into [co][t][ci] rows of 32 input channels, then
  // interleaved into [ci][t] by masked permutations. At 512 channels (2.4
  // million results) a pass of its own with scalar stores took 3.4 ms, and
  // per pair with scalar interleaving 2.6-4.4 ms (one thread, loaded host).
  __attribute__((target("avx512f,avx512bw"))) void
  emit(const float *acc, int64_t cp, Tensor &out, uint16_t *stage) {
    const int64_t ciPairs = cin_ / 32;
    uint16_t *outB = out.data<uint16_t>();
    for (int64_t ip = 0; ip < ciPairs; ++ip) {
      for (int64_t t = 0; t < taps_; ++t)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            const float *tile =
                acc + (((cp * taps_ + t) * ciPairs + ip) * 4 + 2 * i + j) * 256;
            if (!oihw_) {
              for (int64_t m = 0; m < 16; ++m)
                _mm256_storeu_si256(
                    reinterpret_cast<__m256i *>(
                        outB + (t * cin_ + ip * 32 + i * 16 + m) * cout_ +
                        cp * 32 + j * 16),
                    roundToBf16(_mm512_loadu_si512(tile + m * 16)));
              continue;
            }
            __m512i r[16];
            for (int m = 0; m < 16; ++m)
              r[m] = _mm512_loadu_si512(tile + m * 16);
            transpose16(r); // r[nn]: the 16 input channels of output nn
            for (int nn = 0; nn < 16; ++nn)
              _mm256_storeu_si256(
                  reinterpret_cast<__m256i *>(
                      stage + ((j * 16 + nn) * taps_ + t) * 32 + i * 16),
                  roundToBf16(r[nn]));
          }
      if (!oihw_)
        continue;
      for (int64_t jn = 0; jn < 32; ++jn) {
        const int64_t base = ((cp * 32 + jn) * cin_ + ip * 32) * taps_;
        // Output vector v's element e is input channel (32 v + e) / taps
        // of row (32 v + e) % taps: one masked permutation per row.
        const uint16_t *rows = stage + jn * taps_ * 32;
        for (int64_t v = 0; v < taps_; ++v) {
          __m512i o = _mm512_setzero_si512();
          for (int64_t t = 0; t < taps_; ++t)
            o = _mm512_mask_permutexvar_epi16(
                o, interleaveMask_[v * taps_ + t],
                _mm512_load_si512(interleaveIndex_.data() +
                                  (v * taps_ + t) * 32),
                _mm512_loadu_si512(rows + t * 32));
          _mm512_storeu_si512(outB + base + v * 32, o);
        }
      }
    }
  }

  // Grid pixels [f0, f0 + 32) of phase `phase` of x into `b`'s 16-bit
  // channel rows (column f0 - fOrigin): 16 pixels x 16 channel pairs
  // (32-bit) transposed twice, then the pairs split into even and odd
  // channels' rows of 32 pixels.
  __attribute__((target("avx512f,avx512bw"))) void
  transposeBlock(const uint16_t *x, int64_t phase, int64_t f0, Buffers &b,
                 int64_t fOrigin) const {
    const uint16_t *src[32];
    bool any = false;
    // The grid position of f0, then stepped (divisions per pixel cost more
    // than the transposes at 64 channels).
    const int64_t image = rows_ * cols_;
    int64_t img = f0 / image, row = f0 % image / cols_, col = f0 % cols_;
    const int64_t rh = phases_[phase].first, rw = phases_[phase].second;
    for (int p = 0; p < 32; ++p) {
      src[p] = nullptr;
      const int64_t i = row - lh_, j = col - lw_;
      const int64_t ih = i * sh_ + rh, iw = j * sw_ + rw;
      if (img < n_ && i >= 0 && j >= 0 && ih < h_ && iw < w_) {
        src[p] = x + ((img * h_ + ih) * w_ + iw) * cin_;
        any = true;
      }
      if (++col == cols_) {
        col = 0;
        if (++row == rows_)
          row = 0, ++img;
      }
    }
    uint16_t *dst = b.xt.data() + phase * cin_ * b.rowLen + (f0 - fOrigin);
    if (!any) {
      for (int64_t ci = 0; ci < cin_; ++ci)
        _mm512_store_si512(dst + ci * b.rowLen, _mm512_setzero_si512());
      return;
    }
    alignas(64) uint16_t even[32], odd[32];
    for (int i = 0; i < 32; ++i) {
      even[i] = static_cast<uint16_t>(2 * i);
      odd[i] = static_cast<uint16_t>(2 * i + 1);
    }
    const __m512i evenIdx = _mm512_load_si512(even),
                  oddIdx = _mm512_load_si512(odd);
    for (int64_t ci0 = 0; ci0 < cin_; ci0 += 32) {
      __m512i lo[16], hi[16];
      for (int p = 0; p < 16; ++p) {
        lo[p] =
            src[p] ? _mm512_loadu_si512(src[p] + ci0) : _mm512_setzero_si512();
        hi[p] = src[16 + p] ? _mm512_loadu_si512(src[16 + p] + ci0)
                            : _mm512_setzero_si512();
      }
      transpose16(lo);
      transpose16(hi);
      for (int c2 = 0; c2 < 16; ++c2) {
        _mm512_store_si512(dst + (ci0 + 2 * c2) * b.rowLen,
                           _mm512_permutex2var_epi16(lo[c2], evenIdx, hi[c2]));
        _mm512_store_si512(dst + (ci0 + 2 * c2 + 1) * b.rowLen,
                           _mm512_permutex2var_epi16(lo[c2], oddIdx, hi[c2]));
      }
    }
  }

  // dy's grid pixel pairs [p0, p0 + count) into `b`'s B layout (pair
  // p - pOrigin): per block of 16 output channels, [pair][16][2], zero off
  // the output's pixels.
  __attribute__((target("avx512f,avx512bw"))) void
  packDy(const uint16_t *dy, int64_t p0, int64_t count, Buffers &b,
         int64_t pOrigin) const {
    alignas(64) uint16_t order[32];
    for (int i = 0; i < 32; ++i)
      order[i] = static_cast<uint16_t>(i / 2 + (i % 2) * 32);
    const __m512i index = _mm512_load_si512(order);
    const int64_t image = rows_ * cols_;
    int64_t img = 2 * p0 / image, row = 2 * p0 % image / cols_,
            col = 2 * p0 % cols_;
    auto next = [&]() -> const uint16_t * {
      const uint16_t *at = img < n_ && row < oh_ && col < ow_
                               ? dy + ((img * oh_ + row) * ow_ + col) * cout_
                               : nullptr;
      if (++col == cols_) {
        col = 0;
        if (++row == rows_)
          row = 0, ++img;
      }
      return at;
    };
    for (int64_t p = p0; p < p0 + count; ++p) {
      const uint16_t *e = next();
      const uint16_t *f = next();
      for (int64_t cb = 0; cb < cout_ / 16; ++cb) {
        uint16_t *dst = b.dy.data() + (cb * b.pairs + p - pOrigin) * 32;
        __m512i ve = e ? _mm512_castsi256_si512(_mm256_loadu_si256(
                             reinterpret_cast<const __m256i *>(e + cb * 16)))
                       : _mm512_setzero_si512();
        __m512i vf = f ? _mm512_castsi256_si512(_mm256_loadu_si256(
                             reinterpret_cast<const __m256i *>(f + cb * 16)))
                       : _mm512_setzero_si512();
        _mm512_store_si512(dst, _mm512_permutex2var_epi16(ve, index, vf));
      }
    }
  }

  // The products of grid steps [k0, k1) (b's column 0 is step kOrigin) for
  // output-channel pairs [cp0, cp1), in blocks of kBlock steps: a block's
  // dy (16 KiB per pair) and 32 channels of x (16 KiB plus the taps'
  // reach) stay in L1 over the taps. `zero`: the sums start at zero.
  // Byte ranges of x and dy that a chunk's transposes and packing read,
  // fetched into L2 a share after each tile block of the chunk before: the
  // tiles leave the memory bus idle, and the hardware prefetchers do not
  // see the next chunk coming (one thread, batch 32, minimum of 5 runs in
  // quiet moments: ResNet-18's layer-1 filter gradient 12.6-13.0 -> 10.3-
  // 10.6 ms, layer 2's 3x3/1 9.9 -> 8.7-9.0).
  struct Prefetch {
    const char *begin[2] = {nullptr, nullptr};
    int64_t lines[2] = {0, 0};
    int64_t next = 0, per = 0;
    void step() {
      for (int64_t i = 0; i < per; ++i, ++next) {
        if (next < lines[0])
          _mm_prefetch(begin[0] + next * 64, _MM_HINT_T1);
        else if (next < lines[0] + lines[1])
          _mm_prefetch(begin[1] + (next - lines[0]) * 64, _MM_HINT_T1);
        else
          return;
      }
    }
  };

  Prefetch nextChunk(const uint16_t *x, const uint16_t *dy, int64_t c) const {
    const int64_t image = rows_ * cols_, grid = n_ * image;
    const int64_t f0 = c * kChunkSteps * 32,
                  f1 = std::min(grid, (c + 1) * kChunkSteps * 32 + offMax_);
    Prefetch p;
    if (f0 >= f1)
      return p;
    auto xRow = [&](int64_t f) {
      const int64_t img = f / image, row = f % image / cols_;
      return img * h_ + std::clamp<int64_t>((row - lh_) * sh_, 0, h_);
    };
    auto dyRow = [&](int64_t f) {
      const int64_t img = f / image, row = f % image / cols_;
      return img * oh_ + std::min(row, oh_);
    };
    const int64_t x0 = xRow(f0), x1 = std::min(n_ * h_, xRow(f1 - 1) + sh_);
    const int64_t d0 = dyRow(f0), d1 = std::min(n_ * oh_, dyRow(f1 - 1) + 1);
    p.begin[0] = reinterpret_cast<const char *>(x + x0 * w_ * cin_);
    p.lines[0] = std::max<int64_t>(0, (x1 - x0) * w_ * cin_ * 2 / 64);
    p.begin[1] = reinterpret_cast<const char *>(dy + d0 * ow_ * cout_);
    p.lines[1] = std::max<int64_t>(0, (d1 - d0) * ow_ * cout_ * 2 / 64);
    const int64_t calls = (kChunkSteps + kBlock - 1) / kBlock * (cout_ / 32) *
                          (cin_ / 32) * taps_;
    p.per = (p.lines[0] + p.lines[1] + calls - 1) / calls;
    return p;
  }

  void products(Buffers &b, int64_t kOrigin, int64_t k0, int64_t k1,
                int64_t cp0, int64_t cp1, bool zero,
                Prefetch *prefetch = nullptr) {
    const int64_t ciPairs = cin_ / 32, aStride = b.rowLen * 2;
    for (int64_t kb = k0; kb < k1; kb += kBlock) {
      const int64_t steps = std::min<int64_t>(kBlock, k1 - kb),
                    at = kb - kOrigin;
      for (int64_t cp = cp0; cp < cp1; ++cp) {
        const uint16_t *b0 = b.dy.data() + (2 * cp * b.pairs + at * 16) * 32;
        const uint16_t *b1 = b0 + b.pairs * 32;
        for (int64_t ip = 0; ip < ciPairs; ++ip)
          for (int64_t t = 0; t < taps_; ++t) {
            const uint16_t *a0 = b.xt.data() +
                                 (tapPhase_[t] * cin_ + ip * 32) * b.rowLen +
                                 at * 32 + tapOffset_[t];
            const uint16_t *a1 = a0 + 16 * b.rowLen;
            float *c = b.acc.data() + ((cp * taps_ + t) * ciPairs + ip) * 1024;
            if (zero && kb == k0)
              block2x2<true>(c, a0, a1, aStride, b0, b1, steps);
            else
              block2x2<false>(c, a0, a1, aStride, b0, b1, steps);
            if (prefetch)
              prefetch->step();
          }
      }
    }
  }

  static constexpr int64_t kBlock = 8;       // 256 grid pixels
  static constexpr int64_t kChunkSteps = 32; // 1,024 grid pixels

  bool oihw_;
  int64_t n_, h_, w_, cin_, cout_, kh_, kw_, oh_, ow_, sh_, sw_;
  int64_t taps_ = 0, lh_ = 0, lw_ = 0, cols_ = 0, rows_ = 0, kSteps_ = 0,
          offMax_ = 0;
  bool chunked_ = false;
  int threads_ = 1;
  std::vector<std::pair<int64_t, int64_t>> phases_; // (ih, iw) mod strides
  std::vector<int> tapPhase_;
  std::vector<int64_t> tapOffset_;
  std::vector<Buffers> lanes_;           // one when not chunked
  LineBuffer<uint16_t> interleaveIndex_; // [v][t][32]
  std::vector<uint32_t> interleaveMask_; // [v][t]
};

} // namespace

std::unique_ptr<Kernel> createAmxConvFilterGrad(const KernelConfig &c) {
  if (c.inputShapes.size() != 2 || c.outputShapes.size() != 1 ||
      c.inputTypes.size() != 2 || c.inputTypes[0] != DType::kBF16 ||
      c.inputTypes[1] != DType::kBF16 || c.outputTypes.size() != 1 ||
      c.outputTypes[0] != DType::kBF16)
    return nullptr;
  std::optional<NhwcConvGeometry> g = nhwcConvGeometry(
      c.attrs(), c.inputShapes[0], c.inputShapes[1], c.outputShapes[0]);
  if (!g || g->sh > 2 || g->sw > 2 || g->padTop >= g->kh || g->padLeft >= g->kw)
    return nullptr;
  // Whole 2x2 blocks of 16-channel tiles.
  if (g->cin % 32 || g->cout % 32 || g->cin == 0 || g->cout == 0 || g->n == 0 ||
      g->oh == 0 || g->ow == 0 || !wideFilterGradEnabled() || !amxBf16Usable())
    return nullptr;
  // The transposed x and the packed dy are about the activations' size;
  // refuse what would not fit a sensible workspace.
  const int64_t grid = g->n * (g->oh + g->kh) * (g->ow + g->kw);
  if (AmxConvFilterGrad::workspaceFor(g->sh * g->sw, g->cin, g->cout, grid) >
      (size_t(1) << 30))
    return nullptr;
  return std::make_unique<AmxConvFilterGrad>(*g);
}
#endif

} // namespace gopt::runtime::cpu
