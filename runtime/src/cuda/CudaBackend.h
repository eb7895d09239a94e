//===- CudaBackend.h - The CUDA backend -------------------------*- C++ -*-===//
//
// Backend "cuda" (GOPT_ENABLE_CUDA): the session hands it the resolved
// shapes and the host storage table, and it runs whole steps on the GPU
// (CudaBackend.cpp; kernels in CudaOps.cpp, dispatched by CudaOps.def).
// Plain C++: no CUDA header leaks into the session.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_CUDABACKEND_H
#define GOPT_RUNTIME_SRC_CUDA_CUDABACKEND_H

#include "../Backend.h"

namespace gopt::runtime {

// "no CUDA device: ..." (failed precondition) when no GPU can be used.
StatusOr<std::unique_ptr<Backend>>
createCudaBackend(const Plan &plan, const SessionOptions &options);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CUDA_CUDABACKEND_H
