"""Writes a random-weight Hugging Face checkpoint for a config.json, a batch
of tokens with labels (tokens.json, for tfm-run), and a token dataset with
structure to learn (train.npy and held-out.npy, for tfm-train): a random
walk over 64 of the vocabulary's tokens in which each has two possible
successors, drawn once (a bigram language of entropy ln 2 per token).

    make_checkpoint.py CONFIG.json OUT_DIR [--batch 2 --seq 16 --seed 0]
"""

import argparse
import json
import os

import numpy as np
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
    g = torch.Generator().manual_seed(args.seed + 1)
    alphabet = torch.randperm(config.vocab_size, generator=g)[:64]
    successors = {int(t): alphabet[torch.randint(0, 64, (2,), generator=g)].tolist()
                  for t in alphabet}
    for name, length in (("train.npy", 1 << 15), ("held-out.npy", 512)):
        walk = [int(alphabet[0])]
        choice = torch.randint(0, 2, (length - 1,), generator=g)
        for c in choice.tolist():
            walk.append(successors[walk[-1]][c])
        np.save(os.path.join(args.out, name), np.array(walk, dtype=np.uint32))
    print(f"wrote {args.out}: {sum(p.numel() for p in model.parameters()):,} parameters, "
          f"tokens {args.batch}x{args.seq}")


if __name__ == "__main__":
    main()
