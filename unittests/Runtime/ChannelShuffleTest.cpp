//===- ChannelShuffleTest.cpp - Concat + channel shuffle vs. a loop -------===//
//
// The CPU schedule's concat + channel shuffle kernel against concat,
// reshape to [N, g, C/g, H, W], transpose of axes 1 and 2 and reshape,
// written out as loops over logical indices: sources plain, nChw16c and
// nChw8c with padded channels (ShuffleNet's 58), NHWC, two images, three
// groups, and sources of unequal channel counts.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/src/cpu/ChannelShuffle.h"

#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace gopt::runtime;
using gopt::runtime::cpu::createConcatShuffle;
using gopt::runtime::cpu::ShuffleLayout;

namespace {

float value(int64_t src, int64_t n, int64_t c, int64_t p) {
  return static_cast<float>(src * 100000 + n * 10000 + c * 100 + p);
}

// Source `src` of [n, c, h*w] in layout `block` (0 plain, else nChw{b}c),
// padding filled with NaN (never read).
std::vector<float> layout(int64_t src, int64_t n, int64_t c, int64_t hw,
                          int64_t block) {
  if (block == 0) {
    std::vector<float> v(n * c * hw);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < c; ++j)
        for (int64_t p = 0; p < hw; ++p)
          v[(i * c + j) * hw + p] = value(src, i, j, p);
    return v;
  }
  int64_t blocks = (c + block - 1) / block;
  std::vector<float> v(n * blocks * block * hw, NAN);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t p = 0; p < hw; ++p)
        v[((i * blocks + j / block) * hw + p) * block + j % block] =
            value(src, i, j, p);
  return v;
}

// `outputs` empty: the whole result, plain.
void check(int64_t n, int64_t h, int64_t w, std::vector<ShuffleLayout> sources,
           int64_t groups, std::vector<ShuffleLayout> outputs = {}) {
  const int64_t hw = h * w;
  int64_t channels = 0;
  std::vector<std::vector<float>> data;
  std::vector<Tensor> inputs;
  for (size_t s = 0; s < sources.size(); ++s) {
    data.push_back(layout(s, n, sources[s].channels, hw, sources[s].block));
    inputs.push_back(Tensor::view(DType::kF32,
                                  {static_cast<int64_t>(data.back().size())},
                                  data.back().data()));
    channels += sources[s].channels;
  }
  // The concat's channel k: its source and channel there.
  std::vector<std::pair<int64_t, int64_t>> concat;
  for (size_t s = 0; s < sources.size(); ++s)
    for (int64_t j = 0; j < sources[s].channels; ++j)
      concat.push_back({static_cast<int64_t>(s), j});
  if (outputs.empty())
    outputs.push_back({channels, 0});
  std::vector<std::vector<float>> out;
  std::vector<Tensor> results;
  for (const ShuffleLayout &l : outputs) {
    int64_t padded = l.block == 0
                         ? l.channels
                         : (l.channels + l.block - 1) / l.block * l.block;
    out.emplace_back(n * padded * hw, NAN); // padding must become zeros
    results.push_back(Tensor::view(DType::kF32,
                                   {static_cast<int64_t>(out.back().size())},
                                   out.back().data()));
  }
  std::unique_ptr<Kernel> kernel =
      createConcatShuffle(n, h, w, sources, groups, outputs);
  ASSERT_TRUE(kernel);
  ASSERT_TRUE(kernel->run(inputs, results).ok());
  // Every output in its own layout, as the whole result's channels.
  std::vector<float> whole(n * channels * hw);
  int64_t first = 0;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const ShuffleLayout &l = outputs[o];
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < l.channels; ++j)
        for (int64_t p = 0; p < hw; ++p) {
          int64_t blocks =
              l.block == 0 ? 0 : (l.channels + l.block - 1) / l.block;
          float v =
              l.block == 0
                  ? out[o][(i * l.channels + j) * hw + p]
                  : out[o][((i * blocks + j / l.block) * hw + p) * l.block +
                           j % l.block];
          whole[(i * channels + first + j) * hw + p] = v;
        }
    if (l.block != 0) {
      for (float v : out[o])
        ASSERT_FALSE(std::isnan(v)) << "output " << o << " padding unwritten";
    }
    first += l.channels;
  }
  // reshape [n, groups, C/groups, hw], transpose to [n, C/groups, groups, hw]
  const int64_t perGroup = channels / groups;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t q = 0; q < perGroup; ++q)
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t p = 0; p < hw; ++p) {
          auto [s, j] = concat[g * perGroup + q];
          ASSERT_EQ(whole[(i * channels + q * groups + g) * hw + p],
                    value(s, i, j, p))
              << "image " << i << " channel " << q * groups + g << " pixel "
              << p;
        }
}

TEST(ConcatShuffle, ShuffleNetUnitPlainAndBlocked) {
  check(1, 5, 7, {{58, 0}, {58, 16}}, 2);
  check(2, 3, 3, {{58, 16}, {58, 16}}, 2);
}

TEST(ConcatShuffle, EightBlocksNhwcAndUnequalSources) {
  check(2, 4, 3, {{20, 8}, {12, 0}}, 2);
  check(1, 2, 5, {{6, 6}, {9, 16}, {3, 0}}, 3); // NHWC: one block of 6
}

// The next unit's two halves written directly: plain, nChw16c (58 of 64
// channels, the padding zeroed) and nChw8c, NHWC.
TEST(ConcatShuffle, HalvesInTheirReadersLayouts) {
  check(1, 5, 7, {{58, 0}, {58, 16}}, 2, {{58, 0}, {58, 16}});
  check(2, 3, 4, {{58, 16}, {58, 8}}, 2, {{58, 8}, {58, 58}});
  check(2, 2, 3, {{12, 16}, {12, 0}}, 2, {{5, 0}, {7, 16}, {12, 8}});
}

// Large enough for several threads (when OpenMP has them); an NHWC source
// of more channels than the kernel takes at once.
TEST(ConcatShuffle, LargeAndWide) {
  check(2, 28, 28, {{58, 0}, {58, 16}}, 2, {{58, 0}, {58, 16}});
  check(2, 14, 14, {{100, 100}, {100, 16}}, 2, {{100, 8}, {100, 0}});
}

TEST(ConcatShuffle, RefusesWhatItCannotCompute) {
  EXPECT_FALSE(createConcatShuffle(1, 2, 2, {{3, 0}, {2, 0}}, 2, {{5, 0}}));
  EXPECT_FALSE(createConcatShuffle(1, 2, 2, {{2, 0}, {2, 0}}, 2, {{3, 0}}));
}

} // namespace
