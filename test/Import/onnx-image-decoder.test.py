"""Writes ImageDecoder-20 models, images in every format ImageDecoder reads
(written by PIL, as .npy byte vectors) and what PIL decodes from them
(ONNX's reference implementation: Image.open(...).convert("RGB" / "L"),
channels reversed for BGR).

  onnx-image-decoder.test.py OUT
"""
import io
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
from PIL import Image

H, W = 7, 13


def save(out, name, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=list(initializers))
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.UINT8, shape)


def encode(image, fmt, **options):
    buf = io.BytesIO()
    image.save(buf, fmt, **options)
    return buf.getvalue()


def pil_decode(data, pixel_format):
    mode = "L" if pixel_format == "Grayscale" else "RGB"
    image = np.asarray(Image.open(io.BytesIO(data)).convert(mode))
    if pixel_format == "BGR":
        image = image[..., ::-1]
    return np.ascontiguousarray(image.reshape(image.shape[0], image.shape[1], -1))


def images():
    """name -> encoded bytes: RGB and grayscale per format, plus the variants
    whose decoding differs (palettes, alpha, 1-bit, 16-bit, compression,
    progressive JPEG, raw J2K codestreams, lossless WebP)."""
    rng = np.random.default_rng(3)
    yy, xx = np.mgrid[0:H, 0:W]
    rgb = np.stack([(xx * 19 + yy * 7) % 256, (yy * 37 + 5) % 256,
                    rng.integers(0, 256, (H, W))], -1).astype(np.uint8)
    base = Image.fromarray(rgb, "RGB")
    gray = Image.fromarray(rgb[..., 0], "L")
    alpha = rng.integers(0, 256, (H, W, 1)).astype(np.uint8)
    rgba = Image.fromarray(np.concatenate([rgb, alpha], -1), "RGBA")
    palette = base.convert("P", palette=Image.ADAPTIVE, colors=16)
    bilevel = gray.convert("1")
    out = {}
    for fmt, ext, options in [("BMP", "bmp", {}), ("JPEG", "jpg", {"quality": 90}),
                              ("JPEG2000", "jp2", {}), ("TIFF", "tiff", {}),
                              ("PNG", "png", {}), ("WEBP", "webp", {"quality": 80}),
                              ("PPM", "pnm", {})]:
        out["rgb_" + ext] = encode(base, fmt, **options)
        out["gray_" + ext] = encode(gray, fmt, **options)
    out["rgba_png"] = encode(rgba, "PNG")
    out["palette_png"] = encode(palette, "PNG")
    out["bilevel_png"] = encode(bilevel, "PNG")
    out["i16_png"] = encode(Image.fromarray(rgb[..., 0].astype(np.uint16) * 3,
                                            "I;16"), "PNG")
    out["palette_bmp"] = encode(palette, "BMP")
    out["rgba_bmp"] = encode(rgba, "BMP")
    out["bilevel_bmp"] = encode(bilevel, "BMP")
    out["rgba_tiff"] = encode(rgba, "TIFF")
    out["palette_tiff"] = encode(palette, "TIFF")
    out["lzw_tiff"] = encode(base, "TIFF", compression="tiff_lzw")
    out["bilevel_tiff"] = encode(bilevel, "TIFF")
    out["progressive_jpg"] = encode(base, "JPEG", progressive=True)
    out["subsampled_jpg"] = encode(
        Image.fromarray(rng.integers(0, 256, (67, 45, 3)).astype(np.uint8)),
        "JPEG", quality=75, subsampling=2)
    out["codestream_j2k"] = encode(base, "JPEG2000")
    out["lossless_webp"] = encode(base, "WEBP", lossless=True)
    out["rgba_webp"] = encode(rgba, "WEBP", lossless=True)
    out["bilevel_pbm"] = encode(bilevel, "PPM")
    return out


def main():
    out = sys.argv[1]

    def npy(name, array):
        np.save(os.path.join(out, name + ".npy"), array)

    formats = ["RGB", "BGR", "Grayscale"]
    outputs = {"RGB": "rgb", "BGR": "bgr", "Grayscale": "gray"}
    channels = {"RGB": 3, "BGR": 3, "Grayscale": 1}
    # One model, the stream a graph input: decoded when the step runs.
    save(out, "decoder",
         [helper.make_node("ImageDecoder", ["bytes"], [outputs[f]],
                           pixel_format=f, name="decode_" + outputs[f])
          for f in formats[1:]] +
         [helper.make_node("ImageDecoder", ["bytes"], ["rgb"], name="decode_rgb")],
         [vi("bytes", ["N"])],
         [vi(outputs[f], ["H", "W", channels[f]]) for f in formats])
    names = []
    for name, data in images().items():
        npy(name, np.frombuffer(data, np.uint8))
        for f in formats:
            npy(f"want_{name}_{outputs[f]}", pil_decode(data, f))
        names.append(name)
    with open(os.path.join(out, "names.txt"), "w") as f:
        f.write("\n".join(names) + "\n")

    # A constant stream: decoded at compile time into a constant image.
    png = images()["rgb_png"]
    stream = numpy_helper.from_array(np.frombuffer(png, np.uint8), "png")
    save(out, "constant",
         [helper.make_node("ImageDecoder", ["png"], ["image"],
                           pixel_format="BGR", name="decode")],
         [], [vi("image", [H, W, 3])], [stream])
    npy("want_constant", pil_decode(png, "BGR"))

    # Errors: garbage and a truncated PNG when the step runs; the same as
    # constants at compile time; a pixel_format ImageDecoder does not have.
    npy("garbage", np.frombuffer(b"GIF89a, but not really an image", np.uint8))
    npy("truncated_png", np.frombuffer(png[:len(png) * 2 // 3], np.uint8))
    npy("empty", np.zeros([0], np.uint8))
    save(out, "constant_garbage",
         [helper.make_node("ImageDecoder", ["junk"], ["image"], name="decode")],
         [], [vi("image", ["H", "W", 3])],
         [numpy_helper.from_array(np.frombuffer(b"\x00junk", np.uint8), "junk")])
    save(out, "constant_truncated",
         [helper.make_node("ImageDecoder", ["png"], ["image"], name="decode")],
         [], [vi("image", ["H", "W", 3])],
         [numpy_helper.from_array(np.frombuffer(png[:60], np.uint8), "png")])
    save(out, "bad_pixel_format",
         [helper.make_node("ImageDecoder", ["bytes"], ["image"],
                           pixel_format="RGBA", name="decode")],
         [vi("bytes", ["N"])], [vi("image", ["H", "W", 4])])
    # A BMP header claiming 2^20 x 2^20 pixels, over the limit.
    huge = bytearray(encode(Image.fromarray(np.zeros((1, 1, 3), np.uint8)), "BMP"))
    huge[18:22] = (1 << 20).to_bytes(4, "little")
    huge[22:26] = (1 << 20).to_bytes(4, "little")
    npy("huge_bmp", np.frombuffer(bytes(huge), np.uint8))


if __name__ == "__main__":
    main()
