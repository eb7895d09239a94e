// RUN: gopt-run %s --grad-check --loss none --batch 4 | FileCheck %s

/// Training-form batch norm (batch statistics) between a conv and a relu.
// CHECK: grad-check
// CHECK-DAG: conv.w {{.*}}: ok
// CHECK-DAG: bn.scale {{.*}}: ok
// CHECK-DAG: bn.offset {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<?x2x4x4xf32> {gopt.name = "x"}, %t: tensor<?x3x4x4xf32> {gopt.name = "t"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %w = gopt.constant dense<[[[[0.3]], [[-0.2]]], [[[0.1]], [[0.4]]], [[[-0.3]], [[0.2]]]]> : tensor<3x2x1x1xf32> loc("conv.w")
  %scale = gopt.constant dense<[1.2, 0.8, 1.5]> : tensor<3xf32> loc("bn.scale")
  %offset = gopt.constant dense<[0.1, -0.2, 0.05]> : tensor<3xf32> loc("bn.offset")
  %mean = gopt.constant dense<0.0> : tensor<3xf32>
  %var = gopt.constant dense<1.0> : tensor<3xf32>
  %0 = gopt.conv2d %x, %w {data_format = "NCHW", filter_format = "OIHW"} : (tensor<?x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<?x3x4x4xf32>
  %y, %bm, %bv, %rm, %rv = gopt.batch_norm %0, %scale, %offset, %mean, %var {data_format = "NCHW", training = true, epsilon = 1.0e-3 : f32}
      : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %1 = gopt.sigmoid %y : (tensor<?x3x4x4xf32>) -> tensor<?x3x4x4xf32>
  %loss = gopt.mse_loss %1, %t : (tensor<?x3x4x4xf32>, tensor<?x3x4x4xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

/// An inference-form batch norm from an exported model is trained in
/// training form: its gradients check too, and a training run updates the
/// running statistics (saved with the parameters).
// RUN: gopt-run %S/Inputs/conv-bn-classifier.mlir --grad-check --batch 4 | FileCheck %s --check-prefix=INFER
// INFER-DAG: conv.weight {{.*}}: ok
// INFER-DAG: bn.weight {{.*}}: ok
// INFER-DAG: bn.bias {{.*}}: ok
// INFER-DAG: fc.weight {{.*}}: ok
// INFER: gradients match finite differences
// RUN: rm -rf %t.params
// RUN: gopt-run %S/Inputs/conv-bn-classifier.mlir --train --data fake --batch 4 --steps 2 --save-params %t.params | FileCheck %s --check-prefix=TRAIN
// TRAIN: compiled the training step in {{.*}}: 6 parameters, 15 state tensors
// TRAIN: saved 6 parameters
// RUN: ls %t.params | FileCheck %s --check-prefix=SAVED
// SAVED: bn.running_mean.npy
// SAVED: bn.running_var.npy
