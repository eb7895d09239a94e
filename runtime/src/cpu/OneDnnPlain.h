//===- OneDnnPlain.h - A oneDNN primitive over plain tensors ----*- C++ -*-===//
//
// A kernel that runs one oneDNN primitive on the plan's plain (row-major)
// tensors: each argument the primitive wants in another layout goes
// through a buffer and a reorder every run (inputs before, the output
// after). The kernels the CPU schedule does not keep in blocked layouts use
// it: conv2d_transpose (ImageKernels.cpp) and the 3-D window ops
// (VolumeKernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_ONEDNNPLAIN_H
#define GOPT_RUNTIME_SRC_CPU_ONEDNNPLAIN_H

#include "OneDnn.h"
#include "gopt/runtime/Kernel.h"

#include <dnnl.hpp>

#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace gopt::runtime::cpu {

class PlainOneDnnKernel : public Kernel {
public:
  PlainOneDnnKernel() : stream_(cpuEngine()) {}

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    try {
      for (Arg &a : args_) {
        void *data = a.isOutput ? outputs[0].data()
                                : const_cast<void *>(inputs[a.index].data());
        a.user.set_data_handle(data);
        if (!a.isOutput && a.reorder)
          a.reorder.execute(stream_, a.user, a.internal);
      }
      primitive_.execute(stream_, execArgs_);
      for (Arg &a : args_)
        if (a.isOutput && a.reorder)
          a.reorder.execute(stream_, a.internal, a.user);
      stream_.wait();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN: ", e.what());
    }
    return Status::success();
  }
  const char *implementation() const override { return "onednn"; }
  size_t workspaceBytes() const override { return workspaceBytes_; }

  // The plan's tensor `user` (input `index`, or the output) as the
  // primitive's `wanted`, through a buffer and a reorder when the layouts
  // differ.
  void bind(int index, bool isOutput, int dnnlArg,
            const dnnl::memory::desc &user, const dnnl::memory::desc &wanted) {
    Arg a{index, isOutput, dnnl::memory(user, cpuEngine(), DNNL_MEMORY_NONE),
          dnnl::memory(), dnnl::reorder()};
    if (user == wanted) {
      execArgs_[dnnlArg] = a.user;
    } else {
      a.internal = dnnl::memory(wanted, cpuEngine());
      workspaceBytes_ += wanted.get_size();
      a.reorder = isOutput ? dnnl::reorder(a.internal, a.user)
                           : dnnl::reorder(a.user, a.internal);
      execArgs_[dnnlArg] = a.internal;
    }
    args_.push_back(a);
  }
  void setPrimitive(dnnl::primitive primitive) {
    primitive_ = std::move(primitive);
  }

private:
  struct Arg {
    int index;
    bool isOutput;
    dnnl::memory user, internal;
    dnnl::reorder reorder;
  };

  dnnl::stream stream_;
  dnnl::primitive primitive_;
  std::unordered_map<int, dnnl::memory> execArgs_;
  std::vector<Arg> args_;
  size_t workspaceBytes_ = 0;
};

// A forward convolution or deconvolution over the plan's plain tensors: x,
// the filter, an optional bias and y as the plan holds them, the window
// in oneDNN's terms (dilations 0 = dense).
struct PlainWindowOp {
  dnnl::memory::desc x, w, y;
  std::optional<dnnl::memory::desc> bias;
  dnnl::memory::dims strides, dilations, padL, padR;
};

// `op` as a oneDNN Primitive (dnnl::convolution_forward or
// dnnl::deconvolution_forward, with its `algorithm`) in the layouts oneDNN
// prefers, each argument reordered from and to the plan's; null where
// oneDNN has no implementation for it (the reference kernel runs it).
template <typename Primitive>
std::unique_ptr<Kernel> createPlainWindowKernel(dnnl::algorithm algorithm,
                                                const PlainWindowOp &op) {
  using Tag = dnnl::memory::format_tag;
  auto kernel = std::make_unique<PlainOneDnnKernel>();
  try {
    dnnl::memory::desc xAny(op.x.dims(), op.x.data_type(), Tag::any);
    dnnl::memory::desc wAny(op.w.dims(), op.w.data_type(), Tag::any);
    dnnl::memory::desc yAny(op.y.dims(), op.y.data_type(), Tag::any);
    auto desc =
        op.bias
            ? typename Primitive::desc(
                  dnnl::prop_kind::forward_inference, algorithm, xAny, wAny,
                  *op.bias, yAny, op.strides, op.dilations, op.padL, op.padR)
            : typename Primitive::desc(dnnl::prop_kind::forward_inference,
                                       algorithm, xAny, wAny, yAny, op.strides,
                                       op.dilations, op.padL, op.padR);
    typename Primitive::primitive_desc pd(desc, cpuEngine(),
                                          /*allow_empty=*/true);
    if (!pd)
      return nullptr;
    kernel->bind(0, false, DNNL_ARG_SRC, op.x, pd.src_desc());
    kernel->bind(1, false, DNNL_ARG_WEIGHTS, op.w, pd.weights_desc());
    if (op.bias)
      kernel->bind(2, false, DNNL_ARG_BIAS, *op.bias, pd.bias_desc());
    kernel->bind(0, true, DNNL_ARG_DST, op.y, pd.dst_desc());
    kernel->setPrimitive(Primitive(pd));
  } catch (const dnnl::error &) {
    return nullptr; // oneDNN rejects the configuration
  }
  return kernel;
}

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_ONEDNNPLAIN_H
