//===- ChannelShuffle.h - Concat and channel shuffle, one pass --*- C++ -*-===//
//
// ShuffleNet's units end in concat(x1, branch) along channels, then a
// channel shuffle (reshape to [N, g, C/g, H, W], transpose of axes 1 and 2,
// reshape back), and the next unit slices the result into its two halves.
// The CPU schedule runs all of it as one step of this kernel, reading each
// source in the layout it has (plain NCHW, oneDNN's nChw8c / nChw16c or
// NHWC) and writing each slice (or the whole result) in the layout its
// reader wants.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_CPU_CHANNELSHUFFLE_H
#define GOPT_RUNTIME_SRC_CPU_CHANNELSHUFFLE_H

#include <cstdint>
#include <memory>
#include <vector>

namespace gopt::runtime {
class Kernel;
namespace cpu {

// False when GOPT_CHANNEL_SHUFFLE=0 (the ops then run one by one).
bool channelShuffleEnabled();

// One f32 [N, channels, H, W] tensor: its channels and its layout's channel
// block (0: plain NCHW; b: nChw{b}c, channels padded to whole blocks, the
// padding written as zeros; NHWC is one block of all channels).
struct ShuffleLayout {
  int64_t channels = 0;
  int64_t block = 0;
};

// concat(sources along axis 1) of [n, C, h, w], C the sum of their
// channels, then a shuffle: the result's channel q * groups + g is the
// concat's channel g * (C / groups) + q. The result is written as
// `outputs`, consecutive channel ranges of it that together cover all C
// channels (one output: the whole result). Inputs: the sources; outputs:
// `outputs`. Null if C does not split into `groups` or the outputs do not
// cover C.
std::unique_ptr<Kernel>
createConcatShuffle(int64_t n, int64_t h, int64_t w,
                    const std::vector<ShuffleLayout> &sources, int64_t groups,
                    const std::vector<ShuffleLayout> &outputs);

} // namespace cpu
} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_CPU_CHANNELSHUFFLE_H
