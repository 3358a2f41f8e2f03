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

With "fp16" in config.json ({"init", "growth", "backoff", "growth_interval"}), every projection (attention's
q/k/v/o, the MLP's, the output head) rounds its operands, its output, the gradient reaching it and both gradients
it returns to float16 (what an fp16 GEMM with fp32 accumulation computes, overflowing past 65504), and the step
follows torch.cuda.amp.GradScaler: the objective times the scale is differentiated, the gradients divided by it;
a non-finite one skips the step (no optimizer or scheduler step; the next micro-batches are drawn) and multiplies
the scale by backoff, and growth_interval clean steps in a row multiply it by growth. Then the batch files are
numbered by draw, skipped draws included, and each row also holds the scale after its step; rows.json's
"skipped" lists the skipped draws.
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


def fp16(t):
    """`t` rounded to float16 (round to nearest even, infinite past 65504), as float64."""
    return t.to(torch.float16).to(torch.float64)


class Fp16Projection(torch.autograd.Function):
    """x W^T of an fp16 GEMM: fp16 operands, an exact sum (fp32 accumulation, here float64), an fp16 output; the
    incoming gradient rounded to fp16, and fp16 gradients out."""

    @staticmethod
    def forward(ctx, x, w):
        xr, wr = fp16(x), fp16(w)
        ctx.save_for_backward(xr, wr)
        return fp16(xr @ wr.T)

    @staticmethod
    def backward(ctx, dy):
        xr, wr = ctx.saved_tensors
        dyr = fp16(dy)
        return fp16(dyr @ wr), fp16(dyr.reshape(-1, dyr.shape[-1]).T @ xr.reshape(-1, xr.shape[-1]))


def projection(cfg):
    """x W^T as the configured precision computes it."""
    return Fp16Projection.apply if "fp16" in cfg else (lambda x, w: x @ w.T)


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
    proj = projection(cfg)
    x = emb[tokens]
    extra = 0.0
    for i in range(cfg["n_layers"]):
        p = f"layers.{i}."
        h = rmsnorm(x, P[p + "attention_norm.weight"], eps)
        q = proj(h, P[p + "attention.q_proj.weight"]).view(B, S, n_heads, hd).transpose(1, 2)
        k = proj(h, P[p + "attention.k_proj.weight"]).view(B, S, n_kv, hd).transpose(1, 2)
        v = proj(h, P[p + "attention.v_proj.weight"]).view(B, S, n_kv, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(n_heads // n_kv, dim=1)
        v = v.repeat_interleave(n_heads // n_kv, dim=1)
        att = ((q @ k.transpose(-1, -2)) / math.sqrt(hd)).masked_fill(~causal, float("-inf")).softmax(dim=-1)
        x = x + proj((att @ v).transpose(1, 2).reshape(B, S, dim), P[p + "attention.o_proj.weight"])
        h = rmsnorm(x, P[p + "mlp_norm.weight"], eps)
        if cfg["num_experts"] > 0:
            out, balance, router_z = moe_layer(h, P, p + "mlp.", cfg)
            x = x + out
            extra = extra + cfg["moe_aux_loss_weight"] * balance + cfg["moe_router_z_loss_weight"] * router_z
        else:
            x = x + mlp(h, P, p + "mlp.", "silu", proj)
    logits = proj(rmsnorm(x, P["norm.weight"], eps), P["output_head.proj.weight"]).reshape(B * S, -1)
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
    scaler = cfg.get("fp16")
    scale, clean = (scaler["init"], 0) if scaler else (1.0, 0)
    rows, skipped, draw = [], [], 0
    while len(rows) < steps:
        opt.zero_grad(set_to_none=False)
        batches = [(torch.tensor(np.load(os.path.join(d, f"input.{draw}.{k}.npy"))),
                    torch.tensor(np.load(os.path.join(d, f"labels.{draw}.{k}.npy")))) for k in range(n)]
        draw += 1
        trained = sum(int((labels != -100).sum()) for _, labels in batches)
        loss_sum = 0.0
        for tokens, labels in batches:
            ce_sum, extra = forward(P, cfg, tokens, labels)
            objective = ce_sum / trained + extra / n
            (objective * scale).backward()
            loss_sum += objective.item()
        if scaler:
            for t in P.values():
                t.grad.div_(scale)
            if not all(bool(torch.isfinite(t.grad).all()) for t in P.values()):
                scale *= scaler["backoff"]
                clean = 0
                skipped.append(draw - 1)
                continue
        norm = torch.nn.utils.clip_grad_norm_(list(P.values()), cfg["grad_clip_norm"]).item()
        lr = opt.param_groups[0]["lr"]
        opt.step()
        sched.step()
        if scaler:
            clean += 1
            if clean == scaler["growth_interval"]:
                scale *= scaler["growth"]
                clean = 0
        rows.append({"step": len(rows) + 1, "loss": loss_sum, "grad_norm": norm, "lr": lr, "loss_scale": scale})
    json.dump({"rows": rows, "skipped": skipped}, open(os.path.join(d, "rows.json"), "w"), indent=1)
    for name, t in P.items():
        np.save(os.path.join(d, "final." + name + ".npy"), t.detach().numpy())
    for r in rows:
        print(f"step {r['step']}: loss {r['loss']:.8f} grad_norm {r['grad_norm']:.8f} lr {r['lr']:.6e}")


if __name__ == "__main__":
    main(sys.argv[1])
