//===- Report.cpp - What each gopt pass changed, as remarks ---------------===//

#include "Report.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

namespace {
// A plain global option: gopt's libraries are static and linked once per
// tool, and MlirOptMain parses every registered option.
llvm::cl::opt<bool> clReport(
    "gopt-report",
    llvm::cl::desc("Every gopt pass reports what it changed in each function "
                   "as a remark (\"gopt-fuse-batch-norm: fused 2 batch "
                   "norms ...\"); works where -mlir-pass-statistics does not "
                   "(release libMLIR)"),
    llvm::cl::init(false));
} // namespace

namespace gopt {

bool isReportEnabled(bool passOption) { return passOption || clReport; }

void reportChanges(Operation *op, bool passOption, StringRef pass,
                   const llvm::Twine &message) {
  if (!isReportEnabled(passOption))
    return;
  // On the location, not the op: MlirOptMain attaches the op (a whole
  // function here) to diagnostics emitted on ops.
  emitRemark(op->getLoc()) << pass << ": " << message.str();
}

std::string plural(int64_t n, StringRef singular, StringRef pluralForm) {
  std::string text = std::to_string(n) + " ";
  if (n == 1)
    return text + singular.str();
  if (!pluralForm.empty())
    return text + pluralForm.str();
  return text + singular.str() + "s";
}

} // namespace gopt
