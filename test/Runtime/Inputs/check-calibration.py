#!/usr/bin/python3
"""Checks gopt-run --calibrate's JSON files (calibrate*.test).

check-calibration.py A.json [B.json ...] -- EXPR [EXPR ...]

Each file must be a well-formed calibration file (format, version, method,
model, batches; per tensor min <= max and 0 <= threshold, all finite). Its
"tensors" object is bound to a, b, ... in file order, and every EXPR must be
true; a false one is printed and the exit status is 1.
"""
import json
import math
import string
import sys

args = sys.argv[1:]
split = args.index("--") if "--" in args else len(args)
files, exprs = args[:split], args[split + 1:]
env = {}
for letter, path in zip(string.ascii_lowercase, files):
    with open(path) as f:
        doc = json.load(f)
    assert doc["format"] == "gopt-calibration", doc
    assert doc["version"] == 1, doc
    assert doc["method"] in ("minmax", "percentile", "entropy"), doc
    assert isinstance(doc["model"], str) and isinstance(doc["batches"], int)
    for name, r in doc["tensors"].items():
        values = [r["min"], r["max"], r["threshold"]]
        assert all(math.isfinite(v) for v in values), (path, name, r)
        assert r["min"] <= r["max"] and r["threshold"] >= 0, (path, name, r)
    env[letter] = doc["tensors"]
env["math"] = math
failed = [e for e in exprs if not eval(e, env)]
for e in failed:
    print("false: " + e)
print("ok" if not failed else "FAILED")
sys.exit(1 if failed else 0)
