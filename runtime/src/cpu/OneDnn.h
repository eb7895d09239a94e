//===- OneDnn.h - oneDNN kernels that work on blocked layouts ---*- C++ -*-===//
//
// The CPU schedule keeps f32 and bf16 activations in the layouts oneDNN
// picks (e.g. nChw8c, nChw16c) between oneDNN ops. These factories create
// kernels whose input and output layouts are oneDNN memory descs; the schedule
// inserts reorders where a tensor is not in the layout a kernel reads.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_ONEDNN_H
#define GOPT_RUNTIME_SRC_CPU_ONEDNN_H

#include "gopt/runtime/Kernel.h"

#include <dnnl.hpp>

#include <optional>
#include <vector>

namespace gopt::runtime::cpu {

dnnl::engine &cpuEngine();

// A kernel whose arguments are in oneDNN layouts.
class LayoutKernel : public Kernel {
public:
  // The layout input `i` must be in (only for inputs the schedule passes
  // as activations: conv's src, pooling's src, ...).
  virtual dnnl::memory::desc inputDesc(int i) const = 0;
  virtual dnnl::memory::desc outputDesc() const = 0;
};

// Whether layouts `a` and `b` place every element at the same byte (the
// same dims and type, and nChw16c of 16 channels is NHWC): a tensor in one
// is already in the other, with no reorder.
bool sameBytes(const dnnl::memory::desc &a, const dnnl::memory::desc &b);

// oneDNN's data type for the element types its kernels compute in (f32,
// bf16); undef for the others.
dnnl::memory::data_type oneDnnType(DType dtype);

// oneDNN's data type of the element types the schedule keeps in oneDNN
// layouts: those of oneDnnType and the int8 ones (i8 as s8, u8).
dnnl::memory::data_type layoutType(DType dtype);

// The plain row-major layout of a `dtype` tensor of `shape`.
dnnl::memory::desc plainDesc(const Shape &shape, DType dtype);

// `md`'s layout with elements of `dtype`: a reorder into it converts.
dnnl::memory::desc withType(const dnnl::memory::desc &md, DType dtype);

// Activations after the convolution itself, in oneDNN post-op order:
// `sum` adds the destination's previous contents (an in-place residual),
// then `activation` ("none", "relu", "relu6", "sigmoid", or "clip" with
// clipMin/clipMax) applies.
struct ConvPostOps {
  bool sum = false;
  std::string activation = "none";
  float clipMin = 0, clipMax = 0;
  // Elementwise ops after the activation, in order: hard_swish, and
  // multiplies and adds by a constant scalar (alpha * x + beta).
  struct Eltwise {
    dnnl::algorithm algorithm;
    float alpha = 0, beta = 0;
  };
  std::vector<Eltwise> tail;
};

// conv2d in the plan's plain layouts (NHWC training steps) with a residual
// added before `activation`: inputs x, filter, [bias,] residual. The
// residual is copied into the result and added by a sum post-op. Null where
// oneDNN would run it on another kernel than the convolution alone.
std::unique_ptr<Kernel> createConvResidualAdd(const KernelConfig &config,
                                              const std::string &activation);

// conv2d (NCHW data, OIHW or HWIO filters) with source and destination in
// the layouts oneDNN prefers; null when the configuration is not covered
// (bf16 on a CPU without AVX-512 included). Where a JIT kernel handles
// them, the destination is in `preferredDst` (its reader's layout), and a
// source already in nChw16c (`blockedSrc`, Winograd's layout) is read in
// it, the result then staying in nChw16c unless `preferredDst` says
// otherwise: next to Winograd convolutions, a network keeps one layout.
StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutConv(const KernelConfig &config, const ConvPostOps &post,
                 const dnnl::memory::desc *preferredDst = nullptr,
                 const dnnl::memory::desc *blockedSrc = nullptr);

// conv2d `config` (f32, NCHW, 1x1, no padding, constant filter) with
// `post` (no sum) and then a global average pool of result shape `pooled`
// [N, C, 1, 1], in one pass (gopt's 1x1 kernel): reads `source`'s layout if
// it is NHWC, else nChw16c; writes the plain pooled result. Null where not
// covered or switched off.
std::unique_ptr<LayoutKernel>
createConv1x1GlobalPool(const KernelConfig &config, const ConvPostOps &post,
                        const dnnl::memory::desc &source, const Shape &pooled);

// conv2d `config` (f32, NCHW) writing its result into channels
// [channelOffset, channelOffset + its channels) of `concatDst`, the nChw16c
// destination of a channel concat, so the concat copies nothing; it reads
// its source in `src` (nChw16c, nChw8c, NHWC or NCHW) and runs one image at
// a time. Null where channelOffset or the channels are not whole blocks of
// 16 or oneDNN has only its reference kernel. anyWinogradTile: oneDNN's
// Winograd 2x3 kernel wherever it is offered (else where winogradConv
// takes it).
StatusOr<std::unique_ptr<LayoutKernel>>
createConvIntoConcat(const KernelConfig &config, const ConvPostOps &post,
                     const dnnl::memory::desc &src,
                     const dnnl::memory::desc &concatDst, int64_t channelOffset,
                     bool anyWinogradTile = true);

// The source layout conv2d `config` reads when it runs as a Winograd
// convolution (createLayoutConv takes Winograd where it pays), nullopt
// when it runs otherwise. Winograd's kernel exists only for whole batches
// above a size and for its own blocked layout, so the schedule neither
// splits such a convolution's batch nor lets its producer write another
// layout.
std::optional<dnnl::memory::desc>
winogradSourceDesc(const KernelConfig &config);
// The layout f32 depthwise convolution `config` reads where it runs as
// gopt's NHWC depthwise kernel (DepthwiseF32Kernel: where oneDNN itself
// picks NHWC for it), nullopt otherwise: its producer writes that layout
// at once instead of a blocked one reordered for it.
std::optional<dnnl::memory::desc>
depthwiseF32SourceDesc(const KernelConfig &config);
// What runs after an f32 matmul's product, in oneDNN's order: `bias` adds
// a row of N values (kernel input 2) to every row, `sum` adds the
// destination's previous contents (an in-place residual), then `eltwise`
// (relu, gelu) applies.
struct MatmulPostOps {
  bool bias = false;
  bool sum = false;
  std::vector<ConvPostOps::Eltwise> eltwise;
};

// matmul on plain row-major operands and result with post-ops; null where
// oneDNN has no kernel for them.
StatusOr<std::unique_ptr<LayoutKernel>>
createFusedMatmul(const KernelConfig &config, const MatmulPostOps &post);

// Scaled dot-product attention over sequence-major heads, what PyTorch's
// exported multi-head attention computes with transposes around two
// batched matmuls: for each of the N heads n, with q [L, N, d], k [L2, N,
// d], v [L2, N, dv] (the kernel's inputs 0, 1, 2, plain f32),
//   out_n = softmax((q_n op scale) k_n^T) v_n
// where op is a division (`divide`) or multiplication by `scale` (none when
// !hasScale), written to out [L, N, dv] (`sequenceMajorOut`) or [N, L, dv].
// Each operand may be a view: head n's row l starts at element
//   l * rowStride + (n / groupHeads) * groupStride + (n % groupHeads) *
//   headStride + offset
// (a slice of a fused [L, B, 3D] projection reshaped to [L, B * H, d]:
// rowStride B * 3D, groupHeads H, groupStride 3D, headStride d).
struct AttentionOperand {
  int64_t rowStride = 0, groupHeads = 1, groupStride = 0, headStride = 0,
          offset = 0;
  int64_t at(int64_t head) const {
    return head / groupHeads * groupStride + head % groupHeads * headStride +
           offset;
  }
};
struct AttentionShape {
  int64_t heads = 0, queries = 0, keys = 0, depth = 0, valueDepth = 0;
  bool hasScale = false, divide = false;
  float scale = 1;
  bool sequenceMajorOut = true;
  AttentionOperand q, k, v;
};
std::unique_ptr<Kernel> createAttention(const AttentionShape &shape);

// What an int8 convolution or matmul computes around its s32 accumulation,
// in real (dequantized) values: v = acc * srcScale * weightScales[c] +
// bias[c]; if `requantize`, v = requantScale * clamp(round_half_even(v /
// requantScale), -128, 127) (a quantize/dequantize pair on the result);
// v += sumScale * (the destination's previous contents); v = activation(v);
// the destination is f32 v, or with `dstScale` > 0 int8 clamp(round(v /
// dstScale), -128, 127) (s8; u8 when `dstUnsigned`, for results an
// activation keeps non-negative: the values stay in [0, 127]).
struct Int8Params {
  bool srcUnsigned = false; // the int8 source is known non-negative: read u8
  float srcScale = 1;
  const int8_t *weights = nullptr; // constant, in the op's filter layout
  std::vector<float> weightScales; // one, or one per output channel
  const float *bias = nullptr;     // constant f32 bias, or null
  bool requantize = false;
  float requantScale = 1;
  bool sum = false;
  float sumScale = 1;
  bool sumSigned = false; // the sum reads an s8 accumulator into a u8 dst
  std::string activation = "none"; // none, relu, relu6, clip, sigmoid
  float clipMin = 0, clipMax = 0;
  float dstScale = 0; // 0: f32 destination
  bool dstUnsigned = false;
};

// conv2d (NCHW data, OIHW or HWIO filters) on an int8 source in the layout
// oneDNN prefers, with constant int8 weights (reordered once); the kernel's
// inputs are the source (and the accumulator of a sum, aliased with the
// result). Null where oneDNN cannot create it.
StatusOr<std::unique_ptr<LayoutKernel>>
createInt8Conv(const KernelConfig &config, const Int8Params &params);
// One convolution of a chain: post-ops `post`, or with `int8` an int8
// convolution computing *int8 (its weights and bias inside).
struct ConvChainStage {
  KernelConfig config;
  ConvPostOps post;
  const Int8Params *int8 = nullptr;
  // First stage only: > 0 where its bf16 or int8 source is a plain NCHW
  // f32 tensor's conversion (x * f32SourceScale) that the chain may read
  // unconverted (a network's input and its stem); the chain's
  // inputDesc(0) then tells which it reads.
  float f32SourceScale = 0;
};
// conv2d ops (NCHW, constant weights and biases) where each reads the one
// before's result, run `chunk` images of the batch at a time (chunk
// divides it) through two small buffers that stay in cache; inputs: the
// first's source in inputDesc(0) (and the last's sum accumulator, the
// output's storage), output: the last's result. With several OpenMP
// threads, each runs its own chunks through its own copy of the chain.
// Null where oneDNN has no kernel for one of them or its layouts are not
// batch-major.
StatusOr<std::unique_ptr<LayoutKernel>>
createConvChain(const std::vector<ConvChainStage> &stages, int64_t chunk);
// matmul [M, K] x constant int8 [K, N] (or [N, K] with transpose_b) on
// plain layouts, per-N weight scales; input: the int8 A. Null where oneDNN
// cannot create it.
StatusOr<std::unique_ptr<Kernel>> createInt8Matmul(const KernelConfig &config,
                                                   const Int8Params &params);

// x * scale, x of [N, C, H, W] in layout `x` (its result in the same
// layout), scale of [N, C, 1, 1] in layout `scale`; null where oneDNN has
// no kernel for them.
StatusOr<std::unique_ptr<Kernel>>
createChannelMul(const dnnl::memory::desc &x, const dnnl::memory::desc &scale);

// max_pool / avg_pool (NCHW) reading `src`; the result keeps its layout.
StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutPool(const KernelConfig &config, const dnnl::memory::desc &src);
// global_avg_pool (NCHW) reading `src` as one average over H x W.
StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutGlobalAvgPool(const KernelConfig &config,
                          const dnnl::memory::desc &src);
// Inference batch_norm (NCHW, rank 4) reading `src`, with `relu`
// applied to its result in the same pass.
StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutBatchNorm(const KernelConfig &config, const dnnl::memory::desc &src,
                      bool relu = false);
// Concatenation of `srcs` along dimension 1 (NCHW channels) into `dst`,
// each in its blocked layout; null where oneDNN has no kernel for them.
StatusOr<std::unique_ptr<LayoutKernel>>
createLayoutConcat(const std::vector<dnnl::memory::desc> &srcs,
                   const dnnl::memory::desc &dst);
// Copies a tensor from one layout into another, converting its elements
// (times `scale`; into int8 rounded half to even and saturated).
StatusOr<std::unique_ptr<Kernel>> createReorder(const dnnl::memory::desc &from,
                                                const dnnl::memory::desc &to,
                                                float scale = 1.0f);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_ONEDNN_H
