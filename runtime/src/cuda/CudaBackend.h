//===- CudaBackend.h - The session's hook into the CUDA backend -*- C++ -*-===//
//
// Session.cpp creates a DeviceBackend for backend "cuda" (when the runtime
// is built with GOPT_ENABLE_CUDA) and hands it the resolved shapes and the
// host storage table; the backend runs whole steps on the GPU. Plain C++:
// no CUDA header leaks into the session.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_CUDABACKEND_H
#define GOPT_RUNTIME_SRC_CUDA_CUDABACKEND_H

#include "gopt/runtime/Plan.h"
#include "gopt/runtime/Session.h"
#include "gopt/runtime/Status.h"
#include "gopt/runtime/Tensor.h"

#include <memory>
#include <vector>

namespace gopt::runtime {

class DeviceBackend {
public:
  virtual ~DeviceBackend() = default;
  // After shapes are (re)resolved: plans device memory, uploads constants
  // (once), creates kernels, and points `storage` of OUTPUT and STATE
  // tensors at pinned host buffers the backend owns. `profiles` has one
  // row per op; the backend appends its copy rows (h2d, d2h) once.
  virtual Status prepare(const std::vector<DType> &dtypes,
                         const std::vector<Shape> &shapes,
                         std::vector<void *> &storage,
                         std::vector<OpProfile> &profiles) = 0;
  // One step: inputs are read from storage[input tensor] (host memory),
  // outputs and states land in their host buffers before it returns.
  virtual Status run(std::vector<void *> &storage,
                     std::vector<OpProfile> &profiles) = 0;
  virtual MemoryStats memoryStats() const = 0;
};

// "no CUDA device: ..." (failed precondition) when no GPU can be used.
StatusOr<std::unique_ptr<DeviceBackend>>
createCudaBackend(const Plan &plan, const SessionOptions &options);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CUDA_CUDABACKEND_H
