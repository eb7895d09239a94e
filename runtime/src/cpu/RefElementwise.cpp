//===- RefElementwise.cpp - Reference elementwise kernels and cast --------===//
#include "DropoutMask.h"
#include "Reference.h"

#include "gopt/runtime/LowPrecision.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>

namespace gopt::runtime::ref {
namespace {

//===----------------------------------------------------------------------===//
// Binary ops with numpy broadcasting
//===----------------------------------------------------------------------===//

enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,
  kPow,
  kSqDiff,
  kPRelu
};

template <typename T>
Status binaryTyped(BinaryOp op, const Tensor &a, const Tensor &b, Tensor &out) {
  const T *pa = a.data<T>();
  const T *pb = b.data<T>();
  T *po = out.data<T>();
  bool divByZero = false;
  // Integers (and bool) compute in int64 so that bool add/mul act as or/and;
  // uint64 computes in itself (its values do not fit int64) and wraps.
  using Acc = std::conditional_t<
      std::is_floating_point_v<T> || std::is_same_v<T, uint64_t>, T, int64_t>;
  forEachBroadcast(out.shape(), a.shape(), b.shape(),
                   [&](int64_t i, int64_t ia, int64_t ib) {
                     Acc x = pa[ia], y = pb[ib], r = 0;
                     switch (op) {
                     case BinaryOp::kAdd:
                       r = x + y;
                       break;
                     case BinaryOp::kSub:
                       r = x - y;
                       break;
                     case BinaryOp::kMul:
                       r = x * y;
                       break;
                     case BinaryOp::kDiv:
                       if constexpr (std::is_floating_point_v<T>) {
                         r = x / y;
                       } else if (y == 0) {
                         divByZero = true;
                       } else {
                         r = x / y; // C++ truncates toward zero
                       }
                       break;
                     case BinaryOp::kMax:
                       r = x > y ? x : y;
                       if constexpr (std::is_floating_point_v<T>)
                         if (std::isnan(x) || std::isnan(y))
                           r = std::numeric_limits<T>::quiet_NaN();
                       break;
                     case BinaryOp::kMin:
                       r = x < y ? x : y;
                       if constexpr (std::is_floating_point_v<T>)
                         if (std::isnan(x) || std::isnan(y))
                           r = std::numeric_limits<T>::quiet_NaN();
                       break;
                     case BinaryOp::kPow:
                       r = static_cast<Acc>(std::pow(static_cast<double>(x),
                                                     static_cast<double>(y)));
                       break;
                     case BinaryOp::kSqDiff:
                       r = (x - y) * (x - y);
                       break;
                     case BinaryOp::kPRelu:
                       r = x >= 0 ? x : y * x;
                       break;
                     }
                     if constexpr (std::is_same_v<T, bool>)
                       po[i] = r != 0;
                     else
                       po[i] = static_cast<T>(r);
                   });
  if (divByZero)
    return invalidArgument("integer division by zero");
  return Status::success();
}

template <BinaryOp Op>
Status binaryKernel(const RefContext &, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  if (in[0].dtype() == DType::kBool &&
      (Op == BinaryOp::kSub || Op == BinaryOp::kDiv || Op == BinaryOp::kPow))
    return unimplemented("not defined for bool operands");
  return visitElementType(in[0].dtype(), [&](auto zero) {
    return binaryTyped<decltype(zero)>(Op, in[0], in[1], out[0]);
  });
}

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

template <typename T> T sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }

// Applies fn to f32 (in float) or f64 (in double).
template <typename Fn>
Status unaryFloat(const std::vector<Tensor> &in, std::vector<Tensor> &out,
                  Fn fn) {
  auto apply = [&](auto zero) {
    using T = decltype(zero);
    const T *x = in[0].data<T>();
    T *y = out[0].data<T>();
    int64_t n = in[0].numElements();
    for (int64_t i = 0; i < n; ++i)
      y[i] = fn(x[i]);
    return Status::success();
  };
  if (in[0].dtype() == DType::kF32)
    return apply(float{});
  if (in[0].dtype() == DType::kF64)
    return apply(double{});
  return unimplemented("element type ", dtypeName(in[0].dtype()),
                       " is not supported (floating point only)");
}

// An integral double as T, wrapping modulo 2^bits as numpy does (-x of an
// unsigned value) instead of converting out of range, which is undefined.
template <typename T> T wrapToInteger(double r) {
  if (r >= 0)
    return static_cast<T>(r >= 0x1p64 ? std::numeric_limits<uint64_t>::max()
                                      : static_cast<uint64_t>(r));
  return static_cast<T>(r < -0x1p63 ? std::numeric_limits<int64_t>::min()
                                    : static_cast<int64_t>(r));
}

// Applies fn in double to any numeric type (integers round-trip exactly).
template <typename Fn>
Status unaryNumeric(const std::vector<Tensor> &in, std::vector<Tensor> &out,
                    Fn fn) {
  int64_t n = in[0].numElements();
  if (in[0].dtype() == DType::kBool)
    return unimplemented("element type bool");
  return visitElementType(in[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T *x = in[0].data<T>();
    T *y = out[0].data<T>();
    for (int64_t i = 0; i < n; ++i) {
      double r = fn(static_cast<double>(x[i]));
      if constexpr (std::is_integral_v<T>)
        y[i] = wrapToInteger<T>(r);
      else
        y[i] = static_cast<T>(r);
    }
    return Status::success();
  });
}

#define GOPT_UNARY_FLOAT(NAME, EXPR)                                           \
  Status NAME(const RefContext &, const std::vector<Tensor> &in,               \
              std::vector<Tensor> &out) {                                      \
    return unaryFloat(in, out, [](auto x) -> decltype(x) { return EXPR; });    \
  }
GOPT_UNARY_FLOAT(sigmoidKernel, sigmoid(x))
GOPT_UNARY_FLOAT(tanhKernel, std::tanh(x))
GOPT_UNARY_FLOAT(expKernel, std::exp(x))
GOPT_UNARY_FLOAT(logKernel, std::log(x))
GOPT_UNARY_FLOAT(sqrtKernel, std::sqrt(x))
GOPT_UNARY_FLOAT(rsqrtKernel, decltype(x)(1) / std::sqrt(x))
GOPT_UNARY_FLOAT(erfKernel, std::erf(x))
#undef GOPT_UNARY_FLOAT

#define GOPT_UNARY_NUMERIC(NAME, EXPR)                                         \
  Status NAME(const RefContext &, const std::vector<Tensor> &in,               \
              std::vector<Tensor> &out) {                                      \
    return unaryNumeric(in, out, [](double x) -> double { return EXPR; });     \
  }
GOPT_UNARY_NUMERIC(reluKernel, x > 0 ? x : 0.0)
GOPT_UNARY_NUMERIC(relu6Kernel, x < 0 ? 0.0 : (x > 6 ? 6.0 : x))
GOPT_UNARY_NUMERIC(negKernel, -x)
GOPT_UNARY_NUMERIC(absKernel, std::fabs(x))
#undef GOPT_UNARY_NUMERIC

Status geluKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  if (ctx.attrs().getString("approximate") == "tanh")
    return unaryFloat(in, out, [](auto x) {
      const double k = std::sqrt(2.0 / M_PI);
      double xd = x;
      return static_cast<decltype(x)>(
          0.5 * xd * (1.0 + std::tanh(k * (xd + 0.044715 * xd * xd * xd))));
    });
  return unaryFloat(in, out, [](auto x) {
    return static_cast<decltype(x)>(0.5 * x *
                                    (1.0 + std::erf(x / std::sqrt(2.0))));
  });
}

Status leakyReluKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  double alpha = ctx.attrs().getFloat("alpha");
  return unaryFloat(in, out, [alpha](auto x) -> decltype(x) {
    return x >= 0 ? x : alpha * x;
  });
}

Status clipKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  float lo = static_cast<float>(ctx.attrs().getFloat("min"));
  float hi = static_cast<float>(ctx.attrs().getFloat("max"));
  return unaryNumeric(in, out, [lo, hi](double x) {
    return std::min<double>(std::max<double>(x, lo), hi);
  });
}

Status biasAddKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  const Tensor &x = in[0];
  int64_t axis = channelAxis(ctx.attrs().getString("data_format"), x.rank());
  int64_t channels = x.dim(axis);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    inner *= x.dim(d);
  const float *px = x.data<float>(), *pb = in[1].data<float>();
  float *py = out[0].data<float>();
  int64_t n = x.numElements();
  for (int64_t i = 0; i < n; ++i)
    py[i] = px[i] + pb[(i / inner) % channels];
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Cast: every pair of element types
//===----------------------------------------------------------------------===//

struct F16 {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};

template <typename T> double toDouble(T v) { return static_cast<double>(v); }
template <> double toDouble(F16 v) { return halfToFloat(v.bits); }
template <> double toDouble(BF16 v) { return bf16ToFloat(v.bits); }

template <typename T> constexpr bool isFloatLike() {
  return std::is_floating_point_v<T> || std::is_same_v<T, F16> ||
         std::is_same_v<T, BF16>;
}

template <typename Dst, typename Src> Dst convert(Src v) {
  if constexpr (std::is_same_v<Dst, bool>) {
    return toDouble(v) != 0.0;
  } else if constexpr (std::is_same_v<Dst, F16>) {
    return F16{floatToHalf(static_cast<float>(toDouble(v)))};
  } else if constexpr (std::is_same_v<Dst, BF16>) {
    return BF16{floatToBf16(static_cast<float>(toDouble(v)))};
  } else if constexpr (std::is_floating_point_v<Dst>) {
    if constexpr (isFloatLike<Src>())
      return static_cast<Dst>(toDouble(v));
    else
      return static_cast<Dst>(v);
  } else if constexpr (isFloatLike<Src>()) {
    // Float to integer truncates toward zero; out-of-range values saturate
    // (and NaN becomes 0) instead of being undefined behaviour.
    double d = std::trunc(toDouble(v));
    if (std::isnan(d))
      return 0;
    if (d <= static_cast<double>(std::numeric_limits<Dst>::min()))
      return std::numeric_limits<Dst>::min();
    if (d >= static_cast<double>(std::numeric_limits<Dst>::max()))
      return std::numeric_limits<Dst>::max();
    return static_cast<Dst>(d);
  } else {
    return static_cast<Dst>(v); // integer to integer wraps
  }
}

template <typename Src, typename Dst>
void castLoop(const void *src, void *dst, int64_t n) {
  const Src *s = static_cast<const Src *>(src);
  Dst *d = static_cast<Dst *>(dst);
  for (int64_t i = 0; i < n; ++i)
    d[i] = convert<Dst>(s[i]);
}

template <typename Src>
Status castFrom(DType dst, const void *in, void *out, int64_t n) {
  switch (dst) {
  case DType::kF32:
    castLoop<Src, float>(in, out, n);
    break;
  case DType::kF16:
    castLoop<Src, F16>(in, out, n);
    break;
  case DType::kBF16:
    castLoop<Src, BF16>(in, out, n);
    break;
  case DType::kI8:
    castLoop<Src, int8_t>(in, out, n);
    break;
  case DType::kI32:
    castLoop<Src, int32_t>(in, out, n);
    break;
  case DType::kI64:
    castLoop<Src, int64_t>(in, out, n);
    break;
  case DType::kBool:
    castLoop<Src, bool>(in, out, n);
    break;
  case DType::kU8:
    castLoop<Src, uint8_t>(in, out, n);
    break;
  case DType::kF64:
    castLoop<Src, double>(in, out, n);
    break;
  case DType::kI16:
    castLoop<Src, int16_t>(in, out, n);
    break;
  case DType::kU16:
    castLoop<Src, uint16_t>(in, out, n);
    break;
  case DType::kU32:
    castLoop<Src, uint32_t>(in, out, n);
    break;
  case DType::kU64:
    castLoop<Src, uint64_t>(in, out, n);
    break;
  default:
    return unimplemented("cast to ", dtypeName(dst));
  }
  return Status::success();
}

Status castBetween(DType from, DType to, const void *src, void *dst, int64_t n);

/// A cast from or to a float8 or 4-bit type goes through double, which holds
/// every value of those types and of the source exactly (but int64 beyond
/// 2^53, which then saturates in a 4-bit type anyway).
Status castLowPrecision(DType from, DType to, bool saturate, const void *src,
                        void *dst, int64_t n) {
  std::vector<double> wide(n);
  if (isLowPrecisionDType(from)) {
    const uint8_t *bytes = static_cast<const uint8_t *>(src);
    for (int64_t i = 0; i < n; ++i)
      wide[i] = lowPrecisionToDouble(from, bytes[i]);
  } else if (Status s = castBetween(from, DType::kF64, src, wide.data(), n);
             !s.ok()) {
    return s;
  }
  if (!isLowPrecisionDType(to))
    return castBetween(DType::kF64, to, wide.data(), dst, n);
  uint8_t *bytes = static_cast<uint8_t *>(dst);
  for (int64_t i = 0; i < n; ++i)
    bytes[i] = lowPrecisionFromDouble(to, wide[i], saturate);
  return Status::success();
}

Status castKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  DType from = in[0].dtype(), to = out[0].dtype();
  if (isLowPrecisionDType(from) || isLowPrecisionDType(to))
    return castLowPrecision(from, to, ctx.attrs().getBool("saturate"),
                            in[0].data(), out[0].data(), in[0].numElements());
  return castBetween(from, to, in[0].data(), out[0].data(),
                     in[0].numElements());
}

Status castBetween(DType from, DType to, const void *src, void *dst,
                   int64_t n) {
  switch (from) {
  case DType::kF32:
    return castFrom<float>(to, src, dst, n);
  case DType::kF16:
    return castFrom<F16>(to, src, dst, n);
  case DType::kBF16:
    return castFrom<BF16>(to, src, dst, n);
  case DType::kI8:
    return castFrom<int8_t>(to, src, dst, n);
  case DType::kI32:
    return castFrom<int32_t>(to, src, dst, n);
  case DType::kI64:
    return castFrom<int64_t>(to, src, dst, n);
  case DType::kBool:
    return castFrom<bool>(to, src, dst, n);
  case DType::kU8:
    return castFrom<uint8_t>(to, src, dst, n);
  case DType::kF64:
    return castFrom<double>(to, src, dst, n);
  case DType::kI16:
    return castFrom<int16_t>(to, src, dst, n);
  case DType::kU16:
    return castFrom<uint16_t>(to, src, dst, n);
  case DType::kU32:
    return castFrom<uint32_t>(to, src, dst, n);
  case DType::kU64:
    return castFrom<uint64_t>(to, src, dst, n);
  default:
    return unimplemented("cast from ", dtypeName(from));
  }
}

//===----------------------------------------------------------------------===//
// Pass-through ops
//===----------------------------------------------------------------------===//

Status copyKernel(const RefContext &, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  if (in[0].byteSize() && in[0].data() != out[0].data())
    std::memcpy(out[0].data(), in[0].data(), in[0].byteSize());
  return Status::success();
}

/// The random stream of a dropout (or its gradient): the op's `seed`, or,
/// without one, its place in the plan (a forward-only graph whose dropouts
/// all have seed 0 still draws a different mask for each).
int64_t dropoutStream(const RefContext &ctx) {
  int64_t seed = ctx.attrs().getInt("seed");
  return seed != 0 ? seed : -1 - static_cast<int64_t>(ctx.opIndex);
}

Status dropoutKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  if (!attrs.getBool("training"))
    return copyKernel(ctx, in, out);
  if (in[0].dtype() != DType::kF32)
    return unimplemented("training dropout supports floating point only");
  double ratio = attrs.getFloat("ratio");
  if (ratio < 0 || ratio >= 1)
    return invalidArgument("dropout ratio ", ratio, " must be in [0, 1)");
  uint64_t key = dropoutKey(ctx.seed, dropoutStream(ctx), ctx.calls);
  applyDropoutMask(key, dropoutThreshold(ratio),
                   static_cast<float>(1.0 / (1.0 - ratio)), in[0].data<float>(),
                   out[0].data<float>(), in[0].numElements());
  return Status::success();
}

/// Uniform draws in [low, high): element i takes the top 53 bits of
/// mix64(key + i * golden ratio) with dropout's per-run key, so any thread
/// can compute any element and a session seed fixes every run's values.
Status randomUniformLikeKernel(const RefContext &ctx,
                               const std::vector<Tensor> &in,
                               std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  double low = attrs.getFloat("low"), high = attrs.getFloat("high");
  uint64_t key = dropoutKey(ctx.seed, dropoutStream(ctx), ctx.calls);
  int64_t n = out[0].numElements();
  auto draw = [&](int64_t i) {
    uint64_t bits =
        mix64(key + static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull);
    return low + (high - low) * static_cast<double>(bits >> 11) * 0x1.0p-53;
  };
  switch (out[0].dtype()) {
  case DType::kF32:
    for (int64_t i = 0; i < n; ++i) {
      // Rounding to f32 may reach `high`; the range stays half open.
      float v = static_cast<float>(draw(i));
      if (v >= static_cast<float>(high) && high > low)
        v = std::nextafter(static_cast<float>(high), static_cast<float>(low));
      out[0].data<float>()[i] = v;
    }
    break;
  case DType::kF64:
    for (int64_t i = 0; i < n; ++i)
      out[0].data<double>()[i] = draw(i);
    break;
  case DType::kF16:
    for (int64_t i = 0; i < n; ++i)
      out[0].data<uint16_t>()[i] = floatToHalf(static_cast<float>(draw(i)));
    break;
  case DType::kBF16:
    for (int64_t i = 0; i < n; ++i)
      out[0].data<uint16_t>()[i] = floatToBf16(static_cast<float>(draw(i)));
    break;
  default:
    return unimplemented("random_uniform_like makes floating point values, "
                         "not ",
                         dtypeName(out[0].dtype()));
  }
  (void)in;
  return Status::success();
}

/// The gradient of training dropout: the forward op's mask (same seeds and
/// run number) applied to dy.
Status dropoutGradKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                         std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  double ratio = attrs.getFloat("ratio");
  if (ratio < 0 || ratio >= 1)
    return invalidArgument("dropout_grad ratio ", ratio, " must be in [0, 1)");
  uint64_t key = dropoutKey(ctx.seed, dropoutStream(ctx), ctx.calls);
  applyDropoutMask(key, dropoutThreshold(ratio),
                   static_cast<float>(1.0 / (1.0 - ratio)), in[0].data<float>(),
                   out[0].data<float>(), in[0].numElements());
  return Status::success();
}

Status checkNumericsKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                           std::vector<Tensor> &out) {
  const Tensor &x = in[0];
  int64_t n = x.numElements();
  for (int64_t i = 0; i < n; ++i) {
    double v;
    switch (x.dtype()) {
    case DType::kF32:
      v = x.data<float>()[i];
      break;
    case DType::kF16:
      v = halfToFloat(x.data<uint16_t>()[i]);
      break;
    case DType::kBF16:
      v = bf16ToFloat(x.data<uint16_t>()[i]);
      break;
    case DType::kF64:
      v = x.data<double>()[i];
      break;
    default:
      v = 0; // integers cannot hold NaN or Inf
    }
    if (!std::isfinite(v))
      return invalidArgument(std::isnan(v) ? "NaN" : "Inf",
                             " found at element ", i, ": ",
                             ctx.attrs().getString("message"));
  }
  return copyKernel(ctx, in, out);
}

// The slices of a (de)quantize: `channels` along `axis`, each with
// `outer` x `inner` elements around it; scale index c, or 0 for one scale.
struct QuantizationLayout {
  int64_t outer = 1, channels = 1, inner = 1, numScales = 1;
};

StatusOr<QuantizationLayout> getQuantizationLayout(const char *op,
                                                   const RefContext &ctx,
                                                   const Tensor &x,
                                                   const Tensor &scales) {
  const Shape &shape = x.shape();
  int64_t rank = shape.size();
  int64_t axis = ctx.attrs().getInt("axis");
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return invalidArgument(op, " axis ", ctx.attrs().getInt("axis"),
                           " out of range for rank ", rank);
  QuantizationLayout l;
  l.channels = shape[axis];
  l.numScales = scales.numElements();
  if (l.numScales != 1 && l.numScales != l.channels)
    return invalidArgument(op, " expects ", l.channels, " scales or 1, got ",
                           l.numScales);
  for (int64_t d = 0; d < axis; ++d)
    l.outer *= shape[d];
  for (int64_t d = axis + 1; d < rank; ++d)
    l.inner *= shape[d];
  return l;
}

// y = x * scales[c], c the index along `axis` (0 for a single scale).
Status dequantizeKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  const Tensor &x = in[0], &scales = in[1];
  if (x.dtype() != DType::kI8 || scales.dtype() != DType::kF32 ||
      out[0].dtype() != DType::kF32)
    return invalidArgument("dequantize expects i8 values, f32 scales and an "
                           "f32 result, got ",
                           dtypeName(x.dtype()), ", ",
                           dtypeName(scales.dtype()), " and ",
                           dtypeName(out[0].dtype()));
  GOPT_ASSIGN_OR_RETURN(QuantizationLayout l,
                        getQuantizationLayout("dequantize", ctx, x, scales));
  const int8_t *q = x.data<int8_t>();
  const float *s = scales.data<float>();
  float *y = out[0].data<float>();
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t c = 0; c < l.channels; ++c) {
      float scale = s[l.numScales == 1 ? 0 : c];
      int64_t base = (o * l.channels + c) * l.inner;
      for (int64_t i = 0; i < l.inner; ++i)
        y[base + i] = static_cast<float>(q[base + i]) * scale;
    }
  return Status::success();
}

// q = clamp(round_half_even(x / scales[c]), -128, 127); NaN -> 0, as ONNX
// QuantizeLinear with zero point 0.
Status quantizeKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                      std::vector<Tensor> &out) {
  const Tensor &x = in[0], &scales = in[1];
  if (x.dtype() != DType::kF32 || scales.dtype() != DType::kF32 ||
      out[0].dtype() != DType::kI8)
    return invalidArgument("quantize expects f32 values, f32 scales and an "
                           "i8 result, got ",
                           dtypeName(x.dtype()), ", ",
                           dtypeName(scales.dtype()), " and ",
                           dtypeName(out[0].dtype()));
  GOPT_ASSIGN_OR_RETURN(QuantizationLayout l,
                        getQuantizationLayout("quantize", ctx, x, scales));
  const float *s = scales.data<float>();
  for (int64_t c = 0; c < l.numScales; ++c)
    if (!(s[c] > 0.0f) || !std::isfinite(s[c]))
      return invalidArgument("quantize scale ", c, " is ", s[c],
                             ", expected a finite positive number");
  const float *v = x.data<float>();
  int8_t *q = out[0].data<int8_t>();
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t c = 0; c < l.channels; ++c) {
      float scale = s[l.numScales == 1 ? 0 : c];
      int64_t base = (o * l.channels + c) * l.inner;
      for (int64_t i = 0; i < l.inner; ++i) {
        float r = std::nearbyint(v[base + i] / scale); // ties to even
        r = std::isnan(r) ? 0.0f : std::min(127.0f, std::max(-128.0f, r));
        q[base + i] = static_cast<int8_t>(r);
      }
    }
  return Status::success();
}

} // namespace

void registerElementwiseKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  registerKernel(r, "add", binaryKernel<BinaryOp::kAdd>, D::kNumericF64);
  registerKernel(r, "sub", binaryKernel<BinaryOp::kSub>, D::kNumericF64);
  registerKernel(r, "mul", binaryKernel<BinaryOp::kMul>, D::kNumericF64);
  registerKernel(r, "div", binaryKernel<BinaryOp::kDiv>, D::kNumericF64);
  registerKernel(r, "max", binaryKernel<BinaryOp::kMax>, D::kNumericF64);
  registerKernel(r, "min", binaryKernel<BinaryOp::kMin>, D::kNumericF64);
  registerKernel(r, "pow", binaryKernel<BinaryOp::kPow>, D::kNumericF64);
  registerKernel(r, "prelu", binaryKernel<BinaryOp::kPRelu>, D::kNumericF64);
  registerKernel(r, "squared_difference", binaryKernel<BinaryOp::kSqDiff>,
                 D::kNumericF64);
  registerKernel(r, "relu", reluKernel, D::kNumericF64);
  registerKernel(r, "relu6", relu6Kernel, D::kNumericF64);
  registerKernel(r, "neg", negKernel, D::kNumericF64);
  registerKernel(r, "abs", absKernel, D::kNumericF64);
  registerKernel(r, "clip", clipKernel, D::kNumericF64);
  registerKernel(r, "sigmoid", sigmoidKernel, D::kFloatF64);
  registerKernel(r, "tanh", tanhKernel, D::kFloatF64);
  registerKernel(r, "exp", expKernel, D::kFloatF64);
  registerKernel(r, "log", logKernel, D::kFloatF64);
  registerKernel(r, "sqrt", sqrtKernel, D::kFloatF64);
  registerKernel(r, "rsqrt", rsqrtKernel, D::kFloatF64);
  registerKernel(r, "erf", erfKernel, D::kFloatF64);
  registerKernel(r, "gelu", geluKernel, D::kFloatF64);
  registerKernel(r, "leaky_relu", leakyReluKernel, D::kFloatF64);
  registerKernel(r, "bias_add", biasAddKernel, D::kFloat);
  registerKernel(r, "cast", castKernel, D::kAny);
  registerKernel(r, "dequantize", dequantizeKernel, D::kAny);
  registerKernel(r, "quantize", quantizeKernel, D::kAny);
  registerKernel(r, "identity", copyKernel, D::kAny);
  registerKernel(r, "stop_gradient", copyKernel, D::kAny);
  // Host memory is the only memory a CPU session has: a transfer is a copy.
  registerKernel(r, "transfer", copyKernel, D::kAny);
  registerKernel(r, "dropout", dropoutKernel, D::kAny);
  registerKernel(r, "dropout_grad", dropoutGradKernel, D::kFloat);
  registerKernel(r, "random_uniform_like", randomUniformLikeKernel, D::kAny);
  registerKernel(r, "check_numerics", checkNumericsKernel, D::kAny);
}

} // namespace gopt::runtime::ref
