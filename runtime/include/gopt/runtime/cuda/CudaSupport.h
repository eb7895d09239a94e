//===- CudaSupport.h - Which ops the CUDA backend runs ----------*- C++ -*-===//
//
// The CUDA backend's op coverage, queryable without a GPU or a CUDA build
// (the placement pass and docs/cuda.md use it). It is derived from the
// backend's dispatch table (runtime/src/cuda/CudaOps.def), whose kinds and
// attribute predicates are plain C++ compiled into gopt_plan in every build;
// CUDA builds bind the same rows to the kernels that run them. Element types
// are checked when a kernel is created: floating-point ops take
// f32/f16/bf16, numeric ops also i32/i64.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_CUDA_CUDASUPPORT_H
#define GOPT_RUNTIME_CUDA_CUDASUPPORT_H

#include "gopt/runtime/plan.pb.h"

#include <string>
#include <vector>

namespace gopt::runtime {

// One row of the CUDA dispatch table, without its kernel: the op kind, which
// attributes the backend accepts, and the name of the handler that CUDA
// builds bind (for tests and messages).
struct CudaOpEntry {
  const char *kind;
  // Whether the backend runs `op` with its attributes; if not, `whyNot`
  // says why (e.g. "training-mode batch_norm is CPU-only").
  bool (*accepts)(const plan::Op &op, std::string *whyNot);
  const char *handler;
};

// The rows of the dispatch table, sorted by kind.
const std::vector<CudaOpEntry> &cudaOpTable();

// Op kinds with a CUDA kernel (for some attributes: see hasCudaKernel): the
// table's kinds.
const std::vector<std::string> &cudaOpKinds();

// Whether `op` (kind and attributes) has a CUDA kernel; if not, `whyNot`
// says why (e.g. "training-mode batch_norm is CPU-only").
bool hasCudaKernel(const plan::Op &op, std::string *whyNot = nullptr);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_CUDA_CUDASUPPORT_H
