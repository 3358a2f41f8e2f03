"""kforge.Model.forward against `kforge generate` on the same checkpoint and prompt tokens. The CLI prints text, not
logits, so the comparison is its greedy first token (temperature 0: the argmax of its first-step logits) with the
argmax of forward's last-position logits, each time with a margin that the two fp32 computations cannot swap."""
import json
import os
import subprocess

import numpy as np
import pytest
import torch

import kforge
from conftest import SOURCE_DIR, tiny_job

KFORGE_BIN = os.environ.get("KFORGE_BIN", os.path.join(SOURCE_DIR, "build", "bin", "kforge"))


def byte_level_char():
    """GPT-2's byte-to-character mapping (the characters of a byte-level BPE vocab)."""
    kept = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    extra = [b for b in range(256) if b not in kept]
    mapping = {b: chr(b) for b in kept}
    mapping.update({b: chr(256 + n) for n, b in enumerate(extra)})
    return mapping


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """The tiny job trained 2 steps with a 256-token vocab: token id b is byte b of the tokenizer below."""
    root = tmp_path_factory.mktemp("bytes")
    data = root / "corpus"
    data.mkdir()
    np.save(data / "shard_0.npy", np.random.default_rng(7).integers(0, 256, 4096).astype(np.uint16))
    job = tiny_job(data, root / "ckpt", max_steps=2)
    job["model"]["vocab_size"] = 256
    assert kforge.train(job) == 0
    return root / "ckpt"


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    """A byte-level BPE tokenizer.json with no merges: every byte b of a prompt is one token, id b."""
    chars = byte_level_char()
    document = {
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "decoder": {"type": "ByteLevel"},
        "added_tokens": [],
        "model": {"type": "BPE", "vocab": {chars[b]: b for b in range(256)}, "merges": []},
    }
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    path.write_text(json.dumps(document))
    return path


def cli_first_token(checkpoint, tokenizer, prompt):
    """The id of the token `kforge generate --temperature 0 --max-new-tokens 1` appends to `prompt`."""
    done = subprocess.run([KFORGE_BIN, "generate", "--checkpoint", str(checkpoint), "--tokenizer", str(tokenizer),
                           "--prompt", prompt, "--max-new-tokens", "1", "--temperature", "0"],
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.endswith(b"\n"), done.stdout  # the prompt, its one new byte (perhaps a newline), a newline
    text = done.stdout[:-1]
    assert text[:-1].endswith(prompt.encode()), done.stdout
    return text[-1]


@pytest.mark.parametrize("prompt", ["hello world", "kforge!", "A1 b2 C3 d4 E5 f6"])
def test_forward_argmax_is_generates_greedy_first_token(checkpoint, tokenizer, prompt):
    model = kforge.Model.from_checkpoint(checkpoint)
    ids = torch.tensor([list(prompt.encode())], dtype=torch.long)
    last = model.forward(ids)[0, -1]
    top2 = last.topk(2).values
    # The CLI's prefill is the same fp32 model on the same tokens; test_model's oracle bound, 2e-6 * (n_layers + 2)
    # relative to 1 + |logit|, bounds either side's error, so a gap over twice that cannot swap the argmax.
    bound = 2e-6 * (model.config["model"]["n_layers"] + 2) * (1 + float(top2[0].abs()))
    assert float(top2[0] - top2[1]) > 2 * bound, f"logits too close to compare argmaxes: {top2.tolist()}"
    assert cli_first_token(checkpoint, tokenizer, prompt) == int(last.argmax())
