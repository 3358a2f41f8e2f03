#!/usr/bin/env python3
"""Reads a PNG screenshot with the standard library alone (zlib, struct), for the report's browser test.

Usage: png_colours.py FILE.png RRGGBB...

Prints one JSON object: {"width", "height", "distinct": number of distinct RGB colours,
"near": {RRGGBB: pixels within 60 (Euclidean RGB distance) of that colour}}. Decodes 8-bit RGB and
RGBA, non-interlaced (what Chromium writes); exits 1 naming what it cannot decode.
"""
import json
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace != 0:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour_type}, interlace {interlace}")
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(line)
        previous = line
    return width, height, channels, rows


def main(path, targets):
    try:
        width, height, channels, rows = read_png(path)
    except (OSError, ValueError, zlib.error, TypeError, struct.error) as e:
        print(f"png_colours.py: cannot read {path}: {e}")
        return 1
    wanted = [tuple(int(t[i:i + 2], 16) for i in (0, 2, 4)) for t in targets]
    near = [0] * len(wanted)
    distinct = set()
    for line in rows:
        for x in range(0, len(line), channels):
            rgb = (line[x], line[x + 1], line[x + 2])
            distinct.add(rgb)
            for k, (r, g, b) in enumerate(wanted):
                if (rgb[0] - r) ** 2 + (rgb[1] - g) ** 2 + (rgb[2] - b) ** 2 <= 3600:
                    near[k] += 1
    print(json.dumps({"width": width, "height": height, "distinct": len(distinct),
                      "near": dict(zip(targets, near))}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
