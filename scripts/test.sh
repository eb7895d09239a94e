#!/usr/bin/env bash
# Runs gopt's whole test suite: the lit suite (check-gopt), the GoogleTest
# suites through ctest, and the Python module's pytest tests. Exits non-zero
# if anything fails; ends with each runner's summary.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  echo "test: $BUILD_DIR is not configured; run scripts/setup.sh first" >&2
  exit 2
fi
ninja -C "$BUILD_DIR" || exit 1

# Debian's python3 (lit, psutil, pytest, numpy and torch come from apt; a
# python3 earlier on PATH may lack them, and the module is built for it).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

status=0
if [ -f "$BUILD_DIR/test/lit.site.cfg.py" ]; then
  echo "== lit (check-gopt) =="
  # With psutil, a test that hangs fails after 5 minutes instead of stalling
  # the whole run.
  lit_args=(-sv)
  if "$PY" -c 'import psutil' 2>/dev/null; then lit_args+=(--timeout 300); fi
  "$PY" /usr/lib/llvm-19/build/utils/lit/lit.py "$BUILD_DIR/test" "${lit_args[@]}" \
    2>&1 | tee "$logs/lit" || status=1
fi
echo "== GoogleTest (ctest) =="
(cd "$BUILD_DIR" && ctest --output-on-failure -j2 --timeout 600) 2>&1 |
  tee "$logs/ctest" || status=1
if [ -d "$BUILD_DIR/python/gopt" ]; then
  echo "== pytest (python/tests) =="
  # This build's module, whatever the .pth of setup.sh points at.
  GOPT_PYTHON_DIR="$BUILD_DIR/python" "$PY" -m pytest python/tests -q \
    -p no:cacheprovider -rs 2>&1 | tee "$logs/pytest" || status=1
fi

echo "== summary =="
if [ -f "$logs/lit" ]; then
  echo "lit:    $(grep -E '^ *(Passed|Failed|Unsupported|Expectedly Failed|Timed Out)' "$logs/lit" |
    sed -E 's/ *: */ /' | tr -s ' ' | paste -sd, - | sed 's/,/, /g')"
fi
echo "ctest:  $(grep -E 'tests passed|tests failed|No tests were found' "$logs/ctest" | tail -1)"
if [ -f "$logs/pytest" ]; then
  echo "pytest: $(grep -E '(passed|failed|error|skipped)' "$logs/pytest" | tail -1 | tr -d '=')"
fi
exit $status
