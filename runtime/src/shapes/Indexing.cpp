//===- Indexing.cpp - Runtime shape functions of the indexing ops ---------===//
#include "shapes/Indexing.h"

namespace gopt::runtime {

namespace {

Status requireIndexType(DType type) {
  if (type != DType::kI32 && type != DType::kI64)
    return invalidArgument("indices must be i32 or i64, got ", dtypeName(type));
  return Status::success();
}

Status requireNumeric(DType type, const char *what) {
  if (type == DType::kBool)
    return invalidArgument(what, " must have a numeric element type, got ",
                           dtypeName(type));
  return Status::success();
}

/// Operand `i` has operand 0's element type.
Status requireTypeOfX(const DTypes &types, size_t i, const char *what) {
  if (types[i] != types[0])
    return invalidArgument(what, " has element type ", dtypeName(types[i]),
                           ", x has ", dtypeName(types[0]));
  return Status::success();
}

} // namespace

Status gatherShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireIndexType(types[1]));
  return toStatus(
      shape::inferGatherShape(in[0], in[1], attrs.getInt("axis"), out[0]));
}

Status gatherGradShape(const OpAttrs &attrs, const Shapes &in,
                       const DTypes &types, Shapes &out) {
  if (!isFloatDType(types[0]))
    return invalidArgument("x must have a floating-point element type, got ",
                           dtypeName(types[0]));
  GOPT_RETURN_IF_ERROR(requireIndexType(types[1]));
  GOPT_RETURN_IF_ERROR(requireTypeOfX(types, 2, "dy"));
  return toStatus(shape::inferGatherGradShape(in[0], in[1], in[2],
                                              attrs.getInt("axis"), out[0]));
}

Status gatherElementsShape(const OpAttrs &attrs, const Shapes &in,
                           const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireIndexType(types[1]));
  return toStatus(shape::inferGatherElementsShape(
      in[0], in[1], attrs.getInt("axis"), out[0]));
}

Status gatherNDShape(const OpAttrs &attrs, const Shapes &in,
                     const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireIndexType(types[1]));
  return toStatus(shape::inferGatherNDShape(
      in[0], in[1], attrs.getInt("batch_dims"), out[0]));
}

Status scatterElementsShape(const OpAttrs &attrs, const Shapes &in,
                            const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireNumeric(types[0], "x"));
  GOPT_RETURN_IF_ERROR(requireIndexType(types[1]));
  GOPT_RETURN_IF_ERROR(requireTypeOfX(types, 2, "updates"));
  return toStatus(shape::inferScatterElementsShape(
      in[0], in[1], in[2], attrs.getInt("axis"), attrs.getString("reduction"),
      out[0]));
}

Status scatterNDShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireNumeric(types[0], "x"));
  GOPT_RETURN_IF_ERROR(requireIndexType(types[1]));
  GOPT_RETURN_IF_ERROR(requireTypeOfX(types, 2, "updates"));
  return toStatus(shape::inferScatterNDShape(
      in[0], in[1], in[2], attrs.getString("reduction"), out[0]));
}

Status argReduceShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireNumeric(types[0], "x"));
  return toStatus(shape::inferArgReduceShape(
      in[0], attrs.getInt("axis"), attrs.getBool("keep_dims"), out[0]));
}

Status tfIdfVectorizerShape(const OpAttrs &attrs, const Shapes &in,
                            const DTypes &types, Shapes &out) {
  if (types[0] != DType::kI64 && types[0] != DType::kI32)
    return invalidArgument("x must be i32 or i64, got ", dtypeName(types[0]));
  std::vector<int64_t> counts = attrs.getInts("ngram_counts");
  std::vector<int64_t> indexes = attrs.getInts("ngram_indexes");
  std::vector<int64_t> pool = attrs.getInts("pool_int64s");
  size_t weights = attrs.has("weights") ? attrs.getFloats("weights").size() : 0;
  return toStatus(shape::inferTfIdfVectorizerShape(
      in[0], attrs.getInt("min_gram_length"), attrs.getInt("max_gram_length"),
      attrs.getInt("max_skip_count"), counts, indexes, pool, weights, out[0]));
}

Status cumSumShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                   Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireNumeric(types[0], "x"));
  return toStatus(shape::inferCumSumShape(in[0], attrs.getInt("axis"), out[0]));
}

Status topKShape(const OpAttrs &attrs, const Shapes &in, const DTypes &types,
                 Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireNumeric(types[0], "x"));
  GOPT_RETURN_IF_ERROR(toStatus(shape::inferTopKShape(
      in[0], attrs.getInt("k"), attrs.getInt("axis"), out[0])));
  out[1] = out[0];
  return Status::success();
}

} // namespace gopt::runtime
