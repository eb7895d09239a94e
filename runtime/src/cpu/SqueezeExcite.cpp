//===- SqueezeExcite.cpp - A squeeze-and-excitation block in one step -----===//
//
// The weights are kept transposed ([channels][squeezed] and
// [squeezed][channels]) so both products are sums of scaled rows: the
// inner loops run over independent outputs and vectorize without
// reordering any sum.
//
//===----------------------------------------------------------------------===//
#include "SqueezeExcite.h"
#include "EnvSwitch.h"
#include "GemvF32.h"
#include "ParallelRange.h"
#include "SiluAvx512.h"

#include "gopt/runtime/Kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GOPT_SE_X86 1
#endif

namespace gopt::runtime::cpu {
namespace {

#ifdef GOPT_SE_X86
// Where the projection's operands lie: element (channel k, pixel p) of x
// at x[(k / 16) * xBlock + p * xPixel + k % 16], of the result and the
// residual at y[j * yBlock + p * yPixel + lane] for output block j.
struct ProjLayout {
  int64_t cin, xBlock, xPixel;
  int64_t yBlock, yPixel;
  int64_t ldw; // the packed weights' row: cout padded to 16
};

// P pixels times J blocks of 16 output channels of the projection: the
// sums stay in registers over all input channels (x broadcast, a row of
// the gated weights loaded once per channel), then bias, residual, store.
template <int J, int P>
__attribute__((target("avx512f"))) void
projTile(const ProjLayout &l, const float *x, const float *w, const float *bias,
         const float *res, float *y, const __mmask16 *m) {
  __m512 acc[J][P];
#pragma GCC unroll 4
  for (int j = 0; j < J; ++j) {
    const __m512 b = _mm512_loadu_ps(bias + 16 * j);
#pragma GCC unroll 24
    for (int p = 0; p < P; ++p)
      acc[j][p] = b;
  }
  for (int64_t k0 = 0; k0 < l.cin; k0 += 16) {
    const int64_t lanes = std::min<int64_t>(16, l.cin - k0);
    const float *xb = x + (k0 / 16) * l.xBlock;
    const float *wb = w + k0 * l.ldw;
    for (int64_t q = 0; q < lanes; ++q) {
      __m512 wv[J];
#pragma GCC unroll 4
      for (int j = 0; j < J; ++j)
        wv[j] = _mm512_loadu_ps(wb + q * l.ldw + 16 * j);
#pragma GCC unroll 24
      for (int p = 0; p < P; ++p) {
        const __m512 xv = _mm512_set1_ps(xb[p * l.xPixel + q]);
#pragma GCC unroll 4
        for (int j = 0; j < J; ++j)
          acc[j][p] = _mm512_fmadd_ps(wv[j], xv, acc[j][p]);
      }
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < J; ++j)
#pragma GCC unroll 24
    for (int p = 0; p < P; ++p) {
      const int64_t at = j * l.yBlock + p * l.yPixel;
      __m512 v = acc[j][p];
      if (res)
        v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m[j], res + at));
      _mm512_mask_storeu_ps(y + at, m[j], v);
    }
}

// Pixels [p0, p1) of output blocks [j0, j0 + J): tiles of P, the rest one
// pixel at a time.
template <int J, int P>
void projRows(const ProjLayout &l, const float *x, const float *w,
              const float *bias, const float *res, float *y, const __mmask16 *m,
              int64_t j0, int64_t p0, int64_t p1) {
  w += 16 * j0;
  bias += 16 * j0;
  m += j0;
  const int64_t yo = j0 * l.yBlock;
  int64_t p = p0;
  for (; p + P <= p1; p += P)
    projTile<J, P>(l, x + p * l.xPixel, w, bias,
                   res ? res + yo + p * l.yPixel : nullptr,
                   y + yo + p * l.yPixel, m);
  // The tail: a tile of one pixel waits on each sum's latency.
  for (; p + 4 <= p1; p += 4)
    projTile<J, 4>(l, x + p * l.xPixel, w, bias,
                   res ? res + yo + p * l.yPixel : nullptr,
                   y + yo + p * l.yPixel, m);
  for (; p < p1; ++p)
    projTile<J, 1>(l, x + p * l.xPixel, w, bias,
                   res ? res + yo + p * l.yPixel : nullptr,
                   y + yo + p * l.yPixel, m);
}

// All output blocks of pixels [p0, p1), three blocks (8-pixel tiles) at a
// time.
void project(const ProjLayout &l, int64_t outBlocks, const float *x,
             const float *w, const float *bias, const float *res, float *y,
             const __mmask16 *m, int64_t p0, int64_t p1) {
  // Tiles of 48 pixels (whole 8-, 12- and 16-pixel tiles), every output
  // block of one before the next: its x stays in L1.
  for (int64_t t = p0; t < p1; t += 48) {
    const int64_t t1 = std::min(p1, t + 48);
    int64_t j = 0;
    for (; j + 3 <= outBlocks; j += 3)
      projRows<3, 8>(l, x, w, bias, res, y, m, j, t, t1);
    if (outBlocks - j == 2)
      projRows<2, 12>(l, x, w, bias, res, y, m, j, t, t1);
    else if (outBlocks - j == 1)
      projRows<1, 16>(l, x, w, bias, res, y, m, j, t, t1);
  }
}
#endif

// y[0..n) += w[0..n) * a, the products' inner loop: AVX-512 where the CPU
// has it (the runtime is built for the baseline x86-64).
__attribute__((target_clones("avx512f", "avx2", "default"))) void
axpy(float *__restrict y, const float *__restrict w, float a, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += w[i] * a;
}

// Per-channel sums of `hw` pixels of `b` interleaved channels into m[0..b).
__attribute__((target_clones("avx512f", "avx2", "default"))) void
sumPixels(float *__restrict m, const float *__restrict in, int64_t hw,
          int64_t b) {
  if (b == 16) {
    float acc[16] = {};
    for (int64_t p = 0; p < hw; ++p)
      for (int64_t l = 0; l < 16; ++l)
        acc[l] += in[p * 16 + l];
    for (int64_t l = 0; l < 16; ++l)
      m[l] += acc[l];
    return;
  }
  for (int64_t p = 0; p < hw; ++p)
    for (int64_t l = 0; l < b; ++l)
      m[l] += in[p * b + l];
}

// out = in * g per channel, `b` interleaved channels.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
scalePixels(float *__restrict out, const float *__restrict in,
            const float *__restrict g, int64_t hw, int64_t b) {
  if (b == 16) {
    for (int64_t p = 0; p < hw; ++p)
      for (int64_t l = 0; l < 16; ++l)
        out[p * 16 + l] = in[p * 16 + l] * g[l];
    return;
  }
  if (b == 1) {
    const float s = g[0];
    for (int64_t p = 0; p < hw; ++p)
      out[p] = in[p] * s;
    return;
  }
  for (int64_t p = 0; p < hw; ++p)
    for (int64_t l = 0; l < b; ++l)
      out[p * b + l] = in[p * b + l] * g[l];
}

// Up to this many multiply-adds in each product (and weights: 32 KiB) every
// thread computes both whole (batch 1: EfficientNet-B0's blocks up to 240
// channels; its 1152-channel blocks' 2 x 221 KiB are split).
constexpr int64_t kRedundantMacs = 1 << 13;

float activate(const SeActivation &a, float v) {
  switch (a.kind) {
  case SeActivation::kNone:
    return v;
  case SeActivation::kRelu:
    return std::max(v, 0.0f);
  case SeActivation::kRelu6:
    return std::min(std::max(v, 0.0f), 6.0f);
  case SeActivation::kSigmoid:
    return 1.0f / (1.0f + std::exp(-v));
  case SeActivation::kSilu:
    return v / (1.0f + std::exp(-v));
  case SeActivation::kHardSigmoid:
    return std::max(0.0f, std::min(1.0f, a.alpha * v + a.beta));
  }
  return v;
}

#ifdef GOPT_SE_X86
// sigmoid(v) (or v sigmoid(v), SiLU) for x[0..n) in place: exp(-v) in
// base 2 as SiluAvx512.h's siluExp2 computes it (v clamped to [-88,
// 88]: a gate of 6e-39 for 0 below, 1 above). The gate's 1152 scalar
// expf calls were a fifth of an EfficientNet 7x7 block's step.
__attribute__((target("avx512f"))) void sigmoidRange(float *x, int64_t n,
                                                     bool silu) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m =
        static_cast<__mmask16>(n - i >= 16 ? 0xFFFFu : (1u << (n - i)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    const __m512 c = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-88.0f)),
                                   _mm512_set1_ps(88.0f));
    const __m512 d = onePlusExpNeg(c);
    _mm512_mask_storeu_ps(x + i, m,
                          _mm512_div_ps(silu ? v : _mm512_set1_ps(1.0f), d));
  }
}
#endif

// activate() over x[0..n) in place.
void activateRange(const SeActivation &a, float *x, int64_t n) {
#ifdef GOPT_SE_X86
  static const bool vector =
      __builtin_cpu_supports("avx512f") && envSwitchOn("GOPT_SE_VECTOR_GATE");
  if (vector &&
      (a.kind == SeActivation::kSigmoid || a.kind == SeActivation::kSilu)) {
    sigmoidRange(x, n, a.kind == SeActivation::kSilu);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i)
    x[i] = activate(a, x[i]);
}

class SqueezeExciteKernel final : public Kernel {
public:
  explicit SqueezeExciteKernel(SqueezeExciteParams p) : p_(std::move(p)) {
    const int64_t c = p_.channels, s = p_.squeezed;
    block_ = p_.block == 0 ? 1 : p_.block;
    blocks_ = p_.block == 0 ? c : (c + block_ - 1) / block_;
    padded_ = blocks_ * block_;
    // One image's products too large to run whole on every thread are
    // matrix-vector products: GemvF32 streams each weight once in 64-column
    // panels, where the transposed rows below take one call per input
    // channel (MobileNetV3's 960 -> 240 -> 960 blocks read their 1.8 MB at
    // a third of GemvF32's rate).
    if (p_.n == 1 && (p_.splitProducts || c * s > kRedundantMacs) &&
        gemvF32Enabled()) {
      gemv1_ = GemvF32::create({c, s, /*transB=*/true, /*relu=*/false},
                               p_.w1.data());
      gemv2_ = GemvF32::create({s, c, /*transB=*/true, /*relu=*/false},
                               p_.w2.data());
      if (!gemv1_ || !gemv2_)
        gemv1_.reset(), gemv2_.reset();
    }
    if (!gemv1_) {
      w1t_.assign(c * s, 0.0f);
      w2t_.assign(s * padded_, 0.0f);
      for (int64_t j = 0; j < s; ++j)
        for (int64_t k = 0; k < c; ++k) {
          w1t_[k * s + j] = p_.w1[j * c + k];
          w2t_[j * padded_ + k] = p_.w2[k * s + j];
        }
    }
    if (p_.projOut > 0) {
      const int64_t co = p_.projOut;
      outBlocks_ = (co + 15) / 16;
      const int64_t ld = outBlocks_ * 16;
      projT_.assign(c * ld, 0.0f);
      for (int64_t o = 0; o < co; ++o)
        for (int64_t k = 0; k < c; ++k)
          projT_[k * ld + o] = p_.projW[o * c + k];
      projBias_.assign(ld, 0.0f);
      std::copy(p_.projBias.begin(), p_.projBias.end(), projBias_.begin());
      // Images whose gated weights are kept at once: up to 2 MiB of them
      // (all of EfficientNet-B0's images at batch 8: at most 46 KiB an
      // image), so a large batch does not hold a copy per image.
      group_ = std::clamp<int64_t>(
          (int64_t(2) << 20) / (c * ld * int64_t(sizeof(float))), 1, p_.n);
      packed_.assign(group_ * c * ld, 0.0f);
      const bool nhwc = block_ == c;
      for (int64_t j = 0; j < outBlocks_; ++j) {
        const int64_t lanes = nhwc ? std::min<int64_t>(16, co - 16 * j) : 16;
        masks_.push_back(static_cast<uint16_t>((1u << lanes) - 1));
      }
      layout_ = {c,
                 nhwc ? 16 : p_.hw * 16,
                 nhwc ? c : 16,
                 nhwc ? 16 : p_.hw * 16,
                 nhwc ? co : 16,
                 ld};
      yImage_ = nhwc ? p_.hw * co : outBlocks_ * 16 * p_.hw;
    }
  }

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    const int64_t n = p_.n, c = p_.channels, s = p_.squeezed, hw = p_.hw,
                  b = block_, pc = padded_, nb = n * blocks_;
    const float inv = 1.0f / static_cast<float>(hw);
    const float *x = inputs[0].data<float>();
    float *y = outputs[0].data<float>();
    const int maxThreads =
        n * pc * hw >= kParallelThreshold ? omp_get_max_threads() : 1;
    // Small products (the early blocks) run whole on every thread: one
    // barrier instead of three, which matters most where idle threads
    // sleep. Larger ones split the weights (read from memory each step)
    // between the threads.
    const bool redundant = !p_.splitProducts && n * c * s <= kRedundantMacs;
    const size_t nt = static_cast<size_t>(maxThreads);
    partial_.resize(nt * n * pc);
    hiddenPart_.resize(nt * n * s);
    hidden_.resize(nt * n * s);
    if (gemv1_)
      means_.resize(nt * c);
    // Padding channels' gates stay 0 (never written), so they scale to 0.
    gate_.resize(nt * n * pc, 0.0f);
    // The passes over x split pixels, not channel blocks: NHWC is one
    // block of all channels and early layers have few blocks, which left
    // all but one thread idle. A unit is one pixel of one block (b
    // floats); each thread's range starts on a cache line.
    const int64_t units = nb * hw, align = std::max<int64_t>(1, 16 / b);
    auto forRuns = [&](int64_t u0, int64_t u1, auto fn) {
      for (int64_t i = u0 / hw; i < nb && i * hw < u1; ++i) {
        const int64_t p0 = std::max(u0 - i * hw, int64_t(0)),
                      p1 = std::min(u1 - i * hw, hw);
        if (p0 < p1)
          fn(i, p0, p1);
      }
    };
#pragma omp parallel num_threads(maxThreads) if (maxThreads > 1)
    {
      const int threads = omp_get_num_threads(), id = omp_get_thread_num();
      auto range = [&](int64_t total, int64_t grain, int64_t &begin,
                       int64_t &end) {
        int64_t chunk =
            ((total + threads - 1) / threads + grain - 1) / grain * grain;
        begin = std::min(total, id * chunk);
        end = std::min(total, begin + chunk);
      };
      const size_t me = static_cast<size_t>(id);
      // Squeeze: each thread sums its pixels into partial sums of its own.
      int64_t u0, u1;
      range(units, align, u0, u1);
      float *part = partial_.data() + me * n * pc;
      std::fill(part, part + n * pc, 0.0f);
      forRuns(u0, u1, [&](int64_t i, int64_t p0, int64_t p1) {
        sumPixels(part + (i / blocks_) * pc + (i % blocks_) * b,
                  x + (i * hw + p0) * b, p1 - p0, b);
      });
      if (threads > 1) {
#pragma omp barrier
      }
      // Excite, for all images (a weight row is read once per step, not
      // once per image). Split: each thread takes a range of channels, the
      // first product's inputs (partial hidden sums, added up after a
      // barrier) and the second's outputs.
      const bool split = !redundant && threads > 1;
      float *gate = gate_.data() + (split ? 0 : me) * n * pc;
      if (gemv1_) {
        // One image: each thread its panels of each product, the
        // activation on its own columns.
        float *mean = means_.data() + me * c;
        for (int64_t k = 0; k < c; ++k) {
          float sum = 0.0f;
          for (int t = 0; t < threads; ++t)
            sum += partial_[static_cast<size_t>(t) * pc + k];
          mean[k] = sum * inv;
        }
        float *hidden = hiddenPart_.data();
        auto [h0, h1] =
            gemv1_->runShare(mean, p_.b1.data(), hidden, id, threads);
        activateRange(p_.act1, hidden + h0, h1 - h0);
#pragma omp barrier
        auto [g0, g1] =
            gemv2_->runShare(hidden, p_.b2.data(), gate, id, threads);
        activateRange(p_.act2, gate + g0, g1 - g0);
#pragma omp barrier
      } else {
        int64_t k0 = 0, k1 = c;
        if (split)
          range(c, 16, k0, k1);
        float *hp = hiddenPart_.data() + me * n * s;
        std::fill(hp, hp + n * s, 0.0f);
        for (int64_t k = k0; k < k1; ++k)
          for (int64_t img = 0; img < n; ++img) {
            float sum = 0.0f;
            for (int t = 0; t < threads; ++t)
              sum += partial_[static_cast<size_t>(t) * n * pc + img * pc + k];
            axpy(hp + img * s, w1t_.data() + k * s, sum * inv, s);
          }
        if (split) {
#pragma omp barrier
        }
        float *hidden = hidden_.data() + me * n * s;
        for (int64_t img = 0; img < n; ++img)
          for (int64_t j = 0; j < s; ++j) {
            float v = p_.b1[j];
            if (split)
              for (int t = 0; t < threads; ++t)
                v += hiddenPart_[static_cast<size_t>(t) * n * s + img * s + j];
            else
              v += hp[img * s + j];
            hidden[img * s + j] = v;
          }
        activateRange(p_.act1, hidden, n * s);
        if (k0 < k1) {
          for (int64_t img = 0; img < n; ++img)
            std::copy(p_.b2.begin() + k0, p_.b2.begin() + k1,
                      gate + img * pc + k0);
          for (int64_t j = 0; j < s; ++j)
            for (int64_t img = 0; img < n; ++img)
              axpy(gate + img * pc + k0, w2t_.data() + j * pc + k0,
                   hidden[img * s + j], k1 - k0);
          for (int64_t img = 0; img < n; ++img)
            activateRange(p_.act2, gate + img * pc + k0, k1 - k0);
        }
        if (split) {
#pragma omp barrier
        }
      }
#ifdef GOPT_SE_X86
      if (p_.projOut > 0) {
        const int64_t ld = layout_.ldw, tiles = (hw + 47) / 48;
        const int64_t xImage = blocks_ * b * hw, yImage = yImage_;
        const float *res = p_.residual ? inputs[1].data<float>() : nullptr;
        for (int64_t g0 = 0; g0 < n; g0 += group_) {
          const int64_t images = std::min(group_, n - g0);
          if (g0 > 0 && threads > 1) {// the last group's weights are read
#pragma omp barrier
          }
          // Each image's gated weights: each thread scales its rows
          // (image, channel).
          int64_t r0, r1;
          range(images * c, 1, r0, r1);
          for (int64_t r = r0; r < r1; ++r) {
            const int64_t k = r % c;
            const float g = gate[(g0 + r / c) * pc + k];
            float *dstRow = packed_.data() + r * ld;
            const float *srcRow = projT_.data() + k * ld;
            for (int64_t o = 0; o < ld; ++o)
              dstRow[o] = srcRow[o] * g;
          }
          if (threads > 1) {
#pragma omp barrier
          }
          // The images' pixels in one range split between the threads (in
          // tiles of 48: project's own), each image with its own weights.
          int64_t t0, t1;
          range(images * tiles, 1, t0, t1);
          for (int64_t t = t0; t < t1;) {
            const int64_t i = t / tiles, img = g0 + i, first = t % tiles;
            const int64_t last = std::min(tiles, first + (t1 - t));
            project(layout_, outBlocks_, x + img * xImage,
                    packed_.data() + i * c * ld, projBias_.data(),
                    res ? res + img * yImage : nullptr, y + img * yImage,
                    masks_.data(), first * 48, std::min(hw, last * 48));
            t += last - first;
          }
        }
      } else
#endif
        // Scale x, the same pixels this thread summed (still in its cache).
        forRuns(u0, u1, [&](int64_t i, int64_t p0, int64_t p1) {
          scalePixels(y + (i * hw + p0) * b, x + (i * hw + p0) * b,
                      gate + (i / blocks_) * pc + (i % blocks_) * b, p1 - p0,
                      b);
        });
    }
    return Status::success();
  }

  const char *implementation() const override {
    return p_.projOut > 0 ? "gopt-se-project" : "gopt";
  }
  size_t workspaceBytes() const override {
    return (w1t_.size() + w2t_.size() + projT_.size() + packed_.size()) *
               sizeof(float) +
           (gemv1_ ? gemv1_->bytes() + gemv2_->bytes() : 0);
  }

private:
  SqueezeExciteParams p_;
  int64_t block_ = 1, blocks_ = 0, padded_ = 0;
  std::vector<float> w1t_, w2t_, partial_, hiddenPart_, hidden_, gate_;
  // The products as GemvF32's (one image, too large to run whole on every
  // thread; then w1t_ and w2t_ stay empty), or null; each thread's copy of
  // the pooled means they read.
  std::unique_ptr<GemvF32> gemv1_, gemv2_;
  std::vector<float> means_;
  // The projection's: weights [channels][cout padded], their gated copy,
  // bias (padded), the result's store masks per output block.
  int64_t outBlocks_ = 0, yImage_ = 0; // yImage_: floats per image
  // packed_: the gated weights of group_ images.
  int64_t group_ = 1;
  std::vector<float> projT_, packed_, projBias_;
  std::vector<uint16_t> masks_;
#ifdef GOPT_SE_X86
  ProjLayout layout_{};
#endif
};

} // namespace

bool squeezeExciteEnabled(int64_t batch) {
  // By default at batch 1, where it gained at one and two threads since
  // the passes over x split pixels; at batch 8 it still lost to oneDNN's
  // separate ops (architecture.md, "squeeze-and-excitation"), except where
  // it folds into the projection after it (squeezeExciteProjectEnabled).
  const char *v = std::getenv("GOPT_SQUEEZE_EXCITE");
  if (v && std::strcmp(v, "0") == 0)
    return false;
  if (v && std::strcmp(v, "1") == 0)
    return true;
  return batch == 1;
}

bool squeezeExciteProjectEnabled() {
#ifdef GOPT_SE_X86
  // GOPT_SQUEEZE_EXCITE=0 turns off the one-step kernel in every form.
  static const bool enabled = envSwitchOn("GOPT_SE_PROJECT") &&
                              envSwitchOn("GOPT_SQUEEZE_EXCITE") &&
                              __builtin_cpu_supports("avx512f");
  return enabled;
#else
  return false;
#endif
}

std::unique_ptr<Kernel> createSqueezeExcite(SqueezeExciteParams p) {
  const int64_t c = p.channels, s = p.squeezed;
  if (p.projOut > 0 &&
      (!squeezeExciteProjectEnabled() || (p.block != 16 && p.block != c) ||
       static_cast<int64_t>(p.projW.size()) != p.projOut * c ||
       static_cast<int64_t>(p.projBias.size()) != p.projOut))
    return nullptr;
  if (p.projOut <= 0 && p.residual)
    return nullptr;
  if (p.n <= 0 || c <= 0 || s <= 0 || p.hw <= 0 || p.block < 0 ||
      static_cast<int64_t>(p.w1.size()) != s * c ||
      static_cast<int64_t>(p.b1.size()) != s ||
      static_cast<int64_t>(p.w2.size()) != c * s ||
      static_cast<int64_t>(p.b2.size()) != c)
    return nullptr;
  return std::make_unique<SqueezeExciteKernel>(std::move(p));
}

} // namespace gopt::runtime::cpu
