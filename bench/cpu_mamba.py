"""Training-step tokens/s of tfm-run (CPU JIT) against HF's torch path on a
Mamba2-130m-shaped model, and the chunked scan's share of the step.

Writes a random-weight Mamba2 checkpoint with mamba2-130m's layer shapes
(hidden 768, 24 heads of 64, one group, state 128, conv 4, chunks of 256;
the vocabulary and layer count are options) and times the training step
(loss with labels and every parameter gradient: torch autograd on HF's
Mamba2ForCausalLM with no mamba_ssm / causal_conv1d kernels, vs tfm-run
--grads) on the same tokens. Then times the scan alone, forward and
backward, on one layer's shapes: tfm.mamba_ssd_scan through tfm-run --mlir
--autodiff, and HF's torch chunk scan (mamba2_chunk_scan, its fallback
path) under autograd. Fastest of --repeat runs, the same thread count on
both sides.

    python bench/cpu_mamba.py [--quick] [--layers 2 --seq 512 --vocab 50288 ...]
"""

import argparse
import os
import tempfile
import time

os.environ.setdefault("USE_HUB_KERNELS", "NO")

import torch  # noqa: E402
from transformers import AutoModelForCausalLM, Mamba2Config  # noqa: E402
from transformers.models.mamba2 import modeling_mamba2  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from train_steps import hf_step, tfm_op_vjp, tfm_step  # noqa: E402


def scan_mlir(b, h, p, g, n, chunk):
    x, dt = f"tensor<?x?x{h}x{p}xf32>", f"tensor<?x?x{h}xf32>"
    bc, v, s = f"tensor<?x?x{g}x{n}xf32>", f"tensor<{h}xf32>", f"tensor<?x?x{h}x{p}x{n}xf32>"
    return f"""
func.func @main(%x: {x}, %dt: {dt}, %al: {v}, %b: {bc}, %c: {bc}, %d: {v}, %db: {v}) -> {x} {{
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db
      {{chunk_size = {chunk} : i64, dt_min = 0.0 : f64, dt_max = 0x7FF0000000000000 : f64}}
      : ({x}, {dt}, {v}, {bc}, {bc}, {v}, {v}) -> ({x}, {s})
  return %y : {x}
}}"""


def scan_inputs(args, h, p, g, n):
    torch.manual_seed(args.seed)
    bt = (args.batch, args.seq)
    return [torch.randn(*bt, h, p), torch.randn(*bt, h) * 0.5, torch.log(torch.arange(1, h + 1).float()),
            torch.randn(*bt, g, n), torch.randn(*bt, g, n), torch.ones(h), torch.randn(h) * 0.5]


def tfm_scan(args, inputs, h, p, g, n, chunk, d):
    return tfm_op_vjp(args, scan_mlir(args.batch, h, p, g, n, chunk), inputs,
                      torch.randn_like(inputs[0]), d, "scan")


def hf_scan(args, inputs, chunk):
    x, dt, a_log, bm, cm, d, dt_bias = [t.clone().requires_grad_(True) for t in inputs]
    best = 1e30
    for _ in range(args.repeat):
        for t in (x, dt, a_log, bm, cm, d, dt_bias):
            t.grad = None
        t0 = time.perf_counter()
        y = modeling_mamba2.mamba2_chunk_scan(x, dt, -torch.exp(a_log), bm, cm, chunk_size=chunk, D=d,
                                              dt_bias=dt_bias, dt_softplus=True)
        y.backward(torch.ones_like(y))
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--heads", type=int, default=24)
    ap.add_argument("--groups", type=int, default=1)
    ap.add_argument("--state", type=int, default=128)
    ap.add_argument("--chunk", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=50288)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 layer, vocab 8192, seq 256")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("THREADS", "1")))
    ap.add_argument("--tfm-run", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "tfm-run"))
    args = ap.parse_args()
    if args.quick:
        args.layers, args.vocab, args.seq = 1, 8192, 256
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    head_dim = 2 * args.hidden // args.heads
    cfg = Mamba2Config(vocab_size=args.vocab, hidden_size=args.hidden, num_hidden_layers=args.layers,
                       num_heads=args.heads, head_dim=head_dim, n_groups=args.groups,
                       state_size=args.state, chunk_size=args.chunk, tie_word_embeddings=True,
                       pad_token_id=None, bos_token_id=None, eos_token_id=None)
    model = AutoModelForCausalLM.from_config(cfg).float().train()
    params = sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, args.vocab, (args.batch, args.seq))
    tokens = args.batch * args.seq
    print(f"training step (forward + backward), Mamba2 (mamba2-130m layers), {params / 1e6:.1f}M parameters, "
          f"{args.layers} layers, hidden {args.hidden}, {args.heads} heads of {head_dim}, {args.groups} group(s), "
          f"state {args.state}, chunks of {args.chunk}, vocab {args.vocab}, {args.batch}x{args.seq} tokens, "
          f"{args.threads} thread(s); fastest of {args.repeat}")
    with tempfile.TemporaryDirectory() as d:
        tfm = tfm_step(args, model, ids, d)
        hf = hf_step(model, ids, args.repeat)
        print(f"  step tokens/s   {'tfm-run':>9s} {'HF torch':>9s} {'tfm/HF':>8s}")
        print(f"                  {tokens / tfm:9.0f} {tokens / hf:9.0f} {hf / tfm:7.2f}x", flush=True)
        inputs = scan_inputs(args, args.heads, head_dim, args.groups, args.state)
        ts = tfm_scan(args, inputs, args.heads, head_dim, args.groups, args.state, args.chunk, d)
        hs = hf_scan(args, inputs, args.chunk)
        print(f"  scan fwd+bwd per layer, ms (share of the step over {args.layers} layers)")
        print(f"                  {ts * 1e3:6.1f} ({100 * ts * args.layers / tfm:4.1f}%) "
              f"{hs * 1e3:6.1f} ({100 * hs * args.layers / hf:4.1f}%) {hs / ts:7.2f}x", flush=True)


if __name__ == "__main__":
    main()
