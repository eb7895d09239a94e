//===- CpuSupport.cpp - Which ops the CPU backend runs --------------------===//
//
// Plain C++, part of gopt_plan: the list below is what the CPU kernel
// registry (KernelRegistry.cpp) registers reference kernels for, kept equal
// to it by CpuCoverageTest.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/cpu/CpuSupport.h"

#include <algorithm>

namespace gopt::runtime {

const std::vector<std::string> &cpuOpKinds() {
  static const std::vector<std::string> kinds = {
      "abs",
      "adam_update",
      "add",
      "all_finite",
      "avg_pool",
      "avg_pool_grad",
      "batch_norm",
      "batch_norm_grad",
      "bias_add",
      "cast",
      "check_numerics",
      "clip",
      "concat",
      "conv2d",
      "conv2d_backprop_filter",
      "conv2d_backprop_input",
      "dequantize",
      "div",
      "dropout",
      "dropout_grad",
      "erf",
      "exp",
      "flatten",
      "gelu",
      "global_avg_pool",
      "identity",
      "leaky_relu",
      "log",
      "log_softmax",
      "loss_scale_update",
      "matmul",
      "max",
      "max_pool",
      "max_pool_grad",
      "min",
      "mse_loss",
      "mse_loss_grad",
      "mul",
      "neg",
      "pad",
      "pow",
      "quantize",
      "reduce_max",
      "reduce_mean",
      "reduce_sum",
      "relu",
      "relu6",
      "relu_grad",
      "reshape",
      "rsqrt",
      "select",
      "sgd_update",
      "shape",
      "sigmoid",
      "slice",
      "softmax",
      "softmax_cross_entropy",
      "softmax_cross_entropy_grad",
      "sqrt",
      "squared_difference",
      "stop_gradient",
      "sub",
      "tanh",
      "transfer",
      "transpose",
  };
  return kinds;
}

bool hasCpuKernel(std::string_view opKind) {
  const std::vector<std::string> &kinds = cpuOpKinds();
  return std::binary_search(kinds.begin(), kinds.end(), opKind);
}

bool hasCpuKernel(const plan::Op &op, std::string *whyNot) {
  if (hasCpuKernel(op.kind()))
    return true;
  if (whyNot)
    *whyNot = "'" + op.kind() + "' has no CPU kernel";
  return false;
}

} // namespace gopt::runtime
