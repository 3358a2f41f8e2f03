"""The oracle harness's own test (tests/support/oracle_test.cpp): prints what this script sees (its arguments, working
directory, the variable KFORGE_ORACLE_PROBE, __name__, torch's default dtype), then, by its first argument, exits
with the status given, raises, or changes torch's default dtype (which the next script must not see).
"""
import os
import sys

import torch

print("argv", sys.argv[1:])
print("cwd", os.getcwd())
print("env", os.environ.get("KFORGE_ORACLE_PROBE"))
print("name", __name__)
print("dtype", torch.get_default_dtype())
mode = sys.argv[1]
if mode == "exit":
    sys.exit(int(sys.argv[2]))
if mode == "raise":
    raise ValueError("probe failure")
if mode == "set_dtype":
    torch.set_default_dtype(torch.float64)
