"""Runs the oracle scripts of one test process with torch and numpy imported once (about 1.5 s each time otherwise).

Started by tests/support/oracle.cpp with pipes on stdin and stdout. Prints "ready" once the imports succeeded. Then,
for each request line on stdin (JSON: script, args, cwd, env, output), it forks a child that runs the script as
`python3 script args...` would (`__main__`, sys.argv, sys.path[0], the test's working directory and environment),
with stdout and stderr written to the output file, and answers with the child's exit status (negative: the signal
that ended it). Each script runs in its own child, so nothing one does (seeds, threads, globals) reaches the next.
Exits when stdin closes.
"""
import os
import sys

os.closerange(3, 1 << 16)  # nothing the test process had open stays open here

import atexit  # noqa: E402
import json  # noqa: E402
import runpy  # noqa: E402
import traceback  # noqa: E402

import numpy  # noqa: E402,F401
import torch  # noqa: E402,F401


def exit_code(error):
    """The status `python3 script` exits with for SystemExit(error.code)."""
    if error.code is None:
        return 0
    if isinstance(error.code, int):
        return error.code
    print(error.code, file=sys.stderr)
    return 1


def run_script(request):
    """In the forked child: runs the script and never returns."""
    code = 1
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(null)
        os.close(out)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        script = request["script"]
        sys.argv = [script] + request["args"]
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as error:
            code = exit_code(error)
        atexit._run_exitfuncs()
    except BaseException:  # noqa: B902  (what python3 would print for an uncaught exception)
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main():
    print("ready", flush=True)
    for line in iter(sys.stdin.readline, ""):
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            run_script(request)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), flush=True)


if __name__ == "__main__":
    main()
