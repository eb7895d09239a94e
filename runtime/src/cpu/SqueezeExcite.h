//===- SqueezeExcite.h - Squeeze-and-excitation in one step -----*- C++ -*-===//
//
// MobileNetV3's and EfficientNet's squeeze-and-excitation: global average
// pool of x, a 1x1 convolution and its activation, a second 1x1
// convolution and a gate (sigmoid or hard sigmoid), then x times the gate
// per channel. Five to seven tiny steps (each a oneDNN call on a [N, C, 1,
// 1] tensor) become one pass that pools x, computes the two products from
// the pooled means in registers and scales x, in x's own layout.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_SQUEEZEEXCITE_H
#define GOPT_RUNTIME_SRC_CPU_SQUEEZEEXCITE_H

#include <cstdint>
#include <memory>
#include <vector>

namespace gopt::runtime {
class Kernel;
namespace cpu {

// Whether SE blocks of a batch of `batch` images run as one step: at batch 1
// by default; GOPT_SQUEEZE_EXCITE=0 never, =1 at every batch (otherwise the
// ops run one by one).
bool squeezeExciteEnabled(int64_t batch);

// An activation after one of the block's products.
struct SeActivation {
  enum Kind {
    kNone,
    kRelu,
    kRelu6,
    kSigmoid,
    kSilu,
    kHardSigmoid
  } kind = kNone;
  float alpha = 0, beta = 0; // hard sigmoid's
};

struct SqueezeExciteParams {
  int64_t n = 0, channels = 0, hw = 0;
  // x's and the result's layout: 0 plain NCHW, else nChw{block}c (channels
  // padded to whole blocks; NHWC is one block of all channels).
  int64_t block = 0;
  int64_t squeezed = 0;      // the first product's channels
  std::vector<float> w1, b1; // [squeezed, channels], [squeezed]
  std::vector<float> w2, b2; // [channels, squeezed], [channels]
  SeActivation act1, act2;   // after each product (act2: the gate)
  // Split the products between threads even when they are small (tests;
  // by default small ones run whole on every thread).
  bool splitProducts = false;
  // With `projOut` > 0 (x nChw16c or NHWC): the result is the
  // following 1x1 projection of the gated x, proj(x * gate) + projBias (+
  // a residual, the kernel's second input, in the result's layout), and
  // x * gate is never written: the gate scales the projection's input
  // channels, i.e. its weights' columns (a cin x cout rescale per image
  // and run instead of a pass over x). The result is nChw16c (channels padded
  // to 16, padding 0 plus the residual's) where x is, else NHWC.
  int64_t projOut = 0;
  std::vector<float> projW, projBias; // [projOut, channels], [projOut]
  bool residual = false;
};

// Whether an SE block is folded into its 1x1 projection where that pays,
// at any batch (GOPT_SE_PROJECT=0 or GOPT_SQUEEZE_EXCITE=0: never; needs
// AVX-512F).
bool squeezeExciteProjectEnabled();

// Inputs: x (and with `residual` the residual); output: x * gate, or its
// projection. Null if the sizes do not agree.
std::unique_ptr<Kernel> createSqueezeExcite(SqueezeExciteParams params);

} // namespace cpu
} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CPU_SQUEEZEEXCITE_H
