//===- ImageDecode.h - Encoded images to pixels ------------------*- C++
//-*-===//
//
// The decoders behind ONNX's ImageDecoder (gopt.image_decoder): BMP, JPEG,
// JPEG 2000, TIFF, PNG, WebP and PNM byte streams to 8-bit pixels, with the
// values PIL gives for Image.open(...).convert("RGB" / "L") (ONNX's
// reference implementation). JPEG, PNG, TIFF, WebP and JPEG 2000 go through
// the Debian libraries (libjpeg-turbo, libpng, libtiff, libwebp,
// libopenjp2); BMP and PNM are parsed here. A format whose library was
// missing when gopt was configured is refused by name. Never exits or
// aborts on bad data: every failure is a Status naming the format.
// A library of its own (gopt_image_decode): the runtime's kernel and the
// importer's compile-time decoding both link it.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_IMAGEDECODE_H
#define GOPT_RUNTIME_IMAGEDECODE_H

#include "gopt/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gopt::runtime::image {

enum class PixelFormat { kRGB, kBGR, kGrayscale };

// "RGB", "BGR" or "Grayscale" (ImageDecoder's pixel_format).
StatusOr<PixelFormat> parsePixelFormat(const std::string &name);

// 3 for RGB and BGR, 1 for Grayscale.
int64_t channelsOf(PixelFormat format);

// Images with more pixels are refused before anything is allocated: a
// header may claim any size, whatever the stream's length.
constexpr int64_t kMaxImagePixels = int64_t(1) << 28;

struct ImageHeader {
  const char *format = ""; // "BMP", "JPEG", "JPEG 2000", "TIFF", "PNG", ...
  int64_t height = 0;
  int64_t width = 0;
};

// Identifies the format by its signature and reads the image's size from its
// header, without decoding the pixels. Fails for an unknown format, a
// truncated or corrupt header, a format this build cannot decode, and an
// image over kMaxImagePixels.
StatusOr<ImageHeader> readImageHeader(const uint8_t *data, size_t size);

// Decodes the stream whose header is `header` into `out`, [height, width,
// channelsOf(format)] row-major. Fails (naming the format) for truncated
// or corrupt data and for the variants of a format gopt does not decode.
Status decodeImage(const uint8_t *data, size_t size, const ImageHeader &header,
                   PixelFormat format, uint8_t *out);

// readImageHeader and decodeImage into a new buffer.
struct DecodedImage {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;
};
StatusOr<DecodedImage> decodeImage(const uint8_t *data, size_t size,
                                   PixelFormat format);

// Whether this build decodes `format` ("TIFF", "WebP", "JPEG 2000", ...).
bool formatAvailable(const std::string &format);

} // namespace gopt::runtime::image

#endif // GOPT_RUNTIME_IMAGEDECODE_H
