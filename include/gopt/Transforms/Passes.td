//===- Passes.td - gopt graph rewrites ---------------------*- tablegen -*-===//
//
// gopt's passes: the graph rewrites (layout conversion, batch-norm fusion
// and folding, conv + bias + activation fusion, constant folding, debug-op
// stripping), device placement, quantization, mixed precision and the
// passes that turn a forward graph into a training step. Each works on one
// function (a graph) and does one thing.
//
//===----------------------------------------------------------------------===//

#ifndef GOPT_TRANSFORMS_PASSES_TD
#define GOPT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def StripDebugOps : Pass<"gopt-strip-debug-ops", "mlir::func::FuncOp"> {
  let summary = "Remove identity, check_numerics, stop_gradient, inference "
                "dropout and dead pure ops";
  let description = [{
    Inference graphs carry ops that compute nothing: `identity`,
    `check_numerics` (a run-time NaN/Inf check), `stop_gradient` (only
    meaningful to autodiff) and `dropout` with `training = false`. They are
    replaced by their operand, and pure ops whose results are unused are
    erased.

    ```mlir
    %0 = gopt.check_numerics %x {message = "conv1"} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = gopt.relu %0 : (tensor<4xf32>) -> tensor<4xf32>
    // becomes
    %1 = gopt.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    ```

    With `training=true`, `stop_gradient` is kept (autodiff needs it).
    With `inference=true`, dropout in training mode goes too (evaluating a
    model exported for training).
  }];
  let options = [
    Option<"training", "training", "bool", /*default=*/"false",
           "The graph is a training graph: keep stop_gradient">,
    Option<"inference", "inference", "bool", /*default=*/"false",
           "Remove training-mode dropout too">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Report what the pass changed as a remark on each function "
           "(--gopt-report does it for every gopt pass)">,
  ];
  let statistics = [
    Statistic<"numRemoved", "num-removed", "Number of debug ops removed">,
    Statistic<"numDead", "num-dead", "Number of dead pure ops erased">,
  ];
}

def FoldConstants : Pass<"gopt-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluate ops whose operands are all constants";
  let description = [{
    Replaces an op whose operands are all `gopt.constant`s by a
    `gopt.constant` holding its result, computed at compile time with the
    semantics of docs/op-semantics.md: elementwise arithmetic with
    broadcasting, unary math, transpose, reshape, flatten, cast, concat,
    slice, pad, reductions, and `shape` of a statically shaped tensor (shape
    computations need no constant operand). Results with more than
    `max-elements` elements are left alone so the IR does not balloon.

    ```mlir
    %a = gopt.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %b = gopt.rsqrt %a : (tensor<2xf32>) -> tensor<2xf32>
    // becomes
    %b = gopt.constant dense<[1.0, 0.707106769]> : tensor<2xf32>
    ```
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1 << 22",
           "Largest result (in elements) that is folded">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Report what the pass changed as a remark on each function "
           "(--gopt-report does it for every gopt pass)">,
  ];
  let statistics = [
    Statistic<"numFolded", "num-folded", "Number of ops folded to constants">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def FuseBatchNorm : Pass<"gopt-fuse-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Replace decomposed batch normalization by gopt.batch_norm";
  let description = [{
    Recognises batch normalization written out in primitives and replaces it
    by one `gopt.batch_norm`:

    - TensorFlow 1.x unfused batch norm (`tf.nn.moments` +
      `tf.nn.batch_normalization`), training form:
      `mean = reduce_mean(x, N,H,W)`,
      `var = reduce_mean(squared_difference(x, mean), N,H,W)`,
      `inv = rsqrt(var + eps) * gamma`, `y = x * inv + (beta - mean * inv)`
      becomes `batch_norm {training = true}`;
    - the same formula with given (moving) mean and variance becomes an
      inference `batch_norm`;
    - the ONNX/PyTorch export form `(x - mean) * (gamma * rsqrt(var + eps)) + beta`;
    - `x * s + b` and `(x - m) * s + b` with per-channel constants (frozen
      graphs after constant folding) become a `batch_norm` with mean 0,
      variance 1 and epsilon 0, which computes exactly `x * s + b`.

    NHWC and NCHW (and rank-2 `[N, C]`) are recognised from the reduction
    axes or the per-channel operands' shapes. A pattern is left alone when it
    is partial, reduces over other axes, places epsilon elsewhere, or when an
    intermediate value has a user outside the pattern.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Report what the pass changed as a remark on each function "
           "(--gopt-report does it for every gopt pass)">,
  ];
  let statistics = [
    Statistic<"numFused", "num-fused", "Number of batch norms fused">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def FoldBatchNorm : Pass<"gopt-fold-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Fold inference batch_norm, and constant multiplies and adds, "
                "into the preceding conv2d/matmul";
  let description = [{
    An inference `batch_norm` with constant parameters after a `conv2d` (or a
    `matmul`) with a constant filter (weights) and the conv as its only
    user is folded: with `s = scale * rsqrt(variance + epsilon)`, the filter's
    output channel `o` is scaled by `s[o]` and the bias becomes
    `(bias - mean) * s + offset`, computed at compile time.

    ```mlir
    %c = gopt.conv2d %x, %w : ...
    %y = gopt.batch_norm %c, %scale, %offset, %mean, %var : ...
    // becomes
    %y = gopt.conv2d %x, %w2, %b2 : ...
    ```

    Likewise a `mul` or `add` of a constant that is a scalar or varies only
    along the output channels, applied to a conv2d (no activation, constant
    filter and bias, the conv as its only user): PP-LCNet's learnable
    affine blocks, for example. The filter and bias absorb it.

    And a `matmul` with constant weights (and bias) whose result is
    multiplied by a constant varying only along the last dimension
    (ConvNeXt's layer scale) absorbs the scale into its weights and bias.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Report what the pass changed as a remark on each function "
           "(--gopt-report does it for every gopt pass)">,
    Option<"foldMatmulScale", "fold-matmul-scale", "bool", /*default=*/"true",
           "Fold a constant per-column scale of a matmul's result into its "
           "weights">,
  ];
  let statistics = [
    Statistic<"numFolded", "num-folded", "Number of batch norms folded">,
    Statistic<"numAffineFolded", "num-affine-folded",
              "Number of constant multiplies and adds folded into convs">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def FuseConvBiasActivation
    : Pass<"gopt-fuse-conv-bias-activation", "mlir::func::FuncOp"> {
  let summary = "Fuse conv2d + bias + relu/relu6/sigmoid into one conv2d";
  let description = [{
    `bias_add` (or `add` of a per-channel constant) after a `conv2d` becomes
    the conv's `bias` operand, and a following `relu`, `relu6` (or
    `clip [0, 6]`) or `sigmoid` becomes its `activation`, so a backend runs
    one kernel. Only when each intermediate result has one use.

    Also, an unpadded `avg_pool` of a plain 1x1 `conv2d` (no activation)
    pools the conv's input instead where that does fewer operations
    (DenseNet's transitions): both are linear per pixel and the pool's
    weights sum to 1, so the result is the same.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Report what the pass changed as a remark on each function "
           "(--gopt-report does it for every gopt pass)">,
    Option<"poolBeforeConv", "pool-before-conv", "bool", /*default=*/"true",
           "Move an average pool of a 1x1 conv2d's result before the conv "
           "where that does fewer operations">,
  ];
  let statistics = [
    Statistic<"numBiasFused", "num-bias-fused", "Number of biases fused">,
    Statistic<"numActivationFused", "num-activation-fused",
              "Number of activations fused">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def ConvertLayout : Pass<"gopt-convert-layout", "mlir::func::FuncOp"> {
  let summary = "Convert layout-sensitive ops to NCHW or NHWC";
  let description = [{
    Rewrites conv2d, max_pool, avg_pool, global_avg_pool, batch_norm and
    bias_add to the target `data_format`, with transposes around each;
    constant conv filters are transposed at compile time (OIHW for NCHW,
    HWIO for NHWC). Transposes then sink through layout-agnostic ops
    (elementwise, activations, casts) and axis-carrying ops (softmax,
    reductions, concat, pad, slice get their axes rewritten), and pairs
    cancel, so a converted network keeps transposes only at its boundary.

    `layout=auto` picks per element type and `target`: NCHW for f32 (cuDNN
    and oneDNN), NHWC for f16/bf16 on the gpu (tensor cores), and says so in
    a remark. The element type is the graph's own, or `precision` when a
    later pass (gopt-mixed-precision) will lower it.
    An op that cannot be converted is left with a remark, or fails the pass
    with `strict=true`.
  }];
  let options = [
    Option<"layout", "layout", "::gopt::DataFormat",
           /*default=*/"::gopt::DataFormat::NCHW",
           "Target data format: NCHW, NHWC or auto",
           [{::llvm::cl::values(
             clEnumValN(::gopt::DataFormat::NCHW, "NCHW", "channels first"),
             clEnumValN(::gopt::DataFormat::NHWC, "NHWC", "channels last"),
             clEnumValN(::gopt::DataFormat::Auto, "auto",
                        "per element type and target, with a remark"))}]>,
    Option<"target", "target", "::gopt::TargetDevice",
           /*default=*/"::gopt::TargetDevice::Gpu",
           "Device the layout is chosen for with layout=auto: cpu or gpu",
           [{::llvm::cl::values(
             clEnumValN(::gopt::TargetDevice::Cpu, "cpu", "the CPU"),
             clEnumValN(::gopt::TargetDevice::Gpu, "gpu", "a CUDA GPU"))}]>,
    Option<"precision", "precision", "::gopt::Precision",
           /*default=*/"::gopt::Precision::F32",
           "Element type the convolutions will run in, for layout=auto: "
           "bf16 or f16 when a later pass lowers the graph to it; f32 reads "
           "the graph's own",
           [{::llvm::cl::values(
             clEnumValN(::gopt::Precision::F32, "f32", "the graph's own"),
             clEnumValN(::gopt::Precision::BF16, "bf16",
                        "a later pass lowers the graph to bf16"),
             clEnumValN(::gopt::Precision::F16, "f16",
                        "a later pass lowers the graph to f16"))}]>,
    Option<"strict", "strict", "bool", /*default=*/"false",
           "Fail on an op that cannot be converted instead of a remark">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Report what the pass changed as a remark on each function "
           "(--gopt-report does it for every gopt pass)">,
    Option<"channelsLastIfFewerTransposes", "channels-last-if-fewer-transposes",
           "bool", /*default=*/"false",
           "With layout=NCHW: convert to NHWC instead where NCHW would leave "
           "many more transposes inside the network (graphs that work "
           "channels-last between convolutions, e.g. ConvNeXt's LayerNorm "
           "over channels); gopt-optimize sets it for f32 on the cpu">,
  ];
  let statistics = [
    Statistic<"numConverted", "num-converted",
              "Number of layout-sensitive ops converted">,
    Statistic<"numTransposesRemoved", "num-transposes-removed",
              "Number of transposes cancelled or folded away">,
    Statistic<"numTransposesLeft", "num-transposes-left",
              "Number of transposes left in the graph">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def PlaceDevices : Pass<"gopt-place-devices", "mlir::func::FuncOp"> {
  let summary = "Give every op a device, group host ops, insert transfers";
  let description = [{
    Every gopt op gets a `device` ("cpu" or "gpu") from what the backends can
    run, asked of the runtime's own kernel availability
    (`gopt/runtime/KernelAvailability.h`), so compiler and runtime agree:

    - a device pinned in the input is kept; if it has no kernel for the op,
      the pass fails, or with `allow-soft-placement=true` moves the op to the
      other device with a remark saying why;
    - other ops go to `default` when it has a kernel, else to the CPU with a
      remark;
    - CPU-op elimination: small ops (at most `host-op-max-elements` elements,
      static shapes; never conv/matmul/pooling/normalization/softmax) next to
      host ops move to the host when that does not add host<->device copies,
      so what must stay on the host forms groups and crossings are fewest.
      Shape arithmetic on static shapes is expected to be folded first
      (`gopt-fold-constants`, as `gopt-optimize` does);
    - constants are never transferred: a constant used on both devices is
      duplicated, one per device;
    - a `gopt.transfer` is inserted once per (value, destination device)
      where a value crosses devices.

    Convention: function arguments live on the host and results return to
    the host; the transfers this needs at the boundary are counted
    separately by `gopt-placement-report`.

    ```mlir
    %0 = gopt.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    %1 = gopt.dropout %0 {training = true} : (tensor<4xf32>) -> tensor<4xf32>
    // becomes (default=gpu; training dropout has no CUDA kernel)
    %t = gopt.transfer %x {from = "cpu", to = "gpu"} : ...
    %0 = gopt.relu %t {device = "gpu"} : ...
    %b = gopt.transfer %0 {from = "gpu", to = "cpu"} : ...
    %1 = gopt.dropout %b {device = "cpu", training = true} : ...
    ```
  }];
  let options = [
    Option<"defaultDevice", "default", "::gopt::TargetDevice",
           /*default=*/"::gopt::TargetDevice::Gpu",
           "Device for ops not pinned by the graph: gpu or cpu",
           [{::llvm::cl::values(
             clEnumValN(::gopt::TargetDevice::Cpu, "cpu", "the CPU"),
             clEnumValN(::gopt::TargetDevice::Gpu, "gpu", "a CUDA GPU"))}]>,
    Option<"allowSoftPlacement", "allow-soft-placement", "bool",
           /*default=*/"false",
           "Move an op pinned to a device without a kernel for it to the "
           "other device (with a remark) instead of failing">,
    Option<"hostOpMaxElements", "host-op-max-elements", "int64_t",
           /*default=*/"4096",
           "Largest op (elements of any operand or result) that may move to "
           "the host to save transfers">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Also report every op's device and why, and the transfers "
           "(as gopt-placement-report)">,
  ];
  let statistics = [
    Statistic<"numTransfers", "num-transfers", "Number of transfers inserted">,
    Statistic<"numGrouped", "num-grouped",
              "Number of ops moved to the host to save transfers">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def PlacementReport : Pass<"gopt-placement-report", "mlir::func::FuncOp"> {
  let summary = "Place devices (as gopt-place-devices) and report why and "
                "the transfers before and after";
  let description = [{
    Runs the placement of `gopt-place-devices` with the same options and
    emits a remark per op with its device and why, and one remark per
    function with the host<->device transfers of a naive placement (every op
    on the device its kernel allows, one copy per cross-device use) and of
    the placed graph (grouped, one copy per value and destination): count,
    interior and boundary (function arguments and results, which live on the
    host), bytes for static shapes and bytes per sample for dynamic ones.
    Use it instead of `gopt-place-devices`, not after it.
  }];
  let options = [
    Option<"defaultDevice", "default", "::gopt::TargetDevice",
           /*default=*/"::gopt::TargetDevice::Gpu",
           "Device for ops not pinned by the graph: gpu or cpu",
           [{::llvm::cl::values(
             clEnumValN(::gopt::TargetDevice::Cpu, "cpu", "the CPU"),
             clEnumValN(::gopt::TargetDevice::Gpu, "gpu", "a CUDA GPU"))}]>,
    Option<"allowSoftPlacement", "allow-soft-placement", "bool",
           /*default=*/"false",
           "Move an op pinned to a device without a kernel for it to the "
           "other device (with a remark) instead of failing">,
    Option<"hostOpMaxElements", "host-op-max-elements", "int64_t",
           /*default=*/"4096",
           "Largest op (elements of any operand or result) that may move to "
           "the host to save transfers">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def QuantizeWeights : Pass<"gopt-quantize-weights", "mlir::func::FuncOp"> {
  let summary = "Store large conv2d/matmul weights as int8 with a dequantize";
  let description = [{
    Weight-only quantization. Each conv2d filter and matmul weight (operand
    1) that is a constant f32 tensor with at least `min-elements` elements
    becomes an int8 `gopt.constant` and a `gopt.dequantize` at its use, so
    the plan stores one byte per weight (about 4x smaller) while the ops
    still compute in f32. Symmetric, round to nearest:
    `scale = max|w| / 127` over each output channel (`per-channel`: conv2d
    OIHW axis 0, HWIO axis 3, matmul `[K, N]` axis 1, or axis 0 with
    `transpose_b`) or over the whole tensor (`per-tensor`); an all-zero
    channel gets scale 1; `q = clamp(round(w / scale), -127, 127)`.
    Biases, batch-norm parameters and tensors below `min-elements` stay f32.
    Run it after `gopt-optimize` (batch-norm folding and layout conversion
    need constant weights).

    ```mlir
    %w = gopt.constant dense<...> : tensor<64x3x7x7xf32>
    %y = gopt.conv2d %x, %w {filter_format = "OIHW", ...} : ...
    // becomes
    %q = gopt.constant dense<...> : tensor<64x3x7x7xi8>
    %s = gopt.constant dense<...> : tensor<64xf32>
    %w = gopt.dequantize %q, %s {axis = 0 : i64} : (tensor<64x3x7x7xi8>, tensor<64xf32>) -> tensor<64x3x7x7xf32>
    %y = gopt.conv2d %x, %w {filter_format = "OIHW", ...} : ...
    ```
  }];
  let options = [
    Option<"bits", "bits", "int64_t", /*default=*/"8",
           "Bits per stored weight (only 8 is supported)">,
    Option<"granularity", "granularity", "::gopt::WeightGranularity",
           /*default=*/"::gopt::WeightGranularity::PerChannel",
           "One scale per output channel (per-channel) or per weight "
           "tensor (per-tensor)",
           [{::llvm::cl::values(
             clEnumValN(::gopt::WeightGranularity::PerChannel, "per-channel",
                        "one scale per output channel"),
             clEnumValN(::gopt::WeightGranularity::PerTensor, "per-tensor",
                        "one scale per weight tensor"))}]>,
    Option<"minElements", "min-elements", "int64_t", /*default=*/"1024",
           "Weights with fewer elements stay f32">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Report what the pass changed as a remark on each function "
           "(--gopt-report does it for every gopt pass)">,
  ];
  let statistics = [
    Statistic<"numQuantized", "num-quantized", "Number of weights quantized">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def Quantize : Pass<"gopt-quantize", "mlir::func::FuncOp"> {
  let summary = "Static int8: quantize/dequantize pairs from calibrated ranges";
  let description = [{
    Full int8 in the explicit Q/DQ form of ONNX Runtime and TensorRT: every
    f32 activation that a conv2d or matmul reads or produces is stored in
    int8, as a `gopt.quantize` / `gopt.dequantize` pair right after its
    definition that all its users read (the function's results keep the
    f32 value), with the symmetric per-tensor scale `threshold / 127`
    from `calibration` (the JSON of `gopt-run --calibrate`, matched by
    plan tensor name); a `max_pool` result reuses its input's scale, so
    pooling int8 values is exact. Constant conv2d/matmul weights become int8 per
    output channel as in `gopt-quantize-weights` (any size). Run it on the
    graph the calibration ran on (the same `gopt-optimize` pipeline), so
    the names match. A backend then runs each DQ -> conv -> Q chain as
    one int8 kernel; the reference backend runs the pairs as written,
    which gives the int8 accuracy.

    ```mlir
    %y = gopt.conv2d %x, %w ...
    // becomes
    %qx = gopt.quantize %x, %sx : ... -> tensor<...xi8>
    %dx = gopt.dequantize %qx, %sx : ... -> tensor<...xf32>
    %y = gopt.conv2d %dx, %dw ...
    %qy = gopt.quantize %y, %sy ...
    %dy = gopt.dequantize %qy, %sy ...
    ```

    A tensor missing from the file, or with a threshold that is not
    positive and finite, is an error naming it, unless `fallback=true`,
    which leaves that tensor in f32 with a remark.
  }];
  let options = [
    Option<"mode", "mode", "::gopt::QuantizeMode",
           /*default=*/"::gopt::QuantizeMode::Static",
           "static (activations and weights int8; for weights only, use "
           "--gopt-quantize-weights)",
           [{::llvm::cl::values(
             clEnumValN(::gopt::QuantizeMode::Static, "static",
                        "activations and weights"))}]>,
    Option<"calibration", "calibration", "std::string", /*default=*/"\"\"",
           "The ranges file written by gopt-run --calibrate">,
    Option<"fallback", "fallback", "bool", /*default=*/"false",
           "Leave uncalibrated tensors in f32 (with a remark) instead of "
           "failing">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Report what the pass changed as a remark on each function "
           "(--gopt-report does it for every gopt pass)">,
  ];
  let statistics = [
    Statistic<"numActivations", "num-activations",
              "Activations stored in int8">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def MixedPrecision : Pass<"gopt-mixed-precision", "mlir::func::FuncOp"> {
  let summary = "Run conv2d/matmul and their neighbours in f16 or bf16";
  let description = [{
    Automatic mixed precision in the manner of TensorFlow's
    auto_mixed_precision: every f32 op is on one of four lists.
    - allow: conv2d, matmul. Always in `type` (tensor cores, AVX-512 BF16
      and AMX do these in low precision at several times the f32 rate).
    - infer: add, sub, mul, bias_add, max, min, batch_norm (inference),
      avg_pool, global_avg_pool, reduce_mean, sigmoid, tanh, gelu, neg,
      abs, leaky_relu. In `type` when every float operand comes from an op
      already in `type` (or is a constant), and at least one does; so
      what follows an f32-only op stays f32.
    - clear: relu, relu6, clip, max_pool, reshape, flatten, transpose,
      concat, pad, slice, identity, dropout: the same rule; they lose no
      precision either way.
    - deny: everything else (softmax, log_softmax, exp, log, pow, div,
      sqrt, rsqrt, reductions other than mean, losses, training batch norm,
      every gradient and optimizer op): stays f32. `deny=` adds op kinds
      (e.g. `deny=add`).
    Casts go only where a value crosses between the two: one `gopt.cast`
    per value and direction, placed after its definition; f32 constants
    used in `type` become constants of `type` (no cast). The function's
    signature does not change: low-precision results are cast back to f32.

    ```mlir
    %y = gopt.conv2d %x, %w, %b {activation = "relu"} : (tensor<1x3x8x8xf32>, ...) -> tensor<1x4x8x8xf32>
    %z = gopt.softmax %y ...
    // becomes
    %xl = gopt.cast %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xbf16>
    %y = gopt.conv2d %xl, %wl, %bl {activation = "relu"} : (tensor<1x3x8x8xbf16>, ...) -> tensor<1x4x8x8xbf16>
    %yf = gopt.cast %y : (tensor<1x4x8x8xbf16>) -> tensor<1x4x8x8xf32>
    %z = gopt.softmax %yf ...
    ```
  }];
  let options = [
    Option<"type", "type", "::gopt::Precision",
           /*default=*/"::gopt::Precision::BF16",
           "Low-precision element type: bf16 or f16",
           [{::llvm::cl::values(
             clEnumValN(::gopt::Precision::BF16, "bf16", "bfloat16"),
             clEnumValN(::gopt::Precision::F16, "f16", "IEEE half"))}]>,
    ListOption<"deny", "deny", "std::string",
               "Op kinds (without the dialect prefix) kept in f32 in "
               "addition to the deny list">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Report what the pass changed as a remark on each function, and "
           "why each f32 op next to a low-precision one stayed f32 "
           "(--gopt-report does it for every gopt pass)">,
  ];
  let statistics = [
    Statistic<"numLowered", "num-lowered", "Ops moved to low precision">,
    Statistic<"numCasts", "num-casts", "Casts inserted">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

//===----------------------------------------------------------------------===//
// Training: forward graph -> training step
//===----------------------------------------------------------------------===//

def LiftParams : Pass<"gopt-lift-params", "mlir::func::FuncOp"> {
  let summary = "Turn trainable weight constants into parameter arguments";
  let description = [{
    Every f32 `gopt.constant` used as a trainable weight becomes a function
    argument marked `gopt.state = "param"`, named after the weight
    (`gopt.name`) and carrying its value as `gopt.initial_value`. The plan
    lowering makes such arguments runtime state: a training step updates
    them, `gopt-run --load-params`/`--save-params` read and write them.
    Trainable means an operand the op's ODS lists in `trainableOperands`:
    the filter or bias of a conv2d, an operand of a matmul, the bias of a
    bias_add, the scale or offset of a batch_norm, layer_norm or
    instance_norm, an embedding table (gather's data), PReLU's slope, or an
    operand of add/sub/mul with more than one element whose other operand
    is not constant (a dense layer's bias, a per-channel scale), directly
    or through reshapes, transposes and flattens (an exported unsqueeze of
    a norm's scale, einsum's transposed weight). Constants used anywhere
    else (shapes, scalars, batch-norm statistics) and those marked
    `gopt.fixed` (an ONNX Constant node's) stay constants.

    ```mlir
    %w = gopt.constant dense<...> : tensor<10x128xf32>
    %y = gopt.matmul %x, %w {transpose_b = true} : ...
    // becomes
    func.func @main(%x: ..., %w: tensor<10x128xf32> {gopt.name = "fc.weight", gopt.state = "param", gopt.initial_value = dense<...>})
    ```
  }];
  let options = [
    Option<"batchNormStats", "batch-norm-stats", "bool", /*default=*/"false",
           "Also lift constant batch-norm means and variances, as state "
           "marked buffer (updated by training, not by the optimizer)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Report what the pass changed as a remark on each function">,
  ];
}

def TrainBatchNorm : Pass<"gopt-train-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Put inference batch norms in training form";
  let description = [{
    A model exported for inference normalizes with its running statistics;
    training normalizes with the batch's and updates the running ones.
    Each inference-form `batch_norm` whose mean and variance are state
    arguments (`gopt-lift-params{batch-norm-stats=true}`) becomes the
    training form, and its updated running mean and variance are returned
    marked `gopt.updates`, so the runtime writes them back after every
    step. `momentum` is the weight of the old running value (TensorFlow's
    convention; PyTorch's 0.1 is 0.9 here).

    ```mlir
    %y = gopt.batch_norm %x, %s, %o, %mean, %var : ...
    // becomes
    %y, %bm, %bv, %rm, %rv = gopt.batch_norm %x, %s, %o, %mean, %var {training = true} : ...
    return ..., %rm, %rv  // {gopt.updates = "<mean>"}, {gopt.updates = "<var>"}
    ```
  }];
  let options = [
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Weight of the old running statistics">,
  ];
}

def AddLoss : Pass<"gopt-add-loss", "mlir::func::FuncOp"> {
  let summary = "Put a loss on a graph output";
  let description = [{
    Adds a `labels` argument and returns the scalar loss of output `output`
    (the first output when empty) as result `loss`, in place of the graph's
    outputs (kept too with `keep-outputs`). `kind=softmax-cross-entropy`
    takes `[N, C]` logits and `[N]` integer labels (`label-type` i64 or
    i32); `kind=mse` takes a target of the output's shape.

    ```mlir
    func.func @main(%x: tensor<?x784xf32>) -> (tensor<?x10xf32> {gopt.name = "logits"})
    // becomes
    func.func @main(%x: tensor<?x784xf32>, %labels: tensor<?xi64> {gopt.name = "labels"}) -> (tensor<f32> {gopt.name = "loss"})
    ```
  }];
  let options = [
    Option<"kind", "kind", "::gopt::LossKind",
           /*default=*/"::gopt::LossKind::SoftmaxCrossEntropy",
           "softmax-cross-entropy or mse",
           [{::llvm::cl::values(
             clEnumValN(::gopt::LossKind::SoftmaxCrossEntropy,
                        "softmax-cross-entropy",
                        "[N, C] logits, [N] class labels"),
             clEnumValN(::gopt::LossKind::Mse, "mse",
                        "mean squared error against a target"))}]>,
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "Name of the output the loss is computed on (default: the first)">,
    Option<"labelType", "label-type", "::gopt::LabelType",
           /*default=*/"::gopt::LabelType::I64",
           "Element type of the labels of softmax-cross-entropy: i64 or i32",
           [{::llvm::cl::values(
             clEnumValN(::gopt::LabelType::I64, "i64", "64-bit labels"),
             clEnumValN(::gopt::LabelType::I32, "i32", "32-bit labels"))}]>,
    Option<"keepOutputs", "keep-outputs", "bool", /*default=*/"false",
           "Keep the graph's outputs after the loss">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def LossScaling : Pass<"gopt-loss-scaling", "mlir::func::FuncOp"> {
  let summary = "Scale the loss so that f16/bf16 gradients do not underflow";
  let description = [{
    Runs between `gopt-add-loss` and `gopt-autodiff` on a mixed-precision
    training step (PyTorch's `GradScaler`, TensorFlow's
    `LossScaleOptimizer`, but as ops of the step rather than host logic).
    Adds an f32 scalar optimizer state `optimizer/loss_scale` (initially
    `init-scale`) and marks the loss result `gopt.loss_scale =
    "optimizer/loss_scale"`. Then `gopt-autodiff` starts the backward pass
    from the scale instead of 1,
    so the low-precision gradients are that many times larger, and
    `gopt-add-optimizer` multiplies each parameter's gradient by
    `1 / scale` in f32 before the update.

    With `dynamic=true` (the default) `gopt-add-optimizer` also checks the
    unscaled gradients with `gopt.all_finite`, keeps the parameters and the
    optimizer state (`gopt.select`) when one is inf or NaN, and updates the
    scale with `gopt.loss_scale_update`: halved after an overflow, doubled
    after `growth-interval` good steps in a row. The loss result stays the
    unscaled loss.

    ```mlir
    func.func @step(..., %scale: tensor<f32> {gopt.name = "optimizer/loss_scale",
        gopt.state = "optimizer", gopt.initial_value = dense<65536.0> : tensor<f32>,
        gopt.loss_scale_update = {growth_interval = 2000 : i64, ...}})
        -> (tensor<f32> {gopt.name = "loss", gopt.loss_scale = "optimizer/loss_scale"})
    ```
  }];
  let options = [
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "Initial loss scale (PyTorch's GradScaler default 2^16)">,
    Option<"dynamic", "dynamic", "bool", /*default=*/"true",
           "Skip steps with inf/NaN gradients and adapt the scale; false "
           "keeps init-scale fixed">,
    Option<"growthInterval", "growth-interval", "int64_t",
           /*default=*/"2000", "Good steps in a row before the scale grows">,
    Option<"growthFactor", "growth-factor", "double", /*default=*/"2.0",
           "Factor the scale grows by (> 1)">,
    Option<"backoffFactor", "backoff-factor", "double", /*default=*/"0.5",
           "Factor the scale shrinks by after an overflow (in (0, 1))">,
    Option<"loss", "loss", "std::string", /*default=*/"\"loss\"",
           "Name (gopt.name) of the scalar loss result">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def Autodiff : Pass<"gopt-autodiff", "mlir::func::FuncOp"> {
  let summary = "Reverse-mode differentiation of the loss by the parameters";
  let description = [{
    Appends the backward graph: for the scalar result named `loss` and every
    argument marked `gopt.state = "param"` (see `gopt-lift-params`), the
    gradient is computed by walking the graph backwards and returned as a
    result `grad/<param>` marked `gopt.gradient_of = "<param>"`, after the
    loss. Only ops between the parameters and the loss are differentiated;
    an op there without a gradient is an error naming it. A loss marked
    `gopt.loss_scale` (see `gopt-loss-scaling`) seeds the backward pass with
    that state argument instead of 1, and its gradients carry the mark.

    Each op there is asked for its gradient (`DifferentiableOpInterface`;
    docs/op-semantics.md lists the ops that implement it). Gradients
    include: cast (back to the operand's type: f32 master weights under
    mixed precision), add, sub, mul, div, max, min, squared_difference (with
    broadcasting), relu, relu6, clip, leaky_relu, abs, sigmoid, tanh, exp,
    log, neg, sqrt, rsqrt, erf, gelu (exact and tanh), softmax, log_softmax,
    concat, pad (constant),
    slice (step 1), identity-like ops, dropout (training mode: the
    mask is recomputed from the op's seed; dropouts without one get
    distinct seeds), reshape, flatten, transpose,
    bias_add, matmul (batched, with broadcasting), conv2d (activation none
    or relu), max_pool,
    avg_pool,
    global_avg_pool, reduce_sum and reduce_mean (static reduced dims),
    batch_norm (training form), softmax_cross_entropy and mse_loss.

    ```mlir
    %l = gopt.mse_loss %y, %t : ...
    return %l
    // gains
    %d = gopt.mse_loss_grad %y, %t : ...
    ... (the backward ops) ...
    return %l, %dw : tensor<f32>, tensor<4x2xf32>
    ```
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"loss\"",
           "Name (gopt.name) of the scalar result to differentiate">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def AddOptimizer : Pass<"gopt-add-optimizer", "mlir::func::FuncOp"> {
  let summary = "Turn gradients into parameter updates (SGD or Adam)";
  let description = [{
    Replaces each result marked `gopt.gradient_of = "P"` by the updated
    parameter (marked `gopt.updates = "P"`) and adds the optimizer's state
    as arguments marked `gopt.state = "optimizer"` (zeros initially) whose
    new values are returned marked `gopt.updates` too: `P/velocity` for
    `sgd`, `P/m`, `P/v` and one `optimizer/step` for `adam`. The plan
    lowering turns these into runtime state updated in place after every
    step, so the function becomes `(params, state, batch) -> (new params,
    new state, loss)` and the runtime keeps it all resident.

    Gradients marked `gopt.loss_scale` (a loss-scaled step) are unscaled
    first; under dynamic loss scaling the step is skipped (parameters and
    state kept, the scale backed off) when any gradient is inf or NaN, and
    a state `<scale>/good_steps` counts the good steps.
  }];
  let options = [
    Option<"kind", "kind", "::gopt::OptimizerKind",
           /*default=*/"::gopt::OptimizerKind::Sgd", "sgd or adam",
           [{::llvm::cl::values(
             clEnumValN(::gopt::OptimizerKind::Sgd, "sgd",
                        "SGD (with momentum)"),
             clEnumValN(::gopt::OptimizerKind::Adam, "adam", "Adam"))}]>,
    Option<"lr", "lr", "double", /*default=*/"-1.0",
           "Learning rate (default 0.01 for sgd, 0.001 for adam)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD with Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "L2 weight decay added to the gradient">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1.0e-8",
           "Adam epsilon">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

def DataParallel : Pass<"gopt-data-parallel", "mlir::func::FuncOp"> {
  let summary = "All-reduce every gradient across the replicas, in buckets";
  let description = [{
    Runs between `gopt-autodiff` and `gopt-add-optimizer`: every result
    marked `gopt.gradient_of` is replaced by its `gopt.all_reduce` (mean by
    default: each replica's loss is the mean over its own slice of the
    batch, so the mean of the replicas' gradients is the gradient of the
    whole batch's loss). Gradients are grouped into buckets of about
    `bucket-mb` megabytes (25, PyTorch DDP's default) in the order backward
    computes them, the reverse of the forward pass; each bucket is one
    all_reduce placed right after its last gradient, so that its
    communication may start while backward computes the next gradients.
    With one replica the runtime's all_reduce is the identity.

    `sync-batch-norm` also marks every training-form `batch_norm` and its
    `batch_norm_grad` `cross_replica`: their batch statistics (and the
    sums over the batch in dx) become those of the global batch, PyTorch's
    SyncBatchNorm. Without it each replica normalizes with its own batch's
    statistics, as the data-parallel "towers" of TensorFlow's benchmarks do.

    ```mlir
    // before: return %loss, %dw2, %dw1 (gradients of w2 and w1)
    %r:2 = gopt.all_reduce %dw2, %dw1 {reduction = "mean"} : ...
    return %loss, %r#0, %r#1
    ```
  }];
  let options = [
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "Bucket size in megabytes (10^6 bytes); 0: one bucket per gradient">,
    Option<"reduction", "reduction", "std::string", /*default=*/"\"mean\"",
           "mean (the default) or sum">,
    Option<"syncBatchNorm", "sync-batch-norm", "bool", /*default=*/"false",
           "Training batch norms use the global batch's statistics">,
  ];
  let dependentDialects = ["::gopt::GoptDialect"];
}

#endif // GOPT_TRANSFORMS_PASSES_TD
