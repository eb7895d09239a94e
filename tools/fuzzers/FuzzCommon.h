//===- FuzzCommon.h - Shared set-up of gopt's fuzz targets ------*- C++ -*-===//
//
// Each fuzz target is one source file defining LLVMFuzzerTestOneInput. The
// libFuzzer build (GOPT_ENABLE_FUZZERS=ON, clang) links it with libFuzzer's
// main; the ordinary build renames the entry points with -D (see
// CMakeLists.txt) and links every target into gopt-fuzz-smoke, which drives
// them with its own deterministic mutator. Nothing here depends on which.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_TOOLS_FUZZERS_FUZZCOMMON_H
#define GOPT_TOOLS_FUZZERS_FUZZCOMMON_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace gopt::fuzz {

/// True when GOPT_FUZZ_VERBOSE is set: diagnostics are printed instead of
/// swallowed (useful when replaying one input).
inline bool verbose() {
  static const bool on = std::getenv("GOPT_FUZZ_VERBOSE") != nullptr;
  return on;
}

/// Largest tensor memory, in bytes, a fuzzed plan may ask for (all tensors at
/// batch 1). Plans above it are skipped by the plan target so the fuzzer does
/// not run out of memory; anything that still allocates more is a finding
/// (libFuzzer: -malloc_limit_mb=64, gopt-fuzz-smoke: its allocation guard).
constexpr size_t kMaxTensorBytes = size_t(64) << 20;

/// A fresh MLIR context per input with gopt's dialects loaded, threading off,
/// and diagnostics swallowed unless verbose(). Fresh so that interned
/// attributes and resource blobs of one input never pile up over a run.
class FuzzContext {
public:
  FuzzContext();
  ~FuzzContext();
  mlir::MLIRContext *get();

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Silences protobuf's own logging (text-format parse errors) unless
/// verbose(). Idempotent.
void quietProtobuf();

} // namespace gopt::fuzz

#endif // GOPT_TOOLS_FUZZERS_FUZZCOMMON_H
