#!/usr/bin/env python3
"""Writes a COCO-style Hugging Face image-text dataset as `datasets`' save_to_disk does, with the Arrow writer of
write_arrow_dataset.py (written from the Arrow specification, no pyarrow), and the same samples as a kforge JSON Lines
manifest of the PNG files, for comparison.

Usage: write_arrow_coco.py OUTDIR [MANIFEST]
With MANIFEST (a kforge JSON Lines manifest), OUTDIR/export/ gets its lines instead, each image's file embedded as
bytes, its "prompt" as the question (null where absent), in one record batch; nothing else is written and it prints
{"rows": n}. Otherwise:
OUTDIR/export/ gets data-00000-of-00001.arrow (columns: image, an Image feature: struct<bytes: binary, path: utf8>;
caption utf8; question utf8 with nulls; two record batches), state.json and dataset_info.json. The images are PNGs
(written here from the PNG specification with zlib) of several sizes, embedded as bytes, except one row's, which has
only a path: OUTDIR/images/img3.png, absolute, as the `datasets` cache keeps local files. OUTDIR/images/ holds every
image and OUTDIR/manifest.jsonl one {"image", "text", "prompt"} line per row ("prompt" absent where the question is
null). Prints one JSON object: {"rows": n, "images": hex PNG bytes per row, "captions": [...], "prompts": [... or
null]}.
"""
import json
import os
import struct
import sys
import zlib

from write_arrow_dataset import (BINARY, SCHEMA, STRUCT, UTF8, Table, Tables, batch_message, encapsulate, field,
                                 message, nulls, variable)


def png(width, height, seed):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\0" + bytes((x * 37 + y * 11 + seed * 53 + c * 80) % 256 for x in range(width) for c in range(3))
                    for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


SIZES = [(8, 6), (5, 9), (12, 12), (7, 7), (3, 4), (10, 5)]
CAPTIONS = ["A cat on a mat.", "Two dogs, one ball.", "", "Ünïcödé caption — ok", "A red bus",
            "Kites over a beach."]
QUESTIONS = ["What is this?", None, "Describe the image.", None, "Colour?", "Where?"]
PATH_ONLY = 3


def record_batch(images, captions, questions):
    n = len(captions)
    image_bytes = [b for b, _ in images]
    image_paths = [p.encode() for _, p in images]
    cap = [c.encode() for c in captions]
    que = [None if q is None else q.encode() for q in questions]
    nodes = [(n, 0), (n, nulls(image_bytes)), (n, 0), (n, 0), (n, nulls(que))]
    buffers = [b""] + variable(image_bytes, "i") + variable(image_paths, "i") + variable(cap, "i") + variable(que, "i")
    return batch_message(n, nodes, buffers)


def write_export(export, images, captions, questions, batches):
    image = field("image", STRUCT, Table(), [field("bytes", BINARY, Table()), field("path", UTF8, Table())])
    schema = Table((0, "i16", 0), (1, "off", Tables([image, field("caption", UTF8, Table()),
                                                       field("question", UTF8, Table())])))
    stream = encapsulate(message(SCHEMA, schema, 0))
    for lo, hi in batches:
        stream += record_batch(images[lo:hi], captions[lo:hi], questions[lo:hi])
    os.makedirs(export, exist_ok=True)
    with open(os.path.join(export, "data-00000-of-00001.arrow"), "wb") as f:
        f.write(stream + struct.pack("<Ii", 0xFFFFFFFF, 0))
    with open(os.path.join(export, "state.json"), "w") as f:
        json.dump({"_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_split": "train"}, f)
    with open(os.path.join(export, "dataset_info.json"), "w") as f:
        json.dump({"features": {"image": {"_type": "Image"}, "caption": {"dtype": "string", "_type": "Value"},
                                "question": {"dtype": "string", "_type": "Value"}}}, f)


def convert(out, manifest):
    images, captions, questions = [], [], []
    with open(manifest) as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            with open(os.path.join(os.path.dirname(manifest), row["image"]), "rb") as image:
                images.append((image.read(), os.path.basename(row["image"])))
            captions.append(row["text"])
            questions.append(row.get("prompt"))
    write_export(os.path.join(out, "export"), images, captions, questions, [(0, len(images))])
    print(json.dumps({"rows": len(images)}))


def main():
    out = os.path.abspath(sys.argv[1])
    if len(sys.argv) > 2:
        convert(out, sys.argv[2])
        return
    export, image_dir = os.path.join(out, "export"), os.path.join(out, "images")
    os.makedirs(image_dir, exist_ok=True)
    pngs = [png(w, h, i) for i, (w, h) in enumerate(SIZES)]
    images = []
    with open(os.path.join(out, "manifest.jsonl"), "w") as manifest:
        for i, data in enumerate(pngs):
            path = os.path.join(image_dir, "img%d.png" % i)
            with open(path, "wb") as f:
                f.write(data)
            # Embedded bytes keep the file's name as their path, as save_to_disk writes them.
            images.append((None, path) if i == PATH_ONLY else (data, "img%d.png" % i))
            line = {"image": "images/img%d.png" % i, "text": CAPTIONS[i]}
            if QUESTIONS[i] is not None:
                line["prompt"] = QUESTIONS[i]
            manifest.write(json.dumps(line) + "\n")
    write_export(export, images, CAPTIONS, QUESTIONS, [(0, 4), (4, len(pngs))])
    print(json.dumps({"rows": len(pngs), "images": [d.hex() for d in pngs], "captions": CAPTIONS,
                      "prompts": QUESTIONS}))


main()
