//===- RefCollective.cpp - Reference kernel of all_reduce -----------------===//
//
// all_reduce copies each operand into its result and reduces the results in
// place on the session's communicator, one call per op (a bucket). Without
// a communicator (one replica) it is the copy alone.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"
#include "gopt/runtime/Collectives.h"

#include <cstring>

namespace gopt::runtime::ref {

namespace {

Status allReduceKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  std::vector<CollectiveBuffer> buffers;
  for (size_t i = 0; i < in.size(); ++i) {
    if (out[i].dtype() != in[i].dtype())
      return invalidArgument("result ", i, " has element type ",
                             dtypeName(out[i].dtype()), ", operand ", i,
                             " has ", dtypeName(in[i].dtype()));
    if (out[i].data() != in[i].data())
      std::memcpy(out[i].data(), in[i].data(), in[i].byteSize());
    buffers.push_back({out[i].data(), out[i].numElements(), out[i].dtype()});
  }
  if (!ctx.communicator || ctx.communicator->size() == 1)
    return Status::success();
  Reduction reduction = ctx.attrs().getString("reduction") == "mean"
                            ? Reduction::kMean
                            : Reduction::kSum;
  return ctx.communicator->allReduce(buffers, reduction);
}

} // namespace

void registerCollectiveKernels(KernelRegistry &r) {
  // Any element type: the kernel moves bytes and the communicator reduces.
  registerKernel(r, "all_reduce", allReduceKernel, DTypeSupport::kAny);
}

} // namespace gopt::runtime::ref
