"""Oracle for kforge's sgd: torch.optim.SGD (dampening 0, foreach off) with kforge's two weight-decay groups.

Usage: optim_sgd.py DIR. DIR/spec.json holds lr, weight_decay, momentum, nesterov, decay_embeddings, names,
frozen, steps and factors; DIR/p<i>.npy the initial tensors; DIR/g<k>_<i>.npy the gradient of tensor i at
step k (absent: grad None). Writes DIR/out_p<i>.npy and DIR/out_b<i>.npy (momentum buffer, zeros if none).
"""
import json
import os
import sys

import numpy as np
import torch

from optim_adamw import no_decay


def main(d):
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
    base_lr = spec["lr"]
    opt = torch.optim.SGD(
        [{"params": decay, "weight_decay": spec["weight_decay"]}, {"params": other, "weight_decay": 0.0}],
        lr=base_lr, momentum=spec["momentum"], dampening=0, nesterov=spec["nesterov"], foreach=False)
    for k in range(spec["steps"]):
        for group in opt.param_groups:
            group["lr"] = base_lr * spec["factors"][k]
        for i, p in enumerate(params):
            path = os.path.join(d, f"g{k}_{i}.npy")
            p.grad = torch.from_numpy(np.load(path)) if os.path.exists(path) else None
        opt.step()
    for i, p in enumerate(params):
        buf = opt.state.get(p, {}).get("momentum_buffer")
        np.save(os.path.join(d, f"out_p{i}.npy"), p.detach().numpy())
        np.save(os.path.join(d, f"out_b{i}.npy"), buf.numpy() if buf is not None else np.zeros_like(p.detach().numpy()))
    print("sgd oracle: torch", torch.__version__, "steps", spec["steps"], "tensors", len(names))


if __name__ == "__main__":
    main(sys.argv[1])
