//===- DynamicShapeShapes.cpp - Shapes computed at run time ---------------===//
//
// gopt.dynamic_reshape (GoptDynamicShapeOps.td), following
// docs/op-semantics.md. No LLVM or MLIR, as ShapeFunctions.cpp.
//
//===----------------------------------------------------------------------===//

#include "Failure.h"
#include "gopt/Shape/ShapeFunctions.h"

#include <sstream>

namespace gopt::shape {

using detail::fail;

Result inferDynamicReshapeShape(DimsRef input, DimsRef target, bool allowZero,
                                Dims &result) {
  result.assign(target.begin(), target.end());
  int64_t inferred = -1;
  bool dynamic = false;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t dim = target[i];
    if (dim == -1) {
      if (inferred >= 0)
        return fail("expects at most one -1 in the target shape, got ",
                    formatList(target));
      inferred = i;
      continue;
    }
    if (dim < 0)
      return fail("expects target shape entries >= -1, got ",
                  formatList(target));
    if (dim == 0 && !allowZero) {
      if (i >= input.size())
        return fail("target shape ", formatList(target), " copies dimension ",
                    i, ", which the operand ", formatShape(input), " lacks");
      result[i] = input[i];
    }
    if (isDynamic(result[i]))
      dynamic = true;
    else
      known *= result[i];
  }
  int64_t count = 1;
  for (int64_t dim : input) {
    if (isDynamic(dim))
      dynamic = true;
    else
      count *= dim;
  }
  if (inferred >= 0) {
    if (dynamic) {
      result[inferred] = kDynamic;
      return Result::success();
    }
    if (known == 0 || count % known != 0)
      return fail("cannot reshape ", formatShape(input), " (", count,
                  " elements) to ", formatList(target),
                  ": the entries other than -1 hold ", known,
                  " elements, which do not divide ", count);
    result[inferred] = count / known;
    return Result::success();
  }
  if (!dynamic && count != known)
    return fail("cannot reshape ", formatShape(input), " (", count,
                " elements) to ", formatList(target), " (", known,
                " elements)");
  return Result::success();
}

} // namespace gopt::shape

//===----------------------------------------------------------------------===//
// Dynamic ops (gopt/Shape/DynamicOps.h)
//===----------------------------------------------------------------------===//

#include "gopt/Shape/DynamicOps.h"

#include <algorithm>
#include <cmath>

namespace gopt::shape {

ValueAttr *findValueAttr(ValueAttrs &attrs, const std::string &name) {
  for (ValueAttr &a : attrs)
    if (a.name == name)
      return &a;
  return nullptr;
}

namespace {

ValueAttr intsAttr(std::string name, std::vector<int64_t> values) {
  ValueAttr a;
  a.name = std::move(name);
  a.floats.assign(values.begin(), values.end());
  a.ints = std::move(values);
  return a;
}

// Axes counted from the end made non-negative, each within [0, rank) once.
Result normalizeAxes(DimsRef axes, size_t rank, std::vector<int64_t> &out) {
  out.clear();
  for (int64_t axis : axes) {
    int64_t a = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
    if (a < 0 || a >= static_cast<int64_t>(rank))
      return fail("axis ", axis, " is out of range for rank ", rank);
    if (std::find(out.begin(), out.end(), a) != out.end())
      return fail("axis ", axis, " appears twice in ", formatList(axes));
    out.push_back(a);
  }
  return Result::success();
}

Result requireInts(ValueAttrs &attrs, const char *name, ValueAttr *&attr) {
  attr = findValueAttr(attrs, name);
  if (!attr || !attr->isInteger)
    return fail("expects an integer '", name, "' value");
  return Result::success();
}

} // namespace

Result adaptOnnxSlice(const std::vector<Dims> &operands, ValueAttrs &attrs) {
  const Dims &input = operands[0];
  ValueAttr *starts, *ends, *axes, *steps;
  const std::pair<const char *, ValueAttr **> wanted[] = {
      {"starts", &starts}, {"ends", &ends}, {"axes", &axes}, {"steps", &steps}};
  for (auto [name, attr] : wanted)
    if (Result r = requireInts(attrs, name, *attr); r.failed())
      return r;
  size_t n = starts->ints.size();
  if (ends->ints.size() != n || axes->ints.size() != n ||
      steps->ints.size() != n)
    return fail("expects starts, ends, axes and steps of one length, got ", n,
                ", ", ends->ints.size(), ", ", axes->ints.size(), " and ",
                steps->ints.size());
  std::vector<int64_t> axisList;
  if (Result r = normalizeAxes(axes->ints, input.size(), axisList); r.failed())
    return r;
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> outStarts(input.size(), 0), outEnds(input.size(), kMax),
      outSteps(input.size(), 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t axis = axisList[i], dim = input[axis];
    if (steps->ints[i] == 0)
      return fail("steps ", formatList(steps->ints),
                  ": a step of 0 is not allowed");
    if (isDynamic(dim))
      return fail("needs dimension ", axis, " of ", formatShape(input));
    if (steps->ints[i] < 0) {
      // ONNX's backward rule: the start clamps to [0, dim - 1], the end to
      // [-1, dim - 1] (-1: before element 0).
      auto clampBackward = [&](int64_t v, int64_t low) {
        if (v < 0)
          v = v < -dim ? low : v + dim;
        return std::clamp<int64_t>(v, low, std::max<int64_t>(dim - 1, low));
      };
      outStarts[axis] = clampBackward(starts->ints[i], 0);
      outEnds[axis] =
          std::min(clampBackward(ends->ints[i], -1), outStarts[axis]);
      outSteps[axis] = steps->ints[i];
      continue;
    }
    auto clampIndex = [&](int64_t v) {
      if (v < 0)
        v = v < -dim ? 0 : v + dim;
      return std::min(v, dim);
    };
    outStarts[axis] = clampIndex(starts->ints[i]);
    outEnds[axis] = std::max(clampIndex(ends->ints[i]), outStarts[axis]);
    outSteps[axis] = steps->ints[i];
  }
  attrs = {intsAttr("starts", outStarts), intsAttr("ends", outEnds),
           intsAttr("steps", outSteps)};
  return Result::success();
}

Result adaptOnnxUnsqueeze(const std::vector<Dims> &operands,
                          ValueAttrs &attrs) {
  const Dims &input = operands[0];
  ValueAttr *axes;
  if (Result r = requireInts(attrs, "axes", axes); r.failed())
    return r;
  size_t rank = input.size() + axes->ints.size();
  std::vector<int64_t> axisList;
  if (Result r = normalizeAxes(axes->ints, rank, axisList); r.failed())
    return r;
  std::vector<int64_t> shape;
  size_t next = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (std::find(axisList.begin(), axisList.end(), d) != axisList.end()) {
      shape.push_back(1);
      continue;
    }
    if (isDynamic(input[next]))
      return fail("needs dimension ", next, " of ", formatShape(input));
    shape.push_back(input[next++]);
  }
  attrs = {intsAttr("shape", shape)};
  return Result::success();
}

Result adaptOnnxSqueeze(const std::vector<Dims> &operands, ValueAttrs &attrs) {
  const Dims &input = operands[0];
  ValueAttr *axes;
  if (Result r = requireInts(attrs, "axes", axes); r.failed())
    return r;
  std::vector<int64_t> axisList;
  if (Result r = normalizeAxes(axes->ints, input.size(), axisList); r.failed())
    return r;
  std::vector<int64_t> shape;
  for (size_t d = 0; d < input.size(); ++d) {
    bool squeezed =
        std::find(axisList.begin(), axisList.end(), d) != axisList.end();
    if (isDynamic(input[d]))
      return fail("needs dimension ", d, " of ", formatShape(input));
    if (squeezed && input[d] != 1)
      return fail("cannot squeeze dimension ", d, " of ", formatShape(input),
                  ", which is not 1");
    if (!squeezed)
      shape.push_back(input[d]);
  }
  attrs = {intsAttr("shape", shape)};
  return Result::success();
}

Result adaptOnnxPads(const std::vector<Dims> &operands, ValueAttrs &attrs) {
  ValueAttr *pads;
  if (Result r = requireInts(attrs, "pads", pads); r.failed())
    return r;
  size_t rank = operands[0].size();
  if (pads->ints.size() != 2 * rank)
    return fail("expects ", 2 * rank, " pads (begin and end of each of ", rank,
                " dimensions), got ", formatList(pads->ints));
  std::vector<int64_t> interleaved;
  for (size_t d = 0; d < rank; ++d) {
    interleaved.push_back(pads->ints[d]);
    interleaved.push_back(pads->ints[rank + d]);
  }
  ValueAttr *value = findValueAttr(attrs, "value");
  if (!value || value->floats.size() != 1)
    return fail("expects a one-element pad value");
  ValueAttr kept = *value;
  attrs = {intsAttr("pads", interleaved), kept};
  return Result::success();
}

Result adaptOnnxResize(const std::vector<Dims> &operands, ValueAttrs &attrs) {
  const Dims &input = operands[0];
  if (input.size() != 4)
    return fail("expects a rank-4 NCHW input, got ", formatShape(input));
  ValueAttr *roi = findValueAttr(attrs, "roi");
  ValueAttr *scales = findValueAttr(attrs, "scales");
  ValueAttr *sizes;
  if (Result r = requireInts(attrs, "sizes", sizes); r.failed())
    return r;
  if (!roi || !scales)
    return fail("expects 'roi' and 'scales' values");
  bool hasScales = !scales->floats.empty(), hasSizes = !sizes->ints.empty();
  if (hasScales == hasSizes)
    return fail("expects exactly one of scales and sizes to be non-empty, got "
                "scales of ",
                scales->floats.size(), " and sizes of ", sizes->ints.size(),
                " entries");
  ValueAttrs out;
  if (hasScales) {
    const std::vector<double> &s = scales->floats;
    if (s.size() != 4)
      return fail("expects 4 scales (N, C, H, W), got ", s.size());
    if (s[0] != 1.0 || s[1] != 1.0)
      return fail("only H and W can be resized; scales of N and C must be 1, "
                  "got ",
                  s[0], " and ", s[1]);
    ValueAttr hw;
    hw.name = "scales";
    hw.isInteger = false;
    hw.floats = {s[2], s[3]};
    out.push_back(hw);
  } else {
    const std::vector<int64_t> &z = sizes->ints;
    if (z.size() != 4)
      return fail("expects 4 sizes (N, C, H, W), got ", formatList(z));
    for (int d = 0; d < 2; ++d) {
      if (isDynamic(input[d]))
        return fail("needs dimension ", d, " of ", formatShape(input));
      if (z[d] != input[d])
        return fail("only H and W can be resized (input ", formatShape(input),
                    ", sizes ", formatList(z), "); N and C keep their size");
    }
    out.push_back(intsAttr("sizes", {z[2], z[3]}));
  }
  if (!roi->floats.empty()) {
    const std::vector<double> &r = roi->floats;
    if (r.size() != 8)
      return fail("expects a roi of 8 entries (starts, then ends of N, C, H, "
                  "W), got ",
                  r.size());
    if (r[0] != 0 || r[1] != 0 || r[4] != 1 || r[5] != 1)
      return fail("only H and W can be cropped; roi of N and C must be [0, 1]");
    ValueAttr hw;
    hw.name = "roi";
    hw.isInteger = false;
    hw.floats = {r[2], r[3], r[6], r[7]};
    out.push_back(hw);
  }
  attrs = std::move(out);
  return Result::success();
}

Result inferRangeShape(double start, double limit, double delta, Dims &result) {
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) ||
      !std::isfinite(delta))
    return fail("expects finite bounds and a non-zero delta, got start ", start,
                ", limit ", limit, ", delta ", delta);
  double count = std::ceil((limit - start) / delta);
  if (count > 1e15)
    return fail("would have ", count, " elements");
  result = {std::max<int64_t>(static_cast<int64_t>(count), 0)};
  return Result::success();
}

} // namespace gopt::shape
