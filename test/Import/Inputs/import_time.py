"""Import time and IR size must not grow with the number of layers.

Usage: import_time.py TFM_IMPORT_HF WORKDIR

For each family shape below, writes a 126-layer and a 16-layer config.json
with the same dimensions, imports both, and checks that
  * the IR has the same number of lines, and is the same text once the layer
    count (num_layers, the leading dimension of stacked weights, the
    schedule) is normalised away;
  * the 126-layer import takes at most 1.5x the 16-layer time + 50 ms.
Times are the minimum over interleaved repeats, so a loaded machine slows
both sides alike instead of failing the check.
"""

import json
import os
import re
import subprocess
import sys
import time

SHAPES = {
    # Llama 3.1 405B dimensions (126 layers in the real model).
    "llama": {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": 16384, "intermediate_size": 53248, "vocab_size": 128256,
        "num_attention_heads": 128, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
        "rope_theta": 500000.0, "max_position_embeddings": 131072,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
    },
    # Two layer kinds with a schedule (gemma3: 5 sliding to 1 full).
    "gemma3_text": {
        "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
        "hidden_size": 5376, "intermediate_size": 21504, "vocab_size": 262208,
        "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
        "query_pre_attn_scalar": 168, "sliding_window": 1024, "rope_theta": 1000000.0,
        "rope_local_base_freq": 10000.0, "rope_scaling": {"rope_type": "linear", "factor": 8.0},
    },
}
REPEATS = 7


def normalise(ir, layers):
    ir = re.sub(r"array<i64: [0-9, ]*>", "array<i64: SCHEDULE>", ir)
    ir = ir.replace(f"num_layers = {layers} : i64", "num_layers = L : i64")
    return re.sub(rf"tensor<{layers}x", "tensor<Lx", ir)


def run(tool, path):
    start = time.perf_counter()
    out = subprocess.run([tool, path], check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - start, out


def main():
    tool, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    failed = False
    for family, shape in SHAPES.items():
        paths = {}
        for layers in (126, 16):
            paths[layers] = os.path.join(workdir, f"{family}-{layers}.json")
            with open(paths[layers], "w") as f:
                json.dump(dict(shape, num_hidden_layers=layers), f)
        best = {126: float("inf"), 16: float("inf")}
        irs = {}
        run(tool, paths[16])  # warm the file cache and the dynamic loader
        for _ in range(REPEATS):
            for layers in (16, 126):
                t, irs[layers] = run(tool, paths[layers])
                best[layers] = min(best[layers], t)
        lines = {n: irs[n].count("\n") for n in irs}
        same_text = normalise(irs[126], 126) == normalise(irs[16], 16)
        limit = 1.5 * best[16] + 0.050
        ok_time = best[126] <= limit
        ok = lines[126] == lines[16] and same_text and ok_time
        failed |= not ok
        print(f"{'ok  ' if ok else 'FAIL'} {family}: lines 126={lines[126]} 16={lines[16]}, "
              f"same IR apart from the layer count: {same_text}, "
              f"time 126={best[126] * 1e3:.1f} ms 16={best[16] * 1e3:.1f} ms "
              f"(limit {limit * 1e3:.1f} ms)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
