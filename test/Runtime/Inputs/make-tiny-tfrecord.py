#!/usr/bin/python3
"""Writes tiny.tfrecord: the 96 examples of tiny-inputs.npy / tiny-labels.npy
as tf.train.Example records ("image": float_list of 16 values, "label":
int64_list), without TensorFlow: the protobuf and the TFRecord framing
(masked CRC-32C) are written by hand. Run from this directory."""
import struct

import numpy as np


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, payload):  # length-delimited field
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def example(image, label):
    floats = field(2, field(1, struct.pack(f"<{len(image)}f", *image)))
    ints = field(3, field(1, varint(int(label))))
    entries = (field(1, field(1, b"image") + field(2, floats)) +
               field(1, field(1, b"label") + field(2, ints)))
    return field(1, entries)


def main():
    x = np.load("tiny-inputs.npy").reshape(-1, 16)
    y = np.load("tiny-labels.npy")
    with open("tiny.tfrecord", "wb") as f:
        for image, label in zip(x, y):
            data = example(image.tolist(), label)
            length = struct.pack("<Q", len(data))
            f.write(length + struct.pack("<I", masked(crc32c(length))) + data +
                    struct.pack("<I", masked(crc32c(data))))


if __name__ == "__main__":
    main()
