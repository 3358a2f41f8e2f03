"""Oracle for kforge's ring attention: plain causal grouped-query attention over the whole sequence, float64.

Usage: ring_attention.py DIR. Reads DIR/q.npy (B, H, S, hd), DIR/k.npy and DIR/v.npy (B, KV, S, hd), DIR/d_out.npy
(B, H, S, hd) and, when present, DIR/doc_ids.npy (int64 (B, S), non-decreasing along each row). Query i sees key j when
j <= i and, with document ids, both are in the same document. Writes DIR/out.npy = softmax(q k^T / sqrt(hd) + mask) v
and the gradients of sum(out * d_out): DIR/d_q.npy, DIR/d_k.npy, DIR/d_v.npy.
"""
import math
import os
import sys

import numpy as np
import torch


def main(d):
    load = lambda name: torch.from_numpy(np.load(os.path.join(d, name))).to(torch.float64)
    q, k, v = (load(n).requires_grad_(True) for n in ("q.npy", "k.npy", "v.npy"))
    d_out = load("d_out.npy")
    seq = q.shape[2]
    group = q.shape[1] // k.shape[1]
    visible = torch.ones(seq, seq, dtype=torch.bool).tril()[None, None]
    ids_path = os.path.join(d, "doc_ids.npy")
    if os.path.exists(ids_path):
        ids = torch.from_numpy(np.load(ids_path))
        visible = visible & (ids[:, None, :, None] == ids[:, None, None, :])
    kh, vh = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    scores = q @ kh.transpose(-2, -1) / math.sqrt(q.shape[-1])
    out = scores.masked_fill(~visible, float("-inf")).softmax(-1) @ vh
    (out * d_out).sum().backward()
    for name, t in (("out", out.detach()), ("d_q", q.grad), ("d_k", k.grad), ("d_v", v.grad)):
        np.save(os.path.join(d, name + ".npy"), t.numpy())
    print("ring_attention oracle: torch", torch.__version__, "S", seq, "group", group)


if __name__ == "__main__":
    main(sys.argv[1])
