//===- InitGopt.cpp - Register gopt's dialects and passes -----------------===//

#include "gopt/InitGopt.h"
#include "gopt/Dialect/Gopt/IR/GoptDialect.h"
#include "gopt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void gopt::registerGoptDialects(mlir::DialectRegistry &registry) {
  registry.insert<gopt::GoptDialect, mlir::func::FuncDialect>();
}

void gopt::registerGoptPasses() {
  mlir::registerTransformsPasses();
  gopt::registration::registerGoptPasses();
  gopt::registerOptimizePipeline();
}
