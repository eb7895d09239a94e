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
};

// Inputs: x; output: x * gate. Null if the sizes do not agree.
std::unique_ptr<Kernel> createSqueezeExcite(SqueezeExciteParams params);

} // namespace cpu
} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CPU_SQUEEZEEXCITE_H
