// RUN: gopt-opt %s --gopt-data-parallel='sync-batch-norm=true' | FileCheck %s --check-prefix=SYNC
// RUN: gopt-opt %s --gopt-data-parallel | FileCheck %s --check-prefix=LOCAL

/// sync-batch-norm marks the training-form batch_norm and its gradient
/// cross_replica; the inference-form one keeps its own statistics. Without
/// the option nothing is marked.
// SYNC-LABEL: func @step
// SYNC: gopt.batch_norm %{{.*}} {cross_replica = true, data_format = "NCHW", training = true}
// SYNC-NEXT: gopt.batch_norm %{{.*}} {data_format = "NCHW"} :
// SYNC-NEXT: gopt.batch_norm_grad %{{.*}} {cross_replica = true, data_format = "NCHW"}
// SYNC-NEXT: gopt.all_reduce
// LOCAL-NOT: cross_replica
func.func @step(%x: tensor<4x3x2x2xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %dy: tensor<4x3x2x2xf32>)
    -> (tensor<4x3x2x2xf32>, tensor<4x3x2x2xf32>, tensor<3xf32> {gopt.gradient_of = "s"}, tensor<3xf32> {gopt.gradient_of = "o"}) {
  %y, %bm, %bv, %rm, %rv = gopt.batch_norm %x, %s, %o, %m, %v {training = true, data_format = "NCHW"}
      : (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %z = gopt.batch_norm %x, %s, %o, %m, %v {data_format = "NCHW"}
      : (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x2x2xf32>
  %dx, %ds, %do = gopt.batch_norm_grad %dy, %x, %s, %bm, %bv {data_format = "NCHW"}
      : (tensor<4x3x2x2xf32>, tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>)
  return %y, %z, %ds, %do : tensor<4x3x2x2xf32>, tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>
}

