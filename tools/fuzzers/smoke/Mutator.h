//===- Mutator.h - Seeded input mutator for gopt-fuzz-smoke -----*- C++ -*-===//
//
// A small, seeded mutator for the in-CI smoke runs of the fuzz targets (the
// libFuzzer build uses libFuzzer's own). Byte-level edits for every format,
// plus structure-aware ones: protobuf wire-format edits (field values,
// lengths kept consistent, fields deleted, duplicated, renumbered, strings
// swapped between fields) for the binary formats, and token edits (numbers,
// identifiers, strings, lines) for the text formats. The same seed gives the
// same sequence of inputs.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_TOOLS_FUZZERS_SMOKE_MUTATOR_H
#define GOPT_TOOLS_FUZZERS_SMOKE_MUTATOR_H

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace gopt::fuzz {

enum class InputKind { Protobuf, Text };

class Mutator {
public:
  Mutator(InputKind kind, std::vector<std::string> seeds, uint64_t seed,
          size_t maxLength);

  /// A new input: 1 to 4 edits stacked on a seed.
  std::string next();

  /// One edit of `input` (exposed for tests).
  void mutateOnce(std::string &input);

private:
  uint64_t below(uint64_t n) { return n ? rng() % n : 0; }
  const std::string &randomSeed() { return seeds[below(seeds.size())]; }

  // Byte-level edits; each returns false when it could not apply.
  bool flipBit(std::string &s);
  bool setInterestingByte(std::string &s);
  bool insertRandomBytes(std::string &s);
  bool eraseRange(std::string &s);
  bool duplicateRange(std::string &s);
  bool spliceSeed(std::string &s);
  bool mutateBytes(std::string &s);

  // Structure-aware edits.
  bool mutateProtobuf(std::string &s);
  bool mutateText(std::string &s);

  InputKind kind;
  std::vector<std::string> seeds;
  size_t maxLength;
  std::mt19937_64 rng;
  /// Strings and identifiers seen in the seeds, to swap in.
  std::vector<std::string> dictionary;
};

} // namespace gopt::fuzz

#endif // GOPT_TOOLS_FUZZERS_SMOKE_MUTATOR_H
