//===- TfRecordDataset.cpp - TFRecord files of tf.train.Example -----------===//
//
// A TFRecord file is a sequence of records:
//   u64 length (little endian), u32 masked crc32c of those 8 bytes,
//   length bytes of data, u32 masked crc32c of the data,
// where masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8. Here every
// record holds a serialized tf.train.Example (proto/example.proto).
//
//===----------------------------------------------------------------------===//
#include "data/DataUtil.h"
#include "gopt/runtime/example.pb.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

namespace gopt::runtime {
namespace {

// Slicing-by-8 tables of the reflected Castagnoli polynomial 0x82f63b78:
// tables[0] is the classic byte-at-a-time table, tables[k][b] advances
// tables[k-1][b] by one more zero byte.
struct Crc32cTables {
  uint32_t t[8][256];
  Crc32cTables() {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t crc = b;
      for (int k = 0; k < 8; ++k)
        crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1u)));
      t[0][b] = crc;
    }
    for (int k = 1; k < 8; ++k)
      for (uint32_t b = 0; b < 256; ++b)
        t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
};

const Crc32cTables &crcTables() {
  static const Crc32cTables tables;
  return tables;
}

uint64_t loadLE64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = v << 8 | p[i];
  return v;
}

uint32_t loadLE32(const uint8_t *p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// Reads exactly `size` bytes at `offset`; false on an error or short read.
bool preadAll(int fd, void *buffer, size_t size, uint64_t offset) {
  auto *out = static_cast<char *>(buffer);
  while (size > 0) {
    ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    out += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

struct Record {
  uint32_t file;
  uint64_t offset; // of the record's header
  uint64_t length; // of its data
};

class TfRecordDataset final : public Dataset {
public:
  TfRecordDataset(std::vector<std::string> paths, std::string imageFeature,
                  std::string labelFeature, Shape shape,
                  const NormalizeOptions &options)
      : paths_(std::move(paths)), imageFeature_(std::move(imageFeature)),
        labelFeature_(std::move(labelFeature)), shape_(std::move(shape)),
        options_(options), table_(data::makeU8Table(options)) {
    elements_ = numElements(shape_);
  }
  ~TfRecordDataset() override {
    for (int fd : fds_)
      ::close(fd);
  }

  // Opens every file and indexes its records, checking the length CRCs.
  Status index();

  int64_t size() const override {
    return static_cast<int64_t>(records_.size());
  }
  const Shape &inputShape() const override { return shape_; }
  Status read(int64_t index, float *inputOut, int64_t *labelOut) const override;
  std::string describe() const override {
    return detail::concat("TFRecord '", paths_.front(), "'",
                          paths_.size() > 1 ? " and others" : "", ": ", size(),
                          " x ", shapeToString(shape_));
  }

private:
  // "'file' record 3 (byte offset 1234)", numbering records per file.
  std::string where(int64_t index) const {
    const Record &r = records_[index];
    return detail::concat("'", paths_[r.file], "' record ",
                          index - firstRecord_[r.file], " (byte offset ",
                          r.offset, ")");
  }
  Status decode(int64_t index, const gopt::data::Example &example,
                float *inputOut, int64_t *labelOut) const;

  std::vector<std::string> paths_;
  std::string imageFeature_, labelFeature_;
  Shape shape_;
  NormalizeOptions options_;
  std::array<float, 256> table_;
  int64_t elements_ = 0;
  std::vector<int> fds_;
  std::vector<int64_t> firstRecord_; // per file
  std::vector<Record> records_;
};

Status TfRecordDataset::index() {
  constexpr size_t kWindow = 1 << 20;
  std::vector<uint8_t> window(kWindow);
  for (size_t f = 0; f < paths_.size(); ++f) {
    const std::string &path = paths_[f];
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return notFound("cannot open '", path, "': ", std::strerror(errno));
    fds_.push_back(fd);
    struct stat st;
    if (::fstat(fd, &st) != 0)
      return dataLoss("cannot stat '", path, "': ", std::strerror(errno));
    uint64_t fileSize = static_cast<uint64_t>(st.st_size);
    firstRecord_.push_back(static_cast<int64_t>(records_.size()));

    // Headers are read through a window of the file, so that small records
    // do not cost a system call each.
    uint64_t windowStart = 0, windowSize = 0;
    uint64_t offset = 0;
    int64_t local = 0;
    while (offset < fileSize) {
      if (fileSize - offset < 12)
        return dataLoss("'", path, "' is truncated: record ", local,
                        " (byte offset ", offset, ") needs a 12-byte header, ",
                        fileSize - offset, " bytes remain");
      if (offset < windowStart || offset + 12 > windowStart + windowSize) {
        windowStart = offset;
        windowSize = std::min<uint64_t>(kWindow, fileSize - offset);
        if (!preadAll(fd, window.data(), windowSize, windowStart))
          return dataLoss("cannot read '", path, "' at byte offset ", offset);
      }
      const uint8_t *header = window.data() + (offset - windowStart);
      uint64_t length = loadLE64(header);
      uint32_t stored = loadLE32(header + 8);
      uint32_t actual = maskCrc32c(crc32c(header, 8));
      if (stored != actual)
        return dataLoss("'", path, "' record ", local, " (byte offset ", offset,
                        "): length CRC mismatch (stored ", stored,
                        ", computed ", actual, "); the file is corrupt");
      if (length > fileSize - offset - 12 ||
          fileSize - offset - 12 - length < 4)
        return dataLoss("'", path, "' is truncated: record ", local,
                        " (byte offset ", offset, ") has ", length,
                        " bytes of data plus a 4-byte CRC, but only ",
                        fileSize - offset - 12, " bytes remain");
      records_.push_back({static_cast<uint32_t>(f), offset, length});
      offset += 12 + length + 4;
      ++local;
    }
  }
  if (records_.empty())
    return invalidArgument("TFRecord file '", paths_.front(), "'",
                           paths_.size() > 1 ? " and the others" : "",
                           " hold no records");
  return Status::success();
}

Status TfRecordDataset::read(int64_t index, float *inputOut,
                             int64_t *labelOut) const {
  if (index < 0 || index >= size())
    return invalidArgument("example ", index, " is out of range for '",
                           paths_.front(), "' (", size(), " records)");
  const Record &r = records_[index];
  // The data and its CRC.
  std::string bytes(r.length + 4, '\0');
  if (!preadAll(fds_[r.file], bytes.data(), bytes.size(), r.offset + 12))
    return dataLoss("cannot read ", where(index));
  uint32_t stored =
      loadLE32(reinterpret_cast<const uint8_t *>(bytes.data()) + r.length);
  uint32_t actual = maskCrc32c(crc32c(bytes.data(), r.length));
  if (stored != actual)
    return dataLoss(where(index), ": data CRC mismatch (stored ", stored,
                    ", computed ", actual, "); the file is corrupt");
  gopt::data::Example example;
  if (r.length > static_cast<uint64_t>(INT32_MAX) ||
      !example.ParseFromArray(bytes.data(), static_cast<int>(r.length)))
    return dataLoss(where(index), ": not a serialized tf.train.Example");
  return decode(index, example, inputOut, labelOut);
}

Status TfRecordDataset::decode(int64_t index,
                               const gopt::data::Example &example,
                               float *inputOut, int64_t *labelOut) const {
  const auto &features = example.features().feature();
  auto missing = [&](const std::string &name) {
    std::vector<std::string> keys;
    for (const auto &[key, value] : features)
      keys.push_back(key);
    std::sort(keys.begin(), keys.end()); // the map's order is arbitrary
    std::string names;
    for (const std::string &key : keys)
      names += (names.empty() ? "" : ", ") + key;
    return invalidArgument(
        where(index), " has no feature '", name,
        "'; its features: ", names.empty() ? "(none)" : names);
  };
  auto image = features.find(imageFeature_);
  if (image == features.end())
    return missing(imageFeature_);
  const gopt::data::Feature &f = image->second;
  if (f.kind_case() == gopt::data::Feature::kFloatList) {
    const auto &values = f.float_list().value();
    if (values.size() != elements_)
      return invalidArgument(where(index), ": feature '", imageFeature_,
                             "' has ", values.size(), " floats, expected ",
                             elements_, " for input shape ",
                             shapeToString(shape_));
    data::normalizeF32(values.data(), elements_, options_, inputOut);
  } else if (f.kind_case() == gopt::data::Feature::kBytesList) {
    const auto &values = f.bytes_list().value();
    if (values.size() != 1 ||
        static_cast<int64_t>(values[0].size()) != elements_)
      return invalidArgument(
          where(index), ": feature '", imageFeature_, "' has ", values.size(),
          " byte strings", values.size() == 1 ? " of " : "",
          values.size() == 1 ? std::to_string(values[0].size()) : "",
          values.size() == 1 ? " bytes" : "", ", expected one of ", elements_,
          " raw u8 pixels for input shape ", shapeToString(shape_));
    data::convertU8(reinterpret_cast<const uint8_t *>(values[0].data()),
                    elements_, table_, inputOut);
  } else {
    return invalidArgument(where(index), ": feature '", imageFeature_, "' is ",
                           f.kind_case() == gopt::data::Feature::kInt64List
                               ? "an int64_list"
                               : "empty",
                           ", expected a float_list or a bytes_list");
  }

  auto label = features.find(labelFeature_);
  if (label == features.end())
    return missing(labelFeature_);
  if (label->second.kind_case() != gopt::data::Feature::kInt64List ||
      label->second.int64_list().value_size() != 1)
    return invalidArgument(where(index), ": feature '", labelFeature_,
                           "' must be an int64_list of one value");
  int64_t value = label->second.int64_list().value(0);
  if (value < 0)
    return invalidArgument(where(index), ": label ", value,
                           " is negative, expected a class index >= 0");
  *labelOut = value;
  return Status::success();
}

} // namespace

uint32_t crc32c(const void *data, size_t size, uint32_t crc) {
  const Crc32cTables &tables = crcTables();
  const auto &t = tables.t;
  const auto *p = static_cast<const uint8_t *>(data);
  crc = ~crc;
  while (size >= 8) {
    uint64_t v = loadLE64(p) ^ crc;
    crc = t[7][v & 0xff] ^ t[6][(v >> 8) & 0xff] ^ t[5][(v >> 16) & 0xff] ^
          t[4][(v >> 24) & 0xff] ^ t[3][(v >> 32) & 0xff] ^
          t[2][(v >> 40) & 0xff] ^ t[1][(v >> 48) & 0xff] ^ t[0][v >> 56];
    p += 8;
    size -= 8;
  }
  while (size-- > 0)
    crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t maskCrc32c(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

StatusOr<std::shared_ptr<Dataset>>
openTfRecordDataset(const std::vector<std::string> &paths,
                    const std::string &imageFeature,
                    const std::string &labelFeature, const Shape &inputShape,
                    const NormalizeOptions &options) {
  GOPT_RETURN_IF_ERROR(data::checkNormalize(options));
  if (paths.empty())
    return invalidArgument("no TFRecord files given");
  if (imageFeature.empty() || labelFeature.empty())
    return invalidArgument("TFRecord dataset: the image and label feature ",
                           "names must not be empty");
  if (inputShape.empty())
    return invalidArgument("TFRecord dataset: an input shape is required");
  for (int64_t d : inputShape)
    if (d <= 0)
      return invalidArgument("TFRecord dataset: input shape ",
                             shapeToString(inputShape),
                             " must have positive dimensions");
  auto dataset = std::make_shared<TfRecordDataset>(
      paths, imageFeature, labelFeature, inputShape, options);
  GOPT_RETURN_IF_ERROR(dataset->index());
  // Decode the first record now, so that a wrong feature name or shape is
  // reported when the dataset is opened rather than by a loader thread.
  std::vector<float> input(static_cast<size_t>(dataset->inputElements()));
  int64_t label = 0;
  GOPT_RETURN_IF_ERROR(dataset->read(0, input.data(), &label));
  return std::shared_ptr<Dataset>(std::move(dataset));
}

} // namespace gopt::runtime
