"""`import kforge` from the build tree, and its check of torch's version and C++ ABI against the build's."""
import subprocess
import sys

import torch

import kforge
from kforge import _build_info


def test_imports_from_the_build_tree_against_this_torch():
    assert kforge.__file__.endswith("kforge/__init__.py")
    assert torch.__version__.startswith(_build_info.TORCH_VERSION)
    assert bool(torch._C._GLIBCXX_USE_CXX11_ABI) == _build_info.CXX11_ABI
    assert callable(kforge.load_config) and callable(kforge.train)


def import_with(patch):
    """Imports kforge in a fresh interpreter after `patch` changed torch; returns (exit code, stderr)."""
    code = f"import torch\n{patch}\nimport kforge\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return done.returncode, done.stderr


def test_another_torch_version_is_an_import_error_naming_both():
    code, err = import_with("torch.__version__ = '2.1.0'")
    assert code != 0
    assert "ImportError" in err
    assert f"LibTorch {_build_info.TORCH_VERSION}" in err and "torch is 2.1.0" in err


def test_another_cxx_abi_is_an_import_error_naming_both():
    other = int(not _build_info.CXX11_ABI)
    code, err = import_with(f"torch._C._GLIBCXX_USE_CXX11_ABI = {bool(other)}")
    assert code != 0
    assert "ImportError" in err
    assert f"C++11 ABI {int(_build_info.CXX11_ABI)}" in err and f"(C++11 ABI {other})" in err
