//===- RnnOps.h - CUDA kernels of the recurrent ops -------------*- C++ -*-===//
//
// The handlers of CudaOps.def's lstm, gru and rnn rows (RnnOps.cpp): cuDNN's
// RNN API in inference mode, f32 only. What cuDNN does not compute (clip,
// input_forget, gru without linear_before_reset, sequence_lens) is refused by
// the rows' predicate (CudaSupport.cpp), peepholes at kernel creation.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_RNNOPS_H
#define GOPT_RUNTIME_SRC_CUDA_RNNOPS_H

#include "CudaCommon.h"

namespace gopt::runtime::cuda {

StatusOr<std::unique_ptr<CudaKernel>> createGru(const CudaKernelConfig &c);
StatusOr<std::unique_ptr<CudaKernel>> createLstm(const CudaKernelConfig &c);
StatusOr<std::unique_ptr<CudaKernel>> createRnn(const CudaKernelConfig &c);

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_RNNOPS_H
