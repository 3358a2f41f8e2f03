#!/usr/bin/python3
"""Plain PyTorch-eager peer of kforge's dense transformer, for the CPU throughput benchmark.

Run with Debian's python3-torch 1.13 (/usr/bin/python3), the same LibTorch and BLAS kforge links.
It reads the same benchmark TOML as kforge and trains the same model: token embedding, n_layers
pre-norm blocks (RMSNorm -> attention with RoPE rotate-half and GQA, explicit causal softmax since
1.13 has no SDPA -> residual; RMSNorm -> SwiGLU MLP with KempnerForge's hidden size -> residual),
final RMSNorm, untied output head; init std 0.02 (residual projections std/sqrt(2L)); AdamW with
the config's lr/betas/weight decay, linear warm-up + cosine schedule, grad-norm clipping, CE.
--activation-checkpointing full recomputes each block in the backward (torch.utils.checkpoint, non-reentrant: what
KempnerForge's "full" wraps every block in).

    /usr/bin/python3 benchmarks/peer_trainer.py CONFIG.toml --data FILE.npy --steps N \
        --threads T --out RESULT.json [--activation-checkpointing none|full] [--profile]

Writes one JSON object: per-step times, tokens per step, FLOP/token (6N + 12*L*D*S), peak RSS, and the start-up time
(process creation to the first step, from /proc as kforge's time/startup_sec).
"""
import argparse
import json
import math
import os
import resource
import sys
import time
import tomllib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


class Cfg:
    def __init__(self, m):
        self.dim = m["dim"]
        self.n_layers = m["n_layers"]
        self.n_heads = m["n_heads"]
        self.n_kv_heads = m.get("n_kv_heads", self.n_heads)
        self.vocab_size = m["vocab_size"]
        self.max_seq_len = m["max_seq_len"]
        self.norm_eps = m.get("norm_eps", 1e-5)
        self.rope_theta = m.get("rope_theta", 10000.0)
        self.init_std = m.get("init_std", 0.02)
        mult = m.get("ffn_dim_multiplier", 1.0)
        # KempnerForge: int(4 * dim * 2/3 * multiplier), rounded up to a multiple of 256.
        raw = int(4 * self.dim * (2 / 3) * mult)
        self.ffn_hidden = m.get("ffn_hidden_dim", 256 * ((raw + 255) // 256))
        self.head_dim = self.dim // self.n_heads

    def flops_per_token(self, seq):
        # KempnerForge's formula: 6 * N_active (matrices of the blocks + output head) + 12 * L * D * S.
        d, hd = self.dim, self.head_dim
        attn = d * self.n_heads * hd + 2 * d * self.n_kv_heads * hd + self.n_heads * hd * d
        mlp = 3 * d * self.ffn_hidden
        n_active = self.n_layers * (attn + mlp) + self.vocab_size * d
        return 6.0 * n_active + 12.0 * self.n_layers * d * seq


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, max_seq, theta):
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(max_seq).float(), inv_freq)
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin):  # x: (B, H, S, hd); cos/sin: (S, hd/2)
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.h, self.kv, self.hd = c.n_heads, c.n_kv_heads, c.head_dim
        self.q_proj = nn.Linear(c.dim, self.h * self.hd, bias=False)
        self.k_proj = nn.Linear(c.dim, self.kv * self.hd, bias=False)
        self.v_proj = nn.Linear(c.dim, self.kv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.h * self.hd, c.dim, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv, self.hd).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if self.kv != self.h:  # GQA: repeat each kv head for its query group
            rep = self.h // self.kv
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.hd)
        scores = scores.masked_fill(mask, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(b, s, self.h * self.hd))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate_proj = nn.Linear(c.dim, c.ffn_hidden, bias=False)
        self.up_proj = nn.Linear(c.dim, c.ffn_hidden, bias=False)
        self.down_proj = nn.Linear(c.ffn_hidden, c.dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention_norm = RMSNorm(c.dim, c.norm_eps)
        self.attention = Attention(c)
        self.mlp_norm = RMSNorm(c.dim, c.norm_eps)
        self.mlp = MLP(c)

    def forward(self, x, cos, sin, mask):
        h = x + self.attention(self.attention_norm(x), cos, sin, mask)
        return h + self.mlp(self.mlp_norm(h))


class Transformer(nn.Module):
    def __init__(self, c, recompute_blocks):
        super().__init__()
        self.c = c
        self.recompute_blocks = recompute_blocks
        self.token_embedding = nn.Embedding(c.vocab_size, c.dim)
        self.layers = nn.ModuleList(Block(c) for _ in range(c.n_layers))
        self.norm = RMSNorm(c.dim, c.norm_eps)
        self.output_head = nn.Linear(c.dim, c.vocab_size, bias=False)
        cos, sin = rope_tables(c.head_dim, c.max_seq_len, c.rope_theta)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        residual_std = c.init_std / math.sqrt(2 * c.n_layers)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() < 2:
                    continue
                std = residual_std if name.endswith(("o_proj.weight", "down_proj.weight")) else c.init_std
                p.normal_(0.0, std)

    def forward(self, tokens):
        s = tokens.shape[1]
        cos, sin = self.cos[:s], self.sin[:s]
        mask = torch.ones(s, s, dtype=torch.bool).triu(1)
        x = self.token_embedding(tokens)
        for layer in self.layers:
            if self.recompute_blocks:
                x = torch.utils.checkpoint.checkpoint(layer, x, cos, sin, mask, use_reentrant=False)
            else:
                x = layer(x, cos, sin, mask)
        return self.output_head(self.norm(x))


def lr_at(step, base, warmup, total, min_ratio):  # step is 1-based, like kforge's log
    if step <= warmup:
        return base * (step - 1) / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return base * (min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


def process_age_seconds():
    """Seconds since this process was created: /proc/uptime minus field 22 of /proc/self/stat (kforge's method)."""
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    with open("/proc/self/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()  # fields from 3 on
    return uptime - int(fields[22 - 3]) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("--data", required=True, help="uint16 .npy token file")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--profile", action="store_true", help="print an autograd-profiler table of one step")
    ap.add_argument("--activation-checkpointing", choices=["none", "full"], default="none",
                    help="full: recompute every block in the backward")
    args = ap.parse_args()

    with open(args.config, "rb") as f:
        cfg = tomllib.load(f)
    torch.set_num_threads(args.threads)
    train, opt_cfg, sched = cfg["train"], cfg["optimizer"], cfg.get("scheduler", {})
    torch.manual_seed(train.get("seed", 42))
    c = Cfg(cfg["model"])
    batch, seq = train["batch_size"], train["seq_len"]
    model = Transformer(c, args.activation_checkpointing == "full")
    n_params = sum(p.numel() for p in model.parameters())
    # Like kforge's adamw: weight decay on matrices except the embedding (29 of 39 tensors on debug).
    def decays(name, p):
        return p.dim() >= 2 and not name.startswith("token_embedding")
    decay = [p for n, p in model.named_parameters() if decays(n, p)]
    no_decay = [p for n, p in model.named_parameters() if not decays(n, p)]
    groups = [{"params": decay}, {"params": no_decay, "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=opt_cfg["lr"], betas=tuple(opt_cfg["betas"]),
                            weight_decay=opt_cfg["weight_decay"], eps=opt_cfg.get("eps", 1e-8))
    tokens = np.load(args.data, mmap_mode="r")
    window = seq + 1
    n_windows = len(tokens) // window
    rng = np.random.default_rng(train.get("seed", 42))
    order = rng.permutation(n_windows)
    clip = train.get("grad_clip_norm", 1.0)
    bf16 = train.get("mixed_precision", "bf16") == "bf16"
    warmup = sched.get("warmup_steps", 0)
    min_ratio = sched.get("min_lr_ratio", 0.1)

    def get_batch(i):
        idx = [order[(i * batch + j) % n_windows] for j in range(batch)]
        arr = np.stack([np.asarray(tokens[w * window:(w + 1) * window], dtype=np.int64) for w in idx])
        t = torch.from_numpy(arr)
        return t[:, :-1].contiguous(), t[:, 1:].contiguous()

    def step(i):
        x, y = get_batch(i)
        for g in opt.param_groups:
            g["lr"] = lr_at(i + 1, opt_cfg["lr"], warmup, args.steps, min_ratio)
        # mixed_precision = "bf16": CPU autocast over forward and loss, fp32 parameters (as kforge).
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, c.vocab_size), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        return loss.item(), norm.item()

    times, losses = [], []
    startup = process_age_seconds()
    for i in range(args.steps):
        t0 = time.perf_counter()
        loss, norm = step(i)
        times.append(time.perf_counter() - t0)
        losses.append(loss)
        print(f"[peer step {i + 1}] loss={loss:.4f} grad_norm={norm:.3f} step_time={times[-1]:.3f}s",
              file=sys.stderr, flush=True)

    if args.profile:
        with torch.autograd.profiler.profile() as prof:
            step(args.steps)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))

    result = {
        "trainer": "pytorch-eager", "torch": torch.__version__, "threads": torch.get_num_threads(),
        "params": n_params, "tokens_per_step": batch * seq, "flops_per_token": c.flops_per_token(seq),
        "step_times": times, "losses": losses, "startup_sec": startup,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024.0 * 1024.0),
    }
    with open(args.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
