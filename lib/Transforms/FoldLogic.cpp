//===- FoldLogic.cpp - Constant evaluation of GoptLogicOps.td -------------===//

#include "FoldLogic.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"

#include "llvm/ADT/TypeSwitch.h"
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace gopt;

namespace {

using Result = std::optional<HostTensor>;

/// For every element of `shape`, calls fn(linear index, index into each of
/// `operands` broadcast to `shape`).
template <typename Fn>
void forEachBroadcast(ArrayRef<int64_t> shape,
                      ArrayRef<const HostTensor *> operands, Fn fn) {
  size_t rank = shape.size();
  SmallVector<SmallVector<int64_t, 4>> strides;
  for (const HostTensor *t : operands) {
    SmallVector<int64_t, 4> own = stridesOf(t->shape), s(rank, 0);
    size_t lead = rank - t->shape.size();
    for (size_t i = 0; i < t->shape.size(); ++i)
      s[lead + i] = t->shape[i] == 1 ? 0 : own[i];
    strides.push_back(s);
  }
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  SmallVector<int64_t, 4> index(rank, 0);
  SmallVector<int64_t, 3> at(operands.size(), 0);
  for (int64_t i = 0; i < total; ++i) {
    for (size_t k = 0; k < operands.size(); ++k) {
      at[k] = 0;
      for (size_t d = 0; d < rank; ++d)
        at[k] += index[d] * strides[k][d];
    }
    fn(i, ArrayRef<int64_t>(at));
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// A comparison; doubles compare as the floats they hold (NaN unordered).
Result evalCompare(const HostTensor &a, const HostTensor &b,
                   RankedTensorType type,
                   const std::function<bool(int)> &fromOrder) {
  HostTensor r = HostTensor::zeros(type.getShape(), type.getElementType());
  forEachBroadcast(type.getShape(), {&a, &b},
                   [&](int64_t i, ArrayRef<int64_t> at) {
                     if (a.isFloat()) {
                       double x = a.floats[at[0]], y = b.floats[at[1]];
                       // Unordered: only "not equal" (order 2) holds.
                       int order = std::isnan(x) || std::isnan(y) ? 2
                                   : x < y                        ? -1
                                   : x > y                        ? 1
                                                                  : 0;
                       r.ints[i] = fromOrder(order);
                     } else {
                       int64_t x = a.ints[at[0]], y = b.ints[at[1]];
                       r.ints[i] = fromOrder(x < y ? -1 : x > y ? 1 : 0);
                     }
                   });
  return r;
}

Result evalLogical(ArrayRef<HostTensor> in, RankedTensorType type,
                   const std::function<bool(bool, bool)> &fn) {
  HostTensor r = HostTensor::zeros(type.getShape(), type.getElementType());
  forEachBroadcast(
      type.getShape(), {&in[0], &in[1]}, [&](int64_t i, ArrayRef<int64_t> at) {
        r.ints[i] = fn(in[0].ints[at[0]] != 0, in[1].ints[at[1]] != 0);
      });
  return r;
}

/// Elements of `sources[pick(i, at)]` at `at[...]`: where and expand.
template <typename Pick>
Result evalGather(ArrayRef<const HostTensor *> operands, const HostTensor &like,
                  RankedTensorType type, Pick pick) {
  HostTensor r = HostTensor::zeros(type.getShape(), like.elementType);
  forEachBroadcast(type.getShape(), operands,
                   [&](int64_t i, ArrayRef<int64_t> at) {
                     auto [source, index] = pick(at);
                     if (r.isFloat())
                       r.floats[i] = source->floats[index];
                     else
                       r.ints[i] = source->ints[index];
                   });
  return r;
}

Result evalTile(const HostTensor &x, RankedTensorType type) {
  HostTensor r = HostTensor::zeros(type.getShape(), x.elementType);
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t, 4> strides = stridesOf(x.shape), index(shape.size(), 0);
  for (int64_t i = 0, n = r.numElements(); i < n; ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      src += (index[d] % x.shape[d]) * strides[d];
    if (r.isFloat())
      r.floats[i] = x.floats[src];
    else
      r.ints[i] = x.ints[src];
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return r;
}

/// mod (`truncated`: fmod = 1) or floor_div.
Result evalDivision(const HostTensor &a, const HostTensor &b,
                    RankedTensorType type, bool isMod, bool truncated) {
  HostTensor r = HostTensor::zeros(type.getShape(), type.getElementType());
  bool ok = true;
  forEachBroadcast(
      type.getShape(), {&a, &b}, [&](int64_t i, ArrayRef<int64_t> at) {
        if (r.isFloat()) {
          double x = a.floats[at[0]], y = b.floats[at[1]];
          if (!isMod) {
            r.floats[i] = std::floor(x / y);
            return;
          }
          double m = std::fmod(x, y);
          if (!truncated && m != 0 && ((m < 0) != (y < 0)))
            m += y;
          r.floats[i] = m;
          return;
        }
        int64_t x = a.ints[at[0]], y = b.ints[at[1]];
        if (y == 0 || (y == -1 && x == std::numeric_limits<int64_t>::min())) {
          ok = false; // left to the kernel's error
          return;
        }
        int64_t q = x / y, m = x % y;
        bool adjust = m != 0 && ((m < 0) != (y < 0));
        r.ints[i] =
            isMod ? (adjust && !truncated ? m + y : m) : (adjust ? q - 1 : q);
      });
  if (!ok)
    return std::nullopt;
  return r;
}

Result evalFloatPredicate(const HostTensor &x, RankedTensorType type,
                          const std::function<bool(double)> &pred) {
  HostTensor r = HostTensor::zeros(type.getShape(), type.getElementType());
  for (int64_t i = 0, n = x.numElements(); i < n; ++i)
    r.ints[i] = pred(x.floats[i]);
  return r;
}

} // namespace

std::optional<HostTensor> gopt::evaluateLogicOp(Operation *op,
                                                ArrayRef<HostTensor> in,
                                                RankedTensorType type) {
  auto compare = [&](std::function<bool(int)> fromOrder) {
    return evalCompare(in[0], in[1], type, fromOrder);
  };
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([&](EqualOp) { return compare([](int o) { return o == 0; }); })
      .Case([&](LessOp) { return compare([](int o) { return o == -1; }); })
      .Case([&](LessEqualOp) {
        return compare([](int o) { return o == -1 || o == 0; });
      })
      .Case([&](GreaterOp) { return compare([](int o) { return o == 1; }); })
      .Case([&](GreaterEqualOp) {
        return compare([](int o) { return o == 1 || o == 0; });
      })
      .Case([&](AndOp) {
        return evalLogical(in, type, [](bool a, bool b) { return a && b; });
      })
      .Case([&](OrOp) {
        return evalLogical(in, type, [](bool a, bool b) { return a || b; });
      })
      .Case([&](XorOp) {
        return evalLogical(in, type, [](bool a, bool b) { return a != b; });
      })
      .Case([&](NotOp) -> Result {
        HostTensor r = in[0];
        for (int64_t &v : r.ints)
          v = v == 0;
        return r;
      })
      .Case([&](WhereOp) {
        return evalGather({&in[0], &in[1], &in[2]}, in[1], type,
                          [&](ArrayRef<int64_t> at) {
                            return in[0].ints[at[0]] ? std::pair(&in[1], at[1])
                                                     : std::pair(&in[2], at[2]);
                          });
      })
      .Case([&](ExpandOp) {
        return evalGather({&in[0]}, in[0], type, [&](ArrayRef<int64_t> at) {
          return std::pair(&in[0], at[0]);
        });
      })
      .Case([&](TileOp) { return evalTile(in[0], type); })
      .Case([&](ModOp mod) {
        return evalDivision(in[0], in[1], type, /*isMod=*/true,
                            mod.getFmod() == 1);
      })
      .Case([&](FloorDivOp) {
        return evalDivision(in[0], in[1], type, /*isMod=*/false, false);
      })
      .Case([&](IsNaNOp) {
        return evalFloatPredicate(in[0], type,
                                  [](double v) { return std::isnan(v); });
      })
      .Case([&](IsInfOp isInf) {
        bool positive = isInf.getDetectPositive() != 0;
        bool negative = isInf.getDetectNegative() != 0;
        return evalFloatPredicate(in[0], type, [=](double v) {
          return std::isinf(v) && (v > 0 ? positive : negative);
        });
      })
      .Default([](Operation *) { return std::nullopt; });
}
