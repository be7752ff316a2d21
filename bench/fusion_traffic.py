"""Modeled memory traffic and kernel count of whole training steps, HF-literal
IR against tfm-fuse, from tfm-cost-report (the CostOpInterface model: each
op's operands read and results written once; attention and the fused loss
keep scores and logits on chip).

For each real config: tfm-import-hf --no-logits --dtype bf16, then
tfm-opt [--tfm-fuse] --tfm-autodiff --tfm-cost-report{json} at B x T, and
the totals of @forward_vjp (the training step: forward, loss, every
gradient) side by side. With --per-op MODEL, the fused step of that model
op by op instead: executions, GB, and bytes per execution in units of one
[B, T, hidden] tensor of the model's dtype (bench/README.md's per-layer
table).

    python bench/fusion_traffic.py [--seq 4096 --batch 1] [--build build]
    python bench/fusion_traffic.py --per-op Llama-3.1-8B
"""

import argparse
import json
import os
import re
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "..", "test", "Import", "Inputs")
CONFIGS = [
    ("Llama-3.1-8B", "llama-3.1-8b.json"),
    ("Qwen3-8B", "qwen3-8b.json"),
    ("Gemma-2-9B", "recon-gemma-2-9b-it.json"),
    ("Mistral-7B", "mistral-7b-v0.1.json"),
    ("Qwen2.5-7B", "qwen2.5-7b-instruct.json"),
    ("Qwen3-30B-A3B", "qwen3-30b-a3b.json"),
    ("Mixtral-8x7B", "mixtral-8x7b-v0.1.json"),
    ("gpt-oss-20b", "gpt-oss-20b.json"),
    ("DeepSeek-V3", "deepseek-v3.json"),
    ("Mamba2-130m", "mamba2-130m.json"),
    ("Qwen3-Next-80B", "qwen3-next-80b-a3b-thinking.json"),
]


def import_model(build, name):
    """The loss-only bf16 IR of one of CONFIGS, imported once for both steps."""
    config = os.path.join(INPUTS, dict(CONFIGS)[name])
    return subprocess.run([os.path.join(build, "bin", "tfm-import-hf"), config,
                           "--no-logits", "--dtype", "bf16"],
                          check=True, capture_output=True, text=True).stdout


def step_report(build, ir, fuse, batch, seq, tmp):
    """The cost report of @forward_vjp: {"name", "ops", "total"}."""
    out = os.path.join(tmp, "cost.json")
    passes = (["--tfm-fuse"] if fuse else []) + [
        "--tfm-autodiff",
        f"--tfm-cost-report=func=forward_vjp batch={batch} seq={seq} json={out}"]
    subprocess.run([os.path.join(build, "bin", "tfm-opt"), *passes, "-o", os.devnull],
                   input=ir, check=True, capture_output=True, text=True)
    return json.load(open(out))["functions"][0]


def step_cost(build, ir, fuse, batch, seq, tmp):
    total = step_report(build, ir, fuse, batch, seq, tmp)["total"]
    return total["bytes_read"] + total["bytes_written"], total["kernels"]


def print_per_op(build, name, batch, seq, tmp):
    """The fused step of one model, op by op, largest first."""
    ir = import_model(build, name)
    # The importer's reading of the config (whatever the field is called
    # there, e.g. Mamba's d_model), from the module's tfm.hf attribute.
    hidden = int(re.search(r"\bhidden_size = (\d+) : i64", ir).group(1))
    unit = batch * seq * hidden * 2  # one [B, T, hidden] bf16 tensor
    report = step_report(build, ir, True, batch, seq, tmp)
    print(f"{name} fused training step, bf16, B={batch} T={seq}; "
          f"U = one [B, T, {hidden}] tensor = {unit / 2**20:.0f} MiB")
    print(f"{'op':<36} {'executions':>10} {'GB':>8} {'read U/exec':>12}"
          f" {'written U/exec':>15}")
    ops = sorted(report["ops"], key=lambda o: -(o["bytes_read"] + o["bytes_written"]))
    for o in ops:
        n = o["executions"]
        print(f"{o['name']:<36} {n:>10} "
              f"{(o['bytes_read'] + o['bytes_written']) / 1e9:>8.2f}"
              f" {o['bytes_read'] / n / unit:>12.3f} {o['bytes_written'] / n / unit:>15.3f}")
    total = report["total"]
    print(f"{'total':<36} {total['kernels']:>10.0f} "
          f"{(total['bytes_read'] + total['bytes_written']) / 1e9:>8.2f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--per-op", metavar="MODEL", choices=[n for n, _ in CONFIGS],
                    help="print one model's fused step op by op")
    args = ap.parse_args()
    if args.per_op:
        with tempfile.TemporaryDirectory() as tmp:
            print_per_op(args.build, args.per_op, args.batch, args.seq, tmp)
        return
    print(f"training step (forward_vjp), bf16, B={args.batch} T={args.seq}: "
          "modeled GB moved and kernels, HF-literal vs fused")
    print(f"{'model':<16} {'literal GB':>11} {'fused GB':>9} {'ratio':>6}"
          f" {'literal kernels':>16} {'fused kernels':>14} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, _ in CONFIGS:
            ir = import_model(args.build, name)
            lb, lk = step_cost(args.build, ir, False, args.batch, args.seq, tmp)
            fb, fk = step_cost(args.build, ir, True, args.batch, args.seq, tmp)
            print(f"{name:<16} {lb / 1e9:>11.1f} {fb / 1e9:>9.1f} {fb / lb:>6.2f}"
                  f" {lk:>16.0f} {fk:>14.0f} {fk / lk:>6.2f}")


if __name__ == "__main__":
    main()
