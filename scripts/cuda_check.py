#!/usr/bin/env python3
"""The CUDA compile check: compiles, as a CUDA build of kforge would (KFORGE_WITH_CUDA, USE_C10D_NCCL), every
translation unit whose code depends on it, against this LibTorch's headers and the CUDA toolkit's, for syntax and
types only (-fsyntax-only: there is no CUDA LibTorch here to link). A unit depends on it when it mentions
KFORGE_WITH_CUDA, a LibTorch version guard or a CUDA/NCCL header, or is the first unit including a header that does.
Each unit gets its own target's flags, from the build's compile_commands.json. scripts/test.sh runs it after the
build; it says SKIPPED (and succeeds) on a machine without the CUDA toolkit.

    python3 scripts/cuda_check.py [BUILD_DIR]     (CUDA_HOME: the toolkit, default /usr/local/cuda)
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKERS = re.compile(r"KFORGE_WITH_CUDA|TORCH_VERSION_MAJOR|c10/cuda/|ATen/cuda/|ProcessGroupNCCL")
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]', re.M)


def sources(folders, suffix):
    for folder in folders:
        for base, _, names in os.walk(os.path.join(ROOT, folder)):
            for name in sorted(names):
                if name.endswith(suffix):
                    yield os.path.join(base, name)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def guarded_units():
    units = [p for p in sources(["core", "plugins"], ".cpp") if MARKERS.search(read(p))]
    for header in sources(["core", "plugins", "sdk/include"], ".h"):
        if not MARKERS.search(read(header)):
            continue
        for unit in sorted(sources(["core", "plugins"], ".cpp")):
            if any(header.endswith("/" + inc) for inc in INCLUDE.findall(read(unit))):
                if unit not in units:
                    units.append(unit)
                break
    return sorted(units)


def commands_by_unit(build_dir):
    """Each source's compile command (a unity batch's command stands for each source it includes)."""
    out = {}
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    for e in entries:
        args = shlex.split(e["command"])
        members = [e["file"]]
        if "/Unity/" in e["file"]:
            members = [os.path.realpath(m) for m in INCLUDE.findall(read(e["file"]))]
        for m in members:
            out.setdefault(os.path.realpath(m), (e["directory"], args))
    return out


def check_command(args, unit, cuda_home):
    cmd, skip = [], False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in ("-o", "-c", "-include") and i + 1 < len(args):  # output, input, the precompiled header
            skip = True
            continue
        if a == "-Winvalid-pch":
            continue
        cmd.append(a)
    return cmd + ["-DKFORGE_WITH_CUDA", "-DUSE_C10D_NCCL", "-I" + os.path.join(ROOT, "cmake/cuda_check_include"),
                  "-isystem", os.path.join(cuda_home, "include"), "-fsyntax-only", unit]


def main():
    build_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("KFORGE_BUILD_DIR", "build"))
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    needed = [os.path.join(cuda_home, "include", h) for h in ("cuda_runtime_api.h", "nccl.h")]
    if not all(os.path.exists(h) for h in needed):
        print(f"cuda check: SKIPPED: no CUDA toolkit with NCCL headers at {cuda_home} (set CUDA_HOME)")
        return 0
    commands = commands_by_unit(build_dir)
    units = guarded_units()
    missing = [u for u in units if os.path.realpath(u) not in commands]
    if missing:
        print("cuda check: no compile command for " + ", ".join(os.path.relpath(u, ROOT) for u in missing) +
              f" in {build_dir}/compile_commands.json (build kforge first)")
        return 1
    start = time.monotonic()

    def compile_unit(unit):
        directory, args = commands[os.path.realpath(unit)]
        run = subprocess.run(check_command(args, unit, cuda_home), cwd=directory, capture_output=True, text=True)
        return unit, run.returncode, run.stderr

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for unit, rc, err in pool.map(compile_unit, units):
            print(f"cuda check: {os.path.relpath(unit, ROOT)}: {'ok' if rc == 0 else 'FAILED'}")
            if rc != 0:
                failed += 1
                sys.stdout.write(err)
    print(f"cuda check: {len(units) - failed} of {len(units)} CUDA-dependent units compile as a CUDA build "
          f"(CUDA headers {cuda_home}, {time.monotonic() - start:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
