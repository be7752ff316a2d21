#!/usr/bin/env python3
"""GPU figures of tfm (run by bench/gpu-check.sh on a machine with a GPU).

Standard library only (the GPU machine may have no torch or numpy): inputs
and checkpoints are written here with random values.

  1. tiny Llama: tfm-run --device cuda --grads --check-against-cpu
  2. attention forward / backward TFLOP/s (causal, head dim 128; bf16 and f32)
  3. RMSNorm GB/s
  4. Llama-3.1-8B-shaped layer step (forward + backward): time and MFU,
     from the difference between 2-layer and 1-layer models
  5. tiny Llama trained 10 updates with tfm-train on the GPU and on the CPU:
     per-update losses side by side, time per update, bytes copied to the
     device per update (weights, gradients and optimizer state resident)

The model step computes in f32 (bf16 GEMMs are not routed to cuBLASLt yet),
so its MFU is given against both the f32 and the bf16 peak; attention is
measured with bf16 and f32 storage (f32 arithmetic in both).
"""
import argparse
import array
import json
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Dense peaks (TFLOP/s) without sparsity, from NVIDIA's data sheets.
PEAKS = {"H200": (67.0, 989.0), "H100": (67.0, 989.0), "A100": (19.5, 312.0)}


def random_block(n=1 << 16, scale=0.02, seed=0):
    rng = random.Random(seed)
    return array.array("f", (rng.uniform(-scale, scale) for _ in range(n))).tobytes()


def bf16_block(f32_bytes):
    """The upper halves of little-endian f32 values: the same numbers in bf16."""
    return b"".join(f32_bytes[i + 2:i + 4] for i in range(0, len(f32_bytes), 4))


SIZES = {"I64": 8, "F32": 4, "BF16": 2}


def write_safetensors(path, tensors):
    """tensors: name -> (dtype, shape, bytes or None for random values)."""
    header, offset, blobs = {}, 0, []
    blocks = {"F32": random_block(), "I64": random_block()}
    blocks["BF16"] = bf16_block(blocks["F32"])
    for name, (dtype, shape, data) in tensors.items():
        count = 1
        for s in shape:
            count *= s
        size = count * SIZES[dtype]
        if data is None:
            block = blocks[dtype]
            reps = size // len(block) + 1
            data = (block * reps)[:size]
        assert len(data) == size, name
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + size]}
        blobs.append(data)
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def llama_checkpoint(folder, config, batch, seq):
    """A random Llama checkpoint (HF names) and a tokens.json with labels."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f)
    h, i, v = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    d = h // heads
    t = {"model.embed_tokens.weight": ("F32", [v, h], None),
         "model.norm.weight": ("F32", [h], None)}
    if not config.get("tie_word_embeddings", False):
        t["lm_head.weight"] = ("F32", [v, h], None)
    for l in range(config["num_hidden_layers"]):
        p = f"model.layers.{l}."
        t[p + "input_layernorm.weight"] = ("F32", [h], None)
        t[p + "post_attention_layernorm.weight"] = ("F32", [h], None)
        t[p + "self_attn.q_proj.weight"] = ("F32", [heads * d, h], None)
        t[p + "self_attn.k_proj.weight"] = ("F32", [kv * d, h], None)
        t[p + "self_attn.v_proj.weight"] = ("F32", [kv * d, h], None)
        t[p + "self_attn.o_proj.weight"] = ("F32", [h, heads * d], None)
        t[p + "mlp.gate_proj.weight"] = ("F32", [i, h], None)
        t[p + "mlp.up_proj.weight"] = ("F32", [i, h], None)
        t[p + "mlp.down_proj.weight"] = ("F32", [h, i], None)
    write_safetensors(os.path.join(folder, "model.safetensors"), t)
    rng = random.Random(1)
    ids = [[rng.randrange(v) for _ in range(seq)] for _ in range(batch)]
    with open(os.path.join(folder, "tokens.json"), "w") as f:
        json.dump({"input_ids": ids, "labels": ids}, f)


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p.stdout


def kernel_ms(tfm_run, mlir, func, inputs, work, repeat, autodiff=False):
    out = os.path.join(work, func + ".out.st")
    cmd = [tfm_run, "--device", "cuda", "--mlir", mlir, "--func", func,
           "--inputs", inputs, "--output", out, "--repeat", str(repeat)]
    if autodiff:
        cmd.append("--autodiff")
    text = run(cmd)
    return float(re.search(r"run ([0-9.]+) ms", text).group(1))


def step_ms(tfm_run, folder, work, repeat):
    text = run([tfm_run, folder, "--tokens", os.path.join(folder, "tokens.json"),
                "--output", os.path.join(work, "step.st"), "--grads",
                "--device", "cuda", "--repeat", str(repeat)])
    return float(re.search(r"step ([0-9.]+) ms", text).group(1)), text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfm-run", default=os.path.join(ROOT, "build", "bin", "tfm-run"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--quick", action="store_true", help="small sizes (script check)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tfm-gpu-check-")
    seq = 128 if args.quick else args.seq
    tfm_run = args.tfm_run

    # 1. Tiny model against the CPU.
    tiny = json.load(open(os.path.join(ROOT, "examples", "tiny-llama", "config.json")))
    llama_checkpoint(os.path.join(work, "tiny"), tiny, 2, 16)
    tiny_cmd = [tfm_run, os.path.join(work, "tiny"), "--tokens",
                os.path.join(work, "tiny", "tokens.json"), "--output",
                os.path.join(work, "tiny.st"), "--grads", "--device", "cuda"]
    text = run(tiny_cmd)
    device = re.search(r"cuda: (.*?), arena", text).group(1)
    print(f"device: {device}")
    check = subprocess.run(tiny_cmd + ["--check-against-cpu"], capture_output=True, text=True)
    agree = check.returncode == 0
    found = re.search(r"(?:check against cpu|results differ): (.*)", check.stdout + check.stderr)
    print("tiny llama, GPU vs CPU: " + (found.group(1) if found else check.stderr.strip()))

    # 2. Attention, B=1, causal, 32 query heads and 8 KV heads of 128, in
    # bf16 storage (the asked-for figure) and f32.
    heads, d = 32, 128
    flops_fwd = 4 * seq * seq * heads * d / 2          # causal: half of QK^T and PV
    flops_bwd = 2.5 * flops_fwd                        # dQ, dK, dV, and recomputed P
    for dtype, mlir_name in (("BF16", "attention_bf16.mlir"), ("F32", "attention.mlir")):
        mlir = os.path.join(HERE, "gpu", mlir_name)
        qkv = os.path.join(work, f"qkv-{dtype}.st")
        write_safetensors(qkv, {"arg0": (dtype, [1, seq, 48, d], None)})
        fwd = kernel_ms(tfm_run, mlir, "attention", qkv, work, args.repeat)
        cot = os.path.join(work, f"qkv-cot-{dtype}.st")
        write_safetensors(cot, {"arg0": (dtype, [1, seq, 48, d], None),
                                "arg1": (dtype, [1, seq, heads, d], None)})
        both = kernel_ms(tfm_run, mlir, "attention", cot, work, args.repeat, autodiff=True)
        bwd = max(both - fwd, 1e-3)
        print(f"attention fwd ({dtype.lower()}, T={seq}, causal, d=128): {fwd:.2f} ms, "
              f"{flops_fwd / fwd / 1e9:.2f} TFLOP/s")
        print(f"attention bwd ({dtype.lower()}): {bwd:.2f} ms, {flops_bwd / bwd / 1e9:.2f} TFLOP/s")

    # 3. RMSNorm over [8, T, 4096].
    x = os.path.join(work, "norm.st")
    rows = 8 * seq
    write_safetensors(x, {"arg0": ("F32", [8, seq, 4096], None), "arg1": ("F32", [4096], None)})
    ms = kernel_ms(tfm_run, os.path.join(HERE, "gpu", "rmsnorm.mlir"), "rmsnorm", x, work,
                   args.repeat)
    moved = 2 * rows * 4096 * 4
    print(f"rmsnorm [{rows} x 4096] f32: {ms:.3f} ms, {moved / ms / 1e6:.1f} GB/s "
          "(includes copying the input in and the output out)")

    # 4. Llama-3.1-8B-shaped layer: 2-layer minus 1-layer step time.
    cfg = json.load(open(os.path.join(ROOT, "test", "Import", "Inputs", "llama-3.1-8b.json")))
    cfg["vocab_size"] = 32000   # the difference cancels the vocabulary
    batch, tokens_seq = 1, seq
    if args.quick:
        cfg.update(hidden_size=512, intermediate_size=1792, num_attention_heads=4,
                   num_key_value_heads=1)
    times = {}
    for layers in (1, 2):
        c = dict(cfg, num_hidden_layers=layers)
        folder = os.path.join(work, f"l{layers}")
        llama_checkpoint(folder, c, batch, tokens_seq)
        times[layers], _ = step_ms(tfm_run, folder, work, max(2, args.repeat // 2))
    layer = max(times[2] - times[1], 1e-3)
    h, i = cfg["hidden_size"], cfg["intermediate_size"]
    kvd = cfg["num_key_value_heads"] * (h // cfg["num_attention_heads"])
    params = 2 * h * h + 2 * h * kvd + 3 * h * i
    n = batch * tokens_seq
    flops = 6 * params * n + 3 * 2 * tokens_seq * tokens_seq * h * batch  # + causal attention
    tflops = flops / layer / 1e9
    peak = next((v for k, v in PEAKS.items() if k in device), None)
    mfu = (f", MFU {100 * tflops / peak[0]:.1f}% of the f32 peak, "
           f"{100 * tflops / peak[1]:.2f}% of the bf16 peak") if peak else ""
    print(f"llama-3.1-8b layer step (fwd+bwd, {n} tokens, f32): {layer:.1f} ms, "
          f"{tflops:.2f} TFLOP/s{mfu}")
    # 5. Training: the tiny model, 10 AdamW updates, GPU against CPU.
    tfm_train = os.path.join(os.path.dirname(tfm_run), "tfm-train")
    logs = {}
    for dev in ("cuda", "cpu"):
        out = os.path.join(work, f"train-{dev}")
        text = run([tfm_train, os.path.join(work, "tiny"), "--tokens",
                    os.path.join(work, "tiny", "tokens.json"), "--output-dir", out,
                    "--steps", "10", "--lr", "3e-3", "--device", dev])
        with open(os.path.join(out, "train_log.json")) as f:
            logs[dev] = json.load(f)["steps"]
        if dev == "cuda":
            print("tfm-train on cuda: " + text.strip().splitlines()[-2])
    worst = max(abs(g["loss"] - c["loss"]) / abs(c["loss"])
                for g, c in zip(logs["cuda"], logs["cpu"]))
    ms = sorted(s["ms"] for s in logs["cuda"][1:])[len(logs["cuda"]) // 2 - 1]
    print("tfm-train 10 updates, loss cuda " +
          " ".join(f"{s['loss']:.4f}" for s in logs["cuda"][::3]) + " | cpu " +
          " ".join(f"{s['loss']:.4f}" for s in logs["cpu"][::3]) +
          f"; worst relative difference {worst:.1e}; median update {ms:.2f} ms, "
          f"{logs['cuda'][-1]['staged_bytes']} bytes copied in per update")
    agree &= worst <= 1e-3
    if not agree:
        sys.exit("GPU results differ from the CPU's (see above)")


if __name__ == "__main__":
    main()
