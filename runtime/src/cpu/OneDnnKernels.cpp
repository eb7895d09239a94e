//===- OneDnnKernels.cpp - Fast CPU kernels from oneDNN -------------------===//
//
// conv2d (NCHW/NHWC, groups, fused bias and activation), matmul (transposes,
// batch broadcast), max/avg pooling and inference batch_norm. Primitives,
// memory descriptors and reordered constant weights are made once when the
// session resolves shapes; run() only swaps data handles and executes.
// Configurations oneDNN does not cover return a null kernel, and the session
// falls back to the reference kernel.
//
//===----------------------------------------------------------------------===//
#include "CpuBackend.h"
#include "FastKernels.h"
#include "OneDnn.h"
#include "gopt/runtime/Kernel.h"

#include <dnnl.hpp>
#include <omp.h>

#include <unordered_map>

namespace gopt::runtime {

// oneDNN 2.6 from Debian is built with the OpenMP CPU runtime
// (DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP), so OpenMP's thread count is its.
void setCpuThreads(int threads) {
  if (threads > 0)
    omp_set_num_threads(threads);
}

namespace cpu {
dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}
} // namespace cpu

namespace {

using cpu::cpuEngine;
using dnnl::memory;
using Tag = memory::format_tag;
using Dims = memory::dims;

bool allF32(const KernelConfig &config) {
  for (DType t : config.inputTypes)
    if (t != DType::kF32)
      return false;
  for (DType t : config.outputTypes)
    if (t != DType::kF32)
      return false;
  return true;
}

Dims toDims(const Shape &shape) { return Dims(shape.begin(), shape.end()); }

// Base of the oneDNN kernels: one primitive, its arguments by oneDNN index,
// and which kernel input/output feeds each argument.
template <typename Base> class OneDnnKernelBase : public Base {
public:
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    try {
      for (auto &[input, arg] : inputBindings_)
        args_[arg].set_data_handle(const_cast<void *>(inputs[input].data()));
      for (auto &[output, arg] : outputBindings_)
        args_[arg].set_data_handle(outputs[output].data());
      // Weights that are not constants may need a reorder each run.
      if (weightReorder_) {
        weightSource_.set_data_handle(
            const_cast<void *>(inputs[weightInput_].data()));
        weightReorder_.execute(stream_, weightSource_, args_[DNNL_ARG_WEIGHTS]);
      }
      primitive_.execute(stream_, args_);
      stream_.wait();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN: ", e.what());
    }
    return Status::success();
  }
  const char *implementation() const override { return "onednn"; }
  size_t workspaceBytes() const override { return workspaceBytes_; }

protected:
  OneDnnKernelBase() : stream_(cpuEngine()) {}

  void bindInput(int input, int arg, const memory::desc &md) {
    args_[arg] = memory(md, cpuEngine(), DNNL_MEMORY_NONE);
    inputBindings_.emplace_back(input, arg);
  }
  void bindOutput(int output, int arg, const memory::desc &md) {
    args_[arg] = memory(md, cpuEngine(), DNNL_MEMORY_NONE);
    outputBindings_.emplace_back(output, arg);
  }
  void bindScratchpad(const memory::desc &md) {
    args_[DNNL_ARG_SCRATCHPAD] = memory(md, cpuEngine());
    workspaceBytes_ += md.get_size();
  }

  // Weights given in `userMd`, wanted in `wantedMd` by the primitive:
  // constants are reordered here once; variables every run.
  void bindWeights(int input, const memory::desc &userMd,
                   const memory::desc &wantedMd, const void *constant) {
    if (userMd == wantedMd && !constant) {
      bindInput(input, DNNL_ARG_WEIGHTS, userMd);
      return;
    }
    if (userMd == wantedMd) { // constant in the right layout: point at it
      args_[DNNL_ARG_WEIGHTS] =
          memory(userMd, cpuEngine(), const_cast<void *>(constant));
      return;
    }
    args_[DNNL_ARG_WEIGHTS] = memory(wantedMd, cpuEngine());
    workspaceBytes_ += wantedMd.get_size();
    if (constant) {
      memory source(userMd, cpuEngine(), const_cast<void *>(constant));
      dnnl::reorder(source, args_[DNNL_ARG_WEIGHTS])
          .execute(stream_, source, args_[DNNL_ARG_WEIGHTS]);
      stream_.wait();
    } else {
      weightSource_ = memory(userMd, cpuEngine(), DNNL_MEMORY_NONE);
      weightReorder_ = dnnl::reorder(weightSource_, args_[DNNL_ARG_WEIGHTS]);
      weightInput_ = input;
    }
  }

  dnnl::stream stream_;
  dnnl::primitive primitive_;
  std::unordered_map<int, memory> args_;
  std::vector<std::pair<int, int>> inputBindings_, outputBindings_;
  memory weightSource_;
  dnnl::reorder weightReorder_;
  int weightInput_ = -1;
  size_t workspaceBytes_ = 0;
};

using OneDnnKernel = OneDnnKernelBase<Kernel>;

// A oneDNN kernel on blocked layouts: remembers the descs it agreed to.
class OneDnnLayoutKernel : public OneDnnKernelBase<cpu::LayoutKernel> {
public:
  memory::desc inputDesc(int i) const override { return inputDescs_.at(i); }
  memory::desc outputDesc() const override { return outputDesc_; }

protected:
  std::vector<memory::desc> inputDescs_;
  memory::desc outputDesc_;
};

dnnl::primitive_attr scratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

class ConvKernel : public OneDnnLayoutKernel {
public:
  static StatusOr<std::unique_ptr<Kernel>> create(const KernelConfig &c) {
    if (!allF32(c))
      return std::unique_ptr<Kernel>();
    auto kernel = std::unique_ptr<ConvKernel>(new ConvKernel());
    cpu::ConvPostOps post;
    post.activation = c.attrs().getString("activation", "none");
    GOPT_RETURN_IF_ERROR(kernel->init(c, /*anyLayout=*/false, post));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }
  // `anyLayout`: oneDNN picks source and destination layouts (NCHW only).
  Status init(const KernelConfig &c, bool anyLayout,
              const cpu::ConvPostOps &post) {
    OpAttrs attrs = c.attrs();
    bool nchw = attrs.getString("data_format", "NHWC") == "NCHW";
    bool oihw = attrs.getString("filter_format", "HWIO") == "OIHW";
    std::vector<int64_t> strides = attrs.getInts("strides", {1, 1});
    std::vector<int64_t> dilations = attrs.getInts("dilations", {1, 1});
    std::vector<int64_t> pads = attrs.getInts("pads", {0, 0, 0, 0});
    std::string padding = attrs.getString("padding", "EXPLICIT");
    int64_t groups = attrs.getInt("groups", 1);
    const Shape &x = c.inputShapes[0], &f = c.inputShapes[1];
    int64_t n = x[0], cin = nchw ? x[1] : x[3], h = nchw ? x[2] : x[1],
            w = nchw ? x[3] : x[2];
    int64_t kh = oihw ? f[2] : f[0], kw = oihw ? f[3] : f[1];
    int64_t cout = oihw ? f[0] : f[3];
    GOPT_ASSIGN_OR_RETURN(WindowDim wh,
                          computeWindowDim(h, kh, strides[0], dilations[0],
                                           padding, pads[0], pads[1], false));
    GOPT_ASSIGN_OR_RETURN(WindowDim ww,
                          computeWindowDim(w, kw, strides[1], dilations[1],
                                           padding, pads[2], pads[3], false));
    Tag act = anyLayout ? Tag::any : nchw ? Tag::nchw : Tag::nhwc;
    memory::desc srcMd({n, cin, h, w}, memory::data_type::f32, act);
    memory::desc dstMd({n, cout, wh.outSize, ww.outSize},
                       memory::data_type::f32, act);
    memory::desc userWeights;
    Dims weightDims;
    if (groups == 1) {
      weightDims = {cout, cin, kh, kw};
      userWeights = memory::desc(weightDims, memory::data_type::f32,
                                 oihw ? Tag::oihw : Tag::hwio);
    } else {
      weightDims = {groups, cout / groups, cin / groups, kh, kw};
      // HWIO with groups is [KH, KW, I/G, G*O/G]: oneDNN's hwigo.
      userWeights = memory::desc(weightDims, memory::data_type::f32,
                                 oihw ? Tag::goihw : Tag::hwigo);
    }
    memory::desc anyWeights(weightDims, memory::data_type::f32, Tag::any);
    bool hasBias = c.inputShapes.size() == 3;
    memory::desc biasMd({cout}, memory::data_type::f32, Tag::x);

    dnnl::primitive_attr attr = scratchpadAttr();
    dnnl::post_ops postOps;
    if (post.sum)
      postOps.append_sum(1.0f);
    const std::string &activation = post.activation;
    if (activation == "relu")
      postOps.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    else if (activation == "relu6")
      postOps.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, 6.0f);
    else if (activation == "clip")
      postOps.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, post.clipMin,
                             post.clipMax);
    else if (activation == "sigmoid")
      postOps.append_eltwise(1.0f, dnnl::algorithm::eltwise_logistic, 0.0f,
                             0.0f);
    attr.set_post_ops(postOps);
    Dims dnnlStrides = {strides[0], strides[1]};
    Dims dnnlDilations = {dilations[0] - 1, dilations[1] - 1}; // 0 = dense
    Dims padL = {wh.padBefore, ww.padBefore};
    Dims padR = {wh.padAfter, ww.padAfter};
    try {
      auto desc =
          hasBias ? dnnl::convolution_forward::desc(
                        dnnl::prop_kind::forward_inference,
                        dnnl::algorithm::convolution_direct, srcMd, anyWeights,
                        biasMd, dstMd, dnnlStrides, dnnlDilations, padL, padR)
                  : dnnl::convolution_forward::desc(
                        dnnl::prop_kind::forward_inference,
                        dnnl::algorithm::convolution_direct, srcMd, anyWeights,
                        dstMd, dnnlStrides, dnnlDilations, padL, padR);
      dnnl::convolution_forward::primitive_desc pd(desc, attr, cpuEngine());
      primitive_ = dnnl::convolution_forward(pd);
      inputDescs_ = {pd.src_desc()};
      outputDesc_ = pd.dst_desc();
      bindInput(0, DNNL_ARG_SRC, pd.src_desc());
      bindWeights(1, userWeights, pd.weights_desc(), c.constantInputs[1]);
      if (hasBias)
        bindInput(2, DNNL_ARG_BIAS, biasMd);
      bindOutput(0, DNNL_ARG_DST, pd.dst_desc());
      bindScratchpad(pd.scratchpad_desc());
    } catch (const dnnl::error &e) {
      return internalError("oneDNN convolution: ", e.what());
    }
    return Status::success();
  }
};

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

class MatmulKernel : public OneDnnKernel {
public:
  static StatusOr<std::unique_ptr<Kernel>> create(const KernelConfig &c) {
    if (!allF32(c) || c.outputShapes[0].size() > DNNL_MAX_NDIMS)
      return std::unique_ptr<Kernel>();
    auto kernel = std::unique_ptr<MatmulKernel>(new MatmulKernel());
    GOPT_RETURN_IF_ERROR(kernel->init(c));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

private:
  // Logical dims [..., rows, cols] padded with leading 1s to `rank`, with
  // strides of the row-major physical layout (transposed or not).
  static memory::desc operandDesc(const Shape &shape, bool transposed,
                                  size_t rank) {
    Shape physical(rank - shape.size(), 1);
    physical.insert(physical.end(), shape.begin(), shape.end());
    Dims strides(rank);
    int64_t stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= physical[d];
    }
    Dims dims = toDims(physical);
    if (transposed) {
      std::swap(dims[rank - 1], dims[rank - 2]);
      std::swap(strides[rank - 1], strides[rank - 2]);
    }
    return memory::desc(dims, memory::data_type::f32, strides);
  }

  Status init(const KernelConfig &c) {
    OpAttrs attrs = c.attrs();
    size_t rank = c.outputShapes[0].size();
    memory::desc aMd = operandDesc(c.inputShapes[0],
                                   attrs.getBool("transpose_a", false), rank);
    memory::desc bMd = operandDesc(c.inputShapes[1],
                                   attrs.getBool("transpose_b", false), rank);
    memory::desc cMd = operandDesc(c.outputShapes[0], false, rank);
    // A constant right operand (a layer's weights) is packed once into
    // the layout oneDNN's kernel for these shapes wants.
    const void *constantB =
        c.constantInputs.size() > 1 ? c.constantInputs[1] : nullptr;
    try {
      memory::desc wantedB =
          constantB ? memory::desc(bMd.dims(), memory::data_type::f32,
                                   memory::format_tag::any)
                    : bMd;
      dnnl::matmul::desc desc(aMd, wantedB, cMd);
      dnnl::matmul::primitive_desc pd(desc, scratchpadAttr(), cpuEngine());
      primitive_ = dnnl::matmul(pd);
      bindInput(0, DNNL_ARG_SRC, aMd);
      bindWeights(1, bMd, pd.weights_desc(), constantB);
      bindOutput(0, DNNL_ARG_DST, cMd);
      bindScratchpad(pd.scratchpad_desc());
    } catch (const dnnl::error &e) {
      return internalError("oneDNN matmul: ", e.what());
    }
    return Status::success();
  }
};

//===----------------------------------------------------------------------===//
// max_pool / avg_pool
//===----------------------------------------------------------------------===//

class PoolKernel : public OneDnnLayoutKernel {
public:
  static StatusOr<std::unique_ptr<Kernel>> create(const KernelConfig &c) {
    if (!allF32(c))
      return std::unique_ptr<Kernel>();
    auto kernel = std::unique_ptr<PoolKernel>(new PoolKernel());
    bool supported = false;
    GOPT_RETURN_IF_ERROR(kernel->init(c, supported, nullptr));
    if (!supported)
      return std::unique_ptr<Kernel>();
    return std::unique_ptr<Kernel>(std::move(kernel));
  }
  // `src`: the layout of the input (NCHW), else the plain one.
  Status init(const KernelConfig &c, bool &supported, const memory::desc *src) {
    OpAttrs attrs = c.attrs();
    bool isMax = c.op->kind() == "max_pool";
    bool nchw = attrs.getString("data_format", "NHWC") == "NCHW";
    std::vector<int64_t> kernel = attrs.getInts("kernel");
    std::vector<int64_t> strides = attrs.getInts("strides", {1, 1});
    std::vector<int64_t> pads = attrs.getInts("pads", {0, 0, 0, 0});
    std::string padding = attrs.getString("padding", "EXPLICIT");
    bool ceilMode = attrs.getBool("ceil_mode", false);
    bool includePad = attrs.getBool("count_include_pad", false);
    const Shape &x = c.inputShapes[0];
    int64_t h = nchw ? x[2] : x[1], w = nchw ? x[3] : x[2];
    int64_t channels = nchw ? x[1] : x[3];
    GOPT_ASSIGN_OR_RETURN(WindowDim wh,
                          computeWindowDim(h, kernel[0], strides[0], 1, padding,
                                           pads[0], pads[1], ceilMode));
    GOPT_ASSIGN_OR_RETURN(WindowDim ww,
                          computeWindowDim(w, kernel[1], strides[1], 1, padding,
                                           pads[2], pads[3], ceilMode));
    // ceil_mode may need more right padding than the op has; oneDNN then
    // counts it as padding, which only the include-pad average would see.
    auto rightPad = [](const WindowDim &d, int64_t in, int64_t k, int64_t s) {
      return std::max(d.padAfter, (d.outSize - 1) * s + k - in - d.padBefore);
    };
    int64_t padBottom = rightPad(wh, h, kernel[0], strides[0]);
    int64_t padRight = rightPad(ww, w, kernel[1], strides[1]);
    if (!isMax && includePad &&
        (padBottom != wh.padAfter || padRight != ww.padAfter))
      return Status::success();
    // A window entirely in padding averages to 0 in the reference; leave
    // such shapes to it.
    if (wh.padBefore >= kernel[0] || ww.padBefore >= kernel[1] ||
        padBottom >= kernel[0] || padRight >= kernel[1])
      return Status::success();
    Tag act = nchw ? Tag::nchw : Tag::nhwc;
    memory::desc srcMd =
        src ? *src
            : memory::desc({x[0], channels, h, w}, memory::data_type::f32, act);
    memory::desc dstMd({x[0], channels, wh.outSize, ww.outSize},
                       memory::data_type::f32, src ? Tag::any : act);
    dnnl::algorithm alg =
        isMax ? dnnl::algorithm::pooling_max
              : (includePad ? dnnl::algorithm::pooling_avg_include_padding
                            : dnnl::algorithm::pooling_avg_exclude_padding);
    try {
      dnnl::pooling_forward::desc desc(
          dnnl::prop_kind::forward_inference, alg, srcMd, dstMd,
          {strides[0], strides[1]}, {kernel[0], kernel[1]},
          {wh.padBefore, ww.padBefore}, {padBottom, padRight});
      dnnl::pooling_forward::primitive_desc pd(desc, scratchpadAttr(),
                                               cpuEngine());
      primitive_ = dnnl::pooling_forward(pd);
      inputDescs_ = {srcMd};
      outputDesc_ = pd.dst_desc();
      bindInput(0, DNNL_ARG_SRC, srcMd);
      bindOutput(0, DNNL_ARG_DST, pd.dst_desc());
      bindScratchpad(pd.scratchpad_desc());
    } catch (const dnnl::error &e) {
      return internalError("oneDNN pooling: ", e.what());
    }
    supported = true;
    return Status::success();
  }
};

//===----------------------------------------------------------------------===//
// batch_norm (inference)
//===----------------------------------------------------------------------===//

class BatchNormKernel : public OneDnnLayoutKernel {
public:
  static StatusOr<std::unique_ptr<Kernel>> create(const KernelConfig &c) {
    size_t rank = c.inputShapes[0].size();
    if (c.attrs().getBool("training", false))
      return cpu::createTrainingBatchNorm(c);
    if (!allF32(c) || (rank != 2 && rank != 4))
      return std::unique_ptr<Kernel>();
    auto kernel = std::unique_ptr<BatchNormKernel>(new BatchNormKernel());
    GOPT_RETURN_IF_ERROR(kernel->init(c, nullptr));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }
  // `src`: the layout of the input (NCHW, rank 4), else the plain one.
  Status init(const KernelConfig &c, const memory::desc *src) {
    OpAttrs attrs = c.attrs();
    const Shape &x = c.inputShapes[0];
    bool nchw = attrs.getString("data_format", "NHWC") == "NCHW";
    memory::desc dataMd;
    if (x.size() == 2)
      dataMd = memory::desc(toDims(x), memory::data_type::f32, Tag::nc);
    else if (nchw)
      dataMd = memory::desc(toDims(x), memory::data_type::f32, Tag::nchw);
    else
      dataMd = memory::desc({x[0], x[3], x[1], x[2]}, memory::data_type::f32,
                            Tag::nhwc);
    if (src)
      dataMd = *src;
    memory::desc channelMd({x.size() == 2 || nchw ? x[1] : x[3]},
                           memory::data_type::f32, Tag::x);
    auto flags = dnnl::normalization_flags::use_global_stats |
                 dnnl::normalization_flags::use_scale |
                 dnnl::normalization_flags::use_shift;
    try {
      dnnl::batch_normalization_forward::desc desc(
          dnnl::prop_kind::forward_inference, dataMd,
          static_cast<float>(attrs.getFloat("epsilon", 1e-3)), flags);
      dnnl::batch_normalization_forward::primitive_desc pd(
          desc, scratchpadAttr(), cpuEngine());
      primitive_ = dnnl::batch_normalization_forward(pd);
      inputDescs_ = {dataMd};
      outputDesc_ = dataMd;
      bindInput(0, DNNL_ARG_SRC, dataMd);
      bindInput(1, DNNL_ARG_SCALE, channelMd);
      bindInput(2, DNNL_ARG_SHIFT, channelMd);
      bindInput(3, DNNL_ARG_MEAN, channelMd);
      bindInput(4, DNNL_ARG_VARIANCE, channelMd);
      bindOutput(0, DNNL_ARG_DST, dataMd);
      bindScratchpad(pd.scratchpad_desc());
    } catch (const dnnl::error &e) {
      return internalError("oneDNN batch_normalization: ", e.what());
    }
    return Status::success();
  }
};

//===----------------------------------------------------------------------===//
// global_avg_pool (NCHW): one average pooling window over H x W
//===----------------------------------------------------------------------===//

class GlobalAvgPoolKernel : public OneDnnLayoutKernel {
public:
  Status init(const KernelConfig &c, const memory::desc &src) {
    const Shape &x = c.inputShapes[0];
    memory::desc dstMd({x[0], x[1], 1, 1}, memory::data_type::f32, Tag::any);
    try {
      dnnl::pooling_forward::desc desc(
          dnnl::prop_kind::forward_inference,
          dnnl::algorithm::pooling_avg_exclude_padding, src, dstMd, {1, 1},
          {x[2], x[3]}, {0, 0}, {0, 0});
      dnnl::pooling_forward::primitive_desc pd(desc, scratchpadAttr(),
                                               cpuEngine());
      primitive_ = dnnl::pooling_forward(pd);
      inputDescs_ = {src};
      outputDesc_ = pd.dst_desc();
      bindInput(0, DNNL_ARG_SRC, src);
      bindOutput(0, DNNL_ARG_DST, pd.dst_desc());
      bindScratchpad(pd.scratchpad_desc());
    } catch (const dnnl::error &e) {
      return internalError("oneDNN global pooling: ", e.what());
    }
    return Status::success();
  }
};

//===----------------------------------------------------------------------===//
// reorder between layouts
//===----------------------------------------------------------------------===//

class ReorderKernel : public OneDnnKernel {
public:
  Status init(const memory::desc &from, const memory::desc &to) {
    try {
      memory src(from, cpuEngine(), DNNL_MEMORY_NONE);
      memory dst(to, cpuEngine(), DNNL_MEMORY_NONE);
      primitive_ = dnnl::reorder(src, dst);
      bindInput(0, DNNL_ARG_FROM, from);
      bindOutput(0, DNNL_ARG_TO, to);
    } catch (const dnnl::error &e) {
      return internalError("oneDNN reorder: ", e.what());
    }
    return Status::success();
  }
};

} // namespace

namespace cpu {

memory::desc plainDesc(const Shape &shape) {
  Dims dims = toDims(shape);
  Dims strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dims[d + 1];
  return memory::desc(dims, memory::data_type::f32, strides);
}

StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutConv(const KernelConfig &c, const ConvPostOps &post) {
  if (!allF32(c) || c.inputShapes[0].size() != 4 ||
      c.attrs().getString("data_format", "NHWC") != "NCHW")
    return std::unique_ptr<LayoutKernel>();
  auto kernel = std::unique_ptr<ConvKernel>(new ConvKernel());
  GOPT_RETURN_IF_ERROR(kernel->init(c, /*anyLayout=*/true, post));
  return std::unique_ptr<LayoutKernel>(std::move(kernel));
}

StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutPool(const KernelConfig &c, const memory::desc &src) {
  if (!allF32(c) || c.inputShapes[0].size() != 4 ||
      c.attrs().getString("data_format", "NHWC") != "NCHW")
    return std::unique_ptr<LayoutKernel>();
  auto kernel = std::unique_ptr<PoolKernel>(new PoolKernel());
  bool supported = false;
  GOPT_RETURN_IF_ERROR(kernel->init(c, supported, &src));
  if (!supported)
    return std::unique_ptr<LayoutKernel>();
  return std::unique_ptr<LayoutKernel>(std::move(kernel));
}

StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutGlobalAvgPool(const KernelConfig &c, const memory::desc &src) {
  if (!allF32(c) || c.inputShapes[0].size() != 4 ||
      c.attrs().getString("data_format", "NHWC") != "NCHW")
    return std::unique_ptr<LayoutKernel>();
  auto kernel = std::make_unique<GlobalAvgPoolKernel>();
  GOPT_RETURN_IF_ERROR(kernel->init(c, src));
  return std::unique_ptr<LayoutKernel>(std::move(kernel));
}

StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutBatchNorm(const KernelConfig &c, const memory::desc &src) {
  if (!allF32(c) || c.inputShapes[0].size() != 4 ||
      c.attrs().getBool("training", false) ||
      c.attrs().getString("data_format", "NHWC") != "NCHW")
    return std::unique_ptr<LayoutKernel>();
  auto kernel = std::unique_ptr<BatchNormKernel>(new BatchNormKernel());
  GOPT_RETURN_IF_ERROR(kernel->init(c, &src));
  return std::unique_ptr<LayoutKernel>(std::move(kernel));
}

StatusOr<std::unique_ptr<Kernel>> createReorder(const memory::desc &from,
                                                const memory::desc &to) {
  auto kernel = std::make_unique<ReorderKernel>();
  GOPT_RETURN_IF_ERROR(kernel->init(from, to));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

} // namespace cpu

// TrainingKernels.cpp: oneDNN and fast kernels of the training ops.
void registerTrainingFastKernels(KernelRegistry &registry);

void registerOneDnnKernels(KernelRegistry &registry) {
  registry.registerKernel("conv2d", "cpu", ConvKernel::create);
  registry.registerKernel("matmul", "cpu", MatmulKernel::create);
  registry.registerKernel("max_pool", "cpu", PoolKernel::create);
  registry.registerKernel("avg_pool", "cpu", PoolKernel::create);
  registry.registerKernel("batch_norm", "cpu", BatchNormKernel::create);
  registerTrainingFastKernels(registry);
}

} // namespace gopt::runtime
