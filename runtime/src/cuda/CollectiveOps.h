//===- CollectiveOps.h - CUDA kernel of all_reduce --------------*- C++ -*-===//
//
// The handler of CudaOps.def's all_reduce row (CollectiveOps.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_COLLECTIVEOPS_H
#define GOPT_RUNTIME_SRC_CUDA_COLLECTIVEOPS_H

#include "CudaCommon.h"

namespace gopt::runtime::cuda {

StatusOr<std::unique_ptr<CudaKernel>>
createAllReduce(const CudaKernelConfig &c);

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_COLLECTIVEOPS_H
