//===- StemAmx.cpp - A network's 3x3 stem convolution on AMX --------------===//
//
// Per band of a few output rows (about 512 pixels, so the gathered rows
// stay in L1): each output pixel's window becomes one 32-element row, its
// three kernel rows' 3 x channels values (contiguous in NHWC) loaded with
// masked loads that drop the elements outside the image (the padding
// reads as zero, and no byte outside the image is touched) and land at
// their place in the row; then the band goes through PointwiseInt8Amx or
// PointwiseBf16Amx as a 1x1 convolution of 32 inputs. The products are
// the convolution's (a zero weight past the 27th element), so the int32
// sums are exact and the int8 results are those of oneDNN's formula; the
// bf16 ones differ from oneDNN's only in the f32 summation order.
//
//===----------------------------------------------------------------------===//

#include "StemAmx.h"
#include "AmxTiles.h"
#include "ElementLoops.h"
#include "EnvSwitch.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GOPT_STEM_X86 1
#define GOPT_STEM_TARGET                                                       \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
#endif

namespace gopt::runtime::cpu {

bool stemAmxEnabled() {
#ifdef GOPT_STEM_X86
  static const bool enabled =
      envSwitchOn("GOPT_STEM_AMX") && pointwiseAmxEnabled();
  return enabled;
#else
  return false;
#endif
}

bool StemConvAmx::takes(const StemGeometry &g) {
  return stemAmxEnabled() && g.channels >= 1 && 9 * g.channels <= kRow &&
         g.height > 0 && g.width > 0 && g.outHeight > 0 && g.outWidth > 0 &&
         g.stride >= 1 && g.stride <= 4 && g.padTop >= 0 && g.padTop <= 1 &&
         g.padLeft >= 0 && g.padLeft <= 1 &&
         (g.outHeight - 1) * g.stride - g.padTop < g.height &&
         (g.outWidth - 1) * g.stride - g.padLeft < g.width;
}

void StemConvAmx::init(const StemGeometry &g, int64_t n, int threads) {
  g_ = g;
  n_ = n;
  threads_ = std::max(1, threads);
  bandRows_ = std::clamp<int64_t>(512 / g.outWidth, 1, g.outHeight);
  const int64_t c = g.channels;
  columnMask_.resize(g.outWidth);
  for (int64_t ow = 0; ow < g.outWidth; ++ow) {
    uint32_t m = 0;
    for (int64_t j = 0; j < 3 * c; ++j) {
      const int64_t col = ow * g.stride - g.padLeft + j / c;
      if (col >= 0 && col < g.width)
        m |= 1u << j;
    }
    columnMask_[ow] = m;
  }
  // A group's span in each kernel row must fit the byte permutes' table
  // of two vectors: (groupPixels - 1) * stride + 3 pixels of c elements.
  const int64_t pixels = bf16_ ? 8 : 16, table = bf16_ ? 64 : 128;
  groupPixels_ = 0;
#ifdef GOPT_STEM_X86
  const bool permute = envSwitchOn("GOPT_STEM_AMX_PERMUTE") &&
                       __builtin_cpu_supports("avx512vbmi");
  if (permute && ((pixels - 1) * g.stride + 3) * c <= table)
    groupPixels_ = pixels;
#endif
  // Per byte of a group's rows, its byte in its kernel row's span: pixel
  // p's window starts p * stride * c elements in, and element kh * 3c + j
  // of its row is element j of kernel row kh's window.
  const int64_t bytes = bf16_ ? 2 : 1, span = 3 * c;
  groupIndex_.assign(groupPixels_ * kRow * bytes, 0);
  for (int64_t at = 0; at < groupPixels_ * kRow; ++at) {
    const int64_t p = at / kRow, pos = at % kRow;
    const int64_t value = pos < 3 * span ? p * g.stride * c + pos % span : 0;
    for (int64_t b = 0; b < bytes; ++b)
      groupIndex_[at * bytes + b] = static_cast<uint8_t>(value * bytes + b);
  }
}

namespace {
// The 32-element rows of the kernel rows at padded weights: [n][kRow].
template <typename T>
std::vector<T> padRows(const std::vector<T> &weights, int64_t n,
                       int64_t window) {
  std::vector<T> rows(n * StemConvAmx::kRow, T(0));
  for (int64_t o = 0; o < n; ++o)
    std::copy(weights.begin() + o * window, weights.begin() + (o + 1) * window,
              rows.begin() + o * StemConvAmx::kRow);
  return rows;
}
} // namespace

std::unique_ptr<StemConvAmx>
StemConvAmx::createInt8(const StemGeometry &g, int64_t n,
                        const std::vector<int8_t> &weights,
                        const PointwiseInt8Params &params, int threads) {
  const int64_t window = 9 * g.channels;
  if (!takes(g) || n < 1 || static_cast<int64_t>(weights.size()) != n * window)
    return nullptr;
  auto s = std::unique_ptr<StemConvAmx>(new StemConvAmx());
  // One thread each: run() splits the bands among the threads.
  s->int8_ =
      PointwiseInt8Amx::create(kRow, n, padRows(weights, n, window), params, 1);
  if (!s->int8_)
    return nullptr;
  s->init(g, n, threads);
  return s;
}

std::unique_ptr<StemConvAmx>
StemConvAmx::createBf16(const StemGeometry &g, int64_t n,
                        const std::vector<uint16_t> &weights,
                        const std::vector<float> &bias, bool clamp, float lo,
                        float hi, int threads) {
  const int64_t window = 9 * g.channels;
  if (!takes(g) || n < 1 || static_cast<int64_t>(weights.size()) != n * window)
    return nullptr;
  auto s = std::unique_ptr<StemConvAmx>(new StemConvAmx());
  s->bf16Kernel_ = PointwiseBf16Amx::create(
      kRow, n, padRows(weights, n, window), bias, clamp, lo, hi, false, 1);
  if (!s->bf16Kernel_)
    return nullptr;
  s->bf16_ = true;
  s->init(g, n, threads);
  return s;
}

#ifdef GOPT_STEM_X86
// Pixels of a plain NCHW f32 image of 3 channels (a batch's input) to NHWC
// bf16 or int8 (x * scale, saturated, rounded to nearest
// even, as oneDNN's reorder computes it): oneDNN's reorder for this
// transpose took 3 ms for MobileNetV2's 32 images (0.6 ns an element).
// Here 16 pixels at a time: each channel's 16 values converted in one
// register, then the three interleaved with one permute (AVX-512 VBMI,
// AVX-512 BF16: Sapphire Rapids on).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void
rgbToInt8Pixels(const float *src, int64_t planeStride, int8_t *dst,
                int64_t pixels, float scale) {
  alignas(64) int8_t index[64];
  for (int j = 0; j < 64; ++j)
    index[j] = static_cast<int8_t>(j < 48 ? (j % 3) * 16 + j / 3 : 0);
  const __m512i interleave = _mm512_load_si512(index);
  const __m512 factor = _mm512_set1_ps(scale);
  int64_t p = 0;
  for (; p + 16 <= pixels; p += 16) {
    __m512i packed = _mm512_setzero_si512();
    for (int c = 0; c < 3; ++c) {
      __m512 v =
          _mm512_mul_ps(_mm512_loadu_ps(src + c * planeStride + p), factor);
      __m512i q = _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT |
                                                  _MM_FROUND_NO_EXC);
      packed = _mm512_inserti32x4(packed, _mm512_cvtsepi32_epi8(q), c);
    }
    _mm512_mask_storeu_epi8(dst + p * 3, (1ull << 48) - 1,
                            _mm512_permutexvar_epi8(interleave, packed));
  }
  for (; p < pixels; ++p)
    for (int c = 0; c < 3; ++c) {
      float v = std::nearbyint(src[c * planeStride + p] * scale);
      dst[p * 3 + c] =
          static_cast<int8_t>(std::min(127.0f, std::max(-128.0f, v)));
    }
}

__attribute__((target("avx512f,avx512bw,avx512bf16"))) void
rgbToBf16Pixels(const float *src, int64_t planeStride, uint16_t *dst,
                int64_t pixels) {
  alignas(64) uint16_t index[64];
  for (int j = 0; j < 48; ++j) // element j: pixel j / 3, channel j % 3
    index[j] = static_cast<uint16_t>((j % 3) * 16 + j / 3);
  for (int j = 48; j < 64; ++j)
    index[j] = 0;
  const __m512i low = _mm512_load_si512(index);
  const __m512i high = _mm512_load_si512(index + 32);
  int64_t p = 0;
  for (; p + 16 <= pixels; p += 16) {
    __m256i r = (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + p));
    __m256i g =
        (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + planeStride + p));
    __m256i b =
        (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + 2 * planeStride + p));
    __m512i rg = _mm512_inserti64x4(_mm512_castsi256_si512(r), g, 1);
    __m512i b0 = _mm512_castsi256_si512(b);
    _mm512_storeu_si512(dst + p * 3, _mm512_permutex2var_epi16(rg, low, b0));
    _mm512_mask_storeu_epi16(dst + p * 3 + 32, 0xffff,
                             _mm512_permutex2var_epi16(rg, high, b0));
  }
  for (; p < pixels; ++p)
    for (int c = 0; c < 3; ++c)
      dst[p * 3 + c] = fromF32<uint16_t>(src[c * planeStride + p]);
}

#endif

#ifdef GOPT_STEM_X86
namespace {

// Output rows [oh0, oh0 + rows) of one image as rows of kRow elements of
// `bytes` bytes: element kh * 3c + j of a pixel's row is element j of its
// kernel row kh's window. One pixel: a masked load at the window's address
// less kh * 3c elements, with the window's mask shifted up by as many,
// puts them there; rows and columns outside the image are masked off (the
// address is formed as an integer: it may lie before the image). A group
// of interior pixels (groupPixels, 0 for none): each kernel row's span of
// the group is loaded once into two vectors and permuted into the rows
// (VPERMT2B with `index`, one uop; bf16's VPERMT2W is three), each kernel
// row's bytes under its mask: 1.5 (int8) or 3 (bf16) permutes a pixel
// instead of three masked loads.
template <int bytes>
GOPT_STEM_TARGET void gatherRows(const StemGeometry &g, const uint32_t *masks,
                                 const uint8_t *index, int64_t groupPixels,
                                 const uint8_t *image, int64_t oh0,
                                 int64_t rows, uint8_t *out) {
  const int64_t c = g.channels, span = 3 * c;
  const int64_t rowElements = g.width * c;
  const int64_t rowBytes = rowElements * bytes;
  constexpr int64_t rowOut = StemConvAmx::kRow * bytes;
  // Pixels whose windows lie inside the image's columns: [first, last].
  const int64_t first = (g.padLeft + g.stride - 1) / g.stride;
  const int64_t last =
      g.width - 3 + g.padLeft < 0
          ? -1
          : std::min(g.outWidth - 1, (g.width - 3 + g.padLeft) / g.stride);
  // Each kernel row's bytes in 64 bytes of gathered rows (two int8 pixels,
  // one bf16 pixel).
  uint64_t segment[3];
  for (int kh = 0; kh < 3; ++kh) {
    const uint64_t m = ((uint64_t(1) << span * bytes) - 1)
                       << (kh * span * bytes);
    segment[kh] = bytes == 1 ? m | m << 32 : m;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t oh = oh0 + r;
    const uint8_t *row[3];
    bool valid[3];
    for (int kh = 0; kh < 3; ++kh) {
      const int64_t ih = oh * g.stride - g.padTop + kh;
      valid[kh] = ih >= 0 && ih < g.height;
      row[kh] = valid[kh] ? image + ih * rowBytes : image;
    }
    uint8_t *o = out + r * g.outWidth * rowOut;
    auto one = [&](int64_t ow) GOPT_STEM_TARGET {
      const uint32_t m = masks[ow];
      const intptr_t col = (ow * g.stride - g.padLeft) * c * bytes;
      if constexpr (bytes == 1) {
        __m256i v = _mm256_setzero_si256();
        for (int kh = 0; kh < 3; ++kh)
          if (valid[kh])
            v = _mm256_or_si256(
                v,
                _mm256_maskz_loadu_epi8(
                    m << (kh * span), reinterpret_cast<const void *>(
                                          reinterpret_cast<uintptr_t>(row[kh]) +
                                          col - kh * span)));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(o + ow * rowOut), v);
      } else {
        __m512i v = _mm512_setzero_si512();
        for (int kh = 0; kh < 3; ++kh)
          if (valid[kh])
            v = _mm512_or_si512(
                v,
                _mm512_maskz_loadu_epi16(
                    m << (kh * span), reinterpret_cast<const void *>(
                                          reinterpret_cast<uintptr_t>(row[kh]) +
                                          col - kh * span * 2)));
        _mm512_storeu_si512(o + ow * rowOut, v);
      }
    };
    int64_t ow = 0;
    for (; ow < std::min(first, g.outWidth); ++ow)
      one(ow);
    for (; groupPixels && ow + groupPixels - 1 <= last; ow += groupPixels) {
      // The group's span: from its first window to the row's end at most
      // (two vectors of 64 bytes), so no load passes the image.
      const int64_t start = (ow * g.stride - g.padLeft) * c * bytes;
      const int64_t left = rowBytes - start;
      const uint64_t loMask =
          left >= 64 ? ~uint64_t(0) : (uint64_t(1) << left) - 1;
      const uint64_t hiMask = left >= 128  ? ~uint64_t(0)
                              : left <= 64 ? 0
                                           : (uint64_t(1) << (left - 64)) - 1;
      __m512i lo[3], hi[3];
      for (int kh = 0; kh < 3; ++kh) {
        lo[kh] = hi[kh] = _mm512_setzero_si512();
        if (valid[kh]) {
          lo[kh] = _mm512_maskz_loadu_epi8(loMask, row[kh] + start);
          hi[kh] = _mm512_maskz_loadu_epi8(hiMask, row[kh] + start + 64);
        }
      }
      uint8_t *dst = o + ow * rowOut;
      for (int64_t v = 0; v < groupPixels * rowOut / 64; ++v) {
        const __m512i idx = _mm512_load_si512(index + v * 64);
        const __m512i a =
            _mm512_maskz_permutex2var_epi8(segment[0], lo[0], idx, hi[0]);
        const __m512i b =
            _mm512_maskz_permutex2var_epi8(segment[1], lo[1], idx, hi[1]);
        const __m512i d =
            _mm512_maskz_permutex2var_epi8(segment[2], lo[2], idx, hi[2]);
        _mm512_storeu_si512(dst + v * 64,
                            _mm512_ternarylogic_epi64(a, b, d, 0xFE));
      }
    }
    for (; ow < g.outWidth; ++ow)
      one(ow);
  }
}

} // namespace
#endif

void StemConvAmx::gather(const void *image, int64_t oh0, int64_t rows,
                         void *out) const {
#ifdef GOPT_STEM_X86
  if (bf16_)
    gatherRows<2>(g_, columnMask_.data(), groupIndex_.data(), groupPixels_,
                  static_cast<const uint8_t *>(image), oh0, rows,
                  static_cast<uint8_t *>(out));
  else
    gatherRows<1>(g_, columnMask_.data(), groupIndex_.data(), groupPixels_,
                  static_cast<const uint8_t *>(image), oh0, rows,
                  static_cast<uint8_t *>(out));
#endif
}

bool StemConvAmx::readF32Source(float scale) {
#ifdef GOPT_STEM_X86
  __builtin_cpu_init();
  if (g_.channels != 3 || !__builtin_cpu_supports("avx512bw") ||
      !(bf16_ ? __builtin_cpu_supports("avx512bf16") && scale == 1.0f
              : __builtin_cpu_supports("avx512vbmi")))
    return false;
  f32Source_ = true;
  sourceScale_ = scale;
  return true;
#else
  (void)scale;
  return false;
#endif
}

void StemConvAmx::run(const void *src, void *dst, int64_t images) const {
  const int64_t bytes = bf16_ ? 2 : 1;
  const int64_t bands = (g_.outHeight + bandRows_ - 1) / bandRows_;
  const int64_t items = images * bands;
  const int64_t plane = g_.height * g_.width;
  const int64_t srcImage = plane * g_.channels * (f32Source_ ? 4 : bytes);
  const int64_t rowBytes = g_.width * g_.channels * bytes;
  const int64_t dstRow = g_.outWidth * n_ * bytes;
  const int64_t dstImage = g_.outHeight * dstRow;
  auto work = [&](int64_t first, int64_t end) {
    AlignedVector<uint8_t> rows(bandRows_ * g_.outWidth * kRow * bytes);
    // An f32 source: the band's source rows converted, NHWC.
    AlignedVector<uint8_t> converted(
        f32Source_ ? ((bandRows_ - 1) * g_.stride + 3) * rowBytes : 0);
    for (int64_t i = first; i < end; ++i) {
      const int64_t image = i / bands, oh0 = i % bands * bandRows_;
      const int64_t count = std::min(bandRows_, g_.outHeight - oh0);
      const uint8_t *source =
          static_cast<const uint8_t *>(src) + image * srcImage;
      if (f32Source_) {
        const int64_t lo = std::max<int64_t>(oh0 * g_.stride - g_.padTop, 0);
        const int64_t hi = std::min<int64_t>(
            (oh0 + count - 1) * g_.stride - g_.padTop + 3, g_.height);
        const float *rgb =
            reinterpret_cast<const float *>(source) + lo * g_.width;
#ifdef GOPT_STEM_X86
        if (bf16_)
          rgbToBf16Pixels(rgb, plane,
                          reinterpret_cast<uint16_t *>(converted.data()),
                          (hi - lo) * g_.width);
        else
          rgbToInt8Pixels(rgb, plane,
                          reinterpret_cast<int8_t *>(converted.data()),
                          (hi - lo) * g_.width, sourceScale_);
#endif
        // Row ih of the image at converted + (ih - lo) rows; only rows
        // [lo, hi) are read.
        source = reinterpret_cast<const uint8_t *>(
            reinterpret_cast<uintptr_t>(converted.data()) - lo * rowBytes);
      }
      gather(source, oh0, count, rows.data());
      uint8_t *out =
          static_cast<uint8_t *>(dst) + image * dstImage + oh0 * dstRow;
      if (bf16_)
        bf16Kernel_->run(reinterpret_cast<const uint16_t *>(rows.data()),
                         reinterpret_cast<uint16_t *>(out),
                         count * g_.outWidth);
      else
        int8_->run(rows.data(), out, count * g_.outWidth);
    }
  };
  const int threads = static_cast<int>(
      std::min<int64_t>(threads_, std::max<int64_t>(1, items)));
  if (threads <= 1 || omp_in_parallel()) {
    work(0, items);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    work(items * t / nt, items * (t + 1) / nt);
  }
}

} // namespace gopt::runtime::cpu
