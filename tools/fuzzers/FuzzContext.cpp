//===- FuzzContext.cpp - A fresh MLIR context per fuzz input --------------===//

#include "FuzzCommon.h"
#include "gopt/InitGopt.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <optional>

using namespace mlir;

namespace gopt::fuzz {

struct FuzzContext::Impl {
  Impl() : context(registry(), MLIRContext::Threading::DISABLED) {
    context.loadAllAvailableDialects();
    if (!verbose())
      handler.emplace(&context, [](Diagnostic &) { return success(); });
  }
  static const DialectRegistry &registry() {
    static const DialectRegistry *r = [] {
      auto *result = new DialectRegistry();
      registerGoptDialects(*result);
      return result;
    }();
    return *r;
  }
  MLIRContext context;
  std::optional<ScopedDiagnosticHandler> handler;
};

FuzzContext::FuzzContext() : impl(std::make_unique<Impl>()) {}
FuzzContext::~FuzzContext() = default;
MLIRContext *FuzzContext::get() { return &impl->context; }

} // namespace gopt::fuzz
