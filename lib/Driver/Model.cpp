//===- Model.cpp - A graph held in memory, for embedders ------------------===//

#include "gopt/Driver/Model.h"
#include "gopt/Conversion/GoptToPlan.h"
#include "gopt/Import/Import.h"
#include "gopt/InitGopt.h"
#include "gopt/Tooling/FileExtension.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unistd.h>

using namespace mlir;
using gopt::runtime::Status;
using gopt::runtime::StatusOr;

namespace gopt {

struct Model::Module {
  OwningOpRef<ModuleOp> op;
};

namespace {

/// Registers gopt's passes once per process, and turns on --gopt-report, so
/// every gopt pass says what it changed: remarks() is how an embedder sees
/// that, as gopt-opt's user sees it on stderr.
void registerPassesOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerGoptPasses();
    auto &options = llvm::cl::getRegisteredOptions();
    auto it = options.find("gopt-report");
    if (it != options.end())
      static_cast<llvm::cl::opt<bool> *>(it->second)->setValue(true);
  });
}

std::unique_ptr<MLIRContext> newContext() {
  DialectRegistry registry;
  registerGoptDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  // As the tools: a pass's error names its op's location; a dump of the
  // whole function after it buries the message in a model's worth of IR.
  context->printOpOnDiagnostic(false);
  return context;
}

/// `text` without trailing newlines; what the tools print after "error: ".
std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

/// Diagnostics while a model is read or transformed: errors (and the notes
/// attached to them) as the tools print them, into `errors`; remarks, when
/// `remarks` is given, into it instead of the text.
class DiagnosticCapture {
public:
  DiagnosticCapture(MLIRContext *context, llvm::SourceMgr &sourceMgr,
                    std::vector<PassRemark> *remarks)
      : os_(errors_), printer_(sourceMgr, context, os_),
        remarkHandler_(context, [this, remarks](Diagnostic &d) {
          if (d.getSeverity() != DiagnosticSeverity::Remark || !remarks)
            return failure(); // on to the printer
          std::string text = d.str();
          PassRemark remark;
          size_t colon = text.find(": ");
          if (colon != std::string::npos && text.compare(0, 5, "gopt-") == 0 &&
              text.substr(0, colon).find(' ') == std::string::npos) {
            remark.pass = text.substr(0, colon);
            remark.message = text.substr(colon + 2);
          } else {
            remark.message = text;
          }
          // "file:line:col", as diagnostics print it.
          if (auto file = dyn_cast<FileLineColLoc>(d.getLocation())) {
            remark.location = (file.getFilename().str() + ":" +
                               std::to_string(file.getLine()) + ":" +
                               std::to_string(file.getColumn()));
          } else {
            llvm::raw_string_ostream loc(remark.location);
            d.getLocation().print(loc);
          }
          remarks->push_back(std::move(remark));
          return success();
        }) {}

  /// The errors so far, or `fallback` when none was emitted.
  std::string message(const std::string &fallback) {
    std::string text = trimmed(os_.str());
    return text.empty() ? fallback : text;
  }

private:
  std::string errors_;
  llvm::raw_string_ostream os_;
  SourceMgrDiagnosticHandler printer_;
  ScopedDiagnosticHandler remarkHandler_;
};

/// The format of bytes without a file name: MLIR bytecode starts with
/// "ML\xefR"; text is MLIR when it has a module or a function, else a
/// GraphDef in text form; anything else is taken for ONNX, the common case.
GraphFormat guessFormat(llvm::StringRef bytes) {
  if (bytes.starts_with("ML\xef"
                        "R"))
    return GraphFormat::MLIR;
  llvm::StringRef head = bytes.take_front(4096);
  bool text = std::all_of(head.begin(), head.end(), [](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    return u >= 0x20 || c == '\n' || c == '\r' || c == '\t';
  });
  if (!text)
    return GraphFormat::ONNX;
  if (head.contains("func.func") || head.contains("module") ||
      head.ltrim().starts_with("#") || head.ltrim().starts_with("//"))
    return GraphFormat::MLIR;
  return GraphFormat::GraphDef;
}

} // namespace

Model::Model() = default;
Model::~Model() {
  // The module's ops live in the context: destroy them first.
  module_.reset();
}

/// ONNX's names for the dimensions of the graph's inputs and outputs; empty
/// when the bytes do not parse (the importer reports that) or no dimension
/// has a name.
static std::map<std::string, std::vector<std::string>>
onnxDimNames(llvm::StringRef bytes) {
  std::map<std::string, std::vector<std::string>> names;
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return names;
  bool any = false;
  for (const auto *list : {&model.graph().input(), &model.graph().output()})
    for (const onnx::ValueInfoProto &v : *list) {
      if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
        continue;
      std::vector<std::string> dims;
      for (const auto &d : v.type().tensor_type().shape().dim()) {
        dims.push_back(d.has_dim_param() ? d.dim_param() : "");
        any |= !dims.back().empty();
      }
      names[v.name()] = std::move(dims);
    }
  if (!any)
    names.clear();
  return names;
}

Status Model::read(std::unique_ptr<llvm::MemoryBuffer> buffer,
                   std::optional<GraphFormat> format) {
  context_ = newContext();
  module_ = std::make_unique<Module>();
  llvm::SourceMgr sourceMgr;
  DiagnosticCapture diagnostics(context_.get(), sourceMgr, nullptr);
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  module_->op = readModel(sourceMgr, context_.get(), format);
  if (!module_->op)
    return runtime::invalidArgument(
        diagnostics.message("'" + name_ + "': cannot read the model"));
  const llvm::MemoryBuffer *main =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  if (format.value_or(graphFormatFromFilename(main->getBufferIdentifier())) ==
      GraphFormat::ONNX)
    dimNames_ = onnxDimNames(main->getBuffer());
  return Status::success();
}

StatusOr<std::unique_ptr<Model>> Model::fromFile(const std::string &path,
                                                 const std::string &format) {
  std::optional<GraphFormat> chosen;
  if (!format.empty()) {
    chosen = parseGraphFormat(format);
    if (!chosen)
      return runtime::invalidArgument(path, ": unknown input format '", format,
                                      "' (expected mlir, onnx or graphdef)");
  } else {
    std::string ext = tooling::fileExtension(path);
    if (ext != ".mlir" && ext != ".mlirbc" && ext != ".onnx" && ext != ".pb" &&
        ext != ".pbtxt")
      return runtime::invalidArgument(
          "'", path, "': unknown model file type '", ext,
          "' (expected .mlir, .onnx, .pb or .pbtxt; give format= for "
          "another name)");
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/true);
  if (!file)
    return runtime::notFound("'", path,
                             "': cannot open: ", file.getError().message());
  std::unique_ptr<Model> model(new Model());
  model->name_ = path;
  GOPT_RETURN_IF_ERROR(model->read(std::move(*file), chosen));
  return model;
}

StatusOr<std::unique_ptr<Model>> Model::fromBytes(const std::string &bytes,
                                                  const std::string &format,
                                                  const std::string &name) {
  std::optional<GraphFormat> chosen;
  if (!format.empty()) {
    std::optional<GraphFormat> parsed = parseGraphFormat(format);
    if (!parsed)
      return runtime::invalidArgument(name, ": unknown input format '", format,
                                      "' (expected mlir, onnx or graphdef)");
    chosen = *parsed;
  } else {
    chosen = guessFormat(bytes);
  }
  std::unique_ptr<Model> model(new Model());
  model->name_ = name;
  GOPT_RETURN_IF_ERROR(
      model->read(llvm::MemoryBuffer::getMemBufferCopy(bytes, name), chosen));
  return model;
}

StatusOr<std::unique_ptr<Model>> Model::clone() const {
  // Through bytecode: a context of its own, so the copy outlives this model
  // and the two can be used from different threads.
  std::string bytecode;
  llvm::raw_string_ostream os(bytecode);
  if (failed(writeBytecodeToFile(*module_->op, os)))
    return runtime::internalError("'", name_, "': cannot copy the model");
  os.flush();
  GOPT_ASSIGN_OR_RETURN(std::unique_ptr<Model> copy,
                        fromBytes(bytecode, "mlir", name_));
  copy->remarks_ = remarks_;
  copy->dimNames_ = dimNames_;
  return copy;
}

/// The elements of a comma-separated pass list, at the top level only
/// ("a{x=1,y=2},b" is two).
static std::vector<std::string> splitPassList(llvm::StringRef text) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c == '{' || c == '(')
      ++depth;
    else if (c == '}' || c == ')')
      --depth;
    else if (c == ',' && depth == 0) {
      llvm::StringRef part = text.slice(start, i).trim();
      if (!part.empty())
        parts.push_back(part.str());
      start = i + 1;
    }
  }
  return parts;
}

/// A pass list as a pipeline anchored on the module: each pass nested in
/// func.func where it runs there (gopt's passes, and the op-agnostic
/// cleanups), else on the module; consecutive function passes share one
/// func.func. Fails with the parser's message for an element neither
/// accepts.
static FailureOr<std::string> anchorPassList(llvm::StringRef text,
                                             std::string &error) {
  // Runs of function passes, each then one func.func(...).
  std::vector<std::pair<bool, std::string>> groups;
  for (const std::string &pass : splitPassList(text)) {
    std::string funcError, moduleError;
    llvm::raw_string_ostream funcOs(funcError), moduleOs(moduleError);
    // "func.func(...)" or "any(...)" names its anchor already.
    bool explicitAnchor = pass.find('(') != std::string::npos;
    bool onFunc = !explicitAnchor &&
                  succeeded(parsePassPipeline(
                      "builtin.module(func.func(" + pass + "))", funcOs));
    if (!onFunc &&
        failed(parsePassPipeline("builtin.module(" + pass + ")", moduleOs))) {
      // An unknown name fails both ways alike; a module pass's error says
      // only that it is not a function pass.
      error = llvm::StringRef(moduleError).contains("restricted to")
                  ? funcError
                  : moduleError;
      return failure();
    }
    if (onFunc && !groups.empty() && groups.back().first)
      groups.back().second += "," + pass;
    else
      groups.emplace_back(onFunc, pass);
  }
  std::string anchored = "builtin.module(";
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto &[onFunc, passes] = groups[g];
    anchored +=
        (g ? "," : "") + (onFunc ? "func.func(" + passes + ")" : passes);
  }
  return anchored + ")";
}

Status Model::runPipeline(const std::string &pipeline) {
  registerPassesOnce();
  llvm::SourceMgr sourceMgr;
  std::vector<PassRemark> remarks;
  DiagnosticCapture diagnostics(context_.get(), sourceMgr, &remarks);
  llvm::StringRef text = llvm::StringRef(pipeline).trim();
  std::string anchored = text.str();
  if (!text.starts_with("builtin.module(")) {
    std::string error;
    FailureOr<std::string> list = anchorPassList(text, error);
    if (failed(list) || text.empty())
      return runtime::invalidArgument(
          trimmed(error), error.empty() ? "" : "\n", "invalid pass pipeline '",
          pipeline,
          "' (expected e.g. 'gopt-fold-constants,canonicalize' or "
          "'builtin.module(gopt-optimize{target=cpu})')");
    anchored = *list;
  }
  // Anchored on the module itself, as compileModelFile runs it.
  std::string parseErrors;
  llvm::raw_string_ostream parseOs(parseErrors);
  FailureOr<OpPassManager> parsed = parsePassPipeline(anchored, parseOs);
  if (failed(parsed))
    return runtime::invalidArgument(
        trimmed(parseOs.str()), "\ninvalid pass pipeline '", pipeline,
        "' (expected e.g. 'builtin.module(gopt-optimize{target=cpu})' "
        "or 'gopt-fold-constants,canonicalize')");
  auto pm =
      std::make_unique<PassManager>(context_.get(), parsed->getOpAnchorName());
  static_cast<OpPassManager &>(*pm) = *parsed;
  // On a copy: a pass that fails may leave the graph half-rewritten.
  OwningOpRef<ModuleOp> work = module_->op->clone();
  if (failed(pm->run(*work)))
    return runtime::invalidArgument(diagnostics.message(
        "'" + name_ + "': the pipeline '" + pipeline + "' failed"));
  module_->op = std::move(work);
  remarks_.insert(remarks_.end(), remarks.begin(), remarks.end());
  return Status::success();
}

std::string Model::ir(bool elideLargeConstants) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (elideLargeConstants)
    flags.elideLargeElementsAttrs(16).elideLargeResourceString(64);
  module_->op->print(os, flags);
  return os.str();
}

StatusOr<std::string> Model::toOnnx(int64_t opset) const {
  llvm::SourceMgr sourceMgr;
  DiagnosticCapture diagnostics(context_.get(), sourceMgr, nullptr);
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (failed(exportOnnx(*module_->op, os, opset)))
    return runtime::unimplemented(
        diagnostics.message("'" + name_ + "': cannot export to ONNX"));
  return os.str();
}

StatusOr<plan::Plan> Model::toPlan() const {
  llvm::SourceMgr sourceMgr;
  DiagnosticCapture diagnostics(context_.get(), sourceMgr, nullptr);
  FailureOr<func::FuncOp> func = findGraphFunction(*module_->op);
  if (failed(func))
    return runtime::invalidArgument(
        diagnostics.message("'" + name_ + "': no graph function"));
  FailureOr<plan::Plan> plan = lowerToPlan(*func);
  if (failed(plan))
    return runtime::invalidArgument(
        diagnostics.message("'" + name_ + "': cannot lower to a plan"));
  plan->set_name(name_);
  return std::move(*plan);
}

Status Model::save(const std::string &path) const {
  std::string ext = tooling::fileExtension(path);
  std::string bytes;
  if (ext == ".mlir") {
    bytes = ir();
  } else if (ext == ".mlirbc") {
    llvm::raw_string_ostream os(bytes);
    if (failed(writeBytecodeToFile(*module_->op, os)))
      return runtime::internalError("'", path, "': cannot write bytecode");
    os.flush();
  } else if (ext == ".onnx") {
    GOPT_ASSIGN_OR_RETURN(bytes, toOnnx());
  } else if (ext == ".gplan") {
    GOPT_ASSIGN_OR_RETURN(plan::Plan plan, toPlan());
    if (!plan.SerializeToString(&bytes))
      return runtime::internalError("'", path, "': cannot serialize the plan");
  } else {
    return runtime::invalidArgument("'", path, "': unknown file type '", ext,
                                    "' (expected .mlir, .mlirbc, .onnx or "
                                    ".gplan)");
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return runtime::notFound("'", path, "': cannot open for writing");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    return runtime::dataLoss("'", path, "': write failed");
  return Status::success();
}

/// The registered passes and pipelines. MLIR 19 has no public way to list
/// its pass registry; a pass-name command-line parser has one literal per
/// registered entry, which getRegisteredOptions() then lists by name. Made
/// once: a second parser would register every name again.
static std::vector<const PassRegistryEntry *> registeredEntries() {
  static PassPipelineCLParser *parser =
      new PassPipelineCLParser("", "gopt passes (for availablePasses)");
  (void)parser;
  std::vector<const PassRegistryEntry *> entries;
  for (const auto &option : llvm::cl::getRegisteredOptions()) {
    llvm::StringRef name = option.getKey();
    if (const PassRegistryEntry *pass = PassInfo::lookup(name))
      entries.push_back(pass);
    else if (const PassRegistryEntry *pipeline = PassPipelineInfo::lookup(name))
      entries.push_back(pipeline);
  }
  return entries;
}

/// What printHelpStr writes for `entries`, to stdout (its only sink): run
/// with file descriptor 1 sent to a temporary file.
static std::string
helpText(const std::vector<const PassRegistryEntry *> &entries) {
  std::fflush(stdout);
  llvm::outs().flush();
  FILE *tmp = std::tmpfile();
  if (!tmp)
    return "";
  int saved = dup(STDOUT_FILENO);
  dup2(fileno(tmp), STDOUT_FILENO);
  for (const PassRegistryEntry *entry : entries) {
    entry->printHelpStr(/*indent=*/2, /*descIndent=*/40);
    llvm::outs().flush();
  }
  dup2(saved, STDOUT_FILENO);
  close(saved);
  std::string text;
  std::rewind(tmp);
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), tmp)) > 0)
    text.append(buffer, n);
  std::fclose(tmp);
  return text;
}

std::vector<PassDescription> availablePasses() {
  registerPassesOnce();
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  static std::vector<PassDescription> passes = [] {
    // One entry per line at indent 2 ("  --name  - description"), its
    // options below it, indented further.
    std::vector<PassDescription> result;
    std::istringstream lines(helpText(registeredEntries()));
    std::string line;
    while (std::getline(lines, line)) {
      llvm::StringRef l(line);
      size_t indent = l.find_first_not_of(' ');
      if (indent == llvm::StringRef::npos ||
          !l.substr(indent).starts_with("--"))
        continue;
      llvm::StringRef entry = l.substr(indent + 2);
      auto [name, rest] = entry.split(' ');
      llvm::StringRef description = rest.trim();
      if (description.starts_with("- "))
        description = description.drop_front(2).trim();
      if (indent == 2) {
        PassDescription pass;
        pass.name = name.str();
        pass.description = description.str();
        pass.isPipeline = PassPipelineInfo::lookup(name) != nullptr;
        result.push_back(std::move(pass));
      } else if (!result.empty()) {
        result.back().options.push_back(
            (name + (description.empty() ? "" : " - ") + description).str());
      }
    }
    std::sort(result.begin(), result.end(),
              [](const PassDescription &a, const PassDescription &b) {
                return a.name < b.name;
              });
    return result;
  }();
  return passes;
}

} // namespace gopt
