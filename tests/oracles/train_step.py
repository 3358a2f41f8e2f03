#!/usr/bin/env python3
"""Independent reference for kforge's training step: accumulation, clipping, AdamW and the LR schedule.

Usage: train_step.py DIR

DIR holds config.json (model, optimizer, scheduler and step settings, written by
tests/core/train/step_oracle_test.cpp), step_0.safetensors (a kforge checkpoint shard written at
step 0: the initial weights, read here with json + struct + numpy, not with kforge) and, per step s
and micro-batch k, input.<s>.<k>.npy / labels.<s>.<k>.npy (int64 [B, S]).

From those weights the script trains the dense decoder of llama_reference.py in float64 with
torch.optim.AdamW (decay on 2-D non-embedding weights only), a LambdaLR of linear warm-up then
cosine decay to min_lr_ratio, loss / n_micro backward per micro-batch and
torch.nn.utils.clip_grad_norm_. It writes rows.json (per step: mean loss, pre-clip grad norm and
the learning rate the step used) and final.<fqn>.npy for every parameter (float64).
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

from llama_reference import rmsnorm, rope_cos_sin, rotate_half

SAFETENSORS_DTYPES = {"F32": np.float32, "F64": np.float64}


def read_model_tensors(path):
    """The "model/<fqn>" tensors of a safetensors file, as float64 torch tensors keyed by fqn."""
    with open(path, "rb") as f:
        raw = f.read()
    (header_len,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + header_len].decode("utf-8"))
    body = raw[8 + header_len:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or not name.startswith("model/"):
            continue
        begin, end = info["data_offsets"]
        arr = np.frombuffer(body[begin:end], dtype=SAFETENSORS_DTYPES[info["dtype"]]).reshape(info["shape"])
        out[name[len("model/"):]] = torch.tensor(arr.astype(np.float64))
    return out


def forward_loss(P, cfg, tokens, labels):
    """Mean cross-entropy of the dense decoder (rmsnorm, SwiGLU, GQA, RoPE) on one micro-batch."""
    dim, n_heads, n_kv, eps = cfg["dim"], cfg["n_heads"], cfg["n_kv_heads"], cfg["norm_eps"]
    hd = dim // n_heads
    B, S = tokens.shape
    cos, sin = rope_cos_sin(S, hd, cfg["rope_theta"])
    causal = torch.ones(S, S, dtype=torch.bool).tril()
    emb = P["token_embedding.embedding.weight"]
    x = emb[tokens]
    for i in range(cfg["n_layers"]):
        p = f"layers.{i}."
        h = rmsnorm(x, P[p + "attention_norm.weight"], eps)
        q = (h @ P[p + "attention.q_proj.weight"].T).view(B, S, n_heads, hd).transpose(1, 2)
        k = (h @ P[p + "attention.k_proj.weight"].T).view(B, S, n_kv, hd).transpose(1, 2)
        v = (h @ P[p + "attention.v_proj.weight"].T).view(B, S, n_kv, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(n_heads // n_kv, dim=1)
        v = v.repeat_interleave(n_heads // n_kv, dim=1)
        att = ((q @ k.transpose(-1, -2)) / math.sqrt(hd)).masked_fill(~causal, float("-inf")).softmax(dim=-1)
        x = x + (att @ v).transpose(1, 2).reshape(B, S, dim) @ P[p + "attention.o_proj.weight"].T
        h = rmsnorm(x, P[p + "mlp_norm.weight"], eps)
        g = h @ P[p + "mlp.gate_proj.weight"].T
        x = x + (F.silu(g) * (h @ P[p + "mlp.up_proj.weight"].T)) @ P[p + "mlp.down_proj.weight"].T
    logits = rmsnorm(x, P["norm.weight"], eps) @ P["output_head.proj.weight"].T
    return F.cross_entropy(logits.reshape(B * S, -1), labels.reshape(-1))


def lr_factor(step, warmup, decay_steps, min_ratio):
    """Linear warm-up from 0, then cosine from 1 down to min_ratio over decay_steps."""
    if step < warmup:
        return step / warmup
    progress = min(1.0, (step - warmup) / decay_steps)
    return min_ratio + 0.5 * (1.0 - min_ratio) * (1.0 + math.cos(math.pi * progress))


def main(d):
    cfg = json.load(open(os.path.join(d, "config.json")))
    P = read_model_tensors(os.path.join(d, "step_0.safetensors"))
    for t in P.values():
        t.requires_grad_(True)
    decay = [t for n, t in P.items() if t.dim() >= 2 and "embedding" not in n and "bias" not in n]
    no_decay = [t for n, t in P.items() if not (t.dim() >= 2 and "embedding" not in n and "bias" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=cfg["lr"], betas=tuple(cfg["betas"]), eps=cfg["eps"])
    warmup, steps = cfg["warmup_steps"], cfg["max_steps"]
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: lr_factor(s, warmup, steps - warmup, cfg["min_lr_ratio"]))
    n = cfg["grad_accum_steps"]
    rows = []
    for s in range(steps):
        opt.zero_grad(set_to_none=False)
        loss_sum = 0.0
        for k in range(n):
            tokens = torch.tensor(np.load(os.path.join(d, f"input.{s}.{k}.npy")))
            labels = torch.tensor(np.load(os.path.join(d, f"labels.{s}.{k}.npy")))
            loss = forward_loss(P, cfg, tokens, labels)
            (loss / n).backward()
            loss_sum += loss.item()
        norm = torch.nn.utils.clip_grad_norm_(list(P.values()), cfg["grad_clip_norm"]).item()
        lr = opt.param_groups[0]["lr"]
        opt.step()
        sched.step()
        rows.append({"step": s + 1, "loss": loss_sum / n, "grad_norm": norm, "lr": lr})
    json.dump(rows, open(os.path.join(d, "rows.json"), "w"), indent=1)
    for name, t in P.items():
        np.save(os.path.join(d, "final." + name + ".npy"), t.detach().numpy())
    for r in rows:
        print(f"step {r['step']}: loss {r['loss']:.8f} grad_norm {r['grad_norm']:.8f} lr {r['lr']:.6e}")


if __name__ == "__main__":
    main(sys.argv[1])
