"""tfm-train --data against Hugging Face: the first update's loss on a
prepared corpus equals HF's on the same rows, cut into their documents by
this script (from offsets.bin, independently of tfm's packing) and run one
document at a time, combined by target count.

    data_train_check.py --tfm-train PATH --python-packages DIR --workdir DIR [--no-packing]

Makes a tiny random Llama with the examples' tokenizer, prepares the
bundled corpus with `python -m tfm.data prepare`, trains 2 updates of 2
rows x 48 tokens, and compares train_log.json's first loss (|d| <= 1e-5).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

os.environ.setdefault("USE_HUB_KERNELS", "NO")

import numpy as np
import torch
from transformers import AutoModelForCausalLM, LlamaConfig

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BATCH, SEQ = 2, 48


def rows(tokens, offsets, packed):
    """The first BATCH rows as lists of documents (pieces), each a list of
    ids: packed, the concatenation cut every SEQ tokens and at document
    starts; unpacked, one document (its first SEQ tokens) per row."""
    starts = set(offsets.tolist())
    out = []
    if packed:
        for r in range(BATCH):
            pieces, cur = [], []
            for i in range(r * SEQ, (r + 1) * SEQ):
                if i in starts and cur:
                    pieces.append(cur)
                    cur = []
                cur.append(int(tokens[i]))
            pieces.append(cur)
            out.append(pieces)
    else:
        for d in range(BATCH):
            out.append([[int(t) for t in tokens[offsets[d]:min(offsets[d + 1], offsets[d] + SEQ)]]])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfm-train", required=True)
    ap.add_argument("--python-packages", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--no-packing", action="store_true")
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    ckpt = os.path.join(args.workdir, "ckpt")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=512, hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         tie_word_embeddings=True)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager").float().eval()
    model.save_pretrained(ckpt)
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "make_tokenizer.py"), ckpt],
                   check=True, capture_output=True)
    data = os.path.join(args.workdir, "data")
    env = dict(os.environ, PYTHONPATH=args.python_packages)
    subprocess.run([sys.executable, "-m", "tfm.data", "prepare",
                    os.path.join(ROOT, "examples", "data", "shakespeare-train.txt"),
                    "--tokenizer", ckpt, "--output", data, "--quiet"], check=True, env=env)
    out = os.path.join(args.workdir, "out")
    cmd = [args.tfm_train, ckpt, "--data", data, "--batch", str(BATCH), "--seq", str(SEQ),
           "--steps", "2", "--lr", "1e-3", "--output-dir", out]
    cmd += ["--no-packing"] if args.no_packing else []
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode:
        print(run.stdout, run.stderr)
        return 1
    with open(os.path.join(out, "train_log.json")) as f:
        got = json.load(f)["steps"][0]["loss"]

    meta = json.load(open(os.path.join(data, "meta.json")))
    tokens = np.fromfile(os.path.join(data, "tokens.bin"),
                         dtype=np.dtype(meta["dtype"]).newbyteorder("<"))
    offsets = np.fromfile(os.path.join(data, "offsets.bin"), dtype="<u8")
    total, count = 0.0, 0
    with torch.no_grad():
        for pieces in rows(tokens, offsets, not args.no_packing):
            for piece in pieces:
                if len(piece) < 2:
                    continue
                ids = torch.tensor([piece])
                loss = model(input_ids=ids, labels=ids).loss.item()
                total += loss * (len(piece) - 1)
                count += len(piece) - 1
    ref = total / count
    mode = "padded" if args.no_packing else "packed"
    print(f"{mode}: first update's loss tfm {got:.7f} hf {ref:.7f} |d| = {abs(got - ref):.2e} "
          f"({count} targets)")
    return 0 if abs(got - ref) <= 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
