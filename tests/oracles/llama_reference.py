#!/usr/bin/env python3
"""Independent reference for kforge's `transformer` model plugin (KempnerForge's dense decoder).

Usage: llama_reference.py DIR

DIR holds config.json (the [model] settings), tokens.npy / targets.npy (int64 [B, S]) and one
<fqn>.npy per parameter (float32, KempnerForge names). The script rebuilds the architecture in
plain torch, in float64, from the paper-level description (not from kforge's C++): embedding ->
pre-norm blocks (GQA attention with repeat_interleave K/V, optional per-head QK RMSNorm before
rotate-half RoPE, causal softmax attention; SwiGLU or GELU/ReLU MLP) -> final norm -> LM head
(optionally the embedding matrix). It writes logits.npy [B, S, V], loss.npy (mean cross-entropy
against targets) and grad.<fqn>.npy for every parameter, all float64.
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F


def rmsnorm(x, w, eps):
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * w


def rope_cos_sin(seq_len, head_dim, theta):
    # angle[p, i] = p * theta^(-2i/head_dim), i in [0, head_dim/2)
    i = torch.arange(head_dim // 2, dtype=torch.float64)
    inv_freq = theta ** (-2.0 * i / head_dim)
    ang = torch.arange(seq_len, dtype=torch.float64)[:, None] * inv_freq[None, :]
    # HF Llama layout: the same angle on dims i and i + head_dim/2.
    return torch.cat([ang.cos(), ang.cos()], dim=-1), torch.cat([ang.sin(), ang.sin()], dim=-1)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


def main(d):
    cfg = json.load(open(os.path.join(d, "config.json")))
    dim, n_layers, n_heads = cfg["dim"], cfg["n_layers"], cfg["n_heads"]
    n_kv = cfg["n_kv_heads"]
    hd = dim // n_heads
    eps = cfg["norm_eps"]

    names = sorted(f[: -len(".npy")] for f in os.listdir(d)
                   if f.endswith(".npy") and f not in ("tokens.npy", "targets.npy")
                   and not f.startswith("grad.") and f not in ("logits.npy", "loss.npy"))
    P = {n: torch.tensor(np.load(os.path.join(d, n + ".npy")), dtype=torch.float64, requires_grad=True)
         for n in names}
    tokens = torch.tensor(np.load(os.path.join(d, "tokens.npy")))
    targets = torch.tensor(np.load(os.path.join(d, "targets.npy")))
    B, S = tokens.shape

    def norm(x, prefix):
        if cfg["norm_type"] == "rmsnorm":
            return rmsnorm(x, P[prefix + ".weight"], eps)
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) / torch.sqrt(var + eps) * P[prefix + ".weight"] + P[prefix + ".bias"]

    cos, sin = rope_cos_sin(S, hd, cfg["rope_theta"])
    causal = torch.ones(S, S, dtype=torch.bool).tril()

    emb = P["token_embedding.embedding.weight"]
    x = emb[tokens]
    for i in range(n_layers):
        p = f"layers.{i}."
        h = norm(x, p + "attention_norm")
        q = (h @ P[p + "attention.q_proj.weight"].T).view(B, S, n_heads, hd)
        k = (h @ P[p + "attention.k_proj.weight"].T).view(B, S, n_kv, hd)
        v = (h @ P[p + "attention.v_proj.weight"].T).view(B, S, n_kv, hd)
        if cfg["qk_norm"]:
            q = rmsnorm(q, P[p + "attention.q_norm.weight"], eps)
            k = rmsnorm(k, P[p + "attention.k_norm.weight"], eps)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = n_heads // n_kv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        o = (att @ v).transpose(1, 2).reshape(B, S, n_heads * hd)
        x = x + o @ P[p + "attention.o_proj.weight"].T
        h = norm(x, p + "mlp_norm")
        up = h @ P[p + "mlp.up_proj.weight"].T
        if cfg["activation"] == "silu":
            g = h @ P[p + "mlp.gate_proj.weight"].T
            a = g * torch.sigmoid(g) * up
        elif cfg["activation"] == "gelu":
            a = 0.5 * up * (1.0 + torch.erf(up / math.sqrt(2.0)))
        else:
            a = torch.clamp(up, min=0.0)
        x = x + a @ P[p + "mlp.down_proj.weight"].T
    x = norm(x, "norm")
    head = emb if cfg["tie_embeddings"] else P["output_head.proj.weight"]
    logits = x @ head.T
    loss = F.cross_entropy(logits.reshape(B * S, -1), targets.reshape(-1))
    loss.backward()

    np.save(os.path.join(d, "logits.npy"), logits.detach().numpy())
    np.save(os.path.join(d, "loss.npy"), loss.detach().reshape(1).numpy())
    for n, t in P.items():
        g = t.grad if t.grad is not None else torch.zeros_like(t)
        np.save(os.path.join(d, "grad." + n + ".npy"), g.numpy())
    print(f"ok: {len(P)} parameters, loss {loss.item():.6f}")


if __name__ == "__main__":
    main(sys.argv[1])
