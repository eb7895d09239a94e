//===- NpyFileName.h - A tensor's .npy file name ----------------*- C++ -*-===//
//
// Tensor names may contain '/' (ONNX node paths, "grad/conv1.weight"), which
// a file name cannot: --save-params and --output-dir spell it "__".
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_TOOLING_NPYFILENAME_H
#define GOPT_TOOLING_NPYFILENAME_H

#include <string>

namespace gopt::tooling {

inline std::string npyFileName(const std::string &tensorName) {
  std::string file;
  for (char c : tensorName)
    file += c == '/' ? std::string("__") : std::string(1, c);
  return file + ".npy";
}

} // namespace gopt::tooling

#endif // GOPT_TOOLING_NPYFILENAME_H
