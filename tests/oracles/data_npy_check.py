# Loads a token shard with numpy (mmap) and prints: dtype, length, sum and the first 8 values.
import sys

import numpy as np

a = np.load(sys.argv[1], mmap_mode="r")
assert a.ndim == 1, a.shape
print(f"dtype={a.dtype} len={a.shape[0]} sum={int(a.astype(np.int64).sum())} "
      f"head={','.join(str(int(v)) for v in a[:8])}")
