# Builds the kforge wheel from a CMake build: `cmake --install` into a staging prefix, then the package and the
# libraries and plugins it loads (<prefix>/lib, found relative to the package) are what pip installs.
import atexit
import os
import shutil
import subprocess
import tempfile

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.environ.get("KFORGE_BUILD_DIR", os.path.join(HERE, "..", "build"))


def staged_install():
    """`cmake --install` of the build into a fresh staging prefix; returns it."""
    native = os.path.join(BUILD_DIR, "python", "kforge")
    if not os.path.isdir(native) or not any(name.startswith("_kforge") for name in os.listdir(native)):
        raise SystemExit(f"kforge: no built Python module under '{native}': build kforge first (bash scripts/build.sh) "
                         "or set KFORGE_BUILD_DIR to its CMake build directory")
    stage = tempfile.mkdtemp(prefix="kforge-stage-")
    atexit.register(shutil.rmtree, stage, ignore_errors=True)
    subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", stage], check=True, stdout=subprocess.DEVNULL)
    return stage


STAGE = staged_install()
LIB = os.path.join(STAGE, "lib")


def package_dir():
    """The staged package: lib/pythonX.Y/<dist|site>-packages/kforge."""
    for root, dirs, _ in os.walk(LIB):
        if os.path.basename(root).endswith("-packages") and "kforge" in dirs:
            return os.path.join(root, "kforge")
    raise SystemExit(f"kforge: `cmake --install {BUILD_DIR}` installed no Python package (built with -DKFORGE_PYTHON=OFF?)")


def library_files():
    """(directory under the prefix, files) of lib/ and lib/kforge/plugins: what the package loads relative to itself."""
    plugins = os.path.join(LIB, "kforge", "plugins")
    return [("lib", [os.path.join(LIB, f) for f in sorted(os.listdir(LIB)) if ".so" in f]),
            ("lib/kforge/plugins", [os.path.join(plugins, f) for f in sorted(os.listdir(plugins))])]


class CopyStagedPackage(build_py):
    """Copies the staged package (pure-Python files and the native _kforge) into the wheel."""

    def run(self):
        target = os.path.join(self.build_lib, "kforge")
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(package_dir(), target)


class NativeDistribution(Distribution):
    """A wheel for this Python and platform: the package holds a native module."""

    def has_ext_modules(self):
        return True


setup(packages=["kforge"], package_dir={"kforge": package_dir()}, data_files=library_files(),
      cmdclass={"build_py": CopyStagedPackage}, distclass=NativeDistribution)
