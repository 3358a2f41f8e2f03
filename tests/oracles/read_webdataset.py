#!/usr/bin/env python3
"""Reads WebDataset shards with Python's tarfile, independently of kforge's libarchive reader.

Usage: read_webdataset.py SHARD.tar...
Prints one JSON list, a member per entry in archive order: {"shard", "name", "size", "sha256",
"mtime", "uid", "mode", "text"} ("text" only for .txt and .json members).
"""
import hashlib
import json
import os
import sys
import tarfile

members = []
for shard in sys.argv[1:]:
    with tarfile.open(shard, "r:") as tar:
        for info in tar:
            data = tar.extractfile(info).read()
            entry = {"shard": os.path.basename(shard), "name": info.name, "size": info.size,
                     "sha256": hashlib.sha256(data).hexdigest(), "mtime": info.mtime, "uid": info.uid,
                     "mode": info.mode}
            if info.name.endswith((".txt", ".json")):
                entry["text"] = data.decode("utf-8")
            members.append(entry)
print(json.dumps(members))
