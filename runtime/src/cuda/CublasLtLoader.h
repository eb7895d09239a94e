//===- CublasLtLoader.h - cuBLASLt, opened lazily ---------------*- C++ -*-===//
//
// libcublasLt's static initializers take about half a second of page faults
// at load (its kernels' tables), in every process that links it: every
// gopt-run, every `import gopt`, whether or not it uses a GPU. So the CUDA
// backend does not link it. CublasLtLoader.cpp defines the cuBLASLt entry
// points gopt calls, each forwarding to the library opened with dlopen the
// first time a device context starts.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_CUBLASLTLOADER_H
#define GOPT_RUNTIME_SRC_CUDA_CUBLASLTLOADER_H

#include "gopt/runtime/Status.h"

namespace gopt::runtime::cuda {

// Opens libcublasLt (once per process) and resolves every entry point gopt
// uses; an error names the library or the missing symbol. The entry points
// return CUBLAS_STATUS_NOT_INITIALIZED until this has succeeded.
Status loadCublasLt();

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_CUBLASLTLOADER_H
