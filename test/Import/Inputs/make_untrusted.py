"""Writes the untrusted-input cases of untrusted-json.test from the tiny
Llama config: one folder per case, each a config.json (and, where the case
is about weights or tokens, a model.safetensors or tokens.json).

    make_untrusted.py TINY_CONFIG.json OUT
"""

import json
import os
import struct
import sys

base = json.load(open(sys.argv[1]))
out = sys.argv[2]
deep = "[" * 100000 + "]" * 100000


def case(name, config_text, files=()):
    os.makedirs(os.path.join(out, name), exist_ok=True)
    with open(os.path.join(out, name, "config.json"), "w", encoding="utf-8") as f:
        f.write(config_text)
    for fname, data in files:
        with open(os.path.join(out, name, fname), "wb") as f:
            f.write(data)


text = json.dumps(base)
case("deep-layer-types", text[:-1] + ', "layer_types": ' + deep + "}")
case("deep-rope", text[:-1] + ', "rope_scaling": {"rope_type": ' + deep + "}}")
case("bom", "\ufeff" + text)
case("nul", text + "\0\0")
case("act-null", json.dumps(dict(base, hidden_act=None)))
case("yarn-no-factor", json.dumps(dict(base, rope_scaling={"rope_type": "yarn"})))
# RoPE parameters HF raises on (log of a negative beta) or that would only
# show up as NaN logits.
yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32}
case("yarn-negative-beta", json.dumps(dict(base, rope_scaling=dict(yarn, beta_fast=-32))))
case("yarn-nan-mscale", json.dumps(dict(base, rope_scaling=dict(yarn, mscale=float("nan"), mscale_all_dim=1))))
case("yarn-inf-attention", json.dumps(dict(base, rope_scaling=dict(yarn, attention_factor=float("inf")))))
phi3 = json.load(open(os.path.join(os.path.dirname(__file__), "phi-3-mini-128k-longrope.json")))
phi3["rope_scaling"]["short_factor"][3] = 0
case("longrope-zero-factor", json.dumps(phi3))
phi3["rope_scaling"]["short_factor"][3] = float("nan")
case("longrope-nan-factor", json.dumps(phi3))
case("many-layers", json.dumps(dict(base, num_hidden_layers=2_000_000_000)))

# A safetensors header whose dtype nests 100,000 deep (printed in the error).
header = ('{"model.norm.weight": {"dtype": ' + deep +
          ', "shape": [1], "data_offsets": [0, 4]}}').encode()
case("deep-dtype", text, [("model.safetensors",
                           struct.pack("<Q", len(header)) + header + b"\0" * 4)])
# A token file nesting one id 100,000 deep.
case("deep-tokens", text, [("tokens.json", ('{"input_ids": ' + deep + "}").encode())])
