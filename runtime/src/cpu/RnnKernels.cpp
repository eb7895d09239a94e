//===- RnnKernels.cpp - Fast CPU kernels of the recurrent ops -------------===//
//
// lstm, gru and rnn in f32 as GEMMs (oneDNN) plus a fused elementwise pass
// per step: one GEMM projects every step's input at once (x [S*B, I] times
// w^T; a constant w packed once), then each step multiplies the batch's
// hidden state by r^T and applies the gate math; lstm's steps run in one
// OpenMP region, the hidden units split over the threads (LstmSlices; from
// 4 batch rows on AVX-512 CPUs with a register-blocked recurrent GEMM,
// panelGemm). Above 16 rows, or from 4 without AVX-512, an lstm oneDNN's
// lstm_forward covers runs as that primitive (OneDnnLstm).
// docs/architecture.md says why. Handles everything
// the ops define (directions, peepholes, clip, input_forget,
// linear_before_reset, per-row sequence lengths); other element types go
// to the reference kernels (RefRnn.cpp).
//
//===----------------------------------------------------------------------===//
#include "Avx512Lanes.h"
#include "OneDnn.h"
#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/OpAttrs.h"

#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <unordered_map>
#include <vector>

// The panel GEMM and the one-pass gates are AVX-512 intrinsics, chosen at
// run time; elsewhere the slices use oneDNN matmuls and lstmUnits.

namespace gopt::runtime {
namespace {

enum class Cell { kLstm, kGru, kRnn };

/// tanh as a rational function of x^2 on [-9, 9] (Eigen's and MLAS's
/// constants; within 4e-7 of tanh everywhere). Plain float arithmetic, so
/// the gate loops vectorize; libm's tanh and exp, one call per gate and
/// unit, were most of a batch-1 step.
inline float fastTanh(float x) {
  x = std::clamp(x, -9.0f, 9.0f);
  const float x2 = x * x;
  float p = -2.76076847742355e-16f;
  p = p * x2 + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  float q = 1.19825839466702e-06f;
  q = q * x2 + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  return x * p / q;
}

/// sigmoid(x) = (1 + tanh(x / 2)) / 2: within 3e-7 absolute.
inline float fastSigmoid(float x) { return 0.5f * fastTanh(0.5f * x) + 0.5f; }

/// Applies f to v[0, n) in place; a loop the compiler vectorizes.
template <typename F> void applyInPlace(float *v, int64_t n, F f) {
  for (int64_t j = 0; j < n; ++j)
    v[j] = f(v[j]);
}

/// Row-major C[M, N] = A[M, K] * B[N, K]^T + beta * C.
Status gemmTransposedB(int64_t m, int64_t n, int64_t k, const float *a,
                       int64_t lda, const float *b, int64_t ldb, float beta,
                       float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return Status::success();
  if (dnnl::sgemm('N', 'T', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc) !=
      dnnl::status::success)
    return internalError("oneDNN sgemm failed for ", m, "x", n, "x", k);
  return Status::success();
}

/// out[B, N] = h[B, K] * r^T for r [N, K] row-major, as a oneDNN matmul
/// whose weights are packed into oneDNN's own layout once per run. sgemm
/// reads the plain matrix every step; packed, an LSTM layer at 8 rows ran
/// about 10% faster. At one row sgemm's GEMV is as fast and needs no
/// packing, so the kernel uses this only from kPackedRows.
class PackedRecurrentGemm {
public:
  static constexpr int64_t kPackedRows = 4;

  Status init(int64_t batch, int64_t rows, int64_t hidden) {
    using dnnl::memory;
    try {
      memory::desc src({batch, hidden}, memory::data_type::f32,
                       memory::format_tag::ab);
      memory::desc anyWeights({hidden, rows}, memory::data_type::f32,
                              memory::format_tag::any);
      memory::desc dst({batch, rows}, memory::data_type::f32,
                       memory::format_tag::ab);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, anyWeights, dst),
                                      cpu::cpuEngine());
      matmul_ = dnnl::matmul(pd);
      srcDesc_ = src;
      dstDesc_ = dst;
      // r [rows, hidden] row-major is the [hidden, rows] weights transposed.
      userWeights_ = memory::desc({hidden, rows}, memory::data_type::f32,
                                  memory::format_tag::ba);
      packed_ = memory(pd.weights_desc(), cpu::cpuEngine());
      stream_ = dnnl::stream(cpu::cpuEngine());
    } catch (const dnnl::error &e) {
      return internalError("oneDNN recurrent matmul: ", e.what());
    }
    return Status::success();
  }

  Status pack(const float *r) {
    try {
      dnnl::memory user(userWeights_, cpu::cpuEngine(), const_cast<float *>(r));
      dnnl::reorder(user, packed_).execute(stream_, user, packed_);
      stream_.wait();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN recurrent weight packing: ", e.what());
    }
    return Status::success();
  }

  Status multiply(const float *h, float *out) {
    try {
      dnnl::memory src(srcDesc_, cpu::cpuEngine(), const_cast<float *>(h));
      dnnl::memory dst(dstDesc_, cpu::cpuEngine(), out);
      matmul_.execute(stream_, {{DNNL_ARG_SRC, src},
                                {DNNL_ARG_WEIGHTS, packed_},
                                {DNNL_ARG_DST, dst}});
      stream_.wait();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN recurrent matmul: ", e.what());
    }
    return Status::success();
  }

private:
  dnnl::matmul matmul_;
  dnnl::memory::desc srcDesc_, dstDesc_, userWeights_;
  dnnl::memory packed_;
  dnnl::stream stream_;
};

/// One LSTM step for hidden units [0, n) of one batch row: gates from the
/// input projection `xp` and biases `bias` (gate blocks i, o, f, c `ld`
/// apart), the recurrent projection `rp` (blocks `n` apart) and the
/// peepholes (blocks `ld` apart); updates c, writes h to `h` and `y`;
/// `gates` holds 4n floats of scratch. One simple loop per pass (GCC keeps
/// a single loop over everything scalar), cloned for AVX-512 and AVX2 (the
/// build targets baseline x86-64), so a batch-8 step's gates are not most
/// of it.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
lstmUnits(int64_t n, int64_t ld, const float *__restrict__ xp,
          const float *__restrict__ bias, const float *__restrict__ rp,
          const float *__restrict__ peep, float clip, bool inputForget,
          float *__restrict__ gates, float *__restrict__ c,
          float *__restrict__ h, float *__restrict__ y) {
  float *gi = gates, *go = gi + n, *gf = go + n, *gc = gf + n;
  for (int64_t j = 0; j < n; ++j) {
    gi[j] = xp[j] + bias[j] + rp[j] + peep[j] * c[j];
    gf[j] = xp[2 * ld + j] + bias[2 * ld + j] + rp[2 * n + j] +
            peep[2 * ld + j] * c[j];
    gc[j] = xp[3 * ld + j] + bias[3 * ld + j] + rp[3 * n + j];
  }
  if (clip < std::numeric_limits<float>::infinity())
    for (float *g : {gi, gf, gc})
      for (int64_t j = 0; j < n; ++j)
        g[j] = std::clamp(g[j], -clip, clip);
  for (int64_t j = 0; j < n; ++j)
    gi[j] = fastSigmoid(gi[j]);
  for (int64_t j = 0; j < n; ++j)
    gc[j] = fastTanh(gc[j]);
  if (inputForget)
    for (int64_t j = 0; j < n; ++j)
      gf[j] = 1.0f - gi[j];
  else
    for (int64_t j = 0; j < n; ++j)
      gf[j] = fastSigmoid(gf[j]);
  for (int64_t j = 0; j < n; ++j) {
    c[j] = gf[j] * c[j] + gi[j] * gc[j];
    go[j] = xp[ld + j] + bias[ld + j] + rp[n + j] + peep[ld + j] * c[j];
  }
  if (clip < std::numeric_limits<float>::infinity())
    for (int64_t j = 0; j < n; ++j)
      go[j] = std::clamp(go[j], -clip, clip);
  for (int64_t j = 0; j < n; ++j) {
    const float v = fastSigmoid(go[j]) * fastTanh(c[j]);
    h[j] = v;
    y[j] = v;
  }
}

#ifdef GOPT_HAVE_AVX512_LANES
/// The recurrent GEMM of an LSTM slice with AVX-512 and registers blocked
/// over up to 8 batch rows and 3 panels of 16 columns: out[m, 16p + l] =
/// sum_k h[m, k] * panels[p][k][l]. At batch 8 a oneDNN matmul per step
/// cost more in its call (argument maps, stream) than the 8x256x512 product
/// itself; this keeps R streaming from L2 with each loaded vector used by
/// every row.
template <int M, int NP>
__attribute__((target("avx512f"))) void
panelBlock(int64_t k, const float *h, int64_t ldh, const float *panels,
           float *out, int64_t ldo) {
  __m512 acc[M][NP];
  for (int m = 0; m < M; ++m)
    for (int p = 0; p < NP; ++p)
      acc[m][p] = _mm512_setzero_ps();
  for (int64_t i = 0; i < k; ++i) {
    __m512 r[NP];
    for (int p = 0; p < NP; ++p)
      r[p] = _mm512_load_ps(panels + (p * k + i) * 16);
    for (int m = 0; m < M; ++m) {
      const __m512 hv = _mm512_set1_ps(h[m * ldh + i]);
      for (int p = 0; p < NP; ++p)
        acc[m][p] = _mm512_fmadd_ps(hv, r[p], acc[m][p]);
    }
  }
  for (int m = 0; m < M; ++m)
    for (int p = 0; p < NP; ++p)
      _mm512_storeu_ps(out + m * ldo + p * 16, acc[m][p]);
}

template <int M>
__attribute__((target("avx512f"))) void
panelRows(int64_t k, int64_t panels, const float *h, int64_t ldh,
          const float *packed, float *out, int64_t ldo) {
  // 8 rows: 24 accumulators and 3 panel vectors; fewer rows, 4 panels.
  constexpr int kNp = M > 4 ? 3 : 4;
  int64_t p = 0;
  for (; p + kNp <= panels; p += kNp)
    panelBlock<M, kNp>(k, h, ldh, packed + p * k * 16, out + p * 16, ldo);
  const float *rest = packed + p * k * 16;
  switch (panels - p) {
  case 3:
    panelBlock<M, 3>(k, h, ldh, rest, out + p * 16, ldo);
    break;
  case 2:
    panelBlock<M, 2>(k, h, ldh, rest, out + p * 16, ldo);
    break;
  case 1:
    panelBlock<M, 1>(k, h, ldh, rest, out + p * 16, ldo);
    break;
  default:
    break;
  }
}

/// out[B, 16 * panels] = h[B, k] times the packed panels, 8 rows at a time.
void panelGemm(int64_t batch, int64_t k, int64_t panels, const float *h,
               const float *packed, float *out, int64_t ldo) {
  using Fn = void (*)(int64_t, int64_t, const float *, int64_t, const float *,
                      float *, int64_t);
  static constexpr Fn kRows[9] = {nullptr,      panelRows<1>, panelRows<2>,
                                  panelRows<3>, panelRows<4>, panelRows<5>,
                                  panelRows<6>, panelRows<7>, panelRows<8>};
  for (int64_t b = 0; b < batch; b += 8)
    kRows[std::min<int64_t>(8, batch - b)](k, panels, h + b * k, k, packed,
                                           out + b * ldo, ldo);
}

/// max, min and rcp14 through their masked forms with every lane set: the
/// plain intrinsics start from _mm512_undefined_ps, which GCC 12 reports
/// as maybe uninitialized.
__attribute__((target("avx512f"))) inline __m512 max16(__m512 a, __m512 b) {
  return _mm512_mask_max_ps(a, 0xffff, a, b);
}
__attribute__((target("avx512f"))) inline __m512 min16(__m512 a, __m512 b) {
  return _mm512_mask_min_ps(a, 0xffff, a, b);
}
__attribute__((target("avx512f"))) inline __m512 rcp16(__m512 a) {
  return _mm512_mask_rcp14_ps(a, 0xffff, a);
}

/// fastTanh on 16 floats (the same polynomial).
__attribute__((target("avx512f"))) inline __m512 tanh16(__m512 x) {
  x = min16(max16(x, _mm512_set1_ps(-9.0f)), _mm512_set1_ps(9.0f));
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 p = _mm512_set1_ps(-2.76076847742355e-16f);
  for (float k :
       {2.00018790482477e-13f, -8.60467152213735e-11f, 5.12229709037114e-08f,
        1.48572235717979e-05f, 6.37261928875436e-04f, 4.89352455891786e-03f})
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(k));
  __m512 q = _mm512_set1_ps(1.19825839466702e-06f);
  for (float k :
       {1.18534705686654e-04f, 2.26843463243900e-03f, 4.89352518554385e-03f})
    q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(k));
  // 1 / q as rcp14 and one Newton step (within an ulp of the division,
  // whose latency chained every gate).
  __m512 r = rcp16(q);
  r = _mm512_mul_ps(r, _mm512_fnmadd_ps(q, r, _mm512_set1_ps(2.0f)));
  return _mm512_mul_ps(_mm512_mul_ps(x, p), r);
}

__attribute__((target("avx512f"))) inline __m512 sigmoid16(__m512 x) {
  const __m512 half = _mm512_set1_ps(0.5f);
  return _mm512_fmadd_ps(half, tanh16(_mm512_mul_ps(half, x)), half);
}

/// The gate pass of lstmUnits16 for the layers PyTorch exports (no
/// peepholes, clip or input_forget, whole 16-float vectors): the four gates
/// are independent of the new cell state, so their eight sigmoid and tanh
/// evaluations for 32 units are in flight together rather than chained
/// through the peephole terms (the general pass took about a fifth of a
/// batch-32 step, far more than its arithmetic). Same arithmetic, same
/// results.
__attribute__((target("avx512f"))) inline void
lstmUnitsPlainAt(int64_t j, int64_t n, int64_t ld, const float *xp,
                 const float *bias, const float *rp, float *c, float *h,
                 float *y) {
  __m512 pre[4]; // gate blocks i, o, f, c: xp and bias `ld` apart, rp `n`
  for (int64_t g = 0; g < 4; ++g)
    pre[g] = _mm512_add_ps(_mm512_add_ps(_mm512_loadu_ps(xp + g * ld + j),
                                         _mm512_loadu_ps(bias + g * ld + j)),
                           _mm512_loadu_ps(rp + g * n + j));
  const __m512 i = sigmoid16(pre[0]), o = sigmoid16(pre[1]);
  const __m512 f = sigmoid16(pre[2]), cand = tanh16(pre[3]);
  const __m512 cv =
      _mm512_fmadd_ps(f, _mm512_loadu_ps(c + j), _mm512_mul_ps(i, cand));
  const __m512 hv = _mm512_mul_ps(o, tanh16(cv));
  _mm512_storeu_ps(c + j, cv);
  _mm512_storeu_ps(h + j, hv);
  _mm512_storeu_ps(y + j, hv);
}

__attribute__((target("avx512f"))) void
lstmUnitsPlain16(int64_t n, int64_t ld, const float *xp, const float *bias,
                 const float *rp, float *c, float *h, float *y) {
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) {
    lstmUnitsPlainAt(j, n, ld, xp, bias, rp, c, h, y);
    lstmUnitsPlainAt(j + 16, n, ld, xp, bias, rp, c, h, y);
  }
  if (j < n)
    lstmUnitsPlainAt(j, n, ld, xp, bias, rp, c, h, y);
}

/// lstmUnits in one pass of 16 units at a time, the gates in registers,
/// on CPUs with AVX-512 (lstmUnits' passes through its scratch were a
/// third of the recurrent GEMM's time at batch 8).
__attribute__((target("avx512f"))) void
lstmUnits16(int64_t n, int64_t ld, const float *xp, const float *bias,
            const float *rp, const float *peep, float clip, bool inputForget,
            float * /*gates*/, float *c, float *h, float *y) {
  // Lambdas do not inherit the target, so the repeated parts are macros.
  const bool clipped = clip < std::numeric_limits<float>::infinity();
  const __m512 hi = _mm512_set1_ps(clip), lo = _mm512_set1_ps(-clip);
#define GOPT_CLAMP(v) (clipped ? min16(max16(v, lo), hi) : (v))
#define GOPT_AT(p, offset) _mm512_maskz_loadu_ps(m, (p) + (offset) + j)
  // Gate block g's projection + bias + recurrent part (xp and bias `ld`
  // apart, rp `n` apart).
#define GOPT_GATE(g)                                                           \
  _mm512_add_ps(_mm512_add_ps(GOPT_AT(xp, (g)*ld), GOPT_AT(bias, (g)*ld)),     \
                GOPT_AT(rp, (g)*n))
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m =
        n - j >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - j)) - 1);
    __m512 cv = GOPT_AT(c, 0);
    const __m512 i = sigmoid16(
        GOPT_CLAMP(_mm512_fmadd_ps(GOPT_AT(peep, 0), cv, GOPT_GATE(0))));
    const __m512 cand = tanh16(GOPT_CLAMP(GOPT_GATE(3)));
    const __m512 f = inputForget
                         ? _mm512_sub_ps(_mm512_set1_ps(1.0f), i)
                         : sigmoid16(GOPT_CLAMP(_mm512_fmadd_ps(
                               GOPT_AT(peep, 2 * ld), cv, GOPT_GATE(2))));
    cv = _mm512_fmadd_ps(f, cv, _mm512_mul_ps(i, cand));
    const __m512 o = sigmoid16(
        GOPT_CLAMP(_mm512_fmadd_ps(GOPT_AT(peep, ld), cv, GOPT_GATE(1))));
    const __m512 hv = _mm512_mul_ps(o, tanh16(cv));
    _mm512_mask_storeu_ps(c + j, m, cv);
    _mm512_mask_storeu_ps(h + j, m, hv);
    _mm512_mask_storeu_ps(y + j, m, hv);
  }
#undef GOPT_GATE
#undef GOPT_AT
#undef GOPT_CLAMP
}

#else
void panelGemm(int64_t, int64_t, int64_t, const float *, const float *, float *,
               int64_t) {}
void lstmUnits16(int64_t n, int64_t ld, const float *xp, const float *bias,
                 const float *rp, const float *peep, float clip,
                 bool inputForget, float *gates, float *c, float *h, float *y) {
  lstmUnits(n, ld, xp, bias, rp, peep, clip, inputForget, gates, c, h, y);
}
#endif

/// The LSTM recurrence split by hidden units over the threads, in one
/// OpenMP region per direction: each slice multiplies the whole previous h
/// [B, H] by the four gate blocks of R for its units (packed once into
/// 16-column panels for panelGemm, or into oneDNN's layout for a matmul,
/// at creation when R is a constant) and applies the gate math to them, and the
/// threads meet at one barrier per step. Forking a team for each step's GEMM
/// and running the gates on one thread cost more than the GEMM itself at
/// batch 8.
class LstmSlices {
public:
  Status init(int64_t batch, int64_t hidden, int64_t directions, int threads,
              const float *constantR) {
    using dnnl::memory;
    batch_ = batch;
    hidden_ = hidden;
    panels_ = usePanels(batch, constantR != nullptr);
    avx512_ = hasAvx512();
    // Slices of whole 16-float vectors; the last one takes the rest.
    const int64_t per = (hidden + threads - 1) / threads;
    const int64_t step = std::max<int64_t>(16, (per + 15) / 16 * 16);
    for (int64_t begin = 0; begin < hidden; begin += step) {
      Slice s;
      s.begin = begin;
      s.end = std::min(hidden, begin + step);
      const int64_t cols = 4 * (s.end - s.begin);
      if (panels_) {
        s.panels = (cols + 15) / 16;
        s.outLd = 16 * s.panels;
        s.out.resize(batch * s.outLd);
        s.gates.resize(cols);
        // 16 floats of slack to start the panels on a cache line.
        s.panelStore.assign(directions,
                            std::vector<float>(s.panels * 16 * hidden + 16));
        slices_.push_back(std::move(s));
        continue;
      }
      s.outLd = cols;
      try {
        memory::desc src({batch, hidden}, memory::data_type::f32,
                         memory::format_tag::ab);
        memory::desc any({hidden, cols}, memory::data_type::f32,
                         memory::format_tag::any);
        memory::desc dst({batch, cols}, memory::data_type::f32,
                         memory::format_tag::ab);
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, any, dst),
                                        cpu::cpuEngine());
        s.matmul = dnnl::matmul(pd);
        s.stream = dnnl::stream(cpu::cpuEngine());
        s.out.resize(batch * cols);
        s.gates.resize(cols);
        s.srcMemory = memory(src, cpu::cpuEngine(), DNNL_MEMORY_NONE);
        s.dstMemory = memory(dst, cpu::cpuEngine(), s.out.data());
        // The gathered rows [cols, hidden] are the weights transposed.
        s.user = memory::desc({hidden, cols}, memory::data_type::f32,
                              memory::format_tag::ba);
        for (int64_t d = 0; d < directions; ++d)
          s.packed.emplace_back(pd.weights_desc(), cpu::cpuEngine());
      } catch (const dnnl::error &e) {
        return internalError("oneDNN recurrent matmul: ", e.what());
      }
      slices_.push_back(std::move(s));
    }
    if (constantR)
      for (int64_t d = 0; d < directions; ++d)
        for (Slice &s : slices_)
          GOPT_RETURN_IF_ERROR(pack(s, d, constantR + d * 4 * hidden * hidden));
    packedOnce_ = constantR != nullptr;
    return Status::success();
  }

  int64_t numSlices() const { return static_cast<int64_t>(slices_.size()); }

  /// Whether the recurrent GEMM runs as panelGemm, on CPUs with AVX-512:
  /// always for a constant R (packed once; at batch 1 the acoustic model's
  /// steps ran 1.15x faster than on sgemm's GEMV on the AMD EPYC), and
  /// from kPanelRows batch rows for an R packed on every run (below, the
  /// packing costs more than the GEMV). GOPT_LSTM_PANELS=0 or 1 overrides
  /// it, to compare.
  static bool usePanels(int64_t batch, bool constantR) {
    if (!hasAvx512())
      return false;
    if (const char *e = std::getenv("GOPT_LSTM_PANELS"))
      return e[0] == '1';
    return constantR || batch >= kPanelRows;
  }
  static constexpr int64_t kPanelRows = 4;
  static bool hasAvx512() {
#ifdef GOPT_HAVE_AVX512_LANES
    return avx512fSupported();
#else
    return false;
#endif
  }

  /// Runs direction `d` over `longest` steps. xproj [S*B, 4H] without
  /// biases, bias [4H] (both biases summed), peep [3H]; h and c hold the
  /// initial state and end with the final one; y [S, D, B, H].
  Status run(int64_t d, const float *r, const float *xproj, const float *bias,
             const float *peep, float clip, bool inputForget, bool reverse,
             const std::vector<int64_t> &lens, int64_t longest,
             int64_t directions, float *h, float *c, float *y) {
    const int64_t batch = batch_, hidden = hidden_, rows = 4 * hidden;
    const int64_t count = numSlices();
    // PyTorch's layers: no peepholes, clip or input_forget, and slices of
    // whole vectors (every slice but the last is; the last when hidden is).
    [[maybe_unused]] const bool plain =
        avx512_ && !inputForget && hidden % 16 == 0 &&
        clip == std::numeric_limits<float>::infinity() &&
        std::all_of(peep, peep + 3 * hidden, [](float v) { return v == 0; });
    hNext_.resize(batch * hidden);
    float *buffers[2] = {h, hNext_.data()};
    bool failed = false;
#pragma omp parallel num_threads(static_cast <int>(count))
    {
      const int tid = omp_get_thread_num(), team = omp_get_num_threads();
      auto multiply = [&](Slice &s, const float *src) {
        if (panels_) {
          panelGemm(batch, hidden, s.panels, src, panelsOf(s, d), s.out.data(),
                    s.outLd);
          return;
        }
        try {
          s.srcMemory.set_data_handle(const_cast<float *>(src));
          s.matmul.execute(s.stream, {{DNNL_ARG_SRC, s.srcMemory},
                                      {DNNL_ARG_WEIGHTS, s.packed[d]},
                                      {DNNL_ARG_DST, s.dstMemory}});
          s.stream.wait();
        } catch (const dnnl::error &) {
#pragma omp atomic write
          failed = true;
        }
      };
      if (!packedOnce_) {
        for (int64_t i = tid; i < count; i += team)
          if (!pack(slices_[i], d, r).ok()) {
#pragma omp atomic write
            failed = true;
          }
#pragma omp barrier
      }
      for (int64_t step = 0; step < longest; ++step) {
        const float *hPrev = buffers[step % 2];
        float *hOut = buffers[(step + 1) % 2];
        for (int64_t i = tid; i < count; i += team) {
          Slice &s = slices_[i];
          const int64_t n = s.end - s.begin;
          // The next step's input projections for these units, into L2
          // while the GEMM runs: 4 short runs per row, too short for the
          // hardware prefetcher, and the gate pass waited on them.
          for (int64_t b = 0; b < batch; ++b) {
            if (step + 1 >= lens[b])
              continue;
            const int64_t t = reverse ? lens[b] - 2 - step : step + 1;
            const float *row = xproj + (t * batch + b) * rows + s.begin;
            for (int64_t g = 0; g < 4; ++g)
              for (int64_t j = 0; j < n; j += 16)
                __builtin_prefetch(row + g * hidden + j, /*rw=*/0,
                                   /*locality=*/2);
          }
          multiply(s, hPrev);
          for (int64_t b = 0; b < batch; ++b) {
            const int64_t at = b * hidden + s.begin;
            if (step >= lens[b]) { // finished rows keep their state
              std::copy(hPrev + at, hPrev + at + n, hOut + at);
              continue;
            }
            const int64_t t = reverse ? lens[b] - 1 - step : step;
#ifdef GOPT_HAVE_AVX512_LANES
            if (plain) {
              lstmUnitsPlain16(
                  n, hidden, xproj + (t * batch + b) * rows + s.begin,
                  bias + s.begin, s.out.data() + b * s.outLd, c + at, hOut + at,
                  y + ((t * directions + d) * batch + b) * hidden + s.begin);
              continue;
            }
#endif
            (avx512_ ? lstmUnits16 : lstmUnits)(
                n, hidden, xproj + (t * batch + b) * rows + s.begin,
                bias + s.begin, s.out.data() + b * s.outLd, peep + s.begin,
                clip, inputForget, s.gates.data(), c + at, hOut + at,
                y + ((t * directions + d) * batch + b) * hidden + s.begin);
          }
        }
#pragma omp barrier
      }
    }
    if (failed)
      return internalError("oneDNN recurrent matmul failed");
    // The final state is in the buffer the last step wrote.
    if (longest % 2)
      std::copy(hNext_.begin(), hNext_.end(), h);
    return Status::success();
  }

private:
  struct Slice {
    int64_t begin = 0, end = 0; // hidden units
    // With panels: the gathered rows of R as 16-column panels [k][16] per
    // direction (panelGemm), zero past the last column.
    int64_t panels = 0, outLd = 0;
    std::vector<std::vector<float>> panelStore;
    dnnl::matmul matmul;
    dnnl::stream stream; // used by the slice's thread only
    dnnl::memory::desc user;
    dnnl::memory srcMemory, dstMemory;
    std::vector<dnnl::memory> packed; // per direction
    std::vector<float> out;   // [B, outLd], blocks i, o, f, c units apart
    std::vector<float> gates; // [4 * units]
  };

  // Gathers the slice's rows of each gate block of r [4H, H] and packs
  // them.
  Status pack(Slice &s, int64_t d, const float *r) {
    const int64_t hidden = hidden_, n = s.end - s.begin;
    std::vector<float> rows(4 * n * hidden);
    for (int64_t g = 0; g < 4; ++g)
      std::copy(r + (g * hidden + s.begin) * hidden,
                r + (g * hidden + s.end) * hidden,
                rows.data() + g * n * hidden);
    if (panels_) {
      float *to = panelsOf(s, d);
      std::fill(to, to + s.panels * 16 * hidden, 0.0f);
      for (int64_t col = 0; col < 4 * n; ++col)
        for (int64_t k = 0; k < hidden; ++k)
          to[((col / 16) * hidden + k) * 16 + col % 16] =
              rows[col * hidden + k];
      return Status::success();
    }
    try {
      dnnl::memory user(s.user, cpu::cpuEngine(), rows.data());
      dnnl::reorder(user, s.packed[d]).execute(s.stream, user, s.packed[d]);
      s.stream.wait();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN recurrent weight packing: ", e.what());
    }
    return Status::success();
  }

  // The slice's panels for direction d, 64-byte aligned.
  static float *panelsOf(Slice &s, int64_t d) {
    float *p = s.panelStore[d].data();
    return p + (16 - reinterpret_cast<uintptr_t>(p) / sizeof(float) % 16) % 16;
  }

  int64_t batch_ = 0, hidden_ = 0;
  bool packedOnce_ = false, panels_ = false, avx512_ = false;
  std::vector<Slice> slices_;
  std::vector<float> hNext_;
};

/// Every step's input projection x [S*B, I] times W^T at once, as a oneDNN
/// matmul whose constant W is packed once at creation and whose scratchpad
/// is the kernel's: sgemm packs W and allocates its buffers on every call
/// (page faults that were a tenth of an LSTM's run).
class PackedInputProjection {
public:
  Status init(int64_t rows, int64_t inputSize, int64_t gateRows,
              int64_t directions, const float *w) {
    using dnnl::memory;
    try {
      memory::desc src({rows, inputSize}, memory::data_type::f32,
                       memory::format_tag::ab);
      memory::desc any({inputSize, gateRows}, memory::data_type::f32,
                       memory::format_tag::any);
      memory::desc dst({rows, gateRows}, memory::data_type::f32,
                       memory::format_tag::ab);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, any, dst), attr,
                                      cpu::cpuEngine());
      matmul_ = dnnl::matmul(pd);
      stream_ = dnnl::stream(cpu::cpuEngine());
      src_ = memory(src, cpu::cpuEngine(), DNNL_MEMORY_NONE);
      dst_ = memory(dst, cpu::cpuEngine(), DNNL_MEMORY_NONE);
      scratchpad_ = memory(pd.scratchpad_desc(), cpu::cpuEngine());
      // W [4H, I] row-major is the [I, 4H] weights transposed.
      memory::desc user({inputSize, gateRows}, memory::data_type::f32,
                        memory::format_tag::ba);
      for (int64_t d = 0; d < directions; ++d) {
        memory userW(user, cpu::cpuEngine(),
                     const_cast<float *>(w + d * gateRows * inputSize));
        packed_.emplace_back(pd.weights_desc(), cpu::cpuEngine());
        dnnl::reorder(userW, packed_.back())
            .execute(stream_, userW, packed_.back());
      }
      stream_.wait();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN input projection: ", e.what());
    }
    return Status::success();
  }

  Status multiply(int64_t d, const float *x, float *out) {
    try {
      src_.set_data_handle(const_cast<float *>(x));
      dst_.set_data_handle(out);
      matmul_.execute(stream_, {{DNNL_ARG_SRC, src_},
                                {DNNL_ARG_WEIGHTS, packed_[d]},
                                {DNNL_ARG_DST, dst_},
                                {DNNL_ARG_SCRATCHPAD, scratchpad_}});
      stream_.wait();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN input projection: ", e.what());
    }
    return Status::success();
  }

private:
  dnnl::matmul matmul_;
  dnnl::stream stream_;
  dnnl::memory src_, dst_, scratchpad_;
  std::vector<dnnl::memory> packed_; // per direction
};

/// A unidirectional LSTM as oneDNN's lstm_forward (its brgemm kernels fuse
/// each step's GEMM with the gate math): for the layers PyTorch exports,
/// without per-row sequence lengths, clip, input_forget or peepholes, and
/// with constant W and R, on CPUs without AVX-512 (there the slices' panel
/// GEMM is faster; docs/architecture.md). W and R are reordered once into
/// its gate order (i, f, c, o; ONNX's is i, o, f, c); the biases are summed
/// per run (they may be computed).
class OneDnnLstm {
public:
  // Below this batch the GEMM loop was faster (one step's GEMM is too small
  // to share between threads well).
  static constexpr int64_t kMinBatch = 4;
  // Up to this batch the slices ran faster where they have the panel GEMM
  // (AVX-512): with their gate pass of independent gates, 1.03-1.08x
  // lstm_forward at 32 rows on two threads of the AMD EPYC; at 64 rows
  // lstm_forward was 1.04-1.07x faster, at 128 1.07-1.14x.
  static constexpr int64_t kMaxSliceBatch = 32;
  // Whether oneDNN runs this configuration (see the class comment).
  static bool covers(const KernelConfig &c, const std::string &direction,
                     float clip, bool inputForget) {
    // A rank-0 operand broadcasts one value: oneDNN's absent states and
    // peepholes are zeros.
    auto zeroScalar = [&](size_t i) {
      return c.inputShapes[i].empty() && c.constantInputs.size() > i &&
             c.constantInputs[i] &&
             *static_cast<const float *>(c.constantInputs[i]) == 0.0f;
    };
    // With AVX-512 the slices' panel GEMM was faster up to kMaxSliceBatch
    // rows (docs/architecture.md); GOPT_LSTM_ONEDNN=1 runs what oneDNN
    // covers as lstm_forward anyway, 0 never.
    const int64_t batch = c.inputShapes.empty() || c.inputShapes[0].size() < 2
                              ? 0
                              : c.inputShapes[0][1];
    const char *e = std::getenv("GOPT_LSTM_ONEDNN");
    if (e ? e[0] != '1'
          : batch <= kMaxSliceBatch &&
                LstmSlices::usePanels(batch, /*constantR=*/true))
      return false;
    return c.inputShapes.size() == 7 && c.inputShapes[0][1] >= kMinBatch &&
           (direction == "forward" || direction == "reverse") && clip <= 0 &&
           !inputForget && zeroScalar(6) &&
           (!c.inputShapes[4].empty() || zeroScalar(4)) &&
           (!c.inputShapes[5].empty() || zeroScalar(5)) &&
           c.constantInputs[1] && c.constantInputs[2] &&
           c.inputShapes[0][0] > 0;
  }

  Status init(const KernelConfig &c, int64_t hidden, bool reverse) {
    using dnnl::memory;
    using tag = memory::format_tag;
    const auto f32 = memory::data_type::f32;
    const Shape &x = c.inputShapes[0];
    const int64_t steps = x[0], batch = x[1], input = x[2];
    hidden_ = hidden;
    hasH0_ = !c.inputShapes[4].empty();
    hasC0_ = !c.inputShapes[5].empty();
    try {
      memory::desc src({steps, batch, input}, f32, tag::tnc);
      memory::desc dst({steps, batch, hidden}, f32, tag::tnc);
      memory::desc state({1, 1, batch, hidden}, f32, tag::ldnc);
      memory::desc weightsLayer({1, 1, input, 4, hidden}, f32, tag::any);
      memory::desc weightsIter({1, 1, hidden, 4, hidden}, f32, tag::any);
      memory::desc bias({1, 1, 4, hidden}, f32, tag::ldgo);
      dnnl::lstm_forward::desc desc(
          dnnl::prop_kind::forward_inference,
          reverse ? dnnl::rnn_direction::unidirectional_right2left
                  : dnnl::rnn_direction::unidirectional_left2right,
          src, hasH0_ ? state : memory::desc(), hasC0_ ? state : memory::desc(),
          weightsLayer, weightsIter, bias, dst, state, state);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::lstm_forward::primitive_desc pd(desc, attr, cpu::cpuEngine());
      primitive_ = dnnl::lstm_forward(pd);
      stream_ = dnnl::stream(cpu::cpuEngine());
      for (auto [arg, md] : {std::pair{DNNL_ARG_SRC_LAYER, src},
                             {DNNL_ARG_DST_LAYER, dst},
                             {DNNL_ARG_DST_ITER, state},
                             {DNNL_ARG_DST_ITER_C, state}})
        args_[arg] = memory(md, cpu::cpuEngine(), DNNL_MEMORY_NONE);
      if (hasH0_)
        args_[DNNL_ARG_SRC_ITER] =
            memory(state, cpu::cpuEngine(), DNNL_MEMORY_NONE);
      if (hasC0_)
        args_[DNNL_ARG_SRC_ITER_C] =
            memory(state, cpu::cpuEngine(), DNNL_MEMORY_NONE);
      bias_.resize(4 * hidden);
      args_[DNNL_ARG_BIAS] = memory(bias, cpu::cpuEngine(), bias_.data());
      args_[DNNL_ARG_SCRATCHPAD] =
          memory(pd.scratchpad_desc(), cpu::cpuEngine());
      if (pd.workspace_desc().get_size())
        args_[DNNL_ARG_WORKSPACE] =
            memory(pd.workspace_desc(), cpu::cpuEngine());
      // ONNX's [4H, K] row-major blocks i, o, f, c to ldigo [1, 1, K, 4,
      // H] in oneDNN's gate order, then into the primitive's layout.
      auto pack = [&](const float *w, int64_t k, const memory::desc &wanted,
                      int arg) {
        std::vector<float> ldigo(k * 4 * hidden);
        for (int64_t g = 0; g < 4; ++g)
          for (int64_t h = 0; h < hidden; ++h)
            for (int64_t i = 0; i < k; ++i)
              ldigo[(i * 4 + g) * hidden + h] =
                  w[(kOnnxGate[g] * hidden + h) * k + i];
        memory::desc user({1, 1, k, 4, hidden}, f32, tag::ldigo);
        memory userMemory(user, cpu::cpuEngine(), ldigo.data());
        args_[arg] = memory(wanted, cpu::cpuEngine());
        dnnl::reorder(userMemory, args_[arg])
            .execute(stream_, userMemory, args_[arg]);
        stream_.wait();
      };
      pack(static_cast<const float *>(c.constantInputs[1]), input,
           pd.weights_layer_desc(), DNNL_ARG_WEIGHTS_LAYER);
      pack(static_cast<const float *>(c.constantInputs[2]), hidden,
           pd.weights_iter_desc(), DNNL_ARG_WEIGHTS_ITER);
    } catch (const dnnl::error &e) {
      return internalError("oneDNN lstm: ", e.what());
    }
    return Status::success();
  }

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) {
    const int64_t hidden = hidden_;
    const Tensor &b = in[3];
    // Both biases summed; a rank-0 operand is one value broadcast.
    auto at = [&](int64_t i) {
      return b.rank() == 0 ? b.data<float>()[0] : b.data<float>()[i];
    };
    for (int64_t g = 0; g < 4; ++g)
      for (int64_t h = 0; h < hidden; ++h) {
        int64_t k = kOnnxGate[g] * hidden + h;
        bias_[g * hidden + h] = at(k) + at(4 * hidden + k);
      }
    try {
      auto bind = [&](int arg, const void *data) {
        args_[arg].set_data_handle(const_cast<void *>(data));
      };
      bind(DNNL_ARG_SRC_LAYER, in[0].data());
      if (hasH0_)
        bind(DNNL_ARG_SRC_ITER, in[4].data());
      if (hasC0_)
        bind(DNNL_ARG_SRC_ITER_C, in[5].data());
      // Y [S, 1, B, H] is [S, B, H] for one direction.
      bind(DNNL_ARG_DST_LAYER, out[0].data());
      bind(DNNL_ARG_DST_ITER, out[1].data());
      bind(DNNL_ARG_DST_ITER_C, out[2].data());
      primitive_.execute(stream_, args_);
      stream_.wait();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN lstm: ", e.what());
    }
    return Status::success();
  }

private:
  // oneDNN's gate g (i, f, c, o) is ONNX's block kOnnxGate[g] (i, o, f, c).
  static constexpr int64_t kOnnxGate[4] = {0, 2, 3, 1};
  int64_t hidden_ = 0;
  bool hasH0_ = false, hasC0_ = false;
  dnnl::lstm_forward primitive_;
  dnnl::stream stream_;
  std::unordered_map<int, dnnl::memory> args_;
  std::vector<float> bias_;
};

class RecurrentKernel : public Kernel {
public:
  static StatusOr<std::unique_ptr<Kernel>> create(const KernelConfig &c,
                                                  Cell cell) {
    const size_t floats = cell == Cell::kLstm ? 7 : 5;
    for (size_t i = 0; i < floats; ++i)
      if (c.inputTypes[i] != DType::kF32)
        return std::unique_ptr<Kernel>();
    auto k = std::unique_ptr<RecurrentKernel>(new RecurrentKernel());
    k->cell_ = cell;
    k->lensIndex_ = floats;
    OpAttrs attrs = c.attrs();
    k->hidden_ = attrs.getInt("hidden_size");
    k->direction_ = attrs.getString("direction");
    k->clip_ = attrs.getFloat("clip");
    if (cell == Cell::kLstm)
      k->inputForget_ = attrs.getBool("input_forget");
    if (cell == Cell::kGru)
      k->linearBeforeReset_ = attrs.getBool("linear_before_reset");
    // gru without linear_before_reset multiplies by two blocks of R apart.
    const int64_t batch = c.inputShapes[0][1];
    const int64_t gates = cell == Cell::kLstm ? 4 : cell == Cell::kGru ? 3 : 1;
    if (cell == Cell::kLstm &&
        OneDnnLstm::covers(c, k->direction_, k->clip_, k->inputForget_)) {
      k->oneDnnLstm_ = std::make_unique<OneDnnLstm>();
      GOPT_RETURN_IF_ERROR(
          k->oneDnnLstm_->init(c, k->hidden_, k->direction_ == "reverse"));
      return std::unique_ptr<Kernel>(std::move(k));
    }
    const int64_t steps = c.inputShapes[0][0];
    if (c.constantInputs.size() > 1 && c.constantInputs[1] &&
        steps * batch > 0) {
      k->inputProjection_ = std::make_unique<PackedInputProjection>();
      GOPT_RETURN_IF_ERROR(k->inputProjection_->init(
          steps * batch, c.inputShapes[0][2], gates * k->hidden_,
          k->direction_ == "bidirectional" ? 2 : 1,
          static_cast<const float *>(c.constantInputs[1])));
    }
    if (cell == Cell::kLstm) {
      k->lstm_ = std::make_unique<LstmSlices>();
      const float *constantR =
          c.constantInputs.size() > 2
              ? static_cast<const float *>(c.constantInputs[2])
              : nullptr;
      GOPT_RETURN_IF_ERROR(k->lstm_->init(
          batch, k->hidden_, k->direction_ == "bidirectional" ? 2 : 1,
          omp_get_max_threads(), constantR));
    } else if (batch >= PackedRecurrentGemm::kPackedRows &&
               (cell != Cell::kGru || k->linearBeforeReset_)) {
      k->packed_ = std::make_unique<PackedRecurrentGemm>();
      GOPT_RETURN_IF_ERROR(
          k->packed_->init(batch, gates * k->hidden_, k->hidden_));
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override;
  const char *implementation() const override {
    return oneDnnLstm_ ? "onednn" : "gemm";
  }

private:
  RecurrentKernel() = default;

  float clip(float v) const {
    return clip_ > 0 ? std::clamp(v, -clip_, clip_) : v;
  }
  Status runDirection(const std::vector<Tensor> &in, std::vector<Tensor> &out,
                      int64_t d, const std::vector<int64_t> &lens);

  Cell cell_ = Cell::kRnn;
  size_t lensIndex_ = 5;
  int64_t hidden_ = 0;
  std::string direction_;
  float clip_ = 0;
  bool inputForget_ = false;
  bool linearBeforeReset_ = false;
  // Per run: the input projections [S*B, G*H], the recurrent ones [B, G*H],
  // the state h and c [B, H], for gru r * h [B, H], and for lstm one row
  // of gates [4H] and the direction's peepholes i, o, f [3H].
  std::vector<float> xproj_, rproj_, h_, c_, resetH_, gates_, peepholes_;
  // gru's and rnn's recurrent GEMM for batches of kPackedRows or more.
  std::unique_ptr<PackedRecurrentGemm> packed_;
  // lstm's recurrence.
  std::unique_ptr<LstmSlices> lstm_;
  // The input projection when W is a constant.
  std::unique_ptr<PackedInputProjection> inputProjection_;
  // The whole lstm, where oneDNN covers it.
  std::unique_ptr<OneDnnLstm> oneDnnLstm_;
};

Status RecurrentKernel::run(const std::vector<Tensor> &in,
                            std::vector<Tensor> &out) {
  if (oneDnnLstm_)
    return oneDnnLstm_->run(in, out);
  const Tensor &x = in[0];
  const int64_t steps = x.dim(0), batch = x.dim(1);
  std::vector<int64_t> lens(batch, steps);
  if (in.size() > lensIndex_) {
    const Tensor &t = in[lensIndex_];
    for (int64_t b = 0; b < batch; ++b) {
      int64_t v = t.dtype() == DType::kI32 ? t.data<int32_t>()[b]
                                           : t.data<int64_t>()[b];
      if (v < 0 || v > steps)
        return invalidArgument("sequence_lens[", b, "] = ", v,
                               " is outside [0, ", steps, "]");
      lens[b] = v;
    }
  }
  float *y = out[0].data<float>();
  std::fill(y, y + out[0].numElements(), 0.0f);
  const int64_t directions = direction_ == "bidirectional" ? 2 : 1;
  for (int64_t d = 0; d < directions; ++d)
    if (Status s = runDirection(in, out, d, lens); !s.ok())
      return s;
  return Status::success();
}

Status RecurrentKernel::runDirection(const std::vector<Tensor> &in,
                                     std::vector<Tensor> &out, int64_t d,
                                     const std::vector<int64_t> &lens) {
  const Tensor &x = in[0];
  const int64_t steps = x.dim(0), batch = x.dim(1), inputSize = x.dim(2);
  const int64_t hidden = hidden_;
  const bool lstm = cell_ == Cell::kLstm, gru = cell_ == Cell::kGru;
  const int64_t gates = lstm ? 4 : gru ? 3 : 1, rows = gates * hidden;
  const int64_t directions = out[0].dim(1);
  const bool reverse = direction_ == "reverse" || d == 1;
  const float *w = in[1].data<float>() + d * rows * inputSize;
  const float *r = in[2].data<float>() + d * rows * hidden;
  // A rank-0 operand is one value broadcast (an absent ONNX input).
  auto at = [](const Tensor &t, int64_t i) {
    return t.rank() == 0 ? t.data<float>()[0] : t.data<float>()[i];
  };
  const Tensor &bias = in[3];
  const int64_t wb = d * 2 * rows, rb = wb + rows;

  xproj_.resize(steps * batch * rows);
  if (Status s =
          inputProjection_
              ? inputProjection_->multiply(d, x.data<float>(), xproj_.data())
              : gemmTransposedB(steps * batch, rows, inputSize, x.data<float>(),
                                inputSize, w, inputSize, 0.0f, xproj_.data(),
                                rows);
      !s.ok())
    return s;
  // Both biases go into the projection, except gru's recurrent candidate
  // bias with linear_before_reset, which the reset gate multiplies.
  std::vector<float> rowBias(rows);
  for (int64_t k = 0; k < rows; ++k) {
    bool keepRecurrent = gru && linearBeforeReset_ && k >= 2 * hidden;
    rowBias[k] = at(bias, wb + k) + (keepRecurrent ? 0.0f : at(bias, rb + k));
  }
  // lstm adds them in its gate pass.
  for (int64_t i = 0; i < steps * batch && !lstm_; ++i) {
    float *row = xproj_.data() + i * rows;
    for (int64_t k = 0; k < rows; ++k)
      row[k] += rowBias[k];
  }

  h_.resize(batch * hidden);
  c_.resize(batch * hidden);
  rproj_.resize(batch * rows);
  resetH_.resize(batch * hidden);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < hidden; ++j) {
      int64_t s = (d * batch + b) * hidden + j;
      h_[b * hidden + j] = at(in[4], s);
      c_[b * hidden + j] = lstm ? at(in[5], s) : 0.0f;
    }
  if (lstm) {
    gates_.resize(4 * hidden);
    peepholes_.resize(3 * hidden);
    for (int64_t k = 0; k < 3 * hidden; ++k)
      peepholes_[k] = at(in[6], d * 3 * hidden + k);
  }
  const int64_t longest = *std::max_element(lens.begin(), lens.end());
  float *y = out[0].data<float>();
  if (lstm_) {
    GOPT_RETURN_IF_ERROR(
        lstm_->run(d, r, xproj_.data(), rowBias.data(), peepholes_.data(),
                   clip_ > 0 ? clip_ : std::numeric_limits<float>::infinity(),
                   inputForget_, reverse, lens, longest, directions, h_.data(),
                   c_.data(), y));
    std::copy(h_.begin(), h_.end(), out[1].data<float>() + d * batch * hidden);
    std::copy(c_.begin(), c_.end(), out[2].data<float>() + d * batch * hidden);
    return Status::success();
  }
  // gru without linear_before_reset multiplies (r * h) by R_h apart.
  const int64_t recurrentRows = gru && !linearBeforeReset_ ? 2 * hidden : rows;
  if (packed_)
    GOPT_RETURN_IF_ERROR(packed_->pack(r));
  for (int64_t step = 0; step < longest; ++step) {
    if (Status s = packed_ ? packed_->multiply(h_.data(), rproj_.data())
                           : gemmTransposedB(batch, recurrentRows, hidden,
                                             h_.data(), hidden, r, hidden, 0.0f,
                                             rproj_.data(), rows);
        !s.ok())
      return s;
    if (gru && !linearBeforeReset_) {
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < hidden; ++j) {
          int64_t t = reverse ? std::max<int64_t>(lens[b] - 1 - step, 0) : step;
          const float *xp = xproj_.data() + (t * batch + b) * rows;
          float reset =
              fastSigmoid(clip(xp[hidden + j] + rproj_[b * rows + hidden + j]));
          resetH_[b * hidden + j] = reset * h_[b * hidden + j];
        }
      if (Status s = gemmTransposedB(batch, hidden, hidden, resetH_.data(),
                                     hidden, r + 2 * hidden * hidden, hidden,
                                     0.0f, rproj_.data() + 2 * hidden, rows);
          !s.ok())
        return s;
    }
    for (int64_t b = 0; b < batch; ++b) {
      if (step >= lens[b])
        continue;
      const int64_t t = reverse ? lens[b] - 1 - step : step;
      const float *xp = xproj_.data() + (t * batch + b) * rows;
      const float *rp = rproj_.data() + b * rows;
      float *h = h_.data() + b * hidden, *c = c_.data() + b * hidden;
      if (lstm) {
        // ONNX's blocks i, o, f, c; peepholes i, o, f. Each gate is one
        // pass over the hidden units, so every loop vectorizes.
        float *gi = gates_.data(), *go = gi + hidden, *gf = go + hidden,
              *gc = gf + hidden;
        const float *pi = peepholes_.data(), *po = pi + hidden,
                    *pf = po + hidden;
        for (int64_t j = 0; j < hidden; ++j) {
          gi[j] = xp[j] + rp[j] + pi[j] * c[j];
          gf[j] = xp[2 * hidden + j] + rp[2 * hidden + j] + pf[j] * c[j];
          gc[j] = xp[3 * hidden + j] + rp[3 * hidden + j];
        }
        if (clip_ > 0)
          for (float *g : {gi, gf, gc})
            applyInPlace(g, hidden, [&](float v) { return clip(v); });
        applyInPlace(gi, hidden, [](float v) { return fastSigmoid(v); });
        applyInPlace(gc, hidden, [](float v) { return fastTanh(v); });
        if (inputForget_)
          for (int64_t j = 0; j < hidden; ++j)
            gf[j] = 1.0f - gi[j];
        else
          applyInPlace(gf, hidden, [](float v) { return fastSigmoid(v); });
        for (int64_t j = 0; j < hidden; ++j) {
          c[j] = gf[j] * c[j] + gi[j] * gc[j];
          go[j] = xp[hidden + j] + rp[hidden + j] + po[j] * c[j];
          h[j] = c[j];
        }
        if (clip_ > 0)
          applyInPlace(go, hidden, [&](float v) { return clip(v); });
        applyInPlace(go, hidden, [](float v) { return fastSigmoid(v); });
        applyInPlace(h, hidden, [](float v) { return fastTanh(v); });
        for (int64_t j = 0; j < hidden; ++j)
          h[j] *= go[j];
      } else if (gru) {
        for (int64_t j = 0; j < hidden; ++j) {
          float z = fastSigmoid(clip(xp[j] + rp[j]));
          float recurrent = rp[2 * hidden + j];
          if (linearBeforeReset_) {
            float reset = fastSigmoid(clip(xp[hidden + j] + rp[hidden + j]));
            recurrent = reset * (recurrent + at(bias, rb + 2 * hidden + j));
          }
          float n = fastTanh(clip(xp[2 * hidden + j] + recurrent));
          h[j] = (1.0f - z) * n + z * h[j];
        }
      } else {
        for (int64_t j = 0; j < hidden; ++j)
          h[j] = fastTanh(clip(xp[j] + rp[j]));
      }
      std::copy(h, h + hidden, y + ((t * directions + d) * batch + b) * hidden);
    }
  }
  float *yh = out[1].data<float>() + d * batch * hidden;
  std::copy(h_.begin(), h_.end(), yh);
  if (lstm)
    std::copy(c_.begin(), c_.end(), out[2].data<float>() + d * batch * hidden);
  return Status::success();
}

} // namespace

void registerRnnFastKernels(KernelRegistry &registry) {
  registry.registerKernel("lstm", "cpu", [](const KernelConfig &c) {
    return RecurrentKernel::create(c, Cell::kLstm);
  });
  registry.registerKernel("gru", "cpu", [](const KernelConfig &c) {
    return RecurrentKernel::create(c, Cell::kGru);
  });
  registry.registerKernel("rnn", "cpu", [](const KernelConfig &c) {
    return RecurrentKernel::create(c, Cell::kRnn);
  });
}

} // namespace gopt::runtime
