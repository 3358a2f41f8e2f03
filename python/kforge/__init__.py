"""kforge from Python: configs, training with Python hooks, checkpoints, generation and activation capture.

The native runtime (_kforge) is kforge's C++ host built against Debian's python3-torch 1.13: the same PyTorch build
as the LibTorch kforge links, so tensors cross as torch.Tensor sharing storage. Importing checks that assumption:
torch's version and C++ ABI must be the ones _kforge was built with. See docs/python.md.
"""
import os
import re
from dataclasses import dataclass

import torch

from . import _build_info


def _check_torch():
    built = tuple(int(part) for part in _build_info.TORCH_VERSION.split("."))
    release = re.match(r"(\d+)\.(\d+)\.(\d+)", torch.__version__)
    numbers = tuple(int(part) for part in release.groups()) if release else ()
    abi = bool(torch._C._GLIBCXX_USE_CXX11_ABI)
    if numbers != built or abi != _build_info.CXX11_ABI:
        raise ImportError(
            f"kforge was built against LibTorch {_build_info.TORCH_VERSION} (C++11 ABI "
            f"{int(_build_info.CXX11_ABI)}) but this Python's torch is {torch.__version__} from {torch.__file__} "
            f"(C++11 ABI {int(abi)}): tensors cannot cross between them. Use the Python whose torch is the LibTorch "
            f"kforge links (Debian: /usr/bin/python3 with python3-torch), or rebuild kforge against this one.")


_check_torch()

from ._kforge import ConfigError, KforgeError, Model, load_checkpoint, load_config  # noqa: E402
from . import _kforge  # noqa: E402

# kforge's own plugins: the build tree's, or the installed ones (relative to this package).
_PLUGIN_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), _build_info.PLUGIN_DIR))
_kforge._use_plugins([], _PLUGIN_DIR)

__all__ = ["ConfigError", "KforgeError", "Model", "StepContext", "StopTraining", "TrainingError", "TrainingHook",
           "load_checkpoint", "load_config", "register_hook", "register_loss", "register_optimizer", "register_scheduler",
           "train", "use_plugins"]


class StopTraining(Exception):
    """Raised by a hook to end the run after the current step; a checkpoint is saved and train() returns 0."""


class TrainingError(RuntimeError):
    """train() failed: exit_code is `kforge run`'s (1: the run failed, 2: bad config, data or plugins)."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class StepContext:
    """What on_step_end receives after each optimizer step (KempnerForge's StepContext, without the model and
    optimizer objects, which live in C++)."""

    step: int
    loss: float
    grad_norm: float
    lr: float
    tokens_seen: int

    @property
    def metrics(self):
        return {"loss": self.loss, "grad_norm": self.grad_norm, "lr": self.lr, "tokens_seen": self.tokens_seen}


class TrainingHook:
    """KempnerForge's TrainingHook: override the events you need (a hook may be any object with some of them)."""

    def on_train_begin(self, config):
        """Once before the first step; `config` is the resolved config as nested dicts."""

    def on_step_end(self, ctx):
        """After each optimizer step: `ctx` is a StepContext. Raise StopTraining to end the run here."""

    def on_eval_end(self, metrics, step):
        """After each evaluation: `metrics` maps names (eval/loss, ...) to values."""

    def on_checkpoint_save(self, step, path):
        """After a checkpoint of `step` is committed under `path` (checkpoint.dir)."""

    def on_train_end(self, step, tokens_seen):
        """Once after the loop, whatever ended it (not after an exception)."""


def use_plugins(dirs=(), allow_unsafe=False):
    """Searches `dirs` for plugins before kforge's own; call it before any other kforge call loads them."""
    _kforge._use_plugins([str(d) for d in dirs], _PLUGIN_DIR, allow_unsafe)


def register_scheduler(name, factory):
    """Registers a learning-rate schedule written in Python as the scheduler `name`, which a config selects as any
    other ([scheduler] name = NAME). `factory(max_steps)` returns a callable step -> factor of the base learning rate
    (LambdaLR semantics; the first step is 0). It runs under the GIL, once a step."""
    _kforge._register_scheduler(name, factory)


def register_loss(name, factory):
    """Registers a training loss written in Python as the loss `name`, which a config selects as any other
    ([train] loss_fn = NAME). `factory()` returns a callable (logits [batch, seq, vocab], labels int64 [batch, seq],
    -100 where a token counts for nothing) -> 0-d torch.Tensor, built from torch ops so that the step's backward runs
    through it. It runs under the GIL, once per forward (per micro-batch)."""
    _kforge._register_loss(name, factory)


def register_optimizer(name, factory):
    """Registers an optimizer written in Python as the optimizer `name`, which a config selects as any other
    ([optimizer] name = NAME). `factory(params, hyper)` receives the trainable parameters themselves (a dict name ->
    torch.Tensor in the host's order, sharing storage with the C++ ones; .grad holds each step's gradient) and the
    [optimizer] values {"lr", "weight_decay", "betas", "eps"}, and returns an object with `step(lr)`, which updates
    the parameters in place at learning rate lr ([optimizer] lr times the schedule's factor). A checkpoint calls its
    `state_dict()` (a dict str -> torch.Tensor) and a resume its `load_state_dict(state)`. Each call runs under the
    GIL with gradient recording off."""
    _kforge._register_optimizer(name, factory)


def register_hook(name, factory):
    """Registers a training hook written in Python as the hook `name`, which a config selects as any other
    ([train] hooks = [NAME, ...]): `factory()` returns an object with some of TrainingHook's methods, called as the
    hooks given to train() are (the config's hooks run first). Like every registered component it lives in
    this process only: kforge.train runs it, `kforge run` cannot."""
    _kforge._register_hook(name, factory)


def train(config, overrides=(), hooks=(), metric_backends=()):
    """Runs `kforge run`'s trainer in this process on `config` (a TOML path or a dict) with the overrides
    ("train.max_steps=10"), hooks, and metric backends: objects with log(step, metrics: dict name -> float) and
    optionally flush() and end(how) ("finished", "failed" or "killed"), called as the config's [metrics] backends are
    (every log_interval steps and after each evaluation, on the ranks that report), after them. Returns kforge run's exit code: 0 (finished, or stopped by a hook) or 75
    (stopped by a signal after saving; call again to resume). A run that fails raises TrainingError with exit_code 1
    (from the hook's exception when a hook raised; its traceback is in the log) or 2 (bad config, data or plugins)."""
    code, hook_error = _kforge._train(config, list(overrides), list(hooks), list(metric_backends))
    if code in (0, 75):
        return code
    message = f"training failed with exit code {code} (kforge run's): see the log above"
    if hook_error is not None:
        raise TrainingError(f"{message}; a hook raised {hook_error!r}", code) from hook_error
    raise TrainingError(message, code)
