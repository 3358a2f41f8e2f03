"""kforge.train: `kforge run`'s trainer in this process with Python hooks (KempnerForge's TrainingHook events): every
step's metrics, a stop at step N that a later train() resumes exactly, a failing hook's traceback and exit code, and
two ranks started with torchrun's variables."""
import json
import os
import socket
import subprocess
import sys

import pytest

import kforge
from conftest import tiny_job


class Recorder(kforge.TrainingHook):
    """Records every event; raises StopTraining after step `stop_at` (if set)."""

    def __init__(self, stop_at=None):
        self.events, self.steps, self.stop_at = [], {}, stop_at

    def on_train_begin(self, config):
        self.events.append(("begin", config["train"]["max_steps"]))

    def on_step_end(self, ctx):
        self.events.append(("step", ctx.step))
        self.steps[ctx.step] = ctx.metrics
        if ctx.step == self.stop_at:
            raise kforge.StopTraining(f"asked to stop at step {ctx.step}")

    def on_eval_end(self, metrics, step):
        self.events.append(("eval", step, sorted(metrics)))

    def on_checkpoint_save(self, step, path):
        self.events.append(("save", step, path))

    def on_train_end(self, step, tokens_seen):
        self.events.append(("end", step, tokens_seen))


def logged_losses(checkpoint_dir):
    """step -> train/loss as the run's metrics.jsonl records it."""
    lines = (checkpoint_dir / "metrics.jsonl").read_text().splitlines()
    return {r["step"]: r["train/loss"] for r in map(json.loads, lines) if "train/loss" in r}


def test_a_hook_sees_every_event_and_each_steps_metrics(corpus, tmp_path):
    config = tiny_job(corpus, tmp_path / "ckpt")
    config["eval"] = {"enabled": True, "interval": 3, "steps": 1, "dataset_path": str(corpus)}
    hook = Recorder()
    assert kforge.train(config, hooks=[hook]) == 0
    steps = [e[1] for e in hook.events if e[0] == "step"]
    assert steps == [1, 2, 3, 4, 5, 6]
    assert hook.events[0] == ("begin", 6)
    assert [e[:2] for e in hook.events if e[0] == "eval"] == [("eval", 3), ("eval", 6)]
    assert "eval/loss" in [e for e in hook.events if e[0] == "eval"][0][2]
    assert ("save", 6, str(tmp_path / "ckpt")) in hook.events
    assert hook.events[-1] == ("end", 6, 6 * 4 * 16)
    assert {s: m["loss"] for s, m in hook.steps.items()} == logged_losses(tmp_path / "ckpt")
    assert all(m["lr"] >= 0 and m["grad_norm"] > 0 for m in hook.steps.values())


def test_a_hook_stops_the_run_at_step_n_and_train_resumes_it_exactly(corpus, tmp_path):
    whole = Recorder()
    assert kforge.train(tiny_job(corpus, tmp_path / "whole"), hooks=[whole]) == 0

    stopped = Recorder(stop_at=3)
    assert kforge.train(tiny_job(corpus, tmp_path / "split"), hooks=[stopped]) == 0
    assert list(stopped.steps) == [1, 2, 3]
    assert stopped.events[-1] == ("end", 3, 3 * 4 * 16)
    assert (tmp_path / "split" / "step_3" / "metadata.json").exists()

    resumed = Recorder()
    assert kforge.train(tiny_job(corpus, tmp_path / "split"), hooks=[resumed]) == 0
    assert list(resumed.steps) == [4, 5, 6]
    split = {**stopped.steps, **resumed.steps}
    assert split == whole.steps  # loss, grad norm, lr and tokens of every step, bit for bit


class Failing(kforge.TrainingHook):
    def on_step_end(self, ctx):
        if ctx.step == 2:
            raise ValueError("boom at step 2")


def test_an_exception_in_a_hook_fails_the_run_with_its_traceback_in_the_log(corpus, tmp_path, capfd):
    with pytest.raises(kforge.TrainingError) as raised:
        kforge.train(tiny_job(corpus, tmp_path / "ckpt"), hooks=[Failing()])
    assert raised.value.exit_code == 1
    assert isinstance(raised.value.__cause__, ValueError)
    log = capfd.readouterr().err
    assert "training failed: Python hook Failing.on_step_end raised:" in log
    assert "Traceback (most recent call last):" in log
    assert "in on_step_end" in log and "ValueError: boom at step 2" in log
    assert not (tmp_path / "ckpt" / "step_2").exists()  # a failed run saves nothing


def test_a_bad_config_is_a_config_error_before_any_step(corpus, tmp_path):
    hook = Recorder()
    with pytest.raises(kforge.ConfigError):
        kforge.train(tiny_job(corpus, tmp_path / "ckpt"), overrides=["train.max_steps=0"], hooks=[hook])
    assert hook.events == []


RANK_SCRIPT = """
import json, sys
sys.path.insert(0, {tests!r})
import kforge
from conftest import tiny_job
class Losses:
    def __init__(self):
        self.losses = []
    def on_step_end(self, ctx):
        self.losses.append(ctx.loss)
hook = Losses()
code = kforge.train(tiny_job({corpus!r}, {ckpt!r}, max_steps=4), hooks=[hook])
print("RESULT " + json.dumps([code, hook.losses]))
"""


def test_two_ranks_under_torchruns_variables_train_one_job(corpus, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = RANK_SCRIPT.format(tests=os.path.dirname(__file__), corpus=str(corpus), ckpt=str(tmp_path / "ckpt"))
    ranks = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="2",
                                       LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)))
             for r in range(2)]
    results = []
    for rank in ranks:
        out, err = rank.communicate(timeout=300)
        assert rank.returncode == 0, err
        results.append(json.loads(next(l for l in out.splitlines() if l.startswith("RESULT "))[len("RESULT "):]))
    assert [code for code, _ in results] == [0, 0]
    assert len(results[0][1]) == 4
    assert results[0][1] == results[1][1]  # the loss averaged over both ranks, the same on each
    assert (tmp_path / "ckpt" / "step_4" / "metadata.json").exists()


class Backend:
    """A metric backend: records what it is given."""

    def __init__(self):
        self.lines, self.ended, self.flushes = [], [], 0

    def log(self, step, metrics):
        self.lines.append((step, dict(metrics)))

    def flush(self):
        self.flushes += 1

    def end(self, how):
        self.ended.append(how)


def test_a_python_metric_backend_gets_every_line_the_jsonl_backend_writes(corpus, tmp_path):
    config = tiny_job(corpus, tmp_path / "ckpt")
    config["eval"] = {"enabled": True, "interval": 3, "steps": 1, "dataset_path": str(corpus)}
    backend = Backend()
    assert kforge.train(config, metric_backends=[backend]) == 0
    written = [json.loads(line) for line in (tmp_path / "ckpt" / "metrics.jsonl").read_text().splitlines()]
    assert len(backend.lines) == len(written) > 6
    for (step, metrics), record in zip(backend.lines, written):
        assert record["step"] == step
        assert {k: v for k, v in record.items() if k not in ("step", "time")} == metrics  # time: the jsonl's own
    assert any("eval/loss" in metrics for _, metrics in backend.lines)
    assert backend.ended == ["finished"]
    assert backend.flushes >= 1


class FailingBackend:
    def log(self, step, metrics):
        if step == 2:
            raise RuntimeError("store unreachable at step 2")


def test_an_exception_in_a_metric_backend_fails_the_run_with_its_traceback(corpus, tmp_path, capfd):
    with pytest.raises(kforge.TrainingError) as raised:
        kforge.train(tiny_job(corpus, tmp_path / "ckpt"), metric_backends=[FailingBackend()])
    assert raised.value.exit_code == 1
    log = capfd.readouterr().err
    assert "Python metric backend FailingBackend.log raised:" in log
    assert "RuntimeError: store unreachable at step 2" in log


def test_a_hook_registered_by_name_runs_when_the_config_names_it_and_can_stop_the_run(corpus, tmp_path):
    made = []

    def factory():
        made.append(Recorder(stop_at=4))
        return made[-1]

    kforge.register_hook("py_recorder", factory)
    config = tiny_job(corpus, tmp_path / "ckpt")
    config["train"]["hooks"] = ["py_recorder"]
    given = Recorder()
    assert kforge.train(config, hooks=[given]) == 0
    assert len(made) == 1
    assert made[0].events[0] == ("begin", 6)  # the running job's resolved config
    assert list(made[0].steps) == [1, 2, 3, 4]  # its StopTraining ended the run after step 4
    assert made[0].steps == given.steps
    assert (tmp_path / "ckpt" / "step_4" / "metadata.json").exists()
