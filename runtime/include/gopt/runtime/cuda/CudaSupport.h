//===- CudaSupport.h - Which ops the CUDA backend runs ----------*- C++ -*-===//
//
// The CUDA backend's op coverage, queryable without a GPU (the placement
// pass and docs/cuda.md use it). Element types are checked when a kernel is
// created: floating-point ops take f32/f16/bf16, numeric ops also i32/i64.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_CUDA_CUDASUPPORT_H
#define GOPT_RUNTIME_CUDA_CUDASUPPORT_H

#include "gopt/runtime/plan.pb.h"

#include <string>
#include <vector>

namespace gopt::runtime {

// Op kinds with a CUDA kernel (for some attributes: see hasCudaKernel).
const std::vector<std::string> &cudaOpKinds();

// Whether `op` (kind and attributes) has a CUDA kernel; if not, `whyNot`
// says why (e.g. "training-mode batch_norm is CPU-only").
bool hasCudaKernel(const plan::Op &op, std::string *whyNot = nullptr);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_CUDA_CUDASUPPORT_H
