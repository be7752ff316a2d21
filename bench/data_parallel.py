"""Data-parallel scaling of tfm-train on CPU: 2 MPI ranks against 1 process.

Writes the Llama-style bench model (bench/bench_model.py, random weights)
and a random token dataset, then trains the same global batch (2
micro-batches of --batch x --seq per update) three ways, each rank with
--threads BLAS threads:

  - 1 process with --grad-accum 2,
  - mpirun.mpich -np 2 with --grad-accum 1 (one micro-batch a rank),
  - the same with --zero 1 (optimizer state sharded).

Prints, side by side, the median update time and tokens/s (updates after
the first), the 2-rank scaling (its tokens/s over 1 process's), the
collectives' share of the 2-rank update (train_log.json's communication_ms)
and the peak RSS of the largest rank.

    python bench/data_parallel.py [--hidden 512 --layers 8 --batch 4 --seq 256 --steps 6 --threads 1]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile

import numpy as np
import torch
from transformers import AutoModelForCausalLM

from bench_model import add_model_args, llama_config


def run(cmd, out, threads):
    """Runs tfm-train (or mpirun over it), each tfm-train under
    /usr/bin/time; its log and every process's peak RSS, in MiB."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    with open(os.path.join(out, "train_log.json")) as f:
        steps = json.load(f)["steps"]
    rss = [int(line.split()[-1]) / 1024 for line in proc.stderr.splitlines()
           if line.startswith("tfm-train peak RSS KiB")]
    return steps, rss


def main():
    ap = argparse.ArgumentParser()
    add_model_args(ap)
    ap.add_argument("--steps", type=int, default=6)
    build = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin")
    ap.add_argument("--tfm-train", default=os.path.join(build, "tfm-train"))
    ap.add_argument("--mpirun", default=shutil.which("mpirun.mpich") or "mpirun.mpich")
    args = ap.parse_args()
    cfg = llama_config(args)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg).float()
    params = sum(p.numel() for p in model.parameters())
    tokens = 2 * args.batch * args.seq  # per update
    with tempfile.TemporaryDirectory() as d:
        ckpt = os.path.join(d, "ckpt")
        model.save_pretrained(ckpt)
        data = os.path.join(d, "data.bin")
        rng = np.random.default_rng(0)
        rng.integers(0, args.vocab, size=tokens * (args.steps + 1) + 1).astype("<u2").tofile(data)
        timed = ["/usr/bin/time", "-f", "tfm-train peak RSS KiB %M", args.tfm_train]
        base = timed + [ckpt, "--tokens", data, "--batch", str(args.batch), "--seq",
                str(args.seq), "--steps", str(args.steps), "--lr", "1e-4", "--quiet"]
        mpi = [args.mpirun, "-np", "2"]
        runs = [("1 process, --grad-accum 2", [] + base + ["--grad-accum", "2"]),
                ("2 ranks", mpi + base),
                ("2 ranks, --zero 1", mpi + base + ["--zero", "1"])]
        rows = []
        for i, (name, cmd) in enumerate(runs):
            out = os.path.join(d, f"out{i}")
            steps, rss = run(cmd + ["--output-dir", out], out, args.threads)
            ms = statistics.median(s["ms"] for s in steps[1:])
            comm = statistics.median(s.get("communication_ms", 0) for s in steps[1:])
            rows.append((name, ms, tokens / (ms / 1000), comm, sorted(rss)))
    print(f"bench model: hidden {args.hidden}, {args.layers} layers, {params / 1e6:.1f}M parameters; "
          f"global batch 2 x {args.batch} x {args.seq} tokens; {args.threads} BLAS thread(s) per rank")
    print(f"{'run':28s} {'update ms':>10s} {'tokens/s':>10s} {'vs 1 process':>13s} "
          f"{'collectives':>12s}  peak RSS per rank")
    for name, ms, tps, comm, rss in rows:
        share = f"{100 * comm / ms:.1f}%" if comm else "-"
        print(f"{name:28s} {ms:10.1f} {tps:10.0f} {tps / rows[0][2]:12.2f}x {share:>12s}  "
              + ", ".join(f"{r:.0f}" for r in rss) + " MiB")


if __name__ == "__main__":
    main()
