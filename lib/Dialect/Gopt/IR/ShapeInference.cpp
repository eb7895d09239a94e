//===- ShapeInference.cpp - Shape functions of gopt ops -------------------===//

#include "gopt/Dialect/Gopt/IR/ShapeInference.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace gopt {

static constexpr int64_t kDynamic = ShapedType::kDynamic;

static bool isDynamic(int64_t dim) { return ShapedType::isDynamic(dim); }

/// "[1, ?, 3]" for diagnostics.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t dim) {
    if (isDynamic(dim))
      os << "?";
    else
      os << dim;
  });
  os << "]";
  return text;
}

static std::string formatList(ArrayRef<int64_t> values) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(values, os);
  os << "]";
  return text;
}

FailureOr<Layout> parseDataFormat(StringRef format, const ShapeError &error) {
  if (format == "NHWC")
    return Layout{0, 3, 1, 2};
  if (format == "NCHW")
    return Layout{0, 1, 2, 3};
  return error("expects data_format \"NHWC\" or \"NCHW\", got \"", format,
               "\"");
}

int64_t getChannelAxis(StringRef format, int64_t rank) {
  if (rank <= 2 || format == "NCHW")
    return std::min<int64_t>(1, rank - 1);
  return rank - 1;
}

FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank, StringRef attrName,
                                 const ShapeError &error) {
  if (axis < -rank || axis >= rank)
    return error("expects ", attrName, " in [", -rank, ", ", rank,
                 ") for a rank-", rank, " operand, got ", axis);
  return axis < 0 ? axis + rank : axis;
}

LogicalResult verifyWindowParams(const WindowParams &params,
                                 const ShapeError &error) {
  auto checkPair = [&](ArrayRef<int64_t> values, StringRef name,
                       int64_t minimum) -> LogicalResult {
    if (values.size() != 2)
      return error("expects ", name, " to have 2 values (H, W), got ",
                   values.size());
    if (llvm::any_of(values, [&](int64_t v) { return v < minimum; }))
      return error("expects ", name, " values >= ", minimum, ", got ",
                   formatList(values));
    return success();
  };
  if (failed(checkPair(params.kernel, "kernel", 1)) ||
      failed(checkPair(params.strides, "strides", 1)) ||
      failed(checkPair(params.dilations, "dilations", 1)))
    return failure();
  if (params.padding != "EXPLICIT" && params.padding != "SAME" &&
      params.padding != "VALID")
    return error("expects padding \"EXPLICIT\", \"SAME\" or \"VALID\", got \"",
                 params.padding, "\"");
  if (params.pads.size() != 4)
    return error("expects pads to have 4 values (top, bottom, left, right), "
                 "got ",
                 params.pads.size());
  if (llvm::any_of(params.pads, [](int64_t p) { return p < 0; }))
    return error("expects non-negative pads, got ", formatList(params.pads));
  if (params.padding != "EXPLICIT" &&
      llvm::any_of(params.pads, [](int64_t p) { return p != 0; }))
    return error("expects pads only with padding \"EXPLICIT\", got padding "
                 "\"",
                 params.padding, "\" and pads ", formatList(params.pads));
  return success();
}

std::pair<int64_t, int64_t>
resolvePadding(int64_t inputSize, const WindowParams &params, unsigned i) {
  if (params.padding == "EXPLICIT")
    return {params.pads[2 * i], params.pads[2 * i + 1]};
  if (params.padding == "VALID" || isDynamic(inputSize))
    return {0, 0};
  int64_t stride = params.strides[i];
  int64_t effective = (params.kernel[i] - 1) * params.dilations[i] + 1;
  int64_t out = (inputSize + stride - 1) / stride;
  int64_t total =
      std::max<int64_t>((out - 1) * stride + effective - inputSize, 0);
  return {total / 2, total - total / 2};
}

FailureOr<int64_t> inferWindowOutputSize(int64_t inputSize,
                                         const WindowParams &params, unsigned i,
                                         const ShapeError &error) {
  if (isDynamic(inputSize))
    return kDynamic;
  int64_t stride = params.strides[i];
  int64_t effective = (params.kernel[i] - 1) * params.dilations[i] + 1;
  if (params.padding == "SAME")
    return (inputSize + stride - 1) / stride;
  auto [before, after] = resolvePadding(inputSize, params, i);
  int64_t padded = inputSize + before + after;
  if (padded < effective)
    return error("has a window of ", effective, " (kernel ", params.kernel[i],
                 ", dilation ", params.dilations[i],
                 ") larger than the padded input size ", padded,
                 " in spatial dimension ", i == 0 ? "H" : "W");
  int64_t span = padded - effective;
  int64_t out =
      (params.ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // PyTorch's and ONNX's rule: with ceil_mode the last window must start
  // inside the input or its leading padding.
  if (params.ceilMode && (out - 1) * stride >= inputSize + before)
    --out;
  return out;
}

LogicalResult inferBroadcastShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                                  Shape &result, const ShapeError &error) {
  size_t rank = std::max(lhs.size(), rhs.size());
  result.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l == 1) {
      result[i] = r;
    } else if (r == 1) {
      result[i] = l;
    } else if (isDynamic(l) || isDynamic(r)) {
      // A dynamic dimension against n > 1 must be n at run time.
      result[i] = isDynamic(l) ? r : l;
    } else if (l == r) {
      result[i] = l;
    } else {
      return error("cannot broadcast operand shapes ", formatShape(lhs),
                   " and ", formatShape(rhs), ": dimension ", i,
                   " of the result is ", l, " vs. ", r);
    }
  }
  return success();
}

LogicalResult verifyChannelOperand(ArrayRef<int64_t> operand, int64_t channels,
                                   StringRef operandName,
                                   const ShapeError &error) {
  if (operand.size() != 1)
    return error("expects ", operandName,
                 " to be 1-D with one value per "
                 "channel, got shape ",
                 formatShape(operand));
  if (!isDynamic(operand[0]) && !isDynamic(channels) && operand[0] != channels)
    return error("expects ", operandName, " to have ", channels,
                 " elements (one per channel), got ", operand[0]);
  return success();
}

LogicalResult inferConv2DShape(ArrayRef<int64_t> input,
                               ArrayRef<int64_t> filter,
                               std::optional<ArrayRef<int64_t>> bias,
                               Conv2DParams params, Shape &result,
                               const ShapeError &error) {
  if (input.size() != 4)
    return error("expects a rank-4 input, got shape ", formatShape(input));
  if (filter.size() != 4)
    return error("expects a rank-4 filter, got shape ", formatShape(filter));
  FailureOr<Layout> layout = parseDataFormat(params.dataFormat, error);
  if (failed(layout))
    return failure();
  if (params.filterFormat != "HWIO" && params.filterFormat != "OIHW")
    return error("expects filter_format \"HWIO\" or \"OIHW\", got \"",
                 params.filterFormat, "\"");
  if (params.activation != "none" && params.activation != "relu" &&
      params.activation != "relu6" && params.activation != "sigmoid")
    return error("expects activation \"none\", \"relu\", \"relu6\" or "
                 "\"sigmoid\", got \"",
                 params.activation, "\"");
  if (params.groups < 1)
    return error("expects groups >= 1, got ", params.groups);

  bool hwio = params.filterFormat == "HWIO";
  int64_t kh = filter[hwio ? 0 : 2], kw = filter[hwio ? 1 : 3];
  int64_t filterIn = filter[hwio ? 2 : 1], cout = filter[hwio ? 3 : 0];
  if (isDynamic(kh) || isDynamic(kw))
    return error("expects a filter with static spatial size, got shape ",
                 formatShape(filter));
  params.window.kernel = {kh, kw};
  if (failed(verifyWindowParams(params.window, error)))
    return failure();

  int64_t cin = input[layout->c];
  if (!isDynamic(cin) && cin % params.groups != 0)
    return error("expects input channels (", cin, ") divisible by groups (",
                 params.groups, ")");
  if (!isDynamic(cout) && cout % params.groups != 0)
    return error("expects output channels (", cout, ") divisible by groups (",
                 params.groups, ")");
  if (!isDynamic(cin) && !isDynamic(filterIn) &&
      filterIn * params.groups != cin)
    return error("expects the filter's input channels (", filterIn,
                 ") times groups (", params.groups,
                 ") to equal the input channels (", cin, "); input ",
                 formatShape(input), " (", params.dataFormat, "), filter ",
                 formatShape(filter), " (", params.filterFormat, ")");
  if (bias && failed(verifyChannelOperand(*bias, cout, "bias", error)))
    return failure();

  FailureOr<int64_t> oh =
      inferWindowOutputSize(input[layout->h], params.window, 0, error);
  FailureOr<int64_t> ow =
      inferWindowOutputSize(input[layout->w], params.window, 1, error);
  if (failed(oh) || failed(ow))
    return failure();
  result.assign(4, 0);
  result[layout->n] = input[layout->n];
  result[layout->c] = cout;
  result[layout->h] = *oh;
  result[layout->w] = *ow;
  return success();
}

LogicalResult inferPoolShape(ArrayRef<int64_t> input,
                             const WindowParams &params, StringRef dataFormat,
                             Shape &result, const ShapeError &error) {
  if (input.size() != 4)
    return error("expects a rank-4 input, got shape ", formatShape(input));
  FailureOr<Layout> layout = parseDataFormat(dataFormat, error);
  if (failed(layout) || failed(verifyWindowParams(params, error)))
    return failure();
  FailureOr<int64_t> oh =
      inferWindowOutputSize(input[layout->h], params, 0, error);
  FailureOr<int64_t> ow =
      inferWindowOutputSize(input[layout->w], params, 1, error);
  if (failed(oh) || failed(ow))
    return failure();
  result.assign(input.begin(), input.end());
  result[layout->h] = *oh;
  result[layout->w] = *ow;
  return success();
}

LogicalResult inferMatMulShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                               bool transposeA, bool transposeB, Shape &result,
                               const ShapeError &error) {
  if (a.size() < 2 || b.size() < 2)
    return error("expects operands of rank >= 2, got ", formatShape(a), " and ",
                 formatShape(b));
  int64_t m = a[a.size() - (transposeA ? 1 : 2)];
  int64_t ka = a[a.size() - (transposeA ? 2 : 1)];
  int64_t kb = b[b.size() - (transposeB ? 1 : 2)];
  int64_t n = b[b.size() - (transposeB ? 2 : 1)];
  if (!isDynamic(ka) && !isDynamic(kb) && ka != kb)
    return error("expects matching contraction dimensions, got ", ka, " (a ",
                 formatShape(a), transposeA ? ", transposed" : "", ") and ", kb,
                 " (b ", formatShape(b), transposeB ? ", transposed" : "", ")");
  if (failed(
          inferBroadcastShape(a.drop_back(2), b.drop_back(2), result, error)))
    return failure();
  result.push_back(m);
  result.push_back(n);
  return success();
}

LogicalResult inferReduceShape(ArrayRef<int64_t> input, ArrayRef<int64_t> axes,
                               bool keepDims, Shape &result,
                               const ShapeError &error) {
  int64_t rank = input.size();
  llvm::SmallVector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    FailureOr<int64_t> normalized = normalizeAxis(axis, rank, "axes", error);
    if (failed(normalized))
      return failure();
    if (reduced[*normalized])
      return error("expects distinct axes, got ", formatList(axes));
    reduced[*normalized] = true;
  }
  result.clear();
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      result.push_back(input[i]);
    else if (keepDims)
      result.push_back(1);
  }
  return success();
}

LogicalResult inferReshapeShape(ArrayRef<int64_t> input,
                                ArrayRef<int64_t> shape, Shape &result,
                                const ShapeError &error) {
  int64_t inferred = -1;
  int64_t known = 1;
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (dim == -1) {
      if (inferred >= 0)
        return error("expects at most one -1 in shape, got ",
                     formatList(shape));
      inferred = i;
    } else if (dim < 0) {
      return error("expects shape entries >= -1, got ", formatList(shape));
    } else {
      known *= dim;
    }
  }
  result.assign(shape.begin(), shape.end());
  bool inputStatic = llvm::none_of(input, isDynamic);
  int64_t count = 1;
  for (int64_t dim : input)
    count *= isDynamic(dim) ? 1 : dim;
  if (inferred >= 0) {
    if (!inputStatic) {
      result[inferred] = kDynamic;
    } else {
      if (known == 0 || count % known != 0)
        return error("cannot reshape ", formatShape(input), " (", count,
                     " elements) to ", formatList(shape));
      result[inferred] = count / known;
    }
  } else if (inputStatic && count != known) {
    return error("cannot reshape ", formatShape(input), " (", count,
                 " elements) to ", formatList(shape), " (", known,
                 " elements)");
  }
  return success();
}

LogicalResult inferFlattenShape(ArrayRef<int64_t> input, int64_t axis,
                                Shape &result, const ShapeError &error) {
  int64_t rank = input.size();
  if (axis < -rank || axis > rank)
    return error("expects axis in [", -rank, ", ", rank, "], got ", axis);
  if (axis < 0)
    axis += rank;
  auto product = [](ArrayRef<int64_t> dims) {
    int64_t p = 1;
    for (int64_t d : dims) {
      if (isDynamic(d))
        return kDynamic;
      p *= d;
    }
    return p;
  };
  result = {product(input.take_front(axis)), product(input.drop_front(axis))};
  return success();
}

LogicalResult inferTransposeShape(ArrayRef<int64_t> input,
                                  ArrayRef<int64_t> perm, Shape &result,
                                  const ShapeError &error) {
  int64_t rank = input.size();
  if (static_cast<int64_t>(perm.size()) != rank)
    return error("expects perm to have ", rank,
                 " entries (the operand's rank), got ", formatList(perm));
  llvm::SmallVector<bool> seen(rank, false);
  result.clear();
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return error("expects perm to be a permutation of [0, ", rank, "), got ",
                   formatList(perm));
    seen[p] = true;
    result.push_back(input[p]);
  }
  return success();
}

LogicalResult inferConcatShape(ArrayRef<ArrayRef<int64_t>> inputs, int64_t axis,
                               Shape &result, const ShapeError &error) {
  if (inputs.empty())
    return error("expects at least one operand");
  int64_t rank = inputs.front().size();
  FailureOr<int64_t> normalized = normalizeAxis(axis, rank, "axis", error);
  if (failed(normalized))
    return failure();
  result.assign(inputs.front().begin(), inputs.front().end());
  result[*normalized] = 0;
  for (auto [index, shape] : llvm::enumerate(inputs)) {
    if (static_cast<int64_t>(shape.size()) != rank)
      return error("expects operands of equal rank, operand #", index,
                   " has shape ", formatShape(shape), ", operand #0 ",
                   formatShape(inputs.front()));
    for (int64_t d = 0; d < rank; ++d) {
      if (d == *normalized) {
        result[d] = isDynamic(result[d]) || isDynamic(shape[d])
                        ? kDynamic
                        : result[d] + shape[d];
        continue;
      }
      if (isDynamic(result[d])) {
        result[d] = shape[d];
      } else if (!isDynamic(shape[d]) && shape[d] != result[d]) {
        return error("expects operand dimensions to match except along axis ",
                     *normalized, ", operand #", index, " has shape ",
                     formatShape(shape), ", operand #0 ",
                     formatShape(inputs.front()));
      }
    }
  }
  return success();
}

LogicalResult inferSliceShape(ArrayRef<int64_t> input, ArrayRef<int64_t> starts,
                              ArrayRef<int64_t> ends, ArrayRef<int64_t> steps,
                              Shape &result, const ShapeError &error) {
  size_t rank = input.size();
  if (starts.size() != rank || ends.size() != rank || steps.size() != rank)
    return error("expects starts, ends and steps with ", rank,
                 " entries each (the operand's rank), got ", starts.size(),
                 ", ", ends.size(), " and ", steps.size());
  result.clear();
  for (size_t i = 0; i < rank; ++i) {
    if (starts[i] < 0)
      return error("expects non-negative starts, got ", formatList(starts));
    if (steps[i] <= 0)
      return error("expects positive steps, got ", formatList(steps));
    if (ends[i] < starts[i])
      return error("expects ends >= starts, got starts ", formatList(starts),
                   " and ends ", formatList(ends));
    if (isDynamic(input[i])) {
      result.push_back(kDynamic);
      continue;
    }
    int64_t end = std::min(ends[i], input[i]);
    int64_t start = std::min(starts[i], input[i]);
    result.push_back(end > start ? (end - start + steps[i] - 1) / steps[i] : 0);
  }
  return success();
}

LogicalResult inferPadShape(ArrayRef<int64_t> input, ArrayRef<int64_t> pads,
                            StringRef mode, Shape &result,
                            const ShapeError &error) {
  if (pads.size() != 2 * input.size())
    return error("expects pads to have ", 2 * input.size(),
                 " entries (before and after for each of ", input.size(),
                 " dimensions), got ", pads.size());
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return error("expects non-negative pads, got ", formatList(pads));
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return error("expects mode \"constant\", \"reflect\" or \"edge\", got \"",
                 mode, "\"");
  result.clear();
  for (auto [i, dim] : llvm::enumerate(input)) {
    if (mode == "reflect" && !isDynamic(dim) &&
        (pads[2 * i] >= dim || pads[2 * i + 1] >= dim))
      return error("expects reflect padding smaller than the dimension (", dim,
                   ") in dimension ", i, ", got ", pads[2 * i], " and ",
                   pads[2 * i + 1]);
    result.push_back(isDynamic(dim) ? kDynamic
                                    : dim + pads[2 * i] + pads[2 * i + 1]);
  }
  return success();
}

LogicalResult inferDequantizeShape(ArrayRef<int64_t> values,
                                   ArrayRef<int64_t> scales, int64_t axis,
                                   Shape &result, const ShapeError &error) {
  int64_t rank = values.size();
  if (rank == 0)
    return error("expects values of rank >= 1, got a rank-0 tensor");
  FailureOr<int64_t> normalized = normalizeAxis(axis, rank, "axis", error);
  if (failed(normalized))
    return failure();
  if (scales.size() != 1)
    return error("expects rank-1 scales (one per channel along axis ",
                 *normalized, ", or one for the whole tensor), got rank ",
                 scales.size());
  int64_t channels = values[*normalized];
  int64_t count = scales[0];
  if (!isDynamic(count) && count != 1 && !isDynamic(channels) &&
      count != channels)
    return error("expects ", channels, " scales (dimension ", *normalized,
                 " of values ", formatShape(values),
                 ") or 1 (per-tensor), got ", count);
  result.assign(values.begin(), values.end());
  return success();
}

} // namespace gopt
