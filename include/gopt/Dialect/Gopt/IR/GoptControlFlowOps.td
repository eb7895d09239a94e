//===- GoptControlFlowOps.td - conditionals and loops -------*- tablegen -*-===//
//
// ONNX's If and Loop. Each region is isolated from above: the values it
// reads from outside are explicit operands (`captures`) and its block
// arguments, so a region is a graph of its own. The plan lowering turns
// each region into a subplan, and the runtime runs it in a session of its
// own (docs/architecture.md, "Control flow"). Included by GoptOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTCONTROLFLOWOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTCONTROLFLOWOPS_TD

def Gopt_ConditionTensor : 0DTensorOf<[I1]>;
def Gopt_TripCountTensor : 0DTensorOf<[I64]>;

def Gopt_IfOp : Gopt_Op<"if", [IsolatedFromAbove, RecursiveMemoryEffects, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["If"];
  let summary = "run one of two regions, chosen by a bool computed at run time";
  let description = [{
    ONNX's `If`. Both regions take the `captures` as block arguments and
    end in `gopt.yield` with one value per result. A result's type is that
    of both branches' yields; a dimension on which they may differ is
    dynamic, and the runtime requires both branches to give the same shape
    for the inputs at hand (the memory plan is made before `cond` is known).

    A constant `cond` folds: the chosen region replaces the op.

    ```mlir
    %y = gopt.if %cond captures(%x : tensor<4xf32>) : tensor<i1> -> tensor<4xf32> then {
    ^bb0(%a: tensor<4xf32>):
      %r = gopt.relu %a : (tensor<4xf32>) -> tensor<4xf32>
      gopt.yield %r : tensor<4xf32>
    } else {
    ^bb0(%a: tensor<4xf32>):
      %n = gopt.neg %a : (tensor<4xf32>) -> tensor<4xf32>
      gopt.yield %n : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Gopt_ConditionTensor:$cond, Variadic<Gopt_AnyTensor>:$captures);
  let results = (outs Variadic<Gopt_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$then_region, SizedRegion<1>:$else_region);
  let assemblyFormat = [{
    $cond (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict `:`
    type($cond) (`->` type($results)^)? `then` $then_region `else` $else_region
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  // Result shapes come from the regions' subplans, resolved by the session.
  let regionPlans = 1;
  let resultElementType = "any";
}

def Gopt_LoopOp : Gopt_Op<"loop", [IsolatedFromAbove, RecursiveMemoryEffects,
                                   AttrSizedOperandSegments, Gopt_Differentiable]> {
  let onnxRuleOpTypes = ["Loop"];
  let summary = "run a region while a counter and a condition allow";
  let description = [{
    ONNX's `Loop`. The body's block arguments are the iteration number
    (`tensor<i64>`, from 0), the condition, the loop-carried values and the
    `captures`. It yields the next condition, the next carried values (of
    the carried values' shapes) and one value per scan output. The loop
    runs while the iteration number is below `max_trip_count` and the
    condition is true (the condition is tested before each iteration). The
    results are the final carried values, then each scan output stacked
    along a new leading dimension.

    The scan outputs' leading dimension is the number of iterations, which
    the runtime must know before the loop runs: a loop with scan outputs
    needs `cond_invariant` (the body yields its condition argument, or
    true), and the session reads `max_trip_count` and `cond` on the host
    while it resolves shapes.

    ```mlir
    %sum, %all = gopt.loop %n, %true carried(%zero : tensor<1xf32>) captures(%x : tensor<5xf32>)
        {cond_invariant} : tensor<i64>, tensor<i1> -> tensor<1xf32>, tensor<?x1xf32> {
    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<1xf32>, %xs: tensor<5xf32>):
      ...
      gopt.yield %c, %next, %next : tensor<i1>, tensor<1xf32>, tensor<1xf32>
    }
    ```
  }];
  let arguments = (ins Gopt_TripCountTensor:$max_trip_count,
                   Gopt_ConditionTensor:$cond,
                   Variadic<Gopt_AnyTensor>:$initial,
                   Variadic<Gopt_AnyTensor>:$captures,
                   UnitAttr:$cond_invariant);
  let results = (outs Variadic<Gopt_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $max_trip_count `,` $cond (`carried` `(` $initial^ `:` type($initial) `)`)?
    (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict `:`
    type($max_trip_count) `,` type($cond) (`->` type($results)^)? $body
  }];
  let hasVerifier = 1;
  let regionPlans = 1;
  let resultElementType = "any";
  let hostValueOperands = [0, 1];
}

def Gopt_YieldOp : Gopt_Op<"yield", [Pure, Terminator,
                                     ParentOneOf<["IfOp", "LoopOp"]>]> {
  let notDifferentiable = "a region terminator: the enclosing if's or loop's gradient covers it";
  let summary = "the values a region of gopt.if or gopt.loop gives back";
  let arguments = (ins Variadic<Gopt_AnyTensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  // The region's outputs in its subplan, not an op of its own.
  let compileTimeOnly = 1;
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTCONTROLFLOWOPS_TD
