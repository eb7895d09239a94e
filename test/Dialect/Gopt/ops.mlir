// RUN: gopt-opt %s | gopt-opt | FileCheck %s
// RUN: gopt-opt %s -mlir-print-op-generic | gopt-opt | FileCheck %s
// RUN: gopt-opt %s -emit-bytecode | gopt-opt | FileCheck %s

/// Every op parses, prints and re-parses (also through the generic form and
/// bytecode), keeping its attributes.

// CHECK-LABEL: func @constant_and_plumbing
func.func @constant_and_plumbing(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<2xi64>, tensor<?x4xf16>) {
  // CHECK: gopt.constant dense<1.000000e+00> : tensor<4xf32>
  %c = gopt.constant dense<1.0> : tensor<4xf32>
  // CHECK: gopt.identity %{{.*}} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %0 = gopt.identity %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: gopt.stop_gradient
  %1 = gopt.stop_gradient %0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: gopt.check_numerics %{{.*}} {message = "after stop_gradient"}
  %2 = gopt.check_numerics %1 {message = "after stop_gradient"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: gopt.dropout %{{.*}} {ratio = 2.500000e-01 : f32, training = true}
  %3 = gopt.dropout %2 {ratio = 0.25 : f32, training = true} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: gopt.add
  %4 = gopt.add %3, %c : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: gopt.shape %{{.*}} : (tensor<?x4xf32>) -> tensor<2xi64>
  %s = gopt.shape %4 : (tensor<?x4xf32>) -> tensor<2xi64>
  // CHECK: gopt.cast %{{.*}} : (tensor<?x4xf32>) -> tensor<?x4xf16>
  %h = gopt.cast %4 : (tensor<?x4xf32>) -> tensor<?x4xf16>
  return %4, %s, %h : tensor<?x4xf32>, tensor<2xi64>, tensor<?x4xf16>
}

// CHECK-LABEL: func @shape_ops
func.func @shape_ops(%x: tensor<?x512x1x1xf32>, %y: tensor<4x6xi32>) -> (tensor<?x512xf32>, tensor<?x512xf32>, tensor<1x512x1x?xf32>, tensor<?x1024x1x1xf32>, tensor<2x3xi32>, tensor<6x8xi32>) {
  // CHECK: gopt.reshape %{{.*}} {shape = array<i64: -1, 512>}
  %0 = gopt.reshape %x {shape = array<i64: -1, 512>} : (tensor<?x512x1x1xf32>) -> tensor<?x512xf32>
  // CHECK: gopt.flatten %{{.*}} :
  %1 = gopt.flatten %x {axis = 1 : i64} : (tensor<?x512x1x1xf32>) -> tensor<?x512xf32>
  // CHECK: gopt.transpose %{{.*}} {perm = array<i64: 2, 1, 3, 0>}
  %2 = gopt.transpose %x {perm = array<i64: 2, 1, 3, 0>} : (tensor<?x512x1x1xf32>) -> tensor<1x512x1x?xf32>
  // CHECK: gopt.concat %{{.*}}, %{{.*}} {axis = 1 : i64}
  %3 = gopt.concat %x, %x {axis = 1 : i64} : (tensor<?x512x1x1xf32>, tensor<?x512x1x1xf32>) -> tensor<?x1024x1x1xf32>
  // CHECK: gopt.slice %{{.*}} {ends = array<i64: 4, 6>, starts = array<i64: 1, 0>, steps = array<i64: 2, 2>}
  %4 = gopt.slice %y {starts = array<i64: 1, 0>, ends = array<i64: 4, 6>, steps = array<i64: 2, 2>} : (tensor<4x6xi32>) -> tensor<2x3xi32>
  // CHECK: gopt.pad %{{.*}} {mode = "edge", pads = array<i64: 1, 1, 0, 2>}
  %5 = gopt.pad %y {pads = array<i64: 1, 1, 0, 2>, mode = "edge"} : (tensor<4x6xi32>) -> tensor<6x8xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x512xf32>, tensor<?x512xf32>, tensor<1x512x1x?xf32>, tensor<?x1024x1x1xf32>, tensor<2x3xi32>, tensor<6x8xi32>
}

// CHECK-LABEL: func @resnet_block_nhwc
func.func @resnet_block_nhwc(%x: tensor<?x56x56x64xf32>) -> tensor<?x56x56x64xf32> {
  %w = gopt.constant dense<0.01> : tensor<3x3x64x64xf32>
  %c = gopt.constant dense<1.0> : tensor<64xf32>
  // CHECK: gopt.conv2d %{{.*}}, %{{.*}} {padding = "SAME", strides = array<i64: 1, 1>}
  %0 = gopt.conv2d %x, %w {strides = array<i64: 1, 1>, padding = "SAME"} : (tensor<?x56x56x64xf32>, tensor<3x3x64x64xf32>) -> tensor<?x56x56x64xf32>
  // CHECK: gopt.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.001000e-05 : f32}
  %1 = gopt.batch_norm %0, %c, %c, %c, %c {epsilon = 1.001e-5 : f32} : (tensor<?x56x56x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x56x56x64xf32>
  // CHECK: gopt.relu
  %2 = gopt.relu %1 : (tensor<?x56x56x64xf32>) -> tensor<?x56x56x64xf32>
  // CHECK: gopt.conv2d %{{.*}}, %{{.*}}, %{{.*}} {activation = "relu", dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
  %3 = gopt.conv2d %2, %w, %c {pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, padding = "EXPLICIT", activation = "relu"} : (tensor<?x56x56x64xf32>, tensor<3x3x64x64xf32>, tensor<64xf32>) -> tensor<?x56x56x64xf32>
  // CHECK: gopt.bias_add %{{.*}}, %{{.*}} :
  %4 = gopt.bias_add %3, %c {data_format = "NHWC"} : (tensor<?x56x56x64xf32>, tensor<64xf32>) -> tensor<?x56x56x64xf32>
  // CHECK: gopt.add
  %5 = gopt.add %4, %x : (tensor<?x56x56x64xf32>, tensor<?x56x56x64xf32>) -> tensor<?x56x56x64xf32>
  // CHECK: gopt.relu
  %6 = gopt.relu %5 : (tensor<?x56x56x64xf32>) -> tensor<?x56x56x64xf32>
  return %6 : tensor<?x56x56x64xf32>
}

// CHECK-LABEL: func @resnet_stem_nchw
func.func @resnet_stem_nchw(%x: tensor<?x3x224x224xf32>) -> (tensor<?x1000xf32>, tensor<?x64x1x1xf32>) {
  %w = gopt.constant dense<0.01> : tensor<64x3x7x7xf32>
  %c = gopt.constant dense<1.0> : tensor<64xf32>
  %fc = gopt.constant dense<0.01> : tensor<1000x64xf32>
  // Default-valued attributes (groups = 1) are elided when printing.
  // CHECK: gopt.conv2d {{.*}}{data_format = "NCHW", filter_format = "OIHW", pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>}
  %0 = gopt.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, data_format = "NCHW", filter_format = "OIHW", groups = 1 : i64} : (tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<?x64x112x112xf32>
  // CHECK: gopt.batch_norm {{.*}}data_format = "NCHW", epsilon = 9.99999974E-6 : f32, momentum = 1.000000e-01 : f32
  %1 = gopt.batch_norm %0, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, momentum = 0.1 : f32, data_format = "NCHW"} : (tensor<?x64x112x112xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64x112x112xf32>
  // CHECK: gopt.max_pool {{.*}}{data_format = "NCHW", kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>
  %2 = gopt.max_pool %1 {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, data_format = "NCHW", ceil_mode = false} : (tensor<?x64x112x112xf32>) -> tensor<?x64x56x56xf32>
  // CHECK: gopt.avg_pool {{.*}}count_include_pad = true, data_format = "NCHW", kernel = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 2, 2>
  %3 = gopt.avg_pool %2 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = "VALID", count_include_pad = true, data_format = "NCHW"} : (tensor<?x64x56x56xf32>) -> tensor<?x64x28x28xf32>
  // CHECK: gopt.global_avg_pool {{.*}}data_format = "NCHW"
  %4 = gopt.global_avg_pool %3 {data_format = "NCHW"} : (tensor<?x64x28x28xf32>) -> tensor<?x64x1x1xf32>
  %5 = gopt.flatten %4 : (tensor<?x64x1x1xf32>) -> tensor<?x64xf32>
  // CHECK: gopt.matmul {{.*}}transpose_b = true
  %6 = gopt.matmul %5, %fc {transpose_b = true} : (tensor<?x64xf32>, tensor<1000x64xf32>) -> tensor<?x1000xf32>
  // CHECK: gopt.softmax %{{.*}} :
  %7 = gopt.softmax %6 {axis = -1 : i64} : (tensor<?x1000xf32>) -> tensor<?x1000xf32>
  // CHECK: gopt.log_softmax {{.*}}axis = 1 : i64
  %8 = gopt.log_softmax %7 {axis = 1 : i64} : (tensor<?x1000xf32>) -> tensor<?x1000xf32>
  return %8, %4 : tensor<?x1000xf32>, tensor<?x64x1x1xf32>
}

// CHECK-LABEL: func @training_batch_norm
func.func @training_batch_norm(%x: tensor<8x4x4x16xf32>, %c: tensor<16xf32>) -> (tensor<8x4x4x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  // CHECK: gopt.batch_norm {{.*}}training = true{{.*}} -> (tensor<8x4x4x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  %y, %m, %v, %rm, %rv = gopt.batch_norm %x, %c, %c, %c, %c {training = true} : (tensor<8x4x4x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x4x4x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %y, %m, %v, %rm, %rv : tensor<8x4x4x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<2x3xi32>) -> tensor<2x3xf32> {
  // CHECK: gopt.sub
  %0 = gopt.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.mul
  %1 = gopt.mul %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.div
  %2 = gopt.div %1, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.max
  %3 = gopt.max %2, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.min
  %4 = gopt.min %3, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.pow
  %5 = gopt.pow %4, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.squared_difference
  %6 = gopt.squared_difference %5, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.add {{.*}} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %ii = gopt.add %i, %i : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  // CHECK: gopt.relu6
  %7 = gopt.relu6 %6 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.sigmoid
  %8 = gopt.sigmoid %7 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.tanh
  %9 = gopt.tanh %8 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.gelu {{.*}}approximate = "tanh"
  %10 = gopt.gelu %9 {approximate = "tanh"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.exp
  %11 = gopt.exp %10 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.log
  %12 = gopt.log %11 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.sqrt
  %13 = gopt.sqrt %12 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.rsqrt
  %14 = gopt.rsqrt %13 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.neg
  %15 = gopt.neg %14 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.abs
  %16 = gopt.abs %15 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.erf
  %17 = gopt.erf %16 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.leaky_relu {{.*}}alpha = 2.000000e-01 : f32
  %18 = gopt.leaky_relu %17 {alpha = 0.2 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: gopt.clip {{.*}}max = 6.000000e+00 : f32, min = -1.000000e+00 : f32
  %19 = gopt.clip %18 {min = -1.0 : f32, max = 6.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %19 : tensor<2x3xf32>
}

// CHECK-LABEL: func @reductions_and_device
func.func @reductions_and_device(%x: tensor<?x7x7x64xbf16>) -> (tensor<?x1x1x64xbf16>, tensor<?x64xbf16>, tensor<bf16>) {
  // CHECK: gopt.reduce_mean {{.*}}axes = array<i64: 1, 2>, device = "gpu", keep_dims = true
  %0 = gopt.reduce_mean %x {axes = array<i64: 1, 2>, keep_dims = true, device = "gpu"} : (tensor<?x7x7x64xbf16>) -> tensor<?x1x1x64xbf16>
  // CHECK: gopt.reduce_max {{.*}}axes = array<i64: 1, -2>, device = "cpu"
  %1 = gopt.reduce_max %x {axes = array<i64: 1, -2>, device = "cpu"} : (tensor<?x7x7x64xbf16>) -> tensor<?x64xbf16>
  // CHECK: gopt.reduce_sum {{.*}}axes = array<i64>
  %2 = gopt.reduce_sum %x {axes = array<i64>} : (tensor<?x7x7x64xbf16>) -> tensor<bf16>
  // CHECK: gopt.reduce_min {{.*}}axes = array<i64: 3>, keep_dims = true} : (tensor<?x7x7x64xbf16>) -> tensor<?x7x7x1xbf16>
  %3 = gopt.reduce_min %x {axes = array<i64: 3>, keep_dims = true} : (tensor<?x7x7x64xbf16>) -> tensor<?x7x7x1xbf16>
  // CHECK: gopt.reduce_prod {{.*}}axes = array<i64: 0>} : (tensor<?x7x7x64xbf16>) -> tensor<7x7x64xbf16>
  %4 = gopt.reduce_prod %x {axes = array<i64: 0>} : (tensor<?x7x7x64xbf16>) -> tensor<7x7x64xbf16>
  return %0, %1, %2 : tensor<?x1x1x64xbf16>, tensor<?x64xbf16>, tensor<bf16>
}

// CHECK-LABEL: func @transfers
func.func @transfers(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // CHECK: gopt.transfer %{{.*}} {from = "cpu", to = "gpu"}
  %0 = gopt.transfer %x {from = "cpu", to = "gpu"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = gopt.relu %0 {device = "gpu"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: gopt.transfer %{{.*}} {from = "gpu", to = "cpu"}
  %2 = gopt.transfer %1 {from = "gpu", to = "cpu"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %2 : tensor<?x8xf32>
}

// CHECK-LABEL: func @dequantize
func.func @dequantize(%q: tensor<64x3x7x7xi8>, %s: tensor<64xf32>, %m: tensor<?x1000xi8>, %t: tensor<1xf32>) -> (tensor<64x3x7x7xf32>, tensor<?x1000xf32>) {
  // CHECK: gopt.dequantize %{{.*}}, %{{.*}} : (tensor<64x3x7x7xi8>, tensor<64xf32>) -> tensor<64x3x7x7xf32>
  %0 = gopt.dequantize %q, %s {axis = 0 : i64} : (tensor<64x3x7x7xi8>, tensor<64xf32>) -> tensor<64x3x7x7xf32>
  // CHECK: gopt.dequantize %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<?x1000xi8>, tensor<1xf32>) -> tensor<?x1000xf32>
  %1 = gopt.dequantize %m, %t {axis = -1 : i64} : (tensor<?x1000xi8>, tensor<1xf32>) -> tensor<?x1000xf32>
  return %0, %1 : tensor<64x3x7x7xf32>, tensor<?x1000xf32>
}
