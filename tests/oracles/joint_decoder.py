#!/usr/bin/env python3
"""Independent reference for kforge's joint decoder ([vlm] arch = "joint_decoder", plugins/vlm): the
composition of this folder's references, in float64: the vision tower of vit_towers.py, the adapter of
vision_adapters.py and the decoder of llama_reference.py with the adapter's output as its embedding prefix
(KempnerForge's VLMWrapper with the joint-decoder strategy: image tokens before the text in one causal
stack, positions from 0 at the first image token, logits of the text positions only).

Usage: joint_decoder.py DIR

DIR holds config.json ({"tower": "siglip2" | "clip", "vision": the tower's config.json, "adapter": a case as
vision_adapters.py describes one (type, activation, hidden_dim, pool_window, pool_heads), "model": the
settings llama_reference.py reads}), pixels.npy (float32 [B, 3, H, W]), tokens.npy / targets.npy (int64
[B, S]) and one <fqn>.npy per parameter under the VLM's names (vision_encoder.*, adapter.*, transformer.*).
Writes logits.npy [B, S, V], loss.npy (mean cross-entropy against targets) and grad.<fqn>.npy for every
parameter, all float64.
"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_reference  # noqa: E402
import vision_adapters  # noqa: E402
import vit_towers  # noqa: E402

INPUTS = ("pixels.npy", "tokens.npy", "targets.npy")


def main(d):
    cfg = json.load(open(os.path.join(d, "config.json")))
    names = sorted(f[: -len(".npy")] for f in os.listdir(d)
                   if f.endswith(".npy") and f not in INPUTS and not f.startswith("grad."))
    P = {n: torch.tensor(np.load(os.path.join(d, n + ".npy")), dtype=torch.float64, requires_grad=True)
         for n in names}

    def part(prefix):
        return {n[len(prefix):]: t for n, t in P.items() if n.startswith(prefix)}

    pixels = torch.tensor(np.load(os.path.join(d, "pixels.npy")), dtype=torch.float64)
    tokens = torch.tensor(np.load(os.path.join(d, "tokens.npy")))
    targets = torch.tensor(np.load(os.path.join(d, "targets.npy")))
    tower = cfg["tower"]
    features = vit_towers.tower_forward(tower, vit_towers.vision_config(tower, cfg["vision"]),
                                        part("vision_encoder."), pixels)
    prefix = vision_adapters.forward(cfg["adapter"], part("adapter."), features)
    logits = llama_reference.forward(cfg["model"], part("transformer."), tokens, lambda point, value: None,
                                     prefix=prefix)
    loss = llama_reference.backward_and_save(d, logits, targets, P)
    print(f"ok: {len(P)} parameters, {prefix.shape[1]} image tokens, loss {loss.item():.6f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
