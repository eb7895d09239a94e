//===- Launch.cpp - Launch configuration and index helpers ----------------===//
#include "Launch.h"

namespace gopt::runtime::cuda {

StatusOr<StridedIndex> makeIndex(const std::vector<int64_t> &dims,
                                 const std::vector<int64_t> &strides) {
  std::vector<int64_t> d, s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1)
      continue;
    if (!d.empty() && s.back() == strides[i] * dims[i]) {
      d.back() *= dims[i];
      s.back() = strides[i];
      continue;
    }
    d.push_back(dims[i]);
    s.push_back(strides[i]);
  }
  if (d.size() > static_cast<size_t>(kMaxRank))
    return unimplemented("the CUDA kernels handle at most ", kMaxRank,
                         " non-contiguous dims, got ", d.size());
  StridedIndex index;
  index.rank = static_cast<int>(d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    index.dims[i] = d[i];
    index.strides[i] = s[i];
  }
  return index;
}

StatusOr<StridedIndex> broadcastIndex(const Shape &out, const Shape &in) {
  if (in.size() > out.size())
    return invalidArgument("cannot broadcast ", shapeToString(in), " to ",
                           shapeToString(out));
  std::vector<int64_t> inStrides = contiguousStrides(in);
  std::vector<int64_t> strides(out.size(), 0);
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != 1 && in[i] != out[lead + i])
      return invalidArgument("cannot broadcast ", shapeToString(in), " to ",
                             shapeToString(out));
    strides[lead + i] = in[i] == 1 ? 0 : inStrides[i];
  }
  return makeIndex(std::vector<int64_t>(out.begin(), out.end()), strides);
}

int64_t stridedOffset(const StridedIndex &index, int64_t i) {
  int64_t offset = 0;
  for (int d = index.rank - 1; d >= 0; --d) {
    int64_t q = i / index.dims[d];
    offset += (i - q * index.dims[d]) * index.strides[d];
    i = q;
  }
  return offset;
}

} // namespace gopt::runtime::cuda
