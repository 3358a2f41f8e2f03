#!/usr/bin/env python3
"""Independent reference for kforge's vision adapters (plugins/vision), from KempnerForge's
model/adapter.py semantics, written window by window in plain torch.

Usage:
  vision_adapters.py OUT_DIR
      Writes OUT_DIR/cases.json (a list of {name, type, in_dim, out_dim, hidden_dim, activation,
      pool_window, pool_heads, tokens}) and per case OUT_DIR/<name>.safetensors: param/<name> (random
      float32 weights under KempnerForge's parameter names), x (2, tokens, in_dim), cotangent, output
      and grad/x, grad/<name>: the gradients of sum(output * cotangent).

Adapters:
  mlp_2layer: proj2(act(proj1(x))), hidden_dim 0 -> out_dim, act gelu (exact) / silu / relu.
  linear: proj(x).
  avgpool: x as a g x g grid (row-major); for each window (r, c) in row-major order, the mean of the
    cells grid[r*w : min((r+1)*w, g), c*w : min((c+1)*w, g)] (ragged edges: the cells present), then proj.
  attentional_pool: for each window, query = mean of its w*w patches, per head h (head_dim = in_dim /
    heads, channels [h*hd, (h+1)*hd)): softmax(q_h . k_h^T / sqrt(hd)) v_h over the window's patches,
    with q = q_proj(query), k = k_proj(patches), v = v_proj(patches); heads concatenated -> o_proj -> out_proj.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_llama import write_safetensors  # noqa: E402

CASES = [
    {"name": "mlp_gelu", "type": "mlp_2layer", "in_dim": 8, "out_dim": 6, "hidden_dim": 10, "activation": "gelu",
     "tokens": 9},
    {"name": "mlp_silu_default_hidden", "type": "mlp_2layer", "in_dim": 8, "out_dim": 6, "hidden_dim": 0,
     "activation": "silu", "tokens": 9},
    {"name": "mlp_relu", "type": "mlp_2layer", "in_dim": 8, "out_dim": 6, "hidden_dim": 5, "activation": "relu",
     "tokens": 4},
    {"name": "linear", "type": "linear", "in_dim": 8, "out_dim": 6, "tokens": 9},
    {"name": "avgpool_ragged", "type": "avgpool", "in_dim": 8, "out_dim": 6, "pool_window": 2, "tokens": 25},
    {"name": "avgpool_window3_ragged", "type": "avgpool", "in_dim": 8, "out_dim": 6, "pool_window": 3, "tokens": 49},
    {"name": "avgpool_window_over_grid", "type": "avgpool", "in_dim": 8, "out_dim": 6, "pool_window": 3,
     "tokens": 4},
    {"name": "attentional_pool", "type": "attentional_pool", "in_dim": 8, "out_dim": 6, "pool_window": 2,
     "pool_heads": 2, "tokens": 16},
    {"name": "attentional_pool_window3", "type": "attentional_pool", "in_dim": 12, "out_dim": 5, "pool_window": 3,
     "pool_heads": 4, "tokens": 36},
]


def linear_params(W, name, out_dim, in_dim, gain=1.0):
    W[name + ".weight"] = torch.randn(out_dim, in_dim) * gain / in_dim ** 0.5
    W[name + ".bias"] = 0.1 * torch.randn(out_dim)


def params(case):
    W, i, o = {}, case["in_dim"], case["out_dim"]
    t = case["type"]
    if t == "mlp_2layer":
        hidden = case["hidden_dim"] or o
        linear_params(W, "proj1", hidden, i)
        linear_params(W, "proj2", o, hidden)
    elif t in ("linear", "avgpool"):
        linear_params(W, "proj", o, i)
    else:
        for name in ("q_proj", "k_proj"):
            linear_params(W, name, i, i, 2.0)
        linear_params(W, "v_proj", i, i)
        linear_params(W, "o_proj", i, i)
        linear_params(W, "out_proj", o, i)
    return W


def lin(W, name, x):
    return x @ W[name + ".weight"].T + W[name + ".bias"]


def windows(x, w):
    """Yields (b, cells (n, C)) for every window of every image, images in order, windows row-major."""
    B, N, C = x.shape
    g = math.isqrt(N)
    grid = x.view(B, g, g, C)
    for b in range(B):
        for r in range(0, g, w):
            for c in range(0, g, w):
                yield b, grid[b, r:r + w, c:c + w].reshape(-1, C)


def forward(case, W, x):
    t = case["type"]
    B = x.shape[0]
    if t == "mlp_2layer":
        act = {"gelu": F.gelu, "silu": F.silu, "relu": F.relu}[case["activation"]]
        return lin(W, "proj2", act(lin(W, "proj1", x)))
    if t == "linear":
        return lin(W, "proj", x)
    w = case["pool_window"]
    if t == "avgpool":
        pooled = torch.stack([cells.mean(0) for _, cells in windows(x, w)])
        return lin(W, "proj", pooled.view(B, -1, x.shape[2]))
    heads = case["pool_heads"]
    hd = x.shape[2] // heads
    out = []
    for _, cells in windows(x, w):
        q, k, v = lin(W, "q_proj", cells.mean(0)), lin(W, "k_proj", cells), lin(W, "v_proj", cells)
        per_head = []
        for h in range(heads):
            s = slice(h * hd, (h + 1) * hd)
            p = torch.softmax(k[:, s] @ q[s] / math.sqrt(hd), dim=0)
            per_head.append(p @ v[:, s])
        out.append(lin(W, "o_proj", torch.cat(per_head)))
    return lin(W, "out_proj", torch.stack(out).view(B, -1, x.shape[2]))


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(5)
    for case in CASES:
        W = params(case)
        x = torch.randn(2, case["tokens"], case["in_dim"], requires_grad=True)
        for t in W.values():
            t.requires_grad_(True)
        out = forward(case, W, x)
        cotangent = torch.randn_like(out)
        (out * cotangent).sum().backward()
        tensors = {"x": x.detach(), "cotangent": cotangent, "output": out.detach(), "grad/x": x.grad}
        tensors.update({"param/" + n: t.detach() for n, t in W.items()})
        tensors.update({"grad/" + n: t.grad for n, t in W.items()})
        write_safetensors(os.path.join(out_dir, case["name"] + ".safetensors"), tensors)
        print(f"ok: {case['name']} output {tuple(out.shape)}")
    with open(os.path.join(out_dir, "cases.json"), "w") as f:
        json.dump(CASES, f, indent=2)


if __name__ == "__main__":
    main()
