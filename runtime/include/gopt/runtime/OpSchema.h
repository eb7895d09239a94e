//===- OpSchema.h - What the runtime knows about each op kind ---*- C++ -*-===//
//
// One entry per runtime op of the gopt ODS: operand/result counts, attribute
// names, types, defaults and allowed values, and the shape function the
// session runs to resolve dynamic dimensions. The table is generated from the
// .td files at build time (tools/gen-op-tables), so it cannot drift from the
// compiler's definition of an op.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_OPSCHEMA_H
#define GOPT_RUNTIME_OPSCHEMA_H

#include "gopt/Shape/DynamicOps.h"
#include "gopt/Shape/ShapeFunctions.h"
#include "gopt/runtime/Status.h"
#include "gopt/runtime/Tensor.h"
#include "gopt/runtime/plan.pb.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace gopt::runtime {

enum class AttrType { kInt, kFloat, kString, kBool, kInts, kFloats };
const char *attrTypeName(AttrType type);

struct AttrSpec {
  const char *name;
  AttrType type;
  bool required;
  // For string attributes: the accepted values (empty: any).
  std::vector<std::string> allowed = {};
  // ODS's default, used when the attribute is absent; none for required
  // attributes and for optional ones whose absence has its own meaning.
  std::optional<plan::AttrValue> defaultValue = std::nullopt;
};

struct OpSchema;

// Typed read access to an op's attributes; validation already checked types.
// `getX(name)` gives ODS's default when the attribute is absent (a required
// attribute is never absent; an optional one without default reads as zero
// or empty; one it does not declare reads as the default all declaring ops
// agree on). `getWindowInts` reads a 2-D window's "strides", "dilations" or
// "pads", absent ones as shape::absentWindowAttr says (1s, 1s, 0s).
// `getX(name, absent)` gives `absent` instead, for an attribute no ODS
// declares.
class OpAttrs {
public:
  explicit OpAttrs(const plan::Op &op) : op_(&op) {}
  bool has(const std::string &name) const;
  int64_t getInt(const std::string &name) const;
  int64_t getInt(const std::string &name, int64_t absent) const;
  double getFloat(const std::string &name) const;
  double getFloat(const std::string &name, double absent) const;
  std::string getString(const std::string &name) const;
  std::string getString(const std::string &name,
                        const std::string &absent) const;
  bool getBool(const std::string &name) const;
  bool getBool(const std::string &name, bool absent) const;
  std::vector<int64_t> getInts(const std::string &name) const;
  std::vector<int64_t> getInts(const std::string &name,
                               const std::vector<int64_t> &absent) const;
  std::vector<double> getFloats(const std::string &name) const;
  std::vector<int64_t> getWindowInts(const std::string &name) const;

private:
  // The value of `name`, or its ODS default, or nullptr.
  const plan::AttrValue *find(const std::string &name) const;
  static const plan::AttrValue *uniformDefault(const std::string &name);

  const plan::Op *op_;
  mutable const OpSchema *schema_ = nullptr;
};

// Computes result shapes from concrete operand shapes; checks operand shapes
// and attribute values. `outShapes` has one entry per result of the op.
using ShapeFn = Status (*)(const OpAttrs &attrs,
                           const std::vector<Shape> &inShapes,
                           const std::vector<DType> &inTypes,
                           std::vector<Shape> &outShapes);

// An op whose result shapes depend on operand values (dynamic_reshape's
// target shape): `hostValues` has one entry per operand, the operand's
// elements as int64 for the operands the op lists in hostValueOperands
// (computed on the host by the session), nullptr for the others.
using ValueShapeFn =
    Status (*)(const OpAttrs &attrs, const std::vector<Shape> &inShapes,
               const std::vector<DType> &inTypes,
               const std::vector<const std::vector<int64_t> *> &hostValues,
               std::vector<Shape> &outShapes);

// An op whose result shapes only its operands' data decide, with no bound
// (image_decoder: the size in an image's header; ODS
// resultShapesFromOperandData): the exact result shapes from the operands'
// values, read on the host where the op runs, before its results are
// allocated.
using DataShapeFn = Status (*)(const OpAttrs &attrs,
                               const std::vector<Tensor> &inputs,
                               std::vector<Shape> &outShapes);

// Floating-point operations of one run of the op (a multiply-add counts 2)
// at resolved operand and result shapes: profiles and roofline reports.
using FlopFn = double (*)(const OpAttrs &attrs,
                          const std::vector<Shape> &inShapes,
                          const std::vector<Shape> &outShapes);

enum class ResultDType {
  kSameAsFirstInput,  // every result has operand 0's element type
  kSameAsSecondInput, // select: operand 1's (on_true's) element type
  kAny,               // cast: the result type is the target
  kI64,               // shape
  kF32,               // dequantize
  kI8,                // quantize
  kBool,              // all_finite
};

// The element type every result of an op with `resultDType` has, given its
// operands' types; DType::kInvalid for kAny (the plan says) or when the
// operand it copies is missing.
DType expectedResultDType(ResultDType resultDType,
                          const std::vector<DType> &inTypes);

struct OpSchema {
  const char *kind;
  int minInputs;
  int maxInputs; // -1: unbounded
  int minResults;
  int maxResults; // -1: unbounded
  std::vector<AttrSpec> attrs;
  ShapeFn inferShapes;
  ResultDType resultDType = ResultDType::kSameAsFirstInput;
  // Ops whose results differ in element type (top_k: values, i64 indices):
  // one entry per result, which then overrides resultDType.
  std::vector<ResultDType> resultDTypes = {};
  // Ops whose result shapes depend on operand values: those operands, which
  // the session computes on the host while it resolves shapes, and the shape
  // function that reads them (inferShapes is then null).
  std::vector<int> hostValueOperands = {};
  ValueShapeFn inferShapesFromValues = nullptr;
  // The results depend only on the operands' shapes (shape): the host
  // computes them without the operands' data.
  bool readsOperandShapesOnly = false;
  // Some result dimensions depend on the operands' data (non_zero):
  // inferShapes gives an upper bound, the kernel reports the actual shapes
  // (Kernel::actualResultShapes), and the session runs the op on the host
  // between the pieces of the plan before and after it.
  bool dataDependentResultShapes = false;
  // With dataDependentResultShapes, for results no shape function can bound:
  // the exact shapes from the operands' data (inferShapes is then null).
  DataShapeFn inferShapesFromData = nullptr;
  // Control flow (if, loop): the op's regions, each a subplan of the plan
  // (plan::Op.regions); the session resolves the result shapes by resolving
  // the subplans, so inferShapes is null.
  int numRegions = 0;
  // A dynamic op (Gopt_DynamicOp in ODS) runs as op `staticKind`: the
  // session reads operand hostValueOperands[i] as attribute
  // hostValueAttrs[i], lets valueAttrAdapter (when set) turn them into the
  // static op's attributes, and then uses the static op's shape function
  // and kernel (inferShapes is null).
  const char *staticKind = nullptr;
  std::vector<const char *> hostValueAttrs = {};
  shape::ValueAttrAdapter valueAttrAdapter = nullptr;
  // The op's arithmetic (ODS flopFunction); null for the memory-bound ops.
  FlopFn countFlops = nullptr;

  ResultDType resultDTypeOf(size_t result) const {
    return result < resultDTypes.size() ? resultDTypes[result] : resultDType;
  }
};

// nullptr when `kind` is not an op the runtime knows.
const OpSchema *findOpSchema(const std::string &kind);
const std::vector<OpSchema> &allOpSchemas();

// Checks counts and attribute presence/types/values of `op` against its
// schema; the message names the op.
Status checkOpAgainstSchema(const plan::Op &op, const OpSchema &schema);

// Window arithmetic shared by shape functions and kernels
// (docs/op-semantics.md): resolves SAME/VALID/EXPLICIT into explicit pads
// and the output size of one spatial dimension. An adapter over
// gopt/Shape/ShapeFunctions.h, which the dialect runs too.
using shape::WindowDim;
StatusOr<WindowDim> computeWindowDim(int64_t inSize, int64_t kernel,
                                     int64_t stride, int64_t dilation,
                                     const std::string &padding,
                                     int64_t explicitBefore,
                                     int64_t explicitAfter, bool ceilMode);

// The count avg_pool divides the sum of the window starting at (h0, w0)
// (kh x kw, over an h x w input) by, and avg_pool_grad divides its dy by:
// the window's elements inside the input, or with count_include_pad the
// window clipped to the padded input (padBottom, padRight after it), never
// the extra area ceil_mode adds beyond the padding. 0 for a window with
// nothing to average.
inline int64_t avgPoolCount(int64_t h0, int64_t w0, int64_t kh, int64_t kw,
                            int64_t h, int64_t w, int64_t padBottom,
                            int64_t padRight, bool includePad) {
  auto extent = [](int64_t begin, int64_t end) {
    return end > begin ? end - begin : 0;
  };
  if (includePad)
    return extent(h0, std::min(h0 + kh, h + padBottom)) *
           extent(w0, std::min(w0 + kw, w + padRight));
  return extent(std::max<int64_t>(h0, 0), std::min(h0 + kh, h)) *
         extent(std::max<int64_t>(w0, 0), std::min(w0 + kw, w));
}

// Channel axis per op-semantics: rank-4 NHWC -> 3, NCHW -> 1; otherwise
// NHWC -> last axis, NCHW -> 1.
inline int64_t channelAxis(const std::string &dataFormat, int64_t rank) {
  return shape::channelAxis(dataFormat, rank);
}

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_OPSCHEMA_H
