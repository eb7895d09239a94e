// An average pool moved in front of the 1x1 conv it follows
// (gopt-fuse-conv-bias-activation) computes the same values, on the
// reference backend and on the CPU backend's oneDNN kernels.
// RUN: gopt-run %s --pipeline 'builtin.module(func.func(gopt-fuse-conv-bias-activation))' --compare %s --compare-backend cpu --warmup 0 --iterations 1 --batch 2 | FileCheck %s
// RUN: gopt-run %s --pipeline 'builtin.module(func.func(gopt-fuse-conv-bias-activation))' --backend reference --compare %s --warmup 0 --iterations 1 --batch 2 | FileCheck %s
// RUN: gopt-opt %s -gopt-fuse-conv-bias-activation | FileCheck %s --check-prefix=IR
// IR: gopt.avg_pool
// IR-NEXT: gopt.conv2d
// CHECK: outputs match
func.func @main(%x: tensor<?x32x14x14xf32>) -> tensor<?x16x7x7xf32> {
  %w = gopt.constant dense<0.03125> : tensor<16x32x1x1xf32>
  %b = gopt.constant dense<0.5> : tensor<16xf32>
  %c = gopt.conv2d %x, %w, %b {data_format = "NCHW", filter_format = "OIHW"} : (tensor<?x32x14x14xf32>, tensor<16x32x1x1xf32>, tensor<16xf32>) -> tensor<?x16x14x14xf32>
  %p = gopt.avg_pool %c {data_format = "NCHW", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x16x14x14xf32>) -> tensor<?x16x7x7xf32>
  return %p : tensor<?x16x7x7xf32>
}
