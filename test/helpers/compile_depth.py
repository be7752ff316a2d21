"""The compile time and size of a training step must not grow with depth.

Usage: compile_depth.py CONFIG LAYERS --tfm-import-hf T --tfm-opt O --workdir D
       [--dtype bf16] [--pipeline tfm-train-cuda=chip=sm_90]

Compiles CONFIG as it is and with num_hidden_layers = LAYERS (same
dimensions, so the layer kinds are the same), and checks that the lowered
module differs in size by under 5% (the per-kind layer tables are the only
depth-dependent text) and that the deep compile takes at most 1.5x the
shallow one + 2 s (the minimum of two interleaved runs each).
"""

import argparse
import json
import os
import subprocess
import sys
import time


def compile_once(args, config, tag):
    model = os.path.join(args.workdir, f"{tag}.mlir")
    out = os.path.join(args.workdir, f"{tag}.out.mlir")
    subprocess.run([args.tfm_import_hf, config, "--dtype", args.dtype, "-o", model], check=True)
    start = time.perf_counter()
    subprocess.run([args.tfm_opt, model, f"--{args.pipeline}", "-o", out], check=True)
    seconds = time.perf_counter() - start
    with open(out) as f:
        lines = sum(1 for _ in f)
    return seconds, lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("layers", type=int)
    ap.add_argument("--tfm-import-hf", dest="tfm_import_hf", default="tfm-import-hf")
    ap.add_argument("--tfm-opt", dest="tfm_opt", default="tfm-opt")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--pipeline", default="tfm-train-cuda=chip=sm_90")
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    with open(args.config) as f:
        cfg = json.load(f)
    deep = cfg["num_hidden_layers"]
    shallow_cfg = dict(cfg, num_hidden_layers=args.layers)
    shallow = os.path.join(args.workdir, "shallow.json")
    with open(shallow, "w") as f:
        json.dump(shallow_cfg, f)
    times = {deep: [], args.layers: []}
    lines = {}
    for _ in range(2):
        for n, path in ((deep, args.config), (args.layers, shallow)):
            t, lines[n] = compile_once(args, path, f"l{n}")
            times[n].append(t)
    t_deep, t_shallow = min(times[deep]), min(times[args.layers])
    size_ok = abs(lines[deep] - lines[args.layers]) < 0.05 * lines[args.layers]
    time_ok = t_deep <= 1.5 * t_shallow + 2.0
    print(f"{'ok  ' if size_ok else 'FAIL'} lines {deep} layers: {lines[deep]}, "
          f"{args.layers} layers: {lines[args.layers]}")
    print(f"{'ok  ' if time_ok else 'FAIL'} compile {deep} layers: {t_deep:.1f} s, "
          f"{args.layers} layers: {t_shallow:.1f} s")
    sys.exit(0 if size_ok and time_ok else 1)


if __name__ == "__main__":
    main()
