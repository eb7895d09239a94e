//===- HostShapeValues.h - Shape values computed on the host ----*- C++ -*-===//
//
// Some result shapes depend on operand values the graph computes from other
// tensors' shapes (dynamic_reshape's target: Shape -> Slice -> Cast ->
// Concat). The session computes those small integer tensors on the host
// while it resolves shapes, with the reference kernels, so it can plan
// memory for every input size without running the graph first.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_HOSTSHAPEVALUES_H
#define GOPT_RUNTIME_SRC_HOSTSHAPEVALUES_H

#include "gopt/runtime/Plan.h"
#include "gopt/runtime/Status.h"
#include "gopt/runtime/Tensor.h"

#include <vector>

namespace gopt::runtime {

class HostShapeValues {
public:
  // A host-computed tensor is a shape's worth of integers; a larger one
  // means the plan asks the host to compute real data, which it refuses.
  static constexpr int64_t kMaxElements = 1 << 16;

  // Finds the tensors whose values decide a shape (the operands ops list in
  // hostValueOperands) and, backwards, the ops that compute them. Fails,
  // naming the op whose shape needs it, when such a value depends on a
  // graph input's or state's data.
  Status init(const plan::Plan &p);

  // Whether op `o` runs on the host during shape resolution.
  bool computesOp(int o) const { return hostOp_[o]; }

  // Runs op `o` with the resolved shapes of its operands and results; the
  // values of its operands are constants or host results computed earlier.
  Status compute(const plan::Plan &p, int o, const std::vector<DType> &dtypes,
                 const std::vector<Shape> &shapes);

  // Tensor t's elements as int64 (from i64 or i32), or nullptr when the host
  // did not compute it.
  const std::vector<int64_t> *intValue(int t) const {
    return hasInts_[t] ? &ints_[t] : nullptr;
  }
  // Tensor t's value (any element type), or nullptr when the host did not
  // compute it.
  const Tensor *value(int t) const {
    return values_[t].empty() ? nullptr : &values_[t];
  }

private:
  std::vector<bool> hostOp_;
  std::vector<Tensor> values_;
  std::vector<std::vector<int64_t>> ints_;
  std::vector<bool> hasInts_;
};

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_HOSTSHAPEVALUES_H
