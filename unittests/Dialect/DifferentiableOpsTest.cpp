//===- DifferentiableOpsTest.cpp - Which ops have a gradient --------------===//
//
// "Has a gradient" is DifferentiableOpInterface, declared in ODS. These
// tests keep what is said about it in step with the dialect: the math
// family's generated rule reaches every op of it, and docs/op-semantics.md
// lists exactly the ops that --gopt-autodiff differentiates.
//
//===----------------------------------------------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptOps.h"
#include "gopt/InitGopt.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <fstream>
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

} // namespace
