//===- DataUtil.h - Helpers shared by the datasets --------------*- C++ -*-===//
#ifndef GOPT_RUNTIME_DATA_DATAUTIL_H
#define GOPT_RUNTIME_DATA_DATAUTIL_H

#include "gopt/runtime/DataPipeline.h"

#include <array>
#include <cstdint>
#include <string>

namespace gopt::runtime::data {

// The whole file; notFound naming it when it cannot be opened.
StatusOr<std::string> readFileBytes(const std::string &path);

// `bytes` inflated when they start with the gzip magic (1f 8b, members may
// be concatenated), else unchanged. Errors name `path`.
StatusOr<std::string> maybeGunzip(std::string bytes, const std::string &path);

// Rejects a non-finite or non-positive stddev and a non-finite mean.
Status checkNormalize(const NormalizeOptions &options);

// u8 pixel -> (v / 255 - mean) / stddev, one entry per value.
std::array<float, 256> makeU8Table(const NormalizeOptions &options);

inline void convertU8(const uint8_t *in, int64_t n,
                      const std::array<float, 256> &table, float *out) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = table[in[i]];
}

// (x - mean) / stddev, skipped for the identity.
void normalizeF32(const float *in, int64_t n, const NormalizeOptions &options,
                  float *out);

} // namespace gopt::runtime::data

#endif // GOPT_RUNTIME_DATA_DATAUTIL_H
