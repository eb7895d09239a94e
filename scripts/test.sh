#!/usr/bin/env bash
# Runs gopt's whole test suite: the lit suite (check-gopt) and the
# GoogleTest suites through ctest. Exits non-zero if anything fails; ends with
# ctest's summary.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  echo "test: $BUILD_DIR is not configured; run scripts/setup.sh first" >&2
  exit 2
fi
ninja -C "$BUILD_DIR" || exit 1

status=0
if [ -f "$BUILD_DIR/test/lit.site.cfg.py" ]; then
  echo "== lit (check-gopt) =="
  # Debian's python3 (lit and psutil come from apt; a python3 earlier on
  # PATH may lack them). With psutil, a test that hangs fails after 5 minutes
  # instead of stalling the whole run.
  PY=/usr/bin/python3
  [ -x "$PY" ] || PY=python3
  lit_args=(-sv)
  if "$PY" -c 'import psutil' 2>/dev/null; then lit_args+=(--timeout 300); fi
  "$PY" /usr/lib/llvm-19/build/utils/lit/lit.py "$BUILD_DIR/test" "${lit_args[@]}" || status=1
fi
echo "== GoogleTest (ctest) =="
(cd "$BUILD_DIR" && ctest --output-on-failure -j2 --timeout 600) || status=1
exit $status
