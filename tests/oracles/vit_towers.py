#!/usr/bin/env python3
"""Independent reference for kforge's vision encoders (plugins/vision): SigLIP / SigLIP2 fixed-resolution
and CLIP vision towers written from the Hugging Face modeling code's semantics in plain torch (no
`transformers` here), and KempnerForge's `random` encoder.

Usage:
  vit_towers.py OUT_DIR
      Writes, for each tower (siglip2, clip), OUT_DIR/<tower>/ as a local Hugging Face directory:
      config.json and model.safetensors (random float32 weights under the real HF names, plus tensors
      the vision tower does not use: a text tower, SigLIP's pooling head, CLIP's post_layernorm and
      position_ids), and expected.safetensors: pixel_values, cotangent, output (the encoder's
      output) and grad/<name> for pixel_values and every parameter, the gradients of
      sum(output * cotangent). OUT_DIR/random/expected.safetensors holds pixel_values and the
      `random` encoder's output for num_tokens=5, feature_dim=7, seed=11.

Towers (HF SiglipVisionTransformer / CLIPVisionTransformer, last_hidden_state as KempnerForge returns it):
  embeddings: conv2d(pixels, patch_embedding, stride=patch) -> (B, patches, hidden) [CLIP: class_embedding
  prepended] + position_embedding.weight (position_ids = arange).
  CLIP: pre_layrnorm. Per layer: x += out_proj(attn(layer_norm1(x))); x += fc2(act(fc1(layer_norm2(x))))
  with attn = softmax((q * head_dim^-0.5) k^T) v per head, no mask.
  SigLIP: post_layernorm(x), every token. CLIP: x[:, 1:] (CLS stripped; post_layernorm only normalises
  the pooled CLS output, which is not returned). act: SigLIP gelu_pytorch_tanh (default), CLIP quick_gelu
  x * sigmoid(1.702 x). Defaults for keys absent from config.json are HF's (SiglipVisionConfig,
  CLIPVisionConfig): the SigLIP config here omits hidden_act and num_channels on purpose.

Random (KempnerForge model/vision.py RandomVisionEncoder): image i -> torch.randn(num_tokens, feature_dim,
generator=torch.Generator().manual_seed(seed + int(pixels[i].sum().item() * 1e6))). The pixels are
multiples of 1/8 in [-1, 1], so their float32 sums are exact in any summation order.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_llama import write_safetensors  # noqa: E402

HF_DEFAULTS = {
    "siglip2": {"num_channels": 3, "hidden_act": "gelu_pytorch_tanh", "layer_norm_eps": 1e-6},
    "clip": {"num_channels": 3, "hidden_act": "quick_gelu", "layer_norm_eps": 1e-5},
}

SIGLIP_VISION = {"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 48,
                 "num_hidden_layers": 2, "num_attention_heads": 4, "image_size": 16, "patch_size": 4,
                 "layer_norm_eps": 1e-6}
CLIP_VISION = {"model_type": "clip_vision_model", "hidden_size": 24, "intermediate_size": 40,
               "num_hidden_layers": 2, "num_attention_heads": 3, "image_size": 12, "patch_size": 4,
               "hidden_act": "quick_gelu", "layer_norm_eps": 1e-5, "num_channels": 3}


def vision_config(tower, config):
    section = config.get("vision_config", config)
    return {**HF_DEFAULTS[tower], **section}


def random_weights(tower, c):
    """Random tensors under HF names: matrices ~ N(0, 1/fan_in) (q and k scaled up so attention is far
    from uniform), biases and norm offsets ~ 0.1 N(0, 1)."""
    h, i, p, ch = c["hidden_size"], c["intermediate_size"], c["patch_size"], c["num_channels"]
    n = (c["image_size"] // p) ** 2 + (1 if tower == "clip" else 0)
    W = {}
    v = "vision_model."

    def mat(name, out_dim, in_dim, gain=1.0):
        W[name + ".weight"] = torch.randn(out_dim, in_dim) * gain / in_dim ** 0.5
        W[name + ".bias"] = 0.1 * torch.randn(out_dim)

    def norm(name):
        W[name + ".weight"] = 1 + 0.1 * torch.randn(h)
        W[name + ".bias"] = 0.1 * torch.randn(h)

    W[v + "embeddings.patch_embedding.weight"] = torch.randn(h, ch, p, p) / (ch * p * p) ** 0.5
    if tower == "siglip2":
        W[v + "embeddings.patch_embedding.bias"] = 0.1 * torch.randn(h)
    else:
        W[v + "embeddings.class_embedding"] = torch.randn(h)
        norm(v + "pre_layrnorm")
    W[v + "embeddings.position_embedding.weight"] = 0.5 * torch.randn(n, h)
    for layer in range(c["num_hidden_layers"]):
        pre = f"{v}encoder.layers.{layer}."
        norm(pre + "layer_norm1")
        mat(pre + "self_attn.q_proj", h, h, 2.0)
        mat(pre + "self_attn.k_proj", h, h, 2.0)
        mat(pre + "self_attn.v_proj", h, h)
        mat(pre + "self_attn.out_proj", h, h)
        norm(pre + "layer_norm2")
        mat(pre + "mlp.fc1", i, h)
        mat(pre + "mlp.fc2", h, i)
    if tower == "siglip2":
        norm(v + "post_layernorm")
    return W


def unused_tensors(tower, c):
    """What a real checkpoint holds beside the vision tower."""
    h = c["hidden_size"]
    if tower == "siglip2":
        return {"vision_model.head.probe": torch.randn(1, 1, h),
                "vision_model.head.attention.in_proj_weight": torch.randn(3 * h, h),
                "text_model.embeddings.token_embedding.weight": torch.randn(10, h),
                "logit_scale": torch.randn(1)}
    n = (c["image_size"] // c["patch_size"]) ** 2 + 1
    return {"vision_model.post_layernorm.weight": torch.randn(h), "vision_model.post_layernorm.bias": torch.randn(h),
            "vision_model.embeddings.position_ids": torch.arange(n, dtype=torch.float32)[None],
            "visual_projection.weight": torch.randn(8, h)}


def activation(name):
    if name == "gelu_pytorch_tanh":
        return lambda x: F.gelu(x, approximate="tanh")
    if name == "quick_gelu":
        return lambda x: x * torch.sigmoid(1.702 * x)
    if name == "gelu":
        return F.gelu
    raise SystemExit(f"unknown hidden_act {name}")


def tower_forward(tower, c, W, pixels):
    v = "vision_model."
    h, heads, eps = c["hidden_size"], c["num_attention_heads"], c["layer_norm_eps"]
    hd = h // heads
    act = activation(c["hidden_act"])

    def ln(x, name):
        return F.layer_norm(x, (h,), W[name + ".weight"], W[name + ".bias"], eps)

    def lin(x, name):
        return x @ W[name + ".weight"].T + W[name + ".bias"]

    x = F.conv2d(pixels, W[v + "embeddings.patch_embedding.weight"], W.get(v + "embeddings.patch_embedding.bias"),
                 stride=c["patch_size"])
    x = x.flatten(2).transpose(1, 2)
    B, S = x.shape[0], x.shape[1] + (1 if tower == "clip" else 0)
    if tower == "clip":
        x = torch.cat([W[v + "embeddings.class_embedding"].expand(B, 1, h), x], dim=1)
    x = x + W[v + "embeddings.position_embedding.weight"][torch.arange(S)][None]
    if tower == "clip":
        x = ln(x, v + "pre_layrnorm")
    for layer in range(c["num_hidden_layers"]):
        pre = f"{v}encoder.layers.{layer}."
        a = ln(x, pre + "layer_norm1")
        q = (lin(a, pre + "self_attn.q_proj") * hd ** -0.5).view(B, S, heads, hd).transpose(1, 2)
        k = lin(a, pre + "self_attn.k_proj").view(B, S, heads, hd).transpose(1, 2)
        val = lin(a, pre + "self_attn.v_proj").view(B, S, heads, hd).transpose(1, 2)
        o = torch.softmax(q @ k.transpose(2, 3), dim=-1) @ val
        x = x + lin(o.transpose(1, 2).reshape(B, S, h), pre + "self_attn.out_proj")
        m = act(lin(ln(x, pre + "layer_norm2"), pre + "mlp.fc1"))
        x = x + lin(m, pre + "mlp.fc2")
    if tower == "siglip2":
        return ln(x, v + "post_layernorm")
    return x[:, 1:]


def write_tower(out_dir, tower, config, seed):
    torch.manual_seed(seed)
    c = vision_config(tower, config)
    W = random_weights(tower, c)
    d = os.path.join(out_dir, tower)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    write_safetensors(os.path.join(d, "model.safetensors"), {**W, **unused_tensors(tower, c)})
    for t in W.values():
        t.requires_grad_(True)
    pixels = torch.randn(2, c["num_channels"], c["image_size"], c["image_size"], requires_grad=True)
    out = tower_forward(tower, c, W, pixels)
    cotangent = torch.randn_like(out)
    (out * cotangent).sum().backward()
    expected = {"pixel_values": pixels.detach(), "cotangent": cotangent, "output": out.detach(),
                "grad/pixel_values": pixels.grad}
    expected.update({"grad/" + name: t.grad for name, t in W.items()})
    write_safetensors(os.path.join(d, "expected.safetensors"), expected)
    print(f"ok: {tower} output {tuple(out.shape)}")


def write_random(out_dir, num_tokens=5, feature_dim=7, seed=11):
    torch.manual_seed(3)
    pixels = torch.randint(-8, 9, (3, 3, 4, 4)).float() / 8
    pixels[2] = -pixels[2].abs() - 0.125  # a negative sum: a negative seed
    out = torch.empty(3, num_tokens, feature_dim)
    for i in range(3):
        gen = torch.Generator(device="cpu")
        gen.manual_seed(seed + int(pixels[i].sum().item() * 1e6))
        out[i] = torch.randn(num_tokens, feature_dim, generator=gen)
    d = os.path.join(out_dir, "random")
    os.makedirs(d, exist_ok=True)
    write_safetensors(os.path.join(d, "expected.safetensors"), {"pixel_values": pixels, "output": out})
    print(f"ok: random output {tuple(out.shape)}")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    out_dir = sys.argv[1]
    siglip = {"model_type": "siglip", "text_config": {"hidden_size": 32}, "vision_config": SIGLIP_VISION}
    write_tower(out_dir, "siglip2", siglip, seed=1)
    write_tower(out_dir, "clip", CLIP_VISION, seed=2)
    write_random(out_dir)


if __name__ == "__main__":
    main()
