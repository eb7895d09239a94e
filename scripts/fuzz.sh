#!/usr/bin/env bash
# Builds gopt's libFuzzer targets in build-fuzz/ (clang-19, ASan + UBSan,
# coverage for all of gopt's code; the shared libMLIR.so stays as Debian
# built it) and runs one on its seed corpus. See docs/fuzzing.md.
#
#   scripts/fuzz.sh TARGET [SECONDS] [-- LIBFUZZER_ARGS...]
#   scripts/fuzz.sh --build-only
#
# TARGET: onnx-import graphdef-binary graphdef-text mlir-parse plan-load
# The growing corpus stays in build-fuzz/corpus/TARGET, crashes land in
# build-fuzz/artifacts/TARGET/. FUZZ_BUILD_DIR overrides build-fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
TARGETS="onnx-import graphdef-binary graphdef-text mlir-parse plan-load"

usage() {
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
[ $# -ge 1 ] || usage
target=$1
shift
seconds=60
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  seconds=$1
  shift
fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
if [ "$target" != "--build-only" ] && ! echo " $TARGETS " | grep -q " $target "; then
  echo "fuzz: unknown target '$target' (one of: $TARGETS)" >&2
  exit 2
fi

# clang-19 with its libFuzzer runtime (and its OpenMP, for the runtime).
FUZZER_LIB=/usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.fuzzer-x86_64.a
if ! command -v clang++-19 >/dev/null || [ ! -f "$FUZZER_LIB" ] ||
  [ ! -e /usr/lib/llvm-19/lib/libomp.so ]; then
  echo "fuzz: installing clang-19 and libclang-rt-19-dev" >&2
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y --no-install-recommends clang-19 libclang-rt-19-dev \
    libomp-19-dev
fi

# Sanitizers and libFuzzer's coverage for every gopt library; asserts on
# (no NDEBUG). vptr is off: libMLIR has no RTTI.
FLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined"
FLAGS="$FLAGS -fno-sanitize=vptr -fno-sanitize-recover=undefined"
FLAGS="$FLAGS -fsanitize=fuzzer-no-link"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS="$FLAGS" \
    -DCMAKE_CXX_FLAGS="$FLAGS" -DGOPT_ENABLE_FUZZERS=ON \
    -DGOPT_ENABLE_CUDA=OFF -DGOPT_BUILD_TESTS=OFF
fi
ninja -C "$BUILD" -j"${FUZZ_JOBS:-2}" gopt-fuzz-smoke \
  $(for t in $TARGETS; do echo "gopt-fuzz-$t"; done)
[ "$target" = "--build-only" ] && exit 0

case $target in
onnx-import | graphdef-binary | graphdef-text) seeds=test/Import/Inputs ;;
mlir-parse) seeds=test/Dialect/Gopt ;;
plan-load) seeds=tools/fuzzers/corpus/plan-load ;;
esac
# The seeds as single inputs (lit files split at their `// -----` markers),
# plus every regression found so far.
seed_dir=$BUILD/seeds/$target
rm -rf "$seed_dir"
"$BUILD/bin/gopt-fuzz-smoke" "$target" "$seeds" --write-seeds "$seed_dir"
if [ -d "test/fuzz-regressions/$target" ]; then
  cp test/fuzz-regressions/"$target"/* "$seed_dir"/ 2>/dev/null || true
fi
# ONNX's node suite has one small model per op and attribute case: the
# widest set of ONNX seeds there is (it found four libonnx crashes the
# project's own seeds did not).
node_suite=/usr/share/libonnx-testdata/data/node
if [ "$target" = onnx-import ] && [ -d "$node_suite" ]; then
  for m in "$node_suite"/*/model.onnx; do
    cp "$m" "$seed_dir/node-$(basename "$(dirname "$m")").onnx"
  done
fi
# And compiled into plans, one per op case, for plan-load (with the normal
# build's translator, where there is one).
translate=${GOPT_TRANSLATE:-build/bin/gopt-translate}
if [ "$target" = plan-load ] && [ -d "$node_suite" ] && [ -x "$translate" ]; then
  for m in "$node_suite"/*/model.onnx; do
    timeout 20 "$translate" --emit-plan "$m" \
      -o "$seed_dir/node-$(basename "$(dirname "$m")").gplan" \
      >/dev/null 2>&1 || true
  done
fi
corpus=$BUILD/corpus/$target
artifacts=$BUILD/artifacts/$target
mkdir -p "$corpus" "$artifacts"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
exec "$BUILD/bin/gopt-fuzz-$target" -max_total_time="$seconds" \
  -timeout=10 -malloc_limit_mb=64 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 "$@" \
  "$corpus" "$seed_dir"
