"""Writes the --inputs files of entry-checks.test into OUT: for each entry
function of entry-functions.mlir arguments that fit (…-good.in) and ones
that break what its generated code assumes (…-bad.in and others).

    make_entry_inputs.py OUT
"""

import os
import sys

import numpy as np
from safetensors.numpy import save_file

out = sys.argv[1]


def save(name, *args):
    save_file({f"arg{i}": np.ascontiguousarray(a) for i, a in enumerate(args)},
              os.path.join(out, name))


f32 = np.float32
save("add-good.in", np.ones((2, 4), f32), np.ones((2, 4), f32))
save("add-bad.in", np.ones((2, 4), f32), np.ones((2, 5), f32))
table = np.arange(64, dtype=f32).reshape(16, 4)
save("embed-good.in", np.array([[0, 5, 15]], np.int64), table)
save("embed-bad.in", np.array([[0, 5, 15], [-100000000, 1, 2]], np.int64), table)
logits = np.zeros((1, 2, 16), f32)
save("loss-good.in", logits, np.array([[3, -100]], np.int64))
save("loss-bad.in", logits, np.array([[3, 16]], np.int64))
# Labels for one sequence, logits for two: the loss reads labels at every
# row of the logits.
save("loss-short.in", np.zeros((2, 2, 16), f32), np.array([[3, -100]], np.int64))
t = 1 << 20
qkv = np.zeros((1, t, 1, 1), f32)
save("attention-long.in", qkv, qkv, qkv)
