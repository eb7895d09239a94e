// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of GoptCollectiveOps.td.

func.func @no_operands() {
  // expected-error@+1 {{'gopt.all_reduce' op expects at least one operand (a bucket of tensors)}}
  %0 = gopt.all_reduce : () -> tensor<4xf32>
  return
}

// -----

func.func @result_type(%a: tensor<4xf32>) {
  // expected-error@+2 {{'gopt.all_reduce' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<5xf32>'}}
  // expected-error@+1 {{'gopt.all_reduce' op failed to infer returned types}}
  %0 = gopt.all_reduce %a : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @result_count(%a: tensor<4xf32>, %b: tensor<2xf32>) {
  // expected-error@+2 {{'gopt.all_reduce' op inferred type(s) 'tensor<4xf32>', 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error@+1 {{'gopt.all_reduce' op failed to infer returned types}}
  %0 = gopt.all_reduce %a, %b : (tensor<4xf32>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @integer(%a: tensor<4xi64>) {
  // expected-error@+1 {{'gopt.all_reduce' op operand #0 must be variadic of ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<4xi64>'}}
  %0 = gopt.all_reduce %a : (tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @reduction(%a: tensor<4xf32>) {
  // expected-error@+1 {{'gopt.all_reduce' op expects reduction "sum" or "mean", got "max"}}
  %0 = gopt.all_reduce %a {reduction = "max"} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
