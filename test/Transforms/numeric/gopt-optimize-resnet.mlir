// REQUIRES: gopt-run-mlir
// RUN: gopt-opt %S/../gopt-optimize.mlir -verify-each --gopt-optimize=target=gpu -o %t.mlir
// RUN: gopt-run %S/../gopt-optimize.mlir --compare %t.mlir --atol 1e-5 --rtol 1e-4

/// The NHWC ResNet of ../gopt-optimize.mlir, optimized (BN fused and folded,
/// NCHW, conv + bias + relu fused), computes the same softmax outputs.
