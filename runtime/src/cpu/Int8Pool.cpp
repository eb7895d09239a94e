//===- Int8Pool.cpp - Global average pooling of int8 tensors --------------===//
//
// dequantize + global_avg_pool in one pass: per image, the bytes of each
// channel summed in int32 (NHWC: a row of C bytes a pixel, widened 16
// channels a vector; NCHW: a channel's H x W bytes), then one multiply by
// scale / (H * W). The reference computes the mean of the dequantized f32
// values; the sums here are exact, so the results differ from it only by
// the f32 rounding of the sum of rounded products (a few ulps), far below
// the int8 quantization's own error.
//
//===----------------------------------------------------------------------===//

#include "Int8Pool.h"
#include "EnvSwitch.h"

#include <omp.h>

#include <cstring>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GOPT_I8POOL_X86 1
#define GOPT_I8POOL_TARGET __attribute__((target("avx512f,avx512bw")))
#endif

namespace gopt::runtime::cpu {

bool int8GlobalPoolEnabled() {
  static const bool on = envSwitchOn("GOPT_INT8_GLOBAL_POOL");
  return on;
}

namespace {

using dnnl::memory;

// One image's channel sums of an NHWC [pixels][c] int8 tensor.
template <bool isUnsigned>
void sumRows(const uint8_t *x, int64_t pixels, int64_t c, int32_t *sums) {
  std::memset(sums, 0, c * sizeof(int32_t));
  for (int64_t p = 0; p < pixels; ++p) {
    const uint8_t *row = x + p * c;
    for (int64_t i = 0; i < c; ++i)
      sums[i] += isUnsigned ? int32_t(row[i]) : int32_t(int8_t(row[i]));
  }
}

#ifdef GOPT_I8POOL_X86
template <bool isUnsigned>
GOPT_I8POOL_TARGET void sumRowsAvx512(const uint8_t *x, int64_t pixels,
                                      int64_t c, int32_t *sums) {
  int64_t i = 0;
  // 64 channels at a time: four int32 accumulators over all pixels.
  for (; i + 64 <= c; i += 64) {
    __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(),
                      _mm512_setzero_si512(), _mm512_setzero_si512()};
    for (int64_t p = 0; p < pixels; ++p) {
      const uint8_t *v = x + p * c + i;
      for (int j = 0; j < 4; ++j) {
        const __m128i b =
            _mm_loadu_si128(reinterpret_cast<const __m128i *>(v + 16 * j));
        acc[j] = _mm512_add_epi32(acc[j], isUnsigned ? _mm512_cvtepu8_epi32(b)
                                                     : _mm512_cvtepi8_epi32(b));
      }
    }
    for (int j = 0; j < 4; ++j)
      _mm512_storeu_si512(sums + i + 16 * j, acc[j]);
  }
  for (; i < c; ++i) {
    int32_t s = 0;
    for (int64_t p = 0; p < pixels; ++p)
      s += isUnsigned ? int32_t(x[p * c + i]) : int32_t(int8_t(x[p * c + i]));
    sums[i] = s;
  }
}
#endif

class DequantizeGlobalAvgPool : public LayoutKernel {
public:
  DequantizeGlobalAvgPool(const memory::desc &src, bool nhwc, float scale)
      : src_(src), nhwc_(nhwc) {
    const memory::dims d = src.dims();
    n_ = d[0];
    c_ = d[1];
    pixels_ = d[2] * d[3];
    unsigned_ = src.data_type() == memory::data_type::u8;
    factor_ = scale / static_cast<float>(pixels_);
    dst_ = memory::desc({n_, c_, 1, 1}, memory::data_type::f32,
                        memory::format_tag::nchw);
  }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    const auto *x = static_cast<const uint8_t *>(inputs[0].data());
    auto *y = static_cast<float *>(outputs[0].data());
    const int64_t image = c_ * pixels_;
#pragma omp parallel for if (n_ > 1 && !omp_in_parallel())
    for (int64_t n = 0; n < n_; ++n) {
      std::vector<int32_t> sums(c_);
      const uint8_t *xi = x + n * image;
      if (nhwc_)
        sumImage(xi, sums.data());
      else
        for (int64_t i = 0; i < c_; ++i) {
          int32_t s = 0;
          for (int64_t p = 0; p < pixels_; ++p)
            s += unsigned_ ? int32_t(xi[i * pixels_ + p])
                           : int32_t(int8_t(xi[i * pixels_ + p]));
          sums[i] = s;
        }
      for (int64_t i = 0; i < c_; ++i)
        y[n * c_ + i] = static_cast<float>(sums[i]) * factor_;
    }
    return Status::success();
  }
  const char *implementation() const override { return "gopt-int8-pool"; }
  size_t workspaceBytes() const override { return 0; }
  memory::desc inputDesc(int) const override { return src_; }
  memory::desc outputDesc() const override { return dst_; }

private:
  void sumImage(const uint8_t *x, int32_t *sums) const {
#ifdef GOPT_I8POOL_X86
    static const bool avx512 = __builtin_cpu_supports("avx512bw");
    if (avx512) {
      if (unsigned_)
        sumRowsAvx512<true>(x, pixels_, c_, sums);
      else
        sumRowsAvx512<false>(x, pixels_, c_, sums);
      return;
    }
#endif
    if (unsigned_)
      sumRows<true>(x, pixels_, c_, sums);
    else
      sumRows<false>(x, pixels_, c_, sums);
  }

  memory::desc src_, dst_;
  bool nhwc_ = true, unsigned_ = false;
  int64_t n_ = 0, c_ = 0, pixels_ = 0;
  float factor_ = 1;
};

} // namespace

std::unique_ptr<LayoutKernel>
createDequantizeGlobalAvgPool(const memory::desc &src, float scale) {
  if (!int8GlobalPoolEnabled() || src.dims().size() != 4 ||
      (src.data_type() != memory::data_type::s8 &&
       src.data_type() != memory::data_type::u8))
    return nullptr;
  const memory::dims d = src.dims();
  const bool nhwc =
      src == memory::desc(d, src.data_type(), memory::format_tag::nhwc);
  const bool nchw =
      src == memory::desc(d, src.data_type(), memory::format_tag::nchw);
  if ((!nhwc && !nchw) || d[2] * d[3] < 1)
    return nullptr;
  return std::make_unique<DequantizeGlobalAvgPool>(src, nhwc, scale);
}

} // namespace gopt::runtime::cpu
