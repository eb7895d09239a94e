//===- KernelAvailability.h - Which backend can run an op -------*- C++ -*-===//
//
// The one answer to "does backend B have a kernel for op kind K", shared by
// the compiler's device placement (lib/Transforms/PlaceDevices.cpp) and the
// runtime's sessions, so that the two cannot disagree:
//
// - "cpu" (or "reference"): the process-wide KernelRegistry, the same one a
//   CPU session creates its kernels from (every reference or oneDNN kernel).
// - "cuda" (or "gpu", the IR's name for it): the CUDA backend's static
//   coverage table (`cudaOpKinds`/`hasCudaKernel` in
//   gopt/runtime/cuda/CudaSupport.h), which the CUDA backend itself checks
//   before creating a kernel. That table is plain C++ and is compiled into
//   gopt_runtime in every build, GOPT_ENABLE_CUDA=OFF included, so a
//   compiler built without CUDA still places ops for a GPU correctly.
//
// Element types are not part of the answer: kernels check them when they are
// created (docs/cuda.md).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_KERNELAVAILABILITY_H
#define GOPT_RUNTIME_KERNELAVAILABILITY_H

#include "gopt/runtime/plan.pb.h"

#include <string>
#include <string_view>

namespace gopt::runtime {

// Whether `backend` ("cpu", "reference", "cuda" or "gpu") has a kernel for
// `op` with its attributes (e.g. a training-mode dropout has none on CUDA);
// if not, `whyNot` says why.
bool hasKernel(const plan::Op &op, std::string_view backend,
               std::string *whyNot = nullptr);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_KERNELAVAILABILITY_H
