/// A tensor whose range has zero width cannot be quantized: an error naming
/// it, or with fallback=true a remark and the tensor left in f32.
// RUN: not gopt-opt %s --gopt-quantize=calibration=%S/Inputs/calibration-small.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: gopt-opt %s --gopt-quantize='calibration=%S/Inputs/calibration-small.json fallback=true' 2>&1 | FileCheck %s --check-prefix=FALLBACK
// ZERO: error: {{.*}}gopt-quantize: tensor 'zero' has a range of zero width (threshold 0) (fallback=true leaves it in f32)
// FALLBACK: remark: {{.*}}gopt-quantize: left tensor 'zero' in f32: it has a range of zero width (threshold 0)
// FALLBACK: remark: {{.*}}gopt-quantize: left tensor 'unknown' in f32: it has no range in the calibration file
// FALLBACK-LABEL: func @uncalibrated
// FALLBACK: %[[Z:.*]] = gopt.matmul
// FALLBACK-NOT: gopt.quantize %[[Z]]
// FALLBACK: %[[M:.*]] = gopt.matmul %[[Z]], %[[Z]]
// FALLBACK-NOT: gopt.quantize
// FALLBACK: return
func.func @uncalibrated(%x: tensor<2x4xf32> {gopt.name = "x"}) -> tensor<2x2xf32> {
  %w = gopt.constant dense<0.0> : tensor<4x2xf32>
  %z = gopt.matmul %x, %w : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> loc("zero")
  %m = gopt.matmul %z, %z {transpose_b = true} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("unknown")
  %r = gopt.relu %m : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
