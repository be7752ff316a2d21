"""Checks tfm-train's LoRA against HF PEFT.

For one family and variant: the tiny random-weight HF model of
hf_forward_check.py and a seeded LoRA adapter written by PEFT itself
(get_peft_model, then A and B drawn at random so that both get gradients,
save_pretrained). From the same base, adapter and batch, trains K AdamW
updates with tfm-train --lora-init and with PeftModel + torch.optim.AdamW +
clip_grad_norm_, then compares:

    per-step loss          |d| <= k * 1e-4 |ref| at update k
    per-step grad_norm     |d| <= k * 2e-4 |ref| at update k
    each adapter tensor's update   |dA_tfm - dA_ref| <= 5% |dA_ref|  (2-norms)

and that PeftModel.from_pretrained loads tfm's saved adapter with empty
missing and unexpected key lists. Extra checks: --grads (tfm-run --adapter's
logits, loss and every adapter gradient against one PeftModel backward, at
hf_forward_check.py's tolerances), --merge (tfm's OUT/merged,
loaded by AutoModelForCausalLM without PEFT, gives the logits of PEFT's
merge_and_unload of the same adapter), --resume (2 updates, then 2 resumed,
bit-identical to 4 straight).

Usage: peft_lora_check.py --family llama --variant llama3 --targets all-linear
       [--target-parameters mlp.experts.gate_up_proj,...] --tfm-train PATH --workdir DIR
"""

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import warnings

os.environ.setdefault("USE_HUB_KERNELS", "NO")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
warnings.filterwarnings("ignore")

import torch  # noqa: E402
from safetensors.torch import load_file  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402

transformers.utils.logging.set_verbosity_error()
import logging  # noqa: E402
logging.disable(logging.WARNING)  # bitsandbytes' note about optional kernels
from peft import LoraConfig, PeftModel, get_peft_model  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_forward_check import (DELTANET_FAMILIES, MOE_FAMILIES, VARIANTS,  # noqa: E402
                              build_model, store_in_hub_layout, tokens)
from hf_train_check import run_train  # noqa: E402


def targets(spec):
    """--targets: all-linear, a regular expression (has regex characters)
    or a comma-separated list of names."""
    if spec == "all-linear" or any(c in spec for c in "*()[]\\|^$?+{}"):
        return spec
    return spec.split(",")


def write_adapter(model, args, folder):
    """A seeded adapter under PEFT's names, saved by PEFT."""
    config = LoraConfig(r=args.r, lora_alpha=args.alpha,
                        target_modules=targets(args.targets) if args.targets else None,
                        target_parameters=args.target_parameters.split(",")
                        if args.target_parameters else None,
                        layers_to_transform=[int(i) for i in args.layers.split(",")]
                        if args.layers else None,
                        use_rslora=args.rslora, lora_dropout=0.0, task_type="CAUSAL_LM")
    peft_model = get_peft_model(copy.deepcopy(model), config)
    g = torch.Generator().manual_seed(args.seed + 11)
    with torch.no_grad():
        for n, p in peft_model.named_parameters():
            if "lora_" in n:
                # The DeltaNet in-projections stay small, as their bases do
                # (hf_forward_check.DELTANET_IN_STD): larger keys and gates
                # make HF's own f32 forward drift from its f64 one.
                std = 0.05 if args.family in DELTANET_FAMILIES and \
                    "linear_attn.in_proj" in n else 0.2
                p.copy_(torch.randn(p.shape, generator=g) * std)
    peft_model.save_pretrained(folder)
    return config


def load_peft(base, folder, trainable):
    """PeftModel of `base` with the adapter in `folder`; fails on any
    missing or unexpected adapter key."""
    peft_model = PeftModel.from_pretrained(copy.deepcopy(base), folder, is_trainable=trainable,
                                           adapter_name="probe")
    result = peft_model.load_adapter(folder, adapter_name="default", is_trainable=trainable)
    missing = [k for k in result.missing_keys if "lora_" in k]
    if missing or result.unexpected_keys:
        raise SystemExit(f"FAIL {folder}: PEFT's load_adapter: missing {missing[:4]}, "
                         f"unexpected {result.unexpected_keys[:4]}")
    peft_model.set_adapter("default")
    peft_model.delete_adapter("probe")
    return peft_model


def reference(args, base, adapter, ids, labels):
    model = load_peft(base, adapter, trainable=True)
    trained = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    opt = torch.optim.AdamW([p for _, p in trained], lr=args.lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=args.weight_decay)
    log = []
    for _ in range(args.steps):
        out = model(input_ids=ids, labels=labels)
        out.loss.backward()
        norm = torch.nn.utils.clip_grad_norm_([p for _, p in trained], args.max_grad_norm)
        opt.step()
        opt.zero_grad()
        log.append((out.loss.item(), norm.item()))
    return log, model


def check_gradients(args, base, adapter, ckpt, tok, ids, labels, tag):
    """tfm-run --adapter --grads against one PeftModel forward and backward:
    logits |d| <= 1e-4 + 1e-4 |ref|, loss |d| <= 1e-5, and every adapter
    gradient max|d| <= 1e-4 max|ref| (hf_forward_check.py's tolerances)."""
    from safetensors.torch import load_file as load
    model = load_peft(base, adapter, trainable=True)
    out = model(input_ids=ids, labels=labels)
    out.loss.backward()
    # PEFT's saved names drop the adapter name.
    want = {n.replace(".default.", "."): p.grad for n, p in model.named_parameters()
            if p.requires_grad}
    result = os.path.join(args.workdir, "grads.safetensors")
    subprocess.run([args.tfm_run, ckpt, "--tokens", tok, "--adapter", adapter, "--grads",
                    "--output", result, "--quiet"], check=True)
    got = load(result)
    ok = True
    d = (got["logits"] - out.logits.detach()).abs()
    if not bool((d <= 1e-4 + 1e-4 * out.logits.detach().abs()).all()):
        print(f"FAIL {tag}: logits max|d| {float(d.max()):.3e}")
        ok = False
    if abs(float(got["loss"]) - out.loss.item()) > 1e-5:
        print(f"FAIL {tag}: loss tfm {float(got['loss']):.8g} peft {out.loss.item():.8g}")
        ok = False
    written = {k[len("grad/"):] for k in got if k.startswith("grad/")}
    if written != set(want):
        print(f"FAIL {tag}: gradients {sorted(written ^ set(want))[:4]} are not PEFT's adapter "
              f"tensors")
        return False
    worst = 0.0
    for n, r in want.items():
        g = got["grad/" + n]
        rel = float((g - r).abs().max() / r.abs().max()) if r.abs().max() > 0 else float(g.abs().max())
        worst = max(worst, rel)
        if g.shape != r.shape or rel > 1e-4:
            print(f"FAIL {tag}: grad/{n}: shape {tuple(g.shape)} (PEFT's {tuple(r.shape)}), "
                  f"max|d| / max|ref| = {rel:.2e}")
            ok = False
    print(f"{tag}: tfm-run --adapter: logits and loss as PEFT's; {len(want)} adapter gradients, "
          f"worst max|d| / max|ref| = {worst:.2e}")
    return ok


def adapter_tensors(peft_model):
    """{PEFT saved name: tensor} of the default adapter."""
    from peft import get_peft_model_state_dict
    return {k: v.detach().clone() for k, v in get_peft_model_state_dict(peft_model).items()}


def train(args, ckpt, tok, out, steps, extra=()):
    cmd = [args.tfm_train, ckpt, "--tokens", tok, "--output-dir", out, "--steps", str(steps),
           "--lr", str(args.lr), "--weight-decay", str(args.weight_decay),
           "--max-grad-norm", str(args.max_grad_norm), "--quiet"] + list(extra)
    return run_train(cmd, out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", required=True)
    ap.add_argument("--variant", required=True)
    ap.add_argument("--targets", default="")
    # PEFT's target_parameters (stacked expert weights), comma-separated.
    ap.add_argument("--target-parameters", dest="target_parameters", default="")
    # PEFT's layers_to_transform, comma-separated.
    ap.add_argument("--layers", default="")
    ap.add_argument("--tfm-train", dest="tfm_train", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--r", type=int, default=4)
    # alpha / r = 1.5: a scale applied in the wrong place shows.
    ap.add_argument("--alpha", type=float, default=6)
    ap.add_argument("--rslora", action="store_true")
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--weight-decay", dest="weight_decay", type=float, default=0.01)
    ap.add_argument("--max-grad-norm", dest="max_grad_norm", type=float, default=1.0)
    ap.add_argument("--tfm-run", dest="tfm_run", default="tfm-run")
    ap.add_argument("--grads", action="store_true",
                    help="also compare tfm-run --adapter's logits, loss and every adapter "
                         "gradient with PEFT's")
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    ckpt = os.path.join(args.workdir, "ckpt")
    base = build_model(args.family, args.variant, args.seed)
    base.save_pretrained(ckpt)
    store_in_hub_layout(args.family, ckpt)
    adapter = os.path.join(args.workdir, "adapter0")
    write_adapter(base, args, adapter)
    ids, labels = tokens(base.config.vocab_size, args.seed,
                         VARIANTS[args.family][args.variant].get("_seq", 9))
    tok = os.path.join(args.workdir, "tokens.json")
    with open(tok, "w") as f:
        json.dump({"input_ids": ids.tolist(), "labels": labels.tolist()}, f)

    ok = True
    if args.grads:
        ok = check_gradients(args, base, adapter, ckpt, tok, ids, labels,
                             f"{args.family}/{args.variant}/lora")
    ref_log, ref_model = reference(args, base, adapter, ids, labels)
    out = os.path.join(args.workdir, "out")
    extra = ["--lora-init", adapter] + (["--merge-lora"] if args.merge else [])
    got_log = train(args, ckpt, tok, out, args.steps, extra)
    tag = f"{args.family}/{args.variant}/lora"
    for i, (g, (loss, norm)) in enumerate(zip(got_log, ref_log)):
        t = 1e-4 * (i + 1)
        for what, a, b, tol in (("loss", g["loss"], loss, t), ("grad_norm", g["grad_norm"], norm, 2 * t)):
            if not abs(a - b) <= tol * abs(b):
                print(f"FAIL {tag}: step {i + 1} {what} tfm {a:.8g} peft {b:.8g}")
                ok = False
    if len(got_log) != args.steps:
        print(f"FAIL {tag}: {len(got_log)} log entries")
        ok = False
    print(f"{tag}: losses tfm  " + " ".join(f"{g['loss']:.6f}" for g in got_log))
    print(f"{tag}: losses peft " + " ".join(f"{l:.6f}" for l, _ in ref_log))

    # The saved adapter: PEFT loads it with no missing or unexpected key, and
    # each tensor moved as PEFT's did.
    loaded = load_peft(base, out, trainable=False)
    initial = load_file(os.path.join(adapter, "adapter_model.safetensors"))
    got = load_file(os.path.join(out, "adapter_model.safetensors"))
    want = adapter_tensors(ref_model)
    if set(got) != set(want) or set(got) != set(initial):
        print(f"FAIL {tag}: saved tensors {sorted(set(got) ^ set(want))[:4]} differ from PEFT's")
        ok = False
    worst, worst_name = 0.0, ""
    for n in want:
        d_ref = (want[n] - initial[n]).double()
        d_got = (got[n] - initial[n]).double()
        rel = float((d_got - d_ref).norm() / d_ref.norm()) if d_ref.norm() > 0 else float(d_got.norm())
        if rel > worst:
            worst, worst_name = rel, n
    print(f"{tag}: {len(got)} adapter tensors, loaded by PeftModel.from_pretrained with no missing "
          f"or unexpected keys; update |dA_tfm - dA_peft| / |dA_peft|: worst {worst:.2e} ({worst_name})")
    if worst > 0.05:
        print(f"FAIL {tag}: an adapter update is more than 5% from PEFT's")
        ok = False
    frozen = [n for n, p in AutoModelForCausalLM.from_pretrained(ckpt).state_dict().items()
              if not torch.equal(p, base.state_dict()[n])]
    if frozen:
        print(f"FAIL {tag}: the base changed: {frozen[:3]}")
        ok = False

    if args.merge:
        kw = dict(experts_implementation="eager") if args.family in MOE_FAMILIES else {}
        merged = AutoModelForCausalLM.from_pretrained(os.path.join(out, "merged"),
                                                      attn_implementation="eager", **kw)
        with torch.no_grad():
            want_logits = loaded.merge_and_unload()(input_ids=ids).logits
            got_logits = merged(input_ids=ids).logits
        rel = float((got_logits - want_logits).norm() / want_logits.norm())
        print(f"{tag}: OUT/merged loads without PEFT; logits vs PEFT's merge_and_unload: "
              f"relative difference {rel:.2e}")
        if rel > 1e-5:
            print(f"FAIL {tag}: the merged model's logits differ from PEFT's merge")
            ok = False

    if args.resume:
        half = args.steps // 2
        res = out + "-resume"
        train(args, ckpt, tok, res, half, ["--lora-init", adapter])
        got2 = train(args, ckpt, tok, res, args.steps, ["--lora-init", adapter, "--resume"])
        same = [a["loss"] == b["loss"] and a["grad_norm"] == b["grad_norm"]
                for a, b in zip(got_log, got2)]
        resumed = load_file(os.path.join(res, "adapter_model.safetensors"))
        diff = [n for n in got if not torch.equal(got[n], resumed[n])]
        if len(got2) != args.steps or not all(same) or diff:
            print(f"FAIL {tag}: resume: log equal {same}, tensors that differ {diff[:4]}")
            ok = False
        else:
            print(f"{tag}: {half} + {args.steps - half} resumed updates are bit-identical to "
                  f"{args.steps} ({len(got)} adapter tensors)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
