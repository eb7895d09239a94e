//===- Report.h - What each gopt pass changed, as remarks -------*- C++ -*-===//
//
// Pass statistics (llvm::Statistic) are no-ops in a release libMLIR, so
// `-mlir-pass-statistics` prints nothing there. Every gopt pass therefore
// also counts what it changed and, when asked (`--gopt-report` on the
// command line, or the pass's own `report=true` option), emits one remark
// per function: "gopt-fuse-batch-norm: fused 2 batch norms (1 training, 1
// inference)".
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_LIB_TRANSFORMS_REPORT_H
#define GOPT_LIB_TRANSFORMS_REPORT_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

namespace gopt {

/// True when `--gopt-report` was given or `passOption` (a pass's `report`
/// option) is set.
bool isReportEnabled(bool passOption);

/// Emits "<pass>: <message>" as a remark on `op` when reporting is enabled.
void reportChanges(mlir::Operation *op, bool passOption, llvm::StringRef pass,
                   const llvm::Twine &message);

/// "1 batch norm" / "2 batch norms".
std::string plural(int64_t n, llvm::StringRef singular,
                   llvm::StringRef pluralForm = "");

} // namespace gopt

#endif // GOPT_LIB_TRANSFORMS_REPORT_H
