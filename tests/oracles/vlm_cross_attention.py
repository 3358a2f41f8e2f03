#!/usr/bin/env python3
"""Independent reference for kforge's cross-attention strategy ([vlm] arch = "cross_attention", plugins/vlm), in
float64: the vision tower of vit_towers.py and the adapter of vision_adapters.py make the image tokens; the decoder
of llama_reference.py runs the text alone, and after text block i with (i + 1) % every == 0 the residual goes
through cross-attention block j = (i + 1) // every - 1 (KempnerForge's CrossAttentionBlock, Llama-3-V style):

    h = rmsnorm(x, attention_norm);  q = h Wq^T;  k = img Wk^T;  v = img Wv^T   (no RoPE, no mask)
    x = x + softmax(q k^T / sqrt(hd)) v Wo^T    (query head h reads key/value head h // (heads / kv_heads))
    x = x + mlp(rmsnorm(x, mlp_norm))

Usage: vlm_cross_attention.py DIR

DIR holds what joint_decoder.py reads, with config.json's "cross_attention": {"every": n, "n_heads": h,
"n_kv_heads": kv} (resolved, no zeros), and the blocks' parameters under
transformer.cross_attention_layers.{j}.*. Writes logits.npy, loss.npy and grad.<fqn>.npy, all float64.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_reference  # noqa: E402
import vlm_mot  # noqa: E402


def cross_block(P, prefix, x, img, heads, kv_heads, eps, activation):
    B, S, dim = x.shape
    hd = dim // heads
    h = llama_reference.rmsnorm(x, P[prefix + "attention_norm.weight"], eps)
    q = (h @ P[prefix + "attention.q_proj.weight"].T).view(B, S, heads, hd).transpose(1, 2)
    k = (img @ P[prefix + "attention.k_proj.weight"].T).view(B, -1, kv_heads, hd).transpose(1, 2)
    v = (img @ P[prefix + "attention.v_proj.weight"].T).view(B, -1, kv_heads, hd).transpose(1, 2)
    k = k.repeat_interleave(heads // kv_heads, dim=1)
    v = v.repeat_interleave(heads // kv_heads, dim=1)
    att = ((q @ k.transpose(-1, -2)) / math.sqrt(hd)).softmax(dim=-1)
    o = (att @ v).transpose(1, 2).reshape(B, S, heads * hd)
    x = x + o @ P[prefix + "attention.o_proj.weight"].T
    h = llama_reference.rmsnorm(x, P[prefix + "mlp_norm.weight"], eps)
    return x + llama_reference.mlp(h, P, prefix + "mlp.", activation)


def forward(cfg, params, pixels, tokens):
    img = vlm_mot.image_tokens(cfg, params, pixels)
    ca, model = cfg["cross_attention"], cfg["model"]
    text = {n[len("transformer."):]: t for n, t in params.items() if n.startswith("transformer.")}

    def after_block(i, x):
        if (i + 1) % ca["every"] != 0:
            return x
        j = (i + 1) // ca["every"] - 1
        return cross_block(text, f"cross_attention_layers.{j}.", x, img, ca["n_heads"], ca["n_kv_heads"],
                           model["norm_eps"], model["activation"])

    return llama_reference.forward(model, text, tokens, lambda point, value: None, after_block=after_block)


if __name__ == "__main__":
    vlm_mot.main(__doc__, forward)
