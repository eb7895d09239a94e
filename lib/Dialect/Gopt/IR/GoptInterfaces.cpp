//===- GoptInterfaces.cpp - Op interfaces of the gopt dialect -------------===//

#include "gopt/Dialect/Gopt/IR/GoptInterfaces.h"

#include "gopt/Dialect/Gopt/IR/GoptInterfaces.cpp.inc"
