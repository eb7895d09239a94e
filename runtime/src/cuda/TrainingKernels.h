//===- TrainingKernels.h - CUDA kernels of the training ops -----*- C++ -*-===//
//-*-===//
//
// Host-side launchers of TrainingKernels.cu: losses, elementwise and pooling
// gradients, training batch norm and the optimizer updates, all f32 (the
// training ops' master precision). Each launcher enqueues its work on
// `stream` and returns cudaGetLastError(). The reductions are deterministic
// (fixed block tree orders, no atomics on values), and accumulate in double
// as the reference kernels do.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_TRAININGKERNELS_H
#define GOPT_RUNTIME_SRC_CUDA_TRAININGKERNELS_H

#include "Kernels.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gopt::runtime::cuda {

// Error flags: a label outside [0, classes) sets the flag to
// kLabelErrorBase - row for the lowest such row (atomicMax), which
// labelErrorRow inverts.
constexpr int kLabelErrorBase = 0x7fffffff;
inline int64_t labelErrorRow(int flag) {
  return static_cast<int64_t>(kLabelErrorBase) - flag;
}

// softmax_cross_entropy: loss[0] = mean over rows of
// logsumexp(logits[r]) - logits[r, labels[r]]. `rowLoss` is scratch of
// `rows` doubles. Labels are i32 or (labels64) i64.
cudaError_t launchSoftmaxCrossEntropy(const float *logits, const void *labels,
                                      bool labels64, int64_t rows,
                                      int64_t classes, double *rowLoss,
                                      float *loss, int *errorFlag,
                                      cudaStream_t stream);

// softmax_cross_entropy_grad: (softmax(logits) - onehot(labels)) / rows.
cudaError_t launchSoftmaxCrossEntropyGrad(const float *logits,
                                          const void *labels, bool labels64,
                                          int64_t rows, int64_t classes,
                                          float *grad, int *errorFlag,
                                          cudaStream_t stream);

// mse_loss: loss[0] = mean((p - t)^2); mse_loss_grad: 2 (p - t) / n.
cudaError_t launchMseLoss(const float *prediction, const float *target,
                          int64_t n, float *loss, cudaStream_t stream);
cudaError_t launchMseLossGrad(const float *prediction, const float *target,
                              int64_t n, float *grad, cudaStream_t stream);

// relu_grad: dx = y > 0 ? dy : 0.
cudaError_t launchReluGrad(const float *dy, const float *y, float *dx,
                           int64_t n, cudaStream_t stream);

// max_pool_grad / avg_pool_grad over `params` (x's and dy's geometry): one
// thread per element of dx gathers the windows that cover it, in the
// reference's window order, so overlapping windows need no atomics.
cudaError_t launchMaxPoolGrad(const PoolParams &params, const float *x,
                              const float *dy, float *dx, cudaStream_t stream);
cudaError_t launchAvgPoolGrad(const PoolParams &params, const float *dy,
                              float *dx, cudaStream_t stream);

// Training batch norm's statistics over the [outer, channels, inner] view of
// x: one block per channel computes the mean, then the biased variance (two
// passes), and the running statistics
//   newRunMean = momentum * runMean + (1 - momentum) * mean
//   newRunVar  = momentum * runVar + (1 - momentum) * var * M / (M - 1)
// (M the elements per channel; the biased variance when M is 1).
cudaError_t launchBatchNormStats(const float *x, const float *runMean,
                                 const float *runVar, int64_t outer,
                                 int64_t channels, int64_t inner,
                                 double momentum, float *mean, float *var,
                                 float *newRunMean, float *newRunVar,
                                 cudaStream_t stream);

// The same statistics in three steps, around cross_replica batch norm's two
// all-reduces: sums (channels + 1 doubles) gets each channel's sum of x and,
// last, the count M; squares (channels doubles) each channel's sum of
// squared deviations from sums[c] / M; finish writes launchBatchNormStats'
// results from both, with M = sums[channels]. Between the steps the buffers
// may be summed across replicas, which makes the statistics the global
// batch's.
cudaError_t launchBatchNormSums(const float *x, int64_t outer, int64_t channels,
                                int64_t inner, double *sums,
                                cudaStream_t stream);
cudaError_t launchBatchNormSquares(const float *x, const double *sums,
                                   int64_t outer, int64_t channels,
                                   int64_t inner, double *squares,
                                   cudaStream_t stream);
cudaError_t launchBatchNormFinish(const double *sums, const double *squares,
                                  int64_t channels, const float *runMean,
                                  const float *runVar, double momentum,
                                  float *mean, float *var, float *newRunMean,
                                  float *newRunVar, cudaStream_t stream);

// batch_norm_grad in two steps: GradSums writes per channel doffset =
// sum(dy), dscale = sum(dy * xhat) (one block per channel), and keeps them
// in double in `sums` (2 * channels + 1 doubles: the pairs, then the count
// M); GradInput computes dx elementwise from `sums`. cross_replica sums
// `sums` across replicas in between: dx then uses the global sums and M,
// while dscale and doffset stay this replica's.
cudaError_t launchBatchNormGradSums(const float *dy, const float *x,
                                    const float *mean, const float *var,
                                    double epsilon, int64_t outer,
                                    int64_t channels, int64_t inner,
                                    double *sums, float *dscale, float *doffset,
                                    cudaStream_t stream);
cudaError_t launchBatchNormGradInput(const float *dy, const float *x,
                                     const float *scale, const float *mean,
                                     const float *var, double epsilon,
                                     int64_t outer, int64_t channels,
                                     int64_t inner, const double *sums,
                                     float *dx, cudaStream_t stream);

// sgd_update (torch.optim.SGD, dampening 0), one pass: new param and
// velocity. Arithmetic in double, as the reference.
cudaError_t launchSgdUpdate(const float *param, const float *grad,
                            const float *velocity, int64_t n, double lr,
                            double momentum, double weightDecay, bool nesterov,
                            float *newParam, float *newVelocity,
                            cudaStream_t stream);

// adam_update (torch.optim.Adam), one pass; the step count t is read on the
// device from `step` (the bias corrections in double). t < 1 sets the flag
// to 1.
cudaError_t launchAdamUpdate(const float *param, const float *grad,
                             const float *m, const float *v, const float *step,
                             int64_t n, double lr, double beta1, double beta2,
                             double epsilon, double weightDecay,
                             float *newParam, float *newM, float *newV,
                             int *errorFlag, cudaStream_t stream);

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_TRAININGKERNELS_H
