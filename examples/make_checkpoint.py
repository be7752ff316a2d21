"""Writes a random-weight Hugging Face checkpoint for a config.json, and a
batch of tokens with labels, so tfm-run has something real to run.

    make_checkpoint.py CONFIG.json OUT_DIR [--batch 2 --seq 16 --seed 0]
"""

import argparse
import json
import os

import torch
from transformers import AutoConfig, AutoModelForCausalLM


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("out")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    config = AutoConfig.from_pretrained(args.config)
    model = AutoModelForCausalLM.from_config(config).float()
    os.makedirs(args.out, exist_ok=True)
    model.save_pretrained(args.out)
    ids = torch.randint(0, config.vocab_size, (args.batch, args.seq))
    with open(os.path.join(args.out, "tokens.json"), "w") as f:
        json.dump({"input_ids": ids.tolist(), "labels": ids.tolist()}, f)
    print(f"wrote {args.out}: {sum(p.numel() for p in model.parameters()):,} parameters, "
          f"tokens {args.batch}x{args.seq}")


if __name__ == "__main__":
    main()
