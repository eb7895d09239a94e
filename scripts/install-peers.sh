#!/bin/sh
# Install the peers gopt's benchmarks measure it against, on the CPU, without
# needing ../shared next to the clone:
#   - PyTorch from Debian (python3-torch, python3-torchvision) with OpenBLAS
#     (libopenblas0-pthread: without it Debian's torch silently falls back to
#     the reference BLAS and is ~5x slower), python3-onnx and python3-numpy
#     (benchmarks and scripts/conformance.sh), python3-matplotlib (the plot);
#   - ONNX Runtime (npm's onnxruntime-node, CPU build) into DIR/node_modules.
#
# Usage: scripts/install-peers.sh [DIR]     (default: benchmarks/.peers, git-ignored)
# Then:  ORT_NODE_MODULE=DIR/node_modules/onnxruntime-node (benchmarks/run_cpu.py
#        finds benchmarks/.peers by itself).
# Needs root (or sudo) for apt-get; Debian 12. Always run the peers with
# /usr/bin/python3 (Debian's Python, the one that has torch).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/benchmarks/.peers}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-peers: run as root or install sudo" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive

pkgs="python3-torch python3-torchvision python3-onnx python3-numpy python3-matplotlib libopenblas0-pthread"
# nodejs from NodeSource ships npm itself and conflicts with Debian's npm
# package: only ask apt for npm when there is none.
command -v node >/dev/null 2>&1 || pkgs="$pkgs nodejs"
command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm"
echo "install-peers: apt-get install $pkgs"
$sudo apt-get install -y -qq $pkgs >/dev/null

# The CPU build of onnxruntime-node ships its binaries in the package; skip
# the CUDA download of its install script.
echo "install-peers: npm install onnxruntime-node into $dir"
cd "$dir"
[ -f package.json ] || echo '{"name":"gopt-bench-peers","private":true}' > package.json
ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install --no-audit --no-fund onnxruntime-node >/dev/null

# Check that both peers load.
ORT_NODE_MODULE="$dir/node_modules/onnxruntime-node" \
  node -e 'const o = require(process.env.ORT_NODE_MODULE); console.log("onnxruntime-node " + o.env.versions.common)'
/usr/bin/python3 -c 'import torch, onnx, numpy; print("torch", torch.__version__, "| onnx", onnx.__version__, "| numpy", numpy.__version__)'
echo "peers ready: ORT_NODE_MODULE=$dir/node_modules/onnxruntime-node"
