//===- ShapeFunctions.cpp - Shape functions of gopt ops -------------------===//
//
// Follows docs/op-semantics.md. No LLVM or MLIR: the runtime-only build
// compiles this file too.
//
//===----------------------------------------------------------------------===//

#include "gopt/Shape/ShapeFunctions.h"
#include "ConvOperands.h"
#include "Failure.h"

#include <algorithm>
#include <sstream>

namespace gopt::shape {

using detail::fail;

namespace {

template <typename Fn> std::string formatWith(DimsRef values, Fn &&each) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      os << ", ";
    each(os, values[i]);
  }
  os << "]";
  return os.str();
}

bool anyOf(DimsRef values, bool (*pred)(int64_t)) {
  return std::any_of(values.begin(), values.end(), pred);
}

} // namespace

std::string formatShape(DimsRef shape) {
  return formatWith(shape, [](std::ostream &os, int64_t dim) {
    if (isDynamic(dim))
      os << "?";
    else
      os << dim;
  });
}

std::string formatList(DimsRef values) {
  return formatWith(values, [](std::ostream &os, int64_t v) { os << v; });
}

Result parseDataFormat(std::string_view format, Layout &layout) {
  if (format == "NHWC") {
    layout = Layout{0, 3, 1, 2};
    return Result::success();
  }
  if (format == "NCHW") {
    layout = Layout{0, 1, 2, 3};
    return Result::success();
  }
  return fail("expects data_format \"NHWC\" or \"NCHW\", got \"", format, "\"");
}

int64_t channelAxis(std::string_view format, int64_t rank) {
  if (rank <= 2 || format == "NCHW")
    return std::min<int64_t>(1, rank - 1);
  return rank - 1;
}

Result normalizeAxis(int64_t axis, int64_t rank, std::string_view attrName,
                     int64_t &normalized) {
  if (axis < -rank || axis >= rank)
    return fail("expects ", attrName, " in [", -rank, ", ", rank,
                ") for a rank-", rank, " operand, got ", axis);
  normalized = axis < 0 ? axis + rank : axis;
  return Result::success();
}

//===----------------------------------------------------------------------===//
// Windows
//===----------------------------------------------------------------------===//

Result verifyWindowParams(const WindowParams &params) {
  auto checkPair = [&](DimsRef values, const char *name,
                       int64_t minimum) -> Result {
    if (values.size() != 2)
      return fail("expects ", name, " to have 2 values (H, W), got ",
                  values.size());
    for (int64_t v : values)
      if (v < minimum)
        return fail("expects ", name, " values >= ", minimum, ", got ",
                    formatList(values));
    return Result::success();
  };
  for (Result r : {checkPair(params.kernel, "kernel", 1),
                   checkPair(params.strides, "strides", 1),
                   checkPair(params.dilations, "dilations", 1)})
    if (r.failed())
      return r;
  if (params.padding != "EXPLICIT" && params.padding != "SAME" &&
      params.padding != "VALID")
    return fail("expects padding \"EXPLICIT\", \"SAME\" or \"VALID\", got \"",
                params.padding, "\"");
  if (params.pads.size() != 4)
    return fail("expects pads to have 4 values (top, bottom, left, right), "
                "got ",
                params.pads.size());
  if (anyOf(params.pads, [](int64_t p) { return p < 0; }))
    return fail("expects non-negative pads, got ", formatList(params.pads));
  if (params.padding != "EXPLICIT" &&
      anyOf(params.pads, [](int64_t p) { return p != 0; }))
    return fail("expects pads only with padding \"EXPLICIT\", got padding "
                "\"",
                params.padding, "\" and pads ", formatList(params.pads));
  return Result::success();
}

Dims absentWindowAttr(std::string_view name) {
  if (name == "strides" || name == "dilations")
    return {1, 1};
  if (name == "pads")
    return {0, 0, 0, 0};
  return {};
}

Result computeWindowDim(int64_t in, int64_t kernel, int64_t stride,
                        int64_t dilation, std::string_view padding,
                        int64_t before, int64_t after, bool ceilMode,
                        WindowDim &w) {
  if (kernel < 1 || stride < 1 || dilation < 1)
    return fail("expects window kernel (", kernel, "), stride (", stride,
                ") and dilation (", dilation, ") >= 1");
  if (padding != "EXPLICIT" && padding != "SAME" && padding != "VALID")
    return fail("expects padding \"EXPLICIT\", \"SAME\" or \"VALID\", got \"",
                padding, "\"");
  w = WindowDim();
  if (padding == "EXPLICIT") {
    if (before < 0 || after < 0)
      return fail("expects non-negative pads, got ", before, " and ", after);
    w.padBefore = before;
    w.padAfter = after;
  }
  if (isDynamic(in)) {
    w.outSize = kDynamic;
    return Result::success();
  }
  int64_t effective = (kernel - 1) * dilation + 1;
  if (padding == "SAME") {
    w.outSize = (in + stride - 1) / stride;
    int64_t total =
        std::max<int64_t>((w.outSize - 1) * stride + effective - in, 0);
    w.padBefore = total / 2;
    w.padAfter = total - w.padBefore;
    return Result::success();
  }
  int64_t padded = in + w.padBefore + w.padAfter;
  if (padded < effective)
    return fail("has a window of ", effective, " (kernel ", kernel,
                ", dilation ", dilation, ") larger than the padded input size ",
                padded);
  int64_t span = padded - effective;
  w.outSize = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // PyTorch's and ONNX's rule: with ceil_mode the last window must start
  // inside the input or its leading padding.
  if (ceilMode && (w.outSize - 1) * stride >= in + w.padBefore)
    --w.outSize;
  return Result::success();
}

namespace {

Result windowDimOf(int64_t inputSize, const WindowParams &params, unsigned i,
                   WindowDim &dim) {
  Result r =
      computeWindowDim(inputSize, params.kernel[i], params.strides[i],
                       params.dilations[i], params.padding, params.pads[2 * i],
                       params.pads[2 * i + 1], params.ceilMode, dim);
  if (r.failed())
    return Result::failure(r.message() + " in spatial dimension " +
                           (i == 0 ? "H" : "W"));
  return r;
}

} // namespace

std::pair<int64_t, int64_t>
resolvePadding(int64_t inputSize, const WindowParams &params, unsigned i) {
  WindowDim dim;
  // On failure (a window larger than the input) the pads are still set.
  (void)windowDimOf(inputSize, params, i, dim);
  return {dim.padBefore, dim.padAfter};
}

Result inferWindowOutputSize(int64_t inputSize, const WindowParams &params,
                             unsigned i, int64_t &outputSize) {
  WindowDim dim;
  Result r = windowDimOf(inputSize, params, i, dim);
  outputSize = dim.outSize;
  return r;
}

//===----------------------------------------------------------------------===//
// Elementwise, NN and linear algebra
//===----------------------------------------------------------------------===//

Result inferBroadcastShape(DimsRef lhs, DimsRef rhs, Dims &result) {
  size_t rank = std::max(lhs.size(), rhs.size());
  Dims out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l == 1) {
      out[i] = r;
    } else if (r == 1) {
      out[i] = l;
    } else if (isDynamic(l) || isDynamic(r)) {
      // A dynamic dimension against n > 1 must be n at run time.
      out[i] = isDynamic(l) ? r : l;
    } else if (l == r) {
      out[i] = l;
    } else {
      return fail("cannot broadcast operand shapes ", formatShape(lhs), " and ",
                  formatShape(rhs), ": dimension ", i, " of the result is ", l,
                  " vs. ", r);
    }
  }
  result = std::move(out);
  return Result::success();
}

Result verifyChannelOperand(DimsRef operand, int64_t channels,
                            std::string_view operandName) {
  if (operand.size() != 1)
    return fail("expects ", operandName,
                " to be 1-D with one value per "
                "channel, got shape ",
                formatShape(operand));
  if (!isDynamic(operand[0]) && !isDynamic(channels) && operand[0] != channels)
    return fail("expects ", operandName, " to have ", channels,
                " elements (one per channel), got ", operand[0]);
  return Result::success();
}

Result inferChannelCount(DimsRef x, std::string_view dataFormat,
                         int64_t &channels) {
  if (x.size() < 2)
    return fail("expects an input of rank >= 2, got rank ", x.size());
  Layout layout;
  if (x.size() == 4)
    if (Result r = parseDataFormat(dataFormat, layout); r.failed())
      return r;
  channels = x[channelAxis(dataFormat, x.size())];
  return Result::success();
}

Result inferBiasAddShape(DimsRef x, DimsRef bias, std::string_view dataFormat,
                         Dims &result) {
  int64_t channels;
  if (Result r = inferChannelCount(x, dataFormat, channels); r.failed())
    return r;
  if (Result r = verifyChannelOperand(bias, channels, "bias"); r.failed())
    return r;
  result.assign(x.begin(), x.end());
  return Result::success();
}

Result inferBatchNormShape(DimsRef x, const DimsRef (&perChannel)[4],
                           std::string_view dataFormat, float epsilon,
                           float momentum, int64_t &channels) {
  if (Result r = inferChannelCount(x, dataFormat, channels); r.failed())
    return r;
  static const char *const names[] = {"scale", "offset", "mean", "variance"};
  for (int i = 0; i < 4; ++i)
    if (Result r = verifyChannelOperand(perChannel[i], channels, names[i]);
        r.failed())
      return r;
  if (!(epsilon >= 0.0f))
    return fail("expects epsilon >= 0, got ", epsilon);
  if (!(momentum >= 0.0f && momentum <= 1.0f))
    return fail("expects momentum in [0, 1], got ", momentum);
  return Result::success();
}

Result inferGlobalPoolShape(DimsRef x, std::string_view dataFormat,
                            Dims &result) {
  if (x.size() != 4)
    return fail("expects a rank-4 input, got rank ", x.size());
  Layout layout;
  if (Result r = parseDataFormat(dataFormat, layout); r.failed())
    return r;
  result.assign(x.begin(), x.end());
  result[layout.h] = 1;
  result[layout.w] = 1;
  return Result::success();
}

Result detail::verifyConvOperands(DimsRef input, DimsRef filter,
                                  std::string_view dataFormat,
                                  std::string_view filterFormat,
                                  Layout &layout) {
  if (input.size() != 4)
    return fail("expects a rank-4 input, got shape ", formatShape(input));
  if (filter.size() != 4)
    return fail("expects a rank-4 filter, got shape ", formatShape(filter));
  if (Result r = parseDataFormat(dataFormat, layout); r.failed())
    return r;
  if (filterFormat != "HWIO" && filterFormat != "OIHW")
    return fail("expects filter_format \"HWIO\" or \"OIHW\", got \"",
                filterFormat, "\"");
  return Result::success();
}

Result inferConv2DShape(DimsRef input, DimsRef filter, const DimsRef *bias,
                        Conv2DParams params, Dims &result) {
  Layout layout;
  if (Result r = detail::verifyConvOperands(input, filter, params.dataFormat,
                                            params.filterFormat, layout);
      r.failed())
    return r;
  if (params.activation != "none" && params.activation != "relu" &&
      params.activation != "relu6" && params.activation != "sigmoid")
    return fail("expects activation \"none\", \"relu\", \"relu6\" or "
                "\"sigmoid\", got \"",
                params.activation, "\"");
  if (params.groups < 1)
    return fail("expects groups >= 1, got ", params.groups);

  bool hwio = params.filterFormat == "HWIO";
  int64_t kh = filter[hwio ? 0 : 2], kw = filter[hwio ? 1 : 3];
  int64_t filterIn = filter[hwio ? 2 : 1], cout = filter[hwio ? 3 : 0];
  if (isDynamic(kh) || isDynamic(kw))
    return fail("expects a filter with static spatial size, got shape ",
                formatShape(filter));
  params.window.kernel = {kh, kw};
  if (Result r = verifyWindowParams(params.window); r.failed())
    return r;

  int64_t cin = input[layout.c];
  if (!isDynamic(cin) && cin % params.groups != 0)
    return fail("expects input channels (", cin, ") divisible by groups (",
                params.groups, ")");
  if (!isDynamic(cout) && cout % params.groups != 0)
    return fail("expects output channels (", cout, ") divisible by groups (",
                params.groups, ")");
  if (!isDynamic(cin) && !isDynamic(filterIn) &&
      filterIn * params.groups != cin)
    return fail("expects the filter's input channels (", filterIn,
                ") times groups (", params.groups,
                ") to equal the input channels (", cin, "); input ",
                formatShape(input), " (", params.dataFormat, "), filter ",
                formatShape(filter), " (", params.filterFormat, ")");
  if (bias)
    if (Result r = verifyChannelOperand(*bias, cout, "bias"); r.failed())
      return r;

  int64_t oh, ow;
  if (Result r = inferWindowOutputSize(input[layout.h], params.window, 0, oh);
      r.failed())
    return r;
  if (Result r = inferWindowOutputSize(input[layout.w], params.window, 1, ow);
      r.failed())
    return r;
  result.assign(4, 0);
  result[layout.n] = input[layout.n];
  result[layout.c] = cout;
  result[layout.h] = oh;
  result[layout.w] = ow;
  return Result::success();
}

Result inferPoolShape(DimsRef input, const WindowParams &params,
                      std::string_view dataFormat, Dims &result) {
  if (input.size() != 4)
    return fail("expects a rank-4 input, got shape ", formatShape(input));
  Layout layout;
  if (Result r = parseDataFormat(dataFormat, layout); r.failed())
    return r;
  if (Result r = verifyWindowParams(params); r.failed())
    return r;
  int64_t oh, ow;
  if (Result r = inferWindowOutputSize(input[layout.h], params, 0, oh);
      r.failed())
    return r;
  if (Result r = inferWindowOutputSize(input[layout.w], params, 1, ow);
      r.failed())
    return r;
  result.assign(input.begin(), input.end());
  result[layout.h] = oh;
  result[layout.w] = ow;
  return Result::success();
}

Result inferMatMulShape(DimsRef a, DimsRef b, bool transposeA, bool transposeB,
                        Dims &result) {
  if (a.size() < 2 || b.size() < 2)
    return fail("expects operands of rank >= 2, got ", formatShape(a), " and ",
                formatShape(b));
  int64_t m = a[a.size() - (transposeA ? 1 : 2)];
  int64_t ka = a[a.size() - (transposeA ? 2 : 1)];
  int64_t kb = b[b.size() - (transposeB ? 1 : 2)];
  int64_t n = b[b.size() - (transposeB ? 2 : 1)];
  if (!isDynamic(ka) && !isDynamic(kb) && ka != kb)
    return fail("expects matching contraction dimensions, got ", ka, " (a ",
                formatShape(a), transposeA ? ", transposed" : "", ") and ", kb,
                " (b ", formatShape(b), transposeB ? ", transposed" : "", ")");
  if (Result r = inferBroadcastShape(a.drop_back(2), b.drop_back(2), result);
      r.failed())
    return r;
  result.push_back(m);
  result.push_back(n);
  return Result::success();
}

//===----------------------------------------------------------------------===//
// Reductions and shape ops
//===----------------------------------------------------------------------===//

Result inferReduceShape(DimsRef input, DimsRef axes, bool keepDims,
                        Dims &result) {
  int64_t rank = input.size();
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    int64_t normalized;
    if (Result r = normalizeAxis(axis, rank, "axes", normalized); r.failed())
      return r;
    if (reduced[normalized])
      return fail("expects distinct axes, got ", formatList(axes));
    reduced[normalized] = true;
  }
  result.clear();
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      result.push_back(input[i]);
    else if (keepDims)
      result.push_back(1);
  }
  return Result::success();
}

Result inferReshapeShape(DimsRef input, DimsRef shape, Dims &result) {
  int64_t inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t dim = shape[i];
    if (dim == -1) {
      if (inferred >= 0)
        return fail("expects at most one -1 in shape, got ", formatList(shape));
      inferred = i;
    } else if (dim < 0) {
      return fail("expects shape entries >= -1, got ", formatList(shape));
    } else {
      known *= dim;
    }
  }
  result.assign(shape.begin(), shape.end());
  bool inputStatic = !anyOf(input, isDynamic);
  int64_t count = 1;
  for (int64_t dim : input)
    count *= isDynamic(dim) ? 1 : dim;
  if (inferred >= 0) {
    if (!inputStatic) {
      result[inferred] = kDynamic;
    } else {
      if (known == 0 || count % known != 0)
        return fail("cannot reshape ", formatShape(input), " (", count,
                    " elements) to ", formatList(shape));
      result[inferred] = count / known;
    }
  } else if (inputStatic && count != known) {
    return fail("cannot reshape ", formatShape(input), " (", count,
                " elements) to ", formatList(shape), " (", known, " elements)");
  }
  return Result::success();
}

Result inferFlattenShape(DimsRef input, int64_t axis, Dims &result) {
  int64_t rank = input.size();
  if (axis < -rank || axis > rank)
    return fail("expects axis in [", -rank, ", ", rank, "], got ", axis);
  if (axis < 0)
    axis += rank;
  auto product = [](DimsRef dims) {
    int64_t p = 1;
    for (int64_t d : dims) {
      if (isDynamic(d))
        return kDynamic;
      p *= d;
    }
    return p;
  };
  result = {product(input.take_front(axis)), product(input.drop_front(axis))};
  return Result::success();
}

Result inferTransposeShape(DimsRef input, DimsRef perm, Dims &result) {
  int64_t rank = input.size();
  if (static_cast<int64_t>(perm.size()) != rank)
    return fail("expects perm to have ", rank,
                " entries (the operand's rank), got ", formatList(perm));
  std::vector<bool> seen(rank, false);
  result.clear();
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return fail("expects perm to be a permutation of [0, ", rank, "), got ",
                  formatList(perm));
    seen[p] = true;
    result.push_back(input[p]);
  }
  return Result::success();
}

Result inferConcatShape(const std::vector<DimsRef> &inputs, int64_t axis,
                        Dims &result) {
  if (inputs.empty())
    return fail("expects at least one operand");
  int64_t rank = inputs.front().size();
  int64_t normalized;
  if (Result r = normalizeAxis(axis, rank, "axis", normalized); r.failed())
    return r;
  result.assign(inputs.front().begin(), inputs.front().end());
  result[normalized] = 0;
  for (size_t index = 0; index < inputs.size(); ++index) {
    DimsRef shape = inputs[index];
    if (static_cast<int64_t>(shape.size()) != rank)
      return fail("expects operands of equal rank, operand #", index,
                  " has shape ", formatShape(shape), ", operand #0 ",
                  formatShape(inputs.front()));
    for (int64_t d = 0; d < rank; ++d) {
      if (d == normalized) {
        result[d] = isDynamic(result[d]) || isDynamic(shape[d])
                        ? kDynamic
                        : result[d] + shape[d];
        continue;
      }
      if (isDynamic(result[d])) {
        result[d] = shape[d];
      } else if (!isDynamic(shape[d]) && shape[d] != result[d]) {
        return fail("expects operand dimensions to match except along axis ",
                    normalized, ", operand #", index, " has shape ",
                    formatShape(shape), ", operand #0 ",
                    formatShape(inputs.front()));
      }
    }
  }
  return Result::success();
}

Result inferSliceShape(DimsRef input, DimsRef starts, DimsRef ends,
                       DimsRef steps, Dims &result) {
  size_t rank = input.size();
  if (starts.size() != rank || ends.size() != rank || steps.size() != rank)
    return fail("expects starts, ends and steps with ", rank,
                " entries each (the operand's rank), got ", starts.size(), ", ",
                ends.size(), " and ", steps.size());
  result.clear();
  for (size_t i = 0; i < rank; ++i) {
    if (starts[i] < 0)
      return fail("expects non-negative starts, got ", formatList(starts));
    if (steps[i] == 0)
      return fail("expects non-zero steps, got ", formatList(steps));
    if (steps[i] > 0 && ends[i] < starts[i])
      return fail("expects ends >= starts where the step is positive, got "
                  "starts ",
                  formatList(starts), " and ends ", formatList(ends));
    // Backwards, the end (exclusive) may be -1: before element 0.
    if (steps[i] < 0 && (ends[i] < -1 || ends[i] > starts[i]))
      return fail("expects -1 <= ends <= starts where the step is negative, "
                  "got starts ",
                  formatList(starts), " and ends ", formatList(ends));
    if (isDynamic(input[i])) {
      result.push_back(kDynamic);
      continue;
    }
    if (steps[i] < 0) {
      // Both clamp to the last element: ONNX's rule for backward slices.
      int64_t start = std::min(starts[i], input[i] - 1);
      int64_t end = std::min(ends[i], input[i] - 1);
      int64_t step = -steps[i];
      result.push_back(start > end ? (start - end + step - 1) / step : 0);
      continue;
    }
    int64_t end = std::min(ends[i], input[i]);
    int64_t start = std::min(starts[i], input[i]);
    result.push_back(end > start ? (end - start + steps[i] - 1) / steps[i] : 0);
  }
  return Result::success();
}

Result inferPadShape(DimsRef input, DimsRef pads, std::string_view mode,
                     Dims &result) {
  if (pads.size() != 2 * input.size())
    return fail("expects pads to have ", 2 * input.size(),
                " entries (before and after for each of ", input.size(),
                " dimensions), got ", pads.size());
  if (anyOf(pads, [](int64_t p) { return p < 0; }))
    return fail("expects non-negative pads, got ", formatList(pads));
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      mode != "wrap")
    return fail("expects mode \"constant\", \"reflect\", \"edge\" or "
                "\"wrap\", got \"",
                mode, "\"");
  result.clear();
  for (size_t i = 0; i < input.size(); ++i) {
    int64_t dim = input[i], before = pads[2 * i], after = pads[2 * i + 1];
    bool padded = before || after;
    // Reflection needs an element past the edge: an unpadded dimension may
    // be any size.
    if (mode == "reflect" && padded && !isDynamic(dim) &&
        (before >= dim || after >= dim))
      return fail("expects reflect padding smaller than the dimension (", dim,
                  ") in dimension ", i, ", got ", before, " and ", after);
    if ((mode == "edge" || mode == "wrap") && padded && dim == 0)
      return fail("expects a non-empty dimension ", i, " for ", mode,
                  " padding (there is no element to repeat)");
    if (isDynamic(dim)) {
      result.push_back(kDynamic);
      continue;
    }
    int64_t paddedDim;
    if (__builtin_add_overflow(dim, before, &paddedDim) ||
        __builtin_add_overflow(paddedDim, after, &paddedDim))
      return fail("padded dimension ", i, " (", dim, " + ", before, " + ",
                  after, ") overflows int64");
    result.push_back(paddedDim);
  }
  return Result::success();
}

Result inferDequantizeShape(DimsRef values, DimsRef scales, int64_t axis,
                            Dims &result) {
  int64_t rank = values.size();
  if (rank == 0)
    return fail("expects values of rank >= 1, got a rank-0 tensor");
  int64_t normalized;
  if (Result r = normalizeAxis(axis, rank, "axis", normalized); r.failed())
    return r;
  if (scales.size() != 1)
    return fail("expects rank-1 scales (one per channel along axis ",
                normalized, ", or one for the whole tensor), got rank ",
                scales.size());
  int64_t channels = values[normalized];
  int64_t count = scales[0];
  if (!isDynamic(count) && count != 1 && !isDynamic(channels) &&
      count != channels)
    return fail("expects ", channels, " scales (dimension ", normalized,
                " of values ", formatShape(values), ") or 1 (per-tensor), got ",
                count);
  result.assign(values.begin(), values.end());
  return Result::success();
}

} // namespace gopt::shape
