//===- ControlFlowKernels.cpp - if and loop over region sessions ----------===//
//
// A control-flow op's regions are plans of their own, run by sessions the
// enclosing session owns and resolves (Session.cpp, resolveRegionOp). These
// kernels bind the op's operands to a region's inputs without copying, run
// it, and copy its outputs into the op's results. They run on the host and
// serve every backend that runs its regions' ops.
//
//===----------------------------------------------------------------------===//
#include "../LoopOperands.h"
#include "Reference.h"
#include "gopt/runtime/Session.h"

#include <cstring>

namespace gopt::runtime {
namespace {

/// Binds `values` to the region's inputs, in order.
Status bindRegionInputs(Session &region, const std::vector<Tensor> &values) {
  const plan::Plan &p = region.plan().proto();
  for (int b = 0; b < p.inputs_size(); ++b)
    GOPT_RETURN_IF_ERROR(region.bindInput(p.inputs(b).name(), values[b]));
  return Status::success();
}

/// Region output `i` after a run.
StatusOr<Tensor> regionOutput(Session &region, int i) {
  return region.output(region.plan().proto().outputs(i).name());
}

/// Copies `from` into `to`, which must have its shape.
Status copyInto(const Tensor &from, Tensor &to, const char *what, int index) {
  if (from.shape() != to.shape() || from.dtype() != to.dtype())
    return internalError(what, " #", index, " is ", dtypeName(from.dtype()),
                         shapeToString(from.shape()), ", expected ",
                         dtypeName(to.dtype()), shapeToString(to.shape()));
  if (from.byteSize() && from.data() != to.data())
    std::memmove(to.data(), from.data(), from.byteSize());
  return Status::success();
}

bool readBool(const Tensor &t) {
  return *static_cast<const uint8_t *>(t.data()) != 0;
}

class IfKernel : public Kernel {
public:
  explicit IfKernel(std::vector<Session *> branches)
      : branches_(std::move(branches)) {}
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    Session &branch = *branches_[readBool(inputs[0]) ? 0 : 1];
    GOPT_RETURN_IF_ERROR(bindRegionInputs(
        branch, std::vector<Tensor>(inputs.begin() + 1, inputs.end())));
    GOPT_RETURN_IF_ERROR(branch.run());
    for (size_t r = 0; r < outputs.size(); ++r) {
      GOPT_ASSIGN_OR_RETURN(Tensor value, regionOutput(branch, r));
      GOPT_RETURN_IF_ERROR(copyInto(value, outputs[r], "branch result", r));
    }
    return Status::success();
  }
  const char *implementation() const override { return "control-flow"; }

private:
  std::vector<Session *> branches_;
};

class LoopKernel : public Kernel {
public:
  LoopKernel(const KernelConfig &config, int numCarried)
      : body_(config.regions[0]), numCarried_(numCarried),
        iteration_(Tensor::allocate(DType::kI64, {})),
        cond_(Tensor::allocate(DType::kBool, {})) {
    // The carried values live here between iterations: the body's outputs
    // are views into its memory, which its next run overwrites.
    for (int i = 0; i < numCarried; ++i)
      carried_.push_back(Tensor::allocate(config.inputTypes[2 + i],
                                          config.inputShapes[2 + i]));
  }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    int64_t maxTrips;
    std::memcpy(&maxTrips, inputs[0].data(), sizeof maxTrips);
    bool cond = readBool(inputs[1]);
    for (int i = 0; i < numCarried_; ++i)
      GOPT_RETURN_IF_ERROR(
          copyInto(inputs[2 + i], carried_[i], "carried value", i));
    std::vector<Tensor> bodyInputs = {iteration_, cond_};
    bodyInputs.insert(bodyInputs.end(), carried_.begin(), carried_.end());
    bodyInputs.insert(bodyInputs.end(), inputs.begin() + 2 + numCarried_,
                      inputs.end());
    const int numScans = static_cast<int>(outputs.size()) - numCarried_;
    int64_t done = 0;
    for (; done < maxTrips && cond; ++done) {
      *iteration_.data<int64_t>() = done;
      *cond_.data<bool>() = cond;
      GOPT_RETURN_IF_ERROR(bindRegionInputs(*body_, bodyInputs));
      GOPT_RETURN_IF_ERROR(body_->run());
      GOPT_ASSIGN_OR_RETURN(Tensor next, regionOutput(*body_, 0));
      cond = readBool(next);
      for (int i = 0; i < numCarried_; ++i) {
        GOPT_ASSIGN_OR_RETURN(Tensor value, regionOutput(*body_, 1 + i));
        GOPT_RETURN_IF_ERROR(copyInto(value, carried_[i], "carried value", i));
      }
      for (int j = 0; j < numScans; ++j) {
        Tensor &stacked = outputs[numCarried_ + j];
        if (done >= stacked.dim(0))
          return internalError("scan output #", j, " holds ", stacked.dim(0),
                               " iterations, the loop runs more");
        GOPT_ASSIGN_OR_RETURN(Tensor slice,
                              regionOutput(*body_, 1 + numCarried_ + j));
        Shape sliceShape(stacked.shape().begin() + 1, stacked.shape().end());
        Tensor row = Tensor::view(stacked.dtype(), sliceShape,
                                  static_cast<char *>(stacked.data()) +
                                      done * slice.byteSize());
        GOPT_RETURN_IF_ERROR(copyInto(slice, row, "scan output", j));
      }
    }
    if (numScans > 0 && done != outputs[numCarried_].dim(0))
      return internalError("the loop ran ", done,
                           " iterations, its scan outputs hold ",
                           outputs[numCarried_].dim(0));
    for (int i = 0; i < numCarried_; ++i)
      GOPT_RETURN_IF_ERROR(copyInto(carried_[i], outputs[i], "result", i));
    return Status::success();
  }
  const char *implementation() const override { return "control-flow"; }

private:
  Session *body_;
  int numCarried_;
  Tensor iteration_, cond_;
  std::vector<Tensor> carried_;
};

} // namespace

namespace ref {

void registerControlFlowKernels(KernelRegistry &registry) {
  registry.registerKernel(
      "if", "reference",
      [](const KernelConfig &c) -> StatusOr<std::unique_ptr<Kernel>> {
        if (c.regions.size() != 2)
          return internalError("if needs the sessions of its two regions");
        return std::unique_ptr<Kernel>(std::make_unique<IfKernel>(c.regions));
      });
  registry.registerKernel(
      "loop", "reference",
      [](const KernelConfig &c) -> StatusOr<std::unique_ptr<Kernel>> {
        int64_t numCarried = loopCarriedCount(*c.op);
        if (c.regions.size() != 1 || numCarried < 0)
          return internalError("loop needs the session of its body and "
                               "operand segments that fit its operands");
        return std::unique_ptr<Kernel>(
            std::make_unique<LoopKernel>(c, static_cast<int>(numCarried)));
      });
}

} // namespace ref
} // namespace gopt::runtime
