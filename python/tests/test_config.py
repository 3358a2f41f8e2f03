"""kforge.load_config: a TOML file with overrides, or a dict, resolved to nested dicts; errors as ConfigError naming
the file, line and key."""
import os

import pytest

import kforge
from conftest import SOURCE_DIR, tiny_job

DEBUG_TOML = os.path.join(SOURCE_DIR, "configs", "train", "debug.toml")


def test_a_file_with_overrides_resolves_to_nested_dicts():
    config = kforge.load_config(DEBUG_TOML, overrides=["train.max_steps=7", "--optimizer.lr=0.002"])
    assert config["train"]["max_steps"] == 7
    assert config["optimizer"]["lr"] == 0.002
    assert config["model"]["dim"] == 256  # from the file
    assert config["train"]["grad_accum_steps"] == 1
    assert isinstance(config["optimizer"]["betas"], list)


def test_an_invalid_value_in_a_file_names_its_file_line_and_key(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[model]\ndim = 32\n\n[train]\nmax_steps = 0\n")
    with pytest.raises(kforge.ConfigError) as raised:
        kforge.load_config(path)
    assert f"{path}:5:" in str(raised.value)
    assert "[train] max_steps = 0" in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_a_dict_resolves_with_defaults_and_overrides(tmp_path):
    config = kforge.load_config(tiny_job(tmp_path / "data", tmp_path / "ckpt"), overrides=["train.max_steps=3"])
    assert config["model"]["dim"] == 32
    assert config["train"]["max_steps"] == 3
    assert config["scheduler"]["name"] == "cosine"
    assert config["optimizer"]["name"] == "adamw"  # a default the dict left out


def test_an_unknown_key_in_a_dict_names_the_dict_and_key():
    with pytest.raises(kforge.ConfigError) as raised:
        kforge.load_config({"train": {"batch_sze": 2}})
    assert "the config dict" in str(raised.value)
    assert "'batch_sze' in [train]" in str(raised.value)
    assert "Did you mean 'batch_size'?" in str(raised.value)


def test_a_value_of_no_config_type_names_its_key():
    with pytest.raises(kforge.ConfigError) as raised:
        kforge.load_config({"train": {"max_steps": object()}})
    assert "train.max_steps" in str(raised.value)


def test_a_config_of_another_type_is_a_type_error():
    with pytest.raises(TypeError):
        kforge.load_config(42)
