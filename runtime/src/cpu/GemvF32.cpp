//===- GemvF32.cpp - One row times a constant f32 matrix ------------------===//
//
// See GemvF32.h. The product is bound by reading the matrix (from L3 at
// these sizes: 5 MiB read once per step), so the work is laid out for one
// sequential stream per block and split by blocks between the threads.
//
//===----------------------------------------------------------------------===//
#include "GemvF32.h"

#include "Avx512Lanes.h"
#include "EnvSwitch.h"

#include <omp.h>

#include <algorithm>

namespace gopt::runtime::cpu {

bool gemvF32Enabled() { return envSwitchOn("GOPT_GEMV_F32"); }

#ifdef GOPT_HAVE_AVX512_LANES
namespace {

constexpr int64_t kBlock = 128; // columns per block: 8 zmm of sums
// Rows of the block prefetched ahead (8 KiB): the hardware's prefetch
// alone left the stream waiting on L3 (0.47 against 0.23-0.30 ms for
// 1280 x 1000 on one thread, measured).
constexpr int64_t kAhead = 16;

// Columns [0, 16 * NB) of one block (the last vector masked by `tail`):
// y = x W + bias, relu.
template <int NB>
GOPT_AVX512BW void block(const float *x, const float *w, int64_t k,
                         const float *bias, bool relu, float *y,
                         __mmask16 tail) {
  __m512 acc[NB];
#pragma GCC unroll 8
  for (int j = 0; j < NB; ++j)
    acc[j] = _mm512_setzero_ps();
  constexpr int64_t width = 16 * NB;
  for (int64_t i = 0; i < k; ++i) {
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j)
      _mm_prefetch(
          reinterpret_cast<const char *>(w + (i + kAhead) * width + 16 * j),
          _MM_HINT_T0);
    const __m512 xv = _mm512_set1_ps(x[i]);
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j)
      acc[j] =
          _mm512_fmadd_ps(_mm512_loadu_ps(w + i * width + 16 * j), xv, acc[j]);
  }
#pragma GCC unroll 8
  for (int j = 0; j < NB; ++j) {
    const __mmask16 m = j + 1 == NB ? tail : static_cast<__mmask16>(0xFFFF);
    __m512 v = acc[j];
    if (bias)
      v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + 16 * j));
    if (relu)
      v = _mm512_maskz_max_ps(0xFFFF, v, _mm512_setzero_ps());
    _mm512_mask_storeu_ps(y + 16 * j, m, v);
  }
}

using BlockFn = void (*)(const float *, const float *, int64_t, const float *,
                         bool, float *, __mmask16);

BlockFn blockFor(int vectors) {
  switch (vectors) {
  case 1:
    return block<1>;
  case 2:
    return block<2>;
  case 3:
    return block<3>;
  case 4:
    return block<4>;
  case 5:
    return block<5>;
  case 6:
    return block<6>;
  case 7:
    return block<7>;
  default:
    return block<8>;
  }
}

} // namespace

std::unique_ptr<GemvF32> GemvF32::create(int64_t k, int64_t n, const float *b,
                                         bool transposed) {
  if (!avx512bwSupported() || k <= 0 || n <= 0 || !b)
    return nullptr;
  auto g = std::unique_ptr<GemvF32>(new GemvF32());
  g->k_ = k;
  g->n_ = n;
  // Each block's columns padded to whole vectors (zeros, never stored).
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  g->w_.assign(static_cast<size_t>(blocks * kBlock * k), 0.0f);
  for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
    const int64_t cols = std::min(kBlock, n - j0);
    const int64_t width = (cols + 15) / 16 * 16;
    float *dst = g->w_.data() + j0 * k;
    for (int64_t i = 0; i < k; ++i)
      for (int64_t c = 0; c < cols; ++c)
        dst[i * width + c] =
            transposed ? b[(j0 + c) * k + i] : b[i * n + j0 + c];
  }
  return g;
}

void GemvF32::run(const float *x, const float *bias, bool relu, float *y,
                  int threads) const {
  const int64_t blocks = (n_ + kBlock - 1) / kBlock;
  // Below ~256 KiB of matrix a fork costs more than the second thread
  // saves.
  if (omp_in_parallel() || k_ * n_ < (int64_t(1) << 16))
    threads = 1;
  threads = static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(threads, blocks)));
  auto range = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t j0 = b * kBlock, cols = std::min(kBlock, n_ - j0);
      const int vectors = static_cast<int>((cols + 15) / 16);
      const int64_t last = cols - 16 * (vectors - 1);
      const auto tail = static_cast<__mmask16>((1u << last) - 1);
      blockFor(vectors)(x, w_.data() + j0 * k_, k_, bias ? bias + j0 : nullptr,
                        relu, y + j0, tail);
    }
  };
  if (threads <= 1) {
    range(0, blocks);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    range(blocks * t / nt, blocks * (t + 1) / nt);
  }
}

#else // !GOPT_HAVE_AVX512_LANES

std::unique_ptr<GemvF32> GemvF32::create(int64_t, int64_t, const float *,
                                         bool) {
  return nullptr;
}
void GemvF32::run(const float *, const float *, bool, float *, int) const {}

#endif

} // namespace gopt::runtime::cpu
