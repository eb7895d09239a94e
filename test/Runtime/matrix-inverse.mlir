// RUN: not gopt-run %s --warmup 0 --iterations 1 2>&1 | FileCheck %s

/// matrix_inverse refuses a singular matrix at run time with an error
/// naming the op and the matrix (the second one here has a zero row); its
/// values are checked against finite differences of det in
/// grad-check-det.mlir (det's gradient is det(x) * inverse(x)^T).
// CHECK: inverse{{.*}}matrix 1 of x is singular
func.func @main(%x: tensor<2x2x2xf32> {gopt.name = "x"}) -> (tensor<2x2x2xf32> {gopt.name = "y"}) {
  %mask = gopt.constant dense<[[[1.0, 1.0], [1.0, 1.0]], [[0.0, 0.0], [1.0, 1.0]]]> : tensor<2x2x2xf32>
  %ones = gopt.constant dense<[[[2.0, 0.0], [0.0, 2.0]], [[0.0, 0.0], [0.0, 0.0]]]> : tensor<2x2x2xf32>
  %m = gopt.mul %x, %mask : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %n = gopt.add %m, %ones : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %y = gopt.matrix_inverse %n : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32> loc("inverse")
  return %y : tensor<2x2x2xf32>
}
