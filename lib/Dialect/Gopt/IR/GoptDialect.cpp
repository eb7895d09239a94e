//===- GoptDialect.cpp - The gopt dialect ---------------------------------===//

#include "gopt/Dialect/Gopt/IR/GoptDialect.h"
#include "gopt/Dialect/Gopt/IR/GoptOps.h"

using namespace mlir;
using namespace gopt;

#include "gopt/Dialect/Gopt/IR/GoptOpsDialect.cpp.inc"

void GoptDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "gopt/Dialect/Gopt/IR/GoptOps.cpp.inc"
      >();
}
