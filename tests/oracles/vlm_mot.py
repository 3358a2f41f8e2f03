#!/usr/bin/env python3
"""Independent reference for kforge's Mixture-of-Transformers strategy ([vlm] arch = "mot", plugins/vlm), in
float64, from KempnerForge's description (reference §10.2; Liang et al. 2024, Alg. 1), not from kforge's C++.

The image tokens (the tower of vit_towers.py, then the adapter of vision_adapters.py) come before the text's
embeddings. In every layer each modality's positions (image: the first P, text: the S after them) go through that
modality's attention norm and q/k/v projections (and, with qk_norm, its per-head q/k RMSNorm), and are rotated with
positions counted from 0 within the modality's own stream (image 0..P-1, text 0..S-1); one causal softmax attention
(GQA by repeat_interleave) runs over all P + S positions in [image | text] order; its output, split back, goes through
the modality's o_proj into the residual; then the modality's MLP norm and MLP, added. The text's final norm
(mot_norms.text) on the text positions and the head (or the embedding, tied) give the logits.

Usage: vlm_mot.py DIR

DIR as joint_decoder.py reads it: config.json ({"tower", "vision", "adapter", "model"}), pixels.npy, tokens.npy,
targets.npy and one <fqn>.npy per parameter under the VLM's names. Writes logits.npy [B, S, V], loss.npy (mean
cross-entropy against targets) and grad.<fqn>.npy for every parameter (zeros where none reached it, as
mot_norms.image.weight), all float64.
"""
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_reference  # noqa: E402
import vision_adapters  # noqa: E402
import vit_towers  # noqa: E402

MODALITIES = ("image", "text")


def load(d):
    """DIR's config, parameters (float64, requiring gradients, by name), pixels, tokens and targets."""
    cfg = json.load(open(os.path.join(d, "config.json")))
    params = llama_reference.load_parameters(d, requires_grad=True)
    params.pop("pixels")
    pixels = torch.tensor(np.load(os.path.join(d, "pixels.npy")), dtype=torch.float64)
    tokens = torch.tensor(np.load(os.path.join(d, "tokens.npy")))
    targets = torch.tensor(np.load(os.path.join(d, "targets.npy")))
    return cfg, params, pixels, tokens, targets


def image_tokens(cfg, params, pixels):
    """The adapter's tokens [B, P, dim] of the tower's features of pixels."""
    def under(prefix):
        return {n[len(prefix):]: t for n, t in params.items() if n.startswith(prefix)}

    tower = cfg["tower"]
    config = vit_towers.vision_config(tower, cfg["vision"])
    return vision_adapters.forward(cfg["adapter"], under("adapter."),
                                   vit_towers.tower_forward(tower, config, under("vision_encoder."), pixels))


def norm(model, params, name, x):
    """[model] norm_type's normalisation of x with the weights `name`.weight (and .bias for layernorm)."""
    if model["norm_type"] == "rmsnorm":
        return llama_reference.rmsnorm(x, params[name + ".weight"], model["norm_eps"])
    centred = x - x.mean(-1, keepdim=True)
    scale = torch.sqrt((centred ** 2).mean(-1, keepdim=True) + model["norm_eps"])
    return centred / scale * params[name + ".weight"] + params[name + ".bias"]


def project(model, params, h, prefix, suffix):
    """q [B, H, T, hd], k and v [B, KV, T, hd] of h [B, T, dim] by the weights {prefix}{q,k,v}_proj{suffix}.weight
    and, with qk_norm, q and k RMS-normed per head by {prefix}{q,k}_norm{suffix}.weight; not rotated."""
    batch, seq = h.shape[0], h.shape[1]
    hd = model["dim"] // model["n_heads"]

    def heads(name):
        return (h @ params[f"{prefix}{name}_proj{suffix}.weight"].T).view(batch, seq, -1, hd)

    q, k, v = heads("q"), heads("k"), heads("v")
    if model["qk_norm"]:
        q = llama_reference.rmsnorm(q, params[f"{prefix}q_norm{suffix}.weight"], model["norm_eps"])
        k = llama_reference.rmsnorm(k, params[f"{prefix}k_norm{suffix}.weight"], model["norm_eps"])
    return q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)


def causal_attention(q, k, v):
    """softmax(q k^T / sqrt(hd) + causal mask) v for q [B, H, T, hd], k and v [B, KV, T, hd] -> [B, T, H * hd]."""
    batch, heads, seq, hd = q.shape
    k = k.repeat_interleave(heads // k.shape[1], dim=1)
    v = v.repeat_interleave(heads // v.shape[1], dim=1)
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
    visible = torch.ones(seq, seq, dtype=torch.bool).tril()
    probs = scores.masked_fill(~visible, float("-inf")).softmax(dim=-1)
    return (probs @ v).transpose(1, 2).reshape(batch, seq, heads * hd)


def rotate(x, positions, model):
    """RoPE (rotate-half) of x [B, heads, T, hd] at positions 0..T-1."""
    cos, sin = llama_reference.rope_cos_sin(positions, x.shape[-1], model["rope_theta"])
    return x * cos + llama_reference.rotate_half(x) * sin


def head(cfg, params, text):
    """Logits of the text positions' final hidden states."""
    weight = params["transformer.token_embedding.embedding.weight"] if cfg["model"]["tie_embeddings"] \
        else params["transformer.output_head.proj.weight"]
    return text @ weight.T


def forward(cfg, params, pixels, tokens):
    model = cfg["model"]
    streams = {"image": image_tokens(cfg, params, pixels),
               "text": params["transformer.token_embedding.embedding.weight"][tokens]}
    for i in range(model["n_layers"]):
        p = f"transformer.layers.{i}."
        qs, ks, vs = [], [], []
        for m in MODALITIES:
            seq = streams[m].shape[1]
            q, k, v = project(model, params, norm(model, params, f"{p}attention_norm.{m}", streams[m]),
                              p + "attention.", "." + m)
            qs.append(rotate(q, seq, model))
            ks.append(rotate(k, seq, model))
            vs.append(v)
        mixed = causal_attention(torch.cat(qs, 2), torch.cat(ks, 2), torch.cat(vs, 2))
        image_positions = streams["image"].shape[1]
        outputs = {"image": mixed[:, :image_positions], "text": mixed[:, image_positions:]}
        for m in MODALITIES:
            x = streams[m] + outputs[m] @ params[f"{p}attention.o_proj.{m}.weight"].T
            h = norm(model, params, f"{p}mlp_norm.{m}", x)
            streams[m] = x + llama_reference.mlp(h, params, f"{p}mlp.{m}.", model["activation"])
    return head(cfg, params, norm(model, params, "transformer.mot_norms.text", streams["text"]))


def main(doc, forward_of):
    """An oracle's command line: DIR's logits by forward_of(cfg, params, pixels, tokens), their loss and gradients
    written back to DIR; `doc` when it is misused."""
    if len(sys.argv) != 2:
        raise SystemExit(doc)
    cfg, params, pixels, tokens, targets = load(sys.argv[1])
    logits = forward_of(cfg, params, pixels, tokens)
    loss = llama_reference.backward_and_save(sys.argv[1], logits, targets, params)
    print(f"ok: {len(params)} parameters, loss {loss.item():.6f}")


if __name__ == "__main__":
    main(__doc__, forward)
