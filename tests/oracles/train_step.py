#!/usr/bin/env python3
"""Independent reference for kforge's training step: accumulation, token weighting, the loss terms, clipping,
AdamW and the LR schedules.

Usage: train_step.py DIR

DIR holds config.json (model, loss, optimizer, scheduler and step settings, written by
tests/core/train/step_oracle_test.cpp), step_0.safetensors (a kforge checkpoint shard written at
step 0: the initial weights, read here with json + struct + numpy, not with kforge) and, per step s
and micro-batch k, input.<s>.<k>.npy / labels.<s>.<k>.npy (int64 [B, S], -100 marks an ignored label).

From those weights the script trains the decoder of llama_reference.py in float64 with
torch.optim.AdamW (decay on 2-D non-embedding weights only), a LambdaLR of the configured schedule
and torch.nn.utils.clip_grad_norm_. The step's objective is the mean cross-entropy over every trained
token of all its micro-batches (so micro-batches that train different numbers of tokens weigh by their
token counts), plus, per micro-batch divided by their number: the PaLM logit z-loss
z_loss_weight * mean(logsumexp(logits)^2) over all positions, and on MoE layers (softmax top-k router)
the Switch balance loss moe_aux_loss_weight * E * sum_i f_i P_i and the router z-loss
moe_router_z_loss_weight * mean(logsumexp(router logits)^2), each summed over the layers. It writes
rows.json (per step: that objective, the pre-clip grad norm and the learning rate the step used) and
final.<fqn>.npy for every parameter (float64).
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

from llama_reference import mlp, rmsnorm, rope_cos_sin, rotate_half

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


def moe_layer(h, P, prefix, cfg):
    """Softmax top-k routing over SwiGLU experts; returns the output, the Switch balance loss and the router z-loss."""
    x = h.reshape(-1, h.shape[-1])
    logits = x @ P[prefix + "router.gate.weight"].T
    probs = logits.softmax(dim=-1)
    n_experts, top_k = probs.shape[-1], cfg["moe_top_k"]
    weights, indices = probs.topk(top_k, dim=-1)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    out = torch.zeros_like(x)
    for e in range(n_experts):
        w = (weights * (indices == e)).sum(dim=-1, keepdim=True)
        out = out + w * mlp(x, P, f"{prefix}experts.{e}.", "silu")
    # Switch Transformer: f_i = the fraction of the T * K assignments that went to expert i, P_i = its mean probability.
    f = torch.stack([(indices == e).sum() for e in range(n_experts)]).to(x.dtype) / (x.shape[0] * top_k)
    balance = n_experts * (f * probs.mean(dim=0)).sum()
    router_z = torch.logsumexp(logits, dim=-1).pow(2).mean()
    return out.view(h.shape), balance, router_z


def forward(P, cfg, tokens, labels):
    """One micro-batch: (the sum of the cross-entropy over its trained tokens, the extra loss terms)."""
    dim, n_heads, n_kv, eps = cfg["dim"], cfg["n_heads"], cfg["n_kv_heads"], cfg["norm_eps"]
    hd = dim // n_heads
    B, S = tokens.shape
    cos, sin = rope_cos_sin(S, hd, cfg["rope_theta"])
    causal = torch.ones(S, S, dtype=torch.bool).tril()
    emb = P["token_embedding.embedding.weight"]
    x = emb[tokens]
    extra = 0.0
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
        if cfg["num_experts"] > 0:
            out, balance, router_z = moe_layer(h, P, p + "mlp.", cfg)
            x = x + out
            extra = extra + cfg["moe_aux_loss_weight"] * balance + cfg["moe_router_z_loss_weight"] * router_z
        else:
            x = x + mlp(h, P, p + "mlp.", "silu")
    logits = (rmsnorm(x, P["norm.weight"], eps) @ P["output_head.proj.weight"].T).reshape(B * S, -1)
    if cfg["z_loss_weight"] > 0:
        extra = extra + cfg["z_loss_weight"] * torch.logsumexp(logits, dim=-1).pow(2).mean()
    ce_sum = F.cross_entropy(logits, labels.reshape(-1), ignore_index=-100, reduction="sum")
    return ce_sum, extra


def lr_factor(step, sched, max_steps):
    """KempnerForge's schedules: linear warm-up from 0 over w steps, then by name (r = min_lr_ratio, p = progress)."""
    w, r = sched["warmup_steps"], sched["min_lr_ratio"]
    if step < w:
        return step / w
    name = sched["name"]
    if name == "constant":
        return 1.0
    stable = sched.get("stable_steps", 0) if name == "wsd" else 0
    if step < w + stable:
        return 1.0
    decay = sched.get("decay_steps", 0) or max_steps - w - stable
    if name == "rex":
        p = min(1.0, (step - w) / max(decay, 1))
        return max(r, (1.0 - p) ** sched["rex_alpha"])
    p = min(1.0, (step - w - stable) / decay)
    shape = sched["wsd_decay_type"] if name == "wsd" else name
    if shape == "cosine":
        return r + 0.5 * (1.0 - r) * (1.0 + math.cos(math.pi * p))
    if shape == "linear":
        return 1.0 - (1.0 - r) * p
    if shape == "sqrt":
        return r + (1.0 - r) * math.sqrt(1.0 - p)
    raise ValueError(f"config.json: unknown schedule {name!r} / decay shape {shape!r}")


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
    steps = cfg["max_steps"]
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(s, cfg["schedule"], steps))
    n = cfg["grad_accum_steps"]
    rows = []
    for s in range(steps):
        opt.zero_grad(set_to_none=False)
        batches = [(torch.tensor(np.load(os.path.join(d, f"input.{s}.{k}.npy"))),
                    torch.tensor(np.load(os.path.join(d, f"labels.{s}.{k}.npy")))) for k in range(n)]
        trained = sum(int((labels != -100).sum()) for _, labels in batches)
        loss_sum = 0.0
        for tokens, labels in batches:
            ce_sum, extra = forward(P, cfg, tokens, labels)
            objective = ce_sum / trained + extra / n
            objective.backward()
            loss_sum += objective.item()
        norm = torch.nn.utils.clip_grad_norm_(list(P.values()), cfg["grad_clip_norm"]).item()
        lr = opt.param_groups[0]["lr"]
        opt.step()
        sched.step()
        rows.append({"step": s + 1, "loss": loss_sum, "grad_norm": norm, "lr": lr})
    json.dump(rows, open(os.path.join(d, "rows.json"), "w"), indent=1)
    for name, t in P.items():
        np.save(os.path.join(d, "final." + name + ".npy"), t.detach().numpy())
    for r in rows:
        print(f"step {r['step']}: loss {r['loss']:.8f} grad_norm {r['grad_norm']:.8f} lr {r['lr']:.6e}")


if __name__ == "__main__":
    main(sys.argv[1])
