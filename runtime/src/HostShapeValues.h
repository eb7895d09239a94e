//===- HostShapeValues.h - Shape values computed on the host ----*- C++ -*-===//
//
// Some result shapes depend on operand values the graph computes from other
// tensors' shapes (dynamic_reshape's target: Shape -> Slice -> Cast ->
// Concat), or that are graph inputs (a dynamic op's bounds fed at run time).
// The session computes those small tensors on the host while it resolves
// shapes, with the reference kernels, so it can plan memory for every input
// size and value without running the graph first.
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
  // hostValueOperands) and, backwards, the ops that compute them and the
  // graph inputs they read. Fails, naming the op whose shape needs it, when
  // such a value depends on a state's data.
  Status init(const plan::Plan &p);

  // The graph inputs (tensor indices) whose values decide shapes: the
  // session sets them before resolving and re-resolves when they change.
  const std::vector<int> &valueInputs() const { return valueInputs_; }
  // Records input tensor t's value (copied; at most kMaxElements).
  Status setInputValue(const plan::Plan &p, int t, const Tensor &value);
  // Records constant tensor t's value from the plan's blob.
  Status loadConstant(const plan::Plan &p, int t, DType dtype,
                      const Shape &shape);
  // Whether `value` differs from what setInputValue recorded for t.
  bool inputValueChanged(int t, const Tensor &value) const;

  // Whether op `o` runs on the host during shape resolution.
  bool computesOp(int o) const { return hostOp_[o]; }

  // Runs op `o` with the resolved shapes of its operands and results; the
  // values of its operands are constants, inputs or host results computed
  // earlier. `op` is what runs: p.ops(o), or its static op when it is
  // dynamic.
  Status compute(const plan::Plan &p, const plan::Op &op, int o,
                 const std::vector<DType> &dtypes,
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
  // Tensor t's elements as double (any numeric type), or nullptr.
  const std::vector<double> *realValue(int t) const {
    return hasReals_[t] ? &reals_[t] : nullptr;
  }

private:
  std::vector<bool> hostOp_;
  std::vector<Tensor> values_;
  std::vector<std::vector<int64_t>> ints_;
  std::vector<bool> hasInts_;
  std::vector<std::vector<double>> reals_;
  std::vector<bool> hasReals_;
  std::vector<int> valueInputs_;

  void record(int t, const Tensor &value);
};

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_HOSTSHAPEVALUES_H
