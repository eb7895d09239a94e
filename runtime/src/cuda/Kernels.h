//===- Kernels.h - gopt's own CUDA kernels (launchers) ----------*- C++ -*-===//
//
// Host-side launchers of the kernels in Kernels.cu. Plain C++ types only, so
// that code compiled by the host compiler can call them. Each launcher
// enqueues its work on `stream` and returns cudaGetLastError().
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_KERNELS_H
#define GOPT_RUNTIME_SRC_CUDA_KERNELS_H

#include "gopt/runtime/Tensor.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gopt::runtime::cuda {

constexpr int kMaxRank = 8;

// Maps a flat index over `dims` (row-major) to an element offset through
// `strides` (one per dim; 0 broadcasts).
struct StridedIndex {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
};

enum class BinaryKind : int {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,
  kPow,
  kSqDiff
};

enum class UnaryKind : int {
  kNone, // identity
  kRelu,
  kRelu6,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kNeg,
  kAbs,
  kErf,
  kGeluErf,
  kGeluTanh,
  kLeakyRelu, // p0 = alpha
  kClip,      // p0 = min, p1 = max
};

enum class ReduceKind : int { kSum, kMean, kMax };

enum class PadMode : int { kConstant, kReflect, kEdge };

struct PoolParams {
  bool nchw = false;
  bool isMax = true;
  bool countIncludePad = false;
  int64_t n = 0, c = 0, h = 0, w = 0; // input
  int64_t oh = 0, ow = 0;             // output
  int64_t kh = 0, kw = 0, sh = 1, sw = 1;
  int64_t padTop = 0, padLeft = 0;
  int64_t padBottom = 0, padRight = 0;
};

// Whether the own kernels handle `dtype` for ops that compute in floating
// point (f32, f16, bf16) or numerically (those and i32, i64).
bool isFloatKernelType(DType dtype);
bool isNumericKernelType(DType dtype);

// out = a op b. `a`/`b` index the output's flat index through their
// StridedIndex (strides 0 where they broadcast); null index: same shape.
// `errorFlag` (device int) is set to 1 on integer division by zero.
cudaError_t launchBinary(BinaryKind op, DType dtype, const void *a,
                         const StridedIndex *aIndex, const void *b,
                         const StridedIndex *bIndex, void *out, int64_t n,
                         int *errorFlag, cudaStream_t stream);

// y = f(x) elementwise.
cudaError_t launchUnary(UnaryKind op, DType dtype, const void *x, void *y,
                        int64_t n, float p0, float p1, cudaStream_t stream);

// A depthwise convolution (groups = channels, one filter per channel), its
// input already padded where the pads are asymmetric. The filter is
// [channels, kh, kw] (the order of both OIHW and OHWI with one input
// channel per group).
struct DepthwiseConvShape {
  int64_t n = 0, channels = 0, h = 0, w = 0, outH = 0, outW = 0;
  int64_t kh = 0, kw = 0, strideH = 1, strideW = 1, padH = 0, padW = 0;
  int64_t dilationH = 1, dilationW = 1;
  bool nchw = false;
};
// Whether launchDepthwiseConv takes the shape (32-bit element indices).
bool depthwiseConvFits(const DepthwiseConvShape &s);
// y = act(conv(x, w) + bias) (bias may be null): one thread per output
// element, f32 sums.
cudaError_t launchDepthwiseConv(DType dtype, const void *x, const void *w,
                                const void *bias, void *y,
                                const DepthwiseConvShape &s, UnaryKind act,
                                float p0, float p1, cudaStream_t stream);

// y = act(x + bias[(i / inner) % channels]) (bias may be null).
cudaError_t launchBiasActivation(DType dtype, const void *x, const void *bias,
                                 void *y, int64_t n, int64_t channels,
                                 int64_t inner, UnaryKind act, float p0,
                                 float p1, cudaStream_t stream);

// y = (x - mean) * rsqrt(var + eps) * scale + offset along the channel.
cudaError_t launchBatchNormInference(DType dtype, const void *x,
                                     const void *scale, const void *offset,
                                     const void *mean, const void *variance,
                                     void *y, int64_t n, int64_t channels,
                                     int64_t inner, float epsilon,
                                     cudaStream_t stream);

// out[i] = in[base + offset(i)] for elements of `elemSize` bytes.
cudaError_t launchGather(size_t elemSize, const void *in, int64_t base,
                         const StridedIndex &index, void *out, int64_t n,
                         cudaStream_t stream);

// Pads `in` (dims inDims) into `out` (dims index.dims): index.strides are
// the input's row-major strides; padBefore per dim. `fill` holds the
// constant in the element type (elemSize bytes).
cudaError_t launchPad(size_t elemSize, const void *in, const int64_t *inDims,
                      const int64_t *padBefore, const StridedIndex &index,
                      PadMode mode, const void *fill, void *out, int64_t n,
                      cudaStream_t stream);

cudaError_t launchCast(DType from, DType to, const void *in, void *out,
                       int64_t n, cudaStream_t stream);

// One output element per flat index over `outIndex.dims` (input strides in
// outIndex.strides); each reduces the elements of `reduceIndex` (reduced
// dims and their input strides). Mean divides by the reduced count.
cudaError_t launchReduce(ReduceKind op, DType dtype, const void *in, void *out,
                         const StridedIndex &outIndex,
                         const StridedIndex &reduceIndex, cudaStream_t stream);

// Max/avg pooling with the semantics of docs/op-semantics.md (any padding,
// ceil_mode, count_include_pad).
cudaError_t launchPool(DType dtype, const PoolParams &params, const void *in,
                       void *out, cudaStream_t stream);

// Sets *flag to 1 if x holds NaN (bit 1) or Inf (bit 2).
cudaError_t launchCheckNumerics(DType dtype, const void *x, int64_t n,
                                int *flag, cudaStream_t stream);

// quantize / dequantize over the [outer, channels, inner] view of x (n
// elements), channel c using scales[c], or scales[0] for all when
// numScales is 1 (per tensor; channels and inner are then ignored).
// Bit-identical to the reference kernels (docs/op-semantics.md):
//   quantize:   q = clamp(rint(x / s), -128, 127), NaN -> 0 (IEEE division,
//               rounding half to even);
//   dequantize: y = float(q) * s (one IEEE product).
// launchQuantize also checks every scale (even when n is 0): a scale that
// is not finite and positive sets *errorFlag to kQuantizeBadScaleBase - c
// for the lowest such c (atomicMax), which quantizeBadScaleIndex inverts.
cudaError_t launchQuantize(const float *x, const float *scales, int8_t *q,
                           int64_t n, int64_t channels, int64_t inner,
                           int64_t numScales, int *errorFlag,
                           cudaStream_t stream);
cudaError_t launchDequantize(const int8_t *q, const float *scales, float *y,
                             int64_t n, int64_t channels, int64_t inner,
                             int64_t numScales, cudaStream_t stream);

// INT_MAX - c (at least 1): the larger the flag, the lower the index.
constexpr int kQuantizeBadScaleBase = 0x7fffffff;
inline int64_t quantizeBadScaleIndex(int flag) {
  return static_cast<int64_t>(kQuantizeBadScaleBase) - flag;
}

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_KERNELS_H
