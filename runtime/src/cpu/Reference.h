//===- Reference.h - Plumbing of the reference kernels ----------*- C++ -*-===//
//
// Reference kernels are plain functions: simple loops that are obviously
// right, the oracle the fast kernels and the compiler's passes are checked
// against. The wrapper converts f16/bf16 to f32 for ops that compute in
// floating point, so each function handles f32 (and integers where the op
// makes sense) only.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_REFERENCE_H
#define GOPT_RUNTIME_SRC_CPU_REFERENCE_H

#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/OpSchema.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gopt::runtime::ref {

struct RefContext {
  const plan::Op *op;
  uint64_t seed;  // the session's
  int opIndex;    // the op's index in the plan
  uint64_t calls; // how often the kernel ran before: varies dropout masks
  // Ops with data-dependent result shapes: where the kernel reports the
  // shapes of what it wrote (Kernel::actualResultShapes); null otherwise.
  std::vector<Shape> *actualShapes = nullptr;
  // The session's collectives (KernelConfig's): cross-replica batch norm.
  Communicator *communicator = nullptr;
  CommunicationQueue *communicationQueue = nullptr;
  OpAttrs attrs() const { return OpAttrs(*op); }
};

using RefFn = Status (*)(const RefContext &ctx, const std::vector<Tensor> &in,
                         std::vector<Tensor> &out);

enum class DTypeSupport {
  kFloat,      // f32; f16/bf16/f64 computed in f32
  kFloatF64,   // f32 and f64; f16/bf16 computed in f32
  kNumeric,    // f32 and integer types; f16/bf16/f64 computed in f32
  kNumericF64, // f32, f64 and integer types; f16/bf16 computed in f32
  kAny,        // the function handles every element type itself
};

void registerKernel(KernelRegistry &registry, const char *kind, RefFn fn,
                    DTypeSupport support);

void registerElementwiseKernels(KernelRegistry &registry);
void registerImageKernels(KernelRegistry &registry);
void registerIndexingKernels(KernelRegistry &registry);
void registerNNKernels(KernelRegistry &registry);
void registerNormKernels(KernelRegistry &registry);
void registerRnnKernels(KernelRegistry &registry);
void registerVolumeKernels(KernelRegistry &registry);
void registerSamplingKernels(KernelRegistry &registry);
void registerSignalKernels(KernelRegistry &registry);
void registerShapeKernels(KernelRegistry &registry);
void registerTrainingKernels(KernelRegistry &registry);
void registerUnaryMathKernels(KernelRegistry &registry);
void registerLogicKernels(KernelRegistry &registry);
void registerDynamicShapeKernels(KernelRegistry &registry);
void registerControlFlowKernels(KernelRegistry &registry);
void registerDataDependentKernels(KernelRegistry &registry);
void registerCollectiveKernels(KernelRegistry &registry);

/// Calls fn(T{}) with the C++ type of an element type the reference kernels
/// compute in (f16 and bf16 reach them as f32, converted by the wrapper; f64
/// reaches only kernels registered as kFloatF64/kNumericF64 or kAny).
template <typename Fn> Status visitElementType(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::kF32:
    return fn(float{});
  case DType::kI8:
    return fn(int8_t{});
  case DType::kI32:
    return fn(int32_t{});
  case DType::kI64:
    return fn(int64_t{});
  case DType::kU8:
    return fn(uint8_t{});
  case DType::kBool:
    return fn(bool{});
  case DType::kF64:
    return fn(double{});
  case DType::kI16:
    return fn(int16_t{});
  case DType::kU16:
    return fn(uint16_t{});
  case DType::kU32:
    return fn(uint32_t{});
  case DType::kU64:
    return fn(uint64_t{});
  default:
    return unimplemented("element type ", dtypeName(dtype),
                         " is not supported by the reference kernel");
  }
}

std::vector<int64_t> rowMajorStrides(const Shape &shape);

// A slice of an `input`-shaped row-major tensor as a strided gather: the
// element offset of its first element and, per dimension, the input stride
// of one output step.
struct SliceGather {
  int64_t base = 0;
  std::vector<int64_t> strides;
};
SliceGather sliceGather(const OpAttrs &attrs, const Shape &input);

// The index into a numpy-broadcast operand of shape `operand` for each
// element of a row-major block of shape `target` (operand aligned at the
// end).
std::vector<int64_t> broadcastIndices(const Shape &operand,
                                      const Shape &target);

// Index arithmetic of a rank-4 activation in NHWC or NCHW.
struct Layout4D {
  int64_t n, c, h, w;
  bool nchw;
  Layout4D(const Shape &s, bool nchwIn) : nchw(nchwIn) {
    n = s[0];
    c = nchw ? s[1] : s[3];
    h = nchw ? s[2] : s[1];
    w = nchw ? s[3] : s[2];
  }
  int64_t at(int64_t in, int64_t ic, int64_t ih, int64_t iw) const {
    return nchw ? ((in * c + ic) * h + ih) * w + iw
                : ((in * h + ih) * w + iw) * c + ic;
  }
};

// The window of a pooling op or its gradient (max_pool, avg_pool and their
// _grad) over x of shape `x`: kernel, strides and the pads SAME, VALID or
// EXPLICIT resolve to, with ceil_mode.
struct PoolWindow {
  bool nchw = false;
  std::vector<int64_t> kernel, strides;
  WindowDim h, w;
  bool includePad = false; // avg_pool's count_include_pad
  // The first input row and column of output (oh, ow)'s window.
  int64_t top(int64_t oh) const { return oh * strides[0] - h.padBefore; }
  int64_t left(int64_t ow) const { return ow * strides[1] - w.padBefore; }
};
StatusOr<PoolWindow> poolWindow(const OpAttrs &attrs, const Shape &x);

// Calls fn(outIndex, aIndex, bIndex) for every element of the numpy
// broadcast of shapes a and b into out.
template <typename Fn>
void forEachBroadcast(const Shape &out, const Shape &a, const Shape &b, Fn fn) {
  const int64_t total = numElements(out);
  const size_t rank = out.size();
  if (a == out && b == out) {
    for (int64_t i = 0; i < total; ++i)
      fn(i, i, i);
    return;
  }
  // Strides of a and b over the output's dims, 0 where they broadcast.
  std::vector<int64_t> sa(rank, 0), sb(rank, 0);
  std::vector<int64_t> stA = rowMajorStrides(a), stB = rowMajorStrides(b);
  for (size_t i = 0; i < rank; ++i) {
    size_t oa = rank - a.size(), ob = rank - b.size();
    if (i >= oa && a[i - oa] != 1)
      sa[i] = stA[i - oa];
    if (i >= ob && b[i - ob] != 1)
      sb[i] = stB[i - ob];
  }
  std::vector<int64_t> idx(rank, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t i = 0; i < total; ++i) {
    fn(i, ia, ib);
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      ia += sa[d];
      ib += sb[d];
      if (++idx[d] < out[d])
        break;
      ia -= sa[d] * out[d];
      ib -= sb[d] * out[d];
      idx[d] = 0;
    }
  }
}

} // namespace gopt::runtime::ref

#endif // GOPT_RUNTIME_SRC_CPU_REFERENCE_H
