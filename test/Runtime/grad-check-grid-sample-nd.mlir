// RUN: gopt-run %s --grad-check --loss none --atol 2e-4 --rtol 1e-2 | FileCheck %s

/// Autodiff of grid_sample over volumes ([N, C, D, H, W]) and 1-D signals
/// ([N, C, W]) against finite differences on the reference kernels:
/// trilinear with zeros, tricubic with border and align_corners, linear
/// with reflection, nearest (x only). The .b constants shift the inputs,
/// so their gradients are the ops' dx and dgrid; the reflected volume's
/// grid has a shift of its own (vr.b), so that a kink of its reflection
/// shows in its own finite differences rather than diluted by the other
/// samples' slopes (--grad-check skips positions at a kink).
// CHECK: grad-check
// CHECK-DAG: vx.b {{.*}}: ok
// CHECK-DAG: vg.b {{.*}}: ok
// CHECK-DAG: vr.b {{.*}}: ok
// CHECK-DAG: sx.b {{.*}}: ok
// CHECK-DAG: sg.b {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<2x2x3x4x5xf32> {gopt.name = "x"}, %g: tensor<2x2x2x3x3xf32> {gopt.name = "g"}, %s: tensor<2x2x7xf32> {gopt.name = "s"}, %sg: tensor<2x4x1xf32> {gopt.name = "sg"}, %t1: tensor<2x2x2x2x3xf32> {gopt.name = "t1"}, %t2: tensor<2x2x4xf32> {gopt.name = "t2"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %xb = gopt.constant dense<[[[[[0.125, 0.397, 0.276, -0.275, -0.200],    [0.374, -0.495, 0.321, 0.297, -0.032],    [-0.197, -0.222, -0.245, -0.055, 0.005],    [0.053, 0.496, 0.293, 0.122, 0.489]],   [[-0.285, -0.340, 0.113, -0.456, -0.464],    [0.015, -0.034, 0.417, 0.129, 0.014],    [-0.003, -0.252, -0.488, -0.308, 0.192],    [-0.299, -0.130, -0.496, 0.330, -0.346]],   [[-0.232, 0.380, 0.010, 0.347, 0.140],    [0.242, -0.409, 0.041, 0.008, 0.371],    [-0.139, 0.098, -0.441, -0.112, -0.177],    [-0.350, 0.316, -0.121, 0.479, 0.090]]],  [[[0.105, 0.138, 0.176, -0.349, -0.060],    [-0.260, -0.098, -0.403, 0.468, -0.285],    [0.172, -0.200, 0.374, 0.162, -0.368],    [0.345, 0.445, 0.404, 0.070, -0.355]],   [[-0.308, 0.428, 0.052, -0.319, 0.384],    [0.142, 0.070, -0.124, -0.089, -0.261],    [-0.462, 0.376, -0.032, 0.048, -0.178],    [0.251, -0.475, -0.128, -0.470, -0.377]],   [[0.467, 0.158, -0.072, 0.024, 0.373],    [-0.156, 0.090, 0.184, -0.145, 0.019],    [0.265, 0.409, -0.349, 0.433, -0.495],    [0.253, 0.311, -0.363, -0.081, 0.315]]]]]> : tensor<1x2x3x4x5xf32> loc("vx.b")
  %gb = gopt.constant dense<[[[[[-0.291, 0.077, 0.176],    [0.008, 0.136, -0.164],    [-0.181, -0.082, -0.192]],   [[-0.092, 0.269, 0.044],    [-0.096, -0.137, 0.271],    [-0.033, 0.288, 0.009]]],  [[[0.013, 0.238, 0.146],    [0.048, -0.044, 0.227],    [-0.053, 0.254, -0.259]],   [[-0.042, 0.012, 0.271],    [-0.149, 0.184, 0.106],    [0.130, 0.078, 0.283]]]]]> : tensor<1x2x2x3x3xf32> loc("vg.b")
  %sxb = gopt.constant dense<[[[-0.167, -0.102, -0.297, -0.449, -0.287, 0.415, 0.340],  [-0.388, 0.104, -0.021, 0.095, 0.159, -0.193, 0.461]]]> : tensor<1x2x7xf32> loc("sx.b")
  %sgb = gopt.constant dense<[[[-0.020],  [0.077],  [0.081],  [-0.190]]]> : tensor<1x4x1xf32> loc("sg.b")
  %rb = gopt.constant dense<[[[[[-0.223, -0.000, 0.061],    [-0.283, -0.211, 0.257],    [-0.258, -0.222, 0.269]],   [[0.073, -0.079, 0.007],    [0.098, -0.135, -0.217],    [0.173, 0.102, 0.007]]],  [[[0.190, 0.029, 0.289],    [-0.177, 0.032, -0.010],    [-0.088, 0.055, -0.159]],   [[0.181, 0.220, -0.223],    [-0.020, -0.134, -0.250],    [0.238, -0.042, -0.211]]]]]> : tensor<1x2x2x3x3xf32> loc("vr.b")
  %scale = gopt.constant dense<0.6> : tensor<f32>
  %xs = gopt.add %x, %xb : (tensor<2x2x3x4x5xf32>, tensor<1x2x3x4x5xf32>) -> tensor<2x2x3x4x5xf32>
  %gm = gopt.mul %g, %scale : (tensor<2x2x2x3x3xf32>, tensor<f32>) -> tensor<2x2x2x3x3xf32>
  %gs = gopt.add %gm, %gb : (tensor<2x2x2x3x3xf32>, tensor<1x2x2x3x3xf32>) -> tensor<2x2x2x3x3xf32>
  %rs = gopt.add %gm, %rb : (tensor<2x2x2x3x3xf32>, tensor<1x2x2x3x3xf32>) -> tensor<2x2x2x3x3xf32>
  %ss = gopt.add %s, %sxb : (tensor<2x2x7xf32>, tensor<1x2x7xf32>) -> tensor<2x2x7xf32>
  %sgm = gopt.mul %sg, %scale : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %sgs = gopt.add %sgm, %sgb : (tensor<2x4x1xf32>, tensor<1x4x1xf32>) -> tensor<2x4x1xf32>
  %v0 = gopt.grid_sample %xs, %gs {mode = "bilinear", padding_mode = "zeros", align_corners = 0 : i64} : (tensor<2x2x3x4x5xf32>, tensor<2x2x2x3x3xf32>) -> tensor<2x2x2x2x3xf32>
  %w0 = gopt.grid_sample %ss, %sgs {mode = "bilinear", padding_mode = "zeros", align_corners = 0 : i64} : (tensor<2x2x7xf32>, tensor<2x4x1xf32>) -> tensor<2x2x4xf32>
  %v1 = gopt.grid_sample %xs, %gs {mode = "bicubic", padding_mode = "border", align_corners = 1 : i64} : (tensor<2x2x3x4x5xf32>, tensor<2x2x2x3x3xf32>) -> tensor<2x2x2x2x3xf32>
  %w1 = gopt.grid_sample %ss, %sgs {mode = "bicubic", padding_mode = "border", align_corners = 1 : i64} : (tensor<2x2x7xf32>, tensor<2x4x1xf32>) -> tensor<2x2x4xf32>
  %v2 = gopt.grid_sample %xs, %rs {mode = "bilinear", padding_mode = "reflection", align_corners = 0 : i64} : (tensor<2x2x3x4x5xf32>, tensor<2x2x2x3x3xf32>) -> tensor<2x2x2x2x3xf32>
  %w2 = gopt.grid_sample %ss, %sgs {mode = "bilinear", padding_mode = "reflection", align_corners = 0 : i64} : (tensor<2x2x7xf32>, tensor<2x4x1xf32>) -> tensor<2x2x4xf32>
  %v3 = gopt.grid_sample %xs, %gs {mode = "nearest", padding_mode = "zeros", align_corners = 0 : i64} : (tensor<2x2x3x4x5xf32>, tensor<2x2x2x3x3xf32>) -> tensor<2x2x2x2x3xf32>
  %w3 = gopt.grid_sample %ss, %sgs {mode = "nearest", padding_mode = "zeros", align_corners = 0 : i64} : (tensor<2x2x7xf32>, tensor<2x4x1xf32>) -> tensor<2x2x4xf32>
  %va = gopt.add %v0, %v1 : (tensor<2x2x2x2x3xf32>, tensor<2x2x2x2x3xf32>) -> tensor<2x2x2x2x3xf32>
  %vb = gopt.add %va, %v2 : (tensor<2x2x2x2x3xf32>, tensor<2x2x2x2x3xf32>) -> tensor<2x2x2x2x3xf32>
  %vc = gopt.add %vb, %v3 : (tensor<2x2x2x2x3xf32>, tensor<2x2x2x2x3xf32>) -> tensor<2x2x2x2x3xf32>
  %wa = gopt.add %w0, %w1 : (tensor<2x2x4xf32>, tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %wb = gopt.add %wa, %w2 : (tensor<2x2x4xf32>, tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %wc = gopt.add %wb, %w3 : (tensor<2x2x4xf32>, tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %l1 = gopt.mse_loss %vc, %t1 : (tensor<2x2x2x2x3xf32>, tensor<2x2x2x2x3xf32>) -> tensor<f32>
  %l2 = gopt.mse_loss %wc, %t2 : (tensor<2x2x4xf32>, tensor<2x2x4xf32>) -> tensor<f32>
  %loss = gopt.add %l1, %l2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %loss : tensor<f32>
}
