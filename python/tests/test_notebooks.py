"""The example notebooks (examples/notebooks/) run headless, in order (the second reads the first's run): through
nbclient (Debian's python3-nbclient and python3-ipykernel) when installed, else as scripts of their code cells."""
import json
import os
import subprocess
import sys

from conftest import SOURCE_DIR

NOTEBOOKS = os.path.join(SOURCE_DIR, "examples", "notebooks")


def execute(path):
    try:
        import nbclient
        import nbformat
    except ImportError:
        cells = json.load(open(path))["cells"]
        script = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        subprocess.run([sys.executable, "-c", script], cwd=NOTEBOOKS, check=True, timeout=600)
        return
    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": NOTEBOOKS}}).execute()


def test_the_notebooks_run(tmp_path, monkeypatch):
    monkeypatch.setenv("KFORGE_SOURCE_DIR", os.path.abspath(SOURCE_DIR))
    monkeypatch.setenv("KFORGE_NOTEBOOK_RUNS", str(tmp_path))
    # The kernel runs in the notebooks' directory: the build tree's kforge by absolute path.
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(os.path.abspath(p) for p in paths if p))
    for name in ("train_debug.ipynb", "inspect_checkpoint.ipynb"):
        execute(os.path.join(NOTEBOOKS, name))
    assert (tmp_path / "debug" / "step_12" / "metadata.json").exists()
