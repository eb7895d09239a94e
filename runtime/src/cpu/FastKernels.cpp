//===- FastKernels.cpp - Vectorized, multithreaded CPU kernels ------------===//
#include "FastKernels.h"
#include "../collectives/CommunicationQueue.h"
#include "Avx512Lanes.h"
#include "ElementLoops.h"
#include "EnvSwitch.h"
#include "ParallelRange.h"
#include "Reference.h"
#include "gopt/runtime/OpAttrs.h"
#include "gopt/runtime/OpSchema.h"
#include "gopt/runtime/UnaryMath.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace gopt::runtime::cpu {
namespace {

enum class Unary { kRelu, kRelu6, kClip };
enum class Binary { kAdd, kSub, kMul, kDiv };

// The one type of all operands and results if the elementwise kernels
// handle it (f32, bf16), else kInvalid.
DType elementwiseType(const KernelConfig &c) {
  DType type = c.outputTypes[0];
  if (type != DType::kF32 && type != DType::kBF16)
    return DType::kInvalid;
  for (DType t : c.inputTypes)
    if (t != type)
      return DType::kInvalid;
  return type;
}

bool parseUnary(const plan::Op &op, Unary &kind, float &lo, float &hi) {
  const std::string &k = op.kind();
  if (k == "relu") {
    kind = Unary::kRelu;
  } else if (k == "relu6") {
    kind = Unary::kRelu6;
  } else if (k == "clip") {
    OpAttrs attrs(op);
    kind = Unary::kClip;
    lo = static_cast<float>(attrs.getFloat("min"));
    hi = static_cast<float>(attrs.getFloat("max"));
  } else {
    return false;
  }
  return true;
}

bool parseBinary(const plan::Op &op, Binary &kind) {
  const std::string &k = op.kind();
  if (k == "add")
    kind = Binary::kAdd;
  else if (k == "sub")
    kind = Binary::kSub;
  else if (k == "mul")
    kind = Binary::kMul;
  else if (k == "div")
    kind = Binary::kDiv;
  else
    return false;
  return true;
}

// Same results as the reference: NaN goes to 0 through relu and relu6
// (comparisons with NaN are false), clip keeps the reference's order.
template <Unary K, typename T>
GOPT_VECTOR_CLONES void unaryRange(const T *x, T *y, int64_t begin, int64_t end,
                                   float lo, float hi) {
  for (int64_t i = begin; i < end; ++i) {
    float v = toF32(x[i]);
    if constexpr (K == Unary::kRelu)
      y[i] = fromF32<T>(v > 0 ? v : 0.0f);
    else if constexpr (K == Unary::kRelu6)
      y[i] = fromF32<T>(v < 0 ? 0.0f : (v > 6 ? 6.0f : v));
    else
      y[i] = fromF32<T>(std::min(std::max(v, lo), hi));
  }
}

template <typename T> class UnaryKernel : public Kernel {
public:
  UnaryKernel(Unary kind, float lo, float hi, int64_t elements)
      : kind_(kind), lo_(lo), hi_(hi), elements_(elements) {}
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const T *x = static_cast<const T *>(in[0].data());
    T *y = static_cast<T *>(out[0].data());
    float lo = lo_, hi = hi_;
    parallelRange(elements_, [&](int64_t b, int64_t e) {
      switch (kind_) {
      case Unary::kRelu:
        unaryRange<Unary::kRelu>(x, y, b, e, lo, hi);
        break;
      case Unary::kRelu6:
        unaryRange<Unary::kRelu6>(x, y, b, e, lo, hi);
        break;
      case Unary::kClip:
        unaryRange<Unary::kClip>(x, y, b, e, lo, hi);
        break;
      }
    });
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  Unary kind_;
  float lo_, hi_;
  int64_t elements_;
};

template <Binary K> inline float apply(float a, float b) {
  if constexpr (K == Binary::kAdd)
    return a + b;
  else if constexpr (K == Binary::kSub)
    return a - b;
  else if constexpr (K == Binary::kMul)
    return a * b;
  else
    return a / b;
}

// y[i] = a[i] (op) b[i] over [begin, end) (b (op) a with Swap).
template <Binary K, bool Swap, typename T>
GOPT_VECTOR_CLONES void binarySameShape(const T *a, const T *b, T *y,
                                        int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    float fa = toF32(a[i]), fb = toF32(b[i]);
    y[i] = fromF32<T>(Swap ? apply<K>(fb, fa) : apply<K>(fa, fb));
  }
}

// y[i] = a[i] (op) v over [0, n) (v (op) a with Swap).
template <Binary K, bool Swap, typename T>
GOPT_VECTOR_CLONES void binaryScalar(const T *a, T v, T *y, int64_t n) {
  const float fv = toF32(v);
  for (int64_t i = 0; i < n; ++i) {
    float fa = toF32(a[i]);
    y[i] = fromF32<T>(Swap ? apply<K>(fv, fa) : apply<K>(fa, fv));
  }
}

// out[o, m, i] = a[o, m, i] (op) b[m] for the [outer, mid, inner] view of
// the output; `swapped` computes b (op) a. mid == 1 is a scalar b; outer ==
// inner == 1 with b full-size is the same-shape case (bStride 1).
template <typename T> class BinaryKernel : public Kernel {
public:
  BinaryKernel(Binary kind, int64_t outer, int64_t mid, int64_t inner,
               bool bFull, bool swapped)
      : kind_(kind), outer_(outer), mid_(mid), inner_(inner), bFull_(bFull),
        swapped_(swapped) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const T *a = static_cast<const T *>(in[swapped_ ? 1 : 0].data());
    const T *b = static_cast<const T *>(in[swapped_ ? 0 : 1].data());
    T *y = static_cast<T *>(out[0].data());
    switch (kind_) {
    case Binary::kAdd:
      dispatch<Binary::kAdd>(a, b, y);
      break;
    case Binary::kSub:
      swapped_ ? dispatch<Binary::kSub, true>(a, b, y)
               : dispatch<Binary::kSub>(a, b, y);
      break;
    case Binary::kMul:
      dispatch<Binary::kMul>(a, b, y);
      break;
    case Binary::kDiv:
      swapped_ ? dispatch<Binary::kDiv, true>(a, b, y)
               : dispatch<Binary::kDiv>(a, b, y);
      break;
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  template <Binary K, bool Swap = false>
  void dispatch(const T *a, const T *b, T *y) {
    const int64_t total = outer_ * mid_ * inner_;
    if (aOuterInner_) { // a [outer, 1, inner], b [mid]
      const int64_t mid = mid_, inner = inner_;
#pragma omp parallel for if (total >= kParallelThreshold) schedule(static)
      for (int64_t r = 0; r < outer_ * mid; ++r)
        binaryScalar<K, Swap>(a + r / mid * inner, b[r % mid], y + r * inner,
                              inner);
      return;
    }
    if (bFull_) {
      parallelRange(total, [&](int64_t s, int64_t e) {
        binarySameShape<K, Swap>(a, b, y, s, e);
      });
      return;
    }
    const int64_t mid = mid_, inner = inner_;
    if (inner == 1) { // b is a vector along the innermost dims
      const int64_t rows = outer_;
#pragma omp parallel for if (total >= kParallelThreshold) schedule(static)
      for (int64_t o = 0; o < rows; ++o)
        binarySameShape<K, Swap>(a + o * mid, b, y + o * mid, 0, mid);
      return;
    }
    const int64_t rows = outer_ * mid;
#pragma omp parallel for if (total >= kParallelThreshold) schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      binaryScalar<K, Swap>(a + r * inner, b[r % mid], y + r * inner, inner);
  }

  Binary kind_;
  int64_t outer_, mid_, inner_;
  bool bFull_, swapped_;

public:
  // Both operands broadcast: a [outer, 1, inner] against b [1, mid, 1]
  // (the gradient of global_avg_pool: dy [N, 1, 1, C] times [1, H, W, 1]).
  bool aOuterInner_ = false;
};

// If `b` broadcast to `out` varies along one contiguous block of dims only,
// gives the [outer, mid, inner] split of the output around that block.
bool blockBroadcast(const Shape &out, const Shape &b, int64_t &outer,
                    int64_t &mid, int64_t &inner) {
  const size_t rank = out.size();
  if (b.size() > rank)
    return false;
  Shape padded(rank - b.size(), 1);
  padded.insert(padded.end(), b.begin(), b.end());
  int first = -1, last = -1;
  for (size_t d = 0; d < rank; ++d) {
    if (padded[d] == 1 && out[d] != 1)
      continue;
    if (padded[d] != out[d])
      return false;
    if (out[d] == 1)
      continue; // size-1 dims belong to either side
    if (first < 0)
      first = static_cast<int>(d);
    else if (last != static_cast<int>(d) - 1)
      return false; // two separate blocks
    last = static_cast<int>(d);
  }
  outer = mid = inner = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (first >= 0 && static_cast<int>(d) < first)
      outer *= out[d];
    else if (first >= 0 && static_cast<int>(d) <= last)
      mid *= out[d];
    else if (first >= 0)
      inner *= out[d];
    else
      outer *= out[d]; // b is a scalar
  }
  return true;
}

std::unique_ptr<Kernel> makeUnary(DType type, Unary kind, float lo, float hi,
                                  int64_t elements) {
  return byElementType(type, [&](auto element) -> std::unique_ptr<Kernel> {
    return std::make_unique<UnaryKernel<decltype(element)>>(kind, lo, hi,
                                                            elements);
  });
}

std::unique_ptr<Kernel> makeBinary(DType type, Binary kind, int64_t outer,
                                   int64_t mid, int64_t inner, bool bFull,
                                   bool swapped) {
  return byElementType(type, [&](auto element) -> std::unique_ptr<Kernel> {
    return std::make_unique<BinaryKernel<decltype(element)>>(
        kind, outer, mid, inner, bFull, swapped);
  });
}

StatusOr<std::unique_ptr<Kernel>> createUnary(const KernelConfig &c) {
  Unary kind;
  float lo = 0, hi = 0;
  DType type = elementwiseType(c);
  if (type == DType::kInvalid || !parseUnary(*c.op, kind, lo, hi))
    return std::unique_ptr<Kernel>();
  return makeUnary(type, kind, lo, hi, numElements(c.outputShapes[0]));
}

StatusOr<std::unique_ptr<Kernel>> createBinary(const KernelConfig &c) {
  Binary kind;
  DType type = elementwiseType(c);
  if (type == DType::kInvalid || !parseBinary(*c.op, kind))
    return std::unique_ptr<Kernel>();
  const Shape &out = c.outputShapes[0];
  const Shape &a = c.inputShapes[0], &b = c.inputShapes[1];
  int64_t outer, mid, inner;
  if (a == out && b == out)
    return makeBinary(type, kind, 1, 1, numElements(out), true, false);
  for (bool swapped : {false, true}) {
    const Shape &full = swapped ? b : a, &part = swapped ? a : b;
    if (full == out && blockBroadcast(out, part, outer, mid, inner))
      return makeBinary(type, kind, outer, mid, inner, false, swapped);
  }
  // One operand varies along one block of dims only, the other everywhere
  // else (and is 1 along the block).
  for (bool swapped : {false, true}) {
    const Shape &whole = swapped ? b : a, &part = swapped ? a : b;
    if (whole.size() != out.size() ||
        !blockBroadcast(out, part, outer, mid, inner) || mid == 1)
      continue;
    const size_t lead = out.size() - std::min(out.size(), part.size());
    bool fits = part.size() <= out.size();
    for (size_t d = 0; d < out.size() && fits; ++d) {
      const int64_t p = d < lead ? 1 : part[d - lead];
      const bool varies = p == out[d] && out[d] != 1;
      fits = whole[d] == (varies ? 1 : out[d]);
    }
    if (!fits)
      continue;
    return byElementType(type, [&](auto element) -> std::unique_ptr<Kernel> {
      auto k = std::make_unique<BinaryKernel<decltype(element)>>(
          kind, outer, mid, inner, false, swapped);
      k->aOuterInner_ = true;
      return k;
    });
  }
  return std::unique_ptr<Kernel>();
}

// The math family of GoptMathOps.td in f32 across threads, with the ODS's
// own scalar functions (the reference computes them in double). Gradients
// stay on the reference.
class UnaryMathKernel : public Kernel {
public:
  using Apply = std::function<void(const float *, float *, int64_t, int64_t)>;
  UnaryMathKernel(Apply apply, int64_t elements)
      : apply_(std::move(apply)), elements_(elements) {}
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const float *x = in[0].data<float>();
    float *y = out[0].data<float>();
    parallelRange(elements_, [&](int64_t b, int64_t e) { apply_(x, y, b, e); });
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  Apply apply_;
  int64_t elements_;
};

StatusOr<std::unique_ptr<Kernel>> createUnaryMath(const KernelConfig &c) {
  if (c.outputTypes[0] != DType::kF32 || c.inputTypes[0] != DType::kF32)
    return std::unique_ptr<Kernel>();
  OpAttrs attrs(*c.op);
  auto readFloat = [&](const char *name, float odsDefault) {
    return static_cast<float>(attrs.getFloat(name, odsDefault));
  };
  UnaryMathKernel::Apply apply;
  unary_math::visit(
      c.op->kind(), readFloat, [&](const auto &fn, bool gradient) {
        if (gradient)
          return;
        apply = [fn](const float *x, float *y, int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i)
            y[i] = fn(x[i]);
        };
      });
  if (!apply)
    return std::unique_ptr<Kernel>();
  return std::unique_ptr<Kernel>(
      new UnaryMathKernel(std::move(apply), numElements(c.outputShapes[0])));
}

// f32 sigmoid across threads (a sigmoid no conv took as a post-op: one whose
// result has other readers); the reference computes it in double, one
// element at a time.
StatusOr<std::unique_ptr<Kernel>> createSigmoid(const KernelConfig &c) {
  if (c.outputTypes[0] != DType::kF32 || c.inputTypes[0] != DType::kF32)
    return std::unique_ptr<Kernel>();
  UnaryMathKernel::Apply apply = [](const float *x, float *y, int64_t b,
                                    int64_t e) {
    for (int64_t i = b; i < e; ++i)
      y[i] = 1.0f / (1.0f + std::exp(-x[i]));
  };
  return std::unique_ptr<Kernel>(
      new UnaryMathKernel(std::move(apply), numElements(c.outputShapes[0])));
}

// f32 erf across threads, as a rational function of x (Eigen's
// generic_fast_erf_float: x * P(x^2) / Q(x^2) on x clamped to [-4, 4],
// where erf is 1 to f32 precision): no branch or libm call, so the loop
// vectorizes. Within 4.2e-7 of erf over [-6, 6]. ConvNeXt's and ViT's GELU
// spend their time here; the reference computes erf in double, one element
// at a time.
StatusOr<std::unique_ptr<Kernel>> createErf(const KernelConfig &c) {
  if (c.outputTypes[0] != DType::kF32 || c.inputTypes[0] != DType::kF32)
    return std::unique_ptr<Kernel>();
  UnaryMathKernel::Apply apply = [](const float *x, float *y, int64_t b,
                                    int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float v = std::min(4.0f, std::max(-4.0f, x[i]));
      float v2 = v * v;
      float p = -2.72614225801306e-10f;
      p = v2 * p + 2.77068142495902e-08f;
      p = v2 * p - 2.10102402082508e-06f;
      p = v2 * p - 5.69250639462346e-05f;
      p = v2 * p - 7.34990630326855e-04f;
      p = v2 * p - 2.95459980854025e-03f;
      p = v2 * p - 1.60960333262415e-02f;
      float q = -1.45660718464996e-05f;
      q = v2 * q - 2.13374055278905e-04f;
      q = v2 * q - 1.68282697438203e-03f;
      q = v2 * q - 7.37332916720468e-03f;
      q = v2 * q - 1.42647390514189e-02f;
      y[i] = v * p / q;
    }
  };
  return std::unique_ptr<Kernel>(
      new UnaryMathKernel(std::move(apply), numElements(c.outputShapes[0])));
}

template <typename From, typename To>
GOPT_VECTOR_CLONES void castRange(const From *x, To *y, int64_t begin,
                                  int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    y[i] = fromF32<To>(toF32(x[i]));
}

// cast f32 -> bf16 and bf16 -> f32.
template <typename From, typename To> class CastKernel : public Kernel {
public:
  explicit CastKernel(int64_t elements) : elements_(elements) {}
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const From *x = static_cast<const From *>(in[0].data());
    To *y = static_cast<To *>(out[0].data());
    parallelRange(elements_,
                  [&](int64_t b, int64_t e) { castRange(x, y, b, e); });
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  int64_t elements_;
};

StatusOr<std::unique_ptr<Kernel>> createCast(const KernelConfig &c) {
  DType from = c.inputTypes[0], to = c.outputTypes[0];
  int64_t n = numElements(c.outputShapes[0]);
  if (from == DType::kF32 && to == DType::kBF16)
    return std::unique_ptr<Kernel>(
        std::make_unique<CastKernel<float, uint16_t>>(n));
  if (from == DType::kBF16 && to == DType::kF32)
    return std::unique_ptr<Kernel>(
        std::make_unique<CastKernel<uint16_t, float>>(n));
  return std::unique_ptr<Kernel>();
}

// T: float or uint16_t (bf16: summed as f32 values in double and rounded
// once, as the reference computes it).
template <typename T> class GlobalAvgPoolKernel : public Kernel {
public:
  GlobalAvgPoolKernel(bool nchw, const Shape &x) : nchw_(nchw) {
    n_ = x[0];
    c_ = nchw ? x[1] : x[3];
    hw_ = nchw ? x[2] * x[3] : x[1] * x[2];
  }
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const T *x = in[0].data<T>();
    T *y = out[0].data<T>();
    const int64_t n = n_, c = c_, hw = hw_;
    const bool parallel = n * c * hw >= kParallelThreshold;
    // Accumulates in double like the reference.
    if (nchw_) {
#pragma omp parallel for if (parallel) schedule(static)
      for (int64_t r = 0; r < n * c; ++r) {
        double sum = 0;
        const T *p = x + r * hw;
        for (int64_t i = 0; i < hw; ++i)
          sum += toF32(p[i]);
        y[r] = fromF32<T>(static_cast<float>(sum / hw));
      }
      return Status::success();
    }
#pragma omp parallel for if (parallel) schedule(static)
    for (int64_t b = 0; b < n; ++b) {
      std::vector<double> sum(c, 0.0);
      const T *p = x + b * hw * c;
      for (int64_t i = 0; i < hw; ++i)
        for (int64_t ch = 0; ch < c; ++ch)
          sum[ch] += toF32(p[i * c + ch]);
      for (int64_t ch = 0; ch < c; ++ch)
        y[b * c + ch] = fromF32<T>(static_cast<float>(sum[ch] / hw));
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  bool nchw_;
  int64_t n_, c_, hw_;
};

StatusOr<std::unique_ptr<Kernel>> createGlobalAvgPool(const KernelConfig &c) {
  DType type = elementwiseType(c);
  if (type == DType::kInvalid || c.inputShapes[0].size() != 4)
    return std::unique_ptr<Kernel>();
  bool nchw = c.attrs().getString("data_format") == "NCHW";
  return byElementType(type, [&](auto element) -> std::unique_ptr<Kernel> {
    return std::make_unique<GlobalAvgPoolKernel<decltype(element)>>(
        nchw, c.inputShapes[0]);
  });
}

/// exp(x) for x <= 0 as Cephes computes expf: x = n ln 2 + r with |r| <=
/// ln 2 / 2, a degree-6 polynomial for exp(r), and 2^n built in the
/// exponent bits (within 2 ulp; 0 below -87). Plain float and integer
/// arithmetic, so a loop of it vectorizes where libm's expf is a call per
/// element.
inline float expNonPositive(float x) {
  x = x < -87.0f ? -87.0f : x;
  const float scaled = x * 1.44269504088896341f + 0.5f;
  int32_t n = static_cast<int32_t>(scaled); // truncates toward zero
  // floor, as a subtracted comparison: GCC vectorizes no integer select on
  // a float comparison for AVX-512 or AVX2.
  n -= static_cast<int32_t>(static_cast<float>(n) > scaled);
  const float fn = static_cast<float>(n);
  float r = x - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (n + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

// softmax / log_softmax along the innermost axis, one row per iteration.
class SoftmaxKernel : public Kernel {
public:
  SoftmaxKernel(bool log, int64_t rows, int64_t len)
      : log_(log), rows_(rows), len_(len) {}
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const float *x = in[0].data<float>();
    float *y = out[0].data<float>();
    const int64_t rows = rows_, len = len_;
    const bool log = log_;
#pragma omp parallel for if (rows * len >= kParallelThreshold) schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      softmaxRow(x + r * len, y + r * len, len, log);
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  bool log_;
  int64_t rows_, len_;
};

StatusOr<std::unique_ptr<Kernel>> createSoftmax(const KernelConfig &c) {
  const Shape &x = c.inputShapes[0];
  int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = c.attrs().getInt("axis");
  if (axis < 0)
    axis += rank;
  if (!c.allOfType(DType::kF32) || rank == 0 || axis != rank - 1)
    return std::unique_ptr<Kernel>();
  int64_t len = x[rank - 1];
  int64_t rows = len ? numElements(x) / len : 0;
  return std::unique_ptr<Kernel>(std::make_unique<SoftmaxKernel>(
      c.op->kind() == "log_softmax", rows, len));
}

/// One layer_norm row: statistics accumulated in double, as in the
/// reference, by OpenMP simd reductions, cloned for AVX-512 and AVX2 (see
/// softmaxRow).
__attribute__((target_clones("avx512f", "avx2", "default"))) void
layerNormRow(const float *row, float *dst, int64_t len, const float *scale,
             const float *bias, double epsilon) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < len; ++j)
    sum += row[j];
  const double mean = sum / static_cast<double>(len);
  double squares = 0;
#pragma omp simd reduction(+ : squares)
  for (int64_t j = 0; j < len; ++j)
    squares += (row[j] - mean) * (row[j] - mean);
  const float invStd = static_cast<float>(
      1.0 / std::sqrt(squares / static_cast<double>(len) + epsilon));
  const float center = static_cast<float>(mean);
  for (int64_t j = 0; j < len; ++j)
    dst[j] = (row[j] - center) * invStd * scale[j] + bias[j];
}

/// layer_norm over contiguous rows of the trailing dims: the rows split over
/// threads, each read twice for its statistics (accumulated in double, as
/// in the reference) and once to write. Scale and bias are gathered to the
/// row length once per run, so broadcasting costs nothing per element.
class LayerNormKernel : public Kernel {
public:
  LayerNormKernel(int64_t rows, std::vector<int64_t> scaleAt,
                  std::vector<int64_t> biasAt, float epsilon)
      : rows_(rows), scaleAt_(std::move(scaleAt)), biasAt_(std::move(biasAt)),
        epsilon_(epsilon), scale_(scaleAt_.size()), bias_(biasAt_.size()) {}
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const int64_t rows = rows_, len = static_cast<int64_t>(scale_.size());
    const float *scaleIn = in[1].data<float>(), *biasIn = in[2].data<float>();
    for (int64_t j = 0; j < len; ++j) {
      scale_[j] = scaleIn[scaleAt_[j]];
      bias_[j] = biasIn[biasAt_[j]];
    }
    const float *x = in[0].data<float>(), *scale = scale_.data(),
                *bias = bias_.data();
    float *y = out[0].data<float>();
    const double epsilon = epsilon_;
#pragma omp parallel for if (rows * len >= kParallelThreshold) schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      layerNormRow(x + r * len, y + r * len, len, scale, bias, epsilon);
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  int64_t rows_;
  std::vector<int64_t> scaleAt_, biasAt_;
  float epsilon_;
  std::vector<float> scale_, bias_;
};

StatusOr<std::unique_ptr<Kernel>> createLayerNorm(const KernelConfig &c) {
  if (!c.allOfType(DType::kF32))
    return std::unique_ptr<Kernel>();
  op_attrs::LayerNormAttrs attrs(*c.op);
  const Shape &x = c.inputShapes[0];
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = attrs.axis() < 0 ? attrs.axis() + rank : attrs.axis();
  Shape normalized(x.begin() + axis, x.end());
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; ++d)
    rows *= x[d];
  return std::unique_ptr<Kernel>(std::make_unique<LayerNormKernel>(
      rows, ref::broadcastIndices(c.inputShapes[1], normalized),
      ref::broadcastIndices(c.inputShapes[2], normalized), attrs.epsilon()));
}

/// A transpose that swaps two blocks of dims after leading batch dims, e.g.
/// NHWC -> NCHW ([0, 3, 1, 2]: per image, a [H*W, C] matrix transposed) and
/// NCHW -> NHWC: per batch, out[c][r] = in[r][c] over a rows x cols matrix,
/// in cache-sized tiles. The reference kernel gathers element by element
/// with an index vector, ~10x slower on the input transpose of a converted
/// NHWC graph.
template <typename T> class BlockTransposeKernel : public Kernel {
public:
  BlockTransposeKernel(int64_t batch, int64_t rows, int64_t cols)
      : batch_(batch), rows_(rows), cols_(cols) {}
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const T *x = static_cast<const T *>(in[0].data());
    T *y = static_cast<T *>(out[0].data());
    constexpr int64_t kTile = 32;
    const int64_t rows = rows_, cols = cols_;
    const int64_t rowTiles = (rows + kTile - 1) / kTile;
    const int64_t colTiles = (cols + kTile - 1) / kTile;
    const int64_t tiles = batch_ * rowTiles * colTiles;
    const bool parallel = batch_ * rows * cols >= kParallelThreshold;
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t t = 0; t < tiles; ++t) {
      int64_t b = t / (rowTiles * colTiles);
      int64_t r0 = (t / colTiles) % rowTiles * kTile;
      int64_t c0 = t % colTiles * kTile;
      const T *src = x + b * rows * cols;
      T *dst = y + b * rows * cols;
      int64_t r1 = std::min(r0 + kTile, rows), c1 = std::min(c0 + kTile, cols);
      // Whole register blocks in vector registers, the edges element by
      // element.
      constexpr int64_t kBlock = blockSize();
      int64_t rFull = r0, cFull = c0;
      if constexpr (kBlock > 1) {
        rFull = r0 + (r1 - r0) / kBlock * kBlock;
        cFull = c0 + (c1 - c0) / kBlock * kBlock;
        for (int64_t r = r0; r < rFull; r += kBlock)
          for (int64_t c = c0; c < cFull; c += kBlock)
            transposeBlock(src + r * cols + c, cols, dst + c * rows + r, rows);
      }
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = c < cFull ? rFull : r0; r < r1; ++r)
          dst[c * rows + r] = src[r * cols + c];
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  // Side of the square blocks transposed in SSE2 registers (8x8 2-byte
  // elements, 4x4 4-byte ones); 1: none.
  static constexpr int64_t blockSize() {
#ifdef __SSE2__
    if constexpr (sizeof(T) == 2)
      return 8;
    if constexpr (sizeof(T) == 4)
      return 4;
#endif
    return 1;
  }

  // dst[j * dstStride + i] = src[i * srcStride + j] over one block.
  static void transposeBlock(const T *src, int64_t srcStride, T *dst,
                             int64_t dstStride) {
#ifdef __SSE2__
    if constexpr (sizeof(T) == 2) {
      __m128i a[8], t[8], u[8];
      for (int i = 0; i < 8; ++i)
        a[i] = _mm_loadu_si128(
            reinterpret_cast<const __m128i *>(src + i * srcStride));
      for (int i = 0; i < 4; ++i) {
        t[2 * i] = _mm_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
        t[2 * i + 1] = _mm_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
      }
      // u[0..3]: columns (0,1), (2,3), (4,5), (6,7) of rows 0-3; u[4..7]
      // the same of rows 4-7.
      for (int h = 0; h < 2; ++h) {
        u[4 * h] = _mm_unpacklo_epi32(t[4 * h], t[4 * h + 2]);
        u[4 * h + 1] = _mm_unpackhi_epi32(t[4 * h], t[4 * h + 2]);
        u[4 * h + 2] = _mm_unpacklo_epi32(t[4 * h + 1], t[4 * h + 3]);
        u[4 * h + 3] = _mm_unpackhi_epi32(t[4 * h + 1], t[4 * h + 3]);
      }
      for (int j = 0; j < 4; ++j) {
        _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 2 * j * dstStride),
                         _mm_unpacklo_epi64(u[j], u[j + 4]));
        _mm_storeu_si128(
            reinterpret_cast<__m128i *>(dst + (2 * j + 1) * dstStride),
            _mm_unpackhi_epi64(u[j], u[j + 4]));
      }
      return;
    }
    if constexpr (sizeof(T) == 4) {
      // Bits moved as floats: shuffles never touch the values.
      __m128 r0 = _mm_loadu_ps(reinterpret_cast<const float *>(src));
      __m128 r1 =
          _mm_loadu_ps(reinterpret_cast<const float *>(src + srcStride));
      __m128 r2 =
          _mm_loadu_ps(reinterpret_cast<const float *>(src + 2 * srcStride));
      __m128 r3 =
          _mm_loadu_ps(reinterpret_cast<const float *>(src + 3 * srcStride));
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(reinterpret_cast<float *>(dst), r0);
      _mm_storeu_ps(reinterpret_cast<float *>(dst + dstStride), r1);
      _mm_storeu_ps(reinterpret_cast<float *>(dst + 2 * dstStride), r2);
      _mm_storeu_ps(reinterpret_cast<float *>(dst + 3 * dstStride), r3);
      return;
    }
#endif
    (void)src, (void)srcStride, (void)dst, (void)dstStride;
  }

  int64_t batch_, rows_, cols_;
};

/// A copy of contiguous blocks, one per output position of the outer dims,
/// each read at a byte offset given by per-dimension strides: a transpose
/// whose innermost dimension stays innermost (attention's [S, B, H*D] <->
/// [B, S, H*D] head shuffles) or a slice with unit steps along the last
/// dimension (a fused QKV projection split in three).
class StridedBlockCopyKernel : public Kernel {
public:
  StridedBlockCopyKernel(std::vector<int64_t> outerDims,
                         std::vector<int64_t> inStrides, int64_t blockBytes,
                         int64_t baseBytes = 0)
      : outerDims_(std::move(outerDims)), inStrides_(std::move(inStrides)),
        blockBytes_(blockBytes), baseBytes_(baseBytes) {}
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const char *x = static_cast<const char *>(in[0].data()) + baseBytes_;
    char *y = static_cast<char *>(out[0].data());
    int64_t blocks = 1;
    for (int64_t d : outerDims_)
      blocks *= d;
    const int64_t rank = static_cast<int64_t>(outerDims_.size());
    const int64_t bytes = blockBytes_;
#pragma omp parallel for schedule(static) if (blocks * bytes >=                \
                                              4 * kParallelThreshold)
    for (int64_t i = 0; i < blocks; ++i) {
      int64_t offset = 0;
      for (int64_t d = rank - 1, rest = i; d >= 0; --d) {
        offset += rest % outerDims_[d] * inStrides_[d];
        rest /= outerDims_[d];
      }
      std::memcpy(y + i * bytes, x + offset, bytes);
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  std::vector<int64_t> outerDims_, inStrides_;
  int64_t blockBytes_, baseBytes_;
};

StatusOr<std::unique_ptr<Kernel>> createSlice(const KernelConfig &c) {
  const Shape &x = c.inputShapes[0], &y = c.outputShapes[0];
  if (x.empty() || numElements(y) == 0)
    return std::unique_ptr<Kernel>();
  ref::SliceGather gather = ref::sliceGather(c.attrs(), x);
  const int64_t rank = static_cast<int64_t>(x.size());
  if (gather.strides[rank - 1] != 1)
    return std::unique_ptr<Kernel>();
  const int64_t elementBytes = dtypeSize(c.inputTypes[0]);
  std::vector<int64_t> outer(y.begin(), y.end() - 1), strides;
  for (int64_t d = 0; d + 1 < rank; ++d)
    strides.push_back(gather.strides[d] * elementBytes);
  return std::unique_ptr<Kernel>(std::make_unique<StridedBlockCopyKernel>(
      outer, strides, y.back() * elementBytes, gather.base * elementBytes));
}

/// What a permutation really moves: dimensions of size 1 dropped and runs
/// of input dimensions that stay adjacent in the output merged into one.
/// `dims` are the merged input dimensions, `perm` their output order.
void simplifyPermutation(const Shape &x, const std::vector<int64_t> &perm,
                         std::vector<int64_t> &dims,
                         std::vector<int64_t> &simplePerm) {
  std::vector<int64_t> kept;
  for (int64_t p : perm)
    if (x[p] != 1)
      kept.push_back(p);
  // Groups in output order: [first input dim, last input dim].
  std::vector<std::pair<int64_t, int64_t>> groups;
  for (int64_t p : kept) {
    // The next kept input dimension after groups.back().second.
    if (!groups.empty()) {
      int64_t next = groups.back().second + 1;
      while (next < static_cast<int64_t>(x.size()) && x[next] == 1)
        ++next;
      if (p == next) {
        groups.back().second = p;
        continue;
      }
    }
    groups.push_back({p, p});
  }
  std::vector<size_t> byInput(groups.size());
  for (size_t g = 0; g < groups.size(); ++g)
    byInput[g] = g;
  std::sort(byInput.begin(), byInput.end(), [&](size_t a, size_t b) {
    return groups[a].first < groups[b].first;
  });
  dims.assign(groups.size(), 1);
  simplePerm.assign(groups.size(), 0);
  for (size_t rankInInput = 0; rankInInput < byInput.size(); ++rankInInput) {
    size_t g = byInput[rankInInput];
    for (int64_t d = groups[g].first; d <= groups[g].second; ++d)
      dims[rankInInput] *= x[d];
    simplePerm[g] = static_cast<int64_t>(rankInInput);
  }
}

StatusOr<std::unique_ptr<Kernel>> createTranspose(const KernelConfig &c) {
  const Shape &x = c.inputShapes[0];
  std::vector<int64_t> perm = c.attrs().getInts("perm");
  if (perm.size() != x.size() || x.empty())
    return std::unique_ptr<Kernel>();
  std::vector<int64_t> dims, simple;
  simplifyPermutation(x, perm, dims, simple);
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t elementBytes = dtypeSize(c.inputTypes[0]);
  if (rank <= 1) // Moves only unit dimensions: the same bytes in order.
    return std::unique_ptr<Kernel>(std::make_unique<StridedBlockCopyKernel>(
        std::vector<int64_t>{}, std::vector<int64_t>{},
        numElements(x) * elementBytes));
  std::vector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dims[d + 1];
  if (simple.back() == rank - 1) {
    std::vector<int64_t> outer, inStrides;
    for (int64_t i = 0; i + 1 < rank; ++i) {
      outer.push_back(dims[simple[i]]);
      inStrides.push_back(strides[simple[i]] * elementBytes);
    }
    return std::unique_ptr<Kernel>(std::make_unique<StridedBlockCopyKernel>(
        outer, inStrides, dims[rank - 1] * elementBytes));
  }
  // [0 .. b-1, b+1, b]: leading batch dims kept, then a matrix transposed
  // (NHWC <-> NCHW and every rotation of trailing dims).
  int64_t b = rank - 2;
  for (int64_t i = 0; i < b; ++i)
    if (simple[i] != i)
      return std::unique_ptr<Kernel>();
  if (simple[b] != b + 1 || simple[b + 1] != b)
    return std::unique_ptr<Kernel>();
  int64_t batch = 1;
  for (int64_t d = 0; d < b; ++d)
    batch *= dims[d];
  const int64_t rows = dims[b], cols = dims[b + 1];
  // Only the element size matters to a permutation.
  auto make = [&](auto element) -> std::unique_ptr<Kernel> {
    using T = decltype(element);
    return std::make_unique<BlockTransposeKernel<T>>(batch, rows, cols);
  };
  switch (elementBytes) {
  case 1:
    return make(uint8_t());
  case 2:
    return make(uint16_t());
  case 4:
    return make(uint32_t());
  case 8:
    return make(uint64_t());
  default:
    return std::unique_ptr<Kernel>();
  }
}

/// Training-form batch_norm over the [outer, C, inner] view of x (NCHW:
/// inner = H*W; NHWC: inner = 1): batch mean, then the biased variance from
/// the deviations (two passes, double sums, as the reference kernel), then
/// the normalization; rows of the view are split among threads with
/// per-thread channel sums. cross_replica: both passes' sums and the count
/// are summed across replicas before they are divided.
class TrainingBatchNormKernel : public Kernel {
public:
  TrainingBatchNormKernel(int64_t outer, int64_t channels, int64_t inner,
                          double eps, double momentum,
                          Communicator *crossReplica, CommunicationQueue *queue,
                          std::string name)
      : outer_(outer), channels_(channels), inner_(inner), eps_(eps),
        momentum_(momentum), crossReplica_(crossReplica), queue_(queue),
        name_(std::move(name)) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const int64_t outer = outer_, channels = channels_, inner = inner_;
    const float *x = in[0].data<float>(), *scale = in[1].data<float>(),
                *offset = in[2].data<float>(), *mean = in[3].data<float>(),
                *var = in[4].data<float>();
    double count = static_cast<double>(outer * inner);
    std::vector<double> batchMean(channels, 0.0), batchVar(channels, 0.0);
    // Per-channel sums of f(x) over the whole batch.
    auto channelSums = [&](auto f, std::vector<double> &result) {
      std::fill(result.begin(), result.end(), 0.0);
      const bool parallel = outer * channels * inner >= kParallelThreshold;
#pragma omp parallel if (parallel)
      {
        std::vector<double> local(channels, 0.0);
#pragma omp for schedule(static) nowait
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t c = 0; c < channels; ++c) {
            const float *row = x + (o * channels + c) * inner;
            double s = 0;
            for (int64_t i = 0; i < inner; ++i)
              s += f(row[i], c);
            local[c] += s;
          }
#pragma omp critical
        for (int64_t c = 0; c < channels; ++c)
          result[c] += local[c];
      }
    };
    channelSums([](float v, int64_t) { return static_cast<double>(v); },
                batchMean);
    if (crossReplica_) {
      batchMean.push_back(count);
      GOPT_RETURN_IF_ERROR(
          sumAcrossReplicas(crossReplica_, queue_, batchMean, name_ + " mean"));
      count = batchMean.back();
      batchMean.pop_back();
    }
    for (double &m : batchMean)
      m = count ? m / count : 0.0;
    channelSums(
        [&](float v, int64_t c) {
          double d = v - batchMean[c];
          return d * d;
        },
        batchVar);
    if (crossReplica_)
      GOPT_RETURN_IF_ERROR(sumAcrossReplicas(crossReplica_, queue_, batchVar,
                                             name_ + " variance"));
    for (double &v : batchVar)
      v = count ? v / count : 0.0;

    std::vector<float> a(channels), b(channels);
    for (int64_t c = 0; c < channels; ++c) {
      double inv = 1.0 / std::sqrt(batchVar[c] + eps_);
      a[c] = static_cast<float>(inv * scale[c]);
      b[c] = static_cast<float>(offset[c] - batchMean[c] * inv * scale[c]);
    }
    float *y = out[0].data<float>();
    const bool parallel = outer * channels * inner >= kParallelThreshold;
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < channels; ++c) {
        const float *row = x + (o * channels + c) * inner;
        float *dst = y + (o * channels + c) * inner;
        float ac = a[c], bc = b[c];
        for (int64_t i = 0; i < inner; ++i)
          dst[i] = row[i] * ac + bc;
      }

    float *outMean = out[1].data<float>(), *outVar = out[2].data<float>(),
          *runMean = out[3].data<float>(), *runVar = out[4].data<float>();
    for (int64_t c = 0; c < channels; ++c) {
      double unbiased =
          count > 1 ? batchVar[c] * count / (count - 1) : batchVar[c];
      outMean[c] = static_cast<float>(batchMean[c]);
      outVar[c] = static_cast<float>(batchVar[c]);
      runMean[c] = static_cast<float>(momentum_ * mean[c] +
                                      (1 - momentum_) * batchMean[c]);
      runVar[c] =
          static_cast<float>(momentum_ * var[c] + (1 - momentum_) * unbiased);
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  int64_t outer_, channels_, inner_;
  double eps_, momentum_;
  Communicator *crossReplica_; // null unless cross_replica
  CommunicationQueue *queue_;
  std::string name_;
};

// quantize (f32 -> i8) and dequantize (i8 -> f32) over the [outer,
// channels, inner] view of x, scales[c] (or scales[0] for one scale) for
// channel c. Bit-identical to the reference: the same division and
// product, round half to even through the 2^23 trick (exact under the
// default rounding mode for the clamped |v| <= 128), NaN -> 0; written as
// straight loops over contiguous values so that they vectorize.
inline int8_t quantizeValue(float x, float scale) {
  constexpr float kRound = 12582912.0f; // 1.5 * 2^23
  float v = x / scale;
  v = v == v ? v : 0.0f; // NaN
  v = std::min(127.0f, std::max(-128.0f, v));
  return static_cast<int8_t>(static_cast<int32_t>((v + kRound) - kRound));
}

// Per-tensor quantize and dequantize of a range, cloned for AVX-512 and
// AVX2 (the build targets baseline x86-64): static int8 MobileNetV2's
// dequantize of its last 7x7x1280 activations (before the global pooling)
// took 2-3% of its step as SSE2 code.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
quantizeRange(const float *__restrict x, int8_t *__restrict y, int64_t n,
              float scale) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = quantizeValue(x[i], scale);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void
dequantizeRange(const int8_t *__restrict x, float *__restrict y, int64_t n,
                float scale) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<float>(x[i]) * scale;
}

class QuantizationKernel : public Kernel {
public:
  QuantizationKernel(bool quantize, int64_t outer, int64_t channels,
                     int64_t inner, int64_t numScales)
      : quantize_(quantize), outer_(outer), channels_(channels), inner_(inner),
        numScales_(numScales) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const float *s = in[1].data<float>();
    if (quantize_)
      for (int64_t c = 0; c < numScales_; ++c)
        if (!(s[c] > 0.0f) || !std::isfinite(s[c]))
          return invalidArgument("quantize scale ", c, " is ", s[c],
                                 ", expected a finite positive number");
    if (numScales_ == 1) {
      const float scale = s[0];
      const int64_t total = outer_ * channels_ * inner_;
      if (quantize_) {
        const float *x = in[0].data<float>();
        int8_t *y = out[0].data<int8_t>();
        parallelRange(total, [&](int64_t b, int64_t e) {
          quantizeRange(x + b, y + b, e - b, scale);
        });
      } else {
        const int8_t *x = in[0].data<int8_t>();
        float *y = out[0].data<float>();
        parallelRange(total, [&](int64_t b, int64_t e) {
          dequantizeRange(x + b, y + b, e - b, scale);
        });
      }
      return Status::success();
    }
    if (quantize_)
      apply(in[0].data<float>(), out[0].data<int8_t>(), s,
            [](float x, float scale) { return quantizeValue(x, scale); });
    else
      apply(
          in[0].data<int8_t>(), out[0].data<float>(), s,
          [](int8_t q, float scale) { return static_cast<float>(q) * scale; });
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  // y[i] = fn(x[i], scale) for i < n; restrict since int8 stores could
  // alias anything, which would keep the loop scalar.
  template <typename From, typename To, typename Fn>
  static void scaleRange(const From *__restrict x, To *__restrict y, int64_t n,
                         float scale, Fn fn) {
    for (int64_t i = 0; i < n; ++i)
      y[i] = fn(x[i], scale);
  }
  template <typename From, typename To, typename Fn>
  static void channelRange(const From *__restrict x, To *__restrict y,
                           const float *__restrict s, int64_t n, Fn fn) {
    for (int64_t c = 0; c < n; ++c)
      y[c] = fn(x[c], s[c]);
  }

  template <typename From, typename To, typename Fn>
  void apply(const From *x, To *y, const float *s, Fn fn) const {
    const int64_t channels = channels_, inner = inner_;
    const int64_t total = outer_ * channels * inner;
    if (numScales_ == 1) {
      const float scale = s[0];
      parallelRange(total, [&](int64_t b, int64_t e) {
        scaleRange(x + b, y + b, e - b, scale, fn);
      });
      return;
    }
    if (inner == 1) { // the channel axis is the innermost
      const int64_t rows = outer_;
#pragma omp parallel for if (total >= kParallelThreshold) schedule(static)
      for (int64_t r = 0; r < rows; ++r)
        channelRange(x + r * channels, y + r * channels, s, channels, fn);
      return;
    }
    const int64_t rows = outer_ * channels;
#pragma omp parallel for if (total >= kParallelThreshold) schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      scaleRange(x + r * inner, y + r * inner, inner, s[r % channels], fn);
  }

  bool quantize_;
  int64_t outer_, channels_, inner_, numScales_;
};

// Whether `c` is a quantize (f32 -> i8) or dequantize (i8 -> f32).
bool isQuantization(const KernelConfig &c, bool &quantize) {
  DType from = c.op->kind() == "quantize" ? DType::kF32 : DType::kI8;
  DType to = from == DType::kF32 ? DType::kI8 : DType::kF32;
  quantize = from == DType::kF32;
  return c.inputTypes.size() == 2 && c.inputTypes[0] == from &&
         c.inputTypes[1] == DType::kF32 && c.outputTypes[0] == to;
}

StatusOr<std::unique_ptr<Kernel>> createQuantization(const KernelConfig &c) {
  bool quantize;
  const Shape &x = c.inputShapes[0];
  int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = c.attrs().getInt("axis");
  if (axis < 0)
    axis += rank;
  int64_t numScales = numElements(c.inputShapes[1]);
  // Malformed axes and scale counts are left to the reference's errors.
  if (!isQuantization(c, quantize) || axis < 0 || axis >= rank ||
      (numScales != 1 && numScales != x[axis]))
    return std::unique_ptr<Kernel>();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= x[d];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= x[d];
  return std::unique_ptr<Kernel>(std::make_unique<QuantizationKernel>(
      quantize, outer, x[axis], inner, numScales));
}

} // namespace

std::unique_ptr<Kernel> createFlatQuantization(bool quantize,
                                               int64_t elements) {
  return std::make_unique<QuantizationKernel>(quantize, 1, 1, elements, 1);
}

namespace {
// One NHWC image, windows that tile it: y[oh, ow, :] = the maximum of the
// window (a NaN wins, as in the reference), channels innermost
// (vectorized). `best` holds C floats.
template <typename T>
GOPT_VECTOR_CLONES void
maxPoolTiledImage(const T *x, T *y, int64_t w, int64_t channels, int64_t oh,
                  int64_t ow, int64_t kh, int64_t kw, float *best) {
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      const T *first = x + (i * kh * w + j * kw) * channels;
      for (int64_t ch = 0; ch < channels; ++ch)
        best[ch] = -std::numeric_limits<float>::infinity();
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t s = 0; s < kw; ++s) {
          const T *pv = first + (r * w + s) * channels;
          for (int64_t ch = 0; ch < channels; ++ch) {
            float v = toF32(pv[ch]), old = best[ch];
            best[ch] = (v != v) | (v > old) ? v : old; // v != v: NaN
          }
        }
      T *out = y + (i * ow + j) * channels;
      for (int64_t ch = 0; ch < channels; ++ch)
        out[ch] = fromF32<T>(best[ch]);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define GOPT_HAVE_AVX512_TILED_POOL 1

GOPT_AVX512BW inline void tiledStore16(float *p, __m512 v) {
  _mm512_storeu_ps(p, v);
}
// The maximum is one of x's bf16 values, so fromF32 only drops the low
// half, quieting a NaN.
GOPT_AVX512BW inline void tiledStore16(uint16_t *p, __m512 v) {
  __m512i bits = _mm512_srli_epi32(_mm512_castps_si512(v), 16);
  __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  bits = _mm512_mask_or_epi32(bits, nan, bits, _mm512_set1_epi32(0x40));
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(p),
                      _mm512_cvtepi32_epi16(bits));
}

// maxPoolTiledImage for channels a multiple of 16: each window's 16
// channels at a time in a register (the generic loop kept `best` in
// memory and converted bf16 element by element: compute-bound in bf16).
template <typename T>
GOPT_AVX512BW void maxPoolTiledImageAvx512(const T *x, T *y, int64_t w,
                                           int64_t channels, int64_t oh,
                                           int64_t ow, int64_t kh, int64_t kw) {
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      const T *first = x + (i * kh * w + j * kw) * channels;
      T *out = y + (i * ow + j) * channels;
      for (int64_t ch = 0; ch < channels; ch += 16) {
        __m512 best = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
        for (int64_t r = 0; r < kh; ++r)
          for (int64_t s = 0; s < kw; ++s) {
            __m512 v = load16AsF32(first + (r * w + s) * channels + ch);
            __mmask16 take = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) |
                             _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
            best = _mm512_mask_mov_ps(best, take, v);
          }
        tiledStore16(out + ch, best);
      }
    }
}
#endif

// oneDNN's NHWC pooling ran the MNIST CNN's 2x2 pool (1024x24x24x64 bf16)
// at about half the speed its memory traffic allows; one pass over x,
// vectorized over channels, is memory-bound.
// With `nchwOut` (AVX-512 only) each image is pooled into a buffer that
// stays in cache and transposed from there into y, NCHW.
template <typename T> class TiledMaxPoolKernel : public Kernel {
public:
  TiledMaxPoolKernel(int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh,
                     int64_t ow, int64_t kh, int64_t kw, bool nchwOut = false)
      : n_(n), h_(h), w_(w), c_(c), oh_(oh), ow_(ow), kh_(kh), kw_(kw),
        nchwOut_(nchwOut) {}
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const T *x = static_cast<const T *>(in[0].data());
    T *y = static_cast<T *>(out[0].data());
    const int64_t xSize = h_ * w_ * c_, ySize = oh_ * ow_ * c_;
    const bool parallel = n_ * xSize >= kParallelThreshold;
#pragma omp parallel if (parallel)
    {
      std::vector<float> best(c_);
      std::vector<T> nhwc(nchwOut_ ? ySize : 0);
#pragma omp for schedule(static)
      for (int64_t b = 0; b < n_; ++b) {
#ifdef GOPT_HAVE_AVX512_TILED_POOL
        if (nchwOut_) {
          maxPoolTiledImageAvx512(x + b * xSize, nhwc.data(), w_, c_, oh_, ow_,
                                  kh_, kw_);
          transposeMatrix16(nhwc.data(), oh_ * ow_, c_, y + b * ySize);
          continue;
        }
        if (vectorChannels_) {
          maxPoolTiledImageAvx512(x + b * xSize, y + b * ySize, w_, c_, oh_,
                                  ow_, kh_, kw_);
          continue;
        }
#endif
        maxPoolTiledImage(x + b * xSize, y + b * ySize, w_, c_, oh_, ow_, kh_,
                          kw_, best.data());
      }
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  int64_t n_, h_, w_, c_, oh_, ow_, kh_, kw_;
  bool nchwOut_;
#ifdef GOPT_HAVE_AVX512_TILED_POOL
  bool vectorChannels_ = c_ % 16 == 0 && avx512bwSupported();
#endif
};
} // namespace

namespace {
std::unique_ptr<Kernel> makeTiledMaxPool(const KernelConfig &c, bool nchwOut) {
  if (c.op->kind() != "max_pool" || c.inputShapes.size() != 1 ||
      c.outputShapes.size() != 1 || c.inputShapes[0].size() != 4 ||
      c.outputShapes[0].size() != 4)
    return nullptr;
  DType type = c.inputTypes[0];
  if ((type != DType::kF32 && type != DType::kBF16) || c.outputTypes[0] != type)
    return nullptr;
  OpAttrs attrs = c.attrs();
  if (attrs.getString("data_format") == "NCHW" || attrs.getBool("ceil_mode"))
    return nullptr;
  const std::string padding = attrs.getString("padding");
  std::vector<int64_t> kernel = attrs.getInts("kernel");
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  if ((padding != "EXPLICIT" && padding != "VALID") || kernel.size() != 2 ||
      strides != kernel || pads != std::vector<int64_t>{0, 0, 0, 0})
    return nullptr;
  const Shape &x = c.inputShapes[0], &y = c.outputShapes[0];
  const int64_t kh = kernel[0], kw = kernel[1];
  if (kh < 1 || kw < 1 || y[0] != x[0] || y[3] != x[3] || y[1] != x[1] / kh ||
      y[2] != x[2] / kw)
    return nullptr;
  return byElementType(type, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<TiledMaxPoolKernel<decltype(t)>>(
        x[0], x[1], x[2], x[3], y[1], y[2], kh, kw, nchwOut);
  });
}
} // namespace

std::unique_ptr<Kernel> createTiledMaxPool(const KernelConfig &c) {
  return makeTiledMaxPool(c, false);
}

bool poolTransposeFusionEnabled() { return envSwitchOn("GOPT_POOL_TRANSPOSE"); }

std::unique_ptr<Kernel> createTiledMaxPoolToNchw(const KernelConfig &c) {
#ifdef GOPT_HAVE_AVX512_TILED_POOL
  if (!poolTransposeFusionEnabled() || !avx512bwSupported() ||
      c.inputShapes.size() != 1 || c.inputShapes[0].size() != 4 ||
      c.inputShapes[0][3] % 16 != 0)
    return nullptr;
  return makeTiledMaxPool(c, true);
#else
  (void)c;
  return nullptr;
#endif
}

StatusOr<std::unique_ptr<Kernel>>
createTrainingBatchNorm(const KernelConfig &c) {
  const Shape &x = c.inputShapes[0];
  int64_t rank = static_cast<int64_t>(x.size());
  OpAttrs attrs = c.attrs();
  if (!c.allOfType(DType::kF32) || !attrs.getBool("training") || rank < 2 ||
      c.outputShapes.size() != 5)
    return std::unique_ptr<Kernel>();
  int64_t axis = channelAxis(attrs.getString("data_format"), rank);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= x[d];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= x[d];
  return std::unique_ptr<Kernel>(std::make_unique<TrainingBatchNormKernel>(
      outer, x[axis], inner, attrs.getFloat("epsilon"),
      attrs.getFloat("momentum"),
      attrs.getBool("cross_replica") ? c.communicator : nullptr,
      c.communicationQueue, c.op->name()));
}

bool isZeroPreservingElementwise(const plan::Op &op) {
  Unary u;
  Binary b;
  float lo = 0, hi = 0;
  if (parseUnary(op, u, lo, hi))
    return u != Unary::kClip || (lo <= 0 && hi >= 0);
  return parseBinary(op, b);
}

std::unique_ptr<Kernel> createFlatElementwise(const plan::Op &op, DType type,
                                              int64_t elements) {
  Unary u;
  Binary b;
  float lo = 0, hi = 0;
  if (parseUnary(op, u, lo, hi))
    return makeUnary(type, u, lo, hi, elements);
  if (parseBinary(op, b))
    return makeBinary(type, b, 1, 1, elements, true, false);
  return nullptr;
}

/// softmax / log_softmax of one row. Subtracting the max keeps exp from
/// overflowing; the sum is in double as in the reference, and each exp is
/// computed once. The reductions are OpenMP simd loops (GCC keeps a plain
/// float max or double sum scalar: it may not reorder them) and the
/// function is cloned for AVX-512 and AVX2 (the build targets baseline
/// x86-64): a transformer's attention softmax was a tenth of its step.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
softmaxRow(const float *row, float *dst, int64_t len, bool log) {
  float maxValue = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : maxValue)
  for (int64_t j = 0; j < len; ++j)
    maxValue = row[j] > maxValue ? row[j] : maxValue;
#pragma omp simd
  for (int64_t j = 0; j < len; ++j)
    dst[j] = expNonPositive(row[j] - maxValue);
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < len; ++j)
    sum += dst[j];
  if (log) {
    const float logSum = static_cast<float>(std::log(sum));
    for (int64_t j = 0; j < len; ++j)
      dst[j] = row[j] - maxValue - logSum;
  } else {
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t j = 0; j < len; ++j)
      dst[j] *= inv;
  }
}

void registerFastKernels(KernelRegistry &registry) {
  for (const char *kind : {"relu", "relu6", "clip"})
    registry.registerKernel(kind, "cpu", createUnary);
  for (const char *kind : unary_math::kOpNames)
    registry.registerKernel(kind, "cpu", createUnaryMath);
  for (const char *kind : {"add", "sub", "mul", "div"})
    registry.registerKernel(kind, "cpu", createBinary);
  registry.registerKernel("sigmoid", "cpu", createSigmoid);
  registry.registerKernel("erf", "cpu", createErf);
  registry.registerKernel("global_avg_pool", "cpu", createGlobalAvgPool);
  registry.registerKernel("softmax", "cpu", createSoftmax);
  registry.registerKernel("log_softmax", "cpu", createSoftmax);
  registry.registerKernel("transpose", "cpu", createTranspose);
  registry.registerKernel("layer_norm", "cpu", createLayerNorm);
  registry.registerKernel("slice", "cpu", createSlice);
  registry.registerKernel("cast", "cpu", createCast);
  registry.registerKernel("quantize", "cpu", createQuantization);
  registry.registerKernel("dequantize", "cpu", createQuantization);
}

} // namespace gopt::runtime::cpu
