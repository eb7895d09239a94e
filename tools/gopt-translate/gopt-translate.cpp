//===- gopt-translate.cpp - Import, export and emit gopt graphs -----------===//
//
// mlir-translate with gopt's translations: --import-onnx, --import-graphdef,
// --export-onnx, --emit-plan. Each format registers itself from its library;
// adding one is one more register call here. --export-onnx and --emit-plan
// read their input as gopt-opt does: graph files (.onnx, .pb, .pbtxt) by
// extension, anything else as MLIR.
//
//===----------------------------------------------------------------------===//

#include "gopt/Driver/CompileModel.h"
#include "gopt/Import/Import.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  gopt::registerImportTranslations();
  gopt::registerEmitPlanTranslation();
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "gopt translator"))
             ? 1
             : 0;
}
