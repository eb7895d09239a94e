//===- Model.h - A graph held in memory, for embedders ----------*- C++ -*-===//
//
// What the Python module (and any embedder with the compiler) works on: a
// graph read from a file or bytes, kept as MLIR in a context of its own, that
// pass pipelines transform in place and that is written as MLIR, ONNX or a
// plan. Errors are runtime::Status values whose message is what gopt-opt and
// gopt-run print for the same failure.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DRIVER_MODEL_H
#define GOPT_DRIVER_MODEL_H

#include "gopt/Import/Import.h"
#include "gopt/runtime/Status.h"
#include "gopt/runtime/plan.pb.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MemoryBuffer;
} // namespace llvm
namespace mlir {
class MLIRContext;
} // namespace mlir

namespace gopt {

/// One remark a pass emitted while a pipeline ran ("gopt-fuse-batch-norm:
/// fused 2 batch norms"), split into the pass and its message.
struct PassRemark {
  std::string pass;     // "gopt-fuse-batch-norm"; empty when not prefixed
  std::string message;  // the text after "<pass>: "
  std::string location; // where it was emitted, as diagnostics print it
};

/// A registered pass or pipeline, as `gopt-opt --help` lists it.
struct PassDescription {
  std::string name;
  std::string description;
  bool isPipeline = false;
  std::vector<std::string> options; // "target=<value> - Device to ..."
};

class Model {
public:
  /// Reads a model file: .mlir (text or bytecode), .onnx, .pb or .pbtxt;
  /// `format` ("mlir", "onnx", "graphdef") overrides the extension.
  static runtime::StatusOr<std::unique_ptr<Model>>
  fromFile(const std::string &path, const std::string &format = "");
  /// The same from bytes in memory; `name` only names them in errors. An
  /// empty `format` guesses: MLIR bytecode or text is MLIR, other text a
  /// GraphDef (.pbtxt), anything else ONNX.
  static runtime::StatusOr<std::unique_ptr<Model>>
  fromBytes(const std::string &bytes, const std::string &format = "",
            const std::string &name = "<bytes>");
  ~Model();
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  /// A deep copy in a context of its own.
  runtime::StatusOr<std::unique_ptr<Model>> clone() const;

  /// Runs a pass pipeline on the graph: textual MLIR
  /// ("builtin.module(gopt-optimize{target=cpu})") or a comma-separated list
  /// of registered passes and pipelines, nested where each one runs. On
  /// failure the graph is left as it was. Every gopt pass reports what it
  /// changed; the remarks are appended to remarks().
  runtime::Status runPipeline(const std::string &pipeline);

  /// The remarks of every pipeline run so far, in order.
  const std::vector<PassRemark> &remarks() const { return remarks_; }

  /// The graph as MLIR text; with `elideLargeConstants`, constants of more
  /// than 16 elements are elided, for reading.
  std::string ir(bool elideLargeConstants = false) const;
  /// The graph as an ONNX ModelProto (fails on ops ONNX lacks) at `opset`
  /// (14 to 21), or with 0 at the lowest from 14 on that the graph needs.
  runtime::StatusOr<std::string> toOnnx(int64_t opset = 0) const;
  /// The graph lowered to a runtime plan.
  runtime::StatusOr<plan::Plan> toPlan() const;
  /// Writes the graph by `path`'s extension: .mlir, .mlirbc, .onnx, .gplan.
  runtime::Status save(const std::string &path) const;

  /// The name errors give the model: its file, or the name of its bytes.
  const std::string &name() const { return name_; }

  /// For a model read from ONNX: each graph input's and output's dimension
  /// names (ONNX's dim_param, "batch"; empty for a fixed or unnamed one),
  /// by name. Plans keep only sizes, so this is where a symbolic dimension
  /// keeps its name.
  const std::map<std::string, std::vector<std::string>> &dimNames() const {
    return dimNames_;
  }

private:
  Model();
  runtime::Status read(std::unique_ptr<llvm::MemoryBuffer> buffer,
                       std::optional<GraphFormat> format);
  std::string name_;
  // Declared before the module, so the module is destroyed first.
  std::unique_ptr<mlir::MLIRContext> context_;
  struct Module;
  std::unique_ptr<Module> module_;
  std::vector<PassRemark> remarks_;
  std::map<std::string, std::vector<std::string>> dimNames_;
};

/// Every registered pass and pipeline (gopt's, and the upstream cleanups
/// they use), sorted by name.
std::vector<PassDescription> availablePasses();

} // namespace gopt

#endif // GOPT_DRIVER_MODEL_H
