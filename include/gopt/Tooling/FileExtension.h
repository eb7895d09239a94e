//===- FileExtension.h - A model file's type from its name ------*- C++ -*-===//
//
// gopt reads graph and plan files by extension (.onnx, .pb, .mlir, .gplan,
// ...); every reader asks this one function. Header-only, so the compiler's
// Driver and the runtime-only tooling share it without a link dependency.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_TOOLING_FILEEXTENSION_H
#define GOPT_TOOLING_FILEEXTENSION_H

#include <algorithm>
#include <cctype>
#include <string>

namespace gopt::tooling {

/// The extension of `path`'s last component with its dot, lower-cased
/// (".onnx"); "" when it has none.
inline std::string fileExtension(const std::string &path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return "";
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext;
}

} // namespace gopt::tooling

#endif // GOPT_TOOLING_FILEEXTENSION_H
