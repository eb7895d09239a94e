// RUN: gopt-run %s --grad-check --loss none --atol 2e-4 --rtol 1e-2 | FileCheck %s

/// Autodiff of lstm, gru and rnn (lstm_grad, gru_grad and rnn_grad:
/// backpropagation through time) against finite differences on the
/// reference kernels: every direction, sequence lengths, peepholes,
/// input_forget, clip, both gru forms and initial states computed from
/// parameters (full-shape and rank-0). x reaches in.w through every layer.
/// The kernels sum in double; the f32 central differences (epsilon 1e-2)
/// agree to ~1e-5, so 2e-4 + 1% leaves room for curvature, not for a wrong
/// term.
// CHECK: grad-check
// CHECK-DAG: in.w {{.*}}: ok
// CHECK-DAG: lstm.w {{.*}}: ok
// CHECK-DAG: lstm.r {{.*}}: ok
// CHECK-DAG: lstm.b {{.*}}: ok
// CHECK-DAG: lstm.p {{.*}}: ok
// CHECK-DAG: lstm.h0 {{.*}}: ok
// CHECK-DAG: lstm.c0 {{.*}}: ok
// CHECK-DAG: gru.w {{.*}}: ok
// CHECK-DAG: gru.r {{.*}}: ok
// CHECK-DAG: gru.b {{.*}}: ok
// CHECK-DAG: grul.w {{.*}}: ok
// CHECK-DAG: grul.r {{.*}}: ok
// CHECK-DAG: grul.b {{.*}}: ok
// CHECK-DAG: grul.h0 {{.*}}: ok
// CHECK-DAG: rnn.w {{.*}}: ok
// CHECK-DAG: rnn.r {{.*}}: ok
// CHECK-DAG: rnn.b {{.*}}: ok
// CHECK-DAG: rnn.h0 {{.*}}: ok
// CHECK-DAG: lstm2.w {{.*}}: ok
// CHECK-DAG: lstm2.r {{.*}}: ok
// CHECK-DAG: lstm2.b {{.*}}: ok
// CHECK-DAG: lstm2.p {{.*}}: ok
// CHECK-DAG: lstm2.h0 {{.*}}: ok
// CHECK: gradients match finite differences
func.func @main(%x: tensor<4x3x2xf32> {gopt.name = "x"}, %s: tensor<2x3x3xf32> {gopt.name = "s"}, %t: tensor<3x4xf32> {gopt.name = "t"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %in_w = gopt.constant dense<[[-0.282, -0.559], [0.241, -0.684]]> : tensor<2x2xf32> loc("in.w")
  %lstm_w = gopt.constant dense<[[[0.043, -0.161], [-0.530, 0.009], [-0.555, -0.080], [-0.516, -0.491], [-0.091, 0.392], [-0.451, -0.332], [0.153, 0.537], [0.093, -0.124], [0.572, -0.544], [0.430, -0.252], [-0.427, -0.459], [-0.230, 0.379]], [[-0.383, 0.098], [0.167, -0.153], [0.057, -0.525], [-0.528, -0.353], [0.216, -0.087], [-0.223, 0.103], [-0.056, -0.240], [0.353, 0.239], [-0.307, 0.089], [0.030, 0.450], [0.275, -0.254], [0.576, -0.458]]]> : tensor<2x12x2xf32> loc("lstm.w")
  %lstm_r = gopt.constant dense<[[[-0.098, 0.309, -0.418], [-0.013, -0.553, 0.202], [0.317, 0.088, 0.451], [-0.224, 0.234, 0.113], [0.096, -0.053, 0.408], [0.534, -0.031, 0.197], [-0.527, 0.242, 0.177], [0.592, 0.386, -0.258], [-0.137, 0.202, -0.573], [-0.046, -0.398, -0.459], [-0.529, 0.322, -0.445], [-0.303, -0.131, 0.446]], [[-0.503, -0.061, 0.059], [0.460, 0.383, 0.437], [-0.266, -0.102, -0.169], [0.461, 0.549, -0.419], [-0.389, -0.322, -0.320], [-0.018, 0.107, -0.285], [-0.595, -0.097, -0.157], [0.080, 0.544, 0.229], [0.019, 0.141, 0.211], [-0.535, 0.479, 0.336], [0.449, 0.357, -0.129], [-0.121, -0.476, 0.161]]]> : tensor<2x12x3xf32> loc("lstm.r")
  %lstm_b = gopt.constant dense<[[-0.263, -0.260, -0.175, -0.203, -0.096, -0.268, -0.300, -0.209, -0.239, -0.082, -0.285, 0.225, 0.068, -0.211, -0.149, -0.092, -0.082, -0.226, 0.209, 0.296, -0.020, -0.010, -0.248, -0.239], [-0.094, -0.141, 0.197, -0.203, -0.286, 0.271, 0.017, -0.212, 0.026, -0.284, 0.017, 0.287, 0.218, 0.118, -0.143, -0.080, -0.200, 0.163, 0.020, 0.167, -0.102, -0.166, 0.187, 0.291]]> : tensor<2x24xf32> loc("lstm.b")
  %gru_w = gopt.constant dense<[[[0.423, 0.367], [0.382, 0.288], [-0.328, 0.021], [-0.173, -0.565], [-0.566, -0.265], [-0.289, 0.231], [0.548, -0.063], [0.524, 0.586], [0.546, -0.162]]]> : tensor<1x9x2xf32> loc("gru.w")
  %gru_r = gopt.constant dense<[[[-0.335, -0.328, -0.364], [-0.355, 0.149, 0.480], [0.409, -0.025, 0.184], [0.360, -0.498, 0.193], [0.492, 0.339, 0.300], [-0.026, -0.386, 0.347], [-0.201, 0.361, 0.566], [-0.125, -0.118, 0.536], [0.270, -0.396, -0.448]]]> : tensor<1x9x3xf32> loc("gru.r")
  %gru_b = gopt.constant dense<[[-0.209, 0.243, 0.184, -0.212, 0.196, 0.288, 0.094, -0.090, 0.029, -0.221, -0.291, 0.283, 0.090, 0.016, 0.260, -0.040, 0.223, 0.196]]> : tensor<1x18xf32> loc("gru.b")
  %grul_w = gopt.constant dense<[[[-0.347, -0.298], [-0.248, -0.311], [0.104, -0.289], [-0.097, -0.443], [0.492, -0.175], [-0.050, 0.100], [0.485, -0.095], [0.501, 0.002], [0.038, 0.028]]]> : tensor<1x9x2xf32> loc("grul.w")
  %grul_r = gopt.constant dense<[[[-0.578, -0.072, -0.380], [-0.595, 0.359, -0.393], [-0.032, 0.270, 0.068], [-0.209, 0.022, 0.067], [0.341, -0.473, 0.072], [-0.302, -0.268, 0.327], [0.009, 0.074, 0.312], [0.495, -0.068, 0.135], [0.007, 0.015, 0.231]]]> : tensor<1x9x3xf32> loc("grul.r")
  %grul_b = gopt.constant dense<[[-0.029, 0.020, -0.013, 0.265, 0.120, 0.226, 0.265, -0.144, 0.036, 0.266, 0.204, -0.218, -0.227, -0.035, -0.256, -0.156, -0.256, 0.102]]> : tensor<1x18xf32> loc("grul.b")
  %rnn_w = gopt.constant dense<[[[0.341, 0.476], [-0.415, 0.259], [0.192, -0.428]], [[0.459, 0.561], [-0.336, 0.543], [-0.122, -0.015]]]> : tensor<2x3x2xf32> loc("rnn.w")
  %rnn_r = gopt.constant dense<[[[0.588, 0.399, -0.406], [-0.082, 0.019, -0.193], [-0.365, -0.218, 0.267]], [[-0.577, 0.065, -0.071], [-0.578, -0.202, 0.149], [0.015, -0.523, 0.582]]]> : tensor<2x3x3xf32> loc("rnn.r")
  %rnn_b = gopt.constant dense<[[0.173, 0.283, -0.237, -0.141, -0.276, 0.167], [-0.138, -0.222, -0.047, 0.247, 0.191, -0.145]]> : tensor<2x6xf32> loc("rnn.b")
  %lstm2_w = gopt.constant dense<[[[-0.421, 0.503], [0.085, 0.241], [-0.493, -0.531], [0.226, -0.090], [-0.513, 0.526], [0.161, 0.362], [-0.500, 0.427], [-0.520, 0.435], [-0.055, -0.193], [0.064, 0.512], [-0.279, -0.445], [0.032, -0.314]]]> : tensor<1x12x2xf32> loc("lstm2.w")
  %lstm2_r = gopt.constant dense<[[[-0.469, -0.406, -0.540], [-0.358, -0.226, -0.234], [0.311, -0.252, 0.000], [-0.387, -0.184, -0.578], [-0.299, -0.582, 0.280], [0.061, -0.373, -0.030], [0.522, -0.472, 0.383], [-0.081, -0.006, 0.402], [-0.128, 0.008, 0.225], [0.579, -0.189, 0.399], [0.248, 0.163, -0.114], [-0.183, -0.535, -0.444]]]> : tensor<1x12x3xf32> loc("lstm2.r")
  %lstm2_b = gopt.constant dense<[[-0.258, 0.145, -0.147, -0.202, -0.249, 0.205, 0.222, 0.102, -0.131, -0.155, -0.124, -0.024, -0.205, -0.033, -0.142, 0.277, 0.284, 0.028, -0.153, 0.279, -0.114, -0.086, -0.299, -0.071]]> : tensor<1x24xf32> loc("lstm2.b")
  %lstm_p = gopt.constant dense<[[-0.025, 0.003, -0.299, 0.005, -0.495, -0.236, -0.410, -0.100, -0.458], [-0.478, -0.196, -0.267, 0.086, 0.029, 0.251, 0.158, 0.216, 0.379]]> : tensor<2x9xf32> loc("lstm.p")
  %lstm2_p = gopt.constant dense<[[-0.110, -0.174, 0.485, -0.351, 0.224, 0.143, -0.456, 0.335, 0.392]]> : tensor<1x9xf32> loc("lstm2.p")
  %lstm_h0 = gopt.constant dense<[[[0.076, 0.140, 0.187], [-0.216, 0.014, 0.003], [0.201, 0.183, 0.196]], [[0.050, 0.236, 0.110], [0.116, -0.162, -0.281], [-0.220, -0.084, -0.237]]]> : tensor<2x3x3xf32> loc("lstm.h0")
  %lstm_c0 = gopt.constant dense<[[[0.201, 0.035, 0.077], [0.076, 0.108, -0.006], [-0.298, 0.179, 0.149]], [[0.002, 0.021, 0.096], [-0.260, 0.142, -0.149], [-0.255, -0.141, 0.138]]]> : tensor<2x3x3xf32> loc("lstm.c0")
  %rnn_h0 = gopt.constant dense<[[[-0.177, 0.144, 0.285], [-0.004, -0.070, -0.013], [0.110, 0.160, 0.070]], [[0.086, -0.254, -0.212], [-0.148, 0.146, -0.117], [0.041, -0.293, -0.264]]]> : tensor<2x3x3xf32> loc("rnn.h0")
  %lstm2_h0 = gopt.constant dense<[[[-0.139, 0.103, 0.115], [0.105, -0.125, 0.010], [-0.021, -0.020, -0.229]], [[0.236, -0.180, 0.287], [0.262, -0.289, -0.025], [0.192, 0.281, -0.030]]]> : tensor<2x3x3xf32> loc("lstm2.h0")
  %grul_h0 = gopt.constant dense<[[[-0.139, -0.174, 0.267], [-0.174, 0.049, -0.215], [0.014, 0.272, -0.220]], [[0.192, 0.005, 0.232], [0.122, -0.161, 0.239], [-0.008, -0.285, -0.298]]]> : tensor<2x3x3xf32> loc("grul.h0")
  %fc_lstm_y = gopt.constant dense<[[-0.005, -0.030, -0.119, -0.216, -0.094, -0.110, 0.204, -0.299, 0.150, 0.203, -0.228, 0.256, 0.128, 0.241, -0.126, -0.077, -0.064, 0.299, 0.054, -0.084, -0.043, -0.135, -0.271, -0.239], [0.201, -0.129, 0.261, -0.150, -0.141, 0.007, -0.186, -0.076, 0.274, 0.231, 0.187, 0.079, 0.248, 0.264, 0.030, 0.132, -0.270, 0.139, -0.029, 0.152, 0.087, -0.128, -0.271, 0.256], [-0.224, -0.017, -0.094, -0.121, 0.143, 0.286, -0.144, 0.094, -0.119, 0.034, -0.063, -0.200, -0.203, -0.175, 0.244, -0.002, -0.168, 0.244, 0.298, -0.030, -0.216, -0.185, -0.246, -0.095], [-0.245, -0.157, -0.145, 0.042, 0.232, 0.150, -0.052, -0.052, 0.015, -0.074, -0.097, -0.263, -0.133, 0.281, -0.224, 0.002, 0.078, 0.218, -0.170, -0.137, -0.151, -0.060, -0.032, 0.272]]> : tensor<4x24xf32> loc("fc.lstm_y")
  %fc_lstm_yh = gopt.constant dense<[[0.209, 0.224, -0.287, -0.281, 0.126, 0.237], [-0.016, 0.052, -0.300, -0.065, 0.256, 0.195], [0.213, 0.283, -0.151, -0.235, -0.207, 0.013], [0.109, 0.265, 0.133, 0.088, 0.159, -0.026]]> : tensor<4x6xf32> loc("fc.lstm_yh")
  %fc_lstm_yc = gopt.constant dense<[[0.031, -0.276, 0.169, -0.160, 0.252, 0.087], [-0.118, -0.223, -0.149, 0.082, 0.119, -0.233], [-0.258, 0.015, 0.050, -0.067, -0.166, 0.061], [-0.294, -0.119, -0.024, 0.275, 0.087, 0.230]]> : tensor<4x6xf32> loc("fc.lstm_yc")
  %fc_gru_y = gopt.constant dense<[[-0.015, -0.159, -0.152, 0.276, 0.123, -0.116, -0.287, -0.001, 0.105, -0.048, -0.146, 0.100], [0.255, -0.164, -0.280, -0.097, -0.048, 0.110, -0.181, 0.178, 0.143, 0.003, -0.177, 0.282], [-0.113, 0.192, -0.162, -0.167, 0.156, -0.123, 0.271, -0.003, -0.188, -0.166, -0.050, 0.099], [0.269, -0.212, -0.064, -0.172, 0.284, -0.215, -0.269, -0.264, -0.064, 0.239, 0.230, 0.140]]> : tensor<4x12xf32> loc("fc.gru_y")
  %fc_grul_yh = gopt.constant dense<[[0.299, 0.259, -0.102], [-0.189, 0.262, 0.148], [-0.281, 0.099, -0.073], [-0.076, -0.101, -0.198]]> : tensor<4x3xf32> loc("fc.grul_yh")
  %fc_rnn_y = gopt.constant dense<[[-0.298, -0.132, -0.089, 0.273, -0.226, 0.279, -0.176, -0.086, 0.193, 0.193, -0.041, -0.270, -0.016, -0.076, 0.252, -0.184, -0.081, 0.238, -0.282, -0.054, 0.187, 0.160, -0.276, -0.279], [-0.262, 0.252, -0.146, 0.148, 0.239, -0.097, -0.137, 0.275, 0.070, -0.143, 0.130, -0.110, -0.135, -0.298, 0.153, 0.250, 0.080, 0.266, -0.285, -0.160, -0.015, 0.274, 0.272, -0.068], [-0.149, -0.042, -0.004, 0.257, -0.190, 0.182, 0.143, 0.194, 0.164, 0.064, -0.103, -0.108, -0.083, 0.169, -0.253, -0.182, 0.152, -0.152, -0.261, -0.280, 0.032, -0.105, 0.288, 0.230], [0.293, -0.141, -0.250, -0.242, -0.001, 0.126, -0.032, -0.159, -0.050, 0.072, 0.104, 0.149, 0.208, 0.099, -0.227, 0.205, -0.124, 0.040, -0.076, 0.143, -0.180, -0.152, -0.153, -0.208]]> : tensor<4x24xf32> loc("fc.rnn_y")
  %fc_rnn_yh = gopt.constant dense<[[0.231, 0.047, -0.104, -0.062, 0.295, 0.004], [-0.161, 0.185, 0.092, 0.295, -0.239, -0.015], [0.191, 0.204, 0.249, -0.276, -0.124, -0.228], [-0.186, 0.284, 0.050, 0.258, -0.077, 0.220]]> : tensor<4x6xf32> loc("fc.rnn_yh")
  %fc_lstm2_y = gopt.constant dense<[[-0.031, -0.144, 0.167, 0.267, -0.237, 0.058, 0.072, -0.169, -0.079, -0.215, -0.178, -0.147], [0.060, 0.091, -0.178, -0.293, -0.104, 0.107, -0.189, -0.113, -0.178, 0.177, 0.029, -0.262], [-0.239, -0.063, 0.030, 0.084, -0.245, -0.202, 0.117, -0.054, -0.130, -0.115, 0.272, -0.113], [0.040, -0.086, -0.050, 0.219, 0.298, -0.082, -0.182, 0.137, -0.178, -0.296, 0.241, -0.046]]> : tensor<4x12xf32> loc("fc.lstm2_y")
  %fc_lstm2_yc = gopt.constant dense<[[0.192, -0.056, 0.230], [-0.023, -0.202, -0.291], [0.031, 0.084, 0.246], [-0.247, 0.073, -0.077]]> : tensor<4x3xf32> loc("fc.lstm2_yc")
  %seq_a = gopt.constant dense<[4, 2, 3]> : tensor<3xi32>
  %seq_b = gopt.constant dense<[3, 4, 1]> : tensor<3xi64>
  %zero = gopt.constant dense<0.0> : tensor<f32>
  %c0s = gopt.constant dense<0.2> : tensor<f32>
  %x2 = gopt.reshape %x {shape = array<i64: 12, 2>} : (tensor<4x3x2xf32>) -> tensor<12x2xf32>
  %xm = gopt.matmul %x2, %in_w : (tensor<12x2xf32>, tensor<2x2xf32>) -> tensor<12x2xf32>
  %xi = gopt.reshape %xm {shape = array<i64: 4, 3, 2>} : (tensor<12x2xf32>) -> tensor<4x3x2xf32>
  %lstm_h = gopt.add %s, %lstm_h0 : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %lstm_c = gopt.add %s, %lstm_c0 : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %rnn_h = gopt.add %s, %rnn_h0 : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %lstm2_hs = gopt.add %s, %lstm2_h0 : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %lstm2_h = gopt.reduce_mean %lstm2_hs {axes = array<i64: 0, 1, 2>} : (tensor<2x3x3xf32>) -> tensor<f32>
  %grul_hs = gopt.add %s, %grul_h0 : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %grul_h = gopt.slice %grul_hs {starts = array<i64: 1, 0, 0>, ends = array<i64: 2, 3, 3>, steps = array<i64: 1, 1, 1>} : (tensor<2x3x3xf32>) -> tensor<1x3x3xf32>
  // Bidirectional with peepholes, sequence lengths and computed initial states.
  %lstm_y, %lstm_yh, %lstm_yc = gopt.lstm %xi, %lstm_w, %lstm_r, %lstm_b, %lstm_h, %lstm_c, %lstm_p, %seq_a {hidden_size = 3 : i64, direction = "bidirectional"} : (tensor<4x3x2xf32>, tensor<2x12x2xf32>, tensor<2x12x3xf32>, tensor<2x24xf32>, tensor<2x3x3xf32>, tensor<2x3x3xf32>, tensor<2x9xf32>, tensor<3xi32>) -> (tensor<4x2x3x3xf32>, tensor<2x3x3xf32>, tensor<2x3x3xf32>)
  // Reverse, the reset gate before R_h, a zero initial state.
  %gru_y, %gru_yh = gopt.gru %xi, %gru_w, %gru_r, %gru_b, %zero, %seq_b {hidden_size = 3 : i64, direction = "reverse"} : (tensor<4x3x2xf32>, tensor<1x9x2xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>, tensor<f32>, tensor<3xi64>) -> (tensor<4x1x3x3xf32>, tensor<1x3x3xf32>)
  // linear_before_reset; only y_h reaches the loss.
  %grul_y, %grul_yh = gopt.gru %xi, %grul_w, %grul_r, %grul_b, %grul_h {hidden_size = 3 : i64, linear_before_reset = true} : (tensor<4x3x2xf32>, tensor<1x9x2xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>, tensor<1x3x3xf32>) -> (tensor<4x1x3x3xf32>, tensor<1x3x3xf32>)
  // Clipped gate inputs pass no gradient (clip 1: some are clipped).
  %rnn_y, %rnn_yh = gopt.rnn %xi, %rnn_w, %rnn_r, %rnn_b, %rnn_h {hidden_size = 3 : i64, direction = "bidirectional", clip = 1.0 : f32} : (tensor<4x3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x3xf32>, tensor<2x6xf32>, tensor<2x3x3xf32>) -> (tensor<4x2x3x3xf32>, tensor<2x3x3xf32>)
  // input_forget and clip; a rank-0 initial state computed from a
  // parameter (its gradient is the sum over the broadcast).
  %lstm2_y, %lstm2_yh, %lstm2_yc = gopt.lstm %xi, %lstm2_w, %lstm2_r, %lstm2_b, %lstm2_h, %c0s, %lstm2_p {hidden_size = 3 : i64, input_forget = true, clip = 2.0 : f32} : (tensor<4x3x2xf32>, tensor<1x12x2xf32>, tensor<1x12x3xf32>, tensor<1x24xf32>, tensor<f32>, tensor<f32>, tensor<1x9xf32>) -> (tensor<4x1x3x3xf32>, tensor<1x3x3xf32>, tensor<1x3x3xf32>)
  %lstm_y_t = gopt.transpose %lstm_y {perm = array<i64: 2, 0, 1, 3>} : (tensor<4x2x3x3xf32>) -> tensor<3x4x2x3xf32>
  %lstm_y_f = gopt.reshape %lstm_y_t {shape = array<i64: 3, 24>} : (tensor<3x4x2x3xf32>) -> tensor<3x24xf32>
  %lstm_y_o = gopt.matmul %lstm_y_f, %fc_lstm_y {transpose_b = true} : (tensor<3x24xf32>, tensor<4x24xf32>) -> tensor<3x4xf32>
  %lstm_yh_t = gopt.transpose %lstm_yh {perm = array<i64: 1, 0, 2>} : (tensor<2x3x3xf32>) -> tensor<3x2x3xf32>
  %lstm_yh_f = gopt.reshape %lstm_yh_t {shape = array<i64: 3, 6>} : (tensor<3x2x3xf32>) -> tensor<3x6xf32>
  %lstm_yh_o = gopt.matmul %lstm_yh_f, %fc_lstm_yh {transpose_b = true} : (tensor<3x6xf32>, tensor<4x6xf32>) -> tensor<3x4xf32>
  %sum1 = gopt.add %lstm_y_o, %lstm_yh_o : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %lstm_yc_t = gopt.transpose %lstm_yc {perm = array<i64: 1, 0, 2>} : (tensor<2x3x3xf32>) -> tensor<3x2x3xf32>
  %lstm_yc_f = gopt.reshape %lstm_yc_t {shape = array<i64: 3, 6>} : (tensor<3x2x3xf32>) -> tensor<3x6xf32>
  %lstm_yc_o = gopt.matmul %lstm_yc_f, %fc_lstm_yc {transpose_b = true} : (tensor<3x6xf32>, tensor<4x6xf32>) -> tensor<3x4xf32>
  %sum2 = gopt.add %sum1, %lstm_yc_o : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %gru_y_t = gopt.transpose %gru_y {perm = array<i64: 2, 0, 1, 3>} : (tensor<4x1x3x3xf32>) -> tensor<3x4x1x3xf32>
  %gru_y_f = gopt.reshape %gru_y_t {shape = array<i64: 3, 12>} : (tensor<3x4x1x3xf32>) -> tensor<3x12xf32>
  %gru_y_o = gopt.matmul %gru_y_f, %fc_gru_y {transpose_b = true} : (tensor<3x12xf32>, tensor<4x12xf32>) -> tensor<3x4xf32>
  %sum3 = gopt.add %sum2, %gru_y_o : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %grul_yh_t = gopt.transpose %grul_yh {perm = array<i64: 1, 0, 2>} : (tensor<1x3x3xf32>) -> tensor<3x1x3xf32>
  %grul_yh_f = gopt.reshape %grul_yh_t {shape = array<i64: 3, 3>} : (tensor<3x1x3xf32>) -> tensor<3x3xf32>
  %grul_yh_o = gopt.matmul %grul_yh_f, %fc_grul_yh {transpose_b = true} : (tensor<3x3xf32>, tensor<4x3xf32>) -> tensor<3x4xf32>
  %sum4 = gopt.add %sum3, %grul_yh_o : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %rnn_y_t = gopt.transpose %rnn_y {perm = array<i64: 2, 0, 1, 3>} : (tensor<4x2x3x3xf32>) -> tensor<3x4x2x3xf32>
  %rnn_y_f = gopt.reshape %rnn_y_t {shape = array<i64: 3, 24>} : (tensor<3x4x2x3xf32>) -> tensor<3x24xf32>
  %rnn_y_o = gopt.matmul %rnn_y_f, %fc_rnn_y {transpose_b = true} : (tensor<3x24xf32>, tensor<4x24xf32>) -> tensor<3x4xf32>
  %sum5 = gopt.add %sum4, %rnn_y_o : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %rnn_yh_t = gopt.transpose %rnn_yh {perm = array<i64: 1, 0, 2>} : (tensor<2x3x3xf32>) -> tensor<3x2x3xf32>
  %rnn_yh_f = gopt.reshape %rnn_yh_t {shape = array<i64: 3, 6>} : (tensor<3x2x3xf32>) -> tensor<3x6xf32>
  %rnn_yh_o = gopt.matmul %rnn_yh_f, %fc_rnn_yh {transpose_b = true} : (tensor<3x6xf32>, tensor<4x6xf32>) -> tensor<3x4xf32>
  %sum6 = gopt.add %sum5, %rnn_yh_o : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %lstm2_y_t = gopt.transpose %lstm2_y {perm = array<i64: 2, 0, 1, 3>} : (tensor<4x1x3x3xf32>) -> tensor<3x4x1x3xf32>
  %lstm2_y_f = gopt.reshape %lstm2_y_t {shape = array<i64: 3, 12>} : (tensor<3x4x1x3xf32>) -> tensor<3x12xf32>
  %lstm2_y_o = gopt.matmul %lstm2_y_f, %fc_lstm2_y {transpose_b = true} : (tensor<3x12xf32>, tensor<4x12xf32>) -> tensor<3x4xf32>
  %sum7 = gopt.add %sum6, %lstm2_y_o : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %lstm2_yc_t = gopt.transpose %lstm2_yc {perm = array<i64: 1, 0, 2>} : (tensor<1x3x3xf32>) -> tensor<3x1x3xf32>
  %lstm2_yc_f = gopt.reshape %lstm2_yc_t {shape = array<i64: 3, 3>} : (tensor<3x1x3xf32>) -> tensor<3x3xf32>
  %lstm2_yc_o = gopt.matmul %lstm2_yc_f, %fc_lstm2_yc {transpose_b = true} : (tensor<3x3xf32>, tensor<4x3xf32>) -> tensor<3x4xf32>
  %sum8 = gopt.add %sum7, %lstm2_yc_o : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %loss = gopt.mse_loss %sum8, %t : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
