//===- OnnxImportFuzzer.cpp - Fuzz target: ONNX import --------------------===//
//
// Bytes as a serialized ModelProto through importOnnx; a module that comes
// back must verify. Any diagnostic is fine; a crash, a hang, a sanitizer
// report or a returned module that does not verify is a finding.
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
      gopt::importOnnx(bytes, "fuzz.onnx", context.get());
  if (module && mlir::failed(mlir::verify(*module))) {
    std::fprintf(stderr, "importOnnx returned a module that does not verify\n");
    std::abort();
  }
  return 0;
}
