"""Training-step tokens/s of tfm-run (CPU JIT) against HF's torch path on a
small Qwen3-Next-shaped model, and the gated delta rule's share of it.

Writes a random-weight Qwen3-Next checkpoint with the 80B-A3B model's
structure scaled down (every 4th layer gated attention, the others gated
DeltaNet with twice as many value heads as key heads, MoE with the gated
shared expert; sizes are options) and times the training step (loss with
labels and every parameter gradient: torch autograd on HF's
Qwen3NextForCausalLM with eager attention and experts and no fla /
causal_conv1d kernels, so HF runs its torch_chunk_gated_delta_rule, vs
tfm-run --grads) on the same tokens. Then times the rule alone, forward and
backward, on one layer's shapes: tfm.gated_delta_rule through tfm-run
--mlir --autodiff, and HF's torch_chunk_gated_delta_rule under autograd.
Fastest of --repeat runs, the same thread count on both sides.

    python bench/cpu_qwen3_next.py [--quick] [--layers 4 --seq 512 ...]
"""

import argparse
import os
import tempfile
import time

os.environ.setdefault("USE_HUB_KERNELS", "NO")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from transformers import AutoModelForCausalLM, Qwen3NextConfig  # noqa: E402
from transformers.models.qwen3_next import modeling_qwen3_next  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from train_steps import hf_step, tfm_op_vjp, tfm_step  # noqa: E402


def rule_mlir(hk, hv, dk, dv, chunk):
    q, v = f"tensor<?x?x{hk}x{dk}xf32>", f"tensor<?x?x{hv}x{dv}xf32>"
    g, p, s = f"tensor<?x?x{hv}xf32>", f"tensor<{hv}xf32>", f"tensor<?x?x{hv}x{dk}x{dv}xf32>"
    return f"""
func.func @main(%q: {q}, %k: {q}, %v: {v}, %a: {g}, %b: {g}, %al: {p}, %db: {p}) -> {v} {{
  %y, %s = tfm.gated_delta_rule %q, %k, %v, %a, %b, %al, %db {{chunk_size = {chunk} : i64}}
      : ({q}, {q}, {v}, {g}, {g}, {p}, {p}) -> ({v}, {s})
  return %y : {v}
}}"""


def rule_inputs(args):
    torch.manual_seed(args.seed)
    bt = (args.batch, args.seq)
    hk, hv, dk, dv = args.key_heads, 2 * args.key_heads, args.head_dim, args.head_dim
    return [torch.randn(*bt, hk, dk), torch.randn(*bt, hk, dk), torch.randn(*bt, hv, dv),
            torch.randn(*bt, hv), torch.randn(*bt, hv), torch.log(torch.linspace(1, 16, hv)),
            torch.ones(hv)]


def tfm_rule(args, inputs, d):
    hk, dk = inputs[0].shape[2:]
    hv, dv = inputs[2].shape[2:]
    return tfm_op_vjp(args, rule_mlir(hk, hv, dk, dv, 64), inputs, torch.randn_like(inputs[2]), d, "rule")


def hf_rule(args, inputs):
    """As Qwen3NextGatedDeltaNet.forward calls it: gates from a, b, A_log and
    dt_bias, the L2 norms in the kernel."""
    q, k, v, a, b, a_log, dt_bias = [t.clone().requires_grad_(True) for t in inputs]
    best = 1e30
    for _ in range(args.repeat):
        for t in (q, k, v, a, b, a_log, dt_bias):
            t.grad = None
        t0 = time.perf_counter()
        g = -a_log.exp() * F.softplus(a + dt_bias)
        y, _ = modeling_qwen3_next.torch_chunk_gated_delta_rule(
            q, k, v, g=g, beta=b.sigmoid(), use_qk_l2norm_in_kernel=True)
        y.backward(torch.ones_like(y))
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--key-heads", type=int, default=4, help="linear key heads (value heads: twice)")
    ap.add_argument("--head-dim", type=int, default=64, help="linear key and value head dim")
    ap.add_argument("--heads", type=int, default=4, help="attention heads (of 64, 1 KV head)")
    ap.add_argument("--experts", type=int, default=16)
    ap.add_argument("--top-k", type=int, default=2)
    ap.add_argument("--expert-width", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=16384)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smoke run: vocab 4096, seq 128")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("THREADS", "1")))
    ap.add_argument("--tfm-run", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "tfm-run"))
    args = ap.parse_args()
    if args.quick:
        args.vocab, args.seq = 4096, 128
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    cfg = Qwen3NextConfig(
        vocab_size=args.vocab, hidden_size=args.hidden, num_hidden_layers=args.layers,
        num_attention_heads=args.heads, num_key_value_heads=1, head_dim=64,
        linear_num_key_heads=args.key_heads, linear_num_value_heads=2 * args.key_heads,
        linear_key_head_dim=args.head_dim, linear_value_head_dim=args.head_dim,
        num_experts=args.experts, num_experts_per_tok=args.top_k,
        moe_intermediate_size=args.expert_width, shared_expert_intermediate_size=args.expert_width,
        intermediate_size=4 * args.hidden, max_position_embeddings=4096,
        pad_token_id=None, bos_token_id=None, eos_token_id=None)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="eager",
                                             experts_implementation="eager").float().train()
    params = sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, args.vocab, (args.batch, args.seq))
    tokens = args.batch * args.seq
    linear = sum(t == "linear_attention" for t in cfg.layer_types)
    print(f"training step (forward + backward), Qwen3-Next-shaped, {params / 1e6:.1f}M parameters, "
          f"{args.layers} layers ({linear} gated DeltaNet), hidden {args.hidden}, DeltaNet "
          f"{args.key_heads}/{2 * args.key_heads} key/value heads of {args.head_dim}, "
          f"{args.experts} experts top-{args.top_k} + shared, vocab {args.vocab}, "
          f"{args.batch}x{args.seq} tokens, {args.threads} thread(s); fastest of {args.repeat}")
    with tempfile.TemporaryDirectory() as d:
        tfm = tfm_step(args, model, ids, d)
        hf = hf_step(model, ids, args.repeat)
        print(f"  step tokens/s   {'tfm-run':>9s} {'HF torch':>9s} {'tfm/HF':>8s}")
        print(f"                  {tokens / tfm:9.0f} {tokens / hf:9.0f} {hf / tfm:7.2f}x", flush=True)
        inputs = rule_inputs(args)
        tr = tfm_rule(args, inputs, d)
        hr = hf_rule(args, inputs)
        print(f"  delta rule fwd+bwd per layer, ms (share of the step over {linear} layers)")
        print(f"                  {tr * 1e3:6.1f} ({100 * tr * linear / tfm:4.1f}%) "
              f"{hr * 1e3:6.1f} ({100 * hr * linear / hf:4.1f}%) {hr / tr:7.2f}x", flush=True)


if __name__ == "__main__":
    main()
