"""LoRA training throughput and memory: tfm-train against HF PEFT + torch on CPU,
and the modeled bytes of a LoRA step of a real MoE config.

Two models with random weights, LoRA r=16 (alpha 32) on all-linear as PEFT
resolves it: the Llama-style bench model of bench/cpu_forward.py, and a
Qwen3-MoE-shaped one (there all-linear takes the router and the stacked
experts too, PEFT 0.21's transformers-5 rewrite). Each side trains --steps
AdamW updates (clip 1.0) on the same batch in a process of its own:
PeftModel with torch autograd and torch.optim.AdamW over the adapters, and
tfm-train --lora-config with that adapter_config.json. Printed side by side:
the median update time and tokens/s (updates after the first, which holds
compilation and warm-up), and each process's peak RSS (os.wait4).

Then, from tfm-cost-report (bf16, B=1, T=4096, tfm-fuse), the bytes a
training step of Qwen3-30B-A3B moves: full fine-tuning against LoRA r=16
all-linear, beside what PEFT's expert path adds by folding each targeted
expert weight into W + s·B·A on every forward (written, then read by the
expert GEMMs: the forward and the backward's data gradient).

    python bench/lora_step.py [--steps 5 --threads 1 --quick]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "..", "build")
sys.path.insert(0, HERE)
os.environ.setdefault("USE_HUB_KERNELS", "NO")


def model_config(kind, quick):
    from transformers import Qwen3MoeConfig
    from bench_model import llama_config
    if kind == "dense":
        a = argparse.Namespace(hidden=256 if quick else 512, layers=2 if quick else 8,
                               vocab=8192)
        return llama_config(a)
    hidden = 256 if quick else 512
    return Qwen3MoeConfig(vocab_size=8192, hidden_size=hidden, num_hidden_layers=2 if quick else 4,
                          num_attention_heads=hidden // 64, num_key_value_heads=max(1, hidden // 256),
                          head_dim=64, num_experts=32, num_experts_per_tok=4,
                          moe_intermediate_size=256, norm_topk_prob=True,
                          max_position_embeddings=4096)


def lora_config():
    from peft import LoraConfig
    return LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", lora_dropout=0.0)


def peft_side(args):
    """The PEFT process: trains and prints its update times as JSON."""
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM
    torch.set_num_threads(args.threads)
    kw = dict(experts_implementation="eager") if args.kind == "moe" else {}
    model = AutoModelForCausalLM.from_pretrained(os.path.join(args.work, "ckpt"),
                                                 attn_implementation="eager", **kw)
    model = get_peft_model(model, lora_config())
    with open(os.path.join(args.work, "tokens.json")) as f:
        ids = torch.tensor(json.load(f)["input_ids"])
    trained = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trained, lr=1e-4, weight_decay=0.01)
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        model(input_ids=ids, labels=ids).loss.backward()
        torch.nn.utils.clip_grad_norm_(trained, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - t0)
    print(json.dumps({"ms": [t * 1e3 for t in times],
                      "trained": sum(p.numel() for p in trained)}))


def run_measured(cmd, env=None):
    """Runs `cmd`; its stdout and peak RSS in MiB."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode})")
    return out, usage.ru_maxrss / 1024


def compare(kind, args):
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM
    cfg = model_config(kind, args.quick)
    torch.manual_seed(0)
    kw = dict(experts_implementation="eager") if kind == "moe" else {}
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="eager", **kw).float()
    params = sum(p.numel() for p in model.parameters())
    batch, seq = (2, 64) if args.quick else (4, 256)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq))
    with tempfile.TemporaryDirectory() as work:
        model.save_pretrained(os.path.join(work, "ckpt"))
        # PEFT's own resolution of all-linear, saved as adapter_config.json:
        # both sides train exactly the same adapters.
        get_peft_model(model, lora_config()).save_pretrained(os.path.join(work, "adapter"))
        del model
        with open(os.path.join(work, "tokens.json"), "w") as f:
            json.dump({"input_ids": ids.tolist(), "labels": ids.tolist()}, f)
        out, peft_rss = run_measured([sys.executable, __file__, "--side", "peft", "--kind", kind,
                                      "--work", work, "--steps", str(args.steps),
                                      "--threads", str(args.threads)])
        peft = json.loads(out.strip().splitlines()[-1])
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(args.threads))
        _, tfm_rss = run_measured([os.path.join(BUILD, "bin", "tfm-train"),
                                   os.path.join(work, "ckpt"), "--tokens",
                                   os.path.join(work, "tokens.json"), "--output-dir",
                                   os.path.join(work, "out"), "--steps", str(args.steps),
                                   "--lr", "1e-4", "--quiet", "--lora-config",
                                   os.path.join(work, "adapter", "adapter_config.json")], env)
        with open(os.path.join(work, "out", "train_log.json")) as f:
            log = json.load(f)["steps"]
    t_peft = statistics.median(peft["ms"][1:]) / 1e3
    t_tfm = statistics.median(s["ms"] for s in log[1:]) / 1e3
    tokens = batch * seq
    name = "Llama-style" if kind == "dense" else "Qwen3-MoE-shaped (32 experts, top-4)"
    print(f"LoRA r=16 all-linear, {name}, {params / 1e6:.1f}M parameters, "
          f"{peft['trained'] / 1e6:.2f}M trained, {batch}x{seq} tokens, {args.threads} thread(s), "
          f"median of updates 2..{args.steps}")
    print(f"                         {'PEFT + torch':>14} {'tfm-train':>14} {'tfm/PEFT':>10}")
    print(f"  update (ms)            {t_peft * 1e3:14.1f} {t_tfm * 1e3:14.1f} {t_peft / t_tfm:9.2f}x")
    print(f"  tokens/s               {tokens / t_peft:14.0f} {tokens / t_tfm:14.0f}")
    print(f"  peak RSS (MiB)         {peft_rss:14.0f} {tfm_rss:14.0f} {tfm_rss / peft_rss:9.2f}")


def step_bytes(ir, passes, tmp):
    out = os.path.join(tmp, "cost.json")
    subprocess.run([os.path.join(BUILD, "bin", "tfm-opt"), *passes, "--tfm-fuse", "--tfm-autodiff",
                    f"--tfm-cost-report=func=forward_vjp batch=1 seq=4096 json={out}",
                    "-o", os.devnull], input=ir, check=True, capture_output=True, text=True)
    total = json.load(open(out))["functions"][0]["total"]
    return (total["bytes_read"] + total["bytes_written"]) / 1e9, total["flops"]


def modeled_bytes():
    config = os.path.join(HERE, "..", "test", "Import", "Inputs", "qwen3-30b-a3b.json")
    ir = subprocess.run([os.path.join(BUILD, "bin", "tfm-import-hf"), config, "--no-logits",
                         "--dtype", "bf16"], check=True, capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        full, full_flops = step_bytes(ir, [], tmp)
        lora, lora_flops = step_bytes(
            ir, ["--tfm-apply-lora=r=16 alpha=32 target-modules=all-linear"], tmp)
    cfg = json.load(open(config))
    layers, experts = cfg["num_hidden_layers"], cfg["num_experts"]
    hidden, inter = cfg["hidden_size"], cfg["moe_intermediate_size"]
    # Folding W + s·B·A per targeted expert weight (gate_up and down, bf16):
    # written once, read by the forward's GEMMs and the backward's dx GEMMs.
    fold = layers * experts * 3 * hidden * inter * 2 * 3 / 1e9
    print("Qwen3-30B-A3B training step, bf16, B=1 T=4096, tfm-fuse (tfm-cost-report):")
    print(f"                         {'full':>14} {'LoRA r=16':>14} {'LoRA/full':>10}")
    print(f"  GB moved               {full:14.1f} {lora:14.1f} {lora / full:9.2f}")
    print(f"  TFLOP                  {full_flops / 1e12:14.1f} {lora_flops / 1e12:14.1f} "
          f"{lora_flops / full_flops:9.2f}")
    print(f"  PEFT's W + s·B·A for the experts would add {fold:.1f} GB per step "
          f"(written, read forward and backward); tfm forms none")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("THREADS", "1")))
    ap.add_argument("--quick", action="store_true", help="smoke run: small models, 2x64 tokens")
    ap.add_argument("--side", help=argparse.SUPPRESS)
    ap.add_argument("--kind", help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side == "peft":
        return peft_side(args)
    import warnings
    warnings.filterwarnings("ignore")
    for kind in ("dense", "moe"):
        compare(kind, args)
    modeled_bytes()


if __name__ == "__main__":
    main()
