//===- KernelAvailability.h - Which backend can run an op -------*- C++ -*-===//
//
// The one answer to "does backend B have a kernel for op kind K", shared by
// the compiler's device placement (lib/Transforms/PlaceDevices.cpp) and the
// runtime's sessions, so that the two cannot disagree:
//
// - "cpu" (or "reference"): the CPU backend's coverage table (`cpuOpKinds`/
//   `hasCpuKernel` in gopt/runtime/cpu/CpuSupport.h), the kinds the CPU
//   kernel registry that sessions create kernels from has a kernel for (a
//   unit test keeps the two equal).
// - "cuda" (or "gpu", the IR's name for it): the CUDA backend's coverage
//   (`cudaOpKinds`/`hasCudaKernel` in gopt/runtime/cuda/CudaSupport.h),
//   derived from its dispatch table, which the CUDA backend itself checks
//   before creating a kernel.
//
// Both tables are data, plain C++ in gopt_plan, the small library the
// compiler links: answering needs neither oneDNN nor CUDA, and a compiler
// built without CUDA still places ops for a GPU correctly.
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
