//===- VerifierFuzzTest.cpp - Mutated IR never crashes the verifier -------===//
//
// The parser and verifier are gopt's front door: whatever a user writes, the
// answer is a diagnostic, never a crash. This test takes the lit suite's
// valid IR as seeds, mutates numbers (dimensions, strides, pads, axes) and
// string attributes (data_format, padding, ...) with a fixed seed, and
// parses and verifies every mutant. A crash, hang or sanitizer report fails
// the test; any diagnostic is fine. (The libFuzzer targets explore further
// when GOPT_ENABLE_FUZZERS=ON; this runs in every test run.)
//
//===----------------------------------------------------------------------===//

#include "gopt/InitGopt.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <fstream>
#include <random>
#include <regex>
#include <sstream>

using namespace mlir;

#ifndef GOPT_SOURCE_DIR
#error "GOPT_SOURCE_DIR must point at the source tree (for the seed IR)"
#endif

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Splits a lit file at its `// -----` markers into single cases.
std::vector<std::string> splitCases(const std::string &text) {
  std::vector<std::string> cases;
  size_t start = 0;
  while (true) {
    size_t marker = text.find("// -----", start);
    cases.push_back(text.substr(start, marker - start));
    if (marker == std::string::npos)
      break;
    start = marker + 8;
  }
  return cases;
}

/// One random edit of `text`: a number or a quoted string replaced by a
/// value chosen to hit edge cases (zero, negative, huge, wrong enum).
std::string mutate(const std::string &text, std::mt19937_64 &rng) {
  static const char *numbers[] = {"0",
                                  "1",
                                  "2",
                                  "3",
                                  "-1",
                                  "-2",
                                  "7",
                                  "64",
                                  "65",
                                  "1000000",
                                  "9223372036854775807",
                                  "-9223372036854775807"};
  static const char *strings[] = {"\"NHWC\"",  "\"NCHW\"",     "\"SAME\"",
                                  "\"VALID\"", "\"EXPLICIT\"", "\"OIHW\"",
                                  "\"HWIO\"",  "\"relu\"",     "\"\"",
                                  "\"gpu\"",   "\"tanh\""};
  static const std::regex numberPattern("-?[0-9]+");
  static const std::regex stringPattern("\"[A-Za-z0-9_]*\"");
  bool editString = rng() % 4 == 0;
  const std::regex &pattern = editString ? stringPattern : numberPattern;
  std::vector<std::pair<size_t, size_t>> spans;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern);
       it != std::sregex_iterator(); ++it)
    spans.push_back({static_cast<size_t>(it->position()),
                     static_cast<size_t>(it->length())});
  if (spans.empty())
    return text;
  auto [pos, len] = spans[rng() % spans.size()];
  std::string replacement = editString ? strings[rng() % std::size(strings)]
                                       : numbers[rng() % std::size(numbers)];
  return text.substr(0, pos) + replacement + text.substr(pos + len);
}

TEST(VerifierFuzzTest, MutatedOpsGetDiagnosticsNotCrashes) {
  DialectRegistry registry;
  gopt::registerGoptDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics are expected; keep them off the test log.
  unsigned diagnostics = 0;
  ScopedDiagnosticHandler quiet(&context, [&](Diagnostic &) {
    ++diagnostics;
    return success();
  });

  std::vector<std::string> seeds;
  for (const char *file : {"ops.mlir", "infer.mlir", "canonicalize.mlir"}) {
    std::string text =
        readFile(std::string(GOPT_SOURCE_DIR) + "/test/Dialect/Gopt/" + file);
    ASSERT_FALSE(text.empty()) << "missing seed " << file;
    for (std::string &c : splitCases(text))
      seeds.push_back(std::move(c));
  }

  std::mt19937_64 rng(20261122);
  unsigned parsed = 0, rejected = 0;
  constexpr unsigned kMutantsPerSeed = 400;
  for (const std::string &seed : seeds) {
    for (unsigned i = 0; i < kMutantsPerSeed; ++i) {
      std::string mutant = mutate(seed, rng);
      if (rng() % 2)
        mutant = mutate(mutant, rng);
      OwningOpRef<ModuleOp> module =
          parseSourceString<ModuleOp>(mutant, &context);
      if (module && succeeded(verify(*module)))
        ++parsed;
      else
        ++rejected;
    }
  }
  // Both outcomes must occur, or the mutations are not exercising anything.
  EXPECT_GT(parsed, 0u);
  EXPECT_GT(rejected, 0u);
  EXPECT_GT(diagnostics, 0u);
}

} // namespace
