# GEMM and attention FLOPs of tfm-cost-report against counts derived from
# Hugging Face's own model classes (meta device): every nn.Linear weight
# (including a tied lm_head) costs 2·tokens·numel (+ tokens·numel(bias)), and
# attention costs, per layer and query head, (4·head_dim + 5) FLOPs per
# visible (query, key) pair: T(T+1)/2 causal pairs, clipped by the layer's
# sliding window as HF's masks define it.
#
# REQUIRES: hf-reference
# RUN: %python %s %tfm_src tfm-import-hf tfm-opt | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: llama-3.2-1b-instruct.json: matmul ok attention ok
# CHECK: qwen3-0.6b.json: matmul ok attention ok
# CHECK: recon-gemma-2-9b-it.json: matmul ok attention ok
# CHECK: recon-phi-3-mini-4k-instruct.json: matmul ok attention ok
# CHECK: qwen2.5-7b-instruct.json: matmul ok attention ok

import os
import re
import subprocess
import sys

import torch
from transformers import AutoConfig, AutoModelForCausalLM

src, import_hf, opt = sys.argv[1:4]
SEQ = 4096
inputs = os.path.join(src, "test", "Import", "Inputs")


def report(path):
    ir = subprocess.run([import_hf, path], capture_output=True, text=True, check=True).stdout
    out = subprocess.run([opt, f"--tfm-cost-report=seq={SEQ}", "-o", os.devnull], input=ir,
                         capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s+(tfm\.\w+)\s+(\d+)\s+([0-9.e+]+)", line)
        if m:
            rows[m.group(1)] = float(m.group(3))
    return rows


def expected(path):
    config = AutoConfig.from_pretrained(path)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    gemm = 0.0
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            gemm += 2 * SEQ * module.weight.numel()
            if module.bias is not None:
                gemm += SEQ * module.bias.numel()
    attn = 0.0
    for layer in model.model.layers:
        a = layer.self_attn
        heads, d = config.num_attention_heads, a.head_dim
        # Qwen/Gemma keep a per-layer window on the attention module; Mistral
        # and Phi-3 apply config.sliding_window to every layer through the mask.
        window = getattr(a, "sliding_window", None) if hasattr(a, "sliding_window") \
            else getattr(config, "sliding_window", None)
        pairs = sum(min(i + 1, window) if window else i + 1 for i in range(SEQ))
        attn += heads * pairs * (4 * d + 5)
    return gemm, attn


for name in ["llama-3.2-1b-instruct.json", "qwen3-0.6b.json", "recon-gemma-2-9b-it.json",
             "recon-phi-3-mini-4k-instruct.json", "qwen2.5-7b-instruct.json"]:
    path = os.path.join(inputs, name)
    rows = report(path)
    gemm, attn = expected(path)
    ok_m = abs(rows["tfm.matmul"] - gemm) <= 1e-6 * gemm
    ok_a = abs(rows["tfm.attention"] - attn) <= 1e-6 * attn
    print(f"{name}: matmul {'ok' if ok_m else 'FAIL'} attention {'ok' if ok_a else 'FAIL'}"
          f" ({rows['tfm.matmul']:.6e} vs {gemm:.6e}; {rows['tfm.attention']:.6e} vs {attn:.6e})")
