//===- CudaSupport.cpp - Which ops the CUDA backend runs ------------------===//
#include "gopt/runtime/cuda/CudaSupport.h"
#include "gopt/runtime/OpSchema.h"

#include <algorithm>

namespace gopt::runtime {

const std::vector<std::string> &cudaOpKinds() {
  static const std::vector<std::string> kinds = {"abs",
                                                 "add",
                                                 "avg_pool",
                                                 "batch_norm",
                                                 "bias_add",
                                                 "cast",
                                                 "check_numerics",
                                                 "clip",
                                                 "concat",
                                                 "conv2d",
                                                 "dequantize",
                                                 "div",
                                                 "dropout",
                                                 "erf",
                                                 "exp",
                                                 "flatten",
                                                 "gelu",
                                                 "global_avg_pool",
                                                 "identity",
                                                 "leaky_relu",
                                                 "log",
                                                 "log_softmax",
                                                 "matmul",
                                                 "max",
                                                 "max_pool",
                                                 "min",
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
                                                 "reshape",
                                                 "rsqrt",
                                                 "shape",
                                                 "sigmoid",
                                                 "slice",
                                                 "softmax",
                                                 "sqrt",
                                                 "squared_difference",
                                                 "stop_gradient",
                                                 "sub",
                                                 "tanh",
                                                 "transfer",
                                                 "transpose"};
  return kinds;
}

bool hasCudaKernel(const plan::Op &op, std::string *whyNot) {
  const std::vector<std::string> &kinds = cudaOpKinds();
  auto fail = [&](const std::string &why) {
    if (whyNot)
      *whyNot = why;
    return false;
  };
  if (std::find(kinds.begin(), kinds.end(), op.kind()) == kinds.end())
    return fail("'" + op.kind() + "' has no CUDA kernel");
  OpAttrs attrs(op);
  if (op.kind() == "batch_norm" && attrs.getBool("training", false))
    return fail("training-mode batch_norm is CPU-only");
  if (op.kind() == "dropout" && attrs.getBool("training", false))
    return fail("training-mode dropout is CPU-only");
  return true;
}

} // namespace gopt::runtime
