#!/usr/bin/env python3
"""Independent reference for Hugging Face Llama and Mixtral directories (no `transformers` here).

Usage:
  hf_llama.py logits HF_DIR TOKENS.npy OUT.npy
      Loads HF_DIR by its Hugging Face names and config.json (model.safetensors, or the shards
      model.safetensors.index.json lists) and writes the logits [B, S, vocab] (float64) for the
      int64 token ids [B, S] of TOKENS.npy. Every config.json key the forward uses must be there:
      a missing one is an error naming it, never a default.
  hf_llama.py build HF_DIR llama|mixtral SEED [--shards N] [--tie]
      Writes a small random model of that architecture as HF_DIR (config.json, generation_config.json
      and model.safetensors, or N shards plus model.safetensors.index.json), float32, with this
      script's own safetensors writer.

The forward follows the Hugging Face modeling code's documented semantics, computed in float64:
embed_tokens -> per layer: x += o_proj(attn(input_layernorm(x))); x += mlp(post_attention_layernorm(x))
-> norm -> lm_head (embed_tokens when tie_word_embeddings). RMSNorm: x * rsqrt(mean(x^2) + eps) * w.
Attention: rotate-half RoPE (inv_freq = theta^(-arange(0, hd, 2)/hd), cos/sin of cat(freqs, freqs)),
GQA by repeat_kv (each key/value head serves num_attention_heads / num_key_value_heads consecutive
query heads), causal softmax(q k^T / sqrt(hd)). Llama MLP: down(silu(gate(x)) * up(x)). Mixtral
block_sparse_moe: softmax over gate(x), top num_experts_per_tok experts, their weights renormalised to
sum 1, sum_e w_e * w2(silu(w1 x) * w3 x).
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from read_formats import read_safetensors  # noqa: E402


def to_float64(dtype, array):
    if dtype == "BF16":  # stored as the top 16 bits of a float32
        return torch.from_numpy((array.astype(np.uint32) << 16).view(np.float32).astype(np.float64))
    return torch.from_numpy(np.asarray(array, dtype=np.float64))


def load_weights(d):
    index = os.path.join(d, "model.safetensors.index.json")
    if os.path.exists(index):
        weight_map = json.load(open(index))["weight_map"]
        files = sorted(set(weight_map.values()))
    else:
        weight_map, files = None, ["model.safetensors"]
    weights = {}
    for f in files:
        _, entries = read_safetensors(os.path.join(d, f))
        for name, dtype, _, array in entries:
            if weight_map is not None and weight_map.get(name) != f:
                raise SystemExit(f"{f}: tensor {name} is not where the index puts it ({weight_map.get(name)})")
            if name in weights:
                raise SystemExit(f"{f}: tensor {name} appears twice")
            weights[name] = to_float64(dtype, array)
    if weight_map is not None and set(weight_map) != set(weights):
        raise SystemExit(f"index and files disagree: {sorted(set(weight_map) ^ set(weights))}")
    return weights


def rms_norm(x, w, eps):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Config:
    """config.json, read strictly: every key the forward uses must be there (no defaults that could hide an export
    that leaves one out or writes the wrong one)."""

    def __init__(self, path):
        self.path, self.values = path, json.load(open(path))

    def __getitem__(self, key):
        if key not in self.values:
            raise SystemExit(f"{self.path}: no '{key}' (this oracle reads every key it uses, with no default)")
        return self.values[key]


def forward(cfg, W, tokens):
    arch = cfg["architectures"][0]
    if arch not in ("LlamaForCausalLM", "MixtralForCausalLM"):
        raise SystemExit(f"unknown architecture {arch}")
    mixtral = arch == "MixtralForCausalLM"
    D, H, KV, hd = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    eps = cfg["rms_norm_eps"]
    theta = cfg["rope_theta"]
    if cfg["hidden_act"] != "silu" or cfg["rope_scaling"] is not None:
        raise SystemExit(f"{cfg.path}: hidden_act {cfg['hidden_act']!r} and rope_scaling {cfg['rope_scaling']!r}: "
                         "this oracle computes silu MLPs and plain RoPE only")
    tie = cfg["tie_word_embeddings"]
    if not isinstance(tie, bool):
        raise SystemExit(f"{cfg.path}: tie_word_embeddings is {tie!r}, not true or false")
    B, S = tokens.shape
    used = set()

    def w(name):
        used.add(name)
        return W[name]

    inv_freq = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    freqs = torch.arange(S, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    mask = torch.full((S, S), float("-inf"), dtype=torch.float64).triu(1)

    x = w("model.embed_tokens.weight")[tokens]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms_norm(x, w(p + "input_layernorm.weight"), eps)
        q = (h @ w(p + "self_attn.q_proj.weight").T).view(B, S, H, hd).transpose(1, 2)
        k = (h @ w(p + "self_attn.k_proj.weight").T).view(B, S, KV, hd).transpose(1, 2)
        v = (h @ w(p + "self_attn.v_proj.weight").T).view(B, S, KV, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        n_rep = H // KV  # repeat_kv: (B, KV, S, hd) -> (B, KV * n_rep, S, hd)
        k = k[:, :, None].expand(B, KV, n_rep, S, hd).reshape(B, H, S, hd)
        v = v[:, :, None].expand(B, KV, n_rep, S, hd).reshape(B, H, S, hd)
        att = torch.softmax(q @ k.transpose(2, 3) / math.sqrt(hd) + mask, dim=-1)
        o = (att @ v).transpose(1, 2).reshape(B, S, H * hd)
        x = x + o @ w(p + "self_attn.o_proj.weight").T
        h = rms_norm(x, w(p + "post_attention_layernorm.weight"), eps)
        if mixtral:
            flat = h.reshape(-1, D)
            probs = torch.softmax(flat @ w(p + "block_sparse_moe.gate.weight").T, dim=-1)
            top_w, top_e = torch.topk(probs, cfg["num_experts_per_tok"], dim=-1)
            top_w = top_w / top_w.sum(-1, keepdim=True)
            out = torch.zeros_like(flat)
            for e in range(cfg["num_local_experts"]):
                q_ = p + f"block_sparse_moe.experts.{e}."
                w1, w2, w3 = w(q_ + "w1.weight"), w(q_ + "w2.weight"), w(q_ + "w3.weight")
                rows, slot = (top_e == e).nonzero(as_tuple=True)
                if rows.numel() == 0:
                    continue
                t = flat[rows]
                y = (torch.nn.functional.silu(t @ w1.T) * (t @ w3.T)) @ w2.T
                out.index_add_(0, rows, y * top_w[rows, slot][:, None])
            x = x + out.view(B, S, D)
        else:
            g = h @ w(p + "mlp.gate_proj.weight").T
            u = h @ w(p + "mlp.up_proj.weight").T
            x = x + (torch.nn.functional.silu(g) * u) @ w(p + "mlp.down_proj.weight").T
    x = rms_norm(x, w("model.norm.weight"), eps)
    head = w("model.embed_tokens.weight") if tie else w("lm_head.weight")
    unused = set(W) - used
    if unused:
        raise SystemExit(f"tensors the model does not use: {sorted(unused)}")
    return x @ head.T


def cmd_logits(d, tokens_path, out_path):
    cfg = Config(os.path.join(d, "config.json"))
    tokens = torch.from_numpy(np.load(tokens_path)).long()
    logits = forward(cfg, load_weights(d), tokens)
    np.save(out_path, logits.numpy())
    print(f"ok: logits {tuple(logits.shape)}")


def write_safetensors(path, tensors):
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name].numpy().astype("<f4"))
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
        blobs.append(a.tobytes())
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def cmd_build(d, arch, seed, shards, tie):
    torch.manual_seed(seed)
    mixtral = arch == "mixtral"
    D, L, H, KV, V, I, E = 32, 2, 4, 2, 64, 48, 4
    hd = D // H
    cfg = {"architectures": ["MixtralForCausalLM" if mixtral else "LlamaForCausalLM"],
           "model_type": "mixtral" if mixtral else "llama", "hidden_size": D, "intermediate_size": I,
           "num_hidden_layers": L, "num_attention_heads": H, "num_key_value_heads": KV, "head_dim": hd,
           "vocab_size": V, "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 5000.0,
           "rope_scaling": None, "hidden_act": "silu",
           "tie_word_embeddings": tie, "torch_dtype": "float32"}
    if mixtral:
        cfg.update({"num_local_experts": E, "num_experts_per_tok": 2, "router_aux_loss_coef": 0.02,
                    "sliding_window": None})
    T = {"model.embed_tokens.weight": 0.3 * torch.randn(V, D), "model.norm.weight": 1 + 0.1 * torch.randn(D)}
    if not tie:
        T["lm_head.weight"] = 0.2 * torch.randn(V, D)
    for i in range(L):
        p = f"model.layers.{i}."
        T[p + "input_layernorm.weight"] = 1 + 0.1 * torch.randn(D)
        T[p + "post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(D)
        for n, rows in (("q", H * hd), ("k", KV * hd), ("v", KV * hd)):
            T[p + f"self_attn.{n}_proj.weight"] = 0.2 * torch.randn(rows, D)
        T[p + "self_attn.o_proj.weight"] = 0.2 * torch.randn(D, H * hd)
        if mixtral:
            T[p + "block_sparse_moe.gate.weight"] = torch.randn(E, D)
            for e in range(E):
                q = p + f"block_sparse_moe.experts.{e}."
                T[q + "w1.weight"], T[q + "w3.weight"] = 0.2 * torch.randn(I, D), 0.2 * torch.randn(I, D)
                T[q + "w2.weight"] = 0.2 * torch.randn(D, I)
        else:
            T[p + "mlp.gate_proj.weight"], T[p + "mlp.up_proj.weight"] = 0.2 * torch.randn(I, D), 0.2 * torch.randn(I, D)
            T[p + "mlp.down_proj.weight"] = 0.2 * torch.randn(D, I)
    os.makedirs(d, exist_ok=True)
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"), indent=2)
    json.dump({"bos_token_id": 1, "eos_token_id": 2}, open(os.path.join(d, "generation_config.json"), "w"))
    names = sorted(T)
    if shards == 1:
        write_safetensors(os.path.join(d, "model.safetensors"), T)
    else:
        weight_map = {}
        for s in range(shards):
            f = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            part = {n: T[n] for n in names[s::shards]}
            write_safetensors(os.path.join(d, f), part)
            weight_map.update({n: f for n in part})
        total = sum(t.numel() * 4 for t in T.values())
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map},
                  open(os.path.join(d, "model.safetensors.index.json"), "w"), indent=2)
    print(f"ok: {arch}, {len(T)} tensors in {shards} file(s)")


def main(argv):
    if len(argv) >= 4 and argv[0] == "logits":
        cmd_logits(argv[1], argv[2], argv[3])
    elif len(argv) >= 4 and argv[0] == "build":
        rest = argv[4:]
        shards = int(rest[rest.index("--shards") + 1]) if "--shards" in rest else 1
        cmd_build(argv[1], argv[2], int(argv[3]), shards, "--tie" in rest)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
