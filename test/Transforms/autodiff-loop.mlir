// RUN: gopt-opt %s --gopt-autodiff | FileCheck %s

/// gopt.loop's gradient is backpropagation through its iterations: a
/// replay of the loop that also stacks each iteration's carried values (a
/// scan output), then a reverse loop over the same trip count that carries
/// the carried values' gradients and the captures' sums, and whose
/// iteration j gathers forward iteration T-1-j's carried values,
/// recomputes it (the cloned body) and differentiates it.
// CHECK-LABEL: func @loop
// CHECK: %[[F:.*]] = gopt.loop %[[N:[^ ,]*]], %[[C:[^ ]*]] carried(%[[X:[^ ]*]] : tensor<2xf32>) captures(%[[P:[^ ]*]] : tensor<2xf32>) {cond_invariant} : tensor<i64>, tensor<i1> -> tensor<2xf32> {
// CHECK: %[[R:.*]]:2 = gopt.loop %[[N]], %[[C]] carried(%[[X]] : tensor<2xf32>) captures(%[[P]] : tensor<2xf32>) {cond_invariant} : tensor<i64>, tensor<i1> -> tensor<2xf32>, tensor<?x2xf32> {
// CHECK-NEXT: ^bb0(%{{[^:]*}}: tensor<i64>, %[[RC:[^:]*]]: tensor<i1>, %[[RX:[^:]*]]: tensor<2xf32>, %{{[^:]*}}: tensor<2xf32>):
// CHECK-NEXT: %[[NEXT:.*]] = gopt.mul %[[RX]]
// CHECK-NEXT: gopt.yield %[[RC]], %[[NEXT]], %[[RX]] : tensor<i1>, tensor<2xf32>, tensor<2xf32>
// CHECK: %[[Z:.*]] = gopt.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK: %[[B:.*]]:2 = gopt.loop %[[N]], %[[C]] carried(%{{[^ ,]*}}, %[[Z]] : tensor<2xf32>, tensor<2xf32>) captures(%[[N]], %[[R]]#1, %[[P]] : tensor<i64>, tensor<?x2xf32>, tensor<2xf32>) {cond_invariant} : tensor<i64>, tensor<i1> -> tensor<2xf32>, tensor<2xf32> {
// CHECK-NEXT: ^bb0(%[[J:[^:]*]]: tensor<i64>, %[[BC:[^:]*]]: tensor<i1>, %[[DX:[^:]*]]: tensor<2xf32>, %[[SUM:[^:]*]]: tensor<2xf32>, %[[T:[^:]*]]: tensor<i64>, %[[STACK:[^:]*]]: tensor<?x2xf32>, %[[Q:[^:]*]]: tensor<2xf32>):
// CHECK: %[[LAST:.*]] = gopt.sub %[[T]], %{{.*}}
// CHECK-NEXT: %[[I:.*]] = gopt.sub %[[LAST]], %[[J]]
// CHECK-NEXT: %[[XI:.*]] = gopt.gather %[[STACK]], %[[I]] : (tensor<?x2xf32>, tensor<i64>) -> tensor<2xf32>
// CHECK-NEXT: gopt.mul %[[XI]], %[[Q]]
// CHECK-NEXT: %[[DXI:.*]] = gopt.mul %[[DX]], %[[Q]]
// CHECK-NEXT: %[[DQ:.*]] = gopt.mul %[[DX]], %[[XI]]
// CHECK-NEXT: %[[ACC:.*]] = gopt.add %[[SUM]], %[[DQ]]
// CHECK-NEXT: gopt.yield %[[BC]], %[[DXI]], %[[ACC]] : tensor<i1>, tensor<2xf32>, tensor<2xf32>
// CHECK: return %{{.*}}, %[[B]]#1 : tensor<f32>, tensor<2xf32>
func.func @loop(%n: tensor<i64>, %x: tensor<2xf32>, %p: tensor<2xf32> {gopt.name = "p", gopt.state = "param"}) -> (tensor<f32> {gopt.name = "loss"}) {
  %c = gopt.constant dense<true> : tensor<i1>
  %r = gopt.loop %n, %c carried(%x : tensor<2xf32>) captures(%p : tensor<2xf32>) {cond_invariant} : tensor<i64>, tensor<i1> -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cc: tensor<i1>, %acc: tensor<2xf32>, %q: tensor<2xf32>):
    %next = gopt.mul %acc, %q : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    gopt.yield %cc, %next : tensor<i1>, tensor<2xf32>
  }
  %s = gopt.reduce_sum %r {axes = array<i64>} : (tensor<2xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
