"""Data-parallel tfm-train against one process: a tiny random HF model of
`--family`/`--variant` (hf_forward_check's), a batch of 2 rows split into
2 micro-batches, trained

  - under `mpirun.mpich -np 2` with --grad-accum 1 (one micro-batch a rank),
  - in one process with --grad-accum 2 (the same micro-batches in turn),
  - in one process with the whole batch in one micro-batch,

and compared: the first two must give byte-identical model.safetensors and
identical per-step losses and gradient norms (the two ranks' gradient sum
is the one addition one process makes), the third must agree within the
accumulation tolerance (1e-5 of each loss, as hf_train_check's --accum).

    dp_train_check.py --family llama --variant tied_linear --tfm-train T \\
        --mpirun mpirun.mpich --workdir DIR [--ignored-rank] [--resume]
        [--zero]

--ignored-rank: row 1's labels are all -100, so rank 1 counts no token
(it adds zeros). --resume: also 2 updates then 2 resumed ones under 2 ranks,
byte-identical to 4 straight, and the 2-rank save resumed by one process
with --grad-accum 2 (the same micro-batches per update). --zero: the
2-rank runs also with --zero 1, byte-identical without clipping."""

import argparse
import json
import os
import shutil
import subprocess
import sys

os.environ.setdefault("USE_HUB_KERNELS", "NO")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import torch  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_forward_check import build_model, store_in_hub_layout, tokens  # noqa: E402

STEPS = 4


def run(cmd, out, expect_ok=True):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        print(" ".join(cmd))
        print(proc.stdout, proc.stderr)
        raise SystemExit(f"FAIL {os.path.basename(out)}: exit {proc.returncode}")
    with open(os.path.join(out, "train_log.json")) as f:
        return json.load(f)["steps"], proc.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", required=True)
    ap.add_argument("--variant", required=True)
    ap.add_argument("--tfm-train", dest="tfm_train", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--ignored-rank", dest="ignored_rank", action="store_true")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--zero", action="store_true")
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    ckpt = os.path.join(args.workdir, "ckpt")
    model = build_model(args.family, args.variant, seed=0)
    model.save_pretrained(ckpt)
    store_in_hub_layout(args.family, ckpt)
    ids, labels = tokens(model.config.vocab_size, seed=0)
    if args.ignored_rank:
        labels[1, :] = -100
    tok = os.path.join(args.workdir, "tokens.json")
    with open(tok, "w") as f:
        json.dump({"input_ids": ids.tolist(), "labels": labels.tolist()}, f)

    def train(name, accum, ranks=1, extra=(), steps=STEPS):
        out = os.path.join(args.workdir, name)
        cmd = [args.tfm_train, ckpt, "--tokens", tok, "--output-dir", out, "--steps",
               str(steps), "--lr", "1e-2", "--grad-accum", str(accum)] + list(extra)
        if ranks > 1:
            cmd = [args.mpirun, "-np", str(ranks)] + cmd
        log, stdout = run(cmd, out)
        return out, log, stdout

    def same_run(a, b):
        """Byte-identical model files and identical logs, or what differs."""
        with open(os.path.join(a[0], "model.safetensors"), "rb") as f:
            wa = f.read()
        with open(os.path.join(b[0], "model.safetensors"), "rb") as f:
            wb = f.read()
        keys = ("step", "loss", "grad_norm", "tokens", "counted_tokens")
        la = [{k: s.get(k) for k in keys} for s in a[1]]
        lb = [{k: s.get(k) for k in keys} for s in b[1]]
        if wa != wb:
            return "model.safetensors differs"
        if la != lb:
            return f"logs differ: {la} vs {lb}"
        return None

    ok = True
    tag = f"{args.family}/{args.variant}"
    ranks2 = train("ranks2", accum=1, ranks=2)
    start = next(l for l in ranks2[2].splitlines() if "ranks" in l)
    print("start line:", start[start.index("on cpu"):start.index(" (compile")])
    accum2 = train("accum2", accum=2)
    why = same_run(ranks2, accum2)
    if why:
        print(f"FAIL {tag}: 2 ranks vs --grad-accum 2: {why}")
        ok = False
    else:
        print(f"{tag}: 2 ranks x 1 micro-batch == 1 process x --grad-accum 2, "
              f"byte for byte ({STEPS} updates)")

    if not args.ignored_rank:
        whole = train("whole", accum=1)
        worst = max(abs(a["loss"] - b["loss"]) / abs(b["loss"])
                    for a, b in zip(ranks2[1], whole[1]))
        if worst > 1e-5:
            print(f"FAIL {tag}: vs the whole batch: loss {worst:.2e}")
            ok = False
        else:
            print(f"{tag}: vs the whole batch in one micro-batch: losses within 1e-5 "
                  f"(worst {worst:.1e})")
    else:
        counted = [s["counted_tokens"] for s in ranks2[1]]
        print(f"{tag}: rank 1 counted no token; counted per update {counted}")

    if args.resume:
        half = train("resume", accum=1, ranks=2, steps=STEPS // 2)
        resumed = train("resume", accum=1, ranks=2, extra=["--resume"])
        why = same_run(resumed, ranks2)
        print(f"FAIL {tag}: 2-rank resume: {why}" if why else
              f"{tag}: 2 + 2 resumed updates on 2 ranks == 4 straight, byte for byte")
        ok &= why is None and len(half[1]) == STEPS // 2
        # The 2-rank save continued by one process reading the same
        # micro-batches per update (2 x 1 == 1 x 2).
        train("cross", accum=1, ranks=2, steps=STEPS // 2)
        crossed = train("cross", accum=2, extra=["--resume"])
        why = same_run(crossed, ranks2)
        print(f"FAIL {tag}: 2-rank save resumed by one process: {why}" if why else
              f"{tag}: a 2-rank save resumed by one process with --grad-accum 2 == "
              f"4 straight, byte for byte")
        ok &= why is None

    if args.zero:
        for clip, name in (("0", "noclip"), ("1.0", "clip")):
            plain = train(f"dp-{name}", accum=1, ranks=2, extra=["--max-grad-norm", clip])
            zero = train(f"zero-{name}", accum=1, ranks=2,
                         extra=["--max-grad-norm", clip, "--zero", "1"])
            why = same_run(zero, plain)
            if why and clip == "0":
                print(f"FAIL {tag}: --zero 1 without clipping: {why}")
                ok = False
            elif why:
                wa = load_file(os.path.join(zero[0], "model.safetensors"))
                wb = load_file(os.path.join(plain[0], "model.safetensors"))
                wdiff = max(float((wa[n] - wb[n]).abs().max()) for n in wb)
                if wdiff > 1e-6:
                    print(f"FAIL {tag}: --zero 1 with clipping: max|dW| {wdiff:.2e}")
                    ok = False
                else:
                    print(f"{tag}: --zero 1 with clipping: max|dW| {wdiff:.1e} <= 1e-6")
            else:
                print(f"{tag}: --zero 1 {'without' if clip == '0' else 'with'} clipping "
                      f"== plain data parallel, byte for byte")
    return 0 if ok else 1


if __name__ == "__main__":
    torch.set_num_threads(1)
    sys.exit(main())
