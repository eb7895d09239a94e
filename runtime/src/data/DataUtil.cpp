//===- DataUtil.cpp - Helpers shared by the datasets ----------------------===//
#include "data/DataUtil.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

namespace gopt::runtime {

Dataset::~Dataset() = default;

namespace data {

StatusOr<std::string> readFileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return notFound("cannot open '", path, "'");
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0)
    return dataLoss("cannot read '", path, "'");
  in.seekg(0, std::ios::beg);
  std::string bytes(static_cast<size_t>(size), '\0');
  if (size > 0 && !in.read(bytes.data(), size))
    return dataLoss("cannot read '", path, "'");
  return bytes;
}

StatusOr<std::string> maybeGunzip(std::string bytes, const std::string &path) {
  if (bytes.size() < 2 || static_cast<uint8_t>(bytes[0]) != 0x1f ||
      static_cast<uint8_t>(bytes[1]) != 0x8b)
    return bytes;

  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    return internalError("'", path, "': cannot initialize zlib");

  // The gzip trailer's ISIZE (size mod 2^32 of the last member) is a good
  // first guess of the output size; deflate expands at most ~1032x.
  size_t guess = bytes.size() * 4;
  if (bytes.size() >= 18) {
    const auto *tail =
        reinterpret_cast<const uint8_t *>(bytes.data() + bytes.size() - 4);
    size_t isize = tail[0] | tail[1] << 8 | tail[2] << 16 |
                   static_cast<size_t>(tail[3]) << 24;
    guess = std::max<size_t>(isize, 1024);
  }
  guess = std::min(guess, bytes.size() * 1032 + 1024);
  std::string out(guess, '\0');

  constexpr size_t kMaxChunk = 1u << 30; // z_stream counts are 32-bit
  size_t inPos = 0, outPos = 0;
  bool streamEnded = false;
  Status error;
  while (true) {
    if (zs.avail_in == 0 && inPos < bytes.size()) {
      size_t n = std::min(bytes.size() - inPos, kMaxChunk);
      zs.next_in = reinterpret_cast<Bytef *>(bytes.data() + inPos);
      zs.avail_in = static_cast<uInt>(n);
      inPos += n;
    }
    if (outPos == out.size())
      out.resize(out.size() * 2);
    size_t room = std::min(out.size() - outPos, kMaxChunk);
    zs.next_out = reinterpret_cast<Bytef *>(out.data() + outPos);
    zs.avail_out = static_cast<uInt>(room);
    int rc = inflate(&zs, Z_NO_FLUSH);
    outPos += room - zs.avail_out;
    if (rc == Z_STREAM_END) {
      // Another gzip member may follow (as `cat a.gz b.gz` makes); anything
      // else after the member is ignored, as gzip does.
      size_t rest = zs.avail_in + (bytes.size() - inPos);
      const uint8_t *next = zs.next_in;
      if (zs.avail_in == 0 && inPos < bytes.size())
        next = reinterpret_cast<const uint8_t *>(bytes.data() + inPos);
      if (rest >= 2 && next[0] == 0x1f && next[1] == 0x8b) {
        inflateReset(&zs);
        continue;
      }
      streamEnded = true;
      break;
    }
    if (rc == Z_OK)
      continue;
    if (rc == Z_BUF_ERROR) {
      if (zs.avail_in == 0 && inPos == bytes.size())
        break;  // no input left before the end of the stream: truncated
      continue; // output full: grown on the next iteration
    }
    error = dataLoss("'", path, "': corrupt gzip data (",
                     zs.msg ? zs.msg : "zlib error", ")");
    break;
  }
  inflateEnd(&zs);
  if (!error.ok())
    return error;
  if (!streamEnded)
    return dataLoss("'", path, "': truncated gzip data (the compressed ",
                    "stream ends after ", outPos, " decompressed bytes)");
  out.resize(outPos);
  return out;
}

Status checkNormalize(const NormalizeOptions &options) {
  if (!std::isfinite(options.mean))
    return invalidArgument("normalization mean must be finite, got ",
                           options.mean);
  if (!std::isfinite(options.stddev) || options.stddev <= 0.0f)
    return invalidArgument("normalization stddev must be positive, got ",
                           options.stddev);
  return Status::success();
}

std::array<float, 256> makeU8Table(const NormalizeOptions &options) {
  std::array<float, 256> table;
  for (int v = 0; v < 256; ++v)
    table[v] = (static_cast<float>(v) / 255.0f - options.mean) / options.stddev;
  return table;
}

void normalizeF32(const float *in, int64_t n, const NormalizeOptions &options,
                  float *out) {
  if (options.mean == 0.0f && options.stddev == 1.0f) {
    if (in != out)
      std::memcpy(out, in, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    out[i] = (in[i] - options.mean) / options.stddev;
}

} // namespace data
} // namespace gopt::runtime
