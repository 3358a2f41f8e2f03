#!/usr/bin/env python3
"""Writes a `datasets` save_to_disk-like directory of Arrow IPC stream files, written from the Arrow columnar
format specification (Message.fbs / Schema.fbs flatbuffers packed by hand with struct; no pyarrow), independently
of kforge's reader.

Usage: write_arrow_dataset.py OUTDIR TEXT_TYPE [REPEAT [FRAMING]]
TEXT_TYPE is utf8 or large_utf8 (the image struct's children then binary and utf8, or large_binary and large_utf8);
each file holds its record batches REPEAT times (default 1). FRAMING "legacy" writes
the pre-0.15 message framing (an int32 length without the 0xFFFFFFFF continuation marker); default: the current one.
OUTDIR gets data-00000-of-00002.arrow and data-00001-of-00002.arrow (columns: id int64, image struct<bytes: binary,
path: utf8> with null structs, null bytes and null paths, text TEXT_TYPE with nulls, empty strings, non-ASCII text and
several record batches, one of them empty), state.json and dataset_info.json. Prints one JSON object:
{"texts": the non-null texts in row order, "nulls": null texts, "rows": rows,
 "images": per row, null or {"bytes": hex or null, "path": text or null}}.
"""
import json
import os
import struct
import sys

# ---- a flatbuffer builder that lays objects out forwards (every uoffset points ahead) ----------------------------
SIZES = {"u8": 1, "bool": 1, "i16": 2, "i32": 4, "i64": 8, "off": 4}
FORMATS = {"u8": "B", "bool": "B", "i16": "h", "i32": "i", "i64": "q"}


class Table:
    def __init__(self, *fields):  # (id, kind, value); kind "off" takes a Table, Tables, Structs or String
        self.fields = fields


class Tables:
    def __init__(self, items):
        self.items = items


class Structs:  # a vector of 16-byte structs (FieldNode, Buffer: two int64 each)
    def __init__(self, pairs):
        self.pairs = pairs


class String:
    def __init__(self, text):
        self.data = text.encode()


class Builder:
    def __init__(self):
        self.buf = bytearray()
        self.todo = []  # (position of a uoffset, the object it points at)

    def pad(self, multiple, extra=0):
        while (len(self.buf) + extra) % multiple:
            self.buf.append(0)

    def finish(self, root):
        self.buf += b"\0\0\0\0"
        self.todo.append((0, root))
        while self.todo:
            at, obj = self.todo.pop(0)
            target = self.write(obj)
            struct.pack_into("<I", self.buf, at, target - at)
        self.pad(8)
        return bytes(self.buf)

    def write(self, obj):
        if isinstance(obj, Table):
            return self.write_table(obj)
        if isinstance(obj, Tables):
            self.pad(4)
            at = len(self.buf)
            self.buf += struct.pack("<I", len(obj.items))
            for item in obj.items:
                self.todo.append((len(self.buf), item))
                self.buf += b"\0\0\0\0"
            return at
        if isinstance(obj, Structs):
            self.pad(8, 4)  # the elements 8-aligned after the length
            at = len(self.buf)
            self.buf += struct.pack("<I", len(obj.pairs))
            for a, b in obj.pairs:
                self.buf += struct.pack("<qq", a, b)
            return at
        self.pad(4)
        at = len(self.buf)
        self.buf += struct.pack("<I", len(obj.data)) + obj.data + b"\0"
        return at

    def write_table(self, table):
        n = max([f[0] for f in table.fields], default=-1) + 1
        offsets, size = {}, 4  # after the soffset to the vtable
        for fid, kind, _ in sorted(table.fields, key=lambda f: -SIZES[f[1]]):
            width = SIZES[kind]
            size += -size % width
            offsets[fid] = size
            size += width
        vtable_size = 4 + 2 * n
        self.pad(8, vtable_size)  # the table starts 8-aligned right after its vtable
        vtable = len(self.buf)
        self.buf += struct.pack("<HH", vtable_size, size)
        self.buf += b"".join(struct.pack("<H", offsets.get(i, 0)) for i in range(n))
        at = len(self.buf)
        body = bytearray(size)
        struct.pack_into("<i", body, 0, at - vtable)
        for fid, kind, value in table.fields:
            if kind == "off":
                self.todo.append((at + offsets[fid], value))
            else:
                struct.pack_into("<" + FORMATS[kind], body, offsets[fid], value)
        self.buf += body
        return at


# ---- Arrow messages (Schema.fbs Type tags, Message.fbs header tags, MetadataVersion V5 = 4) ------------------------
INT, BINARY, UTF8, STRUCT, LARGE_BINARY, LARGE_UTF8 = 2, 4, 5, 13, 19, 20
SCHEMA, RECORD_BATCH = 1, 3


def field(name, type_tag, type_table, children=()):
    return Table((0, "off", String(name)), (1, "bool", 1), (2, "u8", type_tag), (3, "off", type_table),
                 (5, "off", Tables(list(children))))


def message(header_tag, header, body_length):
    return Builder().finish(Table((0, "i16", 4), (1, "u8", header_tag), (2, "off", header), (3, "i64", body_length)))


LEGACY = len(sys.argv) > 4 and sys.argv[4] == "legacy"


def encapsulate(metadata, body=b""):
    length = struct.pack("<i", len(metadata) + (4 if LEGACY else 0))  # legacy: padded to 8 without a marker
    if LEGACY:
        return length + metadata + b"\0" * 4 + body
    return struct.pack("<I", 0xFFFFFFFF) + length + metadata + body


def validity(values):
    if all(v is not None for v in values):
        return b""  # no nulls: an empty bitmap, as Arrow writers emit
    bits = bytearray((len(values) + 7) // 8)
    for i, v in enumerate(values):
        if v is not None:
            bits[i // 8] |= 1 << (i % 8)
    return bytes(bits)


def variable(values, offset_format):  # validity, offsets, data of a binary or string array
    offsets, data = [0], b""
    for v in values:
        data += v or b""
        offsets.append(len(data))
    return [validity(values), struct.pack("<%d%s" % (len(offsets), offset_format), *offsets), data]


def nulls(values):
    return sum(v is None for v in values)


def record_batch(ids, images, texts, offset_format):
    n = len(ids)
    # Under a null struct its children hold values all the same (Arrow leaves them undefined): a reader must go by the
    # struct's validity.
    image_bytes = [b"\xff" if im is None else im[0] for im in images]
    image_paths = [b"hidden" if im is None else None if im[1] is None else im[1].encode() for im in images]
    encoded = [None if t is None else t.encode() for t in texts]
    nodes = [(n, 0), (n, nulls(images)), (n, nulls(image_bytes)), (n, nulls(image_paths)), (n, nulls(encoded))]
    buffers = ([b"", struct.pack("<%dq" % n, *ids), validity(images)] + variable(image_bytes, offset_format) +
               variable(image_paths, offset_format) + variable(encoded, offset_format))
    return batch_message(n, nodes, buffers)


def batch_message(n, nodes, buffers):  # a record batch of n rows: its field nodes and buffers, each 8-aligned
    body, places = b"", []
    for buf in buffers:
        places.append((len(body), len(buf)))
        body += buf + b"\0" * (-len(buf) % 8)
    header = Table((0, "i64", n), (1, "off", Structs(nodes)), (2, "off", Structs(places)))
    return encapsulate(message(RECORD_BATCH, header, len(body)), body)


def image_of(i):  # null; or bytes (possibly empty) and a path, either possibly null
    if i % 3 == 1:
        return None
    return (None if i % 7 == 5 else bytes([i % 256]) * (i % 5), None if i % 4 == 3 else "img%d.png" % i)


def write_file(path, text_type, batches):
    large = text_type != "utf8"
    image = field("image", STRUCT, Table(), [field("bytes", LARGE_BINARY if large else BINARY, Table()),
                                             field("path", LARGE_UTF8 if large else UTF8, Table())])
    schema = Table((0, "i16", 0), (1, "off", Tables([
        field("id", INT, Table((0, "i32", 64), (1, "bool", 1))), image,
        field("text", UTF8 if text_type == "utf8" else LARGE_UTF8, Table())])))
    out = encapsulate(message(SCHEMA, schema, 0))
    row, written = 0, []
    for texts in batches:
        ids = list(range(row, row + len(texts)))
        images = [image_of(i) for i in ids]
        out += record_batch(ids, images, texts, "i" if text_type == "utf8" else "q")
        row += len(texts)
        written += images
    with open(path, "wb") as f:
        f.write(out + (struct.pack("<i", 0) if LEGACY else struct.pack("<Ii", 0xFFFFFFFF, 0)))  # end of stream
    return written


FILES = {
    "data-00000-of-00002.arrow": [
        ["hello world", "", None, "naïve café — ünïcödé"],
        [],
        ["日本語のテキスト", None, None, "🚀 rocket\nnew line \"quoted\" \\ back\ttab", "x" * 300, ""],
    ],
    "data-00001-of-00002.arrow": [["second file first", None, "last of all"]],
}


def main():
    out, text_type = sys.argv[1], sys.argv[2]
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    os.makedirs(out, exist_ok=True)
    texts, rows, images = [], 0, []
    for name, batches in FILES.items():
        batches = batches * repeat
        images += write_file(os.path.join(out, name), text_type, batches)
        for batch in batches:
            rows += len(batch)
            texts += batch
    state = {"_data_files": [{"filename": name} for name in FILES], "_fingerprint": "0123456789abcdef",
             "_format_columns": None, "_format_kwargs": {}, "_format_type": None, "_output_all_columns": False,
             "_split": "train"}
    with open(os.path.join(out, "state.json"), "w") as f:
        json.dump(state, f, indent=2)
    info = {"features": {"id": {"dtype": "int64", "_type": "Value"}, "image": {"_type": "Image"},
                         "text": {"dtype": "large_string" if text_type == "large_utf8" else "string",
                                  "_type": "Value"}}}
    with open(os.path.join(out, "dataset_info.json"), "w") as f:
        json.dump(info, f, indent=2)
    print(json.dumps({"texts": [t for t in texts if t is not None], "nulls": sum(t is None for t in texts),
                      "rows": rows,
                      "images": [None if im is None else {"bytes": None if im[0] is None else im[0].hex(),
                                                          "path": im[1]} for im in images]}))


if __name__ == "__main__":  # write_arrow_coco.py imports the writer
    main()
