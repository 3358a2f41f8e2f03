# random_tokens.py VOCAB COUNT OUT.npy: COUNT uniform random token ids below VOCAB (seed 0, uint16) for the benchmarks.
import sys

import numpy as np

vocab, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
np.save(out, np.random.default_rng(0).integers(0, vocab, size=count, dtype=np.int64).astype(np.uint16))
