//===- OpHelpers.h - What the CUDA op files share ---------------*- C++ -*-===//
//
// Small helpers of the kernel factories (CudaOps.cpp, TrainingOps.cpp,
// RnnOps.cpp, QuantizedOps.cpp): the one refusal message placement and
// users see, extents, int-range checks before cuDNN's int arguments, 4-D
// tensor descriptors and permuted gather indices.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_OPHELPERS_H
#define GOPT_RUNTIME_SRC_CUDA_OPHELPERS_H

#include "CudaCommon.h"
#include "Kernels.h"

#include <cudnn.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gopt::runtime::cuda {

/// "no CUDA kernel for '<op>' (<kind>): <why>; place it on the CPU".
Status noKernel(const CudaKernelConfig &c, const std::string &why);

/// The product of s[from, to) (clamped to s's rank).
int64_t product(const Shape &s, size_t from = 0, size_t to = SIZE_MAX);

/// A count cuDNN and the launchers take as a (non-negative) int.
inline bool fitsInt(int64_t v) { return v >= 0 && v <= INT32_MAX; }

/// A 4-D tensor descriptor in NCHW or NHWC; refuses extents beyond int.
Status set4d(cudnnTensorDescriptor_t d, bool nchw, cudnnDataType_t type,
             int64_t n, int64_t c, int64_t h, int64_t w);

/// The gather index of out = transpose(in, perm): out dim i = in dim perm[i].
StatusOr<StridedIndex> permuteIndex(const Shape &in,
                                    const std::vector<int64_t> &perm);

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_OPHELPERS_H
