#!/usr/bin/env python3
"""Independent reference for kforge's clips through a modality strategy ([video] with [time_embedding] type =
"sinusoidal", plugins/video and plugins/vlm), in float64, from the description (KempnerForge's VLMWrapper over clips
and its FrameTimeEmbedding, reference §10; the clip contract of sdk/vision_language_model.h), not from kforge's C++.

A batch of clips [B, F, 3, H, W] padded to F frames: the frames frame_mask marks are row b's n_b real ones, in order;
the others are padding, which by kforge's contract changes nothing of the real tokens' outputs and gradients (the
real frames and the text keep the positions of the unpadded clip), so this reference never reads them: each row is its
real frames only, and rows of different lengths run as they are (nothing padded, nothing masked). Every real frame
goes through the vision tower (vit_towers.py) and the adapter (vision_adapters.py) to T tokens, and each of them gets
the time embedding of the frame's time t in seconds:

    proj.weight @ [sin(2 pi t / p_1), ..., sin(2 pi t / p_n), cos(2 pi t / p_1), ..., cos(2 pi t / p_n)]
    with p_k = min_period * (max_period / min_period) ** ((k - 1) / (n - 1))   (n = 1: p_1 = min_period)

(kforge's projection has no bias). Row b's image tokens are its frames' in frame order, n_b T of them, and the
strategy's reference runs over them:
  joint_decoder: llama_reference.py with them as the prefix (positions from 0 at the first);
  cross_attention: vlm_cross_attention.py, the row's text reading its own image tokens only;
  mot: vlm_mot.py (image positions 0 .. n_b T - 1, text 0 .. S - 1);
  moma: vlm_moma.py's layers over the ragged rows: attention within each row (one RoPE axis from 0 at its first image
  token), then each modality's expert choice over that modality's tokens of all rows (the image group: the real
  frames' tokens only, so only they count in an expert's capacity ceil(c N)).
The loss is the mean cross-entropy over every text position of every row.

Usage: video_clips.py DIR

DIR holds config.json ({"strategy": one of the four, "tower", "vision", "adapter", "model" as joint_decoder.py reads
them, "time_embedding": {"num_bands", "min_period", "max_period"}, and the strategy's own member as its reference reads
it: "cross_attention" or "moma"}), clips.npy (float32 [B, F, 3, H, W]), frame_mask.npy (int64 [B, F], 1: real),
frame_times.npy (float32 [B, F]), tokens.npy / targets.npy (int64 [B, S]) and one <fqn>.npy per parameter under the
VLM's names. Writes logits.npy [B, S, V], loss.npy and grad.<fqn>.npy for every parameter (llama_reference.py's
backward_and_save), and with moma routing_margin.npy: the smallest gap, over layers, modalities and experts, between
the lowest score an expert took and the highest it left (how far its choice is from a tie), all float64.
"""
import contextlib
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_reference  # noqa: E402
import vlm_cross_attention  # noqa: E402
import vlm_moma  # noqa: E402
import vlm_mot  # noqa: E402

INPUTS = ("clips", "frame_mask", "frame_times", "tokens", "targets")


def time_embedding(section, params, times):
    """The embedding [N, dim] of times [N] in seconds (module docstring)."""
    n, low, high = section["num_bands"], section["min_period"], section["max_period"]
    periods = torch.tensor([low * (high / low) ** (k / (n - 1)) if n > 1 else low for k in range(n)],
                           dtype=torch.float64)
    angles = 2 * math.pi * times[:, None] / periods
    return torch.cat([angles.sin(), angles.cos()], dim=1) @ params["time_embedding.proj.weight"].T


def clip_rows(cfg, params, clips, mask, times):
    """Each row's image tokens [1, n_b T, dim]: its real frames' adapter tokens plus their time's embedding."""
    real = mask.bool()
    frames = vlm_mot.image_tokens(cfg, params, clips[real])  # [real frames of all rows, T, dim], row by row
    frames = frames + time_embedding(cfg["time_embedding"], params, times[real])[:, None]
    return [row.reshape(1, -1, frames.shape[2]) for row in frames.split(real.sum(1).tolist())]


@contextlib.contextmanager
def image_tokens_given(image):
    """The strategies' references take their image tokens from vlm_mot.image_tokens(cfg, params, pixels); within this
    block it returns `image` instead (each oracle runs in a process of its own: nothing outlives the script)."""
    computed = vlm_mot.image_tokens
    vlm_mot.image_tokens = lambda cfg, params, pixels: image
    try:
        yield
    finally:
        vlm_mot.image_tokens = computed


def joint_decoder(cfg, params, pixels, tokens):
    """llama_reference.py's decoder with the image tokens as its prefix (joint_decoder.py's composition)."""
    text = {n[len("transformer."):]: t for n, t in params.items() if n.startswith("transformer.")}
    return llama_reference.forward(cfg["model"], text, tokens, lambda point, value: None,
                                   prefix=vlm_mot.image_tokens(cfg, params, pixels))


ROW_BY_ROW = {"joint_decoder": joint_decoder, "cross_attention": vlm_cross_attention.forward,
              "mot": vlm_mot.forward}


def row_by_row(forward_of, cfg, params, rows, tokens):
    """Logits [B, S, V]: each row through forward_of (a strategy's reference) alone, over its own image tokens."""
    logits = []
    for b, image in enumerate(rows):
        with image_tokens_given(image):
            logits.append(forward_of(cfg, params, None, tokens[b:b + 1]))
    return torch.cat(logits)


def choice_margin(group, params, prefix, capacity_factor):
    """The smallest gap between the k-th and (k + 1)-th highest score of an expert's column over group [N, dim]
    (k as vlm_moma.expert_group picks; inf when an expert takes every token)."""
    scores = torch.sigmoid(group @ params[prefix + "gate.weight"].T).sort(dim=0, descending=True).values
    n, experts = scores.shape
    c = capacity_factor if capacity_factor > 0 else 1.0 / experts
    k = min(max(1, math.ceil(c * n)), n)
    return (scores[k - 1] - scores[k]).min().item() if k < n else math.inf


def moma(cfg, rows, params, tokens, margins):
    """MoMa's logits [B, S, V] over rows of their own image lengths (module docstring); appends every expert group's
    choice_margin to margins."""
    model, capacity_factor = cfg["model"], cfg["moma"]["capacity_factor"]
    embedding = params["transformer.token_embedding.embedding.weight"]
    images = [image.shape[1] for image in rows]
    xs = [torch.cat([image, embedding[tokens[b:b + 1]]], dim=1) for b, image in enumerate(rows)]
    for i in range(model["n_layers"]):
        p = f"transformer.layers.{i}."
        for b, x in enumerate(xs):
            seq = x.shape[1]
            q, k, v = vlm_mot.project(model, params, vlm_mot.norm(model, params, p + "attention_norm", x),
                                      p + "attention.", "")
            mixed = vlm_mot.causal_attention(vlm_mot.rotate(q, seq, model), vlm_mot.rotate(k, seq, model), v)
            xs[b] = x + mixed @ params[p + "attention.o_proj.weight"].T
        hs = [vlm_mot.norm(model, params, p + "mlp_norm", x)[0] for x in xs]
        groups = {"image": torch.cat([h[:n] for h, n in zip(hs, images)]),
                  "text": torch.cat([h[n:] for h, n in zip(hs, images)])}
        routed = {}
        for m, group in groups.items():
            margins.append(choice_margin(group, params, f"{p}mlp.{m}.", capacity_factor))
            out = vlm_moma.expert_group(group, params, f"{p}mlp.{m}.", capacity_factor, model["activation"])
            routed[m] = out.split(images if m == "image" else [tokens.shape[1]] * len(xs))
        xs = [x + torch.cat([routed["image"][b], routed["text"][b]])[None] for b, x in enumerate(xs)]
    text = torch.cat([x[:, n:] for x, n in zip(xs, images)])
    return vlm_mot.head(cfg, params, vlm_mot.norm(model, params, "transformer.norm", text))


def main(d):
    cfg = json.load(open(os.path.join(d, "config.json")))
    params = llama_reference.load_parameters(d, requires_grad=True)
    inputs = {name: torch.tensor(np.load(os.path.join(d, name + ".npy"))) for name in INPUTS}
    for name in INPUTS:
        params.pop(name, None)
    rows = clip_rows(cfg, params, inputs["clips"].to(torch.float64), inputs["frame_mask"],
                     inputs["frame_times"].to(torch.float64))
    strategy = cfg["strategy"]
    if strategy == "moma":
        margins = []
        logits = moma(cfg, rows, params, inputs["tokens"], margins)
        np.save(os.path.join(d, "routing_margin.npy"), np.array([min(margins)]))
    elif strategy in ROW_BY_ROW:
        logits = row_by_row(ROW_BY_ROW[strategy], cfg, params, rows, inputs["tokens"])
    else:
        raise SystemExit(f"config.json: unknown strategy {strategy!r} (joint_decoder, cross_attention, mot, moma)")
    loss = llama_reference.backward_and_save(d, logits, inputs["targets"], params)
    lengths = [row.shape[1] for row in rows]
    print(f"ok: {strategy}, {len(params)} parameters, image tokens per row {lengths}, loss {loss.item():.6f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
