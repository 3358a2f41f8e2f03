"""kforge.register_scheduler: a schedule written in Python, selected by name in a config as the built-in ones are."""
import pytest

import kforge
from conftest import tiny_job


class Steps(kforge.TrainingHook):
    def __init__(self):
        self.steps = {}

    def on_step_end(self, ctx):
        self.steps[ctx.step] = ctx.metrics


def run(corpus, checkpoint_dir, scheduler):
    config = tiny_job(corpus, checkpoint_dir, max_steps=5)
    config["scheduler"] = scheduler
    hook = Steps()
    assert kforge.train(config, hooks=[hook]) == 0
    return hook.steps


def test_a_python_schedule_sets_each_steps_learning_rate(corpus, tmp_path):
    kforge.register_scheduler("py_halving", lambda max_steps: lambda step: 0.5 ** step)
    steps = run(corpus, tmp_path / "ckpt", {"name": "py_halving"})
    # Step k (1-based) trains at the factor of step k - 1; lr is the base lr (1e-2) times it, one double product.
    assert [m["lr"] for m in steps.values()] == [1e-2 * 0.5 ** (k - 1) for k in range(1, 6)]


def test_a_python_constant_schedule_trains_as_the_built_in_one(corpus, tmp_path):
    kforge.register_scheduler("py_constant", lambda max_steps: lambda step: 1.0)
    python = run(corpus, tmp_path / "python", {"name": "py_constant"})
    built_in = run(corpus, tmp_path / "built_in", {"name": "constant", "warmup_steps": 0})
    assert python == built_in  # loss, grad norm, lr and tokens of 5 steps, bit for bit


def test_a_schedule_that_raises_fails_the_run_with_its_traceback(corpus, tmp_path, capfd):
    def broken(max_steps):
        def factor(step):
            raise ArithmeticError(f"no factor for step {step}")
        return factor

    kforge.register_scheduler("py_broken", broken)
    config = tiny_job(corpus, tmp_path / "ckpt", max_steps=2)
    config["scheduler"] = {"name": "py_broken"}
    with pytest.raises(kforge.TrainingError) as raised:
        kforge.train(config)
    assert raised.value.exit_code == 1
    log = capfd.readouterr().err
    assert "Python scheduler 'py_broken' at step 0 raised:" in log and "ArithmeticError: no factor for step 0" in log


def test_a_name_already_registered_is_refused():
    kforge.register_scheduler("py_twice", lambda max_steps: lambda step: 1.0)
    with pytest.raises(kforge.KforgeError) as raised:
        kforge.register_scheduler("py_twice", lambda max_steps: lambda step: 1.0)
    assert "scheduler 'py_twice' is already registered" in str(raised.value)
    with pytest.raises(kforge.KforgeError) as raised:
        kforge.register_scheduler("cosine", lambda max_steps: lambda step: 1.0)
    assert "scheduler 'cosine' is already registered (by " in str(raised.value)
