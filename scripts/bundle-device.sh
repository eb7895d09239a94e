#!/usr/bin/env bash
# scripts/bundle-device.sh OUT_DIR
#
# Packs what a GPU machine without apt or MLIR needs to run gopt's CUDA
# backend, under 64 MiB: a runtime-only build (gopt-run, the CUDA tests,
# make-test-plans), the small non-system shared libraries they load
# (libprotobuf, libdnnl, libgomp, ...; never libMLIR, never cuDNN, cuBLAS or
# NCCL, which come from the GPU machine's PyTorch environment), the .gplan
# files of the test and benchmark models, OUT_DIR/run-gpu-tests.sh and
# OUT_DIR/gpu-check.sh (the tests, then the benchmarks against PyTorch, as
# one device call).
# What travels is OUT_DIR.tar.xz (the libraries compress about 4x); unpack it
# there with `tar xJf`.
#
# Environment: BUILD_DIR (default build-device), GOPT_TRANSLATE (a
# gopt-translate with --emit-plan; default: the first in build*/bin),
# GOPT_DEVICE_MODELS (ONNX models to compile for the GPU, each MODEL.onnx
# with MODEL.input.npy and MODEL.output.npy beside it: their plans, f32 and
# f16 (PATH.onnx:f16 for one of them, PATH.onnx:f32,int8 for a list), and
# the arrays go into OUT_DIR/models, and run-gpu-tests.sh checks CUDA's
# outputs against the stored ones). `int8` is a static int8 plan
# (--gopt-quantize), calibrated here on MODEL.input.npy with this build's
# gopt-run.
# scripts/make-bundle-resnet18.py writes a ResNet-18 whose f32 plan fits
# (/usr/bin/python3 scripts/make-bundle-resnet18.py DIR, then
# GOPT_DEVICE_MODELS="DIR/resnet18.onnx:f32 ...").
#
# Training: the compiled training steps (SGD with momentum and Adam) of an
# MNIST-CNN-sized graph with batch norm (scripts/make-train-cnn-graph.py),
# made with a compiler-enabled gopt-run (`--train --save-plan`), go into
# OUT_DIR/train; run-gpu-tests.sh trains each 10 steps on cuda and on cpu
# from the same data and compares the loss curves and final parameters
# (scripts/compare-training-runs.py).
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
BUILD=${BUILD_DIR:-$ROOT/build-device}

echo "== configuring the runtime-only build in $BUILD"
cmake -G Ninja -S "$ROOT" -B "$BUILD" -DGOPT_BUILD_COMPILER=OFF \
  -DGOPT_ENABLE_CUDA=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$BUILD" gopt-run make-test-plans GoptCudaKernelsTests \
  GoptCudaHelpersTests GoptCudaTrainingTests

mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/plans"
cp "$BUILD/bin/gopt-run" "$BUILD/bin/make-test-plans" \
  "$BUILD/bin/GoptCudaKernelsTests" "$BUILD/bin/GoptCudaHelpersTests" \
  "$BUILD/bin/GoptCudaTrainingTests" "$OUT/bin/"
# Symbols are a tenth of each binary; the bundle is near its 64 MiB.
strip --strip-unneeded "$OUT"/bin/*

echo "== shared libraries"
# Everything the binaries load except the C/C++ runtime the GPU machine
# has, the CUDA libraries its PyTorch environment provides (NCCL too: the
# toolkit's libnccl alone is over 200 MB), and MLIR.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libstdc\+\+\.so|libgcc_s\.so|libcudnn|libcublas|libcudart|libcuda\.so|libnvrtc|libnccl|libMLIR|libLLVM)'
for bin in "$OUT"/bin/*; do
  ldd "$bin" | awk '/=> \// {print $1, $3}'
done | sort -u | while read -r name path; do
  if [[ "$name" =~ $skip ]]; then
    continue
  fi
  cp -L "$path" "$OUT/lib/$name"
  echo "  $name <- $path"
done
if ls "$OUT"/lib | grep -q -i mlir; then
  echo "error: an MLIR library would travel" >&2
  exit 1
fi

echo "== plans"
"$OUT/bin/make-test-plans" "$OUT/plans" >/dev/null
TRANSLATE=${GOPT_TRANSLATE:-}
if [ -z "$TRANSLATE" ]; then
  for candidate in "$ROOT"/build/bin/gopt-translate "$ROOT"/build*/bin/gopt-translate; do
    # Not `--help | grep -q`: grep's early exit can SIGPIPE the tool, which
    # pipefail turns into a miss.
    if [ -x "$candidate" ] && [[ $("$candidate" --help 2>&1) == *--emit-plan* ]]; then
      TRANSLATE=$candidate
      break
    fi
  done
fi
if [ -n "$TRANSLATE" ]; then
  for model in "$ROOT"/examples/graphs/*.mlir "$ROOT"/benchmarks/*/*.mlir; do
    [ -f "$model" ] || continue
    name=$(basename "$model" .mlir)
    if "$TRANSLATE" --emit-plan "$model" -o "$OUT/plans/$name.gplan" 2>/dev/null; then
      # Weights compress poorly: a plan over 4 MiB (ResNet-18, MobileNetV2)
      # would take the bundle over 64 MiB. GOPT_DEVICE_MODELS carries such
      # models, with PyTorch's outputs to check against.
      if [ "$(stat -c %s "$OUT/plans/$name.gplan")" -gt $((4 * 1024 * 1024)) ]; then
        echo "  skipped $name.gplan (over 4 MiB; see GOPT_DEVICE_MODELS)"
        rm -f "$OUT/plans/$name.gplan"
        continue
      fi
      echo "  $name.gplan"
    else
      echo "  skipped $model (gopt-translate --emit-plan failed)"
      rm -f "$OUT/plans/$name.gplan"
    fi
  done
else
  echo "  no gopt-translate with --emit-plan found (build the compiler, or"
  echo "  set GOPT_TRANSLATE): only the runtime's test plans are bundled"
fi

if [ -n "${GOPT_DEVICE_MODELS:-}" ]; then
  OPT=$(dirname "$TRANSLATE")/gopt-opt
  mkdir -p "$OUT/models"
  for spec in $GOPT_DEVICE_MODELS; do
    # PATH.onnx, or PATH.onnx:f16 (PATH.onnx:f32,int8) for some precisions
    # only (bundle size).
    onnx=${spec%%:*}
    precisions="f32 f16"
    [ "$spec" = "$onnx" ] || precisions=${spec#*:}
    precisions=${precisions//,/ }
    name=$(basename "$onnx" .onnx)
    dir=$(dirname "$onnx")
    for precision in $precisions; do
      if [ "$precision" = int8 ]; then
        # Calibrate the graph the GPU pipeline makes, then quantize after
        # the same pipeline (docs/quantization.md: the names must match).
        ranges="$OUT/models/$name.int8-ranges.json"
        "$(dirname "$TRANSLATE")/gopt-run" "$onnx" \
          --pipeline 'builtin.module(gopt-optimize{target=gpu})' --calibrate \
          --calibration-out "$ranges" --input "input=$dir/$name.input.npy" \
          --batch 1 >/dev/null
        "$OPT" "$onnx" --gopt-optimize=target=gpu \
          "--gopt-quantize=calibration=$ranges" |
          "$TRANSLATE" --emit-plan -o "$OUT/models/$name.int8.gplan"
        continue
      fi
      "$OPT" "$onnx" "--gopt-optimize=target=gpu precision=$precision" |
        "$TRANSLATE" --emit-plan -o "$OUT/models/$name.$precision.gplan"
    done
    cp "$dir/$name.input.npy" "$dir/$name.output.npy" "$OUT/models/"
    echo "  models/$name.{${precisions// /,}}.gplan"
  done
fi

# The GPU benchmarks (benchmarks/gpu), matching these binaries.
mkdir -p "$OUT/benchmarks"
cp "$ROOT"/benchmarks/gpu/*.py "$OUT/benchmarks/"
echo "== training plans"
# The compiler-enabled gopt-run beside gopt-translate (the runtime-only
# build's cannot compile a graph).
TRAIN_RUN=${GOPT_TRAIN_RUN:-}
if [ -z "$TRAIN_RUN" ] && [ -n "$TRANSLATE" ]; then
  TRAIN_RUN=$(dirname "$TRANSLATE")/gopt-run
fi
if [ -n "$TRAIN_RUN" ] && [ -x "$TRAIN_RUN" ]; then
  mkdir -p "$OUT/train"
  graph=$(mktemp --suffix=.mlir)
  python3 "$ROOT/scripts/make-train-cnn-graph.py" "$graph"
  # NCHW: the layout the CUDA training kernels were checked in (a CPU
  # compile defaults to NHWC, --layout auto).
  "$TRAIN_RUN" "$graph" --train --optimizer sgd --lr 0.01 --momentum 0.9 \
    --layout NCHW --save-plan "$OUT/train/train-cnn.sgd.gplan"
  "$TRAIN_RUN" "$graph" --train --optimizer adam --lr 0.001 \
    --layout NCHW --save-plan "$OUT/train/train-cnn.adam.gplan"
  rm -f "$graph"
  cp "$ROOT/scripts/compare-training-runs.py" "$OUT/train/"
else
  echo "  no compiler-enabled gopt-run found (build the compiler, or set"
  echo "  GOPT_TRAIN_RUN): no training plans are bundled"
fi

cat > "$OUT/env.sh" <<'ENV'
# Sourced on the GPU machine: cuDNN, cuBLAS and NCCL come from the PyTorch
# environment's nvidia.* packages, every folder of them that holds a library.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=${PYTHON:-python3}
libs="$HERE/lib"
nvidia=$("$PY" -c "import nvidia; print(list(nvidia.__path__)[0])" 2>/dev/null) || nvidia=
if [ -n "$nvidia" ]; then
  for dir in $(find "$nvidia" -name 'lib*.so*' -printf '%h\n' | sort -u); do
    libs="$libs:$dir"
  done
fi
export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GOPT_CUDNN_ALGO_CACHE=${GOPT_CUDNN_ALGO_CACHE:-$HERE/cudnn-algos.txt}
ENV

cat > "$OUT/run-gpu-tests.sh" <<'RUN'
#!/usr/bin/env bash
# Runs gopt's CUDA tests and the bundled plans on a GPU machine;
# `run-gpu-tests.sh training` runs only the training checks (the training
# kernels' tests and the cuda-vs-cpu training runs).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
status=0
# A hang must not eat the machine's lease: every command has a limit.
only=${1:-all}
if [ "$only" != training ]; then
  timeout 300 "$HERE/bin/GoptCudaHelpersTests" || status=1
  timeout 300 "$HERE/bin/GoptCudaKernelsTests" || status=1
fi
timeout 300 "$HERE/bin/GoptCudaTrainingTests" || status=1
# Training: 10 steps of each compiled training step on cpu and on cuda (TF32
# off) from the same data (fixed fake batches, no shuffling); the loss curves
# and final parameters must agree (tolerance: compare-training-runs.py).
if [ -d "$HERE/train" ]; then
  cd "$HERE/train"
  for plan in *.gplan; do
    [ -f "$plan" ] || continue
    name=${plan%.gplan}
    adam=
    # The learning rate the Adam plan was saved with (below).
    case $plan in *.adam.gplan) adam="--adam 0.001" ;; esac
    echo "== $plan: 10 training steps, cuda vs. cpu"
    args=(--train --data fake --batch 32 --steps 10 --log-every 1 --no-shuffle)
    rm -rf "$name.cpu" "$name.cuda"
    if timeout 120 "$HERE/bin/gopt-run" "$plan" "${args[@]}" --backend cpu \
        --save-params "$name.cpu" > "$name.cpu.log" 2>&1 &&
       GOPT_CUDA_TF32=0 timeout 120 "$HERE/bin/gopt-run" "$plan" "${args[@]}" \
        --backend cuda --profile --save-params "$name.cuda" > "$name.cuda.log" 2>&1; then
      python3 compare-training-runs.py $adam "$name.cpu.log" "$name.cpu" \
        "$name.cuda.log" "$name.cuda" || status=1
      grep -E "step time|op time" "$name.cuda.log" || true
    else
      tail -5 "$name.cpu.log" "$name.cuda.log" 2>/dev/null
      status=1
    fi
  done
fi
[ "$only" = training ] && exit $status
# Every plan: the reference backend's outputs, then CUDA (TF32 off) against
# them at 1e-3 relative (bf16 plans 1e-2, int8 plans 0.2 absolute), then a
# timed CUDA run with the profile.
cd "$HERE/plans"
for plan in *.gplan; do
  name=${plan%.gplan}
  for batch in 1 8; do
    ref="ref-$name-b$batch"
    if ! timeout 60 "$HERE/bin/gopt-run" "$plan" --backend reference --batch $batch \
        --warmup 0 --iterations 1 --output-dir "$ref" >/dev/null 2>&1; then
      echo "skip $plan (batch $batch): the reference backend cannot run it"
      continue
    fi
    args=()
    for npy in "$ref"/*.npy; do
      args+=(--compare-npy "$(basename "$npy" .npy)=$npy")
    done
    # A bf16 plan's outputs are bf16: a different summation order may round
    # an element one bf16 step (2^-8 relative) the other way. An int8 plan's
    # requantizations may round an element one quantum the other way, which
    # later layers carry on (MobileNetV2 static int8 at batch 8 on an H200:
    # one logit 0.0013 off); 0.2 as for the int8 models below.
    tol=(--rtol 1e-3 --atol 1e-4)
    case $plan in
    *bf16*) tol=(--rtol 1e-2 --atol 1e-3) ;;
    *int8*) tol=(--rtol 0 --atol 0.2) ;;
    esac
    echo "== $plan batch $batch: cuda vs. reference"
    GOPT_CUDA_TF32=0 timeout 60 "$HERE/bin/gopt-run" "$plan" --backend cuda --batch $batch \
      --warmup 1 --iterations 3 "${tol[@]}" "${args[@]}" || status=1
  done
  echo "== $plan: cuda timing and profile (batch 32)"
  timeout 60 "$HERE/bin/gopt-run" "$plan" --backend cuda --batch 32 --warmup 5 \
    --iterations 20 --profile || status=1
done
# The reference models: CUDA against the outputs stored beside them
# (PyTorch's), f32 with TF32 off at 1e-4 relative, f16 at 2e-2; static
# int8 at 0.6 absolute (what the CPU's ResNet-18 int8 test allows against
# PyTorch: test/Transforms/quantize-static-resnet18-onnx.test), and int8
# against the reference backend's run of the same plan within 0.2 (a few
# output quanta: an element one quantum off early moves later ones).
if [ -d "$HERE/models" ]; then
  cd "$HERE/models"
  for plan in *.int8.gplan; do
    [ -f "$plan" ] || continue
    name=${plan%%.*}
    ref="ref-$name-int8"
    if timeout 120 "$HERE/bin/gopt-run" "$plan" --backend reference --batch 2 \
        --warmup 0 --iterations 1 --input "input=$name.input.npy" \
        --output-dir "$ref" >/dev/null 2>&1; then
      echo "== $plan batch 2: cuda int8 vs. the reference backend"
      timeout 60 "$HERE/bin/gopt-run" "$plan" --backend cuda --batch 2 \
        --warmup 1 --iterations 3 --input "input=$name.input.npy" \
        --compare-npy "output=$ref/output.npy" --rtol 0 --atol 0.2 || status=1
    fi
  done
  for plan in *.f32.gplan *.f16.gplan *.int8.gplan; do
    [ -f "$plan" ] || continue
    name=${plan%%.*}
    tol="--rtol 1e-4 --atol 1e-4"
    case $plan in
    *.f16.gplan) tol="--rtol 2e-2 --atol 2e-2" ;;
    *.int8.gplan) tol="--rtol 0 --atol 0.6" ;;
    esac
    echo "== $plan batch 2: cuda vs. the stored output"
    GOPT_CUDA_TF32=0 timeout 60 "$HERE/bin/gopt-run" "$plan" --backend cuda --batch 2 \
      --warmup 1 --iterations 3 --input "input=$name.input.npy" \
      --compare-npy "output=$name.output.npy" $tol || status=1
  done
fi
exit $status
RUN
chmod +x "$OUT/run-gpu-tests.sh"

cat > "$OUT/gpu-check.sh" <<'CHECK'
#!/usr/bin/env bash
# gpu-check.sh DIR: one device call's whole check, results under DIR
# (the device tool's $OUT): run-gpu-tests.sh, then gopt against PyTorch
# eager on the bundled models at batches 1, 8 and 32, each also with
# cuDNN's legacy algorithms only (GOPT_CUDA_CONV_GRAPH=0), in about five
# minutes.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:?usage: gpu-check.sh DIR}
mkdir -p "$DIR"
timeout 300 "$HERE/run-gpu-tests.sh" > "$DIR/tests.log" 2>&1
tests=$?
echo "run-gpu-tests.sh: exit $tests (log: tests.log)"
grep -E "^\[  (PASSED|FAILED) |MISMATCH|parameters (match|differ)" "$DIR/tests.log"
source "$HERE/env.sh"
timeout 240 python3 "$HERE/benchmarks/run.py" --bundle "$HERE" \
  --out "$DIR/bench" --batches 1,8,32 --iterations 50 \
  --variant legacy-conv:GOPT_CUDA_CONV_GRAPH=0 > "$DIR/bench.log" 2>&1
echo "benchmarks/run.py: exit $? (log: bench.log)"
cat "$DIR/bench/gpu.md" 2>/dev/null
exit $tests
CHECK
chmod +x "$OUT/gpu-check.sh"

tar -C "$(dirname "$OUT")" -cf - "$(basename "$OUT")" | xz -T0 -6 > "$OUT.tar.xz"
size=$(stat -c %s "$OUT.tar.xz")
echo "== $OUT.tar.xz: $((size / 1024 / 1024)) MiB ($(du -sm "$OUT" | cut -f1) MiB unpacked)"
# A device call carries the working tree (tracked and untracked files git
# does not ignore) beside the bundle, 64 MiB in all.
tree=0
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
  tree=$(git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
    (cd "$ROOT" && xargs -0 -r stat -c %s 2>/dev/null) |
    awk '{s += $1} END {print s + 0}')
fi
# The device tool counts a little more than these two: it refused 63.2 MiB
# by this count and carried 62.2 MiB (2026-11-28).
limit=$((62 * 1024 * 1024 + 512 * 1024))
if [ "$size" -ge "$limit" ] || [ $((size + tree)) -ge "$limit" ]; then
  echo "error: the bundle ($size bytes) and the working tree ($tree bytes) make" \
    "$((size + tree)) bytes, over the 62.5 MiB a device call safely carries" \
    "(64 MiB by its own count): bundle fewer models or precisions" \
    "(GOPT_DEVICE_MODELS)" >&2
  exit 1
fi
echo "   with the working tree ($((tree / 1024 / 1024)) MiB): $(((size + tree) / 1024 / 1024)) of 62.5 MiB"
