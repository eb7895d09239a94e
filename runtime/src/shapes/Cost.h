//===- Cost.h - Arithmetic of the compute-heavy ops -------------*- C++ -*-===//
//
// Floating-point operations per run (a multiply-add counts 2) from the
// resolved shapes, named by the ops' `flopFunction` in ODS and set in the
// generated op table: what profiles and the roofline report divide by time.
// Only the ops whose arithmetic dominates a model (convolutions, matmuls,
// recurrences) have one; data movement and elementwise ops are
// memory-bound and left at zero.
//
//===----------------------------------------------------------------------===//
#ifndef GOPT_RUNTIME_SRC_SHAPES_COST_H
#define GOPT_RUNTIME_SRC_SHAPES_COST_H

#include "gopt/runtime/OpSchema.h"

namespace gopt::runtime {

/// conv2d: 2 * |output| * |filter| / output channels (data_format's axis).
double conv2dFlops(const OpAttrs &attrs, const std::vector<Shape> &in,
                   const std::vector<Shape> &out);
/// conv3d (NCDHW): as conv2d, channels on axis 1.
double conv3dFlops(const OpAttrs &attrs, const std::vector<Shape> &in,
                   const std::vector<Shape> &out);
/// conv2d_transpose: 2 * |input| * |filter| / input channels.
double conv2dTransposeFlops(const OpAttrs &attrs, const std::vector<Shape> &in,
                            const std::vector<Shape> &out);
/// conv3d_transpose (NCDHW).
double conv3dTransposeFlops(const OpAttrs &attrs, const std::vector<Shape> &in,
                            const std::vector<Shape> &out);
/// conv2d_backprop_input (dy, filter): the forward conv's count for dy.
double conv2dBackpropInputFlops(const OpAttrs &attrs,
                                const std::vector<Shape> &in,
                                const std::vector<Shape> &out);
/// conv2d_backprop_filter (input, dy) -> dfilter: the forward conv's count.
double conv2dBackpropFilterFlops(const OpAttrs &attrs,
                                 const std::vector<Shape> &in,
                                 const std::vector<Shape> &out);
/// matmul: 2 * |result| * the contracted extent.
double matmulFlops(const OpAttrs &attrs, const std::vector<Shape> &in,
                   const std::vector<Shape> &out);
/// lstm, gru, rnn (x, w, r, ...): every step of every sequence multiplies
/// the input by w and the hidden state by r: 2 * (|x| / input size) *
/// (|w| + |r|).
double recurrentFlops(const OpAttrs &attrs, const std::vector<Shape> &in,
                      const std::vector<Shape> &out);

} // namespace gopt::runtime

#endif // GOPT_RUNTIME_SRC_SHAPES_COST_H
