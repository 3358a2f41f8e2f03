"""kforge.load_checkpoint: a checkpoint's model tensors (as torch.Tensor), config and train state."""
import json
import struct

import numpy as np
import torch

import kforge


def read_model_tensors(path):
    """name -> float32 array of the model's tensors ("model/<name>") in a safetensors file, read here with numpy
    (independent of kforge's reader)."""
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    body = data[8 + length :]
    out = {}
    for name, entry in header.items():
        if not name.startswith("model/"):
            continue
        assert entry["dtype"] == "F32", f"{name}: {entry['dtype']}"
        begin, end = entry["data_offsets"]
        out[name[len("model/"):]] = np.frombuffer(body[begin:end], dtype="<f4").reshape(entry["shape"])
    return out


def test_returns_the_model_tensors_config_and_train_state(trained):
    tensors, config, state = kforge.load_checkpoint(trained)
    assert all(isinstance(t, torch.Tensor) and t.dtype == torch.float32 for t in tensors.values())
    assert tensors["token_embedding.embedding.weight"].shape == (97, 32)
    assert config["model"]["dim"] == 32 and config["train"]["max_steps"] == 4
    assert state["step"] == 4 and state["tokens_seen"] == 4 * 4 * 16
    on_disk = {}
    for shard in sorted((trained / "step_4").glob("*.safetensors")):
        on_disk.update(read_model_tensors(shard))
    assert sorted(on_disk) == sorted(tensors)
    for name, value in on_disk.items():
        assert np.array_equal(tensors[name].numpy(), value), name


def test_a_step_directory_loads_that_step(trained):
    _, _, state = kforge.load_checkpoint(trained / "step_4")
    assert state["step"] == 4


def test_a_directory_without_a_checkpoint_is_a_kforge_error(tmp_path):
    try:
        kforge.load_checkpoint(tmp_path)
    except kforge.KforgeError as e:
        assert str(tmp_path) in str(e) and "holds no checkpoint" in str(e)
    else:
        raise AssertionError("no error")
