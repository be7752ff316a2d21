"""Checks tfm-run's logits and loss against Hugging Face's own modeling code.

For one family and variant: builds a tiny random-weight HF model from a
config written here (eager attention, f32, CPU), saves it as a checkpoint,
runs it through transformers for the reference, runs `tfm-run` on the same
folder, and compares:

    logits  |d| <= 1e-4 + 1e-4 * |ref|      loss  |d| <= 1e-5

Usage: hf_forward_check.py --family llama --variant llama3 --tfm-run PATH --workdir DIR
       hf_forward_check.py --list
Exit status 0 when every compared value is within tolerance.
"""

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys

# HF's pure-torch paths only: no kernels fetched from the Hub.
os.environ.setdefault("USE_HUB_KERNELS", "NO")

import numpy as np
from safetensors import safe_open

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_cache import load_tensors, reference_dir  # noqa: E402

# torch and transformers are imported where the reference is computed:
# with the reference cached (reference_cache.py), the check runs on numpy
# alone.

# Tiny shapes: hidden 32, 4 query heads, 2 KV heads (GQA), 2-3 layers, a
# vocabulary of 96, sequences of 9 tokens (longer than every window below).
BASE = dict(vocab_size=96, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
            pad_token_id=None, bos_token_id=None, eos_token_id=None)

# Each variant exercises the branches its family can take. Comments say why
# the numbers were chosen.
VARIANTS = {
    "llama": {
        # llama3 rope with head_dim 16 (8 frequencies): with theta 10000 the
        # wavelengths run from 6.3 to ~19000; original 64 with low 1 / high 4
        # puts wavelengths < 16 in the high band, > 64 in the low band and the
        # rest in the smoothed band, so all three branches are used.
        "llama3": dict(head_dim=16, rope_theta=10000.0, attention_bias=True, mlp_bias=True,
                       max_position_embeddings=128,
                       rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                         high_freq_factor=4.0,
                                         original_max_position_embeddings=64)),
        "tied_linear": dict(tie_word_embeddings=True, num_hidden_layers=3,
                            rope_scaling=dict(type="linear", factor=2.0)),
    },
    "mistral": {
        "window": dict(sliding_window=3, rope_theta=1e6),
    },
    "qwen2": {
        # Layers >= max_window_layers slide when use_sliding_window is set.
        "sliding": dict(use_sliding_window=True, sliding_window=4, max_window_layers=1,
                        tie_word_embeddings=True),
        "plain": dict(),
    },
    "qwen3": {
        # head_dim 12 != 32 / 4, per-head q/k norm, yarn rope.
        "yarn": dict(head_dim=12, tie_word_embeddings=True,
                     rope_scaling=dict(rope_type="yarn", factor=4.0,
                                       original_max_position_embeddings=16)),
    },
    "gemma2": {
        # Caps small enough to bite; window 3 on even layers; scale from
        # query_pre_attn_scalar.
        "softcap": dict(head_dim=8, num_hidden_layers=3, sliding_window=3,
                        attn_logit_softcapping=2.0, final_logit_softcapping=1.5,
                        query_pre_attn_scalar=24),
    },
    "gemma3_text": {
        # Pattern 2: sliding, full, sliding; local and global rope bases;
        # linear scaling on the global layers only.
        "pattern": dict(head_dim=8, num_hidden_layers=3, sliding_window=3,
                        sliding_window_pattern=2, rope_theta=1e6, rope_local_base_freq=100.0,
                        final_logit_softcapping=3.0, query_pre_attn_scalar=16,
                        rope_scaling=dict(rope_type="linear", factor=4.0)),
    },
    "phi3": {
        # Fused qkv_proj / gate_up_proj, partial rotary (half of head_dim 8),
        # longrope with original 4 < 9 tokens so the long factors are used.
        "longrope": dict(partial_rotary_factor=0.5, sliding_window=5,
                         original_max_position_embeddings=4,
                         rope_scaling=dict(type="longrope", short_factor=[1.0, 1.5],
                                           long_factor=[2.0, 3.5])),
        "short": dict(original_max_position_embeddings=64, max_position_embeddings=128,
                      rope_scaling=dict(type="longrope", short_factor=[1.0, 1.1, 1.2, 1.3],
                                        long_factor=[2.0, 3.0, 4.0, 5.0])),
    },
    "olmo2": {
        "postnorm": dict(num_hidden_layers=3),
    },
    "smollm3": {
        # Interval 2: layers 1 and 3 are NoPE.
        "nope": dict(num_hidden_layers=4, no_rope_layer_interval=2),
    },
    # Mixture of experts (HF's eager expert loop). 18 tokens x top-k pairs
    # over the experts; "starved" variants have more experts than pairs
    # reach, so some expert gets no token (its gradient must be exact 0).
    "mixtral": {
        "experts": dict(num_local_experts=8, num_experts_per_tok=2, intermediate_size=16,
                        sliding_window=5),
        "starved": dict(num_local_experts=16, num_experts_per_tok=2, intermediate_size=16),
        # HF adds the load-balancing loss (coefficient large enough to move
        # every router gradient visibly).
        "aux_loss": dict(num_local_experts=8, num_experts_per_tok=2, intermediate_size=16,
                         output_router_logits=True, router_aux_loss_coef=0.5),
    },
    "qwen3_moe": {
        # Per-head q/k norm with head_dim 12 != 32 / 4, renormalised top-3.
        "norm_topk": dict(num_experts=8, num_experts_per_tok=3, moe_intermediate_size=16,
                          norm_topk_prob=True, head_dim=12),
        # Unnormalised weights, every layer sliding, and a router scaled
        # down so the routing margins are small (but above f32 rounding).
        "small_margin": dict(num_experts=16, num_experts_per_tok=4, moe_intermediate_size=8,
                             use_sliding_window=True, sliding_window=4),
        # Dense MLP layers (intermediate_size wide) between MoE layers:
        # layer 0 by mlp_only_layers, layer 2 by decoder_sparse_step; the
        # aux loss covers the MoE layers only.
        "dense_layers": dict(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=16,
                             intermediate_size=24, num_hidden_layers=4, mlp_only_layers=[0],
                             decoder_sparse_step=2, output_router_logits=True,
                             router_aux_loss_coef=0.5),
    },
    "olmoe": {
        # Whole-projection q/k norms, pre-norm block, top-2 of 8.
        "whole_qk": dict(num_experts=8, num_experts_per_tok=2, intermediate_size=16),
    },
    "granitemoe": {
        # Softmax over the top-k logits; every multiplier away from 1 (the
        # attention multiplier is the softmax scale, logits are divided).
        "multipliers": dict(num_local_experts=8, num_experts_per_tok=2, intermediate_size=16,
                            embedding_multiplier=2.5, residual_multiplier=0.6,
                            attention_multiplier=0.2, logits_scaling=3.0),
        # The aux loss takes the softmax over all experts although routing
        # takes it over the top-k logits only.
        "aux_loss": dict(num_local_experts=8, num_experts_per_tok=3, intermediate_size=16,
                         output_router_logits=True, router_aux_loss_coef=0.3),
    },
    "deepseek_v3": {
        # MLA (q through the low-rank path, kv latent 16, nope 8 + rope 4
        # per q·k head, v 6), interleaved RoPE with yarn (mscale_all_dim
        # enters the softmax scale), a dense first layer, 8 routed experts
        # in 4 groups of which 2 are kept (sigmoid + a non-zero correction
        # bias chooses), top-3 renormalised and scaled by 2.5, one shared
        # expert; all heads are key heads in MLA.
        "mla": dict(num_hidden_layers=3, num_key_value_heads=4, q_lora_rank=24,
                    kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=6,
                    n_routed_experts=8, num_experts_per_tok=3, n_group=4, topk_group=2,
                    moe_intermediate_size=16, n_shared_experts=1, first_k_dense_replace=1,
                    routed_scaling_factor=2.5, norm_topk_prob=True,
                    rope_scaling=dict(type="yarn", factor=4.0, original_max_position_embeddings=16,
                                      mscale=1.0, mscale_all_dim=0.8)),
        # Head dims that are multiples of 32 (q·k 64, v 32), so the GPU path
        # uses its flash-attention kernels with a value head narrower than
        # the q·k head.
        "flash_heads": dict(num_hidden_layers=2, num_key_value_heads=4, q_lora_rank=24,
                            kv_lora_rank=16, qk_nope_head_dim=32, qk_rope_head_dim=32,
                            v_head_dim=32, n_routed_experts=8, num_experts_per_tok=2,
                            n_group=2, topk_group=1, moe_intermediate_size=16,
                            n_shared_experts=1, first_k_dense_replace=1),
        # q_proj without the low-rank path, no yarn, every layer MoE,
        # unnormalised weights, one group, two shared experts (one MLP twice as wide).
        "plain_q": dict(num_hidden_layers=2, num_key_value_heads=4, q_lora_rank=None,
                        kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8,
                        n_routed_experts=8, num_experts_per_tok=2, n_group=1, topk_group=1,
                        moe_intermediate_size=16, n_shared_experts=2, first_k_dense_replace=0,
                        routed_scaling_factor=1.0, norm_topk_prob=False),
    },
    "deepseek_v2": {
        # DeepSeek-V2's differences from V3: softmax routing, group-limited
        # by group max (4 groups, 2 kept), scaled by 1.5 and never
        # renormalised (norm_topk_prob true is ignored, as in HF), two shared
        # experts, mlp_bias on the dense and shared MLPs, complex-number
        # (interleaved) RoPE with yarn; q_proj without the low-rank path
        # (V2-Lite).
        "group_limited": dict(num_hidden_layers=3, num_key_value_heads=4, q_lora_rank=None,
                              kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4,
                              v_head_dim=6, n_routed_experts=8, num_experts_per_tok=3,
                              topk_method="group_limited_greedy", n_group=4, topk_group=2,
                              moe_intermediate_size=16, n_shared_experts=2,
                              first_k_dense_replace=1, routed_scaling_factor=1.5,
                              norm_topk_prob=True, mlp_bias=True,
                              rope_scaling=dict(type="yarn", factor=4.0,
                                                original_max_position_embeddings=16,
                                                mscale=0.707, mscale_all_dim=0.707)),
        # Greedy top-k with the low-rank q path.
        "greedy": dict(num_hidden_layers=2, num_key_value_heads=4, q_lora_rank=24,
                       kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8,
                       n_routed_experts=8, num_experts_per_tok=2, topk_method="greedy",
                       moe_intermediate_size=16, n_shared_experts=1, first_k_dense_replace=0),
    },
    "glm4_moe": {
        # GLM-4.5: GQA with q/k/v biases (none on o), per-head q/k norms,
        # RoPE on the first half of each head (partial_rotary_factor's class
        # default 0.5), a dense first layer, sigmoid routing with the
        # correction bias over 4 groups of which 2 are kept, renormalised
        # and scaled by 2.5, a shared expert.
        "qk_norm": dict(num_hidden_layers=3, head_dim=12, attention_bias=True, use_qk_norm=True,
                        n_routed_experts=8, num_experts_per_tok=3, n_group=4, topk_group=2,
                        moe_intermediate_size=16, n_shared_experts=1, first_k_dense_replace=1,
                        routed_scaling_factor=2.5, norm_topk_prob=True),
        # No qk norm or biases, one group, unnormalised, rope on a quarter.
        "plain": dict(num_hidden_layers=2, attention_bias=False, use_qk_norm=False,
                      n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=16,
                      n_shared_experts=1, first_k_dense_replace=0, norm_topk_prob=False,
                      partial_rotary_factor=0.25),
    },
    "gpt_oss": {
        # Sinks, q/k/v/o biases, alternating sliding (3) / full layers, yarn
        # RoPE (the class default); biased router, [E, in, out] experts
        # with biases, clamped SwiGLU with limit 1 so both clamps bite.
        "clamped": dict(num_local_experts=8, num_experts_per_tok=2, intermediate_size=16,
                        head_dim=8, sliding_window=3, swiglu_limit=1.0),
        "aux_loss": dict(num_local_experts=8, num_experts_per_tok=3, intermediate_size=16,
                         head_dim=8, sliding_window=4, num_hidden_layers=3,
                         output_router_logits=True, router_aux_loss_coef=0.4),
    },
    "mamba2": {
        # 8 heads of 8 in 2 groups (B and C shared by 4 heads each), state
        # 6, chunks of 4 over T = 9 (4 + 4 + 1: the state crosses two chunk
        # boundaries and the last chunk is partial), conv bias, no
        # projection biases.
        "chunked": dict(num_hidden_layers=2, num_heads=8, head_dim=8, expand=2, n_groups=2,
                        state_size=6, conv_kernel=4, chunk_size=4),
        # Projection biases, no conv bias, kernel 3, one group, chunks of 3,
        # a dt clamp that binds on both sides, tied embeddings.
        "biases_limit": dict(num_hidden_layers=3, num_heads=4, head_dim=16, expand=2,
                             n_groups=1, state_size=8, conv_kernel=3, chunk_size=3,
                             use_bias=True, use_conv_bias=False,
                             time_step_limit=(0.3, 1.2), tie_word_embeddings=True),
    },
    "nemotron_h": {
        # Every letter: M (Mamba2: 8 heads of 8 in 2 groups, state 6, chunks
        # of 4, dt clamped below at time_step_min 0.05), * (attention without
        # RoPE), - (relu2 MLP), E (relu2 experts, 8 in 2 groups of which 1
        # is kept, sigmoid + correction bias, top-2 renormalised and scaled
        # by 2, a shared expert of its own width).
        "hybrid": dict(hybrid_override_pattern="M*-ME", num_hidden_layers=5, head_dim=8,
                       mamba_num_heads=8, mamba_head_dim=8, n_groups=2, ssm_state_size=6,
                       chunk_size=4, conv_kernel=4, time_step_min=0.05,
                       n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=16,
                       moe_shared_expert_intermediate_size=24, n_group=2, topk_group=1,
                       norm_topk_prob=True, routed_scaling_factor=2.0),
        # MoE latent projections (experts in width 12), MLP and projection
        # biases, no conv bias, unnormalised routing, the layers given as
        # layers_block_type.
        "latent": dict(layers_block_type=["moe", "full_attention", "linear_attention", "mlp"],
                       num_hidden_layers=4, head_dim=8, mamba_num_heads=4, mamba_head_dim=16,
                       n_groups=1, ssm_state_size=8, chunk_size=3, use_conv_bias=False,
                       use_bias=True, mlp_bias=True, n_routed_experts=6, num_experts_per_tok=2,
                       moe_intermediate_size=16, moe_shared_expert_intermediate_size=16,
                       moe_latent_size=12, norm_topk_prob=False, routed_scaling_factor=1.5),
    },
    # Gated DeltaNet hybrids. "_seq" is the token count: 70 > 64 so the
    # delta rule (HF's chunks of 64) carries its state across a chunk
    # boundary, with a partial last chunk.
    "qwen3_next": {
        # full_attention_interval 2: DeltaNet (2 key heads of 8, 4 value
        # heads of 6, conv 4) and gated attention (head_dim 8, partial RoPE
        # 0.5, zero-centred q/k norms) alternating; MoE (top-2 of 8,
        # renormalised) with the sigmoid-gated shared expert, layer 1 dense
        # by mlp_only_layers.
        "hybrid": dict(num_hidden_layers=4, full_attention_interval=2, head_dim=8,
                       partial_rotary_factor=0.5, linear_num_key_heads=2,
                       linear_num_value_heads=4, linear_key_head_dim=8,
                       linear_value_head_dim=6, linear_conv_kernel_dim=4, num_experts=8,
                       num_experts_per_tok=2, moe_intermediate_size=16,
                       shared_expert_intermediate_size=24, norm_topk_prob=True,
                       mlp_only_layers=[1], intermediate_size=40, _seq=70,
                       max_position_embeddings=128),
        # layer_types given (attention first), one key head for two value
        # heads, unnormalised routing, decoder_sparse_step 2, the
        # load-balancing loss, a short sequence (one partial chunk).
        "layer_types": dict(num_hidden_layers=3, layer_types=["full_attention",
                            "linear_attention", "linear_attention"], head_dim=8,
                            linear_num_key_heads=1, linear_num_value_heads=2,
                            linear_key_head_dim=8, linear_value_head_dim=8,
                            linear_conv_kernel_dim=3, num_experts=6, num_experts_per_tok=2,
                            moe_intermediate_size=16, shared_expert_intermediate_size=16,
                            norm_topk_prob=False, decoder_sparse_step=2,
                            output_router_logits=True, router_aux_loss_coef=0.5),
    },
    "qwen3_5_text": {
        # Qwen3.5's dense text model: the four DeltaNet in-projections,
        # every third layer attention, tied embeddings.
        "dense": dict(num_hidden_layers=3, full_attention_interval=3, head_dim=8,
                      linear_num_key_heads=2, linear_num_value_heads=4,
                      linear_key_head_dim=8, linear_value_head_dim=6, tie_word_embeddings=True,
                      _seq=70, max_position_embeddings=128),
    },
    "qwen3_5_moe_text": {
        # Qwen3.5-MoE: MoE (always renormalised) on every layer.
        "moe": dict(num_hidden_layers=2, full_attention_interval=2, head_dim=8,
                    linear_num_key_heads=2, linear_num_value_heads=2,
                    linear_key_head_dim=8, linear_value_head_dim=8, num_experts=8,
                    num_experts_per_tok=2, moe_intermediate_size=16,
                    shared_expert_intermediate_size=16, _seq=70,
                    max_position_embeddings=128),
    },
    "falcon_h1": {
        # Attention (GQA 4/2, head_dim 8, RoPE) and Mamba2 (4 heads of 16,
        # 2 groups, state 6, chunks of 4, conv 3) in parallel, then SwiGLU;
        # every muP multiplier away from 1, the mixer without its norm
        # (y · silu(z)), all biases.
        "mup": dict(head_dim=8, mamba_d_ssm=64, mamba_n_heads=4, mamba_d_head="auto",
                    mamba_n_groups=2, mamba_d_state=6, mamba_d_conv=3, mamba_chunk_size=4,
                    mamba_rms_norm=False, mamba_proj_bias=True, projectors_bias=True,
                    attention_bias=True, mlp_bias=True, rope_theta=1e4,
                    embedding_multiplier=1.7, lm_head_multiplier=0.6, key_multiplier=0.8,
                    attention_in_multiplier=1.3, attention_out_multiplier=0.7,
                    ssm_in_multiplier=1.25, ssm_out_multiplier=0.5,
                    ssm_multipliers=[0.9, 0.6, 1.4, 0.5, 1.2], mlp_multipliers=[0.8, 1.5]),
        # The gated norm (grouped by 2), norm before the gate (the class
        # default), mamba_d_ssm null (expand x hidden), tied embeddings.
        "gated_norm": dict(head_dim=8, mamba_d_ssm=None, mamba_expand=2, mamba_n_heads=8,
                           mamba_d_head=8, mamba_n_groups=2, mamba_d_state=4,
                           mamba_chunk_size=3, mamba_rms_norm=True, tie_word_embeddings=True,
                           ssm_multipliers=[1.1, 0.9, 1.0, 1.2, 0.8], key_multiplier=0.5),
    },
}

MOE_FAMILIES = {"mixtral", "qwen3_moe", "olmoe", "granitemoe", "gpt_oss", "deepseek_v2",
                "deepseek_v3", "glm4_moe", "nemotron_h", "qwen3_next", "qwen3_5_moe_text"}
# Router weights (per family, by name suffix) rescaled after randomisation.
ROUTER_STD = {("qwen3_moe", "small_margin"): 0.02}
# DeltaNet in-projections rescaled: at std 0.4 the keys and gates make the
# UT transform so ill-conditioned that HF's own f32 forward differs from
# its f64 one by 5e-5 of max|logits| (above the tolerance); at 0.15, 4e-6.
DELTANET_FAMILIES = {"qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"}
DELTANET_IN_STD = 0.15
# Qwen3.5's hub checkpoints hold the text model under model.language_model.
HUB_PREFIX = {"qwen3_5_text": ("model.", "model.language_model."),
              "qwen3_5_moe_text": ("model.", "model.language_model.")}
# Variants that must route no token to some expert.
STARVED = {("mixtral", "starved"), ("qwen3_moe", "small_margin")}

# How the checkpoint is stored: f32/bf16/f16/sharded as save_pretrained
# writes it (for MoE families: the HF 4.x hub layout, per-expert tensors or
# older names), stacked as the model's own transformers-5 state dict.
STORAGE = {"f32", "bf16", "f16", "sharded", "stacked"}


def hub_names(family, tensors):
    """`tensors` renamed as the hub's multimodal checkpoints of `family`
    store them (HUB_PREFIX); unchanged for other families."""
    if family not in HUB_PREFIX:
        return tensors
    old, new = HUB_PREFIX[family]
    return {(new + n[len(old):] if n.startswith(old) else n): t for n, t in tensors.items()}


def store_in_hub_layout(family, ckpt):
    """Renames a saved text model's tensors as the hub's multimodal
    checkpoints store them (HUB_PREFIX); other families are left as saved."""
    if family not in HUB_PREFIX:
        return
    from safetensors.torch import load_file, save_file
    path = os.path.join(ckpt, "model.safetensors")
    save_file(hub_names(family, load_file(path)), path, metadata={"format": "pt"})


def build_model(family, variant, seed):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    fields = dict(BASE)
    fields.update(VARIANTS[family][variant])
    fields.pop("_seq", None)
    config = AutoConfig.for_model(family, **fields)
    torch.manual_seed(seed)
    extra = dict(experts_implementation="eager") if family in MOE_FAMILIES else {}
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager",
                                             **extra).float().eval()
    # HF initialises norms to ones/zeros and linears at std 0.02: too gentle
    # to exercise (1 + w) norms, biases and soft-caps. Randomise everything.
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.normal_(0.0, 0.4)
            if (family, variant) in ROUTER_STD and n.endswith((".gate.weight", ".router.weight")):
                p.normal_(0.0, ROUTER_STD[(family, variant)])
            if family in DELTANET_FAMILIES and ".linear_attn.in_proj" in n:
                p.normal_(0.0, DELTANET_IN_STD)
        # DeepSeek's selection bias is a buffer: make it bite too.
        for n, buf in model.named_buffers():
            if n.endswith("e_score_correction_bias"):
                buf.normal_(0.0, 0.5)
    return model


def stored_names(model, tensors, storage):
    """`tensors` (named as the model's state dict) under the names the
    checkpoint stores: the model's own (transformers-5) names, or those
    save_pretrained writes (per expert), with the hub's prefix."""
    if storage != "stacked":
        from transformers.core_model_loading import revert_weight_conversion
        tensors = revert_weight_conversion(model, tensors)
    return hub_names(model.config.model_type, tensors)


def starved_experts(grads):
    """(name, expert) of expert gradients that are exactly zero: experts that
    received no token (stacked [E, ...] tensors and per-expert ones)."""
    out = []
    for n, g in grads.items():
        if "experts" not in n:
            continue
        if ".experts." in n and n.split(".experts.")[1].split(".")[0].isdigit():
            if not g.any():
                out.append((n, None))
        else:
            out += [(n, e) for e in range(g.shape[0]) if not g[e].any()]
    return out


def tokens(vocab, seed, length=9):
    import torch
    g = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, vocab, (2, length), generator=g)
    labels = ids.clone()
    labels[0, 4] = -100  # ignored target
    labels[1, 0] = -100  # position 0 is never a target after the shift
    return ids, labels


# --packed: three documents in one row, as HF's DataCollatorWithFlattening
# lays them out (position_ids restart at 0, the label of each document's
# first token is -100). Longer than every window, so windows and document
# starts both cut.
PACKED_DOCS = (6, 3, 7)


def packed_reference(model, vocab, seed, grads, kw):
    """HF on each document alone; the packed row's logits are theirs side by
    side, its loss theirs combined by target count (len - 1 per document),
    its gradients those of that combination. Returns (row, logits, loss)."""
    import torch
    g = torch.Generator().manual_seed(seed + 1)
    docs = [torch.randint(0, vocab, (1, n), generator=g) for n in PACKED_DOCS]
    counts = [n - 1 for n in PACKED_DOCS]
    logits, losses = [], []
    for d in docs:
        out = model(input_ids=d, labels=d, **kw)
        logits.append(out.logits)
        losses.append(out.loss)
    loss = sum(c * l for c, l in zip(counts, losses)) / sum(counts)
    if grads:
        loss.backward()
    ids = torch.cat(docs, 1)
    labels = ids.clone()
    row = {"input_ids": ids.tolist(),
           "position_ids": [sum((list(range(n)) for n in PACKED_DOCS), [])]}
    start = 0
    for n in PACKED_DOCS:
        labels[0, start] = -100
        start += n
    row["labels"] = labels.tolist()
    return row, torch.cat(logits, 1), loss


def save_checkpoint(model, ckpt, storage):
    """`model` saved as `storage` says (STORAGE)."""
    import torch
    if storage in ("bf16", "f16"):
        # Store in half precision; the reference runs on the same rounded
        # weights in f32, which is what tfm-run computes with.
        dt = torch.bfloat16 if storage == "bf16" else torch.float16
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.to(dt).float())
        # Save a copy: converting the model itself would also round its f32
        # RoPE buffers and degrade the reference.
        copy.deepcopy(model).to(dt).save_pretrained(ckpt)
    elif storage == "stacked":
        from safetensors.torch import save_file
        os.makedirs(ckpt)
        model.config.save_pretrained(ckpt)
        save_file({n: t.contiguous() for n, t in model.state_dict().items()},
                  os.path.join(ckpt, "model.safetensors"))
    elif storage == "sharded":
        model.save_pretrained(ckpt, max_shard_size="20KB")
        assert os.path.exists(os.path.join(ckpt, "model.safetensors.index.json"))
    else:
        model.save_pretrained(ckpt)
    store_in_hub_layout(model.config.model_type, ckpt)


def write_reference(args, out):
    """HF's side, written to `out`: the checkpoint (ckpt/), the batch
    (tokens.json), and in reference.safetensors (f32) the logits, the loss,
    with --grads every parameter gradient under its stored name
    ("grad/NAME"), with --dtype bf16 HF's own bf16 logits and loss
    ("hf_bf16/..."); reference.json lists the stored buffers."""
    import torch
    from safetensors.torch import save_file
    model = build_model(args.family, args.variant, args.seed)
    save_checkpoint(model, os.path.join(out, "ckpt"), args.storage)
    kw = {}
    if args.moe_aux_loss in ("on", "off"):
        kw["output_router_logits"] = args.moe_aux_loss == "on"
    if args.packed:
        with torch.set_grad_enabled(args.grads):
            row, ref_logits, ref_loss = packed_reference(
                model, model.config.vocab_size, args.seed, args.grads, kw)
        with open(os.path.join(out, "tokens.json"), "w") as f:
            json.dump(row, f)
        arrays = {"logits": ref_logits, "loss": ref_loss.reshape(1)}
    else:
        ids, labels = tokens(model.config.vocab_size, args.seed,
                             VARIANTS[args.family][args.variant].get("_seq", 9))
        with open(os.path.join(out, "tokens.json"), "w") as f:
            json.dump({"input_ids": ids.tolist(), "labels": labels.tolist()}, f)
        if args.grads:
            ref = model(input_ids=ids, labels=labels, **kw)
            ref.loss.backward()
        else:
            with torch.no_grad():
                ref = model(input_ids=ids, labels=labels, **kw)
        arrays = {"logits": ref.logits, "loss": ref.loss.reshape(1)}
    if args.grads:
        grads = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
        arrays.update({"grad/" + n: g for n, g in stored_names(model, grads, args.storage).items()})
    if args.dtype == "bf16":
        with torch.no_grad():
            hf16 = copy.deepcopy(model).to(torch.bfloat16)(input_ids=ids, labels=labels)
        arrays["hf_bf16/logits"] = hf16.logits
        arrays["hf_bf16/loss"] = hf16.loss.reshape(1)
    save_file({n: t.detach().float().contiguous() for n, t in arrays.items()},
              os.path.join(out, "reference.safetensors"))
    # Buffers (DeepSeek's correction bias) are stored but never trained.
    buffers = stored_names(model, dict(model.named_buffers()), args.storage)
    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump({"buffers": sorted(buffers)}, f)


def check_bf16(args, ref, got):
    """bf16 compute has no exact reference: HF's own bf16 model deviates from
    the f32 one (same rounded weights) by e_hf. tfm's bf16 logits and loss
    must be as close to the f32 reference: e_tfm <= 2 e_hf + 1e-3 (relative
    to max|logits| for logits, absolute for the loss). And they must show
    bf16 rounding at all (e_tfm >= e_hf / 20): an f32 computation would
    otherwise pass."""
    logits, hf16 = ref["logits"], ref["hf_bf16/logits"]
    if got["logits"].shape != logits.shape:
        print(f"FAIL logits shape {got['logits'].shape} vs {logits.shape}")
        return 1
    scale = np.abs(logits).max()
    e_tfm = np.abs(got["logits"].astype(np.float32) - logits).max() / scale
    e_hf = np.abs(hf16 - logits).max() / scale
    loss = ref["loss"].item()
    l_tfm = abs(got["loss"].item() - loss)
    l_hf = abs(ref["hf_bf16/loss"].item() - loss)
    print(f"{args.family}/{args.variant}/bf16 compute: logits max|d|/max|ref| tfm {e_tfm:.3e},"
          f" hf-bf16 {e_hf:.3e}; loss |d| tfm {l_tfm:.2e}, hf-bf16 {l_hf:.2e}")
    ok = e_tfm <= 2 * e_hf + 1e-3 and l_tfm <= 2 * l_hf + 1e-3
    if not ok:
        print("FAIL bf16 error above twice HF's own bf16 error (+1e-3)")
    if e_tfm < e_hf / 20:
        print("FAIL logits show no bf16 rounding: was the model computed in bf16?")
        ok = False
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family")
    ap.add_argument("--variant")
    ap.add_argument("--storage", default="f32", choices=sorted(STORAGE))
    ap.add_argument("--tfm-run", dest="tfm_run")
    ap.add_argument("--workdir")
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16"],
                    help="tfm-run --dtype; bf16 compares against HF's own bf16 error")
    ap.add_argument("--device", default="cpu",
                    help="tfm-run --device (gpu-sim: the GPU path's kernels as CPU loops)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--grads", action="store_true",
                    help="also compare every parameter gradient with torch autograd")
    ap.add_argument("--moe-aux-loss", dest="moe_aux_loss", choices=["auto", "on", "off"],
                    help="tfm-run --moe-aux-loss; the reference forward gets "
                         "output_router_logits to match (auto: the config's)")
    ap.add_argument("--no-fusion", dest="no_fusion", action="store_true",
                    help="tfm-run --no-fusion: the HF-literal IR as imported")
    ap.add_argument("--no-logits", dest="no_logits", action="store_true",
                    help="tfm-run --no-logits: the loss-only step (fused LM-head "
                         "loss); checks loss and gradients")
    ap.add_argument("--recompute", action="append",
                    help="tfm-run --recompute=BUDGET (repeatable: every plan is "
                         "checked against HF and must match the first bit for bit)")
    ap.add_argument("--packed", action="store_true",
                    help="one row of three packed documents (position_ids restart "
                         "at 0) against HF on each document alone")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        for f, vs in VARIANTS.items():
            for v in vs:
                print(f, v)
        return 0

    if args.packed and (args.dtype == "bf16" or args.moe_aux_loss == "on"):
        sys.exit("--packed compares f32 without the load-balancing loss "
                 "(HF computes it over each call's tokens)")
    if args.dtype == "bf16":
        if args.no_logits:
            sys.exit("--dtype bf16 compares logits; it takes no --no-logits")
        if args.grads:
            sys.exit("--dtype bf16 checks logits and loss only (no exact bf16 gradient reference)")
        args.storage = "bf16"
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    # Everything HF's side depends on; the rest only changes the tfm-run
    # command line.
    fields = {k: getattr(args, k) for k in ("family", "variant", "storage", "dtype", "seed",
                                            "grads", "moe_aux_loss", "packed")}
    refdir = reference_dir("hf_forward_check", fields,
                           lambda out: write_reference(args, out), args.workdir)
    ckpt = os.path.join(args.workdir, "ckpt")
    tok = os.path.join(args.workdir, "tokens.json")
    shutil.copytree(os.path.join(refdir, "ckpt"), ckpt)
    shutil.copy(os.path.join(refdir, "tokens.json"), tok)
    ref = load_tensors(os.path.join(refdir, "reference.safetensors"))
    with open(os.path.join(refdir, "reference.json")) as f:
        ref_meta = json.load(f)

    # Each recompute plan must give HF's numbers, and bit-identical ones
    # (rebuilding runs the same ops on the same operands).
    first = None
    for budget in args.recompute or [None]:
        got = run_and_check(args, ckpt, tok, ref, ref_meta, budget)
        if got is None:
            return 1
        if first is None:
            first = (budget, got)
            continue
        for k in sorted(set(first[1]) | set(got)):
            if k not in got or k not in first[1] or got[k].dtype != first[1][k].dtype \
                    or not np.array_equal(got[k], first[1][k]):
                print(f"FAIL --recompute={budget}: {k} differs from --recompute={first[0]}")
                return 1
        print(f"--recompute={budget}: {len(got)} tensors bit-identical to --recompute={first[0]}")
    return 0


def checkpoint_names(ckpt):
    """The tensor names of a single-file checkpoint; None when sharded."""
    path = os.path.join(ckpt, "model.safetensors")
    if not os.path.exists(path):
        return None
    with safe_open(path, framework="numpy") as f:
        return set(f.keys())


def max_abs(a):
    return float(np.abs(a).max()) if a.size else 0.0


def run_and_check(args, ckpt, tok, ref, ref_meta, budget):
    """Runs tfm-run (with --recompute=budget when given) and compares with
    HF's reference; the tensors written, or None on a failure."""
    suffix = "" if budget is None else "-" + budget.replace("%", "pct")
    out = os.path.join(args.workdir, f"out{suffix}.safetensors")
    cmd = [args.tfm_run, ckpt, "--tokens", tok, "--output", out, "--device", args.device,
           "--dtype", args.dtype]
    cmd += ["--grads"] if args.grads else []
    cmd += [f"--moe-aux-loss={args.moe_aux_loss}"] if args.moe_aux_loss else []
    cmd += ["--no-fusion"] if args.no_fusion else []
    cmd += ["--no-logits"] if args.no_logits else []
    cmd += [f"--recompute={budget}"] if budget is not None else []
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout, run.stderr)
        print(f"FAIL {args.family}/{args.variant}: tfm-run exited {run.returncode}")
        return None
    got = load_tensors(out)
    if budget is not None:
        print(f"--recompute={budget}:")
    if args.dtype == "bf16":
        return got if check_bf16(args, ref, got) == 0 else None
    ok = True
    logits, loss = ref["logits"], ref["loss"].item()
    if args.no_logits:
        if "logits" in got:
            print("FAIL --no-logits wrote logits")
            ok = False
    else:
        same = got["logits"].shape == logits.shape
        d = np.abs(got["logits"] - logits) if same else None
        print(f"{args.family}/{args.variant}/{args.storage}: max|dlogits| = "
              f"{max_abs(d) if same else float('nan'):.3e} (max|ref| {max_abs(logits):.3f})")
        if not same or not (d - (1e-4 + 1e-4 * np.abs(logits))).max() <= 0:
            print("FAIL logits outside 1e-4 + 1e-4|ref|")
            ok = False
    dl = abs(got["loss"].item() - loss)
    print(f"loss tfm {got['loss'].item():.7f} hf {loss:.7f} |d| = {dl:.2e}")
    if not dl <= 1e-5:
        print("FAIL loss outside 1e-5")
        ok = False
    if args.grads:
        # Every parameter (tied ones under each stored name), per tensor
        # max|d| <= 1e-4 max|ref|; no gradient tfm wrote that HF lacks.
        stored = checkpoint_names(ckpt)
        params = {k[len("grad/"):]: v for k, v in ref.items() if k.startswith("grad/")}
        expected = {n for n in params if stored is None or n in stored}
        written = {k[len("grad/"):] for k in got if k.startswith("grad/")}
        if stored is not None:
            stored -= set(ref_meta["buffers"])
        if stored is not None and written != stored:
            print(f"FAIL gradient names differ from the checkpoint: missing {sorted(stored - written)}, "
                  f"extra {sorted(written - stored)}")
            ok = False
        worst = 0.0
        for n in sorted(expected & written):
            g, r = got["grad/" + n], params[n]
            if g.shape != r.shape:
                print(f"FAIL grad/{n}: shape {g.shape}, HF's {r.shape}")
                ok = False
                continue
            rel = max_abs(g - r) / max(max_abs(r), 1e-30)
            worst = max(worst, rel)
            if not rel <= 1e-4:
                print(f"FAIL grad/{n}: max|d| / max|ref| = {rel:.2e}")
                ok = False
        print(f"{len(expected & written)} gradients, worst max|d| / max|ref| = {worst:.2e}")
        # An expert that receives no token has exact zero gradients.
        starved = starved_experts({n: params[n] for n in expected & written})
        for n, e in starved:
            g = got["grad/" + n] if e is None else got["grad/" + n][e]
            if g.any():
                print(f"FAIL grad/{n}" + (f"[{e}]" if e is not None else "") +
                      ": expert received no token but its gradient is not exactly zero")
                ok = False
        if starved:
            print(f"{len(starved)} expert gradients of experts without tokens: exact zeros")
        if (args.family, args.variant) in STARVED and not starved:
            print("FAIL this variant must leave some expert without a token")
            ok = False
    return got if ok else None


if __name__ == "__main__":
    sys.exit(main())
