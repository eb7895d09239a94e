//===- Norm.cpp - Runtime shape functions of the normalization ops --------===//
//
// layer_norm, instance_norm and lrn over the shared shape functions.
//
//===----------------------------------------------------------------------===//
#include "Norm.h"

namespace gopt::runtime {

Status layerNormShape(const OpAttrs &attrs, const Shapes &in,
                      const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 3));
  return toStatus(shape::inferLayerNormShape(in[0], in[1], in[2],
                                             attrs.getInt("axis"), out[0]));
}

Status instanceNormShape(const OpAttrs &attrs, const Shapes &in,
                         const DTypes &types, Shapes &out) {
  GOPT_RETURN_IF_ERROR(requireSameTypes(types, 3));
  int64_t rank = static_cast<int64_t>(in[0].size());
  return toStatus(shape::inferInstanceNormShape(
      in[0], in[1], in[2],
      shape::normalizationChannelAxis(attrs.getString("data_format"), rank),
      out[0]));
}

Status lrnShape(const OpAttrs &attrs, const Shapes &in, const DTypes &,
                Shapes &out) {
  return toStatus(shape::inferLrnShape(in[0], attrs.getInt("size"), out[0]));
}

} // namespace gopt::runtime
