//===- ImageDecodeTest.cpp - gopt_image_decode and image_decoder ----------===//
//
// The decoder library (gopt/runtime/ImageDecode.h) on streams written here
// (BMP, PNM) and by PIL (a PNG), its errors for bad streams, and a session
// running gopt.image_decoder on images of different sizes, whose result
// shapes it reads from each image's header (OpSchema::inferShapesFromData).
// Pixel values of every format against PIL: test/Import/onnx-image-decoder.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "gopt/runtime/ImageDecode.h"

using namespace gopt::runtime;
using namespace gopt::runtime::testing;
namespace img = gopt::runtime::image;

namespace {

// [[red, green, blue], [(10, 20, 30), (200, 100, 50), white]], 3 x 2, as
// PIL 9.4 writes it.
const std::vector<uint8_t> kPng = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
    0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x02,
    0x08, 0x02, 0x00, 0x00, 0x00, 0x12, 0x16, 0xf1, 0x4d, 0x00, 0x00, 0x00,
    0x18, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xc0,
    0x00, 0xc1, 0x5c, 0x22, 0x72, 0x27, 0x52, 0x8c, 0xfe, 0xff, 0xff, 0x0f,
    0x00, 0x3c, 0x19, 0x07, 0x95, 0xef, 0xc2, 0xc6, 0xd8, 0x00, 0x00, 0x00,
    0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
const std::vector<uint8_t> kPngRgb = {255, 0,  0,  0,   255, 0,  0,   0,   255,
                                      10,  20, 30, 200, 100, 50, 255, 255, 255};
// PIL's convert("L") of the same pixels.
const std::vector<uint8_t> kPngGray = {76, 150, 29, 18, 124, 255};

void put32(std::vector<uint8_t> &v, size_t at, uint32_t x) {
  for (int i = 0; i < 4; ++i)
    v[at + i] = static_cast<uint8_t>(x >> (8 * i));
}

// A 24-bit bottom-up BMP of `rgb` ([h, w, 3]).
std::vector<uint8_t> makeBmp(int w, int h, const std::vector<uint8_t> &rgb) {
  size_t stride = (w * 3 + 3) / 4 * 4;
  std::vector<uint8_t> v(54 + stride * h, 0);
  v[0] = 'B', v[1] = 'M';
  put32(v, 2, static_cast<uint32_t>(v.size()));
  put32(v, 10, 54);
  put32(v, 14, 40);
  put32(v, 18, w);
  put32(v, 22, h);
  v[26] = 1, v[28] = 24;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        v[54 + (h - 1 - y) * stride + x * 3 + (2 - c)] =
            rgb[(y * w + x) * 3 + c];
  return v;
}

std::vector<uint8_t> bytesOf(const std::string &s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

TEST(ImageDecode, PngMatchesPil) {
  auto rgb = img::decodeImage(kPng.data(), kPng.size(), img::PixelFormat::kRGB);
  ASSERT_TRUE(rgb.ok()) << rgb.status().message();
  EXPECT_EQ(rgb->height, 2);
  EXPECT_EQ(rgb->width, 3);
  EXPECT_EQ(rgb->channels, 3);
  EXPECT_EQ(rgb->pixels, kPngRgb);
  auto bgr = img::decodeImage(kPng.data(), kPng.size(), img::PixelFormat::kBGR);
  ASSERT_TRUE(bgr.ok());
  for (size_t i = 0; i < kPngRgb.size(); ++i)
    EXPECT_EQ(bgr->pixels[i], kPngRgb[i / 3 * 3 + 2 - i % 3]);
  auto gray =
      img::decodeImage(kPng.data(), kPng.size(), img::PixelFormat::kGrayscale);
  ASSERT_TRUE(gray.ok());
  EXPECT_EQ(gray->channels, 1);
  EXPECT_EQ(gray->pixels, kPngGray);
}

TEST(ImageDecode, BmpAndPnm) {
  std::vector<uint8_t> bmp = makeBmp(3, 2, kPngRgb);
  auto fromBmp =
      img::decodeImage(bmp.data(), bmp.size(), img::PixelFormat::kRGB);
  ASSERT_TRUE(fromBmp.ok()) << fromBmp.status().message();
  EXPECT_EQ(fromBmp->pixels, kPngRgb);
  std::vector<uint8_t> ppm = bytesOf("P6\n# a comment\n3 2\n255\n");
  ppm.insert(ppm.end(), kPngRgb.begin(), kPngRgb.end());
  auto fromPpm =
      img::decodeImage(ppm.data(), ppm.size(), img::PixelFormat::kGrayscale);
  ASSERT_TRUE(fromPpm.ok()) << fromPpm.status().message();
  EXPECT_EQ(fromPpm->pixels, kPngGray);
  std::vector<uint8_t> pgm = bytesOf("P5 2 1 255 ");
  pgm.push_back(7);
  pgm.push_back(250);
  auto fromPgm =
      img::decodeImage(pgm.data(), pgm.size(), img::PixelFormat::kRGB);
  ASSERT_TRUE(fromPgm.ok()) << fromPgm.status().message();
  EXPECT_EQ(fromPgm->pixels, (std::vector<uint8_t>{7, 7, 7, 250, 250, 250}));
}

TEST(ImageDecode, HeaderOnly) {
  auto header = img::readImageHeader(kPng.data(), kPng.size());
  ASSERT_TRUE(header.ok());
  EXPECT_STREQ(header->format, "PNG");
  EXPECT_EQ(header->height, 2);
  EXPECT_EQ(header->width, 3);
}

void expectError(const std::vector<uint8_t> &stream, const std::string &part) {
  auto r =
      img::decodeImage(stream.data(), stream.size(), img::PixelFormat::kRGB);
  ASSERT_FALSE(r.ok()) << "expected an error containing '" << part << "'";
  EXPECT_NE(r.status().message().find(part), std::string::npos)
      << r.status().message();
}

TEST(ImageDecode, BadStreamsFailWithTheFormat) {
  expectError(bytesOf("not an image at all"),
              "the stream is no BMP, JPEG, JPEG 2000, TIFF, PNG, WebP or PNM "
              "image (it starts with 6e 6f 74");
  expectError({}, "(it starts with nothing)");
  // Every truncation of the PNG fails cleanly.
  for (size_t n = 8; n < kPng.size(); ++n)
    expectError(std::vector<uint8_t>(kPng.begin(), kPng.begin() + n), "PNG: ");
  std::vector<uint8_t> corrupt = kPng;
  corrupt[45] ^= 0xff; // inside IDAT: the CRC no longer matches
  expectError(corrupt, "PNG: ");
  std::vector<uint8_t> bmp = makeBmp(3, 2, kPngRgb);
  expectError(std::vector<uint8_t>(bmp.begin(), bmp.end() - 1),
              "BMP: truncated pixel data");
  expectError(bytesOf("P6 3 2 255 abc"), "PNM: truncated pixel data");
  expectError(bytesOf("P3 1 1 255 1 2"), "PNM: truncated pixel data");
  expectError(bytesOf("P2 1 1 9 10"), "PNM: sample 10 is over maxval 9");
  expectError(bytesOf("\xff\xd8\xff\xe0 garbage"), "JPEG: ");
}

// A 4 x 2 RLE8 BMP (palette: index i is (i, 2i, 3i)): row 0 (bottom) an
// encoded run of 3 and end of line, row 1 an absolute run of 4, end of
// bitmap.
std::vector<uint8_t> makeRleBmp() {
  std::vector<uint8_t> v(54 + 4 * 4, 0);
  v[0] = 'B', v[1] = 'M';
  put32(v, 10, 54 + 16);
  put32(v, 14, 40);
  put32(v, 18, 4);
  put32(v, 22, 2);
  v[26] = 1, v[28] = 8;
  put32(v, 30, 1); // BI_RLE8
  put32(v, 46, 4); // 4 colors
  for (int i = 0; i < 4; ++i)
    v[54 + 4 * i] = 3 * i, v[55 + 4 * i] = 2 * i, v[56 + 4 * i] = i;
  for (uint8_t b : {3, 2, 0, 0, 0, 4, 0, 1, 2, 3, 0, 1})
    v.push_back(b);
  put32(v, 2, static_cast<uint32_t>(v.size()));
  return v;
}

TEST(ImageDecode, PlainPnmAndRleBmp) {
  auto p3 = bytesOf("P3 2 1 255 1 2 3 # a comment\n 4 5 6");
  auto rgb = img::decodeImage(p3.data(), p3.size(), img::PixelFormat::kRGB);
  ASSERT_TRUE(rgb.ok()) << rgb.status().message();
  EXPECT_EQ(rgb->pixels, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  auto p1 = bytesOf("P1 3 1 101");
  rgb = img::decodeImage(p1.data(), p1.size(), img::PixelFormat::kRGB);
  ASSERT_TRUE(rgb.ok()) << rgb.status().message();
  EXPECT_EQ(rgb->pixels,
            (std::vector<uint8_t>{0, 0, 0, 255, 255, 255, 0, 0, 0}));
  std::vector<uint8_t> bmp = makeRleBmp();
  rgb = img::decodeImage(bmp.data(), bmp.size(), img::PixelFormat::kRGB);
  ASSERT_TRUE(rgb.ok()) << rgb.status().message();
  // Top row: the absolute run 0 1 2 3; bottom row: 2 2 2, then padding 0.
  EXPECT_EQ(rgb->pixels,
            (std::vector<uint8_t>{0, 0, 0, 1, 2, 3, 2, 4, 6, 3, 6, 9,
                                  2, 4, 6, 2, 4, 6, 2, 4, 6, 0, 0, 0}));
}

// Forged RLE and plain PNM streams: every truncation and every byte
// changed fails with an error or decodes, never reads out of bounds.
TEST(ImageDecode, ForgedRleAndPlainPnm) {
  std::vector<uint8_t> bmp = makeRleBmp();
  for (size_t n = 0; n + 2 < bmp.size(); ++n) { // all but end of bitmap
    std::vector<uint8_t> cut(bmp.begin(), bmp.begin() + n);
    EXPECT_FALSE(
        img::decodeImage(cut.data(), cut.size(), img::PixelFormat::kRGB).ok())
        << n;
  }
  for (size_t i = 0; i < bmp.size(); ++i)
    for (uint8_t x : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> v = bmp;
      v[i] ^= x;
      (void)img::decodeImage(v.data(), v.size(), img::PixelFormat::kRGB);
    }
  expectError(std::vector<uint8_t>(bmp.begin(), bmp.end() - 8),
              "BMP: the RLE data ends after 4 of 8 pixels");
  std::vector<uint8_t> absolute = bmp;
  absolute[absolute.size() - 7] = 200; // an absolute run past the end
  expectError(absolute, "BMP: truncated RLE data");
  auto p2 = bytesOf("P2 2 2 65535 1 2 3 70000");
  expectError(p2, "PNM: sample 70000 is over maxval 65535");
  expectError(bytesOf("P2 1 1 255 12345678901"), "is too long");
  expectError(bytesOf("P2 1 1 0 0"), "PNM: maxval 0 is out of range");
  expectError(bytesOf("P1 2 1 0 x"), "PNM: P1 data holds 'x'");
  expectError(bytesOf("P3 1 1 255 1 -2 3"), "PNM: '-2' is not a sample value");
}

TEST(ImageDecode, HugeHeadersAreRefusedBeforeAllocating) {
  std::vector<uint8_t> bmp = makeBmp(1, 1, {1, 2, 3});
  put32(bmp, 18, 1 << 20);
  put32(bmp, 22, 1 << 20);
  expectError(bmp, "BMP: the image is 1048576 x 1048576 pixels, over the "
                   "limit of 268435456 pixels");
  std::vector<uint8_t> png = kPng;
  put32(png, 16, 0x00000140); // width 0x40010000 (big-endian)
  expectError(png, "PNG: ");
}

TEST(ImageDecode, PixelFormats) {
  EXPECT_TRUE(img::parsePixelFormat("BGR").ok());
  auto bad = img::parsePixelFormat("RGBA");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "pixel_format 'RGBA' is not one of RGB, BGR, Grayscale");
  EXPECT_TRUE(img::formatAvailable("BMP"));
  EXPECT_TRUE(img::formatAvailable("PNM"));
  EXPECT_FALSE(img::formatAvailable("GIF"));
}

/// image = image_decoder(stream): one session, images of two sizes.
TEST(ImageDecode, SessionReadsEachImagesSize) {
  PlanBuilder b("decode");
  int stream = b.addInput("stream", DType::kU8, {-1});
  int image = b.addOutput("image", DType::kU8, {-1, -1, 1});
  b.addOp("image_decoder", "decode", {stream}, {image},
          {{"pixel_format", stringAttr("Grayscale")}});
  auto plan = b.build();
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  SessionOptions options;
  options.backend = "cpu";
  auto session = Session::create(*plan, options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  std::vector<uint8_t> bigger = makeBmp(5, 4, std::vector<uint8_t>(60, 9));
  const std::vector<uint8_t> *streams[] = {&kPng, &bigger, &kPng};
  for (const std::vector<uint8_t> *s : streams) {
    Tensor in =
        makeTensor<uint8_t>(DType::kU8, {static_cast<int64_t>(s->size())}, *s);
    ASSERT_TRUE((*session)->setInput("stream", in).ok());
    Status ran = (*session)->run();
    ASSERT_TRUE(ran.ok()) << ran.toString();
    auto out = (*session)->output("image");
    ASSERT_TRUE(out.ok());
    if (s == &kPng) {
      EXPECT_EQ(out->shape(), (Shape{2, 3, 1}));
      std::vector<uint8_t> got(out->data<uint8_t>(), out->data<uint8_t>() + 6);
      EXPECT_EQ(got, kPngGray);
    } else {
      EXPECT_EQ(out->shape(), (Shape{4, 5, 1}));
      EXPECT_EQ(out->data<uint8_t>()[19], 9);
    }
  }
  std::vector<uint8_t> garbage = bytesOf("garbage");
  Tensor in = makeTensor<uint8_t>(DType::kU8, {7}, garbage);
  ASSERT_TRUE((*session)->setInput("stream", in).ok());
  Status ran = (*session)->run();
  ASSERT_FALSE(ran.ok());
  EXPECT_NE(ran.message().find("decode"), std::string::npos) << ran.message();
  EXPECT_NE(ran.message().find("the stream is no BMP"), std::string::npos)
      << ran.message();
}

} // namespace
