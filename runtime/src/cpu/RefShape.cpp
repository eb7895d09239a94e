//===- RefShape.cpp - Reference reductions and data-movement kernels ------===//
//
// Data movement is element-type agnostic: it copies elements of
// dtypeSize() bytes.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include "gopt/runtime/LowPrecision.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace gopt::runtime::ref {
namespace {

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

enum class ReduceOp { kSum, kMean, kMax, kMin, kProd };

// For every input element, the flat index of the output element it reduces
// into (reduced dims contribute nothing).
std::vector<int64_t> reductionTargets(const Shape &shape,
                                      const std::vector<bool> &reduced) {
  int64_t rank = shape.size();
  std::vector<int64_t> outStride(rank, 0);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d)
    if (!reduced[d]) {
      outStride[d] = stride;
      stride *= shape[d];
    }
  int64_t total = numElements(shape);
  std::vector<int64_t> targets(total), idx(rank, 0);
  int64_t target = 0;
  for (int64_t i = 0; i < total; ++i) {
    targets[i] = target;
    for (int64_t d = rank - 1; d >= 0; --d) {
      target += outStride[d];
      if (++idx[d] < shape[d])
        break;
      target -= outStride[d] * shape[d];
      idx[d] = 0;
    }
  }
  return targets;
}

template <typename T>
void reduceTyped(ReduceOp op, const Tensor &x, Tensor &y,
                 const std::vector<int64_t> &targets) {
  // uint64 accumulates in itself: its values do not fit int64.
  using Acc = std::conditional_t<
      std::is_floating_point_v<T>, double,
      std::conditional_t<std::is_same_v<T, uint64_t>, uint64_t, int64_t>>;
  int64_t outCount = y.numElements();
  Acc init = Acc(0);
  if (op == ReduceOp::kProd)
    init = Acc(1);
  if (op == ReduceOp::kMax)
    init = std::is_floating_point_v<T> ? -std::numeric_limits<Acc>::infinity()
                                       : std::numeric_limits<Acc>::lowest();
  if (op == ReduceOp::kMin)
    init = std::is_floating_point_v<T> ? std::numeric_limits<Acc>::infinity()
                                       : std::numeric_limits<Acc>::max();
  std::vector<Acc> acc(outCount, init);
  const T *px = x.data<T>();
  for (size_t i = 0; i < targets.size(); ++i) {
    Acc v = px[i];
    Acc &a = acc[targets[i]];
    bool nan = false;
    if constexpr (std::is_floating_point_v<T>)
      nan = std::isnan(v);
    // max and min propagate NaN, as numpy's do.
    if (op == ReduceOp::kMax)
      a = (nan || v > a) ? v : a;
    else if (op == ReduceOp::kMin)
      a = (nan || v < a) ? v : a;
    else if (op == ReduceOp::kProd)
      a *= v;
    else
      a += v;
  }
  int64_t perOutput = outCount ? x.numElements() / outCount : 0;
  T *py = y.data<T>();
  for (int64_t i = 0; i < outCount; ++i)
    py[i] = static_cast<T>(op == ReduceOp::kMean && perOutput
                               ? acc[i] / static_cast<Acc>(perOutput)
                               : acc[i]);
}

template <ReduceOp Op>
Status reduceKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  const Tensor &x = in[0];
  std::vector<int64_t> axes = ctx.attrs().getInts("axes");
  std::vector<bool> reduced(x.rank(), axes.empty());
  for (int64_t a : axes)
    reduced[a < 0 ? a + x.rank() : a] = true;
  std::vector<int64_t> targets = reductionTargets(x.shape(), reduced);
  if (x.dtype() == DType::kBool)
    return unimplemented("element type bool");
  return visitElementType(x.dtype(), [&](auto zero) {
    reduceTyped<decltype(zero)>(Op, x, out[0], targets);
    return Status::success();
  });
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

Status copyKernel(const RefContext &, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  if (in[0].byteSize())
    std::memcpy(out[0].data(), in[0].data(), in[0].byteSize());
  return Status::success();
}

// Copies an n-d strided gather: out[idx] = in[base + sum(idx[d]*strides[d])]
// (strides in elements of the input).
void stridedGather(const Tensor &x, Tensor &y, int64_t base,
                   const std::vector<int64_t> &strides) {
  const Shape &shape = y.shape();
  size_t elem = dtypeSize(x.dtype());
  int64_t rank = shape.size(), total = y.numElements();
  const char *src = static_cast<const char *>(x.data());
  char *dst = static_cast<char *>(y.data());
  std::vector<int64_t> idx(rank, 0);
  int64_t offset = base;
  for (int64_t i = 0; i < total; ++i) {
    std::memcpy(dst + i * elem, src + offset * elem, elem);
    for (int64_t d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++idx[d] < shape[d])
        break;
      offset -= strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}

Status transposeKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  std::vector<int64_t> perm = ctx.attrs().getInts("perm");
  std::vector<int64_t> inStrides = rowMajorStrides(in[0].shape());
  std::vector<int64_t> strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    strides[i] = inStrides[perm[i]];
  stridedGather(in[0], out[0], 0, strides);
  return Status::success();
}

Status sliceKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  SliceGather gather = sliceGather(ctx.attrs(), in[0].shape());
  if (out[0].numElements())
    stridedGather(in[0], out[0], gather.base, gather.strides);
  return Status::success();
}

Status concatKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  const Shape &outShape = out[0].shape();
  int64_t rank = outShape.size();
  int64_t axis = ctx.attrs().getInt("axis");
  if (axis < 0)
    axis += rank;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= outShape[d];
  size_t elem = dtypeSize(out[0].dtype());
  // Each operand contributes a contiguous chunk per outer index.
  size_t outRow = out[0].byteSize() / std::max<int64_t>(outer, 1);
  char *dst = static_cast<char *>(out[0].data());
  size_t column = 0;
  for (const Tensor &t : in) {
    size_t chunk = outer ? t.numElements() / outer * elem : 0;
    const char *src = static_cast<const char *>(t.data());
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + o * outRow + column, src + o * chunk, chunk);
    column += chunk;
  }
  return Status::success();
}

Status padKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  OpAttrs attrs = ctx.attrs();
  std::vector<int64_t> pads = attrs.getInts("pads");
  std::string mode = attrs.getString("mode");
  const Tensor &x = in[0];
  Tensor &y = out[0];
  int64_t rank = x.rank(), total = y.numElements();
  size_t elem = dtypeSize(x.dtype());
  char fill[8] = {0};
  encodeElement(x.dtype(), attrs.getFloat("value"), fill);
  std::vector<int64_t> inStrides = rowMajorStrides(x.shape());
  const char *src = static_cast<const char *>(x.data());
  char *dst = static_cast<char *>(y.data());
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t offset = 0;
    bool inside = true;
    for (int64_t d = 0; d < rank && inside; ++d) {
      int64_t n = x.dim(d);
      int64_t p = idx[d] - pads[2 * d];
      if (p < 0 || p >= n) {
        if (mode == "constant")
          inside = false;
        else if (mode == "edge")
          p = p < 0 ? 0 : n - 1;
        else if (mode == "wrap") // periodic, pads may exceed n
          p = (p % n + n) % n;
        else // reflect without repeating the edge: -1 -> 1, n -> n-2
          p = p < 0 ? -p : 2 * (n - 1) - p;
      }
      offset += p * inStrides[d];
    }
    std::memcpy(dst + i * elem, inside ? src + offset * elem : fill, elem);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < y.dim(d))
        break;
      idx[d] = 0;
    }
  }
  return Status::success();
}

Status shapeKernel(const RefContext &, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  int64_t *dst = out[0].data<int64_t>();
  for (int64_t d = 0; d < in[0].rank(); ++d)
    dst[d] = in[0].dim(d);
  return Status::success();
}

} // namespace

void registerShapeKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  registerKernel(r, "reduce_sum", reduceKernel<ReduceOp::kSum>, D::kNumericF64);
  registerKernel(r, "reduce_mean", reduceKernel<ReduceOp::kMean>,
                 D::kNumericF64);
  registerKernel(r, "reduce_max", reduceKernel<ReduceOp::kMax>, D::kNumericF64);
  registerKernel(r, "reduce_min", reduceKernel<ReduceOp::kMin>, D::kNumericF64);
  registerKernel(r, "reduce_prod", reduceKernel<ReduceOp::kProd>,
                 D::kNumericF64);
  registerKernel(r, "reshape", copyKernel, D::kAny);
  registerKernel(r, "flatten", copyKernel, D::kAny);
  registerKernel(r, "transpose", transposeKernel, D::kAny);
  registerKernel(r, "concat", concatKernel, D::kAny);
  registerKernel(r, "slice", sliceKernel, D::kAny);
  registerKernel(r, "pad", padKernel, D::kAny);
  registerKernel(r, "shape", shapeKernel, D::kAny);
}

} // namespace gopt::runtime::ref
