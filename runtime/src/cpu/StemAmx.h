//===- StemAmx.h - A network's 3x3 stem convolution on AMX ------*- C++ -*-===//
//
// The first convolution of an image network (3x3 window over the 3 RGB
// channels, MobileNetV2's 3 -> 32 stride 2) on NHWC bf16 or int8 data, as
// a matrix product: each output pixel's 27 window values are gathered into
// one 32-element row (a small im2col buffer of a few output rows that
// stays in L1), and the AMX 1x1 kernels of PointwiseAmx.h multiply those
// rows by the 32 x n weights and apply their epilogues. oneDNN 2.6's int8
// and bf16 kernels for 3 input channels pad every tap to 4 (VNNI) or run
// AMX tiles nearly empty; this is the static-int8 and bf16 plans'
// counterpart of StemConvF32.h.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_CPU_STEMAMX_H
#define GOPT_RUNTIME_CPU_STEMAMX_H

#include "PointwiseAmx.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace gopt::runtime::cpu {

// A 3x3 convolution of `channels` (at most 3) NHWC input channels; pads
// above and left of at most 1 (below and right: whatever the output size
// implies; outside pixels read as zero).
struct StemGeometry {
  int64_t channels = 3;
  int64_t height = 0, width = 0;
  int64_t outHeight = 0, outWidth = 0;
  int64_t stride = 1;
  int64_t padTop = 0, padLeft = 0;
};

// `pixels` consecutive pixels of a plain NCHW f32 image of 3 channels
// (channel c's at src + c * planeStride) to NHWC s8, x * scale saturated
// and rounded to nearest even, or to NHWC bf16 (as oneDNN's reorders
// compute them). The caller checks AVX-512 VBMI (s8) or AVX-512 BF16.
void rgbToInt8Pixels(const float *src, int64_t planeStride, int8_t *dst,
                     int64_t pixels, float scale);
void rgbToBf16Pixels(const float *src, int64_t planeStride, uint16_t *dst,
                     int64_t pixels);

// AMX usable (as pointwiseAmxEnabled) and GOPT_STEM_AMX is not "0".
bool stemAmxEnabled();

class StemConvAmx {
public:
  // `weights`: [n][3][3][channels] (output channel, kh, kw, channel).
  // Null for a geometry the kernel does not take or where it is off; the
  // int8 one also where PointwiseInt8Amx or GOPT_POINTWISE_AMX_INT8 is.
  static std::unique_ptr<StemConvAmx>
  createInt8(const StemGeometry &g, int64_t n,
             const std::vector<int8_t> &weights,
             const PointwiseInt8Params &params, int threads);
  // bf16 bits; the result is round(clamp(conv + bias)) as
  // PointwiseBf16Amx's (no residual sum).
  static std::unique_ptr<StemConvAmx>
  createBf16(const StemGeometry &g, int64_t n,
             const std::vector<uint16_t> &weights,
             const std::vector<float> &bias, bool clamp, float lo, float hi,
             int threads);

  // From now on run() reads plain NCHW f32 images of 3 channels and
  // converts them as rgbToInt8Pixels (x * scale) or rgbToBf16Pixels do, a
  // band's source rows at a time: the network input's quantize or cast
  // done inside the stem, whose converted image is never written. False
  // (nothing changes) where the channels are not 3 or the CPU lacks the
  // converters' instructions.
  bool readF32Source(float scale);

  // `images` NHWC images (plain NCHW f32 ones after readF32Source) ->
  // NHWC results of n channels.
  void run(const void *src, void *dst, int64_t images) const;

  // The gathered rows' elements: 3 x 3 x channels values, then zeros.
  static constexpr int64_t kRow = 32;

private:
  StemConvAmx() = default;
  static bool takes(const StemGeometry &g);
  void init(const StemGeometry &g, int64_t n, int threads);
  // Gathers output rows [oh0, oh0 + rows) of one image into `rows`.
  void gather(const void *image, int64_t oh0, int64_t rows, void *out) const;

  StemGeometry g_;
  int64_t n_ = 0;
  bool bf16_ = false;
  int64_t bandRows_ = 1; // output rows a gathered band holds
  // Per output column: the elements of one kernel row's 3 x channels
  // window that lie inside the image (bit j: element j).
  std::vector<uint32_t> columnMask_;
  // Interior pixels gathered groupPixels_ at a time (16 int8, 8 bf16) by
  // byte or word permutes of each kernel row's source span
  // (GOPT_STEM_AMX_PERMUTE); 0: each pixel by masked loads. groupIndex_:
  // the permutes' indices, one vector per 64 bytes of gathered rows.
  int64_t groupPixels_ = 0;
  AlignedVector<uint8_t> groupIndex_;
  std::unique_ptr<PointwiseInt8Amx> int8_;
  std::unique_ptr<PointwiseBf16Amx> bf16Kernel_;
  int threads_ = 1;
  bool f32Source_ = false;
  float sourceScale_ = 1;
};

} // namespace gopt::runtime::cpu

#endif // GOPT_RUNTIME_CPU_STEMAMX_H
