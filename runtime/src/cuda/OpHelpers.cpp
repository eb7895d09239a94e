//===- OpHelpers.cpp - What the CUDA op files share -----------------------===//
#include "OpHelpers.h"
#include "Launch.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace gopt::runtime::cuda {

Status noKernel(const CudaKernelConfig &c, const std::string &why) {
  return unimplemented("no CUDA kernel for '", c.op->name(), "' (",
                       c.op->kind(), "): ", why, "; place it on the CPU");
}

int64_t product(const Shape &s, size_t from, size_t to) {
  // Iterators, not indices: GCC 12 warns (-Waggressive-loop-optimizations)
  // about the index form with to = SIZE_MAX.
  auto end = s.begin() + std::min(to, s.size());
  auto begin = s.begin() + std::min<size_t>(from, end - s.begin());
  return std::accumulate(begin, end, int64_t(1), std::multiplies<int64_t>());
}

Status set4d(cudnnTensorDescriptor_t d, bool nchw, cudnnDataType_t type,
             int64_t n, int64_t c, int64_t h, int64_t w) {
  if (!fitsInt(n) || !fitsInt(c) || !fitsInt(h) || !fitsInt(w) ||
      !fitsInt(n * c * h * w))
    return unimplemented("tensor too large for cuDNN");
  GOPT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(
      d, nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC, type, int(n), int(c),
      int(h), int(w)));
  return Status::success();
}

StatusOr<StridedIndex> permuteIndex(const Shape &in,
                                    const std::vector<int64_t> &perm) {
  std::vector<int64_t> inStrides = contiguousStrides(in), dims, strides;
  for (int64_t p : perm) {
    dims.push_back(in[p]);
    strides.push_back(inStrides[p]);
  }
  return makeIndex(dims, strides);
}

} // namespace gopt::runtime::cuda
