"""Writes the image variants of onnx-image-variants.test and what PIL
decodes from them (ONNX's reference: Image.open(...).convert("RGB" / "L")):
CMYK JPEG (as PIL writes it, with Adobe's marker, and the same stream with
the marker cut out), plain (ASCII) P1, P2 and P3 and binary P5 and P6 with
maxval other than 255, RLE8 and RLE4 BMPs, 16-bit and BI_BITFIELDS BMPs
(bytes written by hand: PIL writes none of these) and animated WebP (PIL
writes it; the first frame counts). Plus forged streams each decoder must
refuse with a clear error.

  onnx-image-variants.test.py OUT
"""
import importlib.util
import io
import os
import struct
import sys

import numpy as np
from PIL import Image

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "decoder", os.path.join(here, "onnx-image-decoder.test.py"))
decoder = importlib.util.module_from_spec(spec)
spec.loader.exec_module(decoder)
from onnx import helper  # noqa: E402

H, W = 7, 13
rng = np.random.default_rng(1924)


def encode(image, fmt, **options):
    buf = io.BytesIO()
    image.save(buf, fmt, **options)
    return buf.getvalue()


def strip_app14(jpeg):
    """The JPEG without its Adobe (APP14) segment."""
    pos, out = 2, bytearray(jpeg[:2])
    while pos < len(jpeg):
        marker = jpeg[pos + 1]
        length = struct.unpack(">H", jpeg[pos + 2:pos + 4])[0]
        if marker == 0xDA:  # scan: the rest as it is
            out += jpeg[pos:]
            break
        if marker != 0xEE:
            out += jpeg[pos:pos + 2 + length]
        pos += 2 + length
    assert b"Adobe" not in out
    return bytes(out)


def bmp(bits, pixels, width, height, compression=0, palette=b"",
        header_size=40, masks=b"", top_down=False):
    """A BMP: file header, an info header of `header_size` bytes (masks at
    offset 40 of it for 56+ byte headers), the 40-byte header's masks after
    it, the palette and `pixels`."""
    info = struct.pack("<IiiHHIIiiII", header_size, width,
                       -height if top_down else height, 1, bits, compression,
                       len(pixels), 2835, 2835, len(palette) // 4, 0)
    if header_size > 40:
        info += masks.ljust(header_size - 40, b"\0")
        extra = b""
    else:
        extra = masks
    offset = 14 + len(info) + len(extra) + len(palette)
    head = b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset)
    return head + info + extra + palette + pixels


def rows(values, bits, width):
    """Uncompressed rows, bottom-up, each padded to 4 bytes."""
    out = b""
    for row in values[::-1]:
        if bits == 16:
            line = b"".join(struct.pack("<H", int(v)) for v in row)
        else:
            line = bytes(np.asarray(row, np.uint8).ravel())
        out += line + b"\0" * (-len(line) % 4)
    return out


def rle_image(rle4):
    """An RLE BMP of W x H: per row an encoded run, an absolute run (even
    length), another encoded run and end of line; end of bitmap."""
    colors = 16 if rle4 else 40
    palette = bytes(rng.integers(0, 256, (colors, 4)).astype(np.uint8).ravel())
    data = b""
    for y in range(H):
        first = (y * 3) % colors
        lit = [(y + 2 * k) % colors for k in range(6)]
        if rle4:
            # encoded: 4 pixels alternating two nibbles; absolute: 6 pixels
            # (3 bytes, padded to 4); encoded: the row's last 3.
            data += bytes([4, (first << 4) | lit[0]])
            data += bytes([0, 6]) + bytes([(lit[0] << 4) | lit[1],
                                           (lit[2] << 4) | lit[3],
                                           (lit[4] << 4) | lit[5], 0])
            data += bytes([3, (lit[1] << 4) | first])
        else:
            data += bytes([4, first])
            data += bytes([0, 6]) + bytes(lit)
            data += bytes([2, lit[1]])  # row not full: end of line pads
        data += bytes([0, 0])
    data += bytes([0, 1])
    return bmp(4 if rle4 else 8, data, W, H, 2 if rle4 else 1, palette)


def plain(kind, width, height, maxval, samples, comment=True):
    head = f"P{kind}\n# plain\n{width} {height}\n"
    if kind != 1:
        head += f"{maxval}\n"
    body = ""
    for i, v in enumerate(samples):
        body += str(v) + ("\n" if i % 9 == 8 else " ")
        if comment and i == 5:
            body += "# a comment inside the data\n"
    return (head + body).encode()


def images():
    out = {}
    yy, xx = np.mgrid[0:H, 0:W]
    cmyk = np.stack([(xx * 19 + yy * 7) % 256, (yy * 37 + 5) % 256,
                     rng.integers(0, 256, (H, W)),
                     rng.integers(0, 256, (H, W))], -1).astype(np.uint8)
    out["cmyk_jpg"] = encode(Image.fromarray(cmyk, "CMYK"), "JPEG",
                             quality=90)
    out["cmyk_noadobe_jpg"] = strip_app14(out["cmyk_jpg"])
    big = rng.integers(0, 256, (40, 33, 4)).astype(np.uint8)
    out["cmyk_big_jpg"] = encode(Image.fromarray(big, "CMYK"), "JPEG",
                                 quality=75)

    out["plain_p1_pbm"] = plain(1, W, H, 1, rng.integers(0, 2, W * H))
    out["plain_p2_pgm"] = plain(2, W, H, 100, rng.integers(0, 101, W * H))
    out["plain_p2_wide_pgm"] = plain(2, W, H, 1000,
                                     rng.integers(0, 1001, W * H))
    out["plain_p3_ppm"] = plain(3, W, H, 255, rng.integers(0, 256, 3 * W * H))
    out["plain_p3_7_ppm"] = plain(3, W, H, 7, rng.integers(0, 8, 3 * W * H))
    out["plain_p3_wide_ppm"] = plain(3, W, H, 65535,
                                     rng.integers(0, 65536, 3 * W * H))
    # P1 digits need no separators.
    out["plain_p1_packed_pbm"] = (f"P1 {W} {H}\n".encode()
                                  + bytes(rng.choice([48, 49], W * H).tolist()))
    out["p5_100_pgm"] = (f"P5 {W} {H} 100\n".encode()
                         + bytes(rng.integers(0, 101, W * H).astype(np.uint8)))
    out["p6_1000_ppm"] = (f"P6 {W} {H} 1000\n".encode()
                          + rng.integers(0, 1001, 3 * W * H)
                          .astype(">u2").tobytes())
    out["p5_65535_pgm"] = (f"P5 {W} {H} 65535\n".encode()
                           + rng.integers(0, 400, W * H)
                           .astype(">u2").tobytes())

    out["rle8_bmp"] = rle_image(False)
    out["rle4_bmp"] = rle_image(True)
    # Palette indices past the palette (of 40 colors): PIL's palette starts
    # as the gray ramp, so index i reads (i, i, i).
    good8 = out["rle8_bmp"]
    offset = struct.unpack("<I", good8[10:14])[0]
    out["rle_index_bmp"] = good8[:offset] + bytes(
        sum(([W, 40 + 3 * y, 0, 0] for y in range(H)), []) + [0, 1])
    v555 = rng.integers(0, 1 << 15, (H, W))
    v565 = rng.integers(0, 1 << 16, (H, W))
    out["bgr15_bmp"] = bmp(16, rows(v555, 16, W), W, H)
    out["bitfields565_bmp"] = bmp(
        16, rows(v565, 16, W), W, H, 3,
        masks=struct.pack("<III", 0xF800, 0x7E0, 0x1F))
    out["bitfields555_bmp"] = bmp(
        16, rows(v555, 16, W), W, H, 3,
        masks=struct.pack("<III", 0x7C00, 0x3E0, 0x1F))
    px32 = rng.integers(0, 256, (H, W, 4)).astype(np.uint8)
    out["bitfields_xbgr_bmp"] = bmp(
        32, rows(px32, 32, W), W, H, 3,
        masks=struct.pack("<III", 0xFF000000, 0xFF0000, 0xFF00))
    out["bitfields_rgba_bmp"] = bmp(
        32, rows(px32, 32, W), W, H, 3, header_size=108,
        masks=struct.pack("<IIII", 0xFF, 0xFF00, 0xFF0000, 0xFF000000))
    out["bitfields_abgr_bmp"] = bmp(
        32, rows(px32, 32, W), W, H, 3, header_size=124,
        masks=struct.pack("<IIII", 0xFF000000, 0xFF0000, 0xFF00, 0xFF))
    px24 = rng.integers(0, 256, (H, W, 3)).astype(np.uint8)
    out["bitfields24_bmp"] = bmp(
        24, rows(px24, 24, W), W, H, 3,
        masks=struct.pack("<III", 0xFF0000, 0xFF00, 0xFF))

    # 16-bit grayscale JPEG 2000: PIL's mode I;16, clipped to 255 by
    # convert (not shifted to 8 bits); small values keep the clip honest.
    out["i16_jp2"] = encode(Image.fromarray(
        rng.integers(0, 400, (H, W)).astype(np.uint16), "I;16"), "JPEG2000")

    frames = [Image.fromarray(rng.integers(0, 256, (H, W, 4))
                              .astype(np.uint8), "RGBA") for _ in range(3)]
    out["animated_webp"] = encode(frames[0], "WEBP", save_all=True,
                                  append_images=frames[1:], lossless=True,
                                  duration=40)
    rgb_frames = [f.convert("RGB") for f in frames]
    out["animated_lossy_webp"] = encode(rgb_frames[0], "WEBP", save_all=True,
                                        append_images=rgb_frames[1:],
                                        quality=80, duration=40)
    return out


def forged():
    """Streams every decoder must refuse (name -> bytes)."""
    good8 = rle_image(False)
    offset = struct.unpack("<I", good8[10:14])[0]
    out = {}
    # The RLE data ends (end of bitmap) after two rows.
    out["rle_short_bmp"] = good8[:offset] + good8[offset:offset + 2 * 14] \
        + bytes([0, 1])
    # An absolute run of 200 pixels with 3 bytes left.
    out["rle_absolute_bmp"] = good8[:offset] + bytes([0, 200, 1, 2, 3])
    # RLE8 on a 4-bit image.
    out["rle_bits_bmp"] = good8[:28] + struct.pack("<H", 4) + good8[30:]
    # Masks PIL does not read.
    out["bitfields_odd_bmp"] = bmp(
        16, rows(np.zeros((H, W)), 16, W), W, H, 3,
        masks=struct.pack("<III", 0xF00, 0xF0, 0xF))
    out["p2_over_pgm"] = b"P2 2 1 10\n3 11\n"
    out["p1_bad_pbm"] = b"P1 2 1\n0 2\n"
    out["p3_short_ppm"] = b"P3 2 2 255\n1 2 3 4 5 6\n"
    out["p2_long_pgm"] = b"P2 1 1 255\n000000000001\n"
    out["p2_maxval0_pgm"] = b"P2 1 1 0\n0\n"
    out["p3_huge_ppm"] = b"P3 65536 65536 255\n1\n"
    return out


def main():
    out = sys.argv[1]

    def npy(name, array):
        np.save(os.path.join(out, name + ".npy"), array)

    outputs = {"RGB": "rgb", "BGR": "bgr", "Grayscale": "gray"}
    channels = {"RGB": 3, "BGR": 3, "Grayscale": 1}
    formats = list(outputs)
    decoder.save(out, "decoder",
                 [helper.make_node("ImageDecoder", ["bytes"], [outputs[f]],
                                   pixel_format=f, name="decode_" + outputs[f])
                  for f in formats],
                 [decoder.vi("bytes", ["N"])],
                 [decoder.vi(outputs[f], ["H", "W", channels[f]])
                  for f in formats])
    names = []
    for name, data in images().items():
        npy(name, np.frombuffer(data, np.uint8))
        for f in formats:
            npy(f"want_{name}_{outputs[f]}", decoder.pil_decode(data, f))
        names.append(name)
    with open(os.path.join(out, "names.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    for name, data in forged().items():
        npy(name, np.frombuffer(data, np.uint8))
        # Each is an error in PIL too (else the test would be wrong).
        try:
            decoder.pil_decode(data, "RGB")
        except Exception:
            pass
        else:
            # PIL reads RLE8 data under a 4-bit header; gopt refuses it.
            if name != "rle_bits_bmp":
                raise SystemExit(f"PIL decodes forged stream {name}")


if __name__ == "__main__":
    main()
