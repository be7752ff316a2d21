"""Training-step tokens/s of tfm-run (CPU JIT) against HF eager on MLA layers.

Writes a random-weight DeepSeek-V3-shaped checkpoint whose layers are all
dense (first_k_dense_replace = the layer count), so the figure is the
multi-head latent attention layer (low-rank q, latent kv, interleaved RoPE
on the rotary slice, one rotary key shared by the heads, value heads
narrower than q·k heads) plus a small SwiGLU MLP, and times the training
step (loss with labels and every parameter gradient: torch autograd with
attn_implementation="eager" vs tfm-run --grads) on the same tokens. Fastest
of --repeat runs, the same thread count on both sides.

    python bench/cpu_mla.py [--quick] [--hidden 512 --heads 8 --layers 2 ...]
"""

import argparse
import os
import tempfile

import torch
from transformers import AutoModelForCausalLM, DeepseekV3Config
from transformers.utils import logging as hf_logging

from train_steps import hf_step, tfm_step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--q-lora", type=int, default=192)
    ap.add_argument("--kv-lora", type=int, default=128)
    ap.add_argument("--nope", type=int, default=64)
    ap.add_argument("--rope", type=int, default=32)
    ap.add_argument("--v", type=int, default=64)
    ap.add_argument("--intermediate", type=int, default=1024)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smoke run: hidden 256, 1 layer, seq 64")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("THREADS", "1")))
    ap.add_argument("--tfm-run", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "tfm-run"))
    args = ap.parse_args()
    if args.quick:
        args.hidden, args.layers, args.seq = 256, 1, 64
    hf_logging.disable_progress_bar()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    cfg = DeepseekV3Config(vocab_size=args.vocab, hidden_size=args.hidden, num_hidden_layers=args.layers,
                           num_attention_heads=args.heads, num_key_value_heads=args.heads,
                           q_lora_rank=args.q_lora, kv_lora_rank=args.kv_lora,
                           qk_nope_head_dim=args.nope, qk_rope_head_dim=args.rope, v_head_dim=args.v,
                           intermediate_size=args.intermediate, first_k_dense_replace=args.layers,
                           n_routed_experts=8, num_experts_per_tok=2, n_group=1, topk_group=1,
                           max_position_embeddings=4096)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").float().train()
    params = sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, args.vocab, (args.batch, args.seq))
    tokens = args.batch * args.seq
    print(f"training step (forward + backward), DeepSeek-V3-style MLA, {params / 1e6:.1f}M parameters, "
          f"{args.layers} dense layers, hidden {args.hidden}, {args.heads} heads, q_lora {args.q_lora}, "
          f"kv_lora {args.kv_lora}, q·k head {args.nope}+{args.rope}, v head {args.v}, "
          f"{args.batch}x{args.seq} tokens, {args.threads} thread(s); tokens/s, fastest of {args.repeat}")
    print(f"  {'tfm-run':>9s} {'HF eager':>9s} {'tfm/HF':>8s}")
    with tempfile.TemporaryDirectory() as d:
        tfm = tfm_step(args, model, ids, d)
        hf = hf_step(model, ids, args.repeat)
        print(f"  {tokens / tfm:9.0f} {tokens / hf:9.0f} {hf / tfm:7.2f}x", flush=True)


if __name__ == "__main__":
    main()
