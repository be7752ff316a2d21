"""Checks tfm-run's evaluation loss over a token dataset against Hugging
Face's own modeling code.

Builds a tiny random-weight Llama (eager attention, f32, CPU) and a .npy
dataset of random uint16 ids, runs `tfm-run --tokens data.npy --batch B
--seq T --batches N`, and compares its loss with HF's over the same N
batches (consecutive windows of T ids, B per batch, each its own labels):
the sum of every batch's cross-entropy over the counted tokens, divided by
their count, as one large batch would give it.

    loss  |d| <= 1e-5 |ref|

Usage: hf_eval_check.py --tfm-run PATH --workdir DIR
"""

import argparse
import os
import re
import subprocess
import sys

os.environ.setdefault("USE_HUB_KERNELS", "NO")

import numpy as np
import torch
from transformers import LlamaConfig, LlamaForCausalLM


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfm-run", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=64, pad_token_id=None, bos_token_id=None,
                         eos_token_id=None, attn_implementation="eager")
    model = LlamaForCausalLM(config).float().eval()
    ckpt = os.path.join(args.workdir, "ckpt")
    model.save_pretrained(ckpt)
    batch, seq, batches = 2, 9, 3
    ids = np.random.default_rng(0).integers(0, 96, size=batch * seq * batches + 5)
    data = os.path.join(args.workdir, "data.npy")
    np.save(data, ids.astype(np.uint16))

    total, counted = 0.0, 0
    with torch.no_grad():
        for b in range(batches):
            window = torch.tensor(ids[b * batch * seq:(b + 1) * batch * seq].reshape(batch, seq))
            loss = model(input_ids=window, labels=window).loss.item()
            n = batch * (seq - 1)  # every shifted label counts
            total += loss * n
            counted += n
    ref = total / counted

    out = subprocess.run([args.tfm_run, ckpt, "--tokens", data, "--batch", str(batch), "--seq",
                          str(seq), "--batches", str(batches)],
                         check=True, capture_output=True, text=True).stdout
    got = float(re.search(r"loss ([0-9.]+) over 3 batches of 2x9 \((\d+) counted", out).group(1))
    ok = abs(got - ref) <= 1e-5 * abs(ref)
    print(f"{'OK' if ok else 'FAIL'} evaluation loss tfm {got:.6f} hf {ref:.6f} over {batches} "
          f"batches of {batch}x{seq} ({counted} counted tokens)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
