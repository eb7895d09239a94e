//===- BlockedPool.h - Max pooling of f32 nChw16c tensors -------*- C++ -*-===//
//
// gopt's own max pooling of an f32 nChw16c source (ResNet's pool after a
// stem that writes nChw16c): one AVX-512 max per window element and 16
// channels, rows of the result split over the threads. oneDNN 2.6's
// blocked pooling took twice ONNX Runtime's time on ResNet-18's
// 112x112x64 pool at batch 1. It also reads an NHWC source (the stem oneDNN
// runs channels-last at batch 8) and writes it blocked, in place of
// oneDNN's NHWC pool and the reorder the blocked convolutions after it need.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_BLOCKEDPOOL_H
#define GOPT_RUNTIME_SRC_CPU_BLOCKEDPOOL_H

#include "OneDnn.h"

namespace gopt::runtime::cpu {

// One max pooling of [images][channels / 16][h][w][16] into
// [images][channels / 16][oh][ow][16]: windows of kh x kw at strides sh,
// sw, starting padT, padL before the source; each must hold one of its
// elements.
struct BlockedPoolGeometry {
  int64_t images, blocks, h, w, oh, ow, kh, kw, sh, sw, padT, padL;
  // The source is NHWC ([images][h][w][blocks * 16]) instead; the result
  // is nChw16c either way.
  bool nhwcSource = false;
};

// Runs it on the library's threads; false (nothing done) without AVX-512.
bool blockedMaxPool(const BlockedPoolGeometry &g, const float *x, float *y);

// Null (oneDNN's kernel then runs) unless the op is an NCHW max_pool, `src`
// is dense f32 nChw16c (or NHWC, unless GOPT_BLOCKED_POOL_NHWC is 0) with
// channels in whole blocks of 16, every window
// holds an element of the source, the CPU has AVX-512 F, and
// GOPT_BLOCKED_POOL is not 0. The result is nChw16c.
std::unique_ptr<LayoutKernel>
createBlockedMaxPool(const KernelConfig &config, const dnnl::memory::desc &src);

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_SRC_CPU_BLOCKEDPOOL_H
