# The importer against the transformers reference: for tiny configs of every
# family and for the real configs in test/Import/Inputs, build the HF model on
# the meta device and compare with `tfm-import-hf`:
#   * parameters: sum(p.numel() for p in model.parameters()) (tied weights
#     once) == `--summary` parameters;
#   * weight map: the HF state_dict names and shapes (minus lm_head.weight when
#     tied) == the names of the #tfm.param attributes, with "{layer}"
#     expanded over the leading dimension of stacked parameters, and the
#     shapes without that dimension;
#   * per layer: the sliding window of the mask HF applies, whether RoPE is
#     applied (SmolLM3 NoPE layers), and the RoPE of the layer: rotary
#     dimension, attention factor and inverse frequencies of HF's rotary
#     embedding versus those the tfm.rope attributes describe.
# One line per case; exit status 1 on any mismatch.
#
# REQUIRES: hf-reference
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %tfm_src tfm-import-hf %t | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: all {{[0-9]+}} cases match

import copy
import glob
import json
import math
import os
import re
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402
from transformers.models.auto.configuration_auto import CONFIG_MAPPING  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

hf_logging.set_verbosity_error()

# ---------------------------------------------------------------------------
# Tiny configs: several per family, each varying what the family reads.
# ---------------------------------------------------------------------------

BASE = dict(vocab_size=96, hidden_size=64, intermediate_size=112, num_hidden_layers=3,
            num_attention_heads=4, max_position_embeddings=256)


def cfg(model_type, arch, **kw):
    c = dict(BASE, model_type=model_type, architectures=[arch])
    c.update(kw)
    return {k: v for k, v in c.items() if v is not DROP}


DROP = object()


def tiny_cases():
    L, M, Q2, Q3 = "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM"
    G2, G3, P3, O2, S3 = ("Gemma2ForCausalLM", "Gemma3ForCausalLM", "Phi3ForCausalLM",
                          "Olmo2ForCausalLM", "SmolLM3ForCausalLM")
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 64}
    return {
        # llama
        "llama-gqa-tied-biases": cfg("llama", L, num_key_value_heads=2, tie_word_embeddings=True,
                                     attention_bias=True, mlp_bias=True),
        "llama-mha-untied-defaults": cfg("llama", L),
        "llama-head-dim-32": cfg("llama", L, num_key_value_heads=1, head_dim=32),
        "llama-llama3-rope": cfg("llama", L, num_key_value_heads=2, rope_theta=500000.0, rope_scaling=llama3),
        "llama-v5-rope-parameters": cfg("llama", L, rope_parameters=dict(llama3, rope_theta=500000.0)),
        "llama-linear-legacy-type": cfg("llama", L, rope_scaling={"type": "linear", "factor": 2.0}),
        "llama-yarn": cfg("llama", L, rope_scaling={"rope_type": "yarn", "factor": 4.0,
                                                    "original_max_position_embeddings": 64}),
        "llama-yarn-mscale-no-truncate": cfg("llama", L, rope_scaling={
            "type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "mscale": 1.0,
            "mscale_all_dim": 0.5, "beta_fast": 16, "beta_slow": 2, "truncate": False}),
        "llama-yarn-derived-factor": cfg("llama", L, max_position_embeddings=512, rope_scaling={
            "rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 64}),
        "llama-kv-null": cfg("llama", L, num_key_value_heads=None, head_dim=None),
        # mistral
        "mistral-window-8": cfg("mistral", M, num_key_value_heads=2, sliding_window=8),
        "mistral-window-null": cfg("mistral", M, num_key_value_heads=2, sliding_window=None, head_dim=32),
        "mistral-class-defaults": cfg("mistral", M, num_attention_heads=8),
        "mistral-layer-types-ignored": cfg("mistral", M, num_key_value_heads=2, sliding_window=16,
                                           layer_types=["full_attention"] * 3),
        # qwen2
        "qwen2-default": cfg("qwen2", Q2, num_key_value_heads=2),
        "qwen2-sliding-top-layer": cfg("qwen2", Q2, num_key_value_heads=2, use_sliding_window=True,
                                       sliding_window=16, max_window_layers=2),
        "qwen2-sliding-all-layers": cfg("qwen2", Q2, num_key_value_heads=2, use_sliding_window=True,
                                        sliding_window=16, max_window_layers=0),
        "qwen2-sliding-class-window": cfg("qwen2", Q2, num_key_value_heads=2, use_sliding_window=True,
                                          max_window_layers=1),
        "qwen2-tied": cfg("qwen2", Q2, num_key_value_heads=1, tie_word_embeddings=True),
        "qwen2-kv-class-default-32": cfg("qwen2", Q2, hidden_size=128, num_attention_heads=64),
        "qwen2-kv-null": cfg("qwen2", Q2, num_key_value_heads=None),
        # qwen3
        "qwen3-head-dim-32-bias": cfg("qwen3", Q3, num_key_value_heads=2, head_dim=32, attention_bias=True),
        "qwen3-tied-yarn": cfg("qwen3", Q3, num_key_value_heads=2, head_dim=16, tie_word_embeddings=True,
                               rope_theta=1000000, rope_scaling={"rope_type": "yarn", "factor": 4.0,
                                                                 "original_max_position_embeddings": 64}),
        "qwen3-class-head-dim": cfg("qwen3", Q3, num_key_value_heads=2),
        "qwen3-kv-class-default-32": cfg("qwen3", Q3, num_attention_heads=64, head_dim=8),
        "qwen3-sliding": cfg("qwen3", Q3, num_key_value_heads=2, head_dim=16, use_sliding_window=True,
                             sliding_window=32, max_window_layers=1),
        # gemma2
        "gemma2-defaults": cfg("gemma2", G2, num_key_value_heads=2, head_dim=16),
        "gemma2-layer-types-untied": cfg("gemma2", G2, num_key_value_heads=2, head_dim=16,
                                         tie_word_embeddings=False, sliding_window=8,
                                         layer_types=["full_attention", "sliding_attention", "full_attention"]),
        "gemma2-no-softcaps": cfg("gemma2", G2, num_key_value_heads=1, head_dim=32, query_pre_attn_scalar=24,
                                  attn_logit_softcapping=None, final_logit_softcapping=None),
        # gemma3_text
        "gemma3-pattern-3": cfg("gemma3_text", G3, num_hidden_layers=7, num_key_value_heads=1, head_dim=16,
                                sliding_window=8, sliding_window_pattern=3),
        "gemma3-class-pattern": cfg("gemma3_text", G3, num_hidden_layers=7, num_key_value_heads=2,
                                    head_dim=16, rope_theta=500000.0, rope_local_base_freq=20000.0),
        "gemma3-legacy-linear-global": cfg("gemma3_text", G3, num_hidden_layers=6, num_key_value_heads=2,
                                           head_dim=16, rope_scaling={"rope_type": "linear", "factor": 8.0}),
        "gemma3-v5-nested-layer-types": cfg(
            "gemma3_text", G3, num_hidden_layers=4, num_key_value_heads=2, head_dim=16, sliding_window=16,
            layer_types=["full_attention", "sliding_attention", "sliding_attention", "full_attention"],
            rope_parameters={"full_attention": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 1e6,
                                                "original_max_position_embeddings": 64},
                             "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}},
            final_logit_softcapping=30.0, tie_word_embeddings=False),
        # phi3
        "phi3-mha-window": cfg("phi3", P3, pad_token_id=None, sliding_window=16),
        "phi3-gqa-no-window": cfg("phi3", P3, pad_token_id=None, num_key_value_heads=2),
        "phi3-longrope": cfg("phi3", P3, pad_token_id=None, max_position_embeddings=1024,
                             original_max_position_embeddings=64, rope_scaling={
                                 "type": "longrope", "short_factor": [1.0 + 0.1 * i for i in range(8)],
                                 "long_factor": [2.0 + 0.5 * i for i in range(8)]}),
        "phi3-partial-longrope": cfg("phi3", P3, pad_token_id=None, num_key_value_heads=2,
                                     partial_rotary_factor=0.5, max_position_embeddings=1024,
                                     original_max_position_embeddings=128, tie_word_embeddings=True,
                                     rope_scaling={"type": "longrope",
                                                   "short_factor": [1.0, 1.5, 2.0, 2.5],
                                                   "long_factor": [3.0, 4.0, 5.0, 6.0]}),
        "phi3-longrope-dict-original": cfg("phi3", P3, pad_token_id=None, max_position_embeddings=16384,
                                           rope_scaling={"rope_type": "longrope", "short_factor": [1.0] * 8,
                                                         "long_factor": [4.0] * 8,
                                                         "original_max_position_embeddings": 1024}),
        # olmo2
        "olmo2-default": cfg("olmo2", O2),
        "olmo2-gqa-bias-tied": cfg("olmo2", O2, num_key_value_heads=2, attention_bias=True,
                                   tie_word_embeddings=True, rope_theta=500000),
        # smollm3
        "smollm3-interval-default": cfg("smollm3", S3, pad_token_id=None, num_hidden_layers=8,
                                        num_key_value_heads=2),
        "smollm3-explicit-no-rope": cfg("smollm3", S3, pad_token_id=None, num_hidden_layers=4,
                                        num_key_value_heads=2, no_rope_layers=[0, 1, 0, 1]),
        "smollm3-interval-3-sliding": cfg("smollm3", S3, pad_token_id=None, num_hidden_layers=6,
                                          num_key_value_heads=2, no_rope_layer_interval=3,
                                          use_sliding_window=True, sliding_window=8),
        "smollm3-biases-untied-kv-null": cfg("smollm3", S3, pad_token_id=None, num_key_value_heads=None,
                                             attention_bias=True, mlp_bias=True, tie_word_embeddings=False),
        # Mixture of experts: router, stacked gate_up [E, 2I, H] and down [E, H, I]
        "mixtral-8-experts-window": cfg("mixtral", "MixtralForCausalLM", num_key_value_heads=2,
                                        num_local_experts=8, num_experts_per_tok=2, sliding_window=16),
        "mixtral-num-experts-alias": cfg("mixtral", "MixtralForCausalLM", num_experts=6,
                                         num_key_value_heads=4,
                                         num_experts_per_tok=3, head_dim=32),
        "qwen3_moe-moe-width": cfg("qwen3_moe", "Qwen3MoeForCausalLM", num_key_value_heads=2,
                                   num_experts=8, num_experts_per_tok=2, moe_intermediate_size=24,
                                   head_dim=32, norm_topk_prob=True, attention_bias=True),
        "qwen3_moe-local-experts-sliding": cfg("qwen3_moe", "Qwen3MoeForCausalLM", num_key_value_heads=2,
                                               num_local_experts=4, num_experts_per_tok=4,
                                               moe_intermediate_size=16, use_sliding_window=True,
                                               sliding_window=32, tie_word_embeddings=True),
        # Dense MLP layers (intermediate_size) among the MoE layers.
        "qwen3_moe-mlp-only-layers": cfg("qwen3_moe", "Qwen3MoeForCausalLM", num_hidden_layers=5,
                                         num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
                                         moe_intermediate_size=16, mlp_only_layers=[0, 3]),
        "qwen3_moe-sparse-step": cfg("qwen3_moe", "Qwen3MoeForCausalLM", num_hidden_layers=6,
                                     num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
                                     moe_intermediate_size=16, decoder_sparse_step=3,
                                     use_sliding_window=True, sliding_window=16),
        "qwen3_moe-all-dense": cfg("qwen3_moe", "Qwen3MoeForCausalLM", num_hidden_layers=2,
                                   num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
                                   moe_intermediate_size=16, mlp_only_layers=[0, 1]),
        # DeepSeek-V3: MLA (low-rank q, or q_proj with q_lora_rank null),
        # routed experts in groups, shared experts, dense first layers;
        # the correction bias is a buffer (in the state dict, not counted).
        # mamba2: HF-format configs (attention keys absent), biases on and
        # off, tied and not; mamba_ssm format below (Inputs/mamba2-130m.json).
        "mamba2-defaults-small": {"model_type": "mamba2", "architectures": ["Mamba2ForCausalLM"],
                                  "vocab_size": 96, "hidden_size": 64, "num_hidden_layers": 2,
                                  "num_heads": 8, "head_dim": 16, "n_groups": 2, "state_size": 16},
        "mamba2-biases-tied": {"model_type": "mamba2", "vocab_size": 96, "hidden_size": 32,
                               "num_hidden_layers": 3, "num_heads": 4, "head_dim": 16,
                               "n_groups": 1, "state_size": 8, "conv_kernel": 3,
                               "use_bias": True, "use_conv_bias": False,
                               "tie_word_embeddings": True, "expand": 2},
        # nemotron_h: every letter, MoE with a latent width and biases,
        # the layers_block_type form, an agreeing attention_head_dim.
        "nemotron_h-every-letter": cfg("nemotron_h", "NemotronHForCausalLM", num_hidden_layers=5,
                                       hybrid_override_pattern="M*-ME", num_key_value_heads=2,
                                       head_dim=16, mamba_num_heads=8, mamba_head_dim=16,
                                       n_groups=2, ssm_state_size=16, n_routed_experts=8,
                                       num_experts_per_tok=2, moe_intermediate_size=24,
                                       moe_shared_expert_intermediate_size=40, pad_token_id=None,
                                       bos_token_id=None, eos_token_id=None),
        "nemotron_h-latent-biases": cfg("nemotron_h", "NemotronHForCausalLM", num_hidden_layers=DROP,
                                        layers_block_type=["moe", "linear_attention", "mlp",
                                                           "full_attention"],
                                        mamba_num_heads=4, mamba_head_dim=16, n_groups=1,
                                        ssm_state_size=8, use_bias=True, mlp_bias=True,
                                        use_conv_bias=False, n_routed_experts=4,
                                        num_experts_per_tok=2, moe_intermediate_size=8,
                                        moe_shared_expert_intermediate_size=8, moe_latent_size=12,
                                        head_dim=DROP, attention_head_dim=128, num_key_value_heads=2,
                                        pad_token_id=None,
                                        bos_token_id=None, eos_token_id=None),
        # falcon_h1: mamba_d_ssm explicit and null (expand x hidden), head
        # dim auto and explicit, the gated norm on and off, biases.
        "falcon_h1-defaults": cfg("falcon_h1", "FalconH1ForCausalLM", num_key_value_heads=2,
                                  mamba_d_ssm=128, mamba_n_heads=8, mamba_d_state=16,
                                  pad_token_id=None, bos_token_id=None, eos_token_id=None),
        "falcon_h1-norm-biases-null-ssm": cfg("falcon_h1", "FalconH1ForCausalLM",
                                              num_key_value_heads=2, mamba_d_ssm=None,
                                              mamba_n_heads=8, mamba_d_head=16, mamba_n_groups=2,
                                              mamba_d_state=8, mamba_rms_norm=True,
                                              mamba_proj_bias=True, projectors_bias=True,
                                              attention_bias=True, mlp_bias=True,
                                              tie_word_embeddings=True, pad_token_id=None,
                                              bos_token_id=None, eos_token_id=None),
        "deepseek_v3-mla": cfg("deepseek_v3", "DeepseekV3ForCausalLM", num_hidden_layers=4,
                               num_key_value_heads=4, q_lora_rank=24, kv_lora_rank=16,
                               qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=6,
                               n_routed_experts=8, num_experts_per_tok=2, n_group=4,
                               topk_group=2, moe_intermediate_size=16, n_shared_experts=1,
                               first_k_dense_replace=2),
        "deepseek_v3-plain-q-tied-yarn": cfg("deepseek_v3", "DeepseekV3ForCausalLM",
                                             num_key_value_heads=4, q_lora_rank=None,
                                             kv_lora_rank=16, qk_nope_head_dim=8,
                                             qk_rope_head_dim=8, v_head_dim=8,
                                             n_routed_experts=4, num_experts_per_tok=2,
                                             n_group=1, topk_group=1, moe_intermediate_size=8,
                                             n_shared_experts=2, first_k_dense_replace=1,
                                             attention_bias=True, tie_word_embeddings=True,
                                             rope_scaling=dict(type="yarn", factor=4.0,
                                                               original_max_position_embeddings=64,
                                                               mscale=1.0, mscale_all_dim=1.0)),
        # DeepSeek-V2: q_proj, shared experts with mlp_bias, group-limited.
        "deepseek_v2-group-limited-bias": cfg("deepseek_v2", "DeepseekV2ForCausalLM",
                                              num_key_value_heads=4, q_lora_rank=None,
                                              kv_lora_rank=16, qk_nope_head_dim=8,
                                              qk_rope_head_dim=4, v_head_dim=6,
                                              n_routed_experts=8, num_experts_per_tok=2,
                                              topk_method="group_limited_greedy", n_group=4,
                                              topk_group=2, moe_intermediate_size=16,
                                              n_shared_experts=2, first_k_dense_replace=1,
                                              mlp_bias=True),
        "deepseek_v2-lora-q": cfg("deepseek_v2", "DeepseekV2ForCausalLM", num_hidden_layers=2,
                                  num_key_value_heads=4, q_lora_rank=24, kv_lora_rank=16,
                                  qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8,
                                  n_routed_experts=4, num_experts_per_tok=2,
                                  moe_intermediate_size=8, n_shared_experts=1),
        # GLM-4.5: q/k/v bias without o bias, optional qk norm, partial RoPE.
        "glm4_moe-qk-norm-bias": cfg("glm4_moe", "Glm4MoeForCausalLM", head_dim=12, num_key_value_heads=2,
                                     attention_bias=True, use_qk_norm=True, n_routed_experts=8,
                                     num_experts_per_tok=2, n_group=4, topk_group=2,
                                     moe_intermediate_size=16, n_shared_experts=1,
                                     first_k_dense_replace=1),
        "glm4_moe-defaults-prf": cfg("glm4_moe", "Glm4MoeForCausalLM", n_routed_experts=4, num_key_value_heads=1,
                                     num_experts_per_tok=2, moe_intermediate_size=8,
                                     partial_rotary_factor=0.25, tie_word_embeddings=True),
        "olmoe-gqa": cfg("olmoe", "OlmoeForCausalLM", num_key_value_heads=2, num_experts=8,
                         num_experts_per_tok=2, pad_token_id=None, eos_token_id=None),
        "gpt_oss-defaults": cfg("gpt_oss", "GptOssForCausalLM", num_key_value_heads=2, head_dim=16,
                                num_local_experts=4, num_experts_per_tok=2),
        "gpt_oss-layer-types-no-bias": cfg("gpt_oss", "GptOssForCausalLM", num_key_value_heads=2,
                                           head_dim=16, num_local_experts=4, num_experts_per_tok=2,
                                           attention_bias=False, sliding_window=32,
                                           layer_types=["full_attention", "sliding_attention",
                                                        "sliding_attention"]),
        "granitemoe-multipliers": cfg("granitemoe", "GraniteMoeForCausalLM", num_key_value_heads=2,
                                      num_local_experts=4, num_experts_per_tok=2,
                                      embedding_multiplier=12.0, residual_multiplier=0.22,
                                      attention_multiplier=0.0078125, logits_scaling=6.0),
        # Qwen3-Next: gated DeltaNet / gated attention by interval and by
        # layer_types, the gated shared expert, dense layers.
        "qwen3_next-interval-dense-layer": cfg("qwen3_next", "Qwen3NextForCausalLM",
                                               num_hidden_layers=4, full_attention_interval=2,
                                               num_key_value_heads=2, head_dim=16,
                                               linear_num_key_heads=2, linear_num_value_heads=4,
                                               linear_key_head_dim=8, linear_value_head_dim=12,
                                               num_experts=8, num_experts_per_tok=2,
                                               moe_intermediate_size=16,
                                               shared_expert_intermediate_size=24,
                                               mlp_only_layers=[1], decoder_sparse_step=1),
        "qwen3_next-layer-types-tied": cfg("qwen3_next", "Qwen3NextForCausalLM",
                                           layer_types=["full_attention", "linear_attention",
                                                        "full_attention"],
                                           num_key_value_heads=1, head_dim=16,
                                           linear_num_key_heads=1, linear_num_value_heads=2,
                                           linear_key_head_dim=16, linear_value_head_dim=16,
                                           linear_conv_kernel_dim=3, num_experts=4,
                                           num_experts_per_tok=2, moe_intermediate_size=8,
                                           shared_expert_intermediate_size=8,
                                           decoder_sparse_step=2, tie_word_embeddings=True,
                                           partial_rotary_factor=0.5),
        # Qwen3.5 text models, and the multimodal config with them nested.
        "qwen3_5_text-dense": cfg("qwen3_5_text", "Qwen3_5ForCausalLM", num_key_value_heads=2,
                                  head_dim=16, linear_num_key_heads=2,
                                  linear_num_value_heads=4, linear_key_head_dim=8,
                                  linear_value_head_dim=8, full_attention_interval=3),
        "qwen3_5_moe_text-moe": cfg("qwen3_5_moe_text", "Qwen3_5MoeForCausalLM",
                                    intermediate_size=DROP, num_key_value_heads=2, head_dim=16,
                                    linear_num_key_heads=2, linear_num_value_heads=2,
                                    linear_key_head_dim=8, linear_value_head_dim=8,
                                    num_experts=8, num_experts_per_tok=2,
                                    moe_intermediate_size=16,
                                    shared_expert_intermediate_size=16),
        "qwen3_5-nested-text-config": dict(
            model_type="qwen3_5", architectures=["Qwen3_5ForConditionalGeneration"],
            tie_word_embeddings=False,
            text_config=cfg("qwen3_5_text", "Qwen3_5ForCausalLM", architectures=DROP,
                            num_key_value_heads=2, head_dim=16, linear_num_key_heads=2,
                            linear_num_value_heads=4, linear_key_head_dim=8,
                            linear_value_head_dim=8)),
        "qwen3_5_moe-nested-text-config": dict(
            model_type="qwen3_5_moe", architectures=["Qwen3_5MoeForConditionalGeneration"],
            tie_word_embeddings=True,
            text_config=cfg("qwen3_5_moe_text", "Qwen3_5MoeForCausalLM", architectures=DROP,
                            intermediate_size=DROP, num_key_value_heads=2, head_dim=16,
                            linear_num_key_heads=2, linear_num_value_heads=2,
                            linear_key_head_dim=8, linear_value_head_dim=8, num_experts=4,
                            num_experts_per_tok=2, moe_intermediate_size=16,
                            shared_expert_intermediate_size=16, tie_word_embeddings=True)),
    }


# ---------------------------------------------------------------------------
# The IR side
# ---------------------------------------------------------------------------

def split_top(s):
    """Splits 'a = 1, b = [1, 2], c = x' at the commas outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[<":
            depth += 1
        elif ch in "]>":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return dict(item.split(" = ", 1) for item in out)


def number(s):
    return float(s.split(" :")[0])


def parse_ir(text):
    sig = re.search(r"func\.func @forward\((.*)\) -> \(", text).group(1)
    params = []
    for m in re.finditer(r"%arg\d+: tensor<([^>]*)> \{tfm\.param = #tfm\.param<(.*?)>\}", sig):
        dims = [int(d) for d in m.group(1).split("x")[:-1]]
        attrs = split_top(m.group(2))
        layers = None
        if "layers" in attrs:
            layers = [int(x) for x in attrs["layers"].strip("[]").split(",")]
        params.append(dict(shape=dims, name=attrs["name"].strip('"'),
                           stacked=attrs.get("stacked") == "true", layers=layers,
                           tied=re.findall(r'"([^"]*)"', attrs.get("tied", ""))))
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "tfm.repeat" in line)
    head = lines[start]
    num_layers = int(re.search(r"num_layers = (\d+) : i64", head).group(1))
    m = re.search(r"schedule = array<i64: ([0-9, ]*)>", head)
    schedule = [int(x) for x in m.group(1).split(",")] if m else [0] * num_layers
    regions, cur = [], []
    for line in lines[start + 1:]:
        if line.strip() in ("}, {", "}"):
            regions.append(cur)
            cur = []
            if line.strip() == "}":
                break
        else:
            cur.append(line)
    kinds = []
    for body in regions:
        body = "\n".join(body)
        rope = re.search(r"tfm\.rope %\S+, %arg\d+ \{(.*)\} : ", body)
        attn = re.search(r"tfm\.attention [^{]*\{(.*?)\} : ", body)
        kind = dict(window=None, rope=None, moe="tfm.moe_router" in body,
                    mamba="tfm.mamba_ssd_scan" in body or "tfm.gated_delta_rule" in body)
        if attn and "sliding_window" in attn.group(1):
            kind["window"] = int(re.search(r"sliding_window = (\d+)", attn.group(1)).group(1))
        if rope:
            attrs = rope.group(1)
            r = dict(theta=number(re.search(r"theta = ([^,}]*)", attrs).group(1)),
                     rotary_dim=int(re.search(r"rotary_dim = (\d+)", attrs).group(1)), kind="plain",
                     factor=1.0, low_freq_factor=1.0, high_freq_factor=4.0, original=0, beta_fast=32.0,
                     beta_slow=1.0, truncate=True, attention_factor=1.0, short_factor=None)
            sm = re.search(r"scaling = #tfm\.rope_scaling<(.*?)>,", attrs)
            if sm:
                for k, v in split_top(sm.group(1)).items():
                    if k == "kind":
                        r[k] = v
                    elif k in ("short_factor", "long_factor"):
                        r[k] = [float(x) for x in v.strip("[]").split(",")]
                    elif k == "truncate":
                        r[k] = v == "true"
                    elif k == "original":
                        r[k] = int(v)
                    else:
                        r[k] = float(v)
            kind["rope"] = r
        kinds.append(kind)
    return params, [kinds[k] for k in schedule[:num_layers]]


def ir_inv_freq(r):
    """inv_freq of a tfm.rope as #tfm.rope_scaling describes it (float64)."""
    d, base = r["rotary_dim"], r["theta"]
    expo = [2 * i / d for i in range(d // 2)]
    inv = [1.0 / base ** e for e in expo]
    kind = r["kind"]
    if kind == "linear":
        inv = [x / r["factor"] for x in inv]
    elif kind == "llama3":
        old, lf, hf, f = r["original"], r["low_freq_factor"], r["high_freq_factor"], r["factor"]
        out = []
        for x in inv:
            wl = 2 * math.pi / x
            if wl < old / hf:
                out.append(x)
            elif wl > old / lf:
                out.append(x / f)
            else:
                s = (old / wl - lf) / (hf - lf)
                out.append((1 - s) * x / f + s * x)
        inv = out
    elif kind == "yarn":
        f, orig = r["factor"], r["original"]

        def corr(rot):
            return d * math.log(orig / (rot * 2 * math.pi)) / (2 * math.log(base))
        low, high = corr(r["beta_fast"]), corr(r["beta_slow"])
        if r["truncate"]:
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, d - 1)
        if low == high:
            high += 0.001
        out = []
        for i, x in enumerate(inv):
            ramp = min(max((i - low) / (high - low), 0.0), 1.0)
            extrap = 1 - ramp
            out.append((x / f) * (1 - extrap) + x * extrap)
        inv = out
    elif kind == "longrope":
        inv = [x / s for x, s in zip(inv, r["short_factor"])]
    return inv


# ---------------------------------------------------------------------------
# The HF side
# ---------------------------------------------------------------------------

def mamba_ssm_to_hf(c):
    """HF's convert_ssm_config_to_hf_config
    (models/mamba2/convert_mamba2_ssm_checkpoint_to_pytorch.py), as written
    there: the Mamba2Config a mamba_ssm config converts to."""
    from transformers import Mamba2Config
    hf = Mamba2Config()
    hf.hidden_size = c["d_model"]
    hf.num_heads = (hf.hidden_size * hf.expand) // hf.head_dim
    hf.num_hidden_layers = c["n_layer"]
    hf.n_groups = c.get("n_groups", 1)
    hf.residual_in_fp32 = c["residual_in_fp32"]
    hf.tie_word_embeddings = c["tie_embeddings"]
    vocab, multiple = c["vocab_size"], c["pad_vocab_size_multiple"]
    if vocab % multiple != 0:
        vocab += multiple - vocab % multiple
    hf.vocab_size = vocab
    return hf


def hf_model(path):
    with open(path) as f:
        raw = json.load(f)
    if "model_type" not in raw and "ssm_cfg" in raw:
        config = mamba_ssm_to_hf(raw)
    else:
        config = CONFIG_MAPPING[raw["model_type"]].from_json_file(path)
        if "text_config" in raw:
            # A multimodal config: tfm imports its text model.
            config = config.get_text_config()
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return config, model


def hf_layers(config, model):
    """Per layer: (mask window, uses RoPE, (rotary_dim, attention_factor, inv_freq) or None,
    whether its MLP is a sparse MoE block, whether it has a Mamba2 mixer)."""
    base = model.base_model
    rot = None
    if hasattr(base, "rotary_emb"):
        with torch.device("cpu"):
            rot = type(base.rotary_emb)(config)
    layer_types = getattr(config, "layer_types", None)
    out = []
    for i, layer in enumerate(base.layers):
        # A recurrent mixer (Mamba2, gated DeltaNet).
        mamba = any(hasattr(m, "A_log") for m in layer.modules())
        if not hasattr(layer, "self_attn"):  # one mixer: Mamba2, NoPE attention, MLP, MoE
            sparse = any(n.split(".")[-1] == "experts" for n, _ in layer.named_modules())
            out.append((None, False, None, sparse, mamba))
            continue
        # The mask HF applies: mistral, phi3, mixtral and qwen3_moe use
        # config.sliding_window (None: causal) on every layer; the others
        # pick the mask by layer_types[i].
        if config.model_type in ("mistral", "phi3", "mixtral", "qwen3_moe"):
            window = config.sliding_window
        elif layer_types is not None and layer_types[i] == "sliding_attention":
            window = config.sliding_window
        else:
            window = None
        uses_rope = bool(getattr(layer.self_attn, "use_rope", True))
        if config.model_type == "gemma3_text":
            inv = getattr(rot, f"{layer_types[i]}_inv_freq")
            af = getattr(rot, f"{layer_types[i]}_attention_scaling")
        else:
            inv, af = rot.inv_freq, rot.attention_scaling
        inv = [float(x) for x in inv]
        sparse = any(n.split(".")[-1] == "experts" for n, _ in layer.named_modules())
        out.append((window, uses_rope, (2 * len(inv), float(af), inv) if uses_rope else None,
                    sparse, mamba))
    return out


def compare(name, path, tool):
    problems = []
    config, model = hf_model(path)
    hf_count = sum(p.numel() for p in model.parameters())
    summary = json.loads(subprocess.run([tool, "--summary", path], check=True,
                                        capture_output=True, text=True).stdout)
    if summary["parameters"] != hf_count:
        problems.append(f"parameters {summary['parameters']} != HF {hf_count}")

    params, layers = parse_ir(subprocess.run([tool, path], check=True, capture_output=True,
                                             text=True).stdout)
    # Weight map.
    tied = model.get_output_embeddings().weight is model.get_input_embeddings().weight
    hf_names = {k: list(v.shape) for k, v in model.state_dict().items()}
    if tied:
        hf_names.pop("lm_head.weight")
    ir_names = {}
    for p in params:
        if p["stacked"]:
            for layer in p["layers"] or range(p["shape"][0]):
                ir_names[p["name"].replace("{layer}", str(layer))] = p["shape"][1:]
        else:
            ir_names[p["name"]] = p["shape"]
    ir_tied = any("lm_head.weight" in p["tied"] for p in params)
    if ir_tied != tied:
        problems.append(f"tied: IR {ir_tied}, HF {tied}")
    for k in sorted(set(hf_names) - set(ir_names)):
        problems.append(f"HF tensor {k} {hf_names[k]} missing from the IR")
    for k in sorted(set(ir_names) - set(hf_names)):
        problems.append(f"IR parameter {k} {ir_names[k]} not in the HF state_dict")
    for k in sorted(set(hf_names) & set(ir_names)):
        if hf_names[k] != ir_names[k]:
            problems.append(f"{k}: IR shape {ir_names[k]}, HF {hf_names[k]}")

    # Per-layer attention window and RoPE.
    hf = hf_layers(config, model)
    if len(hf) != len(layers):
        problems.append(f"{len(layers)} IR layers, HF {len(hf)}")
    for i, ((window, uses_rope, rope, sparse, mamba), ir) in enumerate(zip(hf, layers)):
        if ir["mamba"] != mamba:
            problems.append(f"layer {i}: Mamba2 mixer IR {ir['mamba']}, HF {mamba}")
        if ir["moe"] != sparse:
            problems.append(f"layer {i}: MoE MLP IR {ir['moe']}, HF {sparse}")
        if ir["window"] != window:
            problems.append(f"layer {i}: sliding window IR {ir['window']}, HF {window}")
        if (ir["rope"] is not None) != uses_rope:
            problems.append(f"layer {i}: RoPE IR {ir['rope'] is not None}, HF {uses_rope}")
        if not uses_rope or ir["rope"] is None:
            continue
        dim, af, inv = rope
        r = ir["rope"]
        if r["rotary_dim"] != dim:
            problems.append(f"layer {i}: rotary_dim IR {r['rotary_dim']}, HF {dim}")
            continue
        if not math.isclose(r["attention_factor"], af, rel_tol=1e-6):
            problems.append(f"layer {i}: attention factor IR {r['attention_factor']}, HF {af}")
        mine = ir_inv_freq(r)
        worst = max(abs(a - b) / b for a, b in zip(mine, inv))
        if worst > 2e-6:  # HF computes in float32
            problems.append(f"layer {i}: inv_freq differs by {worst:.2e} (relative) ({r['kind']})")
    kinds = ", ".join(f"{k} {n}" for k, n in summary["layer_kinds"].items())
    line = f"{name}: {summary['model_type']}, {hf_count:,} parameters, {len(ir_names)} tensors, {kinds}"
    return problems, line


def main():
    src, tool, workdir = sys.argv[1], sys.argv[2], sys.argv[3]
    cases = []
    for name, c in tiny_cases().items():
        path = os.path.join(workdir, name + ".json")
        with open(path, "w") as f:
            json.dump(c, f, indent=2)
        cases.append(("tiny/" + name, path))
    inputs = os.path.join(src, "test", "Import", "Inputs")
    for path in sorted(glob.glob(os.path.join(inputs, "*.json"))):
        cases.append((os.path.basename(path), path))
    cases.append(("checkpoint-qwen3-0.6b/", os.path.join(inputs, "checkpoint-qwen3-0.6b")))

    failed = 0
    for name, path in cases:
        config_path = os.path.join(path, "config.json") if os.path.isdir(path) else path
        try:
            problems, line = compare(name, config_path, tool)
            if os.path.isdir(path):  # the folder form must give the same summary
                a = subprocess.run([tool, "--summary", path], capture_output=True, text=True).stdout
                b = subprocess.run([tool, "--summary", config_path], capture_output=True, text=True).stdout
                if a != b:
                    problems.append("the folder and its config.json give different summaries")
        except Exception as e:  # a crash on either side is a mismatch too
            problems, line = [f"{type(e).__name__}: {e}"], name
        if problems:
            failed += 1
            print(f"FAIL {line}")
            for p in problems[:20]:
                print(f"     {p}")
        else:
            print(f"ok   {line}")
    if failed:
        print(f"{failed} of {len(cases)} cases differ")
        return 1
    print(f"all {len(cases)} cases match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
