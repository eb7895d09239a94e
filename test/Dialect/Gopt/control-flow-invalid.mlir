// RUN: gopt-opt %s -split-input-file -verify-diagnostics

/// One case per verifier error of gopt.if and gopt.loop.

func.func @if_block_args(%c: tensor<i1>, %x: tensor<4xf32>) {
  // expected-error@+1 {{'gopt.if' op then region takes () but expects the captures (tensor<4xf32>)}}
  %y = gopt.if %c captures(%x : tensor<4xf32>) : tensor<i1> -> tensor<4xf32> then {
    %z = gopt.constant dense<0.0> : tensor<4xf32>
    gopt.yield %z : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>):
    gopt.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @if_yield_count(%c: tensor<i1>, %x: tensor<4xf32>) {
  // expected-error@+1 {{'gopt.if' op else region yields 2 values, expects 1 (the results)}}
  %y = gopt.if %c captures(%x : tensor<4xf32>) : tensor<i1> -> tensor<4xf32> then {
  ^bb0(%a: tensor<4xf32>):
    gopt.yield %a : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>):
    gopt.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }
  return
}

// -----

func.func @if_yield_type(%c: tensor<i1>, %x: tensor<4xf32>, %w: tensor<5xf32>) {
  // expected-error@+1 {{'gopt.if' op else region yields 'tensor<5xf32>' as value #0, incompatible with 'tensor<4xf32>'}}
  %y = gopt.if %c captures(%x, %w : tensor<4xf32>, tensor<5xf32>) : tensor<i1> -> tensor<4xf32> then {
  ^bb0(%a: tensor<4xf32>, %b: tensor<5xf32>):
    gopt.yield %a : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>, %b: tensor<5xf32>):
    gopt.yield %b : tensor<5xf32>
  }
  return
}

// -----

/// A region reads only its arguments: an outer value is an error.
func.func @if_not_isolated(%c: tensor<i1>, %x: tensor<4xf32>) {
  // expected-note@+1 {{required by region isolation constraints}}
  %y = gopt.if %c : tensor<i1> -> tensor<4xf32> then {
    // expected-error@+1 {{using value defined outside the region}}
    gopt.yield %x : tensor<4xf32>
  } else {
    gopt.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @loop_scan_needs_invariant(%n: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>) {
  // expected-error@+1 {{'gopt.loop' op has scan outputs, whose leading dimension is the number of iterations, so it needs cond_invariant (the body must not end the loop early)}}
  %r, %s = gopt.loop %n, %c carried(%v : tensor<2xf32>) : tensor<i64>, tensor<i1> -> tensor<2xf32>, tensor<?x2xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %x: tensor<2xf32>):
    gopt.yield %cc, %x, %x : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  return
}

// -----

func.func @loop_invariant_but_computed(%n: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>) {
  // expected-error@+1 {{'gopt.loop' op is cond_invariant but its body yields a condition other than its condition argument or true}}
  %r = gopt.loop %n, %c carried(%v : tensor<2xf32>) {cond_invariant} : tensor<i64>, tensor<i1> -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %x: tensor<2xf32>):
    %f = gopt.constant dense<false> : tensor<i1>
    gopt.yield %f, %x : tensor<i1>, tensor<2xf32>
  }
  return
}

// -----

func.func @loop_carried_type(%n: tensor<i64>, %c: tensor<i1>, %v: tensor<2xf32>) {
  // expected-error@+1 {{'gopt.loop' op body yields 'tensor<3xf32>' as value #1, incompatible with 'tensor<2xf32>'}}
  %r = gopt.loop %n, %c carried(%v : tensor<2xf32>) : tensor<i64>, tensor<i1> -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %x: tensor<2xf32>):
    %z = gopt.constant dense<0.0> : tensor<3xf32>
    gopt.yield %cc, %z : tensor<i1>, tensor<3xf32>
  }
  return
}

// -----

func.func @loop_scan_shape(%n: tensor<i64>, %v: tensor<2xf32>) {
  %t = gopt.constant dense<true> : tensor<i1>
  // expected-error@+1 {{'gopt.loop' op scan output #0 'tensor<?x3xf32>' is not the body's 'tensor<2xf32>' stacked along a new leading dimension}}
  %r, %s = gopt.loop %n, %t carried(%v : tensor<2xf32>) {cond_invariant} : tensor<i64>, tensor<i1> -> tensor<2xf32>, tensor<?x3xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %x: tensor<2xf32>):
    gopt.yield %cc, %x, %x : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  return
}
