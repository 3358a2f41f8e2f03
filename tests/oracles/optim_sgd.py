"""Oracle for kforge's sgd: torch.optim.SGD (dampening 0, foreach off) with kforge's two weight-decay groups.

Usage: optim_sgd.py DIR. DIR/spec.json holds lr, weight_decay, momentum, nesterov, decay_embeddings, names,
frozen, steps and factors; DIR/p<i>.npy the initial tensors; DIR/g<k>_<i>.npy the gradient of tensor i at
step k (absent: grad None). Writes DIR/out_p<i>.npy and DIR/out_b<i>.npy (momentum buffer, zeros if none).
"""
import os
import sys

import numpy as np
import torch

from optim_adamw import load_problem, run_steps


def main(d):
    spec, params, groups = load_problem(d)
    names = spec["names"]
    opt = torch.optim.SGD(groups, lr=spec["lr"], momentum=spec["momentum"], dampening=0, nesterov=spec["nesterov"],
                          foreach=False)
    run_steps(d, spec, params, opt)
    for i, p in enumerate(params):
        buf = opt.state.get(p, {}).get("momentum_buffer")
        np.save(os.path.join(d, f"out_p{i}.npy"), p.detach().numpy())
        np.save(os.path.join(d, f"out_b{i}.npy"), buf.numpy() if buf is not None else np.zeros_like(p.detach().numpy()))
    print("sgd oracle: torch", torch.__version__, "steps", spec["steps"], "tensors", len(names))


if __name__ == "__main__":
    main(sys.argv[1])
