//===- ChannelShuffle.cpp - A channel concat and shuffle in one pass ------===//
//
// Each source channel goes straight to its place in the output that holds
// its shuffled channel: no concat buffer, no transpose, no slice copies
// and no reorders. A blocked source is read a pixel's block of channels at
// a time (contiguous) and written to that many output planes, each written
// in order.
//
//===----------------------------------------------------------------------===//
#include "ChannelShuffle.h"
#include "ParallelRange.h"

#include "gopt/runtime/Kernel.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gopt::runtime::cpu {
namespace {

int64_t blocks(const ShuffleLayout &l) {
  return l.block == 0 ? l.channels : (l.channels + l.block - 1) / l.block;
}

class ConcatShuffleKernel final : public Kernel {
public:
  ConcatShuffleKernel(int64_t n, int64_t h, int64_t w,
                      std::vector<ShuffleLayout> sources, int64_t groups,
                      std::vector<ShuffleLayout> outputs)
      : n_(n), hw_(h * w), sources_(std::move(sources)), groups_(groups),
        outputs_(std::move(outputs)) {
    // One item per source block of at most kLanes channels (an NHWC
    // source's one block is split).
    for (size_t i = 0; i < sources_.size(); ++i) {
      const ShuffleLayout &s = sources_[i];
      const int64_t b = s.block == 0 ? 1 : s.block;
      for (int64_t cb = 0; cb < blocks(s); ++cb)
        for (int64_t l = 0; l < std::min(b, s.channels - cb * b); l += kLanes)
          items_.push_back({static_cast<int>(i), channels_ + cb * b + l, cb, l,
                            std::min({b, s.channels - cb * b, l + kLanes})});
      channels_ += s.channels;
    }
  }

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    const int64_t perGroup = channels_ / groups_;
    const int64_t items = static_cast<int64_t>(items_.size());
    // Where concat channel k of image img goes: a pointer to its first
    // pixel and the distance between pixels.
    auto target = [&](int64_t img, int64_t k, float *&plane, int64_t &stride) {
      int64_t j = (k % perGroup) * groups_ + k / perGroup;
      for (size_t o = 0; o < outputs_.size(); ++o) {
        const ShuffleLayout &l = outputs_[o];
        if (j >= l.channels) {
          j -= l.channels;
          continue;
        }
        float *base = outputs[o].data<float>();
        if (l.block == 0) {
          plane = base + (img * l.channels + j) * hw_;
          stride = 1;
        } else {
          plane = base + ((img * blocks(l) + j / l.block) * hw_) * l.block +
                  j % l.block;
          stride = l.block;
        }
        return;
      }
    };
#pragma omp parallel for schedule(static) if (n_ * channels_ * hw_ >=          \
                                              kParallelThreshold)
    for (int64_t index = 0; index < n_ * items; ++index) {
      const int64_t img = index / items;
      const Item &it = items_[index % items];
      const ShuffleLayout &s = sources_[it.source];
      const int64_t b = s.block == 0 ? 1 : s.block;
      const float *in = inputs[it.source].data<float>() +
                        (img * blocks(s) + it.block) * hw_ * b + it.lane;
      const int64_t lanes = it.end - it.lane;
      float *planes[kLanes];
      int64_t strides[kLanes];
      bool plain = true;
      for (int64_t c = 0; c < lanes; ++c) {
        target(img, it.first + c, planes[c], strides[c]);
        plain = plain && strides[c] == 1;
      }
      if (b == 1 && plain) {
        std::memcpy(planes[0], in, hw_ * sizeof(float));
      } else if (plain && b == 16 && lanes == 16) {
        for (int64_t p = 0; p < hw_; ++p)
          for (int64_t c = 0; c < 16; ++c)
            planes[c][p] = in[p * 16 + c];
      } else {
        for (int64_t c = 0; c < lanes; ++c) {
          float *out = planes[c];
          const int64_t stride = strides[c];
          for (int64_t p = 0; p < hw_; ++p)
            out[p * stride] = in[p * b + c];
        }
      }
    }
    // A blocked output's padding channels are zeros, as oneDNN's are.
    for (int64_t img = 0; img < n_; ++img)
      for (size_t o = 0; o < outputs_.size(); ++o) {
        const ShuffleLayout &l = outputs_[o];
        int64_t pad = l.block == 0 ? 0 : blocks(l) * l.block - l.channels;
        if (pad == 0)
          continue;
        float *last = outputs[o].data<float>() +
                      ((img * blocks(l) + blocks(l) - 1) * hw_) * l.block;
        for (int64_t p = 0; p < hw_; ++p)
          std::fill_n(last + p * l.block + (l.block - pad), pad, 0.0f);
      }
    return Status::success();
  }

  const char *implementation() const override { return "gopt"; }

private:
  int64_t n_, hw_;
  std::vector<ShuffleLayout> sources_;
  int64_t groups_;
  std::vector<ShuffleLayout> outputs_;
  int64_t channels_ = 0;
  static constexpr int64_t kLanes = 64;
  struct Item {
    int source;
    int64_t first;     // its first channel's concat channel
    int64_t block;     // its block of the source
    int64_t lane, end; // its channels there
  };
  std::vector<Item> items_;
};

} // namespace

bool channelShuffleEnabled() {
  const char *v = std::getenv("GOPT_CHANNEL_SHUFFLE");
  return !v || std::strcmp(v, "0") != 0;
}

std::unique_ptr<Kernel>
createConcatShuffle(int64_t n, int64_t h, int64_t w,
                    const std::vector<ShuffleLayout> &sources, int64_t groups,
                    const std::vector<ShuffleLayout> &outputs) {
  int64_t channels = 0, covered = 0;
  for (const ShuffleLayout &s : sources) {
    if (s.channels <= 0 || s.block < 0)
      return nullptr;
    channels += s.channels;
  }
  for (const ShuffleLayout &o : outputs) {
    if (o.channels <= 0 || o.block < 0)
      return nullptr;
    covered += o.channels;
  }
  if (sources.empty() || groups <= 0 || channels % groups != 0 || n <= 0 ||
      h <= 0 || w <= 0 || covered != channels)
    return nullptr;
  return std::make_unique<ConcatShuffleKernel>(n, h, w, sources, groups,
                                               outputs);
}

} // namespace gopt::runtime::cpu
