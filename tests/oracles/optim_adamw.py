"""Oracle for kforge's adamw: torch.optim.AdamW (single-tensor, no amsgrad) with kforge's two groups.

Usage: optim_adamw.py DIR. DIR/spec.json holds lr, weight_decay, betas, eps, decay_embeddings, names,
steps and factors (the LambdaLR factor of each step); DIR/p<i>.npy the initial tensors (frozen ones
listed in spec "frozen"); DIR/g<k>_<i>.npy the gradient of tensor i at step k (absent: grad None).
Writes DIR/out_p<i>.npy, out_m<i>.npy (exp_avg), out_v<i>.npy (exp_avg_sq), out_steps.npy.
"""
import json
import os
import sys

import numpy as np
import torch


def no_decay(name, tensor, decay_embeddings):
    # kforge's rule: 1-D tensors, names with "bias", and (unless asked) names with "embedding".
    return tensor.dim() < 2 or "bias" in name or (not decay_embeddings and "embedding" in name)


def load_problem(d):
    """DIR/spec.json, the initial tensors (frozen ones without grad) and kforge's two decay groups."""
    with open(os.path.join(d, "spec.json")) as f:
        spec = json.load(f)
    names = spec["names"]
    params = []
    for i, name in enumerate(names):
        p = torch.from_numpy(np.load(os.path.join(d, f"p{i}.npy")))
        p.requires_grad_(name not in spec["frozen"])
        params.append(p)
    trainable = [(n, p) for n, p in zip(names, params) if p.requires_grad]
    decay = [p for n, p in trainable if not no_decay(n, p, spec["decay_embeddings"])]
    other = [p for n, p in trainable if no_decay(n, p, spec["decay_embeddings"])]
    groups = [{"params": decay, "weight_decay": spec["weight_decay"]}, {"params": other, "weight_decay": 0.0}]
    return spec, params, groups


def run_steps(d, spec, params, opt):
    """spec["steps"] steps at lr = base lr * factors[k] (LambdaLR), grads from DIR/g<k>_<i>.npy."""
    base_lr = spec["lr"]
    for k in range(spec["steps"]):
        for group in opt.param_groups:
            group["lr"] = base_lr * spec["factors"][k]
        for i, p in enumerate(params):
            path = os.path.join(d, f"g{k}_{i}.npy")
            p.grad = torch.from_numpy(np.load(path)) if os.path.exists(path) else None
        opt.step()


def main(d):
    spec, params, groups = load_problem(d)
    names = spec["names"]
    opt = torch.optim.AdamW(groups, lr=spec["lr"], betas=tuple(spec["betas"]), eps=spec["eps"], foreach=False,
                            amsgrad=False)
    run_steps(d, spec, params, opt)
    steps = []
    for i, p in enumerate(params):
        state = opt.state.get(p, {})
        np.save(os.path.join(d, f"out_p{i}.npy"), p.detach().numpy())
        np.save(os.path.join(d, f"out_m{i}.npy"), state["exp_avg"].numpy() if state else np.zeros_like(p.detach().numpy()))
        np.save(os.path.join(d, f"out_v{i}.npy"), state["exp_avg_sq"].numpy() if state else np.zeros_like(p.detach().numpy()))
        steps.append(int(state["step"].item()) if state else 0)
    np.save(os.path.join(d, "out_steps.npy"), np.array(steps, dtype=np.int64))
    print("adamw oracle: torch", torch.__version__, "steps", spec["steps"], "tensors", len(names))


if __name__ == "__main__":
    main(sys.argv[1])
