//===- TrainingOps.h - CUDA kernels of the training ops ---------*- C++ -*-===//
//
// The handlers of CudaOps.def's training rows (TrainingOps.cpp): losses and
// their gradients, relu/pooling/conv2d/batch-norm gradients, training-mode
// batch norm and the optimizer updates. f32 only (the training ops' master
// precision); other element types get "no CUDA kernel ... place it on the
// CPU".
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_TRAININGOPS_H
#define GOPT_RUNTIME_SRC_CUDA_TRAININGOPS_H

#include "CudaCommon.h"

namespace gopt::runtime::cuda {

using TrainingKernelOr = StatusOr<std::unique_ptr<CudaKernel>>;

TrainingKernelOr createAdamUpdate(const CudaKernelConfig &c);
TrainingKernelOr createAvgPoolGrad(const CudaKernelConfig &c);
TrainingKernelOr createBatchNormGrad(const CudaKernelConfig &c);
// batch_norm with training = true (inference batch norm is CudaOps.cpp's).
TrainingKernelOr createBatchNormTraining(const CudaKernelConfig &c);
TrainingKernelOr createConv2dBackpropFilter(const CudaKernelConfig &c);
TrainingKernelOr createConv2dBackpropInput(const CudaKernelConfig &c);
TrainingKernelOr createMaxPoolGrad(const CudaKernelConfig &c);
TrainingKernelOr createMseLoss(const CudaKernelConfig &c);
TrainingKernelOr createMseLossGrad(const CudaKernelConfig &c);
TrainingKernelOr createReluGrad(const CudaKernelConfig &c);
TrainingKernelOr createSgdUpdate(const CudaKernelConfig &c);
TrainingKernelOr createSoftmaxCrossEntropy(const CudaKernelConfig &c);
TrainingKernelOr createSoftmaxCrossEntropyGrad(const CudaKernelConfig &c);

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_TRAININGOPS_H
