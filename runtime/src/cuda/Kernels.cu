//===- Kernels.cu - gopt's own CUDA kernels -------------------------------===//
//
// Elementwise (with broadcasting), activations, bias+activation, inference
// batch norm, strided gather (transpose, slice), pad, cast, reductions,
// pooling, NaN/Inf checks and int8 quantize/dequantize. Floating-point types
// compute in f32; integer types in int64. Every kernel uses a grid-stride
// loop.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"
#include "Launch.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <cstdint>

namespace gopt::runtime::cuda {
namespace {

//===----------------------------------------------------------------------===//
// Element access
//===----------------------------------------------------------------------===//

template <typename T> struct Acc { using type = float; };
template <> struct Acc<int32_t> { using type = int64_t; };
template <> struct Acc<int64_t> { using type = int64_t; };

template <typename T> __device__ __forceinline__ float toF(T v) {
  return static_cast<float>(v);
}
template <> __device__ __forceinline__ float toF(__half v) {
  return __half2float(v);
}
template <> __device__ __forceinline__ float toF(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T, typename A> __device__ __forceinline__ A load(T v) {
  if constexpr (std::is_same_v<A, float>)
    return toF(v);
  else
    return static_cast<A>(v);
}

template <typename T> __device__ __forceinline__ T fromF(float v) {
  return static_cast<T>(v);
}
template <> __device__ __forceinline__ __half fromF(float v) {
  return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 fromF(float v) {
  return __float2bfloat16_rn(v);
}

template <typename T, typename A> __device__ __forceinline__ T store(A v) {
  if constexpr (std::is_same_v<A, float>)
    return fromF<T>(v);
  else
    return static_cast<T>(v);
}

__device__ __forceinline__ int64_t offsetOf(const StridedIndex &index,
                                            int64_t i) {
  int64_t offset = 0;
  for (int d = index.rank - 1; d >= 0; --d) {
    int64_t q = i / index.dims[d];
    offset += (i - q * index.dims[d]) * index.strides[d];
    i = q;
  }
  return offset;
}

#define GRID_LOOP(i, n)                                                        \
  for (int64_t i =                                                             \
           blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;        \
       i < (n); i += static_cast<int64_t>(blockDim.x) * gridDim.x)

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

template <typename A>
__device__ __forceinline__ A binaryOp(BinaryKind op, A x, A y, int *errorFlag) {
  switch (op) {
  case BinaryKind::kAdd:
    return x + y;
  case BinaryKind::kSub:
    return x - y;
  case BinaryKind::kMul:
    return x * y;
  case BinaryKind::kDiv:
    if constexpr (std::is_same_v<A, float>) {
      return x / y;
    } else {
      if (y == 0) {
        atomicOr(errorFlag, 1);
        return 0;
      }
      return x / y;
    }
  case BinaryKind::kMax:
    if constexpr (std::is_same_v<A, float>)
      if (isnan(x) || isnan(y))
        return NAN;
    return x > y ? x : y;
  case BinaryKind::kMin:
    if constexpr (std::is_same_v<A, float>)
      if (isnan(x) || isnan(y))
        return NAN;
    return x < y ? x : y;
  case BinaryKind::kPow:
    if constexpr (std::is_same_v<A, float>)
      return static_cast<float>(
          pow(static_cast<double>(x), static_cast<double>(y)));
    else
      return static_cast<A>(
          pow(static_cast<double>(x), static_cast<double>(y)));
  case BinaryKind::kSqDiff:
    return (x - y) * (x - y);
  }
  return 0;
}

template <typename T>
__global__ void binarySameShape(BinaryKind op, const T *a, const T *b, T *out,
                                int64_t n, int *errorFlag) {
  using A = typename Acc<T>::type;
  GRID_LOOP(i, n) {
    out[i] = store<T, A>(
        binaryOp<A>(op, load<T, A>(a[i]), load<T, A>(b[i]), errorFlag));
  }
}

template <typename T>
__global__ void binaryBroadcast(BinaryKind op, const T *a, StridedIndex ai,
                                const T *b, StridedIndex bi, T *out, int64_t n,
                                int *errorFlag) {
  using A = typename Acc<T>::type;
  GRID_LOOP(i, n) {
    A x = load<T, A>(a[offsetOf(ai, i)]);
    A y = load<T, A>(b[offsetOf(bi, i)]);
    out[i] = store<T, A>(binaryOp<A>(op, x, y, errorFlag));
  }
}

template <typename T>
cudaError_t binaryTyped(BinaryKind op, const void *a, const StridedIndex *ai,
                        const void *b, const StridedIndex *bi, void *out,
                        int64_t n, int *errorFlag, cudaStream_t stream) {
  int64_t blocks = gridBlocks(n);
  if (!ai && !bi)
    binarySameShape<T><<<blocks, kBlockSize, 0, stream>>>(
        op, static_cast<const T *>(a), static_cast<const T *>(b),
        static_cast<T *>(out), n, errorFlag);
  else
    binaryBroadcast<T><<<blocks, kBlockSize, 0, stream>>>(
        op, static_cast<const T *>(a), ai ? *ai : StridedIndex{},
        static_cast<const T *>(b), bi ? *bi : StridedIndex{},
        static_cast<T *>(out), n, errorFlag);
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// Unary and bias + activation
//===----------------------------------------------------------------------===//

template <typename A>
__device__ __forceinline__ A unaryOp(UnaryKind op, A x, float p0, float p1) {
  if constexpr (std::is_same_v<A, float>) {
    switch (op) {
    case UnaryKind::kNone:
      return x;
    case UnaryKind::kRelu:
      return x > 0.f ? x : 0.f;
    case UnaryKind::kRelu6:
      return x < 0.f ? 0.f : (x > 6.f ? 6.f : x);
    case UnaryKind::kSigmoid:
      return 1.f / (1.f + expf(-x));
    case UnaryKind::kTanh:
      return tanhf(x);
    case UnaryKind::kExp:
      return expf(x);
    case UnaryKind::kLog:
      return logf(x);
    case UnaryKind::kSqrt:
      return sqrtf(x);
    case UnaryKind::kRsqrt:
      return 1.f / sqrtf(x);
    case UnaryKind::kNeg:
      return -x;
    case UnaryKind::kAbs:
      return fabsf(x);
    case UnaryKind::kErf:
      return erff(x);
    case UnaryKind::kGeluErf:
      return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case UnaryKind::kGeluTanh: {
      const float k = 0.79788456080286536f; // sqrt(2/pi)
      return 0.5f * x * (1.f + tanhf(k * (x + 0.044715f * x * x * x)));
    }
    case UnaryKind::kLeakyRelu:
      return x >= 0.f ? x : p0 * x;
    case UnaryKind::kClip: {
      // std::min(std::max(x, lo), hi) as the reference: NaN stays NaN.
      float v = x < p0 ? p0 : x;
      return p1 < v ? p1 : v;
    }
    }
    return x;
  } else {
    switch (op) {
    case UnaryKind::kRelu:
      return x > 0 ? x : 0;
    case UnaryKind::kRelu6:
      return x < 0 ? 0 : (x > 6 ? 6 : x);
    case UnaryKind::kNeg:
      return -x;
    case UnaryKind::kAbs:
      return x < 0 ? -x : x;
    case UnaryKind::kClip: {
      // As the reference: min(max(x, lo), hi) in double, then truncated.
      double v = static_cast<double>(x);
      v = v < p0 ? p0 : v;
      v = v > p1 ? p1 : v;
      return static_cast<A>(v);
    }
    default:
      return x;
    }
  }
}

template <typename T>
__global__ void unaryKernel(UnaryKind op, const T *x, T *y, int64_t n, float p0,
                            float p1) {
  using A = typename Acc<T>::type;
  GRID_LOOP(i, n) {
    y[i] = store<T, A>(unaryOp<A>(op, load<T, A>(x[i]), p0, p1));
  }
}

// Bias + activation after a convolution or matmul, on every element of a
// large activation: the channel index is the costly part. Index is uint32_t
// whenever the tensor allows it (a 64-bit division is emulated in dozens of
// instructions; on H200 it made this kernel slower than the convolution).
template <typename T, typename Index>
__global__ void biasActKernel(const T *x, const T *bias, T *y, Index n,
                              Index channels, Index inner, UnaryKind act,
                              float p0, float p1) {
  for (Index i = blockIdx.x * Index(blockDim.x) + threadIdx.x; i < n;
       i += Index(blockDim.x) * gridDim.x) {
    float v = toF(x[i]);
    if (bias)
      v += toF(bias[(i / inner) % channels]);
    y[i] = fromF<T>(unaryOp<float>(act, v, p0, p1));
  }
}

// Channels last (inner == 1) with 16-byte aligned data and channels a
// multiple of kVec: each thread moves 16 bytes, whose elements share one
// run of kVec consecutive channels.
template <typename T>
__global__ void biasActChannelsLastKernel(const T *x, const T *bias, T *y,
                                          uint32_t vectors,
                                          uint32_t channelVectors,
                                          UnaryKind act, float p0, float p1) {
  constexpr int kVec = 16 / sizeof(T);
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < vectors;
       v += blockDim.x * gridDim.x) {
    uint4 in = reinterpret_cast<const uint4 *>(x)[v];
    uint4 out;
    const T *e = reinterpret_cast<const T *>(&in);
    T *o = reinterpret_cast<T *>(&out);
    const T *b = bias ? bias + (v % channelVectors) * kVec : nullptr;
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      float value = toF(e[k]);
      if (b)
        value += toF(b[k]);
      o[k] = fromF<T>(unaryOp<float>(act, value, p0, p1));
    }
    reinterpret_cast<uint4 *>(y)[v] = out;
  }
}

template <typename T>
__global__ void batchNormKernel(const T *x, const T *scale, const T *offset,
                                const T *mean, const T *var, T *y, int64_t n,
                                int64_t channels, int64_t inner, float eps) {
  GRID_LOOP(i, n) {
    int64_t c = (i / inner) % channels;
    float s = toF(scale[c]) * rsqrtf(toF(var[c]) + eps);
    y[i] = fromF<T>((toF(x[i]) - toF(mean[c])) * s + toF(offset[c]));
  }
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void gatherKernel(const T *in, int64_t base, StridedIndex index,
                             T *out, int64_t n) {
  GRID_LOOP(i, n) { out[i] = in[base + offsetOf(index, i)]; }
}

struct PadDims {
  int64_t inDims[kMaxRank];
  int64_t before[kMaxRank];
};

template <typename T>
__global__ void padKernel(const T *in, PadDims pd, StridedIndex index,
                          PadMode mode, T fill, T *out, int64_t n) {
  GRID_LOOP(i, n) {
    int64_t rem = i, offset = 0;
    bool inside = true;
    for (int d = index.rank - 1; d >= 0; --d) {
      int64_t q = rem / index.dims[d];
      int64_t p = rem - q * index.dims[d] - pd.before[d];
      rem = q;
      int64_t size = pd.inDims[d];
      if (p < 0 || p >= size) {
        if (mode == PadMode::kConstant)
          inside = false;
        else if (mode == PadMode::kEdge)
          p = p < 0 ? 0 : size - 1;
        else
          p = p < 0 ? -p : 2 * (size - 1) - p;
      }
      offset += p * index.strides[d];
    }
    out[i] = inside ? in[offset] : fill;
  }
}

//===----------------------------------------------------------------------===//
// Cast (the reference's rules: float->int truncates and saturates, NaN->0;
// to bool: x != 0; int->int wraps)
//===----------------------------------------------------------------------===//

template <typename T> __device__ __forceinline__ double toD(T v) {
  return static_cast<double>(v);
}
template <> __device__ __forceinline__ double toD(__half v) {
  return __half2float(v);
}
template <> __device__ __forceinline__ double toD(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T> constexpr bool kIsFloat = std::is_floating_point_v<T>;
template <> constexpr bool kIsFloat<__half> = true;
template <> constexpr bool kIsFloat<__nv_bfloat16> = true;

template <typename D, typename S> __device__ __forceinline__ D convert(S v) {
  if constexpr (std::is_same_v<D, bool>) {
    return toD(v) != 0.0;
  } else if constexpr (std::is_same_v<D, __half>) {
    return __float2half_rn(static_cast<float>(toD(v)));
  } else if constexpr (std::is_same_v<D, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(toD(v)));
  } else if constexpr (std::is_floating_point_v<D>) {
    return static_cast<D>(toD(v));
  } else if constexpr (kIsFloat<S>) {
    double d = trunc(toD(v));
    if (isnan(d))
      return 0;
    if (d <= static_cast<double>(std::numeric_limits<D>::min()))
      return std::numeric_limits<D>::min();
    if (d >= static_cast<double>(std::numeric_limits<D>::max()))
      return std::numeric_limits<D>::max();
    return static_cast<D>(d);
  } else {
    return static_cast<D>(v);
  }
}

template <typename S, typename D>
__global__ void castKernel(const S *in, D *out, int64_t n) {
  GRID_LOOP(i, n) { out[i] = convert<D, S>(in[i]); }
}

template <typename S>
cudaError_t castFrom(DType to, const void *in, void *out, int64_t n,
                     cudaStream_t stream) {
  int64_t blocks = gridBlocks(n);
  const S *src = static_cast<const S *>(in);
#define CAST_TO(DT, D)                                                         \
  case DT:                                                                     \
    castKernel<S, D>                                                           \
        <<<blocks, kBlockSize, 0, stream>>>(src, static_cast<D *>(out), n);    \
    break;
  switch (to) {
    CAST_TO(DType::kF32, float)
    CAST_TO(DType::kF16, __half)
    CAST_TO(DType::kBF16, __nv_bfloat16)
    CAST_TO(DType::kI8, int8_t)
    CAST_TO(DType::kI32, int32_t)
    CAST_TO(DType::kI64, int64_t)
    CAST_TO(DType::kBool, bool)
    CAST_TO(DType::kU8, uint8_t)
  default:
    return cudaErrorInvalidValue;
  }
#undef CAST_TO
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// Reductions: a thread per output when there are many outputs, else a block
// per output with a shared-memory tree.
//===----------------------------------------------------------------------===//

template <typename A> __device__ __forceinline__ A reduceInit(ReduceKind op) {
  if (op == ReduceKind::kMax) {
    if constexpr (std::is_same_v<A, float>)
      return -INFINITY;
    else
      return std::numeric_limits<A>::lowest();
  }
  return 0;
}

template <typename A>
__device__ __forceinline__ A reduceCombine(ReduceKind op, A acc, A v) {
  if (op != ReduceKind::kMax)
    return acc + v;
  if constexpr (std::is_same_v<A, float>)
    if (isnan(v) || isnan(acc))
      return NAN;
  return v > acc ? v : acc;
}

template <typename T, typename A>
__device__ __forceinline__ T reduceFinish(ReduceKind op, A acc, int64_t count) {
  if (op == ReduceKind::kMean && count > 0)
    acc = acc / static_cast<A>(count);
  return store<T, A>(acc);
}

template <typename T>
__global__ void reduceThreadPerOutput(ReduceKind op, const T *in, T *out,
                                      StridedIndex oi, StridedIndex ri,
                                      int64_t outCount, int64_t redCount) {
  using A = typename Acc<T>::type;
  GRID_LOOP(o, outCount) {
    const T *base = in + offsetOf(oi, o);
    A acc = reduceInit<A>(op);
    for (int64_t r = 0; r < redCount; ++r)
      acc = reduceCombine<A>(op, acc, load<T, A>(base[offsetOf(ri, r)]));
    out[o] = reduceFinish<T, A>(op, acc, redCount);
  }
}

template <typename T>
__global__ void reduceBlockPerOutput(ReduceKind op, const T *in, T *out,
                                     StridedIndex oi, StridedIndex ri,
                                     int64_t outCount, int64_t redCount) {
  using A = typename Acc<T>::type;
  __shared__ A partial[kBlockSize];
  for (int64_t o = blockIdx.x; o < outCount; o += gridDim.x) {
    const T *base = in + offsetOf(oi, o);
    A acc = reduceInit<A>(op);
    for (int64_t r = threadIdx.x; r < redCount; r += blockDim.x)
      acc = reduceCombine<A>(op, acc, load<T, A>(base[offsetOf(ri, r)]));
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s)
        partial[threadIdx.x] = reduceCombine<A>(op, partial[threadIdx.x],
                                                partial[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0)
      out[o] = reduceFinish<T, A>(op, partial[0], redCount);
    __syncthreads();
  }
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void poolKernel(PoolParams p, const T *in, T *out, int64_t total) {
  GRID_LOOP(i, total) {
    int64_t n, c, oh, ow;
    if (p.nchw) {
      ow = i % p.ow;
      oh = (i / p.ow) % p.oh;
      c = (i / (p.ow * p.oh)) % p.c;
      n = i / (p.ow * p.oh * p.c);
    } else {
      c = i % p.c;
      ow = (i / p.c) % p.ow;
      oh = (i / (p.c * p.ow)) % p.oh;
      n = i / (p.c * p.ow * p.oh);
    }
    int64_t h0 = oh * p.sh - p.padTop, w0 = ow * p.sw - p.padLeft;
    int64_t hs = h0 > 0 ? h0 : 0, ws = w0 > 0 ? w0 : 0;
    int64_t he = h0 + p.kh < p.h ? h0 + p.kh : p.h;
    int64_t we = w0 + p.kw < p.w ? w0 + p.kw : p.w;
    float acc = p.isMax ? -INFINITY : 0.f;
    int64_t count = 0;
    for (int64_t ih = hs; ih < he; ++ih)
      for (int64_t iw = ws; iw < we; ++iw) {
        int64_t at = p.nchw ? ((n * p.c + c) * p.h + ih) * p.w + iw
                            : ((n * p.h + ih) * p.w + iw) * p.c + c;
        float v = toF(in[at]);
        acc = p.isMax ? ((isnan(v) || v > acc) ? v : acc) : acc + v;
        ++count;
      }
    if (!p.isMax) {
      if (p.countIncludePad) {
        int64_t hEnd =
            h0 + p.kh < p.h + p.padBottom ? h0 + p.kh : p.h + p.padBottom;
        int64_t wEnd =
            w0 + p.kw < p.w + p.padRight ? w0 + p.kw : p.w + p.padRight;
        count =
            (hEnd - h0 > 0 ? hEnd - h0 : 0) * (wEnd - w0 > 0 ? wEnd - w0 : 0);
      }
      acc = count ? acc / static_cast<float>(count) : 0.f;
    }
    out[i] = fromF<T>(acc);
  }
}

//===----------------------------------------------------------------------===//
// NaN / Inf check
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void checkNumericsKernel(const T *x, int64_t n, int *flag) {
  int found = 0;
  GRID_LOOP(i, n) {
    float v = toF(x[i]);
    if (isnan(v))
      found |= 1;
    else if (isinf(v))
      found |= 2;
  }
  if (found)
    atomicOr(flag, found);
}

//===----------------------------------------------------------------------===//
// Quantization (int8, zero point 0)
//===----------------------------------------------------------------------===//

// The reference's quantize of one value: IEEE division (__fdiv_rn, also
// under fast-math flags), rintf rounds half to even, NaN -> 0, then the
// clamp; the clamped value is an exact integer in [-128, 127].
__device__ __forceinline__ int8_t quantizeValue(float x, float scale) {
  float r = rintf(__fdiv_rn(x, scale));
  if (isnan(r))
    return 0;
  r = fminf(127.f, fmaxf(-128.f, r));
  return static_cast<int8_t>(__float2int_rz(r));
}

template <bool PerChannel>
__device__ __forceinline__ float scaleOf(const float *scales, int64_t i,
                                         int64_t channels, int64_t inner) {
  if constexpr (PerChannel)
    return scales[(i / inner) % channels];
  else
    return scales[0];
}

// Grid-stride over max(n, numScales): index i quantizes element i (i < n)
// and checks scale i (i < numScales).
template <bool PerChannel>
__global__ void quantizeKernel(const float *x, const float *scales, int8_t *q,
                               int64_t n, int64_t channels, int64_t inner,
                               int64_t numScales, int *errorFlag) {
  int64_t total = n > numScales ? n : numScales;
  GRID_LOOP(i, total) {
    if (i < numScales) {
      float s = scales[i];
      if (!(s > 0.f) || isinf(s)) {
        int64_t c =
            i < kQuantizeBadScaleBase - 1 ? i : kQuantizeBadScaleBase - 1;
        atomicMax(errorFlag, kQuantizeBadScaleBase - static_cast<int>(c));
      }
    }
    if (i < n)
      q[i] =
          quantizeValue(x[i], scaleOf<PerChannel>(scales, i, channels, inner));
  }
}

template <bool PerChannel>
__global__ void dequantizeKernel(const int8_t *q, const float *scales, float *y,
                                 int64_t n, int64_t channels, int64_t inner) {
  GRID_LOOP(i, n) {
    // One rounded product, never contracted with anything.
    y[i] = __fmul_rn(static_cast<float>(q[i]),
                     scaleOf<PerChannel>(scales, i, channels, inner));
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

bool isFloatKernelType(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}
bool isNumericKernelType(DType dtype) {
  return isFloatKernelType(dtype) || dtype == DType::kI32 ||
         dtype == DType::kI64;
}

// Calls BODY with `T` bound to the C++ type of a numeric kernel type.
#define DISPATCH_NUMERIC(dtype, ...)                                           \
  switch (dtype) {                                                             \
  case DType::kF32: {                                                          \
    using T = float;                                                           \
    __VA_ARGS__;                                                               \
  }                                                                            \
  case DType::kF16: {                                                          \
    using T = __half;                                                          \
    __VA_ARGS__;                                                               \
  }                                                                            \
  case DType::kBF16: {                                                         \
    using T = __nv_bfloat16;                                                   \
    __VA_ARGS__;                                                               \
  }                                                                            \
  case DType::kI32: {                                                          \
    using T = int32_t;                                                         \
    __VA_ARGS__;                                                               \
  }                                                                            \
  case DType::kI64: {                                                          \
    using T = int64_t;                                                         \
    __VA_ARGS__;                                                               \
  }                                                                            \
  default:                                                                     \
    return cudaErrorInvalidValue;                                              \
  }

#define DISPATCH_FLOAT(dtype, ...)                                             \
  switch (dtype) {                                                             \
  case DType::kF32: {                                                          \
    using T = float;                                                           \
    __VA_ARGS__;                                                               \
  }                                                                            \
  case DType::kF16: {                                                          \
    using T = __half;                                                          \
    __VA_ARGS__;                                                               \
  }                                                                            \
  case DType::kBF16: {                                                         \
    using T = __nv_bfloat16;                                                   \
    __VA_ARGS__;                                                               \
  }                                                                            \
  default:                                                                     \
    return cudaErrorInvalidValue;                                              \
  }

cudaError_t launchBinary(BinaryKind op, DType dtype, const void *a,
                         const StridedIndex *aIndex, const void *b,
                         const StridedIndex *bIndex, void *out, int64_t n,
                         int *errorFlag, cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  DISPATCH_NUMERIC(dtype, return binaryTyped<T>(op, a, aIndex, b, bIndex, out,
                                                n, errorFlag, stream))
}

cudaError_t launchUnary(UnaryKind op, DType dtype, const void *x, void *y,
                        int64_t n, float p0, float p1, cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  DISPATCH_NUMERIC(dtype, {
    unaryKernel<T><<<gridBlocks(n), kBlockSize, 0, stream>>>(
        op, static_cast<const T *>(x), static_cast<T *>(y), n, p0, p1);
    return cudaGetLastError();
  })
}

cudaError_t launchBiasActivation(DType dtype, const void *x, const void *bias,
                                 void *y, int64_t n, int64_t channels,
                                 int64_t inner, UnaryKind act, float p0,
                                 float p1, cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  auto aligned = [](const void *p) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0;
  };
  DISPATCH_FLOAT(dtype, {
    constexpr int kVec = 16 / sizeof(T);
    // i + stride stays below 2^32 (the stride is below 2^31).
    bool small = n < (int64_t(1) << 31);
    if (small && inner == 1 && channels % kVec == 0 && n % kVec == 0 &&
        aligned(x) && aligned(y) && (!bias || aligned(bias))) {
      uint32_t vectors = uint32_t(n / kVec);
      biasActChannelsLastKernel<T>
          <<<gridBlocks(vectors), kBlockSize, 0, stream>>>(
              static_cast<const T *>(x), static_cast<const T *>(bias),
              static_cast<T *>(y), vectors, uint32_t(channels / kVec), act, p0,
              p1);
    } else if (small) {
      biasActKernel<T, uint32_t><<<gridBlocks(n), kBlockSize, 0, stream>>>(
          static_cast<const T *>(x), static_cast<const T *>(bias),
          static_cast<T *>(y), uint32_t(n), uint32_t(channels), uint32_t(inner),
          act, p0, p1);
    } else {
      biasActKernel<T, int64_t><<<gridBlocks(n), kBlockSize, 0, stream>>>(
          static_cast<const T *>(x), static_cast<const T *>(bias),
          static_cast<T *>(y), n, channels, inner, act, p0, p1);
    }
    return cudaGetLastError();
  })
}

// One thread per output element; in NHWC consecutive threads take
// consecutive channels, so the loads of a tap are coalesced.
struct DepthwiseIndexing {
  uint32_t channels, h, w, outH, outW, kh, kw, strideH, strideW, padH, padW,
      dilationH, dilationW;
};

template <typename T, bool Nchw>
__global__ void depthwiseConvKernel(const T *x, const T *w, const T *bias, T *y,
                                    uint32_t total, DepthwiseIndexing p,
                                    UnaryKind act, float p0, float p1) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += blockDim.x * gridDim.x) {
    uint32_t c, ox, oy, n, rest;
    if (Nchw) {
      ox = i % p.outW;
      rest = i / p.outW;
      oy = rest % p.outH;
      rest /= p.outH;
      c = rest % p.channels;
      n = rest / p.channels;
    } else {
      c = i % p.channels;
      rest = i / p.channels;
      ox = rest % p.outW;
      rest /= p.outW;
      oy = rest % p.outH;
      n = rest / p.outH;
    }
    const T *filter = w + c * p.kh * p.kw;
    float sum = 0.f;
    int iy0 = int(oy * p.strideH) - int(p.padH);
    int ix0 = int(ox * p.strideW) - int(p.padW);
    for (uint32_t ky = 0; ky < p.kh; ++ky) {
      int iy = iy0 + int(ky * p.dilationH);
      if (iy < 0 || iy >= int(p.h))
        continue;
      for (uint32_t kx = 0; kx < p.kw; ++kx) {
        int ix = ix0 + int(kx * p.dilationW);
        if (ix < 0 || ix >= int(p.w))
          continue;
        uint32_t at = Nchw ? ((n * p.channels + c) * p.h + iy) * p.w + ix
                           : ((n * p.h + iy) * p.w + ix) * p.channels + c;
        sum += toF(x[at]) * toF(filter[ky * p.kw + kx]);
      }
    }
    if (bias)
      sum += toF(bias[c]);
    y[i] = fromF<T>(unaryOp<float>(act, sum, p0, p1));
  }
}

// NHWC with channels a multiple of V = 16 bytes of T and aligned data:
// each thread computes V consecutive channels of one output position from
// 16-byte loads of each tap.
template <typename T>
__global__ void
depthwiseConvNhwcVectorKernel(const T *x, const T *w, const T *bias, T *y,
                              uint32_t vectors, DepthwiseIndexing p,
                              UnaryKind act, float p0, float p1) {
  constexpr int V = 16 / sizeof(T);
  uint32_t channelVectors = p.channels / V;
  uint32_t taps = p.kh * p.kw;
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < vectors;
       v += blockDim.x * gridDim.x) {
    uint32_t c = (v % channelVectors) * V;
    uint32_t rest = v / channelVectors;
    uint32_t ox = rest % p.outW;
    rest /= p.outW;
    uint32_t oy = rest % p.outH;
    uint32_t n = rest / p.outH;
    float sum[V];
#pragma unroll
    for (int j = 0; j < V; ++j)
      sum[j] = 0.f;
    int iy0 = int(oy * p.strideH) - int(p.padH);
    int ix0 = int(ox * p.strideW) - int(p.padW);
    for (uint32_t ky = 0; ky < p.kh; ++ky) {
      int iy = iy0 + int(ky * p.dilationH);
      if (iy < 0 || iy >= int(p.h))
        continue;
      for (uint32_t kx = 0; kx < p.kw; ++kx) {
        int ix = ix0 + int(kx * p.dilationW);
        if (ix < 0 || ix >= int(p.w))
          continue;
        uint4 in = *reinterpret_cast<const uint4 *>(
            x + ((n * p.h + iy) * p.w + ix) * p.channels + c);
        const T *e = reinterpret_cast<const T *>(&in);
        const T *tap = w + c * taps + ky * p.kw + kx;
#pragma unroll
        for (int j = 0; j < V; ++j)
          sum[j] += toF(e[j]) * toF(tap[j * taps]);
      }
    }
    uint4 out;
    T *o = reinterpret_cast<T *>(&out);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      float value = bias ? sum[j] + toF(bias[c + j]) : sum[j];
      o[j] = fromF<T>(unaryOp<float>(act, value, p0, p1));
    }
    reinterpret_cast<uint4 *>(y)[v] = out;
  }
}

bool depthwiseConvFits(const DepthwiseConvShape &s) {
  const int64_t limit = int64_t(1) << 31;
  return s.n * s.channels * s.h * s.w < limit &&
         s.n * s.channels * s.outH * s.outW < limit &&
         s.channels * s.kh * s.kw < limit &&
         (s.outH - 1) * s.strideH + (s.kh - 1) * s.dilationH < limit &&
         (s.outW - 1) * s.strideW + (s.kw - 1) * s.dilationW < limit &&
         s.padH < limit && s.padW < limit;
}

cudaError_t launchDepthwiseConv(DType dtype, const void *x, const void *w,
                                const void *bias, void *y,
                                const DepthwiseConvShape &s, UnaryKind act,
                                float p0, float p1, cudaStream_t stream) {
  if (!depthwiseConvFits(s))
    return cudaErrorInvalidValue;
  uint32_t total = uint32_t(s.n * s.channels * s.outH * s.outW);
  if (total == 0)
    return cudaSuccess;
  DepthwiseIndexing p{
      uint32_t(s.channels), uint32_t(s.h),       uint32_t(s.w),
      uint32_t(s.outH),     uint32_t(s.outW),    uint32_t(s.kh),
      uint32_t(s.kw),       uint32_t(s.strideH), uint32_t(s.strideW),
      uint32_t(s.padH),     uint32_t(s.padW),    uint32_t(s.dilationH),
      uint32_t(s.dilationW)};
  DISPATCH_FLOAT(dtype, {
    auto *xt = static_cast<const T *>(x);
    auto *wt = static_cast<const T *>(w);
    auto *bt = static_cast<const T *>(bias);
    auto *yt = static_cast<T *>(y);
    constexpr int kVec = 16 / sizeof(T);
    auto aligned = [](const void *ptr) {
      return reinterpret_cast<uintptr_t>(ptr) % 16 == 0;
    };
    if (!s.nchw && s.channels % kVec == 0 && aligned(x) && aligned(y))
      depthwiseConvNhwcVectorKernel<T>
          <<<gridBlocks(total / kVec), kBlockSize, 0, stream>>>(
              xt, wt, bt, yt, total / kVec, p, act, p0, p1);
    else if (s.nchw)
      depthwiseConvKernel<T, true>
          <<<gridBlocks(total), kBlockSize, 0, stream>>>(xt, wt, bt, yt, total,
                                                         p, act, p0, p1);
    else
      depthwiseConvKernel<T, false>
          <<<gridBlocks(total), kBlockSize, 0, stream>>>(xt, wt, bt, yt, total,
                                                         p, act, p0, p1);
    return cudaGetLastError();
  })
}

cudaError_t launchBatchNormInference(DType dtype, const void *x,
                                     const void *scale, const void *offset,
                                     const void *mean, const void *variance,
                                     void *y, int64_t n, int64_t channels,
                                     int64_t inner, float epsilon,
                                     cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  DISPATCH_FLOAT(dtype, {
    batchNormKernel<T><<<gridBlocks(n), kBlockSize, 0, stream>>>(
        static_cast<const T *>(x), static_cast<const T *>(scale),
        static_cast<const T *>(offset), static_cast<const T *>(mean),
        static_cast<const T *>(variance), static_cast<T *>(y), n, channels,
        inner, epsilon);
    return cudaGetLastError();
  })
}

cudaError_t launchGather(size_t elemSize, const void *in, int64_t base,
                         const StridedIndex &index, void *out, int64_t n,
                         cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  int64_t blocks = gridBlocks(n);
#define GATHER(T)                                                              \
  gatherKernel<T><<<blocks, kBlockSize, 0, stream>>>(                          \
      static_cast<const T *>(in), base, index, static_cast<T *>(out), n);      \
  break;
  switch (elemSize) {
  case 1:
    GATHER(uint8_t)
  case 2:
    GATHER(uint16_t)
  case 4:
    GATHER(uint32_t)
  case 8:
    GATHER(uint64_t)
  default:
    return cudaErrorInvalidValue;
  }
#undef GATHER
  return cudaGetLastError();
}

cudaError_t launchPad(size_t elemSize, const void *in, const int64_t *inDims,
                      const int64_t *padBefore, const StridedIndex &index,
                      PadMode mode, const void *fill, void *out, int64_t n,
                      cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  PadDims pd{};
  for (int d = 0; d < index.rank; ++d) {
    pd.inDims[d] = inDims[d];
    pd.before[d] = padBefore[d];
  }
  int64_t blocks = gridBlocks(n);
#define PAD(T)                                                                 \
  {                                                                            \
    T f;                                                                       \
    memcpy(&f, fill, sizeof(T));                                               \
    padKernel<T><<<blocks, kBlockSize, 0, stream>>>(                           \
        static_cast<const T *>(in), pd, index, mode, f, static_cast<T *>(out), \
        n);                                                                    \
    break;                                                                     \
  }
  switch (elemSize) {
  case 1:
    PAD(uint8_t)
  case 2:
    PAD(uint16_t)
  case 4:
    PAD(uint32_t)
  case 8:
    PAD(uint64_t)
  default:
    return cudaErrorInvalidValue;
  }
#undef PAD
  return cudaGetLastError();
}

cudaError_t launchCast(DType from, DType to, const void *in, void *out,
                       int64_t n, cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  switch (from) {
  case DType::kF32:
    return castFrom<float>(to, in, out, n, stream);
  case DType::kF16:
    return castFrom<__half>(to, in, out, n, stream);
  case DType::kBF16:
    return castFrom<__nv_bfloat16>(to, in, out, n, stream);
  case DType::kI8:
    return castFrom<int8_t>(to, in, out, n, stream);
  case DType::kI32:
    return castFrom<int32_t>(to, in, out, n, stream);
  case DType::kI64:
    return castFrom<int64_t>(to, in, out, n, stream);
  case DType::kBool:
    return castFrom<bool>(to, in, out, n, stream);
  case DType::kU8:
    return castFrom<uint8_t>(to, in, out, n, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

cudaError_t launchReduce(ReduceKind op, DType dtype, const void *in, void *out,
                         const StridedIndex &outIndex,
                         const StridedIndex &reduceIndex, cudaStream_t stream) {
  int64_t outCount = 1, redCount = 1;
  for (int d = 0; d < outIndex.rank; ++d)
    outCount *= outIndex.dims[d];
  for (int d = 0; d < reduceIndex.rank; ++d)
    redCount *= reduceIndex.dims[d];
  if (outCount == 0)
    return cudaSuccess;
  bool threadPerOutput = outCount >= 4096 || redCount <= 32;
  DISPATCH_NUMERIC(dtype, {
    const T *src = static_cast<const T *>(in);
    T *dst = static_cast<T *>(out);
    if (threadPerOutput)
      reduceThreadPerOutput<T><<<gridBlocks(outCount), kBlockSize, 0, stream>>>(
          op, src, dst, outIndex, reduceIndex, outCount, redCount);
    else
      reduceBlockPerOutput<T>
          <<<static_cast<unsigned>(std::min<int64_t>(outCount, kMaxBlocks)),
             kBlockSize, 0, stream>>>(op, src, dst, outIndex, reduceIndex,
                                      outCount, redCount);
    return cudaGetLastError();
  })
}

cudaError_t launchPool(DType dtype, const PoolParams &params, const void *in,
                       void *out, cudaStream_t stream) {
  int64_t total = params.n * params.c * params.oh * params.ow;
  if (total == 0)
    return cudaSuccess;
  DISPATCH_FLOAT(dtype, {
    poolKernel<T><<<gridBlocks(total), kBlockSize, 0, stream>>>(
        params, static_cast<const T *>(in), static_cast<T *>(out), total);
    return cudaGetLastError();
  })
}

cudaError_t launchCheckNumerics(DType dtype, const void *x, int64_t n,
                                int *flag, cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  DISPATCH_FLOAT(dtype, {
    checkNumericsKernel<T><<<gridBlocks(n), kBlockSize, 0, stream>>>(
        static_cast<const T *>(x), n, flag);
    return cudaGetLastError();
  })
}

cudaError_t launchQuantize(const float *x, const float *scales, int8_t *q,
                           int64_t n, int64_t channels, int64_t inner,
                           int64_t numScales, int *errorFlag,
                           cudaStream_t stream) {
  int64_t total = std::max(n, numScales);
  if (total == 0)
    return cudaSuccess;
  if (numScales == 1)
    quantizeKernel<false><<<gridBlocks(total), kBlockSize, 0, stream>>>(
        x, scales, q, n, 1, 1, numScales, errorFlag);
  else
    quantizeKernel<true><<<gridBlocks(total), kBlockSize, 0, stream>>>(
        x, scales, q, n, channels, std::max<int64_t>(inner, 1), numScales,
        errorFlag);
  return cudaGetLastError();
}

cudaError_t launchDequantize(const int8_t *q, const float *scales, float *y,
                             int64_t n, int64_t channels, int64_t inner,
                             int64_t numScales, cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  if (numScales == 1)
    dequantizeKernel<false>
        <<<gridBlocks(n), kBlockSize, 0, stream>>>(q, scales, y, n, 1, 1);
  else
    dequantizeKernel<true><<<gridBlocks(n), kBlockSize, 0, stream>>>(
        q, scales, y, n, channels, std::max<int64_t>(inner, 1));
  return cudaGetLastError();
}

} // namespace gopt::runtime::cuda
