//===- HostTensor.h - Constant tensors computed at compile time -*- C++ -*-===//
//
// Passes that compute new constants (constant folding, batch-norm folding,
// filter transposes) read a constant into a HostTensor, compute on the host
// and write the result back as a DenseElementsAttr. Floats are held as
// double: one rounding to the element type at the end makes +, -, *, / and
// sqrt exactly the f32 results, and keeps folded BN weights accurate.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_LIB_TRANSFORMS_HOSTTENSOR_H
#define GOPT_LIB_TRANSFORMS_HOSTTENSOR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <vector>

namespace gopt {

struct HostTensor {
  llvm::SmallVector<int64_t, 4> shape;
  mlir::Type elementType;
  /// Element values, row-major. Integer (and i1) elements are held as exact
  /// int64 in `ints`; float elements as double in `floats`.
  std::vector<double> floats;
  std::vector<int64_t> ints;

  bool isFloat() const { return mlir::isa<mlir::FloatType>(elementType); }
  int64_t numElements() const;
  double getDouble(int64_t i) const {
    return isFloat() ? floats[i] : static_cast<double>(ints[i]);
  }
  /// An empty tensor of `shape` and `elementType`.
  static HostTensor zeros(llvm::ArrayRef<int64_t> shape, mlir::Type type);
};

/// The runtime DType of a float8 or 4-bit element type (as an int, to keep
/// the runtime's header out of this one); 0 for the others.
int lowPrecisionDTypeOf(mlir::Type type);

/// `value` converted to the float8 or 4-bit `type` as gopt.cast does (round
/// to nearest even; `saturate` for float8) and back to a double.
double roundToLowPrecision(mlir::Type type, double value, bool saturate);

/// Row-major strides of `shape`.
llvm::SmallVector<int64_t, 4> stridesOf(llvm::ArrayRef<int64_t> shape);

/// The values of a dense (or dense_resource f32/i32/i64/i8) elements attribute;
/// nullopt for what cannot be read.
std::optional<HostTensor> readElements(mlir::ElementsAttr attr);

/// The values of `value` when a gopt.constant defines it.
std::optional<HostTensor> readConstant(mlir::Value value);

/// A DenseElementsAttr of `tensor`, rounded to its element type (integers
/// wrap to their width; i1 is x != 0).
mlir::DenseElementsAttr writeElements(const HostTensor &tensor);

/// Non-splat f32/i32/i64/i8 constants with more elements than this are written
/// as `dense_resource` blobs (as the importers write initializers), so the
/// printed IR of an optimized large model stays readable; smaller ones stay
/// inline where tests and readers see them.
constexpr int64_t kMaxInlineElements = 16;

/// The attribute a new gopt.constant holding `tensor` gets: writeElements(),
/// or a `dense_resource` blob for large tensors (see kMaxInlineElements)
/// whose element type readElements() reads back.
mlir::ElementsAttr writeConstant(const HostTensor &tensor);

/// Result dim i = operand dim perm[i].
HostTensor transposeTensor(const HostTensor &tensor,
                           llvm::ArrayRef<int64_t> perm);

/// The inverse permutation.
llvm::SmallVector<int64_t, 4> invertPermutation(llvm::ArrayRef<int64_t> perm);

} // namespace gopt

#endif // GOPT_LIB_TRANSFORMS_HOSTTENSOR_H
