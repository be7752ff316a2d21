"""Numeric tests of every tfm op's CPU lowering against PyTorch math.

Each case is a tfm function @main, inputs, and a reference written here in
torch (RoPE frequencies from transformers' own initialisers). The function is
compiled and run by `tfm-run --mlir`; every result must match within
|d| <= 1e-5 + 1e-5 * |ref| (f32).

Usage: op_numerics.py --tfm-run PATH --workdir DIR [--group NAME] [--list]
"""

import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402

# HF's pure-torch paths only: no kernels fetched from the Hub.
os.environ.setdefault("USE_HUB_KERNELS", "NO")

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers import PretrainedConfig

torch.manual_seed(0)
B, T = 2, 7
CASES = []  # (group, name, mlir, inputs, reference)


def case(group, name, mlir, inputs, ref):
    CASES.append((group, name, mlir, inputs, ref))


def randn(*shape, scale=1.0):
    return torch.randn(*shape) * scale


# The packed-document cases draw from their own stream, so the other cases'
# inputs stay as they were.
_DOC_GEN = torch.Generator().manual_seed(11)


def drandn(*shape, scale=1.0):
    return torch.randn(*shape, generator=_DOC_GEN) * scale


def ty(shape, elem="f32"):
    return "tensor<" + "x".join("?" if d is None else str(d) for d in shape) + f"x{elem}>"


def positions():
    return torch.arange(T).repeat(B, 1)


# ---------------------------------------------------------------- element-wise
x = randn(B, T, 16, scale=2.0)
y = randn(B, T, 16)
for op, fn in [("silu", F.silu), ("gelu_tanh", lambda a: F.gelu(a, approximate="tanh")),
               ("relu2", lambda a: torch.relu(a) ** 2)]:
    case("elementwise", op, f"""
func.func @main(%x: {ty([None, None, 16])}) -> {ty([None, None, 16])} {{
  %y = tfm.{op} %x : {ty([None, None, 16])}
  return %y : {ty([None, None, 16])}
}}""", [x], lambda a, fn=fn: [fn(a)])
for op, fn in [("add", torch.add), ("mul", torch.mul)]:
    case("elementwise", op, f"""
func.func @main(%a: {ty([None, None, 16])}, %b: {ty([None, None, 16])}) -> {ty([None, None, 16])} {{
  %y = tfm.{op} %a, %b : {ty([None, None, 16])}
  return %y : {ty([None, None, 16])}
}}""", [x, y], lambda a, b, fn=fn: [fn(a, b)])
case("elementwise", "scale", f"""
func.func @main(%x: {ty([None, None, 16])}) -> {ty([None, None, 16])} {{
  %y = tfm.scale %x {{factor = 59.866518188383061 : f64}} : {ty([None, None, 16])}
  return %y : {ty([None, None, 16])}
}}""", [x], lambda a: [a * torch.tensor(3584 ** 0.5, dtype=torch.float32)])
case("elementwise", "softcap", f"""
func.func @main(%x: {ty([None, None, 16])}) -> {ty([None, None, 16])} {{
  %y = tfm.softcap %x {{cap = 1.5 : f64}} : {ty([None, None, 16])}
  return %y : {ty([None, None, 16])}
}}""", [x], lambda a: [1.5 * torch.tanh(a / 1.5)])
packed = randn(B, T, 24)
for op, act in [("swiglu", F.silu), ("geglu", lambda a: F.gelu(a, approximate="tanh"))]:
    case("elementwise", op, f"""
func.func @main(%x: {ty([None, None, 24])}) -> {ty([None, None, 12])} {{
  %y = tfm.{op} %x : ({ty([None, None, 24])}) -> {ty([None, None, 12])}
  return %y : {ty([None, None, 12])}
}}""", [packed], lambda a, act=act: [a[..., :12] * act(a[..., 12:])])
    # HF's packed gate_up_proj: [gate | up].
    case("elementwise", op + "_gate_first", f"""
func.func @main(%x: {ty([None, None, 24])}) -> {ty([None, None, 12])} {{
  %y = tfm.{op} %x {{gate_first}} : ({ty([None, None, 24])}) -> {ty([None, None, 12])}
  return %y : {ty([None, None, 12])}
}}""", [packed], lambda a, act=act: [act(a[..., :12]) * a[..., 12:]])

# ---------------------------------------------------------------- norms
w = randn(16, scale=0.5)
bias = randn(16, scale=0.5)
def rms(a, wt, eps, unit):
    r = torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + eps)
    return a * r * ((1 + wt) if unit else wt), r.squeeze(-1)
for unit in (False, True):
    attr = "eps = 1.0e-05 : f64" + (", unit_offset" if unit else "")
    case("norm", "rmsnorm" + ("_unit" if unit else ""), f"""
func.func @main(%x: {ty([None, None, 16])}, %w: tensor<16xf32>) -> ({ty([None, None, 16])}, {ty([None, None])}) {{
  %y, %r = tfm.rmsnorm %x, %w {{{attr}}} : ({ty([None, None, 16])}, tensor<16xf32>) -> ({ty([None, None, 16])}, {ty([None, None])})
  return %y, %r : {ty([None, None, 16])}, {ty([None, None])}
}}""", [x, w], lambda a, wt, unit=unit: list(rms(a, wt, 1e-5, unit)))
case("norm", "fused_residual_rmsnorm", f"""
func.func @main(%x: {ty([None, None, 16])}, %r: {ty([None, None, 16])}, %w: tensor<16xf32>) -> ({ty([None, None, 16])}, {ty([None, None, 16])}, {ty([None, None])}) {{
  %y, %s, %rs = tfm.fused_residual_rmsnorm %x, %r, %w {{eps = 1.0e-06 : f64}} : ({ty([None, None, 16])}, {ty([None, None, 16])}, tensor<16xf32>) -> ({ty([None, None, 16])}, {ty([None, None, 16])}, {ty([None, None])})
  return %y, %s, %rs : {ty([None, None, 16])}, {ty([None, None, 16])}, {ty([None, None])}
}}""", [x, y, w], lambda a, r, wt: [rms(a + r, wt, 1e-6, False)[0], a + r, rms(a + r, wt, 1e-6, False)[1]])
def ln(a, wt, b):
    mean = a.mean(-1)
    rstd = torch.rsqrt(a.var(-1, unbiased=False) + 1e-5)
    return [F.layer_norm(a, (16,), wt, b, 1e-5), mean, rstd]
case("norm", "layernorm_bias", f"""
func.func @main(%x: {ty([None, None, 16])}, %w: tensor<16xf32>, %b: tensor<16xf32>) -> ({ty([None, None, 16])}, {ty([None, None])}, {ty([None, None])}) {{
  %y, %m, %r = tfm.layernorm %x, %w, %b {{eps = 1.0e-05 : f64}} : ({ty([None, None, 16])}, tensor<16xf32>, tensor<16xf32>) -> ({ty([None, None, 16])}, {ty([None, None])}, {ty([None, None])})
  return %y, %m, %r : {ty([None, None, 16])}, {ty([None, None])}, {ty([None, None])}
}}""", [x, w, bias], ln)
case("norm", "layernorm", f"""
func.func @main(%x: {ty([None, None, 16])}, %w: tensor<16xf32>) -> {ty([None, None, 16])} {{
  %y, %m, %r = tfm.layernorm %x, %w {{eps = 1.0e-05 : f64}} : ({ty([None, None, 16])}, tensor<16xf32>) -> ({ty([None, None, 16])}, {ty([None, None])}, {ty([None, None])})
  return %y : {ty([None, None, 16])}
}}""", [x, w], lambda a, wt: [F.layer_norm(a, (16,), wt, None, 1e-5)])
q4 = randn(B, T, 4, 8)
k4 = randn(B, T, 2, 8)
for mode, wq, wk in [("per_head", randn(8), randn(8)), ("whole", randn(32), randn(16))]:
    def ref(q, k, a, b, mode=mode):
        if mode == "per_head":
            qn, rq = rms(q, a, 1e-6, True)
            kn, rk = rms(k, b, 1e-6, True)
            return [qn, kn, rq, rk]
        qn, rq = rms(q.flatten(2), a, 1e-6, True)
        kn, rk = rms(k.flatten(2), b, 1e-6, True)
        return [qn.view_as(q), kn.view_as(k), rq, rk]
    rq_t = ty([None, None, 4]) if mode == "per_head" else ty([None, None])
    rk_t = ty([None, None, 2]) if mode == "per_head" else ty([None, None])
    case("norm", "qk_norm_" + mode, f"""
func.func @main(%q: {ty([None, None, 4, 8])}, %k: {ty([None, None, 2, 8])}, %wq: tensor<{wq.numel()}xf32>, %wk: tensor<{wk.numel()}xf32>) -> ({ty([None, None, 4, 8])}, {ty([None, None, 2, 8])}, {rq_t}, {rk_t}) {{
  %a, %b, %c, %d = tfm.qk_norm %q, %k, %wq, %wk {{eps = 1.0e-06 : f64, mode = #tfm.qk_norm_mode<{mode}>, unit_offset}} : ({ty([None, None, 4, 8])}, {ty([None, None, 2, 8])}, tensor<{wq.numel()}xf32>, tensor<{wk.numel()}xf32>) -> ({ty([None, None, 4, 8])}, {ty([None, None, 2, 8])}, {rq_t}, {rk_t})
  return %a, %b, %c, %d : {ty([None, None, 4, 8])}, {ty([None, None, 2, 8])}, {rq_t}, {rk_t}
}}""", [q4, k4, wq, wk], ref)

# ---------------------------------------------------------------- matmul
a3 = randn(B, T, 16)
wnt = randn(24, 16, scale=0.3)
bvec = randn(24)
case("matmul", "nt", f"""
func.func @main(%x: {ty([None, None, 16])}, %w: tensor<24x16xf32>) -> {ty([None, None, 24])} {{
  %y = tfm.matmul %x, %w {{transpose = #tfm.transpose<nt>}} : ({ty([None, None, 16])}, tensor<24x16xf32>) -> {ty([None, None, 24])}
  return %y : {ty([None, None, 24])}
}}""", [a3, wnt], lambda a, wt: [a @ wt.T])
case("matmul", "nt_bias", f"""
func.func @main(%x: {ty([None, None, 16])}, %w: tensor<24x16xf32>, %b: tensor<24xf32>) -> {ty([None, None, 24])} {{
  %y = tfm.matmul %x, %w, %b {{transpose = #tfm.transpose<nt>}} : ({ty([None, None, 16])}, tensor<24x16xf32>, tensor<24xf32>) -> {ty([None, None, 24])}
  return %y : {ty([None, None, 24])}
}}""", [a3, wnt, bvec], lambda a, wt, b: [F.linear(a, wt, b)])
case("matmul", "nn", f"""
func.func @main(%x: {ty([None, None, 16])}, %w: tensor<16x24xf32>) -> {ty([None, None, 24])} {{
  %y = tfm.matmul %x, %w {{transpose = #tfm.transpose<nn>}} : ({ty([None, None, 16])}, tensor<16x24xf32>) -> {ty([None, None, 24])}
  return %y : {ty([None, None, 24])}
}}""", [a3, wnt.T.contiguous()], lambda a, wt: [a @ wt])

# ---------------------------------------------------------------- rope
def hf_inv_freq(rope, head_dim, theta, prf=1.0, seq_len=None):
    cfg = PretrainedConfig()
    cfg.hidden_size, cfg.num_attention_heads, cfg.head_dim = head_dim * 4, 4, head_dim
    cfg.max_position_embeddings = 64
    params = dict(rope)
    params["rope_theta"] = theta
    params["partial_rotary_factor"] = prf
    cfg.rope_parameters = params
    if rope["rope_type"] == "default":
        dim = int(head_dim * prf)
        return 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)), 1.0
    inv, af = ROPE_INIT_FUNCTIONS[rope["rope_type"]](cfg, "cpu", seq_len=seq_len)
    return inv, af

def apply_rope(xx, pos, inv, af, rot):
    freqs = pos[..., None].float() * inv  # [B, T, rot/2]
    emb = torch.cat([freqs, freqs], -1)
    cos, sin = (emb.cos() * af)[:, :, None, :], (emb.sin() * af)[:, :, None, :]
    xr, xp = xx[..., :rot], xx[..., rot:]
    half = torch.cat([-xr[..., rot // 2:], xr[..., : rot // 2]], -1)
    return torch.cat([xr * cos + half * sin, xp], -1)

xr4 = randn(B, T, 4, 16)
rope_cases = [
    ("plain", dict(rope_type="default"), "", 16, 10000.0),
    ("partial", dict(rope_type="default"), "", 8, 10000.0),
    ("linear", dict(rope_type="linear", factor=4.0), "#tfm.rope_scaling<kind = linear, factor = 4.0>", 16, 10000.0),
    ("llama3", dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                    original_max_position_embeddings=32),
     "#tfm.rope_scaling<kind = llama3, factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original = 32>", 16, 10000.0),
    ("yarn", dict(rope_type="yarn", factor=4.0, original_max_position_embeddings=16),
     "#tfm.rope_scaling<kind = yarn, factor = 4.0, original = 16, attention_factor = ATT>", 16, 10000.0),
    ("longrope_long", dict(rope_type="longrope", short_factor=[1.0, 1.2, 1.5, 2.0, 2.0, 3.0, 3.0, 4.0],
                           long_factor=[2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                           original_max_position_embeddings=4, factor=8.0),
     "#tfm.rope_scaling<kind = longrope, factor = 8.0, original = 4, attention_factor = ATT, short_factor = [1.0, 1.2, 1.5, 2.0, 2.0, 3.0, 3.0, 4.0], long_factor = [2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]>", 16, 10000.0),
    ("longrope_short", dict(rope_type="longrope", short_factor=[1.0, 1.2, 1.5, 2.0, 2.0, 3.0, 3.0, 4.0],
                            long_factor=[2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                            original_max_position_embeddings=32, factor=2.0),
     "#tfm.rope_scaling<kind = longrope, factor = 2.0, original = 32, attention_factor = ATT, short_factor = [1.0, 1.2, 1.5, 2.0, 2.0, 3.0, 3.0, 4.0], long_factor = [2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]>", 16, 10000.0),
]
for name, rope, attr, rot, theta in rope_cases:
    prf = rot / 16
    seq = T if rope["rope_type"] == "longrope" else None
    inv, af = hf_inv_freq(rope, 16, theta, prf, seq_len=seq)
    if rope["rope_type"] == "longrope" and T <= rope["original_max_position_embeddings"]:
        inv, af = hf_inv_freq(rope, 16, theta, prf, seq_len=None)
    attr = attr.replace("ATT", repr(float(af)))
    scaling = f", scaling = {attr}" if attr else ""
    case("rope", name, f"""
func.func @main(%x: {ty([None, None, 4, 16])}, %p: {ty([None, None], 'i64')}) -> {ty([None, None, 4, 16])} {{
  %y = tfm.rope %x, %p {{theta = {theta} : f64, rotary_dim = {rot} : i64{scaling}}} : ({ty([None, None, 4, 16])}, {ty([None, None], 'i64')}) -> {ty([None, None, 4, 16])}
  return %y : {ty([None, None, 4, 16])}
}}""", [xr4, positions()], lambda a, p, inv=inv, af=af, rot=rot: [apply_rope(a, p, inv, af, rot)])

# Interleaved pairs (2i, 2i+1), as DeepSeek-V2's complex-number RoPE
# (modeling_deepseek_v2: view_as_complex(x.reshape(..., -1, 2)) * freqs_cis).
def ref_rope_interleaved(xx, pos, theta, yarn=None):
    inv = 1.0 / (theta ** (torch.arange(0, 16, 2, dtype=torch.int64).float() / 16))
    af = 1.0
    if yarn:
        inv, af = hf_inv_freq(yarn, 16, theta)
    freqs = pos[..., None].float() * inv
    cis = torch.polar(torch.ones_like(freqs), freqs) * af
    xc = torch.view_as_complex(xx.float().reshape(*xx.shape[:-1], -1, 2))
    return torch.view_as_real(xc * cis[:, :, None, :]).flatten(3)

yarn_ds = dict(rope_type="yarn", factor=4.0, original_max_position_embeddings=16, mscale=1.0,
               mscale_all_dim=0.707)
_, af_ds = hf_inv_freq(yarn_ds, 16, 10000.0)
for name, yarn, scaling in [
        ("interleaved", None, ""),
        ("interleaved_yarn", yarn_ds,
         f", scaling = #tfm.rope_scaling<kind = yarn, factor = 4.0, original = 16, attention_factor = {float(af_ds)!r}>")]:
    case("rope", name, f"""
func.func @main(%x: {ty([None, None, 4, 16])}, %p: {ty([None, None], 'i64')}) -> {ty([None, None, 4, 16])} {{
  %y = tfm.rope %x, %p {{theta = 10000.0 : f64, rotary_dim = 16 : i64, interleaved{scaling}}} : ({ty([None, None, 4, 16])}, {ty([None, None], 'i64')}) -> {ty([None, None, 4, 16])}
  return %y : {ty([None, None, 4, 16])}
}}""", [xr4, positions()], lambda a, p, y=yarn: [ref_rope_interleaved(a, p, 10000.0, y)])

qkv = randn(B, T, 8, 16)
wqn, wkn = randn(16), randn(16)
def qkv_ref(t, a, b, p):
    inv, af = hf_inv_freq(dict(rope_type="default"), 16, 1e6)
    q, rq = rms(t[:, :, :4], a, 1e-6, False)
    k, rk = rms(t[:, :, 4:6], b, 1e-6, False)
    return [torch.cat([apply_rope(q, p, inv, af, 16), apply_rope(k, p, inv, af, 16), t[:, :, 6:]], 2), rq, rk]
case("rope", "qkv_qk_norm_rope", f"""
func.func @main(%qkv: {ty([None, None, 8, 16])}, %wq: tensor<16xf32>, %wk: tensor<16xf32>, %p: {ty([None, None], 'i64')}) -> ({ty([None, None, 8, 16])}, {ty([None, None, 4])}, {ty([None, None, 2])}) {{
  %o, %a, %b = tfm.qkv_qk_norm_rope %qkv, %wq, %wk, %p {{num_q_heads = 4 : i64, num_kv_heads = 2 : i64, eps = 1.0e-06 : f64, theta = 1.0e6 : f64, rotary_dim = 16 : i64}} : ({ty([None, None, 8, 16])}, tensor<16xf32>, tensor<16xf32>, {ty([None, None], 'i64')}) -> ({ty([None, None, 8, 16])}, {ty([None, None, 4])}, {ty([None, None, 2])})
  return %o, %a, %b : {ty([None, None, 8, 16])}, {ty([None, None, 4])}, {ty([None, None, 2])}
}}""", [qkv, wqn, wkn, positions()], qkv_ref)

def qkv_rope_ref(t, p):
    inv, af = hf_inv_freq(dict(rope_type="default"), 8, 1e4)
    return [torch.cat([apply_rope(t[:, :, :4], p, inv, af, 8),
                       apply_rope(t[:, :, 4:6], p, inv, af, 8), t[:, :, 6:]], 2)]
case("rope", "qkv_rope", f"""
func.func @main(%qkv: {ty([None, None, 8, 16])}, %p: {ty([None, None], 'i64')}) -> {ty([None, None, 8, 16])} {{
  %o = tfm.qkv_rope %qkv, %p {{num_q_heads = 4 : i64, num_kv_heads = 2 : i64, theta = 1.0e4 : f64, rotary_dim = 8 : i64}} : ({ty([None, None, 8, 16])}, {ty([None, None], 'i64')}) -> {ty([None, None, 8, 16])}
  return %o : {ty([None, None, 8, 16])}
}}""", [qkv, positions()], qkv_rope_ref)

# ---------------------------------------------------------------- attention
def doc_starts(pos):
    """Where each token's document begins: the last position-0 at or before it."""
    starts = torch.zeros_like(pos)
    for b in range(pos.shape[0]):
        cur = 0
        for t in range(pos.shape[1]):
            if pos[b, t] == 0:
                cur = t
            starts[b, t] = cur
    return starts


def attn_ref(q, k, v, scale, causal=True, window=None, softcap=None, sinks=None, docs=None):
    g = q.shape[2] // k.shape[2]
    k = k.repeat_interleave(g, 2)
    v = v.repeat_interleave(g, 2)
    s = torch.einsum("bthd,bshd->bhts", q, k) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(q.shape[1])[:, None]
    j = torch.arange(k.shape[1])[None, :]
    mask = torch.zeros_like(s[0, 0], dtype=torch.bool)
    if causal:
        mask |= j > i
    if window:
        mask |= (i - j) >= window
    if docs is not None:  # [B, T]: keys before the query's document
        mask = mask[None, None] | (j[None, None] < docs[:, None, :, None])
    s = s.masked_fill(mask, float("-inf"))
    if sinks is not None:
        s = torch.cat([s, sinks[None, :, None, None].expand(s.shape[0], -1, s.shape[2], 1)], -1)
    lse = torch.logsumexp(s, -1)
    p = torch.softmax(s, -1)
    if sinks is not None:
        p = p[..., :-1]
    return torch.einsum("bhts,bshd->bthd", p, v), lse

qa, ka, va = randn(B, T, 4, 8), randn(B, T, 2, 8), randn(B, T, 2, 8)
sinks = randn(4)
QT, KT = ty([None, None, 4, 8]), ty([None, None, 2, 8])
for name, attrs, kw, with_sinks in [
        ("causal", "causal, scale = 0.35355339059327379 : f64", dict(), False),
        ("full", "scale = 0.35355339059327379 : f64", dict(causal=False), False),
        ("window_softcap", "causal, scale = 0.25 : f64, sliding_window = 3 : i64, softcap = 2.0 : f64",
         dict(window=3, softcap=2.0), False),
        ("sinks", "causal, scale = 0.35355339059327379 : f64", dict(), True)]:
    scale = 0.25 if "window" in name else 8 ** -0.5
    sink_arg = f", %s: tensor<4xf32>" if with_sinks else ""
    sink_use = " sinks(%s)" if with_sinks else ""
    sink_ty = ", tensor<4xf32>" if with_sinks else ""
    ins = [qa, ka, va] + ([sinks] if with_sinks else [])
    case("attention", name, f"""
func.func @main(%q: {QT}, %k: {KT}, %v: {KT}{sink_arg}) -> {QT} {{
  %o = tfm.attention %q, %k, %v{sink_use} {{{attrs}}} : ({QT}, {KT}, {KT}{sink_ty}) -> {QT}
  return %o : {QT}
}}""", ins, lambda q, k, v, *s, kw=kw, scale=scale: [attn_ref(q, k, v, scale, sinks=s[0] if s else None, **kw)[0]])

# The backward op against torch autograd of the reference (f32): the GPU
# path's flash backward kernels (run with --device gpu-sim) and the CPU
# lowering both implement it.
dout = randn(B, T, 4, 8)
def attn_grads(q, k, v, do, scale, sinks=None, **kw):
    leaves = [t.clone().requires_grad_() for t in [q, k, v] + ([sinks] if sinks is not None else [])]
    out = attn_ref(*leaves[:3], scale, sinks=leaves[3] if sinks is not None else None, **kw)[0]
    return list(torch.autograd.grad(out, leaves, do))
for name, attrs, kw, with_sinks in [
        ("backward_window_softcap", "causal, scale = 0.25 : f64, sliding_window = 3 : i64, softcap = 2.0 : f64",
         dict(window=3, softcap=2.0), False),
        ("backward_full", "scale = 0.25 : f64", dict(causal=False), False),
        ("backward_sinks", "causal, scale = 0.25 : f64", dict(), True)]:
    sink_arg = ", %s: tensor<4xf32>" if with_sinks else ""
    sink_use = " sinks(%s)" if with_sinks else ""
    sink_ty = ", tensor<4xf32>" if with_sinks else ""
    res_ty = f"{QT}, {KT}, {KT}" + (", tensor<4xf32>" if with_sinks else "")
    res = "%dq, %dk, %dv" + (", %ds" if with_sinks else "")
    ins = [dout, qa, ka, va] + ([sinks] if with_sinks else [])
    case("attention", name, f"""
func.func @main(%do: {QT}, %q: {QT}, %k: {KT}, %v: {KT}{sink_arg}) -> ({res_ty}) {{
  {res} = tfm.attention_backward %do, %q, %k, %v{sink_use} {{{attrs}}} : ({QT}, {QT}, {KT}, {KT}{sink_ty}) -> ({res_ty})
  return {res} : {res_ty}
}}""", ins, lambda do, q, k, v, *s, kw=kw: attn_grads(q, k, v, do, 0.25, sinks=s[0] if s else None, **kw))

# Head dim 32: on a GPU these take the warp-per-row flash kernels (the
# others, with head dims below 32, keep the linalg lowering there).
q32, k32, v32, do32 = randn(B, T, 4, 32), randn(B, T, 2, 32), randn(B, T, 2, 32), randn(B, T, 4, 32)
Q32, K32 = ty([None, None, 4, 32]), ty([None, None, 2, 32])
case("attention", "d32_window_softcap_sinks", f"""
func.func @main(%q: {Q32}, %k: {K32}, %v: {K32}, %s: tensor<4xf32>) -> {Q32} {{
  %o = tfm.attention %q, %k, %v sinks(%s) {{causal, scale = 0.17677669529663687 : f64, sliding_window = 3 : i64, softcap = 2.0 : f64}} : ({Q32}, {K32}, {K32}, tensor<4xf32>) -> {Q32}
  return %o : {Q32}
}}""", [q32, k32, v32, sinks],
     lambda q, k, v, s: [attn_ref(q, k, v, 32 ** -0.5, window=3, softcap=2.0, sinks=s)[0]])
case("attention", "d32_backward_window_softcap_sinks", f"""
func.func @main(%do: {Q32}, %q: {Q32}, %k: {K32}, %v: {K32}, %s: tensor<4xf32>) -> ({Q32}, {K32}, {K32}, tensor<4xf32>) {{
  %dq, %dk, %dv, %ds = tfm.attention_backward %do, %q, %k, %v sinks(%s) {{causal, scale = 0.17677669529663687 : f64, sliding_window = 3 : i64, softcap = 2.0 : f64}} : ({Q32}, {Q32}, {K32}, {K32}, tensor<4xf32>) -> ({Q32}, {K32}, {K32}, tensor<4xf32>)
  return %dq, %dk, %dv, %ds : {Q32}, {K32}, {K32}, tensor<4xf32>
}}""", [do32, q32, k32, v32, sinks],
     lambda do, q, k, v, s: attn_grads(q, k, v, do, 32 ** -0.5, sinks=s, window=3, softcap=2.0))

packed_qkv = torch.cat([qa, ka, va], 2)
case("attention", "flash_attention", f"""
func.func @main(%qkv: {ty([None, None, 8, 8])}) -> ({QT}, {ty([None, 4, None])}) {{
  %o, %l = tfm.flash_attention %qkv {{num_q_heads = 4 : i64, num_kv_heads = 2 : i64, causal, scale = 0.25 : f64, sliding_window = 4 : i64}} : ({ty([None, None, 8, 8])}) -> ({QT}, {ty([None, 4, None])})
  return %o, %l : {QT}, {ty([None, 4, None])}
}}""", [packed_qkv], lambda t: list(attn_ref(t[:, :, :4], t[:, :, 4:6], t[:, :, 6:], 0.25, window=4)))

# The CPU flash lowering works in query tiles of 64 rows: 150 tokens make
# three tiles, the last partial, with a window crossing tile boundaries.
long_qkv = randn(1, 150, 4, 4)
case("attention", "flash_attention_tiles", f"""
func.func @main(%qkv: {ty([None, None, 4, 4])}, %s: tensor<2xf32>) -> ({ty([None, None, 2, 4])}, {ty([None, 2, None])}) {{
  %o, %l = tfm.flash_attention %qkv sinks(%s) {{num_q_heads = 2 : i64, num_kv_heads = 1 : i64, causal, scale = 0.5 : f64, sliding_window = 70 : i64, softcap = 3.0 : f64}} : ({ty([None, None, 4, 4])}, tensor<2xf32>) -> ({ty([None, None, 2, 4])}, {ty([None, 2, None])})
  return %o, %l : {ty([None, None, 2, 4])}, {ty([None, 2, None])}
}}""", [long_qkv, randn(2)],
     lambda t, s: list(attn_ref(t[:, :, :2], t[:, :, 2:3], t[:, :, 3:], 0.5, window=70, softcap=3.0,
                                sinks=s)))

# Its backward in the same tiles: each tile's dq is complete, dk, dv and
# dsinks are summed over tiles, and keys outside a tile's causal window are
# skipped (non-causal: every tile sees every key).
long_dout = randn(1, 150, 2, 4)
def flash_grads(do, t, s, **kw):
    q, k, v = t[:, :, :2], t[:, :, 2:3], t[:, :, 3:]
    dq, dk, dv, ds = attn_grads(q, k, v, do, 0.5, sinks=s, **kw)
    return [torch.cat([dq, dk, dv], 2), ds]
for name, attrs, kw in [
        ("flash_attention_backward_tiles",
         "causal, scale = 0.5 : f64, sliding_window = 70 : i64, softcap = 3.0 : f64",
         dict(window=70, softcap=3.0)),
        ("flash_attention_backward_tiles_causal", "causal, scale = 0.5 : f64", dict()),
        ("flash_attention_backward_tiles_full", "scale = 0.5 : f64", dict(causal=False))]:
    case("attention", name, f"""
func.func @main(%do: {ty([None, None, 2, 4])}, %qkv: {ty([None, None, 4, 4])}, %s: tensor<2xf32>) -> ({ty([None, None, 4, 4])}, tensor<2xf32>) {{
  %d, %ds = tfm.flash_attention_backward %do, %qkv sinks(%s) {{num_q_heads = 2 : i64, num_kv_heads = 1 : i64, {attrs}}} : ({ty([None, None, 2, 4])}, {ty([None, None, 4, 4])}, tensor<2xf32>) -> ({ty([None, None, 4, 4])}, tensor<2xf32>)
  return %d, %ds : {ty([None, None, 4, 4])}, tensor<2xf32>
}}""", [long_dout, long_qkv, randn(2)], lambda do, t, s, kw=kw: flash_grads(do, t, s, **kw))

# Packed documents: positions restart at 0 at each document (HF's
# flattened-batch convention); tfm.document_starts turns them into the
# doc_start operand, and no query sees another document's keys. Row 0 holds
# three documents (3, 2, 2 tokens), row 1 one document that began before
# the row (positions not from 0) and a second.
doc_pos = torch.tensor([[0, 1, 2, 0, 1, 0, 1], [5, 6, 7, 8, 0, 1, 2]])
DT = ty([None, None], 'i64')
for name, attrs, kw in [
        ("documents", "causal, scale = 0.35355339059327379 : f64", dict()),
        ("documents_window_softcap",
         "causal, scale = 0.35355339059327379 : f64, sliding_window = 2 : i64, softcap = 2.0 : f64",
         dict(window=2, softcap=2.0))]:
    case("attention", name, f"""
func.func @main(%q: {QT}, %k: {KT}, %v: {KT}, %s: tensor<4xf32>, %p: {DT}) -> {QT} {{
  %d = tfm.document_starts %p : ({DT}) -> {DT}
  %o = tfm.attention %q, %k, %v sinks(%s) doc_start(%d) {{{attrs}}} : ({QT}, {KT}, {KT}, tensor<4xf32>, {DT}) -> {QT}
  return %o : {QT}
}}""", [qa, ka, va, sinks, doc_pos],
         lambda q, k, v, s, p, kw=kw: [attn_ref(q, k, v, 8 ** -0.5, sinks=s, docs=doc_starts(p), **kw)[0]])
    case("attention", "backward_" + name, f"""
func.func @main(%do: {QT}, %q: {QT}, %k: {KT}, %v: {KT}, %s: tensor<4xf32>, %p: {DT}) -> ({QT}, {KT}, {KT}, tensor<4xf32>) {{
  %d = tfm.document_starts %p : ({DT}) -> {DT}
  %dq, %dk, %dv, %ds = tfm.attention_backward %do, %q, %k, %v sinks(%s) doc_start(%d) {{{attrs}}} : ({QT}, {QT}, {KT}, {KT}, tensor<4xf32>, {DT}) -> ({QT}, {KT}, {KT}, tensor<4xf32>)
  return %dq, %dk, %dv, %ds : {QT}, {KT}, {KT}, tensor<4xf32>
}}""", [dout, qa, ka, va, sinks, doc_pos],
         lambda do, q, k, v, s, p, kw=kw: attn_grads(q, k, v, do, 8 ** -0.5, sinks=s, docs=doc_starts(p), **kw))
# Head dim 32 (the GPU kernels' path) with documents.
case("attention", "d32_backward_documents", f"""
func.func @main(%do: {Q32}, %q: {Q32}, %k: {K32}, %v: {K32}, %p: {DT}) -> ({Q32}, {K32}, {K32}) {{
  %d = tfm.document_starts %p : ({DT}) -> {DT}
  %dq, %dk, %dv = tfm.attention_backward %do, %q, %k, %v doc_start(%d) {{causal, scale = 0.17677669529663687 : f64, sliding_window = 3 : i64}} : ({Q32}, {Q32}, {K32}, {K32}, {DT}) -> ({Q32}, {K32}, {K32})
  return %dq, %dk, %dv : {Q32}, {K32}, {K32}
}}""", [do32, q32, k32, v32, doc_pos],
     lambda do, q, k, v, p: attn_grads(q, k, v, do, 32 ** -0.5, docs=doc_starts(p), window=3))
case("attention", "d32_documents", f"""
func.func @main(%q: {Q32}, %k: {K32}, %v: {K32}, %p: {DT}) -> {Q32} {{
  %d = tfm.document_starts %p : ({DT}) -> {DT}
  %o = tfm.attention %q, %k, %v doc_start(%d) {{causal, scale = 0.17677669529663687 : f64}} : ({Q32}, {K32}, {K32}, {DT}) -> {Q32}
  return %o : {Q32}
}}""", [q32, k32, v32, doc_pos],
     lambda q, k, v, p: [attn_ref(q, k, v, 32 ** -0.5, docs=doc_starts(p))[0]])

# The flash lowering's query tiles (64 rows) with documents of 40, 70 and 40
# tokens: boundaries inside tiles and a document across a tile boundary.
long_pos = torch.cat([torch.arange(40), torch.arange(70), torch.arange(40)])[None]
case("attention", "flash_attention_tiles_documents", f"""
func.func @main(%qkv: {ty([None, None, 4, 4])}, %s: tensor<2xf32>, %p: {DT}) -> ({ty([None, None, 2, 4])}, {ty([None, 2, None])}) {{
  %d = tfm.document_starts %p : ({DT}) -> {DT}
  %o, %l = tfm.flash_attention %qkv sinks(%s) doc_start(%d) {{num_q_heads = 2 : i64, num_kv_heads = 1 : i64, causal, scale = 0.5 : f64, softcap = 3.0 : f64}} : ({ty([None, None, 4, 4])}, tensor<2xf32>, {DT}) -> ({ty([None, None, 2, 4])}, {ty([None, 2, None])})
  return %o, %l : {ty([None, None, 2, 4])}, {ty([None, 2, None])}
}}""", [long_qkv, drandn(2), long_pos],
     lambda t, s, p: list(attn_ref(t[:, :, :2], t[:, :, 2:3], t[:, :, 3:], 0.5, softcap=3.0,
                                   sinks=s, docs=doc_starts(p))))
case("attention", "flash_attention_backward_tiles_documents", f"""
func.func @main(%do: {ty([None, None, 2, 4])}, %qkv: {ty([None, None, 4, 4])}, %s: tensor<2xf32>, %p: {DT}) -> ({ty([None, None, 4, 4])}, tensor<2xf32>) {{
  %docs = tfm.document_starts %p : ({DT}) -> {DT}
  %d, %ds = tfm.flash_attention_backward %do, %qkv sinks(%s) doc_start(%docs) {{num_q_heads = 2 : i64, num_kv_heads = 1 : i64, causal, scale = 0.5 : f64, sliding_window = 50 : i64}} : ({ty([None, None, 2, 4])}, {ty([None, None, 4, 4])}, tensor<2xf32>, {DT}) -> ({ty([None, None, 4, 4])}, tensor<2xf32>)
  return %d, %ds : {ty([None, None, 4, 4])}, tensor<2xf32>
}}""", [long_dout, long_qkv, drandn(2), long_pos],
     lambda do, t, s, p: flash_grads(do, t, s, window=50, docs=doc_starts(p)))

# ---------------------------------------------------------------- losses
V = 40
logits = randn(B, T, V, scale=3.0)
labels = torch.randint(0, V, (B, T))
labels[0, 2] = -100
labels[1, 5] = -100
def causal_ce(lg, lb):
    lb = F.pad(lb, (0, 1), value=-100)[:, 1:]
    return F.cross_entropy(lg.reshape(-1, lg.shape[-1]).float(), lb.reshape(-1), ignore_index=-100)
case("loss", "cross_entropy", f"""
func.func @main(%l: {ty([None, None, V])}, %y: {ty([None, None], 'i64')}) -> tensor<f32> {{
  %loss = tfm.cross_entropy %l, %y : ({ty([None, None, V])}, {ty([None, None], 'i64')}) -> tensor<f32>
  return %loss : tensor<f32>
}}""", [logits, labels], lambda lg, lb: [causal_ce(lg, lb)])
hid = randn(B, T, 16)
head = randn(V, 16, scale=0.5)
def fused_ref(h, wt, lb):
    lg = 3.0 * torch.tanh((h @ wt.T) / 3.0)
    return [causal_ce(lg, lb), torch.logsumexp(lg, -1)]
case("loss", "fused_lm_head_loss", f"""
func.func @main(%h: {ty([None, None, 16])}, %w: tensor<{V}x16xf32>, %y: {ty([None, None], 'i64')}) -> (tensor<f32>, {ty([None, None])}) {{
  %loss, %lse = tfm.fused_lm_head_loss %h, %w, %y {{softcap = 3.0 : f64}} : ({ty([None, None, 16])}, tensor<{V}x16xf32>, {ty([None, None], 'i64')}) -> (tensor<f32>, {ty([None, None])})
  return %loss, %lse : tensor<f32>, {ty([None, None])}
}}""", [hid, head, labels], fused_ref)

# Chunks of 64 positions: 150 tokens make three, and the label shift crosses
# chunk boundaries.
long_h = randn(2, 150, 16)
long_labels = torch.randint(0, V, (2, 150))
long_labels[0, 64] = -100
long_labels[1, 128] = -100
case("loss", "fused_lm_head_loss_chunks", f"""
func.func @main(%h: {ty([None, None, 16])}, %w: tensor<{V}x16xf32>, %y: {ty([None, None], 'i64')}) -> (tensor<f32>, {ty([None, None])}) {{
  %loss, %lse = tfm.fused_lm_head_loss %h, %w, %y {{softcap = 3.0 : f64}} : ({ty([None, None, 16])}, tensor<{V}x16xf32>, {ty([None, None], 'i64')}) -> (tensor<f32>, {ty([None, None])})
  return %loss, %lse : tensor<f32>, {ty([None, None])}
}}""", [long_h, head, long_labels], fused_ref)

# Its backward in the same chunks (f32: BLAS GEMMs, dweight accumulated over
# the three chunks in place) against torch autograd of the reference loss.
def fused_grads(d, h, wt, lb):
    hl, wl = h.clone().requires_grad_(), wt.clone().requires_grad_()
    loss = causal_ce(3.0 * torch.tanh((hl @ wl.T) / 3.0), lb)
    return list(torch.autograd.grad(loss, [hl, wl], d))
long_lse = torch.logsumexp(3.0 * torch.tanh((long_h @ head.T) / 3.0), -1)
case("loss", "fused_lm_head_loss_backward_chunks", f"""
func.func @main(%d: tensor<f32>, %h: {ty([None, None, 16])}, %w: tensor<{V}x16xf32>, %y: {ty([None, None], 'i64')}, %lse: {ty([None, None])}) -> ({ty([None, None, 16])}, tensor<{V}x16xf32>) {{
  %dh, %dw = tfm.fused_lm_head_loss_backward %d, %h, %w, %y, %lse {{softcap = 3.0 : f64}} : (tensor<f32>, {ty([None, None, 16])}, tensor<{V}x16xf32>, {ty([None, None], 'i64')}, {ty([None, None])}) -> ({ty([None, None, 16])}, tensor<{V}x16xf32>)
  return %dh, %dw : {ty([None, None, 16])}, tensor<{V}x16xf32>
}}""", [torch.tensor(1.5), long_h, head, long_labels, long_lse],
     lambda d, h, wt, lb, lse: fused_grads(d, h, wt, lb))

# Granite's logits / logits_scaling as logit_scale, then the softcap.
def fused_scaled_ref(h, wt, lb):
    lg = 3.0 * torch.tanh(((h @ wt.T) * 0.25) / 3.0)
    return [causal_ce(lg, lb), torch.logsumexp(lg, -1)]
case("loss", "fused_lm_head_loss_scaled", f"""
func.func @main(%h: {ty([None, None, 16])}, %w: tensor<{V}x16xf32>, %y: {ty([None, None], 'i64')}) -> (tensor<f32>, {ty([None, None])}) {{
  %loss, %lse = tfm.fused_lm_head_loss %h, %w, %y {{softcap = 3.0 : f64, logit_scale = 0.25 : f64}} : ({ty([None, None, 16])}, tensor<{V}x16xf32>, {ty([None, None], 'i64')}) -> (tensor<f32>, {ty([None, None])})
  return %loss, %lse : tensor<f32>, {ty([None, None])}
}}""", [long_h, head, long_labels], fused_scaled_ref)

# ---------------------------------------------------------------- shape ops
table = randn(50, 16)
ids = torch.randint(0, 50, (B, T))
case("shape", "embedding", f"""
func.func @main(%ids: {ty([None, None], 'i64')}, %t: tensor<50x16xf32>) -> {ty([None, None, 16])} {{
  %h = tfm.embedding %ids, %t : ({ty([None, None], 'i64')}, tensor<50x16xf32>) -> {ty([None, None, 16])}
  return %h : {ty([None, None, 16])}
}}""", [ids, table], lambda i, t: [F.embedding(i, t)])
s6 = randn(B, T, 6, 4)
case("shape", "expand", f"""
func.func @main(%x: {ty([None, None, 1, 4])}) -> {ty([None, None, 3, 4])} {{
  %y = tfm.expand %x {{dim = 2 : i64}} : ({ty([None, None, 1, 4])}) -> {ty([None, None, 3, 4])}
  return %y : {ty([None, None, 3, 4])}
}}""", [randn(B, T, 1, 4)], lambda a: [a.expand(B, T, 3, 4)])
case("shape", "reshape_split_concat", f"""
func.func @main(%x: {ty([None, None, 6, 4])}) -> ({ty([None, None, 24])}, {ty([None, None, 2, 4])}, {ty([None, None, 6, 4])}) {{
  %f = tfm.reshape %x : {ty([None, None, 6, 4])} -> {ty([None, None, 24])}
  %a, %b = tfm.split %x {{dim = 2 : i64}} : ({ty([None, None, 6, 4])}) -> ({ty([None, None, 2, 4])}, {ty([None, None, 4, 4])})
  %c = tfm.concat %b, %a {{dim = 2 : i64}} : ({ty([None, None, 4, 4])}, {ty([None, None, 2, 4])}) -> {ty([None, None, 6, 4])}
  return %f, %a, %c : {ty([None, None, 24])}, {ty([None, None, 2, 4])}, {ty([None, None, 6, 4])}
}}""", [s6], lambda a: [a.reshape(B, T, 24), a[:, :, :2], torch.cat([a[:, :, 2:], a[:, :, :2]], 2)])


# ------------------------------------------------------------ mixture of experts
# References written the way HF's eager MoE code computes (softmax in f32,
# torch.topk, a loop over experts with index_add_), independently of tfm's
# gather formulation.
E, K, HM, IM = 16, 4, 16, 8
moe_logits = randn(B, T, E, scale=2.0)
LE, WK = ty([None, None, E]), ty([None, None, K])


def ref_router(logits, routing, normalize):
    if routing == "topk_softmax":
        top, _ = torch.topk(logits, K, dim=-1)
        return torch.softmax(top, dim=-1)
    p = torch.softmax(logits, -1) if routing == "softmax_topk" else torch.sigmoid(logits)
    w, _ = torch.topk(p, K, dim=-1)
    return w / w.sum(-1, keepdim=True) if normalize else w


for routing, normalize in [("softmax_topk", False), ("softmax_topk", True),
                           ("topk_softmax", False), ("sigmoid_topk", True)]:
    attrs = f"routing = #tfm.moe_routing<{routing}>" + (", normalize" if normalize else "")
    case("moe", f"router_{routing}" + ("_normalize" if normalize else ""), f"""
func.func @main(%l: {LE}) -> {WK} {{
  %w, %i = tfm.moe_router %l {{top_k = {K} : i64, {attrs}}} : ({LE}) -> ({WK}, {ty([None, None, K], "i64")})
  return %w : {WK}
}}""", [moe_logits], lambda l, r=routing, n=normalize: [ref_router(l, r, n)])


# DeepSeek routing, written as HF's routers (transformers 5: V3's
# DeepseekV3TopkRouter, V2's group_limited_greedy), but with sorted top-k
# so the slot order is tfm's (selection score descending).
G, KG = 4, 2
moe_bias = randn(E, scale=0.5)


def ref_router_v3(logits, bias, scale):
    scores = logits.sigmoid()
    choice = scores + bias
    groups = choice.view(*choice.shape[:-1], G, E // G).topk(2, dim=-1)[0].sum(-1)
    gidx = torch.topk(groups, KG, dim=-1)[1]
    gmask = torch.zeros_like(groups).scatter_(-1, gidx, 1)
    smask = gmask.unsqueeze(-1).expand(*gmask.shape, E // G).reshape(*choice.shape)
    choice = choice.masked_fill(~smask.bool(), float("-inf"))
    idx = torch.topk(choice, K, dim=-1)[1]
    w = scores.gather(-1, idx)
    w = w / (w.sum(-1, keepdim=True) + 1e-20)
    return w * scale


def ref_router_v2(logits, scale):
    scores = logits.softmax(-1, dtype=torch.float32)
    groups = scores.view(*scores.shape[:-1], G, E // G).max(dim=-1).values
    gidx = torch.topk(groups, KG, dim=-1)[1]
    gmask = torch.zeros_like(groups).scatter_(-1, gidx, 1)
    smask = gmask.unsqueeze(-1).expand(*gmask.shape, E // G).reshape(*scores.shape)
    w = torch.topk(scores.masked_fill(~smask.bool(), 0.0), K, dim=-1)[0]
    return w * scale


case("moe", "router_sigmoid_grouped_bias", f"""
func.func @main(%l: {LE}, %b: tensor<{E}xf32>) -> {WK} {{
  %w, %i = tfm.moe_router %l, %b {{top_k = {K} : i64, routing = #tfm.moe_routing<sigmoid_topk>, normalize, normalize_eps = 1.0e-20 : f64, scale = 2.5 : f64, num_groups = {G} : i64, topk_groups = {KG} : i64, group_score = #tfm.moe_group_score<top2_sum>}} : ({LE}, tensor<{E}xf32>) -> ({WK}, {ty([None, None, K], "i64")})
  return %w : {WK}
}}""", [moe_logits, moe_bias], lambda l, b: [ref_router_v3(l, b, 2.5)])
case("moe", "router_softmax_grouped_max", f"""
func.func @main(%l: {LE}) -> {WK} {{
  %w, %i = tfm.moe_router %l {{top_k = {K} : i64, routing = #tfm.moe_routing<softmax_topk>, scale = 1.5 : f64, num_groups = {G} : i64, topk_groups = {KG} : i64, group_score = #tfm.moe_group_score<max>}} : ({LE}) -> ({WK}, {ty([None, None, K], "i64")})
  return %w : {WK}
}}""", [moe_logits], lambda l: [ref_router_v2(l, 1.5)])


def ref_moe_block(x, wr, mask, wgu, wd):
    """Qwen3-MoE's eager sparse block (norm_topk_prob) on stacked experts."""
    h = x.reshape(-1, HM)
    logits = h @ wr.T + mask.reshape(-1, E)
    p = torch.softmax(logits, dim=-1, dtype=torch.float)
    w, sel = torch.topk(p, K, dim=-1)
    w = w / w.sum(-1, keepdim=True)
    out = torch.zeros_like(h)
    hit = torch.nn.functional.one_hot(sel, E).permute(2, 1, 0)
    for e in range(E):
        slot, tok = torch.where(hit[e])
        if tok.numel() == 0:
            continue
        gate, up = torch.nn.functional.linear(h[tok], wgu[e]).chunk(2, dim=-1)
        y = torch.nn.functional.linear(F.silu(gate) * up, wd[e])
        out.index_add_(0, tok, y * w[tok, slot, None])
    return [out.reshape(x.shape)]


XM, PM = ty([None, None, HM]), ty([None, None, K], "i64")
moe_mask = torch.zeros(B, T, E)
moe_mask[..., 3] = -40.0  # experts 3 and 11 receive no token
moe_mask[..., 11] = -40.0
case("moe", "block_stacked_experts", f"""
func.func @main(%x: {XM}, %wr: tensor<{E}x{HM}xf32>, %mask: {LE}, %wgu: tensor<{E}x{2 * IM}x{HM}xf32>, %wd: tensor<{E}x{HM}x{IM}xf32>) -> {XM} {{
  %l0 = tfm.matmul %x, %wr {{transpose = #tfm.transpose<nt>}} : ({XM}, tensor<{E}x{HM}xf32>) -> {LE}
  %l = tfm.add %l0, %mask : {LE}
  %w, %i = tfm.moe_router %l {{top_k = {K} : i64, routing = #tfm.moe_routing<softmax_topk>, normalize}} : ({LE}) -> ({WK}, {PM})
  %off, %pos, %src = tfm.moe_route_plan %i {{num_experts = {E} : i64}} : ({PM}) -> (tensor<{E + 1}xi64>, {PM}, tensor<?xi64>)
  %xp = tfm.moe_dispatch %x, %pos, %src : ({XM}, {PM}, tensor<?xi64>) -> tensor<?x{HM}xf32>
  %gu = tfm.moe_grouped_matmul %xp, %wgu, %off {{transpose = #tfm.transpose<nt>}} : (tensor<?x{HM}xf32>, tensor<{E}x{2 * IM}x{HM}xf32>, tensor<{E + 1}xi64>) -> tensor<?x{2 * IM}xf32>
  %g, %u = tfm.split %gu {{dim = 1 : i64}} : (tensor<?x{2 * IM}xf32>) -> (tensor<?x{IM}xf32>, tensor<?x{IM}xf32>)
  %a = tfm.silu %g : tensor<?x{IM}xf32>
  %h = tfm.mul %a, %u : tensor<?x{IM}xf32>
  %yp = tfm.moe_grouped_matmul %h, %wd, %off {{transpose = #tfm.transpose<nt>}} : (tensor<?x{IM}xf32>, tensor<{E}x{HM}x{IM}xf32>, tensor<{E + 1}xi64>) -> tensor<?x{HM}xf32>
  %y = tfm.moe_combine %yp, %pos, %src, %w : (tensor<?x{HM}xf32>, {PM}, tensor<?xi64>, {WK}) -> {XM}
  return %y : {XM}
}}""", [randn(B, T, HM), randn(E, HM), moe_mask, randn(E, 2 * IM, HM, scale=0.3),
        randn(E, HM, IM, scale=0.3)], ref_moe_block)


# ---------------------------------------------------------------- mamba2
# References: PyTorch's conv1d as HF's causal_conv1d_fn calls it, HF's own
# gated norms, and the scan as the plain sequential recurrence (no chunks),
# so the chunked lowering is checked against the definition.
from transformers.models.falcon_h1.modeling_falcon_h1 import FalconH1RMSNormGated  # noqa: E402
from transformers.models.mamba2.modeling_mamba2 import MambaRMSNormGated  # noqa: E402

MC, MK = 12, 4
MX, MW = ty([None, None, MC]), f"tensor<{MC}x{MK}xf32>"
for bias in (True, False):
    ba, bu, bt = (f", %b: tensor<{MC}xf32>", ", %b", f", tensor<{MC}xf32>") if bias else ("", "", "")
    ins = [randn(B, T, MC), randn(MC, MK, scale=0.5)] + ([randn(MC)] if bias else [])
    case("mamba", "conv1d" + ("_bias" if bias else ""), f"""
func.func @main(%x: {MX}, %w: {MW}{ba}) -> {MX} {{
  %y = tfm.mamba_conv1d %x, %w{bu} : ({MX}, {MW}{bt}) -> {MX}
  return %y : {MX}
}}""", ins, lambda x, w, b=None: [F.silu(F.conv1d(x.transpose(1, 2), w.unsqueeze(1), b, padding=MK - 1,
                                                  groups=MC)[..., :T].transpose(1, 2))])


def ref_conv_documents(x, w, b, pos):
    """The conv on each document alone (HF's conv1d per document)."""
    starts = doc_starts(pos)
    out = torch.empty_like(x)
    for r in range(x.shape[0]):
        bounds = sorted(set(starts[r].tolist())) + [x.shape[1]]
        for lo, hi in zip(bounds, bounds[1:]):
            seg = x[r:r + 1, lo:hi].transpose(1, 2)
            y = F.conv1d(seg, w.unsqueeze(1), b, padding=MK - 1, groups=MC)[..., :hi - lo]
            out[r, lo:hi] = F.silu(y.transpose(1, 2))[0]
    return out


case("mamba", "conv1d_documents", f"""
func.func @main(%x: {MX}, %w: {MW}, %b: tensor<{MC}xf32>, %p: {DT}) -> {MX} {{
  %d = tfm.document_starts %p : ({DT}) -> {DT}
  %y = tfm.mamba_conv1d %x, %w, %b doc_start(%d) : ({MX}, {MW}, tensor<{MC}xf32>, {DT}) -> {MX}
  return %y : {MX}
}}""", [drandn(B, T, MC), drandn(MC, MK, scale=0.5), drandn(MC), doc_pos],
     lambda x, w, b, p: [ref_conv_documents(x, w, b, p)])


def reset_at(s, i, starts):
    """The state zeroed in the rows where a document starts at token i."""
    if starts is None:
        return s
    keep = (starts[:, i] != i).to(s.dtype)
    return s * keep.reshape(-1, *([1] * (s.dim() - 1)))


def ref_scan(x, dt, a_log, bm, cm, d, dt_bias, chunk, lo=0.0, hi=float("inf"), starts=None):
    """s[t] = exp(δA) s[t-1] + δ x ⊗ b; y = s·c + d x; states before each chunk
    (with `starts`, s[t-1] = 0 where a document starts at t)."""
    bsz, t, h, p = x.shape
    g, n = bm.shape[2], bm.shape[3]
    delta = torch.clamp(F.softplus(dt + dt_bias), lo, hi)
    a = -torch.exp(a_log)
    bh = bm.repeat_interleave(h // g, dim=2)
    ch = cm.repeat_interleave(h // g, dim=2)
    s = torch.zeros(bsz, h, p, n, dtype=x.dtype)
    ys, states = [], []
    for i in range(t):
        if i % chunk == 0:
            states.append(s.clone())
        s = reset_at(s, i, starts)
        da = torch.exp(delta[:, i] * a)
        s = s * da[..., None, None] + (delta[:, i, :, None, None] * x[:, i, :, :, None]
                                       * bh[:, i, :, None, :])
        ys.append(torch.einsum("bhpn,bhn->bhp", s, ch[:, i]) + d[:, None] * x[:, i])
    return [torch.stack(ys, 1), torch.stack(states, 1)]


SH, SP, SG, SN = 4, 3, 2, 5
SX, SD = ty([None, None, SH, SP]), ty([None, None, SH])
SB, SS = ty([None, None, SG, SN]), ty([None, None, SH, SP, SN])
SV = f"tensor<{SH}xf32>"
for name, chunk, lo, hi in [("scan_chunk3", 3, 0.0, float("inf")), ("scan_one_chunk", 8, 0.0, float("inf")),
                            ("scan_dt_limit", 2, 0.3, 1.2)]:
    hi_attr = "0x7FF0000000000000" if hi == float("inf") else repr(hi)
    case("mamba", name, f"""
func.func @main(%x: {SX}, %dt: {SD}, %al: {SV}, %b: {SB}, %c: {SB}, %d: {SV}, %db: {SV}) -> ({SX}, {SS}) {{
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {{chunk_size = {chunk} : i64, dt_min = {lo!r} : f64, dt_max = {hi_attr} : f64}}
      : ({SX}, {SD}, {SV}, {SB}, {SB}, {SV}, {SV}) -> ({SX}, {SS})
  return %y, %s : {SX}, {SS}
}}""", [randn(B, T, SH, SP), randn(B, T, SH), torch.log(torch.arange(1, SH + 1).float()),
        randn(B, T, SG, SN), randn(B, T, SG, SN), randn(SH), randn(SH, scale=0.5)],
         lambda *a, chunk=chunk, lo=lo, hi=hi: ref_scan(*a, chunk, lo, hi))

# Documents: row 0 restarts at tokens 3 (a chunk start) and 5 (inside a
# chunk), row 1 at token 4 (inside a chunk) after a document that began
# before the row.
case("mamba", "scan_documents", f"""
func.func @main(%x: {SX}, %dt: {SD}, %al: {SV}, %b: {SB}, %c: {SB}, %d: {SV}, %db: {SV}, %p: {DT}) -> ({SX}, {SS}) {{
  %docs = tfm.document_starts %p : ({DT}) -> {DT}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db doc_start(%docs) {{chunk_size = 3 : i64, dt_min = 0.0 : f64, dt_max = 0x7FF0000000000000 : f64}}
      : ({SX}, {SD}, {SV}, {SB}, {SB}, {SV}, {SV}, {DT}) -> ({SX}, {SS})
  return %y, %s : {SX}, {SS}
}}""", [drandn(B, T, SH, SP), drandn(B, T, SH), torch.log(torch.arange(1, SH + 1).float()),
        drandn(B, T, SG, SN), drandn(B, T, SG, SN), drandn(SH), drandn(SH, scale=0.5), doc_pos],
     lambda *a: ref_scan(*a[:7], 3, starts=doc_starts(a[7])))

GI, GG = 8, 2
GX = ty([None, None, GI])
for before in (False, True):
    attr = ", norm_before_gate" if before else ""

    def ref_gated(x, z, w, before=before):
        if before:
            m = FalconH1RMSNormGated(GI, eps=1e-5, n_groups=GG, norm_before_gate=True)
        else:
            m = MambaRMSNormGated(GI, group_size=GI // GG, eps=1e-5)
        m.weight.data.copy_(w)
        with torch.no_grad():
            return [m(x, z)]
    case("mamba", "gated_rmsnorm" + ("_norm_before_gate" if before else ""), f"""
func.func @main(%x: {GX}, %z: {GX}, %w: tensor<{GI}xf32>) -> {GX} {{
  %y, %r = tfm.gated_rmsnorm %x, %z, %w {{groups = {GG} : i64, eps = 1.0e-05 : f64{attr}}} : ({GX}, {GX}, tensor<{GI}xf32>) -> ({GX}, {ty([None, None, GG])})
  return %y : {GX}
}}""", [randn(B, T, GI), randn(B, T, GI), randn(GI)], ref_gated)

case("mamba", "silu_gate", f"""
func.func @main(%x: {GX}, %z: {GX}) -> {GX} {{
  %y = tfm.silu_gate %x, %z : ({GX}, {GX}) -> {GX}
  return %y : {GX}
}}""", [randn(B, T, GI), randn(B, T, GI)], lambda x, z: [x * F.silu(z)])

# ---------------------------------------------------------------- deltanet
# References: HF Qwen3-Next's own torch paths: the token-by-token
# torch_recurrent_gated_delta_rule (the rule's definition, no chunks; the
# chunked lowering must agree with it) and torch_chunk_gated_delta_rule, and
# its gated norm; the chunk states from the same recurrence written out.
from transformers.models.qwen3_next.modeling_qwen3_next import (  # noqa: E402
    Qwen3NextRMSNormGated, torch_chunk_gated_delta_rule, torch_recurrent_gated_delta_rule)


def delta_gates(a, b, a_log, dt_bias):
    """Qwen3NextGatedDeltaNet.forward: g and beta from the raw projections."""
    return -a_log.float().exp() * F.softplus(a.float() + dt_bias), b.sigmoid()


def ref_delta_rule_documents(q, k, v, a, b, a_log, dt_bias, pos, chunk):
    """HF's recurrent rule on each document alone; the states before each
    chunk from the recurrence with resets."""
    starts = doc_starts(pos)
    g, beta = delta_gates(a, b, a_log, dt_bias)
    y = torch.empty_like(v)
    for r in range(v.shape[0]):
        bounds = sorted(set(starts[r].tolist())) + [v.shape[1]]
        for lo, hi in zip(bounds, bounds[1:]):
            part, _ = torch_recurrent_gated_delta_rule(
                q[r:r + 1, lo:hi], k[r:r + 1, lo:hi], v[r:r + 1, lo:hi], g=g[r:r + 1, lo:hi],
                beta=beta[r:r + 1, lo:hi], use_qk_l2norm_in_kernel=True)
            y[r, lo:hi] = part[0]
    return [y, ref_delta_rule(q, k, v, a, b, a_log, dt_bias, chunk, starts=starts)[1]]


def ref_delta_rule(q, k, v, a, b, a_log, dt_bias, chunk, use_chunked=False, starts=None):
    g, beta = delta_gates(a, b, a_log, dt_bias)
    fn = torch_chunk_gated_delta_rule if use_chunked else torch_recurrent_gated_delta_rule
    kw = {"chunk_size": chunk} if use_chunked else {}
    y, _ = fn(q, k, v, g=g, beta=beta, use_qk_l2norm_in_kernel=True, **kw)
    # The states before each chunk: the same recurrence, token by token.
    hv, hk = v.shape[2], q.shape[2]
    qn = q.repeat_interleave(hv // hk, 2)
    kn = k.repeat_interleave(hv // hk, 2)
    kn = kn * torch.rsqrt((kn * kn).sum(-1, keepdim=True) + 1e-6)
    s = torch.zeros(v.shape[0], hv, q.shape[3], v.shape[3])
    states = []
    for t in range(v.shape[1]):
        if t % chunk == 0:
            states.append(s.clone())
        s = reset_at(s, t, starts)
        s = s * g[:, t].exp()[..., None, None]
        kt = kn[:, t]
        delta = (v[:, t] - (s * kt[..., None]).sum(-2)) * beta[:, t, :, None]
        s = s + kt[..., None] * delta[..., None, :]
    return [y, torch.stack(states, 1)]


for name, t, chunk, hk, hv, dk, dv, chunked in [
        ("rule_chunk3", T, 3, 2, 4, 4, 3, False),
        ("rule_chunk64_t70", 70, 64, 1, 2, 8, 4, False),
        ("rule_chunk64_t70_vs_hf_chunked", 70, 64, 2, 2, 4, 4, True)]:
    DQ, DV = ty([None, None, hk, dk]), ty([None, None, hv, dv])
    DG, DP = ty([None, None, hv]), f"tensor<{hv}xf32>"
    DS = ty([None, None, hv, dk, dv])
    case("deltanet", name, f"""
func.func @main(%q: {DQ}, %k: {DQ}, %v: {DV}, %a: {DG}, %b: {DG}, %al: {DP}, %db: {DP}) -> ({DV}, {DS}) {{
  %y, %s = tfm.gated_delta_rule %q, %k, %v, %a, %b, %al, %db {{chunk_size = {chunk} : i64}}
      : ({DQ}, {DQ}, {DV}, {DG}, {DG}, {DP}, {DP}) -> ({DV}, {DS})
  return %y, %s : {DV}, {DS}
}}""", [randn(B, t, hk, dk), randn(B, t, hk, dk), randn(B, t, hv, dv), randn(B, t, hv),
        randn(B, t, hv), torch.log(torch.linspace(0.05, 2.0, hv)), randn(hv, scale=0.5)],
         lambda *x, chunk=chunk, chunked=chunked: ref_delta_rule(*x, chunk, chunked))

DQ, DV = ty([None, None, 2, 4]), ty([None, None, 4, 3])
DG, DP, DS = ty([None, None, 4]), "tensor<4xf32>", ty([None, None, 4, 4, 3])
case("deltanet", "rule_documents", f"""
func.func @main(%q: {DQ}, %k: {DQ}, %v: {DV}, %a: {DG}, %b: {DG}, %al: {DP}, %db: {DP}, %p: {DT}) -> ({DV}, {DS}) {{
  %docs = tfm.document_starts %p : ({DT}) -> {DT}
  %y, %s = tfm.gated_delta_rule %q, %k, %v, %a, %b, %al, %db doc_start(%docs) {{chunk_size = 3 : i64}}
      : ({DQ}, {DQ}, {DV}, {DG}, {DG}, {DP}, {DP}, {DT}) -> ({DV}, {DS})
  return %y, %s : {DV}, {DS}
}}""", [drandn(B, T, 2, 4), drandn(B, T, 2, 4), drandn(B, T, 4, 3), drandn(B, T, 4), drandn(B, T, 4),
        torch.log(torch.linspace(0.05, 2.0, 4)), drandn(4, scale=0.5), doc_pos],
     lambda *x: ref_delta_rule_documents(*x, chunk=3))

QH, QD = 3, 4
QX = ty([None, None, QH * QD])


def ref_shared_gated_norm(x, z, w):
    m = Qwen3NextRMSNormGated(QD, eps=1e-6)
    m.weight.data.copy_(w)
    with torch.no_grad():
        return [m(x.reshape(-1, QD), z.reshape(-1, QD)).reshape(x.shape)]


case("deltanet", "gated_rmsnorm_shared_weight", f"""
func.func @main(%x: {QX}, %z: {QX}, %w: tensor<{QD}xf32>) -> {QX} {{
  %y, %r = tfm.gated_rmsnorm %x, %z, %w {{groups = {QH} : i64, eps = 1.0e-06 : f64, norm_before_gate}} : ({QX}, {QX}, tensor<{QD}xf32>) -> ({QX}, {ty([None, None, QH])})
  return %y : {QX}
}}""", [randn(B, T, QH * QD), randn(B, T, QH * QD), randn(QD)], ref_shared_gated_norm)
case("deltanet", "sigmoid", f"""
func.func @main(%x: {QX}) -> {QX} {{
  %y = tfm.sigmoid %x : {QX}
  return %y : {QX}
}}""", [randn(B, T, QH * QD, scale=3.0)], lambda x: [torch.sigmoid(x)])


# ------------------------------------------------------------------- optimizer
# One update of one parameter against torch.optim (single-tensor path) from
# the same state; lr (f64), step (i64) and grad_scale (f32) are 0-d inputs.
OP = [4, 8]
OPT = ty(OP)


def torch_step(make, param, grad, state, t, scale):
    """`make([p])` builds the optimizer; `state` its state for p before
    step t (t - 1 steps done); the gradient is grad * scale."""
    p = param.clone().requires_grad_(True)
    opt = make([p])
    p.grad = grad * scale
    if state:
        opt.state[p] = dict(state, step=torch.tensor(float(t - 1)))
    opt.step()
    return p.detach(), opt.state[p]


for t, wd in [(1, 0.0), (3, 0.01)]:
    m0, v0 = randn(*OP, scale=0.1), randn(*OP, scale=0.01).abs()
    def ref_adamw(p, g, m, v, lr, step, scale, wd=wd):
        state = {} if int(step) == 1 else {"exp_avg": m.clone(), "exp_avg_sq": v.clone()}
        q, st = torch_step(lambda ps: torch.optim.AdamW(
            ps, lr=float(lr), betas=(0.9, 0.95), eps=1e-8, weight_decay=wd, foreach=False),
            p, g, state, int(step), scale)
        return [q, st["exp_avg"], st["exp_avg_sq"]]
    case("optimizer", f"adamw_step{t}", f"""
func.func @main(%p: {OPT}, %g: {OPT}, %m: {OPT}, %v: {OPT}, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) -> ({OPT}, {OPT}, {OPT}) {{
  %p1, %m1, %v1 = tfm.adamw_update %p, %g, %m, %v, %lr, %t, %s {{beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = {wd} : f64}} : {OPT}, {OPT}, {OPT}
  return %p1, %m1, %v1 : {OPT}, {OPT}, {OPT}
}}""", [randn(*OP), randn(*OP), m0 if t > 1 else torch.zeros(OP), v0 if t > 1 else torch.zeros(OP),
       torch.tensor(3e-3, dtype=torch.float64), torch.tensor(t, dtype=torch.int64),
       torch.tensor(0.5)], ref_adamw)

for name, t, attrs, kw in [
        ("sgd_plain", 2, "momentum = 0.0 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64", {}),
        ("sgd_momentum_first", 1, "momentum = 0.9 : f64, dampening = 0.1 : f64, weight_decay = 0.01 : f64",
         dict(momentum=0.9, dampening=0.1, weight_decay=0.01)),
        ("sgd_momentum", 4, "momentum = 0.9 : f64, dampening = 0.1 : f64, weight_decay = 0.01 : f64",
         dict(momentum=0.9, dampening=0.1, weight_decay=0.01)),
        ("sgd_nesterov", 4, "momentum = 0.9 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64, nesterov",
         dict(momentum=0.9, nesterov=True))]:
    def ref_sgd(p, g, b, lr, step, scale, kw=kw):
        state = {"momentum_buffer": b.clone()} if kw.get("momentum") and int(step) > 1 else {}
        q, st = torch_step(lambda ps: torch.optim.SGD(ps, lr=float(lr), foreach=False, **kw),
                           p, g, state, int(step), scale)
        return [q, st.get("momentum_buffer", b)]
    case("optimizer", name, f"""
func.func @main(%p: {OPT}, %g: {OPT}, %b: {OPT}, %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) -> ({OPT}, {OPT}) {{
  %p1, %b1 = tfm.sgd_update %p, %g, %b, %lr, %t, %s {{{attrs}}} : {OPT}, {OPT}, {OPT}
  return %p1, %b1 : {OPT}, {OPT}
}}""", [randn(*OP), randn(*OP), randn(*OP, scale=0.1), torch.tensor(0.05, dtype=torch.float64),
       torch.tensor(t, dtype=torch.int64), torch.tensor(0.75)], ref_sgd)

for max_norm in [0.5, 100.0, 0.0]:
    def ref_norm(a, b, max_norm=max_norm):
        ps = [torch.zeros_like(a, requires_grad=True), torch.zeros_like(b, requires_grad=True)]
        ps[0].grad, ps[1].grad = a.clone(), b.clone()
        if max_norm > 0:
            norm = torch.nn.utils.clip_grad_norm_(ps, max_norm, foreach=False)
            coef = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
        else:
            norm = torch.nn.utils.get_total_norm([a, b], foreach=False)
            coef = torch.tensor(1.0)
        return [norm, coef]
    case("optimizer", f"global_grad_norm_{max_norm:g}", f"""
func.func @main(%a: {OPT}, %b: tensor<8xf32>) -> (tensor<f32>, tensor<f32>) {{
  %n, %s = tfm.global_grad_norm %a, %b {{max_norm = {max_norm} : f64}} : {OPT}, tensor<8xf32>
  return %n, %s : tensor<f32>, tensor<f32>
}}""", [randn(*OP), randn(8, scale=3.0)], ref_norm)


def run_case(tfm_run, workdir, group, name, mlir, inputs, ref):
    base = os.path.join(workdir, f"{group}-{name}")
    with open(base + ".mlir", "w") as f:
        f.write(mlir)
    save_file({f"arg{i}": t.contiguous() for i, t in enumerate(inputs)}, base + ".in")
    run = subprocess.run(tfm_run + ["--mlir", base + ".mlir", "--inputs", base + ".in",
                          "--output", base + ".out"], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"FAIL {group}/{name}: tfm-run exited {run.returncode}\n{run.stderr}")
        return False
    got = load_file(base + ".out")
    expected = ref(*inputs)
    ok = True
    for i, e in enumerate(expected):
        g = got[f"result{i}"]
        e = e.float()
        if tuple(g.shape) != tuple(e.shape):
            print(f"FAIL {group}/{name} result {i}: shape {tuple(g.shape)} vs {tuple(e.shape)}")
            ok = False
            continue
        d = (g - e).abs()
        excess = (d - (1e-5 + 1e-5 * e.abs())).max().item()
        print(f"{'ok  ' if excess <= 0 else 'FAIL'} {group}/{name} result {i}: max|d| = {d.max().item():.2e}")
        ok &= excess <= 0
    return ok



if __name__ == "__main__":
    sys.exit(case_runner.main(CASES, run_case, "cases"))
