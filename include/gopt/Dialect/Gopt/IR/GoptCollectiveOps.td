//===- GoptCollectiveOps.td - collectives across replicas --*- tablegen -*-===//
//
// Ops that exchange values between the replicas of a data-parallel training
// run (`--gopt-data-parallel`). The runtime runs them on the session's
// communicator (Gloo between CPU processes, NCCL between GPUs); a session
// without one is a single replica, where they are the identity. Included by
// GoptOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_DIALECT_GOPT_IR_GOPTCOLLECTIVEOPS_TD
#define GOPT_DIALECT_GOPT_IR_GOPTCOLLECTIVEOPS_TD

def Gopt_ReductionAttr : Gopt_StrEnumAttr<["sum", "mean"], "sum">;

// Not Pure: every replica must issue the same collectives in the same order,
// so no rewrite may remove, merge or move one on its own.
def Gopt_AllReduceOp : Gopt_InferredOp<"all_reduce"> {
  let notDifferentiable = "a collective: data parallelism all-reduces the gradients themselves, after autodiff";
  let summary = "sum or mean of each operand over all replicas";
  let description = [{
    Result `i` is the elementwise `reduction` (`sum`, or `mean`: the sum
    divided by the number of replicas) of operand `i` over all replicas;
    every result has its operand's type. Several operands make one
    bucket: one collective call carries them all (PyTorch DDP's gradient
    buckets). With one replica every result equals its operand.

    ```mlir
    %g0, %g1 = gopt.all_reduce %dw, %db {reduction = "mean"}
        : (tensor<5x5x1x32xf32>, tensor<32xf32>) -> (tensor<5x5x1x32xf32>, tensor<32xf32>)
    ```
  }];
  let arguments = (ins Variadic<Gopt_FloatTensor>:$inputs,
                   Gopt_ReductionAttr:$reduction);
  let results = (outs Variadic<Gopt_FloatTensor>:$results);
  let runtimeShapeFunction = "allReduceShape";
  // Result i has operand i's element type (a bucket may mix them).
  let resultElementType = "any";
}

#endif // GOPT_DIALECT_GOPT_IR_GOPTCOLLECTIVEOPS_TD
