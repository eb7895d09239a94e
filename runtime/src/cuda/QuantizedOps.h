//===- QuantizedOps.h - int8 chains of the CUDA backend ---------*- C++ -*-===//
//
// A static int8 plan (--gopt-quantize) computes each conv2d and matmul as
// dequantize -> f32 op -> [activation] -> quantize. The CUDA backend runs
// such a chain as one int8 kernel (cuBLASLt int8 GEMM with int32 sums, or
// cuDNN's int8 convolution, then gopt's requantize epilogue); see
// docs/cuda.md "Quantized plans" and docs/architecture.md "Decisions and
// why" for why the chains are recognized here and not rewritten by a pass.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CUDA_QUANTIZEDOPS_H
#define GOPT_RUNTIME_SRC_CUDA_QUANTIZEDOPS_H

#include "CudaCommon.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gopt::runtime::cuda {

// One chain, run by one kernel at the anchor's position in the plan.
struct Int8Chain {
  int anchor = -1;           // the conv2d or matmul op
  std::vector<int> absorbed; // other ops whose work the kernel does
  int input = -1;            // the int8 activation the kernel reads
  int residual = -1;         // an int8 tensor added at the end, or -1
  int result = -1;           // the tensor it writes (i8 or f32)
  std::string implementation;
  std::unique_ptr<CudaKernel> kernel;
};

// The chains of `plan` at these element types and shapes, with their
// kernels created. A candidate whose kernel cannot be created (an
// unsupported configuration, which cuDNN or cuBLASLt refuses) is left out
// and runs op by op. Keyed by anchor op index. With `ctx` null the chains
// are only recognized (no kernels, no device): what the tests check
// without a GPU.
std::map<int, Int8Chain> planInt8Chains(const plan::Plan &plan,
                                        const std::vector<DType> &dtypes,
                                        const std::vector<Shape> &shapes,
                                        DeviceContext *ctx);

// Whether op `o` is a dequantize of constants only (weight-only int8's
// `dequantize(W_i8, scales)`): its result is computed once at set-up.
bool isConstantDequantize(const plan::Plan &plan, int o);

} // namespace gopt::runtime::cuda

#endif // GOPT_RUNTIME_SRC_CUDA_QUANTIZEDOPS_H
