//===- BlockedBatchNorm.cpp - Inference batch norm + relu, nChw16c --------===//
//
// y = x * a[c] + b[c] (then max(y, 0)), a = scale / sqrt(var + epsilon),
// b = offset - mean * a, computed from the statistics each run (C values).
//
//===----------------------------------------------------------------------===//
#include "BlockedBatchNorm.h"
#include "EnvSwitch.h"

#include "Avx512Lanes.h"
#include "ParallelRange.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace gopt::runtime::cpu {
namespace {

using dnnl::memory;

#ifdef GOPT_HAVE_AVX512_LANES
// GCC 12 warns about _mm512_max_ps's own undefined initial vector.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Vectors [begin, end) of 16 channels of a [images][blocks][pixels][16]
// result; the source's images are `xImage` floats apart (a dense block's
// shared buffer holds more channels), block b's coefficients at a + 16 * b.
// `Stream`: non-temporal stores (y 64-byte aligned), for results larger
// than the caches, which then skip reading the result's lines first.
template <bool Relu, bool Stream>
GOPT_AVX512BW void normalizeVectors(const float *x, float *y, const float *a,
                                    const float *b, int64_t begin, int64_t end,
                                    int64_t pixels, int64_t blocks,
                                    int64_t xImage) {
  const __m512 zero = _mm512_set1_ps(0.0f);
  const int64_t image = blocks * pixels; // vectors per result image
  for (int64_t v = begin; v < end;) {
    const int64_t row = v / pixels; // image * blocks + block
    const int64_t stop = std::min(end, (row + 1) * pixels);
    const int64_t block = row % blocks;
    const __m512 va = _mm512_loadu_ps(a + 16 * block);
    const __m512 vb = _mm512_loadu_ps(b + 16 * block);
    const float *xs = x + (v / image) * xImage + 16 * (v % image);
    float *ys = y + 16 * v;
    const int64_t n = stop - v;
    for (int64_t k = 0; k < n; ++k) {
      __m512 r = _mm512_fmadd_ps(_mm512_loadu_ps(xs + 16 * k), va, vb);
      if (Relu)
        r = _mm512_max_ps(r, zero);
      if (Stream)
        _mm512_stream_ps(ys + 16 * k, r);
      else
        _mm512_storeu_ps(ys + 16 * k, r);
    }
    v = stop;
  }
  if (Stream)
    _mm_sfence();
}
#pragma GCC diagnostic pop
#endif

// Results above this many bytes (more than this core's 2 MiB L2) are
// stored non-temporally.
constexpr int64_t kStreamBytes = int64_t(4) << 20;
bool streamStores() {
  static const bool on = [] {
    const char *s = std::getenv("GOPT_BLOCKED_BN_STREAM");
    return !s || std::strcmp(s, "0") != 0;
  }();
  return on;
}

class BlockedBatchNormKernel : public LayoutKernel {
public:
  BlockedBatchNormKernel(const memory::desc &src, const memory::desc &dst,
                         int64_t channels, int64_t pixels, int64_t images,
                         int64_t srcImage, float epsilon, bool relu)
      : src_(src), dst_(dst), channels_(channels), pixels_(pixels),
        images_(images), srcImage_(srcImage), epsilon_(epsilon), relu_(relu),
        a_(channels), b_(channels) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    const float *scale = in[1].data<float>(), *offset = in[2].data<float>(),
                *mean = in[3].data<float>(), *var = in[4].data<float>();
    for (int64_t c = 0; c < channels_; ++c) {
      a_[c] = scale[c] / std::sqrt(var[c] + epsilon_);
      b_[c] = offset[c] - mean[c] * a_[c];
    }
#ifdef GOPT_HAVE_AVX512_LANES
    const float *x = in[0].data<float>();
    float *y = out[0].data<float>();
    const int64_t blocks = channels_ / 16;
    const int64_t vectors = images_ * blocks * pixels_;
    const bool stream = streamStores() && vectors * 64 > kStreamBytes &&
                        reinterpret_cast<uintptr_t>(y) % 64 == 0;
    // Element ranges in whole vectors of 16 (parallelRange's chunks).
    parallelRange(vectors * 16, [&](int64_t begin, int64_t end) {
      auto run = relu_ ? (stream ? normalizeVectors<true, true>
                                 : normalizeVectors<true, false>)
                       : (stream ? normalizeVectors<false, true>
                                 : normalizeVectors<false, false>);
      run(x, y, a_.data(), b_.data(), begin / 16, end / 16, pixels_, blocks,
          srcImage_);
    });
    return Status::success();
#else
    return internalError("blocked batch norm built without AVX-512");
#endif
  }
  const char *implementation() const override { return "gopt-blocked"; }
  memory::desc inputDesc(int i) const override {
    return i == 0 ? src_ : memory::desc();
  }
  memory::desc outputDesc() const override { return dst_; }

private:
  memory::desc src_, dst_;
  int64_t channels_, pixels_, images_, srcImage_;
  float epsilon_;
  bool relu_;
  std::vector<float> a_, b_;
};

} // namespace

std::unique_ptr<LayoutKernel> createBlockedBatchNorm(const KernelConfig &config,
                                                     const memory::desc &src,
                                                     bool relu) {
  if (!envSwitchOn("GOPT_BLOCKED_BN"))
    return nullptr;
#ifdef GOPT_HAVE_AVX512_LANES
  if (!avx512fSupported())
    return nullptr;
  OpAttrs attrs = config.attrs();
  const Shape &x = config.inputShapes[0];
  if (x.size() != 4 || attrs.getBool("training") ||
      attrs.getString("data_format") != "NCHW" || x[1] % 16 != 0 ||
      config.inputShapes.size() != 5 || config.outputShapes.size() != 1 ||
      config.outputTypes[0] != DType::kF32)
    return nullptr;
  for (size_t i = 0; i < config.inputTypes.size(); ++i)
    if (config.inputTypes[i] != DType::kF32 ||
        (i > 0 && config.inputShapes[i] != Shape{x[1]}))
      return nullptr;
  memory::desc md({x[0], x[1], x[2], x[3]}, memory::data_type::f32,
                  memory::format_tag::aBcd16b);
  // nChw16c, or its images further apart (a prefix of a wider tensor's
  // channels: a concat sharing a dense block's buffer).
  const int64_t pixels = x[2] * x[3], image = x[1] * pixels;
  int64_t srcImage = image;
  if (src != md) {
    const dnnl_memory_desc_t &d = src.data;
    const auto &blk = d.format_desc.blocking;
    if (d.ndims != 4 || d.format_kind != dnnl_blocked ||
        d.data_type != dnnl_f32 || d.offset0 != 0 || blk.inner_nblks != 1 ||
        blk.inner_blks[0] != 16 || blk.inner_idxs[0] != 1 ||
        blk.strides[1] != 16 * pixels || blk.strides[2] != 16 * x[3] ||
        blk.strides[3] != 16 || blk.strides[0] < image ||
        blk.strides[0] % 16 != 0)
      return nullptr;
    for (int i = 0; i < 4; ++i)
      if (d.dims[i] != x[i] || d.padded_dims[i] != x[i])
        return nullptr;
    srcImage = blk.strides[0];
  }
  return std::make_unique<BlockedBatchNormKernel>(
      src, md, x[1], pixels, x[0], srcImage,
      static_cast<float>(attrs.getFloat("epsilon")), relu);
#else
  return nullptr;
#endif
}

} // namespace gopt::runtime::cpu
