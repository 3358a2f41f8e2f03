#!/usr/bin/env python3
"""CPython's own random.Random draws, for eval_tasks::PythonRandom to reproduce.

Usage: python_random_draws.py OUT.json
Writes {"sample": [[seed, n, k, indices]...], "choices": [[seed, n, k, indices]...], "random": [[seed, [5 floats]]...]}:
random.Random(seed).sample(range(n), k) (both of its branches: a pool for small n, a set of picks for large n; and
several calls on one generator), .choices(range(n), k=k) and .random().
"""
import json
import random
import sys

out = {"sample": [], "choices": [], "random": []}
for seed, n, k in [(1234, 4, 2), (1234, 10, 6), (0, 40000, 6), (7, 100, 25), (2**40 + 3, 1000, 3)]:
    rnd = random.Random(seed)
    out["sample"].append([seed, n, k, [rnd.sample(range(n), k) for _ in range(3)]])
for seed, n, k in [(0, 5, 5), (999, 1000, 7)]:
    out["choices"].append([seed, n, k, random.Random(seed).choices(range(n), k=k)])
for seed in (0, 1, 1234):
    rnd = random.Random(seed)
    out["random"].append([seed, [rnd.random() for _ in range(5)]])
with open(sys.argv[1], "w") as f:
    json.dump(out, f)
print("ok")
