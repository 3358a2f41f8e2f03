# The cost of an optimizer written in Python (kforge.register_optimizer) against the built-in adamw: the median
# training-step time of the tiny job (python/tests/conftest.py) and of a wider one, with the plain-torch AdamW of
# python/tests/python_adamw.py and with the built-in (fused, then unfused), and the share of the Python step() call.
#   PYTHONPATH=build/python /usr/bin/python3 benchmarks/python_optimizer_step.py [STEPS]
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python" / "tests"))
import kforge  # noqa: E402
from conftest import VOCAB, tiny_job  # noqa: E402
from python_adamw import AdamW  # noqa: E402

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 300
WARMUP = 20


class Clock(kforge.TrainingHook):
    """The wall time between consecutive step ends (one whole training step each), after the warm-up."""

    def __init__(self):
        self.last = None
        self.times = []

    def on_step_end(self, ctx):
        now = time.perf_counter()
        if self.last is not None and ctx.step > WARMUP:
            self.times.append(now - self.last)
        self.last = now


class TimedAdamW(AdamW):
    """The Python AdamW, timing each step() from inside Python (the host's GIL acquisition excluded)."""

    calls = []

    def step(self, lr):
        start = time.perf_counter()
        super().step(lr)
        TimedAdamW.calls.append(time.perf_counter() - start)


def median_step(root, shape, optimizer):
    config = tiny_job(root / "corpus", root / f"ckpt_{len(list(root.iterdir()))}", max_steps=STEPS)
    config["model"].update(shape)
    config["optimizer"].update(optimizer)
    config["checkpoint"]["interval"] = STEPS + 1
    config["metrics"]["log_interval"] = STEPS
    clock = Clock()
    assert kforge.train(config, hooks=[clock]) == 0
    return statistics.median(clock.times)


def main():
    kforge.register_optimizer("py_adamw", TimedAdamW)
    shapes = {"tiny (dim 32, 2 layers)": {}, "dim 256, 4 layers": {"dim": 256, "n_layers": 4, "n_heads": 8,
                                                                     "n_kv_heads": 4}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "corpus").mkdir()
        np.save(root / "corpus" / "shard_0.npy", np.random.default_rng(7).integers(0, VOCAB, 4096).astype(np.uint16))
        rows = []
        for label, shape in shapes.items():
            fused = median_step(root, shape, {"name": "adamw"})
            unfused = median_step(root, shape, {"name": "adamw", "fused": False})
            TimedAdamW.calls = []
            python = median_step(root, shape, {"name": "py_adamw"})
            in_step = statistics.median(TimedAdamW.calls[WARMUP:])
            rows.append((label, fused, unfused, python, in_step))
    print(f"\nmedian step time over {STEPS - WARMUP - 1} steps, {os.cpu_count()} CPUs visible, 1 thread "
          "([train] num_threads = 1)")
    print(f"{'shape':26} {'adamw fused':>12} {'adamw unfused':>14} {'Python AdamW':>13} {'ratio':>6} "
          f"{'ratio/unfused':>13} {'Python step()':>13}")
    for label, fused, unfused, python, in_step in rows:
        print(f"{label:26} {fused * 1e3:10.3f}ms {unfused * 1e3:12.3f}ms {python * 1e3:11.3f}ms {python / fused:6.2f} "
              f"{python / unfused:13.2f} {in_step * 1e3:11.3f}ms")


main()
