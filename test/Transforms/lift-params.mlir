// RUN: gopt-opt %s -split-input-file --gopt-lift-params | FileCheck %s
// RUN: gopt-opt %s -split-input-file --gopt-lift-params=report=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

/// Weights, biases and BN scale/offset become parameter arguments carrying
/// their values; BN statistics, a shape constant and a scalar stay.
// REPORT: remark: gopt-lift-params: lifted 5 parameters (23 values)
// CHECK-LABEL: func @dense_and_bn
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x4xf32> {gopt.name = "x"}
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x3xf32> {gopt.initial_value = dense<1.000000e+00> : tensor<4x3xf32>, gopt.name = "fc.weight", gopt.state = "param"}
// CHECK-SAME: %[[B:[^:]*]]: tensor<3xf32> {gopt.initial_value = dense<[1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<3xf32>, gopt.name = "fc.bias", gopt.state = "param"}
// CHECK-SAME: {gopt.initial_value = dense<1.000000e+00> : tensor<2xf32>, gopt.name = "bn.scale", gopt.state = "param"}
// CHECK-SAME: {gopt.initial_value = dense<0.000000e+00> : tensor<2xf32>, gopt.name = "bn.offset", gopt.state = "param"}
// CHECK-SAME: {gopt.initial_value = dense<5.000000e-01> : tensor<2x2x1x1xf32>, gopt.name = "param4", gopt.state = "param"}
// CHECK: gopt.constant dense<2.000000e+00> : tensor<f32>
// CHECK: gopt.matmul %[[X]], %[[W]]
// CHECK: gopt.add %{{.*}}, %[[B]]
// CHECK: gopt.constant dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>
func.func @dense_and_bn(%x: tensor<?x4xf32> {gopt.name = "x"}, %img: tensor<?x2x3x3xf32> {gopt.name = "img"}) -> (tensor<?x3xf32>, tensor<?x2x3x3xf32>) {
  %w = gopt.constant dense<1.0> : tensor<4x3xf32> loc("fc.weight")
  %b = gopt.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32> loc("fc.bias")
  %two = gopt.constant dense<2.0> : tensor<f32>
  %0 = gopt.matmul %x, %w : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %1 = gopt.add %0, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %2 = gopt.mul %1, %two : (tensor<?x3xf32>, tensor<f32>) -> tensor<?x3xf32>
  %scale = gopt.constant dense<1.0> : tensor<2xf32> loc("bn.scale")
  %offset = gopt.constant dense<0.0> : tensor<2xf32> loc("bn.offset")
  %stats = gopt.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %filter = gopt.constant dense<0.5> : tensor<2x2x1x1xf32>
  %c = gopt.conv2d %img, %filter {data_format = "NCHW", filter_format = "OIHW"} : (tensor<?x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<?x2x3x3xf32>
  %3 = gopt.batch_norm %c, %scale, %offset, %stats, %stats {data_format = "NCHW"} : (tensor<?x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x3x3xf32>
  return %2, %3 : tensor<?x3xf32>, tensor<?x2x3x3xf32>
}

// -----

/// Two weights that import under one name get distinct parameter names;
/// a constant added to a constant is not a bias.
// REPORT: remark: gopt-lift-params: lifted 2 parameters (8 values)
// CHECK-LABEL: func @names
// CHECK-SAME: gopt.name = "w", gopt.state = "param"
// CHECK-SAME: gopt.name = "w_1", gopt.state = "param"
// CHECK: gopt.constant dense<1.000000e+00> : tensor<4xf32>
func.func @names(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<4xf32>) {
  %w1 = gopt.constant dense<1.0> : tensor<2x2xf32> loc("w")
  %w2 = gopt.constant dense<2.0> : tensor<2x2xf32> loc("w")
  %0 = gopt.matmul %x, %w1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = gopt.matmul %0, %w2 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %a = gopt.constant dense<1.0> : tensor<4xf32>
  %b = gopt.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1, %b : tensor<2x2xf32>, tensor<4xf32>
}

// -----

/// What ODS lists as trainable (trainableOperands): layer_norm's and
/// instance_norm's scale and bias, PReLU's slope; a scalar added to a
/// computed value is an offset, not a bias, and pow's exponent is no weight.
// REPORT: remark: gopt-lift-params: lifted 5 parameters (12 values)
// CHECK-LABEL: func @listed_by_ods
// CHECK-SAME: gopt.name = "ln.scale", gopt.state = "param"
// CHECK-SAME: gopt.name = "ln.bias", gopt.state = "param"
// CHECK-SAME: gopt.name = "in.scale", gopt.state = "param"
// CHECK-SAME: gopt.name = "in.bias", gopt.state = "param"
// CHECK-SAME: gopt.name = "slope", gopt.state = "param"
// CHECK-DAG: gopt.constant dense<5.000000e-01> : tensor<1xf32>
// CHECK-DAG: gopt.constant dense<2.000000e+00> : tensor<3xf32>
func.func @listed_by_ods(%x: tensor<2x2x3xf32>) -> tensor<2x2x3xf32> {
  %g = gopt.constant dense<1.0> : tensor<3xf32> loc("ln.scale")
  %b = gopt.constant dense<0.0> : tensor<3xf32> loc("ln.bias")
  %gi = gopt.constant dense<1.0> : tensor<2xf32> loc("in.scale")
  %bi = gopt.constant dense<0.0> : tensor<2xf32> loc("in.bias")
  %slope = gopt.constant dense<0.25> : tensor<2x1xf32> loc("slope")
  %offset = gopt.constant dense<0.5> : tensor<1xf32> loc("offset")
  %e = gopt.constant dense<2.0> : tensor<3xf32> loc("exponent")
  %0 = gopt.layer_norm %x, %g, %b : (tensor<2x2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x2x3xf32>
  %1 = gopt.instance_norm %0, %gi, %bi {data_format = "NCHW"} : (tensor<2x2x3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x3xf32>
  %2 = gopt.prelu %1, %slope : (tensor<2x2x3xf32>, tensor<2x1xf32>) -> tensor<2x2x3xf32>
  %3 = gopt.add %2, %offset : (tensor<2x2x3xf32>, tensor<1xf32>) -> tensor<2x2x3xf32>
  %4 = gopt.pow %3, %e : (tensor<2x2x3xf32>, tensor<3xf32>) -> tensor<2x2x3xf32>
  return %4 : tensor<2x2x3xf32>
}

// -----

/// PyTorch's GroupNorm export: the affine scale and bias reach their mul
/// and add through an unsqueeze (a reshape), einsum's weight reaches its
/// matmul through a transpose; all three are parameters. The instance
/// norm's unit scale and zero bias came from ONNX Constant nodes
/// (gopt.fixed): they stay constants.
// REPORT: remark: gopt-lift-params: lifted 3 parameters (16 values)
// CHECK-LABEL: func @through_reshapes
// CHECK-SAME: gopt.name = "mix", gopt.state = "param"
// CHECK-SAME: gopt.name = "gn.weight", gopt.state = "param"
// CHECK-SAME: gopt.name = "gn.bias", gopt.state = "param"
// CHECK: gopt.constant {gopt.fixed} dense<1.000000e+00> : tensor<2xf32>
// CHECK: gopt.constant {gopt.fixed} dense<0.000000e+00> : tensor<2xf32>
func.func @through_reshapes(%x: tensor<?x4x3xf32> {gopt.name = "x"}) -> tensor<?x3x2xf32> {
  %mix = gopt.constant dense<0.5> : tensor<2x4xf32> loc("mix")
  %w = gopt.constant dense<1.0> : tensor<4xf32> loc("gn.weight")
  %b = gopt.constant dense<0.0> : tensor<4xf32> loc("gn.bias")
  %ones = gopt.constant {gopt.fixed} dense<1.0> : tensor<2xf32> loc("Constant_1")
  %zeros = gopt.constant {gopt.fixed} dense<0.0> : tensor<2xf32> loc("Constant_2")
  %g = gopt.reshape %x {shape = array<i64: -1, 2, 6>} : (tensor<?x4x3xf32>) -> tensor<?x2x6xf32>
  %n = gopt.instance_norm %g, %ones, %zeros {data_format = "NCHW"} : (tensor<?x2x6xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x6xf32>
  %n4 = gopt.reshape %n {shape = array<i64: -1, 4, 3>} : (tensor<?x2x6xf32>) -> tensor<?x4x3xf32>
  %w1 = gopt.reshape %w {shape = array<i64: 4, 1>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %b1 = gopt.reshape %b {shape = array<i64: 4, 1>} : (tensor<4xf32>) -> tensor<4x1xf32>
  %s = gopt.mul %n4, %w1 : (tensor<?x4x3xf32>, tensor<4x1xf32>) -> tensor<?x4x3xf32>
  %a = gopt.add %s, %b1 : (tensor<?x4x3xf32>, tensor<4x1xf32>) -> tensor<?x4x3xf32>
  %t = gopt.transpose %a {perm = array<i64: 0, 2, 1>} : (tensor<?x4x3xf32>) -> tensor<?x3x4xf32>
  %mt = gopt.transpose %mix {perm = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %y = gopt.matmul %t, %mt : (tensor<?x3x4xf32>, tensor<4x2xf32>) -> tensor<?x3x2xf32>
  return %y : tensor<?x3x2xf32>
}
