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


def rows(tokens, offsets, packed, count=BATCH, mask=None):
    """The first `count` rows as lists of documents (pieces), each a list of
    (id, target) pairs: packed, the concatenation cut every SEQ tokens and at
    document starts; unpacked, one document (its first SEQ tokens) per row.
    A token is a target unless `mask` (the loss mask) says 0."""
    def tok(i):
        return int(tokens[i]), mask is None or bool(mask[i])
    starts = set(offsets.tolist())
    out = []
    if packed:
        for r in range(count):
            pieces, cur = [], []
            for i in range(r * SEQ, (r + 1) * SEQ):
                if i in starts and cur:
                    pieces.append(cur)
                    cur = []
                cur.append(tok(i))
            pieces.append(cur)
            out.append(pieces)
    else:
        for d in range(count):
            out.append([[tok(i) for i in range(int(offsets[d]),
                                               int(min(offsets[d + 1], offsets[d] + SEQ)))]])
    return out


def hf_loss(model, data, packed, count):
    """(sum of losses times targets, targets) of HF on the first `count`
    rows of the prepared folder `data`, one document at a time."""
    meta = json.load(open(os.path.join(data, "meta.json")))
    tokens = np.fromfile(os.path.join(data, "tokens.bin"),
                         dtype=np.dtype(meta["dtype"]).newbyteorder("<"))
    offsets = np.fromfile(os.path.join(data, "offsets.bin"), dtype="<u8")
    mask = (np.fromfile(os.path.join(data, "loss_mask.bin"), dtype=np.uint8)
            if meta["loss_mask"] else None)
    total, targets = 0.0, 0
    with torch.no_grad():
        for pieces in rows(tokens, offsets, packed, count, mask):
            for piece in pieces:
                ids = torch.tensor([[t for t, _ in piece]])
                labels = torch.tensor([[t if target else -100 for t, target in piece]])
                n = int((labels[0, 1:] != -100).sum())
                if n == 0:
                    continue
                total += model(input_ids=ids, labels=labels).loss.item() * n
                targets += n
    return total, targets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfm-train", required=True)
    ap.add_argument("--python-packages", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--no-packing", action="store_true")
    ap.add_argument("--chat", action="store_true",
                    help="chat records (a speech asked, the next one answered) prepared "
                         "with --chat-field: only assistant tokens are targets")
    ap.add_argument("--eval", action="store_true",
                    help="also --eval-data (the bundled held-out text) every update: the "
                         "last evaluation must equal HF's loss of the trained model on "
                         "those rows, and OUT/loss.svg must hold both curves")
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
    if os.environ.get("TFM_ASAN_RUNTIME"):
        # The sanitizer build's extension needs the ASan runtime loaded first.
        env["LD_PRELOAD"] = os.environ["TFM_ASAN_RUNTIME"]
    corpus = os.path.join(ROOT, "examples", "data", "shakespeare-train.txt")
    extra = []
    if args.chat:
        with open(corpus) as f:
            speeches = [p for p in f.read().split("\n\n") if p.strip()][:40]
        corpus = os.path.join(args.workdir, "chat.jsonl")
        with open(corpus, "w") as f:
            for q, a in zip(speeches[::2], speeches[1::2]):
                f.write(json.dumps({"messages": [{"role": "user", "content": q},
                                                 {"role": "assistant", "content": a}]}) + "\n")
        extra = ["--chat-field", "messages"]
    subprocess.run([sys.executable, "-m", "tfm.data", "prepare", corpus,
                    "--tokenizer", ckpt, "--output", data, "--quiet"] + extra, check=True, env=env)
    out = os.path.join(args.workdir, "out")
    cmd = [args.tfm_train, ckpt, "--data", data, "--batch", str(BATCH), "--seq", str(SEQ),
           "--steps", "2", "--lr", "1e-3", "--output-dir", out]
    cmd += ["--no-packing"] if args.no_packing else []
    held = os.path.join(args.workdir, "held")
    if args.eval:
        subprocess.run([sys.executable, "-m", "tfm.data", "prepare",
                        os.path.join(ROOT, "examples", "data", "shakespeare-eval.txt"),
                        "--tokenizer", ckpt, "--output", held, "--quiet"], check=True, env=env)
        cmd += ["--eval-data", held, "--eval-every", "1", "--eval-batches", "2"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode:
        print(run.stdout, run.stderr)
        return 1
    with open(os.path.join(out, "train_log.json")) as f:
        got = json.load(f)["steps"][0]["loss"]

    total, count = hf_loss(model, data, not args.no_packing, BATCH)
    ref = total / count
    mode = ("padded" if args.no_packing else "packed") + (" chat" if args.chat else "")
    print(f"{mode}: first update's loss tfm {got:.7f} hf {ref:.7f} |d| = {abs(got - ref):.2e} "
          f"({count} targets)")
    ok = abs(got - ref) <= 1e-5
    if args.eval:
        log = json.load(open(os.path.join(out, "train_log.json")))["eval"]
        trained = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32).eval()
        total, count = hf_loss(trained, held, not args.no_packing, 2 * BATCH)
        ref = total / count
        last = log[-1]
        print(f"eval: steps {[e['step'] for e in log]}, last loss tfm {last['loss']:.7f} "
              f"hf (trained model) {ref:.7f} |d| = {abs(last['loss'] - ref):.2e}, "
              f"{last['tokens']} tokens (hf {count})")
        ok &= [e["step"] for e in log] == [1, 2] and abs(last["loss"] - ref) <= 1e-5 \
            and last["tokens"] == count
        svg = open(os.path.join(out, "loss.svg")).read()
        curves = svg.count("<polyline")
        print(f"loss.svg: {curves} curves")
        ok &= curves == 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
