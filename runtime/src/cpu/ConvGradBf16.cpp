//===- ConvGradBf16.cpp - bf16 conv gradients on AMX tiles ----------------===//
//
// The filter gradient of a few-channel NHWC bf16 convolution with a large
// output (ResNet's 7x7 stride-2 stem over RGB: 147 taps x channels, 64
// output channels, 401,408 output pixels at batch 32) is a product
// dW[kw][kh,ci][co] = sum over pixels of x-window[kw][kh,ci][pixel] *
// dy[pixel][co] with a long reduction over pixels and small M and N.
// oneDNN's backward-weights kernel pads the 3 channels to its blocking
// (135 GFLOP/s) and the im2col matmuls write and re-pack a 147-wide column
// buffer per chunk (180-280 GFLOP/s). Here the AMX tiles read their
// operands where they lie:
// - per image, x split into `planes` by column phase (iw mod stride) and
//   channel, each plane row zero-padded: for one kw, the window's values
//   over consecutive output columns are consecutive plane elements, and the
//   (kh, ci) rows of one output row are plane rows a constant stride apart,
//   so one tileloadd reads a 16 (kh,ci) x 32 pixel A tile with no copy;
// - per band of output rows, dy packed as pixel pairs (the B operand's
//   VNNI layout), zero past the row's end (output columns are padded to a
//   multiple of 32, the tiles' reduction depth);
// - per kw and block of 16 (kh, ci) rows, up to 4 f32 C tiles of 16 output
//   channels stay in tile registers over the whole band.
// Each thread takes a run of images and sums in its own f32 buffer; the
// threads' buffers are added in thread order and rounded once.
//
//===----------------------------------------------------------------------===//
#include "ConvGradBf16.h"
#include "AmxTiles.h"
#include "ElementLoops.h"
#include "EnvSwitch.h"
#include "OneDnn.h"
#include "gopt/runtime/Kernel.h"
#include "gopt/runtime/OpSchema.h"

#include <dnnl.hpp>
#include <omp.h>
#if defined(__x86_64__) && defined(__linux__)
#include <immintrin.h>
#define GOPT_AMX_FILTER_GRAD 1
#endif

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

namespace gopt::runtime::cpu {

std::optional<NhwcConvGeometry> nhwcConvGeometry(const OpAttrs &attrs,
                                                 const Shape &x,
                                                 const Shape &dy,
                                                 const Shape &f) {
  if (attrs.getString("data_format") != "NHWC" || attrs.getInt("groups") != 1 ||
      x.size() != 4 || dy.size() != 4 || f.size() != 4)
    return std::nullopt;
  NhwcConvGeometry g;
  g.oihw = attrs.getString("filter_format") == "OIHW";
  g.n = x[0], g.h = x[1], g.w = x[2], g.cin = x[3];
  g.kh = g.oihw ? f[2] : f[0];
  g.kw = g.oihw ? f[3] : f[1];
  g.cout = g.oihw ? f[0] : f[3];
  g.oh = dy[1], g.ow = dy[2];
  std::vector<int64_t> strides = attrs.getWindowInts("strides");
  std::vector<int64_t> dilations = attrs.getWindowInts("dilations");
  std::vector<int64_t> pads = attrs.getWindowInts("pads");
  if (dilations[0] != 1 || dilations[1] != 1)
    return std::nullopt;
  g.sh = strides[0], g.sw = strides[1];
  StatusOr<WindowDim> wh = computeWindowDim(
      g.h, g.kh, g.sh, 1, attrs.getString("padding"), pads[0], pads[1], false);
  StatusOr<WindowDim> ww = computeWindowDim(
      g.w, g.kw, g.sw, 1, attrs.getString("padding"), pads[2], pads[3], false);
  if (!wh.ok() || !ww.ok() || wh->outSize != g.oh || ww->outSize != g.ow ||
      dy[0] != g.n || dy[3] != g.cout || (g.oihw ? f[1] : f[2]) != g.cin ||
      wh->padBefore < 0 || ww->padBefore < 0)
    return std::nullopt;
  g.padTop = wh->padBefore, g.padLeft = ww->padBefore;
  return g;
}

#ifndef GOPT_AMX_FILTER_GRAD
std::unique_ptr<Kernel> createAmxFewChannelFilterGrad(const KernelConfig &) {
  return nullptr;
}
std::unique_ptr<Kernel> createStridedBackpropInputMatmul(const KernelConfig &) {
  return nullptr;
}
std::unique_ptr<Kernel> createBackpropInputAsForward(const KernelConfig &) {
  return nullptr;
}
#else
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Dims = memory::dims;

// GOPT_CONV_FILTER_AMX=0 keeps the im2col matmuls / oneDNN (for comparing).
bool amxFilterGradEnabled() { return envSwitchOn("GOPT_CONV_FILTER_AMX"); }

// Tiles 0-3: C (mRows x 16 f32), 4-5: A (mRows x 32 bf16), 6-7: B (16
// pixel pairs x 16 channels).
TileConfig tileConfig(int mRows) {
  TileConfig t;
  for (int i = 0; i < 8; ++i) {
    t.colsb[i] = 64;
    t.rows[i] = static_cast<uint8_t>(i < 6 ? mRows : 16);
  }
  return t;
}

// C[m][n] (tile 2m + n) += sum over the band's rows and k-steps of
// A[m] * B[n], for MB blocks of (kh, ci) rows and NB blocks of 16 output
// channels: each A and B tile loaded once per k-step. Strides in bytes;
// `aRowStep` (elements) and `bRowStep` (bytes) advance one output row.
template <int MB, int NB>
__attribute__((target("amx-tile,amx-bf16"))) void
bandProduct(float *c0, float *c1, int64_t cStride, const uint16_t *a0,
            const uint16_t *a1, int64_t aStride, int64_t aRowStep,
            const uint8_t *b, int64_t bStride, int64_t bRowStep, int64_t rows,
            int64_t kSteps) {
  _tile_loadd(0, c0, cStride);
  if constexpr (NB > 1)
    _tile_loadd(1, c0 + 16, cStride);
  if constexpr (MB > 1)
    _tile_loadd(2, c1, cStride);
  if constexpr (MB > 1 && NB > 1)
    _tile_loadd(3, c1 + 16, cStride);
  for (int64_t i = 0; i < rows; ++i) {
    const uint16_t *ar0 = a0 + i * aRowStep, *ar1 = a1 + i * aRowStep;
    const uint8_t *br = b + i * bRowStep;
    for (int64_t ks = 0; ks < kSteps; ++ks) {
      const uint8_t *bk = br + ks * 16 * bStride;
      _tile_loadd(4, ar0 + ks * 32, aStride);
      _tile_loadd(6, bk, bStride);
      _tile_dpbf16ps(0, 4, 6);
      if constexpr (NB > 1) {
        _tile_loadd(7, bk + 64, bStride);
        _tile_dpbf16ps(1, 4, 7);
      }
      if constexpr (MB > 1) {
        _tile_loadd(5, ar1 + ks * 32, aStride);
        _tile_dpbf16ps(2, 5, 6);
        if constexpr (NB > 1)
          _tile_dpbf16ps(3, 5, 7);
      }
    }
  }
  _tile_stored(0, c0, cStride);
  if constexpr (NB > 1)
    _tile_stored(1, c0 + 16, cStride);
  if constexpr (MB > 1)
    _tile_stored(2, c1, cStride);
  if constexpr (MB > 1 && NB > 1)
    _tile_stored(3, c1 + 16, cStride);
}

__attribute__((target("amx-tile"))) void releaseTiles() { _tile_release(); }

class AmxFewChannelFilterGrad : public Kernel {
public:
  AmxFewChannelFilterGrad(const NhwcConvGeometry &g, bool f32Out)
      : g_(g), f32Out_(f32Out) {
    rowsPerKw_ = g_.kh * g_.cin;
    mTiles_ = (rowsPerKw_ + 15) / 16;
    owPad_ = (g_.ow + 31) / 32 * 32;
    // kw - padLeft = q * sw + phase (floor division): the window column of
    // output column ow is plane element ow + q (+ the left padding).
    auto floorDiv = [](int64_t a, int64_t b) {
      return a >= 0 ? a / b : -((-a + b - 1) / b);
    };
    const int64_t qMin = floorDiv(-g_.padLeft, g_.sw),
                  qMax = floorDiv(g_.kw - 1 - g_.padLeft, g_.sw);
    left_ = -qMin;
    planeLen_ = std::max(owPad_ + qMax, (g_.w + g_.sw - 1) / g_.sw) + left_;
    planeLen_ = (planeLen_ + 31) / 32 * 32;
    planeRows_ = (g_.oh - 1) * g_.sh + g_.kh;
    // One output row a band: its packed dy (16 KiB at 64 channels) and
    // plane rows stay in L1 over the (kw, kh, ci) blocks; longer bands
    // (fewer C tile loads and stores) ran slower (ResNet-18's stem, one
    // thread: 1 row 13.5-14.6 ms of tile products, 2-16 rows 19-21).
    bandRows_ = 1;
    const int lanes = static_cast<int>(
        std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), g_.n)));
    lanes_.resize(lanes);
    for (Lane &lane : lanes_) {
      // Zeroed once: each image writes the same interior positions, the
      // padding stays zero.
      lane.planes.assign(g_.sw * planeRows_ * g_.cin * planeLen_, 0);
      lane.pack.assign(bandRows_ * owPad_ / 2 * g_.cout, 0);
      lane.acc.assign(g_.kw * mTiles_ * 16 * g_.cout, 0.0f);
    }
  }

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    const uint16_t *x = inputs[0].data<uint16_t>();
    const uint16_t *dy = inputs[1].data<uint16_t>();
    const int lanes = static_cast<int>(lanes_.size());
#pragma omp parallel for num_threads(lanes) schedule(static, 1) if (lanes > 1)
    for (int l = 0; l < lanes; ++l) {
      Lane &lane = lanes_[l];
      std::fill(lane.acc.begin(), lane.acc.end(), 0.0f);
      for (int64_t img = l * g_.n / lanes; img < (l + 1) * g_.n / lanes; ++img)
        image(x + img * g_.h * g_.w * g_.cin,
              dy + img * g_.oh * g_.ow * g_.cout, lane);
      releaseTiles();
    }
    std::vector<float> &sum = lanes_[0].acc;
    for (int l = 1; l < lanes; ++l)
      for (size_t i = 0; i < sum.size(); ++i)
        sum[i] += lanes_[l].acc[i];
    const int64_t mPad = mTiles_ * 16;
    for (int64_t kh = 0; kh < g_.kh; ++kh)
      for (int64_t kw = 0; kw < g_.kw; ++kw)
        for (int64_t ci = 0; ci < g_.cin; ++ci)
          for (int64_t co = 0; co < g_.cout; ++co) {
            float v = sum[(kw * mPad + kh * g_.cin + ci) * g_.cout + co];
            int64_t at = g_.oihw
                             ? ((co * g_.cin + ci) * g_.kh + kh) * g_.kw + kw
                             : ((kh * g_.kw + kw) * g_.cin + ci) * g_.cout + co;
            if (f32Out_)
              outputs[0].data<float>()[at] = v;
            else
              outputs[0].data<uint16_t>()[at] = fromF32<uint16_t>(v);
          }
    return Status::success();
  }
  const char *implementation() const override { return "amx"; }
  size_t workspaceBytes() const override {
    size_t bytes = 0;
    for (const Lane &lane : lanes_)
      bytes +=
          lane.planes.size() * 2 + lane.pack.size() * 4 + lane.acc.size() * 4;
    return bytes;
  }

private:
  struct Lane {
    std::vector<uint16_t> planes; // [phase][plane row][ci][planeLen]
    std::vector<uint32_t> pack;   // [band row][owPad / 2][cout], 2 pixels
    std::vector<float> acc;       // [kw][mTiles * 16][cout]
  };

  // x of one image into the planes: plane row ih + padTop, element
  // iw / sw + left of phase iw % sw.
  void fillPlanes(const uint16_t *x, uint16_t *planes) const {
    for (int64_t ih = 0; ih < g_.h; ++ih) {
      const int64_t row = ih + g_.padTop;
      if (row >= planeRows_)
        break;
      const uint16_t *src = x + ih * g_.w * g_.cin;
      for (int64_t r = 0; r < g_.sw; ++r)
        for (int64_t ci = 0; ci < g_.cin; ++ci) {
          uint16_t *dst = planes +
                          ((r * planeRows_ + row) * g_.cin + ci) * planeLen_ +
                          left_;
          const uint16_t *s = src + r * g_.cin + ci;
          const int64_t step = g_.sw * g_.cin,
                        count = (g_.w - r + g_.sw - 1) / g_.sw;
          for (int64_t j = 0; j < count; ++j)
            dst[j] = s[j * step];
        }
    }
  }

  // Output rows [oh0, oh0 + rows) of one image's dy as pixel pairs: per
  // 16 channels, one permutation interleaves two pixels' values.
  __attribute__((target("avx512f,avx512bw"))) void
  packDy(const uint16_t *dy, int64_t oh0, int64_t rows, uint32_t *pack) const {
    alignas(64) uint16_t order[32];
    for (int i = 0; i < 32; ++i)
      order[i] = static_cast<uint16_t>(i / 2 + (i % 2) * 32);
    const __m512i index = _mm512_load_si512(order);
    const int64_t pairs = owPad_ / 2, c = g_.cout;
    for (int64_t i = 0; i < rows; ++i) {
      const uint16_t *d = dy + (oh0 + i) * g_.ow * c;
      uint32_t *p = pack + i * pairs * c;
      for (int64_t pp = 0; pp < pairs; ++pp) {
        const int64_t o = 2 * pp;
        uint32_t *dst = p + pp * c;
        if (o >= g_.ow) {
          std::memset(dst, 0, c * 4);
          continue;
        }
        const uint16_t *e = d + o * c, *f = d + (o + 1) * c;
        for (int64_t co = 0; co < c; co += 16) {
          __m512i ve = _mm512_castsi256_si512(
              _mm256_loadu_si256(reinterpret_cast<const __m256i *>(e + co)));
          __m512i vf = o + 1 < g_.ow
                           ? _mm512_castsi256_si512(_mm256_loadu_si256(
                                 reinterpret_cast<const __m256i *>(f + co)))
                           : _mm512_setzero_si512();
          _mm512_storeu_si512(dst + co,
                              _mm512_permutex2var_epi16(ve, index, vf));
        }
      }
    }
  }

  // The A operand of kw's window over (kh, ci) rows from mt * 16, output
  // row oh, output column 0.
  const uint16_t *planeAt(const Lane &lane, int64_t kw, int64_t oh,
                          int64_t mt) const {
    const int64_t d = kw - g_.padLeft;
    const int64_t q = d >= 0 ? d / g_.sw : -((-d + g_.sw - 1) / g_.sw);
    const int64_t phase = d - q * g_.sw;
    return lane.planes.data() +
           ((phase * planeRows_ + oh * g_.sh) * g_.cin + mt * 16) * planeLen_ +
           q + left_;
  }

  void image(const uint16_t *x, const uint16_t *dy, Lane &lane) const {
    fillPlanes(x, lane.planes.data());
    const int64_t mPad = mTiles_ * 16, kSteps = owPad_ / 32;
    const int64_t aStride = planeLen_ * 2, bStride = g_.cout * 4,
                  bRowStep = owPad_ / 2 * g_.cout * 4;
    for (int64_t oh0 = 0; oh0 < g_.oh; oh0 += bandRows_) {
      const int64_t rows = std::min(bandRows_, g_.oh - oh0);
      packDy(dy, oh0, rows, lane.pack.data());
      // The packed dy and the planes are written by plain stores that the
      // tile loads (asm statements) must see.
      asm volatile("" ::: "memory");
      for (int64_t mt = 0; mt < mTiles_; ++mt) {
        const int mRows =
            static_cast<int>(std::min<int64_t>(16, rowsPerKw_ - mt * 16));
        TileConfig config = tileConfig(mRows);
        loadTileConfig(config);
        // Pairs of kw (the last alone when odd) times pairs of 16 channels.
        const int64_t aRowStep = g_.sh * g_.cin * planeLen_;
        const uint8_t *b = reinterpret_cast<const uint8_t *>(lane.pack.data());
        for (int64_t kw = 0; kw < g_.kw; kw += 2) {
          const bool pair = kw + 1 < g_.kw;
          const uint16_t *a0 = planeAt(lane, kw, oh0, mt),
                         *a1 = pair ? planeAt(lane, kw + 1, oh0, mt) : a0;
          float *c0 = lane.acc.data() + (kw * mPad + mt * 16) * g_.cout;
          float *c1 = pair ? c0 + 16 * mTiles_ * g_.cout : c0;
          for (int64_t co = 0; co < g_.cout; co += 32) {
            const bool two = co + 16 < g_.cout;
            auto product = pair ? (two ? bandProduct<2, 2> : bandProduct<2, 1>)
                                : (two ? bandProduct<1, 2> : bandProduct<1, 1>);
            product(c0 + co, c1 + co, bStride, a0, a1, aStride, aRowStep,
                    b + co * 4, bStride, bRowStep, rows, kSteps);
          }
        }
      }
      asm volatile("" ::: "memory");
    }
  }

  NhwcConvGeometry g_;
  bool f32Out_;
  int64_t rowsPerKw_ = 0, mTiles_ = 0, owPad_ = 0, left_ = 0, planeLen_ = 0,
          planeRows_ = 0, bandRows_ = 0;
  std::vector<Lane> lanes_;
};

// conv2d_backprop_input of an NHWC bf16 3x3 convolution with a small
// output (ResNet's stride-2 convolutions of layers 3 and 4, and layer 4's
// unit-stride ones) as a matrix product and a
// scatter: col[p][t, ci] = sum over co of dy[p][co] * W[co][ci][t] (oneDNN's
// AMX matmul, f32 results), then each output pixel's column row added into
// the input pixels its taps read (col2im, f32 rows of one image) and
// rounded once. oneDNN's backward-data kernel ran these at 470-1000
// GFLOP/s (one thread, batch 32, quiet machine). Images go in chunks whose
// columns fit in L2; each thread takes a run of chunks with single-threaded
// matmuls sharing one packed copy of the weights.
class StridedBackpropInputMatmul : public Kernel {
public:
  static std::unique_ptr<Kernel> create(const KernelConfig &c);

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    const uint16_t *dy = inputs[0].data<uint16_t>();
    const uint16_t *w = inputs[1].data<uint16_t>();
    uint16_t *dx = outputs[0].data<uint16_t>();
    const int64_t taps = g_.kh * g_.kw, k = taps * g_.cin;
    // The filter as [Cout][t][ci] (OIHW is [Cout][ci][t]; HWIO
    // [t][ci][Cout] is read transposed), then packed for the matmul.
    const uint16_t *plain = w;
    if (g_.oihw && taps > 1) {
#pragma omp parallel for schedule(static)
      for (int64_t co = 0; co < g_.cout; ++co)
        for (int64_t ci = 0; ci < g_.cin; ++ci)
          for (int64_t t = 0; t < taps; ++t)
            filter_[(co * taps + t) * g_.cin + ci] =
                w[(co * g_.cin + ci) * taps + t];
      plain = filter_.data();
    }
    const int lanes = static_cast<int>(lanes_.size());
    try {
      filterUser_.set_data_handle(const_cast<uint16_t *>(plain));
      if (pack_) {
        pack_.execute(stream_, filterUser_, filterPacked_);
        stream_.wait();
      }
    } catch (const dnnl::error &e) {
      return internalError("oneDNN: ", e.what());
    }
    const memory &weights = pack_ ? filterPacked_ : filterUser_;
    const int64_t chunks = g_.n / chunkImages_;
    std::vector<Status> status(lanes, Status::success());
#pragma omp parallel for num_threads(lanes) schedule(static, 1) if (lanes > 1)
    for (int l = 0; l < lanes; ++l) {
      Lane &lane = lanes_[l];
      try {
        for (int64_t c = l * chunks / lanes; c < (l + 1) * chunks / lanes;
             ++c) {
          const int64_t image0 = c * chunkImages_;
          lane.dy.set_data_handle(const_cast<uint16_t *>(dy) +
                                  image0 * g_.oh * g_.ow * g_.cout);
          lane.col.set_data_handle(lane.colData.data());
          lane.matmul.execute(lane.stream, {{DNNL_ARG_SRC, lane.dy},
                                            {DNNL_ARG_WEIGHTS, weights},
                                            {DNNL_ARG_DST, lane.col}});
          lane.stream.wait();
          for (int64_t i = 0; i < chunkImages_; ++i)
            col2im(lane.colData.data() + i * g_.oh * g_.ow * k,
                   dx + (image0 + i) * g_.h * g_.w * g_.cin, lane.acc.data());
        }
      } catch (const dnnl::error &e) {
        status[l] = internalError("oneDNN: ", e.what());
      }
    }
    for (Status &st : status)
      GOPT_RETURN_IF_ERROR(st);
    return Status::success();
  }
  const char *implementation() const override { return "onednn-col2im"; }
  size_t workspaceBytes() const override {
    size_t bytes = filter_.size() * 2 + filterPacked_.get_desc().get_size();
    for (const Lane &lane : lanes_)
      bytes += (lane.colData.size() + lane.acc.size()) * 4;
    return bytes;
  }

private:
  StridedBackpropInputMatmul() : stream_(cpuEngine()) {}

  // One image's columns [OH * OW][taps * Cin] added into f32 rows of dx,
  // rounded into `dx` ([H][W][Cin]).
  void col2im(const float *col, uint16_t *dx, float *acc) const {
    const int64_t taps = g_.kh * g_.kw, k = taps * g_.cin, c = g_.cin;
    std::fill(acc, acc + g_.h * g_.w * c, 0.0f);
    for (int64_t oh = 0; oh < g_.oh; ++oh)
      for (int64_t ow = 0; ow < g_.ow; ++ow) {
        const float *row = col + (oh * g_.ow + ow) * k;
        for (int64_t r = 0; r < g_.kh; ++r) {
          const int64_t ih = oh * g_.sh - g_.padTop + r;
          if (ih < 0 || ih >= g_.h)
            continue;
          for (int64_t s = 0; s < g_.kw; ++s) {
            const int64_t iw = ow * g_.sw - g_.padLeft + s;
            if (iw < 0 || iw >= g_.w)
              continue;
            float *dst = acc + (ih * g_.w + iw) * c;
            const float *src = row + (r * g_.kw + s) * c;
#pragma omp simd
            for (int64_t ci = 0; ci < c; ++ci)
              dst[ci] += src[ci];
          }
        }
      }
    const int64_t total = g_.h * g_.w * c;
#pragma omp simd
    for (int64_t i = 0; i < total; ++i)
      dx[i] = fromF32<uint16_t>(acc[i]);
  }

  struct Lane {
    dnnl::stream stream;
    dnnl::matmul matmul;
    memory dy, col;
    std::vector<float> colData, acc;
  };

  NhwcConvGeometry g_;
  int64_t chunkImages_ = 1;
  dnnl::stream stream_;
  dnnl::reorder pack_; // empty when the matmul reads the plain filter
  memory filterUser_, filterPacked_;
  std::vector<uint16_t> filter_;
  std::vector<Lane> lanes_;
};

// GOPT_CONV_BACKPROP_INPUT_COL2IM=0 keeps oneDNN's backward-data kernel.
bool stridedCol2imEnabled() {
  return envSwitchOn("GOPT_CONV_BACKPROP_INPUT_COL2IM");
}

std::unique_ptr<Kernel>
StridedBackpropInputMatmul::create(const KernelConfig &c) {
  if (!c.allOfType(DType::kBF16) || c.inputShapes.size() != 2 ||
      !stridedCol2imEnabled() || !amxBf16Usable())
    return nullptr;
  std::optional<NhwcConvGeometry> g = nhwcConvGeometry(
      c.attrs(), c.outputShapes[0], c.inputShapes[0], c.inputShapes[1]);
  if (!g)
    return nullptr;
  auto kernel = std::unique_ptr<StridedBackpropInputMatmul>(
      new StridedBackpropInputMatmul());
  StridedBackpropInputMatmul &k = *kernel;
  k.g_ = *g;
  // Many channels both ways (the matmul's depth and width), whole AMX
  // tiles of channels.
  const int64_t taps = k.g_.kh * k.g_.kw, kDim = taps * k.g_.cin,
                imagePixels = k.g_.oh * k.g_.ow;
  // Windows of 3x3 and more over small output images (ResNet's layers 3
  // and 4, 14x14 and 7x7). At 28x28 (layer 2) the matmul's depth (Cout
  // 128) is short for its f32 columns and oneDNN's kernel ran as fast (one
  // thread, batch 32, 4 steps under load: 133 vs 130 ms); the 1x1
  // downsamples ran no faster (layer 2 29 vs 32-39 ms, layers 3 and 4
  // within the noise).
  // Unit stride only at 7x7 and below (layer 4: oneDNN's kernel 258-275
  // against 154-178 ms; at 14x14, layer 3, 86-93 against 183-188) and
  // with 1,024+ output pixels in the batch: the per-call permutation and
  // packing of the filter did not pay at batch 3 (33-36 against 48-52 ms).
  const bool unitStride = k.g_.sh == 1 && k.g_.sw == 1;
  if (k.g_.n == 0 || imagePixels == 0 ||
      imagePixels > (unitStride ? 49 : 196) ||
      (unitStride && k.g_.n * imagePixels < 1024) || taps < 9 ||
      k.g_.cin < 64 || k.g_.cout < 64 || k.g_.cin % 16 || k.g_.cout % 16)
    return nullptr;
  // Images a chunk: columns within 2 MiB (f32), dividing the batch.
  k.chunkImages_ = std::max<int64_t>(
      1,
      std::min<int64_t>(k.g_.n, (int64_t(2) << 20) / (imagePixels * kDim * 4)));
  while (k.g_.n % k.chunkImages_)
    --k.chunkImages_;
  const int64_t m = k.chunkImages_ * imagePixels;
  try {
    using DT = memory::data_type;
    memory::desc dyMd({m, k.g_.cout}, DT::bf16, Tag::ab);
    memory::desc colMd({m, kDim}, DT::f32, Tag::ab);
    // [Cout][t][ci] row-major, or HWIO's [t][ci][Cout] read transposed.
    memory::desc userMd =
        k.g_.oihw
            ? memory::desc({k.g_.cout, kDim}, DT::bf16, Tag::ab)
            : memory::desc({k.g_.cout, kDim}, DT::bf16, Dims{1, k.g_.cout});
    memory::desc anyMd({k.g_.cout, kDim}, DT::bf16, Tag::any);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(dyMd, anyMd, colMd),
                                    cpuEngine());
    if (std::strstr(pd.impl_info_str(), "ref"))
      return nullptr;
    k.filterUser_ = memory(userMd, cpuEngine(), DNNL_MEMORY_NONE);
    if (pd.weights_desc() != userMd) {
      k.filterPacked_ = memory(pd.weights_desc(), cpuEngine());
      k.pack_ = dnnl::reorder(k.filterUser_, k.filterPacked_);
    }
    const int64_t chunks = k.g_.n / k.chunkImages_;
    const int lanes = static_cast<int>(
        std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), chunks)));
    for (int l = 0; l < lanes; ++l)
      k.lanes_.push_back(Lane{dnnl::stream(cpuEngine()), dnnl::matmul(pd),
                              memory(dyMd, cpuEngine(), DNNL_MEMORY_NONE),
                              memory(colMd, cpuEngine(), DNNL_MEMORY_NONE),
                              std::vector<float>(m * kDim),
                              std::vector<float>(k.g_.h * k.g_.w * k.g_.cin)});
  } catch (const dnnl::error &) {
    return nullptr;
  }
  if (k.g_.oihw && taps > 1)
    k.filter_.resize(k.g_.cout * kDim);
  return std::unique_ptr<Kernel>(std::move(kernel));
}

// conv2d_backprop_input of an NHWC bf16 convolution as forward
// convolutions of dy, one per phase of dx (ih mod stride, iw mod stride):
// the rows ih = a + sh * m read dy row m + (a + padTop - r) / sh through
// the taps r with a + padTop - r divisible by sh, a unit-stride
// correlation with those taps in reverse order (for unit stride, one
// phase: the whole filter flipped, pads KH-1-pad) and the filter
// transposed ([ci][co]). oneDNN 2.6's forward kernel for plain NHWC
// (brgconv) ran ResNet-18's unit-stride 3x3 input gradients faster than
// its backward-data kernel (layer 4, 7x7, 512 channels: 13.6-14.0 against
// 17.0-17.9 ms, and 18.6-22.9 for the matmul + col2im; layers 1-3 about
// 1 ms each; one thread, batch 32). Per run each phase's sub-filter is
// gathered into a plain buffer (OIHW [co][ci][taps], HWIO [taps][ci][co]
// order, described to oneDNN by strides) and reordered into the
// primitive's blocked layout; a strided convolution's phases are
// computed into a dense buffer and copied into dx's pixels. The
// convolutions sum in f32 and round once, as the backward-data kernel.
class BackpropInputAsForward : public Kernel {
public:
  static std::unique_ptr<Kernel> create(const KernelConfig &c);

  Status run(const std::vector<Tensor> &inputs,
             std::vector<Tensor> &outputs) override {
    const uint16_t *w = inputs[1].data<uint16_t>();
    uint16_t *dx = outputs[0].data<uint16_t>();
    try {
      for (Phase &p : phases_) {
        if (p.taps.empty()) {
          zero(p, dx);
          continue;
        }
        gatherFilter(p, w);
        if (p.pack)
          p.pack.execute(stream_, p.filterMem, p.packed);
        p.dy.set_data_handle(const_cast<void *>(inputs[0].data()));
        p.dx.set_data_handle(p.dense.empty() ? dx + p.dxOffset
                                             : p.dense.data());
        p.conv.execute(stream_,
                       {{DNNL_ARG_SRC, p.dy},
                        {DNNL_ARG_WEIGHTS, p.pack ? p.packed : p.filterMem},
                        {DNNL_ARG_DST, p.dx}});
        stream_.wait();
        if (!p.dense.empty())
          scatter(p, dx);
      }
    } catch (const dnnl::error &e) {
      return internalError("oneDNN: ", e.what());
    }
    return Status::success();
  }
  const char *implementation() const override { return "onednn-forward"; }
  size_t workspaceBytes() const override {
    size_t bytes = 0;
    for (const Phase &p : phases_)
      bytes += (p.filter.size() + p.dense.size()) * 2 +
               (p.pack ? p.packed.get_desc().get_size() : 0);
    return bytes;
  }

private:
  struct Phase {
    int64_t rows = 0, cols = 0;   // dx rows and columns of the phase
    std::vector<int64_t> taps;    // the filter's r * KW + s, in order
    int64_t dxOffset = 0;         // elements to the phase's first pixel
    std::vector<uint16_t> filter; // the gathered sub-filter
    std::vector<uint16_t> dense;  // [N][rows][cols][Cin], or empty
    dnnl::convolution_forward conv;
    dnnl::reorder pack; // empty when the conv reads `filter`
    memory dy, dx, filterMem, packed;
  };

  BackpropInputAsForward() : stream_(cpuEngine()) {}

  // OIHW [co][ci][t] -> [co][ci][j]; HWIO [t][ci][co] -> [j][ci][co].
  void gatherFilter(Phase &p, const uint16_t *w) const {
    const int64_t taps = g_.kh * g_.kw, rows = g_.cout * g_.cin,
                  sub = static_cast<int64_t>(p.taps.size());
    uint16_t *dst = p.filter.data();
    const int64_t *tap = p.taps.data();
    if (g_.oihw) {
#pragma omp parallel for schedule(static) if (rows * sub >= (1 << 16))
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < sub; ++j)
          dst[i * sub + j] = w[i * taps + tap[j]];
    } else {
#pragma omp parallel for schedule(static) if (rows * sub >= (1 << 16))
      for (int64_t j = 0; j < sub; ++j)
        std::memcpy(dst + j * rows, w + tap[j] * rows, rows * 2);
    }
  }

  // Zeros into dx's pixels of a phase no tap reaches.
  void zero(const Phase &p, uint16_t *dx) const {
#pragma omp parallel for schedule(static) if (g_.n * p.rows > 1)
    for (int64_t nm = 0; nm < g_.n * p.rows; ++nm) {
      const int64_t img = nm / p.rows, m = nm % p.rows;
      uint16_t *row =
          dx + p.dxOffset + (img * g_.h + m * g_.sh) * g_.w * g_.cin;
      for (int64_t q = 0; q < p.cols; ++q)
        std::memset(row + q * g_.sw * g_.cin, 0, g_.cin * 2);
    }
  }

  // The phase's dense result into dx's pixels of that phase.
  void scatter(const Phase &p, uint16_t *dx) const {
    const uint16_t *src = p.dense.data();
#pragma omp parallel for schedule(static) if (g_.n * p.rows > 1)
    for (int64_t nm = 0; nm < g_.n * p.rows; ++nm) {
      const int64_t img = nm / p.rows, m = nm % p.rows;
      uint16_t *row =
          dx + p.dxOffset + (img * g_.h + m * g_.sh) * g_.w * g_.cin;
      for (int64_t q = 0; q < p.cols; ++q)
        std::memcpy(row + q * g_.sw * g_.cin, src + (nm * p.cols + q) * g_.cin,
                    g_.cin * 2);
    }
  }

  NhwcConvGeometry g_;
  dnnl::stream stream_;
  std::vector<Phase> phases_;
};

// GOPT_CONV_BACKPROP_INPUT_FORWARD=0 keeps oneDNN's backward-data kernel
// (or the matmul + col2im where it applies).
bool backpropInputForwardEnabled() {
  return envSwitchOn("GOPT_CONV_BACKPROP_INPUT_FORWARD");
}

// One dimension of a phase: the taps (in the correlation's order, none
// where no tap reaches the phase), the forward's pads and the phase's
// output size; false where it would need a negative pad or one as large as
// its window.
struct PhaseDim {
  std::vector<int64_t> taps;
  int64_t padBefore = 0, padAfter = 0, size = 0;
};
bool phaseDim(int64_t phase, int64_t stride, int64_t pad, int64_t window,
              int64_t in, int64_t out, PhaseDim &d) {
  d.size = in > phase ? (in - phase + stride - 1) / stride : 0;
  // Taps from the largest r down: dy offsets (phase + pad - r) / stride
  // rising by one.
  int64_t offMin = 0;
  for (int64_t r = window - 1; r >= 0; --r)
    if ((phase + pad - r) % stride == 0) {
      if (d.taps.empty())
        offMin = (phase + pad - r) / stride;
      d.taps.push_back(r);
    }
  const int64_t k = static_cast<int64_t>(d.taps.size());
  d.padBefore = -offMin;
  d.padAfter = d.size + offMin + k - 1 - out;
  // No tap: the phase's dx is zero. Else oneDNN's kernels take pads
  // smaller than the window (a larger one would make rows of zeros: odd
  // sizes of some strided windows).
  return d.size > 0 && (k == 0 || (d.padBefore >= 0 && d.padAfter >= 0 &&
                                   d.padBefore < k && d.padAfter < k));
}

std::unique_ptr<Kernel> BackpropInputAsForward::create(const KernelConfig &c) {
  if (!c.allOfType(DType::kBF16) || c.inputShapes.size() != 2 ||
      !backpropInputForwardEnabled() || !amxBf16Usable())
    return nullptr;
  std::optional<NhwcConvGeometry> g = nhwcConvGeometry(
      c.attrs(), c.outputShapes[0], c.inputShapes[0], c.inputShapes[1]);
  if (!g)
    return nullptr;
  auto kernel =
      std::unique_ptr<BackpropInputAsForward>(new BackpropInputAsForward());
  BackpropInputAsForward &k = *kernel;
  k.g_ = *g;
  const int64_t oh = g->oh, ow = g->ow;
  // Windows of 3x3 and more (ResNet's 3x3 convolutions) or strided 1x1
  // ones (its downsamples: one phase a 1x1 convolution, the others zero),
  // whole AMX tiles of channels both ways and strides up to 2. A
  // unit-stride 1x1 filter's gradient has no flip: oneDNN's kernels run
  // it as a matmul already.
  const bool strided1x1 =
      k.g_.kh == 1 && k.g_.kw == 1 && (k.g_.sh > 1 || k.g_.sw > 1);
  if (k.g_.n == 0 || oh == 0 || ow == 0 ||
      (k.g_.kh * k.g_.kw < 9 && !strided1x1) || k.g_.cin < 64 ||
      k.g_.cout < 64 || k.g_.cin % 16 || k.g_.cout % 16 || k.g_.sh > 2 ||
      k.g_.sw > 2)
    return nullptr;
  try {
    using DT = memory::data_type;
    memory::desc dyMd({k.g_.n, k.g_.cout, oh, ow}, DT::bf16, Tag::nhwc);
    for (int64_t a = 0; a < k.g_.sh; ++a)
      for (int64_t b = 0; b < k.g_.sw; ++b) {
        PhaseDim dh, dw;
        if (!phaseDim(a, k.g_.sh, k.g_.padTop, k.g_.kh, k.g_.h, oh, dh) ||
            !phaseDim(b, k.g_.sw, k.g_.padLeft, k.g_.kw, k.g_.w, ow, dw))
          return nullptr;
        Phase p;
        p.rows = dh.size, p.cols = dw.size;
        for (int64_t r : dh.taps)
          for (int64_t s : dw.taps)
            p.taps.push_back(r * k.g_.kw + s);
        p.dxOffset = (a * k.g_.w + b) * k.g_.cin;
        if (p.taps.empty()) { // zeros
          k.phases_.push_back(std::move(p));
          continue;
        }
        const int64_t kr = static_cast<int64_t>(dh.taps.size()),
                      ks = static_cast<int64_t>(dw.taps.size());
        // The sub-filter as dims [O' = ci][I' = co][j][k] over the
        // gathered buffer: OIHW's [co][ci][j][k], HWIO's [j][k][ci][co].
        const Dims wDims = {k.g_.cin, k.g_.cout, kr, ks};
        memory::desc userMd =
            k.g_.oihw
                ? memory::desc(wDims, DT::bf16,
                               Dims{kr * ks, k.g_.cin * kr * ks, ks, 1})
                : memory::desc(wDims, DT::bf16,
                               Dims{k.g_.cout, 1, ks * k.g_.cin * k.g_.cout,
                                    k.g_.cin * k.g_.cout});
        memory::desc anyMd(wDims, DT::bf16, Tag::any);
        const Dims dxDims = {k.g_.n, k.g_.cin, p.rows, p.cols};
        auto primitive = [&](const memory::desc &dxMd) {
          dnnl::convolution_forward::desc desc(
              dnnl::prop_kind::forward_inference,
              dnnl::algorithm::convolution_direct, dyMd, anyMd, dxMd,
              Dims{1, 1}, Dims{0, 0}, Dims{dh.padBefore, dw.padBefore},
              Dims{dh.padAfter, dw.padAfter});
          return dnnl::convolution_forward::primitive_desc(desc, cpuEngine());
        };
        auto fast = [](const dnnl::convolution_forward::primitive_desc &pd) {
          return pd && std::strstr(pd.impl_info_str(), "amx") &&
                 !std::strstr(pd.impl_info_str(), "ref");
        };
        // Unit stride: into dx. Strided: into a dense buffer (oneDNN 2.6's
        // brgconv does not take dx's pixels of a phase in place, a
        // strided destination), then copied.
        memory::desc dxMd(dxDims, DT::bf16, Tag::nhwc);
        dnnl::convolution_forward::primitive_desc pd = primitive(dxMd);
        if (!fast(pd))
          return nullptr;
        if (k.g_.sh > 1 || k.g_.sw > 1)
          p.dense.resize(k.g_.n * p.rows * p.cols * k.g_.cin);
        p.conv = dnnl::convolution_forward(pd);
        p.dy = memory(dyMd, cpuEngine(), DNNL_MEMORY_NONE);
        p.dx = memory(dxMd, cpuEngine(), DNNL_MEMORY_NONE);
        p.filter.resize(k.g_.cout * k.g_.cin * kr * ks);
        p.filterMem = memory(userMd, cpuEngine(), p.filter.data());
        if (pd.weights_desc() != userMd) {
          p.packed = memory(pd.weights_desc(), cpuEngine());
          p.pack = dnnl::reorder(p.filterMem, p.packed);
        }
        k.phases_.push_back(std::move(p));
      }
  } catch (const dnnl::error &) {
    return nullptr;
  }
  return std::unique_ptr<Kernel>(std::move(kernel));
}

} // namespace

std::unique_ptr<Kernel> createAmxFewChannelFilterGrad(const KernelConfig &c) {
  if (c.inputShapes.size() != 2 || c.outputShapes.size() != 1 ||
      c.inputTypes.size() != 2 || c.inputTypes[0] != DType::kBF16 ||
      c.inputTypes[1] != DType::kBF16 ||
      (c.outputTypes[0] != DType::kBF16 && c.outputTypes[0] != DType::kF32))
    return nullptr;
  std::optional<NhwcConvGeometry> g = nhwcConvGeometry(
      c.attrs(), c.inputShapes[0], c.inputShapes[1], c.outputShapes[0]);
  if (!g)
    return nullptr;
  // Where the im2col matmuls' few-channel case applies (TrainingKernels.cpp):
  // few channels, 9+ taps, a large output; and whole tiles of 16 channels.
  if (g->cin > 4 || g->kh * g->kw < 9 || g->cout % 16 || g->oh * g->ow <= 196 ||
      g->n == 0 || !amxFilterGradEnabled() || !amxBf16Usable())
    return nullptr;
  return std::make_unique<AmxFewChannelFilterGrad>(*g, c.outputTypes[0] ==
                                                           DType::kF32);
}

std::unique_ptr<Kernel>
createStridedBackpropInputMatmul(const KernelConfig &c) {
  return StridedBackpropInputMatmul::create(c);
}

std::unique_ptr<Kernel> createBackpropInputAsForward(const KernelConfig &c) {
  return BackpropInputAsForward::create(c);
}
#endif

} // namespace gopt::runtime::cpu
