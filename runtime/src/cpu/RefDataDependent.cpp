//===- RefDataDependent.cpp - Reference kernels of results shaped by data -===//
//
// non_zero, compress, unique, non_max_suppression and image_decoder
// (GoptDataDependentOps.td). Their outputs are allocated at the bound the
// shape function gives (image_decoder's: the exact shape, from the image's
// header); each kernel writes the leading elements, row-major for the
// actual shape, and reports that shape in ctx.actualShapes.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"

#include "gopt/runtime/ImageDecode.h"
#include "gopt/runtime/OpAttrs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace gopt::runtime::ref {

namespace {

Status report(const RefContext &ctx, std::vector<Shape> shapes) {
  if (!ctx.actualShapes)
    return internalError("the kernel has nowhere to report its result shapes");
  *ctx.actualShapes = std::move(shapes);
  return Status::success();
}

// Whether element i of x is nonzero: float zero and negative zero are zero,
// NaN is not; other types by their bytes.
bool isNonZero(const Tensor &x, int64_t i) {
  switch (x.dtype()) {
  case DType::kF32:
    return x.data<float>()[i] != 0.0f;
  case DType::kF64:
    return x.data<double>()[i] != 0.0;
  case DType::kF16:
  case DType::kBF16:
    return (x.data<uint16_t>()[i] & 0x7fff) != 0;
  default: {
    size_t size = dtypeSize(x.dtype());
    const uint8_t *bytes = static_cast<const uint8_t *>(x.data()) + i * size;
    for (size_t b = 0; b < size; ++b)
      if (bytes[b])
        return true;
    return false;
  }
  }
}

Status nonZeroKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  const Tensor &x = in[0];
  const int64_t rank = x.rank(), n = x.numElements();
  std::vector<int64_t> strides = rowMajorStrides(x.shape());
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i)
    count += isNonZero(x, i);
  int64_t *indices = out[0].data<int64_t>();
  int64_t column = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!isNonZero(x, i))
      continue;
    for (int64_t d = 0; d < rank; ++d)
      indices[d * count + column] = i / strides[d] % x.dim(d);
    ++column;
  }
  return report(ctx, {{rank, count}});
}

Status compressKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                      std::vector<Tensor> &out) {
  const Tensor &x = in[0];
  const bool *condition = in[1].data<bool>();
  const int64_t conditionLength = in[1].numElements();
  const size_t elementSize = dtypeSize(x.dtype());
  const char *src = static_cast<const char *>(x.data());
  char *dst = static_cast<char *>(out[0].data());
  OpAttrs attrs = ctx.attrs();
  if (!attrs.has("axis")) {
    int64_t limit = std::min(x.numElements(), conditionLength), count = 0;
    for (int64_t i = 0; i < limit; ++i)
      if (condition[i])
        std::memcpy(dst + count++ * elementSize, src + i * elementSize,
                    elementSize);
    return report(ctx, {{count}});
  }
  int64_t axis = attrs.getInt("axis");
  if (axis < 0)
    axis += x.rank();
  const Shape &shape = x.shape();
  int64_t outer = 1, inner = 1, dim = shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    inner *= shape[d];
  std::vector<int64_t> selected;
  for (int64_t j = 0; j < std::min(dim, conditionLength); ++j)
    if (condition[j])
      selected.push_back(j);
  const int64_t count = static_cast<int64_t>(selected.size());
  const size_t sliceBytes = inner * elementSize;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < count; ++k)
      std::memcpy(dst + (o * count + k) * sliceBytes,
                  src + (o * dim + selected[k]) * sliceBytes, sliceBytes);
  Shape result = shape;
  result[axis] = count;
  return report(ctx, {result});
}

// NaNs sort after every number and equal each other, so that sorting is a
// strict weak order and NaNs form one entry.
template <typename T> bool lessValue(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b))
      return !std::isnan(a) && std::isnan(b);
  }
  return a < b;
}

template <typename T>
Status uniqueOf(const RefContext &ctx, const std::vector<Tensor> &in,
                std::vector<Tensor> &out) {
  const Tensor &x = in[0];
  const T *data = x.data<T>();
  OpAttrs attrs = ctx.attrs();
  const bool hasAxis = attrs.has("axis");
  int64_t axis = hasAxis ? attrs.getInt("axis") : 0;
  if (axis < 0)
    axis += x.rank();
  // Slices: without an axis, each element is one.
  int64_t outer = 1, inner = 1, entries = x.numElements();
  if (hasAxis) {
    entries = x.dim(axis);
    for (int64_t d = 0; d < axis; ++d)
      outer *= x.dim(d);
    for (int64_t d = axis + 1; d < x.rank(); ++d)
      inner *= x.dim(d);
  }
  auto at = [&](int64_t slice, int64_t e) {
    return data[(e / inner * entries + slice) * inner + e % inner];
  };
  const int64_t sliceSize = outer * inner;
  auto less = [&](int64_t a, int64_t b) {
    for (int64_t e = 0; e < sliceSize; ++e) {
      T va = at(a, e), vb = at(b, e);
      if (lessValue(va, vb))
        return true;
      if (lessValue(vb, va))
        return false;
    }
    return false;
  };
  // Stable: the first of equal slices is their first occurrence.
  std::vector<int64_t> order(entries);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), less);
  std::vector<int64_t> firsts, groupOf(entries);
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || less(order[i - 1], order[i]))
      firsts.push_back(order[i]);
    groupOf[order[i]] = static_cast<int64_t>(firsts.size()) - 1;
  }
  const int64_t unique = static_cast<int64_t>(firsts.size());
  // Position of each group in y: sorted order, or first occurrence.
  std::vector<int64_t> position(unique);
  std::iota(position.begin(), position.end(), 0);
  if (!attrs.getBool("sorted")) {
    std::vector<int64_t> byFirst(unique);
    std::iota(byFirst.begin(), byFirst.end(), 0);
    std::sort(byFirst.begin(), byFirst.end(),
              [&](int64_t a, int64_t b) { return firsts[a] < firsts[b]; });
    for (int64_t k = 0; k < unique; ++k)
      position[byFirst[k]] = k;
  }
  T *y = out[0].data<T>();
  int64_t *indices = out[1].data<int64_t>();
  int64_t *inverse = out[2].data<int64_t>();
  int64_t *counts = out[3].data<int64_t>();
  std::fill(counts, counts + unique, 0);
  for (int64_t g = 0; g < unique; ++g) {
    int64_t k = position[g];
    indices[k] = firsts[g];
    for (int64_t e = 0; e < sliceSize; ++e)
      y[(e / inner * unique + k) * inner + e % inner] = at(firsts[g], e);
  }
  for (int64_t j = 0; j < entries; ++j) {
    inverse[j] = position[groupOf[j]];
    counts[inverse[j]]++;
  }
  Shape yShape = hasAxis ? x.shape() : Shape{unique};
  yShape[hasAxis ? axis : 0] = unique;
  return report(ctx, {yShape, {unique}, {entries}, {unique}});
}

Status uniqueKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  return visitElementType(in[0].dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>)
      return unimplemented("unique of bool");
    else
      return uniqueOf<T>(ctx, in, out);
  });
}

struct Box {
  float xMin, yMin, xMax, yMax;
};

Box boxAt(const float *b, bool centerPointBox) {
  if (centerPointBox) {
    float halfW = b[2] / 2, halfH = b[3] / 2;
    return {b[0] - halfW, b[1] - halfH, b[0] + halfW, b[1] + halfH};
  }
  return {std::min(b[1], b[3]), std::min(b[0], b[2]), std::max(b[1], b[3]),
          std::max(b[0], b[2])};
}

// Whether a and b overlap by more than `threshold` (intersection over
// union), as ONNX's reference decides it.
bool suppresses(const Box &a, const Box &b, float threshold) {
  float width = std::min(a.xMax, b.xMax) - std::max(a.xMin, b.xMin);
  float height = std::min(a.yMax, b.yMax) - std::max(a.yMin, b.yMin);
  float intersection = std::max(0.0f, width) * std::max(0.0f, height);
  if (intersection <= 0)
    return false;
  float areaA = (a.xMax - a.xMin) * (a.yMax - a.yMin);
  float areaB = (b.xMax - b.xMin) * (b.yMax - b.yMin);
  float unionArea = areaA + areaB - intersection;
  if (areaA <= 0 || areaB <= 0 || unionArea <= 0)
    return false;
  return intersection / unionArea > threshold;
}

Status nonMaxSuppressionKernel(const RefContext &ctx,
                               const std::vector<Tensor> &in,
                               std::vector<Tensor> &out) {
  const Tensor &boxes = in[0], &scores = in[1];
  const int64_t batches = scores.dim(0), classes = scores.dim(1),
                n = scores.dim(2);
  const int64_t maxPerClass = std::max<int64_t>(0, in[2].data<int64_t>()[0]);
  const float iouThreshold = in[3].data<float>()[0];
  const float scoreThreshold = in[4].data<float>()[0];
  if (iouThreshold < 0 || iouThreshold > 1)
    return invalidArgument("iou_threshold must be in [0, 1], got ",
                           iouThreshold);
  const bool centerPointBox = ctx.attrs().getInt("center_point_box") == 1;
  int64_t *selected = out[0].data<int64_t>();
  int64_t rows = 0;
  std::vector<int64_t> candidates;
  std::vector<Box> kept;
  for (int64_t b = 0; b < batches; ++b) {
    const float *batchBoxes = boxes.data<float>() + b * n * 4;
    for (int64_t c = 0; c < classes; ++c) {
      const float *s = scores.data<float>() + (b * classes + c) * n;
      candidates.clear();
      for (int64_t i = 0; i < n; ++i)
        if (s[i] > scoreThreshold)
          candidates.push_back(i);
      // Best score first; of equal scores the lower index.
      std::stable_sort(candidates.begin(), candidates.end(),
                       [&](int64_t i, int64_t j) { return s[i] > s[j]; });
      kept.clear();
      for (int64_t i : candidates) {
        if (static_cast<int64_t>(kept.size()) >= maxPerClass)
          break;
        Box box = boxAt(batchBoxes + i * 4, centerPointBox);
        bool suppressed = false;
        for (const Box &k : kept)
          suppressed = suppressed || suppresses(k, box, iouThreshold);
        if (suppressed)
          continue;
        kept.push_back(box);
        selected[rows * 3] = b;
        selected[rows * 3 + 1] = c;
        selected[rows * 3 + 2] = i;
        ++rows;
      }
    }
  }
  return report(ctx, {{rows, 3}});
}

// The decoding itself is gopt_image_decode's (ImageDecode.h).
Status imageDecoderKernel(const RefContext &ctx, const std::vector<Tensor> &in,
                          std::vector<Tensor> &out) {
  const Tensor &stream = in[0];
  const uint8_t *data = stream.data<uint8_t>();
  const size_t size = static_cast<size_t>(stream.numElements());
  GOPT_ASSIGN_OR_RETURN(
      image::PixelFormat format,
      image::parsePixelFormat(
          op_attrs::ImageDecoderAttrs(ctx.attrs()).pixelFormat()));
  GOPT_ASSIGN_OR_RETURN(image::ImageHeader header,
                        image::readImageHeader(data, size));
  Shape shape = {header.height, header.width, image::channelsOf(format)};
  if (out[0].numElements() < numElements(shape))
    return internalError("the ", header.format, " image is ",
                         shapeToString(shape), " but its result holds ",
                         out[0].numElements(), " elements");
  GOPT_RETURN_IF_ERROR(
      image::decodeImage(data, size, header, format, out[0].data<uint8_t>()));
  return report(ctx, {shape});
}

} // namespace

void registerDataDependentKernels(KernelRegistry &r) {
  using D = DTypeSupport;
  registerKernel(r, "non_zero", nonZeroKernel, D::kAny);
  registerKernel(r, "compress", compressKernel, D::kAny);
  registerKernel(r, "unique", uniqueKernel, D::kNumericF64);
  registerKernel(r, "non_max_suppression", nonMaxSuppressionKernel, D::kAny);
  registerKernel(r, "image_decoder", imageDecoderKernel, D::kAny);
}

} // namespace gopt::runtime::ref
