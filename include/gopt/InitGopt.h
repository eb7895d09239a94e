//===- InitGopt.h - Register gopt's dialects and passes ---------*- C++ -*-===//
//
// One place that lists what gopt's tools load: the gopt dialect and the
// upstream dialects its graphs use (never InitAllDialects: it costs ~50 s and
// 2.5 GB to compile), and every gopt pass and pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_INITGOPT_H
#define GOPT_INITGOPT_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace gopt {

/// gopt and func: a graph is a func.func of gopt ops.
void registerGoptDialects(mlir::DialectRegistry &registry);

/// Every gopt pass and pipeline, plus the upstream cleanups they rely on
/// (canonicalize, cse, symbol-dce, ...).
void registerGoptPasses();

} // namespace gopt

#endif // GOPT_INITGOPT_H
