//===- DifferentiableOpsTest.cpp - Which ops have a gradient --------------===//
//
// "Has a gradient" is DifferentiableOpInterface, declared in ODS. These
// tests keep what is said about it in step with the dialect: the math
// family's generated rule reaches every op of it, every other op says why
// it has none (notDifferentiable or missingGradient in ODS, through
// GradientCoverage.inc), and docs/op-semantics.md lists exactly the ops
// that --gopt-autodiff differentiates and the reasons of the others.
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/InitGopt.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#ifndef GOPT_SOURCE_DIR
#error                                                                         \
    "GOPT_SOURCE_DIR must point at the source tree (for docs/op-semantics.md)"
#endif

using namespace mlir;
using namespace gopt;

namespace {

/// ODS's reasons for the ops without a gradient rule, by mnemonic.
struct GradientCoverage {
  std::map<std::string, std::string> notDifferentiable, missing;
};

GradientCoverage odsGradientCoverage() {
  GradientCoverage coverage;
#define GOPT_NOT_DIFFERENTIABLE(name, why)                                     \
  coverage.notDifferentiable[name] = why;
#define GOPT_MISSING_GRADIENT(name, why) coverage.missing[name] = why;
#include "gopt/runtime/GradientCoverage.inc"
#undef GOPT_NOT_DIFFERENTIABLE
#undef GOPT_MISSING_GRADIENT
  return coverage;
}

/// The rows `| `op` | reason |` of the table that follows the line
/// `heading` in docs/op-semantics.md, up to the first non-row after it.
std::map<std::string, std::string> documentedTable(const std::string &heading) {
  std::ifstream file(std::string(GOPT_SOURCE_DIR) + "/docs/op-semantics.md");
  std::map<std::string, std::string> rows;
  std::string line;
  bool found = false;
  while (std::getline(file, line)) {
    if (!found) {
      found = line == heading;
      continue;
    }
    if (line.empty() && rows.empty())
      continue;
    if (line.rfind("|", 0) != 0)
      break;
    std::smatch row;
    if (std::regex_match(line, row,
                         std::regex(R"(\| `([a-z0-9_]+)` \| (.*) \|)")))
      rows[row[1].str()] = row[2].str();
  }
  return rows;
}

class DifferentiableOpsTest : public ::testing::Test {
protected:
  DifferentiableOpsTest() {
    DialectRegistry registry;
    registerGoptDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// The mnemonics of the gopt ops that implement the interface.
  std::set<std::string> differentiableOps() {
    std::set<std::string> ops;
    for (RegisteredOperationName name : context.getRegisteredOperations())
      if (name.getDialectNamespace() == "gopt" &&
          name.hasInterface<DifferentiableOpInterface>())
        ops.insert(name.stripDialect().str());
    return ops;
  }

  MLIRContext context;
};

TEST_F(DifferentiableOpsTest, MathFamilyHasGeneratedRules) {
  int family = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (!name.hasTrait<UnaryMath>())
      continue;
    ++family;
    EXPECT_TRUE(name.hasInterface<DifferentiableOpInterface>())
        << name.getStringRef().str();
  }
  EXPECT_GT(family, 0);
}

/// docs/op-semantics.md's paragraph that starts "Differentiable ops:"
/// names each op in backquotes.
TEST_F(DifferentiableOpsTest, OpSemanticsListsTheDifferentiableOps) {
  std::ifstream file(std::string(GOPT_SOURCE_DIR) + "/docs/op-semantics.md");
  ASSERT_TRUE(file.good());
  std::string line, paragraph;
  bool inList = false;
  while (std::getline(file, line)) {
    if (!inList && line.rfind("Differentiable ops:", 0) == 0)
      inList = true;
    if (inList && line.empty())
      break;
    if (inList)
      paragraph += line + " ";
  }
  ASSERT_FALSE(paragraph.empty())
      << "docs/op-semantics.md has no paragraph starting "
         "\"Differentiable ops:\"";
  std::set<std::string> documented;
  std::regex name("`([a-z0-9_]+)`");
  for (auto it = std::sregex_iterator(paragraph.begin(), paragraph.end(), name);
       it != std::sregex_iterator(); ++it)
    documented.insert((*it)[1].str());

  std::set<std::string> implemented = differentiableOps();
  for (const std::string &op : implemented)
    EXPECT_TRUE(documented.count(op))
        << "gopt." << op
        << " implements DifferentiableOpInterface but "
           "docs/op-semantics.md does not list it";
  for (const std::string &op : documented)
    EXPECT_TRUE(implemented.count(op))
        << "docs/op-semantics.md lists gopt." << op
        << " as differentiable but it does not implement "
           "DifferentiableOpInterface";
}

/// The build refuses an op that states no gradient (tools/gen-op-tables);
/// this checks the other half: a stated reason and an implemented rule
/// never go together, and every op has exactly one of the three.
TEST_F(DifferentiableOpsTest, EveryOpHasAGradientOrAReason) {
  GradientCoverage coverage = odsGradientCoverage();
  std::set<std::string> implemented = differentiableOps();
  int ops = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "gopt")
      continue;
    ++ops;
    std::string op = name.stripDialect().str();
    int stated = implemented.count(op) + coverage.notDifferentiable.count(op) +
                 coverage.missing.count(op);
    EXPECT_EQ(stated, 1) << "gopt." << op
                         << ": a gradient rule (Gopt_Differentiable), "
                            "notDifferentiable or missingGradient, exactly one";
  }
  EXPECT_EQ(static_cast<size_t>(ops), implemented.size() +
                                          coverage.notDifferentiable.size() +
                                          coverage.missing.size());
}

/// docs/op-semantics.md's "Gradient coverage" tables are ODS's reasons
/// (`gen_op_tables.py --gradient-table` prints them).
TEST_F(DifferentiableOpsTest, OpSemanticsTablesTheOpsWithoutGradient) {
  GradientCoverage coverage = odsGradientCoverage();
  auto compare = [](const std::map<std::string, std::string> &documented,
                    const std::map<std::string, std::string> &ods,
                    const char *table) {
    // Empty only when ODS has no op of its kind (no gradient left unwritten).
    EXPECT_TRUE(!documented.empty() || ods.empty())
        << "no table after \"" << table << "\"";
    for (const auto &[op, why] : ods) {
      auto it = documented.find(op);
      if (it == documented.end())
        ADD_FAILURE() << "docs/op-semantics.md's \"" << table
                      << "\" table lacks gopt." << op << " (" << why << ")";
      else
        EXPECT_EQ(it->second, why) << "gopt." << op;
    }
    for (const auto &[op, why] : documented)
      EXPECT_TRUE(ods.count(op))
          << "docs/op-semantics.md's \"" << table << "\" table lists gopt."
          << op << ", which ODS does not";
  };
  compare(documentedTable("Not differentiable:"), coverage.notDifferentiable,
          "Not differentiable:");
  compare(documentedTable("Missing gradients:"), coverage.missing,
          "Missing gradients:");
}

} // namespace
