//===- AmxMatmul.cpp - bf16 matmul of training-sized layers on AMX --------===//
//
// C = op(A) . op(B) in 32x32 blocks of C, four f32 tiles each summing all
// of K (two A tiles of 16 rows, two B tiles of 16 columns), rounded once.
// Both operands are first copied into the tiles' layout, so that every
// tile load is 1 KiB contiguous and 64-byte aligned (tiles whose rows lie
// far apart ran 1.7x slower in SmallConvTraining.cpp):
// - A per 32 rows: [k / 32][row][k % 32];
// - B per 32 columns: two panels of 16 columns, [k / 2][column][k % 2]
//   (AMX's VNNI pairs): from a [K][N] B two rows interleaved, from a
//   transposed ([N][K]) B a 16x16 transpose of k pairs.
// Where op(A) is small (at most 2 MB: the data gradient's 1024x128 dy, the
// filter gradient's 128x1024 dy transposed) all of it is copied once and
// the threads take the 32-column blocks of C, copying each block's B panel
// (K x 32, in L2) before running down all of A's rows. Otherwise (the
// forward's 1024x9216 source) all of B is copied once (9216x128: 2.4 MB)
// and the threads take the 32-row blocks, copying each block's A rows
// once for all of B's columns.
//
//===----------------------------------------------------------------------===//
#include "AmxMatmul.h"
#include "EnvSwitch.h"

#include "AmxTiles.h"
#include "Avx512Lanes.h"
#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/OpSchema.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(GOPT_HAVE_AVX512_LANES) && defined(__linux__)
#define GOPT_HAVE_AMX_MATMUL 1
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define GOPT_AMX_MM                                                            \
  __attribute__((                                                              \
      target("avx512f,avx512bw,avx512vl,avx512bf16,amx-tile,amx-bf16")))
#endif

namespace gopt::runtime::cpu {

bool amxMatmulEnabled() { return envSwitchOn("GOPT_AMX_MATMUL"); }

#ifdef GOPT_HAVE_AMX_MATMUL
namespace {

struct MatmulShape {
  int64_t m, n, k;
  bool ta, tb; // A given as [K][M], B as [N][K]
};

// 64-byte aligned storage.
class Aligned {
public:
  void resize(size_t n) {
    storage_.assign(n + 32, 0);
    const size_t skew = reinterpret_cast<uintptr_t>(storage_.data()) % 64;
    data_ = storage_.data() + (skew ? (64 - skew) / 2 : 0);
  }
  uint16_t *data() { return data_; }

private:
  std::vector<uint16_t> storage_;
  uint16_t *data_ = nullptr;
};

// Rows [m0, m0 + 32) of op(A), k in [k0, k1), as [k / 32][row][k % 32].
GOPT_AMX_MM void packA(const MatmulShape &s, const uint16_t *a, int64_t m0,
                       int64_t k0, int64_t k1, uint16_t *dst) {
  for (int64_t k = k0; k < k1; k += 32) {
    uint16_t *block = dst + (k - k0) * 32;
    if (!s.ta) {
      for (int64_t r = 0; r < 32; ++r)
        _mm512_store_si512(block + r * 32,
                           _mm512_loadu_si512(a + (m0 + r) * s.k + k));
      continue;
    }
    // A given as [K][M] (the filter gradient's dy, 256 KB in L2): element
    // by element.
    for (int64_t r = 0; r < 32; ++r)
      for (int64_t j = 0; j < 32; ++j)
        block[r * 32 + j] = a[(k + j) * s.m + m0 + r];
  }
}

// Columns [n0, n0 + 32 * blocks) of op(B), each 32 as two panels
// [k / 2][column][k % 2] (32 * K values a block). A [K][N] B is read a
// pair of rows at a time across all the blocks (512 contiguous bytes of
// each row for 8 blocks: the filter gradient's 1024x9216 source, whose
// rows lie 18 KB apart).
GOPT_AMX_MM void packB(const MatmulShape &s, const uint16_t *b, int64_t n0,
                       int64_t blocks, uint16_t *dst) {
  const int64_t panel = s.k / 2 * 32;
  if (!s.tb) {
    alignas(64) uint16_t loIdx[32], hiIdx[32];
    for (int i = 0; i < 32; ++i) {
      loIdx[i] = static_cast<uint16_t>((i % 2) * 32 + i / 2);
      hiIdx[i] = static_cast<uint16_t>(loIdx[i] + 16);
    }
    const __m512i lo = _mm512_load_si512(loIdx), hi = _mm512_load_si512(hiIdx);
    for (int64_t p = 0; p < s.k / 2; ++p)
      for (int64_t j = 0; j < blocks; ++j) {
        const uint16_t *row = b + 2 * p * s.n + n0 + j * 32;
        const __m512i r0 = _mm512_loadu_si512(row),
                      r1 = _mm512_loadu_si512(row + s.n);
        uint16_t *out = dst + j * 32 * s.k + p * 32;
        _mm512_store_si512(out, _mm512_permutex2var_epi16(r0, lo, r1));
        _mm512_store_si512(out + panel, _mm512_permutex2var_epi16(r0, hi, r1));
      }
    return;
  }
  // B given as [N][K]: a k pair of a column is one 32-bit lane of its row.
  for (int64_t j = 0; j < blocks; ++j)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t p0 = 0; p0 < s.k / 2; p0 += 16) {
        __m512i r[16];
        for (int64_t i = 0; i < 16; ++i)
          r[i] =
              _mm512_loadu_si512(b + (n0 + j * 32 + h * 16 + i) * s.k + 2 * p0);
        transpose16x16(r);
        for (int64_t i = 0; i < 16; ++i)
          _mm512_store_si512(dst + j * 32 * s.k + h * panel + (p0 + i) * 32,
                             r[i]);
      }
}

// Column blocks packed at a time in byColumns.
constexpr int64_t kGroup = 8;

// K is summed in chunks of kChunk: a chunk's A rows (16 KB) stay in L1
// for all the column blocks it meets, and its B panels in L2; the f32
// sums of C between chunks go to `acc`.
constexpr int64_t kChunk = 256;

// One 32x32 block of C over `steps` k steps of 32 from packed A rows (aSub,
// [step][row][32]) and a packed B column block (bSub, its two panels
// `panel` apart): the sums start at zero (`first`) or from acc (row stride
// ldAcc), and end in acc or (`last`) rounded to bf16 in c (row stride
// ldc). The tile configuration is loaded by the caller. The tile
// intrinsics are asm statements without a memory clobber: the barriers
// keep the packing stores before them and the reads of `block` after them.
GOPT_AMX_MM inline __attribute__((always_inline)) void
blockProduct(const uint16_t *aSub, const uint16_t *bSub, int64_t panel,
             int64_t steps, float *acc, int64_t ldAcc, bool first, bool last,
             float *block, uint16_t *c, int64_t ldc, bool stream) {
  __asm__ volatile("" ::: "memory");
  const long accStride = static_cast<long>(ldAcc * 4);
  if (first) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  } else {
    _tile_loadd(0, acc, accStride);
    _tile_loadd(1, acc + 16, accStride);
    _tile_loadd(2, acc + 16 * ldAcc, accStride);
    _tile_loadd(3, acc + 16 * ldAcc + 16, accStride);
  }
  for (int64_t step = 0; step < steps; ++step) {
    const uint16_t *a = aSub + step * 1024, *b = bSub + step * 512;
    _tile_loadd(4, a, 64);
    _tile_loadd(5, a + 512, 64);
    _tile_loadd(6, b, 64);
    _tile_loadd(7, b + panel, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  if (!last) {
    _tile_stored(0, acc, accStride);
    _tile_stored(1, acc + 16, accStride);
    _tile_stored(2, acc + 16 * ldAcc, accStride);
    _tile_stored(3, acc + 16 * ldAcc + 16, accStride);
    __asm__ volatile("" ::: "memory");
    return;
  }
  _tile_stored(0, block, 128);
  _tile_stored(1, block + 16, 128);
  _tile_stored(2, block + 16 * 32, 128);
  _tile_stored(3, block + 16 * 32 + 16, 128);
  __asm__ volatile("" ::: "memory");
  for (int64_t r = 0; r < 32; ++r) {
    const __m512 lo = _mm512_load_ps(block + r * 32),
                 hi = _mm512_load_ps(block + r * 32 + 16);
    const __m512i v = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
    if (stream)
      _mm512_stream_si512(reinterpret_cast<__m512i *>(c + r * ldc), v);
    else
      _mm512_storeu_si512(c + r * ldc, v);
  }
}

GOPT_AMX_MM void configureTiles() {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  loadTileConfig(config);
}

// One thread's share: column blocks [first, end) against all of a packed
// op(A) (aAll, 32 * K values a row block), each kGroup blocks' B panels
// packed into `bp` first; `acc`: M x 32 * kGroup floats (unused where K
// is one chunk). `stream`: C's rows aligned and C larger than the caches
// (the data gradient's 1024x9216: 19 MB), stored past them (a normal store
// first reads each line from memory).
__attribute__((noinline)) GOPT_AMX_MM void
byColumns(const MatmulShape &s, const uint16_t *aAll, const uint16_t *b,
          int64_t first, int64_t end, uint16_t *bp, float *acc, uint16_t *c,
          bool stream) {
  __asm__ volatile("" ::: "memory");
  configureTiles();
  alignas(64) float block[32 * 32];
  const int64_t panel = s.k / 2 * 32, ldAcc = 32 * kGroup;
  for (int64_t g = first; g < end; g += kGroup) {
    const int64_t blocks = std::min(kGroup, end - g);
    packB(s, b, g * 32, blocks, bp);
    for (int64_t k0 = 0; k0 < s.k; k0 += kChunk) {
      const int64_t k1 = std::min(s.k, k0 + kChunk);
      for (int64_t m0 = 0; m0 < s.m; m0 += 32)
        for (int64_t j = 0; j < blocks; ++j)
          blockProduct(aAll + m0 * s.k + k0 * 32, bp + j * 32 * s.k + k0 * 16,
                       panel, (k1 - k0) / 32, acc + m0 * ldAcc + j * 32, ldAcc,
                       k0 == 0, k1 == s.k, block, c + m0 * s.n + (g + j) * 32,
                       s.n, stream);
    }
  }
  _tile_release();
  if (stream) // the streamed lines visible before the next op runs
    _mm_sfence();
  __asm__ volatile("" ::: "memory");
}

// One thread's share: row blocks [first, end) against all of a packed
// op(B) (bAll, 32 * K values a column block), each K chunk of the blocks'
// A rows packed into `ap` first; `acc`: (end - first) * 32 x N floats.
__attribute__((noinline)) GOPT_AMX_MM void
byRows(const MatmulShape &s, const uint16_t *a, const uint16_t *bAll,
       int64_t first, int64_t end, uint16_t *ap, float *acc, uint16_t *c) {
  __asm__ volatile("" ::: "memory");
  configureTiles();
  alignas(64) float block[32 * 32];
  const int64_t panel = s.k / 2 * 32;
  for (int64_t k0 = 0; k0 < s.k; k0 += kChunk) {
    const int64_t k1 = std::min(s.k, k0 + kChunk);
    for (int64_t mb = first; mb < end; ++mb)
      packA(s, a, mb * 32, k0, k1, ap + (mb - first) * 32 * kChunk);
    for (int64_t mb = first; mb < end; ++mb)
      for (int64_t n0 = 0; n0 < s.n; n0 += 32)
        blockProduct(ap + (mb - first) * 32 * kChunk, bAll + n0 * s.k + k0 * 16,
                     panel, (k1 - k0) / 32, acc + (mb - first) * 32 * s.n + n0,
                     s.n, k0 == 0, k1 == s.k, block, c + mb * 32 * s.n + n0,
                     s.n, false);
  }
  _tile_release();
  __asm__ volatile("" ::: "memory");
}

class AmxMatmulKernel : public Kernel {
public:
  AmxMatmulKernel(const MatmulShape &s, int threads)
      : s_(s), threads_(std::max(1, threads)),
        byColumns_(s.m * s.k <= (int64_t(1) << 20)) {
    // (createAmxMatmul keeps the sizes these take within a few MB.)
    packed_.resize(s.k * (byColumns_ ? s.m : s.n));
    perThread_.resize(threads_ * ownSize());
    acc_.resize(threads_ * accSize());
  }

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const MatmulShape &s = s_;
    const uint16_t *a = in[0].data<uint16_t>(), *b = in[1].data<uint16_t>();
    uint16_t *c = out[0].data<uint16_t>(), *packed = packed_.data();
    const int64_t blocks = (byColumns_ ? s.n : s.m) / 32;
    const bool stream = s.m * s.n * 2 >= (int64_t(8) << 20) &&
                        reinterpret_cast<uintptr_t>(c) % 64 == 0;
    const int threads = static_cast<int>(std::min<int64_t>(threads_, blocks));
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const int t = omp_get_thread_num(), count = omp_get_num_threads();
      // The shared operand's copy, split among the threads.
      const int64_t shared = (byColumns_ ? s.m : s.n) / 32;
      for (int64_t i = shared * t / count; i < shared * (t + 1) / count; ++i)
        if (byColumns_)
          packA(s, a, i * 32, 0, s.k, packed + i * 32 * s.k);
        else
          packB(s, b, i * 32, 1, packed + i * 32 * s.k);
#pragma omp barrier
      uint16_t *own = perThread_.data() + t * ownSize();
      const int64_t first = blocks * t / count, end = blocks * (t + 1) / count;
      float *acc = acc_.data() + t * accSize();
      if (byColumns_)
        byColumns(s, packed, b, first, end, own, acc, c, stream);
      else
        byRows(s, a, packed, first, end, own, acc, c);
    }
    return Status::success();
  }
  const char *implementation() const override { return "amx"; }
  size_t workspaceBytes() const override {
    return (s_.k * (byColumns_ ? s_.m : s_.n) + threads_ * ownSize()) * 2 +
           acc_.size() * 4;
  }

private:
  // The most row blocks a thread takes by rows (all of them where OpenMP
  // gives one thread).
  int64_t rowBlocks() const { return s_.m / 32; }
  // A thread's copy: kGroup column blocks of B, or a K chunk of its rows.
  int64_t ownSize() const {
    return byColumns_ ? kGroup * 32 * s_.k : rowBlocks() * 32 * kChunk;
  }
  // A thread's f32 sums between K chunks.
  int64_t accSize() const {
    if (s_.k <= kChunk)
      return 0;
    return byColumns_ ? s_.m * 32 * kGroup : rowBlocks() * 32 * s_.n;
  }
  MatmulShape s_;
  int threads_;
  bool byColumns_;
  Aligned packed_, perThread_;
  std::vector<float> acc_;
};

} // namespace
#endif

std::unique_ptr<Kernel> createAmxMatmul(const KernelConfig &c) {
#ifdef GOPT_HAVE_AMX_MATMUL
  if (!amxMatmulEnabled() || !amxBf16Usable() || c.inputShapes.size() != 2 ||
      c.outputShapes.size() != 1 || c.inputTypes.size() != 2 ||
      c.outputTypes.size() != 1)
    return nullptr;
  for (DType t : {c.inputTypes[0], c.inputTypes[1], c.outputTypes[0]})
    if (t != DType::kBF16)
      return nullptr;
  const Shape &a = c.inputShapes[0], &b = c.inputShapes[1],
              &r = c.outputShapes[0];
  if (a.size() != 2 || b.size() != 2 || r.size() != 2)
    return nullptr;
  OpAttrs attrs = c.attrs();
  MatmulShape s;
  s.ta = attrs.getBool("transpose_a");
  s.tb = attrs.getBool("transpose_b");
  s.m = s.ta ? a[1] : a[0];
  s.k = s.ta ? a[0] : a[1];
  s.n = s.tb ? b[0] : b[1];
  if ((s.tb ? b[1] : b[0]) != s.k || r[0] != s.m || r[1] != s.n)
    return nullptr;
  if (s.m < 32 || s.n < 32 || s.k < 32 || s.m % 32 || s.n % 32 || s.k % 32 ||
      s.m > (int64_t(1) << 24) || s.n > (int64_t(1) << 24) ||
      s.k > (int64_t(1) << 20))
    return nullptr;
  // Taken by rows (op(A) over 2 MB), each thread sums all of C in f32.
  if (s.m * s.k > (int64_t(1) << 20) && s.m * s.n > (int64_t(1) << 22))
    return nullptr;
  return std::make_unique<AmxMatmulKernel>(s, omp_get_max_threads());
#else
  (void)c;
  return nullptr;
#endif
}

} // namespace gopt::runtime::cpu
