#!/usr/bin/env python3
"""Independent reference for kforge's Mixture of Modality-Aware Experts strategy ([vlm] arch = "moma", plugins/vlm), in
float64, from KempnerForge's description (reference §10.2; Lin et al. 2024, arXiv:2407.21770), not from kforge's C++.

The image tokens (vlm_mot.image_tokens: the tower, then the adapter) come before the text's embeddings, and one RoPE
axis counts the positions from 0 at the first image token, as in the joint decoder. Every layer: the shared pre-norm
causal attention (GQA, optional QK-norm) added to the residual; then the pre-norm FFN routed in two levels: by
position, the image positions of all rows form the image group and the text positions the text group; within a group
of N tokens, with E experts, scores = sigmoid(x gate^T) [N, E] (no Gumbel noise: the model is compared in eval mode or
with moma_gumbel_noise = false), expert e takes the k = min(max(1, ceil(c N)), N) tokens of the highest scores of its
column (c = the capacity factor, or 1/E when it is 0), and a token's output is the sum over the experts that took it of
score * expert MLP(x); tokens no expert took get 0. The final norm on the text positions and the head give the logits.

Usage: vlm_moma.py DIR

DIR as vlm_mot.py reads it, its config.json with "moma": {"capacity_factor": c} beside "model" (the expert counts are
read from the parameter names). Writes logits.npy, loss.npy and grad.<fqn>.npy for every parameter, all float64.
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_reference  # noqa: E402
import vlm_mot  # noqa: E402


def expert_group(x, params, prefix, capacity_factor, activation):
    """One modality's expert-choice FFN over its tokens x [N, dim]; prefix names its parameters (...mlp.{m}.)."""
    n = x.shape[0]
    experts = sum(1 for name in params if name.startswith(prefix + "experts.") and name.endswith(".up_proj.weight"))
    c = capacity_factor if capacity_factor > 0 else 1.0 / experts
    k = min(max(1, math.ceil(c * n)), n)
    scores = torch.sigmoid(x @ params[prefix + "gate.weight"].T)
    out = torch.zeros_like(x)
    for e in range(experts):
        taken = torch.argsort(scores[:, e], descending=True)[:k]
        expert_out = llama_reference.mlp(x[taken], params, f"{prefix}experts.{e}.", activation)
        out = out.index_add(0, taken, scores[taken, e].unsqueeze(1) * expert_out)
    return out


def forward(cfg, params, pixels, tokens):
    model = cfg["model"]
    capacity_factor = cfg["moma"]["capacity_factor"]
    image = vlm_mot.image_tokens(cfg, params, pixels)
    x = torch.cat([image, params["transformer.token_embedding.embedding.weight"][tokens]], dim=1)
    batch, seq, dim = x.shape
    image_positions = image.shape[1]
    for i in range(model["n_layers"]):
        p = f"transformer.layers.{i}."
        q, k, v = vlm_mot.project(model, params, vlm_mot.norm(model, params, p + "attention_norm", x),
                                  p + "attention.", "")
        mixed = vlm_mot.causal_attention(vlm_mot.rotate(q, seq, model), vlm_mot.rotate(k, seq, model), v)
        x = x + mixed @ params[p + "attention.o_proj.weight"].T
        h = vlm_mot.norm(model, params, p + "mlp_norm", x)
        routed = []
        for m, positions in (("image", slice(0, image_positions)), ("text", slice(image_positions, seq))):
            group = h[:, positions].reshape(-1, dim)
            out = expert_group(group, params, f"{p}mlp.{m}.", capacity_factor, model["activation"])
            routed.append(out.view(batch, -1, dim))
        x = x + torch.cat(routed, dim=1)
    return vlm_mot.head(cfg, params, vlm_mot.norm(model, params, "transformer.norm", x[:, image_positions:]))


if __name__ == "__main__":
    vlm_mot.main(__doc__, forward)
