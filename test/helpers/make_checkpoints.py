"""Writes a tiny Llama checkpoint and broken variants of it, with no
dependencies beyond the standard library, for tfm-run's bad-input tests.

    make_checkpoints.py OUT    ->  OUT/<case>/{config.json, model.safetensors}
                                   OUT/tokens-<case>.json
"""

import json
import os
import random
import struct
import sys

CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 16,
    "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 2,
    "num_attention_heads": 2, "num_key_value_heads": 1, "rms_norm_eps": 1e-5,
    "tie_word_embeddings": False,
}


def tensors():
    h, i, v, kv = 8, 12, 16, 4
    out = {"model.embed_tokens.weight": [v, h], "model.norm.weight": [h],
           "lm_head.weight": [v, h]}
    for l in range(2):
        p = f"model.layers.{l}."
        out.update({p + "input_layernorm.weight": [h], p + "post_attention_layernorm.weight": [h],
                    p + "self_attn.q_proj.weight": [h, h], p + "self_attn.k_proj.weight": [kv, h],
                    p + "self_attn.v_proj.weight": [kv, h], p + "self_attn.o_proj.weight": [h, h],
                    p + "mlp.gate_proj.weight": [i, h], p + "mlp.up_proj.weight": [i, h],
                    p + "mlp.down_proj.weight": [h, i]})
    return out


MOE_CONFIG = dict(CONFIG, architectures=["MixtralForCausalLM"], model_type="mixtral",
                  num_local_experts=4, num_experts_per_tok=2)


def moe_tensors(stacked):
    """A tiny Mixtral: the hub's per-expert layout (w1/w3/w2), or the
    transformers-5 stacked one."""
    h, i, e = 8, 12, 4
    out = {n: s for n, s in tensors().items() if ".mlp." not in n}
    for l in range(2):
        p = f"model.layers.{l}."
        if stacked:
            out.update({p + "mlp.gate.weight": [e, h], p + "mlp.experts.gate_up_proj": [e, 2 * i, h],
                        p + "mlp.experts.down_proj": [e, h, i]})
            continue
        out[p + "block_sparse_moe.gate.weight"] = [e, h]
        for x in range(e):
            q = p + f"block_sparse_moe.experts.{x}."
            out.update({q + "w1.weight": [i, h], q + "w3.weight": [i, h], q + "w2.weight": [h, i]})
    return out


DS_CONFIG = dict(CONFIG, architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3",
                 num_key_value_heads=2, q_lora_rank=4, kv_lora_rank=4, qk_nope_head_dim=2,
                 qk_rope_head_dim=2, v_head_dim=2, n_routed_experts=4, num_experts_per_tok=2,
                 n_group=2, topk_group=1, moe_intermediate_size=4, n_shared_experts=1,
                 first_k_dense_replace=1, num_nextn_predict_layers=1)


def ds_tensors():
    """A tiny DeepSeek-V3 (layer 0 dense, layer 1 MoE) in the hub layout,
    with the MTP layer 2 that real checkpoints carry."""
    h, i, e, m = 8, 12, 4, 4
    out = {n: s for n, s in tensors().items() if ".layers." not in n}
    for l in range(2):
        p = f"model.layers.{l}."
        out.update({p + "input_layernorm.weight": [h], p + "post_attention_layernorm.weight": [h],
                    p + "self_attn.q_a_proj.weight": [4, h], p + "self_attn.q_a_layernorm.weight": [4],
                    p + "self_attn.q_b_proj.weight": [8, 4],
                    p + "self_attn.kv_a_proj_with_mqa.weight": [6, h],
                    p + "self_attn.kv_a_layernorm.weight": [4], p + "self_attn.kv_b_proj.weight": [8, 4],
                    p + "self_attn.o_proj.weight": [h, 4]})
    p = "model.layers.0.mlp."
    out.update({p + "gate_proj.weight": [i, h], p + "up_proj.weight": [i, h], p + "down_proj.weight": [h, i]})
    p = "model.layers.1.mlp."
    out.update({p + "gate.weight": [e, h], p + "gate.e_score_correction_bias": [e],
                p + "shared_experts.gate_proj.weight": [m, h], p + "shared_experts.up_proj.weight": [m, h],
                p + "shared_experts.down_proj.weight": [h, m]})
    for x in range(e):
        q = p + f"experts.{x}."
        out.update({q + "gate_proj.weight": [m, h], q + "up_proj.weight": [m, h], q + "down_proj.weight": [h, m]})
    out.update({"model.layers.2.eh_proj.weight": [h, 2 * h], "model.layers.2.enorm.weight": [h]})
    return out


# mamba_ssm's format: no model_type; vocab 13 padded to 16, tied; 4 heads of 4.
MAMBA_SSM_CONFIG = {"d_model": 8, "n_layer": 2, "vocab_size": 13, "pad_vocab_size_multiple": 8,
                    "ssm_cfg": {"layer": "Mamba2", "d_state": 2, "headdim": 4, "chunk_size": 4},
                    "rms_norm": True, "residual_in_fp32": True, "tie_embeddings": True}


def mamba_ssm_tensors():
    """mamba_ssm's names: `backbone.embedding.weight` (HF says embeddings)."""
    h, inner, conv, heads = 8, 16, 20, 4
    out = {"backbone.embedding.weight": [16, h], "backbone.norm_f.weight": [h]}
    for l in range(2):
        p = f"backbone.layers.{l}."
        out.update({p + "norm.weight": [h], p + "mixer.in_proj.weight": [inner + conv + heads, h],
                    p + "mixer.conv1d.weight": [conv, 1, 4], p + "mixer.conv1d.bias": [conv],
                    p + "mixer.dt_bias": [heads], p + "mixer.A_log": [heads], p + "mixer.D": [heads],
                    p + "mixer.norm.weight": [inner], p + "mixer.out_proj.weight": [h, inner]})
    return out


def encode(entries, header_override=None):
    """entries: name -> (dtype, shape, bytes). Returns the file bytes."""
    header, data = {}, b""
    for name, (dtype, shape, raw) in entries.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if header_override:
        header_override(header)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def f32(shape, rng):
    n = 1
    for d in shape:
        n *= d
    return struct.pack(f"<{n}f", *[rng.uniform(-0.5, 0.5) for _ in range(n)])


def write_case(root, name, blob, config=CONFIG):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(blob)


def main():
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    rng = random.Random(0)
    good = {n: ("F32", s, f32(s, rng)) for n, s in tensors().items()}
    write_case(root, "good", encode(good))

    missing = dict(good)
    del missing["model.layers.1.mlp.up_proj.weight"]
    write_case(root, "missing", encode(missing))

    shape = dict(good)
    shape["model.layers.1.self_attn.k_proj.weight"] = ("F32", [8, 8], f32([8, 8], rng))
    write_case(root, "shape", encode(shape))

    dtype = dict(good)
    dtype["model.norm.weight"] = ("I64", [8], struct.pack("<8q", *range(8)))
    write_case(root, "dtype", encode(dtype))

    extra = dict(good)
    extra["model.layers.0.self_attn.q_norm.weight"] = ("F32", [4], f32([4], rng))
    write_case(root, "extra", encode(extra))

    # Mixture of experts, both layouts, and the ways they go wrong.
    moe = {n: ("F32", s, f32(s, rng)) for n, s in moe_tensors(stacked=False).items()}
    write_case(root, "moe-good", encode(moe), MOE_CONFIG)
    stacked = {n: ("F32", s, f32(s, rng)) for n, s in moe_tensors(stacked=True).items()}
    write_case(root, "moe-stacked-good", encode(stacked), MOE_CONFIG)
    bad = dict(moe)
    del bad["model.layers.1.block_sparse_moe.experts.3.w2.weight"]
    write_case(root, "moe-missing-expert", encode(bad), MOE_CONFIG)
    bad = dict(moe)
    bad["model.layers.0.block_sparse_moe.experts.4.w1.weight"] = ("F32", [12, 8], f32([12, 8], rng))
    write_case(root, "moe-extra-expert", encode(bad), MOE_CONFIG)
    bad = dict(stacked)
    bad["model.layers.1.mlp.experts.gate_up_proj"] = ("F32", [3, 24, 8], f32([3, 24, 8], rng))
    write_case(root, "moe-stacked-count", encode(bad), MOE_CONFIG)
    bad = dict(moe)
    bad["model.layers.0.block_sparse_moe.gate.weight"] = ("F32", [4, 7], f32([4, 7], rng))
    write_case(root, "moe-router-shape", encode(bad), MOE_CONFIG)
    bad = dict(moe)
    del bad["model.layers.0.block_sparse_moe.experts.0.w1.weight"]
    del bad["model.layers.0.block_sparse_moe.experts.0.w3.weight"]
    del bad["model.layers.0.block_sparse_moe.experts.0.w2.weight"]
    write_case(root, "moe-no-experts", encode(bad), MOE_CONFIG)

    bad = dict(stacked)
    del bad["model.layers.0.mlp.experts.gate_up_proj"]
    bad["model.layers.0.mlp.experts.gate_up_proj_blocks"] = ("U8", [4, 24, 1, 4], bytes(384))
    write_case(root, "moe-mxfp4", encode(bad), MOE_CONFIG)

    # DeepSeek-V3: the MTP layer is ignored; the correction bias is required;
    # FP8 block scales are refused with a hint.
    ds = {n: ("F32", s, f32(s, rng)) for n, s in ds_tensors().items()}
    write_case(root, "ds-good", encode(ds), DS_CONFIG)
    ssm = {n: ("F32", sh, f32(sh, rng)) for n, sh in mamba_ssm_tensors().items()}
    write_case(root, "mamba-ssm", encode(ssm), MAMBA_SSM_CONFIG)
    bad = dict(ds)
    del bad["model.layers.1.mlp.gate.e_score_correction_bias"]
    write_case(root, "ds-no-bias", encode(bad), DS_CONFIG)
    bad = dict(ds)
    bad["model.layers.0.self_attn.q_a_proj.weight_scale_inv"] = ("F32", [1, 1], f32([1, 1], rng))
    write_case(root, "ds-fp8", encode(bad), DS_CONFIG)

    blob = encode(good)
    write_case(root, "truncated", blob[: len(blob) - 100])
    write_case(root, "tiny", blob[:5])
    write_case(root, "hugeheader", struct.pack("<Q", 1 << 40) + blob[8:])

    def lie_size(h):  # shape says 8 floats, offsets span 4
        h["model.norm.weight"]["data_offsets"][1] -= 16
    write_case(root, "lying", encode(good, lie_size))

    def past_end(h):
        h["lm_head.weight"]["data_offsets"] = [10**9, 10**9 + 512]
    write_case(root, "pastend", encode(good, past_end))

    def overlap(h):
        h["model.norm.weight"]["data_offsets"] = list(h["lm_head.weight"]["data_offsets"])
        h["model.norm.weight"]["data_offsets"][1] = h["model.norm.weight"]["data_offsets"][0] + 32
    write_case(root, "overlap", encode(good, overlap))

    def unknown_dtype(h):
        h["model.norm.weight"]["dtype"] = "F8_E9"
    write_case(root, "unknowndtype", encode(good, unknown_dtype))

    # A tensor named twice in the header (JSON keeps one of them).
    blob = encode(good)
    (n,) = struct.unpack("<Q", blob[:8])
    text = blob[8:8 + n].decode()
    dup = text[:-1] + ', "model.norm.weight": ' + json.dumps(json.loads(text)["model.norm.weight"]) + "}"
    dup = dup.encode()
    write_case(root, "dupname", struct.pack("<Q", len(dup)) + dup + blob[8 + n:])

    def huge_shape(h):  # 2^60 x 4 F32: wraps to 0 bytes in 64 bits
        h["model.norm.weight"]["shape"] = [2**60, 4]
    write_case(root, "hugeshape", encode(good, huge_shape))

    def not_json(h):
        h.clear()
    blob = encode(good, not_json)
    write_case(root, "notjson", struct.pack("<Q", 9) + b"{not json" + blob[10:])

    toks = {
        "good": {"input_ids": [[1, 2, 3, 4], [5, 6, 7, 8]],
                 "labels": [[1, 2, -100, 4], [5, 6, 7, 8]], "attention_mask": [[1] * 4] * 2},
        "nolabels": {"input_ids": [[1, 2, 3]]},
        "oov": {"input_ids": [[1, 2, 16]]},
        "negative": {"input_ids": [[1, -1, 2]]},
        "ragged": {"input_ids": [[1, 2, 3], [4, 5]]},
        "badlabel": {"input_ids": [[1, 2, 3]], "labels": [[1, 99, 3]]},
        "labelrows": {"input_ids": [[1, 2, 3]], "labels": [[1, 2, 3], [1, 2, 3]]},
        "noids": {"labels": [[1]]},
        "empty": {"input_ids": []},
    }
    for name, value in toks.items():
        with open(os.path.join(root, f"tokens-{name}.json"), "w") as f:
            json.dump(value, f)
    with open(os.path.join(root, "tokens-broken.json"), "w") as f:
        f.write('{"input_ids": [[1, 2')


if __name__ == "__main__":
    main()
