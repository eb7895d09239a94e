//===- BlockedPool.cpp - Max pooling of f32 nChw16c tensors ---------------===//
//
// y[n][b][oy][ox][0..15] = max over the window's rows and columns inside the
// source of x[n][b][iy][ix][0..15] (or of x[n][iy][ix][b * 16 + 0..15] for an
// NHWC source). Each result row (image, channel block,
// output row) is one work item; its window rows are clipped once and each
// pixel's columns clipped only at the edges.
//
//===----------------------------------------------------------------------===//
#include "BlockedPool.h"
#include "EnvSwitch.h"

#include "Avx512Lanes.h"
#include "gopt/runtime/OpSchema.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace gopt::runtime::cpu {
namespace {

using dnnl::memory;

using PoolGeometry = BlockedPoolGeometry;

#ifdef GOPT_HAVE_AVX512_LANES
// GCC 12 warns about _mm512_max_ps's own undefined initial vector.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Result rows [begin, end): [images][blocks][oh] for an nChw16c source,
// [images][oh][blocks] for an NHWC one, so that one thread's consecutive
// rows read neighbouring cache lines of the same source pixels.
GOPT_AVX512BW void maxPoolRows(const PoolGeometry &g, const float *x, float *y,
                               int64_t begin, int64_t end) {
  // Strides (in floats) between a window's neighbouring pixels and rows.
  const int64_t ps = g.nhwcSource ? g.blocks * 16 : 16, rs = g.w * ps;
  for (int64_t row = begin; row < end; ++row) {
    int64_t n, b, oy;
    if (g.nhwcSource) {
      n = row / (g.oh * g.blocks);
      oy = row / g.blocks % g.oh;
      b = row % g.blocks;
    } else {
      n = row / (g.blocks * g.oh);
      b = row / g.oh % g.blocks;
      oy = row % g.oh;
    }
    const float *xp = g.nhwcSource ? x + n * g.h * rs + b * 16
                                   : x + (n * g.blocks + b) * g.h * rs;
    float *yr = y + ((n * g.blocks + b) * g.oh + oy) * g.ow * 16;
    const int64_t y0 = std::max<int64_t>(0, oy * g.sh - g.padT);
    const int64_t y1 = std::min(g.h, oy * g.sh - g.padT + g.kh);
    // 3x3 windows wholly inside the source (all but the edges of ResNet's
    // pool): nine loads in a straight line, without the loops' overhead.
    int64_t fastBegin = g.ow, fastEnd = g.ow;
    if (g.kh == 3 && g.kw == 3 && y1 - y0 == 3 && g.w + g.padL >= 3) {
      fastBegin = std::min(g.ow, (g.padL + g.sw - 1) / g.sw);
      fastEnd =
          std::max(fastBegin, std::min(g.ow, (g.w + g.padL - 3) / g.sw + 1));
    }
    for (int64_t ox = fastBegin; ox < fastEnd; ++ox) {
      const float *r0 = xp + y0 * rs + (ox * g.sw - g.padL) * ps;
      const float *r1 = r0 + rs, *r2 = r1 + rs;
      __m512 a = _mm512_max_ps(_mm512_loadu_ps(r0), _mm512_loadu_ps(r0 + ps));
      __m512 m = _mm512_max_ps(_mm512_loadu_ps(r1), _mm512_loadu_ps(r1 + ps));
      __m512 c = _mm512_max_ps(_mm512_loadu_ps(r2), _mm512_loadu_ps(r2 + ps));
      a = _mm512_max_ps(a, _mm512_loadu_ps(r0 + 2 * ps));
      m = _mm512_max_ps(m, _mm512_loadu_ps(r1 + 2 * ps));
      c = _mm512_max_ps(c, _mm512_loadu_ps(r2 + 2 * ps));
      _mm512_storeu_ps(yr + ox * 16, _mm512_max_ps(_mm512_max_ps(a, m), c));
    }
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      if (ox == fastBegin)
        ox = fastEnd;
      if (ox >= g.ow)
        break;
      const int64_t x0 = std::max<int64_t>(0, ox * g.sw - g.padL);
      const int64_t x1 = std::min(g.w, ox * g.sw - g.padL + g.kw);
      __m512 m = _mm512_loadu_ps(xp + y0 * rs + x0 * ps);
      for (int64_t iy = y0; iy < y1; ++iy) {
        const float *xr = xp + iy * rs;
        for (int64_t ix = x0; ix < x1; ++ix)
          m = _mm512_max_ps(m, _mm512_loadu_ps(xr + ix * ps));
      }
      _mm512_storeu_ps(yr + ox * 16, m);
    }
  }
}
#pragma GCC diagnostic pop
#endif

class BlockedMaxPoolKernel : public LayoutKernel {
public:
  BlockedMaxPoolKernel(const memory::desc &src, const memory::desc &dst,
                       const PoolGeometry &g)
      : src_(src), dst_(dst), g_(g) {}

  Status run(const std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    if (!blockedMaxPool(g_, in[0].data<float>(), out[0].data<float>()))
      return internalError("blocked max pool built without AVX-512");
    return Status::success();
  }
  const char *implementation() const override { return "gopt-blocked"; }
  memory::desc inputDesc(int i) const override {
    return i == 0 ? src_ : memory::desc();
  }
  memory::desc outputDesc() const override { return dst_; }

private:
  memory::desc src_, dst_;
  PoolGeometry g_;
};

} // namespace

bool blockedMaxPool(const BlockedPoolGeometry &g, const float *x, float *y) {
#ifdef GOPT_HAVE_AVX512_LANES
  if (!avx512fSupported())
    return false;
  const int64_t rows = g.images * g.blocks * g.oh;
  // Small results (under 32K vectors read) run on one thread.
  const int64_t reads = rows * g.ow * g.kh * g.kw;
  const int threads = reads < (int64_t(1) << 15) ? 1 : omp_get_max_threads();
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int nt = omp_get_num_threads(), id = omp_get_thread_num();
    maxPoolRows(g, x, y, rows * id / nt, rows * (id + 1) / nt);
  }
  return true;
#else
  return false;
#endif
}

std::unique_ptr<LayoutKernel> createBlockedMaxPool(const KernelConfig &config,
                                                   const memory::desc &src) {
  if (!envSwitchOn("GOPT_BLOCKED_POOL"))
    return nullptr;
#ifdef GOPT_HAVE_AVX512_LANES
  if (!avx512fSupported() || config.op->kind() != "max_pool")
    return nullptr;
  OpAttrs attrs = config.attrs();
  const Shape &x = config.inputShapes[0];
  if (x.size() != 4 || attrs.getString("data_format") != "NCHW" ||
      x[1] % 16 != 0 || config.inputTypes[0] != DType::kF32 ||
      config.outputShapes.size() != 1 || config.outputTypes[0] != DType::kF32)
    return nullptr;
  memory::desc blocked({x[0], x[1], x[2], x[3]}, memory::data_type::f32,
                       memory::format_tag::aBcd16b);
  memory::desc nhwc({x[0], x[1], x[2], x[3]}, memory::data_type::f32,
                    memory::format_tag::acdb);
  // An NHWC source (a stem oneDNN ran channels-last, ResNet-50 at batch 8)
  // is pooled straight into nChw16c: the convolutions after the pool want
  // it blocked, and the reorder then costs as much as the pool.
  const bool nhwcSource = src == nhwc && envSwitchOn("GOPT_BLOCKED_POOL_NHWC");
  if (src != blocked && !nhwcSource)
    return nullptr;
  std::vector<int64_t> kernel = attrs.getInts("kernel");
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  if (kernel.size() != 2 || strides.size() != 2 || pads.size() != 4)
    return nullptr;
  std::string padding = attrs.getString("padding");
  bool ceilMode = attrs.getBool("ceil_mode");
  StatusOr<WindowDim> wh = computeWindowDim(
      x[2], kernel[0], strides[0], 1, padding, pads[0], pads[1], ceilMode);
  StatusOr<WindowDim> ww = computeWindowDim(
      x[3], kernel[1], strides[1], 1, padding, pads[2], pads[3], ceilMode);
  if (!wh.ok() || !ww.ok())
    return nullptr;
  PoolGeometry g{x[0],        x[1] / 16,   x[2],          x[3],
                 wh->outSize, ww->outSize, kernel[0],     kernel[1],
                 strides[0],  strides[1],  wh->padBefore, ww->padBefore,
                 nhwcSource};
  if (config.outputShapes[0] != Shape{x[0], x[1], g.oh, g.ow} || g.oh <= 0 ||
      g.ow <= 0 || g.kh <= 0 || g.kw <= 0 || g.sh <= 0 || g.sw <= 0)
    return nullptr;
  // Every window must reach into the source (the first and last are the
  // ones that may not).
  auto inside = [](int64_t out, int64_t in, int64_t k, int64_t s, int64_t pad) {
    return pad < k && (out - 1) * s - pad < in;
  };
  if (!inside(g.oh, g.h, g.kh, g.sh, g.padT) ||
      !inside(g.ow, g.w, g.kw, g.sw, g.padL))
    return nullptr;
  memory::desc dst({x[0], x[1], g.oh, g.ow}, memory::data_type::f32,
                   memory::format_tag::aBcd16b);
  return std::make_unique<BlockedMaxPoolKernel>(src, dst, g);
#else
  return nullptr;
#endif
}

} // namespace gopt::runtime::cpu
