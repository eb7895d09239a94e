//===- Conv1x1F32.cpp - gopt's AVX-512 f32 1x1 convolution ----------------===//
//
// See Conv1x1F32.h. Work items are (image, 64-channel block, run of
// pixels), split evenly over the threads in that order (blocks outermost
// for small images), so that a thread's items share a block's filter
// (ResNet-50's 7x7 layers: 49 pixels, 8-32 blocks). Within an item, passes of
// 128 input channels: the pass's filter slice (32 KiB) stays in L1 while the
// item's tiles of 6 pixels stream through it; the tile's partial sums go to the
// result between passes.
//
//===----------------------------------------------------------------------===//
#include "Conv1x1F32.h"

#include "Avx512Lanes.h"
#include "EnvSwitch.h"
#include "SiluAvx512.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gopt::runtime::cpu {

// Read at each kernel's creation: A/B timings build both in one process.
bool conv1x1F32Enabled() { return envSwitchOn("GOPT_CONV_1X1_F32"); }
bool conv1x1F32ClampEnabled() { return envSwitchOn("GOPT_CONV_1X1_F32_CLAMP"); }
bool conv1x1PoolF32Enabled() { return envSwitchOn("GOPT_CONV_1X1_POOL_F32"); }
bool conv1x1F32SiluEnabled() { return envSwitchOn("GOPT_CONV_1X1_F32_SILU"); }

bool conv1x1F32Preferred(const Conv1x1F32Shape &s) {
  const char *setting = std::getenv("GOPT_CONV_1X1_F32");
  if (setting && std::strcmp(setting, "all") == 0)
    return true;
  // Measured against oneDNN 2.6 on ResNet-50's shapes (one thread; see
  // docs/architecture.md): faster on one image's 7x7 result (49 rows of a
  // GEMM, which its brgconv_1x1 and jit_1x1 kernels split poorly) and on
  // several in NHWC, 5-15% slower on 14x14 and larger ones; several
  // images' 7x7 results on nChw16c are as fast on jit_1x1, which takes
  // the images' rows together.
  return s.outH() * s.outW() <= 64 && (s.n == 1 || !s.blocked);
}

#ifdef GOPT_HAVE_AVX512_LANES

namespace {

constexpr int64_t kBlock = 64;       // output channels per block: 4 zmm
constexpr int kTile = 6;             // pixels per tile: 24 accumulators
constexpr int64_t kPassBlocks = 8;   // 16-channel input blocks per pass
constexpr int64_t kRun = 16 * kTile; // pixels per work item (at most)

struct TileArgs {
  const float *x[kTile]; // each pixel's first input channel of the pass
  float *y[kTile];       // each pixel's first output channel of the block
  int64_t xBlockStride;  // floats between 16-channel input blocks
  int64_t yBlockStride;  // floats between 16-channel output blocks
  const float *w;        // the pass's filter slice: [16 * blocks][NB * 16]
  int64_t blocks;        // 16-channel input blocks in the pass
  const float *bias;     // the block's NB * 16 biases
  // Cache lines prefetched into L2 meanwhile, one per input channel (the
  // next pass's filter slice, which would otherwise stall its first tile
  // on L3: ResNet-50's 7x7 layers read 4 MiB of filter once per run).
  const char *pf;
  int64_t pfLines;
  // With `pool`: on the last pass the activated results are added to
  // pool[0 .. NB*16) (the block's sums over pixels) instead of stored.
  float *pool;
  bool first, last, sum, relu, clip, hardswish, silu;
  float lo, hi; // the clamp
};

// y[p][0 .. NB*16) (+)= sum_c x[p][c] * w[c][..] for p < P, then on the
// last pass relu; on the first pass the bias and (sum) the residual in y.
template <int NB, int P> GOPT_AVX512BW void tile(const TileArgs &a) {
  __m512 acc[P][NB];
#pragma GCC unroll 6
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
    for (int k = 0; k < NB; ++k) {
      float *y = a.y[p] + k * a.yBlockStride;
      if (!a.first)
        acc[p][k] = _mm512_loadu_ps(y);
      else if (a.sum)
        acc[p][k] =
            _mm512_add_ps(_mm512_loadu_ps(y), _mm512_loadu_ps(a.bias + k * 16));
      else
        acc[p][k] = _mm512_loadu_ps(a.bias + k * 16);
    }
  const float *x[P];
#pragma GCC unroll 6
  for (int p = 0; p < P; ++p)
    x[p] = a.x[p];
  const float *w = a.w;
  for (int64_t b = 0; b < a.blocks; ++b) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      if (b * 16 + i < a.pfLines)
        _mm_prefetch(a.pf + (b * 16 + i) * 64, _MM_HINT_T1);
      __m512 wv[NB];
#pragma GCC unroll 4
      for (int k = 0; k < NB; ++k)
        wv[k] = _mm512_loadu_ps(w + (i * NB + k) * 16);
#pragma GCC unroll 6
      for (int p = 0; p < P; ++p) {
        __m512 v = _mm512_set1_ps(x[p][i]);
#pragma GCC unroll 4
        for (int k = 0; k < NB; ++k)
          acc[p][k] = _mm512_fmadd_ps(v, wv[k], acc[p][k]);
      }
    }
    w += 16 * NB * 16;
#pragma GCC unroll 6
    for (int p = 0; p < P; ++p)
      x[p] += a.xBlockStride;
  }
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
  const __m512 lo = _mm512_set1_ps(a.lo), hi = _mm512_set1_ps(a.hi);
  const __m512 sixth = _mm512_set1_ps(1.0f / 6.0f), half = _mm512_set1_ps(0.5f);
  const bool pool = a.last && a.pool;
  __m512 sums[NB];
#pragma GCC unroll 4
  for (int k = 0; k < NB; ++k)
    sums[k] = pool ? _mm512_loadu_ps(a.pool + k * 16) : zero;
#pragma GCC unroll 6
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
    for (int k = 0; k < NB; ++k) {
      __m512 v = acc[p][k];
      // The zero-masked forms: GCC 12 warns of _mm512_max_ps's undefined
      // pass-through lanes (none with an all-ones mask).
      if (a.last && a.relu)
        v = _mm512_maskz_max_ps(0xFFFF, v, zero);
      if (a.last && a.clip)
        v = _mm512_maskz_min_ps(0xFFFF, _mm512_maskz_max_ps(0xFFFF, v, lo), hi);
      if (a.last && a.hardswish) {
        __m512 g = _mm512_fmadd_ps(v, sixth, half);
        g = _mm512_maskz_min_ps(0xFFFF, _mm512_maskz_max_ps(0xFFFF, g, zero),
                                one);
        v = _mm512_mul_ps(v, g);
      }
      if (a.last && a.silu)
        v = siluExp2(v);
      if (pool)
        sums[k] = _mm512_add_ps(sums[k], v);
      else
        _mm512_storeu_ps(a.y[p] + k * a.yBlockStride, v);
    }
  if (pool)
#pragma GCC unroll 4
    for (int k = 0; k < NB; ++k)
      _mm512_storeu_ps(a.pool + k * 16, sums[k]);
}

using TileFn = void (*)(const TileArgs &);

template <int NB> TileFn tileFor(int pixels) {
  switch (pixels) {
  case 1:
    return tile<NB, 1>;
  case 2:
    return tile<NB, 2>;
  case 3:
    return tile<NB, 3>;
  case 4:
    return tile<NB, 4>;
  case 5:
    return tile<NB, 5>;
  default:
    return tile<NB, 6>;
  }
}

TileFn tileFor(int nb, int pixels) {
  switch (nb) {
  case 1:
    return tileFor<1>(pixels);
  case 2:
    return tileFor<2>(pixels);
  case 3:
    return tileFor<3>(pixels);
  default:
    return tileFor<4>(pixels);
  }
}

} // namespace

std::unique_ptr<Conv1x1F32> Conv1x1F32::create(const Conv1x1F32Shape &s,
                                               const float *filter,
                                               const float *bias) {
  if (!avx512bwSupported() || s.n <= 0 || s.cin <= 0 || s.cin % 16 != 0 ||
      s.cout <= 0 || (s.cout % 16 != 0 && !s.pool) || s.h <= 0 || s.w <= 0 ||
      s.strideH < 1 || s.strideH > 2 || s.strideW < 1 || s.strideW > 2 ||
      (s.bias && !bias) || !filter || (s.clip && !(s.lo <= s.hi)) ||
      (s.dstImageStride != 0 &&
       (!s.blocked || s.pool ||
        s.dstImageStride < s.cout * s.outH() * s.outW())))
    return nullptr;
  auto k = std::unique_ptr<Conv1x1F32>(new Conv1x1F32());
  k->s_ = s;
  const int64_t padded = (s.cout + 15) / 16 * 16;
  k->coutPadded_ = padded;
  // Block b (nb = its 16-channel output blocks) at b * 64 * cin: [cin][nb*16].
  k->w_ = HugePageBuffer(static_cast<size_t>(s.cin * padded));
  for (int64_t b0 = 0; b0 < padded; b0 += kBlock) {
    const int64_t width = std::min(kBlock, padded - b0);
    const int64_t real = std::min(width, s.cout - b0);
    float *dst = k->w_.data() + b0 * s.cin;
    for (int64_t c = 0; c < s.cin; ++c)
      for (int64_t o = 0; o < real; ++o)
        dst[c * width + o] =
            s.oihw ? filter[(b0 + o) * s.cin + c] : filter[c * s.cout + b0 + o];
  }
  k->bias_.assign(static_cast<size_t>(padded), 0.0f);
  if (s.bias)
    std::copy(bias, bias + s.cout, k->bias_.begin());
  k->run_ = kRun;
  if (!s.pool && omp_get_max_threads() > 1)
    k->planSplit(omp_get_max_threads());
  return k;
}

int64_t Conv1x1F32::outBlocks() const {
  return (coutPadded_ + kBlock - 1) / kBlock;
}

int64_t Conv1x1F32::runsOf(int64_t run) const {
  return (s_.outH() * s_.outW() + run - 1) / run;
}

Conv1x1F32::Item Conv1x1F32::itemAt(int64_t item, int64_t runs) const {
  // With `pool` an item takes all runs of its (image, block): the block's
  // sums over the pixels are the item's alone.
  const int64_t itemRuns = s_.pool ? 1 : runs, blocks = outBlocks();
  // Where an image's pixels read are fewer than a block's channels (7x7
  // against 64), each block's filter serves every image before the next
  // block's is read, rather than every block being read again for each
  // image (batch 8's 7x7 layers read 4-8 MiB of filter each).
  if (s_.outH() * s_.outW() <= kBlock)
    return {(item / itemRuns) % s_.n, item / (itemRuns * s_.n),
            item % itemRuns};
  return {item / (itemRuns * blocks), (item / itemRuns) % blocks,
          item % itemRuns};
}

// A layer of few items splits them unevenly by count: MobileNetV3's and
// EfficientNet's 7x7 projections to 160 or 192 channels are three blocks
// (64, 64 and 32 or 64 channels) of one run, two items for one thread and
// one for the other. Runs of a half to a quarter of the pixels give more,
// smaller items, and each thread takes the items that bring its share of
// the work (16-channel blocks times pixels, plus two pixels' worth for the
// item's filter pass) closest to an even part; kept where the busiest
// thread's share falls by at least 5%.
void Conv1x1F32::planSplit(int threads) {
  const int64_t pixels = s_.outH() * s_.outW();
  const int64_t fullRuns = (pixels + kRun - 1) / kRun;
  auto plan = [&](int64_t run, std::vector<int64_t> &splits) {
    const int64_t runs = runsOf(run), items = s_.n * outBlocks() * runs;
    std::vector<double> cost(items);
    double total = 0;
    for (int64_t i = 0; i < items; ++i) {
      const Item it = itemAt(i, runs);
      const int64_t nb = std::min(kBlock, coutPadded_ - it.block * kBlock) / 16;
      const int64_t m = std::min(pixels, (it.run + 1) * run) - it.run * run;
      total += cost[i] = static_cast<double>(nb * (m + 2));
    }
    // Thread t takes the items whose cost's midpoint lies in its part.
    splits.assign(threads + 1, items);
    splits[0] = 0;
    double before = 0, busiest = 0, share = 0;
    int t = 1;
    for (int64_t i = 0; i < items; ++i) {
      while (t < threads && before + cost[i] / 2 >= total * t / threads) {
        splits[t++] = i;
        busiest = std::max(busiest, share);
        share = 0;
      }
      before += cost[i];
      share += cost[i];
    }
    return std::max(busiest, share);
  };
  std::vector<int64_t> best, splits;
  const double even = plan(kRun, best);
  double bestCost = even;
  int64_t bestRun = kRun;
  for (int64_t parts = 2; parts <= 4; ++parts) {
    const int64_t run = (pixels + fullRuns * parts - 1) / (fullRuns * parts);
    if (run < kTile)
      break;
    const double c = plan(run, splits);
    if (c < bestCost && c <= 0.95 * even) {
      bestCost = c;
      bestRun = run;
      best = splits;
    }
  }
  run_ = bestRun;
  plannedThreads_ = threads;
  splits_ = std::move(best);
}

GOPT_AVX512BW void Conv1x1F32::run(const float *src, float *dst) const {
  const Conv1x1F32Shape &s = s_;
  const int64_t oh = s.outH(), ow = s.outW(), pixels = oh * ow;
  const int64_t inBlocks = s.cin / 16;
  const int64_t outBlocks = this->outBlocks(), runs = runsOf(run_);
  const int64_t items = s.n * outBlocks * (s.pool ? 1 : runs);
  // Strides in floats: per image, per 16-channel block, per pixel.
  const int64_t xImage = s.cin * s.h * s.w,
                yImage = s.dstImageStride ? s.dstImageStride : s.cout * pixels;
  const int64_t xBlock = s.blocked ? s.h * s.w * 16 : 16;
  const int64_t yBlock = s.blocked ? pixels * 16 : 16;
  const int64_t xPixel = s.blocked ? 16 : s.cin;
  const int64_t yPixel = s.blocked ? 16 : s.cout;
  const int threads =
      omp_in_parallel()
          ? 1
          : static_cast<int>(std::min<int64_t>(omp_get_max_threads(), items));
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int nt = omp_get_num_threads(), id = omp_get_thread_num();
    const bool planned = nt == plannedThreads_;
    const int64_t begin = planned ? splits_[id] : items * id / nt;
    const int64_t end = planned ? splits_[id + 1] : items * (id + 1) / nt;
    // With `pool`: a run's partial sums between passes, [pixel][64], and the
    // block's sums over the pixels.
    alignas(64) float scratch[kRun * kBlock];
    alignas(64) float sums[kBlock];
    TileArgs a;
    a.xBlockStride = xBlock;
    a.yBlockStride = s.pool ? 16 : yBlock;
    a.pool = s.pool ? sums : nullptr;
    a.sum = s.sum;
    a.relu = s.relu;
    a.clip = s.clip;
    a.lo = s.lo;
    a.hi = s.hi;
    a.hardswish = s.hardswish;
    a.silu = s.silu;
    for (int64_t item = begin; item < end; ++item) {
      const Item at = itemAt(item, runs);
      const int64_t n = at.n, ob = at.block;
      int64_t r = at.run;
      const int64_t oc0 = ob * kBlock;
      const int nb = static_cast<int>(std::min(kBlock, coutPadded_ - oc0) / 16);
      const float *wBlock = w_.data() + oc0 * s.cin;
      const float *x0 = src + n * xImage;
      float *y0 = dst + n * yImage + (s.blocked ? oc0 * pixels : oc0);
      a.bias = bias_.data() + oc0;
      if (s.pool)
        std::fill(sums, sums + kBlock, 0.0f);
      for (const int64_t rEnd = s.pool ? runs : r + 1; r < rEnd; ++r) {
        const int64_t p0 = r * run_, p1 = std::min(pixels, p0 + run_);
        // Tiles of as even a size as 6 allows (49 pixels: 4 x 6 + 5 x 5, not
        // 8 x 6 + 1), and each pixel's offset in an image's source.
        const int64_t m = p1 - p0, tiles = (m + kTile - 1) / kTile;
        int64_t start[kRun / kTile + 1], xOffset[kRun];
        start[0] = 0;
        for (int64_t t = 0; t < tiles; ++t)
          start[t + 1] = start[t] + m / tiles + (t < m % tiles ? 1 : 0);
        for (int64_t j = 0; j < m; ++j) {
          const int64_t q = p0 + j, qy = q / ow, qx = q % ow;
          xOffset[j] = (qy * s.strideH * s.w + qx * s.strideW) * xPixel;
        }
        for (int64_t pass = 0; pass < inBlocks; pass += kPassBlocks) {
          a.blocks = std::min(kPassBlocks, inBlocks - pass);
          a.first = pass == 0;
          a.last = pass + a.blocks == inBlocks;
          a.w = wBlock + pass * 16 * nb * 16;
          // The next pass's slice (after the last pass, the first one of
          // the next item: the same block's for the next run of pixels, else
          // the next block's), split over this pass's tiles, each taking one
          // line per input channel.
          const float *next = a.w + a.blocks * 16 * nb * 16;
          int64_t nextLines =
              std::min(kPassBlocks, inBlocks - pass - a.blocks) * nb * 16;
          if (a.last) {
            next = r + 1 < runs ? wBlock : wBlock + s.cin * nb * 16;
            nextLines = r + 1 < runs || ob + 1 < outBlocks
                            ? std::min(kPassBlocks, inBlocks) * 16 * 4
                            : 0;
          }
          int64_t pfDone = 0;
          for (int64_t t = 0; t < tiles; ++t) {
            const int count = static_cast<int>(start[t + 1] - start[t]);
            const int64_t lines = a.blocks * 16;
            a.pf = reinterpret_cast<const char *>(next) + pfDone * 64;
            a.pfLines =
                std::max<int64_t>(0, std::min(lines, nextLines - pfDone));
            pfDone += a.pfLines;
            const float *xPass = x0 + pass * xBlock;
            for (int j = 0; j < count; ++j) {
              a.x[j] = xPass + xOffset[start[t] + j];
              a.y[j] = s.pool ? scratch + (start[t] + j) * kBlock
                              : y0 + (p0 + start[t] + j) * yPixel;
            }
            tileFor(nb, count)(a);
          }
        }
      }
      if (s.pool) {
        const float scale = 1.0f / static_cast<float>(pixels);
        for (int64_t j = 0; j < std::min(kBlock, s.cout - oc0); ++j)
          dst[n * s.cout + oc0 + j] = sums[j] * scale;
      }
    }
  }
}

#else // !GOPT_HAVE_AVX512_LANES

std::unique_ptr<Conv1x1F32> Conv1x1F32::create(const Conv1x1F32Shape &,
                                               const float *, const float *) {
  return nullptr;
}
void Conv1x1F32::run(const float *, float *) const {}

#endif

} // namespace gopt::runtime::cpu
