"""Training-step tokens/s of tfm-run (CPU JIT) against HF's MoE paths.

Writes a random-weight Qwen3-MoE-shaped checkpoint with transformers and
times the training step (loss with labels and every parameter gradient:
torch autograd vs tfm-run --grads) on the same tokens, for two routings:

  balanced  the router as initialised (random weights, near-uniform load)
  skewed    each layer's router rows of experts 0..k-1 get a multiple of the
            mean direction of that layer's router input added, so that most
            tokens pick experts 0..k-1 (--skew is that shift in logit units)

HF runs with eager attention and its default experts implementation (the
peer; grouped_mm in transformers 5.x), and again with
experts_implementation="eager" (the per-expert loop). Each line prints the
fraction of (token, slot) routing pairs that land on the k most-loaded
experts of each layer (mean over layers), read from HF's router outputs on
the benchmark input by a forward hook. Fastest of --repeat runs, the same
thread count on both sides.

    python bench/cpu_moe.py [--quick] [--hidden 512 --layers 8 --experts 32 --topk 4 ...]
"""

import argparse
import os
import tempfile

import torch
from transformers import Qwen3MoeConfig, AutoModelForCausalLM
from transformers.utils import logging as hf_logging

from train_steps import hf_step, tfm_step


def routing_share(model, ids, k):
    """Mean over layers of the share of (token, slot) pairs on that layer's k most-loaded experts."""
    counts, hooks = [], []
    for layer in model.model.layers:
        gate = layer.mlp.gate
        hooks.append(gate.register_forward_hook(
            lambda mod, inp, out: counts.append(torch.bincount(out[2].reshape(-1), minlength=mod.num_experts))))
    with torch.no_grad():
        model(input_ids=ids)
    for h in hooks:
        h.remove()
    return sum((c.topk(k).values.sum() / c.sum()).item() for c in counts) / len(counts)


def skew_router(model, ids, k, shift):
    """Add shift * mean-direction / mean-projection to router rows 0..k-1 of every layer.

    A pre-hook sets each layer's router from that layer's actual input just
    before it runs, so later layers are calibrated on the skewed earlier ones.
    """
    hooks = []

    def pre(mod, inp):
        h = inp[0].reshape(-1, mod.hidden_dim).float()
        mu = h.mean(0)
        proj = (h @ mu).mean()  # mean over tokens of <h, mu>: positive, the common component
        mod.weight[:k] += (shift / proj) * mu

    for layer in model.model.layers:
        hooks.append(layer.mlp.gate.register_forward_pre_hook(pre))
    with torch.no_grad():
        model(input_ids=ids)
    for h in hooks:
        h.remove()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--experts", type=int, default=32)
    ap.add_argument("--topk", type=int, default=4)
    ap.add_argument("--moe-intermediate", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skew", type=float, default=2.0,
                    help="skewed case: router logit shift of experts 0..topk-1 (mean over tokens)")
    ap.add_argument("--quick", action="store_true", help="smoke run: hidden 256, 2 layers, seq 64")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("THREADS", "1")))
    ap.add_argument("--tfm-run", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "tfm-run"))
    args = ap.parse_args()
    if args.quick:
        args.hidden, args.layers, args.seq = 256, 2, 64
    hf_logging.disable_progress_bar()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    cfg = Qwen3MoeConfig(vocab_size=args.vocab, hidden_size=args.hidden, num_hidden_layers=args.layers,
                         num_attention_heads=args.hidden // 64, num_key_value_heads=max(1, args.hidden // 256),
                         head_dim=64, num_experts=args.experts, num_experts_per_tok=args.topk,
                         moe_intermediate_size=args.moe_intermediate, norm_topk_prob=True,
                         max_position_embeddings=4096)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").float().eval()
    default_impl = model.config._experts_implementation
    params = sum(p.numel() for p in model.parameters())
    active = params - args.layers * (args.experts - args.topk) * 3 * args.hidden * args.moe_intermediate
    ids = torch.randint(0, args.vocab, (args.batch, args.seq))
    tokens = args.batch * args.seq
    print(f"training step (forward + backward), Qwen3-MoE-style {params / 1e6:.1f}M parameters "
          f"({active / 1e6:.1f}M active), {args.layers} layers, hidden {args.hidden}, "
          f"{args.experts} experts top-{args.topk} x {args.moe_intermediate}, "
          f"{args.batch}x{args.seq} tokens, {args.threads} thread(s); tokens/s, fastest of {args.repeat}")
    print(f"  top-{args.topk} share: (token, slot) pairs on each layer's {args.topk} most-loaded experts "
          f"(HF router on this input, mean over layers; uniform = {args.topk / args.experts:.3f})")
    print(f"  {'routing':8s} {'top-' + str(args.topk) + ' share':>12s} {'tfm-run':>9s} "
          f"{'HF ' + default_impl:>15s} {'HF eager':>9s} {'tfm/HF-' + default_impl:>17s} {'tfm/HF-eager':>12s}")
    with tempfile.TemporaryDirectory() as d:
        for case in ("balanced", "skewed"):
            if case == "skewed":
                skew_router(model, ids, args.topk, args.skew)
            share = routing_share(model, ids, args.topk)
            tfm = tfm_step(args, model, ids, d)
            model.set_experts_implementation(default_impl)
            hf = hf_step(model, ids, args.repeat)
            model.set_experts_implementation("eager")
            hf_eager = hf_step(model, ids, args.repeat)
            model.set_experts_implementation(default_impl)
            print(f"  {case:8s} {share:12.3f} {tokens / tfm:9.0f} {tokens / hf:15.0f} {tokens / hf_eager:9.0f} "
                  f"{hf / tfm:16.2f}x {hf_eager / tfm:11.2f}x", flush=True)


if __name__ == "__main__":
    main()
