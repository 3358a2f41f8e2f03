#!/usr/bin/python3
"""Plain PyTorch-eager peer of `kforge eval --tasks` log-likelihood scoring, for benchmarks/downstream_eval.sh.

Run with Debian's python3-torch 1.13 (/usr/bin/python3), the same LibTorch and BLAS kforge links. It builds
benchmarks/peer_trainer.py's model of the config's [model] shape (random weights: the speed does not depend on them)
and scores the requests of a kforge --log-samples file as lm-eval-harness 0.4 scores them with a Hugging Face model:
sorted longest first, BATCH whole sequences (context + continuation)[-(L+1):][:-1] right-padded per forward, fp32
log_softmax at the continuation's positions, no gradients. Prints "<requests> <seconds>" of the scoring alone.

    /usr/bin/python3 benchmarks/peer_scorer.py CONFIG.toml SAMPLES.jsonl BATCH THREADS
"""
import json
import os
import sys
import time
import tomllib

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_trainer import Cfg, Transformer  # noqa: E402


def main(config_path, samples_path, batch, threads):
    torch.set_num_threads(threads)
    with open(config_path, "rb") as f:
        cfg = Cfg(tomllib.load(f)["model"])
    model = Transformer(cfg, recompute_blocks=False).eval()
    limit = cfg.max_seq_len
    requests = []
    with open(samples_path) as f:
        for line in f:
            s = json.loads(line)
            whole = s["context_tokens"] + s["continuation_tokens"]
            requests.append((whole[-(limit + 1):][:-1], s["continuation_tokens"]))
    requests.sort(key=lambda r: (-len(r[0]), r[0]))
    start = time.perf_counter()
    with torch.no_grad():
        for first in range(0, len(requests), batch):
            chunk = requests[first:first + batch]
            tokens = torch.zeros(len(chunk), len(chunk[0][0]), dtype=torch.long)
            for row, (inp, _) in enumerate(chunk):
                tokens[row, :len(inp)] = torch.tensor(inp)
            logits = model(tokens)
            for row, (inp, cont) in enumerate(chunk):
                logprobs = logits[row, len(inp) - len(cont):len(inp)].float().log_softmax(-1)
                logprobs.gather(1, torch.tensor(cont).unsqueeze(1)).sum().item()
    print(len(requests), time.perf_counter() - start)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
