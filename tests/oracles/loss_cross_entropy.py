"""Oracle for kforge's cross_entropy loss: F.cross_entropy(ignore_index=-100) plus optional z-loss.

Usage: loss_cross_entropy.py DIR Z_WEIGHT. Reads DIR/logits.npy [batch, seq, vocab] and DIR/labels.npy
(int64 [batch, seq]); writes DIR/out_loss.npy (shape [1]) and DIR/out_grad.npy (d loss / d logits).
z-loss (KempnerForge): weight * mean(logsumexp(logits.float())^2) over all positions; float64 logits
stay float64 (kforge computes it in at least float32).
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F


def main(d, z_weight):
    logits = torch.from_numpy(np.load(os.path.join(d, "logits.npy"))).requires_grad_(True)
    labels = torch.from_numpy(np.load(os.path.join(d, "labels.npy")))
    vocab = logits.shape[-1]
    loss = F.cross_entropy(logits.reshape(-1, vocab), labels.reshape(-1), ignore_index=-100)
    if z_weight > 0:
        wide = logits if logits.dtype == torch.float64 else logits.float()
        loss = loss + z_weight * (torch.logsumexp(wide.reshape(-1, vocab), dim=-1) ** 2).mean()
    loss.backward()
    np.save(os.path.join(d, "out_loss.npy"), loss.detach().reshape(1).numpy())
    np.save(os.path.join(d, "out_grad.npy"), logits.grad.numpy())
    print("cross_entropy oracle: torch", torch.__version__, "loss", loss.item())


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
