//===- TrainingKernels.cu - gopt's CUDA kernels of the training ops -------===//
//
// Losses, relu/pooling gradients, training batch norm and the optimizer
// updates (TrainingKernels.h). f32 data, double accumulation (as the
// reference kernels). Reductions are block trees in a fixed order, never
// atomics on values, so every run gives the same bits.
//
//===----------------------------------------------------------------------===//
#include "Launch.h"
#include "TrainingKernels.h"

#include <cfloat>
#include <climits>
#include <cstdint>

namespace gopt::runtime::cuda {
namespace {

// Power of two: the tree reductions halve it.
constexpr int kReduceThreads = 256;

#define GRID_LOOP(i, n)                                                        \
  for (int64_t i =                                                             \
           blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;        \
       i < (n); i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// The sum of every thread's `v` in a fixed tree order; all threads get it.
__device__ double blockSum(double v, double *shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  double total = shared[0];
  __syncthreads();
  return total;
}

// The max, NaN ignored (as std::max<double>(acc, x) with acc first).
__device__ double blockMax(double v, double *shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      shared[threadIdx.x] = fmax(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  double m = shared[0];
  __syncthreads();
  return m;
}

__device__ __forceinline__ int64_t maxI(int64_t a, int64_t b) {
  return a > b ? a : b;
}
__device__ __forceinline__ int64_t minI(int64_t a, int64_t b) {
  return a < b ? a : b;
}

__device__ __forceinline__ int64_t labelOf(const void *labels, bool labels64,
                                           int64_t row) {
  return labels64 ? static_cast<const int64_t *>(labels)[row]
                  : static_cast<const int32_t *>(labels)[row];
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// One block per row: max and log(sum(exp(logit - max))) of the row.
__device__ void rowLogSumExp(const float *row, int64_t classes, double *shared,
                             double &maxValue, double &logSum) {
  double m = -INFINITY;
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
    m = fmax(m, static_cast<double>(row[j]));
  maxValue = blockMax(m, shared);
  double s = 0;
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
    s += exp(static_cast<double>(row[j]) - maxValue);
  logSum = log(blockSum(s, shared));
}

// Checks the row's label (thread 0 reports the lowest bad row); -1 if bad.
__device__ int64_t checkedLabel(const void *labels, bool labels64, int64_t row,
                                int64_t classes, int *flag) {
  int64_t label = labelOf(labels, labels64, row);
  if (label < 0 || label >= classes) {
    if (threadIdx.x == 0)
      atomicMax(flag, kLabelErrorBase - static_cast<int>(row));
    return -1;
  }
  return label;
}

__global__ void crossEntropyRowsKernel(const float *logits, const void *labels,
                                       bool labels64, int64_t classes,
                                       double *rowLoss, int *flag) {
  __shared__ double shared[kReduceThreads];
  int64_t r = blockIdx.x;
  const float *row = logits + r * classes;
  int64_t label = checkedLabel(labels, labels64, r, classes, flag);
  double maxValue, logSum;
  rowLogSumExp(row, classes, shared, maxValue, logSum);
  if (threadIdx.x == 0)
    rowLoss[r] = label < 0 ? 0.0 : logSum - (row[label] - maxValue);
}

// One block: the mean of `n` doubles (0 when n is 0).
__global__ void meanKernel(const double *values, int64_t n, float *out) {
  __shared__ double shared[kReduceThreads];
  double s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    s += values[i];
  double total = blockSum(s, shared);
  if (threadIdx.x == 0)
    out[0] = static_cast<float>(n ? total / n : 0.0);
}

__global__ void crossEntropyGradKernel(const float *logits, const void *labels,
                                       bool labels64, int64_t rows,
                                       int64_t classes, float *grad,
                                       int *flag) {
  __shared__ double shared[kReduceThreads];
  int64_t r = blockIdx.x;
  const float *row = logits + r * classes;
  int64_t label = checkedLabel(labels, labels64, r, classes, flag);
  double maxValue, logSum;
  rowLogSumExp(row, classes, shared, maxValue, logSum);
  for (int64_t j = threadIdx.x; j < classes; j += blockDim.x) {
    double p = exp(static_cast<double>(row[j]) - maxValue - logSum);
    grad[r * classes + j] =
        static_cast<float>((p - (j == label ? 1.0 : 0.0)) / rows);
  }
}

__global__ void mseLossKernel(const float *p, const float *t, int64_t n,
                              float *loss) {
  __shared__ double shared[kReduceThreads];
  double s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    double d = static_cast<double>(p[i]) - t[i];
    s += d * d;
  }
  double total = blockSum(s, shared);
  if (threadIdx.x == 0)
    loss[0] = static_cast<float>(n ? total / n : 0.0);
}

__global__ void mseLossGradKernel(const float *p, const float *t, int64_t n,
                                  float *grad) {
  GRID_LOOP(i, n) {
    grad[i] = static_cast<float>(2 * (static_cast<double>(p[i]) - t[i]) / n);
  }
}

__global__ void reluGradKernel(const float *dy, const float *y, float *dx,
                               int64_t n) {
  GRID_LOOP(i, n) { dx[i] = y[i] > 0 ? dy[i] : 0.0f; }
}

//===----------------------------------------------------------------------===//
// Pooling gradients
//===----------------------------------------------------------------------===//

struct Pos4 {
  int64_t n, c, h, w;
};

__device__ __forceinline__ Pos4 position(const PoolParams &p, int64_t i) {
  Pos4 q;
  if (p.nchw) {
    q.w = i % p.w;
    i /= p.w;
    q.h = i % p.h;
    i /= p.h;
    q.c = i % p.c;
    q.n = i / p.c;
  } else {
    q.c = i % p.c;
    i /= p.c;
    q.w = i % p.w;
    i /= p.w;
    q.h = i % p.h;
    q.n = i / p.h;
  }
  return q;
}

__device__ __forceinline__ int64_t at(const PoolParams &p, int64_t n, int64_t c,
                                      int64_t h, int64_t w, int64_t height,
                                      int64_t width) {
  return p.nchw ? ((n * p.c + c) * height + h) * width + w
                : ((n * height + h) * width + w) * p.c + c;
}

// The windows (oh range, ow range) whose rows/columns cover input (h, w).
__device__ __forceinline__ void coveringWindows(int64_t pos, int64_t pad,
                                                int64_t k, int64_t s,
                                                int64_t outSize, int64_t &lo,
                                                int64_t &hi) {
  int64_t first = pos + pad - k + 1; // the lowest window start covering pos
  lo = first <= 0 ? 0 : (first + s - 1) / s;
  hi = minI((pos + pad) / s, outSize - 1);
}

__global__ void maxPoolGradKernel(PoolParams p, const float *x, const float *dy,
                                  float *dx, int64_t total) {
  GRID_LOOP(i, total) {
    Pos4 q = position(p, i);
    int64_t ohLo, ohHi, owLo, owHi;
    coveringWindows(q.h, p.padTop, p.kh, p.sh, p.oh, ohLo, ohHi);
    coveringWindows(q.w, p.padLeft, p.kw, p.sw, p.ow, owLo, owHi);
    double acc = 0;
    for (int64_t oh = ohLo; oh <= ohHi; ++oh)
      for (int64_t ow = owLo; ow <= owHi; ++ow) {
        // The element max_pool picks in this window (RefTraining.cpp's
        // order): the first maximum, a NaN beats everything, the last NaN
        // wins. This element is in the window, so it is not empty.
        int64_t h0 = oh * p.sh - p.padTop, w0 = ow * p.sw - p.padLeft;
        int64_t best = -1;
        float bestValue = 0;
        for (int64_t ih = maxI(h0, 0); ih < minI(h0 + p.kh, p.h); ++ih)
          for (int64_t iw = maxI(w0, 0); iw < minI(w0 + p.kw, p.w); ++iw) {
            int64_t j = at(p, q.n, q.c, ih, iw, p.h, p.w);
            float v = x[j];
            if (best < 0 || isnan(v) || v > bestValue) {
              best = j;
              bestValue = v;
            }
          }
        if (best == i)
          acc += dy[at(p, q.n, q.c, oh, ow, p.oh, p.ow)];
      }
    dx[i] = static_cast<float>(acc);
  }
}

__device__ __forceinline__ int64_t extent(int64_t begin, int64_t end) {
  return end > begin ? end - begin : 0;
}

__global__ void avgPoolGradKernel(PoolParams p, const float *dy, float *dx,
                                  int64_t total) {
  GRID_LOOP(i, total) {
    Pos4 q = position(p, i);
    int64_t ohLo, ohHi, owLo, owHi;
    coveringWindows(q.h, p.padTop, p.kh, p.sh, p.oh, ohLo, ohHi);
    coveringWindows(q.w, p.padLeft, p.kw, p.sw, p.ow, owLo, owHi);
    double acc = 0;
    for (int64_t oh = ohLo; oh <= ohHi; ++oh)
      for (int64_t ow = owLo; ow <= owHi; ++ow) {
        int64_t h0 = oh * p.sh - p.padTop, w0 = ow * p.sw - p.padLeft;
        // avgPoolCount (OpSchema.h).
        int64_t count = p.countIncludePad
                            ? extent(h0, minI(h0 + p.kh, p.h + p.padBottom)) *
                                  extent(w0, minI(w0 + p.kw, p.w + p.padRight))
                            : extent(maxI(h0, 0), minI(h0 + p.kh, p.h)) *
                                  extent(maxI(w0, 0), minI(w0 + p.kw, p.w));
        if (count > 0)
          acc += static_cast<double>(dy[at(p, q.n, q.c, oh, ow, p.oh, p.ow)]) /
                 count;
      }
    dx[i] = static_cast<float>(acc);
  }
}

//===----------------------------------------------------------------------===//
// Batch norm (training)
//===----------------------------------------------------------------------===//

__device__ __forceinline__ int64_t channelElement(int64_t m, int64_t c,
                                                  int64_t channels,
                                                  int64_t inner) {
  int64_t o = m / inner;
  return (o * channels + c) * inner + (m - o * inner);
}

// The sum of f(x) over channel c's `count` elements, in one block.
template <typename F>
__device__ double channelSum(const float *x, int64_t c, int64_t channels,
                             int64_t inner, int64_t count, F f,
                             double *shared) {
  double s = 0;
  for (int64_t m = threadIdx.x; m < count; m += blockDim.x)
    s += f(x[channelElement(m, c, channels, inner)]);
  return blockSum(s, shared);
}

// Channel c's results from its mean and its sum of squared deviations over
// `count` elements (the global batch's for cross_replica).
__device__ void finishBatchNormStats(int64_t c, double mu, double squares,
                                     double count, const float *runMean,
                                     const float *runVar, double momentum,
                                     float *mean, float *var, float *newRunMean,
                                     float *newRunVar) {
  double v = count ? squares / count : 0.0;
  double unbiased = count > 1 ? v * count / (count - 1) : v;
  mean[c] = static_cast<float>(mu);
  var[c] = static_cast<float>(v);
  newRunMean[c] =
      static_cast<float>(momentum * runMean[c] + (1 - momentum) * mu);
  newRunVar[c] =
      static_cast<float>(momentum * runVar[c] + (1 - momentum) * unbiased);
}

// sums[c] / sums[channels]: the mean from launchBatchNormSums' layout.
__device__ __forceinline__ double meanOfSums(const double *sums, int64_t c,
                                             int64_t channels) {
  double count = sums[channels];
  return count ? sums[c] / count : 0.0;
}

__global__ void batchNormStatsKernel(const float *x, const float *runMean,
                                     const float *runVar, int64_t channels,
                                     int64_t inner, int64_t count,
                                     double momentum, float *mean, float *var,
                                     float *newRunMean, float *newRunVar) {
  __shared__ double shared[kReduceThreads];
  int64_t c = blockIdx.x;
  double mu =
      count ? channelSum(
                  x, c, channels, inner, count,
                  [](float v) { return static_cast<double>(v); }, shared) /
                  count
            : 0.0;
  double sq = channelSum(
      x, c, channels, inner, count,
      [mu](float v) {
        double d = v - mu;
        return d * d;
      },
      shared);
  if (threadIdx.x == 0)
    finishBatchNormStats(c, mu, sq, count, runMean, runVar, momentum, mean, var,
                         newRunMean, newRunVar);
}

__global__ void batchNormSumsKernel(const float *x, int64_t channels,
                                    int64_t inner, int64_t count,
                                    double *sums) {
  __shared__ double shared[kReduceThreads];
  int64_t c = blockIdx.x;
  double s = channelSum(
      x, c, channels, inner, count,
      [](float v) { return static_cast<double>(v); }, shared);
  if (threadIdx.x == 0) {
    sums[c] = s;
    if (c == 0)
      sums[channels] = static_cast<double>(count);
  }
}

__global__ void batchNormSquaresKernel(const float *x, const double *sums,
                                       int64_t channels, int64_t inner,
                                       int64_t count, double *squares) {
  __shared__ double shared[kReduceThreads];
  int64_t c = blockIdx.x;
  double mu = meanOfSums(sums, c, channels);
  double sq = channelSum(
      x, c, channels, inner, count,
      [mu](float v) {
        double d = v - mu;
        return d * d;
      },
      shared);
  if (threadIdx.x == 0)
    squares[c] = sq;
}

__global__ void batchNormFinishKernel(const double *sums, const double *squares,
                                      int64_t channels, const float *runMean,
                                      const float *runVar, double momentum,
                                      float *mean, float *var,
                                      float *newRunMean, float *newRunVar) {
  GRID_LOOP(c, channels) {
    finishBatchNormStats(c, meanOfSums(sums, c, channels), squares[c],
                         sums[channels], runMean, runVar, momentum, mean, var,
                         newRunMean, newRunVar);
  }
}

__global__ void batchNormGradSumsKernel(const float *dy, const float *x,
                                        const float *mean, const float *var,
                                        double epsilon, int64_t channels,
                                        int64_t inner, int64_t count,
                                        double *sums, float *dscale,
                                        float *doffset) {
  __shared__ double shared[kReduceThreads];
  int64_t c = blockIdx.x;
  double mu = mean[c];
  double invStd = 1.0 / sqrt(static_cast<double>(var[c]) + epsilon);
  double sDy = 0, sDyXhat = 0;
  for (int64_t m = threadIdx.x; m < count; m += blockDim.x) {
    int64_t i = channelElement(m, c, channels, inner);
    sDy += dy[i];
    sDyXhat += dy[i] * ((x[i] - mu) * invStd);
  }
  sDy = blockSum(sDy, shared);
  sDyXhat = blockSum(sDyXhat, shared);
  if (threadIdx.x == 0) {
    sums[2 * c] = sDy;
    sums[2 * c + 1] = sDyXhat;
    if (c == 0)
      sums[2 * channels] = static_cast<double>(count);
    doffset[c] = static_cast<float>(sDy);
    dscale[c] = static_cast<float>(sDyXhat);
  }
}

__global__ void batchNormGradInputKernel(const float *dy, const float *x,
                                         const float *scale, const float *mean,
                                         const float *var, double epsilon,
                                         int64_t channels, int64_t inner,
                                         const double *sums, float *dx,
                                         int64_t total) {
  // The count after the sums: the global batch's for cross_replica.
  double count = sums[2 * channels];
  GRID_LOOP(i, total) {
    int64_t c = (i / inner) % channels;
    double invStd = 1.0 / sqrt(static_cast<double>(var[c]) + epsilon);
    double xhat = (x[i] - static_cast<double>(mean[c])) * invStd;
    dx[i] = static_cast<float>(scale[c] * invStd / count *
                               (count * static_cast<double>(dy[i]) -
                                sums[2 * c] - xhat * sums[2 * c + 1]));
  }
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

__global__ void sgdUpdateKernel(const float *p, const float *grad,
                                const float *vel, int64_t n, double lr,
                                double momentum, double weightDecay,
                                bool nesterov, float *newP, float *newV) {
  GRID_LOOP(i, n) {
    double g = grad[i] + weightDecay * p[i];
    double v = momentum * vel[i] + g;
    g = nesterov ? g + momentum * v : v;
    newV[i] = static_cast<float>(v);
    newP[i] = static_cast<float>(p[i] - lr * g);
  }
}

__global__ void adamUpdateKernel(const float *p, const float *grad,
                                 const float *m, const float *v,
                                 const float *step, int64_t n, double lr,
                                 double beta1, double beta2, double eps,
                                 double weightDecay, float *newP, float *newM,
                                 float *newV, int *flag) {
  // The bias corrections once per block (pow in double is not cheap).
  __shared__ double bc1, bc2;
  __shared__ bool valid;
  if (threadIdx.x == 0) {
    double t = step[0];
    valid = t >= 1;
    if (!valid && blockIdx.x == 0)
      atomicExch(flag, 1);
    bc1 = 1 - pow(beta1, t);
    bc2 = 1 - pow(beta2, t);
  }
  __syncthreads();
  if (!valid)
    return;
  double lrOverBc1 = lr / bc1, sqrtBc2 = sqrt(bc2);
  GRID_LOOP(i, n) {
    double g = grad[i] + weightDecay * p[i];
    double mi = beta1 * m[i] + (1 - beta1) * g;
    double vi = beta2 * v[i] + (1 - beta2) * g * g;
    double denom = sqrt(vi) / sqrtBc2 + eps;
    newM[i] = static_cast<float>(mi);
    newV[i] = static_cast<float>(vi);
    newP[i] = static_cast<float>(p[i] - lrOverBc1 * mi / denom);
  }
}

} // namespace

cudaError_t launchSoftmaxCrossEntropy(const float *logits, const void *labels,
                                      bool labels64, int64_t rows,
                                      int64_t classes, double *rowLoss,
                                      float *loss, int *errorFlag,
                                      cudaStream_t stream) {
  if (rows > 0)
    crossEntropyRowsKernel<<<rows, kReduceThreads, 0, stream>>>(
        logits, labels, labels64, classes, rowLoss, errorFlag);
  meanKernel<<<1, kReduceThreads, 0, stream>>>(rowLoss, rows, loss);
  return cudaGetLastError();
}

cudaError_t launchSoftmaxCrossEntropyGrad(const float *logits,
                                          const void *labels, bool labels64,
                                          int64_t rows, int64_t classes,
                                          float *grad, int *errorFlag,
                                          cudaStream_t stream) {
  if (rows > 0)
    crossEntropyGradKernel<<<rows, kReduceThreads, 0, stream>>>(
        logits, labels, labels64, rows, classes, grad, errorFlag);
  return cudaGetLastError();
}

cudaError_t launchMseLoss(const float *prediction, const float *target,
                          int64_t n, float *loss, cudaStream_t stream) {
  mseLossKernel<<<1, kReduceThreads, 0, stream>>>(prediction, target, n, loss);
  return cudaGetLastError();
}

cudaError_t launchMseLossGrad(const float *prediction, const float *target,
                              int64_t n, float *grad, cudaStream_t stream) {
  if (n > 0)
    mseLossGradKernel<<<gridBlocks(n), kBlockSize, 0, stream>>>(
        prediction, target, n, grad);
  return cudaGetLastError();
}

cudaError_t launchReluGrad(const float *dy, const float *y, float *dx,
                           int64_t n, cudaStream_t stream) {
  if (n > 0)
    reluGradKernel<<<gridBlocks(n), kBlockSize, 0, stream>>>(dy, y, dx, n);
  return cudaGetLastError();
}

cudaError_t launchMaxPoolGrad(const PoolParams &params, const float *x,
                              const float *dy, float *dx, cudaStream_t stream) {
  int64_t total = params.n * params.c * params.h * params.w;
  if (total > 0)
    maxPoolGradKernel<<<gridBlocks(total), kBlockSize, 0, stream>>>(
        params, x, dy, dx, total);
  return cudaGetLastError();
}

cudaError_t launchAvgPoolGrad(const PoolParams &params, const float *dy,
                              float *dx, cudaStream_t stream) {
  int64_t total = params.n * params.c * params.h * params.w;
  if (total > 0)
    avgPoolGradKernel<<<gridBlocks(total), kBlockSize, 0, stream>>>(params, dy,
                                                                    dx, total);
  return cudaGetLastError();
}

cudaError_t launchBatchNormStats(const float *x, const float *runMean,
                                 const float *runVar, int64_t outer,
                                 int64_t channels, int64_t inner,
                                 double momentum, float *mean, float *var,
                                 float *newRunMean, float *newRunVar,
                                 cudaStream_t stream) {
  if (channels > 0)
    batchNormStatsKernel<<<channels, kReduceThreads, 0, stream>>>(
        x, runMean, runVar, channels, inner, outer * inner, momentum, mean, var,
        newRunMean, newRunVar);
  return cudaGetLastError();
}

cudaError_t launchBatchNormSums(const float *x, int64_t outer, int64_t channels,
                                int64_t inner, double *sums,
                                cudaStream_t stream) {
  if (channels > 0)
    batchNormSumsKernel<<<channels, kReduceThreads, 0, stream>>>(
        x, channels, inner, outer * inner, sums);
  return cudaGetLastError();
}

cudaError_t launchBatchNormSquares(const float *x, const double *sums,
                                   int64_t outer, int64_t channels,
                                   int64_t inner, double *squares,
                                   cudaStream_t stream) {
  if (channels > 0)
    batchNormSquaresKernel<<<channels, kReduceThreads, 0, stream>>>(
        x, sums, channels, inner, outer * inner, squares);
  return cudaGetLastError();
}

cudaError_t launchBatchNormFinish(const double *sums, const double *squares,
                                  int64_t channels, const float *runMean,
                                  const float *runVar, double momentum,
                                  float *mean, float *var, float *newRunMean,
                                  float *newRunVar, cudaStream_t stream) {
  if (channels > 0)
    batchNormFinishKernel<<<gridBlocks(channels), kBlockSize, 0, stream>>>(
        sums, squares, channels, runMean, runVar, momentum, mean, var,
        newRunMean, newRunVar);
  return cudaGetLastError();
}

cudaError_t launchBatchNormGradSums(const float *dy, const float *x,
                                    const float *mean, const float *var,
                                    double epsilon, int64_t outer,
                                    int64_t channels, int64_t inner,
                                    double *sums, float *dscale, float *doffset,
                                    cudaStream_t stream) {
  if (channels > 0)
    batchNormGradSumsKernel<<<channels, kReduceThreads, 0, stream>>>(
        dy, x, mean, var, epsilon, channels, inner, outer * inner, sums, dscale,
        doffset);
  return cudaGetLastError();
}

cudaError_t launchBatchNormGradInput(const float *dy, const float *x,
                                     const float *scale, const float *mean,
                                     const float *var, double epsilon,
                                     int64_t outer, int64_t channels,
                                     int64_t inner, const double *sums,
                                     float *dx, cudaStream_t stream) {
  int64_t total = outer * inner * channels;
  if (total > 0)
    batchNormGradInputKernel<<<gridBlocks(total), kBlockSize, 0, stream>>>(
        dy, x, scale, mean, var, epsilon, channels, inner, sums, dx, total);
  return cudaGetLastError();
}

cudaError_t launchSgdUpdate(const float *param, const float *grad,
                            const float *velocity, int64_t n, double lr,
                            double momentum, double weightDecay, bool nesterov,
                            float *newParam, float *newVelocity,
                            cudaStream_t stream) {
  if (n > 0)
    sgdUpdateKernel<<<gridBlocks(n), kBlockSize, 0, stream>>>(
        param, grad, velocity, n, lr, momentum, weightDecay, nesterov, newParam,
        newVelocity);
  return cudaGetLastError();
}

cudaError_t launchAdamUpdate(const float *param, const float *grad,
                             const float *m, const float *v, const float *step,
                             int64_t n, double lr, double beta1, double beta2,
                             double epsilon, double weightDecay,
                             float *newParam, float *newM, float *newV,
                             int *errorFlag, cudaStream_t stream) {
  // At least one block, so that a bad step is reported even when n is 0.
  adamUpdateKernel<<<gridBlocks(n), kBlockSize, 0, stream>>>(
      param, grad, m, v, step, n, lr, beta1, beta2, epsilon, weightDecay,
      newParam, newM, newV, errorFlag);
  return cudaGetLastError();
}

} // namespace gopt::runtime::cuda
