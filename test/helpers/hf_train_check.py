"""Checks tfm-train against HF's model trained by torch.optim.

For one family and variant: builds the tiny random-weight HF model of
hf_forward_check.py, saves it, trains it K steps with tfm-train and, from the
same weights and batch, with HF's modeling code, torch.optim.AdamW (or SGD),
torch.nn.utils.clip_grad_norm_ and transformers' own learning-rate
schedules, then compares:

    per-step loss                 |d| <= k * 1e-4 |ref| at update k   (bf16: 3e-2)
    per-step grad_norm            |d| <= k * 2e-4 |ref| at update k   (bf16: 3e-2)
    each tensor's update          |dW_tfm - dW_ref| <= 5% |dW_ref|  (2-norms)
    lr                            |d| <= 1e-12 |ref|

and loads the trained folder with AutoModelForCausalLM.from_pretrained.
Extra checks: --accum (2 micro-batches of half the rows equal the full batch,
weighted by counted tokens as HF's Trainer does with num_items_in_batch),
--resume (2 steps, then 2 resumed ones, bit-identical to 4 straight),
--freeze REGEX (the matched tensors unchanged, bit for bit), --dataset (a
.npy token dataset read in windows).

Usage: hf_train_check.py --family llama --variant llama3 --tfm-train PATH --workdir DIR
Exit status 0 when every check passes.
"""

import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys

os.environ.setdefault("USE_HUB_KERNELS", "NO")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import numpy as np
import torch
from safetensors.torch import load_file
import transformers
from transformers import AutoModelForCausalLM, Trainer
from transformers.optimization import (get_constant_schedule_with_warmup,
                                       get_cosine_schedule_with_warmup,
                                       get_linear_schedule_with_warmup)

transformers.utils.logging.disable_progress_bar()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_forward_check import (MOE_FAMILIES, VARIANTS, build_model,  # noqa: E402
                              store_in_hub_layout, tokens)

SCHEDULES = {"constant": lambda o, w, n: get_constant_schedule_with_warmup(o, w),
             "linear": get_linear_schedule_with_warmup,
             "cosine": get_cosine_schedule_with_warmup}


def reference(args, model, batches, steps):
    """HF + torch: the per-step (loss, grad_norm, lr) and the trained model.
    `batches` is the update's micro-batches [(ids, labels)]; each loss is
    summed over the update's counted tokens (num_items_in_batch)."""
    model = copy.deepcopy(model)
    frozen = re.compile(args.freeze) if args.freeze else None
    for n, p in model.named_parameters():
        if frozen and frozen.search(n):
            p.requires_grad_(False)
    trained = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if args.decay == "hf":
        decayed = set(Trainer.get_decay_parameter_names(None, model))
        groups = [{"params": [p for n, p in trained if n in decayed],
                   "weight_decay": args.weight_decay},
                  {"params": [p for n, p in trained if n not in decayed], "weight_decay": 0.0}]
    else:
        groups = [{"params": [p for _, p in trained], "weight_decay": args.weight_decay}]
    if args.optimizer == "adamw":
        opt = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.999), eps=1e-8)
    else:
        opt = torch.optim.SGD(groups, lr=args.lr, momentum=args.momentum)
    sched = SCHEDULES[args.schedule](opt, args.warmup, steps)
    counted = sum(int((lab[:, 1:] != -100).sum()) for _, lab in batches)
    log = []
    for _ in range(steps):
        total = 0.0
        for ids, lab in batches:
            out = model(input_ids=ids, labels=lab, num_items_in_batch=counted)
            out.loss.backward()
            total += out.loss.item()
        params = [p for _, p in trained]
        norm = torch.nn.utils.clip_grad_norm_(params, args.max_grad_norm if args.max_grad_norm > 0
                                              else float("inf"))
        lr = opt.param_groups[0]["lr"]
        opt.step()
        sched.step()
        opt.zero_grad()
        log.append((total, norm.item(), lr))
    return log, model


def layout(folder):
    """{tensor: (file, dtype)} of a checkpoint folder (sharded or not)."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    return {n: (name, t.dtype) for name in files
            for n, t in load_file(os.path.join(folder, name)).items()}


def train(args, ckpt, tok, out, steps, extra=()):
    cmd = [args.tfm_train, ckpt, "--tokens", tok, "--output-dir", out, "--steps", str(steps),
           "--lr", str(args.lr), "--optimizer", args.optimizer, "--weight-decay",
           str(args.weight_decay), "--decay", args.decay, "--max-grad-norm",
           str(args.max_grad_norm), "--schedule", args.schedule, "--warmup-steps",
           str(args.warmup), "--dtype", args.dtype, "--device", args.device, "--quiet"]
    if args.optimizer == "sgd":
        cmd += ["--momentum", str(args.momentum)]
    if args.freeze:
        cmd += ["--freeze", args.freeze]
    return run_train(cmd + list(extra), out)


def run_train(cmd, out):
    """Runs the tfm-train command line `cmd` (writing `out`); its log."""
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(" ".join(cmd))
        print(run.stdout, run.stderr)
        raise SystemExit(f"FAIL tfm-train exited {run.returncode}")
    with open(os.path.join(out, "train_log.json")) as f:
        return json.load(f)["steps"]


def compare(args, tag, got_log, ref_log, initial, got_dir, ref_model):
    ok = True
    tol = 3e-2 if args.dtype == "bf16" else 1e-4
    for i, (g, (loss, norm, lr)) in enumerate(zip(got_log, ref_log)):
        if g["step"] != i + 1:
            print(f"FAIL {tag}: log entry {i} is step {g['step']}")
            ok = False
        # Step 1 compares one forward and backward from the same weights;
        # each AdamW update after it compounds rounding differences (its
        # normalisation turns tiny gradient differences into full-size update
        # differences), and torch's CPU kernels round differently by ISA: the
        # bound grows by tol per update (qwen3_next/hybrid differs by 1.3e-4 at
        # step 4 on an AVX-512 machine, 0.66e-5 at step 3). The gradient norm
        # moves more than the loss (mixtral/experts: 3.5e-4 at step 3 on an
        # AMD EPYC without AVX-512, its losses within 3e-6): twice the bound.
        t_step = tol * (i + 1) if args.dtype != "bf16" else tol
        for what, a, b, t in (("loss", g["loss"], loss, t_step),
                              ("grad_norm", g["grad_norm"], norm,
                               2 * t_step if args.dtype != "bf16" else t_step),
                              ("lr", g["lr"], lr, 1e-12)):
            if not abs(a - b) <= t * abs(b) + (1e-30 if what == "lr" else 0):
                print(f"FAIL {tag}: step {i + 1} {what} tfm {a:.8g} torch {b:.8g}")
                ok = False
    if len(got_log) != len(ref_log):
        print(f"FAIL {tag}: {len(got_log)} log entries, expected {len(ref_log)}")
        ok = False
    print(f"{tag}: losses tfm " + " ".join(f"{g['loss']:.6f}" for g in got_log))
    print(f"{tag}: losses hf  " + " ".join(f"{l:.6f}" for l, _, _ in ref_log))
    kw = dict(experts_implementation="eager") if args.family in MOE_FAMILIES else {}
    loaded = AutoModelForCausalLM.from_pretrained(got_dir, attn_implementation="eager",
                                                  dtype=torch.float32, **kw)
    got = dict(loaded.named_parameters())
    worst, worst_name = 0.0, ""
    all_diff = all_ref = 0.0
    frozen = re.compile(args.freeze) if args.freeze else None
    for n, ref in ref_model.named_parameters():
        d_ref = (ref.detach() - initial[n]).double()
        d_got = (got[n].detach() - initial[n]).double()
        if frozen and frozen.search(n):
            if not torch.equal(got[n].detach(), initial[n]):
                print(f"FAIL {tag}: frozen {n} changed")
                ok = False
            continue
        all_diff += float((d_got - d_ref).pow(2).sum())
        all_ref += float(d_ref.pow(2).sum())
        if d_ref.norm() == 0:
            rel = 0.0 if d_got.norm() == 0 else float("inf")
        else:
            rel = ((d_got - d_ref).norm() / d_ref.norm()).item()
        if rel > worst:
            worst, worst_name = rel, n
    overall = (all_diff / all_ref) ** 0.5 if all_ref > 0 else 0.0
    print(f"{tag}: {len(got)} tensors loaded by transformers; update |dW_tfm - dW_ref| / "
          f"|dW_ref|: worst tensor {worst:.2e} ({worst_name}), all tensors {overall:.2e}")
    if "bf16" in (args.dtype, args.storage):
        # bf16 rounds gradients by ~0.4%; Adam turns the near-zero gradients
        # of some tensors (e.g. k_proj biases, which softmax nearly cancels)
        # into full-size steps of noisy sign, so only the whole update is
        # held to a bf16 tolerance.
        if overall > 0.1:
            print(f"FAIL {tag}: the update is more than 10% from torch's")
            ok = False
    elif worst > 0.05:
        print(f"FAIL {tag}: an update is more than 5% from torch's")
        ok = False
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", required=True)
    ap.add_argument("--variant", required=True)
    ap.add_argument("--tfm-train", dest="tfm_train", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--optimizer", default="adamw", choices=["adamw", "sgd"])
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--weight-decay", dest="weight_decay", type=float, default=0.01)
    ap.add_argument("--decay", default="all", choices=["all", "hf"])
    ap.add_argument("--max-grad-norm", dest="max_grad_norm", type=float, default=1.0)
    ap.add_argument("--schedule", default="constant", choices=sorted(SCHEDULES))
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16"])
    ap.add_argument("--storage", default="f32", choices=["f32", "bf16", "sharded"],
                    help="checkpoint dtype: bf16 saves must keep f32 master weights "
                         "and write bf16 tensors back")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--freeze")
    ap.add_argument("--accum", action="store_true",
                    help="also: --grad-accum 2 (half the rows each) equals the full batch")
    ap.add_argument("--resume", action="store_true",
                    help="also: 2 steps + 2 resumed equal 4 steps, bit for bit")
    ap.add_argument("--dataset", action="store_true",
                    help="train on a .npy token dataset instead of tokens.json")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    ckpt = os.path.join(args.workdir, "ckpt")
    model = build_model(args.family, args.variant, args.seed)
    if args.dtype == "bf16" or args.storage == "bf16":
        # tfm keeps f32 masters of the bf16 model; torch trains f32 weights
        # that start from the same rounded values.
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.to(torch.bfloat16).float())
    if args.storage == "bf16":
        copy.deepcopy(model).to(torch.bfloat16).save_pretrained(ckpt)
    elif args.storage == "sharded":
        model.save_pretrained(ckpt, max_shard_size="20KB")
    else:
        model.save_pretrained(ckpt)
    # The hub's layout for the Qwen3.5 text models (the one tfm reads their
    # per-expert tensors in); transformers loads it back.
    store_in_hub_layout(args.family, ckpt)
    initial = {n: p.detach().clone() for n, p in model.named_parameters()}
    ids, labels = tokens(model.config.vocab_size, args.seed,
                         VARIANTS[args.family][args.variant].get("_seq", 9))
    extra = []
    if args.dataset:
        # Four windows of T tokens; a micro-batch of 2 reads two of them in
        # order, each its own labels.
        T = ids.shape[1]
        g = torch.Generator().manual_seed(args.seed + 7)
        data = torch.randint(0, model.config.vocab_size, (4 * T,), generator=g)
        tok = os.path.join(args.workdir, "tokens.npy")
        np.save(tok, data.numpy().astype(np.uint16))
        windows = data.view(4, T)
        batches_per_step = [[(windows[2 * s % 4:2 * s % 4 + 2], windows[2 * s % 4:2 * s % 4 + 2])]
                            for s in range(args.steps)]
        extra = ["--batch", "2", "--seq", str(T)]
    else:
        tok = os.path.join(args.workdir, "tokens.json")
        with open(tok, "w") as f:
            json.dump({"input_ids": ids.tolist(), "labels": labels.tolist()}, f)
        batches_per_step = None

    if batches_per_step is None:
        ref_log, ref_model = reference(args, model, [(ids, labels)], args.steps)
    else:
        ref_log, ref_model = reference_dataset(args, model, batches_per_step)
    out = os.path.join(args.workdir, "out")
    got_log = train(args, ckpt, tok, out, args.steps, extra)
    tag = f"{args.family}/{args.variant}/{args.optimizer}/{args.dtype}"
    ok = compare(args, tag, got_log, ref_log, initial, out, ref_model)
    # The trained folder keeps the checkpoint's names, dtypes and shards.
    stored, written = layout(ckpt), layout(out)
    if stored != written:
        print("FAIL the trained checkpoint's files, tensors or dtypes differ from the input's")
        ok = False
    else:
        print(f"{tag}: the trained folder keeps the input's layout ({len(stored)} tensors in "
              f"{len(set(f for f, _ in stored.values()))} file(s))")

    if args.accum:
        # HF's reference for the same update in two micro-batches (row 0 and
        # row 1, whose counted tokens differ) is the same model: tfm must match
        # it as it matched the full batch.
        ref2, ref2_model = reference(args, model, [(ids[:1], labels[:1]), (ids[1:], labels[1:])],
                                     args.steps)
        got2 = train(args, ckpt, tok, out + "-accum", args.steps, extra + ["--grad-accum", "2"])
        ok &= compare(args, tag + "/accum2", got2, ref2, initial, out + "-accum", ref2_model)
        # bf16: each half batch's gradients are rounded before the f32 sum.
        tol = 3e-2 if args.dtype == "bf16" else 1e-5
        same = True
        for a, b in zip(got_log, got2):
            if not abs(a["loss"] - b["loss"]) <= tol * abs(a["loss"]):
                print(f"FAIL accum: step {a['step']} loss {b['loss']} vs full batch {a['loss']}")
                same = False
        if same:
            print(f"{tag}/accum2: losses equal the full batch's within {tol:g}")
        ok &= same

    if args.resume:
        half = args.steps // 2
        res = out + "-resume"
        train(args, ckpt, tok, res, half, extra)
        got3 = train(args, ckpt, tok, res, args.steps, extra + ["--resume"])
        same = [a["loss"] == b["loss"] and a["grad_norm"] == b["grad_norm"]
                for a, b in zip(got_log, got3)]
        w_straight = {n: t for n, t in AutoModelForCausalLM.from_pretrained(out).state_dict().items()}
        w_resumed = {n: t for n, t in AutoModelForCausalLM.from_pretrained(res).state_dict().items()}
        diff = [n for n in w_straight if not torch.equal(w_straight[n], w_resumed[n])]
        if len(got3) != args.steps or not all(same) or diff:
            print(f"FAIL resume: log equal {same}, tensors that differ {diff[:5]}")
            ok = False
        else:
            print(f"{tag}: {half} + {args.steps - half} resumed steps are bit-identical to "
                  f"{args.steps} ({len(w_straight)} tensors, {len(got3)} log entries)")
    return 0 if ok else 1


def reference_dataset(args, model, batches_per_step):
    """reference() with a different batch each step (a dataset)."""
    model = copy.deepcopy(model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=args.weight_decay)
    sched = SCHEDULES[args.schedule](opt, args.warmup, len(batches_per_step))
    log = []
    for batches in batches_per_step:
        (ids, lab), = batches
        out = model(input_ids=ids, labels=lab)
        out.loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        lr = opt.param_groups[0]["lr"]
        opt.step()
        sched.step()
        opt.zero_grad()
        log.append((out.loss.item(), norm.item(), lr))
    return log, model


if __name__ == "__main__":
    sys.exit(main())
