"""Variants of OUT/good (make_checkpoints.py) with the tensors a checkpoint
may store beyond the parameters: a tied head saved beside the embedding
(of the right or a wrong shape or dtype) and RoPE caches (where old HF
checkpoints put them, or elsewhere).

    make_stored_extras.py OUT
"""

import json
import os
import sys

import numpy as np
from safetensors.numpy import load_file, save_file

root = sys.argv[1]
good = load_file(os.path.join(root, "good", "model.safetensors"))
config = json.load(open(os.path.join(root, "good", "config.json")))


def case(name, tensors, tied):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(dict(config, tie_word_embeddings=tied), f)
    save_file(tensors, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})


head = good["lm_head.weight"]
case("tied-copy", dict(good, **{"lm_head.weight": good["model.embed_tokens.weight"]}), True)
case("tied-wrong-shape", dict(good, **{"lm_head.weight": head[:, :4].copy()}), True)
case("tied-wrong-dtype", dict(good, **{"lm_head.weight": head.astype(np.int64)}), True)
inv = np.ones(2, dtype=np.float32)
case("rope-cache", dict(good, **{"model.layers.0.self_attn.rotary_emb.inv_freq": inv,
                                "model.rotary_emb.inv_freq": inv}), False)
case("rope-elsewhere", dict(good, **{"model.layers.0.mlp.rotary_emb.inv_freq": inv}), False)
case("rope-matrix", dict(good, **{"model.rotary_emb.inv_freq": np.ones((2, 2), np.float32)}), False)
