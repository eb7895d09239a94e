//===- RefLogic.cpp - Reference kernels of GoptLogicOps.td ----------------===//
//
// Comparisons, logical and bitwise ops, where, mod and floor division, the
// float predicates, expand and tile. Results of comparisons and predicates are
// bool (one byte per element); where, expand and tile copy elements of any
// type byte for byte.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"
#include "gopt/runtime/OpAttrs.h"

#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace gopt::runtime::ref {
namespace {

/// Strides (in elements) that read `operand` broadcast to `out`: 0 along
/// the dimensions it is broadcast in.
std::vector<int64_t> broadcastStrides(const Shape &operand, const Shape &out) {
  std::vector<int64_t> strides(out.size(), 0);
  std::vector<int64_t> own = rowMajorStrides(operand);
  size_t lead = out.size() - operand.size();
  for (size_t i = 0; i < operand.size(); ++i)
    if (operand[i] != 1)
      strides[lead + i] = own[i];
  return strides;
}

/// Calls fn(outIndex, operandIndices) for every element of `out`, the
/// numpy broadcast of `operands`.
template <size_t N, typename Fn>
void forEachBroadcastN(const Shape &out, const std::array<Shape, N> &operands,
                       Fn fn) {
  const size_t rank = out.size();
  std::array<std::vector<int64_t>, N> strides;
  for (size_t k = 0; k < N; ++k)
    strides[k] = broadcastStrides(operands[k], out);
  std::array<int64_t, N> at{};
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0, total = numElements(out); i < total; ++i) {
    fn(i, at);
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      for (size_t k = 0; k < N; ++k)
        at[k] += strides[k][d];
      if (++idx[d] < out[d])
        break;
      for (size_t k = 0; k < N; ++k)
        at[k] -= strides[k][d] * out[d];
      idx[d] = 0;
    }
  }
}

//===----------------------------------------------------------------------===//
// Comparisons and logical ops
//===----------------------------------------------------------------------===//

enum class Compare { kEqual, kLess, kLessEqual, kGreater, kGreaterEqual };

template <Compare C>
Status compareKernel(const RefContext &, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  bool *z = out[0].data<bool>();
  return visitElementType(in[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T *a = in[0].data<T>(), *b = in[1].data<T>();
    forEachBroadcast(out[0].shape(), in[0].shape(), in[1].shape(),
                     [&](int64_t i, int64_t ia, int64_t ib) {
                       T x = a[ia], y = b[ib];
                       switch (C) {
                       case Compare::kEqual:
                         z[i] = x == y;
                         break;
                       case Compare::kLess:
                         z[i] = x < y;
                         break;
                       case Compare::kLessEqual:
                         z[i] = x <= y;
                         break;
                       case Compare::kGreater:
                         z[i] = x > y;
                         break;
                       case Compare::kGreaterEqual:
                         z[i] = x >= y;
                         break;
                       }
                     });
    return Status::success();
  });
}

enum class Logical { kAnd, kOr, kXor };

template <Logical L>
Status logicalKernel(const RefContext &, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  const bool *a = in[0].data<bool>(), *b = in[1].data<bool>();
  bool *z = out[0].data<bool>();
  forEachBroadcast(out[0].shape(), in[0].shape(), in[1].shape(),
                   [&](int64_t i, int64_t ia, int64_t ib) {
                     z[i] = L == Logical::kAnd  ? (a[ia] && b[ib])
                            : L == Logical::kOr ? (a[ia] || b[ib])
                                                : (a[ia] != b[ib]);
                   });
  return Status::success();
}

Status notKernel(const RefContext &, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  const bool *x = in[0].data<bool>();
  bool *y = out[0].data<bool>();
  for (int64_t i = 0, n = in[0].numElements(); i < n; ++i)
    y[i] = !x[i];
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Where, expand, tile: element copies of any type
//===----------------------------------------------------------------------===//

Status whereKernel(const RefContext &, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  const bool *c = in[0].data<bool>();
  const char *x = static_cast<const char *>(in[1].data());
  const char *y = static_cast<const char *>(in[2].data());
  char *z = static_cast<char *>(out[0].data());
  size_t elem = dtypeSize(out[0].dtype());
  forEachBroadcastN<3>(
      out[0].shape(), {in[0].shape(), in[1].shape(), in[2].shape()},
      [&](int64_t i, const std::array<int64_t, 3> &at) {
        const char *src = c[at[0]] ? x + at[1] * elem : y + at[2] * elem;
        std::memcpy(z + i * elem, src, elem);
      });
  return Status::success();
}

Status expandKernel(const RefContext &, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  const char *x = static_cast<const char *>(in[0].data());
  char *y = static_cast<char *>(out[0].data());
  size_t elem = dtypeSize(out[0].dtype());
  forEachBroadcastN<1>(out[0].shape(), {in[0].shape()},
                       [&](int64_t i, const std::array<int64_t, 1> &at) {
                         std::memcpy(y + i * elem, x + at[0] * elem, elem);
                       });
  return Status::success();
}

Status tileKernel(const RefContext &, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  const Shape &xs = in[0].shape(), &ys = out[0].shape();
  const char *x = static_cast<const char *>(in[0].data());
  char *y = static_cast<char *>(out[0].data());
  size_t elem = dtypeSize(out[0].dtype());
  std::vector<int64_t> strides = rowMajorStrides(xs);
  std::vector<int64_t> idx(ys.size(), 0);
  for (int64_t i = 0, n = out[0].numElements(); i < n; ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < ys.size(); ++d)
      src += (idx[d] % xs[d]) * strides[d];
    std::memcpy(y + i * elem, x + src * elem, elem);
    for (int64_t d = static_cast<int64_t>(ys.size()) - 1; d >= 0; --d) {
      if (++idx[d] < ys[d])
        break;
      idx[d] = 0;
    }
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Mod and floor division
//===----------------------------------------------------------------------===//

/// The remainder with the dividend's sign (fmod) or the divisor's (floor).
template <typename T> T remainder(T a, T b, bool truncated) {
  T r;
  if constexpr (std::is_floating_point_v<T>)
    r = std::fmod(a, b);
  else
    r = a % b;
  if (!truncated && r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

template <typename T> T floorDivide(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::floor(a / b);
  } else {
    T q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0)))
      --q;
    return q;
  }
}

template <bool IsMod>
Status divisionKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                      std::vector<Tensor> &out) {
  bool truncated = false;
  if constexpr (IsMod)
    truncated = op_attrs::ModAttrs(ctx.attrs()).fmod() == 1;
  if (in[0].dtype() == DType::kBool)
    return invalidArgument("not defined for bool operands");
  bool divByZero = false;
  GOPT_RETURN_IF_ERROR(visitElementType(in[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    // Integers compute in int64: INT_MIN % -1 of a narrow type is fine there;
    // uint64 computes in itself (its values do not fit int64).
    using Acc = std::conditional_t<
        std::is_floating_point_v<T> || std::is_same_v<T, uint64_t>, T, int64_t>;
    const T *a = in[0].data<T>(), *b = in[1].data<T>();
    T *z = out[0].data<T>();
    forEachBroadcast(out[0].shape(), in[0].shape(), in[1].shape(),
                     [&](int64_t i, int64_t ia, int64_t ib) {
                       Acc x = a[ia], y = b[ib];
                       if (!std::is_floating_point_v<T> && y == 0) {
                         divByZero = true;
                         return;
                       }
                       z[i] = static_cast<T>(IsMod ? remainder(x, y, truncated)
                                                   : floorDivide(x, y));
                     });
    return Status::success();
  }));
  if (divByZero)
    return invalidArgument("integer division by zero");
  return Status::success();
}

// Shifts of the type's width or more give 0 (C++ leaves them undefined).
Status bitShiftKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                      std::vector<Tensor> &out) {
  bool left = op_attrs::BitShiftAttrs(ctx.attrs()).direction() == "LEFT";
  auto shift = [&](auto zero) -> Status {
    using T = decltype(zero);
    const T *a = in[0].data<T>(), *b = in[1].data<T>();
    T *z = out[0].data<T>();
    forEachBroadcast(out[0].shape(), in[0].shape(), in[1].shape(),
                     [&](int64_t i, int64_t ia, int64_t ib) {
                       T x = a[ia], n = b[ib];
                       if (n >= sizeof(T) * 8)
                         z[i] = 0;
                       else
                         z[i] = static_cast<T>(left ? x << n : x >> n);
                     });
    return Status::success();
  };
  switch (in[0].dtype()) {
  case DType::kU8:
    return shift(uint8_t{});
  case DType::kU16:
    return shift(uint16_t{});
  case DType::kU32:
    return shift(uint32_t{});
  case DType::kU64:
    return shift(uint64_t{});
  default:
    return invalidArgument("bit_shift expects unsigned operands, got ",
                           dtypeName(in[0].dtype()));
  }
}

//===----------------------------------------------------------------------===//
// Bitwise ops
//===----------------------------------------------------------------------===//

enum class Bitwise { kAnd, kOr, kXor };

/// Calls fn with a value of the integer type `dtype` (signed or unsigned).
template <typename Fn> Status visitIntegerType(DType dtype, Fn &&fn) {
  if (isFloatDType(dtype) || dtype == DType::kBool)
    return invalidArgument("expects integer operands, got ", dtypeName(dtype));
  return visitElementType(dtype, [&](auto zero) -> Status {
    if constexpr (std::is_integral_v<decltype(zero)> &&
                  !std::is_same_v<decltype(zero), bool>)
      return fn(zero);
    else
      return invalidArgument("expects integer operands, got ",
                             dtypeName(dtype));
  });
}

template <Bitwise B>
Status bitwiseKernel(const RefContext &, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  return visitIntegerType(in[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T *a = in[0].data<T>(), *b = in[1].data<T>();
    T *z = out[0].data<T>();
    forEachBroadcast(out[0].shape(), in[0].shape(), in[1].shape(),
                     [&](int64_t i, int64_t ia, int64_t ib) {
                       z[i] =
                           static_cast<T>(B == Bitwise::kAnd  ? a[ia] & b[ib]
                                          : B == Bitwise::kOr ? a[ia] | b[ib]
                                                              : a[ia] ^ b[ib]);
                     });
    return Status::success();
  });
}

Status bitwiseNotKernel(const RefContext &, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  return visitIntegerType(in[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T *x = in[0].data<T>();
    T *y = out[0].data<T>();
    for (int64_t i = 0, n = in[0].numElements(); i < n; ++i)
      y[i] = static_cast<T>(~x[i]);
    return Status::success();
  });
}

//===----------------------------------------------------------------------===//
// Float predicates
//===----------------------------------------------------------------------===//

template <typename Pred>
Status floatPredicate(const std::vector<Tensor> &in, std::vector<Tensor> &out,
                      Pred pred) {
  auto apply = [&](auto zero) {
    using T = decltype(zero);
    const T *x = in[0].data<T>();
    bool *y = out[0].data<bool>();
    for (int64_t i = 0, n = in[0].numElements(); i < n; ++i)
      y[i] = pred(x[i]);
    return Status::success();
  };
  if (in[0].dtype() == DType::kF32)
    return apply(float{});
  if (in[0].dtype() == DType::kF64)
    return apply(double{});
  return invalidArgument("expects a float operand, got ",
                         dtypeName(in[0].dtype()));
}

Status isNaNKernel(const RefContext &, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  return floatPredicate(in, out, [](auto v) { return std::isnan(v); });
}

Status isInfKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  op_attrs::IsInfAttrs attrs(ctx.attrs());
  bool positive = attrs.detectPositive() != 0;
  bool negative = attrs.detectNegative() != 0;
  return floatPredicate(in, out, [&](auto v) {
    return std::isinf(v) && (v > 0 ? positive : negative);
  });
}

} // namespace

void registerLogicKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  registerKernel(r, "equal", compareKernel<Compare::kEqual>, D::kNumericF64);
  registerKernel(r, "less", compareKernel<Compare::kLess>, D::kNumericF64);
  registerKernel(r, "less_equal", compareKernel<Compare::kLessEqual>,
                 D::kNumericF64);
  registerKernel(r, "greater", compareKernel<Compare::kGreater>,
                 D::kNumericF64);
  registerKernel(r, "greater_equal", compareKernel<Compare::kGreaterEqual>,
                 D::kNumericF64);
  registerKernel(r, "and", logicalKernel<Logical::kAnd>, D::kAny);
  registerKernel(r, "or", logicalKernel<Logical::kOr>, D::kAny);
  registerKernel(r, "xor", logicalKernel<Logical::kXor>, D::kAny);
  registerKernel(r, "not", notKernel, D::kAny);
  registerKernel(r, "where", whereKernel, D::kAny);
  registerKernel(r, "mod", divisionKernel<true>, D::kNumericF64);
  registerKernel(r, "floor_div", divisionKernel<false>, D::kNumericF64);
  registerKernel(r, "bit_shift", bitShiftKernel, D::kAny);
  registerKernel(r, "bitwise_and", bitwiseKernel<Bitwise::kAnd>, D::kAny);
  registerKernel(r, "bitwise_or", bitwiseKernel<Bitwise::kOr>, D::kAny);
  registerKernel(r, "bitwise_xor", bitwiseKernel<Bitwise::kXor>, D::kAny);
  registerKernel(r, "bitwise_not", bitwiseNotKernel, D::kAny);
  // kNumericF64 so that the bool result passes the wrapper; f16/bf16
  // operands arrive as f32.
  registerKernel(r, "is_nan", isNaNKernel, D::kNumericF64);
  registerKernel(r, "is_inf", isInfKernel, D::kNumericF64);
  registerKernel(r, "expand", expandKernel, D::kAny);
  registerKernel(r, "tile", tileKernel, D::kAny);
}

} // namespace gopt::runtime::ref
