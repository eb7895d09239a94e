//===- ConvBatch1.cpp - Batch-1 direct convolution for small, wide layers -===//
//
// See ConvBatch1.h. Per image: the source is copied into a buffer with its
// zero pads (split over the threads) unless it has none; then each thread
// takes whole blocks of 64 output channels. A block's output pixels go in
// panels of at most 64 (their partial sums, 16 KiB, stay in L1); for each
// panel the block's filter is read once, slice by slice (one tap, 128 input
// channels: 32 KiB), and every group of up to 6 pixels of the panel
// multiplies the slice into its sums with 24 accumulators, while the slice
// after next is prefetched into L2.
//
//===----------------------------------------------------------------------===//
#include "ConvBatch1.h"

#include "Avx512Lanes.h"
#include "BlockClaims.h"
#include "EnvSwitch.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

namespace gopt::runtime::cpu {

bool convBatch1Enabled() { return envSwitchOn("GOPT_CONV_BATCH1"); }

#ifdef GOPT_HAVE_AVX512_LANES

namespace {

constexpr int64_t kBlock = 64;  // output channels per block: 4 zmm
constexpr int kMaxRows = 6;     // pixels per micro-kernel: 24 accumulators
constexpr int64_t kPanel = 64;  // pixels whose sums one pass accumulates
constexpr int64_t kDepth = 128; // input channels per slice: 32 KiB of filter
// How many slices ahead the filter is prefetched into L2, one line per
// input channel of each micro-kernel call (ResNet-18's 512 -> 512 layer,
// one thread, five filters in turn as in the network: 1.64-1.71 ms against
// 1.91-2.13 with two lines per channel in a burst one slice ahead).
constexpr int64_t kPrefetchSlices = 2;

// m[r][0..63] (+)= sum_c in[r][c] * u[c][0..63] for r < R and c < depth
// (added to m's contents when `accumulate`), prefetching `pfLines` cache
// lines from `pf` into L2 (at most 1 per c) on the way.
template <int R>
GOPT_AVX512BW void gemmPixels(const float *const *in, const float *u,
                              int64_t depth, float *m, bool accumulate,
                              const char *pf, int64_t pfLines) {
  const float *p[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    p[r] = in[r];
  __m512 acc[R][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j)
      acc[r][j] = accumulate ? _mm512_loadu_ps(m + r * kBlock + j * 16)
                             : _mm512_setzero_ps();
  for (int64_t c = 0; c < depth; ++c) {
    if (c < pfLines)
      _mm_prefetch(pf + c * 64, _MM_HINT_T1);
    const float *uc = u + c * kBlock;
    __m512 u0 = _mm512_loadu_ps(uc), u1 = _mm512_loadu_ps(uc + 16),
           u2 = _mm512_loadu_ps(uc + 32), u3 = _mm512_loadu_ps(uc + 48);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      __m512 b = _mm512_set1_ps(p[r][c]);
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

GOPT_AVX512BW void gemmAnyPixels(int rows, const float *const *in,
                                 const float *u, int64_t depth, float *m,
                                 bool accumulate, const char *pf,
                                 int64_t pfLines) {
  switch (rows) {
  case 1:
    return gemmPixels<1>(in, u, depth, m, accumulate, pf, pfLines);
  case 2:
    return gemmPixels<2>(in, u, depth, m, accumulate, pf, pfLines);
  case 3:
    return gemmPixels<3>(in, u, depth, m, accumulate, pf, pfLines);
  case 4:
    return gemmPixels<4>(in, u, depth, m, accumulate, pf, pfLines);
  case 5:
    return gemmPixels<5>(in, u, depth, m, accumulate, pf, pfLines);
  default:
    return gemmPixels<6>(in, u, depth, m, accumulate, pf, pfLines);
  }
}

// dst[pixel][oc .. oc + 63] = sums + bias (+ dst) (relu) for `pixels`
// consecutive pixels.
GOPT_AVX512BW void storePanel(const float *m, int64_t pixels,
                              const ConvBatch1Shape &s, const float *bias,
                              int64_t oc, float *dst) {
  __m512 add[4];
  for (int j = 0; j < 4; ++j)
    add[j] = bias ? _mm512_loadu_ps(bias + oc + 16 * j) : _mm512_setzero_ps();
  for (int64_t p = 0; p < pixels; ++p) {
    float *out = dst + p * s.cout + oc;
    for (int j = 0; j < 4; ++j) {
      __m512 v =
          _mm512_add_ps(_mm512_loadu_ps(m + p * kBlock + 16 * j), add[j]);
      if (s.sum)
        v = _mm512_add_ps(v, _mm512_loadu_ps(out + 16 * j));
      if (s.relu)
        v = _mm512_max_ps(v, _mm512_setzero_ps());
      _mm512_storeu_ps(out + 16 * j, v);
    }
  }
}

} // namespace

std::unique_ptr<ConvBatch1> ConvBatch1::create(const ConvBatch1Shape &s,
                                               const float *filter) {
  if (!avx512fSupported() || !filter || s.cin <= 0 || s.cin % 16 != 0 ||
      s.cout <= 0 || s.cout % kBlock != 0 || s.kh <= 0 || s.kw <= 0 ||
      s.stride <= 0 || s.padT < 0 || s.padL < 0 || s.padB < 0 || s.padR < 0 ||
      s.h <= 0 || s.w <= 0 || s.outH() <= 0 || s.outW() <= 0)
    return nullptr;
  auto k = std::unique_ptr<ConvBatch1>(new ConvBatch1());
  k->s_ = s;
  const int64_t oh = s.outH(), ow = s.outW();
  // Only the rows and columns some window reaches.
  k->hp_ = (oh - 1) * s.stride + s.kh;
  k->wp_ = (ow - 1) * s.stride + s.kw;
  k->padded_ = s.padT > 0 || s.padL > 0 || s.padB > 0 || s.padR > 0;
  if (!k->padded_)
    k->wp_ = s.w; // windows read the source in place
  else
    k->src_.assign(k->hp_ * k->wp_ * s.cin, 0.0f); // pads stay zero
  const int64_t taps = s.kh * s.kw;
  k->w_.resize(taps * s.cin * s.cout);
  for (int64_t o = 0; o < s.cout; ++o)
    for (int64_t i = 0; i < s.cin; ++i)
      for (int64_t t = 0; t < taps; ++t) {
        int64_t a = t / s.kw, b = t % s.kw;
        float v = s.oihw ? filter[((o * s.cin + i) * s.kh + a) * s.kw + b]
                         : filter[((a * s.kw + b) * s.cin + i) * s.cout + o];
        k->w_[(((o / kBlock) * taps + t) * s.cin + i) * kBlock + o % kBlock] =
            v;
      }
  k->pixelOffset_.resize(oh * ow);
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ow; ++x)
      k->pixelOffset_[y * ow + x] =
          (y * s.stride * k->wp_ + x * s.stride) * s.cin;
  k->m_.resize(std::max(1, omp_get_max_threads()));
  k->claims_ = convBlockClaimsEnabled();
  return k;
}

size_t ConvBatch1::workspaceBytes() const {
  return (w_.size() + src_.size() + m_.size() * kPanel * kBlock) *
         sizeof(float);
}

void ConvBatch1::run(const float *src, const float *bias, float *dst) {
  const ConvBatch1Shape s = s_;
  const int64_t cin = s.cin, taps = s.kh * s.kw, blocks = s.cout / kBlock;
  const int64_t pixels = s.outH() * s.outW();
  const int64_t panels = (pixels + kPanel - 1) / kPanel;
  // A session may run with more threads than the kernel was made with.
  if (m_.size() < static_cast<size_t>(omp_get_max_threads()))
    m_.resize(omp_get_max_threads());
  const int threads = static_cast<int>(
      std::min<int64_t>(blocks, std::max(1, omp_get_max_threads())));
  const float *w = w_.data();
  const int64_t *offsets = pixelOffset_.data();
  const int64_t hp = hp_, wp = wp_;
  const bool padded = padded_;
  float *padBuf = src_.data();
  const bool claims = claims_;
  BlockCounter counter;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int nt = omp_get_num_threads(), id = omp_get_thread_num();
    const float *in = src;
    if (padded) {
      // The source's rows inside the padded buffer, split over the threads.
      int64_t y0 = std::max<int64_t>(0, s.padT);
      int64_t y1 = std::min<int64_t>(hp, s.padT + s.h);
      int64_t x0 = s.padL, x1 = std::min<int64_t>(wp, s.padL + s.w);
      int64_t rows = y1 - y0;
      for (int64_t y = y0 + rows * id / nt; y < y0 + rows * (id + 1) / nt; ++y)
        if (x1 > x0)
          std::memcpy(padBuf + (y * wp + x0) * cin,
                      src + ((y - s.padT) * s.w) * cin,
                      (x1 - x0) * cin * sizeof(float));
#pragma omp barrier
      in = padBuf;
    }
    std::vector<float> &m = m_[id];
    if (m.size() != static_cast<size_t>(kPanel * kBlock))
      m.assign(kPanel * kBlock, 0.0f);
    const int64_t sliceLines = kDepth * kBlock * sizeof(float) / 64;
    const float *ptrs[kMaxRows];
    BlockCursor cursor(counter, claims, id, nt);
    for (int64_t ob = cursor.next(), nextOb = blocks; ob < blocks;
         ob = nextOb) {
      const float *wb = w + ob * taps * cin * kBlock;
      const int64_t blockFloats = taps * cin * kBlock;
      for (int64_t pn = 0; pn < panels; ++pn) {
        const int64_t p0 = pixels * pn / panels,
                      p1 = pixels * (pn + 1) / panels, np = p1 - p0;
        const int64_t chunks = (np + kMaxRows - 1) / kMaxRows;
        // This thread's next block, taken as its last panel starts: its
        // filter is prefetched meanwhile.
        if (pn + 1 == panels)
          nextOb = cursor.next();
        // What follows this pass's filter: the same block for the next
        // panel, else this thread's next block.
        const float *after = pn + 1 < panels   ? wb
                             : nextOb < blocks ? w + nextOb * blockFloats
                                               : nullptr;
        for (int64_t t = 0; t < taps; ++t) {
          const int64_t tapOffset = ((t / s.kw) * wp + t % s.kw) * cin;
          for (int64_t k0 = 0; k0 < cin; k0 += kDepth) {
            const int64_t depth = std::min(kDepth, cin - k0);
            const float *slice = wb + (t * cin + k0) * kBlock;
            const float *next = slice + kPrefetchSlices * depth * kBlock;
            if (next >= wb + blockFloats)
              next = after ? after + (next - (wb + blockFloats)) : nullptr;
            const int64_t pfPerCall =
                std::min<int64_t>(depth, (sliceLines + chunks - 1) / chunks);
            const bool accumulate = t > 0 || k0 > 0;
            for (int64_t ch = 0, q = p0; ch < chunks; ++ch) {
              int64_t rows = np / chunks + (ch < np % chunks ? 1 : 0);
              for (int64_t r = 0; r < rows; ++r)
                ptrs[r] = in + offsets[q + r] + tapOffset + k0;
              int64_t pfBegin = std::min(sliceLines, ch * pfPerCall);
              int64_t pfLines =
                  next ? std::min(sliceLines - pfBegin, pfPerCall) : 0;
              gemmAnyPixels(static_cast<int>(rows), ptrs, slice, depth,
                            m.data() + (q - p0) * kBlock, accumulate,
                            next ? reinterpret_cast<const char *>(next) +
                                       pfBegin * 64
                                 : nullptr,
                            pfLines);
              q += rows;
            }
          }
        }
        storePanel(m.data(), np, s, bias, ob * kBlock, dst + p0 * s.cout);
      }
    }
  }
}

#else // !GOPT_HAVE_AVX512_LANES

std::unique_ptr<ConvBatch1> ConvBatch1::create(const ConvBatch1Shape &,
                                               const float *) {
  return nullptr;
}
size_t ConvBatch1::workspaceBytes() const { return 0; }
void ConvBatch1::run(const float *, const float *, float *) {}

#endif

} // namespace gopt::runtime::cpu
