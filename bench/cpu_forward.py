"""Tokens/s of tfm-run (CPU JIT) against the same model in PyTorch.

Writes a random-weight Llama-style checkpoint with transformers, times
HF's forward (eager attention, f32, no grad) and tfm-run's compiled step on
the same tokens, and prints both and their ratio (fastest of --repeat runs,
same thread count for both). With --train, both sides run the training step
instead: loss and every parameter gradient (torch autograd vs --grads).

    python bench/cpu_forward.py [--train] [--no-fusion] [--no-logits] [--hidden 512 --layers 8 --batch 4 --seq 256]
"""

import argparse
import json
import os
import re
import subprocess
import tempfile
import time

import torch
from transformers import AutoModelForCausalLM

from bench_model import add_model_args, llama_config


def main():
    ap = argparse.ArgumentParser()
    add_model_args(ap)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--train", action="store_true", help="time forward + backward")
    ap.add_argument("--no-fusion", action="store_true",
                    help="tfm-run --no-fusion (the HF-literal IR) for comparison")
    ap.add_argument("--no-logits", action="store_true",
                    help="tfm-run --no-logits (the fused LM-head loss; --train only)")
    ap.add_argument("--tfm-run", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "tfm-run"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = llama_config(args)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").float().eval()
    params = sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, args.vocab, (args.batch, args.seq))
    tokens = args.batch * args.seq
    with tempfile.TemporaryDirectory() as d:
        model.save_pretrained(d)
        with open(os.path.join(d, "tokens.json"), "w") as f:
            json.dump({"input_ids": ids.tolist(), "labels": ids.tolist()}, f)
        best = 1e30
        for _ in range(args.repeat):
            model.zero_grad()
            t0 = time.perf_counter()
            if args.train:
                model(input_ids=ids, labels=ids).loss.backward()
            else:
                with torch.no_grad():
                    model(input_ids=ids, labels=ids)
            best = min(best, time.perf_counter() - t0)
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.threads))
        out = subprocess.run([args.tfm_run, d, "--tokens", os.path.join(d, "tokens.json"),
                              "--output", os.path.join(d, "out.st"), "--repeat", str(args.repeat)]
                             + (["--grads"] if args.train else [])
                             + (["--no-fusion"] if args.no_fusion else [])
                             + (["--no-logits"] if args.no_logits else []),
                             capture_output=True, text=True, env=env, check=True).stdout
        ms = float(re.search(r"(?:run|step) ([0-9.]+) ms", out).group(1))
    print(("training step (forward + backward), " if args.train else "forward, ") +
          f"Llama-style {params / 1e6:.1f}M parameters, {args.layers} layers, hidden {args.hidden}, "
          f"{args.batch}x{args.seq} tokens, {args.threads} thread(s)")
    print(f"  torch (HF eager) {best * 1e3:9.1f} ms  {tokens / best:10.0f} tokens/s")
    mode = "unfused" if args.no_fusion else "fused"
    mode += ", loss only" if args.no_logits else ""
    print(f"  tfm-run ({mode}) {ms:9.1f} ms  {tokens / (ms / 1e3):10.0f} tokens/s")
    print(f"  ratio tfm/torch  {best * 1e3 / ms:9.2f}x")


if __name__ == "__main__":
    main()
