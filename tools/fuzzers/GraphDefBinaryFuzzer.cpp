//===- GraphDefBinaryFuzzer.cpp - Fuzz target: GraphDef import (pb) -------===//
//
// Bytes as a binary GraphDef (the .pb path: binary first, text as a fallback)
// through importGraphDef; a module that comes back must verify. Any
// diagnostic is fine; a crash, a hang, a sanitizer report or a returned
// module that does not verify is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"
#include "gopt/Import/Import.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringRef.h"

#include <cstdio>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gopt::fuzz::quietProtobuf();
  gopt::fuzz::FuzzContext context;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      gopt::importGraphDef(bytes, "fuzz.pb", context.get());
  if (module && mlir::failed(mlir::verify(*module))) {
    std::fprintf(stderr,
                 "importGraphDef returned a module that does not verify\n");
    std::abort();
  }
  return 0;
}
