"""Writes synthetic document images as PP-OCR's preprocessing leaves them,
for test/Models: dark glyph-like strokes in lines on a light, noisy page.
Random noise would leave the detector's output near 0 everywhere; pages
make it find text, so its output spans [0, 1] as in real use.

usage: make_ppocr_inputs.py det|cls|rec OUT_DIR
det: a.npy [1, 3, 320, 320], b.npy [1, 3, 256, 384], ImageNet mean/std;
cls: a.npy [1, 3, 48, 192], b.npy [2, 3, 48, 192], (x - 0.5) / 0.5;
rec: a.npy [1, 3, 48, 320], b.npy [1, 3, 48, 160], c.npy [2, 3, 48, 320],
(x - 0.5) / 0.5."""
import os
import sys

import numpy as np

rng = np.random.default_rng(7)


def page(h, w):
    img = np.full((h, w, 3), 235.0) + rng.normal(0, 8, (h, w, 3))
    y = 6 if h < 64 else 12
    while y < h - 18:
        x = 6
        while x < w - 20:
            cw, ch = rng.integers(6, 14), rng.integers(10, 16)
            for _ in range(3):
                yy, xx = y + rng.integers(0, ch - 3), x + rng.integers(0, cw - 2)
                img[yy:yy + rng.integers(2, ch), xx:xx + 2] = rng.uniform(0, 60)
            x += cw + rng.integers(2, 6)
            if rng.random() < 0.08:
                x += rng.integers(15, 40)
        y += rng.integers(24, 40)
    return np.clip(img, 0, 255) / 255.0


def main():
    kind, out = sys.argv[1], sys.argv[2]
    if kind == "det":
        mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
        sizes = {"a": [(320, 320)], "b": [(256, 384)]}
    elif kind == "cls":
        mean, std = np.array([0.5, 0.5, 0.5]), np.array([0.5, 0.5, 0.5])
        sizes = {"a": [(48, 192)], "b": [(48, 192), (48, 192)]}
    else:
        mean, std = np.array([0.5, 0.5, 0.5]), np.array([0.5, 0.5, 0.5])
        sizes = {"a": [(48, 320)], "b": [(48, 160)],
                 "c": [(48, 320), (48, 320)]}
    for name, shapes in sizes.items():
        batch = [((page(h, w) - mean) / std).transpose(2, 0, 1) for h, w in shapes]
        np.save(os.path.join(out, name + ".npy"), np.stack(batch).astype(np.float32))


main()
