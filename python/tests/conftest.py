"""Shared fixtures of the Python API's tests: a tiny token corpus and the tests' tiny training job as a dict."""
import os

import numpy as np
import pytest

SOURCE_DIR = os.environ.get("KFORGE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
VOCAB = 97


@pytest.fixture
def corpus(tmp_path):
    """One uint16 .npy shard of 4096 pseudo-random token ids below VOCAB (fixed seed)."""
    path = tmp_path / "corpus"
    path.mkdir()
    np.save(path / "shard_0.npy", np.random.default_rng(7).integers(0, VOCAB, 4096).astype(np.uint16))
    return path


def tiny_job(corpus, checkpoint_dir, max_steps=6):
    """tests/support/tiny_job_toml's job (2 layers, dim 32, batch 4 x 16 tokens, fp32, one thread) on `corpus`."""
    return {
        "model": {"dim": 32, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "vocab_size": VOCAB, "max_seq_len": 32},
        "train": {"batch_size": 4, "seq_len": 16, "max_steps": max_steps, "seed": 1234, "mixed_precision": "fp32",
                  "num_threads": 1},
        "optimizer": {"lr": 1e-2},
        "scheduler": {"name": "cosine", "warmup_steps": 2},
        "data": {"dataset_path": str(corpus), "file_pattern": "*.npy"},
        "checkpoint": {"dir": str(checkpoint_dir), "interval": 100},
        "metrics": {"log_interval": 1},
    }


@pytest.fixture(scope="session")
def trained(tmp_path_factory):
    """The checkpoint directory of 4 steps of the tiny job (trained once per session)."""
    import kforge

    root = tmp_path_factory.mktemp("trained")
    data = root / "corpus"
    data.mkdir()
    np.save(data / "shard_0.npy", np.random.default_rng(7).integers(0, VOCAB, 4096).astype(np.uint16))
    assert kforge.train(tiny_job(data, root / "ckpt", max_steps=4)) == 0
    return root / "ckpt"
