//===- DataPipelineTest.cpp - Datasets, batch loader, queue statistics ----===//
#include "gopt/runtime/DataPipeline.h"
#include "gopt/runtime/Npy.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <set>
#include <thread>

using namespace gopt::runtime;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A fresh directory per test, removed afterwards.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (fs::temp_directory_path() / "gopt_data_XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) ? pattern : "";
    EXPECT_FALSE(path_.empty());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string readWholeFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string gzip(const std::string &bytes) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  EXPECT_EQ(deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8,
                         Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&zs, bytes.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef *>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string bigEndian32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i)
    s[i] = static_cast<char>(v >> (24 - 8 * i));
  return s;
}

std::string idxImages(uint32_t n, uint32_t h, uint32_t w,
                      const std::vector<uint8_t> &pixels) {
  return bigEndian32(0x803) + bigEndian32(n) + bigEndian32(h) + bigEndian32(w) +
         std::string(pixels.begin(), pixels.end());
}

std::string idxLabels(const std::vector<uint8_t> &labels) {
  return bigEndian32(0x801) +
         bigEndian32(static_cast<uint32_t>(labels.size())) +
         std::string(labels.begin(), labels.end());
}

// Reads every example of `ds`.
void readAll(const Dataset &ds, std::vector<float> &inputs,
             std::vector<int64_t> &labels) {
  int64_t e = ds.inputElements();
  inputs.assign(static_cast<size_t>(ds.size() * e), -1.0f);
  labels.assign(static_cast<size_t>(ds.size()), -1);
  for (int64_t i = 0; i < ds.size(); ++i)
    ASSERT_TRUE(ds.read(i, inputs.data() + i * e, &labels[i]).ok()) << i;
}

// 3 images of 2x3 and their labels, in IDX files.
struct IdxFixture {
  std::vector<uint8_t> pixels{0,  1,  2,  3,   4,   5,  255, 254, 128,
                              64, 32, 16, 100, 200, 50, 77,  7,   250};
  std::vector<uint8_t> labels{7, 0, 3};
  std::string images() const { return idxImages(3, 2, 3, pixels); }
  std::string labelFile() const { return idxLabels(labels); }
};

TEST(IdxDataset, RawAndGzipDecodeExactly) {
  TempDir dir;
  IdxFixture f;
  writeFile(dir.file("img"), f.images());
  writeFile(dir.file("lbl"), f.labelFile());
  // gzip'd files are recognized by their bytes, whatever their name; the
  // images come as two concatenated gzip members.
  std::string img = f.images();
  writeFile(dir.file("img.raw"),
            gzip(img.substr(0, 10)) + gzip(img.substr(10)));
  writeFile(dir.file("lbl.gz"), gzip(f.labelFile()));

  for (auto [images, labels] :
       {std::pair{"img", "lbl"}, std::pair{"img.raw", "lbl.gz"}}) {
    SCOPED_TRACE(images);
    auto ds = openIdxDataset(dir.file(images), dir.file(labels));
    ASSERT_TRUE(ds.ok()) << ds.status().toString();
    EXPECT_EQ((*ds)->size(), 3);
    EXPECT_EQ((*ds)->inputShape(), (Shape{1, 2, 3}));
    EXPECT_EQ((*ds)->inputDType(), DType::kF32);
    std::vector<float> inputs;
    std::vector<int64_t> lbls;
    readAll(**ds, inputs, lbls);
    for (size_t i = 0; i < f.pixels.size(); ++i)
      EXPECT_EQ(inputs[i], static_cast<float>(f.pixels[i]) / 255.0f) << i;
    EXPECT_EQ(lbls, (std::vector<int64_t>{7, 0, 3}));
    EXPECT_NE((*ds)->describe().find("3 x [1,2,3]"), std::string::npos);
  }
}

TEST(IdxDataset, Normalization) {
  TempDir dir;
  IdxFixture f;
  writeFile(dir.file("img"), f.images());
  writeFile(dir.file("lbl"), f.labelFile());
  NormalizeOptions norm{0.1307f, 0.3081f};
  auto ds = openIdxDataset(dir.file("img"), dir.file("lbl"), norm);
  ASSERT_TRUE(ds.ok()) << ds.status().toString();
  std::vector<float> inputs;
  std::vector<int64_t> labels;
  readAll(**ds, inputs, labels);
  for (size_t i = 0; i < f.pixels.size(); ++i)
    EXPECT_FLOAT_EQ(inputs[i], (f.pixels[i] / 255.0f - 0.1307f) / 0.3081f);
  EXPECT_FLOAT_EQ(inputs[0], -0.1307f / 0.3081f);

  auto bad = openIdxDataset(dir.file("img"), dir.file("lbl"), {0.0f, 0.0f});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("stddev must be positive"),
            std::string::npos);
}

// Expects `result` to fail with a message holding every one of `parts`.
template <typename T>
void expectError(const StatusOr<T> &result,
                 std::initializer_list<std::string> parts) {
  ASSERT_FALSE(result.ok())
      << "expected an error containing " << *parts.begin();
  for (const std::string &part : parts)
    EXPECT_NE(result.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << result.status().message();
}

TEST(IdxDataset, ErrorsNameTheFile) {
  TempDir dir;
  IdxFixture f;
  std::string img = dir.file("images.idx"), lbl = dir.file("labels.idx");
  writeFile(img, f.images());
  writeFile(lbl, f.labelFile());

  expectError(openIdxDataset(dir.file("nope.gz"), lbl),
              {"cannot open", "nope.gz"});
  // Images and labels swapped.
  expectError(openIdxDataset(lbl, img),
              {lbl, "not an IDX images file", "0x00000801", "a labels file",
               "expected 0x00000803"});
  expectError(openIdxDataset(img, img), {img, "not an IDX labels file",
                                         "0x00000803", "expected 0x00000801"});
  std::string bad = dir.file("bad");
  writeFile(bad, "hello world, not idx");
  expectError(openIdxDataset(bad, lbl), {bad, "not an IDX images file"});

  std::string cut = dir.file("cut.idx");
  writeFile(cut, f.images().substr(0, f.images().size() - 5));
  expectError(openIdxDataset(cut, lbl),
              {cut, "truncated", "3x2x3", "18 bytes", "only 13 bytes"});
  writeFile(cut, f.images().substr(0, 10));
  expectError(openIdxDataset(cut, lbl), {cut, "truncated", "header"});
  std::string longer = dir.file("long.idx");
  writeFile(longer, f.images() + "xx");
  expectError(openIdxDataset(longer, lbl), {longer, "2 unexpected bytes"});

  std::string two = dir.file("two.idx");
  writeFile(two, idxLabels({1, 2}));
  expectError(openIdxDataset(img, two),
              {img, "3 images", two, "2 labels", "the same count"});

  std::string zero = dir.file("zero.idx");
  writeFile(zero, idxImages(3, 0, 3, {}));
  expectError(openIdxDataset(zero, lbl), {zero, "dimension 1 is 0"});
  writeFile(zero, idxLabels({}));
  expectError(openIdxDataset(img, zero), {zero, "dimension 0 is 0"});

  // A cut gzip stream, and a corrupted one.
  std::string gz = gzip(f.images());
  std::string cutGz = dir.file("cut.gz");
  writeFile(cutGz, gz.substr(0, gz.size() / 2));
  expectError(openIdxDataset(cutGz, lbl), {cutGz, "truncated gzip"});
  std::string corruptGz = dir.file("corrupt.gz");
  for (size_t i = 12; i + 8 < gz.size(); ++i)
    gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  writeFile(corruptGz, gz);
  expectError(openIdxDataset(corruptGz, lbl), {corruptGz, "gzip"});
}

TEST(NpyDataset, F32AndU8Inputs) {
  TempDir dir;
  Tensor x = Tensor::allocate(DType::kF32, {4, 2, 2});
  for (int i = 0; i < 16; ++i)
    x.data<float>()[i] = 0.25f * i - 1.0f;
  Tensor y = Tensor::allocate(DType::kI32, {4});
  std::vector<int32_t> yv{3, 1, 4, 1};
  std::copy(yv.begin(), yv.end(), y.data<int32_t>());
  ASSERT_TRUE(writeNpy(dir.file("x.npy"), x).ok());
  ASSERT_TRUE(writeNpy(dir.file("y.npy"), y).ok());
  auto ds = openNpyDataset(dir.file("x.npy"), dir.file("y.npy"));
  ASSERT_TRUE(ds.ok()) << ds.status().toString();
  EXPECT_EQ((*ds)->size(), 4);
  EXPECT_EQ((*ds)->inputShape(), (Shape{2, 2}));
  std::vector<float> inputs;
  std::vector<int64_t> labels;
  readAll(**ds, inputs, labels);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(inputs[i], 0.25f * i - 1.0f);
  EXPECT_EQ(labels, (std::vector<int64_t>{3, 1, 4, 1}));

  // f32 inputs are normalized too.
  auto norm =
      openNpyDataset(dir.file("x.npy"), dir.file("y.npy"), {1.0f, 2.0f});
  ASSERT_TRUE(norm.ok());
  readAll(**norm, inputs, labels);
  for (int i = 0; i < 16; ++i)
    EXPECT_FLOAT_EQ(inputs[i], (0.25f * i - 2.0f) / 2.0f);

  // u8 inputs are scaled; labels as i64 [N,1] and u8.
  Tensor u = Tensor::allocate(DType::kU8, {2, 3});
  std::vector<uint8_t> uv{0, 255, 51, 1, 2, 3};
  std::copy(uv.begin(), uv.end(), u.data<uint8_t>());
  Tensor l64 = Tensor::allocate(DType::kI64, {2, 1});
  l64.data<int64_t>()[0] = 5;
  l64.data<int64_t>()[1] = 1000000000000;
  Tensor l8 = Tensor::allocate(DType::kU8, {2});
  l8.data<uint8_t>()[0] = 9;
  l8.data<uint8_t>()[1] = 200;
  ASSERT_TRUE(writeNpy(dir.file("u.npy"), u).ok());
  ASSERT_TRUE(writeNpy(dir.file("l64.npy"), l64).ok());
  ASSERT_TRUE(writeNpy(dir.file("l8.npy"), l8).ok());
  auto du = openNpyDataset(dir.file("u.npy"), dir.file("l64.npy"));
  ASSERT_TRUE(du.ok()) << du.status().toString();
  readAll(**du, inputs, labels);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(inputs[i], uv[i] / 255.0f);
  EXPECT_EQ(labels, (std::vector<int64_t>{5, 1000000000000}));
  auto d8 =
      openNpyDataset(dir.file("u.npy"), dir.file("l8.npy"), {0.5f, 0.25f});
  ASSERT_TRUE(d8.ok()) << d8.status().toString();
  readAll(**d8, inputs, labels);
  for (int i = 0; i < 6; ++i)
    EXPECT_FLOAT_EQ(inputs[i], (uv[i] / 255.0f - 0.5f) / 0.25f);
  EXPECT_EQ(labels, (std::vector<int64_t>{9, 200}));
}

TEST(NpyDataset, Errors) {
  TempDir dir;
  auto write = [&](const std::string &name, DType dtype, Shape shape) {
    Tensor t = Tensor::allocate(dtype, shape);
    EXPECT_TRUE(writeNpy(dir.file(name), t).ok());
    return dir.file(name);
  };
  std::string x = write("x.npy", DType::kF32, {3, 2});
  std::string y = write("y.npy", DType::kI64, {3});
  std::string xi = write("xi.npy", DType::kI64, {3, 2});
  std::string y2 = write("y2.npy", DType::kI64, {2});
  std::string yf = write("yf.npy", DType::kF32, {3});
  std::string yr = write("yr.npy", DType::kI32, {3, 2});
  Tensor neg = Tensor::allocate(DType::kI32, {3});
  neg.data<int32_t>()[1] = -1;
  std::string yn = dir.file("yn.npy");
  ASSERT_TRUE(writeNpy(yn, neg).ok());

  ASSERT_TRUE(openNpyDataset(x, y).ok());
  expectError(openNpyDataset(dir.file("missing.npy"), y), {"missing.npy"});
  expectError(openNpyDataset(xi, y), {xi, "i64 inputs, expected f32 or u8"});
  expectError(openNpyDataset(x, y2),
              {x, "3 examples", y2, "2 labels", "the same count"});
  expectError(openNpyDataset(x, yf), {yf, "f32 labels", "int32, int64"});
  expectError(openNpyDataset(x, yr), {yr, "[3,2]", "expected labels [N]"});
  expectError(openNpyDataset(x, yn), {yn, "label -1 of example 1"});
}

TEST(FakeDataset, FixedRandomExamplesRepeated) {
  auto ds = openFakeDataset({3, 2}, 4, 10, 3);
  ASSERT_TRUE(ds.ok());
  std::vector<float> inputs;
  std::vector<int64_t> labels;
  readAll(**ds, inputs, labels);
  ASSERT_EQ(inputs.size(), 60u);
  // Example i repeats example i % 3, values and label.
  for (int64_t i = 3; i < 10; ++i) {
    EXPECT_EQ(labels[i], labels[i % 3]) << i;
    for (int64_t j = 0; j < 6; ++j)
      EXPECT_EQ(inputs[i * 6 + j], inputs[(i % 3) * 6 + j]) << i << "," << j;
  }
  // Random, not constant: values in [0, 1) that differ within and across
  // the distinct examples, labels in range.
  for (float v : inputs) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
  EXPECT_NE(inputs[0], inputs[1]);
  EXPECT_NE(std::vector<float>(inputs.begin(), inputs.begin() + 6),
            std::vector<float>(inputs.begin() + 6, inputs.begin() + 12));
  for (int64_t label : labels) {
    EXPECT_GE(label, 0);
    EXPECT_LT(label, 4);
  }
  // The same data every time it is opened.
  auto again = openFakeDataset({3, 2}, 4, 10, 3);
  ASSERT_TRUE(again.ok());
  std::vector<float> inputs2;
  std::vector<int64_t> labels2;
  readAll(**again, inputs2, labels2);
  EXPECT_EQ(inputs, inputs2);
  EXPECT_EQ(labels, labels2);
  EXPECT_NE((*ds)->describe().find("3 random examples, repeated"),
            std::string::npos)
      << (*ds)->describe();

  expectError(openFakeDataset({3, 0}, 4, 10, 1), {"positive dimensions"});
  expectError(openFakeDataset({3}, 0, 10, 1), {"numClasses"});
  expectError(openFakeDataset({3}, 2, 0, 1), {"numExamples"});
  expectError(openFakeDataset({3}, 2, 10, 0), {"distinctExamples"});
}

TEST(FakeDataset, LabelsCoverTheClasses) {
  // Enough distinct examples draw every class: the labels are random, not
  // one class (which a model would "learn" by ignoring its input).
  auto ds = openFakeDataset({2}, 10, 256, 256);
  ASSERT_TRUE(ds.ok());
  std::vector<float> inputs;
  std::vector<int64_t> labels;
  readAll(**ds, inputs, labels);
  std::set<int64_t> classes(labels.begin(), labels.end());
  EXPECT_EQ(classes.size(), 10u);
}

//===----------------------------------------------------------------------===//
// TFRecord
//===----------------------------------------------------------------------===//

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c("123456789", 9), 0xe3069283u);
  // RFC 3720, B.4.
  std::string zeros(32, '\0'), ones(32, '\xff'), inc(32, '\0');
  for (int i = 0; i < 32; ++i)
    inc[i] = static_cast<char>(i);
  EXPECT_EQ(crc32c(zeros.data(), 32), 0x8a9136aau);
  EXPECT_EQ(crc32c(ones.data(), 32), 0x62a8ab43u);
  EXPECT_EQ(crc32c(inc.data(), 32), 0x46dd794eu);
  EXPECT_EQ(crc32c("", 0), 0u);
  // Continuation over unaligned pieces equals one pass.
  std::string text = "The quick brown fox jumps over the lazy dog, twice.";
  uint32_t whole = crc32c(text.data(), text.size());
  EXPECT_EQ(crc32c(text.data() + 13, text.size() - 13, crc32c(text.data(), 13)),
            whole);
  EXPECT_EQ(maskCrc32c(0x12345678u),
            ((0x12345678u >> 15) | (0x12345678u << 17)) + 0xa282ead8u);
}

// Protobuf wire format, written by hand with TensorFlow's field numbers
// (so the test also checks example.proto against them).
std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  s += static_cast<char>(v);
  return s;
}
std::string lengthDelimited(int field, const std::string &bytes) {
  return varint(static_cast<uint64_t>(field) << 3 | 2) + varint(bytes.size()) +
         bytes;
}
std::string floatFeature(const std::vector<float> &values) {
  std::string packed(values.size() * 4, '\0');
  std::memcpy(packed.data(), values.data(), packed.size()); // little endian
  return lengthDelimited(2, lengthDelimited(1, packed));
}
std::string int64Feature(const std::vector<int64_t> &values) {
  std::string packed;
  for (int64_t v : values)
    packed += varint(static_cast<uint64_t>(v));
  return lengthDelimited(3, lengthDelimited(1, packed));
}
std::string bytesFeature(const std::vector<std::string> &values) {
  std::string list;
  for (const std::string &v : values)
    list += lengthDelimited(1, v);
  return lengthDelimited(1, list);
}
std::string
example(const std::vector<std::pair<std::string, std::string>> &features) {
  std::string map;
  for (const auto &[key, feature] : features)
    map += lengthDelimited(1, lengthDelimited(1, key) +
                                  lengthDelimited(2, feature));
  return lengthDelimited(1, map);
}

std::string littleEndian(uint64_t v, int bytes) {
  std::string s(bytes, '\0');
  for (int i = 0; i < bytes; ++i)
    s[i] = static_cast<char>(v >> (8 * i));
  return s;
}
std::string tfRecord(const std::string &data) {
  std::string length = littleEndian(data.size(), 8);
  return length + littleEndian(maskCrc32c(crc32c(length.data(), 8)), 4) + data +
         littleEndian(maskCrc32c(crc32c(data.data(), data.size())), 4);
}

// Record i: image [2,3] = 0.5 * i + k, label 10 + i.
std::string floatRecord(int i) {
  std::vector<float> image(6);
  for (int k = 0; k < 6; ++k)
    image[k] = 0.5f * i + k;
  return tfRecord(example({{"label", int64Feature({10 + i})},
                           {"name", bytesFeature({"ex" + std::to_string(i)})},
                           {"image", floatFeature(image)}}));
}

// Record i: image [2,3] of u8 pixels 40 * i + k, label i.
std::string bytesRecord(int i) {
  std::string pixels(6, '\0');
  for (int k = 0; k < 6; ++k)
    pixels[k] = static_cast<char>(40 * i + k);
  return tfRecord(example(
      {{"image", bytesFeature({pixels})}, {"label", int64Feature({i})}}));
}

struct TfRecordFiles {
  TempDir dir;
  std::string a = dir.file("a.tfrecord"), b = dir.file("b.tfrecord");
  TfRecordFiles() {
    writeFile(a, floatRecord(0) + floatRecord(1) + floatRecord(2));
    writeFile(b, bytesRecord(3) + bytesRecord(4));
  }
};

TEST(TfRecordDataset, DecodesFloatAndBytesFeaturesAcrossFiles) {
  TfRecordFiles files;
  auto ds =
      openTfRecordDataset({files.a, files.b}, "image", "label", {1, 2, 3});
  ASSERT_TRUE(ds.ok()) << ds.status().toString();
  EXPECT_EQ((*ds)->size(), 5);
  EXPECT_EQ((*ds)->inputShape(), (Shape{1, 2, 3}));
  std::vector<float> inputs;
  std::vector<int64_t> labels;
  readAll(**ds, inputs, labels);
  EXPECT_EQ(labels, (std::vector<int64_t>{10, 11, 12, 3, 4}));
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 6; ++k)
      EXPECT_EQ(inputs[i * 6 + k], 0.5f * i + k);
  for (int i = 3; i < 5; ++i)
    for (int k = 0; k < 6; ++k)
      EXPECT_EQ(inputs[i * 6 + k], static_cast<float>(40 * i + k) / 255.0f);

  auto norm =
      openTfRecordDataset({files.b}, "image", "label", {6}, {0.5f, 0.5f});
  ASSERT_TRUE(norm.ok()) << norm.status().toString();
  readAll(**norm, inputs, labels);
  for (int k = 0; k < 6; ++k)
    EXPECT_FLOAT_EQ(inputs[k], ((120 + k) / 255.0f - 0.5f) / 0.5f);
}

TEST(TfRecordDataset, Errors) {
  TfRecordFiles files;
  std::string records = readWholeFile(files.a);
  size_t recordSize = floatRecord(0).size();
  ASSERT_EQ(records.size(), 3 * recordSize);

  // A flipped data byte in record 2: found when the record is read, and
  // surfaced by the loader at the batch that holds it.
  std::string flipped = files.dir.file("flipped.tfrecord");
  std::string bytes = records;
  bytes[2 * recordSize + 20] ^= 0x01;
  writeFile(flipped, bytes);
  auto ds = openTfRecordDataset({flipped}, "image", "label", {6});
  ASSERT_TRUE(ds.ok()) << ds.status().toString();
  std::vector<float> input(6);
  int64_t label;
  EXPECT_TRUE((*ds)->read(1, input.data(), &label).ok());
  Status st = (*ds)->read(2, input.data(), &label);
  ASSERT_FALSE(st.ok());
  std::string offset = "byte offset " + std::to_string(2 * recordSize);
  for (const std::string &part :
       {flipped, std::string("record 2"), offset, std::string("data CRC")})
    EXPECT_NE(st.message().find(part), std::string::npos) << st.message();

  LoaderOptions opts;
  opts.batchSize = 1;
  auto loader = BatchLoader::create(*ds, opts);
  ASSERT_TRUE(loader.ok());
  for (int i = 0; i < 2; ++i) {
    auto b = (*loader)->next();
    ASSERT_TRUE(b.ok() && b->has_value()) << b.status().toString();
  }
  for (int again = 0; again < 2; ++again)
    expectError((*loader)->next(),
                {"loading batch 2", flipped, "record 2", "data CRC"});

  // The same in record 0 is found at open.
  bytes = records;
  bytes[20] ^= 0x01;
  writeFile(flipped, bytes);
  expectError(openTfRecordDataset({flipped}, "image", "label", {6}),
              {flipped, "record 0", "data CRC"});
  // A flipped length byte: found while indexing.
  bytes = records;
  bytes[recordSize + 1] ^= 0x01;
  writeFile(flipped, bytes);
  expectError(openTfRecordDataset({files.b, flipped}, "image", "label", {6}),
              {flipped, "record 1", "byte offset " + std::to_string(recordSize),
               "length CRC"});

  std::string cut = files.dir.file("cut.tfrecord");
  writeFile(cut, records.substr(0, records.size() - 3));
  expectError(openTfRecordDataset({cut}, "image", "label", {6}),
              {cut, "truncated", "record 2"});
  writeFile(cut, records.substr(0, 2 * recordSize + 5));
  expectError(openTfRecordDataset({cut}, "image", "label", {6}),
              {cut, "truncated", "record 2", "12-byte header"});
  std::string empty = files.dir.file("empty.tfrecord");
  writeFile(empty, "");
  expectError(openTfRecordDataset({empty}, "image", "label", {6}),
              {empty, "no records"});
  expectError(openTfRecordDataset({files.dir.file("none.tfrecord")}, "image",
                                  "label", {6}),
              {"cannot open", "none.tfrecord"});

  expectError(openTfRecordDataset({files.a}, "img", "label", {6}),
              {files.a, "record 0", "no feature 'img'",
               "its features: image, label, name"});
  expectError(openTfRecordDataset({files.a}, "image", "lbl", {6}),
              {"no feature 'lbl'"});
  expectError(openTfRecordDataset({files.a}, "image", "label", {2, 2}),
              {files.a, "has 6 floats, expected 4", "[2,2]"});
  expectError(openTfRecordDataset({files.b}, "image", "label", {7}),
              {files.b, "1 byte strings of 6 bytes", "expected one of 7"});
  expectError(openTfRecordDataset({files.a}, "label", "image", {1}),
              {"'label' is an int64_list"});
  expectError(openTfRecordDataset({files.a}, "image", "name", {6}),
              {"'name' must be an int64_list of one value"});

  std::string notExample = files.dir.file("junk.tfrecord");
  writeFile(notExample, tfRecord("\xff\xff\xff"));
  expectError(openTfRecordDataset({notExample}, "image", "label", {6}),
              {notExample, "not a serialized tf.train.Example"});
}

//===----------------------------------------------------------------------===//
// BatchLoader
//===----------------------------------------------------------------------===//

// Example i: input {i, -i}, label i; optionally slow, or failing at one
// index.
class IndexDataset : public Dataset {
public:
  explicit IndexDataset(int64_t n, int64_t failAt = -1,
                        std::chrono::microseconds delay = {})
      : n_(n), failAt_(failAt), delay_(delay) {}
  int64_t size() const override { return n_; }
  const Shape &inputShape() const override { return shape_; }
  Status read(int64_t index, float *inputOut,
              int64_t *labelOut) const override {
    if (delay_.count())
      std::this_thread::sleep_for(delay_);
    if (index == failAt_)
      return dataLoss("'index.bin': cannot decode example ", index);
    inputOut[0] = static_cast<float>(index);
    inputOut[1] = -static_cast<float>(index);
    *labelOut = index;
    return Status::success();
  }
  std::string describe() const override { return "index dataset"; }

private:
  int64_t n_, failAt_;
  std::chrono::microseconds delay_;
  Shape shape_{2};
};

std::unique_ptr<BatchLoader> makeLoader(std::shared_ptr<const Dataset> ds,
                                        const LoaderOptions &opts) {
  auto loader = BatchLoader::create(std::move(ds), opts);
  EXPECT_TRUE(loader.ok()) << loader.status().toString();
  return loader.ok() ? std::move(loader).value() : nullptr;
}

// Every batch until the end.
std::vector<Batch> drain(BatchLoader &loader) {
  std::vector<Batch> batches;
  while (true) {
    auto b = loader.next();
    EXPECT_TRUE(b.ok()) << b.status().toString();
    if (!b.ok() || !b->has_value())
      break;
    batches.push_back(std::move(**b));
  }
  return batches;
}

std::vector<int64_t> labelsOf(const Batch &b) {
  return std::vector<int64_t>(b.labels.data<int64_t>(),
                              b.labels.data<int64_t>() +
                                  b.labels.numElements());
}

TEST(BatchLoader, InOrderWithDropLast) {
  auto ds = std::make_shared<IndexDataset>(10);
  LoaderOptions opts;
  opts.batchSize = 3;
  auto loader = makeLoader(ds, opts);
  EXPECT_EQ(loader->batchesPerEpoch(), 3);
  EXPECT_EQ(loader->totalBatches(), 3);
  std::vector<Batch> batches = drain(*loader);
  ASSERT_EQ(batches.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const Batch &b = batches[k];
    EXPECT_EQ(b.index, k);
    EXPECT_EQ(b.epoch, 0);
    EXPECT_EQ(b.lastOfEpoch, k == 2);
    EXPECT_EQ(b.inputs.dtype(), DType::kF32);
    EXPECT_EQ(b.inputs.shape(), (Shape{3, 2}));
    EXPECT_EQ(b.labels.dtype(), DType::kI64);
    EXPECT_EQ(b.labels.shape(), (Shape{3}));
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(b.labels.data<int64_t>()[i], 3 * k + i);
      EXPECT_EQ(b.inputs.data<float>()[2 * i], 3 * k + i);
      EXPECT_EQ(b.inputs.data<float>()[2 * i + 1], -(3 * k + i));
    }
  }
  // The end is sticky.
  for (int i = 0; i < 2; ++i) {
    auto b = loader->next();
    ASSERT_TRUE(b.ok());
    EXPECT_FALSE(b->has_value());
  }
}

TEST(BatchLoader, KeepLastPartialBatch) {
  LoaderOptions opts;
  opts.batchSize = 3;
  opts.dropLast = false;
  opts.numEpochs = 2;
  auto loader = makeLoader(std::make_shared<IndexDataset>(10), opts);
  EXPECT_EQ(loader->batchesPerEpoch(), 4);
  std::vector<Batch> batches = drain(*loader);
  ASSERT_EQ(batches.size(), 8u);
  EXPECT_EQ(batches[3].inputs.shape(), (Shape{1, 2}));
  EXPECT_EQ(labelsOf(batches[3]), (std::vector<int64_t>{9}));
  EXPECT_TRUE(batches[3].lastOfEpoch);
  EXPECT_EQ(batches[4].epoch, 1);
  EXPECT_EQ(labelsOf(batches[4]), (std::vector<int64_t>{0, 1, 2}));
}

// Labels of each epoch, concatenated.
std::vector<std::vector<int64_t>> epochLabels(const std::vector<Batch> &bs) {
  std::vector<std::vector<int64_t>> epochs;
  for (const Batch &b : bs) {
    if (static_cast<int64_t>(epochs.size()) <= b.epoch)
      epochs.resize(b.epoch + 1);
    std::vector<int64_t> l = labelsOf(b);
    epochs[b.epoch].insert(epochs[b.epoch].end(), l.begin(), l.end());
  }
  return epochs;
}

TEST(BatchLoader, ShuffleIsAPermutationPerEpochAndDeterministic) {
  auto ds = std::make_shared<IndexDataset>(100);
  LoaderOptions opts;
  opts.batchSize = 10;
  opts.shuffle = true;
  opts.seed = 42;
  opts.numEpochs = 3;
  auto epochs = epochLabels(drain(*makeLoader(ds, opts)));
  ASSERT_EQ(epochs.size(), 3u);
  std::vector<int64_t> identity(100);
  std::iota(identity.begin(), identity.end(), 0);
  for (const auto &e : epochs) {
    std::vector<int64_t> sorted = e;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, identity);
    EXPECT_NE(e, identity);
  }
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_NE(epochs[1], epochs[2]);

  EXPECT_EQ(epochLabels(drain(*makeLoader(ds, opts))), epochs);
  opts.seed = 43;
  EXPECT_NE(epochLabels(drain(*makeLoader(ds, opts))), epochs);
}

TEST(BatchLoader, SameBatchesForAnyNumberOfThreads) {
  auto ds = std::make_shared<IndexDataset>(1000);
  LoaderOptions opts;
  opts.batchSize = 7;
  opts.shuffle = true;
  opts.seed = 7;
  opts.dropLast = false;
  opts.numEpochs = 2;
  opts.threads = 1;
  opts.prefetch = 2;
  std::vector<Batch> one = drain(*makeLoader(ds, opts));
  opts.threads = 4;
  opts.prefetch = 8;
  std::vector<Batch> four = drain(*makeLoader(ds, opts));
  ASSERT_EQ(one.size(), 2u * 143);
  ASSERT_EQ(one.size(), four.size());
  for (size_t k = 0; k < one.size(); ++k) {
    EXPECT_EQ(one[k].index, four[k].index);
    EXPECT_EQ(one[k].epoch, four[k].epoch);
    EXPECT_EQ(one[k].lastOfEpoch, four[k].lastOfEpoch);
    ASSERT_EQ(one[k].inputs.shape(), four[k].inputs.shape());
    EXPECT_EQ(labelsOf(one[k]), labelsOf(four[k]));
    EXPECT_EQ(std::memcmp(one[k].inputs.data(), four[k].inputs.data(),
                          one[k].inputs.byteSize()),
              0);
  }
}

// DistributedSampler's semantics: shard r of N takes positions r, r+N, ...
// of each epoch's permutation, so batch k of the N shards at batch B is,
// as a set, batch k of the unsharded loader at batch N x B, in every epoch.
TEST(BatchLoader, ShardsTogetherAreTheUnshardedBatch) {
  auto ds = std::make_shared<IndexDataset>(103);
  LoaderOptions opts;
  opts.batchSize = 12;
  opts.shuffle = true;
  opts.seed = 5;
  opts.numEpochs = 3;
  std::vector<Batch> whole = drain(*makeLoader(ds, opts));
  opts.batchSize = 4;
  opts.numShards = 3;
  std::vector<std::vector<Batch>> shards;
  for (int r = 0; r < 3; ++r) {
    opts.shard = r;
    auto loader = makeLoader(ds, opts);
    // 103 / 3 = 34 examples per shard (the last one dropped): 8 batches.
    EXPECT_EQ(loader->batchesPerEpoch(), 8);
    shards.push_back(drain(*loader));
  }
  ASSERT_EQ(whole.size(), 3u * 8);
  std::set<int64_t> firstShardEpoch0;
  for (size_t k = 0; k < whole.size(); ++k) {
    std::multiset<int64_t> together;
    for (int r = 0; r < 3; ++r) {
      ASSERT_EQ(shards[r].size(), whole.size());
      EXPECT_EQ(shards[r][k].epoch, whole[k].epoch);
      for (int64_t l : labelsOf(shards[r][k]))
        together.insert(l);
      if (r == 0 && whole[k].epoch == 0)
        for (int64_t l : labelsOf(shards[r][k]))
          firstShardEpoch0.insert(l);
    }
    std::vector<int64_t> expected = labelsOf(whole[k]);
    EXPECT_EQ(together,
              std::multiset<int64_t>(expected.begin(), expected.end()))
        << "batch " << k;
  }
  // Disjoint within an epoch: shard 0 saw 32 distinct examples.
  EXPECT_EQ(firstShardEpoch0.size(), 32u);
  opts.shard = 3;
  EXPECT_FALSE(BatchLoader::create(ds, opts).ok());
}

TEST(BatchLoader, UnlimitedEpochsAndEarlyDestruction) {
  LoaderOptions opts;
  opts.batchSize = 3;
  opts.numEpochs = LoaderOptions::kUnlimitedEpochs;
  auto loader = makeLoader(std::make_shared<IndexDataset>(10), opts);
  EXPECT_EQ(loader->totalBatches(), -1);
  for (int k = 0; k < 25; ++k) {
    auto b = loader->next();
    ASSERT_TRUE(b.ok() && b->has_value());
    EXPECT_EQ((*b)->epoch, k / 3);
  }
  loader.reset();

  // Slow workers, a consumer that stops after one batch or takes none.
  auto slow =
      std::make_shared<IndexDataset>(1000, -1, std::chrono::microseconds(500));
  opts.batchSize = 16;
  opts.threads = 4;
  for (int take = 0; take < 2; ++take) {
    auto l = makeLoader(slow, opts);
    for (int i = 0; i < take; ++i)
      ASSERT_TRUE(l->next().ok());
    Clock::time_point start = Clock::now();
    l.reset();
    EXPECT_LT(secondsSince(start), 0.5);
  }
}

TEST(BatchLoader, WorkerErrorSurfacesInOrder) {
  LoaderOptions opts;
  opts.batchSize = 5;
  opts.threads = 3;
  auto loader =
      makeLoader(std::make_shared<IndexDataset>(50, /*failAt=*/23), opts);
  for (int k = 0; k < 4; ++k) {
    auto b = loader->next();
    ASSERT_TRUE(b.ok()) << b.status().toString();
    ASSERT_TRUE(b->has_value());
    EXPECT_EQ((*b)->index, k);
  }
  for (int again = 0; again < 2; ++again) {
    auto b = loader->next();
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.status().code(), StatusCode::kDataLoss);
    EXPECT_EQ(b.status().message(),
              "loading batch 4 (epoch 0), example 23: 'index.bin': cannot "
              "decode example 23");
  }
}

TEST(BatchLoader, InvalidOptions) {
  auto ds = std::make_shared<IndexDataset>(5);
  auto check = [&](LoaderOptions opts, const std::string &part) {
    expectError(BatchLoader::create(ds, opts), {part});
  };
  LoaderOptions opts;
  opts.batchSize = 0;
  check(opts, "batch size must be >= 1");
  opts = {};
  opts.threads = 0;
  check(opts, "threads");
  opts = {};
  opts.prefetch = 0;
  check(opts, "prefetch");
  opts = {};
  opts.numEpochs = 0;
  check(opts, "numEpochs");
  opts = {};
  opts.batchSize = 8;
  check(opts, "5 examples, fewer than one batch of 8");
  opts.dropLast = false;
  EXPECT_TRUE(BatchLoader::create(ds, opts).ok());
  expectError(BatchLoader::create(nullptr, opts), {"no dataset"});
}

TEST(BatchLoader, StatsTellDataBoundFromComputeBound) {
  // Data-bound: each example takes 1 ms, the consumer takes at once.
  LoaderOptions opts;
  opts.batchSize = 1;
  opts.threads = 1;
  opts.prefetch = 4;
  opts.numEpochs = 1;
  auto slow = makeLoader(
      std::make_shared<IndexDataset>(20, -1, std::chrono::milliseconds(1)),
      opts);
  std::vector<Batch> batches = drain(*slow);
  EXPECT_EQ(batches.size(), 20u);
  LoaderStats s = slow->stats();
  EXPECT_EQ(s.batches, 20);
  EXPECT_EQ(s.samples, 20);
  EXPECT_EQ(s.capacity, 4);
  EXPECT_GT(s.fractionEmpty, 0.5);
  EXPECT_GT(s.totalWaitSeconds, 0.01);
  EXPECT_LT(s.meanFill, 1.0);
  std::string verdict = classifyBottleneck(s, 0.0);
  EXPECT_EQ(verdict.rfind("data-bound: ", 0), 0u) << verdict;

  // Compute-bound: fast data, the consumer "trains" 3 ms per batch.
  opts.prefetch = 3;
  opts.threads = 2;
  auto fast = makeLoader(std::make_shared<IndexDataset>(20), opts);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  double compute = 0.0;
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(fast->next().ok());
    Clock::time_point start = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    compute += secondsSince(start);
  }
  s = fast->stats();
  EXPECT_EQ(s.batches, 12);
  EXPECT_LT(s.fractionEmpty, 0.5);
  EXPECT_GT(s.meanFill, 1.0);
  ASSERT_EQ(s.fillHistogram.size(), 4u);
  EXPECT_EQ(std::accumulate(s.fillHistogram.begin(), s.fillHistogram.end(),
                            int64_t(0)),
            12);
  verdict = classifyBottleneck(s, compute);
  EXPECT_EQ(verdict.rfind("compute-bound: ", 0), 0u) << verdict;
}

TEST(BatchLoader, ClassifyBottleneckThresholds) {
  LoaderStats s;
  EXPECT_EQ(classifyBottleneck(s, 1.0).rfind("unknown", 0), 0u);
  s.batches = 100;
  s.capacity = 4;
  s.meanFill = 3.5;
  s.fractionEmpty = 0.02;
  s.totalWaitSeconds = 0.1;
  std::string v = classifyBottleneck(s, 9.9);
  EXPECT_EQ(v.rfind("compute-bound: ", 0), 0u) << v;
  EXPECT_NE(v.find("empty at 2% of 100 next() calls"), std::string::npos) << v;
  EXPECT_NE(v.find("mean fill 3.5 of 4"), std::string::npos) << v;
  EXPECT_NE(v.find("0.100 s = 1% of 10.000 s"), std::string::npos) << v;
  EXPECT_EQ(v.find('\n'), std::string::npos);
  // Rarely empty, but long waits: 30% of the time.
  s.totalWaitSeconds = 3.0;
  v = classifyBottleneck(s, 7.0);
  EXPECT_EQ(v.rfind("data-bound: ", 0), 0u) << v;
  EXPECT_NE(v.find("30% of 10.000 s"), std::string::npos) << v;
  // Mostly empty.
  s.totalWaitSeconds = 0.1;
  s.fractionEmpty = 0.8;
  EXPECT_EQ(classifyBottleneck(s, 9.9).rfind("data-bound", 0), 0u);
}

TEST(BatchLoader, RunDataOnly) {
  auto ds = openFakeDataset({1, 28, 28}, 10, 640, 64);
  ASSERT_TRUE(ds.ok());
  LoaderOptions opts;
  opts.batchSize = 64;
  opts.numEpochs = 2;
  auto loader = makeLoader(*ds, opts);
  auto speed = runDataOnly(*loader, 0, /*warmupBatches=*/2);
  ASSERT_TRUE(speed.ok()) << speed.status().toString();
  EXPECT_EQ(speed->batches, 18);
  EXPECT_EQ(speed->samples, 18 * 64);
  EXPECT_GT(speed->batchesPerSecond, 0.0);
  EXPECT_NEAR(speed->samplesPerSecond, 64 * speed->batchesPerSecond, 1e-6);

  opts.numEpochs = LoaderOptions::kUnlimitedEpochs;
  loader = makeLoader(*ds, opts);
  expectError(runDataOnly(*loader, 0), {"unlimited epochs"});
  speed = runDataOnly(*loader, 25);
  ASSERT_TRUE(speed.ok());
  EXPECT_EQ(speed->batches, 25);
}

TEST(FashionMnist, RealFilesIfPresent) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  std::string images = dir + "train-images-idx3-ubyte.gz";
  std::string labels = dir + "train-labels-idx1-ubyte.gz";
  if (!fs::exists(images) || !fs::exists(labels))
    GTEST_SKIP() << "Fashion-MNIST not found at " << dir;
  auto ds = openIdxDataset(images, labels);
  ASSERT_TRUE(ds.ok()) << ds.status().toString();
  ASSERT_EQ((*ds)->size(), 60000);
  EXPECT_EQ((*ds)->inputShape(), (Shape{1, 28, 28}));
  std::vector<float> input(784);
  int64_t label = -1;
  ASSERT_TRUE((*ds)->read(0, input.data(), &label).ok());
  EXPECT_EQ(label, 9); // an ankle boot
  double sum = std::accumulate(input.begin(), input.end(), 0.0);
  EXPECT_NEAR(sum, 76247.0 / 255.0, 1e-3); // its pixel values sum to 76247
  std::vector<int64_t> counts(10, 0);
  for (int64_t i = 0; i < (*ds)->size(); ++i) {
    ASSERT_TRUE((*ds)->read(i, input.data(), &label).ok());
    ASSERT_TRUE(label >= 0 && label < 10) << label;
    ++counts[label];
  }
  EXPECT_EQ(counts, std::vector<int64_t>(10, 6000));

  // One shuffled epoch of batches of 64 on 2 threads.
  LoaderOptions opts;
  opts.batchSize = 64;
  opts.shuffle = true;
  opts.threads = 2;
  auto loader = makeLoader(*ds, opts);
  auto speed = runDataOnly(*loader, 0);
  ASSERT_TRUE(speed.ok()) << speed.status().toString();
  EXPECT_EQ(speed->batches, 937);
  std::cout << "Fashion-MNIST, batch 64, shuffle, 2 threads: "
            << speed->batchesPerSecond << " batches/s ("
            << speed->samplesPerSecond << " samples/s); "
            << classifyBottleneck(loader->stats(), 0.0) << "\n";
}

} // namespace
