//===- ShapeFunctions.h - Shape functions of gopt ops -----------*- C++ -*-===//
//
// The one implementation of each op's shape function: result shapes from
// operand shapes and attributes, and a message for an invalid combination.
// Plain C++17 with no LLVM or MLIR types (StableHLO's TypeInference.h
// pattern), so the dialect's type inference (ShapeInference.h adapts it to
// MLIR diagnostics) and the runtime's shape resolution (runtime OpSchema.cpp
// adapts it to Status) run the same code.
//
// Dimensions are int64_t; kDynamic (MLIR's ShapedType::kDynamic) is an
// unknown dimension and propagates. The runtime only passes static shapes.
// A message names no op: each side prefixes it its own way.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_SHAPE_SHAPEFUNCTIONS_H
#define GOPT_SHAPE_SHAPEFUNCTIONS_H

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gopt::shape {

/// An unknown dimension; the value of mlir::ShapedType::kDynamic.
inline constexpr int64_t kDynamic = std::numeric_limits<int64_t>::min();
// The largest rank a result may take from a value's length (a dynamic
// reshape's target, an expand's shape): a larger one is an error, not an
// allocation (shapes come from untrusted models).
inline constexpr int64_t kMaxRank = 64;

inline bool isDynamic(int64_t dim) { return dim == kDynamic; }

using Dims = std::vector<int64_t>;

/// A read-only view of dimensions (or attribute values): anything with
/// data() and size() of int64_t (std::vector, llvm::ArrayRef, SmallVector).
class DimsRef {
public:
  DimsRef() = default;
  DimsRef(const int64_t *data, size_t size) : data_(data), size_(size) {}
  template <typename C, typename = decltype(std::declval<const C &>().data()),
            typename = decltype(std::declval<const C &>().size())>
  DimsRef(const C &c) : data_(c.data()), size_(c.size()) {}

  const int64_t *begin() const { return data_; }
  const int64_t *end() const { return data_ + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t operator[](size_t i) const { return data_[i]; }
  int64_t back() const { return data_[size_ - 1]; }
  DimsRef take_front(size_t n) const { return {data_, n}; }
  DimsRef drop_front(size_t n) const { return {data_ + n, size_ - n}; }
  DimsRef drop_back(size_t n) const { return {data_, size_ - n}; }

private:
  const int64_t *data_ = nullptr;
  size_t size_ = 0;
};

/// Success, or a failure with a message ("expects ..."; no op name).
class [[nodiscard]] Result {
public:
  static Result success() { return Result(); }
  static Result failure(std::string message) {
    Result r;
    r.failed_ = true;
    r.message_ = std::move(message);
    return r;
  }
  bool failed() const { return failed_; }
  bool ok() const { return !failed_; }
  const std::string &message() const { return message_; }

private:
  bool failed_ = false;
  std::string message_;
};

/// "[1, ?, 3]": a shape in a message.
std::string formatShape(DimsRef shape);
/// "[1, -1, 3]": attribute values in a message.
std::string formatList(DimsRef values);

/// Layout of a 4-D activation: where N, C, H and W live.
struct Layout {
  int64_t n, c, h, w;
};

/// Parses "NHWC"/"NCHW".
Result parseDataFormat(std::string_view format, Layout &layout);

/// Channel axis of a rank-`rank` activation in `format`: NCHW and ranks <= 2
/// axis 1 (0 for rank 1), otherwise the last axis.
int64_t channelAxis(std::string_view format, int64_t rank);

/// Normalises `axis` in [-rank, rank) to [0, rank); `attrName` is for the
/// message.
Result normalizeAxis(int64_t axis, int64_t rank, std::string_view attrName,
                     int64_t &normalized);

/// One spatial dimension of a window (docs/op-semantics.md): the padding
/// SAME/VALID/EXPLICIT resolves to and the output size.
struct WindowDim {
  int64_t padBefore = 0;
  int64_t padAfter = 0;
  int64_t outSize = 0;
};

/// Window arithmetic of one spatial dimension, for shape functions and
/// kernels: checks the parameters, resolves the padding and computes the
/// output size. A dynamic `inSize` gives a dynamic output size (and no SAME
/// padding); pads other than EXPLICIT's are ignored.
Result computeWindowDim(int64_t inSize, int64_t kernel, int64_t stride,
                        int64_t dilation, std::string_view padding,
                        int64_t explicitBefore, int64_t explicitAfter,
                        bool ceilMode, WindowDim &dim);

/// Parameters of a 2-D window (convolution or pooling), in (H, W) order.
struct WindowParams {
  Dims kernel;
  Dims strides;
  Dims dilations;
  std::string_view padding; // "EXPLICIT", "SAME" or "VALID"
  Dims pads = {0, 0, 0, 0}; // top, bottom, left, right
  bool ceilMode = false;
};

/// What an absent window attribute ("strides", "dilations" or "pads") of a
/// 2-D convolution or pooling op means, where ODS declares it optional: 1s
/// for strides and dilations, 0s (no explicit padding) for pads. Stated once
/// for the dialect and the runtime; any other name has no such meaning
/// (empty).
Dims absentWindowAttr(std::string_view name);

/// Checks the window attributes (sizes, signs, known padding mode).
Result verifyWindowParams(const WindowParams &params);

/// Output size of one spatial dimension (index 0 = H, 1 = W) of a verified
/// window.
Result inferWindowOutputSize(int64_t inputSize, const WindowParams &params,
                             unsigned spatialIndex, int64_t &outputSize);

/// Resolved (before, after) padding of one spatial dimension; for "SAME"
/// this needs a static input size.
std::pair<int64_t, int64_t> resolvePadding(int64_t inputSize,
                                           const WindowParams &params,
                                           unsigned spatialIndex);

/// Numpy broadcasting of two shapes.
Result inferBroadcastShape(DimsRef lhs, DimsRef rhs, Dims &result);

/// Checks a per-channel operand (rank 1, size `channels`).
Result verifyChannelOperand(DimsRef operand, int64_t channels,
                            std::string_view operandName);

/// The channel count of an input of gopt.batch_norm or gopt.bias_add: rank
/// >= 2, a known `dataFormat` at rank 4, channels on the axis it names
/// (channelAxis).
Result inferChannelCount(DimsRef x, std::string_view dataFormat,
                         int64_t &channels);

/// gopt.bias_add: `bias` has one value per channel of `x`; the result has
/// x's shape.
Result inferBiasAddShape(DimsRef x, DimsRef bias, std::string_view dataFormat,
                         Dims &result);

/// gopt.batch_norm: `perChannel` are scale, offset, mean and variance, one
/// value per channel of `x` each; epsilon >= 0 and momentum in [0, 1]. The
/// first result has x's shape, the training statistics `channels` values.
Result inferBatchNormShape(DimsRef x, const DimsRef (&perChannel)[4],
                           std::string_view dataFormat, float epsilon,
                           float momentum, int64_t &channels);

/// gopt.global_avg_pool: a rank-4 input in `dataFormat`; H and W become 1.
Result inferGlobalPoolShape(DimsRef x, std::string_view dataFormat,
                            Dims &result);

struct Conv2DParams {
  WindowParams window; // the kernel is taken from the filter
  int64_t groups = 1;
  std::string_view dataFormat = "NHWC";
  std::string_view filterFormat = "HWIO";
  std::string_view activation = "none";
};

/// gopt.conv2d; `bias` may be null (no bias operand).
Result inferConv2DShape(DimsRef input, DimsRef filter, const DimsRef *bias,
                        Conv2DParams params, Dims &result);

/// gopt.max_pool / gopt.avg_pool.
Result inferPoolShape(DimsRef input, const WindowParams &params,
                      std::string_view dataFormat, Dims &result);

Result inferMatMulShape(DimsRef a, DimsRef b, bool transposeA, bool transposeB,
                        Dims &result);

/// The reductions; empty `axes` reduces every axis.
Result inferReduceShape(DimsRef input, DimsRef axes, bool keepDims,
                        Dims &result);

Result inferReshapeShape(DimsRef input, DimsRef shape, Dims &result);

Result inferFlattenShape(DimsRef input, int64_t axis, Dims &result);

Result inferTransposeShape(DimsRef input, DimsRef perm, Dims &result);

Result inferConcatShape(const std::vector<DimsRef> &inputs, int64_t axis,
                        Dims &result);

Result inferSliceShape(DimsRef input, DimsRef starts, DimsRef ends,
                       DimsRef steps, Dims &result);

Result inferPadShape(DimsRef input, DimsRef pads, std::string_view mode,
                     Dims &result);

/// gopt.dequantize: `values` of rank >= 1, `scales` rank 1 with one entry
/// (per-tensor) or one per slice along `axis` (per-channel). The result has
/// the shape of `values`.
Result inferDequantizeShape(DimsRef values, DimsRef scales, int64_t axis,
                            Dims &result);

//===----------------------------------------------------------------------===//
// Normalizations (lib/Shape/NormShapes.cpp)
//===----------------------------------------------------------------------===//

/// The channel axis of instance_norm's and lrn's input: `data_format`'s for
/// rank 4, axis 1 for the other ranks (ONNX's N, C, D1, ...).
int64_t normalizationChannelAxis(std::string_view format, int64_t rank);

/// layer_norm: `x` normalized over its dimensions from `axis` on; `scale` and
/// `bias` broadcast to those dimensions. The result has the shape of `x`.
Result inferLayerNormShape(DimsRef x, DimsRef scale, DimsRef bias, int64_t axis,
                           Dims &result);

/// instance_norm: `x` of rank >= 3 with channels at `channelAxis`; `scale`
/// and `bias` have one value per channel.
Result inferInstanceNormShape(DimsRef x, DimsRef scale, DimsRef bias,
                              int64_t channelAxis, Dims &result);

/// lrn: `x` of rank >= 3; `size` >= 1 neighbouring channels.
Result inferLrnShape(DimsRef x, int64_t size, Dims &result);

//===----------------------------------------------------------------------===//
// Comparisons, logic, where, expand and tile (lib/Shape/LogicShapes.cpp)
//===----------------------------------------------------------------------===//

/// gopt.where: numpy broadcasting of the condition, x and y together.
Result inferWhereShape(DimsRef condition, DimsRef x, DimsRef y, Dims &result);

/// gopt.expand: numpy broadcasting of `input` against the target `shape`
/// (non-negative entries).
Result inferExpandShape(DimsRef input, DimsRef shape, Dims &result);

/// gopt.tile: dimension i times repeats[i]; one non-negative repeat per
/// dimension.
Result inferTileShape(DimsRef input, DimsRef repeats, Dims &result);

//===----------------------------------------------------------------------===//
// Image ops (lib/Shape/ImageShapes.cpp): conv2d_transpose, resize
//===----------------------------------------------------------------------===//

struct Conv2DTransposeParams {
  Dims strides;       // [h, w]
  Dims dilations;     // [h, w]
  Dims pads;          // [top, bottom, left, right]
  Dims outputPadding; // [h, w]
  int64_t groups = 1;
  std::string_view dataFormat = "NHWC";
  std::string_view filterFormat = "HWIO";
};

/// One spatial dim of a transposed convolution:
/// (in - 1) * stride + (kernel - 1) * dilation + 1 - pads + outputPadding;
/// kDynamic for a dynamic `inSize`.
int64_t conv2dTransposeOutputSize(int64_t inSize, int64_t kernel,
                                  int64_t stride, int64_t dilation,
                                  int64_t padBefore, int64_t padAfter,
                                  int64_t outputPadding);

/// gopt.conv2d_transpose; `bias` may be null (no bias operand).
Result inferConv2DTransposeShape(DimsRef input, DimsRef filter,
                                 const DimsRef *bias,
                                 const Conv2DTransposeParams &params,
                                 Dims &result);

struct ResizeParams {
  const std::vector<float> *scales = nullptr; // [h, w], or null
  const Dims *sizes = nullptr;                // [h, w], or null
  const std::vector<float> *roi = nullptr;    // [h0, w0, h1, w1], or null
  std::string_view mode = "nearest";
  std::string_view coordinateTransformationMode = "half_pixel";
  std::string_view nearestMode = "round_prefer_floor";
  std::string_view dataFormat = "NHWC";
};

/// gopt.resize: scales, sizes or both; the output's H and W are `sizes`
/// when given, else floor(in * scales) (dynamic for a dynamic input dim).
Result inferResizeShape(DimsRef input, const ResizeParams &params,
                        Dims &result);

//===----------------------------------------------------------------------===//
// Indexing ops (GoptIndexingOps.td; lib/Shape/IndexingShapes.cpp)
//===----------------------------------------------------------------------===//

/// gopt.gather: x.shape[:axis] + indices.shape + x.shape[axis+1:].
Result inferGatherShape(DimsRef x, DimsRef indices, int64_t axis, Dims &result);

/// gopt.gather_grad: dy must have the shape gather(x, indices, axis) has;
/// the result has x's.
Result inferGatherGradShape(DimsRef x, DimsRef indices, DimsRef dy,
                            int64_t axis, Dims &result);

/// gopt.gather_elements: indices of x's rank, no larger than x off `axis`;
/// the result has indices' shape.
Result inferGatherElementsShape(DimsRef x, DimsRef indices, int64_t axis,
                                Dims &result);

/// gopt.gather_nd: indices.shape[:-1] + x.shape[batchDims + k:], k the last
/// dimension of indices.
Result inferGatherNDShape(DimsRef x, DimsRef indices, int64_t batchDims,
                          Dims &result);

/// gopt.scatter_elements: indices and updates of one shape and x's rank; the
/// result has x's shape.
Result inferScatterElementsShape(DimsRef x, DimsRef indices, DimsRef updates,
                                 int64_t axis, std::string_view reduction,
                                 Dims &result);

/// gopt.scatter_nd: updates of shape indices.shape[:-1] + x.shape[k:]; the
/// result has x's shape.
Result inferScatterNDShape(DimsRef x, DimsRef indices, DimsRef updates,
                           std::string_view reduction, Dims &result);

/// gopt.arg_max / gopt.arg_min: x without `axis` (kept as 1 with keepDims).
Result inferArgReduceShape(DimsRef x, int64_t axis, bool keepDims,
                           Dims &result);

/// gopt.tf_idf_vectorizer: [C] for x [N], [B, C] for x [B, N], C the
/// largest of ngram_indexes + 1; checks the n-gram tables.
Result inferTfIdfVectorizerShape(DimsRef x, int64_t minGramLength,
                                 int64_t maxGramLength, int64_t maxSkipCount,
                                 DimsRef ngramCounts, DimsRef ngramIndexes,
                                 DimsRef pool, size_t numWeights, Dims &result);

/// gopt.cumsum: checks the axis; the result has x's shape.
Result inferCumSumShape(DimsRef x, int64_t axis, Dims &result);

/// gopt.top_k: x with dimension `axis` = k (k <= that dimension); values
/// and indices have this shape.
Result inferTopKShape(DimsRef x, int64_t k, int64_t axis, Dims &result);

//===----------------------------------------------------------------------===//
// Recurrent ops (GoptRnnOps.td; lib/Shape/RnnShapes.cpp): lstm, gru, rnn
//===----------------------------------------------------------------------===//

/// The operands of a recurrent op other than x, w and r; a null pointer is
/// an operand the op does not have (or an absent sequence_lens).
struct RecurrentOperands {
  const DimsRef *b = nullptr;
  const DimsRef *initialH = nullptr;
  const DimsRef *initialC = nullptr;
  const DimsRef *peepholes = nullptr;
  const DimsRef *sequenceLens = nullptr;
};

/// gopt.lstm / gru / rnn: x [S, B, I], w [D, G*H, I], r [D, G*H, H], b
/// [D, 2*G*H], initial states [D, B, H], peepholes [D, 3*H] (b, states and
/// peepholes may be rank-0: one value broadcast), sequence_lens [B]. `y` is
/// [S, D, B, H] and `state` (each final state) [D, B, H].
Result inferRecurrentShape(DimsRef x, DimsRef w, DimsRef r,
                           const RecurrentOperands &operands,
                           int64_t hiddenSize, std::string_view direction,
                           int64_t gates, Dims &y, Dims &state);

/// gopt.lstm_grad / gru_grad / rnn_grad: `dy` has the forward's `y` shape
/// and each of `stateGrads` (dy_h, and lstm's dy_c) its final state's, or
/// is rank-0 (one value broadcast). The forward's operands are checked by
/// inferRecurrentShape, which gives `y` and `state`.
Result checkRecurrentResultGrads(DimsRef y, DimsRef state, DimsRef dy,
                                 const std::vector<DimsRef> &stateGrads);

//===----------------------------------------------------------------------===//
// 3-D windows over NCDHW (GoptVolumeOps.td, lib/Shape/VolumeShapes.cpp)
//===----------------------------------------------------------------------===//

/// A window over the three spatial dims (D, H, W) of an [N, C, D, H, W]
/// activation: conv3d's (kernel from the filter), max_pool3d's and
/// avg_pool3d's.
struct VolumeWindow {
  Dims kernel;              // [kd, kh, kw]
  Dims strides;             // [d, h, w]
  Dims dilations;           // [d, h, w]
  std::string_view padding; // "EXPLICIT", "SAME" or "VALID"
  Dims pads;                // [d0, d1, h0, h1, w0, w1]
  bool ceilMode = false;
};

/// Checks the window's list sizes and values and resolves each spatial dim
/// of `input` (rank 5) with computeWindowDim: the pads SAME/VALID/EXPLICIT
/// resolve to and the output sizes. Used by the shape functions and the
/// kernels alike.
Result resolveVolumeWindow(DimsRef input, const VolumeWindow &window,
                           WindowDim dims[3]);

/// gopt.conv3d: input [N, Cin, D, H, W], filter OIDHW [Cout, Cin/groups,
/// KD, KH, KW], `bias` [Cout] or null. `window.kernel` is ignored (the
/// filter's).
Result inferConv3DShape(DimsRef input, DimsRef filter, const DimsRef *bias,
                        const VolumeWindow &window, int64_t groups,
                        Dims &result);

struct Conv3DTransposeParams {
  Dims strides;       // [d, h, w]
  Dims dilations;     // [d, h, w]
  Dims pads;          // [d0, d1, h0, h1, w0, w1]
  Dims outputPadding; // [d, h, w]
  int64_t groups = 1;
};

/// gopt.conv3d_transpose: input [N, Cin, D, H, W], filter [Cin,
/// Cout/groups, KD, KH, KW], `bias` [Cout] or null; each output dim by
/// conv2dTransposeOutputSize.
Result inferConv3DTransposeShape(DimsRef input, DimsRef filter,
                                 const DimsRef *bias,
                                 const Conv3DTransposeParams &params,
                                 Dims &result);

/// gopt.max_pool3d / gopt.avg_pool3d.
Result inferPool3DShape(DimsRef input, const VolumeWindow &window,
                        Dims &result);

/// A gradient op's check (conv3d_grad, the pools', grid_sample_grad,
/// roi_align_grad): `dy` has the forward's result shape `y` (dynamic
/// dimensions match anything).
Result checkForwardResultGrad(DimsRef y, DimsRef dy);

//===----------------------------------------------------------------------===//
// Shapes computed at run time (GoptDynamicShapeOps.td, DynamicShapeShapes.cpp)
//===----------------------------------------------------------------------===//

/// gopt.dynamic_reshape: `target` is the shape operand's value (ONNX
/// Reshape: one -1 inferred; 0 copies input's dimension unless allowZero).
/// The target's element count must equal the input's; a dynamic input
/// dimension makes copied and inferred entries dynamic.
Result inferDynamicReshapeShape(DimsRef input, DimsRef target, bool allowZero,
                                Dims &result);

//===----------------------------------------------------------------------===//
// Results shaped by data (GoptDataDependentOps.td, DataDependentShapes.cpp)
//===----------------------------------------------------------------------===//

// Each gives upper bounds: the shapes the results have at most, which the
// runtime allocates. The dialect marks the data-dependent dimensions (the
// ones `*Counted` names) dynamic.

/// gopt.non_zero: [rank(x), numel(x)]; dimension 1 is counted.
Result inferNonZeroShape(DimsRef x, Dims &bound);
/// gopt.compress: x with dimension `axis` at min(dim, len(condition)), or
/// [min(numel(x), len(condition))] without an axis; that dimension is
/// counted (`countedDim`).
Result inferCompressShape(DimsRef x, DimsRef condition, bool hasAxis,
                          int64_t axis, Dims &bound, int64_t &countedDim);
/// gopt.unique: y (x with dimension `axis` bounded by itself, or
/// [numel(x)]), indices and counts ([dim] or [numel]), inverse_indices
/// ([dim] or [numel], not data-dependent). y's counted dimension is
/// `countedDim`; indices and counts are counted in dimension 0.
Result inferUniqueShape(DimsRef x, bool hasAxis, int64_t axis, Dims &y,
                        Dims &indices, Dims &inverseIndices, Dims &counts,
                        int64_t &countedDim);
/// gopt.non_max_suppression: boxes [B, N, 4], scores [B, C, N], the three
/// limits one element each; [B*C*N, 3], dimension 0 counted.
Result inferNonMaxSuppressionShape(DimsRef boxes, DimsRef scores,
                                   DimsRef maxOutput, DimsRef iouThreshold,
                                   DimsRef scoreThreshold, Dims &bound);
/// gopt.image_decoder: a vector of bytes -> [H, W, channels], H and W
/// dynamic (the image's header holds them; no bound exists).
Result inferImageDecoderShape(DimsRef stream, int64_t channels, Dims &shape);

} // namespace gopt::shape

#endif // GOPT_SHAPE_SHAPEFUNCTIONS_H
