# Reads `kforge prepare-data` output with numpy and checks the document indexes against the shards:
#   doc_index_check.py OUTPUT_DIR
# For each split in metadata.json: every shard but the last holds shard_tokens tokens; each
# doc_index/SPLIT/tokens_NNN.docs.npy is 1-D int64, ascending, inside its shard; the first document starts
# at token 0 of the split, each later one right after an EOS, and the split ends with EOS; the number of
# starts equals the split's document count and the number of EOS tokens. Prints one line per split:
# "SPLIT shards=N tokens=T documents=D first=F" (F: the global start offsets of the first 5 documents),
# or exits 1 with "FILE: fault" on stderr.
import json
import os
import sys

import numpy as np


def fail(path, fault):
    print(f"{path}: {fault}", file=sys.stderr)
    sys.exit(1)


out_dir = sys.argv[1]
meta_path = os.path.join(out_dir, "metadata.json")
with open(meta_path, "rb") as f:
    meta = json.loads(f.read().decode("utf-8"))
eos, shard_tokens = meta["eos_id"], meta["shard_tokens"]
index = meta["document_index"]
if index["dtype"] != "int64" or index["documents_span_shards"] is not True:
    fail(meta_path, f"document_index describes {index!r}")
for split, shards in meta["shards"].items():
    docs = index[split]
    if len(docs) != len(shards):
        fail(meta_path, f"split {split}: {len(shards)} shards but {len(docs)} document indexes")
    tokens, starts, base = [], [], 0
    for k, (shard, doc) in enumerate(zip(shards, docs)):
        a = np.load(os.path.join(out_dir, shard), mmap_mode="r")
        d = np.load(os.path.join(out_dir, doc))
        if k + 1 < len(shards) and a.shape[0] != shard_tokens:
            fail(shard, f"holds {a.shape[0]} tokens, not shard_tokens={shard_tokens} (only the last may hold fewer)")
        if d.dtype != np.int64 or d.ndim != 1:
            fail(doc, f"is {d.dtype} with shape {d.shape}, not 1-D int64")
        if d.size and (np.any(np.diff(d) <= 0) or d[0] < 0 or d[-1] >= a.shape[0]):
            fail(doc, f"offsets {d.tolist()[:10]}... are not ascending inside the shard's {a.shape[0]} tokens")
        tokens.append(np.asarray(a, dtype=np.int64))
        starts.extend(int(v) + base for v in d)
        base += a.shape[0]
    t = np.concatenate(tokens) if tokens else np.zeros(0, dtype=np.int64)
    ends = np.flatnonzero(t == eos)
    expected = [0] + [int(e) + 1 for e in ends[:-1]] if t.size else []
    if t.size and t[-1] != eos:
        fail(meta_path, f"split {split} does not end with EOS {eos}")
    if starts != expected:
        fail(meta_path, f"split {split}: document starts {starts[:8]}... are not 0 and each token after an EOS "
                        f"{expected[:8]}...")
    if len(starts) != meta["documents"][split]:
        fail(meta_path, f"split {split}: {len(starts)} document starts, metadata says {meta['documents'][split]}")
    print(f"{split} shards={len(shards)} tokens={t.size} documents={len(starts)} "
          f"first={','.join(str(s) for s in starts[:5])}")
