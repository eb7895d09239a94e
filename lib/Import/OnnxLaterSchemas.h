//===- OnnxLaterSchemas.h - ONNX op versions newer than libonnx -*- C++ -*-===//
//
// Debian's libonnx (1.12) defines the standard domain up to opset 17. A
// model of opsets 18-21 is checked against the newest definition libonnx
// has, which is wrong for the ops whose inputs or attributes changed since
// (ReduceMean's axes became an input in 18). gopt defines those versions
// itself for the ops it imports; the importer's checker and shape inference
// look them up here first. Internal to lib/Import.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_LIB_IMPORT_ONNXLATERSCHEMAS_H
#define GOPT_LIB_IMPORT_ONNXLATERSCHEMAS_H

#include <onnx/defs/schema.h>

#include <string>

namespace gopt::import {

/// The newest opset of the standard domain libonnx defines.
constexpr int kLibOnnxLatestOpset = 17;

/// TensorProto data types of ONNX 1.14-1.16 (IR 9-10) that libonnx 1.12's
/// enum lacks: float8 (one byte per element) and 4-bit integers (packed two
/// per byte, low nibble first).
constexpr int kOnnxFloat8E4M3FN = 17;
constexpr int kOnnxFloat8E4M3FNUZ = 18;
constexpr int kOnnxFloat8E5M2 = 19;
constexpr int kOnnxFloat8E5M2FNUZ = 20;
constexpr int kOnnxUInt4 = 21;
constexpr int kOnnxInt4 = 22;

/// gopt's schema of the standard-domain op `op` at opset `opset` (its
/// newest version not after `opset`) where that version is newer than
/// libonnx's and gopt imports it; null where libonnx's own lookup applies.
const onnx::OpSchema *laterOnnxSchema(const std::string &op, int opset);

/// The schema of `op` at `opset` in `domain` that gopt checks models
/// against: its own later version where it defines one, libonnx's otherwise.
inline const onnx::OpSchema *onnxSchemaFor(const std::string &op, int opset,
                                           const std::string &domain) {
  if (domain.empty() || domain == "ai.onnx")
    if (const onnx::OpSchema *later = laterOnnxSchema(op, opset))
      return later;
  return onnx::OpSchemaRegistry::Instance()->GetSchema(op, opset, domain);
}

} // namespace gopt::import

#endif // GOPT_LIB_IMPORT_ONNXLATERSCHEMAS_H
