//===- ImageDecode.cpp - Encoded images to pixels -------------------------===//
//
// Every decoder writes RGB (3 bytes a pixel, gray replicated, alpha
// dropped, palettes looked up), which is what PIL's convert("RGB") gives;
// BGR reverses it, and Grayscale applies PIL's RGB -> L formula
// (L = (19595 R + 38470 G + 7471 B + 0x8000) >> 16, exact for gray since
// the weights sum to 65536). Library errors never leave this file: libjpeg
// and libpng report through longjmp from handlers of our own (their default
// handlers print and exit), libtiff, libwebp and libopenjp2 through return
// values and per-call handlers.
//
//===----------------------------------------------------------------------===//

#include "gopt/runtime/ImageDecode.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#ifdef GOPT_HAVE_JPEG
#include <jerror.h>
#include <jpeglib.h>
#endif
#ifdef GOPT_HAVE_PNG
#include <png.h>
#endif
#ifdef GOPT_HAVE_TIFF
#include <tiffio.h>
#endif
#ifdef GOPT_HAVE_WEBP
#include <webp/decode.h>
#endif
#ifdef GOPT_HAVE_WEBPDEMUX
#include <webp/demux.h>
#endif
#ifdef GOPT_HAVE_OPENJPEG
#include <openjpeg.h>
#endif

namespace gopt::runtime::image {
namespace {

constexpr const char *kSupportedFormats =
    "BMP, JPEG, JPEG 2000, TIFF, PNG, WebP or PNM";

bool startsWith(const uint8_t *data, size_t size, const char *magic, size_t n) {
  return size >= n && std::memcmp(data, magic, n) == 0;
}

const char *detectFormat(const uint8_t *data, size_t size) {
  if (startsWith(data, size, "\x89PNG\r\n\x1a\n", 8))
    return "PNG";
  if (startsWith(data, size, "\xff\xd8\xff", 3))
    return "JPEG";
  if (startsWith(data, size, "BM", 2))
    return "BMP";
  if (startsWith(data, size, "II*\0", 4) || startsWith(data, size, "MM\0*", 4))
    return "TIFF";
  if (size >= 12 && std::memcmp(data, "RIFF", 4) == 0 &&
      std::memcmp(data + 8, "WEBP", 4) == 0)
    return "WebP";
  if (startsWith(data, size, "\0\0\0\x0cjP  \r\n\x87\n", 12) ||
      startsWith(data, size, "\xff\x4f\xff\x51", 4))
    return "JPEG 2000";
  if (size >= 2 && data[0] == 'P' && data[1] >= '1' && data[1] <= '6')
    return "PNM";
  return nullptr;
}

std::string leadingBytes(const uint8_t *data, size_t size) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < std::min<size_t>(size, 8); ++i) {
    std::snprintf(buf, sizeof buf, "%s%02x", i ? " " : "", data[i]);
    s += buf;
  }
  return s.empty() ? "nothing" : s;
}

Status checkSize(const char *format, int64_t height, int64_t width) {
  if (height <= 0 || width <= 0)
    return invalidArgument(format,
                           ": the header gives an empty or negative "
                           "size (",
                           width, " x ", height, ")");
  if (height > kMaxImagePixels || width > kMaxImagePixels ||
      height * width > kMaxImagePixels)
    return invalidArgument(format, ": the image is ", width, " x ", height,
                           " pixels, over the limit of ", kMaxImagePixels,
                           " pixels");
  return Status::success();
}

uint32_t le16(const uint8_t *p) { return p[0] | (p[1] << 8); }
uint32_t le32(const uint8_t *p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t(p[3]) << 24);
}

//===----------------------------------------------------------------------===//
// BMP: 1, 4, 8, 16, 24 and 32 bits a pixel, uncompressed, RLE8, RLE4 and the
// BI_BITFIELDS masks PIL's BmpImagePlugin reads
//===----------------------------------------------------------------------===//

enum BmpCompression : uint32_t {
  kBmpRaw = 0,
  kBmpRle8 = 1,
  kBmpRle4 = 2,
  kBmpBitfields = 3
};

struct BmpInfo {
  int64_t width = 0, height = 0; // height > 0
  bool bottomUp = true;
  uint32_t bits = 0, dataOffset = 0, headerSize = 0, colors = 0;
  uint32_t compression = kBmpRaw;
  bool core = false; // OS/2 BITMAPCOREHEADER: 16-bit sizes, 3-byte palette
  // 16 bits: 5 bits of green ("BGR;15") or 6 ("BGR;16"); 24 and 32 bits:
  // the byte of each of R, G, B within a pixel.
  bool green6 = false;
  int byteOf[3] = {2, 1, 0};
};

StatusOr<BmpInfo> readBmp(const uint8_t *data, size_t size) {
  if (size < 26)
    return invalidArgument("BMP: truncated header (", size, " bytes)");
  BmpInfo info;
  info.dataOffset = le32(data + 10);
  info.headerSize = le32(data + 14);
  if (info.headerSize == 12) {
    info.core = true;
    info.width = le16(data + 18);
    info.height = le16(data + 20);
    info.bits = le16(data + 24);
  } else if (info.headerSize >= 40 && info.headerSize <= 124) {
    if (size < 14 + 40)
      return invalidArgument("BMP: truncated header (", size, " bytes)");
    info.width = static_cast<int32_t>(le32(data + 18));
    int64_t h = static_cast<int32_t>(le32(data + 22));
    info.bottomUp = h > 0;
    info.height = h < 0 ? -h : h;
    info.bits = le16(data + 28);
    info.compression = le32(data + 30);
    info.colors = le32(data + 46);
  } else {
    return invalidArgument("BMP: unknown header size ", info.headerSize);
  }
  if (info.bits != 1 && info.bits != 4 && info.bits != 8 && info.bits != 16 &&
      info.bits != 24 && info.bits != 32)
    return unimplemented("BMP: ", info.bits,
                         " bits a pixel is not supported (1, 4, 8, 16, 24, "
                         "32)");
  switch (info.compression) {
  case kBmpRaw:
    break; // 16 bits: PIL's default "BGR;15"
  case kBmpRle8:
  case kBmpRle4: {
    uint32_t need = info.compression == kBmpRle8 ? 8 : 4;
    if (info.bits != need)
      return invalidArgument("BMP: ", need == 8 ? "RLE8" : "RLE4",
                             " compression needs ", need,
                             " bits a pixel, the header gives ", info.bits);
    break;
  }
  case kBmpBitfields: {
    // The masks follow the 40-byte header (alpha only in longer ones);
    // the layouts PIL reads (its MASK_MODES). Alpha is dropped, as
    // convert("RGB") drops it.
    if (size < 14 + 40 + 12)
      return invalidArgument("BMP: truncated bitfield masks");
    uint32_t r = le32(data + 54), g = le32(data + 58), b = le32(data + 62);
    uint32_t a = info.headerSize >= 56 && size >= 70 ? le32(data + 66) : 0;
    bool ok = false;
    if (info.bits == 32) {
      struct Layout {
        uint32_t r, g, b, a;
        int byteOf[3];
      };
      static const Layout layouts[] = {
          {0xFF0000, 0xFF00, 0xFF, 0, {2, 1, 0}},          // BGRX
          {0xFF000000, 0xFF0000, 0xFF00, 0, {3, 2, 1}},    // XBGR
          {0xFF000000, 0xFF0000, 0xFF00, 0xFF, {3, 2, 1}}, // ABGR
          {0xFF, 0xFF00, 0xFF0000, 0xFF000000, {0, 1, 2}}, // RGBA
          {0xFF0000, 0xFF00, 0xFF, 0xFF000000, {2, 1, 0}}, // BGRA
          {0, 0, 0, 0, {2, 1, 0}}};                        // BGRA
      for (const Layout &l : layouts)
        if (l.r == r && l.g == g && l.b == b && l.a == a) {
          std::copy(l.byteOf, l.byteOf + 3, info.byteOf);
          ok = true;
        }
    } else if (info.bits == 24) {
      ok = r == 0xFF0000 && g == 0xFF00 && b == 0xFF;
    } else if (info.bits == 16) {
      info.green6 = r == 0xF800 && g == 0x7E0 && b == 0x1F;
      ok = info.green6 || (r == 0x7C00 && g == 0x3E0 && b == 0x1F);
    }
    if (!ok)
      return unimplemented(
          "BMP: bitfield masks R ", r, " G ", g, " B ", b, " A ", a, " at ",
          info.bits,
          " bits a pixel are not supported (8-bit channels in 32 or 24 "
          "bits, 5-5-5 or 5-6-5 in 16)");
    break;
  }
  default:
    return unimplemented("BMP: compression ", info.compression,
                         " is not supported (uncompressed, RLE8, RLE4 and "
                         "bitfields are)");
  }
  GOPT_RETURN_IF_ERROR(checkSize("BMP", info.height, info.width));
  if (info.bits <= 8 && (info.colors == 0 || info.colors > (1u << info.bits)))
    info.colors = 1u << info.bits;
  return info;
}

/// PIL's bmp_rle decoder: palette indices in file row order (the bottom row
/// first in a bottom-up file) into `index` (w * h, zero-filled). Encoded
/// runs stop at the row's end, absolute runs do not, end of line pads the
/// row with index 0, a delta skips pixels (index 0). Data that ends before
/// the image is filled is an error, as in PIL.
Status decodeBmpRle(const uint8_t *data, size_t size, const BmpInfo &info,
                    std::vector<uint8_t> &index) {
  const bool rle4 = info.compression == kBmpRle4;
  const int64_t w = info.width, total = w * info.height;
  index.assign(static_cast<size_t>(total), 0);
  int64_t n = 0, x = 0; // pixels written, column
  size_t pos = info.dataOffset;
  auto put = [&](uint8_t v) {
    if (n < total)
      index[n] = v;
    ++n;
  };
  while (n < total && pos + 2 <= size) {
    uint8_t count = data[pos], code = data[pos + 1];
    pos += 2;
    if (count) { // encoded: `count` pixels of `code`
      int64_t k = std::max<int64_t>(0, std::min<int64_t>(count, w - x));
      for (int64_t i = 0; i < k; ++i)
        put(rle4 ? (i % 2 ? code & 15 : code >> 4) : code);
      x += k;
    } else if (code == 0) { // end of line
      while (n % w)
        put(0);
      x = 0;
    } else if (code == 1) { // end of bitmap
      break;
    } else if (code == 2) { // delta: right, up
      if (pos + 2 > size)
        break;
      n += data[pos] + int64_t(data[pos + 1]) * w;
      pos += 2;
      x = n % w;
    } else { // absolute: `code` pixels follow, padded to 16 bits
      size_t bytes = rle4 ? (code + 1) / 2 : code;
      if (bytes > size - pos)
        return invalidArgument("BMP: truncated RLE data");
      for (int i = 0; i < code; ++i)
        put(rle4 ? (i % 2 ? data[pos + i / 2] & 15 : data[pos + i / 2] >> 4)
                 : data[pos + i]);
      pos += bytes;
      x += code;
      pos += pos % 2;
    }
  }
  if (n < total)
    return invalidArgument("BMP: the RLE data ends after ", n, " of ", total,
                           " pixels");
  return Status::success();
}

Status decodeBmp(const uint8_t *data, size_t size, uint8_t *rgb) {
  GOPT_ASSIGN_OR_RETURN(BmpInfo info, readBmp(data, size));
  const bool rle = info.compression == kBmpRle8 || info.compression == kBmpRle4;
  uint64_t stride = ((info.bits * uint64_t(info.width) + 31) / 32) * 4;
  if (info.dataOffset > size ||
      (!rle && stride * info.height > size - info.dataOffset))
    return invalidArgument(
        "BMP: truncated pixel data (", size, " bytes, the header needs ",
        uint64_t(info.dataOffset) + (rle ? 0 : stride * info.height), ")");
  const uint8_t *palette = data + 14 + info.headerSize;
  size_t entry = info.core ? 3 : 4;
  if (info.bits <= 8 &&
      static_cast<size_t>(palette - data) + info.colors * entry > size)
    return invalidArgument("BMP: truncated palette");
  std::vector<uint8_t> index;
  if (rle)
    GOPT_RETURN_IF_ERROR(decodeBmpRle(data, size, info, index));
  for (int64_t y = 0; y < info.height; ++y) {
    int64_t row = info.bottomUp ? info.height - 1 - y : y;
    const uint8_t *src = rle ? nullptr : data + info.dataOffset + row * stride;
    uint8_t *dst = rgb + y * info.width * 3;
    for (int64_t x = 0; x < info.width; ++x, dst += 3) {
      if (info.bits >= 24) {
        const uint8_t *p = src + x * (info.bits / 8);
        for (int c = 0; c < 3; ++c)
          dst[c] = p[info.byteOf[c]];
        continue;
      }
      if (info.bits == 16) { // PIL's BGR;15 and BGR;16 unpacking
        uint32_t v = le16(src + 2 * x);
        uint32_t g = info.green6 ? (v >> 5) & 63 : (v >> 5) & 31;
        dst[0] = static_cast<uint8_t>(((v >> (info.green6 ? 11 : 10)) & 31) *
                                      255 / 31);
        dst[1] = static_cast<uint8_t>(g * 255 / (info.green6 ? 63 : 31));
        dst[2] = static_cast<uint8_t>((v & 31) * 255 / 31);
        continue;
      }
      uint32_t index_;
      if (rle) {
        index_ = index[row * info.width + x];
      } else {
        uint32_t perByte = 8 / info.bits;
        uint32_t shift = 8 - info.bits * (1 + x % perByte);
        index_ = (src[x / perByte] >> shift) & ((1u << info.bits) - 1);
      }
      if (index_ >= info.colors) {
        // Past the file's palette: PIL's palette starts as the gray ramp.
        dst[0] = dst[1] = dst[2] = static_cast<uint8_t>(index_);
        continue;
      }
      const uint8_t *c = palette + index_ * entry;
      dst[0] = c[2], dst[1] = c[1], dst[2] = c[0];
    }
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// PNM: P1-P6, maxval 1 to 65535 (PIL's PpmImagePlugin)
//===----------------------------------------------------------------------===//

struct PnmInfo {
  char kind = 0;
  int64_t width = 0, height = 0, maxval = 1;
  size_t dataOffset = 0;
};

StatusOr<PnmInfo> readPnm(const uint8_t *data, size_t size) {
  PnmInfo info;
  info.kind = static_cast<char>(data[1]);
  size_t pos = 2;
  bool bitonal = info.kind == '1' || info.kind == '4';
  int fields = bitonal ? 2 : 3;
  int64_t values[3] = {0, 0, 1};
  for (int f = 0; f < fields; ++f) {
    // Whitespace and comments up to the next number.
    while (pos < size && (std::isspace(data[pos]) || data[pos] == '#')) {
      if (data[pos] == '#')
        while (pos < size && data[pos] != '\n' && data[pos] != '\r')
          ++pos;
      else
        ++pos;
    }
    if (pos >= size || !std::isdigit(data[pos]))
      return invalidArgument("PNM: truncated or corrupt header");
    int64_t v = 0;
    while (pos < size && std::isdigit(data[pos])) {
      v = v * 10 + (data[pos++] - '0');
      if (v > kMaxImagePixels)
        return invalidArgument("PNM: header value over ", kMaxImagePixels);
    }
    values[f] = v;
  }
  // One whitespace character ends the header.
  if (pos >= size || !std::isspace(data[pos]))
    return invalidArgument("PNM: truncated or corrupt header");
  info.width = values[0];
  info.height = values[1];
  info.maxval = values[2];
  info.dataOffset = pos + 1;
  if (info.maxval < 1 || info.maxval > 65535)
    return invalidArgument("PNM: maxval ", info.maxval,
                           " is out of range (1 to 65535)");
  GOPT_RETURN_IF_ERROR(checkSize("PNM", info.height, info.width));
  return info;
}

/// Python's round(v / maxval * scale), as PIL scales samples: ties to
/// even, independent of the floating-point environment.
int64_t scaleSample(int64_t v, int64_t maxval, int64_t scale) {
  double q = double(v) / double(maxval) * double(scale);
  double lower = std::floor(q), diff = q - lower;
  if (diff > 0.5 || (diff == 0.5 && std::fmod(lower, 2.0) != 0.0))
    lower += 1.0;
  return static_cast<int64_t>(lower);
}

/// One sample as PIL stores it, then as convert("RGB") reads it: gray with
/// maxval > 255 is PIL's mode I (scaled to 65535, clipped to 255 by the
/// conversion); otherwise scaled to 255.
uint8_t pnmSample(int64_t v, const PnmInfo &info) {
  bool modeI = (info.kind == '2' || info.kind == '5') && info.maxval > 255;
  int64_t s = scaleSample(v, info.maxval, modeI ? 65535 : 255);
  return static_cast<uint8_t>(std::min<int64_t>(s, 255));
}

/// The plain (ASCII) P1, P2 and P3 data as PIL's ppm_plain decoder reads
/// it: a comment ('#' to the end of the line, the end included) is
/// deleted; P1's digits need no separators, P2's and P3's numbers (up to
/// 10 characters, at most maxval) are separated by whitespace.
Status decodePlainPnm(const uint8_t *data, size_t size, const PnmInfo &info,
                      uint8_t *rgb) {
  const int bands = info.kind == '3' ? 3 : 1;
  const int64_t total = info.width * info.height * bands;
  int64_t count = 0;
  size_t pos = info.dataOffset;
  std::string token;
  auto emit = [&](int64_t v) {
    uint8_t b = info.kind == '1' ? (v ? 0 : 255) : pnmSample(v, info);
    if (bands == 3) {
      rgb[count] = b;
    } else {
      rgb[3 * count] = rgb[3 * count + 1] = rgb[3 * count + 2] = b;
    }
    ++count;
  };
  auto flush = [&]() -> Status {
    if (token.empty())
      return Status::success();
    if (token.size() > 10)
      return invalidArgument("PNM: token '", token.substr(0, 11),
                             "...' is too long");
    int64_t v = 0;
    for (char c : token) {
      if (!std::isdigit(static_cast<unsigned char>(c)))
        return invalidArgument("PNM: '", token, "' is not a sample value");
      v = v * 10 + (c - '0');
    }
    if (v > info.maxval)
      return invalidArgument("PNM: sample ", v, " is over maxval ",
                             info.maxval);
    token.clear();
    emit(v);
    return Status::success();
  };
  while (pos < size && count < total) {
    uint8_t c = data[pos++];
    if (c == '#') {
      while (pos < size && data[pos] != '\n' && data[pos] != '\r')
        ++pos;
      ++pos; // the end of the line goes with the comment
      continue;
    }
    if (std::isspace(c)) {
      GOPT_RETURN_IF_ERROR(flush());
      continue;
    }
    if (info.kind == '1') {
      if (c != '0' && c != '1')
        return invalidArgument("PNM: P1 data holds '", char(c),
                               "' (only 0 and 1)");
      emit(c == '1');
      continue;
    }
    token += static_cast<char>(c);
  }
  if (count < total)
    GOPT_RETURN_IF_ERROR(flush());
  if (count < total)
    return invalidArgument("PNM: truncated pixel data (", count, " of ", total,
                           " samples)");
  return Status::success();
}

Status decodePnm(const uint8_t *data, size_t size, uint8_t *rgb) {
  GOPT_ASSIGN_OR_RETURN(PnmInfo info, readPnm(data, size));
  if (info.kind <= '3')
    return decodePlainPnm(data, size, info, rgb);
  const uint64_t sampleBytes = info.maxval > 255 ? 2 : 1;
  uint64_t stride = info.kind == '4'   ? (info.width + 7) / 8
                    : info.kind == '5' ? info.width * sampleBytes
                                       : info.width * 3 * sampleBytes;
  if (stride * info.height > size - info.dataOffset)
    return invalidArgument("PNM: truncated pixel data (", size,
                           " bytes, the header needs ",
                           info.dataOffset + stride * info.height, ")");
  auto sample = [&](const uint8_t *p) -> uint8_t {
    if (info.maxval == 255)
      return p[0];
    return pnmSample(sampleBytes == 2 ? (p[0] << 8 | p[1]) : p[0], info);
  };
  for (int64_t y = 0; y < info.height; ++y) {
    const uint8_t *src = data + info.dataOffset + y * stride;
    uint8_t *dst = rgb + y * info.width * 3;
    for (int64_t x = 0; x < info.width; ++x, dst += 3) {
      if (info.kind == '6') {
        for (int c = 0; c < 3; ++c)
          dst[c] = sample(src + (x * 3 + c) * sampleBytes);
      } else {
        // P4: a set bit is black.
        uint8_t v = info.kind == '5' ? sample(src + x * sampleBytes)
                    : (src[x / 8] >> (7 - x % 8)) & 1 ? 0
                                                      : 255;
        dst[0] = dst[1] = dst[2] = v;
      }
    }
  }
  return Status::success();
}

/// PIL's CMYK -> RGB (Convert.c cmyk2rgb): with nk = 255 - K, each of R,
/// G, B is nk - round(C * nk / 255) in PIL's fixed point; `inverted`
/// (Adobe's convention, PIL's "CMYK;I") stores 255 - each value.
[[maybe_unused]] void cmykToRgb(const uint8_t *cmyk, uint8_t *rgb, int64_t n,
                                bool inverted) {
  const int flip = inverted ? 255 : 0;
  for (int64_t i = 0; i < n; ++i, cmyk += 4, rgb += 3) {
    int nk = 255 - (cmyk[3] ^ flip);
    for (int c = 0; c < 3; ++c) {
      int t = (cmyk[c] ^ flip) * nk + 128;
      int v = nk - (((t >> 8) + t) >> 8);
      rgb[c] = static_cast<uint8_t>(std::clamp(v, 0, 255));
    }
  }
}

//===----------------------------------------------------------------------===//
// JPEG (libjpeg-turbo)
//===----------------------------------------------------------------------===//

#ifdef GOPT_HAVE_JPEG
struct JpegError {
  jpeg_error_mgr mgr;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = "";
};

// libjpeg's default error_exit calls exit(); warnings (corrupt or truncated
// data, which libjpeg would fill with gray) fail too, as they do in PIL.
void jpegErrorExit(j_common_ptr cinfo) {
  auto *err = reinterpret_cast<JpegError *>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}
void jpegEmitMessage(j_common_ptr cinfo, int level) {
  if (level < 0)
    jpegErrorExit(cinfo);
}

// Runs `body` on a decompressor reading `data`; the header has been read.
template <typename Fn>
Status withJpeg(const uint8_t *data, size_t size, Fn body) {
  jpeg_decompress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpegErrorExit;
  err.mgr.emit_message = jpegEmitMessage;
  // Everything the body allocates lives in libjpeg's pools or outside the
  // setjmp frame, so a longjmp leaks nothing.
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return invalidArgument("JPEG: ", err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  Status s = body(cinfo);
  jpeg_destroy_decompress(&cinfo);
  return s;
}

Status readJpegHeader(const uint8_t *data, size_t size, ImageHeader &header) {
  return withJpeg(data, size, [&](jpeg_decompress_struct &cinfo) {
    header.height = cinfo.image_height;
    header.width = cinfo.image_width;
    return Status::success();
  });
}

Status decodeJpeg(const uint8_t *data, size_t size, const ImageHeader &header,
                  uint8_t *rgb) {
  return withJpeg(data, size, [&](jpeg_decompress_struct &cinfo) {
    // PIL's settings: RGB output, libjpeg's default (islow) DCT and fancy
    // upsampling. CMYK and YCCK come out as CMYK (libjpeg converts YCCK),
    // which PIL reads as Adobe's inverted CMYK ("CMYK;I", whatever the
    // Adobe marker says) and converts to RGB as cmykToRgb does.
    bool cmyk = cinfo.jpeg_color_space == JCS_CMYK ||
                cinfo.jpeg_color_space == JCS_YCCK;
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(&cinfo);
    if (cinfo.output_width != header.width ||
        cinfo.output_height != header.height ||
        cinfo.output_components != (cmyk ? 4 : 3))
      return internalError("JPEG: the decoder's output size differs from "
                           "the header's");
    // The CMYK row, in libjpeg's pool (freed with the decompressor, also
    // after a longjmp).
    JSAMPARRAY wide =
        cmyk
            ? (*cinfo.mem->alloc_sarray)(reinterpret_cast<j_common_ptr>(&cinfo),
                                         JPOOL_IMAGE, header.width * 4, 1)
            : nullptr;
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW row = rgb + int64_t(cinfo.output_scanline) * header.width * 3;
      if (!cmyk) {
        jpeg_read_scanlines(&cinfo, &row, 1);
        continue;
      }
      jpeg_read_scanlines(&cinfo, wide, 1);
      cmykToRgb(wide[0], row, header.width, /*inverted=*/true);
    }
    jpeg_finish_decompress(&cinfo);
    return Status::success();
  });
}
#endif

//===----------------------------------------------------------------------===//
// PNG (libpng)
//===----------------------------------------------------------------------===//

#ifdef GOPT_HAVE_PNG
struct PngReader {
  const uint8_t *data = nullptr;
  size_t size = 0, pos = 0;
  char message[256] = "";
  // Row buffers, here rather than locals of the function that calls setjmp
  // (a longjmp leaves such locals indeterminate).
  std::vector<uint8_t> wide;
  std::vector<png_bytep> rows;
};

void pngError(png_structp png, png_const_charp msg) {
  auto *r = static_cast<PngReader *>(png_get_error_ptr(png));
  std::snprintf(r->message, sizeof r->message, "%s", msg);
  png_longjmp(png, 1);
}
void pngWarning(png_structp, png_const_charp) {}
void pngRead(png_structp png, png_bytep out, png_size_t n) {
  auto *r = static_cast<PngReader *>(png_get_io_ptr(png));
  if (n > r->size - r->pos)
    png_error(png, "truncated data");
  std::memcpy(out, r->data + r->pos, n);
  r->pos += n;
}

// Decodes the header (rgb null) or the whole image into `rgb`.
Status runPng(const uint8_t *data, size_t size, ImageHeader &header,
              uint8_t *rgb) {
  PngReader reader;
  reader.data = data;
  reader.size = size;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &reader,
                                           pngError, pngWarning);
  if (!png)
    return internalError("PNG: cannot create a decoder");
  png_infop info = png_create_info_struct(png);
  std::vector<uint8_t> &wide = reader.wide;
  std::vector<png_bytep> &rows = reader.rows;
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    return invalidArgument("PNG: ", reader.message);
  }
  // The CRCs are checked (libpng's default), also of ancillary chunks.
  png_set_read_fn(png, &reader, pngRead);
  png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
  png_read_info(png, info);
  png_uint_32 width = png_get_image_width(png, info);
  png_uint_32 height = png_get_image_height(png, info);
  int depth = png_get_bit_depth(png, info);
  int color = png_get_color_type(png, info);
  Status status = checkSize("PNG", height, width);
  if (!status.ok() || !rgb) {
    header.height = height;
    header.width = width;
    png_destroy_read_struct(&png, &info, nullptr);
    return status;
  }
  if (height != header.height || width != header.width) {
    png_destroy_read_struct(&png, &info, nullptr);
    return internalError("PNG: the size differs from the header's");
  }
  // PIL reads 16-bit gray as 32-bit integers and clips them to 0..255 in
  // convert(); every other 16-bit type keeps the high byte.
  bool gray16 = depth == 16 && color == PNG_COLOR_TYPE_GRAY;
  if (color == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  if (depth == 16 && !gray16)
    png_set_strip_16(png);
  if (gray16)
    png_set_swap(png); // host (little-endian) order
  else if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA)
    png_set_gray_to_rgb(png);
  png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  size_t rowBytes = png_get_rowbytes(png, info);
  if (rowBytes != size_t(width) * (gray16 ? 2 : 3)) {
    png_destroy_read_struct(&png, &info, nullptr);
    return internalError("PNG: unexpected row size ", rowBytes);
  }
  if (gray16)
    wide.resize(rowBytes * height);
  rows.resize(height);
  for (png_uint_32 y = 0; y < height; ++y)
    rows[y] = gray16 ? wide.data() + y * rowBytes : rgb + y * rowBytes;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  if (gray16)
    for (size_t i = 0; i < size_t(width) * height; ++i) {
      uint16_t v;
      std::memcpy(&v, wide.data() + 2 * i, 2);
      rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] =
          static_cast<uint8_t>(std::min<uint16_t>(v, 255));
    }
  return Status::success();
}
#endif

//===----------------------------------------------------------------------===//
// TIFF (libtiff)
//===----------------------------------------------------------------------===//

#ifdef GOPT_HAVE_TIFF
struct TiffStream {
  TiffStream(const uint8_t *data, size_t size) : data(data), size(size) {}
  const uint8_t *data;
  size_t size;
  toff_t pos = 0;
  std::string message;
};

tmsize_t tiffRead(thandle_t h, void *buf, tmsize_t n) {
  auto *s = static_cast<TiffStream *>(h);
  if (s->pos >= s->size)
    return 0;
  size_t k = std::min<size_t>(n, s->size - s->pos);
  std::memcpy(buf, s->data + s->pos, k);
  s->pos += k;
  return static_cast<tmsize_t>(k);
}
tmsize_t tiffWrite(thandle_t, void *, tmsize_t) { return -1; }
toff_t tiffSeek(thandle_t h, toff_t off, int whence) {
  auto *s = static_cast<TiffStream *>(h);
  toff_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? s->pos : s->size;
  s->pos = base + off;
  return s->pos;
}
int tiffClose(thandle_t) { return 0; }
toff_t tiffSize(thandle_t h) { return static_cast<TiffStream *>(h)->size; }
int tiffMap(thandle_t, void **, toff_t *) { return 0; }
void tiffUnmap(thandle_t, void *, toff_t) {}
int tiffErrorHandler(TIFF *, void *user, const char *module, const char *fmt,
                     va_list ap) {
  auto *s = static_cast<TiffStream *>(user);
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  if (s->message.empty())
    s->message = buf;
  return 1;
}
int tiffWarningHandler(TIFF *, void *, const char *, const char *, va_list) {
  return 1; // handled: libtiff prints nothing
}

using TiffPtr = std::unique_ptr<TIFF, void (*)(TIFF *)>;

StatusOr<TiffPtr> openTiff(TiffStream &stream) {
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
  TIFFOpenOptionsSetErrorHandlerExtR(opts, tiffErrorHandler, &stream);
  TIFFOpenOptionsSetWarningHandlerExtR(opts, tiffWarningHandler, &stream);
  TIFF *tif =
      TIFFClientOpenExt("stream", "rm", &stream, tiffRead, tiffWrite, tiffSeek,
                        tiffClose, tiffSize, tiffMap, tiffUnmap, opts);
  TIFFOpenOptionsFree(opts);
  if (!tif)
    return invalidArgument("TIFF: ", stream.message.empty()
                                         ? "cannot read the header"
                                         : stream.message);
  return TiffPtr(tif, TIFFClose);
}

Status readTiffHeader(const uint8_t *data, size_t size, ImageHeader &header) {
  TiffStream stream{data, size};
  GOPT_ASSIGN_OR_RETURN(TiffPtr tif, openTiff(stream));
  uint32_t width = 0, height = 0;
  if (!TIFFGetField(tif.get(), TIFFTAG_IMAGEWIDTH, &width) ||
      !TIFFGetField(tif.get(), TIFFTAG_IMAGELENGTH, &height))
    return invalidArgument("TIFF: no image size in the header");
  header.width = width;
  header.height = height;
  return checkSize("TIFF", height, width);
}

Status decodeTiff(const uint8_t *data, size_t size, const ImageHeader &header,
                  uint8_t *rgb) {
  TiffStream stream{data, size};
  GOPT_ASSIGN_OR_RETURN(TiffPtr tif, openTiff(stream));
  TIFF *t = tif.get();
  auto fail = [&](const char *what) {
    return invalidArgument("TIFF: ",
                           stream.message.empty() ? what : stream.message);
  };
  uint16_t bits = 1, samples = 1, photometric = 0, planar = PLANARCONFIG_CONTIG;
  TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &samples);
  TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &planar);
  if (!TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photometric))
    return fail("no photometric interpretation");
  // libtiff sizes its buffers by the samples a pixel the header claims.
  if (samples < 1 || samples > 4 || bits > 16)
    return unimplemented("TIFF: ", samples, " samples of ", bits,
                         " bits a pixel are not supported (1 to 4 samples of "
                         "up to 16 bits)");
  const int64_t w = header.width, h = header.height;
  // 8-bit strips of gray, RGB or palette samples, with or without alpha:
  // read as stored, as PIL does (libtiff's RGBA reader would premultiply
  // unassociated alpha).
  bool plain = bits == 8 && planar == PLANARCONFIG_CONTIG && !TIFFIsTiled(t) &&
               ((photometric == PHOTOMETRIC_MINISBLACK && samples >= 1) ||
                (photometric == PHOTOMETRIC_MINISWHITE && samples >= 1) ||
                (photometric == PHOTOMETRIC_RGB && samples >= 3) ||
                (photometric == PHOTOMETRIC_PALETTE && samples == 1));
  if (plain) {
    uint16_t *map[3] = {nullptr, nullptr, nullptr};
    if (photometric == PHOTOMETRIC_PALETTE &&
        !TIFFGetField(t, TIFFTAG_COLORMAP, &map[0], &map[1], &map[2]))
      return fail("a palette image without a colormap");
    tmsize_t scanline = TIFFScanlineSize(t);
    if (scanline < w * samples)
      return fail("scanlines shorter than the image width");
    std::vector<uint8_t> line(scanline);
    for (int64_t y = 0; y < h; ++y) {
      if (TIFFReadScanline(t, line.data(), static_cast<uint32_t>(y), 0) < 0)
        return fail("truncated or corrupt data");
      uint8_t *dst = rgb + y * w * 3;
      for (int64_t x = 0; x < w; ++x, dst += 3) {
        const uint8_t *p = line.data() + x * samples;
        switch (photometric) {
        case PHOTOMETRIC_RGB:
          dst[0] = p[0], dst[1] = p[1], dst[2] = p[2];
          break;
        case PHOTOMETRIC_PALETTE:
          // PIL keeps the high byte of libtiff's 16-bit colormap entries.
          for (int c = 0; c < 3; ++c)
            dst[c] = static_cast<uint8_t>(map[c][p[0]] >> 8);
          break;
        case PHOTOMETRIC_MINISWHITE:
          dst[0] = dst[1] = dst[2] = static_cast<uint8_t>(255 - p[0]);
          break;
        default:
          dst[0] = dst[1] = dst[2] = p[0];
        }
      }
    }
    return Status::success();
  }
  // Everything else (bilevel, tiles, YCbCr, planar ...) through libtiff's
  // RGBA reader.
  std::vector<uint32_t> raster(static_cast<size_t>(w * h));
  if (!TIFFReadRGBAImageOriented(t, static_cast<uint32_t>(w),
                                 static_cast<uint32_t>(h), raster.data(),
                                 ORIENTATION_TOPLEFT, 0))
    return fail("this TIFF variant cannot be decoded");
  for (size_t i = 0; i < raster.size(); ++i) {
    rgb[3 * i] = TIFFGetR(raster[i]);
    rgb[3 * i + 1] = TIFFGetG(raster[i]);
    rgb[3 * i + 2] = TIFFGetB(raster[i]);
  }
  return Status::success();
}
#endif

//===----------------------------------------------------------------------===//
// WebP (libwebp)
//===----------------------------------------------------------------------===//

#ifdef GOPT_HAVE_WEBP
Status readWebpHeader(const uint8_t *data, size_t size, ImageHeader &header) {
  WebPBitstreamFeatures features;
  VP8StatusCode code = WebPGetFeatures(data, size, &features);
  if (code != VP8_STATUS_OK)
    return invalidArgument("WebP: ", code == VP8_STATUS_NOT_ENOUGH_DATA
                                         ? "truncated header"
                                         : "corrupt or unsupported header");
  // An animation's size is its canvas'; it decodes to its first frame.
  header.width = features.width;
  header.height = features.height;
  return checkSize("WebP", header.height, header.width);
}

/// The first frame of an animation as PIL gives it: libwebp's animation
/// decoder renders it in RGBA on the canvas (transparent black where the
/// frame does not reach; the background color is ignored, as libwebp's
/// WebPAnimDecoder does), and convert("RGB") drops the alpha.
Status decodeAnimatedWebp(const uint8_t *data, size_t size,
                          const ImageHeader &header, uint8_t *rgb) {
#ifdef GOPT_HAVE_WEBPDEMUX
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options))
    return internalError("WebP: cannot set up the animation decoder");
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  WebPData webp{data, size};
  std::unique_ptr<WebPAnimDecoder, void (*)(WebPAnimDecoder *)> dec(
      WebPAnimDecoderNew(&webp, &options), WebPAnimDecoderDelete);
  if (!dec)
    return invalidArgument("WebP: corrupt animation");
  WebPAnimInfo info;
  if (!WebPAnimDecoderGetInfo(dec.get(), &info) ||
      info.canvas_width != header.width || info.canvas_height != header.height)
    return invalidArgument("WebP: the animation's canvas differs from the "
                           "header's size");
  uint8_t *frame = nullptr;
  int timestamp = 0;
  if (!WebPAnimDecoderGetNext(dec.get(), &frame, &timestamp) || !frame)
    return invalidArgument("WebP: truncated or corrupt first frame");
  for (int64_t i = 0; i < header.width * header.height; ++i)
    std::memcpy(rgb + 3 * i, frame + 4 * i, 3);
  return Status::success();
#else
  return unimplemented("WebP: animated images need libwebpdemux, which "
                       "gopt was built without");
#endif
}

Status decodeWebp(const uint8_t *data, size_t size, const ImageHeader &header,
                  uint8_t *rgb) {
  WebPBitstreamFeatures features;
  if (WebPGetFeatures(data, size, &features) == VP8_STATUS_OK &&
      features.has_animation)
    return decodeAnimatedWebp(data, size, header, rgb);
  size_t bytes = static_cast<size_t>(header.width * header.height * 3);
  if (!WebPDecodeRGBInto(data, size, rgb, bytes,
                         static_cast<int>(header.width * 3)))
    return invalidArgument("WebP: truncated or corrupt data");
  return Status::success();
}
#endif

//===----------------------------------------------------------------------===//
// JPEG 2000 (libopenjp2): JP2 files and raw J2K codestreams
//===----------------------------------------------------------------------===//

#ifdef GOPT_HAVE_OPENJPEG
struct OpjStream {
  const uint8_t *data;
  size_t size, pos = 0;
};
OPJ_SIZE_T opjRead(void *buf, OPJ_SIZE_T n, void *user) {
  auto *s = static_cast<OpjStream *>(user);
  if (s->pos >= s->size)
    return static_cast<OPJ_SIZE_T>(-1);
  size_t k = std::min<size_t>(n, s->size - s->pos);
  std::memcpy(buf, s->data + s->pos, k);
  s->pos += k;
  return k;
}
OPJ_OFF_T opjSkip(OPJ_OFF_T n, void *user) {
  auto *s = static_cast<OpjStream *>(user);
  if (n < 0 ? size_t(-n) > s->pos : size_t(n) > s->size - s->pos)
    return -1;
  s->pos += n;
  return n;
}
OPJ_BOOL opjSeek(OPJ_OFF_T n, void *user) {
  auto *s = static_cast<OpjStream *>(user);
  if (n < 0 || size_t(n) > s->size)
    return OPJ_FALSE;
  s->pos = n;
  return OPJ_TRUE;
}
void opjError(const char *msg, void *user) {
  auto *m = static_cast<std::string *>(user);
  if (m->empty()) {
    *m = msg;
    while (!m->empty() && (m->back() == '\n' || m->back() == ' '))
      m->pop_back();
  }
}
void opjQuiet(const char *, void *) {}

// Reads the header, then decodes into `rgb` unless it is null.
Status runJpeg2000(const uint8_t *data, size_t size, ImageHeader &header,
                   uint8_t *rgb) {
  OpjStream src{data, size};
  std::string message;
  bool jp2 = data[0] == 0;
  std::unique_ptr<opj_codec_t, void (*)(opj_codec_t *)> codec(
      opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K),
      opj_destroy_codec);
  std::unique_ptr<opj_stream_t, void (*)(opj_stream_t *)> stream(
      opj_stream_create(1 << 16, OPJ_TRUE), opj_stream_destroy);
  if (!codec || !stream)
    return internalError("JPEG 2000: cannot create a decoder");
  opj_stream_set_user_data(stream.get(), &src, nullptr);
  opj_stream_set_user_data_length(stream.get(), size);
  opj_stream_set_read_function(stream.get(), opjRead);
  opj_stream_set_skip_function(stream.get(), opjSkip);
  opj_stream_set_seek_function(stream.get(), opjSeek);
  opj_set_error_handler(codec.get(), opjError, &message);
  opj_set_warning_handler(codec.get(), opjQuiet, nullptr);
  opj_set_info_handler(codec.get(), opjQuiet, nullptr);
  opj_dparameters_t params;
  opj_set_default_decoder_parameters(&params);
  auto fail = [&](const char *what) {
    return invalidArgument("JPEG 2000: ", message.empty() ? what : message);
  };
  if (!opj_setup_decoder(codec.get(), &params))
    return fail("cannot set up the decoder");
  opj_image_t *raw = nullptr;
  if (!opj_read_header(stream.get(), codec.get(), &raw))
    return fail("truncated or corrupt header");
  std::unique_ptr<opj_image_t, void (*)(opj_image_t *)> image(
      raw, opj_image_destroy);
  int64_t width = int64_t(image->x1) - image->x0;
  int64_t height = int64_t(image->y1) - image->y0;
  GOPT_RETURN_IF_ERROR(checkSize("JPEG 2000", height, width));
  if (!rgb) {
    header.width = width;
    header.height = height;
    return Status::success();
  }
  if (width != header.width || height != header.height)
    return internalError("JPEG 2000: the size differs from the header's");
  // Checked before decoding: the decoder allocates every component the
  // header claims (up to 16384) at the full size.
  uint32_t n = image->numcomps;
  if (n == 0 || n > 4)
    return unimplemented("JPEG 2000: ", n, " components are not supported");
  if (image->color_space == OPJ_CLRSPC_SYCC ||
      image->color_space == OPJ_CLRSPC_CMYK ||
      image->color_space == OPJ_CLRSPC_EYCC)
    return unimplemented("JPEG 2000: YCC and CMYK color spaces are not "
                         "supported");
  const int colors = n >= 3 ? 3 : 1;
  for (uint32_t c = 0; c < n; ++c) {
    const opj_image_comp_t &comp = image->comps[c];
    if (comp.dx != 1 || comp.dy != 1)
      return unimplemented("JPEG 2000: subsampled components are not "
                           "supported");
    if (comp.prec < 1 || comp.prec > 16)
      return unimplemented("JPEG 2000: ", comp.prec,
                           "-bit components are not supported");
  }
  if (!opj_decode(codec.get(), stream.get(), image.get()) ||
      !opj_end_decompress(codec.get(), stream.get()))
    return fail("truncated or corrupt data");
  for (int c = 0; c < colors; ++c) {
    const opj_image_comp_t &comp = image->comps[c];
    if (comp.w != width || comp.h != height || !comp.data)
      return unimplemented("JPEG 2000: components smaller than the image "
                           "are not supported");
  }
  for (int c = 0; c < 3; ++c) {
    const opj_image_comp_t &comp = image->comps[colors == 3 ? c : 0];
    // PIL's unpacking (j2ku_shift): add the signed offset and, shifting
    // right, half the step; shift to 8 bits and keep the low byte. One
    // component of more than 8 bits is PIL's mode I;16 instead: shifted to
    // 16 bits, and convert("RGB") clips it to 255.
    const bool i16 = n == 1 && comp.prec > 8;
    int shift = (i16 ? 16 : 8) - static_cast<int>(comp.prec);
    int32_t offset = comp.sgnd ? 1 << (comp.prec - 1) : 0;
    if (shift < 0)
      offset += 1 << (-shift - 1);
    for (int64_t i = 0; i < width * height; ++i) {
      int32_t v = comp.data[i] + offset;
      v = shift < 0 ? v >> -shift : v << shift;
      rgb[3 * i + c] =
          static_cast<uint8_t>(i16 ? std::clamp<int32_t>(v, 0, 255) : v);
    }
  }
  return Status::success();
}
#endif

[[maybe_unused]] Status missingLibrary(const char *format,
                                       const char *library) {
  return unimplemented(format,
                       " decoding is not available: gopt was built "
                       "without ",
                       library);
}

// The format's header reader, or the error saying this build lacks it.
Status readHeaderOf(const uint8_t *data, size_t size, ImageHeader &header) {
  std::string f = header.format;
  if (f == "BMP") {
    GOPT_ASSIGN_OR_RETURN(BmpInfo info, readBmp(data, size));
    header.height = info.height, header.width = info.width;
    return Status::success();
  }
  if (f == "PNM") {
    GOPT_ASSIGN_OR_RETURN(PnmInfo info, readPnm(data, size));
    header.height = info.height, header.width = info.width;
    return Status::success();
  }
  if (f == "JPEG") {
#ifdef GOPT_HAVE_JPEG
    GOPT_RETURN_IF_ERROR(readJpegHeader(data, size, header));
    return checkSize("JPEG", header.height, header.width);
#else
    return missingLibrary("JPEG", "libjpeg");
#endif
  }
  if (f == "PNG") {
#ifdef GOPT_HAVE_PNG
    return runPng(data, size, header, nullptr);
#else
    return missingLibrary("PNG", "libpng");
#endif
  }
  if (f == "TIFF") {
#ifdef GOPT_HAVE_TIFF
    return readTiffHeader(data, size, header);
#else
    return missingLibrary("TIFF", "libtiff");
#endif
  }
  if (f == "WebP") {
#ifdef GOPT_HAVE_WEBP
    return readWebpHeader(data, size, header);
#else
    return missingLibrary("WebP", "libwebp");
#endif
  }
#ifdef GOPT_HAVE_OPENJPEG
  return runJpeg2000(data, size, header, nullptr);
#else
  return missingLibrary("JPEG 2000", "libopenjp2");
#endif
}

Status decodeRgb(const uint8_t *data, size_t size, const ImageHeader &header,
                 uint8_t *rgb) {
  std::string f = header.format;
  if (f == "BMP")
    return decodeBmp(data, size, rgb);
  if (f == "PNM")
    return decodePnm(data, size, rgb);
#ifdef GOPT_HAVE_JPEG
  if (f == "JPEG")
    return decodeJpeg(data, size, header, rgb);
#endif
#ifdef GOPT_HAVE_PNG
  if (f == "PNG") {
    ImageHeader h = header;
    return runPng(data, size, h, rgb);
  }
#endif
#ifdef GOPT_HAVE_TIFF
  if (f == "TIFF")
    return decodeTiff(data, size, header, rgb);
#endif
#ifdef GOPT_HAVE_WEBP
  if (f == "WebP")
    return decodeWebp(data, size, header, rgb);
#endif
#ifdef GOPT_HAVE_OPENJPEG
  if (f == "JPEG 2000") {
    ImageHeader h = header;
    return runJpeg2000(data, size, h, rgb);
  }
#endif
  return unimplemented(f, " decoding is not available in this build");
}

} // namespace

StatusOr<PixelFormat> parsePixelFormat(const std::string &name) {
  if (name == "RGB")
    return PixelFormat::kRGB;
  if (name == "BGR")
    return PixelFormat::kBGR;
  if (name == "Grayscale")
    return PixelFormat::kGrayscale;
  return invalidArgument("pixel_format '", name,
                         "' is not one of RGB, BGR, Grayscale");
}

int64_t channelsOf(PixelFormat format) {
  return format == PixelFormat::kGrayscale ? 1 : 3;
}

bool formatAvailable(const std::string &format) {
  if (format == "BMP" || format == "PNM")
    return true;
#ifdef GOPT_HAVE_JPEG
  if (format == "JPEG")
    return true;
#endif
#ifdef GOPT_HAVE_PNG
  if (format == "PNG")
    return true;
#endif
#ifdef GOPT_HAVE_TIFF
  if (format == "TIFF")
    return true;
#endif
#ifdef GOPT_HAVE_WEBP
  if (format == "WebP")
    return true;
#endif
#ifdef GOPT_HAVE_OPENJPEG
  if (format == "JPEG 2000")
    return true;
#endif
  return false;
}

StatusOr<ImageHeader> readImageHeader(const uint8_t *data, size_t size) {
  const char *format = detectFormat(data, size);
  if (!format)
    return invalidArgument("the stream is no ", kSupportedFormats,
                           " image (it starts with ", leadingBytes(data, size),
                           ")");
  ImageHeader header;
  header.format = format;
  GOPT_RETURN_IF_ERROR(readHeaderOf(data, size, header));
  GOPT_RETURN_IF_ERROR(checkSize(format, header.height, header.width));
  return header;
}

Status decodeImage(const uint8_t *data, size_t size, const ImageHeader &header,
                   PixelFormat format, uint8_t *out) {
  const size_t pixels = static_cast<size_t>(header.height * header.width);
  std::vector<uint8_t> scratch;
  uint8_t *rgb = out;
  if (format == PixelFormat::kGrayscale) {
    scratch.resize(pixels * 3);
    rgb = scratch.data();
  }
  GOPT_RETURN_IF_ERROR(decodeRgb(data, size, header, rgb));
  if (format == PixelFormat::kBGR)
    for (size_t i = 0; i < pixels; ++i)
      std::swap(rgb[3 * i], rgb[3 * i + 2]);
  else if (format == PixelFormat::kGrayscale)
    for (size_t i = 0; i < pixels; ++i)
      out[i] =
          static_cast<uint8_t>((rgb[3 * i] * 19595u + rgb[3 * i + 1] * 38470u +
                                rgb[3 * i + 2] * 7471u + 0x8000u) >>
                               16);
  return Status::success();
}

StatusOr<DecodedImage> decodeImage(const uint8_t *data, size_t size,
                                   PixelFormat format) {
  GOPT_ASSIGN_OR_RETURN(ImageHeader header, readImageHeader(data, size));
  DecodedImage image;
  image.height = header.height;
  image.width = header.width;
  image.channels = channelsOf(format);
  image.pixels.resize(
      static_cast<size_t>(image.height * image.width * image.channels));
  GOPT_RETURN_IF_ERROR(
      decodeImage(data, size, header, format, image.pixels.data()));
  return image;
}

} // namespace gopt::runtime::image
