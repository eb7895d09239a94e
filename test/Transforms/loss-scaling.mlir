// RUN: gopt-opt %s -split-input-file --gopt-loss-scaling='init-scale=1024 growth-interval=100' | FileCheck %s --check-prefix=MARK
// RUN: gopt-opt %s -split-input-file --gopt-loss-scaling='init-scale=1024 growth-interval=100' --gopt-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: gopt-opt %s -split-input-file --gopt-loss-scaling='init-scale=1024 growth-interval=100' --gopt-autodiff --gopt-add-optimizer=kind=adam | FileCheck %s --check-prefix=DYN
// RUN: gopt-opt %s -split-input-file --gopt-loss-scaling='dynamic=false init-scale=128' --gopt-autodiff --gopt-add-optimizer=kind=sgd | FileCheck %s --check-prefix=FIXED
// RUN: gopt-opt %s -split-input-file --gopt-autodiff | FileCheck %s --check-prefix=NOSCALE
// RUN: not gopt-opt %s -split-input-file --gopt-loss-scaling='backoff-factor=1' -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTIONS
// RUN: not gopt-opt %s -split-input-file --gopt-loss-scaling=loss=nope -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOLOSS
// RUN: not gopt-opt %s -split-input-file --gopt-loss-scaling --gopt-loss-scaling -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not gopt-opt %s -split-input-file --gopt-autodiff --gopt-loss-scaling -o /dev/null 2>&1 | FileCheck %s --check-prefix=ORDER

// OPTIONS: error: gopt-loss-scaling: expects a finite init-scale > 0, growth-interval >= 1, growth-factor > 1 and backoff-factor in (0, 1)
// NOLOSS: error: gopt-loss-scaling: no result named 'nope' (results: loss); add one with --gopt-add-loss
// TWICE: error: gopt-loss-scaling: the loss 'loss' is already scaled
// ORDER: error: gopt-loss-scaling: the function already returns gradients; run it before --gopt-autodiff

/// A mixed-precision step: the f32 master weight is cast to bf16 at its
/// use (as --gopt-mixed-precision writes it), the loss is f32.
/// The pass adds the scale as optimizer state and marks the loss.
// MARK-LABEL: func @step
// MARK-SAME: %{{[^:]*}}: tensor<f32> {gopt.initial_value = dense<1.024000e+03> : tensor<f32>, gopt.loss_scale_update = {backoff_factor = 5.000000e-01 : f32, growth_factor = 2.000000e+00 : f32, growth_interval = 100 : i64}, gopt.name = "optimizer/loss_scale", gopt.state = "optimizer"}
// MARK-SAME: -> (tensor<f32> {gopt.loss_scale = "optimizer/loss_scale", gopt.name = "loss"})

/// Autodiff seeds the backward pass with the scale: the loss gradient is
/// multiplied by it, bf16 gradients flow through the matmul, and the cast's
/// gradient casts back to the f32 parameter.
// GRAD-LABEL: func @step
// GRAD-SAME: %[[W:[^:]*]]: tensor<4x3xf32> {gopt.name = "w", gopt.state = "param"}
// GRAD-SAME: %[[S:[^:]*]]: tensor<f32> {{{.*}}gopt.name = "optimizer/loss_scale"
// GRAD-SAME: tensor<4x3xf32> {gopt.gradient_of = "w", gopt.loss_scale = "optimizer/loss_scale", gopt.name = "grad/w"}
// GRAD: %[[D:.*]] = gopt.softmax_cross_entropy_grad
// GRAD: %[[DS:.*]] = gopt.mul %[[D]], %[[S]] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// GRAD: %[[DH:.*]] = gopt.cast %[[DS]] : (tensor<2x3xf32>) -> tensor<2x3xbf16>
// GRAD: %[[DW:.*]] = gopt.matmul %{{.*}}, %[[DH]] {transpose_a = true} : (tensor<2x4xbf16>, tensor<2x3xbf16>) -> tensor<4x3xbf16>
// GRAD: %[[DW32:.*]] = gopt.cast %[[DW]] : (tensor<4x3xbf16>) -> tensor<4x3xf32>
// GRAD: return %{{.*}}, %[[DW32]]

/// Without the pass the seed is 1 and nothing multiplies by it.
// NOSCALE-LABEL: func @step
// NOSCALE-NOT: gopt.mul
// NOSCALE: return

/// The optimizer unscales in f32, checks every gradient once, keeps the
/// parameter and Adam's state (and step) on overflow, and updates the scale.
// DYN-LABEL: func @step
// DYN-SAME: %[[W:[^:]*]]: tensor<4x3xf32> {gopt.name = "w", gopt.state = "param"}
// DYN-SAME: %[[S:[^:]*]]: tensor<f32> {{{.*}}gopt.name = "optimizer/loss_scale"
// DYN-SAME: %[[T:[^:]*]]: tensor<f32> {gopt.name = "optimizer/step", gopt.state = "optimizer"}
// DYN-SAME: %[[M:[^:]*]]: tensor<4x3xf32> {gopt.name = "w/m", gopt.state = "optimizer"}
// DYN-SAME: %[[V:[^:]*]]: tensor<4x3xf32> {gopt.name = "w/v", gopt.state = "optimizer"}
// DYN-SAME: %[[N:[^:]*]]: tensor<f32> {gopt.name = "optimizer/loss_scale/good_steps", gopt.state = "optimizer"}
// DYN-SAME: {gopt.name = "optimizer/loss_scale/new", gopt.updates = "optimizer/loss_scale"}, tensor<f32> {gopt.name = "optimizer/loss_scale/good_steps/new", gopt.updates = "optimizer/loss_scale/good_steps"})
// DYN: %[[INV:.*]] = gopt.div %{{.*}}, %[[S]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// DYN: %[[G:.*]] = gopt.mul %{{.*}}, %[[INV]] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
// DYN: %[[OK:.*]] = gopt.all_finite %[[G]] : (tensor<4x3xf32>) -> tensor<i1>
// DYN: %[[T1:.*]] = gopt.add %[[T]]
// DYN: gopt.select %[[OK]], %[[T1]], %[[T]]
// DYN: %[[P:.*]], %[[M1:.*]], %[[V1:.*]] = gopt.adam_update %[[W]], %[[G]], %[[M]], %[[V]], %[[T1]]
// DYN: gopt.select %[[OK]], %[[P]], %[[W]]
// DYN: gopt.select %[[OK]], %[[M1]], %[[M]]
// DYN: gopt.select %[[OK]], %[[V1]], %[[V]]
// DYN: gopt.loss_scale_update %[[S]], %[[N]], %[[OK]] {growth_interval = 100 : i64}

/// A fixed scale: unscaled, no check, no select, no scale update.
// FIXED-LABEL: func @step
// FIXED-SAME: gopt.initial_value = dense<1.280000e+02> : tensor<f32>, gopt.name = "optimizer/loss_scale", gopt.state = "optimizer"}
// FIXED: gopt.div
// FIXED: gopt.mul
// FIXED-NOT: gopt.all_finite
// FIXED-NOT: gopt.select
// FIXED: gopt.sgd_update
// FIXED-NOT: gopt.loss_scale_update
// FIXED: return
func.func @step(%x: tensor<2x4xf32> {gopt.name = "x"}, %labels: tensor<2xi64> {gopt.name = "labels"},
                %w: tensor<4x3xf32> {gopt.name = "w", gopt.state = "param"})
    -> (tensor<f32> {gopt.name = "loss"}) {
  %xh = gopt.cast %x : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  %wh = gopt.cast %w : (tensor<4x3xf32>) -> tensor<4x3xbf16>
  %yh = gopt.matmul %xh, %wh : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  %y = gopt.cast %yh : (tensor<2x3xbf16>) -> tensor<2x3xf32>
  %l = gopt.softmax_cross_entropy %y, %labels : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
  return %l : tensor<f32>
}
