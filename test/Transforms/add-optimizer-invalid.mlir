// RUN: gopt-opt %s -split-input-file -verify-diagnostics --gopt-add-optimizer

// expected-error @+1 {{gopt-add-optimizer: the function returns no gradients (run --gopt-autodiff first)}}
func.func @no_gradients(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{gopt-add-optimizer: result 0 is the gradient of 'w', which is not a parameter argument}}
func.func @not_a_param(%w: tensor<2xf32> {gopt.name = "w"}) -> (tensor<2xf32> {gopt.gradient_of = "w"}) {
  return %w : tensor<2xf32>
}
