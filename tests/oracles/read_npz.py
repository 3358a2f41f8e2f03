#!/usr/bin/env python3
"""Reads a NumPy .npz archive with numpy itself, for the tests of kforge's .npz writer and `kforge extract`.

Usage: read_npz.py FILE.npz

Prints one JSON object: {name: {"dtype": str, "shape": [..], "values": [flattened values]}} for every
array numpy.load finds, in the archive's order (names without .npy). Exits 1 with numpy's message
when it cannot read the file, or when a name stands twice (a zip allows it; numpy would show one).
"""
import json
import sys

import numpy as np


def main(path):
    try:
        archive = np.load(path, allow_pickle=False)
        out = {}
        if len(set(archive.files)) != len(archive.files):
            sys.exit(f"{path}: an array name stands twice in {archive.files}")
        for name in archive.files:
            a = archive[name]
            out[name] = {"dtype": str(a.dtype), "shape": list(a.shape), "values": a.reshape(-1).tolist()}
    except Exception as e:  # numpy's own words are the point of this reader
        sys.exit(f"{path}: {type(e).__name__}: {e}")
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
