//===- SmallConvTraining.cpp - AMX gradients of small convolutions --------===//
//
// conv2d_backprop_filter of bf16 NHWC operands as AMX tile products
// (SmallConvTraining.h). oneDNN 2.6's AMX backward-weights kernel ran the
// MNIST CNN's 32->64 3x3 filter gradient at about 430 GFLOP/s on one
// thread, a fifth of what its forward kernel reaches on the same layer.
//
// dW[o][tap][c] = sum over positions p of dy[p][o] * x[p + offset(tap)][c]
// is a product with the positions as the reduction: A = dy transposed to
// one row per output channel, B = x with pairs of positions interleaved
// (AMX's VNNI layout), once from an even and once from an odd position,
// so that every tap's B is one of them read from another row (no im2col)
// and every tile load is 64-byte aligned (a load whose rows cross cache
// lines ran the products 3x slower). The positions run over full source
// rows (p = oh * W + ow with ow < W): the columns past the output's width
// have dy = 0 (8% more products on MNIST's 26-wide rows).
//
//===----------------------------------------------------------------------===//
#include "SmallConvTraining.h"
#include "EnvSwitch.h"
#include "PoolGradBf16.h"
#include "SingleChannelConv.h"

#include "AmxTiles.h"
#include "Avx512Lanes.h"
#include "ElementLoops.h"
#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/OpSchema.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#if defined(GOPT_HAVE_AVX512_LANES) && defined(__linux__)
#define GOPT_HAVE_AMX_FILTER_GRAD 1
// GCC 12's unpack intrinsics start from _mm512_undefined_*, which
// -Wmaybe-uninitialized reports wherever they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define GOPT_AMX                                                               \
  __attribute__((target("avx512f,avx512bw,avx512vl,amx-tile,amx-bf16")))
#endif

namespace gopt::runtime::cpu {
namespace {

// Pooling after the convolution (conv2d+max_pool+transpose): windows of
// kh x kw with strides kh x kw, the result NCHW.
struct PoolAfterConv {
  int64_t kh = 0, kw = 0, oh = 0, ow = 0;
};

#ifdef GOPT_HAVE_AMX_FILTER_GRAD

struct Geometry {
  int64_t h, w, cin, cout, kh, kw, oh, ow;
  bool oihw;
  int64_t positions; // the reduction per image: OH full rows, padded to 32
  int64_t blocks;    // 32-position blocks of transposed dy, with a tail
  int64_t pairRows;  // the rows of each interleaved x: as many as the last
                     // tap reads
};

// Both operands are stored as the tiles read them, 16 rows of 64 bytes
// contiguous (tiles whose rows lie far apart ran 1.7x slower):
// - dt[o / 16][p / 32][o % 16][p % 32]: dy transposed, `blocks` blocks of
//   32 positions per 16 output channels;
// - xv[s][c / 16][q][c % 16][j] = x[2q + s + j][c]: x with pairs of
//   positions interleaved, from an even (s = 0) and an odd (s = 1) first
//   position, so that a tap whose offset has parity s starts at row
//   offset / 2 of copy s.

// 32 positions' values (v's 16-bit lanes) of channel c, from position p,
// into dt.
GOPT_AMX inline __attribute__((always_inline)) void
storeTransposed(uint16_t *dt, int64_t blocks, int64_t c, int64_t p, __m512i v) {
  uint16_t *base = dt + (c / 16) * blocks * 512 + (c % 16) * 32;
  const int64_t b = p / 32, r = p % 32;
  if (r == 0) {
    _mm512_store_si512(base + b * 512, v);
    return;
  }
  // Lanes [0, 32 - r) end block b; lanes [32 - r, 32) start block b + 1.
  _mm512_mask_storeu_epi16(base + b * 512 + r,
                           static_cast<__mmask32>(0xffffffffu >> r), v);
  _mm512_mask_storeu_epi16(base + (b + 1) * 512 - (32 - r),
                           static_cast<__mmask32>(0xffffffffu << (32 - r)), v);
}

// src[i][c] for `count` positions of `channels` (a multiple of 32) into dt
// from position `first`, zeros after them up to a multiple of 32: 16x16
// transposes of channel pairs (32-bit lanes), then each pair's rows split
// into its two channels.
GOPT_AMX void transposeRows(const uint16_t *src, int64_t count,
                            int64_t channels, int64_t blocks, int64_t first,
                            uint16_t *dt) {
  alignas(64) uint16_t evenIdx[32], oddIdx[32];
  for (int i = 0; i < 32; ++i) {
    evenIdx[i] = static_cast<uint16_t>(i < 16 ? 2 * i : 32 + 2 * (i - 16));
    oddIdx[i] = static_cast<uint16_t>(evenIdx[i] + 1);
  }
  const __m512i even = _mm512_load_si512(evenIdx),
                odd = _mm512_load_si512(oddIdx);
  for (int64_t p0 = 0; p0 < count; p0 += 32)
    for (int64_t c0 = 0; c0 < channels; c0 += 32) {
      __m512i a[16], b[16];
      for (int64_t i = 0; i < 16; ++i) {
        a[i] = p0 + i < count
                   ? _mm512_loadu_si512(src + (p0 + i) * channels + c0)
                   : _mm512_setzero_si512();
        b[i] = p0 + 16 + i < count
                   ? _mm512_loadu_si512(src + (p0 + 16 + i) * channels + c0)
                   : _mm512_setzero_si512();
      }
      transpose16x16(a);
      transpose16x16(b);
      for (int64_t j = 0; j < 16; ++j) {
        storeTransposed(dt, blocks, c0 + 2 * j, first + p0,
                        _mm512_permutex2var_epi16(a[j], even, b[j]));
        storeTransposed(dt, blocks, c0 + 2 * j + 1, first + p0,
                        _mm512_permutex2var_epi16(a[j], odd, b[j]));
      }
    }
}

// dy[oh][ow][o] -> dt at position oh * W + ow. The rows go in order: a
// row's zeros past its end land on later rows' positions before those are
// written. Every image writes its values at the same positions, and only
// zeros anywhere else: dt's zeros from its allocation stay where ow >= OW
// or oh >= OH.
GOPT_AMX void transposeGradient(const Geometry &g, const uint16_t *dy,
                                uint16_t *dt) {
  for (int64_t oh = 0; oh < g.oh; ++oh)
    transposeRows(dy + oh * g.ow * g.cout, g.ow, g.cout, g.blocks, oh * g.w,
                  dt);
}

GOPT_AMX void interleaveImage(const Geometry &g, const uint16_t *x,
                              uint16_t *xv) {
  alignas(64) uint16_t loIdx[32], hiIdx[32];
  for (int i = 0; i < 32; ++i) {
    loIdx[i] = static_cast<uint16_t>((i % 2) * 32 + i / 2);
    hiIdx[i] = static_cast<uint16_t>(loIdx[i] + 16);
  }
  const __m512i lo = _mm512_load_si512(loIdx), hi = _mm512_load_si512(hiIdx);
  const int64_t hw = g.h * g.w, cBlocks = g.cin / 16;
  auto row = [&](int64_t p) { return p < hw ? x + p * g.cin : nullptr; };
  for (int s = 0; s < 2; ++s)
    for (int64_t q = 0; q < g.pairRows; ++q) {
      const uint16_t *r0 = row(2 * q + s), *r1 = row(2 * q + s + 1);
      for (int64_t c = 0; c < g.cin; c += 32) {
        __m512i a = r0 ? _mm512_loadu_si512(r0 + c) : _mm512_setzero_si512();
        __m512i b = r1 ? _mm512_loadu_si512(r1 + c) : _mm512_setzero_si512();
        uint16_t *out = xv + ((s * cBlocks + c / 16) * g.pairRows + q) * 32;
        _mm512_store_si512(out, _mm512_permutex2var_epi16(a, lo, b));
        _mm512_store_si512(out + g.pairRows * 32,
                           _mm512_permutex2var_epi16(a, hi, b));
      }
    }
}

// acc[o][tap * cin + c] += the products of `images` transposed gradients
// and interleaved images, in 32x32 blocks of acc: four f32 tiles (0-3), two
// tiles of dy's rows (4, 5) and two of x's channels (6, 7). The tile
// intrinsics are asm statements without a memory clobber: the barriers
// (and noinline) keep the copies' stores before them and the reads of acc
// after them.
__attribute__((noinline)) GOPT_AMX void
accumulateTiles(const Geometry &g, const uint16_t *dt, const uint16_t *xv,
                int64_t images, float *acc) {
  __asm__ volatile("" ::: "memory");
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  loadTileConfig(config);
  const int64_t taps = g.kh * g.kw, cols = taps * g.cin;
  const int64_t dImage = g.cout * g.blocks * 32,
                xImage = 2 * g.pairRows * g.cin * 2;
  const int64_t cBlocks = g.cin / 16, dBlock = g.blocks * 512,
                xBlock = g.pairRows * 32;
  const long tStride = 64, cStride = static_cast<long>(cols * 4);
  for (int64_t o = 0; o < g.cout; o += 32)
    for (int64_t tap = 0; tap < taps; ++tap) {
      const int64_t offset = (tap / g.kw) * g.w + tap % g.kw;
      const int64_t parity = offset % 2, firstRow = offset / 2;
      for (int64_t c = 0; c < g.cin; c += 32) {
        float *cBlock = acc + o * cols + tap * g.cin + c;
        _tile_loadd(0, cBlock, cStride);
        _tile_loadd(1, cBlock + 16, cStride);
        _tile_loadd(2, cBlock + 16 * cols, cStride);
        _tile_loadd(3, cBlock + 16 * cols + 16, cStride);
        for (int64_t i = 0; i < images; ++i) {
          const uint16_t *a = dt + i * dImage + (o / 16) * dBlock;
          const uint16_t *b =
              xv + i * xImage +
              ((parity * cBlocks + c / 16) * g.pairRows + firstRow) * 32;
          for (int64_t k = 0; k < g.positions; k += 32) {
            _tile_loadd(4, a + k * 16, tStride);
            _tile_loadd(5, a + dBlock + k * 16, tStride);
            _tile_loadd(6, b + k * 16, tStride);
            _tile_loadd(7, b + xBlock + k * 16, tStride);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
          }
        }
        _tile_stored(0, cBlock, cStride);
        _tile_stored(1, cBlock + 16, cStride);
        _tile_stored(2, cBlock + 16 * cols, cStride);
        _tile_stored(3, cBlock + 16 * cols + 16, cStride);
      }
    }
  _tile_release();
  __asm__ volatile("" ::: "memory");
}

// 64-byte aligned storage (the tile loads' rows must not cross lines).
template <typename T> class AlignedBuffer {
public:
  void resize(size_t n) {
    storage_.assign(n + 64 / sizeof(T), T());
    size_t skew = reinterpret_cast<uintptr_t>(storage_.data()) % 64;
    data_ = storage_.data() + (skew ? (64 - skew) / sizeof(T) : 0);
    size_ = n;
  }
  T *data() { return data_; }
  const T *data() const { return data_; }
  size_t size() const { return size_; }

private:
  std::vector<T> storage_;
  T *data_ = nullptr;
  size_t size_ = 0;
};

// Inputs x [N, H, W, Cin] and dy [N, OH, OW, Cout] (bf16); the result f32
// or bf16. Images go through the copies a few at a time (which stay in L2
// for the tile products).
class AmxFilterGradKernel : public AmxFilterGrad {
public:
  AmxFilterGradKernel(const Geometry &g, bool f32Result)
      : g_(g), f32Result_(f32Result) {
    acc_.resize(g.kh * g.kw * g.cin * g.cout);
    dt_.resize(kGroup * g.cout * g.blocks * 32);
    xv_.resize(kGroup * 2 * g.pairRows * g.cin * 2);
  }

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    reset();
    accumulate(in[0].data<uint16_t>(), in[1].data<uint16_t>(),
               in[0].shape()[0]);
    const int64_t size = static_cast<int64_t>(acc_.size());
    if (f32Result_) {
      float *result = out[0].data<float>();
      std::fill(result, result + size, 0.0f);
      addInto(result);
      return Status::success();
    }
    std::vector<float> sums(size, 0.0f);
    addInto(sums.data());
    uint16_t *result = out[0].data<uint16_t>();
    for (int64_t i = 0; i < size; ++i)
      result[i] = fromF32<uint16_t>(sums[i]);
    return Status::success();
  }
  const char *implementation() const override { return "amx"; }
  size_t workspaceBytes() const override {
    return acc_.size() * 4 + (dt_.size() + xv_.size()) * 2;
  }

  void reset() override {
    std::fill(acc_.data(), acc_.data() + acc_.size(), 0.0f);
  }
  void accumulate(const uint16_t *x, const uint16_t *dy, int64_t n) override {
    const Geometry &g = g_;
    const int64_t xImage = g.h * g.w * g.cin, dyImage = g.oh * g.ow * g.cout;
    for (int64_t i0 = 0; i0 < n; i0 += kGroup) {
      const int64_t images = std::min(kGroup, n - i0);
      for (int64_t i = 0; i < images; ++i) {
        transposeGradient(g, dy + (i0 + i) * dyImage,
                          dt_.data() + i * g.cout * g.blocks * 32);
        interleaveImage(g, x + (i0 + i) * xImage,
                        xv_.data() + i * 2 * g.pairRows * g.cin * 2);
      }
      accumulateTiles(g, dt_.data(), xv_.data(), images, acc_.data());
    }
  }
  void accumulateFromGrid(const uint16_t *x, const uint16_t *grid, int64_t n,
                          int64_t gridImage, int64_t lead) override {
    const Geometry &g = g_;
    const int64_t xImage = g.h * g.w * g.cin;
    for (int64_t i0 = 0; i0 < n; i0 += kGroup) {
      const int64_t images = std::min(kGroup, n - i0);
      for (int64_t i = 0; i < images; ++i) {
        // Every position the products read, from position 0: whole blocks.
        transposeRows(grid + (i0 + i) * gridImage + lead * g.cout, g.positions,
                      g.cout, g.blocks, 0,
                      dt_.data() + i * g.cout * g.blocks * 32);
        interleaveImage(g, x + (i0 + i) * xImage,
                        xv_.data() + i * 2 * g.pairRows * g.cin * 2);
      }
      accumulateTiles(g, dt_.data(), xv_.data(), images, acc_.data());
    }
  }
  void addInto(float *sums) const override {
    const Geometry &g = g_;
    const int64_t taps = g.kh * g.kw;
    const float *acc = acc_.data();
    for (int64_t o = 0; o < g.cout; ++o)
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t c = 0; c < g.cin; ++c)
          sums[g.oihw ? (o * g.cin + c) * taps + t
                      : (t * g.cin + c) * g.cout + o] +=
              acc[(o * taps + t) * g.cin + c];
  }

private:
  static constexpr int64_t kGroup = 3;
  Geometry g_;
  bool f32Result_;
  AlignedBuffer<float> acc_;
  AlignedBuffer<uint16_t> dt_, xv_;
};

// dx[q][c] = sum over taps and o of dy[q - offset(tap)][o] * f[tap][c][o]
// for q on the source's grid (q = h * W + w): A = dy on that grid (rows of
// positions, the output channels as the reduction: NHWC rows as they are,
// so every tap's A is whole rows from another offset, aligned), B = the
// filter per tap with pairs of output channels interleaved. dy's grid puts
// an output row at the same width as the source's, with zeros past OW and
// `lead` zero positions before it, so that a tap reaching left of column 0
// or above row 0 reads zeros. Each 32x32 block of dx (four f32 tiles, 32
// positions by 32 channels) sums all taps in the tiles and is rounded once.
// 16 f32 lanes to bf16 bits in 32-bit lanes, rounded to nearest even as
// fromF32 (a NaN stays a NaN).
GOPT_AMX inline __m512i roundToBf16(__m512i v) {
  const __m512i bias = _mm512_add_epi32(
      _mm512_set1_epi32(0x7fff),
      _mm512_and_si512(_mm512_srli_epi32(v, 16), _mm512_set1_epi32(1)));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(v, bias), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(
      _mm512_castsi512_ps(v), _mm512_castsi512_ps(v), _CMP_UNORD_Q);
  return _mm512_mask_blend_epi32(
      nan, rounded,
      _mm512_or_si512(_mm512_srli_epi32(v, 16), _mm512_set1_epi32(0x40)));
}

__attribute__((noinline)) GOPT_AMX void
dataTiles(const Geometry &g, int64_t lead, const uint16_t *grid,
          const uint16_t *packed, uint16_t *dx) {
  __asm__ volatile("" ::: "memory");
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  loadTileConfig(config);
  const int64_t taps = g.kh * g.kw, hw = g.h * g.w;
  const int64_t chunks = g.cout / 32, cBlocks = g.cin / 16;
  const long aStride = static_cast<long>(g.cout * 2), bStride = 64;
  alignas(64) float block[32 * 32];
  for (int64_t q = 0; q < hw; q += 32)
    for (int64_t c = 0; c < g.cin; c += 32) {
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (int64_t tap = 0; tap < taps; ++tap) {
        const int64_t offset = (tap / g.kw) * g.w + tap % g.kw;
        const uint16_t *a = grid + (lead + q - offset) * g.cout;
        for (int64_t k = 0; k < chunks; ++k) {
          const uint16_t *b =
              packed + ((tap * chunks + k) * cBlocks + c / 16) * 512;
          _tile_loadd(4, a + 32 * k, aStride);
          _tile_loadd(5, a + 16 * g.cout + 32 * k, aStride);
          _tile_loadd(6, b, bStride);
          _tile_loadd(7, b + 512, bStride);
          _tile_dpbf16ps(0, 4, 6);
          _tile_dpbf16ps(1, 4, 7);
          _tile_dpbf16ps(2, 5, 6);
          _tile_dpbf16ps(3, 5, 7);
        }
      }
      _tile_stored(0, block, 128);
      _tile_stored(1, block + 16, 128);
      _tile_stored(2, block + 16 * 32, 128);
      _tile_stored(3, block + 16 * 32 + 16, 128);
      __asm__ volatile("" ::: "memory");
      const int64_t rows = std::min<int64_t>(32, hw - q);
      for (int64_t r = 0; r < rows; ++r) {
        const __m512i lo = _mm512_castps_si512(_mm512_load_ps(block + r * 32)),
                      hi = _mm512_castps_si512(
                          _mm512_load_ps(block + r * 32 + 16));
        __m256i packedLo = _mm512_cvtepi32_epi16(roundToBf16(lo)),
                packedHi = _mm512_cvtepi32_epi16(roundToBf16(hi));
        uint16_t *out = dx + (q + r) * g.cin + c;
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(out), packedLo);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + 16), packedHi);
      }
    }
  _tile_release();
  __asm__ volatile("" ::: "memory");
}

class AmxDataGradKernel : public AmxDataGrad {
public:
  explicit AmxDataGradKernel(const Geometry &g) : g_(g) {
    const int64_t taps = g.kh * g.kw;
    lead_ = (g.kh - 1) * g.w + g.kw - 1;
    const int64_t rows = lead_ + (g.h * g.w + 31) / 32 * 32;
    grid_.resize(rows * g.cout);
    packed_.resize(taps * g.cout * g.cin);
  }

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    setFilter(in[1].data<uint16_t>());
    compute(in[0].data<uint16_t>(), in[0].shape()[0], out[0].data<uint16_t>());
    return Status::success();
  }
  const char *implementation() const override { return "amx"; }
  size_t workspaceBytes() const override {
    return (grid_.size() + packed_.size()) * 2;
  }

  void setFilter(const uint16_t *f) override {
    const Geometry &g = g_;
    const int64_t taps = g.kh * g.kw, chunks = g.cout / 32,
                  cBlocks = g.cin / 16;
    uint16_t *packed = packed_.data();
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t c = 0; c < g.cin; ++c)
        for (int64_t o = 0; o < g.cout; ++o) {
          const uint16_t v = f[g.oihw ? (o * g.cin + c) * taps + t
                                      : (t * g.cin + c) * g.cout + o];
          // [tap][o / 32][c / 16][(o % 32) / 2][c % 16][o % 2]
          packed[((((t * chunks + o / 32) * cBlocks + c / 16) * 16 +
                   (o % 32) / 2) *
                      16 +
                  c % 16) *
                     2 +
                 o % 2] = v;
        }
  }
  void compute(const uint16_t *dy, int64_t n, uint16_t *dx) override {
    const Geometry &g = g_;
    const int64_t dyImage = g.oh * g.ow * g.cout, dxImage = g.h * g.w * g.cin;
    uint16_t *grid = grid_.data();
    for (int64_t i = 0; i < n; ++i) {
      // Only the rows' values change; the zeros around them stay.
      for (int64_t oh = 0; oh < g.oh; ++oh)
        std::memcpy(grid + (lead_ + oh * g.w) * g.cout,
                    dy + i * dyImage + oh * g.ow * g.cout,
                    g.ow * g.cout * sizeof(uint16_t));
      dataTiles(g, lead_, grid, packed_.data(), dx + i * dxImage);
    }
  }
  int64_t gridImage() const override {
    return static_cast<int64_t>(grid_.size());
  }
  int64_t gridLead() const override { return lead_; }
  void computeFromGrid(const uint16_t *grid, int64_t n, uint16_t *dx) override {
    const Geometry &g = g_;
    const int64_t dxImage = g.h * g.w * g.cin;
    for (int64_t i = 0; i < n; ++i)
      dataTiles(g, lead_, grid + i * gridImage(), packed_.data(),
                dx + i * dxImage);
  }

private:
  Geometry g_;
  int64_t lead_ = 0;
  AlignedBuffer<uint16_t> grid_, packed_;
};

// y[p][o] = act(bias[o] + sum over taps and c of x[p + offset(tap)][c] *
// f[tap][c][o]) for p = oh * W + ow on the source's grid: A = x's NHWC rows
// from another offset per tap (no im2col; the source gradient's structure
// with the roles of the channels swapped), B = the filter per tap with pairs
// of input channels interleaved. Each 32x32 block of y (32 positions by 32
// output channels) sums all taps in four f32 tiles; the bias and relu are
// added from f32 and the result rounded once (into y unless y is null,
// and into `local` if given). Blocks whose rows would read
// past the image (the last taps of the last blocks) read `tail`, a copy of
// x from position tailFirst on with zeros after it; positions past OW are
// computed and dropped.
__attribute__((noinline)) GOPT_AMX __attribute__((target("avx512bf16"))) void
forwardTiles(const Geometry &g, const uint16_t *x, const uint16_t *tail,
             int64_t tailFirst, const uint16_t *packed, const float *bias,
             bool relu, uint16_t *y, const uint16_t *next, uint16_t *local) {
  __asm__ volatile("" ::: "memory");
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  loadTileConfig(config);
  const int64_t taps = g.kh * g.kw, chunks = g.cin / 32, oBlocks = g.cout / 16;
  const long aStride = static_cast<long>(g.cin * 2), bStride = 64;
  alignas(64) float block[32 * 32];
  const __m512 zero = _mm512_setzero_ps();
  const bool stream =
      y && reinterpret_cast<uintptr_t>(y) % 64 == 0 && g.cout % 32 == 0;
  const int64_t prefetchBytes =
      (g.h * g.w * g.cin * 2 / (g.positions / 32) + 63) / 64 * 64;
  // 32 output channels at a time over all positions: their filter (18 KiB
  // for 32 input channels) stays in L1.
  for (int64_t o = 0; o < g.cout; o += 32)
    for (int64_t q = 0; q < g.positions; q += 32) {
      const uint16_t *base =
          q < tailFirst ? x + q * g.cin : tail + (q - tailFirst) * g.cin;
      // The next image into L2 while this one's products run (the
      // convolution reads each image from memory once).
      if (next && o == 0) {
        const char *from =
            reinterpret_cast<const char *>(next) + q / 32 * prefetchBytes;
        for (int64_t b = 0; b < prefetchBytes; b += 64)
          _mm_prefetch(from + b, _MM_HINT_T1);
      }
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (int64_t tap = 0; tap < taps; ++tap) {
        const int64_t offset = (tap / g.kw) * g.w + tap % g.kw;
        const uint16_t *a = base + offset * g.cin;
        for (int64_t k = 0; k < chunks; ++k) {
          const uint16_t *b =
              packed + ((tap * chunks + k) * oBlocks + o / 16) * 512;
          _tile_loadd(4, a + 32 * k, aStride);
          _tile_loadd(5, a + 16 * g.cin + 32 * k, aStride);
          _tile_loadd(6, b, bStride);
          _tile_loadd(7, b + 512, bStride);
          _tile_dpbf16ps(0, 4, 6);
          _tile_dpbf16ps(1, 4, 7);
          _tile_dpbf16ps(2, 5, 6);
          _tile_dpbf16ps(3, 5, 7);
        }
      }
      _tile_stored(0, block, 128);
      _tile_stored(1, block + 16, 128);
      _tile_stored(2, block + 16 * 32, 128);
      _tile_stored(3, block + 16 * 32 + 16, 128);
      __asm__ volatile("" ::: "memory");
      const __m512 b0 = _mm512_loadu_ps(bias + o),
                   b1 = _mm512_loadu_ps(bias + o + 16);
      // The block's positions walk the grid (no division per row).
      int64_t oh = q / g.w, ow = q % g.w;
      for (int64_t r = 0; r < 32;
           ++r, ow = ow + 1 == g.w ? 0 : ow + 1, oh += ow == 0 ? 1 : 0) {
        if (oh >= g.oh || ow >= g.ow)
          continue;
        __m512 lo = _mm512_add_ps(_mm512_load_ps(block + r * 32), b0),
               hi = _mm512_add_ps(_mm512_load_ps(block + r * 32 + 16), b1);
        if (relu) {
          lo = _mm512_max_ps(lo, zero);
          hi = _mm512_max_ps(hi, zero);
        }
        // Rounded to nearest even as fromF32 (denormal sums, which
        // VCVTNE2PS2BF16 flushes to zero, aside).
        const __m512i v = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
        const int64_t at = (oh * g.ow + ow) * g.cout + o;
        // Whole aligned lines bypass the cache: the result goes to memory
        // anyway (75 MB at batch 1024), and the lines are not read first.
        if (stream)
          _mm512_stream_si512(reinterpret_cast<__m512i *>(y + at), v);
        else if (y)
          _mm512_storeu_si512(y + at, v);
        if (local)
          _mm512_storeu_si512(local + at, v);
      }
    }
  _tile_release();
  // The streaming stores ordered before whatever reads y next.
  if (stream)
    _mm_sfence();
  __asm__ volatile("" ::: "memory");
}

// y's max_pool over windows of kh x kw with strides kh x kw from the top
// left (oh x ow of them), 32 channels a vector (channels a multiple of
// 32), the same bits as FastKernels.cpp's tiled NHWC pool: each bf16 value
// compared as the int16 key +-magnitude (the order of the floats, -0 and
// +0 equal), the first maximum winning, a NaN winning over anything and
// only a later NaN over it (the f32 compares' rule), the winner's bits the
// result (a NaN quieted). With `masks`, each window's winners as
// PoolWinnerMasks records them: the tap index as the gradient's
// windowWinners16 (TrainingKernels.cpp) finds it, and the maximum > 0.
// bf16 bits -> int16 keys ordered as the values (+-magnitude).
GOPT_AMX inline __m512i orderKey(__m512i v) {
  const __m512i m = _mm512_and_si512(v, _mm512_set1_epi16(0x7fff));
  return _mm512_mask_sub_epi16(m, _mm512_movepi16_mask(v),
                               _mm512_setzero_si512(), m);
}

// One window's winner masks for 32 channels: per tap, the lanes of
// `positive` whose winning tap (`bestAt`) it is, as two 16-lane halves.
GOPT_AMX inline __attribute__((always_inline)) void
storeWinnerMasks(uint16_t *m, int32_t taps, __mmask32 positive,
                 __m512i bestAt) {
  for (int32_t t = 0; t < taps; ++t) {
    const __mmask32 pick =
        positive & _mm512_cmpeq_epi16_mask(
                       bestAt, _mm512_set1_epi16(static_cast<short>(t)));
    m[t] = static_cast<uint16_t>(pick);
    m[taps + t] = static_cast<uint16_t>(pick >> 16);
  }
}

GOPT_AMX void maxPoolImage(const uint16_t *y, int64_t w, int64_t channels,
                           int64_t oh, int64_t ow, int64_t kh, int64_t kw,
                           uint16_t *pooled, uint16_t *masks) {
  const int32_t taps = static_cast<int32_t>(kh * kw);
  const __m512i magnitude = _mm512_set1_epi16(0x7fff),
                infinity = _mm512_set1_epi16(0x7f80),
                zero = _mm512_setzero_si512();

  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      const uint16_t *first = y + (i * kh * w + j * kw) * channels;
      uint16_t *out = pooled + (i * ow + j) * channels;
      for (int64_t ch = 0; ch < channels; ch += 32) {
        __m512i best = _mm512_loadu_si512(first + ch);
        __m512i bestKey = orderKey(best), bestAt = zero;
        __mmask32 bestNan = _mm512_cmpgt_epu16_mask(
            _mm512_and_si512(best, magnitude), infinity);
        for (int32_t t = 1; t < taps; ++t) {
          const __m512i v = _mm512_loadu_si512(
              first + ((t / kw) * w + t % kw) * channels + ch);
          const __m512i k = orderKey(v);
          const __mmask32 nan =
              _mm512_cmpgt_epu16_mask(_mm512_and_si512(v, magnitude), infinity);
          const __mmask32 take =
              (_mm512_cmpgt_epi16_mask(k, bestKey) & ~bestNan) | nan;
          best = _mm512_mask_mov_epi16(best, take, v);
          bestKey = _mm512_mask_mov_epi16(bestKey, take, k);
          bestAt = _mm512_mask_mov_epi16(
              bestAt, take, _mm512_set1_epi16(static_cast<short>(t)));
          bestNan = (bestNan & ~take) | (take & nan);
        }
        if (masks)
          storeWinnerMasks(
              masks + ((i * ow + j) * (channels / 16) + ch / 16) * taps, taps,
              _mm512_cmpgt_epi16_mask(bestKey, zero) & ~bestNan, bestAt);
        _mm512_storeu_si512(
            out + ch,
            _mm512_mask_mov_epi16(
                best, bestNan, _mm512_or_si512(best, _mm512_set1_epi16(0x40))));
      }
    }
}

// maxPoolImage where no value is a NaN, without its NaN bookkeeping
// (about a third of its vector operations): the same results, masks
// included. Returns false, its results to be discarded, where a value the
// windows read is a NaN (found from the largest magnitude read).
GOPT_AMX bool maxPoolImageNoNan(const uint16_t *y, int64_t w, int64_t channels,
                                int64_t oh, int64_t ow, int64_t kh, int64_t kw,
                                uint16_t *pooled, uint16_t *masks) {
  const int32_t taps = static_cast<int32_t>(kh * kw);
  const __m512i magnitude = _mm512_set1_epi16(0x7fff),
                zero = _mm512_setzero_si512();
  __m512i largest = zero; // the largest magnitude read, per lane
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      const uint16_t *first = y + (i * kh * w + j * kw) * channels;
      uint16_t *out = pooled + (i * ow + j) * channels;
      for (int64_t ch = 0; ch < channels; ch += 32) {
        __m512i best = _mm512_loadu_si512(first + ch);
        __m512i m = _mm512_and_si512(best, magnitude);
        largest = _mm512_max_epu16(largest, m);
        __m512i bestKey =
            _mm512_mask_sub_epi16(m, _mm512_movepi16_mask(best), zero, m);
        __m512i bestAt = zero;
        for (int32_t t = 1; t < taps; ++t) {
          const __m512i v = _mm512_loadu_si512(
              first + ((t / kw) * w + t % kw) * channels + ch);
          m = _mm512_and_si512(v, magnitude);
          largest = _mm512_max_epu16(largest, m);
          const __m512i k =
              _mm512_mask_sub_epi16(m, _mm512_movepi16_mask(v), zero, m);
          const __mmask32 take = _mm512_cmpgt_epi16_mask(k, bestKey);
          best = _mm512_mask_mov_epi16(best, take, v);
          bestKey = _mm512_mask_mov_epi16(bestKey, take, k);
          bestAt = _mm512_mask_mov_epi16(
              bestAt, take, _mm512_set1_epi16(static_cast<short>(t)));
        }
        if (masks)
          storeWinnerMasks(
              masks + ((i * ow + j) * (channels / 16) + ch / 16) * taps, taps,
              _mm512_cmpgt_epi16_mask(bestKey, zero), bestAt);
        _mm512_storeu_si512(out + ch, best);
      }
    }
  return _mm512_cmpgt_epu16_mask(largest, _mm512_set1_epi16(0x7f80)) == 0;
}

// `count` values from the cache to memory: whole aligned lines with
// streaming stores (they are not read back soon, and the lines are not read
// first), else a copy.
GOPT_AMX void storeImage(const uint16_t *from, int64_t count, uint16_t *to) {
  if (reinterpret_cast<uintptr_t>(to) % 64 != 0 || count % 32 != 0) {
    std::memcpy(to, from, count * sizeof(uint16_t));
    return;
  }
  for (int64_t i = 0; i < count; i += 32)
    _mm512_stream_si512(reinterpret_cast<__m512i *>(to + i),
                        _mm512_loadu_si512(from + i));
  _mm_sfence();
}

// conv2d(x, filter[, bias]) with no activation or relu; x, the filter and
// the result bf16, the bias f32 or bf16. With a pool, also the max_pool of
// each image's result, read from a copy in the thread's cache instead of
// memory, and transposed to NCHW (a second result). The images run in parallel,
// one per thread at a time.
class AmxConvForwardKernel : public Kernel {
public:
  AmxConvForwardKernel(
      const Geometry &g, bool hasBias, DType biasType, bool relu,
      PoolAfterConv pool = {}, std::shared_ptr<PoolWinnerMasks> masks = nullptr,
      std::unique_ptr<SingleChannelConvImages> source = nullptr,
      int sourceInputs = 0, int64_t sourceImage = 0,
      std::shared_ptr<SourceConvResult> sourceResult = nullptr)
      : g_(g), hasBias_(hasBias), biasType_(biasType), relu_(relu), pool_(pool),
        masks_(std::move(masks)), source_(std::move(source)),
        sourceInputs_(sourceInputs), sourceImage_(sourceImage),
        sourceResult_(std::move(sourceResult)) {
    if (masks_)
      masks_->imageElements =
          pool.oh * pool.ow * (g.cout / 16) * pool.kh * pool.kw;
    packed_.resize(g.kh * g.kw * g.cin * g.cout);
    bias_.assign(g.cout, 0.0f);
    maxOffset_ = (g.kh - 1) * g.w + g.kw - 1;
    const int64_t hw = g.h * g.w;
    tailFirst_ = 0;
    while (tailFirst_ < g.positions && tailFirst_ + 31 + maxOffset_ < hw)
      tailFirst_ += 32;
    tailRows_ = g.positions + maxOffset_ - tailFirst_;
  }

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const Geometry &g = g_;
    // With the source conv: its operands first, then this conv's weights;
    // its result the first output.
    const int w = source_ ? sourceInputs_ - 1 : 0, r = source_ ? 1 : 0;
    pack(in[1 + w].data<uint16_t>());
    if (hasBias_)
      for (int64_t o = 0; o < g.cout; ++o)
        bias_[o] = biasType_ == DType::kF32
                       ? in[2 + w].data<float>()[o]
                       : toF32(in[2 + w].data<uint16_t>()[o]);
    if (source_)
      source_->setWeights(in[1].data(),
                          sourceInputs_ > 2 ? in[2].data() : nullptr);
    const int64_t n = in[0].shape()[0], hw = g.h * g.w;
    const int64_t xImage = hw * g.cin, yImage = g.oh * g.ow * g.cout;
    const uint16_t *x = in[0].data<uint16_t>();
    uint16_t *src = source_ && !sourceResult_->skipResult
                        ? out[0].data<uint16_t>()
                        : nullptr;
    uint16_t *y = out[r].data<uint16_t>();
    const int64_t copied = std::max<int64_t>(hw - tailFirst_, 0);
    const bool pooling = pool_.kh > 0;
    const int64_t pooledImage = pool_.oh * pool_.ow * g.cout;
    uint16_t *pooled = pooling ? out[1 + r].data<uint16_t>() : nullptr;
    const bool record = pooling && masks_ && masks_->record;
    if (record &&
        masks_->bits.size() < static_cast<size_t>(n * masks_->imageElements))
      masks_->bits.resize(n * masks_->imageElements);
    uint16_t *masks = record ? masks_->bits.data() : nullptr;
    if (record && masks_->skipResult)
      y = nullptr;
    // The pooled result (19 MB at the MNIST CNN's batch 1024) goes to
    // memory past the caches: transposed into the thread's cache, then
    // whole lines streamed (storeImage; the NCHW rows of 144 values start
    // on every other half line, so the transpose's own stores would read
    // each line first).
    const bool streamPooled = true;
    std::atomic<int64_t> claimed{0};
    const bool claimImages = claimImages_;
#pragma omp parallel if (n > 1)
    {
      AlignedBuffer<uint16_t> tail, local, nhwc, nchw, source;
      tail.resize(tailRows_ * g.cin);
      if (pooling) {
        local.resize(yImage);
        nhwc.resize(pooledImage);
        if (streamPooled)
          nchw.resize(pooledImage);
      }
      // The source conv's result of one image, with zeros after it as far
      // as the last block's taps read (so it is its own tail).
      if (source_)
        source.resize(std::max(hw, tailFirst_ + tailRows_) * g.cin);
      auto runImage = [&](int64_t i) {
        const uint16_t *image = nullptr, *tailData = tail.data(),
                       *next = nullptr;
        if (!source_) {
          image = x + i * xImage;
          next = i + 1 < n ? image + xImage : nullptr;
        }
        if (source_) {
          source_->compute(x + i * sourceImage_, 1, source.data());
          if (src)
            storeImage(source.data(), xImage, src + i * xImage);
          image = source.data();
          tailData = image + tailFirst_ * g.cin;
          next = nullptr;
        } else if (copied) {
          std::memcpy(tail.data(), image + tailFirst_ * g.cin,
                      copied * g.cin * sizeof(uint16_t));
        }
        forwardTiles(g, image, tailData, tailFirst_, packed_.data(),
                     bias_.data(), relu_, y ? y + i * yImage : nullptr, next,
                     pooling ? local.data() : nullptr);
        if (pooling) {
          uint16_t *imageMasks =
              masks ? masks + i * masks_->imageElements : nullptr;
          if (!poolNoNan_ ||
              !maxPoolImageNoNan(local.data(), g.ow, g.cout, pool_.oh, pool_.ow,
                                 pool_.kh, pool_.kw, nhwc.data(), imageMasks))
            maxPoolImage(local.data(), g.ow, g.cout, pool_.oh, pool_.ow,
                         pool_.kh, pool_.kw, nhwc.data(), imageMasks);
          if (streamPooled) {
            transposeBf16(nhwc.data(), pool_.oh * pool_.ow, g.cout,
                          nchw.data());
            storeImage(nchw.data(), pooledImage, pooled + i * pooledImage);
          } else {
            transposeBf16(nhwc.data(), pool_.oh * pool_.ow, g.cout,
                          pooled + i * pooledImage);
          }
        }
      };
      if (claimImages) {
        // A few images a claim: a thread the host's other tenants hold
        // back leaves its images to the others instead of the step
        // waiting for it at the end (each image's results are its own,
        // so any split gives the same bits).
        for (int64_t first;
             (first = claimed.fetch_add(kImagesPerClaim,
                                        std::memory_order_relaxed)) < n;)
          for (int64_t i = first; i < std::min(n, first + kImagesPerClaim); ++i)
            runImage(i);
      } else {
#pragma omp for schedule(static)
        for (int64_t i = 0; i < n; ++i)
          runImage(i);
      }
    }
    return Status::success();
  }
  const char *implementation() const override {
    return source_ ? (sourceResult_->skipResult ? "first+amx+pool(recompute)"
                                                : "first+amx+pool")
           : pool_.kh > 0 ? "amx+pool"
                          : "amx";
  }
  size_t workspaceBytes() const override {
    return packed_.size() * 2 + bias_.size() * 4 +
           (masks_ ? masks_->bits.size() * 2 : 0);
  }

private:
  // [tap][c / 32][o / 16][(c % 32) / 2][o % 16][c % 2]: per tap and
  // 32 input channels, B tiles of 16 output channels.
  void pack(const uint16_t *f) {
    const Geometry &g = g_;
    const int64_t taps = g.kh * g.kw, chunks = g.cin / 32,
                  oBlocks = g.cout / 16;
    uint16_t *packed = packed_.data();
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t c = 0; c < g.cin; ++c)
        for (int64_t o = 0; o < g.cout; ++o)
          packed[((t * chunks + c / 32) * oBlocks + o / 16) * 512 +
                 ((c % 32) / 2) * 32 + (o % 16) * 2 + c % 2] =
              f[g.oihw ? (o * g.cin + c) * taps + t
                       : (t * g.cin + c) * g.cout + o];
  }

  Geometry g_;
  bool hasBias_;
  DType biasType_;
  bool relu_;
  PoolAfterConv pool_;
  std::shared_ptr<PoolWinnerMasks> masks_;
  // The one-channel conv before this one, run here (null: x is an input).
  std::unique_ptr<SingleChannelConvImages> source_;
  int sourceInputs_ = 0;
  int64_t sourceImage_ = 0; // its source's elements per image
  std::shared_ptr<SourceConvResult> sourceResult_;
  int64_t maxOffset_ = 0, tailFirst_ = 0, tailRows_ = 0;
  // Images a thread takes at a time (about 0.1 ms of the MNIST CNN's).
  static constexpr int64_t kImagesPerClaim = 4;
  bool claimImages_ = convImageClaimsEnabled();
  // The pool without NaN bookkeeping until a NaN is read.
  bool poolNoNan_ = envSwitchOn("GOPT_CONV_POOL_NO_NAN_PASS");
  AlignedBuffer<uint16_t> packed_;
  std::vector<float> bias_;
};
#endif

} // namespace

bool amxFilterGradEnabled() { return envSwitchOn("GOPT_AMX_FILTER_GRAD"); }

#ifdef GOPT_HAVE_AMX_FILTER_GRAD
namespace {
// The geometry of a conv gradient these kernels run: x [N, H, W, Cin] (the
// conv's source), dy [N, OH, OW, Cout] and the filter's shape.
std::optional<Geometry> amxGeometry(const KernelConfig &c, const Shape &x,
                                    const Shape &dy, const Shape &f) {
  if (!amxBf16Usable())
    return std::nullopt;
  for (DType t : c.inputTypes)
    if (t != DType::kBF16)
      return std::nullopt;
  OpAttrs attrs = c.attrs();
  if (attrs.getString("data_format") != "NHWC" || attrs.getInt("groups") != 1)
    return std::nullopt;
  if (x.size() != 4 || dy.size() != 4 || f.size() != 4 || x[0] != dy[0])
    return std::nullopt;
  for (int64_t s : attrs.getWindowInts("strides"))
    if (s != 1)
      return std::nullopt;
  for (int64_t d : attrs.getWindowInts("dilations"))
    if (d != 1)
      return std::nullopt;
  const std::string padding = attrs.getString("padding");
  if (padding != "VALID") {
    if (padding != "EXPLICIT")
      return std::nullopt;
    for (int64_t p : attrs.getWindowInts("pads"))
      if (p != 0)
        return std::nullopt;
  }
  Geometry g;
  g.oihw = attrs.getString("filter_format") == "OIHW";
  g.h = x[1], g.w = x[2], g.cin = x[3];
  g.kh = g.oihw ? f[2] : f[0];
  g.kw = g.oihw ? f[3] : f[1];
  g.cout = g.oihw ? f[0] : f[3];
  if ((g.oihw ? f[1] : f[2]) != g.cin || g.kh < 1 || g.kw < 1 || g.kh > g.h ||
      g.kw > g.w)
    return std::nullopt;
  g.oh = g.h - g.kh + 1, g.ow = g.w - g.kw + 1;
  if (dy[1] != g.oh || dy[2] != g.ow || dy[3] != g.cout)
    return std::nullopt;
  if (g.cin % 32 != 0 || g.cout % 32 != 0 || g.cin > 1024 || g.cout > 1024 ||
      g.h * g.w > (int64_t(1) << 20))
    return std::nullopt;
  g.positions = (g.oh * g.w + 31) / 32 * 32;
  g.blocks = g.positions / 32 + 1;
  g.pairRows = g.positions / 2 + ((g.kh - 1) * g.w + g.kw - 1) / 2 + 1;
  return g;
}
} // namespace
#endif

bool amxDataGradEnabled() { return envSwitchOn("GOPT_AMX_DATA_GRAD"); }

std::unique_ptr<AmxFilterGrad> createAmxFilterGrad(const KernelConfig &c) {
#ifdef GOPT_HAVE_AMX_FILTER_GRAD
  if (!amxFilterGradEnabled() || c.inputShapes.size() != 2 ||
      c.outputShapes.size() != 1 ||
      (c.outputTypes[0] != DType::kF32 && c.outputTypes[0] != DType::kBF16))
    return nullptr;
  std::optional<Geometry> g =
      amxGeometry(c, c.inputShapes[0], c.inputShapes[1], c.outputShapes[0]);
  if (!g)
    return nullptr;
  return std::make_unique<AmxFilterGradKernel>(*g,
                                               c.outputTypes[0] == DType::kF32);
#else
  (void)c;
  return nullptr;
#endif
}

std::unique_ptr<AmxDataGrad> createAmxDataGrad(const KernelConfig &c) {
#ifdef GOPT_HAVE_AMX_FILTER_GRAD
  if (!amxDataGradEnabled() || c.inputShapes.size() != 2 ||
      c.outputShapes.size() != 1 || c.outputTypes[0] != DType::kBF16)
    return nullptr;
  std::optional<Geometry> g =
      amxGeometry(c, c.outputShapes[0], c.inputShapes[0], c.inputShapes[1]);
  if (!g)
    return nullptr;
  return std::make_unique<AmxDataGradKernel>(*g);
#else
  (void)c;
  return nullptr;
#endif
}

bool amxConvForwardEnabled() { return envSwitchOn("GOPT_AMX_CONV_FORWARD"); }

namespace {
std::unique_ptr<Kernel>
makeAmxConvForward(const KernelConfig &c, PoolAfterConv pool,
                   std::shared_ptr<PoolWinnerMasks> masks = nullptr,
                   const KernelConfig *sourceConv = nullptr,
                   std::shared_ptr<SourceConvResult> sourceResult = nullptr) {
#ifdef GOPT_HAVE_AMX_FILTER_GRAD
  if (!amxConvForwardEnabled() ||
      (c.inputShapes.size() != 2 && c.inputShapes.size() != 3) ||
      c.inputTypes.size() != c.inputShapes.size() ||
      c.outputShapes.size() != 1 || c.outputTypes[0] != DType::kBF16)
    return nullptr;
  const std::string activation = c.attrs().getString("activation");
  if (!activation.empty() && activation != "none" && activation != "relu")
    return nullptr;
  const bool hasBias = c.inputShapes.size() == 3;
  const DType biasType = hasBias ? c.inputTypes[2] : DType::kF32;
  if (hasBias && (biasType != DType::kF32 && biasType != DType::kBF16))
    return nullptr;
  // The geometry's checks read the two bf16 operands alone.
  KernelConfig operands = c;
  operands.inputTypes.resize(2);
  std::optional<Geometry> g = amxGeometry(operands, c.inputShapes[0],
                                          c.outputShapes[0], c.inputShapes[1]);
  if (!g || (hasBias &&
             (c.inputShapes[2].size() != 1 || c.inputShapes[2][0] != g->cout)))
    return nullptr;
  std::unique_ptr<SingleChannelConvImages> source;
  if (sourceConv) {
    // Its result is this conv's source, bf16 as everything here.
    if (!sourceResult || !firstConvRecomputeEnabled() ||
        sourceConv->outputShapes.size() != 1 ||
        sourceConv->outputShapes[0] != c.inputShapes[0] ||
        sourceConv->outputTypes[0] != DType::kBF16 ||
        sourceConv->inputShapes.size() < 2 ||
        sourceConv->inputShapes[0].empty() ||
        sourceConv->inputShapes[0][0] != c.inputShapes[0][0] ||
        sourceConv->inputTypes[0] != DType::kBF16)
      return nullptr;
    source = createSingleChannelConvImages(*sourceConv);
    if (!source)
      return nullptr;
  }
  const int sourceInputs =
      sourceConv ? static_cast<int>(sourceConv->inputShapes.size()) : 0;
  const int64_t sourceImage =
      sourceConv ? numElements(sourceConv->inputShapes[0]) /
                       std::max<int64_t>(sourceConv->inputShapes[0][0], 1)
                 : 0;
  return std::make_unique<AmxConvForwardKernel>(
      *g, hasBias, biasType, activation == "relu", pool, std::move(masks),
      std::move(source), sourceInputs, sourceImage, std::move(sourceResult));
#else
  (void)c;
  (void)pool;
  (void)masks;
  (void)sourceConv;
  (void)sourceResult;
  return nullptr;
#endif
}
} // namespace

std::unique_ptr<Kernel> createAmxConvForward(const KernelConfig &c) {
  return makeAmxConvForward(c, {});
}

bool amxConvPoolEnabled() { return envSwitchOn("GOPT_AMX_CONV_POOL"); }

bool poolWinnerMaskEnabled() { return envSwitchOn("GOPT_POOL_WINNER_MASK"); }

bool convImageClaimsEnabled() { return envSwitchOn("GOPT_CONV_IMAGE_CLAIMS"); }

bool firstConvRecomputeEnabled() {
  return envSwitchOn("GOPT_FIRST_CONV_RECOMPUTE");
}

std::unique_ptr<Kernel>
createAmxConvMaxPoolToNchw(const KernelConfig &conv, const KernelConfig &pool,
                           std::shared_ptr<PoolWinnerMasks> masks,
                           const KernelConfig *sourceConv,
                           std::shared_ptr<SourceConvResult> source) {
  if (!amxConvPoolEnabled() || pool.inputShapes.size() != 1 ||
      pool.outputShapes.size() != 1 || conv.outputShapes.size() != 1 ||
      pool.inputShapes[0] != conv.outputShapes[0] ||
      pool.inputTypes[0] != DType::kBF16 || pool.outputTypes[0] != DType::kBF16)
    return nullptr;
  OpAttrs attrs = pool.attrs();
  if (attrs.getString("data_format") == "NCHW" || attrs.getBool("ceil_mode"))
    return nullptr;
  const std::string padding = attrs.getString("padding");
  std::vector<int64_t> kernel = attrs.getInts("kernel");
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  if ((padding != "EXPLICIT" && padding != "VALID") || kernel.size() != 2 ||
      strides != kernel || pads != std::vector<int64_t>{0, 0, 0, 0})
    return nullptr;
  const Shape &x = pool.inputShapes[0], &y = pool.outputShapes[0];
  PoolAfterConv p;
  p.kh = kernel[0], p.kw = kernel[1];
  if (x.size() != 4 || y.size() != 4 || p.kh < 1 || p.kw < 1 || y[0] != x[0] ||
      y[3] != x[3] || y[1] != x[1] / p.kh || y[2] != x[2] / p.kw || y[1] < 1 ||
      y[2] < 1)
    return nullptr;
  p.oh = y[1], p.ow = y[2];
  return makeAmxConvForward(conv, p, std::move(masks), sourceConv,
                            std::move(source));
}

} // namespace gopt::runtime::cpu
