//===- PassOptions.cpp - Parsing the passes' enum options -----------------===//
//
// llvm::cl's parser for an enum option answers a misspelled value with
// "Cannot find option named 'x'!" and prints it straight to stderr. gopt's
// enum options list their values instead, and a pass that parses its own
// options (initializeEnumOptions) hands the message to MLIR's error handler,
// so a bad value is one diagnostic when the pipeline is parsed.
//
//===----------------------------------------------------------------------===//

#include "gopt/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
/// Where the enum parsers report while initializeEnumOptions runs; null:
/// llvm::cl's own report to stderr.
thread_local llvm::raw_ostream *enumErrorStream = nullptr;

/// "unknown target 'tpu' (expected cpu or gpu)".
std::string unknownValue(const llvm::cl::Option &option, StringRef value,
                         const llvm::cl::generic_parser_base &parser) {
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "unknown " << option.ArgStr << " '" << value << "' (expected ";
  for (unsigned i = 0, e = parser.getNumOptions(); i < e; ++i)
    os << (i == 0 ? "" : i + 1 == e ? " or " : ", ") << parser.getOption(i);
  os << ")";
  return message;
}

/// llvm::cl::parser<T>::parse, with unknownValue's message.
template <typename T, typename Values>
bool parseEnum(const llvm::cl::generic_parser_base &parser,
               const Values &values, llvm::cl::Option &option, StringRef name,
               T &value) {
  for (const auto &info : values)
    if (info.Name == name) {
      value = info.V.getValue();
      return false;
    }
  std::string message = unknownValue(option, name, parser);
  if (enumErrorStream) {
    *enumErrorStream << message;
    return true;
  }
  return option.error(message);
}
} // namespace

#define GOPT_DEFINE_ENUM_OPTION_PARSER(T)                                      \
  template <>                                                                  \
  bool llvm::cl::parser<T>::parse(Option &option, StringRef argName,           \
                                  StringRef arg, T &value) {                   \
    return parseEnum(*this, Values, option, Owner.hasArgStr() ? arg : argName, \
                     value);                                                   \
  }
GOPT_DEFINE_ENUM_OPTION_PARSER(gopt::TargetDevice)
GOPT_DEFINE_ENUM_OPTION_PARSER(gopt::DataFormat)
GOPT_DEFINE_ENUM_OPTION_PARSER(gopt::Precision)
GOPT_DEFINE_ENUM_OPTION_PARSER(gopt::WeightGranularity)
GOPT_DEFINE_ENUM_OPTION_PARSER(gopt::QuantizeMode)
GOPT_DEFINE_ENUM_OPTION_PARSER(gopt::LossKind)
GOPT_DEFINE_ENUM_OPTION_PARSER(gopt::LabelType)
GOPT_DEFINE_ENUM_OPTION_PARSER(gopt::OptimizerKind)
#undef GOPT_DEFINE_ENUM_OPTION_PARSER

StringRef gopt::stringifyTargetDevice(TargetDevice device) {
  return device == TargetDevice::Cpu ? "cpu" : "gpu";
}

namespace {
/// Sends the enum parsers' reports to `os` while it lives.
class EnumErrorScope {
public:
  explicit EnumErrorScope(llvm::raw_ostream &os) : outer(enumErrorStream) {
    enumErrorStream = &os;
  }
  ~EnumErrorScope() { enumErrorStream = outer; }

private:
  llvm::raw_ostream *outer;
};

/// Runs `parse` (which reports MLIR's own errors, e.g. an unknown option
/// name, to its stream) and sends one message to `errorHandler`: an enum
/// parser's, prefixed with the pass or pipeline `name`, or MLIR's.
LogicalResult
parseReporting(StringRef name,
               function_ref<LogicalResult(llvm::raw_ostream &)> parse,
               function_ref<LogicalResult(const Twine &)> errorHandler) {
  std::string enumError, mlirError;
  llvm::raw_string_ostream enumOs(enumError), mlirOs(mlirError);
  EnumErrorScope scope(enumOs);
  if (succeeded(parse(mlirOs)))
    return success();
  if (!enumError.empty())
    return errorHandler(name + ": " + enumError);
  return errorHandler(StringRef(mlirError).rtrim());
}
} // namespace

LogicalResult gopt::initializeEnumOptions(
    Pass &pass, StringRef options,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  return parseReporting(
      pass.getArgument(),
      [&](llvm::raw_ostream &os) {
        return pass.Pass::initializeOptions(options, [&](const Twine &msg) {
          os << msg;
          return failure();
        });
      },
      errorHandler);
}

LogicalResult gopt::parseEnumOptions(
    mlir::detail::PassOptions &options, StringRef text, StringRef name,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  return parseReporting(
      name,
      [&](llvm::raw_ostream &os) { return options.parseFromString(text, os); },
      errorHandler);
}
