//===- ConvImplChoice.h - A batch-1 convolution's kernel by its time -*- C++
//-*-===//
//
// oneDNN lists the kernels it has for a convolution best first by its own
// rules; at batch 1 the first is not always the fastest (its brgemm 1x1
// kernel ran ResNet-50's 14x14 1x1 layers 4-13% slower than its jit_1x1
// one, and the 7x7 ones 30% faster). fastestConvImpl times each kernel of
// the same source and result layouts on this machine and keeps the fastest.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_CONVIMPLCHOICE_H
#define GOPT_RUNTIME_SRC_CPU_CONVIMPLCHOICE_H

#include <dnnl.hpp>

#include <functional>

namespace gopt::runtime::cpu {

// Whether batch-1 f32 convolutions choose their oneDNN kernel by measured
// time (GOPT_CONV_MEASURED_IMPL=1; off by default).
bool convMeasuredImplEnabled();

// `first`, or the kernel of those oneDNN lists for `make(src, dst)` (the
// convolution's op desc in these layouts) in `first`'s layouts, not
// reference or GEMM ones, with the least time of a few interleaved runs on
// scratch data at the current OpenMP thread count, where it is at least 3%
// faster than `first`.
dnnl::convolution_forward::primitive_desc fastestConvImpl(
    const dnnl::convolution_forward::primitive_desc &first,
    const std::function<dnnl::convolution_forward::desc(
        const dnnl::memory::desc &src, const dnnl::memory::desc &dst)> &make);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_CONVIMPLCHOICE_H
