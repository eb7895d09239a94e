#!/usr/bin/env bash
# The main job on a bundled example: import a graph, optimize it, lower it to
# a plan, run and time it on the CPU, and check that the optimized graph
# computes what the original does.
#
#   scripts/run-example.sh [BUILD_DIR] [MODEL]
#
# MODEL defaults to examples/graphs/resnet_block_nhwc.mlir (a TensorFlow-1.x
# style NHWC ResNet block with a decomposed batch norm); .onnx and .pb files
# work too.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
MODEL=${2:-examples/graphs/resnet_block_nhwc.mlir}
BIN="$BUILD_DIR/bin"
OUT="$BUILD_DIR/example"
mkdir -p "$OUT"
name=$(basename "${MODEL%.*}")

echo "== import + optimize: gopt-opt $MODEL --gopt-optimize=target=cpu"
"$BIN/gopt-opt" "$MODEL" --gopt-optimize=target=cpu -mlir-pass-statistics \
  -o "$OUT/$name.opt.mlir" 2> "$OUT/$name.stats.txt"
grep -E "^ +\(S\) +[1-9]" "$OUT/$name.stats.txt" || true

echo "== lower: gopt-translate --emit-plan -> $OUT/$name.gplan"
"$BIN/gopt-translate" --emit-plan "$OUT/$name.opt.mlir" -o "$OUT/$name.gplan"

echo "== check: the optimized graph computes what the original does"
"$BIN/gopt-run" "$OUT/$name.opt.mlir" --compare "$MODEL" --batch 2 --atol 1e-4 --rtol 1e-3

echo "== run: gopt-run $OUT/$name.gplan (CPU, batch 8)"
"$BIN/gopt-run" "$OUT/$name.gplan" --batch 8 --warmup 10 --iterations 50 --profile
