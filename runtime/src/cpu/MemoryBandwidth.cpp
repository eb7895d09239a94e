//===- MemoryBandwidth.cpp - This machine's streaming read rate -----------===//
//
// See MemoryBandwidth.h. The buffer is written once (its pages faulted in),
// then read in full by every thread's share, five times; the best pass
// counts, as other processes can only slow a pass down.
//
//===----------------------------------------------------------------------===//
#include "MemoryBandwidth.h"

#include "Avx512Lanes.h"
#include "HugePageBuffer.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace gopt::runtime::cpu {

#ifdef GOPT_HAVE_AVX512_LANES
namespace {

// Sums floats [begin, end) of `p` four lines at a time (independent
// accumulators, so the loads are not serialized on one add's latency).
GOPT_AVX512BW float sumRange(const float *p, size_t begin, size_t end) {
  __m512 a = _mm512_setzero_ps(), b = a, c = a, d = a;
  for (size_t i = begin; i + 64 <= end; i += 64) {
    a = _mm512_add_ps(a, _mm512_load_ps(p + i));
    b = _mm512_add_ps(b, _mm512_load_ps(p + i + 16));
    c = _mm512_add_ps(c, _mm512_load_ps(p + i + 32));
    d = _mm512_add_ps(d, _mm512_load_ps(p + i + 48));
  }
  return _mm512_reduce_add_ps(
      _mm512_add_ps(_mm512_add_ps(a, b), _mm512_add_ps(c, d)));
}

} // namespace

double measureStreamingReadGBps(size_t bytes) {
  if (!avx512bwSupported())
    return 0;
  const size_t floats = bytes / 256 * 64;
  if (floats == 0)
    return 0;
  HugePageBuffer buffer;
  try {
    buffer = HugePageBuffer(floats);
  } catch (const std::bad_alloc &) {
    return 0;
  }
  const float *p = buffer.data();
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  double best = 0;
  volatile float sink = 0;
  for (int pass = 0; pass < 5; ++pass) {
    float total = 0;
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      const int nt = omp_get_num_threads(), id = omp_get_thread_num();
      // Shares in whole 64-float steps.
      const size_t steps = floats / 64;
      total += sumRange(p, steps * id / nt * 64, steps * (id + 1) / nt * 64);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    sink = sink + total;
    if (seconds > 0)
      best = std::max(best, static_cast<double>(floats * sizeof(float)) /
                                seconds / 1e9);
  }
  (void)sink;
  return best;
}

#else

double measureStreamingReadGBps(size_t) { return 0; }

#endif

double streamingReadGBps() {
  if (const char *setting = std::getenv("GOPT_STREAM_GBPS")) {
    char *end = nullptr;
    const double v = std::strtod(setting, &end);
    if (end != setting && v > 0)
      return v;
  }
  static std::mutex mutex;
  static std::map<int, double> measured; // by thread count
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = measured.find(threads);
  if (it == measured.end())
    it = measured.emplace(threads, measureStreamingReadGBps(size_t(64) << 20))
             .first;
  return it->second;
}

} // namespace gopt::runtime::cpu
