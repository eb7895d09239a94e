//===- TrainingKernels.cpp - Fast CPU kernels of the training ops ---------===//
//
// Backend "cpu" kernels for the ops of docs/op-semantics.md's "Training ops"
// (plain row-major tensors):
// - conv2d_backprop_input / conv2d_backprop_filter (f32; bf16 where oneDNN
//   has bf16 kernels, as for the forward conv2d): oneDNN's
//   convolution_backward_data / _weights, created with a forward_training
//   hint; oneDNN picks the layouts it computes in and the kernel reorders
//   from and to the plan's plain layouts around the primitive;
// - relu_grad, max_pool_grad, avg_pool_grad (f32, bf16), sgd_update,
//   adam_update, batch_norm_grad (f32): OpenMP loops; bf16 ones compute in
//   f32 and round each result once, as the reference kernels do;
// - reduce_sum / reduce_mean (f32, bf16) over leading and/or trailing dims
//   around one kept block (bias gradients: axes [0,2,3] of NCHW, [0] of
//   [N,C]).
// - relu_grad + max_pool_grad + reduce_sum as one step (the CPU schedule's
//   fusion, createMaxPoolReluBiasGrad): tiling NHWC windows, channels a
//   multiple of 16, AVX-512; with the conv2d_backprop_input and _filter
//   that alone read its dx, a few images at a time
//   (createChunkedPoolConvGrad; in bf16 on AMX tiles, SmallConvTraining.cpp),
//   with a one-channel first layer's relu + filter + bias gradient behind
//   them where it alone reads their source gradient.
// Mixed-precision training (gopt-run --train --precision bf16) gives the
// gradients of its bf16 region all of these in bf16.
// The reference kernels (RefTraining.cpp) are the oracle; a factory returns
// a null kernel for what it does not cover and the session falls back to
// them.
//
//===----------------------------------------------------------------------===//
#include "../collectives/CommunicationQueue.h"
#include "AmxConvFilterGrad.h"
#include "Avx512Lanes.h"
#include "ConvGradBf16.h"
#include "ElementLoops.h"
#include "EnvSwitch.h"
#include "FastKernels.h"
#include "OneDnn.h"
#include "ParallelRange.h"
#include "PoolGradBf16.h"
#include "SingleChannelConv.h"
#include "SmallConvTraining.h"
#include "gopt/runtime/CpuInfo.h"
#include "gopt/runtime/Kernel.h"

#include <dnnl.hpp>
#include <omp.h>
#ifdef __SSE2__
#include <immintrin.h>
#endif

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace gopt::runtime {
namespace {

using cpu::cpuEngine;
using dnnl::memory;
using Tag = memory::format_tag;
using Dims = memory::dims;

using cpu::byElementType;
using cpu::fromF32;
using cpu::kParallelThreshold;
using cpu::parallelRange;
using cpu::toF32;

StatusOr<std::unique_ptr<Kernel>> none() { return std::unique_ptr<Kernel>(); }

// The type every operand and result of `c` shares if the loops handle it
// (f32, bf16), else kInvalid.
DType loopType(const KernelConfig &c) {
  for (DType t : {DType::kF32, DType::kBF16})
    if (c.allOfType(t))
      return t;
  return DType::kInvalid;
}

// Per-channel sums over rows split among threads: each thread accumulates
// into its own slice of `partials` ([threads][channels]), merged in thread
// order afterwards so that results do not depend on which thread finishes
// first. `rowFn(row, local)` adds one row's contribution to `local`.
template <typename RowFn>
void channelSums(int64_t rows, int64_t channels, bool parallel,
                 std::vector<double> &result, RowFn rowFn) {
  int threads = parallel ? omp_get_max_threads() : 1;
  std::vector<double> partials(static_cast<size_t>(threads) * channels, 0.0);
#pragma omp parallel num_threads(threads) if (parallel)
  {
    double *local = partials.data() + omp_get_thread_num() * channels;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      rowFn(r, local);
  }
  result.assign(channels, 0.0);
  for (int t = 0; t < threads; ++t)
    for (int64_t c = 0; c < channels; ++c)
      result[c] += partials[t * channels + c];
}

//===----------------------------------------------------------------------===//
// conv2d_backprop_input / conv2d_backprop_filter (oneDNN)
//===----------------------------------------------------------------------===//

// One oneDNN primitive whose arguments are plain tensors of the op: an
// argument whose layout the primitive does not take directly goes through
// a buffer in the primitive's layout, reordered into before (inputs) or out
// of after (outputs) the primitive.
class ConvBackwardKernel : public Kernel {
public:
  static StatusOr<std::unique_ptr<Kernel>> create(const KernelConfig &c);
  // oneDNN's primitive for operands of `type` (f32, bf16), whatever other
  // kernel create() would pick; a conv2d_backprop_filter result may be f32
  // with bf16 operands. Null where oneDNN has none.
  static std::unique_ptr<Kernel> createOneDnn(const KernelConfig &c,
                                              DType type);
  static std::unique_ptr<ConvBackwardKernel>
  createOneDnnConv(const KernelConfig &c, DType type);

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    try {
      for (Arg &a : args_) {
        void *data = a.isOutput ? outputs[a.index].data()
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
  const char *implementation() const override {
    return std::strstr(implInfo_.c_str(), "wino") ? "onednn-winograd"
                                                  : "onednn";
  }
  size_t workspaceBytes() const override { return workspaceBytes_; }

  // For the chunked pool + conv gradient step (below), which runs this
  // kernel on the chunks of one batch: input `held`'s reorder into the
  // primitive's layout runs only where `reorderHeld` (the filter, the same
  // in every chunk: reordered by the step's first chunk, -1: none held);
  // with `internal` non-null, output 0 is left in the primitive's layout
  // and *internal points at it (null where that is the plan's layout and
  // output 0 was written).
  Status runChunk(const std::vector<Tensor> &inputs,
                  std::vector<Tensor> &outputs, int held, bool reorderHeld,
                  const void **internal) {
    if (internal)
      *internal = nullptr;
    try {
      for (Arg &a : args_) {
        void *data = a.isOutput ? outputs[a.index].data()
                                : const_cast<void *>(inputs[a.index].data());
        a.user.set_data_handle(data);
        if (!a.isOutput && a.reorder && (a.index != held || reorderHeld))
          a.reorder.execute(stream_, a.user, a.internal);
      }
      primitive_.execute(stream_, execArgs_);
      for (Arg &a : args_) {
        if (!a.isOutput || !a.reorder)
          continue;
        if (internal && a.index == 0)
          *internal = a.internal.get_data_handle();
        else
          a.reorder.execute(stream_, a.internal, a.user);
      }
      stream_.wait();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN: ", e.what());
    }
    return Status::success();
  }
  // Output 0's layout in the primitive where a reorder into the plan's
  // follows each run, else nullopt.
  std::optional<memory::desc> internalOutputDesc() const {
    for (const Arg &a : args_)
      if (a.isOutput && a.index == 0 && a.reorder)
        return a.internal.get_desc();
    return std::nullopt;
  }
  // `from`, in internalOutputDesc()'s layout, into `to` in the plan's.
  Status reorderOutput(const void *from, void *to) {
    try {
      for (Arg &a : args_)
        if (a.isOutput && a.index == 0 && a.reorder) {
          a.user.set_data_handle(to);
          if (!sumMemory_)
            sumMemory_ =
                memory(a.internal.get_desc(), cpuEngine(), DNNL_MEMORY_NONE);
          sumMemory_.set_data_handle(const_cast<void *>(from));
          a.reorder.execute(stream_, sumMemory_, a.user);
          stream_.wait();
        }
    } catch (const dnnl::error &e) {
      return internalError("oneDNN: ", e.what());
    }
    return Status::success();
  }

private:
  struct Arg {
    int index; // kernel input or output
    bool isOutput;
    memory user; // the plan's plain tensor (data handle set per run)
    memory internal;
    dnnl::reorder reorder; // empty when the primitive reads `user` directly
  };

  ConvBackwardKernel() : stream_(cpuEngine()) {}

  void bind(int index, bool isOutput, int dnnlArg, const memory::desc &userMd,
            const memory::desc &primitiveMd) {
    Arg a{index, isOutput, memory(userMd, cpuEngine(), DNNL_MEMORY_NONE),
          memory(), dnnl::reorder()};
    if (userMd == primitiveMd) {
      execArgs_[dnnlArg] = a.user;
    } else {
      a.internal = memory(primitiveMd, cpuEngine());
      workspaceBytes_ += primitiveMd.get_size();
      a.reorder = isOutput ? dnnl::reorder(a.internal, a.user)
                           : dnnl::reorder(a.user, a.internal);
      execArgs_[dnnlArg] = a.internal;
    }
    args_.push_back(a);
  }

  void bindScratchpad(const memory::desc &md) {
    execArgs_[DNNL_ARG_SCRATCHPAD] = memory(md, cpuEngine());
    workspaceBytes_ += md.get_size();
  }

  Status init(const KernelConfig &c, memory::data_type type);
  // The primitive with activations in `actTag` (the plan's layout or any).
  Status initPrimitive(
      bool backpropInput, Tag actTag, memory::data_type type, int64_t n,
      int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t oh, int64_t ow,
      const Dims &weightDims, const memory::desc &xUser,
      const memory::desc &yUser, const memory::desc &fUser,
      const std::vector<int64_t> &strides,
      const std::vector<int64_t> &dilations, const WindowDim &wh,
      const WindowDim &ww,
      dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct);

  dnnl::stream stream_;
  std::string implInfo_;
  dnnl::primitive primitive_;
  std::unordered_map<int, memory> execArgs_;
  std::vector<Arg> args_;
  size_t workspaceBytes_ = 0;
  memory sumMemory_; // reorderOutput's source
};

// conv2d_backprop_filter of an NHWC bf16 convolution with a small output
// image (ResNet's last stages: 7x7 and 14x14): the filter gradient as one
// matrix product, dW[taps * Cin, Cout] = col^T * dy[N * OH * OW, Cout], col
// holding each output pixel's window (im2col, taps then channels), on
// oneDNN's matmul (for OIHW filters its transpose, dy^T * col). oneDNN
// 2.6's AMX backward-weights kernel ran ResNet-18's layer-4 filter
// gradients at 125-290 GFLOP/s on one thread, a fraction of what its matmul
// reaches on the same CPU (500+); both sum in f32 and round once.
class Im2colFilterGradKernel : public Kernel {
public:
  static std::unique_ptr<Kernel> create(const KernelConfig &c);

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    const uint16_t *x = inputs[0].data<uint16_t>();
    const int64_t taps = kh_ * kw_;
    const int64_t k = taps * cin_, pixels = n_ * oh_ * ow_;
    if (!lanes_.empty())
      return runChunked(x, inputs[1].data<uint16_t>(),
                        outputs[0].data<uint16_t>());
    im2col(x, 0, pixels, col_.data());
    // The product is rounded to bf16 by the matmul (its sums are f32) and
    // written where the result's layout has it: HWIO's [taps * Cin, Cout]
    // and a 1x1 OIHW filter's [Cout, Cin] into the result itself, other
    // OIHW filters' [Cout, taps, Cin] into a buffer permuted per output
    // channel below.
    uint16_t *out = outputs[0].data<uint16_t>();
    const bool permute = oihw_ && taps > 1;
    try {
      colMem_.set_data_handle(col_.data());
      dyMem_.set_data_handle(const_cast<void *>(inputs[1].data()));
      productMem_.set_data_handle(permute ? product_.data() : out);
      // OIHW: dW^T = dy^T * col; HWIO: dW = col^T * dy.
      matmul_.execute(stream_, {{DNNL_ARG_SRC, oihw_ ? dyMem_ : colMem_},
                                {DNNL_ARG_WEIGHTS, oihw_ ? colMem_ : dyMem_},
                                {DNNL_ARG_DST, productMem_}});
      stream_.wait();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN: ", e.what());
    }
    if (permute) {
      const uint16_t *product = product_.data();
#pragma omp parallel for schedule(static) if (k * cout_ >= kParallelThreshold)
      for (int64_t co = 0; co < cout_; ++co) {
        const uint16_t *src = product + co * k;
        uint16_t *dst = out + co * k;
        for (int64_t t = 0; t < taps; ++t)
          for (int64_t ci = 0; ci < cin_; ++ci)
            dst[ci * taps + t] = src[t * cin_ + ci];
      }
    }
    return Status::success();
  }
  const char *implementation() const override { return "onednn-im2col"; }
  size_t workspaceBytes() const override {
    size_t bytes = (col_.size() + product_.size()) * 2;
    for (const Lane &lane : lanes_)
      bytes += lane.colData.size() * 2 + lane.sum.size() * 4;
    return bytes;
  }

private:
  Im2colFilterGradKernel() : stream_(cpuEngine()) {}

  // The windows of output pixels [begin, end) (of N * OH * OW) into col_'s
  // rows, taps then channels; a window row that lies inside the image is
  // one copy (kw * Cin values: 21 for a 7x7 filter over 3 channels).
  void im2col(const uint16_t *x, int64_t begin, int64_t end, uint16_t *col) {
    const int64_t k = kh_ * kw_ * cin_, rowBytes = cin_ * 2;
    const bool dense = dilations_[1] == 1;
#pragma omp parallel for schedule(static)
    for (int64_t p = begin; p < end; ++p) {
      int64_t ow = p % ow_, oh = (p / ow_) % oh_, n = p / (ow_ * oh_);
      uint16_t *row = col + (p - begin) * k;
      int64_t iw0 = ow * strides_[1] - padLeft_;
      bool inside = dense && iw0 >= 0 && iw0 + kw_ <= w_;
      for (int64_t ky = 0; ky < kh_; ++ky) {
        int64_t ih = oh * strides_[0] + ky * dilations_[0] - padTop_;
        uint16_t *dst = row + ky * kw_ * cin_;
        if (ih < 0 || ih >= h_) {
          std::memset(dst, 0, kw_ * rowBytes);
          continue;
        }
        const uint16_t *src = x + (n * h_ + ih) * w_ * cin_;
        if (inside) {
          std::memcpy(dst, src + iw0 * cin_, kw_ * rowBytes);
          continue;
        }
        for (int64_t kx = 0; kx < kw_; ++kx) {
          int64_t iw = iw0 + kx * dilations_[1];
          if (iw < 0 || iw >= w_)
            std::memset(dst + kx * cin_, 0, rowBytes);
          else
            std::memcpy(dst + kx * cin_, src + iw * cin_, rowBytes);
        }
      }
    }
  }

  // Few input channels and a large output (ResNet's 7x7 stem over RGB):
  // chunks of whole output rows, each im2col'd into a buffer that stays in
  // cache and added into an f32 dW^T = sum of dy^T * col (the first chunk's
  // product written, the others' summed by the matmul's sum post-op). With
  // several threads each takes a contiguous run of chunks with its own
  // buffers and single-threaded matmuls (one chunk's product, 64 x 147
  // over 3,136 pixels for the stem, is too small to share), and the
  // threads' sums are added in order, then rounded once.
  struct Lane {
    dnnl::stream stream;
    dnnl::matmul first, accumulate;
    memory col, dy, product;
    std::vector<uint16_t> colData;
    std::vector<float> sum;
  };

  Status runChunked(const uint16_t *x, const uint16_t *dy, uint16_t *out) {
    const int64_t taps = kh_ * kw_, k = taps * cin_,
                  chunks = n_ * oh_ * ow_ / chunkPixels_;
    const int lanes = static_cast<int>(lanes_.size());
    std::vector<Status> status(lanes, Status::success());
#pragma omp parallel for num_threads(lanes) schedule(static, 1) if (lanes > 1)
    for (int l = 0; l < lanes; ++l) {
      Lane &lane = lanes_[l];
      try {
        lane.col.set_data_handle(lane.colData.data());
        lane.product.set_data_handle(lane.sum.data());
        const int64_t first = l * chunks / lanes,
                      end = (l + 1) * chunks / lanes;
        for (int64_t c = first; c < end; ++c) {
          const int64_t p = c * chunkPixels_;
          im2col(x, p, p + chunkPixels_, lane.colData.data());
          lane.dy.set_data_handle(const_cast<uint16_t *>(dy) + p * cout_);
          (c == first ? lane.first : lane.accumulate)
              .execute(lane.stream, {{DNNL_ARG_SRC, lane.dy},
                                     {DNNL_ARG_WEIGHTS, lane.col},
                                     {DNNL_ARG_DST, lane.product}});
          lane.stream.wait();
        }
      } catch (const dnnl::error &e) {
        status[l] = internalError("oneDNN: ", e.what());
      }
    }
    for (Status &st : status)
      GOPT_RETURN_IF_ERROR(st);
    std::vector<float> &sum = lanes_[0].sum;
    for (int l = 1; l < lanes; ++l)
      for (int64_t i = 0; i < k * cout_; ++i)
        sum[i] += lanes_[l].sum[i];
    for (int64_t co = 0; co < cout_; ++co)
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t ci = 0; ci < cin_; ++ci)
          out[oihw_ ? (co * cin_ + ci) * taps + t
                    : (t * cin_ + ci) * cout_ + co] =
              fromF32<uint16_t>(sum[co * k + t * cin_ + ci]);
    return Status::success();
  }

  int64_t n_ = 0, h_ = 0, w_ = 0, cin_ = 0, cout_ = 0, kh_ = 0, kw_ = 0;
  int64_t oh_ = 0, ow_ = 0, padTop_ = 0, padLeft_ = 0;
  std::vector<int64_t> strides_, dilations_;
  bool oihw_ = false;
  dnnl::stream stream_;
  int64_t chunkPixels_ = 0;
  dnnl::matmul matmul_;
  memory colMem_, dyMem_, productMem_;
  std::vector<uint16_t> col_;
  std::vector<uint16_t> product_;
  std::vector<Lane> lanes_; // the chunked sums' (empty otherwise)
};

// GOPT_CONV_FILTER_IM2COL=0 keeps oneDNN's backward-weights kernel (for
// comparing).
bool im2colFilterGradEnabled() {
  return envSwitchOn("GOPT_CONV_FILTER_IM2COL");
}

// GOPT_CONV_FILTER_IM2COL_STRIDE1=0 keeps oneDNN's kernel for the unit
// stride convolutions the matmul would take (for comparing).
bool im2colUnitStrideEnabled() {
  return envSwitchOn("GOPT_CONV_FILTER_IM2COL_STRIDE1");
}

// GOPT_CONV_FILTER_IM2COL_FEW_CHANNELS=0 keeps oneDNN's kernel for the
// few-channel convolutions summed over chunks (for comparing).
bool im2colFewChannelsEnabled() {
  return envSwitchOn("GOPT_CONV_FILTER_IM2COL_FEW_CHANNELS");
}

std::unique_ptr<Kernel> Im2colFilterGradKernel::create(const KernelConfig &c) {
  if (!im2colFilterGradEnabled() || !c.allOfType(DType::kBF16) ||
      cpuBf16Support() == Bf16Support::kReference || c.inputShapes.size() != 2)
    return nullptr;
  OpAttrs attrs = c.attrs();
  if (attrs.getString("data_format") != "NHWC" || attrs.getInt("groups") != 1)
    return nullptr;
  const Shape &x = c.inputShapes[0], &dy = c.inputShapes[1],
              &f = c.outputShapes[0];
  if (x.size() != 4 || dy.size() != 4 || f.size() != 4)
    return nullptr;
  auto kernel =
      std::unique_ptr<Im2colFilterGradKernel>(new Im2colFilterGradKernel());
  Im2colFilterGradKernel &k = *kernel;
  k.oihw_ = attrs.getString("filter_format") == "OIHW";
  k.n_ = x[0], k.h_ = x[1], k.w_ = x[2], k.cin_ = x[3];
  k.kh_ = k.oihw_ ? f[2] : f[0];
  k.kw_ = k.oihw_ ? f[3] : f[1];
  k.cout_ = k.oihw_ ? f[0] : f[3];
  k.oh_ = dy[1], k.ow_ = dy[2];
  k.strides_ = attrs.getWindowInts("strides");
  k.dilations_ = attrs.getWindowInts("dilations");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  StatusOr<WindowDim> wh =
      computeWindowDim(k.h_, k.kh_, k.strides_[0], k.dilations_[0], padding,
                       pads[0], pads[1], false);
  StatusOr<WindowDim> ww =
      computeWindowDim(k.w_, k.kw_, k.strides_[1], k.dilations_[1], padding,
                       pads[2], pads[3], false);
  if (!wh.ok() || !ww.ok() || wh->outSize != k.oh_ || ww->outSize != k.ow_ ||
      dy[0] != k.n_ || dy[3] != k.cout_ || (k.oihw_ ? f[1] : f[2]) != k.cin_)
    return nullptr;
  k.padTop_ = wh->padBefore, k.padLeft_ = ww->padBefore;
  // Small output images with many channels, where the product is large
  // enough for the matmul's blocking (measured on ResNet-18 at batch 32:
  // layer 3 and 4's 14x14 and 7x7; the 56x56 and 28x28 layers ran well on
  // oneDNN's convolution and would need a column buffer 4-16x larger).
  const int64_t taps = k.kh_ * k.kw_, kDim = taps * k.cin_,
                pixels = k.n_ * k.oh_ * k.ow_;
  // Stride 1 only at 7x7 and below (ResNet's layer 4): there oneDNN's
  // kernel ran at 280-290 GFLOP/s against the matmul's 510-520 (one thread,
  // batch 32); at 14x14 both were at about 500 and the column buffer (9x
  // the activations) costs more than it saves.
  const bool unitStride = k.strides_[0] == 1 && k.strides_[1] == 1;
  // Few input channels, a filter of 9+ taps and a large output (the 7x7/2
  // stem over RGB images): oneDNN's kernel pads the channels to its
  // blocking and ran ResNet-18's at 135 GFLOP/s; the matmul over chunks of
  // rows took 55 -> 30-35 ms (one thread, batch 32).
  const bool fewChannels = k.cin_ <= 4 && taps >= 9 && k.cout_ >= 32 &&
                           k.oh_ * k.ow_ > 196 && im2colFewChannelsEnabled();
  // A strided 1x1 filter (ResNet's downsamples) at any size: its columns
  // are the strided source's pixels, no larger than dy, and oneDNN's kernel
  // ran layer 2's (28x28) at 110-130 GFLOP/s.
  // GOPT_CONV_FILTER_IM2COL_1X1=0 keeps oneDNN's kernel for those.
  const char *strided1x1Setting = std::getenv("GOPT_CONV_FILTER_IM2COL_1X1");
  const bool strided1x1 =
      taps == 1 && !unitStride &&
      !(strided1x1Setting && std::strcmp(strided1x1Setting, "0") == 0);
  if (pixels == 0)
    return nullptr;
  if (fewChannels) {
    // Whole output rows, as many as keep the chunk's columns within 1 MiB
    // (about half of one core's L2) and divide the batch's rows evenly.
    const int64_t rows = k.n_ * k.oh_, rowValues = k.ow_ * kDim;
    int64_t chunkRows = std::max<int64_t>(1, (int64_t(1) << 19) / rowValues);
    while (rows % chunkRows)
      --chunkRows;
    if (chunkRows * rowValues > (int64_t(4) << 20))
      return nullptr;
    k.chunkPixels_ = chunkRows * k.ow_;
  } else if ((k.oh_ * k.ow_ > 196 && !strided1x1) || k.cin_ < 64 ||
             k.cout_ < 64 || k.cin_ % 16 ||
             (unitStride &&
              (k.oh_ * k.ow_ > 49 || !im2colUnitStrideEnabled())) ||
             pixels * kDim > (int64_t(64) << 20) / 2) {
    return nullptr;
  } else {
    k.chunkPixels_ = pixels;
  }
  const int64_t chunk = k.chunkPixels_;
  try {
    using DT = memory::data_type;
    // col stored [P, K] row-major and dy [P, Cout]. HWIO results: col^T
    // (read transposed) times dy, [K, Cout] as the filter is laid out.
    // OIHW and the chunked sums: dy^T times col, [Cout, K], whose rows go
    // to the filter's output channels as they are.
    const bool transposed = k.oihw_ || fewChannels;
    memory::desc colMd, dyMd, productMd;
    if (transposed) {
      dyMd = memory::desc({k.cout_, chunk}, DT::bf16, Dims{1, k.cout_});
      colMd = memory::desc({chunk, kDim}, DT::bf16, Tag::ab);
      productMd = memory::desc({k.cout_, kDim},
                               fewChannels ? DT::f32 : DT::bf16, Tag::ab);
    } else {
      colMd = memory::desc({kDim, chunk}, DT::bf16, Dims{1, kDim});
      dyMd = memory::desc({chunk, k.cout_}, DT::bf16, Tag::ab);
      productMd = memory::desc({kDim, k.cout_}, DT::bf16, Tag::ab);
    }
    auto desc = transposed ? dnnl::matmul::desc(dyMd, colMd, productMd)
                           : dnnl::matmul::desc(colMd, dyMd, productMd);
    dnnl::matmul::primitive_desc pd(desc, cpuEngine());
    if (std::strstr(pd.impl_info_str(), "ref"))
      return nullptr;
    if (fewChannels) {
      dnnl::post_ops sum;
      sum.append_sum(1.0f);
      dnnl::primitive_attr attr;
      attr.set_post_ops(sum);
      dnnl::matmul::primitive_desc accumulatePd(desc, attr, cpuEngine());
      if (std::strstr(accumulatePd.impl_info_str(), "ref"))
        return nullptr;
      const int64_t chunks = pixels / chunk;
      const int lanes = static_cast<int>(std::max<int64_t>(
          1, std::min<int64_t>(omp_get_max_threads(), chunks)));
      for (int l = 0; l < lanes; ++l) {
        k.lanes_.push_back(
            Lane{dnnl::stream(cpuEngine()), dnnl::matmul(pd),
                 dnnl::matmul(accumulatePd),
                 memory(colMd, cpuEngine(), DNNL_MEMORY_NONE),
                 memory(dyMd, cpuEngine(), DNNL_MEMORY_NONE),
                 memory(productMd, cpuEngine(), DNNL_MEMORY_NONE),
                 std::vector<uint16_t>(chunk * kDim),
                 std::vector<float>(kDim * k.cout_)});
      }
      return std::unique_ptr<Kernel>(std::move(kernel));
    }
    k.matmul_ = dnnl::matmul(pd);
    k.colMem_ = memory(colMd, cpuEngine(), DNNL_MEMORY_NONE);
    k.dyMem_ = memory(dyMd, cpuEngine(), DNNL_MEMORY_NONE);
    k.productMem_ = memory(productMd, cpuEngine(), DNNL_MEMORY_NONE);
  } catch (const dnnl::error &) {
    return nullptr;
  }
  k.col_.resize(chunk * kDim);
  if (k.oihw_ && taps > 1)
    k.product_.resize(kDim * k.cout_);
  return std::unique_ptr<Kernel>(std::move(kernel));
}

// Whether the oneDNN conv gradients take bf16 operands here: where oneDNN
// has bf16 kernels, natively (AVX512-BF16, AMX) or emulated on AVX-512 (the
// forward conv2d's kernels run there too). Without AVX-512 oneDNN 2.6 has
// none and the reference kernels run.
bool oneDnnConvBf16() { return cpuBf16Support() != Bf16Support::kReference; }

StatusOr<std::unique_ptr<Kernel>>
ConvBackwardKernel::create(const KernelConfig &c) {
  if (c.op->kind() == "conv2d_backprop_filter" &&
      cpu::singleChannelConvEnabled())
    if (std::unique_ptr<Kernel> direct = cpu::createSingleChannelFilterGrad(c))
      return direct;
  if (c.op->kind() == "conv2d_backprop_filter")
    if (std::unique_ptr<Kernel> tiles = cpu::createAmxFewChannelFilterGrad(c))
      return tiles;
  if (c.op->kind() == "conv2d_backprop_filter")
    if (std::unique_ptr<Kernel> tiles = cpu::createAmxConvFilterGrad(c))
      return tiles;
  if (c.op->kind() == "conv2d_backprop_input")
    if (std::unique_ptr<Kernel> forward = cpu::createBackpropInputAsForward(c))
      return forward;
  if (c.op->kind() == "conv2d_backprop_input")
    if (std::unique_ptr<Kernel> product =
            cpu::createStridedBackpropInputMatmul(c))
      return product;
  if (c.op->kind() == "conv2d_backprop_filter")
    if (std::unique_ptr<Kernel> product = Im2colFilterGradKernel::create(c))
      return product;
  memory::data_type type;
  if (c.allOfType(DType::kF32))
    type = memory::data_type::f32;
  else if (c.allOfType(DType::kBF16) && oneDnnConvBf16())
    type = memory::data_type::bf16;
  else
    return none();
  auto kernel = std::unique_ptr<ConvBackwardKernel>(new ConvBackwardKernel());
  GOPT_RETURN_IF_ERROR(kernel->init(c, type));
  if (!kernel->primitive_) // oneDNN has no implementation for this config
    return none();
  return std::unique_ptr<Kernel>(std::move(kernel));
}

std::unique_ptr<Kernel> ConvBackwardKernel::createOneDnn(const KernelConfig &c,
                                                         DType type) {
  return createOneDnnConv(c, type);
}

std::unique_ptr<ConvBackwardKernel>
ConvBackwardKernel::createOneDnnConv(const KernelConfig &c, DType type) {
  if (type == DType::kBF16 && !oneDnnConvBf16())
    return nullptr;
  auto kernel = std::unique_ptr<ConvBackwardKernel>(new ConvBackwardKernel());
  Status status =
      kernel->init(c, type == DType::kF32 ? memory::data_type::f32
                                          : memory::data_type::bf16);
  if (!status.ok() || !kernel->primitive_)
    return nullptr;
  return kernel;
}

// All operands and the result are of `type` (f32 or bf16); so are the
// primitive's, but for bf16 filter gradients that oneDNN computes in f32
// only: those are reordered (rounded) into the bf16 result.
Status ConvBackwardKernel::init(const KernelConfig &c, memory::data_type type) {
  OpAttrs attrs = c.attrs();
  bool backpropInput = c.op->kind() == "conv2d_backprop_input";
  // The forward conv's input x, filter f and output y.
  const Shape &x = backpropInput ? c.outputShapes[0] : c.inputShapes[0];
  const Shape &f = backpropInput ? c.inputShapes[1] : c.outputShapes[0];
  const Shape &y = backpropInput ? c.inputShapes[0] : c.inputShapes[1];
  bool nchw = attrs.getString("data_format") == "NCHW";
  bool oihw = attrs.getString("filter_format") == "OIHW";
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> dilations = attrs.getWindowInts("dilations");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  int64_t groups = attrs.getInt("groups");
  int64_t n = x[0], cin = nchw ? x[1] : x[3], h = nchw ? x[2] : x[1],
          w = nchw ? x[3] : x[2];
  int64_t kh = oihw ? f[2] : f[0], kw = oihw ? f[3] : f[1];
  int64_t cout = oihw ? f[0] : f[3];
  int64_t oh = nchw ? y[2] : y[1], ow = nchw ? y[3] : y[2];
  if (numElements(x) == 0 || numElements(y) == 0 || numElements(f) == 0)
    return Status::success(); // leave degenerate shapes to the reference
  GOPT_ASSIGN_OR_RETURN(WindowDim wh,
                        computeWindowDim(h, kh, strides[0], dilations[0],
                                         padding, pads[0], pads[1], false));
  GOPT_ASSIGN_OR_RETURN(WindowDim ww,
                        computeWindowDim(w, kw, strides[1], dilations[1],
                                         padding, pads[2], pads[3], false));
  Tag act = nchw ? Tag::nchw : Tag::nhwc;
  memory::desc xUser({n, cin, h, w}, type, act);
  memory::desc yUser({n, cout, oh, ow}, type, act);
  Dims weightDims;
  memory::desc fUser;
  // A filter gradient may be asked for in f32 from bf16 operands (the
  // chunked pool and conv gradients sum the chunks' in f32).
  const memory::data_type filterType =
      !backpropInput && c.outputTypes[0] == DType::kF32 ? memory::data_type::f32
                                                        : type;
  if (groups == 1) {
    weightDims = {cout, cin, kh, kw};
    fUser = memory::desc(weightDims, filterType, oihw ? Tag::oihw : Tag::hwio);
  } else {
    weightDims = {groups, cout / groups, cin / groups, kh, kw};
    // HWIO with groups is [KH, KW, I/G, G*O/G]: oneDNN's hwigo.
    fUser =
        memory::desc(weightDims, filterType, oihw ? Tag::goihw : Tag::hwigo);
  }
  // The activations as the plan has them where oneDNN has a JIT kernel for
  // that layout (GOPT_CONV_BACKWARD_ANY=1 lets oneDNN pick, for measuring):
  // its own blocked layout would cost a reorder of x and dy into it and of
  // dx out of it on every run, passes over whole activations that grow
  // with the batch.
  const char *anySetting = std::getenv("GOPT_CONV_BACKWARD_ANY");
  bool plainFirst = !(anySetting && std::strcmp(anySetting, "1") == 0);
  // GOPT_TRAINING_CONV_GRAD_WINOGRAD=1 (off): oneDNN's Winograd F(4x4, 3x3)
  // gradients in its blocked layouts, the activations reordered around it
  // by bind(). Slower at the chunked step's 3-image chunks, 13% faster at
  // 12-image ones at batch 1024 under load (docs/architecture.md, "oneDNN's
  // Winograd for the f32 training convolutions").
  const char *winoSetting = std::getenv("GOPT_TRAINING_CONV_GRAD_WINOGRAD");
  if (winoSetting && std::strcmp(winoSetting, "1") == 0 &&
      type == memory::data_type::f32 && groups == 1 && kh == 3 && kw == 3 &&
      strides[0] == 1 && strides[1] == 1 && dilations[0] == 1 &&
      dilations[1] == 1 && cin % 16 == 0 && cout % 16 == 0) {
    GOPT_RETURN_IF_ERROR(initPrimitive(backpropInput, Tag::any, type, n, cin, h,
                                       w, cout, oh, ow, weightDims, xUser,
                                       yUser, fUser, strides, dilations, wh, ww,
                                       dnnl::algorithm::convolution_winograd));
    if (primitive_ && std::strstr(implInfo_.c_str(), "wino"))
      return Status::success();
    primitive_ = dnnl::primitive();
    args_.clear();
    execArgs_.clear();
    workspaceBytes_ = 0;
  }
  for (bool plain : {true, false}) {
    if (plain && !plainFirst)
      continue;
    GOPT_RETURN_IF_ERROR(initPrimitive(
        backpropInput, plain ? Tag(act) : Tag::any, type, n, cin, h, w, cout,
        oh, ow, weightDims, xUser, yUser, fUser, strides, dilations, wh, ww));
    if (primitive_ && (!plain || !std::strstr(implInfo_.c_str(), "ref")))
      break;
    primitive_ = dnnl::primitive();
    args_.clear();
    execArgs_.clear();
    workspaceBytes_ = 0;
  }
  return Status::success();
}

Status ConvBackwardKernel::initPrimitive(
    bool backpropInput, Tag actTag, memory::data_type type, int64_t n,
    int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t oh, int64_t ow,
    const Dims &weightDims, const memory::desc &xUser,
    const memory::desc &yUser, const memory::desc &fUser,
    const std::vector<int64_t> &strides, const std::vector<int64_t> &dilations,
    const WindowDim &wh, const WindowDim &ww, dnnl::algorithm algorithm) {
  memory::desc xAny({n, cin, h, w}, type, actTag);
  memory::desc yAny({n, cout, oh, ow}, type, actTag);
  memory::desc fAny(weightDims, type, Tag::any);
  Dims dnnlStrides = {strides[0], strides[1]};
  Dims dnnlDilations = {dilations[0] - 1, dilations[1] - 1}; // 0 = dense
  Dims padL = {wh.padBefore, ww.padBefore};
  Dims padR = {wh.padAfter, ww.padAfter};
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    dnnl::convolution_forward::desc fwdDesc(
        dnnl::prop_kind::forward_training, algorithm, xAny, fAny, yAny,
        dnnlStrides, dnnlDilations, padL, padR);
    dnnl::convolution_forward::primitive_desc fwdPd(fwdDesc, cpuEngine(),
                                                    /*allow_empty=*/true);
    if (!fwdPd)
      return Status::success();
    if (backpropInput) {
      dnnl::convolution_backward_data::desc desc(
          algorithm, xAny, fAny, yAny, dnnlStrides, dnnlDilations, padL, padR);
      dnnl::convolution_backward_data::primitive_desc pd(
          desc, attr, cpuEngine(), fwdPd, /*allow_empty=*/true);
      if (!pd)
        return Status::success();
      bind(0, false, DNNL_ARG_DIFF_DST, yUser, pd.diff_dst_desc());
      bind(1, false, DNNL_ARG_WEIGHTS, fUser, pd.weights_desc());
      bind(0, true, DNNL_ARG_DIFF_SRC, xUser, pd.diff_src_desc());
      bindScratchpad(pd.scratchpad_desc());
      implInfo_ = pd.impl_info_str();
      primitive_ = dnnl::convolution_backward_data(pd);
    } else {
      // Filter gradients of `diffType`; empty where oneDNN has none.
      auto weightsPd = [&](memory::data_type diffType) {
        memory::desc diffAny(weightDims, diffType, Tag::any);
        try {
          dnnl::convolution_backward_weights::desc desc(
              algorithm, xAny, diffAny, yAny, dnnlStrides, dnnlDilations, padL,
              padR);
          return dnnl::convolution_backward_weights::primitive_desc(
              desc, attr, cpuEngine(), fwdPd, /*allow_empty=*/true);
        } catch (const dnnl::error &) {
          return dnnl::convolution_backward_weights::primitive_desc();
        }
      };
      dnnl::convolution_backward_weights::primitive_desc pd =
          weightsPd(fUser.data_type());
      if (!pd && type != memory::data_type::f32)
        pd = weightsPd(memory::data_type::f32);
      if (!pd)
        return Status::success();
      bind(0, false, DNNL_ARG_SRC, xUser, pd.src_desc());
      bind(1, false, DNNL_ARG_DIFF_DST, yUser, pd.diff_dst_desc());
      bind(0, true, DNNL_ARG_DIFF_WEIGHTS, fUser, pd.diff_weights_desc());
      bindScratchpad(pd.scratchpad_desc());
      implInfo_ = pd.impl_info_str();
      primitive_ = dnnl::convolution_backward_weights(pd);
    }
  } catch (const dnnl::error &) {
    // oneDNN rejects the configuration: the reference kernel runs it.
    primitive_ = dnnl::primitive();
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// relu_grad
//===----------------------------------------------------------------------===//

// T: float (f32) or uint16_t (bf16, selected on the bits: what converting
// to f32 and back computes, NaNs quieted as floatToBf16 does). Both loads
// unconditional: a select, not a branch on y's sign.
template <typename T>
GOPT_VECTOR_CLONES void reluGradRange(const T *dy, const T *y, T *dx,
                                      int64_t begin, int64_t end) {
  if constexpr (std::is_same_v<T, float>) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) {
      float d = dy[i], v = y[i];
      dx[i] = v > 0 ? d : 0.0f;
    }
  } else {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) {
      uint16_t d = dy[i], v = y[i];
      // v > 0: bits 0x0001 (the least positive) to 0x7f80 (+inf).
      bool positive = static_cast<uint16_t>(v - 1) < 0x7f80;
      uint16_t quiet = (d & 0x7fff) > 0x7f80 ? d | 0x40 : d;
      dx[i] = positive ? quiet : 0;
    }
  }
}

template <typename T> class ReluGradKernel : public Kernel {
public:
  explicit ReluGradKernel(int64_t elements) : elements_(elements) {}
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const T *dy = in[0].data<T>(), *y = in[1].data<T>();
    T *dx = out[0].data<T>();
    parallelRange(elements_, [&](int64_t b, int64_t e) {
      reluGradRange(dy, y, dx, b, e);
    });
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  int64_t elements_;
};

StatusOr<std::unique_ptr<Kernel>> createReluGrad(const KernelConfig &c) {
  DType type = loopType(c);
  if (type == DType::kInvalid)
    return none();
  int64_t elements = numElements(c.outputShapes[0]);
  return byElementType(type, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<ReluGradKernel<decltype(t)>>(elements);
  });
}

//===----------------------------------------------------------------------===//
// max_pool_grad
//===----------------------------------------------------------------------===//

// dy of each window goes to the first maximum of the window in row-major
// order (NaN wins, the last NaN), as the reference: recomputed from x.
// A pooling op's window over x [N, C, H, W] (or NHWC) and dy [.., OH, OW]:
// the forward's kernel, strides and resolved pads (SAME, ceil_mode).
struct PoolGeometry {
  bool nchw;
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, padTop, padLeft, padBottom,
      padRight;
};

// The geometry of a max_pool_grad / avg_pool_grad (inputs x, dy).
StatusOr<PoolGeometry> poolGeometry(const KernelConfig &c) {
  OpAttrs attrs = c.attrs();
  PoolGeometry g;
  g.nchw = attrs.getString("data_format") == "NCHW";
  std::vector<int64_t> kernel = attrs.getInts("kernel");
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  std::string padding = attrs.getString("padding");
  bool ceilMode = attrs.getBool("ceil_mode");
  const Shape &x = c.inputShapes[0], &y = c.inputShapes[1];
  g.n = x[0];
  g.c = g.nchw ? x[1] : x[3];
  g.h = g.nchw ? x[2] : x[1];
  g.w = g.nchw ? x[3] : x[2];
  g.oh = g.nchw ? y[2] : y[1];
  g.ow = g.nchw ? y[3] : y[2];
  g.kh = kernel[0];
  g.kw = kernel[1];
  g.sh = strides[0];
  g.sw = strides[1];
  GOPT_ASSIGN_OR_RETURN(WindowDim wh,
                        computeWindowDim(g.h, g.kh, g.sh, 1, padding, pads[0],
                                         pads[1], ceilMode));
  GOPT_ASSIGN_OR_RETURN(WindowDim ww,
                        computeWindowDim(g.w, g.kw, g.sw, 1, padding, pads[2],
                                         pads[3], ceilMode));
  g.padTop = wh.padBefore;
  g.padLeft = ww.padBefore;
  g.padBottom = wh.padAfter;
  g.padRight = ww.padAfter;
  return g;
}

// One NCHW (n, c) plane: x [H, W], dy [OH, OW] -> dx [H, W]. Per output
// row, the window elements are visited in row-major window order (r, s)
// with the output columns innermost, as selects the compiler vectorizes
// (random data would mispredict branches). `best` and `bestValue` hold OW
// elements.
void maxPoolGradPlane(const PoolGeometry &g, const float *px, const float *pdy,
                      float *pdx, int32_t *best, float *bestValue) {
  std::memset(pdx, 0, sizeof(float) * g.h * g.w);
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    int64_t h0 = oh * g.sh - g.padTop;
    std::fill(best, best + g.ow, -1);
    std::fill(bestValue, bestValue + g.ow, -INFINITY);
    for (int64_t r = 0; r < g.kh; ++r) {
      int64_t ih = h0 + r;
      if (ih < 0 || ih >= g.h)
        continue;
      const float *row = px + ih * g.w;
      for (int64_t s = 0; s < g.kw; ++s) {
        // Output columns whose window column s lies in [0, W).
        int64_t off = s - g.padLeft; // iw = ow * sw + off
        int64_t owBegin = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
        int64_t owEnd =
            g.w - off <= 0
                ? 0
                : std::min<int64_t>(g.ow, (g.w - off - 1) / g.sw + 1);
        const int64_t sw = g.sw;
        const int32_t rowBase = static_cast<int32_t>(ih * g.w + off);
#pragma omp simd
        for (int64_t ow = owBegin; ow < owEnd; ++ow) {
          float v = row[ow * sw + off];
          // The first real element, a larger one, or a NaN.
          bool take = (best[ow] < 0) | (v > bestValue[ow]) | (v != v);
          best[ow] = take ? rowBase + static_cast<int32_t>(ow * sw) : best[ow];
          bestValue[ow] = take ? v : bestValue[ow];
        }
      }
    }
    for (int64_t ow = 0; ow < g.ow; ++ow)
      if (best[ow] >= 0) // else the window lies entirely in padding
        pdx[best[ow]] += pdy[oh * g.ow + ow];
  }
}

// dy's value as dx holds it where one window's gradient lands: the
// reference sums in f32 and rounds once, which for bf16 changes nothing but
// a NaN's quiet bit.
inline float passGradient(float d) { return d; }
inline uint16_t passGradient(uint16_t d) {
  return (d & 0x7fff) > 0x7f80 ? static_cast<uint16_t>(d | 0x40) : d;
}

// Windows that tile the image (stride = kernel, no padding, none past the
// edge: the 2x2/2 pooling of most CNNs) never share an element, so every dx
// element is written once, dy at its window's first maximum and 0
// elsewhere: no zeroing pass, no scatter, no f32 copies of bf16 planes.
bool windowsTile(const PoolGeometry &g) {
  return g.sh == g.kh && g.sw == g.kw && g.padTop == 0 && g.padLeft == 0 &&
         g.oh * g.kh <= g.h && g.ow * g.kw <= g.w &&
         (!g.nchw || (g.kh == 2 && g.kw == 2 && g.w == 2 * g.ow));
}

// Integers that order as the floats compare (-0 = +0), NaNs all
// kNaNKey: selections on them compile to integer selects, not branches.
constexpr int32_t kNaNKey = INT32_MAX;
inline int32_t orderKey(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  int32_t magnitude = static_cast<int32_t>(bits & 0x7fffffffu);
  int32_t sign = static_cast<int32_t>(bits) >> 31; // 0 or -1
  int32_t key = (magnitude ^ sign) - sign;         // -magnitude if negative
  return magnitude > 0x7f800000 ? kNaNKey : key;
}

// Buffers of maxPoolGradPlane2x2, per thread.
struct Plane2x2Scratch {
  std::vector<int32_t> keys, column, columnBest, code;
  explicit Plane2x2Scratch(const PoolGeometry &g)
      : keys(2 * g.oh * g.w), column(g.oh * g.w), columnBest(g.oh * g.w),
        code(g.oh * g.w) {}
};

// One NCHW plane of 2x2 windows with stride 2 that cover every column
// (W = 2 * OW; the MNIST CNN's pool), in flat loops the compiler vectorizes
// (rows of a dozen windows are too short to vectorize one by one):
// 1. order keys of the plane;
// 2. per column of each window row, the winner of its top and bottom
//    element (the first maximum in window order, a NaN wins, the last NaN);
// 3. per window, the winner of its two columns by the same rule: the
//    larger value, on a tie the earlier window offset, or between two NaNs
//    the later; coded per column as the window row holding the maximum
//    there (0 top, 2 bottom, else neither);
// 4. both dx rows: dy where the code says so, else 0.
template <typename T>
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void
maxPoolGradPlane2x2(int64_t oh, int64_t ow, int64_t w, const T *__restrict px,
                    const T *__restrict pdy, T *__restrict pdx,
                    Plane2x2Scratch &scratch) {
  int32_t *__restrict keys = scratch.keys.data();
  int32_t *__restrict column = scratch.column.data();
  int32_t *__restrict columnBest = scratch.columnBest.data();
  int32_t *__restrict code = scratch.code.data();
  const int64_t h2 = 2 * oh;
#pragma omp simd
  for (int64_t i = 0; i < h2 * w; ++i)
    keys[i] = orderKey(toF32(px[i]));
  for (int64_t r = 0; r < oh; ++r) {
    const int32_t *top = keys + 2 * r * w, *bottom = top + w;
    int32_t *value = column + r * w, *best = columnBest + r * w;
#pragma omp simd
    for (int64_t c = 0; c < w; ++c) {
      int32_t take = (bottom[c] > top[c]) | (bottom[c] == kNaNKey);
      value[c] = take ? bottom[c] : top[c];
      best[c] = take ? 2 : 0; // window offset minus the column's
    }
  }
#pragma omp simd
  for (int64_t j = 0; j < oh * ow; ++j) {
    int32_t left = column[2 * j], right = column[2 * j + 1];
    int32_t leftBest = columnBest[2 * j], rightBest = columnBest[2 * j + 1] + 1;
    int32_t laterWins = left == kNaNKey; // two NaNs: the later
    int32_t tieToRight =
        laterWins ? rightBest > leftBest : rightBest < leftBest;
    int32_t takeRight = (right > left) | ((right == left) & tieToRight);
    int32_t best = takeRight ? rightBest : leftBest;
    // Column 2j holds offsets 0 (top) and 2 (bottom), column 2j+1 offsets 1
    // and 3: shifted by one, the same tests serve both.
    code[2 * j] = best;
    code[2 * j + 1] = best - 1;
  }
  for (int64_t r = 0; r < oh; ++r) {
    const int32_t *rowCode = code + r * w;
    const T *d = pdy + r * ow;
    T *dx0 = pdx + 2 * r * w, *dx1 = dx0 + w;
#pragma omp simd
    for (int64_t c = 0; c < w; ++c) {
      const T g = passGradient(d[c >> 1]), zero = static_cast<T>(0);
      dx0[c] = rowCode[c] == 0 ? g : zero;
      dx1[c] = rowCode[c] == 2 ? g : zero;
    }
  }
}

// One NHWC image of tiling windows, channels innermost. `best` and
// `bestValue` hold C elements.
template <typename T>
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void
maxPoolGradImageTiled(const PoolGeometry &g, const T *px, const T *pdy, T *pdx,
                      int32_t *best, float *bestValue) {
  const int64_t channels = g.c, kh = g.kh, kw = g.kw, rowStride = g.w * g.c;
  for (int64_t oh = 0; oh < g.oh; ++oh)
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      const int64_t base = oh * kh * rowStride + ow * kw * channels;
      const T *first = px + base;
#pragma omp simd
      for (int64_t ch = 0; ch < channels; ++ch) {
        best[ch] = 0;
        bestValue[ch] = toF32(first[ch]);
      }
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t s = r == 0 ? 1 : 0; s < kw; ++s) {
          const T *pv = first + r * rowStride + s * channels;
          const int32_t offset = static_cast<int32_t>(r * kw + s);
#pragma omp simd
          for (int64_t ch = 0; ch < channels; ++ch) {
            float v = toF32(pv[ch]), old = bestValue[ch];
            bool take = (v > old) | (v != v); // v != v: NaN
            best[ch] = take ? offset : best[ch];
            bestValue[ch] = take ? v : old;
          }
        }
      const T *d = pdy + (oh * g.ow + ow) * channels;
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t s = 0; s < kw; ++s) {
          T *out = pdx + base + r * rowStride + s * channels;
          const int32_t offset = static_cast<int32_t>(r * kw + s);
#pragma omp simd
          for (int64_t ch = 0; ch < channels; ++ch)
            out[ch] =
                best[ch] == offset ? passGradient(d[ch]) : static_cast<T>(0);
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define GOPT_HAVE_AVX512_POOL_GRAD 1

// The tap (row-major in the window, rows `rowStride` apart) each of 16
// channels picks: the first maximum, a NaN winning as the reference's
// max_pool does.
// `top`, if given, gets the winners' values: max_pool's result.
template <typename T>
GOPT_AVX512BW inline __m512i
windowWinners16(const T *first, int32_t taps, int64_t kw, int64_t rowStride,
                int64_t channels, __m512 *top = nullptr) {
  __m512 bestValue = load16AsF32(first);
  __m512i best = _mm512_setzero_si512();
  for (int32_t t = 1; t < taps; ++t) {
    __m512 v = load16AsF32(first + (t / kw) * rowStride + (t % kw) * channels);
    __mmask16 take = _mm512_cmp_ps_mask(v, bestValue, _CMP_GT_OQ) |
                     _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    bestValue = _mm512_mask_mov_ps(bestValue, take, v);
    best = _mm512_mask_mov_epi32(best, take, _mm512_set1_epi32(t));
  }
  if (top)
    *top = bestValue;
  return best;
}

// 16 dy values where `pick` is set, else +0: f32 as they are, bf16 bits
// with NaNs quieted (passGradient).
struct PickedF32 {
  __m512 d;
};
GOPT_AVX512BW inline PickedF32 poolGradient(const float *p) {
  return {_mm512_loadu_ps(p)};
}
GOPT_AVX512BW inline void poolStore(float *out, __mmask16 pick, PickedF32 g) {
  _mm512_storeu_ps(out, _mm512_maskz_mov_ps(pick, g.d));
}
struct PickedBf16 {
  __m256i d;
};
GOPT_AVX512BW inline PickedBf16 poolGradient(const uint16_t *p) {
  __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
  __mmask16 nan =
      _mm256_cmpgt_epu16_mask(_mm256_and_si256(d, _mm256_set1_epi16(0x7fff)),
                              _mm256_set1_epi16(0x7f80));
  __m256i quiet = _mm256_or_si256(d, _mm256_set1_epi16(0x40));
  return {_mm256_mask_mov_epi16(d, nan, quiet)};
}
GOPT_AVX512BW inline void poolStore(uint16_t *out, __mmask16 pick,
                                    PickedBf16 g) {
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(out),
                      _mm256_maskz_mov_epi16(pick, g.d));
}
// The same, `out` aligned to the vector, bypassing the cache: for dx of a
// whole batch, larger than the caches, which the next op reads from memory
// anyway; a normal store would first read each line.
GOPT_AVX512BW inline void poolStream(float *out, __mmask16 pick, PickedF32 g) {
  _mm512_stream_ps(out, _mm512_maskz_mov_ps(pick, g.d));
}
GOPT_AVX512BW inline void poolStream(uint16_t *out, __mmask16 pick,
                                     PickedBf16 g) {
  _mm256_stream_si256(reinterpret_cast<__m256i *>(out),
                      _mm256_maskz_mov_epi16(pick, g.d));
}

// maxPoolGradImageTiled for channels a multiple of 16: each window's 16
// channels at a time in registers, the window's winner a per-lane tap
// index (the same rule: larger, or a NaN; the last NaN), dy written to the
// winning tap with a masked move and 0 to the others. The generic loop
// kept `best` and `bestValue` in memory and converted bf16 element by
// element.
template <typename T>
GOPT_AVX512BW void maxPoolGradImageTiledAvx512(const PoolGeometry &g,
                                               const T *px, const T *pdy,
                                               T *pdx) {
  const int64_t channels = g.c, kh = g.kh, kw = g.kw, rowStride = g.w * g.c;
  const int32_t taps = static_cast<int32_t>(kh * kw);
  for (int64_t oh = 0; oh < g.oh; ++oh)
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      const int64_t base = oh * kh * rowStride + ow * kw * channels;
      const T *d = pdy + (oh * g.ow + ow) * channels;
      for (int64_t ch = 0; ch < channels; ch += 16) {
        const __m512i best =
            windowWinners16(px + base + ch, taps, kw, rowStride, channels);
        auto grad = poolGradient(d + ch);
        T *out = pdx + base + ch;
        for (int32_t t = 0; t < taps; ++t)
          poolStore(out + (t / kw) * rowStride + (t % kw) * channels,
                    _mm512_cmpeq_epi32_mask(best, _mm512_set1_epi32(t)), grad);
      }
    }
}
#endif

// One NHWC image of any windows (overlapping, padded), streamed by rows:
// x and dy are read as they are (bf16 converted in registers), window
// maxima scatter into f32 rows `acc` ([kh][W][C], zero on entry, a ring
// indexed by row % kh), and a dx row is rounded out (and its slot zeroed)
// once no later window reaches it. Every element is read and written once
// and the working set is kh rows, not f32 copies of the whole image.
// `best` and `bestValue` hold C elements.
template <typename T>
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void
maxPoolGradImageRows(const PoolGeometry &g, const T *px, const T *pdy, T *pdx,
                     int32_t *best, float *bestValue, float *acc) {
  const int64_t channels = g.c, rowStride = g.w * g.c;
  int64_t nextOut = 0; // the first dx row not yet written
  auto emitRowsBefore = [&](int64_t end) {
    for (; nextOut < end; ++nextOut) {
      float *row = acc + nextOut % g.kh * rowStride;
      T *out = pdx + nextOut * rowStride;
#pragma omp simd
      for (int64_t i = 0; i < rowStride; ++i) {
        out[i] = fromF32<T>(row[i]);
        row[i] = 0.0f;
      }
    }
  };
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    const int64_t h0 = oh * g.sh - g.padTop;
    const int64_t hb = std::max<int64_t>(h0, 0), he = std::min(h0 + g.kh, g.h);
    emitRowsBefore(std::min(hb, g.h));
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      const int64_t w0 = ow * g.sw - g.padLeft;
      const int64_t wb = std::max<int64_t>(w0, 0),
                    we = std::min(w0 + g.kw, g.w);
      if (hb >= he || wb >= we)
        continue; // the window lies entirely in padding
      // best: the winner's offset in acc (its row's slot, column, channel).
      const T *first = px + hb * rowStride + wb * channels;
      const int32_t firstSlot =
          static_cast<int32_t>(hb % g.kh * rowStride + wb * channels);
#pragma omp simd
      for (int64_t ch = 0; ch < channels; ++ch) {
        best[ch] = firstSlot + static_cast<int32_t>(ch);
        bestValue[ch] = toF32(first[ch]);
      }
      for (int64_t ih = hb; ih < he; ++ih)
        for (int64_t iw = ih == hb ? wb + 1 : wb; iw < we; ++iw) {
          const T *pv = px + ih * rowStride + iw * channels;
          const int32_t slot =
              static_cast<int32_t>(ih % g.kh * rowStride + iw * channels);
#pragma omp simd
          for (int64_t ch = 0; ch < channels; ++ch) {
            float v = toF32(pv[ch]), old = bestValue[ch];
            bool take = (v > old) | (v != v); // v != v: NaN
            best[ch] = take ? slot + static_cast<int32_t>(ch) : best[ch];
            bestValue[ch] = take ? v : old;
          }
        }
      const T *d = pdy + (oh * g.ow + ow) * channels;
      for (int64_t ch = 0; ch < channels; ++ch)
        acc[best[ch]] += toF32(d[ch]);
    }
  }
  emitRowsBefore(g.h);
}

// T: float (f32) or uint16_t (bf16: each NCHW plane is converted to f32,
// its dx summed in f32 and rounded once; NHWC images stream by rows).
template <typename T> class MaxPoolGradKernel : public Kernel {
public:
  explicit MaxPoolGradKernel(const PoolGeometry &g) : g_(g) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const PoolGeometry g = g_;
    const T *x = in[0].data<T>(), *dy = in[1].data<T>();
    T *dx = out[0].data<T>();
    const bool parallel = g.n * g.c * g.h * g.w >= kParallelThreshold;
    // One (n, c) plane per iteration for NCHW, one image for NHWC: they
    // never share elements.
    const int64_t items = g.nchw ? g.n * g.c : g.n;
    const int64_t xSize = g.h * g.w * (g.nchw ? 1 : g.c);
    const int64_t ySize = g.oh * g.ow * (g.nchw ? 1 : g.c);
    const int64_t scratch = g.nchw ? g.ow : g.c;
    if (windowsTile(g)) {
      // Elements no window covers (an edge remainder) stay 0.
      const bool remainder = g.oh * g.kh < g.h || g.ow * g.kw < g.w;
#ifdef GOPT_HAVE_AVX512_POOL_GRAD
      const bool vectorChannels =
          !g.nchw && g.c % 16 == 0 && avx512bwSupported();
#endif
#pragma omp parallel if (parallel)
      {
        std::vector<int32_t> best(g.nchw ? 0 : scratch);
        std::vector<float> bestValue(g.nchw ? 0 : scratch);
        std::optional<Plane2x2Scratch> plane;
        if (g.nchw)
          plane.emplace(g);
#pragma omp for schedule(static)
        for (int64_t item = 0; item < items; ++item) {
          T *pdx = dx + item * xSize;
          if (remainder)
            std::fill(pdx, pdx + xSize, static_cast<T>(0));
          if (g.nchw)
            maxPoolGradPlane2x2(g.oh, g.ow, g.w, x + item * xSize,
                                dy + item * ySize, pdx, *plane);
#ifdef GOPT_HAVE_AVX512_POOL_GRAD
          else if (vectorChannels)
            maxPoolGradImageTiledAvx512(g, x + item * xSize, dy + item * ySize,
                                        pdx);
#endif
          else
            maxPoolGradImageTiled(g, x + item * xSize, dy + item * ySize, pdx,
                                  best.data(), bestValue.data());
        }
      }
      return Status::success();
    }
    if (!g.nchw) {
      const cpu::PoolWindows windows{g.h,  g.w,  g.c,  g.oh,     g.ow,     g.kh,
                                     g.kw, g.sh, g.sw, g.padTop, g.padLeft};
      const bool vectors = std::is_same_v<T, uint16_t> &&
                           cpu::maxPoolGradRowsAvx512Applies(windows);
#pragma omp parallel if (parallel)
      {
        std::vector<int32_t> best(scratch);
        std::vector<float> bestValue(scratch);
        std::vector<float> acc(g.kh * g.w * g.c, 0.0f);
#pragma omp for schedule(static)
        for (int64_t item = 0; item < items; ++item) {
          if constexpr (std::is_same_v<T, uint16_t>)
            if (vectors) {
              cpu::maxPoolGradRowsAvx512(windows, x + item * xSize,
                                         dy + item * ySize, dx + item * xSize,
                                         acc.data());
              continue;
            }
          maxPoolGradImageRows(g, x + item * xSize, dy + item * ySize,
                               dx + item * xSize, best.data(), bestValue.data(),
                               acc.data());
        }
      }
      return Status::success();
    }
#pragma omp parallel if (parallel)
    {
      std::vector<int32_t> best(scratch);
      std::vector<float> bestValue(scratch);
      constexpr bool kF32 = std::is_same_v<T, float>;
      std::vector<float> xF32(kF32 ? 0 : xSize), dyF32(kF32 ? 0 : ySize),
          dxF32(kF32 ? 0 : xSize);
#pragma omp for schedule(static)
      for (int64_t item = 0; item < items; ++item) {
        const T *px = x + item * xSize, *pdy = dy + item * ySize;
        T *pdx = dx + item * xSize;
        if constexpr (kF32) {
          maxPoolGradPlane(g, px, pdy, pdx, best.data(), bestValue.data());
        } else {
          convert(px, xF32.data(), xSize);
          convert(pdy, dyF32.data(), ySize);
          maxPoolGradPlane(g, xF32.data(), dyF32.data(), dxF32.data(),
                           best.data(), bestValue.data());
          convert(dxF32.data(), pdx, xSize);
        }
      }
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  template <typename From, typename To>
  static void convert(const From *from, To *to, int64_t n) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      to[i] = fromF32<To>(toF32(from[i]));
  }

  PoolGeometry g_;
};

StatusOr<std::unique_ptr<Kernel>> createMaxPoolGrad(const KernelConfig &c) {
  DType type = loopType(c);
  if (type == DType::kInvalid)
    return none();
  GOPT_ASSIGN_OR_RETURN(PoolGeometry g, poolGeometry(c));
  if (g.h * g.w * g.c > INT32_MAX) // indices within an image are int32
    return none();
  return byElementType(type, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<MaxPoolGradKernel<decltype(t)>>(g);
  });
}

#ifdef GOPT_HAVE_AVX512_POOL_GRAD
// 16 dy values masked by y > 0 (relu_grad: a NaN y passes nothing), as
// they would be stored by relu_grad: f32 as they are, bf16 bits quieted.
GOPT_AVX512BW inline PickedF32 reluPassed(const float *g, __mmask16 positive) {
  return {_mm512_maskz_mov_ps(positive, _mm512_loadu_ps(g))};
}
GOPT_AVX512BW inline PickedBf16 reluPassed(const uint16_t *g,
                                           __mmask16 positive) {
  PickedBf16 quiet = poolGradient(g);
  return {_mm256_maskz_mov_epi16(positive, quiet.d)};
}
template <typename T>
GOPT_AVX512BW inline auto reluPassed(const T *g, const T *y) {
  return reluPassed(
      g, _mm512_cmp_ps_mask(load16AsF32(y), _mm512_setzero_ps(), _CMP_GT_OQ));
}
GOPT_AVX512BW inline __m512 pickedF32(PickedF32 p) { return p.d; }
GOPT_AVX512BW inline __m512 pickedF32(PickedBf16 p) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(p.d), 16));
}

// max_pool_grad(x, relu_grad(g, y)) of one NHWC image of tiling windows,
// y = max_pool(x), and that relu_grad's per-channel sums (a bias
// gradient) added to `bias`: dy = g where y > 0, else 0, computed in
// registers per window, never stored. Sums in f32 per window row, joined
// in double. With py null, y > 0 is taken from the window's maximum, which
// is y (the schedule checked that y is max_pool(x) over these windows):
// y need not be read, nor, in the forward pass, written in this layout.
template <typename T, bool kStream = false>
GOPT_AVX512BW void maxPoolReluBiasGradImage(const PoolGeometry &g, const T *px,
                                            const T *pg, const T *py, T *pdx,
                                            double *bias, float *rowSums) {
  const int64_t channels = g.c, kh = g.kh, kw = g.kw, rowStride = g.w * g.c;
  const int32_t taps = static_cast<int32_t>(kh * kw);
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    std::fill(rowSums, rowSums + channels, 0.0f);
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      const int64_t base = oh * kh * rowStride + ow * kw * channels;
      const int64_t pooled = (oh * g.ow + ow) * channels;
      for (int64_t ch = 0; ch < channels; ch += 16) {
        __m512 top;
        const __m512i best = windowWinners16(px + base + ch, taps, kw,
                                             rowStride, channels, &top);
        auto grad = py ? reluPassed(pg + pooled + ch, py + pooled + ch)
                       : reluPassed(pg + pooled + ch,
                                    _mm512_cmp_ps_mask(top, _mm512_setzero_ps(),
                                                       _CMP_GT_OQ));
        _mm512_storeu_ps(
            rowSums + ch,
            _mm512_add_ps(_mm512_loadu_ps(rowSums + ch), pickedF32(grad)));
        T *out = pdx + base + ch;
        for (int32_t t = 0; t < taps; ++t) {
          const __mmask16 pick =
              _mm512_cmpeq_epi32_mask(best, _mm512_set1_epi32(t));
          T *at = out + (t / kw) * rowStride + (t % kw) * channels;
          if constexpr (kStream)
            poolStream(at, pick, grad);
          else
            poolStore(at, pick, grad);
        }
      }
    }
    for (int64_t ch = 0; ch < channels; ++ch)
      bias[ch] += rowSums[ch];
  }
}

// Inputs x, g, y (= max_pool(x)), or x and g with `windowMask`; outputs dx
// and the bias gradient, all of T. With `gradNchw` g is NCHW (the source
// of the transpose to NHWC the graph has there: the classifier's flatten),
// each image's transposed in registers into a buffer the window loop then
// reads in cache. Images split among threads; the bias sums per thread in
// double, joined in thread order.
template <typename T> class MaxPoolReluBiasGradKernel : public Kernel {
public:
  MaxPoolReluBiasGradKernel(const PoolGeometry &g, bool gradNchw,
                            bool windowMask)
      : g_(g), gradNchw_(gradNchw), windowMask_(windowMask) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const PoolGeometry g = g_;
    const T *x = in[0].data<T>(), *gr = in[1].data<T>();
    const T *y = windowMask_ ? nullptr : in[2].data<T>();
    T *dx = out[0].data<T>();
    const int64_t xSize = g.h * g.w * g.c, ySize = g.oh * g.ow * g.c;
    const bool remainder = g.oh * g.kh < g.h || g.ow * g.kw < g.w;
    const bool parallel = g.n * xSize >= kParallelThreshold;
    const int threads = parallel ? omp_get_max_threads() : 1;
    std::vector<double> partials(static_cast<size_t>(threads) * g.c, 0.0);
    // Streaming stores where dx outgrows the caches (the MNIST CNN's
    // 32->64 conv at batch 1024: 75 MB in bf16) and every store is
    // aligned: each image and pixel starts a whole vector (channels a
    // multiple of 16) from an aligned dx.
    const bool stream = !remainder && g.n * xSize * sizeof(T) >= kStreamBytes &&
                        reinterpret_cast<uintptr_t>(dx) % (16 * sizeof(T)) == 0;
#pragma omp parallel num_threads(threads) if (parallel)
    {
      double *bias = partials.data() + omp_get_thread_num() * g.c;
      std::vector<float> rowSums(g.c);
      std::vector<T> nhwc(gradNchw_ ? ySize : 0);
#pragma omp for schedule(static)
      for (int64_t item = 0; item < g.n; ++item) {
        T *pdx = dx + item * xSize;
        if (remainder && !gridImage_) // elements no window covers
          std::fill(pdx, pdx + xSize, static_cast<T>(0));
        const T *pg = gr + item * ySize;
        if (gradNchw_) {
          if constexpr (std::is_same_v<T, uint16_t>)
            cpu::transposeBf16(pg, g.c, g.oh * g.ow, nhwc.data());
          else
            transposeMatrix16(pg, g.c, g.oh * g.ow, nhwc.data());
          pg = nhwc.data();
        }
        const T *py = y ? y + item * ySize : nullptr;
        if constexpr (std::is_same_v<T, uint16_t>)
          if (masks_ &&
              cpu::maxPoolMaskReluBiasGradBf16(
                  {g.h, gridImage_ ? gridWidth_ : g.w, g.c, g.oh, g.ow, g.kh,
                   g.kw, g.sh, g.sw, g.padTop, g.padLeft},
                  masks_ + item * maskImage_, pg,
                  gridImage_ ? dx + item * gridImage_ + gridLead_ * g.c : pdx,
                  bias, rowSums.data()))
            continue;
        if (stream)
          maxPoolReluBiasGradImage<T, true>(g, x + item * xSize, pg, py, pdx,
                                            bias, rowSums.data());
        else
          maxPoolReluBiasGradImage<T, false>(g, x + item * xSize, pg, py, pdx,
                                             bias, rowSums.data());
      }
      if (stream) // the streamed lines visible before the next op runs
        _mm_sfence();
    }
    T *db = biasSums_ ? nullptr : out[1].data<T>();
    for (int64_t ch = 0; ch < g.c; ++ch) {
      double s = 0;
      for (int t = 0; t < threads; ++t)
        s += partials[static_cast<size_t>(t) * g.c + ch];
      if (biasSums_)
        biasSums_[ch] += s;
      else
        db[ch] = fromF32<T>(static_cast<float>(s));
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }
  // The bias sums are added into `sums` (channels doubles) instead of
  // written to the second result (the chunked step's running sums).
  void addBiasSumsInto(double *sums) { biasSums_ = sums; }
  // bf16 with the window mask: the winners the fused conv + pool step
  // recorded (PoolWinnerMasks, `perImage` masks an image) from the run's
  // first image on instead of x's compares; null: from x.
  void setWinnerMasks(const uint16_t *masks, int64_t perImage) {
    masks_ = masks;
    maskImage_ = perImage;
  }
  // With the masks and windows covering x: dx written on the AMX data
  // gradient's grid (AmxDataGrad::computeFromGrid: `perImage` values an
  // image, rows `width` pixels apart from row `lead`; the rest left as it
  // is, zeros) instead of dense; perImage 0: dense.
  void setGridOutput(int64_t perImage, int64_t width, int64_t lead) {
    gridImage_ = perImage;
    gridWidth_ = width;
    gridLead_ = lead;
  }

private:
  // dx sizes from which streaming stores pay: well past a core's L2.
  static constexpr int64_t kStreamBytes = int64_t(16) << 20;
  PoolGeometry g_;
  bool gradNchw_, windowMask_;
  double *biasSums_ = nullptr;
  const uint16_t *masks_ = nullptr;
  int64_t maskImage_ = 0;
  int64_t gridImage_ = 0, gridWidth_ = 0, gridLead_ = 0;
};

// The fused relu + pool + bias gradient and the two gradients of the
// convolution before the pool (data and filter), which read its dx and
// nothing else does, run a few images at a time: each chunk's dx stays in
// the core's cache between the three instead of going to memory and being
// read back twice (75 MB in bf16 at batch 1024 for the MNIST CNN's 32->64
// conv). Each thread (lane) runs its share of the chunks with its own
// kernels (oneDNN primitives made for one thread) and buffers, summing the
// filter gradient (f32) and the bias (double) over its chunks; the lanes'
// sums are added in lane order and rounded once into the results.
// Inputs: x, g, [y] (as the fused pool step's), the filter, the conv's
// source; outputs: the source's gradient, the filter's, the bias's.
template <typename T> class ChunkedPoolConvGradKernel : public Kernel {
public:
  struct Lane {
    std::unique_ptr<MaxPoolReluBiasGradKernel<T>> pool[2];
    std::unique_ptr<ConvBackwardKernel> data[2], filter[2];
    // oneDNN's filter gradients summed over the lane's chunks in the
    // primitive's own (blocked) layout, reordered into the plan's once per
    // run, where `blocked[which]` (GOPT_CHUNKED_CONV_GRAD_REORDER_ONCE);
    // the data gradient's filter reordered by the run's first chunk only.
    std::vector<float> filterBlocked;
    bool blocked[2] = {false, false};
    bool reorderOnce = false;
    // bf16: AMX filter-gradient sums over the lane's chunks instead of
    // filter[] (then null).
    std::unique_ptr<cpu::AmxFilterGrad> amx;
    // bf16: the source's gradient on AMX instead of data[] (then null).
    std::unique_ptr<cpu::AmxDataGrad> amxData;
    std::vector<T> dx;
    std::vector<float> filterPart, filterSum;
    std::vector<double> biasSum;
    std::vector<T> biasUnused;
    // With the first layer's relu + filter + bias gradient (a one-channel
    // conv reading the source's gradient alone): its sums, and the chunk's
    // source gradient, which then stays in this buffer.
    std::unique_ptr<cpu::SingleChannelReluFilterBiasSums> first;
    std::vector<T> dsrc;
    // With the source recomputed: the chunk's source (the first layer's
    // relu output).
    std::vector<T> src;
    std::vector<float> firstFilter;
    std::vector<double> firstBias;
    // bf16 with winner masks and both gradients on AMX: a chunk's dx on
    // the data gradient's grid (zeros where no window writes), 64-byte
    // aligned from gridData().
    std::vector<T> grid;
    T *gridData() {
      const uintptr_t at = reinterpret_cast<uintptr_t>(grid.data());
      return grid.data() + (at % 64 ? (64 - at % 64) / sizeof(T) : 0);
    }
  };
  struct Shapes {
    Shape x, g, y, src, filter;
    int64_t chunk = 0, channels = 0;
    Shape image;                                // the first layer's source
    int64_t firstFilter = 0, firstChannels = 0; // its element counts
    int sourceInputs = 0; // the recomputed source's conv's operands
  };

  ChunkedPoolConvGradKernel(
      Shapes shapes, bool windowMask, std::vector<Lane> lanes,
      std::shared_ptr<cpu::PoolWinnerMasks> masks,
      std::unique_ptr<cpu::SingleChannelConvImages> source = nullptr)
      : s_(std::move(shapes)), windowMask_(windowMask),
        lanes_(std::move(lanes)), masks_(std::move(masks)),
        source_(std::move(source)) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const int64_t n = s_.x[0], chunk = s_.chunk;
    const int64_t chunks = (n + chunk - 1) / chunk;
    const int64_t xImage = numElements(s_.x) / n,
                  gImage = numElements(s_.g) / n,
                  srcImage = numElements(s_.src) / n;
    const T *x = in[0].data<T>(), *g = in[1].data<T>();
    const T *y = windowMask_ ? nullptr : in[2].data<T>();
    const int next = windowMask_ ? 2 : 3;
    const Tensor &filter = in[next];
    const T *src = in[next + 1].data<T>();
    // The first layer's source and relu output, when it runs here.
    const bool first = lanes_[0].first != nullptr;
    const T *image0 = first ? in[next + 2].data<T>() : nullptr;
    const T *y0 = first ? in[next + 3].data<T>() : nullptr;
    const int64_t image0Size = first ? numElements(s_.image) / n : 0;
    T *dsrc = first ? nullptr : out[0].data<T>();
    // The source recomputed per chunk from the first layer's images and
    // the filter [and bias] after them.
    if (source_)
      source_->setWeights(in[next + 4].data(),
                          s_.sourceInputs > 2 ? in[next + 5].data() : nullptr);
    const int lanes = static_cast<int>(lanes_.size());
    std::vector<Status> status(lanes, Status::success());
    auto batchOf = [](Shape shape, int64_t images) {
      shape[0] = images;
      return shape;
    };
#pragma omp parallel for schedule(static, 1) num_threads(lanes) if (lanes > 1)
    for (int l = 0; l < lanes; ++l) {
      Lane &lane = lanes_[l];
      std::fill(lane.filterSum.begin(), lane.filterSum.end(), 0.0f);
      std::fill(lane.filterBlocked.begin(), lane.filterBlocked.end(), 0.0f);
      std::fill(lane.biasSum.begin(), lane.biasSum.end(), 0.0);
      bool filterReordered[2] = {false, false};
      if (lane.amx)
        lane.amx->reset();
      if (lane.amxData)
        lane.amxData->setFilter(filter.data<uint16_t>());
      if (lane.first) {
        lane.first->reset();
        std::fill(lane.firstFilter.begin(), lane.firstFilter.end(), 0.0f);
        std::fill(lane.firstBias.begin(), lane.firstBias.end(), 0.0);
      }
      for (int64_t c = chunks * l / lanes; c < chunks * (l + 1) / lanes; ++c) {
        const int64_t image = c * chunk, images = std::min(chunk, n - image);
        const int which = images == chunk ? 0 : 1;
        auto view = [&](const T *data, const Shape &shape, int64_t size) {
          return Tensor::view(filter.dtype(), batchOf(shape, images),
                              const_cast<T *>(data + image * size));
        };
        Tensor dx =
            Tensor::view(filter.dtype(), batchOf(s_.x, images), lane.dx.data());
        std::vector<Tensor> poolIn = {view(x, s_.x, xImage),
                                      view(g, s_.g, gImage)};
        if (y)
          poolIn.push_back(view(y, s_.y, gImage));
        std::vector<Tensor> poolOut = {
            dx, Tensor::view(filter.dtype(), {s_.channels},
                             lane.biasUnused.data())};
        std::vector<Tensor> dataIn = {dx, filter};
        T *dsrcChunk = first ? lane.dsrc.data() : dsrc + image * srcImage;
        std::vector<Tensor> dataOut = {
            Tensor::view(filter.dtype(), batchOf(s_.src, images), dsrcChunk)};
        const T *srcChunk = source_ ? lane.src.data() : src + image * srcImage;
        const T *y0Chunk =
            source_ ? lane.src.data() : (y0 ? y0 + image * srcImage : nullptr);
        // Recomputed after the source's gradient (which reads only dx), so
        // that both stay in the cache for the two filter gradients.
        auto recompute = [&] {
          if (source_)
            source_->compute(image0 + image * image0Size, images,
                             lane.src.data());
        };
        std::vector<Tensor> filterIn = {Tensor::view(filter.dtype(),
                                                     batchOf(s_.src, images),
                                                     const_cast<T *>(srcChunk)),
                                        dx};
        std::vector<Tensor> filterOut = {
            Tensor::view(DType::kF32, s_.filter, lane.filterPart.data())};
        // (Recorded by this run's forward: every image's, or none.)
        const bool recorded =
            masks_ && masks_->bits.size() >=
                          static_cast<size_t>(n * masks_->imageElements);
        if (masks_)
          lane.pool[which]->setWinnerMasks(
              recorded ? masks_->bits.data() + image * masks_->imageElements
                       : nullptr,
              masks_->imageElements);
        // dx straight onto the AMX data gradient's grid, where both conv
        // gradients read it (no copy, the transpose in whole blocks).
        const bool onGrid = recorded && !lane.grid.empty();
        lane.pool[which]->setGridOutput(onGrid ? lane.amxData->gridImage() : 0,
                                        s_.src[2],
                                        onGrid ? lane.amxData->gridLead() : 0);
        if (onGrid)
          poolOut[0] = Tensor::view(filter.dtype(), {images}, lane.gridData());
        Status st = lane.pool[which]->run(poolIn, poolOut);
        if (st.ok() && onGrid) {
          const uint16_t *grid =
              reinterpret_cast<const uint16_t *>(lane.gridData());
          lane.amxData->computeFromGrid(
              grid, images, reinterpret_cast<uint16_t *>(dsrcChunk));
          recompute();
          if (first)
            lane.first->accumulate(image0 + image * image0Size, dsrcChunk,
                                   y0Chunk, images);
          lane.amx->accumulateFromGrid(
              reinterpret_cast<const uint16_t *>(srcChunk), grid, images,
              lane.amxData->gridImage(), lane.amxData->gridLead());
          continue;
        }
        if (st.ok() && lane.amxData)
          lane.amxData->compute(
              reinterpret_cast<const uint16_t *>(lane.dx.data()), images,
              reinterpret_cast<uint16_t *>(dsrcChunk));
        else if (st.ok()) {
          st = lane.data[which]->runChunk(dataIn, dataOut,
                                          lane.reorderOnce ? 1 : -1,
                                          !filterReordered[which], nullptr);
          filterReordered[which] = true;
        }
        if (st.ok())
          recompute();
        if (st.ok() && first)
          lane.first->accumulate(image0 + image * image0Size, dsrcChunk,
                                 y0Chunk, images);
        if (st.ok() && lane.amx) {
          lane.amx->accumulate(
              reinterpret_cast<const uint16_t *>(srcChunk),
              reinterpret_cast<const uint16_t *>(lane.dx.data()), images);
          continue;
        }
        const void *internal = nullptr;
        if (st.ok())
          st = lane.filter[which]->runChunk(filterIn, filterOut, -1, false,
                                            lane.blocked[which] ? &internal
                                                                : nullptr);
        if (!st.ok()) {
          status[l] = st;
          break;
        }
        // (Element by element, so the blocked sums are the same sums.)
        float *sum =
            internal ? lane.filterBlocked.data() : lane.filterSum.data();
        const float *part = internal ? static_cast<const float *>(internal)
                                     : lane.filterPart.data();
        for (size_t i = 0; i < lane.filterSum.size(); ++i)
          sum[i] += part[i];
      }
      // The blocked sums into the plan's layout, then the tail chunk's
      // part if it was summed there (a + b == b + a: the same bits as
      // adding it last).
      if (lane.blocked[0] && status[l].ok()) {
        Status st = lane.filter[0]->reorderOutput(lane.filterBlocked.data(),
                                                  lane.filterPart.data());
        if (st.ok())
          for (size_t i = 0; i < lane.filterSum.size(); ++i)
            lane.filterSum[i] += lane.filterPart[i];
        else
          status[l] = st;
      }
      if (lane.amx && status[l].ok())
        lane.amx->addInto(lane.filterSum.data());
      if (lane.first && status[l].ok())
        lane.first->addInto(lane.firstFilter.data(), lane.firstBias.data());
    }
    for (const Status &st : status)
      GOPT_RETURN_IF_ERROR(st);
    const int results = first ? 0 : 1;
    T *dfilter = out[results].data<T>(), *dbias = out[results + 1].data<T>();
    if (first) {
      T *dfilter0 = out[2].data<T>(), *dbias0 = out[3].data<T>();
      for (int64_t i = 0; i < s_.firstFilter; ++i) {
        float sum = lanes_[0].firstFilter[i];
        for (int l = 1; l < lanes; ++l)
          sum += lanes_[l].firstFilter[i];
        dfilter0[i] = fromF32<T>(sum);
      }
      for (int64_t ch = 0; ch < s_.firstChannels; ++ch) {
        double sum = 0;
        for (int l = 0; l < lanes; ++l)
          sum += lanes_[l].firstBias[ch];
        dbias0[ch] = fromF32<T>(static_cast<float>(sum));
      }
    }
    for (size_t i = 0; i < lanes_[0].filterSum.size(); ++i) {
      float sum = lanes_[0].filterSum[i];
      for (int l = 1; l < lanes; ++l)
        sum += lanes_[l].filterSum[i];
      dfilter[i] = fromF32<T>(sum);
    }
    for (int64_t ch = 0; ch < s_.channels; ++ch) {
      double sum = 0;
      for (int l = 0; l < lanes; ++l)
        sum += lanes_[l].biasSum[ch];
      dbias[ch] = fromF32<T>(static_cast<float>(sum));
    }
    return Status::success();
  }
  const char *implementation() const override {
    const Lane &lane = lanes_[0];
    if (source_) // (only with the first layer's gradient)
      return lane.amx && lane.amxData ? "chunks+amx+first+recompute"
             : lane.amx               ? "chunks+amx-filter+first+recompute"
             : lane.amxData           ? "chunks+amx-data+first+recompute"
                                      : "chunks+first+recompute";
    if (lane.first)
      return lane.amx && lane.amxData ? "chunks+amx+first"
             : lane.amx               ? "chunks+amx-filter+first"
             : lane.amxData           ? "chunks+amx-data+first"
                                      : "chunks+first";
    return lane.amx && lane.amxData ? "chunks+amx"
           : lane.amx               ? "chunks+amx-filter"
           : lane.amxData           ? "chunks+amx-data"
                                    : "chunks";
  }
  size_t workspaceBytes() const override {
    size_t bytes = 0;
    for (const Lane &lane : lanes_) {
      bytes += lane.dx.size() * sizeof(T) + lane.filterPart.size() * 8 +
               lane.filterBlocked.size() * 4;
      for (int which = 0; which < 2; ++which)
        for (const Kernel *k :
             {lane.data[which].get(), lane.filter[which].get()})
          bytes += k ? k->workspaceBytes() : 0;
      bytes += lane.amx ? lane.amx->workspaceBytes() : 0;
      bytes += lane.amxData ? lane.amxData->workspaceBytes() : 0;
      bytes += (lane.dsrc.size() + lane.src.size()) * sizeof(T);
    }
    return bytes;
  }

private:
  Shapes s_;
  bool windowMask_;
  std::vector<Lane> lanes_;
  // bf16 with the window mask: the forward's record of the pool's winners
  // (x is then not read).
  std::shared_ptr<cpu::PoolWinnerMasks> masks_;
  // The conv whose result is the source, recomputed per chunk (null: read).
  std::unique_ptr<cpu::SingleChannelConvImages> source_;
};

template <typename T>
std::unique_ptr<Kernel> makeChunkedPoolConvGrad(
    const KernelConfig &poolGrad, const KernelConfig &dataGrad,
    const KernelConfig &filterGrad, bool gradNchw, bool windowMask,
    const KernelConfig *firstGrad, std::shared_ptr<cpu::PoolWinnerMasks> masks,
    const KernelConfig *sourceConv) {
  using Kernels = ChunkedPoolConvGradKernel<T>;
  const DType type = std::is_same_v<T, float> ? DType::kF32 : DType::kBF16;
  typename Kernels::Shapes s;
  s.x = poolGrad.inputShapes[0];
  s.y = poolGrad.inputShapes[1];
  s.g = gradNchw ? Shape{s.y[0], s.y[3], s.y[1], s.y[2]} : s.y;
  s.src = filterGrad.inputShapes[0];
  s.filter = filterGrad.outputShapes[0];
  s.channels = s.x[3];
  if (firstGrad) {
    s.image = firstGrad->inputShapes[0];
    s.firstFilter = numElements(firstGrad->outputShapes[0]);
    s.firstChannels = s.src[3];
  }
  const int64_t n = s.x[0];
  // The chunk's pool input, dx, conv source and its gradient within about
  // half a core's L2 (MNIST: 6 images in bf16, 3 in f32).
  const int64_t imageBytes = static_cast<int64_t>(sizeof(T)) *
                             (2 * numElements(s.x) + 2 * numElements(s.src)) /
                             std::max<int64_t>(n, 1);
  int64_t chunkBytes = int64_t(3) << 19;
  if (const char *kb = std::getenv("GOPT_CHUNKED_CONV_GRAD_KB"))
    chunkBytes = int64_t(std::atoi(kb)) << 10;
  s.chunk =
      std::clamp<int64_t>(chunkBytes / std::max<int64_t>(imageBytes, 1), 1, n);
  const int64_t chunks = (n + s.chunk - 1) / s.chunk;
  if (chunks < 2)
    return nullptr;
  const int threads = std::max(1, omp_get_max_threads());
  const int lanes = static_cast<int>(std::min<int64_t>(threads, chunks));
  const int64_t tail = n - (chunks - 1) * s.chunk;
  auto chunked = [](KernelConfig c, int64_t images, std::vector<int> inputs,
                    bool output) {
    for (int i : inputs)
      c.inputShapes[i][0] = images;
    if (output)
      c.outputShapes[0][0] = images;
    return c;
  };
  std::vector<typename Kernels::Lane> lane(lanes);
  bool ok = true;
  const bool reorderOnce = envSwitchOn("GOPT_CHUNKED_CONV_GRAD_REORDER_ONCE");
  omp_set_num_threads(1);
  for (typename Kernels::Lane &l : lane) {
    for (int which = 0; which < 2 && ok; ++which) {
      const int64_t images = which == 0 ? s.chunk : tail;
      KernelConfig pool = chunked(poolGrad, images, {0, 1}, true);
      KernelConfig data = chunked(dataGrad, images, {0}, true);
      KernelConfig filter = chunked(filterGrad, images, {0, 1}, false);
      filter.outputTypes[0] = DType::kF32;
      StatusOr<PoolGeometry> g = poolGeometry(pool);
      if (!g.ok()) {
        ok = false;
        break;
      }
      l.pool[which] = std::make_unique<MaxPoolReluBiasGradKernel<T>>(
          *g, gradNchw, windowMask);
      if (std::is_same_v<T, uint16_t> && which == 0)
        l.amxData = cpu::createAmxDataGrad(data);
      if (!l.amxData)
        l.data[which] = ConvBackwardKernel::createOneDnnConv(data, type);
      // bf16: AMX tile products of our own where they apply (oneDNN's
      // backward-weights kernel ran MNIST's 32->64 layer at a fifth of
      // AMX's forward speed), one per lane for all its chunks.
      if (std::is_same_v<T, uint16_t> && which == 0)
        l.amx = cpu::createAmxFilterGrad(filter);
      if (!l.amx)
        l.filter[which] = ConvBackwardKernel::createOneDnnConv(filter, type);
      ok = (l.amxData || l.data[which]) && (l.amx || l.filter[which]);
    }
    // The filter gradient's sums in oneDNN's layout: the first kernel's,
    // and the tail chunk's where it has the same (the tail is the last
    // chunk of the last lane, so a tail of another layout is added last,
    // after the blocked sums are reordered: the same order of additions).
    l.reorderOnce = reorderOnce;
    if (ok && reorderOnce && l.filter[0]) {
      std::optional<memory::desc> d0 = l.filter[0]->internalOutputDesc();
      if (d0 && d0->get_size() == numElements(s.filter) * sizeof(float)) {
        l.blocked[0] = true;
        l.filterBlocked.resize(numElements(s.filter));
        std::optional<memory::desc> d1 =
            l.filter[1] ? l.filter[1]->internalOutputDesc() : std::nullopt;
        l.blocked[1] = d1 && *d1 == *d0;
      }
    }
    if (firstGrad && ok) {
      // Made for chunks of the first config's batch; it reads the batch
      // from each call.
      l.first = cpu::createSingleChannelReluFilterBiasSums(*firstGrad, type);
      ok = l.first != nullptr;
      l.dsrc.resize(s.chunk * numElements(s.src) / n);
      l.firstFilter.resize(s.firstFilter);
      l.firstBias.resize(s.firstChannels);
      if (sourceConv)
        l.src.resize(s.chunk * numElements(s.src) / n);
    }
    l.dx.resize(s.chunk * numElements(s.x) / n);
    l.filterPart.resize(numElements(s.filter));
    l.filterSum.resize(numElements(s.filter));
    l.biasSum.resize(s.channels);
    l.biasUnused.resize(s.channels);
    for (int which = 0; which < 2; ++which)
      if (l.pool[which])
        l.pool[which]->addBiasSumsInto(l.biasSum.data());
  }
  omp_set_num_threads(threads);
  if (!ok)
    return nullptr;
  if (!std::is_same_v<T, uint16_t> || !windowMask)
    masks = nullptr;
  if (masks) // the fused conv + pool step records them from now on
    masks->record = true;
  // With the masks, both gradients on AMX and windows covering x: each
  // lane's dx on the data gradient's grid.
  // (GOPT_POOL_GRAD_GRID=0: dense dx, copied onto the grid, for comparing.)
  const char *grid = std::getenv("GOPT_POOL_GRAD_GRID");
  StatusOr<PoolGeometry> pg = poolGeometry(poolGrad);
  if (masks && pg.ok() && pg->oh * pg->kh == pg->h &&
      pg->ow * pg->kw == pg->w && !(grid && std::strcmp(grid, "0") == 0))
    for (typename Kernels::Lane &l : lane)
      if (l.amx && l.amxData)
        l.grid.assign(s.chunk * l.amxData->gridImage() + 64 / sizeof(T), 0);
  std::unique_ptr<cpu::SingleChannelConvImages> source;
  if (sourceConv) {
    source = cpu::createSingleChannelConvImages(*sourceConv);
    if (!source || source->resultImage() != numElements(s.src) / n)
      return nullptr;
    s.sourceInputs = static_cast<int>(sourceConv->inputShapes.size());
  }
  return std::make_unique<Kernels>(std::move(s), windowMask, std::move(lane),
                                   std::move(masks), std::move(source));
}
#endif

//===----------------------------------------------------------------------===//
// avg_pool_grad
//===----------------------------------------------------------------------===//

// The reference's scatter (RefTraining.cpp) per (n, c) plane (NCHW) or per
// image with channels innermost (NHWC), in parallel over them: planes and
// images never share elements. dy / count is summed in f32 (the reference
// in double) and rounded once for bf16.
template <typename T> class AvgPoolGradKernel : public Kernel {
public:
  AvgPoolGradKernel(const PoolGeometry &g, bool includePad)
      : g_(g), includePad_(includePad) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const PoolGeometry g = g_;
    const T *dy = in[1].data<T>();
    T *dx = out[0].data<T>();
    const int64_t channels = g.nchw ? 1 : g.c;
    const int64_t items = g.nchw ? g.n * g.c : g.n;
    const int64_t xSize = g.h * g.w * channels, ySize = g.oh * g.ow * channels;
    const bool parallel = g.n * g.c * g.h * g.w >= kParallelThreshold;
#pragma omp parallel if (parallel)
    {
      std::vector<float> acc(xSize);
#pragma omp for schedule(static)
      for (int64_t item = 0; item < items; ++item) {
        std::fill(acc.begin(), acc.end(), 0.0f);
        const T *pdy = dy + item * ySize;
        for (int64_t oh = 0; oh < g.oh; ++oh)
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            int64_t h0 = oh * g.sh - g.padTop, w0 = ow * g.sw - g.padLeft;
            int64_t hb = std::max<int64_t>(h0, 0),
                    he = std::min(h0 + g.kh, g.h);
            int64_t wb = std::max<int64_t>(w0, 0),
                    we = std::min(w0 + g.kw, g.w);
            int64_t count = avgPoolCount(h0, w0, g.kh, g.kw, g.h, g.w,
                                         g.padBottom, g.padRight, includePad_);
            if (count == 0)
              continue;
            const T *d = pdy + (oh * g.ow + ow) * channels;
            for (int64_t ih = hb; ih < he; ++ih)
              for (int64_t iw = wb; iw < we; ++iw) {
                float *a = acc.data() + (ih * g.w + iw) * channels;
#pragma omp simd
                for (int64_t ch = 0; ch < channels; ++ch)
                  a[ch] += toF32(d[ch]) / static_cast<float>(count);
              }
          }
        T *pdx = dx + item * xSize;
#pragma omp simd
        for (int64_t i = 0; i < xSize; ++i)
          pdx[i] = fromF32<T>(acc[i]);
      }
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  PoolGeometry g_;
  bool includePad_;
};

StatusOr<std::unique_ptr<Kernel>> createAvgPoolGrad(const KernelConfig &c) {
  DType type = loopType(c);
  if (type == DType::kInvalid)
    return none();
  GOPT_ASSIGN_OR_RETURN(PoolGeometry g, poolGeometry(c));
  bool includePad = c.attrs().getBool("count_include_pad");
  return byElementType(type, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<AvgPoolGradKernel<decltype(t)>>(g, includePad);
  });
}

//===----------------------------------------------------------------------===//
// sgd_update / adam_update
//===----------------------------------------------------------------------===//

class SgdUpdateKernel : public Kernel {
public:
  SgdUpdateKernel(int64_t elements, float lr, float momentum, float decay,
                  bool nesterov, bool bf16Grad = false)
      : elements_(elements), lr_(lr), momentum_(momentum), decay_(decay),
        nesterov_(nesterov), bf16Grad_(bf16Grad) {}
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    if (bf16Grad_)
      return update(in, out, in[1].data<uint16_t>());
    return update(in, out, in[1].data<float>());
  }
  // G: the gradient's element, float or bf16 (the cast the schedule took
  // in, exact).
  template <typename G>
  Status update(const std::vector<Tensor> &in, std::vector<Tensor> &out,
                const G *grad) {
    const float *p = in[0].data<float>(), *vel = in[2].data<float>();
    float *newP = out[0].data<float>(), *newV = out[1].data<float>();
    const float lr = lr_, momentum = momentum_, decay = decay_;
    const bool nesterov = nesterov_;
    parallelRange(elements_, [&](int64_t b, int64_t e) {
#pragma omp simd
      for (int64_t i = b; i < e; ++i) {
        float g = toF32(grad[i]) + decay * p[i];
        float v = momentum * vel[i] + g;
        g = nesterov ? g + momentum * v : v;
        newV[i] = v;
        newP[i] = p[i] - lr * g;
      }
    });
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  int64_t elements_;
  float lr_, momentum_, decay_;
  bool nesterov_, bf16Grad_;
};

StatusOr<std::unique_ptr<Kernel>> makeSgdUpdate(const KernelConfig &c,
                                                bool bf16Grad) {
  if (!c.allOfType(DType::kF32))
    return none();
  OpAttrs a = c.attrs();
  return std::unique_ptr<Kernel>(std::make_unique<SgdUpdateKernel>(
      numElements(c.inputShapes[0]), static_cast<float>(a.getFloat("lr")),
      static_cast<float>(a.getFloat("momentum")),
      static_cast<float>(a.getFloat("weight_decay")), a.getBool("nesterov"),
      bf16Grad));
}
StatusOr<std::unique_ptr<Kernel>> createSgdUpdate(const KernelConfig &c) {
  return makeSgdUpdate(c, false);
}

class AdamUpdateKernel : public Kernel {
public:
  AdamUpdateKernel(int64_t elements, double lr, double beta1, double beta2,
                   double eps, double decay, bool bf16Grad = false)
      : elements_(elements), lr_(lr), beta1_(beta1), beta2_(beta2), eps_(eps),
        decay_(decay), bf16Grad_(bf16Grad) {}
  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    double step = in[4].data<float>()[0];
    if (!(step >= 1))
      return invalidArgument("adam_update step ", step, " must be >= 1");
    // Bias corrections in double, as PyTorch computes them in Python.
    const float stepSize =
        static_cast<float>(lr_ / (1 - std::pow(beta1_, step)));
    const float invSqrtBc2 =
        static_cast<float>(1 / std::sqrt(1 - std::pow(beta2_, step)));
    const float b1 = static_cast<float>(beta1_),
                b2 = static_cast<float>(beta2_);
    const float c1 = static_cast<float>(1 - beta1_),
                c2 = static_cast<float>(1 - beta2_);
    const float eps = static_cast<float>(eps_),
                decay = static_cast<float>(decay_);
    const float *p = in[0].data<float>(), *m = in[2].data<float>(),
                *v = in[3].data<float>();
    // A bf16 gradient (the cast to f32 the schedule took in) widens
    // exactly: the same f32 values as the cast's.
    const float *grad = bf16Grad_ ? nullptr : in[1].data<float>();
    const uint16_t *grad16 = bf16Grad_ ? in[1].data<uint16_t>() : nullptr;
    float *newP = out[0].data<float>(), *newM = out[1].data<float>(),
          *newV = out[2].data<float>();
    parallelRange(elements_, [&](int64_t b, int64_t e) {
      int64_t i = b;
#ifdef __SSE2__
      // Explicit SIMD: without -fno-math-errno GCC keeps std::sqrt scalar
      // (and the loop with it). Same operations in the same order as the
      // scalar tail.
      const __m128 vDecay = _mm_set1_ps(decay), vB1 = _mm_set1_ps(b1),
                   vC1 = _mm_set1_ps(c1), vB2 = _mm_set1_ps(b2),
                   vC2 = _mm_set1_ps(c2), vInv = _mm_set1_ps(invSqrtBc2),
                   vEps = _mm_set1_ps(eps), vStep = _mm_set1_ps(stepSize);
      for (; i + 4 <= e; i += 4) {
        __m128 pi = _mm_loadu_ps(p + i);
        __m128 gi =
            grad ? _mm_loadu_ps(grad + i)
                 : _mm_castsi128_ps(_mm_unpacklo_epi16(
                       _mm_setzero_si128(),
                       _mm_loadl_epi64(
                           reinterpret_cast<const __m128i *>(grad16 + i))));
        __m128 g = _mm_add_ps(gi, _mm_mul_ps(vDecay, pi));
        __m128 mi = _mm_add_ps(_mm_mul_ps(vB1, _mm_loadu_ps(m + i)),
                               _mm_mul_ps(vC1, g));
        __m128 vi = _mm_add_ps(_mm_mul_ps(vB2, _mm_loadu_ps(v + i)),
                               _mm_mul_ps(_mm_mul_ps(vC2, g), g));
        __m128 denom = _mm_add_ps(_mm_mul_ps(_mm_sqrt_ps(vi), vInv), vEps);
        _mm_storeu_ps(newM + i, mi);
        _mm_storeu_ps(newV + i, vi);
        _mm_storeu_ps(newP + i,
                      _mm_sub_ps(pi, _mm_div_ps(_mm_mul_ps(vStep, mi), denom)));
      }
#endif
      for (; i < e; ++i) {
        float g = (grad ? grad[i] : toF32(grad16[i])) + decay * p[i];
        float mi = b1 * m[i] + c1 * g;
        float vi = b2 * v[i] + c2 * g * g;
        float denom = std::sqrt(vi) * invSqrtBc2 + eps;
        newM[i] = mi;
        newV[i] = vi;
        newP[i] = p[i] - stepSize * mi / denom;
      }
    });
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  int64_t elements_;
  double lr_, beta1_, beta2_, eps_, decay_;
  bool bf16Grad_;
};

StatusOr<std::unique_ptr<Kernel>> makeAdamUpdate(const KernelConfig &c,
                                                 bool bf16Grad) {
  if (!c.allOfType(DType::kF32))
    return none();
  OpAttrs a = c.attrs();
  return std::unique_ptr<Kernel>(std::make_unique<AdamUpdateKernel>(
      numElements(c.inputShapes[0]), a.getFloat("lr"), a.getFloat("beta1"),
      a.getFloat("beta2"), a.getFloat("epsilon"), a.getFloat("weight_decay"),
      bf16Grad));
}
StatusOr<std::unique_ptr<Kernel>> createAdamUpdate(const KernelConfig &c) {
  return makeAdamUpdate(c, false);
}

//===----------------------------------------------------------------------===//
// batch_norm_grad
//===----------------------------------------------------------------------===//

// Over the [outer, C, inner] view of x (NCHW: inner = H*W; NHWC and rank
// 2: inner = 1). Per channel, in double: sumDy = sum(dy) and
// sumDyXmu = sum(dy * (x - mean)); then
// dx = A*dy + B*(x - mean) + D with A = scale*invStd,
// B = -scale*invStd^3*sumDyXmu/M, D = -A*sumDy/M.
class BatchNormGradKernel : public Kernel {
public:
  BatchNormGradKernel(int64_t outer, int64_t channels, int64_t inner,
                      double eps, Communicator *crossReplica,
                      CommunicationQueue *queue, std::string name)
      : outer_(outer), channels_(channels), inner_(inner), eps_(eps),
        crossReplica_(crossReplica), queue_(queue), name_(std::move(name)) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const int64_t outer = outer_, channels = channels_, inner = inner_;
    const float *dy = in[0].data<float>(), *x = in[1].data<float>(),
                *scale = in[2].data<float>(), *mean = in[3].data<float>(),
                *var = in[4].data<float>();
    float *dx = out[0].data<float>(), *dscale = out[1].data<float>(),
          *doffset = out[2].data<float>();
    double count = static_cast<double>(outer * inner);
    const bool parallel = outer * channels * inner >= kParallelThreshold;
    std::vector<double> sumDy(channels, 0.0), sumDyXmu(channels, 0.0);
    if (inner >= 16) {
      // NCHW: each channel's rows are contiguous; one channel per thread.
#pragma omp parallel for if (parallel) schedule(static)
      for (int64_t c = 0; c < channels; ++c) {
        double s = 0, sx = 0;
        const float m = mean[c];
        for (int64_t o = 0; o < outer; ++o) {
          const float *pdy = dy + (o * channels + c) * inner;
          const float *px = x + (o * channels + c) * inner;
          double rs = 0, rsx = 0;
#pragma omp simd reduction(+ : rs, rsx)
          for (int64_t i = 0; i < inner; ++i) {
            rs += pdy[i];
            rsx += static_cast<double>(pdy[i]) * (px[i] - m);
          }
          s += rs;
          sx += rsx;
        }
        sumDy[c] = s;
        sumDyXmu[c] = sx;
      }
    } else {
      // Channels innermost: rows split among threads, per-thread sums.
      std::vector<double> both;
      channelSums(
          outer, 2 * channels, parallel, both, [&](int64_t o, double *local) {
            double *localXmu = local + channels;
            const float *pdy = dy + o * channels * inner;
            const float *px = x + o * channels * inner;
            if (inner == 1) {
#pragma omp simd
              for (int64_t c = 0; c < channels; ++c) {
                local[c] += pdy[c];
                localXmu[c] += static_cast<double>(pdy[c]) * (px[c] - mean[c]);
              }
              return;
            }
            for (int64_t c = 0; c < channels; ++c)
              for (int64_t i = 0; i < inner; ++i) {
                float d = pdy[c * inner + i];
                local[c] += d;
                localXmu[c] +=
                    static_cast<double>(d) * (px[c * inner + i] - mean[c]);
              }
          });
      for (int64_t c = 0; c < channels; ++c) {
        sumDy[c] = both[c];
        sumDyXmu[c] = both[channels + c];
      }
    }
    // dscale and doffset are this replica's sums; with cross_replica dx
    // takes the global batch's (the reference's comment says why).
    for (int64_t c = 0; c < channels; ++c) {
      double invStd = 1.0 / std::sqrt(static_cast<double>(var[c]) + eps_);
      dscale[c] = static_cast<float>(sumDyXmu[c] * invStd);
      doffset[c] = static_cast<float>(sumDy[c]);
    }
    if (crossReplica_) {
      std::vector<double> sums(sumDy);
      sums.insert(sums.end(), sumDyXmu.begin(), sumDyXmu.end());
      sums.push_back(count);
      GOPT_RETURN_IF_ERROR(
          sumAcrossReplicas(crossReplica_, queue_, sums, name_ + " sums"));
      std::copy(sums.begin(), sums.begin() + channels, sumDy.begin());
      std::copy(sums.begin() + channels, sums.begin() + 2 * channels,
                sumDyXmu.begin());
      count = sums.back();
    }
    std::vector<float> a(channels), b(channels), d(channels);
    for (int64_t c = 0; c < channels; ++c) {
      double invStd = 1.0 / std::sqrt(static_cast<double>(var[c]) + eps_);
      double ac = scale[c] * invStd;
      a[c] = static_cast<float>(ac);
      b[c] = static_cast<float>(
          count ? -ac * invStd * invStd * sumDyXmu[c] / count : 0.0);
      d[c] = static_cast<float>(count ? -ac * sumDy[c] / count : 0.0);
    }
    const float *pa = a.data(), *pb = b.data(), *pd = d.data();
    if (inner == 1) { // channels innermost: vectorize over them
#pragma omp parallel for if (parallel) schedule(static)
      for (int64_t o = 0; o < outer; ++o) {
        const float *pdy = dy + o * channels, *px = x + o * channels;
        float *pdx = dx + o * channels;
#pragma omp simd
        for (int64_t c = 0; c < channels; ++c)
          pdx[c] = pa[c] * pdy[c] + pb[c] * (px[c] - mean[c]) + pd[c];
      }
      return Status::success();
    }
#pragma omp parallel for if (parallel) schedule(static)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t base = (o * channels + c) * inner;
        const float ac = a[c], bc = b[c], dc = d[c], m = mean[c];
#pragma omp simd
        for (int64_t i = 0; i < inner; ++i)
          dx[base + i] = ac * dy[base + i] + bc * (x[base + i] - m) + dc;
      }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  int64_t outer_, channels_, inner_;
  double eps_;
  Communicator *crossReplica_; // null unless cross_replica
  CommunicationQueue *queue_;
  std::string name_;
};

StatusOr<std::unique_ptr<Kernel>> createBatchNormGrad(const KernelConfig &c) {
  if (!c.allOfType(DType::kF32))
    return none();
  const Shape &x = c.inputShapes[1];
  int64_t rank = static_cast<int64_t>(x.size());
  OpAttrs attrs = c.attrs();
  int64_t axis = channelAxis(attrs.getString("data_format"), rank);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= x[d];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= x[d];
  return std::unique_ptr<Kernel>(std::make_unique<BatchNormGradKernel>(
      outer, x[axis], inner, attrs.getFloat("epsilon"),
      attrs.getBool("cross_replica") ? c.communicator : nullptr,
      c.communicationQueue, c.op->name()));
}

//===----------------------------------------------------------------------===//
// reduce_sum / reduce_mean
//===----------------------------------------------------------------------===//

// out[k] = sum over a, b of x[a, k, b] for the [outer, kept, inner] view
// of x (the reduced axes are the leading and trailing dims around one
// contiguous block of kept dims), summed in double as the reference;
// divided by outer*inner for reduce_mean. T: float (f32) or uint16_t
// (bf16, rounded once from the f32 result).
// sums[k] += rows[a][k] over `rows` rows of `kept` entries: each sum adds
// its rows in order, whatever the vector width.
template <typename T>
GOPT_VECTOR_CLONES void addRows(const T *x, int64_t rows, int64_t kept,
                                float *sums) {
  for (int64_t a = 0; a < rows; ++a) {
    const T *row = x + a * kept;
#pragma omp simd
    for (int64_t k = 0; k < kept; ++k)
      sums[k] += toF32(row[k]);
  }
}

template <typename T> class ReduceKernel : public Kernel {
public:
  ReduceKernel(int64_t outer, int64_t kept, int64_t inner, bool mean)
      : outer_(outer), kept_(kept), inner_(inner), mean_(mean) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const int64_t outer = outer_, kept = kept_, inner = inner_;
    const T *x = in[0].data<T>();
    T *y = out[0].data<T>();
    const double scale = mean_ && outer * inner != 0
                             ? 1.0 / static_cast<double>(outer * inner)
                             : 1.0;
    const bool parallel = outer * kept * inner >= kParallelThreshold;
    const int threads = parallel ? omp_get_max_threads() : 1;
    if (outer < threads && kept >= threads) {
      // Few outer rows, enough kept entries: each thread owns some outputs.
#pragma omp parallel for if (parallel) schedule(static)
      for (int64_t k = 0; k < kept; ++k) {
        double sum = 0;
        for (int64_t a = 0; a < outer; ++a)
          sum += blockSum(x + (a * kept + k) * inner, inner);
        y[k] = fromF32<T>(static_cast<float>(sum * scale));
      }
      return Status::success();
    }
    // Threads split `outer` and read x in memory order (a bias gradient
    // streams through dy once), each keeping partial sums per kept entry,
    // merged in thread order so that the result does not depend on timing.
    std::vector<double> partials(static_cast<size_t>(threads) * kept, 0.0);
#pragma omp parallel num_threads(threads) if (parallel)
    {
      double *local = partials.data() + omp_get_thread_num() * kept;
      std::vector<float> chunk(inner == 1 ? kept : 0);
      const int64_t chunks = (outer + kChunk - 1) / kChunk;
#pragma omp for schedule(static)
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t aEnd = std::min(outer, (c + 1) * kChunk);
        if (inner == 1) {
          // Kept entries innermost (NHWC channels): f32 sums over up to
          // kChunk rows, vectorized across the entries, then into double.
          std::fill(chunk.begin(), chunk.end(), 0.0f);
          float *pc = chunk.data();
          addRows(x + c * kChunk * kept, aEnd - c * kChunk, kept, pc);
          for (int64_t k = 0; k < kept; ++k)
            local[k] += pc[k];
          continue;
        }
        for (int64_t a = c * kChunk; a < aEnd; ++a)
          for (int64_t k = 0; k < kept; ++k)
            local[k] += blockSum(x + (a * kept + k) * inner, inner);
      }
    }
    for (int64_t k = 0; k < kept; ++k) {
      double sum = 0;
      for (int t = 0; t < threads; ++t)
        sum += partials[t * kept + k];
      y[k] = fromF32<T>(static_cast<float>(sum * scale));
    }
    return Status::success();
  }
  const char *implementation() const override { return "fast"; }

private:
  // Rows (or elements) summed in f32 before joining a double sum: f32 keeps
  // the loops 16 lanes wide, and the double sum of short f32 sums stays
  // within a few ulps of the reference's all-double one.
  static constexpr int64_t kChunk = 64;

  // The sum of n contiguous elements: f32 sums of kChunk * 4 elements
  // (vectorized) added in double.
  static double blockSum(const T *p, int64_t n) {
    double sum = 0;
    for (int64_t b = 0; b < n; b += kChunk * 4) {
      const int64_t e = std::min(n, b + kChunk * 4);
      float part = 0;
#pragma omp simd reduction(+ : part)
      for (int64_t i = b; i < e; ++i)
        part += toF32(p[i]);
      sum += part;
    }
    return sum;
  }

  int64_t outer_, kept_, inner_;
  bool mean_;
};

StatusOr<std::unique_ptr<Kernel>> createReduce(const KernelConfig &c) {
  DType type = loopType(c);
  if (type == DType::kInvalid)
    return none();
  const Shape &x = c.inputShapes[0];
  int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> axes = c.attrs().getInts("axes");
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes)
    reduced[a < 0 ? a + rank : a] = true;
  // Dims of size 1 belong to either side; the others must read
  // reduced* kept* reduced*.
  int64_t firstKept = -1, lastKept = -1;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced[d] && x[d] != 1) {
      if (firstKept < 0)
        firstKept = d;
      lastKept = d;
    }
  int64_t outer = 1, kept = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (firstKept >= 0 && d >= firstKept && d <= lastKept) {
      if (reduced[d] && x[d] != 1)
        return none(); // a reduced dim between kept ones
      kept *= x[d];
    } else {
      (firstKept >= 0 && d > lastKept ? inner : outer) *= x[d];
    }
  }
  bool mean = c.op->kind() == "reduce_mean";
  return byElementType(type, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<ReduceKernel<decltype(t)>>(outer, kept, inner,
                                                       mean);
  });
}

} // namespace

std::unique_ptr<Kernel>
cpu::createOptimizerUpdateBf16Grad(const KernelConfig &update) {
  if (!envSwitchOn("GOPT_OPTIMIZER_BF16_GRAD"))
    return nullptr;
  StatusOr<std::unique_ptr<Kernel>> k =
      update.op->kind() == "adam_update" ? makeAdamUpdate(update, true)
      : update.op->kind() == "sgd_update"
          ? makeSgdUpdate(update, true)
          : StatusOr<std::unique_ptr<Kernel>>(std::unique_ptr<Kernel>());
  return k.ok() ? std::move(*k) : nullptr;
}

std::unique_ptr<Kernel>
cpu::createMaxPoolReluBiasGrad(const KernelConfig &maxPoolGrad, DType biasType,
                               bool gradNchw, bool windowMask) {
#ifdef GOPT_HAVE_AVX512_POOL_GRAD
  DType type = loopType(maxPoolGrad);
  if (type == DType::kInvalid || biasType != type || !avx512bwSupported() ||
      !reluPoolBiasFusionEnabled())
    return nullptr;
  StatusOr<PoolGeometry> g = poolGeometry(maxPoolGrad);
  if (!g.ok() || g->nchw || !windowsTile(*g) || g->c % 16 != 0 ||
      g->h * g->w * g->c > INT32_MAX)
    return nullptr;
  if (type == DType::kF32)
    return std::make_unique<MaxPoolReluBiasGradKernel<float>>(*g, gradNchw,
                                                              windowMask);
  return std::make_unique<MaxPoolReluBiasGradKernel<uint16_t>>(*g, gradNchw,
                                                               windowMask);
#else
  (void)maxPoolGrad;
  (void)biasType;
  (void)gradNchw;
  (void)windowMask;
  return nullptr;
#endif
}

std::unique_ptr<Kernel> cpu::createChunkedPoolConvGrad(
    const KernelConfig &maxPoolGrad, const KernelConfig &dataGrad,
    const KernelConfig &filterGrad, bool gradNchw, bool windowMask,
    const KernelConfig *firstGrad, std::shared_ptr<PoolWinnerMasks> masks,
    const KernelConfig *sourceConv) {
  if (!envSwitchOn("GOPT_CHUNKED_CONV_GRAD"))
    return nullptr;
  // The fused pool step's own conditions, on the whole batch.
  DType type = loopType(maxPoolGrad);
  if (!createMaxPoolReluBiasGrad(maxPoolGrad, type, gradNchw, windowMask))
    return nullptr;
#ifdef GOPT_HAVE_AVX512_POOL_GRAD
  for (const KernelConfig *c : {&dataGrad, &filterGrad})
    if (!c->allOfType(type) || c->attrs().getString("data_format") != "NHWC" ||
        c->inputShapes[0].size() != 4 || c->outputShapes[0].size() != 4)
      return nullptr;
  // Each operand batch-major with the pool's batch: chunks are slices.
  const Shape &x = maxPoolGrad.inputShapes[0];
  if (dataGrad.inputShapes[0] != x || filterGrad.inputShapes[1] != x ||
      dataGrad.outputShapes[0] != filterGrad.inputShapes[0])
    return nullptr;
  // The first layer's filter gradient reads the source's gradient (its dy,
  // of the source's shape and type) with the same batch.
  if (firstGrad &&
      (!firstChunkEnabled() || firstGrad->inputShapes.size() != 2 ||
       firstGrad->inputShapes[1] != dataGrad.outputShapes[0] ||
       firstGrad->inputShapes[0].empty() ||
       firstGrad->inputShapes[0][0] != x[0] || !firstGrad->allOfType(type)))
    return nullptr;
  // The recomputed source: bf16 (f32 training keeps its stored result),
  // the source's shape, from the first layer's images.
  if (sourceConv && (type != DType::kBF16 || !firstGrad ||
                     !cpu::firstConvRecomputeEnabled() ||
                     sourceConv->outputShapes.size() != 1 ||
                     sourceConv->outputShapes[0] != dataGrad.outputShapes[0] ||
                     sourceConv->inputShapes.size() < 2 ||
                     sourceConv->inputShapes[0] != firstGrad->inputShapes[0] ||
                     sourceConv->inputTypes[0] != DType::kBF16 ||
                     sourceConv->inputTypes[1] != DType::kBF16 ||
                     sourceConv->outputTypes[0] != DType::kBF16))
    return nullptr;
  if (type == DType::kF32)
    return makeChunkedPoolConvGrad<float>(maxPoolGrad, dataGrad, filterGrad,
                                          gradNchw, windowMask, firstGrad,
                                          nullptr, nullptr);
  // The masks' layout is the gradient's windows over all channels.
  if (masks) {
    StatusOr<PoolGeometry> g = poolGeometry(maxPoolGrad);
    if (!g.ok() || g->c % 16 != 0 || g->sh != g->kh || g->sw != g->kw ||
        g->padTop != 0 || g->padLeft != 0 ||
        masks->imageElements != g->oh * g->ow * (g->c / 16) * g->kh * g->kw)
      masks = nullptr;
  }
  return makeChunkedPoolConvGrad<uint16_t>(maxPoolGrad, dataGrad, filterGrad,
                                           gradNchw, windowMask, firstGrad,
                                           std::move(masks), sourceConv);
#else
  return nullptr;
#endif
}

namespace {

// C[M, N] = A^T B as C^T = B^T A (createSwappedWeightGradMatmul): oneDNN's
// brgemm matmul splits and blocks the rows of its result, and the dense
// layer's weight gradient dy^T x has only M = 128 of them against N = 9216
// columns; the swapped product has 9216 rows. Its [N, M] result is then
// transposed into C in 16x16 blocks (4.7 MB for the MNIST CNN's layer,
// about 1 ms).
class SwappedWeightGradMatmul : public Kernel {
public:
  SwappedWeightGradMatmul(int64_t m, int64_t n, int64_t k)
      : m_(m), n_(n), k_(k), stream_(cpuEngine()) {}

  Status init() {
    try {
      // src = B^T [N, K] over B's [K, N] buffer; weights = A [K, M]; dst
      // [N, M] plain (a transposed dst takes oneDNN's reference kernel).
      memory::desc src({n_, k_}, memory::data_type::f32, Dims{1, n_});
      memory::desc wei({k_, m_}, memory::data_type::f32, Dims{m_, 1});
      memory::desc dst({n_, m_}, memory::data_type::f32, Dims{m_, 1});
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, dst), attr,
                                      cpuEngine());
      const char *impl = pd.impl_info_str();
      if (impl && std::strncmp(impl, "ref", 3) == 0)
        return internalError("swapped matmul: only oneDNN's reference");
      primitive_ = dnnl::matmul(pd);
      src_ = memory(src, cpuEngine(), DNNL_MEMORY_NONE);
      wei_ = memory(wei, cpuEngine(), DNNL_MEMORY_NONE);
      product_.resize(static_cast<size_t>(n_ * m_));
      dst_ = memory(dst, cpuEngine(), product_.data());
      scratch_ = memory(pd.scratchpad_desc(), cpuEngine());
    } catch (const dnnl::error &e) {
      return internalError("oneDNN matmul: ", e.what());
    }
    return Status::success();
  }

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    try {
      wei_.set_data_handle(const_cast<void *>(in[0].data()));
      src_.set_data_handle(const_cast<void *>(in[1].data()));
      primitive_.execute(stream_, {{DNNL_ARG_SRC, src_},
                                   {DNNL_ARG_WEIGHTS, wei_},
                                   {DNNL_ARG_DST, dst_},
                                   {DNNL_ARG_SCRATCHPAD, scratch_}});
      stream_.wait();
    } catch (const dnnl::error &e) {
      return internalError("oneDNN: ", e.what());
    }
    transpose(product_.data(), out[0].data<float>());
    return Status::success();
  }
  const char *implementation() const override { return "onednn-swapped"; }
  size_t workspaceBytes() const override {
    return product_.size() * 4 + scratch_.get_desc().get_size();
  }

private:
  // c[j][r] = p[r][j] for p [N, M]: 16 rows of p at a time, the threads
  // taking whole row blocks (disjoint columns of c).
  void transpose(const float *p, float *c) const {
    const int64_t blocks = n_ / 16, m = m_, n = n_;
#pragma omp parallel for schedule(static) if (n * m >= kParallelThreshold)
    for (int64_t b = 0; b < blocks; ++b) {
#ifdef GOPT_HAVE_AVX512_LANES
      if (avx512bwSupported()) {
        transposeBlock(p, c, b * 16);
        continue;
      }
#endif
      for (int64_t j = 0; j < m; ++j)
        for (int64_t r = b * 16; r < b * 16 + 16; ++r)
          c[j * n + r] = p[r * m + j];
    }
  }
#ifdef GOPT_HAVE_AVX512_LANES
  GOPT_AVX512BW void transposeBlock(const float *p, float *c,
                                    int64_t r0) const {
    for (int64_t j0 = 0; j0 < m_; j0 += 16) {
      __m512i v[16];
      for (int64_t i = 0; i < 16; ++i)
        v[i] = _mm512_loadu_si512(p + (r0 + i) * m_ + j0);
      transpose16x16(v);
      for (int64_t j = 0; j < 16; ++j)
        _mm512_storeu_si512(c + (j0 + j) * n_ + r0, v[j]);
    }
  }
#endif

  int64_t m_, n_, k_;
  dnnl::stream stream_;
  dnnl::primitive primitive_;
  memory src_, wei_, dst_, scratch_;
  std::vector<float> product_;
};

} // namespace

std::unique_ptr<Kernel>
cpu::createSwappedWeightGradMatmul(const KernelConfig &c) {
  if (!envSwitchOn("GOPT_F32_WEIGHT_GRAD_SWAP") || c.inputShapes.size() != 2 ||
      c.outputShapes.size() != 1 || !c.allOfType(DType::kF32))
    return nullptr;
  const Shape &a = c.inputShapes[0], &b = c.inputShapes[1],
              &r = c.outputShapes[0];
  OpAttrs attrs = c.attrs();
  if (a.size() != 2 || b.size() != 2 || r.size() != 2 ||
      !attrs.getBool("transpose_a") || attrs.getBool("transpose_b"))
    return nullptr;
  const int64_t k = a[0], m = a[1], n = b[1];
  // K >= 512: at K = 256 (batch 256) the swapped product saved less
  // than the transpose costs (docs/architecture.md).
  if (b[0] != k || r[0] != m || r[1] != n || m >= n || m % 16 || n % 16 ||
      m == 0 || k < 512)
    return nullptr;
  auto kernel = std::make_unique<SwappedWeightGradMatmul>(m, n, k);
  if (!kernel->init().ok())
    return nullptr;
  return kernel;
}

bool cpu::firstChunkEnabled() {
  return envSwitchOn("GOPT_CHUNKED_FIRST_CONV_GRAD");
}

bool cpu::reluPoolBiasFusionEnabled() {
  return envSwitchOn("GOPT_RELU_POOL_BIAS_GRAD");
}

void registerTrainingFastKernels(KernelRegistry &registry) {
  registry.registerKernel("conv2d_backprop_input", "cpu",
                          ConvBackwardKernel::create);
  registry.registerKernel("conv2d_backprop_filter", "cpu",
                          ConvBackwardKernel::create);
  registry.registerKernel("relu_grad", "cpu", createReluGrad);
  registry.registerKernel("max_pool_grad", "cpu", createMaxPoolGrad);
  registry.registerKernel("avg_pool_grad", "cpu", createAvgPoolGrad);
  registry.registerKernel("sgd_update", "cpu", createSgdUpdate);
  registry.registerKernel("adam_update", "cpu", createAdamUpdate);
  registry.registerKernel("batch_norm_grad", "cpu", createBatchNormGrad);
  registry.registerKernel("reduce_sum", "cpu", createReduce);
  registry.registerKernel("reduce_mean", "cpu", createReduce);
}

} // namespace gopt::runtime
