//===- IdxDataset.cpp - MNIST IDX files -----------------------------------===//
//
// Format (big endian): u32 magic 0x000008NN (08: u8 elements, NN: number of
// dimensions), NN u32 dimensions, then the elements in row-major order.
// Images are 0x00000803 [N,H,W], labels 0x00000801 [N].
//
//===----------------------------------------------------------------------===//
#include "data/DataUtil.h"

#include <cstring>
#include <iomanip>
#include <sstream>

namespace gopt::runtime {
namespace {

uint32_t readBigEndian32(const std::string &bytes, size_t offset) {
  const auto *p = reinterpret_cast<const uint8_t *>(bytes.data() + offset);
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 |
         static_cast<uint32_t>(p[2]) << 8 | static_cast<uint32_t>(p[3]);
}

std::string hex32(uint32_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << std::setw(8) << std::setfill('0') << v;
  return os.str();
}

// An IDX file of u8 elements with `rank` dimensions, inflated if gzip'd.
struct IdxFile {
  std::string bytes; // header included
  std::vector<int64_t> dims;
  size_t dataOffset = 0;
};

StatusOr<IdxFile> loadIdx(const std::string &path, int rank, const char *what) {
  uint32_t expectedMagic = 0x00000800u | static_cast<uint32_t>(rank);
  GOPT_ASSIGN_OR_RETURN(std::string raw, data::readFileBytes(path));
  GOPT_ASSIGN_OR_RETURN(std::string bytes,
                        data::maybeGunzip(std::move(raw), path));
  size_t headerSize = 4 + 4 * static_cast<size_t>(rank);
  if (bytes.size() < 4)
    return invalidArgument("'", path, "' is not an IDX ", what,
                           " file: it has ", bytes.size(),
                           " bytes, expected magic ", hex32(expectedMagic));
  uint32_t magic = readBigEndian32(bytes, 0);
  if (magic != expectedMagic) {
    std::string hint;
    if (magic == 0x00000801u || magic == 0x00000803u)
      hint = magic == 0x00000801u ? " (a labels file)" : " (an images file)";
    return invalidArgument("'", path, "' is not an IDX ", what, " file: magic ",
                           hex32(magic), hint, ", expected ",
                           hex32(expectedMagic));
  }
  if (bytes.size() < headerSize)
    return dataLoss("'", path, "' is truncated: its IDX header needs ",
                    headerSize, " bytes, the file has ", bytes.size());
  IdxFile file;
  uint64_t count = 1;
  bool tooLarge = false;
  for (int i = 0; i < rank; ++i) {
    uint32_t d = readBigEndian32(bytes, 4 + 4 * static_cast<size_t>(i));
    if (d == 0)
      return invalidArgument("'", path, "': IDX ", what, " dimension ", i,
                             " is 0, expected a positive size");
    file.dims.push_back(d);
    if (count > (uint64_t(1) << 62) / d)
      tooLarge = true;
    else
      count *= d;
  }
  uint64_t available = bytes.size() - headerSize;
  if (tooLarge || count > available) {
    std::ostringstream dims;
    for (int i = 0; i < rank; ++i)
      dims << (i ? "x" : "") << file.dims[i];
    std::string need = tooLarge ? "more than 2^62" : std::to_string(count);
    return dataLoss("'", path, "' is truncated: its header says ", what, " ",
                    dims.str(), " (", need, " bytes of data) but only ",
                    available, " bytes follow");
  }
  if (count < available)
    return invalidArgument("'", path, "' has ", available - count,
                           " unexpected bytes after its ", count,
                           " bytes of IDX ", what, " data");
  file.dataOffset = headerSize;
  file.bytes = std::move(bytes);
  return file;
}

class IdxDataset final : public Dataset {
public:
  IdxDataset(std::string imagesPath, IdxFile images, IdxFile labels,
             const NormalizeOptions &options)
      : imagesPath_(std::move(imagesPath)), images_(std::move(images)),
        labels_(std::move(labels)), table_(data::makeU8Table(options)) {
    size_ = images_.dims[0];
    shape_ = {1, images_.dims[1], images_.dims[2]};
    pixels_ = images_.dims[1] * images_.dims[2];
  }

  int64_t size() const override { return size_; }
  const Shape &inputShape() const override { return shape_; }

  Status read(int64_t index, float *inputOut,
              int64_t *labelOut) const override {
    if (index < 0 || index >= size_)
      return invalidArgument("example ", index, " is out of range for '",
                             imagesPath_, "' (", size_, " examples)");
    const auto *pixels = reinterpret_cast<const uint8_t *>(
        images_.bytes.data() + images_.dataOffset + index * pixels_);
    data::convertU8(pixels, pixels_, table_, inputOut);
    *labelOut = static_cast<uint8_t>(labels_.bytes[labels_.dataOffset + index]);
    return Status::success();
  }

  std::string describe() const override {
    return detail::concat("IDX '", imagesPath_, "': ", size_, " x ",
                          shapeToString(shape_));
  }

private:
  std::string imagesPath_;
  IdxFile images_, labels_;
  std::array<float, 256> table_;
  int64_t size_ = 0, pixels_ = 0;
  Shape shape_;
};

} // namespace

StatusOr<std::shared_ptr<Dataset>>
openIdxDataset(const std::string &imagesPath, const std::string &labelsPath,
               const NormalizeOptions &options) {
  GOPT_RETURN_IF_ERROR(data::checkNormalize(options));
  GOPT_ASSIGN_OR_RETURN(IdxFile images, loadIdx(imagesPath, 3, "images"));
  GOPT_ASSIGN_OR_RETURN(IdxFile labels, loadIdx(labelsPath, 1, "labels"));
  if (images.dims[0] != labels.dims[0])
    return invalidArgument("'", imagesPath, "' has ", images.dims[0],
                           " images but '", labelsPath, "' has ",
                           labels.dims[0], " labels; expected the same count");
  return std::shared_ptr<Dataset>(std::make_shared<IdxDataset>(
      imagesPath, std::move(images), std::move(labels), options));
}

} // namespace gopt::runtime
