"""The Llama-style CPU bench model shared by bench/cpu_forward.py and
bench/train_loop.py: its command-line shape options and its config."""

import os

from transformers import LlamaConfig


def add_model_args(ap):
    """--hidden, --layers, --vocab, --batch, --seq and --threads."""
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("THREADS", "1")))


def llama_config(args):
    """Head dim 64, GQA 4:1 from hidden 1024, SwiGLU width 8/3 rounded to 64."""
    return LlamaConfig(vocab_size=args.vocab, hidden_size=args.hidden,
                       intermediate_size=args.hidden * 8 // 3 // 64 * 64,
                       num_hidden_layers=args.layers, num_attention_heads=args.hidden // 64,
                       num_key_value_heads=max(1, args.hidden // 256),
                       max_position_embeddings=4096)
