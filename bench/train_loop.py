"""Training-loop throughput of tfm-train against HF + torch.optim.AdamW on CPU.

Writes the Llama-style bench model of bench/cpu_forward.py (random weights)
with transformers, then trains it --steps updates on the same batch both
ways: HF's model with torch autograd, clip_grad_norm_(1.0) and
torch.optim.AdamW (its default CPU implementation), and tfm-train (the
compiled loss-only fused step, then the compiled optimizer step). Prints,
side by side, the median update time and tokens/s (updates after the
first, which includes compilation on the tfm side and warm-up on torch's),
and the optimizer step alone (clip + AdamW for torch; tfm's
@forward_optimizer_step: norm, clip and every update, including passing
the parameters and state in and out).

    python bench/train_loop.py [--hidden 512 --layers 8 --batch 4 --seq 256 --steps 6 --threads 1]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import torch
from transformers import AutoModelForCausalLM

from bench_model import add_model_args, llama_config


def main():
    ap = argparse.ArgumentParser()
    add_model_args(ap)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--tfm-train", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                        "bin", "tfm-train"))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = llama_config(args)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").float()
    params = sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, args.vocab, (args.batch, args.seq))
    tokens = args.batch * args.seq
    with tempfile.TemporaryDirectory() as d:
        model.save_pretrained(os.path.join(d, "ckpt"))
        with open(os.path.join(d, "tokens.json"), "w") as f:
            json.dump({"input_ids": ids.tolist(), "labels": ids.tolist()}, f)

        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
        update, optimizer = [], []
        for _ in range(args.steps):
            t0 = time.perf_counter()
            model(input_ids=ids, labels=ids).loss.backward()
            t1 = time.perf_counter()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            t2 = time.perf_counter()
            update.append(t2 - t0)
            optimizer.append(t2 - t1)

        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.threads))
        out = os.path.join(d, "out")
        subprocess.run([args.tfm_train, os.path.join(d, "ckpt"), "--tokens",
                        os.path.join(d, "tokens.json"), "--output-dir", out, "--steps",
                        str(args.steps), "--lr", "1e-4", "--quiet"], env=env, check=True)
        with open(os.path.join(out, "train_log.json")) as f:
            log = json.load(f)["steps"]
    t_upd = statistics.median(update[1:])
    t_opt = statistics.median(optimizer[1:])
    f_upd = statistics.median(s["ms"] for s in log[1:]) / 1e3
    f_opt = statistics.median(s["optimizer_ms"] for s in log[1:]) / 1e3
    print(f"training loop (AdamW, clip 1.0), Llama-style {params / 1e6:.1f}M parameters, "
          f"{args.layers} layers, hidden {args.hidden}, {args.batch}x{args.seq} tokens, "
          f"{args.threads} thread(s), median of updates 2..{args.steps}")
    print(f"                         {'HF + torch':>14} {'tfm-train':>14} {'tfm/torch':>10}")
    print(f"  update (ms)            {t_upd * 1e3:14.1f} {f_upd * 1e3:14.1f} {t_upd / f_upd:9.2f}x")
    print(f"  tokens/s               {tokens / t_upd:14.0f} {tokens / f_upd:14.0f}")
    print(f"  optimizer step (ms)    {t_opt * 1e3:14.1f} {f_opt * 1e3:14.1f} {t_opt / f_opt:9.2f}x")


if __name__ == "__main__":
    main()
