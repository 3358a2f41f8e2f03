"""kforge.register_optimizer: an optimizer written in Python, selected by name in a config as the built-in ones are,
updating the C++ parameters in place through torch.Tensors that share their storage."""
import pytest
import torch

import kforge
from conftest import tiny_job
from python_adamw import AdamW


class Steps(kforge.TrainingHook):
    def __init__(self):
        self.steps = {}

    def on_step_end(self, ctx):
        self.steps[ctx.step] = ctx.metrics


def run(corpus, checkpoint_dir, optimizer, max_steps=5):
    config = tiny_job(corpus, checkpoint_dir, max_steps=max_steps)
    config["optimizer"].update(optimizer)
    hook = Steps()
    assert kforge.train(config, hooks=[hook]) == 0
    return hook.steps


def final_parameters(checkpoint_dir):
    tensors, _, _ = kforge.load_checkpoint(checkpoint_dir)
    return tensors


def test_a_python_adamw_trains_as_the_built_in_one_bit_for_bit(corpus, tmp_path):
    kforge.register_optimizer("py_adamw", AdamW)
    python = run(corpus, tmp_path / "python", {"name": "py_adamw"})
    # The built-in's unfused update runs the same ATen ops in the same order with the same double scalars (Python's
    # float ** and math.sqrt are libm's pow and sqrt, as std::pow and std::sqrt), so every rounding is the same.
    built_in = run(corpus, tmp_path / "built_in", {"name": "adamw", "fused": False})
    assert python == built_in  # loss, grad norm, lr and tokens of 5 steps, bit for bit
    ours, theirs = final_parameters(tmp_path / "python"), final_parameters(tmp_path / "built_in")
    assert sorted(ours) == sorted(theirs)
    for name, tensor in theirs.items():
        assert torch.equal(ours[name], tensor), name


def test_the_optimizer_receives_the_parameters_themselves_and_the_optimizer_section(corpus, tmp_path):
    seen = {}

    class Inspected(AdamW):
        def step(self, lr):
            seen["grads"] = {name: slot["param"].grad for name, slot in self.slots.items()}
            seen["grad_enabled"] = torch.is_grad_enabled()
            super().step(lr)

    def factory(params, hyper):
        seen["hyper"] = hyper
        seen["params"] = params
        seen["pointers"] = {name: p.data_ptr() for name, p in params.items()}
        return Inspected(params, hyper)

    kforge.register_optimizer("py_inspected", factory)
    run(corpus, tmp_path / "ckpt", {"name": "py_inspected", "weight_decay": 0.05, "betas": [0.8, 0.9], "eps": 1e-6},
        max_steps=1)
    assert seen["hyper"] == {"lr": 1e-2, "weight_decay": 0.05, "betas": [0.8, 0.9], "eps": 1e-6}
    params = seen["params"]
    assert params["token_embedding.embedding.weight"].shape == (97, 32)
    assert all(p.requires_grad for p in params.values())
    assert sorted(seen["grads"]) == sorted(params)  # every trainable tensor, each with its step's gradient
    assert all(grad is not None and grad.shape == params[name].shape for name, grad in seen["grads"].items())
    assert not seen["grad_enabled"]
    # The same storage after the run: step() updated the C++ parameters in place, never a copy.
    assert {name: p.data_ptr() for name, p in params.items()} == seen["pointers"]
    saved = final_parameters(tmp_path / "ckpt")
    for name, p in params.items():
        assert torch.equal(p.detach(), saved[name]), name


def test_a_python_optimizer_resumes_from_its_state_dict_exactly(corpus, tmp_path):
    kforge.register_optimizer("py_adamw_resumed", AdamW)
    whole = run(corpus, tmp_path / "whole", {"name": "py_adamw_resumed"})
    first = run(corpus, tmp_path / "split", {"name": "py_adamw_resumed"}, max_steps=3)
    rest = run(corpus, tmp_path / "split", {"name": "py_adamw_resumed"})
    assert list(rest) == [4, 5]
    assert {**first, **rest} == whole
    ours, theirs = final_parameters(tmp_path / "split"), final_parameters(tmp_path / "whole")
    for name, tensor in theirs.items():
        assert torch.equal(ours[name], tensor), name


def test_a_step_that_raises_fails_the_run_with_its_traceback(corpus, tmp_path, capfd):
    class Broken(AdamW):
        def step(self, lr):
            raise FloatingPointError(f"no update at lr {lr}")

    kforge.register_optimizer("py_broken_step", Broken)
    config = tiny_job(corpus, tmp_path / "ckpt", max_steps=2)
    config["optimizer"]["name"] = "py_broken_step"
    with pytest.raises(kforge.TrainingError) as raised:
        kforge.train(config)
    assert raised.value.exit_code == 1
    log = capfd.readouterr().err
    assert "Python optimizer 'py_broken_step': step() raised:" in log and "FloatingPointError: no update at lr" in log


def test_an_optimizer_name_already_registered_is_refused():
    kforge.register_optimizer("py_adamw_twice", AdamW)
    with pytest.raises(kforge.KforgeError) as raised:
        kforge.register_optimizer("py_adamw_twice", AdamW)
    assert "optimizer 'py_adamw_twice' is already registered" in str(raised.value)
    with pytest.raises(kforge.KforgeError) as raised:
        kforge.register_optimizer("adamw", AdamW)
    assert "optimizer 'adamw' is already registered (by " in str(raised.value)
