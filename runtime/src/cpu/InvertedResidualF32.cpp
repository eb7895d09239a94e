//===- InvertedResidualF32.cpp - Fused MobileNet block, NHWC f32 ----------===//
//
// Per thread, a band of output rows; per output row: the source rows its
// depthwise window needs are expanded (a 1x1 GEMM on AVX-512, weights
// packed once at creation) into a ring of k padded rows, the depthwise row
// is computed from them into one more row buffer, and the project GEMM
// reads that and writes the result row (adding the residual already in the
// destination). The expanded tensor never leaves the thread's L1/L2.
//
//===----------------------------------------------------------------------===//
#include "InvertedResidualF32.h"

#include "EnvSwitch.h"
#include "OneDnn.h"
#include "gopt/runtime/OpSchema.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#if defined(__x86_64__)
// GCC 12 flags _mm512_max_ps/_mm512_min_ps's _mm512_undefined_ps
// pass-through operand in the unrolled kernels (a false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define GOPT_IR_TARGET __attribute__((target("avx512f")))
#else
#define GOPT_IR_TARGET
#endif

namespace gopt::runtime::cpu {

bool invertedResidualF32Enabled() {
#if defined(__x86_64__)
  static const bool enabled = envSwitchOn("GOPT_INVERTED_RESIDUAL_F32") &&
                              __builtin_cpu_supports("avx512f");
  return enabled;
#else
  return false;
#endif
}

namespace {

int64_t roundUp16(int64_t v) { return (v + 15) / 16 * 16; }

#if defined(__x86_64__)
// What a GEMM's result row gets after the products: + bias, + the
// destination's previous contents (sum), clamp to [lo, hi]; the last
// 16-column vector stored under `tail` (columns past the matrix's width).
struct Epilogue {
  const float *bias; // padded to the packed width
  bool sum;
  float lo, hi;
  __mmask16 tail;
};

// C[MR][NV * 16] (row stride ldc) = A[MR][K] (row stride lda) x B[K][...]
// (row stride ldb, columns from b), then the epilogue; `last`: whether
// these columns include the matrix's last vector.
template <int MR, int NV>
GOPT_IR_TARGET void microKernel(const float *a, int64_t lda, const float *b,
                                int64_t ldb, int64_t kDim, float *c,
                                int64_t ldc, const Epilogue &e, bool last) {
  __m512 acc[MR][NV];
  for (int v = 0; v < NV; ++v) {
    __m512 bias =
        e.bias ? _mm512_loadu_ps(e.bias + 16 * v) : _mm512_setzero_ps();
    for (int m = 0; m < MR; ++m)
      acc[m][v] = bias;
  }
  for (int64_t k = 0; k < kDim; ++k) {
    __m512 bv[NV];
    for (int v = 0; v < NV; ++v)
      bv[v] = _mm512_loadu_ps(b + k * ldb + 16 * v);
    for (int m = 0; m < MR; ++m) {
      __m512 av = _mm512_set1_ps(a[m * lda + k]);
      for (int v = 0; v < NV; ++v)
        acc[m][v] = _mm512_fmadd_ps(av, bv[v], acc[m][v]);
    }
  }
  const __m512 lo = _mm512_set1_ps(e.lo), hi = _mm512_set1_ps(e.hi);
  for (int m = 0; m < MR; ++m)
    for (int v = 0; v < NV; ++v) {
      float *out = c + m * ldc + 16 * v;
      __mmask16 mask = last && v == NV - 1 ? e.tail : __mmask16(0xFFFF);
      __m512 x = acc[m][v];
      if (e.sum)
        x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask, out));
      x = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
      _mm512_mask_storeu_ps(out, mask, x);
    }
}

using MicroFn = void (*)(const float *, int64_t, const float *, int64_t,
                         int64_t, float *, int64_t, const Epilogue &, bool);

template <int NV, int... Ms>
constexpr std::array<MicroFn, sizeof...(Ms)>
microTable(std::integer_sequence<int, Ms...>) {
  return {&microKernel<Ms + 1, NV>...};
}

// The most rows per call for NV vectors: 24-28 accumulators.
constexpr int maxRows(int nv) {
  return nv == 1 ? 12 : nv == 2 ? 12 : nv == 3 ? 8 : 6;
}

GOPT_IR_TARGET void microDispatch(int mr, int nv, const float *a, int64_t lda,
                                  const float *b, int64_t ldb, int64_t kDim,
                                  float *c, int64_t ldc, const Epilogue &e,
                                  bool last) {
  static constexpr auto t1 =
      microTable<1>(std::make_integer_sequence<int, 12>());
  static constexpr auto t2 =
      microTable<2>(std::make_integer_sequence<int, 12>());
  static constexpr auto t3 =
      microTable<3>(std::make_integer_sequence<int, 8>());
  static constexpr auto t4 =
      microTable<4>(std::make_integer_sequence<int, 6>());
  const MicroFn fn = nv == 1   ? t1[mr - 1]
                     : nv == 2 ? t2[mr - 1]
                     : nv == 3 ? t3[mr - 1]
                               : t4[mr - 1];
  fn(a, lda, b, ldb, kDim, c, ldc, e, last);
}

// C[m][n] = A[m][k] x B[k][np] (np a multiple of 16, n <= np valid
// columns), then the epilogue.
GOPT_IR_TARGET void gemm(const float *a, int64_t lda, int64_t m, const float *b,
                         int64_t np, int64_t kDim, float *c, int64_t ldc,
                         const Epilogue &e) {
  const int64_t vectors = np / 16;
  for (int64_t v0 = 0; v0 < vectors;) {
    // Column panels of 4 vectors; the remainder as one panel of 1-3.
    int nv = static_cast<int>(std::min<int64_t>(4, vectors - v0));
    if (vectors - v0 == 5)
      nv = 3; // 3 + 2 rather than 4 + 1
    const bool last = v0 + nv == vectors;
    Epilogue pe = e;
    if (pe.bias)
      pe.bias += 16 * v0;
    const int rows = maxRows(nv);
    for (int64_t m0 = 0; m0 < m; m0 += rows) {
      int mr = static_cast<int>(std::min<int64_t>(rows, m - m0));
      microDispatch(mr, nv, a + m0 * lda, lda, b + 16 * v0, np, kDim,
                    c + m0 * ldc + 16 * v0, ldc, pe, last);
    }
    v0 += nv;
  }
}

// One depthwise output row: out[ox][c] = clamp(bias[c] + sum over the
// window of w[ky][kx][c] * rows[ky][(ox * stride + kx) * hp + c]), 16
// channels x up to 8 columns at a time.
template <int OB>
GOPT_IR_TARGET inline void dwColumns(const float *const *rows, int k,
                                     int64_t stride, int64_t hp, const float *w,
                                     __m512 bias, __m512 lo, __m512 hi,
                                     int64_t ox, float *out) {
  __m512 acc[OB];
  for (int j = 0; j < OB; ++j)
    acc[j] = bias;
  for (int ky = 0; ky < k; ++ky)
    for (int kx = 0; kx < k; ++kx) {
      __m512 wv = _mm512_loadu_ps(w + (ky * k + kx) * hp);
      const float *r = rows[ky] + ((ox * stride) + kx) * hp;
      for (int j = 0; j < OB; ++j)
        acc[j] =
            _mm512_fmadd_ps(_mm512_loadu_ps(r + j * stride * hp), wv, acc[j]);
    }
  for (int j = 0; j < OB; ++j)
    _mm512_storeu_ps(out + (ox + j) * hp,
                     _mm512_min_ps(_mm512_max_ps(acc[j], lo), hi));
}

GOPT_IR_TARGET void dwRow(const float *const *rows, int k, int64_t stride,
                          int64_t ow, int64_t hp, const float *w,
                          const float *b, float lo, float hi, float *out) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (int64_t c = 0; c < hp; c += 16) {
    const float *rc[8];
    for (int ky = 0; ky < k; ++ky)
      rc[ky] = rows[ky] + c;
    const __m512 bias = _mm512_loadu_ps(b + c);
    int64_t ox = 0;
    for (; ox + 8 <= ow; ox += 8)
      dwColumns<8>(rc, k, stride, hp, w + c, bias, vlo, vhi, ox, out + c);
    for (; ox + 4 <= ow; ox += 4)
      dwColumns<4>(rc, k, stride, hp, w + c, bias, vlo, vhi, ox, out + c);
    for (; ox < ow; ++ox)
      dwColumns<1>(rc, k, stride, hp, w + c, bias, vlo, vhi, ox, out + c);
  }
}
#endif

} // namespace

std::unique_ptr<InvertedResidualF32>
InvertedResidualF32::create(const InvertedResidualShape &s,
                            const InvertedResidualStage &expand,
                            const InvertedResidualStage &depthwise,
                            const InvertedResidualStage &project, int threads) {
  if (!invertedResidualF32Enabled())
    return nullptr;
  if (s.h <= 0 || s.w <= 0 || s.cin <= 0 || s.hidden <= 0 || s.cout <= 0 ||
      (!s.expand && s.hidden != s.cin) || s.k < 1 || s.k > 7 || s.stride < 1 ||
      s.stride > s.k || s.padTop < 0 || s.padLeft < 0 || s.padTop >= s.k ||
      s.padLeft >= s.k || s.oh <= 0 || s.ow <= 0 ||
      (s.oh - 1) * s.stride - s.padTop + s.k - 1 > s.h + s.k ||
      (s.ow - 1) * s.stride - s.padLeft + s.k - 1 > s.w + s.k)
    return nullptr;
  const int64_t taps = s.k * s.k;
  if ((s.expand &&
       static_cast<int64_t>(expand.weights.size()) != s.cin * s.hidden) ||
      static_cast<int64_t>(depthwise.weights.size()) != taps * s.hidden ||
      static_cast<int64_t>(project.weights.size()) != s.hidden * s.cout)
    return nullptr;
  auto k = std::unique_ptr<InvertedResidualF32>(new InvertedResidualF32());
  k->s_ = s;
  const int64_t hp = k->hp_ = roundUp16(s.hidden);
  const int64_t cp = k->cp_ = roundUp16(s.cout);
  // Padded columns: padLeft zeros before the row, zeros after it up to the
  // last column the window reads.
  const int64_t right =
      std::max<int64_t>(0, (s.ow - 1) * s.stride - s.padLeft + s.k - s.w);
  k->bufW_ = s.padLeft + s.w + right;
  auto padBias = [](const std::vector<float> &b, int64_t n, int64_t np) {
    std::vector<float> out(np, 0.0f);
    if (!b.empty())
      std::copy(b.begin(), b.begin() + n, out.begin());
    return out;
  };
  if (s.expand) {
    k->we_.assign(s.cin * hp, 0.0f);
    for (int64_t i = 0; i < s.cin; ++i)
      for (int64_t j = 0; j < s.hidden; ++j)
        k->we_[i * hp + j] = expand.weights[i * s.hidden + j];
    k->be_ = padBias(expand.bias, s.hidden, hp);
    k->elo_ = expand.lo;
    k->ehi_ = expand.hi;
  }
  k->wd_.assign(taps * hp, 0.0f);
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t j = 0; j < s.hidden; ++j)
      k->wd_[t * hp + j] = depthwise.weights[t * s.hidden + j];
  k->bd_ = padBias(depthwise.bias, s.hidden, hp);
  k->dlo_ = depthwise.lo;
  k->dhi_ = depthwise.hi;
  // Padded hidden channels (clamp(0) may not be 0) meet zero weights.
  k->wp_.assign(hp * cp, 0.0f);
  for (int64_t i = 0; i < s.hidden; ++i)
    for (int64_t j = 0; j < s.cout; ++j)
      k->wp_[i * cp + j] = project.weights[i * s.cout + j];
  k->bp_ = padBias(project.bias, s.cout, cp);
  k->plo_ = project.lo;
  k->phi_ = project.hi;
  k->threads_ = std::max(1, threads);
  // Per thread: a ring of k expanded rows, k - 1 halo rows (in place), the
  // depthwise row.
  k->slots_ = s.k + (s.k - 1);
  k->wsFloats_ = (k->slots_ * k->bufW_ + s.ow) * hp + 16;
  k->ws_.assign(k->wsFloats_ * k->threads_ + k->bufW_ * hp, 0.0f);
  return k;
}

size_t InvertedResidualF32::workspaceBytes() const {
  return ws_.size() * sizeof(float);
}

#if defined(__x86_64__)
GOPT_IR_TARGET void InvertedResidualF32::expandRow(const float *src, int64_t iy,
                                                   float *out) const {
  // `out`: a padded row of bufW_ x hp; its pad columns stay zero.
  float *row = out + s_.padLeft * hp_;
  const float *in = src + iy * s_.w * s_.cin;
  if (!s_.expand) {
    for (int64_t x = 0; x < s_.w; ++x) {
      std::memcpy(row + x * hp_, in + x * s_.cin, s_.cin * sizeof(float));
      std::fill(row + x * hp_ + s_.cin, row + (x + 1) * hp_, 0.0f);
    }
    return;
  }
  Epilogue e{be_.data(), false, elo_, ehi_, __mmask16(0xFFFF)};
  gemm(in, s_.cin, s_.w, we_.data(), hp_, s_.cin, row, hp_, e);
}

GOPT_IR_TARGET void InvertedResidualF32::runRows(const float *src, float *dst,
                                                 int64_t r0, int64_t r1,
                                                 float *ws, bool inPlace,
                                                 int /*thread*/) const {
  const int64_t rowFloats = bufW_ * hp_;
  const int64_t k = s_.k;
  const float *zeros = ws_.data() + wsFloats_ * threads_;
  float *dwOut = ws + slots_ * rowFloats;
  // Ring slots 0..k-1 hold source rows iy % k; slots k.. hold the halo
  // rows other threads overwrite in place (expanded before the barrier).
  int64_t held[16];
  for (int64_t i = 0; i < slots_; ++i)
    held[i] = -1;
  const int64_t first = r0 * s_.stride - s_.padTop;
  const int64_t last = (r1 - 1) * s_.stride - s_.padTop + k - 1;
  auto haloSlot = [&](int64_t iy) -> int64_t {
    if (!inPlace || (iy >= r0 && iy < r1))
      return -1;
    return k + (iy < r0 ? iy - first : (r0 - first) + (iy - r1));
  };
  if (inPlace && r0 < r1) {
    for (int64_t iy = std::max<int64_t>(first, 0);
         iy <= std::min(last, s_.h - 1); ++iy) {
      int64_t slot = haloSlot(iy);
      if (slot >= 0) {
        expandRow(src, iy, ws + slot * rowFloats);
        held[slot] = iy;
      }
    }
  }
  if (inPlace) {
#pragma omp barrier
  }
  const float *rows[8];
  const Epilogue pe{bp_.data(), s_.sum, plo_, phi_,
                    __mmask16((1u << (s_.cout % 16 ? s_.cout % 16 : 16)) - 1)};
  for (int64_t oy = r0; oy < r1; ++oy) {
    for (int64_t ky = 0; ky < k; ++ky) {
      const int64_t iy = oy * s_.stride - s_.padTop + ky;
      if (iy < 0 || iy >= s_.h) {
        rows[ky] = zeros;
        continue;
      }
      int64_t slot = haloSlot(iy);
      if (slot < 0)
        slot = iy % k;
      if (held[slot] != iy) {
        expandRow(src, iy, ws + slot * rowFloats);
        held[slot] = iy;
      }
      rows[ky] = ws + slot * rowFloats;
    }
    dwRow(rows, static_cast<int>(k), s_.stride, s_.ow, hp_, wd_.data(),
          bd_.data(), dlo_, dhi_, dwOut);
    gemm(dwOut, hp_, s_.ow, wp_.data(), cp_, hp_, dst + oy * s_.ow * s_.cout,
         s_.cout, pe);
  }
}
#endif

void InvertedResidualF32::run(const float *src, float *dst) const {
#if defined(__x86_64__)
  bool inPlace = src == dst;
  // In place, output row r overwrites source row r, which the halo logic
  // of runRows expects; any other aliasing reads a copy of the source.
  std::vector<float> copy;
  if (inPlace &&
      (s_.stride != 1 || s_.oh != s_.h || s_.ow != s_.w || s_.cin != s_.cout)) {
    copy.assign(src, src + s_.h * s_.w * s_.cin);
    src = copy.data();
    inPlace = false;
  }
  const int64_t rows = s_.oh;
  const int threads = static_cast<int>(std::min<int64_t>(threads_, rows));
  if (threads <= 1) {
    runRows(src, dst, 0, rows, const_cast<float *>(ws_.data()), false, 0);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t r0 = rows * t / nt, r1 = rows * (t + 1) / nt;
    runRows(src, dst, r0, r1, const_cast<float *>(ws_.data()) + t * wsFloats_,
            inPlace, t);
  }
#else
  (void)src;
  (void)dst;
#endif
}

//===----------------------------------------------------------------------===//
// The chain's stages as the kernel's parameters
//===----------------------------------------------------------------------===//

namespace {

using dnnl::memory;

// A conv2d's geometry as the block sees it (NCHW data at batch 1).
struct ConvShape {
  int64_t cin, cout, h, w, kh, kw, groups, stride, padTop, padLeft, oh, ow;
  bool oihw;
};

std::optional<ConvShape> convShape(const KernelConfig &c) {
  if (c.inputShapes.size() < 2 || c.inputShapes.size() > 3 ||
      c.outputShapes.size() != 1 || c.inputTypes[0] != DType::kF32 ||
      c.inputTypes[1] != DType::kF32 || !c.constantInputs[1] ||
      (c.inputShapes.size() == 3 &&
       (c.inputTypes[2] != DType::kF32 || !c.constantInputs[2])))
    return std::nullopt;
  OpAttrs attrs = c.attrs();
  if (attrs.getString("data_format") != "NCHW")
    return std::nullopt;
  const Shape &x = c.inputShapes[0], &f = c.inputShapes[1],
              &y = c.outputShapes[0];
  if (x.size() != 4 || f.size() != 4 || y.size() != 4 || x[0] != 1 || y[0] != 1)
    return std::nullopt;
  ConvShape s;
  s.oihw = attrs.getString("filter_format") == "OIHW";
  s.cin = x[1];
  s.h = x[2];
  s.w = x[3];
  s.cout = y[1];
  s.oh = y[2];
  s.ow = y[3];
  s.kh = s.oihw ? f[2] : f[0];
  s.kw = s.oihw ? f[3] : f[1];
  s.groups = attrs.getInt("groups");
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> dilations = attrs.getWindowInts("dilations");
  if (strides.size() != 2 || strides[0] != strides[1] ||
      dilations.size() != 2 || dilations[0] != 1 || dilations[1] != 1 ||
      s.kh != s.kw)
    return std::nullopt;
  s.stride = strides[0];
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  if (pads.size() != 4)
    return std::nullopt;
  StatusOr<WindowDim> wh = computeWindowDim(s.h, s.kh, s.stride, 1, padding,
                                            pads[0], pads[1], false);
  StatusOr<WindowDim> ww = computeWindowDim(s.w, s.kw, s.stride, 1, padding,
                                            pads[2], pads[3], false);
  if (!wh.ok() || !ww.ok() || wh->outSize != s.oh || ww->outSize != s.ow)
    return std::nullopt;
  s.padTop = wh->padBefore;
  s.padLeft = ww->padBefore;
  return s;
}

// The stage's clamp, where its post-ops are one (sum allowed on the last).
bool stageClamp(const ConvPostOps &post, InvertedResidualStage &st) {
  if (!post.tail.empty())
    return false;
  if (post.activation == "none")
    return true;
  st.lo = 0;
  if (post.activation == "relu")
    return true;
  if (post.activation == "relu6") {
    st.hi = 6;
    return true;
  }
  if (post.activation == "clip") {
    st.lo = post.clipMin;
    st.hi = post.clipMax;
    return true;
  }
  return false;
}

// A 1x1 stride-1 dense convolution's weights as [cin][cout].
std::vector<float> pointwiseWeights(const KernelConfig &c, const ConvShape &s) {
  const auto *w = static_cast<const float *>(c.constantInputs[1]);
  std::vector<float> out(s.cin * s.cout);
  for (int64_t i = 0; i < s.cin; ++i)
    for (int64_t o = 0; o < s.cout; ++o)
      out[i * s.cout + o] = s.oihw ? w[o * s.cin + i] : w[i * s.cout + o];
  return out;
}

std::vector<float> biasOf(const KernelConfig &c, int64_t n) {
  if (c.inputShapes.size() < 3)
    return {};
  const auto *b = static_cast<const float *>(c.constantInputs[2]);
  return std::vector<float>(b, b + n);
}

class InvertedResidualKernel : public LayoutKernel {
public:
  explicit InvertedResidualKernel(std::unique_ptr<InvertedResidualF32> k)
      : k_(std::move(k)) {
    const InvertedResidualShape &s = k_->shape();
    src_ = memory::desc({1, s.cin, s.h, s.w}, memory::data_type::f32,
                        memory::format_tag::nhwc);
    dst_ = memory::desc({1, s.cout, s.oh, s.ow}, memory::data_type::f32,
                        memory::format_tag::nhwc);
  }
  memory::desc inputDesc(int i) const override {
    return i == 0 ? src_ : memory::desc();
  }
  memory::desc outputDesc() const override { return dst_; }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    k_->run(inputs[0].data<float>(), outputs[0].data<float>());
    return Status::success();
  }
  const char *implementation() const override { return "gopt-ir-f32"; }
  size_t workspaceBytes() const override { return k_->workspaceBytes(); }

private:
  std::unique_ptr<InvertedResidualF32> k_;
  memory::desc src_, dst_;
};

} // namespace

StatusOr<std::unique_ptr<LayoutKernel>>
createInvertedResidualF32(const std::vector<ConvChainStage> &stages) {
  auto none = [] { return std::unique_ptr<LayoutKernel>(); };
  if (!invertedResidualF32Enabled() || stages.size() < 2 || stages.size() > 3)
    return none();
  std::vector<ConvShape> shapes;
  for (size_t i = 0; i < stages.size(); ++i) {
    if (stages[i].int8 || (i + 1 < stages.size() && stages[i].post.sum))
      return none();
    std::optional<ConvShape> s = convShape(stages[i].config);
    if (!s)
      return none();
    shapes.push_back(*s);
  }
  const bool expand = stages.size() == 3;
  const ConvShape &d = shapes[expand ? 1 : 0];
  const ConvShape &p = shapes.back();
  auto pointwise = [](const ConvShape &s) {
    return s.kh == 1 && s.groups == 1 && s.stride == 1 && s.padTop == 0 &&
           s.padLeft == 0 && s.oh == s.h && s.ow == s.w;
  };
  if (!pointwise(p) || d.groups != d.cin || d.cout != d.cin ||
      p.cin != d.cout || p.h != d.oh || p.w != d.ow || (d.kh != 3 && d.kh != 5))
    return none();
  if (expand && (!pointwise(shapes[0]) || shapes[0].cout != d.cin ||
                 shapes[0].h != d.h || shapes[0].w != d.w))
    return none();
  InvertedResidualShape s;
  s.h = d.h;
  s.w = d.w;
  s.cin = expand ? shapes[0].cin : d.cin;
  s.hidden = d.cin;
  s.cout = p.cout;
  s.expand = expand;
  s.k = d.kh;
  s.stride = d.stride;
  s.padTop = d.padTop;
  s.padLeft = d.padLeft;
  s.oh = d.oh;
  s.ow = d.ow;
  s.sum = stages.back().post.sum;
  InvertedResidualStage e, dw, pr;
  size_t at = 0;
  if (expand) {
    if (!stageClamp(stages[0].post, e))
      return none();
    e.weights = pointwiseWeights(stages[0].config, shapes[0]);
    e.bias = biasOf(stages[0].config, s.hidden);
    at = 1;
  }
  if (!stageClamp(stages[at].post, dw))
    return none();
  {
    const auto *w =
        static_cast<const float *>(stages[at].config.constantInputs[1]);
    const int64_t taps = s.k * s.k;
    dw.weights.resize(taps * s.hidden);
    // GOIHW ([C, 1, k, k]) or HWIO ([k, k, 1, C]) to [k][k][C].
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t j = 0; j < s.hidden; ++j)
        dw.weights[t * s.hidden + j] =
            d.oihw ? w[j * taps + t] : w[t * s.hidden + j];
    dw.bias = biasOf(stages[at].config, s.hidden);
  }
  {
    ConvPostOps post = stages.back().post;
    post.sum = false;
    if (!stageClamp(post, pr))
      return none();
    pr.weights = pointwiseWeights(stages.back().config, p);
    pr.bias = biasOf(stages.back().config, s.cout);
  }
  std::unique_ptr<InvertedResidualF32> k =
      InvertedResidualF32::create(s, e, dw, pr, omp_get_max_threads());
  if (!k)
    return none();
  return std::unique_ptr<LayoutKernel>(
      std::make_unique<InvertedResidualKernel>(std::move(k)));
}

} // namespace gopt::runtime::cpu
