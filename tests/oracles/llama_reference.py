#!/usr/bin/env python3
"""Independent reference for kforge's `transformer` model plugin (KempnerForge's dense decoder).

Usage: llama_reference.py DIR

DIR holds config.json (the [model] settings), tokens.npy / targets.npy (int64 [B, S]) and one
<fqn>.npy per parameter (float32, KempnerForge names). The script rebuilds the architecture in
plain torch, in float64, from the paper-level description (not from kforge's C++): embedding ->
pre-norm blocks (GQA attention with repeat_interleave K/V, optional per-head QK RMSNorm before
rotate-half RoPE, causal softmax attention; SwiGLU or GELU/ReLU MLP, or on MoE layers a
softmax top-k router with renormalised weights over per-expert MLPs plus shared experts, no
capacity limit) -> final norm -> LM head (optionally the embedding matrix). It writes logits.npy
[B, S, V], loss.npy (mean cross-entropy against targets, -100 ignored) and grad.<fqn>.npy for every
parameter, all float64. With doc_ids.npy (int64 [B, S], packed documents) a query attends only to keys of
its own document (an explicit [B, 1, S, S] same-document-and-causal mask) and RoPE positions count from
each document's first token. With prefix.npy (float32 [B, P, dim], a joint decoder's image tokens) the
prefix is placed before the token embeddings, one causal stack runs over the P + S positions (RoPE from
0 at the prefix's first), logits.npy holds the S token positions only, and grad.prefix.npy its gradient.

Usage: llama_reference.py DIR --activations FILE.npz

Checks a `kforge extract` archive instead: reads FILE.npz with numpy (tokens.npy and one array per
hook point), runs the same forward on its tokens, recording every point (embed, layers.N.{attention_norm,
attention, attn_out, mlp_norm, mlp_out, residual}, on MoE layers layers.N.mlp.router.{choices, weights,
expert_counts}, final_norm), and compares each float32 array of the archive with the recorded value:
|kforge - reference| <= tol(depth) * (1 + |reference|), where
depth is the number of blocks the value went through (embed 0, layer N's points N + 1, final_norm
all of them) and tol(depth) = 2e-6 * (depth + 1): the model computes in float32 (eps 1.2e-7); a
dot product over K <= 128 terms rounds at about sqrt(K) * eps <= 1.4e-6 relative, a block chains
its matmuls, norms and softmax at about that size each time, and each block adds its rounding to
the stream it receives (measured: <= 6e-7 relative at depth 3, dim 64). Attention arrays must also
be causal (exactly 0 above the diagonal) and their rows sum to 1 within seq * eps (a float32 sum of
seq terms). The router's int64 points: choices [B, S, top_k] must pick experts whose reference
probabilities equal the reference's top-k probabilities slot by slot within tol(depth) * (1 + p) (so they
are the reference's experts in its order wherever no two probabilities lie within that of each other, where
float32 may order a near tie either way); expert_counts [B, experts] must equal exactly each sequence's
bincount of the choices (the archive's when it holds them, checked as above, else the reference's). Prints
one line per point with its max |diff|; exits 1 on a mismatch, an unknown point or no point at all.

Usage: llama_reference.py DIR --modules FILE.npz

The same check for an archive of `kforge extract --modules`, whose arrays are named after KempnerForge's
module paths, each holding that module's output: tok_embeddings (= embed), layers.N (the block, =
layers.N.residual), layers.N.attention (= layers.N.attn_out), layers.N.mlp (= layers.N.mlp_out), norm
(= final_norm) and output (the logits [B, S, V], depth n_layers + 1: the head's matmul after the norm); the
norms' outputs and the router's points keep their names (layers.N.attention_norm, layers.N.mlp.router.choices).
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


def load_parameters(d, requires_grad):
    names = sorted(f[: -len(".npy")] for f in os.listdir(d)
                   if f.endswith(".npy") and f not in ("tokens.npy", "targets.npy", "prefix.npy")
                   and not f.startswith("grad.") and f not in ("logits.npy", "loss.npy"))
    return {n: torch.tensor(np.load(os.path.join(d, n + ".npy")), dtype=torch.float64, requires_grad=requires_grad)
            for n in names}


def mlp(h, P, prefix, activation, project=lambda x, w: x @ w.T):
    """The MLP; `project(x, W)` computes each x W^T (a rounding one for a reduced precision)."""
    up = project(h, P[prefix + "up_proj.weight"])
    if activation == "silu":
        g = project(h, P[prefix + "gate_proj.weight"])
        a = g * torch.sigmoid(g) * up
    elif activation == "gelu":
        a = 0.5 * up * (1.0 + torch.erf(up / math.sqrt(2.0)))
    else:
        a = torch.clamp(up, min=0.0)
    return project(a, P[prefix + "down_proj.weight"])


def moe(h, P, prefix, cfg, record=lambda point, value: None):
    # softmax_topk router: top-k of the softmax scores, renormalised to sum 1 per token.
    probs = (h @ P[prefix + "router.gate.weight"].T).softmax(dim=-1)
    weights, indices = probs.topk(cfg["moe_top_k"], dim=-1)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    record(prefix + "router.probs", probs)  # the reference's own, to judge kforge's choices by (check_router)
    record(prefix + "router.choices", indices)
    record(prefix + "router.weights", weights)
    B = h.shape[0]
    counts = F.one_hot(indices.reshape(B, -1), cfg["num_experts"]).sum(dim=1)  # [B, E] per sequence
    record(prefix + "router.expert_counts", counts)
    out = torch.zeros_like(h)
    for e in range(cfg["num_experts"]):
        chosen = (indices == e).to(h.dtype) * weights  # [B, S, K]: the weight of expert e, where chosen
        out = out + chosen.sum(dim=-1, keepdim=True) * mlp(h, P, f"{prefix}experts.{e}.", cfg["activation"])
    if prefix + "shared_expert.up_proj.weight" in P:
        out = out + mlp(h, P, prefix + "shared_expert.", cfg["activation"])
    return out


def document_positions(doc_ids):
    """Position of each token within its document: t minus the index of its document's first token."""
    B, S = doc_ids.shape
    pos = torch.zeros(B, S, dtype=torch.long)
    for b in range(B):
        for t in range(1, S):
            pos[b, t] = pos[b, t - 1] + 1 if doc_ids[b, t] == doc_ids[b, t - 1] else 0
    return pos


def forward(cfg, P, tokens, record, doc_ids=None, prefix=None, after_block=None):
    """Logits of tokens [B, S] (after prefix [B, P, dim] when given); record(point, value) receives every hook
    point's value; after_block(i, x), when given, returns what the stack continues with after block i."""
    dim, n_layers, n_heads = cfg["dim"], cfg["n_layers"], cfg["n_heads"]
    n_kv = cfg["n_kv_heads"]
    hd = dim // n_heads
    eps = cfg["norm_eps"]
    n_prefix = 0 if prefix is None else prefix.shape[1]
    B, S = tokens.shape[0], n_prefix + tokens.shape[1]

    def norm(x, prefix):
        if cfg["norm_type"] == "rmsnorm":
            return rmsnorm(x, P[prefix + ".weight"], eps)
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) / torch.sqrt(var + eps) * P[prefix + ".weight"] + P[prefix + ".bias"]

    cos, sin = rope_cos_sin(S, hd, cfg["rope_theta"])
    causal = torch.ones(S, S, dtype=torch.bool).tril()
    if doc_ids is not None:
        pos = document_positions(doc_ids)
        cos, sin = cos[pos].unsqueeze(1), sin[pos].unsqueeze(1)  # [B, 1, S, hd]
        causal = causal & (doc_ids[:, :, None] == doc_ids[:, None, :]).unsqueeze(1)  # [B, 1, S, S]

    emb = P["token_embedding.embedding.weight"]
    x = emb[tokens]
    record("embed", x)
    if prefix is not None:
        x = torch.cat([prefix, x], dim=1)
    for i in range(n_layers):
        p = f"layers.{i}."
        h = norm(x, p + "attention_norm")
        record(p + "attention_norm", h)
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
        record(p + "attention", att)
        o = (att @ v).transpose(1, 2).reshape(B, S, n_heads * hd)
        attn_out = o @ P[p + "attention.o_proj.weight"].T
        record(p + "attn_out", attn_out)
        x = x + attn_out
        h = norm(x, p + "mlp_norm")
        record(p + "mlp_norm", h)
        moe_layer = cfg.get("num_experts", 0) > 0 and (i + 1) % cfg.get("moe_frequency", 1) == 0
        mlp_out = moe(h, P, p + "mlp.", cfg, record) if moe_layer else mlp(h, P, p + "mlp.", cfg["activation"])
        record(p + "mlp_out", mlp_out)
        x = x + mlp_out
        record(p + "residual", x)
        if after_block is not None:
            x = after_block(i, x)
    x = norm(x[:, n_prefix:], "norm")
    record("final_norm", x)
    head = emb if cfg["tie_embeddings"] else P["output_head.proj.weight"]
    return x @ head.T


def main(d):
    cfg = json.load(open(os.path.join(d, "config.json")))
    P = load_parameters(d, requires_grad=True)
    tokens = torch.tensor(np.load(os.path.join(d, "tokens.npy")))
    targets = torch.tensor(np.load(os.path.join(d, "targets.npy")))
    doc_path = os.path.join(d, "doc_ids.npy")
    doc_ids = torch.tensor(np.load(doc_path)) if os.path.exists(doc_path) else None
    prefix_path = os.path.join(d, "prefix.npy")
    prefix = None
    if os.path.exists(prefix_path):
        prefix = torch.tensor(np.load(prefix_path), dtype=torch.float64, requires_grad=True)
    logits = forward(cfg, P, tokens, lambda point, value: None, doc_ids, prefix)
    loss = backward_and_save(d, logits, targets, P)
    if prefix is not None:
        np.save(os.path.join(d, "grad.prefix.npy"), prefix.grad.numpy())
    print(f"ok: {len(P)} parameters, loss {loss.item():.6f}")


def backward_and_save(d, logits, targets, P):
    """Mean cross-entropy of logits [B, S, V] against targets [B, S], its backward, and DIR/logits.npy,
    loss.npy and grad.<name>.npy for every parameter of P (zeros where none reached it); returns the loss."""
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    loss.backward()
    np.save(os.path.join(d, "logits.npy"), logits.detach().numpy())
    np.save(os.path.join(d, "loss.npy"), loss.detach().reshape(1).numpy())
    for n, t in P.items():
        g = t.grad if t.grad is not None else torch.zeros_like(t)
        np.save(os.path.join(d, "grad." + n + ".npy"), g.numpy())
    return loss


FLOAT32_EPS = float(np.finfo(np.float32).eps)


def module_point(path):
    """The hook point holding the output of KempnerForge module `path` (see --modules in the module docstring)."""
    whole = {"tok_embeddings": "embed", "norm": "final_norm", "output": "logits"}
    if path in whole:
        return whole[path]
    parts = path.split(".")
    if len(parts) == 2 and parts[0] == "layers":
        return path + ".residual"
    if len(parts) == 3 and parts[0] == "layers" and parts[2] in ("attention", "mlp"):
        return f"layers.{parts[1]}.{dict(attention='attn_out', mlp='mlp_out')[parts[2]]}"
    return path


def point_depth(point, n_layers):
    """Blocks a point's value went through (see the tolerance in the module docstring)."""
    if point == "logits":
        return n_layers + 1
    if point == "embed":
        return 0
    if point.startswith("layers."):
        return int(point.split(".")[1]) + 1
    return n_layers


def check_router(point, value, recorded, archive, tol):
    """Checks an MoE router's int64 point of the archive (see the module docstring); returns (line, failures)."""
    router = point[: point.rindex(".") + 1]  # "layers.N.mlp.router."
    ref = recorded[point].numpy()
    if value.dtype != np.int64 or value.shape != ref.shape:
        line = f"{point}: {value.dtype} {value.shape}"
        return line, [line + f", expected int64 {ref.shape}"]
    if point.endswith(".choices"):
        probs = recorded[router + "probs"].numpy()  # [B, S, E]
        if value.min() < 0 or value.max() >= probs.shape[-1]:
            return point, [f"{point}: expert ids {value.min()}..{value.max()} outside 0..{probs.shape[-1] - 1}"]
        chosen = np.take_along_axis(probs, value, axis=-1)
        best = np.take_along_axis(probs, ref, axis=-1)
        worst = (np.abs(chosen - best) / (1.0 + best)).max()
        same = int((value == ref).all(axis=-1).sum())
        line = (f"{point}: shape {value.shape}, {same} of {value.shape[0] * value.shape[1]} tokens routed as the "
                f"reference, max |p(chosen) - p(reference's)| / (1 + p) {worst:.3g}, tol {tol:.0e}")
        return line, [line] if worst > tol else []
    held = router + "choices" in archive.files
    choices = archive[router + "choices"] if held else recorded[router + "choices"].numpy()
    experts = ref.shape[-1]
    expected = np.stack([np.bincount(row.reshape(-1), minlength=experts) for row in choices])
    line = (f"{point}: shape {value.shape}, per-sequence sums {value.sum(axis=-1).tolist()}, against the bincount of "
            f"{'the archive' if held else 'the reference'}'s choices")
    return line, [] if np.array_equal(value, expected) else [line + f": {value.tolist()} != {expected.tolist()}"]


def check_activations(d, npz_path, name_point=lambda name: name):
    """Compares each array of the archive with the reference's value of point name_point(its name)."""
    cfg = json.load(open(os.path.join(d, "config.json")))
    P = load_parameters(d, requires_grad=False)
    archive = np.load(npz_path)
    tokens = torch.tensor(archive["tokens"])
    recorded = {}
    logits = forward(cfg, P, tokens, lambda point, value: recorded.__setitem__(point, value.detach()))
    recorded["logits"] = logits.detach()
    failures = []
    points = [name for name in archive.files if name != "tokens"]
    if not points:
        failures.append("the archive holds no hook point")
    for name in points:
        value = archive[name]
        point = name_point(name)
        if point not in recorded:
            failures.append(f"{point}: not a point of the reference (it has {', '.join(sorted(recorded))})")
            continue
        tol = 2e-6 * (point_depth(point, cfg["n_layers"]) + 1)
        if point.endswith((".router.choices", ".router.expert_counts")):
            line, wrong = check_router(point, value, recorded, archive, tol)
            failures += wrong
            print(line)
            continue
        ref = recorded[point].numpy()
        if value.dtype != np.float32 or value.shape != ref.shape:
            failures.append(f"{point}: {value.dtype} {value.shape}, expected float32 {ref.shape}")
            continue
        diff = np.abs(value.astype(np.float64) - ref)
        worst = (diff / (1.0 + np.abs(ref))).max()
        line = f"{point}: shape {value.shape}, max |diff| {diff.max():.3g}, max |ref| {np.abs(ref).max():.3g}, tol {tol:.0e}"
        if worst > tol:
            failures.append(line + f": |diff| / (1 + |ref|) reaches {worst:.3g}")
        if point.endswith(".attention"):
            seq = value.shape[-1]
            above = np.triu(np.ones((seq, seq), dtype=bool), k=1)
            if np.any(value[..., above] != 0):
                failures.append(f"{point}: a probability above the diagonal is not 0 (not causal)")
            row_error = np.abs(value.astype(np.float64).sum(axis=-1) - 1.0).max()
            line += f", max |row sum - 1| {row_error:.3g}"
            if row_error > seq * FLOAT32_EPS:
                failures.append(f"{point}: rows sum to 1 only within {row_error:.3g}")
        print(line)
    for failure in failures:
        print("MISMATCH " + failure)
    if failures:
        sys.exit(1)
    print(f"ok: {len(points)} points match")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[2] == "--activations":
        check_activations(sys.argv[1], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[2] == "--modules":
        check_activations(sys.argv[1], sys.argv[3], module_point)
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        sys.exit("usage: llama_reference.py DIR [--activations FILE.npz | --modules FILE.npz]")
