"""kforge.register_loss: a training loss written in Python, selected by name in a config as the built-in ones are, the
step's backward running through its torch ops."""
import pytest
import torch.nn.functional as F

import kforge
from conftest import tiny_job


class Steps(kforge.TrainingHook):
    def __init__(self):
        self.steps = {}

    def on_step_end(self, ctx):
        self.steps[ctx.step] = ctx.metrics


def run(corpus, checkpoint_dir, loss_fn, max_steps=1):
    config = tiny_job(corpus, checkpoint_dir, max_steps=max_steps)
    config["train"]["loss_fn"] = loss_fn
    hook = Steps()
    assert kforge.train(config, hooks=[hook]) == 0
    return hook.steps


def cross_entropy(scale=1.0):
    def factory():
        return lambda logits, labels: scale * F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1),
                                                              ignore_index=-100)
    return factory


def test_the_python_loss_is_the_steps_objective(corpus, tmp_path):
    kforge.register_loss("py_cross_entropy_once", cross_entropy())
    kforge.register_loss("py_cross_entropy_twice", cross_entropy(2.0))
    once = run(corpus, tmp_path / "once", "py_cross_entropy_once")[1]
    twice = run(corpus, tmp_path / "twice", "py_cross_entropy_twice")[1]
    # Scaling by 2 is exact in floating point, in the loss and in every gradient element, so in their norm too.
    assert twice["loss"] == 2 * once["loss"] and twice["grad_norm"] == 2 * once["grad_norm"]


def test_a_python_cross_entropy_gives_the_built_in_ones_first_step_within_fp32_rounding(corpus, tmp_path):
    kforge.register_loss("py_cross_entropy", cross_entropy())
    python = run(corpus, tmp_path / "python", "py_cross_entropy")[1]
    built_in = run(corpus, tmp_path / "built_in", "cross_entropy")[1]
    # Same weights, same logits; the built-in's fused kernel and torch's log_softmax + nll_loss sum in other orders.
    # Each is a V-term log-sum-exp per token and an N-term mean (V = 97 classes, N = 64 tokens), so each is within
    # gamma_(V+N) ~ (V + N) u of the exact value (u = 2^-24, fp32): they differ by at most twice that, relative. The
    # gradient (softmax - onehot) / N and its norm take the same sums. The later steps' weights then differ by
    # AdamW's response to that rounding, which has no such bound, so only the first step is compared.
    bound = 2 * (97 + 64) * 2.0 ** -24
    assert python["loss"] == pytest.approx(built_in["loss"], rel=bound, abs=0)
    assert python["grad_norm"] == pytest.approx(built_in["grad_norm"], rel=bound, abs=0)


def test_a_loss_that_returns_no_scalar_tensor_fails_the_run_naming_it(corpus, tmp_path, capfd):
    kforge.register_loss("py_per_token", lambda: lambda logits, labels: logits.sum(-1))
    config = tiny_job(corpus, tmp_path / "ckpt", max_steps=1)
    config["train"]["loss_fn"] = "py_per_token"
    with pytest.raises(kforge.TrainingError):
        kforge.train(config)
    assert "Python loss 'py_per_token': returned tensor(" in capfd.readouterr().err


def test_a_loss_that_raises_fails_the_run_with_its_traceback(corpus, tmp_path, capfd):
    def broken():
        def loss(logits, labels):
            raise OverflowError(f"no loss for logits {tuple(logits.shape)}")
        return loss

    kforge.register_loss("py_broken_loss", broken)
    config = tiny_job(corpus, tmp_path / "ckpt", max_steps=1)
    config["train"]["loss_fn"] = "py_broken_loss"
    with pytest.raises(kforge.TrainingError) as raised:
        kforge.train(config)
    assert raised.value.exit_code == 1
    log = capfd.readouterr().err
    assert "Python loss 'py_broken_loss' raised:" in log and "OverflowError: no loss for logits (4, 16, 97)" in log


def test_a_loss_name_already_registered_is_refused():
    with pytest.raises(kforge.KforgeError) as raised:
        kforge.register_loss("cross_entropy", cross_entropy())
    assert "loss 'cross_entropy' is already registered (by " in str(raised.value)
