#!/usr/bin/python3
"""Compares two gopt-run --save-params directories (train-mixed-precision.test).

compare-params.py A_DIR B_DIR --atol X --rtol Y [--min-diff Z]

Every f32 .npy in A_DIR must be in B_DIR with the same shape, and
|a - b| <= atol + rtol * |b| elementwise. With --min-diff, the largest
difference over all parameters must be at least Z (the runs really
differed, e.g. one computed in bf16). Prints the largest error per
parameter; exit status 1 on failure. Plain Python: lit's python3 may lack
numpy.
"""
import argparse
import ast
import os
import struct
import sys


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not an .npy file")
    major = data[6]
    if major == 1:
        (hlen,), start = struct.unpack("<H", data[8:10]), 10
    else:
        (hlen,), start = struct.unpack("<I", data[8:12]), 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        sys.exit(f"{path}: expected little-endian f32 in C order, got {header}")
    count = 1
    for d in header["shape"]:
        count *= d
    body = data[start + hlen:]
    return header["shape"], struct.unpack(f"<{count}f", body[:4 * count])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--atol", type=float, required=True)
    p.add_argument("--rtol", type=float, required=True)
    p.add_argument("--min-diff", type=float, default=0.0)
    args = p.parse_args()
    names = sorted(n for n in os.listdir(args.a) if n.endswith(".npy"))
    if not names:
        sys.exit(f"{args.a}: no .npy files")
    ok, largest = True, 0.0
    for name in names:
        shape_a, a = read_npy(os.path.join(args.a, name))
        shape_b, b = read_npy(os.path.join(args.b, name))
        if shape_a != shape_b:
            print(f"{name}: shape {shape_a} vs {shape_b}")
            ok = False
            continue
        worst = max(abs(x - y) for x, y in zip(a, b))
        bad = sum(1 for x, y in zip(a, b)
                  if not abs(x - y) <= args.atol + args.rtol * abs(y))
        largest = max(largest, worst)
        print(f"{name}: max abs diff {worst:.3g}"
              + (f", {bad} elements beyond tolerance" if bad else ""))
        ok &= bad == 0
    if largest < args.min_diff:
        print(f"largest difference {largest:.3g} < --min-diff {args.min_diff}")
        ok = False
    print("parameters match" if ok else "parameters differ")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
