//===- WinogradConv.h - gopt's own Winograd convolutions ------*- C++ -*-===//
//
// Three Winograd kernels for f32 3x3 convolutions with a constant filter,
// each where oneDNN's kernels left time on the table:
// - WinogradWideConv: F(2x2, 3x3) for one image's wide layers (ResNet's
//   256- and 512-channel layers at batch 1), where oneDNN's 2x3 kernel was
//   no faster than its direct one: the transformed filter (16 x cin x cout
//   floats, 4-16 MiB) is packed once in blocks of 64 output channels, each
//   block's 16 GEMMs run on one thread with that block's filter streaming
//   through its L2, and the threads split the output channels rather than
//   the few spatial tiles. NHWC.
// - WinogradTiledConv: F(2x2, 3x3) for layers of few channels over many
//   pixels, any batch: the threads split the tiles instead, and the result
//   may go into a channel slice of a concat's destination.
// - WinogradStride2Conv: stride 2, from a parity split of the taps.
// Bias, an in-place residual sum and relu run in the output transforms.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_WINOGRADCONV_H
#define GOPT_RUNTIME_SRC_CPU_WINOGRADCONV_H

#include "AlignedVector.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace gopt::runtime::cpu {

// What each kernel here computes: a 3x3 convolution of cin -> cout
// channels over an h x w source, its filter's layout, and what the output
// transform adds: bias, an in-place residual sum, relu.
struct WinogradConvShape {
  int64_t cin = 0, cout = 0, h = 0, w = 0;
  bool oihw = true; // filter layout: OIHW, else HWIO
  bool bias = false, sum = false, relu = false;
};

struct WinogradWideShape : WinogradConvShape {};

class WinogradWideConv {
public:
  // Null where the CPU lacks AVX-512 or the shape is not covered (cin a
  // multiple of 16, cout of 64).
  static std::unique_ptr<WinogradWideConv> create(const WinogradWideShape &s,
                                                  const float *filter);
  // src [h, w, cin] and dst [h, w, cout] (NHWC, one image); with `sum`,
  // dst holds the residual on entry. bias: cout floats or null.
  void run(const float *src, const float *bias, float *dst);
  size_t workspaceBytes() const;

private:
  WinogradWideShape s_;
  int64_t tilesH_ = 0, tilesW_ = 0, tiles_ = 0;
  std::vector<float> u_;              // [cout / 64][16][cin][64]
  std::vector<float> v_;              // [16][tiles][cin]
  std::vector<std::vector<float>> m_; // per thread: [16][tiles][64]
  bool claims_ = false; // blocks from a shared counter (BlockClaims.h)
};

// Whether the kernel may be used: GOPT_CONV_WINOGRAD_WIDE=0 (or
// GOPT_CONV_WINOGRAD=0 / 4x3) keeps oneDNN's direct kernel.
bool winogradWideEnabled();

// Whether WinogradWideConv pays for a layer of few 2x2 tiles (below 36:
// ResNet's 512-channel 7x7 layers) on `threads` threads reading
// `streamGBps` (MemoryBandwidth.h). There each transformed filter element
// (16/9 of the filter's bytes, read from memory every run) serves few
// multiplies, so the kernel is bound by reading its filter; it pays where
// that read takes well under the direct kernel's arithmetic at an AVX-512
// core's f32 rate: on an AMD EPYC's 64 GB/s (2 threads) and not on an
// Intel Xeon's 23.
bool winogradWideFewTilesPays(int64_t cin, int64_t cout, int64_t h, int64_t w,
                              int threads, double streamGBps);

// Winograd for a 3x3 stride-2 pad-1 f32 convolution with a constant filter
// (ResNet-50's first 3x3 of each stage, torchvision's stride on conv2): its
// taps split by the parity of the input row and column into a 2-tap and a
// 1-tap stride-1 convolution each way; the 2-tap one runs as Winograd
// F(2, 2) (3 products for 2 outputs) and the 1-tap one directly (2 for 2),
// so a 2x2 output tile takes 5x5 = 25 products per channel pair where the
// direct kernel takes 36 (1.44x fewer), from 16 distinct transformed
// filters (16/9 of the filter's bytes). All transforms are sums and
// differences: no rounding beyond the reordered sums. Any batch; the tiles
// of several images share one pass of the filter. Source and result NHWC
// or nChw16c (`blocked`); bias, an in-place residual sum and relu run in
// the output transform.
struct WinogradStride2Shape : WinogradConvShape {
  int64_t n = 1;
  bool blocked = false; // nChw16c, else NHWC
  int64_t outH() const { return (h - 1) / 2 + 1; }
  int64_t outW() const { return (w - 1) / 2 + 1; }
};

class WinogradStride2Conv {
public:
  // Null where the CPU lacks AVX-512 or the shape is not covered (cin a
  // multiple of 16, cout of 64).
  static std::unique_ptr<WinogradStride2Conv>
  create(const WinogradStride2Shape &s, const float *filter);
  // src [n, h, w, cin] and dst [n, outH, outW, cout] (or nChw16c); with
  // `sum`, dst holds the residual on entry. bias: cout floats or null.
  void run(const float *src, const float *bias, float *dst);
  size_t workspaceBytes() const;

private:
  WinogradStride2Shape s_;
  int64_t tilesH_ = 0, tilesW_ = 0, groupImages_ = 1;
  std::vector<float> u_;              // [cout / 64][16][cin][64]
  std::vector<float> v_;              // [25][group tiles][cin]
  std::vector<std::vector<float>> m_; // per thread: [25][group tiles][64]
  bool claims_ = false; // blocks from a shared counter (BlockClaims.h)
};

// Winograd F(2x2, 3x3) or F(4x4, 3x3) for a 3x3 stride-1 pad-1 f32
// convolution with a constant filter and up to a few hundred channels, at
// any batch (SqueezeNet's fire modules: 16 -> 64 channels at 55x55 up to
// 64 -> 256 at 13x13; ResNet's 64- to 256-channel layers), where
// WinogradWideConv's whole-image buffers and split by output channels do
// not fit. The threads split the tiles of all images in groups whose
// transformed input (points x group x cin floats) and products (points x
// group x 64) stay in L2, while each 64-channel block of the transformed
// filter passes over them. The source is NHWC or nChw16c; the result goes
// into channels [dstOffset, dstOffset + cout) of a tensor of dstChannels
// (NHWC or nChw16c): a channel concat's destination, or the convolution's
// own result (dstChannels = cout, dstOffset = 0).
struct WinogradTiledShape : WinogradConvShape {
  int64_t n = 1;
  bool srcBlocked = false, dstBlocked = false; // nChw16c, else NHWC
  int64_t dstChannels = 0, dstOffset = 0;
  // Output tile: 2 (F(2x2, 3x3): 16 products per 4 outputs) or 4 (F(4x4,
  // 3x3): 36 per 16, from 6x6 patches; rounding about 5e-6 of a layer's
  // largest output against 3e-7).
  int tile = 2;
};

class WinogradTiledConv {
public:
  // Null where the CPU lacks AVX-512 or the shape is not covered (cin a
  // multiple of 16, cout of 64; with a blocked result, dstChannels and
  // dstOffset multiples of 16).
  static std::unique_ptr<WinogradTiledConv> create(const WinogradTiledShape &s,
                                                   const float *filter);
  // src [n, h, w, cin] (or nChw16c); dst the whole [n, h, w, dstChannels]
  // tensor (or nChw16c), of which the kernel writes its channels; with
  // `sum` they hold the residual on entry. bias: cout floats or null.
  void run(const float *src, const float *bias, float *dst);
  size_t workspaceBytes() const;

private:
  template <int kTile>
  void runTiles(const float *src, const float *bias, float *dst);
  WinogradTiledShape s_;
  int64_t tilesH_ = 0, tilesW_ = 0, groupTiles_ = 0;
  AlignedVector<float> u_; // [cout / 64][16][cin][64]
  // Per thread, each on cache lines of its own: buffers sharing a line
  // with another thread's made two threads no faster than one (the line
  // moved between the cores on every GEMM call).
  std::vector<AlignedVector<float>> v_; // [16][group][cin]
  std::vector<AlignedVector<float>> m_; // [16][group][64]
};

// Whether the tiled kernel may be used: GOPT_CONV_WINOGRAD_TILED=0 (or
// GOPT_CONV_WINOGRAD=0 / 4x3) keeps oneDNN's kernels.
bool winogradTiledEnabled();

// The output tile the tiled kernel takes for `s` on `threads` threads: 4
// where its products (36 per 4x4 tile, the image rounded up to whole
// tiles) are under 0.75 of F(2x2, 3x3)'s (0.56 at 55x55, 0.73 at 13x13)
// and each thread gets 16 tiles or more (one 13x13 image's 16 tiles ran
// 1.1x slower than its 49 2x2 ones; eight images' 1.15-1.3x faster), else
// 2. GOPT_CONV_WINOGRAD_TILED=2x2 keeps 2.
int winogradTiledTile(const WinogradTiledShape &s, int threads);

// Whether the stride-2 kernel may be used: GOPT_CONV_WINOGRAD_STRIDE2=0 (or
// GOPT_CONV_WINOGRAD=0) keeps oneDNN's direct kernel (=all: also in
// nChw16c, see createLayoutConv).
bool winogradStride2Enabled();

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_WINOGRADCONV_H
