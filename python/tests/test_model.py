"""kforge.Model: a checkpoint's model from Python. Its tensors are the C++ model's (no copy), forward's logits match
the python3-torch oracle (tests/oracles/llama_reference.py), generate continues greedily from them, and capture
gives `kforge extract`'s hook points, which the oracle checks too."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import kforge
from conftest import SOURCE_DIR, VOCAB

ORACLE = os.path.join(SOURCE_DIR, "tests", "oracles", "llama_reference.py")


@pytest.fixture
def model(trained):
    return kforge.Model.from_checkpoint(trained)


def tokens(batch=2, seq=12):
    return torch.tensor(np.random.default_rng(3).integers(0, VOCAB, (batch, seq)), dtype=torch.long)


def oracle_dir(model, tmp_path, ids):
    """The oracle's input: config.json (the [model] section), tokens, targets and one .npy per parameter."""
    config = dict(model.config["model"])
    json.dump(config, open(tmp_path / "config.json", "w"))
    np.save(tmp_path / "tokens.npy", ids.numpy())
    np.save(tmp_path / "targets.npy", ids.numpy())
    for name, value in model.state_dict().items():
        if value.is_floating_point():
            np.save(tmp_path / f"{name}.npy", value.numpy())
    return tmp_path


def test_state_dict_tensors_are_the_models_own_storage(model):
    first, second = model.state_dict(), model.state_dict()
    head = "output_head.proj.weight"
    assert first[head].data_ptr() == second[head].data_ptr()
    ids = tokens()
    assert model.forward(ids).abs().max() > 0
    saved = first[head].clone()
    first[head].numpy()[:] = 0  # written through a NumPy view of the tensor Python holds
    try:
        assert torch.equal(model.forward(ids), torch.zeros(2, 12, VOCAB))  # the C++ forward reads that memory
    finally:
        first[head].copy_(saved)
    assert torch.equal(second[head], saved)


def test_the_state_dict_holds_the_checkpoints_tensors(model, trained):
    tensors, _, _ = kforge.load_checkpoint(trained)
    state = model.state_dict()
    for name, value in tensors.items():
        assert torch.equal(state[name], value), name


def test_forward_logits_match_the_python3_torch_oracle(model, tmp_path):
    ids = tokens()
    logits = model.forward(ids)
    assert logits.shape == (2, 12, VOCAB) and logits.dtype == torch.float32
    d = oracle_dir(model, tmp_path, ids)
    done = subprocess.run(["/usr/bin/python3", ORACLE, str(d)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    reference = np.load(d / "logits.npy")
    # The oracle's bound (its docstring): |kforge - reference| <= 2e-6 * (depth + 1) * (1 + |reference|) for a value
    # that went through `depth` blocks; the logits are one fp32 matmul (dim = 32 terms) past final_norm's depth,
    # n_layers, so depth n_layers + 1.
    tolerance = 2e-6 * (model.config["model"]["n_layers"] + 2)
    error = np.abs(logits.numpy().astype(np.float64) - reference) / (1 + np.abs(reference))
    assert error.max() <= tolerance


def test_greedy_generate_continues_with_forwards_argmax(model):
    prompt = tokens(1, 8)
    out = model.generate(prompt.tolist(), max_new_tokens=4, temperature=0.0)
    assert out[0][:8] == prompt[0].tolist() and len(out[0]) == 12
    assert out[0][8] == int(model.forward(prompt)[0, -1].argmax())
    whole = torch.tensor([out[0][:11]])
    assert out[0][11] == int(model.forward(whole)[0, -1].argmax())


def test_capture_gives_the_hook_points_the_oracle_computes(model, tmp_path):
    assert "layers.1.residual" in model.hook_points and "embed" in model.hook_points
    ids = tokens(1, 10)
    points = ["embed", "layers.0.attention", "layers.1.residual", "final_norm"]
    values = model.capture(ids, points)
    assert sorted(values) == sorted(points)
    weights = model.state_dict()["token_embedding.embedding.weight"]
    assert torch.equal(values["embed"][0], weights[ids[0]])
    assert values["layers.0.attention"].shape == (1, 4, 10, 10)
    d = oracle_dir(model, tmp_path, ids)
    np.savez(d / "acts.npz", tokens=ids.numpy(), **{p: v.numpy() for p, v in values.items()})
    done = subprocess.run(["/usr/bin/python3", ORACLE, str(d), "--activations", str(d / "acts.npz")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok: 4 points match" in done.stdout


def test_capture_of_an_unknown_point_names_the_models_points(model):
    with pytest.raises(kforge.KforgeError) as raised:
        model.capture(tokens(1, 4), ["layers.9.residual"])
    assert "no hook point 'layers.9.residual'" in str(raised.value) and "layers.0.residual" in str(raised.value)
