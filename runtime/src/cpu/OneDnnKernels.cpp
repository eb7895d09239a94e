//===- OneDnnKernels.cpp - Fast CPU kernels from oneDNN -------------------===//
//
// conv2d (NCHW/NHWC, groups, fused bias and activation), matmul (transposes,
// batch broadcast), max/avg pooling and inference batch_norm, in f32 and
// bf16 (a bf16 conv2d may keep an f32 bias; oneDNN takes batch_norm's
// statistics in f32 only, so bf16 ones are converted); int8 conv2d and
// matmul for the CPU schedule's quantize/dequantize chains. Primitives, memory
// descriptors and reordered constant weights are made once when the session
// resolves shapes; run() only swaps data handles and executes. Configurations
// oneDNN does not cover return a null kernel, and the session falls back to the
// reference kernel: so does bf16 on a CPU without AVX-512, where oneDNN 2.6 has
// no bf16 implementation at all.
//
//===----------------------------------------------------------------------===//
#include "AmxMatmul.h"
#include "BlockedPool.h"
#include "Conv1x1F32.h"
#include "ConvBatch1.h"
#include "ConvImplChoice.h"
#include "CpuBackend.h"
#include "DepthwiseConv.h"
#include "DepthwiseInt8.h"
#include "ElementLoops.h"
#include "EnvSwitch.h"
#include "FastKernels.h"
#include "GemvF32.h"
#include "MemoryBandwidth.h"
#include "OneDnn.h"
#include "ParallelRange.h"
#include "PointwiseAmx.h"
#include "SingleChannelConv.h"
#include "SmallConvTraining.h"
#include "StemAmx.h"
#include "StemConvF32.h"
#include "WinogradConv.h"
#include "gopt/runtime/Kernel.h"

#include <dnnl.hpp>
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

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
using DataType = memory::data_type;

// The oneDNN type of every result and of inputs `inputs` of `c`; undef when
// they differ or oneDNN does not compute in it.
DataType sharedType(const KernelConfig &c,
                    std::initializer_list<size_t> inputs) {
  DataType type = cpu::oneDnnType(c.outputTypes[0]);
  for (DType t : c.outputTypes)
    if (cpu::oneDnnType(t) != type)
      return DataType::undef;
  for (size_t i : inputs)
    if (i < c.inputTypes.size() && cpu::oneDnnType(c.inputTypes[i]) != type)
      return DataType::undef;
  return type;
}

// A convolution's data, filter and result share one type; its bias has
// that type or f32 (mixed precision keeps it f32).
DataType convType(const KernelConfig &c) {
  DataType type = sharedType(c, {0, 1});
  if (c.inputTypes.size() > 2 && c.inputTypes[2] != DType::kF32 &&
      cpu::oneDnnType(c.inputTypes[2]) != type)
    return DataType::undef;
  return type;
}

// Whether a primitive descriptor oneDNN failed to create only means the
// reference kernel runs: oneDNN 2.6 implements bf16 for AVX-512 CPUs only
// (and has no reference bf16 kernels), while every f32 configuration the
// factories pass it must work.
bool noBf16Kernel(DataType type) { return type == DataType::bf16; }

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
  // Whether oneDNN answered with its reference implementation (a plain
  // loop nest, 10-100x slower than its JIT kernels).
  bool runsReference() const {
    const char *impl = nullptr;
    dnnl_primitive_desc_query(primitive_.get_primitive_desc(),
                              dnnl_query_impl_info_str, 0, &impl);
    return impl && std::strncmp(impl, "ref", 3) == 0;
  }

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

// The shapes and window of a conv2d, in oneDNN's terms.
struct ConvGeometry {
  bool nchw;
  int64_t n, cin, h, w, cout;
  Dims srcDims, dstDims, weightDims;
  Tag weightTag; // the plan's filter layout
  Dims strides, dilations, padL, padR;
};

StatusOr<ConvGeometry> convGeometry(const KernelConfig &c) {
  OpAttrs attrs = c.attrs();
  ConvGeometry g;
  g.nchw = attrs.getString("data_format") == "NCHW";
  bool oihw = attrs.getString("filter_format") == "OIHW";
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> dilations = attrs.getWindowInts("dilations");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  int64_t groups = attrs.getInt("groups");
  const Shape &x = c.inputShapes[0], &f = c.inputShapes[1];
  g.n = x[0];
  g.cin = g.nchw ? x[1] : x[3];
  g.h = g.nchw ? x[2] : x[1];
  g.w = g.nchw ? x[3] : x[2];
  int64_t kh = oihw ? f[2] : f[0], kw = oihw ? f[3] : f[1];
  g.cout = oihw ? f[0] : f[3];
  GOPT_ASSIGN_OR_RETURN(WindowDim wh,
                        computeWindowDim(g.h, kh, strides[0], dilations[0],
                                         padding, pads[0], pads[1], false));
  GOPT_ASSIGN_OR_RETURN(WindowDim ww,
                        computeWindowDim(g.w, kw, strides[1], dilations[1],
                                         padding, pads[2], pads[3], false));
  g.srcDims = {g.n, g.cin, g.h, g.w};
  g.dstDims = {g.n, g.cout, wh.outSize, ww.outSize};
  if (groups == 1) {
    g.weightDims = {g.cout, g.cin, kh, kw};
    g.weightTag = oihw ? Tag::oihw : Tag::hwio;
  } else {
    g.weightDims = {groups, g.cout / groups, g.cin / groups, kh, kw};
    // HWIO with groups is [KH, KW, I/G, G*O/G]: oneDNN's hwigo.
    g.weightTag = oihw ? Tag::goihw : Tag::hwigo;
  }
  g.strides = {strides[0], strides[1]};
  g.dilations = {dilations[0] - 1, dilations[1] - 1}; // 0 = dense
  g.padL = {wh.padBefore, ww.padBefore};
  g.padR = {wh.padAfter, ww.padAfter};
  return g;
}

// Rows [lo, lo + inRows) of a convolution's source giving rows of its
// result, with the padding the band's edges need (a convolution chain run
// a band of rows at a time).
struct RowBand {
  int64_t inRows, outRows, padTop, padBottom;
};

// `g` on one image's band `band` of rows.
void applyBand(ConvGeometry &g, const RowBand &band) {
  g.n = 1;
  g.h = band.inRows;
  g.srcDims[0] = g.dstDims[0] = 1;
  g.srcDims[2] = band.inRows;
  g.dstDims[2] = band.outRows;
  g.padL[0] = band.padTop;
  g.padR[0] = band.padBottom;
}

// The forward-inference direct convolution of `g`, with a bias when `bias`.
dnnl::convolution_forward::desc
convDesc(const ConvGeometry &g, const memory::desc &src,
         const memory::desc &weights, const memory::desc *bias,
         const memory::desc &dst,
         dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct,
         dnnl::prop_kind prop = dnnl::prop_kind::forward_inference) {
  if (bias)
    return dnnl::convolution_forward::desc(prop, algorithm, src, weights, *bias,
                                           dst, g.strides, g.dilations, g.padL,
                                           g.padR);
  return dnnl::convolution_forward::desc(prop, algorithm, src, weights, dst,
                                         g.strides, g.dilations, g.padL,
                                         g.padR);
}

// Few output channels on a large image (Inception-v3's Conv2d_2a, 32 -> 32
// channels at 149x149, taken by the 4x3 kernel past batch 1): each tile's
// GEMMs are only 32 wide, so Winograd's input and output transforms (2.25x
// the image through memory) outweigh the multiplications saved. That layer
// alone at batch 8 ran 1.5x faster on the direct kernel (92-109 against
// 143-168 ms, one thread, minimum of 10 runs, three interleaved processes
// each, on a machine shared with builds), and in the network it then
// chains with the layer before it (77 against 102 ms for the two). Its
// 32 -> 64 neighbour (Conv2d_2b) stayed faster on Winograd (124-169
// against 170-208 ms), as do DenseNet's 128 -> 32 layers at 56x56 and
// below (under the size). GOPT_CONV_WINOGRAD_NARROW=1 keeps Winograd there.
bool narrowLargeWinogradSkipped(const ConvGeometry &g) {
  const char *keep = std::getenv("GOPT_CONV_WINOGRAD_NARROW");
  return !(keep && std::strcmp(keep, "1") == 0) && g.cout < 64 &&
         g.h * g.w > 64 * 64;
}

// Winograd for a training step's forward convolution: off unless
// GOPT_TRAINING_CONV_WINOGRAD=1 (docs/architecture.md, "oneDNN's Winograd
// for the f32 training convolutions": 6-10% off the MNIST CNN's 32->64
// forward at batch 64, nothing at 1024, and other bits than the direct
// kernel's).
bool trainingConvWinogradEnabled() {
  const char *setting = std::getenv("GOPT_TRAINING_CONV_WINOGRAD");
  return setting && std::strcmp(setting, "1") == 0;
}

// Winograd F(4x4, 3x3), where oneDNN has it (f32, 3x3, stride 1, no
// dilation or groups, blocked AVX-512 layouts): 2.25x fewer multiplications
// than the direct convolution. Only oneDNN's 4x3 kernel is taken: measured
// on an AMX Xeon, one thread, it ran ResNet-18's 3x3 stride-1 layers
// 1.4-2.6x faster than the direct (brgemm) kernel at batch 16 and the MNIST
// CNN's second convolution 1.55x faster at batch 32, within 1.3e-6 of the
// output's scale; the 2x3 kernel oneDNN offers for small problems was
// slower than the direct one. Only for a constant filter (inference): its
// transform is then made once, where a training step's filter would be
// transformed every step, and training keeps the direct kernel's rounding
// (its tests match PyTorch within 1e-6). GOPT_CONV_WINOGRAD=0 turns it off.
// With `anyTile`, any of oneDNN's Winograd kernels is taken: one image at a
// time (ConvIntoConcatKernel), where oneDNN offers only its 2x3 kernel,
// that ran SqueezeNet's fire modules' 3x3 convolutions 1.25-1.5x faster
// than the direct kernel (one thread).
// With `training`, the forward_training kernel: it takes the filter in
// OIhw16i16o and transforms it itself, where the inference one wants it
// pre-transformed (a reorder of 1.1 ms for the MNIST CNN's 64x32x3x3 filter,
// every step for a filter that changes every step).
std::optional<dnnl::convolution_forward::primitive_desc>
winogradConv(const ConvGeometry &g, DataType type, bool constantFilter,
             const memory::desc &src, const memory::desc &weights,
             const memory::desc *bias, const memory::desc &dst,
             const dnnl::primitive_attr &attr, bool anyTile = false,
             bool training = false) {
  const char *setting = std::getenv("GOPT_CONV_WINOGRAD");
  bool enabled = !setting || std::strcmp(setting, "0") != 0;
  // Channels in whole blocks of 16: the kernel pads them, and the MNIST
  // CNN's first layer (1 input channel) ran 5x slower padded.
  bool geometry = g.weightDims.size() == 4 && g.weightDims[2] == 3 &&
                  g.weightDims[3] == 3 && g.strides == Dims{1, 1} &&
                  g.dilations == Dims{0, 0} && g.cin % 16 == 0 &&
                  g.cout % 16 == 0;
  if (!enabled || type != DataType::f32 || !constantFilter || !geometry)
    return std::nullopt;
  if (narrowLargeWinogradSkipped(g))
    return std::nullopt;
  // F(2x2, 3x3) (`jit_fp32_wino_2x3`, what oneDNN offers where it has no
  // 4x3 kernel: one image) pays while its transformed filter (16 x cin x
  // cout floats) stays in a core's L2: ResNet-18's 64- and 128-channel
  // layers at batch 1 ran 1.4-1.6x faster, its 256- and 512-channel ones
  // (4 and 16 MiB of filter) no faster and 0.8x (Inception's 448 x 384).
  // DenseNet's 128 -> 32 channels ran 1.3x slower in the network (its
  // concats then read mixed layouts): at least 64 output channels.
  // Inception-v3's 80 -> 192 channels at 73x73 (an odd number of 16-channel
  // input blocks) ran 2x slower in the network: input channels in pairs of
  // blocks. GOPT_CONV_WINOGRAD=4x3 keeps only the 4x3 kernel.
  constexpr int64_t kMaxWino2x3FilterBytes = int64_t(1) << 20;
  bool smallFilter =
      16 * g.cin * g.cout * int64_t(sizeof(float)) <= kMaxWino2x3FilterBytes &&
      g.cout >= 64 && g.cin % 32 == 0;
  bool allow2x3 = anyTile || (smallFilter &&
                              !(setting && std::strcmp(setting, "4x3") == 0));
  try {
    dnnl::convolution_forward::primitive_desc pd(
        convDesc(g, src, weights, bias, dst,
                 dnnl::algorithm::convolution_winograd,
                 training ? dnnl::prop_kind::forward_training
                          : dnnl::prop_kind::forward_inference),
        attr, cpuEngine());
    const char *impl = pd.impl_info_str();
    if (std::strstr(impl, "wino_4x3") ||
        (allow2x3 && std::strstr(impl, "wino_2x3")))
      return pd;
  } catch (const dnnl::error &) {
    // No Winograd kernel for this layout, shape, ISA or post-op.
  }
  return std::nullopt;
}

// The direct convolution writing `dst`'s layout, where oneDNN has a kernel
// for it that is not its reference one; false otherwise.
bool directConvInto(const ConvGeometry &g, const memory::desc &src,
                    const memory::desc &weights, const memory::desc *bias,
                    const memory::desc &dst, const dnnl::primitive_attr &attr,
                    dnnl::convolution_forward::primitive_desc &pd) {
  try {
    dnnl::convolution_forward::primitive_desc candidate(
        convDesc(g, src, weights, bias, dst), attr, cpuEngine());
    if (std::strstr(candidate.impl_info_str(), "ref"))
      return false;
    pd = candidate;
    return true;
  } catch (const dnnl::error &) {
    return false; // no kernel writes that layout
  }
}

// Appends activation `name` (clip with lo/hi) as an eltwise post-op.
void appendActivation(dnnl::post_ops &postOps, const std::string &name,
                      float lo, float hi) {
  if (name == "relu")
    postOps.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  else if (name == "relu6")
    postOps.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, 6.0f);
  else if (name == "clip")
    postOps.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, lo, hi);
  else if (name == "sigmoid")
    postOps.append_eltwise(1.0f, dnnl::algorithm::eltwise_logistic, 0.0f, 0.0f);
}

class ConvKernel : public OneDnnLayoutKernel {
public:
  static StatusOr<std::unique_ptr<Kernel>> create(const KernelConfig &c) {
    if (convType(c) == DataType::undef)
      return std::unique_ptr<Kernel>();
    if (cpu::singleChannelConvEnabled())
      if (std::unique_ptr<Kernel> direct = cpu::createSingleChannelConv(c))
        return direct;
    // bf16 small convs (MNIST's 32->64) on AMX tiles of gopt's own.
    if (std::unique_ptr<Kernel> amx = cpu::createAmxConvForward(c))
      return amx;
    auto kernel = std::unique_ptr<ConvKernel>(new ConvKernel());
    cpu::ConvPostOps post;
    post.activation = c.attrs().getString("activation");
    bool supported = false;
    GOPT_RETURN_IF_ERROR(kernel->init(c, /*anyLayout=*/false, post, supported));
    if (!supported)
      return std::unique_ptr<Kernel>();
    return std::unique_ptr<Kernel>(std::move(kernel));
  }
  // `anyLayout`: oneDNN picks source and destination layouts (NCHW only);
  // `fixedSrc`, when given, is the source's layout (a chain's earlier
  // stage wrote it).
  // `preferredDst`, when given, is the layout the result's reader wants
  // (a Winograd convolution's blocked source), and `blockedSrc` the
  // nChw16c layout the source is already in: taken where oneDNN has a
  // JIT kernel for them, each saves a reorder of a whole tensor.
  // `band`, when given: one image's band of rows, the result in NHWC.
  Status init(const KernelConfig &c, bool anyLayout,
              const cpu::ConvPostOps &post, bool &supported,
              const memory::desc *fixedSrc = nullptr,
              const memory::desc *preferredDst = nullptr,
              const memory::desc *blockedSrc = nullptr,
              const RowBand *band = nullptr) {
    DataType type = convType(c);
    GOPT_ASSIGN_OR_RETURN(ConvGeometry g, convGeometry(c));
    if (band)
      applyBand(g, *band);
    Tag act = anyLayout ? Tag::any : g.nchw ? Tag::nchw : Tag::nhwc;
    memory::desc srcMd =
        fixedSrc ? *fixedSrc : memory::desc(g.srcDims, type, act);
    memory::desc dstMd(g.dstDims, type, band ? Tag::nhwc : act);
    memory::desc userWeights(g.weightDims, type, g.weightTag);
    memory::desc anyWeights(g.weightDims, type, Tag::any);
    bool hasBias = c.inputShapes.size() == 3;
    memory::desc biasMd(
        {g.cout}, hasBias ? cpu::oneDnnType(c.inputTypes[2]) : type, Tag::x);

    dnnl::primitive_attr attr = scratchpadAttr();
    dnnl::post_ops postOps;
    if (post.sum)
      postOps.append_sum(1.0f);
    appendActivation(postOps, post.activation, post.clipMin, post.clipMax);
    // An f32 SiLU or HardSwish last (EfficientNet's, MobileNetV3's
    // convolutions) runs as gopt's pass over the result just written (in
    // cache at these sizes) rather than as oneDNN 2.6's eltwise_swish /
    // eltwise_hardswish post-op, 2-3x slower per element for SiLU.
    tailAfter_ = cpu::DepthwiseTail::kNone;
    if (type == DataType::f32 && !post.tail.empty() &&
        memory::desc(g.dstDims, type, Tag::nchw).get_size() <=
            (size_t(8) << 20)) {
      const cpu::ConvPostOps::Eltwise &e = post.tail.back();
      if (e.algorithm == dnnl::algorithm::eltwise_swish && e.alpha == 1.0f &&
          cpu::siluInPlaceEnabled())
        tailAfter_ = cpu::DepthwiseTail::kSwish;
      else if (e.algorithm == dnnl::algorithm::eltwise_hardswish &&
               e.alpha == 1.0f / 6.0f && e.beta == 0.5f &&
               cpu::hardSwishInPlaceEnabled())
        tailAfter_ = cpu::DepthwiseTail::kHardSwish;
    }
    const size_t kept =
        post.tail.size() - (tailAfter_ != cpu::DepthwiseTail::kNone ? 1 : 0);
    for (size_t i = 0; i < kept; ++i)
      postOps.append_eltwise(1.0f, post.tail[i].algorithm, post.tail[i].alpha,
                             post.tail[i].beta);
    attr.set_post_ops(postOps);
    dnnl::convolution_forward::primitive_desc pd;
    // A training step's forward (plain layouts, a filter that changes every
    // step): Winograd in its blocked layouts, reordered from and to the
    // plan's (see winogradForTraining).
    const bool plainWinograd =
        !anyLayout && !fixedSrc && !band && !preferredDst && !blockedSrc &&
        !c.constantInputs[1] && !post.sum && trainingConvWinogradEnabled();
    memory::desc anySrc(g.srcDims, type, Tag::any);
    memory::desc anyDst(g.dstDims, type, Tag::any);
    try {
      std::optional<dnnl::convolution_forward::primitive_desc> winograd =
          winogradConv(g, type, c.constantInputs[1] != nullptr || plainWinograd,
                       plainWinograd ? anySrc : srcMd, anyWeights,
                       hasBias ? &biasMd : nullptr,
                       plainWinograd                      ? anyDst
                       : anyWinogradTile_ && preferredDst ? *preferredDst
                                                          : dstMd,
                       attr, anyWinogradTile_, plainWinograd);
      winograd_ = winograd.has_value();
      // With a blocked source, the result stays in that blocking unless
      // its reader wants another layout.
      memory::desc blockedDst(g.dstDims, type, Tag::aBcd16b);
      const memory::desc *wantedDst = preferredDst ? preferredDst
                                      : blockedSrc ? &blockedDst
                                                   : nullptr;
      if (winograd)
        pd = *winograd;
      else if (!(wantedDst && anyLayout &&
                 directConvInto(g, blockedSrc ? *blockedSrc : srcMd, anyWeights,
                                hasBias ? &biasMd : nullptr, *wantedDst, attr,
                                pd)))
        pd = dnnl::convolution_forward::primitive_desc(
            convDesc(g, srcMd, anyWeights, hasBias ? &biasMd : nullptr, dstMd),
            attr, cpuEngine());
      // One image's f32 convolution: the fastest of oneDNN's kernels for
      // the layouts it chose, timed here (ConvImplChoice.h).
      if (!winograd && !band && g.n == 1 && g.weightDims.size() == 4 &&
          type == DataType::f32 && c.constantInputs[1] &&
          cpu::convMeasuredImplEnabled())
        pd = cpu::fastestConvImpl(pd, [&](const memory::desc &src,
                                          const memory::desc &dst) {
          return convDesc(g, src, anyWeights, hasBias ? &biasMd : nullptr, dst);
        });
    } catch (const dnnl::error &e) {
      // Without a kernel for these post-ops the ops run one by one.
      if (noBf16Kernel(type) || !post.tail.empty())
        return Status::success();
      return internalError("oneDNN convolution: ", e.what());
    }
    try {
      primitive_ = dnnl::convolution_forward(pd);
      inputDescs_ = {pd.src_desc()};
      outputDesc_ = pd.dst_desc();
      if (plainWinograd && winograd_) {
        // The blocked source and result live in the kernel's workspace.
        args_[DNNL_ARG_SRC] = memory(pd.src_desc(), cpuEngine());
        args_[DNNL_ARG_DST] = memory(pd.dst_desc(), cpuEngine());
        workspaceBytes_ += pd.src_desc().get_size() + pd.dst_desc().get_size();
        plainSrc_ = memory(srcMd, cpuEngine(), DNNL_MEMORY_NONE);
        plainDst_ = memory(dstMd, cpuEngine(), DNNL_MEMORY_NONE);
        srcReorder_ = dnnl::reorder(plainSrc_, args_[DNNL_ARG_SRC]);
        dstReorder_ = dnnl::reorder(args_[DNNL_ARG_DST], plainDst_);
        inputDescs_ = {srcMd};
        outputDesc_ = dstMd;
      } else {
        bindInput(0, DNNL_ARG_SRC, pd.src_desc());
        bindOutput(0, DNNL_ARG_DST, pd.dst_desc());
      }
      bindWeights(1, userWeights, pd.weights_desc(), c.constantInputs[1]);
      if (hasBias)
        bindInput(2, DNNL_ARG_BIAS, biasMd);
      bindScratchpad(pd.scratchpad_desc());
      implInfo_ = pd.impl_info_str();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN convolution: ", e.what());
    }
    supported = true;
    return Status::success();
  }
  const char *implementation() const override {
    return winograd_ ? "onednn-winograd" : "onednn";
  }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    if (srcReorder_) {
      try {
        plainSrc_.set_data_handle(const_cast<void *>(inputs[0].data()));
        srcReorder_.execute(stream_, plainSrc_, args_[DNNL_ARG_SRC]);
      } catch (const dnnl::error &e) {
        return internalError("oneDNN: ", e.what());
      }
    }
    GOPT_RETURN_IF_ERROR(OneDnnLayoutKernel::run(inputs, outputs));
    if (dstReorder_) {
      try {
        plainDst_.set_data_handle(outputs[0].data());
        dstReorder_.execute(stream_, args_[DNNL_ARG_DST], plainDst_);
        stream_.wait();
      } catch (const dnnl::error &e) {
        return internalError("oneDNN: ", e.what());
      }
    }
    if (tailAfter_ != cpu::DepthwiseTail::kNone)
      cpu::tailInPlace(
          static_cast<float *>(outputs[0].data()),
          static_cast<int64_t>(outputDesc_.get_size() / sizeof(float)),
          tailAfter_, omp_in_parallel() ? 1 : omp_get_max_threads());
    return Status::success();
  }
  bool isWinograd() const { return winograd_; }
  // Before init: any Winograd tile size, into `preferredDst` (one image).
  void allowAnyWinogradTile() { anyWinogradTile_ = true; }

  static std::unique_ptr<Kernel>
  createResidualAdd(const KernelConfig &c, const std::string &activation);

private:
  std::string implInfo_;
  bool winograd_ = false;
  bool anyWinogradTile_ = false;
  // Winograd on a plain-layout source and result: their reorders.
  memory plainSrc_, plainDst_;
  dnnl::reorder srcReorder_, dstReorder_;
  // gopt's SiLU or HardSwish pass after oneDNN's kernel.
  cpu::DepthwiseTail tailAfter_ = cpu::DepthwiseTail::kNone;
};

// A convolution writing its result straight into a channel concatenation's
// destination (SqueezeNet's fire modules, Inception's branches), so the
// concat copies nothing: channels [offset, offset + cout) of an nChw16c
// tensor are contiguous within each image but not across the batch, and
// oneDNN's JIT kernels take only dense destinations, so the convolution runs
// one image at a time, each on its own slice.
class ConvIntoConcatKernel : public cpu::LayoutKernel {
public:
  static StatusOr<std::unique_ptr<cpu::LayoutKernel>>
  create(const KernelConfig &config, const cpu::ConvPostOps &post,
         const memory::desc &src, const memory::desc &concatDst,
         int64_t channelOffset, bool anyWinogradTile) {
    auto none = [] { return std::unique_ptr<cpu::LayoutKernel>(); };
    const Shape &x = config.inputShapes[0];
    const Shape &y = config.outputShapes[0];
    memory::dims whole = concatDst.dims();
    if (convType(config) != DataType::f32 || x.size() != 4 || y.size() != 4 ||
        config.attrs().getString("data_format") != "NCHW" ||
        whole.size() != 4 || whole[0] != y[0] || whole[2] != y[2] ||
        whole[3] != y[3] || channelOffset % 16 != 0 || y[1] % 16 != 0 ||
        channelOffset + y[1] > whole[1] ||
        concatDst != memory::desc(whole, DataType::f32, Tag::aBcd16b))
      return none();
    // One image of the source: only layouts with the batch outermost.
    std::optional<Tag> srcTag;
    for (Tag t : {Tag::aBcd16b, Tag::aBcd8b, Tag::acdb, Tag::abcd})
      if (src == memory::desc(src.dims(), DataType::f32, t))
        srcTag = t;
    if (!srcTag || src.dims() != memory::dims(x.begin(), x.end()))
      return none();
    KernelConfig image = config;
    image.inputShapes[0][0] = 1;
    image.outputShapes[0][0] = 1;
    memory::dims srcImage = src.dims(), dstImage = {1, y[1], y[2], y[3]};
    srcImage[0] = 1;
    memory::desc src1(srcImage, DataType::f32, *srcTag);
    memory::desc dst1(dstImage, DataType::f32, Tag::aBcd16b);
    auto kernel =
        std::unique_ptr<ConvIntoConcatKernel>(new ConvIntoConcatKernel());
    if (anyWinogradTile)
      kernel->conv_.allowAnyWinogradTile();
    bool supported = false;
    GOPT_RETURN_IF_ERROR(kernel->conv_.init(image, /*anyLayout=*/true, post,
                                            supported, &src1, &dst1));
    if (!supported || kernel->conv_.runsReference() ||
        kernel->conv_.inputDesc(0) != src1 ||
        kernel->conv_.outputDesc() != dst1)
      return none();
    kernel->batch_ = x[0];
    kernel->src_ = src;
    kernel->dst_ = concatDst;
    kernel->srcImageBytes_ = src.get_size() / x[0];
    kernel->dstImageBytes_ = concatDst.get_size() / x[0];
    kernel->offsetBytes_ = channelOffset * y[2] * y[3] * sizeof(float);
    kernel->srcShape_ = image.inputShapes[0];
    kernel->dstShape_ = image.outputShapes[0];
    return std::unique_ptr<cpu::LayoutKernel>(std::move(kernel));
  }
  memory::desc inputDesc(int i) const override {
    return i == 0 ? src_ : memory::desc();
  }
  // The whole concatenation, of which this kernel writes its slice.
  memory::desc outputDesc() const override { return dst_; }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    std::vector<Tensor> in = inputs;
    std::vector<Tensor> out(1);
    const char *src = static_cast<const char *>(inputs[0].data());
    char *dst = static_cast<char *>(outputs[0].data()) + offsetBytes_;
    for (int64_t n = 0; n < batch_; ++n) {
      in[0] = Tensor::view(DType::kF32, srcShape_,
                           const_cast<char *>(src) + n * srcImageBytes_);
      out[0] = Tensor::view(DType::kF32, dstShape_, dst + n * dstImageBytes_);
      GOPT_RETURN_IF_ERROR(conv_.run(in, out));
    }
    return Status::success();
  }
  const char *implementation() const override {
    return std::strcmp(conv_.implementation(), "onednn-winograd") == 0
               ? "onednn-winograd-into-concat"
               : "onednn-into-concat";
  }
  size_t workspaceBytes() const override { return conv_.workspaceBytes(); }

private:
  ConvKernel conv_;
  int64_t batch_ = 0;
  memory::desc src_, dst_;
  size_t srcImageBytes_ = 0, dstImageBytes_ = 0, offsetBytes_ = 0;
  Shape srcShape_, dstShape_;
};

//===----------------------------------------------------------------------===//
// int8 conv2d and matmul
//===----------------------------------------------------------------------===//

// The attributes of an int8 primitive computing Int8Params' formula:
// oneDNN applies the output scales to (acc + bias), so the bias is divided
// by the source and weight scales, and the post-ops work in the units the
// output scales leave (requantScale when requantizing, then dstScale).
dnnl::primitive_attr int8Attr(const cpu::Int8Params &p, int mask,
                              std::vector<float> &biasScales) {
  float dstUnit = p.dstScale > 0 ? p.dstScale : 1.0f;
  float firstUnit = p.requantize ? p.requantScale : dstUnit;
  std::vector<float> scales;
  for (float ws : p.weightScales) {
    biasScales.push_back(p.srcScale * ws);
    scales.push_back(p.srcScale * ws / firstUnit);
  }
  dnnl::primitive_attr attr = scratchpadAttr();
  attr.set_output_scales(scales.size() == 1 ? 0 : mask, scales);
  dnnl::post_ops postOps;
  if (p.requantize) {
    postOps.append_eltwise(1.0f, dnnl::algorithm::eltwise_round, 0.0f, 0.0f);
    postOps.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, -128.0f,
                           127.0f);
    postOps.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear,
                           p.requantScale / dstUnit, 0.0f);
  }
  if (p.sum)
    postOps.append_sum(p.sumScale / dstUnit,
                       p.sumSigned ? DataType::s8 : DataType::undef);
  // Activations in destination units; a u8 result also stays <= 127, as
  // the plan's i8 tensor would.
  std::string act = p.activation;
  float lo = p.clipMin / dstUnit, hi = p.clipMax / dstUnit;
  if (act == "relu6") {
    act = "clip";
    lo = 0;
    hi = 6 / dstUnit;
  }
  if (p.dstUnsigned) {
    if (act == "relu")
      lo = 0, hi = 127;
    act = "clip";
    lo = std::max(lo, 0.0f);
    hi = std::min(hi, 127.0f);
  }
  appendActivation(postOps, act, lo, hi);
  attr.set_post_ops(postOps);
  return attr;
}

DataType int8DstType(const cpu::Int8Params &p) {
  if (p.dstScale <= 0)
    return DataType::f32;
  return p.dstUnsigned ? DataType::u8 : DataType::s8;
}

// Whether Int8Params can be computed: sigmoid does not commute with the
// scaling into int8 units.
bool int8Supported(const cpu::Int8Params &p) {
  if (p.activation == "sigmoid" && p.dstScale > 0)
    return false;
  if (p.dstUnsigned && p.activation != "relu" && p.activation != "relu6" &&
      !(p.activation == "clip" && p.clipMin >= 0))
    return false;
  return p.weights && !p.weightScales.empty();
}

// Keeps the scaled bias the primitive reads.
template <typename Base> class Int8KernelBase : public Base {
protected:
  // bias[c] / biasScales[c] (one scale for all when there is one).
  void bindScaledBias(const float *bias, const std::vector<float> &biasScales,
                      int64_t channels) {
    memory::desc md({channels}, DataType::f32, Tag::x);
    this->args_[DNNL_ARG_BIAS] = memory(md, cpuEngine());
    float *b =
        static_cast<float *>(this->args_[DNNL_ARG_BIAS].get_data_handle());
    for (int64_t c = 0; c < channels; ++c)
      b[c] = bias[c] / biasScales[biasScales.size() == 1 ? 0 : c];
    this->workspaceBytes_ += md.get_size();
  }
};

// Whether an int8 1x1 convolution that oneDNN gave an AMX kernel should
// run an AVX-512 VNNI kernel instead: AMX tiles take 64 bytes of input
// channels a row, so with 32 or fewer channels most of every tile row is
// padding. On an AMX Xeon (one thread, min of 200 calls) oneDNN's
// brgconv_1x1 VNNI kernel ran MobileNetV2's expansions 16 -> 96, 24 -> 144
// and 32 -> 192 channels 1.2-1.5x, 1.2x and 1.0-1.1x as fast as its AMX
// kernel (bf16's AMX kernels stay fastest: two channels a dword); only
// expansions to 64 or more channels are taken (32 -> 16 gained less).
// GOPT_INT8_1X1_VNNI=0 keeps oneDNN's choice.
bool preferVnni1x1(const ConvGeometry &g,
                   const dnnl::convolution_forward::primitive_desc &pd) {
  static const bool enabled = envSwitchOn("GOPT_INT8_1X1_VNNI");
  const Dims &w = g.weightDims;
  return enabled && w.size() == 4 && w[2] == 1 && w[3] == 1 && g.cin <= 32 &&
         g.cout >= 64 && std::strstr(pd.impl_info_str(), "amx") != nullptr;
}

class Int8ConvKernel : public Int8KernelBase<OneDnnLayoutKernel> {
public:
  // `fixedSrc`, when given, is the source's layout (a chain's earlier stage
  // wrote it).
  // `band`, when given: one image's band of rows, the result in NHWC.
  Status init(const KernelConfig &c, const cpu::Int8Params &p, bool &supported,
              const memory::desc *fixedSrc = nullptr,
              const RowBand *band = nullptr) {
    GOPT_ASSIGN_OR_RETURN(ConvGeometry g, convGeometry(c));
    if (band)
      applyBand(g, *band);
    if (!g.nchw || (p.weightScales.size() != 1 &&
                    static_cast<int64_t>(p.weightScales.size()) != g.cout))
      return Status::success();
    DataType srcType = p.srcUnsigned ? DataType::u8 : DataType::s8;
    memory::desc srcMd = memory::desc(g.srcDims, srcType, Tag::any);
    if (fixedSrc) { // the same bits: the values are in [0, 127] if u8
      dnnl_memory_desc_t d = fixedSrc->data;
      d.data_type = memory::convert_to_c(srcType);
      srcMd = memory::desc(d);
    }
    memory::desc dstMd(g.dstDims, int8DstType(p), band ? Tag::nhwc : Tag::any);
    memory::desc userWeights(g.weightDims, DataType::s8, g.weightTag);
    memory::desc anyWeights(g.weightDims, DataType::s8, Tag::any);
    memory::desc biasMd({g.cout}, DataType::f32, Tag::x);
    std::vector<float> biasScales;
    dnnl::primitive_attr attr = int8Attr(p, 1 << 1, biasScales);
    dnnl::convolution_forward::primitive_desc pd;
    try {
      pd = dnnl::convolution_forward::primitive_desc(
          convDesc(g, srcMd, anyWeights, p.bias ? &biasMd : nullptr, dstMd),
          attr, cpuEngine());
      if (preferVnni1x1(g, pd)) {
        auto make = [&] {
          return dnnl::convolution_forward::primitive_desc(
              convDesc(g, srcMd, anyWeights, p.bias ? &biasMd : nullptr, dstMd),
              attr, cpuEngine());
        };
        // oneDNN lists its AMX kernels first: the place in its list of the
        // first VNNI kernel for the same layouts (brgconv_1x1). Not the
        // jit_int8_1x1 kernel after it, though faster still for 16
        // channels: creating it crashed oneDNN 2.6 for a 32 -> 16 channel
        // convolution, and the list is walked by creating each kernel.
        int chosen = -1, index = 0;
        for (auto it = make(); chosen < 0 && it.next_impl();) {
          ++index;
          if (std::strstr(it.impl_info_str(), "avx512_core_vnni") &&
              it.src_desc() == pd.src_desc() && it.dst_desc() == pd.dst_desc())
            chosen = index;
        }
        if (chosen > 0) {
          pd = make();
          for (int i = 0; i < chosen; ++i)
            pd.next_impl();
        }
      }
    } catch (const dnnl::error &) {
      return Status::success(); // the f32 schedule of the Q/DQ ops runs
    }
    try {
      primitive_ = dnnl::convolution_forward(pd);
      inputDescs_ = {pd.src_desc()};
      outputDesc_ = pd.dst_desc();
      bindInput(0, DNNL_ARG_SRC, pd.src_desc());
      bindWeights(1, userWeights, pd.weights_desc(), p.weights);
      if (p.bias)
        bindScaledBias(p.bias, biasScales, g.cout);
      bindOutput(0, DNNL_ARG_DST, pd.dst_desc());
      bindScratchpad(pd.scratchpad_desc());
    } catch (const dnnl::error &e) {
      return internalError("oneDNN int8 convolution: ", e.what());
    }
    supported = true;
    return Status::success();
  }
};

class Int8MatmulKernel : public Int8KernelBase<OneDnnKernel> {
public:
  Status init(const KernelConfig &c, const cpu::Int8Params &p,
              bool &supported) {
    OpAttrs attrs = c.attrs();
    const Shape &a = c.inputShapes[0], &b = c.inputShapes[1];
    if (a.size() != 2 || b.size() != 2 || p.bias ||
        attrs.getBool("transpose_a"))
      return Status::success();
    bool transposeB = attrs.getBool("transpose_b");
    int64_t m = a[0], k = a[1], n = transposeB ? b[0] : b[1];
    if (p.weightScales.size() != 1 &&
        static_cast<int64_t>(p.weightScales.size()) != n)
      return Status::success();
    memory::desc aMd({m, k}, p.srcUnsigned ? DataType::u8 : DataType::s8,
                     Tag::ab);
    memory::desc userB({k, n}, DataType::s8, transposeB ? Tag::ba : Tag::ab);
    memory::desc anyB({k, n}, DataType::s8, Tag::any);
    memory::desc cMd({m, n}, int8DstType(p), Tag::ab);
    std::vector<float> biasScales;
    dnnl::primitive_attr attr = int8Attr(p, 1 << 1, biasScales);
    dnnl::matmul::primitive_desc pd;
    try {
      pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(aMd, anyB, cMd),
                                        attr, cpuEngine());
    } catch (const dnnl::error &) {
      return Status::success();
    }
    try {
      primitive_ = dnnl::matmul(pd);
      bindInput(0, DNNL_ARG_SRC, aMd);
      bindWeights(1, userB, pd.weights_desc(), p.weights);
      bindOutput(0, DNNL_ARG_DST, cMd);
      bindScratchpad(pd.scratchpad_desc());
    } catch (const dnnl::error &e) {
      return internalError("oneDNN int8 matmul: ", e.what());
    }
    supported = true;
    return Status::success();
  }
};

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

// A dense layer at batch 1, one f32 row times a constant weight [K, N]
// (transposed or not) with the bias row and relu the schedule fuses, on
// gopt's matrix-vector kernel (GemvF32.h: 2x oneDNN 2.6's brg matmul on
// MobileNetV3's classifier). GOPT_GEMV_F32=0 keeps oneDNN's.
class GemvF32Kernel : public cpu::LayoutKernel {
public:
  static std::unique_ptr<cpu::LayoutKernel>
  create(const KernelConfig &c, const cpu::MatmulPostOps &post) {
    if (!cpu::gemvF32Enabled() || post.sum || post.eltwise.size() > 1 ||
        c.inputShapes.size() < 2 || c.inputTypes[0] != DType::kF32 ||
        c.inputTypes[1] != DType::kF32 || c.outputTypes[0] != DType::kF32 ||
        c.constantInputs.size() < 2 || !c.constantInputs[1])
      return nullptr;
    if (!post.eltwise.empty() &&
        (post.eltwise[0].algorithm != dnnl::algorithm::eltwise_relu ||
         post.eltwise[0].alpha != 0))
      return nullptr;
    OpAttrs attrs = c.attrs();
    const Shape &a = c.inputShapes[0], &b = c.inputShapes[1];
    if (attrs.getBool("transpose_a") || a.empty() || b.size() < 2)
      return nullptr;
    const bool transB = attrs.getBool("transpose_b");
    const int64_t k = a.back();
    const int64_t n = transB ? b[b.size() - 2] : b.back();
    // One row (every leading dim 1) and a 2-D weight (leading dims 1); the
    // schedule's bias (kernel input 2, not in `c`) is N f32 values.
    if (numElements(a) != k || (transB ? b.back() : b[b.size() - 2]) != k ||
        numElements(b) != k * n || numElements(c.outputShapes[0]) != n)
      return nullptr;
    cpu::GemvF32Shape s;
    s.k = k;
    s.n = n;
    s.transB = transB;
    s.relu = !post.eltwise.empty();
    auto kernel = std::unique_ptr<GemvF32Kernel>(new GemvF32Kernel());
    kernel->gemv_ = cpu::GemvF32::create(
        s, static_cast<const float *>(c.constantInputs[1]));
    if (!kernel->gemv_)
      return nullptr;
    kernel->bias_ = post.bias;
    kernel->src_ = cpu::plainDesc(a, DType::kF32);
    kernel->dst_ = cpu::plainDesc(c.outputShapes[0], DType::kF32);
    return kernel;
  }
  memory::desc inputDesc(int i) const override {
    return i == 0 ? src_ : memory::desc();
  }
  memory::desc outputDesc() const override { return dst_; }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    gemv_->run(inputs[0].data<float>(),
               bias_ ? inputs[2].data<float>() : nullptr,
               outputs[0].data<float>());
    return Status::success();
  }
  const char *implementation() const override { return "gopt-gemv-f32"; }

private:
  std::unique_ptr<cpu::GemvF32> gemv_;
  bool bias_ = false;
  memory::desc src_, dst_;
};

// Plain row-major operands and result; with post-ops (the CPU schedule's
// fusions) a bias row (input 2) and a sum into the destination's previous
// contents.
class MatmulKernel : public OneDnnLayoutKernel {
public:
  static StatusOr<std::unique_ptr<Kernel>> create(const KernelConfig &c) {
    DataType type = sharedType(c, {0, 1});
    if (type == DataType::undef || c.outputShapes[0].size() > DNNL_MAX_NDIMS)
      return std::unique_ptr<Kernel>();
    // bf16 dense layers on gopt's AMX tiles (AmxMatmul.h).
    if (std::unique_ptr<Kernel> amx = cpu::createAmxMatmul(c))
      return amx;
    // f32 weight gradients dy^T x as (x^T dy)^T (TrainingKernels.cpp).
    if (std::unique_ptr<Kernel> swapped = cpu::createSwappedWeightGradMatmul(c))
      return swapped;
    if (std::unique_ptr<cpu::LayoutKernel> gemv =
            GemvF32Kernel::create(c, cpu::MatmulPostOps()))
      return std::unique_ptr<Kernel>(std::move(gemv));
    auto kernel = std::unique_ptr<MatmulKernel>(new MatmulKernel());
    bool supported = false;
    GOPT_RETURN_IF_ERROR(
        kernel->init(c, type, cpu::MatmulPostOps(), supported));
    if (!supported)
      return std::unique_ptr<Kernel>();
    return std::unique_ptr<Kernel>(std::move(kernel));
  }
  static StatusOr<std::unique_ptr<cpu::LayoutKernel>>
  createFused(const KernelConfig &c, const cpu::MatmulPostOps &post) {
    DataType type = sharedType(c, {0, 1});
    if (type != DataType::f32 || c.outputShapes[0].size() > DNNL_MAX_NDIMS)
      return std::unique_ptr<cpu::LayoutKernel>();
    if (std::unique_ptr<cpu::LayoutKernel> gemv =
            GemvF32Kernel::create(c, post))
      return gemv;
    auto kernel = std::unique_ptr<MatmulKernel>(new MatmulKernel());
    bool supported = false;
    GOPT_RETURN_IF_ERROR(kernel->init(c, type, post, supported));
    if (!supported)
      return std::unique_ptr<cpu::LayoutKernel>();
    return std::unique_ptr<cpu::LayoutKernel>(std::move(kernel));
  }

private:
  // Logical dims [..., rows, cols] padded with leading 1s to `rank`, with
  // strides of the row-major physical layout (transposed or not).
  static memory::desc operandDesc(const Shape &shape, bool transposed,
                                  size_t rank, DataType type) {
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
    return memory::desc(dims, type, strides);
  }

  Status init(const KernelConfig &c, DataType type,
              const cpu::MatmulPostOps &post, bool &supported) {
    OpAttrs attrs = c.attrs();
    Shape aShape = c.inputShapes[0], bShape = c.inputShapes[1],
          cShape = c.outputShapes[0];
    const bool transposeA = attrs.getBool("transpose_a");
    // [..., M, K] x [K, N] (B's leading dims all 1) is one [prod(...) * M,
    // K] GEMM over the same row-major buffers, not a batch of small ones: a
    // sequence-first transformer's [S, B, D] projections at B = 1 were S
    // GEMVs, at half the speed.
    if (!transposeA && aShape.size() > 2 && bShape.size() >= 2 &&
        numElements(bShape) == bShape[bShape.size() - 2] * bShape.back()) {
      int64_t rows = aShape.back() ? numElements(aShape) / aShape.back() : 0;
      aShape = {rows, aShape.back()};
      bShape = {bShape[bShape.size() - 2], bShape.back()};
      cShape = {rows, cShape.back()};
    }
    size_t rank = cShape.size();
    memory::desc aMd = operandDesc(aShape, transposeA, rank, type);
    memory::desc bMd =
        operandDesc(bShape, attrs.getBool("transpose_b"), rank, type);
    memory::desc cMd = operandDesc(cShape, false, rank, type);
    // A constant right operand (a layer's weights) is packed once into
    // the layout oneDNN's kernel for these shapes wants.
    const void *constantB =
        c.constantInputs.size() > 1 ? c.constantInputs[1] : nullptr;
    memory::desc wantedB =
        constantB ? memory::desc(bMd.dims(), type, memory::format_tag::any)
                  : bMd;
    // The bias is one row of N values, broadcast over the others.
    Dims biasDims(rank, 1);
    biasDims[rank - 1] = cShape.back();
    Dims biasStrides(rank, cShape.back());
    biasStrides[rank - 1] = 1;
    memory::desc biasMd(biasDims, type, biasStrides);
    dnnl::primitive_attr attr = scratchpadAttr();
    dnnl::post_ops postOps;
    if (post.sum)
      postOps.append_sum(1.0f);
    for (const cpu::ConvPostOps::Eltwise &e : post.eltwise)
      postOps.append_eltwise(1.0f, e.algorithm, e.alpha, e.beta);
    attr.set_post_ops(postOps);
    dnnl::matmul::primitive_desc pd;
    try {
      pd = post.bias
               ? dnnl::matmul::primitive_desc(
                     dnnl::matmul::desc(aMd, wantedB, biasMd, cMd), attr,
                     cpuEngine())
               : dnnl::matmul::primitive_desc(
                     dnnl::matmul::desc(aMd, wantedB, cMd), attr, cpuEngine());
    } catch (const dnnl::error &e) {
      // Without a kernel for these post-ops the ops run one by one.
      if (noBf16Kernel(type) || post.bias || post.sum || !post.eltwise.empty())
        return Status::success();
      return internalError("oneDNN matmul: ", e.what());
    }
    try {
      primitive_ = dnnl::matmul(pd);
      inputDescs_ = {cpu::plainDesc(c.inputShapes[0], c.inputTypes[0])};
      outputDesc_ = cpu::plainDesc(c.outputShapes[0], c.outputTypes[0]);
      bindInput(0, DNNL_ARG_SRC, aMd);
      bindWeights(1, bMd, pd.weights_desc(), constantB);
      if (post.bias)
        bindInput(2, DNNL_ARG_BIAS, biasMd);
      bindOutput(0, DNNL_ARG_DST, cMd);
      bindScratchpad(pd.scratchpad_desc());
    } catch (const dnnl::error &e) {
      return internalError("oneDNN matmul: ", e.what());
    }
    supported = true;
    return Status::success();
  }
};

//===----------------------------------------------------------------------===//
// max_pool / avg_pool
//===----------------------------------------------------------------------===//

class PoolKernel : public OneDnnLayoutKernel {
public:
  static StatusOr<std::unique_ptr<Kernel>> create(const KernelConfig &c) {
    if (std::unique_ptr<Kernel> tiled = cpu::createTiledMaxPool(c))
      return tiled;
    if (sharedType(c, {0}) == DataType::undef)
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
    // A given layout also gives the type (int8 data may be held as u8).
    DataType type =
        src ? static_cast<DataType>(src->data.data_type) : sharedType(c, {0});
    OpAttrs attrs = c.attrs();
    bool isMax = c.op->kind() == "max_pool";
    bool nchw = attrs.getString("data_format") == "NCHW";
    std::vector<int64_t> kernel = attrs.getInts("kernel");
    std::vector<int64_t> strides = attrs.getWindowInts("strides");
    std::vector<int64_t> pads = attrs.getWindowInts("pads");
    std::string padding = attrs.getString("padding");
    bool ceilMode = attrs.getBool("ceil_mode");
    bool includePad = attrs.getBool("count_include_pad");
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
        src ? *src : memory::desc({x[0], channels, h, w}, type, act);
    memory::desc dstMd({x[0], channels, wh.outSize, ww.outSize}, type,
                       src ? Tag::any : act);
    dnnl::algorithm alg =
        isMax ? dnnl::algorithm::pooling_max
              : (includePad ? dnnl::algorithm::pooling_avg_include_padding
                            : dnnl::algorithm::pooling_avg_exclude_padding);
    dnnl::pooling_forward::primitive_desc pd;
    try {
      dnnl::pooling_forward::desc desc(
          dnnl::prop_kind::forward_inference, alg, srcMd, dstMd,
          {strides[0], strides[1]}, {kernel[0], kernel[1]},
          {wh.padBefore, ww.padBefore}, {padBottom, padRight});
      pd = dnnl::pooling_forward::primitive_desc(desc, scratchpadAttr(),
                                                 cpuEngine());
    } catch (const dnnl::error &e) {
      if (noBf16Kernel(type))
        return Status::success();
      return internalError("oneDNN pooling: ", e.what());
    }
    try {
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

// Concatenation along channels in a blocked layout: each source's blocks
// are copied into place, so the sources (convolution results) and the
// result (read by the next batch norm or convolution) stay blocked.
class ConcatKernel : public OneDnnLayoutKernel {
public:
  Status init(const std::vector<memory::desc> &srcs, const memory::desc &dst,
              bool &supported) {
    try {
      dnnl::concat::primitive_desc pd(dst, /*concat_dimension=*/1, srcs,
                                      cpuEngine(), scratchpadAttr());
      primitive_ = dnnl::concat(pd);
      inputDescs_ = srcs;
      outputDesc_ = pd.dst_desc();
      for (size_t i = 0; i < srcs.size(); ++i)
        bindInput(static_cast<int>(i),
                  DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), srcs[i]);
      bindOutput(0, DNNL_ARG_DST, pd.dst_desc());
      bindScratchpad(pd.scratchpad_desc());
    } catch (const dnnl::error &) {
      return Status::success(); // no concat for these layouts
    }
    supported = true;
    return Status::success();
  }
};

class BatchNormKernel : public OneDnnLayoutKernel {
public:
  static StatusOr<std::unique_ptr<Kernel>> create(const KernelConfig &c) {
    size_t rank = c.inputShapes[0].size();
    if (c.attrs().getBool("training"))
      return cpu::createTrainingBatchNorm(c);
    if (dataType(c) == DataType::undef || (rank != 2 && rank != 4))
      return std::unique_ptr<Kernel>();
    auto kernel = std::unique_ptr<BatchNormKernel>(new BatchNormKernel());
    bool supported = false;
    GOPT_RETURN_IF_ERROR(kernel->init(c, nullptr, supported));
    if (!supported)
      return std::unique_ptr<Kernel>();
    return std::unique_ptr<Kernel>(std::move(kernel));
  }
  // x and y share a type; the statistics have that type or f32.
  static DataType dataType(const KernelConfig &c) {
    DataType type = sharedType(c, {0});
    for (size_t i = 1; i < c.inputTypes.size(); ++i)
      if (c.inputTypes[i] != DType::kF32 &&
          cpu::oneDnnType(c.inputTypes[i]) != type)
        return DataType::undef;
    return type;
  }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    for (auto &[input, arg] : convertEachRun_)
      toF32(inputs[input].data(), args_[arg]);
    return OneDnnLayoutKernel::run(inputs, outputs);
  }
  // `src`: the layout of the input (NCHW, rank 4), else the plain one;
  // `relu`: a relu of the result runs in the same pass.
  Status init(const KernelConfig &c, const memory::desc *src, bool &supported,
              bool relu = false) {
    DataType type = dataType(c);
    OpAttrs attrs = c.attrs();
    const Shape &x = c.inputShapes[0];
    bool nchw = attrs.getString("data_format") == "NCHW";
    memory::desc dataMd;
    if (x.size() == 2)
      dataMd = memory::desc(toDims(x), type, Tag::nc);
    else if (nchw)
      dataMd = memory::desc(toDims(x), type, Tag::nchw);
    else
      dataMd = memory::desc({x[0], x[3], x[1], x[2]}, type, Tag::nhwc);
    if (src)
      dataMd = *src;
    memory::desc channelMd({x.size() == 2 || nchw ? x[1] : x[3]}, DataType::f32,
                           Tag::x);
    auto flags = dnnl::normalization_flags::use_global_stats |
                 dnnl::normalization_flags::use_scale |
                 dnnl::normalization_flags::use_shift;
    if (relu)
      flags |= dnnl::normalization_flags::fuse_norm_relu;
    dnnl::batch_normalization_forward::primitive_desc pd;
    try {
      dnnl::batch_normalization_forward::desc desc(
          dnnl::prop_kind::forward_inference, dataMd,
          static_cast<float>(attrs.getFloat("epsilon")), flags);
      pd = dnnl::batch_normalization_forward::primitive_desc(
          desc, scratchpadAttr(), cpuEngine());
    } catch (const dnnl::error &e) {
      if (noBf16Kernel(type))
        return Status::success();
      return internalError("oneDNN batch_normalization: ", e.what());
    }
    try {
      primitive_ = dnnl::batch_normalization_forward(pd);
      inputDescs_ = {dataMd};
      outputDesc_ = dataMd;
      bindInput(0, DNNL_ARG_SRC, dataMd);
      const int statArgs[] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN,
                              DNNL_ARG_VARIANCE};
      for (int i = 1; i <= 4; ++i) {
        int arg = statArgs[i - 1];
        if (c.inputTypes[i] == DType::kF32) {
          bindInput(i, arg, channelMd);
          continue;
        }
        // oneDNN reads statistics in f32 only: bf16 ones are converted
        // into the kernel's buffers, constants once.
        args_[arg] = memory(channelMd, cpuEngine());
        workspaceBytes_ += channelMd.get_size();
        if (c.constantInputs[i])
          toF32(c.constantInputs[i], args_[arg]);
        else
          convertEachRun_.emplace_back(i, arg);
      }
      bindOutput(0, DNNL_ARG_DST, dataMd);
      bindScratchpad(pd.scratchpad_desc());
    } catch (const dnnl::error &e) {
      return internalError("oneDNN batch_normalization: ", e.what());
    }
    supported = true;
    return Status::success();
  }

private:
  static void toF32(const void *bf16, memory &f32) {
    const uint16_t *src = static_cast<const uint16_t *>(bf16);
    float *dst = static_cast<float *>(f32.get_data_handle());
    size_t n = f32.get_desc().get_size() / sizeof(float);
    for (size_t i = 0; i < n; ++i)
      dst[i] = bf16ToFloat(src[i]);
  }

  std::vector<std::pair<int, int>> convertEachRun_; // (input, oneDNN arg)
};

//===----------------------------------------------------------------------===//
// global_avg_pool (NCHW): one average pooling window over H x W
//===----------------------------------------------------------------------===//

class GlobalAvgPoolKernel : public OneDnnLayoutKernel {
public:
  Status init(const KernelConfig &c, const memory::desc &src, bool &supported) {
    DataType type = sharedType(c, {0});
    const Shape &x = c.inputShapes[0];
    memory::desc dstMd({x[0], x[1], 1, 1}, type, Tag::any);
    dnnl::pooling_forward::primitive_desc pd;
    try {
      dnnl::pooling_forward::desc desc(
          dnnl::prop_kind::forward_inference,
          dnnl::algorithm::pooling_avg_exclude_padding, src, dstMd, {1, 1},
          {x[2], x[3]}, {0, 0}, {0, 0});
      pd = dnnl::pooling_forward::primitive_desc(desc, scratchpadAttr(),
                                                 cpuEngine());
    } catch (const dnnl::error &e) {
      if (noBf16Kernel(type))
        return Status::success();
      return internalError("oneDNN global pooling: ", e.what());
    }
    try {
      primitive_ = dnnl::pooling_forward(pd);
      inputDescs_ = {src};
      outputDesc_ = pd.dst_desc();
      bindInput(0, DNNL_ARG_SRC, src);
      bindOutput(0, DNNL_ARG_DST, pd.dst_desc());
      bindScratchpad(pd.scratchpad_desc());
    } catch (const dnnl::error &e) {
      return internalError("oneDNN global pooling: ", e.what());
    }
    supported = true;
    return Status::success();
  }
};

//===----------------------------------------------------------------------===//
// reorder between layouts
//===----------------------------------------------------------------------===//

// Whether `md` is a dense NHWC layout (acdb) of a 4-D tensor.
bool isNhwc(const memory::desc &md) {
  const dnnl_memory_desc_t &d = md.data;
  if (d.format_kind != dnnl_blocked || d.ndims != 4 || d.offset0 != 0 ||
      d.extra.flags != 0 || d.format_desc.blocking.inner_nblks != 0)
    return false;
  const dnnl_dim_t *s = d.format_desc.blocking.strides;
  for (int i = 0; i < 4; ++i)
    if (d.padded_dims[i] != d.dims[i])
      return false;
  return s[1] == 1 && s[3] == d.dims[1] && s[2] == d.dims[1] * d.dims[3] &&
         s[0] == s[2] * d.dims[2];
}

// A plain NCHW f32 tensor of 3 channels (an RGB image batch, the graph's
// input) to NHWC bf16 or int8: cpu::rgbToInt8Pixels / rgbToBf16Pixels
// (StemAmx.cpp), whose channel planes here are the whole image's.
class PixelsKernel : public Kernel {
public:
  // Null unless `from` is plain NCHW f32 with 3 channels and `to` the same
  // tensor in NHWC bf16 (scale 1) or s8, on a CPU with the instructions.
  static std::unique_ptr<Kernel> create(const memory::desc &from,
                                        const memory::desc &to, float scale) {
    const Dims dims = from.dims();
    if (from.data_type() != DataType::f32 || dims != to.dims() ||
        dims.size() != 4 || dims[1] != 3 ||
        !(from ==
          cpu::plainDesc(Shape(dims.begin(), dims.end()), DType::kF32)) ||
        !isNhwc(to) ||
        !(to.data_type() == DataType::s8 ||
          (to.data_type() == DataType::bf16 && scale == 1.0f)))
      return nullptr;
    __builtin_cpu_init();
    bool int8 = to.data_type() == DataType::s8;
    if (!__builtin_cpu_supports("avx512bw") ||
        !(int8 ? __builtin_cpu_supports("avx512vbmi")
               : __builtin_cpu_supports("avx512bf16")))
      return nullptr;
    auto kernel = std::make_unique<PixelsKernel>();
    kernel->dims_ = dims;
    kernel->int8_ = to.data_type() == DataType::s8;
    kernel->scale_ = scale;
    return kernel;
  }
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const int64_t batch = dims_[0], channels = dims_[1];
    const int64_t pixels = dims_[2] * dims_[3];
    const float *src = in[0].data<float>();
    void *dst = out[0].data();
#pragma omp parallel for schedule(static) if (batch > 1)
    for (int64_t n = 0; n < batch; ++n) {
      const float *image = src + n * channels * pixels;
      if (int8_)
        cpu::rgbToInt8Pixels(image, pixels,
                             static_cast<int8_t *>(dst) + n * channels * pixels,
                             pixels, scale_);
      else
        cpu::rgbToBf16Pixels(
            image, pixels, static_cast<uint16_t *>(dst) + n * channels * pixels,
            pixels);
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast-nhwc"; }

private:
  Dims dims_;
  bool int8_ = false;
  float scale_ = 1.0f;
};

class ReorderKernel : public OneDnnKernel {
public:
  Status init(const memory::desc &from, const memory::desc &to, float scale) {
    try {
      memory src(from, cpuEngine(), DNNL_MEMORY_NONE);
      memory dst(to, cpuEngine(), DNNL_MEMORY_NONE);
      dnnl::primitive_attr attr;
      if (scale != 1.0f)
        attr.set_output_scales(0, {scale});
      primitive_ = dnnl::reorder(src, dst, attr);
      bindInput(0, DNNL_ARG_FROM, from);
      bindOutput(0, DNNL_ARG_TO, to);
    } catch (const dnnl::error &e) {
      return internalError("oneDNN reorder: ", e.what());
    }
    return Status::success();
  }
};

//===----------------------------------------------------------------------===//
// broadcast multiply in a blocked layout
//===----------------------------------------------------------------------===//

// x * s with s holding one value per (batch, channel): squeeze-and-
// excitation's gating, on x in its blocked layout.
class ChannelMulKernel : public OneDnnKernel {
public:
  Status init(const memory::desc &x, const memory::desc &scale,
              bool &supported) {
    dnnl::binary::primitive_desc pd;
    try {
      pd = dnnl::binary::primitive_desc(
          dnnl::binary::desc(dnnl::algorithm::binary_mul, x, scale, x),
          cpuEngine());
    } catch (const dnnl::error &) {
      return Status::success(); // no kernel for these layouts
    }
    // oneDNN's reference binary kernel is no fast path: for RegNet's gates
    // (x in nChw16c, the gate in another blocked layout) it took 4 ms per
    // multiply, 60% of the step, where reordering to plain layouts costs
    // microseconds.
    if (std::strncmp(pd.impl_info_str(), "ref", 3) == 0)
      return Status::success();
    try {
      primitive_ = dnnl::binary(pd);
      bindInput(0, DNNL_ARG_SRC_0, x);
      bindInput(1, DNNL_ARG_SRC_1, scale);
      bindOutput(0, DNNL_ARG_DST, x);
    } catch (const dnnl::error &e) {
      return internalError("oneDNN binary: ", e.what());
    }
    supported = true;
    return Status::success();
  }
};

} // namespace

namespace cpu {

DataType oneDnnType(DType dtype) {
  switch (dtype) {
  case DType::kF32:
    return DataType::f32;
  case DType::kBF16:
    return DataType::bf16;
  default:
    return DataType::undef;
  }
}

DataType layoutType(DType dtype) {
  switch (dtype) {
  case DType::kI8:
    return DataType::s8;
  case DType::kU8:
    return DataType::u8;
  default:
    return oneDnnType(dtype);
  }
}

memory::desc plainDesc(const Shape &shape, DType dtype) {
  Dims dims = toDims(shape);
  Dims strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dims[d + 1];
  return memory::desc(dims, layoutType(dtype), strides);
}

memory::desc withType(const memory::desc &md, DType dtype) {
  // Blocking and strides count elements, so they carry over unchanged.
  memory::desc result = md;
  result.data.data_type = static_cast<dnnl_data_type_t>(layoutType(dtype));
  return result;
}

namespace {
// gopt's int8 3x3 depthwise kernel in the layouts `onednn` chose
// (Int8DepthwiseStageKernel, below), or null.
std::unique_ptr<OneDnnLayoutKernel>
int8DepthwiseKernel(const KernelConfig &c, const Int8Params &p,
                    const OneDnnLayoutKernel &onednn);
} // namespace

StatusOr<std::unique_ptr<LayoutKernel>>
createInt8Conv(const KernelConfig &c, const Int8Params &params) {
  if (!int8Supported(params) || c.inputShapes[0].size() != 4)
    return std::unique_ptr<LayoutKernel>();
  auto kernel = std::make_unique<Int8ConvKernel>();
  bool supported = false;
  GOPT_RETURN_IF_ERROR(kernel->init(c, params, supported));
  if (!supported)
    return std::unique_ptr<LayoutKernel>();
  // Where oneDNN chose NHWC for a depthwise convolution outside a chain
  // (MobileNetV2's 7x7 ones at 960 channels), gopt's kernel runs it.
  if (auto dw = int8DepthwiseKernel(c, params, *kernel))
    return std::unique_ptr<LayoutKernel>(std::move(dw));
  return std::unique_ptr<LayoutKernel>(std::move(kernel));
}

StatusOr<std::unique_ptr<Kernel>> createInt8Matmul(const KernelConfig &c,
                                                   const Int8Params &params) {
  if (!int8Supported(params))
    return std::unique_ptr<Kernel>();
  auto kernel = std::make_unique<Int8MatmulKernel>();
  bool supported = false;
  GOPT_RETURN_IF_ERROR(kernel->init(c, params, supported));
  if (!supported)
    return std::unique_ptr<Kernel>();
  return std::unique_ptr<Kernel>(std::move(kernel));
}

namespace {

// `md` (a layout whose batch dimension is outermost and dense, as oneDNN's
// activation layouts are) with batch `n`; an empty desc for other layouts.
memory::desc withBatch(const memory::desc &md, int64_t n) {
  dnnl_memory_desc_t d = md.data;
  const dnnl_blocking_desc_t &b = d.format_desc.blocking;
  size_t elementBytes = memory::data_type_size(md.data_type());
  if (d.format_kind != dnnl_blocked || d.ndims != 4 || d.offset0 != 0 ||
      d.extra.flags != 0 ||
      static_cast<size_t>(b.strides[0] * d.padded_dims[0]) * elementBytes !=
          md.get_size())
    return memory::desc();
  for (int i = 0; i < b.inner_nblks; ++i)
    if (b.inner_idxs[i] == 0)
      return memory::desc();
  d.dims[0] = d.padded_dims[0] = n;
  return memory::desc(d);
}

// gopt's own bf16 stage kernels (depthwise, pointwise) apply a conv's
// activation post-op as a clamp: relu is [0, inf), relu6 [0, 6], clip its
// bounds; nullopt for any other activation.
struct ActivationClamp {
  bool clamp = false;
  float lo = 0, hi = 0;
};
std::optional<ActivationClamp> activationClamp(const cpu::ConvPostOps &post) {
  if (post.activation == "none")
    return ActivationClamp{};
  if (post.activation == "relu")
    return ActivationClamp{true, 0, std::numeric_limits<float>::infinity()};
  if (post.activation == "relu6")
    return ActivationClamp{true, 0, 6};
  if (post.activation == "clip")
    return ActivationClamp{true, post.clipMin, post.clipMax};
  return std::nullopt;
}

// Whether a post-op after the activation is MobileNetV3's HardSwish
// (x * clamp(x / 6 + 1/2, 0, 1)), which gopt's f32 1x1 and stem kernels
// apply in their epilogues.
bool isHardSwish(const cpu::ConvPostOps::Eltwise &e) {
  return e.algorithm == dnnl::algorithm::eltwise_hardswish &&
         e.alpha == 1.0f / 6.0f && e.beta == 0.5f;
}

// Whether the conv's bias (operand 2) is a constant those kernels read: f32
// or bf16.
bool constantF32OrBf16Bias(const KernelConfig &c) {
  return c.constantInputs[2] &&
         (c.inputTypes[2] == DType::kF32 || c.inputTypes[2] == DType::kBF16);
}

// The NHWC 3x3 depthwise geometry of gopt's own depthwise kernels (bf16
// and int8) for a conv whose checks already passed (square stride, no
// dilation, cout == cin).
cpu::DepthwiseGeometry depthwiseGeometry(const ConvGeometry &g) {
  cpu::DepthwiseGeometry dg;
  dg.n = g.n;
  dg.c = g.cin;
  dg.h = g.h;
  dg.w = g.w;
  dg.oh = g.dstDims[2];
  dg.ow = g.dstDims[3];
  dg.stride = g.strides[0];
  dg.padTop = g.padL[0];
  dg.padLeft = g.padL[1];
  return dg;
}

// A depthwise stage's geometry (banded by `band`) and its weights as f32
// [k][k][C] from GOIHW ([C, 1, 1, k, k]) or HWIO ([k, k, 1, C]): an
// undilated k x k window with k in `sizes` and a square stride, over the
// plain NHWC tensors of `type` the oneDNN stage `onednn` agreed to; nullopt
// for anything else.
struct DepthwiseStageShape {
  ConvGeometry g;
  int64_t k = 0;
  std::vector<float> weights;
};
template <typename Raw, typename Widen>
std::optional<DepthwiseStageShape>
depthwiseStageShape(const KernelConfig &c, const OneDnnLayoutKernel &onednn,
                    const RowBand *band, DataType type,
                    std::initializer_list<int64_t> sizes, Widen widen) {
  StatusOr<ConvGeometry> geometry = convGeometry(c);
  if (!geometry.ok())
    return std::nullopt;
  DepthwiseStageShape d{*geometry};
  ConvGeometry &g = d.g;
  if (band)
    applyBand(g, *band);
  const Dims &wd = g.weightDims;
  const memory::desc in = onednn.inputDesc(0), out = onednn.outputDesc();
  if (wd.size() != 5 || wd[0] != g.cin || g.cout != g.cin || wd[1] != 1 ||
      wd[2] != 1 || wd[3] != wd[4] ||
      std::find(sizes.begin(), sizes.end(), wd[3]) == sizes.end() ||
      g.dilations[0] != 0 || g.dilations[1] != 0 ||
      g.strides[0] != g.strides[1] || !isNhwc(in) || !isNhwc(out) ||
      in.data_type() != type || out.data_type() != type ||
      in.dims() != g.srcDims || out.dims() != g.dstDims)
    return std::nullopt;
  const int64_t ch = g.cin, taps = wd[3] * wd[3];
  d.k = wd[3];
  const auto *raw = static_cast<const Raw *>(c.constantInputs[1]);
  d.weights.resize(taps * ch);
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t j = 0; j < ch; ++j)
      d.weights[t * ch + j] = widen(
          g.weightTag == Tag::goihw ? raw[j * taps + t] : raw[t * ch + j]);
  return d;
}

// A chain's 3x3 depthwise stage on NHWC bf16 (MobileNet's blocks) run by
// gopt's own kernel (DepthwiseConv.cpp) instead of oneDNN 2.6's brdgmm_dw,
// in the layouts the oneDNN stage `onednn` agreed to; null where the
// stage is anything else (int8, dilated, other post-ops).
class DepthwiseStageKernel : public OneDnnLayoutKernel {
public:
  static std::unique_ptr<OneDnnLayoutKernel>
  create(const KernelConfig &c, const cpu::ConvPostOps &post,
         const OneDnnLayoutKernel &onednn, const RowBand *band = nullptr) {
    auto none = [] { return std::unique_ptr<OneDnnLayoutKernel>(); };
    if (!cpu::depthwiseBf16Enabled() || convType(c) != DataType::bf16 ||
        c.inputTypes[1] != DType::kBF16 || !c.constantInputs[1] || post.sum ||
        !post.tail.empty())
      return none();
    const bool hasBias = c.inputShapes.size() == 3;
    if (hasBias && !constantF32OrBf16Bias(c))
      return none();
    std::optional<ActivationClamp> act = activationClamp(post);
    if (!act)
      return none();
    const auto [clamp, lo, hi] = *act;
    auto widen = [](uint16_t bits) {
      uint32_t wide = static_cast<uint32_t>(bits) << 16;
      float f;
      std::memcpy(&f, &wide, sizeof f);
      return f;
    };
    std::optional<DepthwiseStageShape> shape = depthwiseStageShape<uint16_t>(
        c, onednn, band, DataType::bf16, {3}, widen);
    if (!shape)
      return none();
    const ConvGeometry &g = shape->g;
    const int64_t ch = g.cin;
    std::vector<float> bias;
    if (hasBias) {
      bias.resize(ch);
      for (int64_t k = 0; k < ch; ++k)
        bias[k] =
            c.inputTypes[2] == DType::kF32
                ? static_cast<const float *>(c.constantInputs[2])[k]
                : widen(static_cast<const uint16_t *>(c.constantInputs[2])[k]);
    }
    const cpu::DepthwiseGeometry dg = depthwiseGeometry(g);
    auto kernel =
        std::unique_ptr<DepthwiseStageKernel>(new DepthwiseStageKernel());
    kernel->dw_ = cpu::DepthwiseBf16::create(dg, shape->weights, bias, clamp,
                                             lo, hi, omp_get_max_threads());
    if (!kernel->dw_)
      return none();
    kernel->inputDescs_ = {onednn.inputDesc(0)};
    kernel->outputDesc_ = onednn.outputDesc();
    return kernel;
  }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    dw_->run(static_cast<const uint16_t *>(inputs[0].data()),
             static_cast<uint16_t *>(outputs[0].data()));
    return Status::success();
  }
  const char *implementation() const override { return "gopt-dw"; }
  size_t workspaceBytes() const override { return 0; }

private:
  std::unique_ptr<cpu::DepthwiseBf16> dw_;
};

// An f32 3x3 or 5x5 depthwise convolution that oneDNN would run on NHWC
// (MobileNet's and EfficientNet's at small batches: brdgmm_dw) run by
// gopt's own kernel (DepthwiseF32 in DepthwiseConv.cpp), its activation,
// hardswish or SiLU applied before the one store; null where the conv is
// anything else (a sum, other post-ops, dilated, blocked layouts).
// GOPT_DEPTHWISE_F32=0 keeps oneDNN's.
class DepthwiseF32Kernel : public OneDnnLayoutKernel {
public:
  static std::unique_ptr<OneDnnLayoutKernel>
  create(const KernelConfig &c, const cpu::ConvPostOps &post,
         const OneDnnLayoutKernel &onednn, const RowBand *band = nullptr) {
    auto none = [] { return std::unique_ptr<OneDnnLayoutKernel>(); };
    if (!cpu::depthwiseF32Enabled() || convType(c) != DataType::f32 ||
        c.inputTypes[1] != DType::kF32 || !c.constantInputs[1] || post.sum ||
        post.tail.size() > 1)
      return none();
    const bool hasBias = c.inputShapes.size() == 3;
    if (hasBias && (!c.constantInputs[2] || c.inputTypes[2] != DType::kF32))
      return none();
    std::optional<ActivationClamp> act = activationClamp(post);
    if (!act)
      return none();
    const auto [clamp, lo, hi] = *act;
    cpu::DepthwiseTail tail = cpu::DepthwiseTail::kNone;
    if (!post.tail.empty()) {
      const cpu::ConvPostOps::Eltwise &e = post.tail[0];
      if (e.algorithm == dnnl::algorithm::eltwise_hardswish &&
          e.alpha == 1.0f / 6.0f && e.beta == 0.5f)
        tail = cpu::DepthwiseTail::kHardSwish;
      else if (e.algorithm == dnnl::algorithm::eltwise_swish && e.alpha == 1.0f)
        tail = cpu::DepthwiseTail::kSwish;
      else
        return none();
    }
    std::optional<DepthwiseStageShape> shape = depthwiseStageShape<float>(
        c, onednn, band, DataType::f32, {3, 5}, [](float v) { return v; });
    if (!shape)
      return none();
    const ConvGeometry &g = shape->g;
    const int64_t ch = g.cin;
    std::vector<float> bias;
    if (hasBias) {
      const auto *b = static_cast<const float *>(c.constantInputs[2]);
      bias.assign(b, b + ch);
    }
    auto kernel = std::unique_ptr<DepthwiseF32Kernel>(new DepthwiseF32Kernel());
    kernel->dw_ = cpu::DepthwiseF32::create(
        depthwiseGeometry(g), static_cast<int>(shape->k), shape->weights, bias,
        clamp, lo, hi, tail, omp_get_max_threads());
    if (!kernel->dw_)
      return none();
    kernel->inputDescs_ = {onednn.inputDesc(0)};
    kernel->outputDesc_ = onednn.outputDesc();
    return kernel;
  }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    dw_->run(static_cast<const float *>(inputs[0].data()),
             static_cast<float *>(outputs[0].data()));
    return Status::success();
  }
  const char *implementation() const override { return "gopt-dw-f32"; }
  size_t workspaceBytes() const override { return 0; }

private:
  std::unique_ptr<cpu::DepthwiseF32> dw_;
};

// A chain's 1x1 stage on NHWC bf16 (MobileNet's expand and project
// convolutions) run by gopt's AMX kernel (PointwiseAmx.cpp) instead of
// oneDNN 2.6's brgconv_1x1, in the layouts the oneDNN stage `onednn`
// agreed to; null where the stage is anything else (int8, strided,
// grouped, eltwise tails). GOPT_POINTWISE_AMX=0 keeps oneDNN's.
class PointwiseStageKernel : public OneDnnLayoutKernel {
public:
  static std::unique_ptr<OneDnnLayoutKernel>
  create(const KernelConfig &c, const cpu::ConvPostOps &post,
         const OneDnnLayoutKernel &onednn, const RowBand *band = nullptr) {
    auto none = [] { return std::unique_ptr<OneDnnLayoutKernel>(); };
    if (!cpu::pointwiseAmxEnabled() || convType(c) != DataType::bf16 ||
        c.inputTypes[1] != DType::kBF16 || !c.constantInputs[1] ||
        !post.tail.empty())
      return none();
    const bool hasBias = c.inputShapes.size() == 3;
    if (hasBias && !constantF32OrBf16Bias(c))
      return none();
    std::optional<ActivationClamp> act = activationClamp(post);
    if (!act)
      return none();
    const auto [clamp, lo, hi] = *act;
    StatusOr<ConvGeometry> geometry = convGeometry(c);
    if (!geometry.ok())
      return none();
    ConvGeometry g = *geometry;
    if (band)
      applyBand(g, *band);
    const Dims &wd = g.weightDims;
    const memory::desc in = onednn.inputDesc(0), out = onednn.outputDesc();
    if (wd.size() != 4 || wd[2] != 1 || wd[3] != 1 || g.strides[0] != 1 ||
        g.strides[1] != 1 || g.padL[0] != 0 || g.padL[1] != 0 ||
        g.padR[0] != 0 || g.padR[1] != 0 || !isNhwc(in) || !isNhwc(out) ||
        in.data_type() != DataType::bf16 || out.data_type() != DataType::bf16 ||
        in.dims() != g.srcDims || out.dims() != g.dstDims ||
        g.srcDims[2] != g.dstDims[2] || g.srcDims[3] != g.dstDims[3])
      return none();
    const int64_t k = g.cin, n = g.cout;
    // 16 outputs fill half of the kernel's 32-wide block: oneDNN's was
    // faster there (MobileNetV2's 32 -> 16, 1.25x) until the kernel ran
    // such blocks on half the tiles (GOPT_POINTWISE_AMX_BF16_NARROW).
    if (n <= 16 && !cpu::pointwiseAmxBf16Narrow())
      return none();
    // Weights [n][k] from OIHW ([n, k, 1, 1]) or HWIO ([1, 1, k, n]).
    const auto *raw = static_cast<const uint16_t *>(c.constantInputs[1]);
    std::vector<uint16_t> weights(k * n);
    for (int64_t o = 0; o < n; ++o)
      for (int64_t i = 0; i < k; ++i)
        weights[o * k + i] =
            g.weightTag == Tag::oihw ? raw[o * k + i] : raw[i * n + o];
    std::vector<float> bias;
    if (hasBias) {
      bias.resize(n);
      for (int64_t o = 0; o < n; ++o) {
        if (c.inputTypes[2] == DType::kF32) {
          bias[o] = static_cast<const float *>(c.constantInputs[2])[o];
        } else {
          uint32_t wide = static_cast<uint32_t>(static_cast<const uint16_t *>(
                              c.constantInputs[2])[o])
                          << 16;
          std::memcpy(&bias[o], &wide, sizeof(float));
        }
      }
    }
    auto kernel =
        std::unique_ptr<PointwiseStageKernel>(new PointwiseStageKernel());
    kernel->pw_ = cpu::PointwiseBf16Amx::create(
        k, n, weights, bias, clamp, lo, hi, post.sum, omp_get_max_threads());
    if (!kernel->pw_)
      return none();
    kernel->pixels_ = g.dstDims[0] * g.dstDims[2] * g.dstDims[3];
    kernel->inputDescs_ = {in};
    kernel->outputDesc_ = out;
    return kernel;
  }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    pw_->run(static_cast<const uint16_t *>(inputs[0].data()),
             static_cast<uint16_t *>(outputs[0].data()), pixels_);
    return Status::success();
  }
  const char *implementation() const override { return "gopt-pw"; }
  size_t workspaceBytes() const override { return 0; }

private:
  std::unique_ptr<cpu::PointwiseBf16Amx> pw_;
  int64_t pixels_ = 0;
};

// int8Attr's formula as the per-channel factors of gopt's own int8 kernels
// (PointwiseInt8Params, DepthwiseInt8Params): the output scale leaves
// requantScale's units when requantizing, else the destination's; the
// clamp bounds are in the destination's units.
template <typename Int8KernelParams>
void setInt8Epilogue(const cpu::Int8Params &p, int64_t channels,
                     Int8KernelParams &q) {
  const float dstUnit = p.dstScale;
  const float firstUnit = p.requantize ? p.requantScale : dstUnit;
  q.srcUnsigned = p.srcUnsigned;
  for (int64_t o = 0; o < channels; ++o) {
    const float ws = p.weightScales[p.weightScales.size() == 1 ? 0 : o];
    q.scale.push_back(p.srcScale * ws / firstUnit);
    if (p.bias)
      q.biasScaled.push_back(p.bias[o] / (p.srcScale * ws));
  }
  q.requantize = p.requantize;
  q.requantScale = p.requantScale / dstUnit;
  q.dstUnsigned = p.dstUnsigned;
  float lo = -std::numeric_limits<float>::infinity(),
        hi = std::numeric_limits<float>::infinity();
  if (p.activation == "relu")
    lo = 0;
  else if (p.activation == "relu6")
    lo = 0, hi = 6 / dstUnit;
  else if (p.activation == "clip")
    lo = p.clipMin / dstUnit, hi = p.clipMax / dstUnit;
  if (p.dstUnsigned) // as int8Attr: a u8 result stays <= 127
    lo = std::max(lo, 0.0f), hi = std::min(hi, 127.0f);
  q.lo = lo;
  q.hi = hi;
}

// A chain's int8 1x1 stage on NHWC u8/s8 (the static-int8 plans' expand and
// project convolutions) run by gopt's AMX kernel (PointwiseAmx.cpp) instead
// of oneDNN 2.6's brgconv_1x1 (AMX or VNNI), computing int8Attr's formula
// in the layouts the oneDNN stage `onednn` agreed to; null where the stage
// is anything else (strided, grouped, an f32 result, sigmoid).
// GOPT_POINTWISE_AMX_INT8=0 keeps oneDNN's.
class Int8PointwiseStageKernel : public OneDnnLayoutKernel {
public:
  static std::unique_ptr<OneDnnLayoutKernel>
  create(const KernelConfig &c, const cpu::Int8Params &p,
         const OneDnnLayoutKernel &onednn, const RowBand *band = nullptr) {
    auto none = [] { return std::unique_ptr<OneDnnLayoutKernel>(); };
    if (!cpu::pointwiseAmxInt8Enabled() || p.dstScale <= 0 || !p.weights ||
        (p.activation != "none" && p.activation != "relu" &&
         p.activation != "relu6" && p.activation != "clip"))
      return none();
    StatusOr<ConvGeometry> geometry = convGeometry(c);
    if (!geometry.ok())
      return none();
    ConvGeometry g = *geometry;
    if (band)
      applyBand(g, *band);
    const Dims &wd = g.weightDims;
    const memory::desc in = onednn.inputDesc(0), out = onednn.outputDesc();
    const DataType srcType = p.srcUnsigned ? DataType::u8 : DataType::s8;
    if (wd.size() != 4 || wd[2] != 1 || wd[3] != 1 || g.strides[0] != 1 ||
        g.strides[1] != 1 || g.padL[0] != 0 || g.padL[1] != 0 ||
        g.padR[0] != 0 || g.padR[1] != 0 || !isNhwc(in) || !isNhwc(out) ||
        in.data_type() != srcType || out.data_type() != int8DstType(p) ||
        in.dims() != g.srcDims || out.dims() != g.dstDims ||
        g.srcDims[2] != g.dstDims[2] || g.srcDims[3] != g.dstDims[3])
      return none();
    const int64_t k = g.cin, n = g.cout;
    // Per-call minima against oneDNN's kernels (one thread, one image):
    // 1.2-1.6x as fast from 16 to 192 input channels, even at 384, but
    // 0.5-0.9x from 576 up (each 32-pixel block reads all the weights;
    // oneDNN blocks them better) and for 16 outputs (half of the 32-wide
    // block is padding: 32 -> 16 at 112x112, 0.75x). Those keep oneDNN's,
    // but for 16 outputs or fewer where the kernel runs them on half the
    // tiles (GOPT_POINTWISE_AMX_INT8_NARROW).
    if ((n <= 16 && !cpu::pointwiseAmxInt8Narrow()) || k > 384)
      return none();
    if (static_cast<int64_t>(p.weightScales.size()) != n &&
        p.weightScales.size() != 1)
      return none();
    std::vector<int8_t> weights(k * n);
    for (int64_t o = 0; o < n; ++o)
      for (int64_t i = 0; i < k; ++i)
        weights[o * k + i] = g.weightTag == Tag::oihw ? p.weights[o * k + i]
                                                      : p.weights[i * n + o];
    cpu::PointwiseInt8Params q;
    setInt8Epilogue(p, n, q);
    q.sum = p.sum;
    q.sumSigned = p.sumSigned;
    q.sumScale = p.sumScale / p.dstScale;
    auto kernel = std::unique_ptr<Int8PointwiseStageKernel>(
        new Int8PointwiseStageKernel());
    kernel->pw_ =
        cpu::PointwiseInt8Amx::create(k, n, weights, q, omp_get_max_threads());
    if (!kernel->pw_)
      return none();
    kernel->pixels_ = g.dstDims[0] * g.dstDims[2] * g.dstDims[3];
    kernel->inputDescs_ = {in};
    kernel->outputDesc_ = out;
    return kernel;
  }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    pw_->run(static_cast<const uint8_t *>(inputs[0].data()),
             static_cast<uint8_t *>(outputs[0].data()), pixels_);
    return Status::success();
  }
  const char *implementation() const override { return "gopt-pw-int8"; }
  size_t workspaceBytes() const override { return 0; }

private:
  std::unique_ptr<cpu::PointwiseInt8Amx> pw_;
  int64_t pixels_ = 0;
};

// A chain's int8 3x3 depthwise stage on NHWC u8/s8 (the static-int8 plans'
// MobileNet blocks, between the int8 1x1 stages) run by gopt's AVX512-VNNI
// kernel (DepthwiseInt8.cpp) instead of oneDNN 2.6's brdgmm_dw, computing
// int8Attr's formula in the layouts the oneDNN stage `onednn` agreed to;
// null where the stage is anything else (dilated, a sum, an f32 result).
// GOPT_DEPTHWISE_INT8=0 keeps oneDNN's.
class Int8DepthwiseStageKernel : public OneDnnLayoutKernel {
public:
  static std::unique_ptr<OneDnnLayoutKernel>
  create(const KernelConfig &c, const cpu::Int8Params &p,
         const OneDnnLayoutKernel &onednn, const RowBand *band = nullptr) {
    auto none = [] { return std::unique_ptr<OneDnnLayoutKernel>(); };
    if (!cpu::depthwiseInt8Enabled() || p.dstScale <= 0 || !p.weights ||
        p.sum ||
        (p.activation != "none" && p.activation != "relu" &&
         p.activation != "relu6" && p.activation != "clip"))
      return none();
    StatusOr<ConvGeometry> geometry = convGeometry(c);
    if (!geometry.ok())
      return none();
    ConvGeometry g = *geometry;
    if (band)
      applyBand(g, *band);
    const Dims &wd = g.weightDims;
    const memory::desc in = onednn.inputDesc(0), out = onednn.outputDesc();
    const DataType srcType = p.srcUnsigned ? DataType::u8 : DataType::s8;
    if (wd.size() != 5 || wd[0] != g.cin || g.cout != g.cin || wd[1] != 1 ||
        wd[2] != 1 || wd[3] != 3 || wd[4] != 3 || g.dilations[0] != 0 ||
        g.dilations[1] != 0 || g.strides[0] != g.strides[1] || !isNhwc(in) ||
        !isNhwc(out) || in.data_type() != srcType ||
        out.data_type() != int8DstType(p) || in.dims() != g.srcDims ||
        out.dims() != g.dstDims)
      return none();
    const int64_t ch = g.cin;
    if (static_cast<int64_t>(p.weightScales.size()) != ch &&
        p.weightScales.size() != 1)
      return none();
    // Weights [3][3][C] from GOIHW ([C, 1, 1, 3, 3]) or HWIO ([3, 3, 1, C]).
    std::vector<int8_t> weights(9 * ch);
    for (int64_t t = 0; t < 9; ++t)
      for (int64_t k = 0; k < ch; ++k)
        weights[t * ch + k] = g.weightTag == Tag::goihw ? p.weights[k * 9 + t]
                                                        : p.weights[t * ch + k];
    cpu::DepthwiseInt8Params q;
    setInt8Epilogue(p, ch, q);
    const cpu::DepthwiseGeometry dg = depthwiseGeometry(g);
    auto kernel = std::unique_ptr<Int8DepthwiseStageKernel>(
        new Int8DepthwiseStageKernel());
    kernel->dw_ =
        cpu::DepthwiseInt8::create(dg, weights, q, omp_get_max_threads());
    if (!kernel->dw_)
      return none();
    kernel->inputDescs_ = {in};
    kernel->outputDesc_ = out;
    return kernel;
  }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    dw_->run(static_cast<const uint8_t *>(inputs[0].data()),
             static_cast<uint8_t *>(outputs[0].data()));
    return Status::success();
  }
  const char *implementation() const override { return "gopt-dw-int8"; }
  size_t workspaceBytes() const override { return 0; }

private:
  std::unique_ptr<cpu::DepthwiseInt8> dw_;
};

// A chain's first stage where it is a network's stem (a dense 3x3
// convolution of at most 3 NHWC input channels, bf16 or static int8, an
// NHWC result, no sum) run by gopt's AMX kernel (StemAmx.cpp) instead of
// oneDNN 2.6's jit / jit_int8 kernels, which pad each tap's 3 channels to
// a 4-channel group (MobileNetV2's 3 -> 32 stride 2: 160-180 us an image,
// a tenth of the int8 step). GOPT_STEM_AMX=0 keeps oneDNN's.
std::optional<cpu::StemGeometry> stemGeometry(const KernelConfig &c,
                                              const OneDnnLayoutKernel &onednn,
                                              DataType srcType,
                                              DataType dstType) {
  if (!cpu::stemAmxEnabled())
    return std::nullopt;
  StatusOr<ConvGeometry> geometry = convGeometry(c);
  if (!geometry.ok())
    return std::nullopt;
  const ConvGeometry &g = *geometry;
  const Dims &wd = g.weightDims;
  const memory::desc in = onednn.inputDesc(0), out = onednn.outputDesc();
  if (wd.size() != 4 || wd[2] != 3 || wd[3] != 3 || g.cin > 3 ||
      g.strides[0] != g.strides[1] || g.dilations[0] != 0 ||
      g.dilations[1] != 0 || !isNhwc(in) || !isNhwc(out) ||
      in.data_type() != srcType || out.data_type() != dstType ||
      in.dims() != g.srcDims || out.dims() != g.dstDims)
    return std::nullopt;
  cpu::StemGeometry s;
  s.channels = g.cin;
  s.height = g.h;
  s.width = g.w;
  s.outHeight = g.dstDims[2];
  s.outWidth = g.dstDims[3];
  s.stride = g.strides[0];
  s.padTop = g.padL[0];
  s.padLeft = g.padL[1];
  return s;
}

// The weights [n][3][3][c] from OIHW or HWIO.
template <typename T>
std::vector<T> stemWeights(const T *raw, int64_t n, int64_t c, bool oihw) {
  std::vector<T> w(n * 9 * c);
  for (int64_t o = 0; o < n; ++o)
    for (int64_t t = 0; t < 9; ++t)
      for (int64_t i = 0; i < c; ++i)
        w[(o * 9 + t) * c + i] =
            oihw ? raw[(o * c + i) * 9 + t] : raw[(t * c + i) * n + o];
  return w;
}

class StemStageKernel : public OneDnnLayoutKernel {
public:
  static std::unique_ptr<OneDnnLayoutKernel>
  createInt8(const KernelConfig &c, const cpu::Int8Params &p,
             const OneDnnLayoutKernel &onednn, float f32Scale) {
    if (p.dstScale <= 0 || !p.weights || p.sum ||
        (p.activation != "none" && p.activation != "relu" &&
         p.activation != "relu6" && p.activation != "clip"))
      return nullptr;
    std::optional<cpu::StemGeometry> s = stemGeometry(
        c, onednn, p.srcUnsigned ? DataType::u8 : DataType::s8, int8DstType(p));
    if (!s)
      return nullptr;
    StatusOr<ConvGeometry> g = convGeometry(c);
    if (static_cast<int64_t>(p.weightScales.size()) != g->cout &&
        p.weightScales.size() != 1)
      return nullptr;
    cpu::PointwiseInt8Params q;
    setInt8Epilogue(p, g->cout, q);
    auto kernel = std::unique_ptr<StemStageKernel>(new StemStageKernel());
    kernel->stem_ = cpu::StemConvAmx::createInt8(
        *s, g->cout,
        stemWeights(p.weights, g->cout, g->cin, g->weightTag == Tag::oihw), q,
        omp_get_max_threads());
    return finish(std::move(kernel), onednn, g->n, f32Scale, "gopt-stem-int8");
  }
  static std::unique_ptr<OneDnnLayoutKernel>
  createBf16(const KernelConfig &c, const cpu::ConvPostOps &post,
             const OneDnnLayoutKernel &onednn, float f32Scale) {
    if (convType(c) != DataType::bf16 || c.inputTypes[1] != DType::kBF16 ||
        !c.constantInputs[1] || !post.tail.empty() || post.sum)
      return nullptr;
    const bool hasBias = c.inputShapes.size() == 3;
    if (hasBias && !constantF32OrBf16Bias(c))
      return nullptr;
    std::optional<ActivationClamp> act = activationClamp(post);
    std::optional<cpu::StemGeometry> s =
        stemGeometry(c, onednn, DataType::bf16, DataType::bf16);
    if (!act || !s)
      return nullptr;
    StatusOr<ConvGeometry> g = convGeometry(c);
    const int64_t n = g->cout;
    std::vector<float> bias;
    for (int64_t o = 0; hasBias && o < n; ++o) {
      float b;
      if (c.inputTypes[2] == DType::kF32) {
        b = static_cast<const float *>(c.constantInputs[2])[o];
      } else {
        uint32_t wide = static_cast<uint32_t>(static_cast<const uint16_t *>(
                            c.constantInputs[2])[o])
                        << 16;
        std::memcpy(&b, &wide, sizeof(float));
      }
      bias.push_back(b);
    }
    auto kernel = std::unique_ptr<StemStageKernel>(new StemStageKernel());
    kernel->stem_ = cpu::StemConvAmx::createBf16(
        *s, n,
        stemWeights(static_cast<const uint16_t *>(c.constantInputs[1]), n,
                    g->cin, g->weightTag == Tag::oihw),
        bias, act->clamp, act->lo, act->hi, omp_get_max_threads());
    return finish(std::move(kernel), onednn, g->n, f32Scale, "gopt-stem-bf16");
  }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    stem_->run(inputs[0].data(), outputs[0].data(), images_);
    return Status::success();
  }
  const char *implementation() const override { return name_; }
  size_t workspaceBytes() const override { return 0; }

private:
  static std::unique_ptr<OneDnnLayoutKernel>
  finish(std::unique_ptr<StemStageKernel> kernel,
         const OneDnnLayoutKernel &onednn, int64_t images, float f32Scale,
         const char *name) {
    if (!kernel->stem_)
      return nullptr;
    kernel->images_ = images;
    kernel->name_ = name;
    kernel->inputDescs_ = {onednn.inputDesc(0)};
    // The f32 image itself, converted inside (GOPT_STEM_AMX_F32_SOURCE).
    static const bool f32Source = envSwitchOn("GOPT_STEM_AMX_F32_SOURCE");
    if (f32Scale > 0 && f32Source && kernel->stem_->readF32Source(f32Scale))
      kernel->inputDescs_ = {
          memory::desc(onednn.inputDesc(0).dims(), DataType::f32, Tag::nchw)};
    kernel->outputDesc_ = onednn.outputDesc();
    return kernel;
  }
  std::unique_ptr<cpu::StemConvAmx> stem_;
  int64_t images_ = 0;
  const char *name_ = "";
};

std::unique_ptr<OneDnnLayoutKernel>
int8DepthwiseKernel(const KernelConfig &c, const Int8Params &p,
                    const OneDnnLayoutKernel &onednn) {
  return Int8DepthwiseStageKernel::create(c, p, onednn);
}

// Convolutions where each one's result is read only by the next, run `chunk`
// images at a time: stage k + 1 reads stage k's result for those images
// from a small buffer that stays in cache, instead of the whole batch's
// result going to memory and back (MobileNet's expanded activations).
class ConvChainKernel : public cpu::LayoutKernel {
public:
  static StatusOr<std::unique_ptr<LayoutKernel>>
  create(const std::vector<cpu::ConvChainStage> &stages, int64_t chunk) {
    auto kernel = std::unique_ptr<ConvChainKernel>(new ConvChainKernel());
    int64_t batch = stages[0].config.inputShapes[0][0];
    if (chunk <= 0 || batch % chunk != 0)
      return std::unique_ptr<LayoutKernel>();
    kernel->batch_ = batch;
    kernel->chunk_ = chunk;
    memory::desc src;
    size_t midBytes = 0;
    for (size_t k = 0; k < stages.size(); ++k) {
      KernelConfig c = stages[k].config;
      const cpu::Int8Params *int8 = stages[k].int8;
      // Weights and biases are constants the stages read themselves.
      for (size_t i = 1; i < c.inputShapes.size() && !int8; ++i)
        if (!c.constantInputs[i])
          return std::unique_ptr<LayoutKernel>();
      c.inputShapes[0][0] = chunk;
      c.outputShapes[0][0] = chunk;
      std::unique_ptr<OneDnnLayoutKernel> stage;
      bool supported = false;
      if (int8) {
        if (!int8Supported(*int8))
          return std::unique_ptr<LayoutKernel>();
        auto conv = std::make_unique<Int8ConvKernel>();
        GOPT_RETURN_IF_ERROR(
            conv->init(c, *int8, supported, k ? &src : nullptr));
        stage = std::move(conv);
      } else {
        auto conv = std::unique_ptr<ConvKernel>(new ConvKernel());
        GOPT_RETURN_IF_ERROR(conv->init(c, /*anyLayout=*/true, stages[k].post,
                                        supported, k ? &src : nullptr));
        stage = std::move(conv);
      }
      // A stage reading the previous one's layout may find only oneDNN's
      // reference kernel for it (a grouped convolution reading NHWC: RegNet
      // ran 11x slower chained); unchained, each picks its own layouts.
      if (!supported || stage->runsReference())
        return std::unique_ptr<LayoutKernel>();
      if (int8) {
        if (auto stem =
                k ? nullptr
                  : StemStageKernel::createInt8(
                        c, *int8, *stage,
                        stages.size() > 2 ? stages[0].f32SourceScale : 0.0f)) {
          stage = std::move(stem);
          kernel->stem_ = true;
        } else if (auto pw =
                       Int8PointwiseStageKernel::create(c, *int8, *stage)) {
          stage = std::move(pw);
          kernel->pointwise_ = true;
        } else if (auto dw =
                       Int8DepthwiseStageKernel::create(c, *int8, *stage)) {
          stage = std::move(dw);
          kernel->depthwise_ = true;
        }
      } else {
        if (auto stem =
                k ? nullptr
                  : StemStageKernel::createBf16(
                        c, stages[k].post, *stage,
                        stages.size() > 2 ? stages[0].f32SourceScale : 0.0f)) {
          stage = std::move(stem);
          kernel->stem_ = true;
        } else if (auto dw = DepthwiseStageKernel::create(c, stages[k].post,
                                                          *stage)) {
          stage = std::move(dw);
          kernel->depthwise_ = true;
        } else if (auto f32 =
                       DepthwiseF32Kernel::create(c, stages[k].post, *stage)) {
          stage = std::move(f32);
          kernel->depthwise_ = true;
        } else if (auto pw = PointwiseStageKernel::create(c, stages[k].post,
                                                          *stage)) {
          stage = std::move(pw);
          kernel->pointwise_ = true;
        }
      }
      src = stage->outputDesc();
      if (k + 1 < stages.size())
        midBytes = std::max(midBytes, src.get_size());
      Stage st;
      st.kernel = std::move(stage);
      st.srcType = c.inputTypes[0];
      for (size_t i = 1; i < c.inputShapes.size() && !int8; ++i)
        st.constants.push_back(
            Tensor::view(c.inputTypes[i], c.inputShapes[i],
                         const_cast<void *>(c.constantInputs[i])));
      kernel->stages_.push_back(std::move(st));
    }
    kernel->inputDesc_ =
        withBatch(kernel->stages_.front().kernel->inputDesc(0), batch);
    kernel->outputDesc_ =
        withBatch(kernel->stages_.back().kernel->outputDesc(), batch);
    if (kernel->inputDesc_.is_zero() || kernel->outputDesc_.is_zero())
      return std::unique_ptr<LayoutKernel>();
    if (static_cast<size_t>(midBytes / chunk) > bandBytes()) {
      size_t bandMid = 0;
      GOPT_RETURN_IF_ERROR(kernel->planBands(stages, bandMid));
      if (!kernel->bands_.empty())
        midBytes = bandMid;
    }
    for (auto &buffer : kernel->mid_) {
      buffer = allocateAligned(midBytes);
      if (!buffer)
        return resourceExhausted("cannot allocate a convolution chain's ",
                                 midBytes, "-byte buffer");
    }
    kernel->midBytes_ = midBytes;
    return std::unique_ptr<LayoutKernel>(std::move(kernel));
  }

  // inputs: the first stage's source (and the last stage's accumulator,
  // which is the output's storage); output: the last stage's result.
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    return runImages(inputs[0].data(), outputs[0].data(), outputs[0].dtype(), 0,
                     batch_);
  }
  // Images [first, end) of the batch (whole chunks), `dstType` the
  // result's element type.
  Status runImages(const void *source, void *result, DType dstType,
                   int64_t first, int64_t end) {
    const char *src = static_cast<const char *>(source);
    char *dst = static_cast<char *>(result);
    if (!bands_.empty())
      return runBands(src, dst, dstType, first, end);
    const size_t srcStep = inputDesc_.get_size() / batch_ * chunk_;
    const size_t dstStep = outputDesc_.get_size() / batch_ * chunk_;
    for (int64_t n = first; n < end; n += chunk_) {
      const void *in = src + n / chunk_ * srcStep;
      for (size_t k = 0; k < stages_.size(); ++k) {
        Stage &st = stages_[k];
        void *out = k + 1 == stages_.size() ? dst + n / chunk_ * dstStep
                                            : mid_[k % 2].get();
        std::vector<Tensor> stageIn = {
            Tensor::view(st.srcType, {}, const_cast<void *>(in))};
        stageIn.insert(stageIn.end(), st.constants.begin(), st.constants.end());
        std::vector<Tensor> stageOut = {Tensor::view(dstType, {}, out)};
        GOPT_RETURN_IF_ERROR(st.kernel->run(stageIn, stageOut));
        in = out;
      }
    }
    return Status::success();
  }
  // "-dw": a depthwise stage runs gopt's kernel (DepthwiseStageKernel or
  // Int8DepthwiseStageKernel);
  // "-pw": a 1x1 stage runs gopt's AMX kernel (PointwiseStageKernel);
  // "-stem": the first stage runs StemStageKernel.
  const char *implementation() const override {
    static const char *names[2][2][2][2] = {
        {{{"onednn", "onednn-stem"}, {"onednn-pw", "onednn-pw-stem"}},
         {{"onednn-dw", "onednn-dw-stem"},
          {"onednn-dw-pw", "onednn-dw-pw-stem"}}},
        {{{"onednn-rows", "onednn-rows-stem"},
          {"onednn-rows-pw", "onednn-rows-pw-stem"}},
         {{"onednn-rows-dw", "onednn-rows-dw-stem"},
          {"onednn-rows-dw-pw", "onednn-rows-dw-pw-stem"}}}};
    return names[!bands_.empty()][depthwise_][pointwise_][stem_];
  }
  int64_t batch() const { return batch_; }
  int64_t chunk() const { return chunk_; }
  bool banded() const { return !bands_.empty(); }
  size_t workspaceBytes() const override {
    size_t bytes = 2 * midBytes_;
    for (const Stage &st : stages_) {
      bytes += st.kernel->workspaceBytes();
      for (const auto &kernel : st.bandKernels)
        bytes += kernel->workspaceBytes();
    }
    bytes += headBytes_ + pendingBytes_;
    return bytes;
  }
  memory::desc inputDesc(int) const override { return inputDesc_; }
  memory::desc outputDesc() const override { return outputDesc_; }

private:
  struct Stage {
    std::unique_ptr<OneDnnLayoutKernel> kernel;
    DType srcType;
    std::vector<Tensor> constants; // weights, bias
    // Row bands: the kernels of the band shapes this stage runs, and the
    // bytes of one row of its source and result (NHWC).
    std::vector<std::unique_ptr<OneDnnLayoutKernel>> bandKernels;
    size_t srcRowBytes = 0, dstRowBytes = 0;
  };
  // One band of the last stage's result rows: per stage, the kernel (in
  // bandKernels) and the first source row it reads.
  struct Band {
    int64_t outRow;
    std::vector<std::pair<int, int64_t>> steps;
  };

  // The bytes of a chain's largest intermediate, one image's worth, above
  // which the chain runs a band of rows at a time: the expand and
  // depthwise results of a band stay in L2 (with their neighbours) even
  // where one image's would not (MobileNetV2's 112x112 and 56x56 blocks in
  // bf16 and int8).
  static size_t bandBytes() {
    const char *e = std::getenv("GOPT_CHAIN_BAND_BYTES");
    return e ? std::strtoull(e, nullptr, 10) : size_t(512) << 10;
  }

  // Splits each image into bands of the last stage's result rows, each
  // band computing the rows of the earlier stages it needs (the depthwise
  // convolutions' halo rows computed twice), where every banded stage reads
  // and writes NHWC; bands_ stays empty otherwise. A first stage that is
  // neither 1x1 nor depthwise (MobileNet's stem) runs on whole images
  // before: its halo rows would cost a dense 3x3 convolution each, and
  // oneDNN's kernel for it ran 1.5x slower on bands. `midBytes`: the
  // largest intermediate band.
  Status planBands(const std::vector<cpu::ConvChainStage> &stages,
                   size_t &midBytes) {
    struct Window {
      int64_t hin, hout, stride, extent, padTop;
    };
    std::vector<Window> windows;
    for (size_t k = 0; k < stages_.size(); ++k) {
      GOPT_ASSIGN_OR_RETURN(ConvGeometry g, convGeometry(stages[k].config));
      int64_t kh = g.weightDims[g.weightDims.size() - 2];
      bool dense = g.weightDims.size() == 4 && kh > 1;
      if (k == 0 && dense && stages_.size() > 2)
        head_ = 1;
      const Stage &st = stages_[k];
      if ((k == head_ && !isNhwc(k ? stages_[k - 1].kernel->outputDesc()
                                   : st.kernel->inputDesc(0))) ||
          !isNhwc(st.kernel->outputDesc()))
        return Status::success();
      windows.push_back({g.h, g.dstDims[2], g.strides[0],
                         (kh - 1) * (g.dilations[0] + 1) + 1, g.padL[0]});
    }
    for (size_t k = head_; k < stages_.size(); ++k) {
      Stage &st = stages_[k];
      const memory::desc in =
          k ? stages_[k - 1].kernel->outputDesc() : st.kernel->inputDesc(0);
      const memory::desc out = st.kernel->outputDesc();
      st.srcRowBytes = in.get_size() / chunk_ / windows[k].hin;
      st.dstRowBytes = out.get_size() / chunk_ / windows[k].hout;
    }
    // Per banded stage, the source rows [lo, lo + inRows) and padding that
    // result rows [a, b) of the last stage need; returns the largest
    // intermediate's bytes.
    auto plan = [&](int64_t a, int64_t b, std::vector<RowBand> &shape,
                    std::vector<int64_t> &lo) {
      size_t mid = 0;
      shape.assign(windows.size(), RowBand{});
      lo.assign(windows.size(), 0);
      for (size_t k = windows.size(); k-- > head_;) {
        const Window &w = windows[k];
        if (k + 1 < windows.size())
          mid = std::max(mid,
                         static_cast<size_t>(b - a) * stages_[k].dstRowBytes);
        int64_t first = a * w.stride - w.padTop;
        int64_t last = (b - 1) * w.stride - w.padTop + w.extent;
        int64_t from = std::max<int64_t>(first, 0);
        int64_t to = std::min(last, w.hin);
        shape[k] = {to - from, b - a, from - first, last - to};
        lo[k] = from;
        a = from;
        b = to;
      }
      return mid;
    };
    const int64_t rows = windows.back().hout;
    std::vector<RowBand> shape;
    std::vector<int64_t> lo;
    int64_t bandRows = 0;
    for (int64_t r = rows; r >= 1 && !bandRows; --r) {
      size_t mid = 0;
      for (int64_t a = 0; a < rows; a += r)
        mid = std::max(mid, plan(a, std::min(rows, a + r), shape, lo));
      if (mid <= bandBytes())
        bandRows = r;
    }
    if (bandRows == 0 || bandRows == rows)
      return Status::success();
    std::map<std::tuple<size_t, int64_t, int64_t, int64_t, int64_t>, int>
        kernels;
    std::vector<Band> bands;
    for (int64_t a = 0; a < rows; a += bandRows) {
      midBytes =
          std::max(midBytes, plan(a, std::min(rows, a + bandRows), shape, lo));
      Band band{a, {}};
      for (size_t k = head_; k < windows.size(); ++k) {
        const RowBand &rb = shape[k];
        auto key =
            std::make_tuple(k, rb.inRows, rb.outRows, rb.padTop, rb.padBottom);
        auto it = kernels.find(key);
        if (it == kernels.end()) {
          Stage &st = stages_[k];
          memory::desc in =
              k ? stages_[k - 1].kernel->outputDesc() : st.kernel->inputDesc(0);
          memory::desc src({1, in.dims()[1], rb.inRows, in.dims()[3]},
                           in.data_type(), Tag::nhwc);
          KernelConfig c = stages[k].config;
          std::unique_ptr<OneDnnLayoutKernel> kernel;
          bool supported = false;
          if (stages[k].int8) {
            auto conv = std::make_unique<Int8ConvKernel>();
            GOPT_RETURN_IF_ERROR(
                conv->init(c, *stages[k].int8, supported, &src, &rb));
            kernel = std::move(conv);
          } else {
            auto conv = std::unique_ptr<ConvKernel>(new ConvKernel());
            GOPT_RETURN_IF_ERROR(conv->init(c, /*anyLayout=*/true,
                                            stages[k].post, supported, &src,
                                            /*preferredDst=*/nullptr,
                                            /*blockedSrc=*/nullptr, &rb));
            kernel = std::move(conv);
          }
          if (!supported || !isNhwc(kernel->outputDesc()))
            return Status::success();
          if (stages[k].int8) {
            if (auto pw = Int8PointwiseStageKernel::create(c, *stages[k].int8,
                                                           *kernel, &rb)) {
              kernel = std::move(pw);
              pointwise_ = true;
            } else if (auto dw = Int8DepthwiseStageKernel::create(
                           c, *stages[k].int8, *kernel, &rb)) {
              kernel = std::move(dw);
              depthwise_ = true;
            }
          } else {
            if (auto dw = DepthwiseStageKernel::create(c, stages[k].post,
                                                       *kernel, &rb)) {
              kernel = std::move(dw);
              depthwise_ = true;
            } else if (auto f32 = DepthwiseF32Kernel::create(c, stages[k].post,
                                                             *kernel, &rb)) {
              kernel = std::move(f32);
              depthwise_ = true;
            } else if (auto pw = PointwiseStageKernel::create(c, stages[k].post,
                                                              *kernel, &rb)) {
              kernel = std::move(pw);
              pointwise_ = true;
            }
          }
          st.bandKernels.push_back(std::move(kernel));
          it = kernels.emplace(key, static_cast<int>(st.bandKernels.size()) - 1)
                   .first;
        }
        band.steps.emplace_back(it->second, lo[k]);
      }
      bands.push_back(std::move(band));
    }
    if (head_) {
      headBytes_ = stages_[0].kernel->outputDesc().get_size();
      headBuffer_ = allocateAligned(headBytes_);
      if (!headBuffer_)
        return resourceExhausted("cannot allocate a convolution chain's ",
                                 headBytes_, "-byte buffer");
    } else {
      // A band's result rows when the chain sums them in place into its
      // own source (runBands).
      pendingBytes_ =
          static_cast<size_t>(bandRows) * stages_.back().dstRowBytes;
      pending_ = allocateAligned(pendingBytes_);
      if (!pending_)
        return resourceExhausted("cannot allocate a convolution chain's ",
                                 pendingBytes_, "-byte buffer");
    }
    bands_ = std::move(bands);
    return Status::success();
  }

  // Per chunk of images: the head stage on the whole chunk, then each
  // image band by band. A chain summing its result in place into its own
  // source (a residual block whose input dies there) would overwrite the
  // halo rows the next band reads: each band's result is summed into a
  // copy of its rows instead, written back once the next band's first
  // stage has read its source.
  Status runBands(const char *src, char *dst, DType dstType, int64_t first,
                  int64_t end) {
    const size_t srcImage = inputDesc_.get_size() / batch_;
    const size_t dstImage = outputDesc_.get_size() / batch_;
    const size_t last = stages_.size() - 1;
    const bool inPlace = !head_ && src == dst;
    const size_t rowBytes = stages_[last].dstRowBytes;
    char *pending = static_cast<char *>(pending_.get());
    char *pendingTo = nullptr; // where the pending rows go
    size_t pendingSize = 0;
    auto flush = [&] {
      if (pendingTo)
        std::memcpy(pendingTo, pending, pendingSize);
      pendingTo = nullptr;
    };
    auto runStage = [&](OneDnnLayoutKernel &kernel, Stage &st, const void *in,
                        void *out) {
      std::vector<Tensor> stageIn = {
          Tensor::view(st.srcType, {}, const_cast<void *>(in))};
      stageIn.insert(stageIn.end(), st.constants.begin(), st.constants.end());
      std::vector<Tensor> stageOut = {Tensor::view(dstType, {}, out)};
      return kernel.run(stageIn, stageOut);
    };
    for (int64_t n0 = first; n0 < end; n0 += chunk_) {
      if (head_)
        GOPT_RETURN_IF_ERROR(runStage(*stages_[0].kernel, stages_[0],
                                      src + n0 * srcImage, headBuffer_.get()));
      for (int64_t n = n0; n < n0 + chunk_; ++n) {
        const char *image = head_
                                ? static_cast<const char *>(headBuffer_.get()) +
                                      (n - n0) * (headBytes_ / chunk_)
                                : src + n * srcImage;
        for (const Band &band : bands_) {
          const void *in =
              image + band.steps[0].second * stages_[head_].srcRowBytes;
          for (size_t k = head_; k <= last; ++k) {
            char *rows = dst + n * dstImage + band.outRow * rowBytes;
            void *out = k < last ? mid_[k % 2].get() : inPlace ? pending : rows;
            OneDnnLayoutKernel &kernel =
                *stages_[k].bandKernels[band.steps[k - head_].first];
            if (inPlace && k == last) {
              // The residual rows this band's sum reads.
              pendingSize = kernel.outputDesc().get_size();
              std::memcpy(pending, rows, pendingSize);
            }
            GOPT_RETURN_IF_ERROR(runStage(kernel, stages_[k], in, out));
            if (inPlace && k == head_)
              flush(); // the band before's rows: this band has read them
            if (inPlace && k == last)
              pendingTo = rows;
            in = out;
          }
        }
        flush();
      }
    }
    return Status::success();
  }

  bool depthwise_ = false, pointwise_ = false;
  bool stem_ = false; // the first stage runs StemStageKernel
  std::shared_ptr<void> pending_;
  size_t pendingBytes_ = 0;
  size_t head_ = 0; // stages run on whole images before the bands
  std::shared_ptr<void> headBuffer_;
  size_t headBytes_ = 0;
  std::vector<Band> bands_;
  std::vector<Stage> stages_;
  int64_t batch_ = 0, chunk_ = 0;
  std::shared_ptr<void> mid_[2];
  size_t midBytes_ = 0;
  memory::desc inputDesc_, outputDesc_;
};

// A convolution chain run by several threads, each on its own chunks of
// the batch with its own copy of the chain (one-thread primitives, band
// buffers and scratchpads): one fork and join per step instead of one per
// stage of every band, where each oneDNN call on one image's band of rows
// had too little work to split across threads.
class ParallelConvChainKernel : public cpu::LayoutKernel {
public:
  // The lanes' chains, one per thread, all of the same plan.
  explicit ParallelConvChainKernel(
      std::vector<std::unique_ptr<ConvChainKernel>> lanes)
      : lanes_(std::move(lanes)) {
    name_ = std::string(lanes_[0]->implementation()) + "-images";
  }

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    const int lanes = static_cast<int>(lanes_.size());
    const int64_t chunk = lanes_[0]->chunk();
    const int64_t chunks = lanes_[0]->batch() / chunk;
    std::vector<Status> status(lanes, Status::success());
    const void *src = inputs[0].data();
    void *dst = outputs[0].data();
    const DType dstType = outputs[0].dtype();
#pragma omp parallel for num_threads(lanes) schedule(static, 1)
    for (int lane = 0; lane < lanes; ++lane) {
      // Lane l takes chunks [l * chunks / lanes, (l + 1) * chunks / lanes).
      int64_t first = lane * chunks / lanes * chunk;
      int64_t end = (lane + 1) * chunks / lanes * chunk;
      status[lane] = lanes_[lane]->runImages(src, dst, dstType, first, end);
    }
    for (Status &s : status)
      GOPT_RETURN_IF_ERROR(s);
    return Status::success();
  }
  const char *implementation() const override { return name_.c_str(); }
  size_t workspaceBytes() const override {
    size_t bytes = 0;
    for (const auto &lane : lanes_)
      bytes += lane->workspaceBytes();
    return bytes;
  }
  memory::desc inputDesc(int i) const override {
    return lanes_[0]->inputDesc(i);
  }
  memory::desc outputDesc() const override { return lanes_[0]->outputDesc(); }

private:
  std::vector<std::unique_ptr<ConvChainKernel>> lanes_;
  std::string name_;
};

// How many threads run a chain of `chunks` chunks each on chunks of its
// own: all of them where the chunks divide evenly among them or are many
// (at most a quarter of a chunk's time idles at the end); 1 otherwise.
int chainLanes(int64_t chunks, int threads) {
  if (!envSwitchOn("GOPT_CHAIN_PARALLEL_IMAGES"))
    return 1;
  int lanes = static_cast<int>(std::min<int64_t>(threads, chunks));
  if (lanes < 2 || (chunks % lanes != 0 && chunks < 4 * lanes))
    return 1;
  return lanes;
}

} // namespace

StatusOr<std::unique_ptr<LayoutKernel>>
createConvChain(const std::vector<ConvChainStage> &stages, int64_t chunk) {
  for (const ConvChainStage &stage : stages)
    if ((!stage.int8 && convType(stage.config) == DataType::undef) ||
        stage.config.inputShapes[0].size() != 4 ||
        stage.config.attrs().getString("data_format") != "NCHW")
      return std::unique_ptr<LayoutKernel>();
  const int threads = omp_get_max_threads();
  const int64_t batch = stages[0].config.inputShapes[0][0];
  const int lanes = chunk > 0 ? chainLanes(batch / chunk, threads) : 1;
  if (lanes < 2)
    return ConvChainKernel::create(stages, chunk);
  // Each lane's primitives are made for the one thread that runs them
  // (oneDNN sizes its work split by the thread count at creation).
  std::vector<std::unique_ptr<ConvChainKernel>> chains;
  omp_set_num_threads(1);
  for (int lane = 0; lane < lanes; ++lane) {
    StatusOr<std::unique_ptr<LayoutKernel>> chain =
        ConvChainKernel::create(stages, chunk);
    if (!chain.ok() || !*chain) {
      omp_set_num_threads(threads);
      return chain;
    }
    chains.emplace_back(static_cast<ConvChainKernel *>(chain->release()));
  }
  omp_set_num_threads(threads);
  return std::unique_ptr<LayoutKernel>(
      std::make_unique<ParallelConvChainKernel>(std::move(chains)));
}

namespace {
// An f32 convolution of gopt's own (`Conv`: run(src, bias, dst) and
// workspaceBytes()) as a layout kernel: `src` and `dst` layouts (NHWC
// unless given), optional bias (input 2), and the residual sum read from
// the result.
template <typename Conv> class OwnF32ConvKernel : public LayoutKernel {
public:
  static std::unique_ptr<LayoutKernel> wrap(std::unique_ptr<Conv> conv,
                                            const memory::desc &src,
                                            const memory::desc &dst,
                                            bool hasBias, bool sum,
                                            const char *implementation) {
    auto k = std::unique_ptr<OwnF32ConvKernel>(new OwnF32ConvKernel());
    k->conv_ = std::move(conv);
    k->hasBias_ = hasBias;
    k->sum_ = sum;
    k->implementation_ = implementation;
    k->src_ = src;
    k->dst_ = dst;
    return k;
  }
  static std::unique_ptr<LayoutKernel> wrap(std::unique_ptr<Conv> conv,
                                            const ConvGeometry &g, bool hasBias,
                                            bool sum,
                                            const char *implementation) {
    return wrap(std::move(conv),
                memory::desc(g.srcDims, DataType::f32, Tag::nhwc),
                memory::desc(g.dstDims, DataType::f32, Tag::nhwc), hasBias, sum,
                implementation);
  }
  memory::desc inputDesc(int i) const override {
    return i == 0 ? src_ : memory::desc();
  }
  memory::desc outputDesc() const override { return dst_; }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    float *dst = outputs[0].data<float>();
    // The sum reads the residual in the result (the schedule gives them
    // one slot; copied where it did not).
    if (sum_) {
      const float *residual = inputs.back().data<float>();
      if (residual != dst)
        std::memcpy(dst, residual, outputs[0].byteSize());
    }
    conv_->run(inputs[0].data<float>(),
               hasBias_ ? inputs[2].data<float>() : nullptr, dst);
    return Status::success();
  }
  const char *implementation() const override { return implementation_; }
  size_t workspaceBytes() const override { return conv_->workspaceBytes(); }

private:
  std::unique_ptr<Conv> conv_;
  bool hasBias_ = false, sum_ = false;
  const char *implementation_ = "";
  memory::desc src_, dst_;
};

// The geometry of conv2d `c` where gopt's Winograd kernels (WinogradConv.h)
// can run it with `post`: f32 with a constant f32 filter (and an f32
// bias), a 3x3 window of `stride` without dilation, top and left pads of
// 1 (at stride 1 also bottom and right: a result of the source's size),
// and only relu and an in-place residual sum after it; nullopt otherwise.
std::optional<ConvGeometry> winogradGeometry(const KernelConfig &c,
                                             const ConvPostOps &post,
                                             int64_t stride) {
  if (convType(c) != DataType::f32 || c.inputTypes[1] != DType::kF32 ||
      !c.constantInputs[1] || !post.tail.empty() ||
      (post.activation != "none" && post.activation != "relu"))
    return std::nullopt;
  if (c.inputShapes.size() == 3 && c.inputTypes[2] != DType::kF32)
    return std::nullopt;
  StatusOr<ConvGeometry> g = convGeometry(c);
  if (!g.ok() || !g->nchw || g->weightDims.size() != 4 ||
      g->weightDims[2] != 3 || g->weightDims[3] != 3 ||
      g->strides != Dims{stride, stride} || g->dilations != Dims{0, 0} ||
      g->padL != Dims{1, 1})
    return std::nullopt;
  if (stride == 1 &&
      (g->padR != Dims{1, 1} || g->dstDims[2] != g->h || g->dstDims[3] != g->w))
    return std::nullopt;
  return *g;
}

// The part of a Winograd kernel's shape every kernel shares.
void fillWinogradShape(WinogradConvShape &s, const ConvGeometry &g,
                       const KernelConfig &c, const ConvPostOps &post) {
  s.cin = g.cin;
  s.cout = g.cout;
  s.h = g.h;
  s.w = g.w;
  s.oihw = g.weightTag == Tag::oihw;
  s.bias = c.inputShapes.size() == 3;
  s.sum = post.sum;
  s.relu = post.activation == "relu";
}

// gopt's batch-1 Winograd F(2x2, 3x3) (WinogradConv.cpp) for a wide 3x3
// stride-1 pad-1 f32 convolution with a constant filter: where the
// transformed filter is over the 1 MiB that oneDNN's own 2x3 kernel is
// taken for (ResNet's 256- and 512-channel layers). NHWC in and out, as the
// direct (brgemm) kernel reads these layers at batch 1.
std::unique_ptr<LayoutKernel>
createWinogradWideKernel(const KernelConfig &c, const ConvPostOps &post) {
  if (!winogradWideEnabled())
    return nullptr;
  std::optional<ConvGeometry> g = winogradGeometry(c, post, /*stride=*/1);
  if (!g || g->n != 1)
    return nullptr;
  // Below this oneDNN's 2x3 kernel is taken (winogradConv).
  if (16 * g->cin * g->cout * int64_t(sizeof(float)) <= (int64_t(1) << 20))
    return nullptr;
  // Each transformed filter element (16/9 of the filter's bytes, streamed
  // from L3 every run) serves one multiply per 2x2 tile: ResNet-18's
  // 14x14 layers (49 tiles) ran 1.55x faster alone, its 7x7 ones (16
  // tiles) 1.2x faster alone but slower in the network on an Intel Xeon,
  // where their 16 MiB filters came from further away at 23 GB/s, and
  // 5-20% faster in the network on an AMD EPYC reading 64 GB/s: below 36
  // tiles the machine's measured read rate decides.
  // GOPT_CONV_WINOGRAD_WIDE=all takes those layers regardless.
  const char *setting = std::getenv("GOPT_CONV_WINOGRAD_WIDE");
  bool anyTiles = setting && std::strcmp(setting, "all") == 0;
  int64_t tiles = ((g->h + 1) / 2) * ((g->w + 1) / 2);
  if (!anyTiles && tiles < 36 &&
      !winogradWideFewTilesPays(g->cin, g->cout, g->h, g->w,
                                omp_in_parallel() ? 1 : omp_get_max_threads(),
                                streamingReadGBps()))
    return nullptr;
  // Its transformed input (16 x tiles x cin floats) and each thread's
  // products (16 x tiles x 64) are whole-image buffers: large images
  // (where the direct kernel has rows enough to split) keep oneDNN's.
  if (tiles > 1024 || 16 * tiles * g->cin > (int64_t(4) << 20))
    return nullptr;
  WinogradWideShape s;
  fillWinogradShape(s, *g, c, post);
  std::unique_ptr<WinogradWideConv> conv = WinogradWideConv::create(
      s, static_cast<const float *>(c.constantInputs[1]));
  if (!conv)
    return nullptr;
  return OwnF32ConvKernel<WinogradWideConv>::wrap(std::move(conv), *g, s.bias,
                                                  s.sum, "winograd-wide");
}

// SiLU as the pass after oneDNN's convolution computes it by default (the
// same bits), taken in gopt's 1x1 tile registers instead of a pass over the
// result: EfficientNet's 7x7 expand and head layers.
static bool conv1x1TakesSilu(const ConvPostOps::Eltwise &e) {
  return e.algorithm == dnnl::algorithm::eltwise_swish && e.alpha == 1.0f &&
         conv1x1F32SiluEnabled() && cpu::siluDirectEnabled() &&
         cpu::siluExp2Enabled();
}

// The shape gopt's f32 1x1 kernel (Conv1x1F32.cpp) computes for an NCHW
// 1x1 unpadded convolution with a constant f32 filter (and bias) and its
// post-ops, or nullopt where the kernel has no form of them (or
// GOPT_CONV_1X1_F32=0). The layout (`blocked`) is the caller's to set.
static std::optional<Conv1x1F32Shape>
conv1x1F32ShapeOf(const KernelConfig &c, const ConvPostOps &post) {
  if (!conv1x1F32Enabled() || convType(c) != DataType::f32 ||
      c.inputTypes[1] != DType::kF32 || !c.constantInputs[1] ||
      post.tail.size() > 1)
    return std::nullopt;
  std::optional<ActivationClamp> act = activationClamp(post);
  if (!act)
    return std::nullopt;
  const bool hasBias = c.inputShapes.size() == 3;
  if (hasBias && (!c.constantInputs[2] || c.inputTypes[2] != DType::kF32))
    return std::nullopt;
  StatusOr<ConvGeometry> g = convGeometry(c);
  if (!g.ok() || !g->nchw || g->weightDims.size() != 4 ||
      g->weightDims[2] != 1 || g->weightDims[3] != 1 || g->padL != Dims{0, 0} ||
      g->padR != Dims{0, 0})
    return std::nullopt;
  Conv1x1F32Shape s;
  s.n = g->n;
  s.cin = g->cin;
  s.cout = g->cout;
  s.h = g->h;
  s.w = g->w;
  s.strideH = g->strides[0];
  s.strideW = g->strides[1];
  if (g->dstDims[2] != s.outH() || g->dstDims[3] != s.outW())
    return std::nullopt;
  s.oihw = g->weightTag == Tag::oihw;
  s.bias = hasBias;
  s.sum = post.sum;
  s.relu = post.activation == "relu";
  // relu6 and clip (MobileNets' 7x7 expand and last layers) as a clamp,
  // and a HardSwish or SiLU after it.
  s.clip = act->clamp && !s.relu;
  s.lo = act->lo;
  s.hi = act->hi;
  if (!post.tail.empty()) {
    const cpu::ConvPostOps::Eltwise &e = post.tail[0];
    if (conv1x1TakesSilu(e))
      s.silu = true;
    else if (isHardSwish(e))
      s.hardswish = true;
    else
      return std::nullopt;
  }
  return s;
}

// The filter and bias of a convolution conv1x1F32ShapeOf accepted.
static std::unique_ptr<Conv1x1F32> createConv1x1F32(const KernelConfig &c,
                                                    const Conv1x1F32Shape &s) {
  return Conv1x1F32::create(
      s, static_cast<const float *>(c.constantInputs[1]),
      s.bias ? static_cast<const float *>(c.constantInputs[2]) : nullptr);
}

// gopt's f32 1x1 convolution (Conv1x1F32.cpp) in the layouts oneDNN chose
// for the layer (`onednn`, nChw16c or NHWC), where it ran faster than
// oneDNN 2.6's jit_1x1 / brgconv_1x1 (conv1x1F32Preferred: ResNet-50's 7x7
// layers 1.2-1.3x); see docs/architecture.md. At least 64 channels each way
// (the shapes measured). GOPT_CONV_1X1_F32=0 keeps oneDNN's.
class Conv1x1F32Kernel : public LayoutKernel {
public:
  static std::unique_ptr<LayoutKernel> create(const KernelConfig &c,
                                              const ConvPostOps &post,
                                              const LayoutKernel &onednn) {
    std::optional<Conv1x1F32Shape> s = conv1x1F32ShapeOf(c, post);
    if (!s || s->cin < 64 || s->cout < 64)
      return nullptr;
    StatusOr<ConvGeometry> g = convGeometry(c);
    const memory::desc src = onednn.inputDesc(0), dst = onednn.outputDesc();
    auto is = [](const memory::desc &md, const Dims &dims, Tag tag) {
      return md == memory::desc(dims, DataType::f32, tag);
    };
    if (is(src, g->srcDims, Tag::aBcd16b) && is(dst, g->dstDims, Tag::aBcd16b))
      s->blocked = true;
    else if (is(src, g->srcDims, Tag::nhwc) && is(dst, g->dstDims, Tag::nhwc))
      s->blocked = false;
    else
      return nullptr;
    if ((s->clip || s->hardswish) && !conv1x1F32ClampEnabled())
      return nullptr;
    if (!conv1x1F32Preferred(*s))
      return nullptr;
    auto k = std::unique_ptr<Conv1x1F32Kernel>(new Conv1x1F32Kernel());
    k->conv_ = createConv1x1F32(c, *s);
    if (!k->conv_)
      return nullptr;
    k->sum_ = post.sum;
    k->src_ = src;
    k->dst_ = dst;
    return k;
  }
  memory::desc inputDesc(int i) const override {
    return i == 0 ? src_ : memory::desc();
  }
  memory::desc outputDesc() const override { return dst_; }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    float *dst = outputs[0].data<float>();
    // The sum reads the residual in the result (as OwnF32ConvKernel).
    if (sum_) {
      const float *residual = inputs.back().data<float>();
      if (residual != dst)
        std::memcpy(dst, residual, outputs[0].byteSize());
    }
    conv_->run(inputs[0].data<float>(), dst);
    return Status::success();
  }
  const char *implementation() const override { return "gopt-1x1-f32"; }
  size_t workspaceBytes() const override { return 0; }

private:
  std::unique_ptr<Conv1x1F32> conv_;
  bool sum_ = false;
  memory::desc src_, dst_;
};

// A 1x1 f32 convolution whose result only a global average pool reads
// (SqueezeNet's classifier, MobileNetV3's last 1x1 layer) on gopt's 1x1
// kernel with the pool fused (Conv1x1F32Shape::pool): the activated result
// is summed over the pixels as it is computed, never written, and the
// pool's pass over it goes. Reads nChw16c or NHWC (the source's layout,
// else nChw16c); writes the pool's [N, C, 1, 1]. GOPT_CONV_1X1_POOL_F32=0
// (or GOPT_CONV_1X1_F32=0) keeps the two apart.
class Conv1x1PoolF32Kernel : public LayoutKernel {
public:
  static std::unique_ptr<LayoutKernel> create(const KernelConfig &c,
                                              const ConvPostOps &post,
                                              const memory::desc &source,
                                              const Shape &pooled) {
    std::optional<Conv1x1F32Shape> s = conv1x1F32ShapeOf(c, post);
    if (!s || !conv1x1PoolF32Enabled() || s->sum ||
        pooled != Shape{s->n, s->cout, 1, 1})
      return nullptr;
    StatusOr<ConvGeometry> g = convGeometry(c);
    s->blocked = source != memory::desc(g->srcDims, DataType::f32, Tag::nhwc);
    s->pool = true;
    auto k = std::unique_ptr<Conv1x1PoolF32Kernel>(new Conv1x1PoolF32Kernel());
    k->conv_ = createConv1x1F32(c, *s);
    if (!k->conv_)
      return nullptr;
    k->src_ = memory::desc(g->srcDims, DataType::f32,
                           s->blocked ? Tag::aBcd16b : Tag::nhwc);
    k->dst_ = plainDesc(pooled, DType::kF32);
    return k;
  }
  memory::desc inputDesc(int i) const override {
    return i == 0 ? src_ : memory::desc();
  }
  memory::desc outputDesc() const override { return dst_; }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    conv_->run(inputs[0].data<float>(), outputs[0].data<float>());
    return Status::success();
  }
  const char *implementation() const override { return "gopt-1x1-pool-f32"; }

private:
  std::unique_ptr<Conv1x1F32> conv_;
  memory::desc src_, dst_;
};

// A 1x1 convolution writing its result into a channel concatenation's
// nChw16c destination (SqueezeNet's expand1x1 layers) on gopt's 1x1 kernel,
// all images in one call: the kernel's result may skip from one image to
// the next by the concat's image size (Conv1x1F32Shape::dstImageStride),
// where oneDNN's JIT kernels take only dense results and so ran one image
// at a time (ConvIntoConcatKernel), each call a fork and join over a few
// microseconds of work. GOPT_CONV_1X1_F32=0 keeps oneDNN's.
class Conv1x1IntoConcatKernel : public LayoutKernel {
public:
  static std::unique_ptr<LayoutKernel> create(const KernelConfig &c,
                                              const ConvPostOps &post,
                                              const memory::desc &src,
                                              const memory::desc &concatDst,
                                              int64_t channelOffset) {
    // One image stays on oneDNN's kernel, which was faster there
    // (SqueezeNet's eight expand1x1 layers at batch 1: 0.26 against 0.31
    // ms; at batch 2, 0.64 against 0.59 on this kernel; docs/benchmarks.md).
    std::optional<Conv1x1F32Shape> s = conv1x1F32ShapeOf(c, post);
    if (!s || s->n < 2 || s->sum || s->cout % 16 != 0 ||
        channelOffset % 16 != 0)
      return nullptr;
    StatusOr<ConvGeometry> g = convGeometry(c);
    memory::dims whole = concatDst.dims();
    if (src != memory::desc(g->srcDims, DataType::f32, Tag::aBcd16b) ||
        whole.size() != 4 || whole[0] != s->n || whole[2] != s->outH() ||
        whole[3] != s->outW() || channelOffset + s->cout > whole[1] ||
        concatDst != memory::desc(whole, DataType::f32, Tag::aBcd16b))
      return nullptr;
    const int64_t pixels = s->outH() * s->outW();
    s->blocked = true;
    s->dstImageStride = whole[1] * pixels;
    auto k =
        std::unique_ptr<Conv1x1IntoConcatKernel>(new Conv1x1IntoConcatKernel());
    k->conv_ = createConv1x1F32(c, *s);
    if (!k->conv_)
      return nullptr;
    k->src_ = src;
    k->dst_ = concatDst;
    k->offset_ = channelOffset * pixels;
    return k;
  }
  memory::desc inputDesc(int i) const override {
    return i == 0 ? src_ : memory::desc();
  }
  // The whole concatenation, of which this kernel writes its slice.
  memory::desc outputDesc() const override { return dst_; }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    conv_->run(inputs[0].data<float>(), outputs[0].data<float>() + offset_);
    return Status::success();
  }
  const char *implementation() const override {
    return "gopt-1x1-f32-into-concat";
  }
  size_t workspaceBytes() const override { return 0; }

private:
  std::unique_ptr<Conv1x1F32> conv_;
  memory::desc src_, dst_;
  int64_t offset_ = 0; // floats from an image's start to its slice
};

// WinogradTiledConv's shape for conv2d `c` with `post` (f32, a constant
// filter, 3x3 stride 1 pad 1; bias, a residual sum, relu), its layouts,
// result slice and tile left to the caller; nullopt where not covered or
// switched off.
std::optional<WinogradTiledShape>
winogradTiledShapeOf(const KernelConfig &c, const ConvPostOps &post) {
  if (!winogradTiledEnabled())
    return std::nullopt;
  std::optional<ConvGeometry> g = winogradGeometry(c, post, /*stride=*/1);
  if (!g)
    return std::nullopt;
  WinogradTiledShape s;
  fillWinogradShape(s, *g, c, post);
  s.n = g->n;
  return s;
}

// The tiled kernel for shape `s` (layouts set) with its output tile
// chosen, null where its transformed filter is 16 MiB or more: each group
// of tiles reads the whole of it, and ResNet's 512-channel layers (36 MiB
// in F(4x4, 3x3), 16 in F(2x2, 3x3)) at 7x7 and batch 8 ran 1.15-1.3x
// slower than oneDNN's 4x3 kernel in F(4x4) and slower still in F(2x2), the
// 256-channel ones (9 MiB) 1.05x faster.
std::unique_ptr<WinogradTiledConv>
createWinogradTiledConv(const KernelConfig &c, WinogradTiledShape s) {
  s.tile = winogradTiledTile(s, omp_get_max_threads());
  const int64_t points = (s.tile + 2) * (s.tile + 2);
  if (points * s.cin * s.cout * int64_t(sizeof(float)) >= (int64_t(16) << 20))
    return nullptr;
  return WinogradTiledConv::create(
      s, static_cast<const float *>(c.constantInputs[1]));
}

// Whether `md` is `dims` in nChw16c (blocked) or NHWC; false for others.
bool nchw16cOrNhwc(const memory::desc &md, const memory::dims &dims,
                   bool &blocked) {
  blocked = md == memory::desc(dims, DataType::f32, Tag::aBcd16b);
  return blocked || md == memory::desc(dims, DataType::f32, Tag::nhwc);
}

// gopt's tiled Winograd (WinogradTiledConv) for a 3x3 stride-1 pad-1 f32
// convolution with a constant filter, in the layouts oneDNN chose for the
// layer (NHWC or nChw16c).
std::unique_ptr<LayoutKernel>
createWinogradTiledKernel(const KernelConfig &c, const ConvPostOps &post,
                          const memory::desc &src, const memory::desc &dst) {
  std::optional<WinogradTiledShape> s = winogradTiledShapeOf(c, post);
  if (!s)
    return nullptr;
  const memory::dims srcDims = {s->n, s->cin, s->h, s->w},
                     dstDims = {s->n, s->cout, s->h, s->w};
  if (!nchw16cOrNhwc(src, srcDims, s->srcBlocked) ||
      !nchw16cOrNhwc(dst, dstDims, s->dstBlocked))
    return nullptr;
  std::unique_ptr<WinogradTiledConv> conv = createWinogradTiledConv(c, *s);
  if (!conv)
    return nullptr;
  return OwnF32ConvKernel<WinogradTiledConv>::wrap(
      std::move(conv), src, dst, s->bias, s->sum, "winograd-tiled");
}

// The same writing its result into channels [channelOffset, +cout) of a
// channel concatenation's nChw16c destination (SqueezeNet's expand3x3
// layers), all images in one call, where oneDNN's kernels take only dense
// results and so ran one image at a time (ConvIntoConcatKernel, its 2x3
// Winograd kernel).
std::unique_ptr<LayoutKernel> createWinogradIntoConcatKernel(
    const KernelConfig &c, const ConvPostOps &post, const memory::desc &src,
    const memory::desc &concatDst, int64_t channelOffset) {
  std::optional<WinogradTiledShape> s = winogradTiledShapeOf(c, post);
  memory::dims whole = concatDst.dims();
  if (!s || s->sum || whole.size() != 4 || whole[0] != s->n ||
      whole[2] != s->h || whole[3] != s->w ||
      concatDst != memory::desc(whole, DataType::f32, Tag::aBcd16b) ||
      !nchw16cOrNhwc(src, {s->n, s->cin, s->h, s->w}, s->srcBlocked))
    return nullptr;
  s->dstBlocked = true;
  s->dstChannels = whole[1];
  s->dstOffset = channelOffset;
  std::unique_ptr<WinogradTiledConv> conv = createWinogradTiledConv(c, *s);
  if (!conv)
    return nullptr;
  return OwnF32ConvKernel<WinogradTiledConv>::wrap(
      std::move(conv), src, concatDst, s->bias, /*sum=*/false,
      "winograd-tiled-into-concat");
}

// gopt's Winograd for a 3x3 stride-2 pad-1 f32 convolution
// (WinogradStride2Conv in WinogradConv.cpp: 25 products per 2x2 output tile
// where the direct kernel takes 36) in the layouts oneDNN chose for the
// layer (nChw16c or NHWC), at any batch. Only where the 2x2 tiles cover the
// result with little waste (an even result size: ResNet-50's 56 -> 28 and
// 28 -> 14 layers; its 14 -> 7 one would take 400 products per image where
// the direct kernel takes 441) and at least 36 tiles share each pass of
// the transformed filter. GOPT_CONV_WINOGRAD_STRIDE2=0 keeps oneDNN's.
std::unique_ptr<LayoutKernel>
createWinogradStride2Kernel(const KernelConfig &c, const ConvPostOps &post,
                            const LayoutKernel &onednn) {
  if (!winogradStride2Enabled())
    return nullptr;
  std::optional<ConvGeometry> g = winogradGeometry(c, post, /*stride=*/2);
  if (!g)
    return nullptr;
  WinogradStride2Shape s;
  fillWinogradShape(s, *g, c, post);
  s.n = g->n;
  if (g->dstDims[2] != s.outH() || g->dstDims[3] != s.outW())
    return nullptr;
  const int64_t tiles = ((s.outH() + 1) / 2) * ((s.outW() + 1) / 2);
  // Direct products over Winograd's: at least 1.3.
  // Its transforms cost per channel what a GEMM column does: 128 -> 128
  // channels at 56x56 (batch 1) ran 1.15x slower than oneDNN's direct
  // kernel, 256 -> 256 at 28x28 1.04x faster at batch 1, 1.24x at 8.
  if (s.outH() * s.outW() * 9 < 1.3 * 25 * tiles || s.n * tiles < 36 ||
      s.cin < 256 || s.cout < 256)
    return nullptr;
  const memory::desc src = onednn.inputDesc(0), dst = onednn.outputDesc();
  auto is = [](const memory::desc &md, const Dims &dims, Tag tag) {
    return md == memory::desc(dims, DataType::f32, tag);
  };
  // In nChw16c (after oneDNN's Winograd, ResNet-50's 28 -> 14 layer past
  // batch 1) oneDNN's direct kernel ran as fast (29.5 against 29.2 and
  // 42.8 against 41.3 ms at batch 8, one thread, busy machine; in
  // ResNet-50 25.9 against 33.8) as it did not in NHWC (37.4 against
  // 43.3): only with GOPT_CONV_WINOGRAD_STRIDE2=all.
  const char *setting = std::getenv("GOPT_CONV_WINOGRAD_STRIDE2");
  const bool allLayouts = setting && std::strcmp(setting, "all") == 0;
  if (allLayouts && is(src, g->srcDims, Tag::aBcd16b) &&
      is(dst, g->dstDims, Tag::aBcd16b))
    s.blocked = true;
  else if (is(src, g->srcDims, Tag::nhwc) && is(dst, g->dstDims, Tag::nhwc))
    s.blocked = false;
  else
    return nullptr;
  std::unique_ptr<WinogradStride2Conv> conv = WinogradStride2Conv::create(
      s, static_cast<const float *>(c.constantInputs[1]));
  if (!conv)
    return nullptr;
  return OwnF32ConvKernel<WinogradStride2Conv>::wrap(
      std::move(conv), src, dst, s.bias, s.sum, "winograd-stride2");
}

// gopt's f32 stem convolution (StemConvF32.cpp): a convolution of at most
// 4 input channels (an image's RGB) read in the plain NCHW layout, so that
// the input needs no reorder, into the layout oneDNN chose for the result
// (NHWC or nChw16c). MobileNetV2's 3 -> 32 3x3 stride 2, one thread: see
// docs/architecture.md. GOPT_STEM_CONV_F32=0 keeps oneDNN's.
class StemConvF32Kernel : public LayoutKernel {
public:
  static std::unique_ptr<LayoutKernel> create(const KernelConfig &c,
                                              const ConvPostOps &post,
                                              const LayoutKernel &onednn) {
    if (!stemConvF32Enabled() || convType(c) != DataType::f32 ||
        c.inputTypes[1] != DType::kF32 || !c.constantInputs[1] || post.sum ||
        post.tail.size() > 1)
      return nullptr;
    const bool hasBias = c.inputShapes.size() == 3;
    if (hasBias && (!c.constantInputs[2] || c.inputTypes[2] != DType::kF32))
      return nullptr;
    std::optional<ActivationClamp> act = activationClamp(post);
    if (!act)
      return nullptr;
    StemConvF32Shape s;
    if (act->clamp) {
      s.lo = act->lo;
      s.hi = act->hi;
    }
    if (!post.tail.empty()) {
      if (!isHardSwish(post.tail[0]))
        return nullptr;
      s.hardswish = true;
    }
    StatusOr<ConvGeometry> g = convGeometry(c);
    // One image, 3x3 windows of stride 2 and at most 32 outputs: the stems
    // measured (MobileNets', RegNet's). ResNet's 7x7 -> 64 keeps oneDNN's
    // (and GOPT_CONV_STEM_BLOCKED's), the MNIST CNN's stride-1 batches too.
    if (!g.ok() || !g->nchw || g->n != 1 || g->weightDims.size() != 4 ||
        g->cin > 4 || g->cout > 32 || g->weightDims[2] != 3 ||
        g->weightDims[3] != 3 || g->strides != Dims{2, 2} ||
        g->dilations != Dims{0, 0})
      return nullptr;
    const memory::desc dst = onednn.outputDesc();
    if (dst == memory::desc(g->dstDims, DataType::f32, Tag::nhwc))
      s.blocked = false;
    else if (dst == memory::desc(g->dstDims, DataType::f32, Tag::aBcd16b))
      s.blocked = true;
    else
      return nullptr;
    s.n = g->n;
    s.cin = g->cin;
    s.h = g->h;
    s.w = g->w;
    s.cout = g->cout;
    s.kh = g->weightDims[2];
    s.kw = g->weightDims[3];
    s.strideH = g->strides[0];
    s.strideW = g->strides[1];
    s.padTop = g->padL[0];
    s.padLeft = g->padL[1];
    s.oh = g->dstDims[2];
    s.ow = g->dstDims[3];
    s.oihw = g->weightTag == Tag::oihw;
    s.bias = hasBias;
    auto k = std::unique_ptr<StemConvF32Kernel>(new StemConvF32Kernel());
    k->conv_ = StemConvF32::create(
        s, static_cast<const float *>(c.constantInputs[1]),
        hasBias ? static_cast<const float *>(c.constantInputs[2]) : nullptr);
    if (!k->conv_)
      return nullptr;
    k->src_ = memory::desc(g->srcDims, DataType::f32, Tag::nchw);
    k->dst_ = dst;
    return k;
  }
  memory::desc inputDesc(int i) const override {
    return i == 0 ? src_ : memory::desc();
  }
  memory::desc outputDesc() const override { return dst_; }
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    conv_->run(inputs[0].data<float>(), outputs[0].data<float>());
    return Status::success();
  }
  const char *implementation() const override { return "gopt-stem-f32"; }
  size_t workspaceBytes() const override { return 0; }

private:
  std::unique_ptr<StemConvF32> conv_;
  memory::desc src_, dst_;
};
} // namespace

namespace {
// gopt's batch-1 direct convolution (ConvBatch1.cpp) for a layer with at
// least 128 input channels and at most 64 output pixels (one panel: ResNet's
// 7x7 layers), where oneDNN's brgemm kernel splits too few pixels. ResNet-18
// in the network, one thread: 512 -> 512 3x3 2.03-2.12 -> 1.74-1.80 ms,
// 256 -> 512 3x3 stride 2 1.09-1.11 -> 0.89-0.92, its 1x1 downsample
// 0.15 -> 0.11; at 14x14 (196 pixels, four panels) 128 -> 256 stride 2 ran
// 4% slower, so larger results keep oneDNN's. 1x1 convolutions only with a
// stride (downsamples); NHWC in and out, as the direct kernel reads these
// layers at batch 1, and not where the schedule keeps a blocked source.
std::unique_ptr<LayoutKernel> createConvBatch1Kernel(const KernelConfig &c,
                                                     const ConvPostOps &post) {
  if (!convBatch1Enabled() || convType(c) != DataType::f32 ||
      !c.constantInputs[1] || !post.tail.empty() ||
      (post.activation != "none" && post.activation != "relu"))
    return nullptr;
  StatusOr<ConvGeometry> g = convGeometry(c);
  if (!g.ok() || !g->nchw || g->n != 1 || g->weightDims.size() != 4 ||
      g->strides[0] != g->strides[1] || g->dilations != Dims{0, 0} ||
      g->cin < 128 || g->dstDims[2] * g->dstDims[3] > 64 ||
      (g->weightDims[2] * g->weightDims[3] == 1 && g->strides[0] == 1))
    return nullptr;
  bool hasBias = c.inputShapes.size() == 3;
  if (hasBias && c.inputTypes[2] != DType::kF32)
    return nullptr;
  ConvBatch1Shape s;
  s.cin = g->cin;
  s.cout = g->cout;
  s.h = g->h;
  s.w = g->w;
  s.kh = g->weightDims[2];
  s.kw = g->weightDims[3];
  s.stride = g->strides[0];
  s.padT = g->padL[0];
  s.padL = g->padL[1];
  s.padB = g->padR[0];
  s.padR = g->padR[1];
  s.oihw = g->weightTag == Tag::oihw;
  s.bias = hasBias;
  s.sum = post.sum;
  s.relu = post.activation == "relu";
  if (s.padB < 0 || s.padR < 0 || s.outH() != g->dstDims[2] ||
      s.outW() != g->dstDims[3])
    return nullptr;
  std::unique_ptr<ConvBatch1> conv =
      ConvBatch1::create(s, static_cast<const float *>(c.constantInputs[1]));
  if (!conv)
    return nullptr;
  return OwnF32ConvKernel<ConvBatch1>::wrap(std::move(conv), *g, hasBias,
                                            post.sum, "conv-batch1");
}
} // namespace

StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutConv(const KernelConfig &c, const ConvPostOps &post,
                 const memory::desc *preferredDst,
                 const memory::desc *blockedSrc) {
  if (convType(c) == DataType::undef || c.inputShapes[0].size() != 4 ||
      c.attrs().getString("data_format") != "NCHW")
    return std::unique_ptr<LayoutKernel>();
  if (std::unique_ptr<LayoutKernel> wide = createWinogradWideKernel(c, post))
    return wide;
  if (!blockedSrc && !preferredDst)
    if (std::unique_ptr<LayoutKernel> direct = createConvBatch1Kernel(c, post))
      return direct;
  auto kernel = std::unique_ptr<ConvKernel>(new ConvKernel());
  bool supported = false;
  GOPT_RETURN_IF_ERROR(kernel->init(c, /*anyLayout=*/true, post, supported,
                                    /*fixedSrc=*/nullptr, preferredDst,
                                    blockedSrc));
  if (!supported)
    return std::unique_ptr<LayoutKernel>();
  // Where oneDNN took one of its Winograd kernels, gopt's tiled kernel
  // runs the layer in its layouts: ResNet-18's 64- and 128-channel layers
  // 1.1-1.3x faster than oneDNN's 2x3 and 4x3 kernels at batch 1, 1.3-1.5x
  // faster than its 4x3 at batch 8 (docs/architecture.md).
  if (kernel->isWinograd())
    if (auto tiled = createWinogradTiledKernel(c, post, kernel->inputDesc(0),
                                               kernel->outputDesc()))
      return tiled;
  // Where oneDNN chose NHWC for an f32 depthwise convolution, gopt's
  // kernel runs it in those layouts.
  if (!kernel->isWinograd())
    if (auto dw = DepthwiseF32Kernel::create(c, post, *kernel))
      return std::unique_ptr<LayoutKernel>(std::move(dw));
  if (!kernel->isWinograd())
    if (auto pw = Conv1x1F32Kernel::create(c, post, *kernel))
      return pw;
  if (!kernel->isWinograd())
    if (auto w2 = createWinogradStride2Kernel(c, post, *kernel))
      return w2;
  if (!kernel->isWinograd())
    if (auto stem = StemConvF32Kernel::create(c, post, *kernel))
      return stem;
  return std::unique_ptr<LayoutKernel>(std::move(kernel));
}

std::unique_ptr<LayoutKernel>
createConv1x1GlobalPool(const KernelConfig &config, const ConvPostOps &post,
                        const memory::desc &source, const Shape &pooled) {
  return Conv1x1PoolF32Kernel::create(config, post, source, pooled);
}

StatusOr<std::unique_ptr<LayoutKernel>>
createConvIntoConcat(const KernelConfig &config, const ConvPostOps &post,
                     const memory::desc &src, const memory::desc &concatDst,
                     int64_t channelOffset, bool anyWinogradTile) {
  if (auto own = Conv1x1IntoConcatKernel::create(config, post, src, concatDst,
                                                 channelOffset))
    return own;
  if (anyWinogradTile)
    if (auto own = createWinogradIntoConcatKernel(config, post, src, concatDst,
                                                  channelOffset))
      return own;
  return ConvIntoConcatKernel::create(config, post, src, concatDst,
                                      channelOffset, anyWinogradTile);
}

namespace {
// Each dimension's stride in elements where `md` is a blocked layout whose
// blocked dimensions are as good as unblocked (a block of 16 spanning all
// 16 channels, or 32 channels at one pixel: the second block right after
// the first), 0 for dimensions of one element; nullopt for a layout that
// really blocks a dimension, pads it or carries extra data.
std::optional<std::vector<dnnl_dim_t>>
effectiveStrides(const memory::desc &md) {
  const dnnl_memory_desc_t &d = md.data;
  if (d.format_kind != dnnl_blocked || d.extra.flags != 0)
    return std::nullopt;
  const dnnl_blocking_desc_t &b = d.format_desc.blocking;
  std::vector<dnnl_dim_t> strides(b.strides, b.strides + d.ndims);
  std::vector<bool> blocked(d.ndims, false);
  dnnl_dim_t inner = 1;
  for (int i = b.inner_nblks - 1; i >= 0; --i) {
    const int dim = static_cast<int>(b.inner_idxs[i]);
    if (blocked[dim])
      return std::nullopt;
    blocked[dim] = true;
    // The blocks of `dim` follow one another: the outer stride steps over
    // one whole block.
    if (b.inner_blks[i] != d.dims[dim] &&
        strides[dim] != inner * b.inner_blks[i])
      return std::nullopt;
    strides[dim] = inner;
    inner *= b.inner_blks[i];
  }
  for (int i = 0; i < d.ndims; ++i) {
    if (d.padded_dims[i] != d.dims[i])
      return std::nullopt;
    if (d.dims[i] == 1)
      strides[i] = 0;
  }
  return strides;
}
} // namespace

bool sameBytes(const memory::desc &a, const memory::desc &b) {
  if (a == b)
    return true;
  if (a.data.ndims != b.data.ndims || a.data.data_type != b.data.data_type ||
      a.data.offset0 != b.data.offset0 || a.dims() != b.dims())
    return false;
  std::optional<std::vector<dnnl_dim_t>> sa = effectiveStrides(a),
                                         sb = effectiveStrides(b);
  return sa && sb && *sa == *sb;
}

std::optional<memory::desc> winogradSourceDesc(const KernelConfig &c) {
  if (convType(c) != DataType::f32 || c.inputShapes[0].size() != 4 ||
      c.attrs().getString("data_format") != "NCHW")
    return std::nullopt;
  StatusOr<ConvGeometry> g = convGeometry(c);
  if (!g.ok())
    return std::nullopt;
  DataType type = DataType::f32;
  memory::desc src(g->srcDims, type, Tag::any), dst(g->dstDims, type, Tag::any);
  memory::desc weights(g->weightDims, type, Tag::any);
  memory::desc bias({g->cout}, type, Tag::x);
  std::optional<dnnl::convolution_forward::primitive_desc> pd = winogradConv(
      *g, type, c.constantInputs[1] != nullptr, src, weights,
      c.inputShapes.size() == 3 ? &bias : nullptr, dst, scratchpadAttr());
  if (!pd)
    return std::nullopt;
  return pd->src_desc();
}

std::optional<memory::desc> depthwiseF32SourceDesc(const KernelConfig &c) {
  if (convType(c) != DataType::f32 || c.inputShapes[0].size() != 4 ||
      c.attrs().getString("data_format") != "NCHW" ||
      !cpu::depthwiseF32Enabled() || !envSwitchOn("GOPT_DEPTHWISE_F32_SOURCE"))
    return std::nullopt;
  // Only a depthwise convolution's oneDNN kernel is worth creating here
  // (each creation compiles one): 3x3 or 5x5, one channel a group.
  StatusOr<ConvGeometry> g = convGeometry(c);
  if (!g.ok() || g->weightDims.size() != 5 || g->weightDims[0] != g->cin ||
      g->cout != g->cin || g->weightDims[1] != 1 || g->weightDims[2] != 1 ||
      g->weightDims[3] != g->weightDims[4] ||
      (g->weightDims[3] != 3 && g->weightDims[3] != 5))
    return std::nullopt;
  auto onednn = std::unique_ptr<ConvKernel>(new ConvKernel());
  bool supported = false;
  const cpu::ConvPostOps none;
  if (!onednn->init(c, /*anyLayout=*/true, none, supported).ok() ||
      !supported || onednn->isWinograd())
    return std::nullopt;
  if (!DepthwiseF32Kernel::create(c, none, *onednn))
    return std::nullopt;
  return onednn->inputDesc(0);
}

namespace {
// One head at a time per thread: the scaled queries and the [L, L2]
// scores stay in the thread's scratch (64 KiB for 128 tokens), and the
// GEMMs read the heads in place through their leading dimensions, so none
// of the four transposes, the scaling or the score tensor is a pass over
// memory of its own.
class AttentionKernel : public Kernel {
public:
  explicit AttentionKernel(const AttentionShape &shape)
      : a_(shape), scratch_(std::max(1, omp_get_max_threads())) {}
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const float *q = in[0].data<float>(), *k = in[1].data<float>(),
                *v = in[2].data<float>();
    float *o = out[0].data<float>();
    const AttentionShape a = a_;
    const int64_t n = a.heads, ldv = n * a.valueDepth;
    const int64_t ldo = a.sequenceMajorOut ? ldv : a.valueDepth;
    bool failed = false;
    const int threads = static_cast<int>(std::min<int64_t>(n, scratch_.size()));
#pragma omp parallel num_threads(threads)
    {
      std::vector<float> &scratch = scratch_[omp_get_thread_num()];
      scratch.resize(a.queries * (a.keys + (a.hasScale ? a.depth : 0)));
      float *scores = scratch.data(), *scaled = scores + a.queries * a.keys;
#pragma omp for schedule(static)
      for (int64_t h = 0; h < n; ++h) {
        const float *qh = q + a.q.at(h);
        int64_t lda = a.q.rowStride;
        if (a.hasScale) {
          for (int64_t l = 0; l < a.queries; ++l)
            for (int64_t j = 0; j < a.depth; ++j)
              scaled[l * a.depth + j] = a.divide ? qh[l * lda + j] / a.scale
                                                 : qh[l * lda + j] * a.scale;
          qh = scaled;
          lda = a.depth;
        }
        bool ok = dnnl::sgemm('N', 'T', a.queries, a.keys, a.depth, 1.0f, qh,
                              lda, k + a.k.at(h), a.k.rowStride, 0.0f, scores,
                              a.keys) == dnnl::status::success;
        for (int64_t l = 0; l < a.queries; ++l)
          softmaxRow(scores + l * a.keys, scores + l * a.keys, a.keys,
                     /*log=*/false);
        float *oh = o + (a.sequenceMajorOut ? h * a.valueDepth
                                            : h * a.queries * a.valueDepth);
        ok = ok && dnnl::sgemm('N', 'N', a.queries, a.valueDepth, a.keys, 1.0f,
                               scores, a.keys, v + a.v.at(h), a.v.rowStride,
                               0.0f, oh, ldo) == dnnl::status::success;
        if (!ok) {
#pragma omp atomic write
          failed = true;
        }
      }
    }
    if (failed)
      return internalError("oneDNN sgemm failed in attention");
    return Status::success();
  }
  const char *implementation() const override { return "onednn"; }

private:
  AttentionShape a_;
  std::vector<std::vector<float>> scratch_; // per thread
};
} // namespace

std::unique_ptr<Kernel> createAttention(const AttentionShape &shape) {
  return std::make_unique<AttentionKernel>(shape);
}

StatusOr<std::unique_ptr<LayoutKernel>>
createFusedMatmul(const KernelConfig &c, const MatmulPostOps &post) {
  return MatmulKernel::createFused(c, post);
}

StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutPool(const KernelConfig &c, const memory::desc &src) {
  // int8 data (max pooling of a quantized tensor) has no plain dtype here:
  // the schedule passes its layout.
  auto srcType = static_cast<DataType>(src.data.data_type);
  bool int8 = srcType == DataType::s8 || srcType == DataType::u8;
  if ((!int8 && sharedType(c, {0}) == DataType::undef) ||
      c.inputShapes[0].size() != 4 ||
      c.attrs().getString("data_format") != "NCHW")
    return std::unique_ptr<LayoutKernel>();
  if (std::unique_ptr<LayoutKernel> blocked = createBlockedMaxPool(c, src))
    return blocked;
  auto kernel = std::unique_ptr<PoolKernel>(new PoolKernel());
  bool supported = false;
  GOPT_RETURN_IF_ERROR(kernel->init(c, supported, &src));
  if (!supported)
    return std::unique_ptr<LayoutKernel>();
  return std::unique_ptr<LayoutKernel>(std::move(kernel));
}

StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutGlobalAvgPool(const KernelConfig &c, const memory::desc &src) {
  if (sharedType(c, {0}) == DataType::undef || c.inputShapes[0].size() != 4 ||
      c.attrs().getString("data_format") != "NCHW")
    return std::unique_ptr<LayoutKernel>();
  auto kernel = std::make_unique<GlobalAvgPoolKernel>();
  bool supported = false;
  GOPT_RETURN_IF_ERROR(kernel->init(c, src, supported));
  if (!supported)
    return std::unique_ptr<LayoutKernel>();
  return std::unique_ptr<LayoutKernel>(std::move(kernel));
}

StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutConcat(const std::vector<memory::desc> &srcs,
                   const memory::desc &dst) {
  auto kernel = std::make_unique<ConcatKernel>();
  bool supported = false;
  GOPT_RETURN_IF_ERROR(kernel->init(srcs, dst, supported));
  if (!supported)
    return std::unique_ptr<LayoutKernel>();
  return std::unique_ptr<LayoutKernel>(std::move(kernel));
}

StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutBatchNorm(const KernelConfig &c, const memory::desc &src,
                      bool relu) {
  if (BatchNormKernel::dataType(c) == DataType::undef ||
      c.inputShapes[0].size() != 4 || c.attrs().getBool("training") ||
      c.attrs().getString("data_format") != "NCHW")
    return std::unique_ptr<LayoutKernel>();
  auto kernel = std::unique_ptr<BatchNormKernel>(new BatchNormKernel());
  bool supported = false;
  GOPT_RETURN_IF_ERROR(kernel->init(c, &src, supported, relu));
  if (!supported)
    return std::unique_ptr<LayoutKernel>();
  return std::unique_ptr<LayoutKernel>(std::move(kernel));
}

StatusOr<std::unique_ptr<Kernel>> createChannelMul(const memory::desc &x,
                                                   const memory::desc &scale) {
  auto kernel = std::make_unique<ChannelMulKernel>();
  bool supported = false;
  GOPT_RETURN_IF_ERROR(kernel->init(x, scale, supported));
  if (!supported)
    return std::unique_ptr<Kernel>();
  return std::unique_ptr<Kernel>(std::move(kernel));
}

StatusOr<std::unique_ptr<Kernel>>
createReorder(const memory::desc &from, const memory::desc &to, float scale) {
  if (std::unique_ptr<Kernel> pixels = PixelsKernel::create(from, to, scale))
    return pixels;
  auto kernel = std::make_unique<ReorderKernel>();
  GOPT_RETURN_IF_ERROR(kernel->init(from, to, scale));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

} // namespace cpu

// TrainingKernels.cpp: oneDNN and fast kernels of the training ops.
void registerTrainingFastKernels(KernelRegistry &registry);
// ImageKernels.cpp: conv2d_transpose and resize.
void registerImageFastKernels(KernelRegistry &registry);
// RnnKernels.cpp: lstm, gru and rnn.
void registerRnnFastKernels(KernelRegistry &registry);
// VolumeKernels.cpp: conv3d, conv3d_transpose, max_pool3d and avg_pool3d.
void registerVolumeFastKernels(KernelRegistry &registry);

namespace {

// A convolution whose sum post-op adds the residual: the residual is
// copied into the result first (one pass; oneDNN 2.6's brgemm kernels take
// a sum post-op but not a binary add of a whole tensor, which would run on
// its older AMX kernel).
class ResidualSumConvKernel : public Kernel {
public:
  ResidualSumConvKernel(std::unique_ptr<Kernel> conv, int residual)
      : conv_(std::move(conv)), residual_(residual) {}
  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    const char *src = static_cast<const char *>(inputs[residual_].data());
    char *dst = static_cast<char *>(outputs[0].data());
    const int64_t bytes = static_cast<int64_t>(outputs[0].byteSize());
    if (src != dst)
      cpu::parallelRange(bytes / 64 + 1, [&](int64_t b, int64_t e) {
        int64_t begin = b * 64, end = std::min(e * 64, bytes);
        if (begin < end)
          std::memcpy(dst + begin, src + begin, end - begin);
      });
    return conv_->run(inputs, outputs);
  }
  const char *implementation() const override {
    return conv_->implementation();
  }
  size_t workspaceBytes() const override { return conv_->workspaceBytes(); }

private:
  std::unique_ptr<Kernel> conv_;
  int residual_;
};

std::unique_ptr<Kernel>
ConvKernel::createResidualAdd(const KernelConfig &c,
                              const std::string &activation) {
  if (convType(c) == DataType::undef || c.inputShapes.size() < 2)
    return nullptr;
  cpu::ConvPostOps post;
  post.activation = activation;
  bool supported = false;
  auto alone = std::unique_ptr<ConvKernel>(new ConvKernel());
  if (!alone->init(c, /*anyLayout=*/false, post, supported).ok() || !supported)
    return nullptr;
  post.sum = true;
  supported = false;
  auto fused = std::unique_ptr<ConvKernel>(new ConvKernel());
  if (!fused->init(c, /*anyLayout=*/false, post, supported).ok() ||
      !supported || fused->implInfo_ != alone->implInfo_ || fused->winograd_)
    return nullptr;
  return std::make_unique<ResidualSumConvKernel>(
      std::move(fused), static_cast<int>(c.inputShapes.size()));
}

} // namespace

std::unique_ptr<Kernel>
cpu::createConvResidualAdd(const KernelConfig &config,
                           const std::string &activation) {
  return ConvKernel::createResidualAdd(config, activation);
}

void registerOneDnnKernels(KernelRegistry &registry) {
  registry.registerKernel("conv2d", "cpu", ConvKernel::create);
  registry.registerKernel("matmul", "cpu", MatmulKernel::create);
  registry.registerKernel("max_pool", "cpu", PoolKernel::create);
  registry.registerKernel("avg_pool", "cpu", PoolKernel::create);
  registry.registerKernel("batch_norm", "cpu", BatchNormKernel::create);
  registerTrainingFastKernels(registry);
  registerImageFastKernels(registry);
  registerRnnFastKernels(registry);
  registerVolumeFastKernels(registry);
}

} // namespace gopt::runtime
