#!/usr/bin/env python3
"""Runs the documentation's runnable shell blocks: a ```bash fence directly after a line `<!-- doctest -->`. Each
block runs as `bash -euo pipefail` in a fresh scratch directory holding the links build, configs, data, scripts,
examples and plugins to the repository's, so `build/bin/kforge run configs/train/debug.toml --checkpoint.dir=ck`
works there and writes nothing into the repository. A failing block is reported as FILE:LINE with its output's tail.

Usage: doc_tests.py [FILE.md | DIR]...   (default: docs/ and README.md; scripts/docs.sh --check runs it)
"""
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
LINKED = ["build", "configs", "data", "scripts", "examples", "plugins"]
MARKER = "<!-- doctest -->"
TIMEOUT_S = 900  # a block is a few tiny runs; this bounds a hang
TAIL_LINES = 40


def blocks(path):
    """[(line of the fence, script)] of `path`; a marker not followed by a ```bash fence is an error. A marker inside
    a fenced block (an example of the convention) is text, not a marker."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, fence = [], None  # fence: the open fence's backticks or tildes
    for i, line in enumerate(lines):
        opening = re.match(r"\s*(`{3,}|~{3,})", line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        if line.strip() != MARKER:
            continue
        if i + 1 >= len(lines) or lines[i + 1].strip() != "```bash":
            raise SystemExit(f"{path}:{i + 1}: '{MARKER}' must be directly followed by a ```bash fence")
        end = next((j for j in range(i + 2, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise SystemExit(f"{path}:{i + 2}: the ```bash fence after '{MARKER}' is never closed")
        found.append((i + 2, "\n".join(lines[i + 2:end]) + "\n"))
    return found


def markdown_files(args):
    roots = [pathlib.Path(a) for a in args] or [REPO / "docs", REPO / "README.md"]
    files = []
    for root in roots:
        if root.is_dir():
            files += sorted(root.rglob("*.md"))
        elif root.is_file():
            files.append(root)
        else:
            raise SystemExit(f"doc_tests: {root}: no such file or directory")
    return files


def run_block(script):
    """(exit code, output) of the block run in a new scratch directory, removed afterwards."""
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="kforge-doctest-"))
    try:
        for name in LINKED:
            (scratch / name).symlink_to(REPO / name)
        try:
            run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=scratch, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT_S,
                                 check=False)
            return run.returncode, run.stdout
        except subprocess.TimeoutExpired as e:
            return 124, (e.stdout or b"").decode(errors="replace") + f"\n(killed after {TIMEOUT_S} s)"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    passed = failed = 0
    for path in markdown_files(sys.argv[1:]):
        shown = path.resolve().relative_to(REPO) if path.resolve().is_relative_to(REPO) else path
        for line, script in blocks(path):
            start = time.monotonic()
            code, output = run_block(script)
            seconds = time.monotonic() - start
            if code == 0:
                passed += 1
                print(f"doc test {shown}:{line}: ok ({seconds:.1f} s)", flush=True)
            else:
                failed += 1
                tail = "\n".join(output.rstrip("\n").splitlines()[-TAIL_LINES:])
                print(f"doc test {shown}:{line}: FAILED with exit code {code} ({seconds:.1f} s); the output's "
                      f"last lines:\n{tail}\n", flush=True)
    print(f"doc tests: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
