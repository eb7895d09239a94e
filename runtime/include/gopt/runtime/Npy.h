//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
#ifndef GOPT_RUNTIME_NPY_H
#define GOPT_RUNTIME_NPY_H

#include "gopt/runtime/Status.h"
#include "gopt/runtime/Tensor.h"

#include <string>

namespace gopt::runtime {

// Reads a C-order .npy (format 1.0-3.0) of f32, f16, i64, i32, i8, u8 or
// bool, little endian. Errors name the file.
StatusOr<Tensor> readNpy(const std::string &path);
StatusOr<Tensor> parseNpy(const std::string &bytes,
                          const std::string &origin = "<bytes>");
Status writeNpy(const std::string &path, const Tensor &tensor);
// bf16 has no numpy dtype: it is written as f32.
std::string serializeNpy(const Tensor &tensor);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_NPY_H
