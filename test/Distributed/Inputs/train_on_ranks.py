"""tfm.train as every rank of `mpirun.mpich -np N` runs it: the same call
on each; prints (rank 0 only) the losses it returns.

    train_on_ranks.py CKPT TOKENS OUT [zero]"""

import os
import sys

import tfm

ckpt, tokens, out = sys.argv[1:4]
zero = int(sys.argv[4]) if len(sys.argv) > 4 else 0
log = tfm.train(ckpt, tokens, out, steps=3, lr=1e-2, zero=zero, progress=False)
if os.environ.get("PMI_RANK", "0") == "0":
    print("losses", " ".join(repr(entry["loss"]) for entry in log))
