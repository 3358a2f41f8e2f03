"""Reads the files kforge writes with readers that are not kforge's: json, struct and numpy.

  read_formats.py safetensors [--out DIR] FILE...   checkpoint shards (the safetensors format)
  read_formats.py checkpoint DIR                    a step directory: commit.json, metadata.json,
                                                    train_state.json, config.toml (tomllib), every shard
  read_formats.py jsonl FILE                        metrics.jsonl
  read_formats.py trace FILE                        a Chrome trace (profiling)
  read_formats.py prepared DIR                      `kforge prepare-data` output: metadata.json and
                                                    the .npy shards it lists (numpy)

Each subcommand checks everything the format requires and prints what it read, one record a
line, tab-separated (metric names as JSON strings); it exits 1 with "FILE: fault" on stderr at the first fault.
(.npy shards are read by numpy in tests/oracles/data_npy_check.py.)
"""
import json
import math
import os
import struct
import sys
import tomllib

import numpy as np

# The safetensors dtypes and how numpy holds their bytes (little-endian; bf16 and fp8 as raw bits).
SAFETENSORS_DTYPES = {
    "BOOL": "?", "U8": "u1", "I8": "i1", "I16": "<i2", "U16": "<u2", "F16": "<f2", "BF16": "<u2",
    "I32": "<i4", "U32": "<u4", "F32": "<f4", "F64": "<f8", "I64": "<i8", "U64": "<u8",
    "F8_E4M3": "u1", "F8_E5M2": "u1",
}
MAX_HEADER = 100 << 20  # the reference implementation's limit


class Fault(Exception):
    pass


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    for k in keys:
        if keys.count(k) > 1:
            raise Fault(f"duplicate key '{k}' in a JSON object")
    return dict(pairs)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def read_safetensors(path):
    """Returns (metadata, [(name, dtype, shape, array)]) in data order, or raises Fault."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise Fault(f"{len(blob)} bytes, shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > MAX_HEADER:
        raise Fault(f"header length {n} is over the {MAX_HEADER}-byte limit")
    if 8 + n > len(blob):
        raise Fault(f"header length {n} runs past the end of the {len(blob)}-byte file")
    # kforge's writer pads the header with spaces so the data starts 8-byte aligned.
    if (8 + n) % 8 != 0:
        raise Fault(f"header length {n}: the data does not start at a multiple of 8 bytes")
    raw = blob[8:8 + n]
    if not raw.startswith(b"{"):
        raise Fault("the header does not begin with '{'")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Fault(f"the header is not UTF-8: {e}")
    body = text.rstrip(" ")
    try:
        header = json.loads(body, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as e:
        raise Fault(f"the header is not JSON (or is padded with something else than spaces): {e}")
    if not isinstance(header, dict):
        raise Fault("the header is not a JSON object")
    data = blob[8 + n:]
    metadata = header.pop("__metadata__", None)
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise Fault(f"__metadata__ is not a map of strings to strings: {metadata!r}")
    entries = []
    for name, info in header.items():
        where = f"tensor '{name}'"
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise Fault(f"{where}: the entry must hold exactly dtype, shape and data_offsets: {info!r}")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if dtype not in SAFETENSORS_DTYPES:
            raise Fault(f"{where}: dtype {dtype!r} is not a safetensors dtype")
        if not isinstance(shape, list) or not all(is_int(d) and d >= 0 for d in shape):
            raise Fault(f"{where}: shape {shape!r} is not a list of non-negative integers")
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(is_int(o) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1]):
            raise Fault(f"{where}: data_offsets {offsets!r} is not [begin, end] with 0 <= begin <= end")
        itemsize = np.dtype(SAFETENSORS_DTYPES[dtype]).itemsize
        need = itemsize * math.prod(shape)
        if offsets[1] - offsets[0] != need:
            raise Fault(f"{where}: data_offsets {offsets} span {offsets[1] - offsets[0]} bytes, "
                        f"but dtype {dtype} and shape {shape} need {need}")
        if offsets[1] > len(data):
            raise Fault(f"{where}: data_offsets {offsets} end past the {len(data)}-byte data buffer")
        entries.append((name, dtype, shape, offsets))
    # The byte buffer is covered exactly: no hole, no overlap, nothing after the last tensor.
    entries.sort(key=lambda e: (e[3][0], e[3][1]))
    at = 0
    for name, _, _, offsets in entries:
        if offsets[0] != at:
            what = "a hole" if offsets[0] > at else "an overlap"
            raise Fault(f"tensor '{name}': data_offsets {offsets} leave {what} at byte {at} of the data buffer")
        at = offsets[1]
    if at != len(data):
        raise Fault(f"the tensors cover {at} bytes of the {len(data)}-byte data buffer")
    out = []
    for name, dtype, shape, (begin, end) in entries:
        a = np.frombuffer(data, dtype=SAFETENSORS_DTYPES[dtype], count=math.prod(shape), offset=begin)
        if dtype == "BOOL" and not np.all(np.frombuffer(data, "u1", end - begin, begin) <= 1):
            raise Fault(f"tensor '{name}': a BOOL byte is neither 0 nor 1")
        out.append((name, dtype, shape, a.reshape(shape)))
    return metadata, out


def cmd_safetensors(args):
    out_dir = None
    if args[:1] == ["--out"]:
        out_dir, args = args[1], args[2:]
        os.makedirs(out_dir, exist_ok=True)
    manifest = []
    for path in args:
        try:
            metadata, tensors = read_safetensors(path)
        except Fault as e:
            fail(path, e)
        print(f"file\t{path}\t{len(tensors)}\t{json.dumps(metadata, sort_keys=True)}")
        for name, dtype, shape, a in tensors:
            line = f"tensor\t{name}\t{dtype}\t{','.join(map(str, shape))}"
            if out_dir is not None:
                blob = os.path.join(out_dir, f"{len(manifest)}.bin")
                with open(blob, "wb") as f:
                    f.write(np.ascontiguousarray(a).tobytes())
                line += f"\t{blob}"
            manifest.append(line)
            print(line)


def read_checkpoint(step_dir):
    """Checks a step directory; returns (metadata, config) or raises Fault naming the file."""
    def load_json(name):
        try:
            with open(os.path.join(step_dir, name), "rb") as f:
                return json.loads(f.read().decode("utf-8"), object_pairs_hook=no_duplicates)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, Fault) as e:
            raise Fault(f"{name}: not readable JSON: {e}")
    meta = load_json("metadata.json")
    commit = load_json("commit.json")
    sealed = commit.get("metadata.json")
    meta_bytes = os.path.getsize(os.path.join(step_dir, "metadata.json"))
    if (not isinstance(sealed, dict) or sealed.get("bytes") != meta_bytes or not isinstance(sealed.get("xxh3"), str)
            or len(sealed["xxh3"]) != 16):
        raise Fault(f"commit.json: the entry of metadata.json ({meta_bytes} bytes) is {sealed!r}")
    for key, ok in (("format", lambda v: v == "kforge-checkpoint"), ("schema_version", is_int), ("step", is_int),
                    ("tokens_seen", is_int), ("world_size", lambda v: is_int(v) and v > 0),
                    ("files", lambda v: isinstance(v, dict)), ("tensors", lambda v: isinstance(v, dict))):
        if key not in meta or not ok(meta[key]):
            raise Fault(f"metadata.json: '{key}' is missing or wrong: {meta.get(key)!r}")
    for name, entry in meta["files"].items():
        path = os.path.join(step_dir, name)
        if not os.path.isfile(path):
            raise Fault(f"metadata.json lists {name}, which is not there")
        if entry.get("bytes") != os.path.getsize(path) or not isinstance(entry.get("xxh3"), str):
            raise Fault(f"metadata.json: {name} has {os.path.getsize(path)} bytes, the entry says {entry!r}")
    state = load_json("train_state.json")
    if not isinstance(state.get("data"), list) or len(state["data"]) != meta["world_size"]:
        raise Fault(f"train_state.json: 'data' is not a list of one entry per rank: {state.get('data')!r}")
    for key in ("step", "tokens_seen"):
        if state.get(key) != meta[key]:
            raise Fault(f"train_state.json: '{key}' is {state.get(key)!r}, metadata.json says {meta[key]!r}")
    try:
        with open(os.path.join(step_dir, "config.toml"), "rb") as f:
            config = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise Fault(f"config.toml: not readable TOML: {e}")
    headers = {}
    for name in meta["files"]:
        if name.endswith(".safetensors"):
            try:
                headers[name] = {t[0]: t[2] for t in read_safetensors(os.path.join(step_dir, name))[1]}
            except Fault as e:
                raise Fault(f"{name}: {e}")
    for key, entry in meta["tensors"].items():
        shape = entry.get("global_shape")
        covered = 0
        for piece in entry.get("shards", []):
            held = headers.get(piece.get("file"), {}).get(key)
            offsets = piece.get("offsets")
            if held is None:
                raise Fault(f"metadata.json: tensor '{key}' is said to be in {piece.get('file')}, which lacks it")
            if (not isinstance(offsets, list) or len(offsets) != len(shape) or len(held) != len(shape)
                    or any(o < 0 or o + h > g for o, h, g in zip(offsets, held, shape))):
                raise Fault(f"metadata.json: tensor '{key}': a slice of shape {held} at {offsets} "
                            f"does not fit the global shape {shape}")
            covered += math.prod(held)
        if covered != math.prod(shape):
            raise Fault(f"metadata.json: tensor '{key}': its slices hold {covered} of {math.prod(shape)} elements")
    return meta, config


def cmd_checkpoint(args):
    (step_dir,) = args
    try:
        meta, config = read_checkpoint(step_dir)
    except Fault as e:
        fail(step_dir, e)
    print(f"checkpoint\t{meta['step']}\t{meta['tokens_seen']}\t{meta['world_size']}\t{len(meta['tensors'])}")
    print(f"config\t{json.dumps(config, sort_keys=True)}")


def cmd_jsonl(args):
    (path,) = args
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines[-1] != b"":
        fail(path, f"line {len(lines)} does not end with a newline")
    last_step = -1
    for i, raw in enumerate(lines[:-1], 1):
        try:
            rec = json.loads(raw.decode("utf-8"), object_pairs_hook=no_duplicates)
        except (UnicodeDecodeError, json.JSONDecodeError, Fault) as e:
            fail(path, f"line {i} is not JSON: {e}")
        if not isinstance(rec, dict):
            fail(path, f"line {i} is not a JSON object")
        step, time = rec.get("step"), rec.get("time")
        if not is_int(step) or step < 0:
            fail(path, f"line {i}: 'step' is {step!r}, not a non-negative integer")
        if step < last_step:
            fail(path, f"line {i}: step {step} comes after step {last_step}")
        last_step = step
        # A unix timestamp in seconds: after 2001, before 2096.
        if not is_number(time) or not 1e9 < time < 4e9:
            fail(path, f"line {i}: 'time' is {time!r}, not a unix timestamp in seconds")
        if len(rec) < 3:
            fail(path, f"line {i} holds no metric")
        for key, value in rec.items():
            if key in ("step", "time"):
                continue
            if not key or (value is not None and not is_number(value)):
                fail(path, f"line {i}: metric {key!r} = {value!r} is not a number or null")
            print(f"{step}\t{json.dumps(key)}\t{'null' if value is None else repr(float(value))}")


def cmd_trace(args):
    (path,) = args
    try:
        with open(path, "rb") as f:
            trace = json.loads(f.read().decode("utf-8"), object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, json.JSONDecodeError, Fault) as e:
        fail(path, f"not JSON: {e}")
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        fail(path, "not an object with a 'traceEvents' list")
    if trace.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        fail(path, f"displayTimeUnit {trace['displayTimeUnit']!r} is neither 'ms' nor 'ns'")
    for i, e in enumerate(trace["traceEvents"]):
        where = f"traceEvents[{i}]"
        if not isinstance(e, dict):
            fail(path, f"{where} is not an object")
        for key, ok in (("name", lambda v: isinstance(v, str)), ("ph", lambda v: isinstance(v, str) and len(v) == 1),
                        ("ts", is_number), ("pid", is_int), ("tid", is_int)):
            if key not in e or not ok(e[key]):
                fail(path, f"{where}: '{key}' is missing or has the wrong type ({e.get(key)!r})")
        if e["ph"] == "X" and (not is_number(e.get("dur")) or e["dur"] < 0):
            fail(path, f"{where}: complete event (ph X) without a non-negative 'dur' ({e.get('dur')!r})")
        dur = repr(float(e["dur"])) if "dur" in e else "-"
        print(f"{e['name']}\t{e.get('cat', '')}\t{e['ph']}\t{float(e['ts'])!r}\t{dur}\t{e['pid']}\t{e['tid']}")


def cmd_prepared(args):
    (out_dir,) = args
    path = os.path.join(out_dir, "metadata.json")
    try:
        with open(path, "rb") as f:
            meta = json.loads(f.read().decode("utf-8"), object_pairs_hook=no_duplicates)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, Fault) as e:
        fail(path, f"not JSON: {e}")
    if not is_int(meta.get("vocab_size")) or meta["vocab_size"] <= 0:
        fail(path, f"'vocab_size' is {meta.get('vocab_size')!r}, not a positive integer")
    if meta.get("dtype") not in ("uint16", "uint32"):
        fail(path, f"'dtype' is {meta.get('dtype')!r}, neither 'uint16' nor 'uint32'")
    for key in ("shards", "tokens", "documents"):
        if not isinstance(meta.get(key), dict):
            fail(path, f"'{key}' is not an object of splits")
    for split, shards in meta["shards"].items():
        if not isinstance(shards, list) or not all(isinstance(s, str) for s in shards):
            fail(path, f"shards of split {split!r} are not a list of file names")
        total, top = 0, -1
        for name in shards:
            a = np.load(os.path.join(out_dir, name), mmap_mode="r")
            if a.dtype != np.dtype(meta["dtype"]) or a.ndim != 1:
                fail(path, f"shard {name} is {a.dtype} with shape {a.shape}, not 1-D {meta['dtype']}")
            total += a.shape[0]
            if a.shape[0]:
                top = max(top, int(a.max()))
        if meta["tokens"].get(split) != total:
            fail(path, f"split {split!r} claims {meta['tokens'].get(split)!r} tokens, its shards hold {total}")
        if top >= meta["vocab_size"]:
            fail(path, f"split {split!r} holds token id {top}, outside the vocabulary of {meta['vocab_size']}")
        if not is_int(meta["documents"].get(split)):
            fail(path, f"split {split!r} has no integer document count")
        print(f"{split}\t{len(shards)}\t{total}\t{meta['documents'][split]}")


def fail(path, fault):
    print(f"{path}: {fault}", file=sys.stderr)
    sys.exit(1)


def main():
    commands = {"safetensors": cmd_safetensors, "checkpoint": cmd_checkpoint, "jsonl": cmd_jsonl, "trace": cmd_trace,
                "prepared": cmd_prepared}
    if len(sys.argv) < 3 or sys.argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
