"""Splits OUT/good/model.safetensors (make_checkpoints.py) into two shards
with an index, and writes the ways an index can lie about them.

    make_sharded.py OUT
"""

import json
import os
import shutil
import sys

from safetensors.numpy import load_file, save_file

root = sys.argv[1]
tensors = load_file(os.path.join(root, "good", "model.safetensors"))
names = sorted(tensors)
halves = {"model-00001-of-00002.safetensors": names[: len(names) // 2],
          "model-00002-of-00002.safetensors": names[len(names) // 2:]}


def case(name, weight_map, single=False):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(root, "good", "config.json"), d)
    for shard, members in halves.items():
        save_file({n: tensors[n] for n in members}, os.path.join(d, shard),
                  metadata={"format": "pt"})
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)
    if single:
        shutil.copy(os.path.join(root, "good", "model.safetensors"), d)


honest = {n: shard for shard, members in halves.items() for n in members}
case("sharded", honest)
moved = dict(honest)
moved[names[0]] = "model-00002-of-00002.safetensors"
case("index-wrong-shard", moved)
unlisted = dict(honest)
del unlisted[names[-1]]
case("index-unlisted", unlisted)
ghost = dict(honest, **{"model.layers.9.mlp.up_proj.weight": "model-00001-of-00002.safetensors"})
case("index-ghost", ghost)
# A single file beside a (lying) index: from_pretrained reads the file.
case("single-and-index", moved, single=True)
