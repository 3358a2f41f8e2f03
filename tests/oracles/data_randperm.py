# Reference for kforge's sampler: for each seed, one line of
# torch.randperm(n, generator=torch.Generator().manual_seed(seed)). Usage: data_randperm.py N SEED...
import sys

import torch

n = int(sys.argv[1])
for seed in sys.argv[2:]:
    g = torch.Generator()
    g.manual_seed(int(seed))
    print(",".join(str(int(v)) for v in torch.randperm(n, generator=g).tolist()))
