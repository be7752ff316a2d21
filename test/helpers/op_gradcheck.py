"""Finite-difference gradient checks of every differentiable tfm op (f64).

For each case, a tfm function @main in f64 is differentiated by
`tfm-run --mlir --autodiff` (tfm-autodiff's @main_vjp with random
cotangents c for every result), and each input gradient element is compared
with the central difference of L(x) = sum_r <c_r, f_r(x)> computed from
forward runs of the same function, with torch.autograd.gradcheck's
tolerances: eps 1e-6, |numeric - analytic| <= 1e-5 + 1e-3 |numeric|.

Usage: op_gradcheck.py --tfm-run PATH --workdir DIR [--group NAME] [--list]
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402

import torch
from safetensors.torch import load_file, save_file

EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-3
torch.manual_seed(0)
CASES = []  # (group, name, mlir, inputs)


def case(group, name, mlir, *inputs):
    CASES.append((group, name, mlir, list(inputs)))


def ty(shape, elem="f64"):
    return "tensor<" + "x".join("?" if d is None else str(d) for d in shape) + f"x{elem}>"


def r(*shape, scale=1.0):
    return (torch.randn(*shape, dtype=torch.float64) * scale)


# The packed-document cases draw from their own stream, so the other cases'
# inputs stay as they were.
_DOC_GEN = torch.Generator().manual_seed(11)


def dr(*shape, scale=1.0):
    return torch.randn(*shape, dtype=torch.float64, generator=_DOC_GEN) * scale


def unary_fn(op, shape, body_attrs=""):
    t = ty(shape)
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %y = tfm.{op} %x {body_attrs}: {t}
  return %y : {t}
}}"""


X = [None, None, 6]
for op in ["silu", "gelu_tanh", "relu2"]:
    case("elementwise", op, unary_fn(op, X), r(2, 3, 6))
case("elementwise", "scale", unary_fn("scale", X, "{factor = 2.5 : f64} "), r(2, 3, 6))
case("elementwise", "softcap", unary_fn("softcap", X, "{cap = 1.5 : f64} "), r(2, 3, 6, scale=2.0))
for op in ["add", "mul"]:
    case("elementwise", op, f"""
func.func @main(%a: {ty(X)}, %b: {ty(X)}) -> {ty(X)} {{
  %y = tfm.{op} %a, %b : {ty(X)}
  return %y : {ty(X)}
}}""", r(2, 3, 6), r(2, 3, 6))
for op in ["swiglu", "geglu"]:
  for attr in ["", " {gate_first}"]:
    case("elementwise", op + attr.replace(" {", "_").replace("}", ""), f"""
func.func @main(%x: {ty([None, None, 8])}) -> {ty([None, None, 4])} {{
  %y = tfm.{op} %x{attr} : ({ty([None, None, 8])}) -> {ty([None, None, 4])}
  return %y : {ty([None, None, 4])}
}}""", r(2, 3, 8))

for unit in ("", ", unit_offset"):
    case("norm", "rmsnorm" + unit.replace(", ", "_"), f"""
func.func @main(%x: {ty(X)}, %w: tensor<6xf64>) -> {ty(X)} {{
  %y, %s = tfm.rmsnorm %x, %w {{eps = 1.0e-05 : f64{unit}}} : ({ty(X)}, tensor<6xf64>) -> ({ty(X)}, {ty([None, None])})
  return %y : {ty(X)}
}}""", r(2, 3, 6), r(6))
case("norm", "layernorm_bias", f"""
func.func @main(%x: {ty(X)}, %w: tensor<6xf64>, %b: tensor<6xf64>) -> {ty(X)} {{
  %y, %m, %s = tfm.layernorm %x, %w, %b {{eps = 1.0e-05 : f64}} : ({ty(X)}, tensor<6xf64>, tensor<6xf64>) -> ({ty(X)}, {ty([None, None])}, {ty([None, None])})
  return %y : {ty(X)}
}}""", r(2, 3, 6), r(6), r(6))
case("norm", "fused_residual_rmsnorm", f"""
func.func @main(%x: {ty(X)}, %res: {ty(X)}, %w: tensor<6xf64>) -> ({ty(X)}, {ty(X)}) {{
  %y, %o, %s = tfm.fused_residual_rmsnorm %x, %res, %w {{eps = 1.0e-06 : f64, unit_offset}} : ({ty(X)}, {ty(X)}, tensor<6xf64>) -> ({ty(X)}, {ty(X)}, {ty([None, None])})
  return %y, %o : {ty(X)}, {ty(X)}
}}""", r(2, 3, 6), r(2, 3, 6), r(6))
Q, K = [None, None, 4, 4], [None, None, 2, 4]
for mode, nq, nk in [("per_head", 4, 4), ("whole", 16, 8)]:
    case("norm", "qk_norm_" + mode, f"""
func.func @main(%q: {ty(Q)}, %k: {ty(K)}, %wq: tensor<{nq}xf64>, %wk: tensor<{nk}xf64>) -> ({ty(Q)}, {ty(K)}) {{
  %a, %b, %c, %d = tfm.qk_norm %q, %k, %wq, %wk {{eps = 1.0e-06 : f64, mode = #tfm.qk_norm_mode<{mode}>}} : ({ty(Q)}, {ty(K)}, tensor<{nq}xf64>, tensor<{nk}xf64>) -> ({ty(Q)}, {ty(K)}, {ty([None, None, 4] if mode == "per_head" else [None, None])}, {ty([None, None, 2] if mode == "per_head" else [None, None])})
  return %a, %b : {ty(Q)}, {ty(K)}
}}""", r(1, 2, 4, 4), r(1, 2, 2, 4), r(nq), r(nk))

for name, t, extra in [("nt", "nt", ""), ("nn", "nn", ""), ("nt_bias", "nt", "bias")]:
    wshape = "5x6" if t == "nt" else "6x5"
    bias_arg = ", %b: tensor<5xf64>" if extra else ""
    bias_use = ", %b" if extra else ""
    bias_ty = ", tensor<5xf64>" if extra else ""
    inputs = [r(2, 2, 6), r(5, 6) if t == "nt" else r(6, 5)] + ([r(5)] if extra else [])
    case("matmul", name, f"""
func.func @main(%x: {ty(X)}, %w: tensor<{wshape}xf64>{bias_arg}) -> {ty([None, None, 5])} {{
  %y = tfm.matmul %x, %w{bias_use} {{transpose = #tfm.transpose<{t}>}} : ({ty(X)}, tensor<{wshape}xf64>{bias_ty}) -> {ty([None, None, 5])}
  return %y : {ty([None, None, 5])}
}}""", *inputs)

P = ty([None, None], "i64")
pos = torch.arange(3).repeat(1, 1)
for name, attrs in [
        ("plain", "theta = 1.0e+04 : f64, rotary_dim = 8 : i64"),
        ("partial", "theta = 1.0e+04 : f64, rotary_dim = 4 : i64"),
        ("llama3", "theta = 1.0e+04 : f64, rotary_dim = 8 : i64, scaling = #tfm.rope_scaling<kind = llama3, factor = 8.0, original = 16>"),
        ("yarn", "theta = 1.0e+04 : f64, rotary_dim = 8 : i64, scaling = #tfm.rope_scaling<kind = yarn, factor = 4.0, original = 8, attention_factor = 1.1386>"),
        ("longrope", "theta = 1.0e+04 : f64, rotary_dim = 8 : i64, scaling = #tfm.rope_scaling<kind = longrope, original = 2, attention_factor = 1.2, short_factor = [1.0, 1.5, 2.0, 2.5], long_factor = [3.0, 3.5, 4.0, 4.5]>"),
        ("interleaved", "theta = 1.0e+04 : f64, rotary_dim = 8 : i64, interleaved"),
        ("interleaved_partial", "theta = 1.0e+04 : f64, rotary_dim = 4 : i64, interleaved")]:
    case("rope", name, f"""
func.func @main(%x: {ty([None, None, 2, 8])}, %p: {P}) -> {ty([None, None, 2, 8])} {{
  %y = tfm.rope %x, %p {{{attrs}}} : ({ty([None, None, 2, 8])}, {P}) -> {ty([None, None, 2, 8])}
  return %y : {ty([None, None, 2, 8])}
}}""", r(1, 3, 2, 8), pos)
case("rope", "qkv_qk_norm_rope", f"""
func.func @main(%qkv: {ty([None, None, 4, 4])}, %wq: tensor<4xf64>, %wk: tensor<4xf64>, %p: {P}) -> {ty([None, None, 4, 4])} {{
  %o, %a, %b = tfm.qkv_qk_norm_rope %qkv, %wq, %wk, %p {{num_q_heads = 2 : i64, num_kv_heads = 1 : i64, eps = 1.0e-06 : f64, theta = 1.0e4 : f64, rotary_dim = 4 : i64}} : ({ty([None, None, 4, 4])}, tensor<4xf64>, tensor<4xf64>, {P}) -> ({ty([None, None, 4, 4])}, {ty([None, None, 2])}, {ty([None, None, 1])})
  return %o : {ty([None, None, 4, 4])}
}}""", r(1, 3, 4, 4), r(4), r(4), pos)

case("rope", "qkv_rope", f"""
func.func @main(%qkv: {ty([None, None, 4, 4])}, %p: {P}) -> {ty([None, None, 4, 4])} {{
  %o = tfm.qkv_rope %qkv, %p {{num_q_heads = 2 : i64, num_kv_heads = 1 : i64, theta = 1.0e4 : f64, rotary_dim = 4 : i64}} : ({ty([None, None, 4, 4])}, {P}) -> {ty([None, None, 4, 4])}
  return %o : {ty([None, None, 4, 4])}
}}""", r(1, 3, 4, 4), pos)

AQ, AK = [None, None, 4, 3], [None, None, 2, 3]
for name, attrs, sinks in [
        ("causal_gqa", "causal, scale = 0.5 : f64", False),
        ("full", "scale = 0.5 : f64", False),
        ("window_softcap", "causal, scale = 0.5 : f64, sliding_window = 2 : i64, softcap = 1.5 : f64", False),
        ("sinks", "causal, scale = 0.5 : f64", True)]:
    sa, su, st = (", %s: tensor<4xf64>", " sinks(%s)", ", tensor<4xf64>") if sinks else ("", "", "")
    ins = [r(1, 3, 4, 3), r(1, 3, 2, 3), r(1, 3, 2, 3)] + ([r(4)] if sinks else [])
    case("attention", name, f"""
func.func @main(%q: {ty(AQ)}, %k: {ty(AK)}, %v: {ty(AK)}{sa}) -> {ty(AQ)} {{
  %o = tfm.attention %q, %k, %v{su} {{{attrs}}} : ({ty(AQ)}, {ty(AK)}, {ty(AK)}{st}) -> {ty(AQ)}
  return %o : {ty(AQ)}
}}""", *ins)
# Packed documents (positions restart at 0: two documents of 2 and 3 tokens),
# with sinks and a window: finite differences of the masked attention.
doc_pos = torch.tensor([[0, 1, 0, 1, 2]])
case("attention", "documents", f"""
func.func @main(%q: {ty(AQ)}, %k: {ty(AK)}, %v: {ty(AK)}, %s: tensor<4xf64>, %p: {P}) -> {ty(AQ)} {{
  %d = tfm.document_starts %p : ({P}) -> {P}
  %o = tfm.attention %q, %k, %v sinks(%s) doc_start(%d) {{causal, scale = 0.5 : f64, sliding_window = 2 : i64}} : ({ty(AQ)}, {ty(AK)}, {ty(AK)}, tensor<4xf64>, {P}) -> {ty(AQ)}
  return %o : {ty(AQ)}
}}""", dr(1, 5, 4, 3), dr(1, 5, 2, 3), dr(1, 5, 2, 3), dr(4), doc_pos)
# MLA: the value head dim (2) differs from the query/key head dim (3).
AV, AO = [None, None, 4, 2], [None, None, 4, 2]
case("attention", "value_head_dim", f"""
func.func @main(%q: {ty(AQ)}, %k: {ty([None, None, 4, 3])}, %v: {ty(AV)}) -> {ty(AO)} {{
  %o = tfm.attention %q, %k, %v {{causal, scale = 0.5 : f64}} : ({ty(AQ)}, {ty([None, None, 4, 3])}, {ty(AV)}) -> {ty(AO)}
  return %o : {ty(AO)}
}}""", r(1, 3, 4, 3), r(1, 3, 4, 3), r(1, 3, 4, 2))
case("attention", "flash_attention", f"""
func.func @main(%qkv: {ty([None, None, 4, 3])}) -> {ty([None, None, 2, 3])} {{
  %o, %l = tfm.flash_attention %qkv {{num_q_heads = 2 : i64, num_kv_heads = 1 : i64, causal, scale = 0.5 : f64}} : ({ty([None, None, 4, 3])}) -> ({ty([None, None, 2, 3])}, {ty([None, 2, None])})
  return %o : {ty([None, None, 2, 3])}
}}""", r(1, 3, 4, 3))

labels = torch.tensor([[1, 4, -100, 2], [0, 3, 3, 1]])
case("loss", "cross_entropy", f"""
func.func @main(%l: {ty([None, None, 5])}, %y: {P}) -> tensor<f64> {{
  %loss = tfm.cross_entropy %l, %y : ({ty([None, None, 5])}, {P}) -> tensor<f64>
  return %loss : tensor<f64>
}}""", r(2, 4, 5), labels)
case("loss", "fused_lm_head_loss", f"""
func.func @main(%h: {ty([None, None, 3])}, %w: tensor<5x3xf64>, %y: {P}) -> tensor<f64> {{
  %loss, %lse = tfm.fused_lm_head_loss %h, %w, %y {{softcap = 2.0 : f64}} : ({ty([None, None, 3])}, tensor<5x3xf64>, {P}) -> (tensor<f64>, {ty([None, None])})
  return %loss : tensor<f64>
}}""", r(2, 4, 3), r(5, 3), labels)

# The chunked backward (tfm.fused_lm_head_loss_backward): 70 positions are
# two chunks of 64, with the scale and the softcap.
long_labels = torch.randint(0, 5, (1, 70))
long_labels[0, 10] = -100
case("loss", "fused_lm_head_loss_chunks", f"""
func.func @main(%h: {ty([None, None, 3])}, %w: tensor<5x3xf64>, %y: {P}) -> tensor<f64> {{
  %loss, %lse = tfm.fused_lm_head_loss %h, %w, %y {{softcap = 2.0 : f64, logit_scale = 0.5 : f64}} : ({ty([None, None, 3])}, tensor<5x3xf64>, {P}) -> (tensor<f64>, {ty([None, None])})
  return %loss : tensor<f64>
}}""", r(1, 70, 3), r(5, 3), long_labels)

ids = torch.tensor([[1, 3, 1], [0, 3, 2]])
case("shape", "embedding", f"""
func.func @main(%ids: {P}, %t: tensor<4x3xf64>) -> {ty([None, None, 3])} {{
  %h = tfm.embedding %ids, %t : ({P}, tensor<4x3xf64>) -> {ty([None, None, 3])}
  return %h : {ty([None, None, 3])}
}}""", ids, r(4, 3))
case("shape", "expand", f"""
func.func @main(%x: {ty([None, None, 1, 3])}) -> {ty([None, None, 4, 3])} {{
  %y = tfm.expand %x {{dim = 2 : i64}} : ({ty([None, None, 1, 3])}) -> {ty([None, None, 4, 3])}
  return %y : {ty([None, None, 4, 3])}
}}""", r(1, 2, 1, 3))
case("shape", "reshape_split_concat", f"""
func.func @main(%x: {ty([None, None, 6])}) -> ({ty([None, None, 2, 2])}, {ty([None, None, 6])}) {{
  %a = tfm.reshape %x : {ty([None, None, 6])} -> {ty([None, None, 3, 2])}
  %b, %c = tfm.split %a {{dim = 2 : i64}} : ({ty([None, None, 3, 2])}) -> ({ty([None, None, 1, 2])}, {ty([None, None, 2, 2])})
  %d = tfm.concat %c, %b {{dim = 2 : i64}} : ({ty([None, None, 2, 2])}, {ty([None, None, 1, 2])}) -> {ty([None, None, 3, 2])}
  %e = tfm.reshape %d : {ty([None, None, 3, 2])} -> {ty([None, None, 6])}
  return %c, %e : {ty([None, None, 2, 2])}, {ty([None, None, 6])}
}}""", r(1, 2, 6))

# tfm.repeat: two layer kinds on a schedule, stacked weights, a value from
# above (positions), saved activations; the backward is a reverse scan.
H = ty([None, None, 4])
case("repeat", "two_kinds", f"""
func.func @main(%h: {H}, %w: tensor<3x4x4xf64>, %n: tensor<3x4xf64>) -> {H} {{
  %r = tfm.repeat (%h : {H}) layers(%w, %n : tensor<3x4x4xf64>, tensor<3x4xf64>) {{num_layers = 3 : i64, schedule = array<i64: 0, 1, 0>}} -> {H} {{
  ^bb0(%x: {H}, %wl: tensor<4x4xf64>, %nl: tensor<4xf64>):
    %y, %s = tfm.rmsnorm %x, %nl {{eps = 1.0e-05 : f64}} : ({H}, tensor<4xf64>) -> ({H}, {ty([None, None])})
    %z = tfm.matmul %y, %wl {{transpose = #tfm.transpose<nt>}} : ({H}, tensor<4x4xf64>) -> {H}
    %a = tfm.silu %z : {H}
    %o = tfm.add %x, %a : {H}
    tfm.yield %o : {H}
  }}, {{
  ^bb0(%x: {H}, %wl: tensor<4x4xf64>, %nl: tensor<4xf64>):
    %z = tfm.matmul %x, %wl {{transpose = #tfm.transpose<nn>}} : ({H}, tensor<4x4xf64>) -> {H}
    %m = tfm.mul %z, %x : {H}
    %o = tfm.add %m, %x : {H}
    tfm.yield %o : {H}
  }}
  return %r : {H}
}}""", r(1, 2, 4), r(3, 4, 4, scale=0.5), r(3, 4))

# Stacked weights of one type across two kinds (their gradient buffers must
# stay distinct).
case("repeat", "same_type_weights", f"""
func.func @main(%h: {H}, %a: tensor<2x4xf64>, %b: tensor<2x4xf64>) -> {H} {{
  %r = tfm.repeat (%h : {H}) layers(%a, %b : tensor<2x4xf64>, tensor<2x4xf64>) {{num_layers = 2 : i64, schedule = array<i64: 1, 0>}} -> {H} {{
  ^bb0(%x: {H}, %al: tensor<4xf64>, %bl: tensor<4xf64>):
    %y, %s = tfm.rmsnorm %x, %al {{eps = 1.0e-05 : f64}} : ({H}, tensor<4xf64>) -> ({H}, {ty([None, None])})
    %z, %t = tfm.rmsnorm %y, %bl {{eps = 1.0e-05 : f64, unit_offset}} : ({H}, tensor<4xf64>) -> ({H}, {ty([None, None])})
    tfm.yield %z : {H}
  }}, {{
  ^bb0(%x: {H}, %al: tensor<4xf64>, %bl: tensor<4xf64>):
    %y, %s = tfm.rmsnorm %x, %bl {{eps = 1.0e-05 : f64}} : ({H}, tensor<4xf64>) -> ({H}, {ty([None, None])})
    %z, %t = tfm.rmsnorm %y, %al {{eps = 1.0e-05 : f64}} : ({H}, tensor<4xf64>) -> ({H}, {ty([None, None])})
    %o = tfm.mul %z, %x : {H}
    tfm.yield %o : {H}
  }}
  return %r : {H}
}}""", r(1, 3, 4), r(2, 4), r(2, 4))

# Two carried values (the first static), and a saved slot only one kind
# uses: it is stacked over that kind's layers only.
case("repeat", "two_carried", f"""
func.func @main(%c: tensor<4xf64>, %h: {H}, %n: tensor<2x4xf64>) -> (tensor<4xf64>, {H}) {{
  %r:2 = tfm.repeat (%c, %h : tensor<4xf64>, {H}) layers(%n : tensor<2x4xf64>) {{num_layers = 2 : i64, schedule = array<i64: 0, 1>}} -> tensor<4xf64>, {H} {{
  ^bb0(%a: tensor<4xf64>, %x: {H}, %nl: tensor<4xf64>):
    %y, %s = tfm.rmsnorm %x, %nl {{eps = 1.0e-05 : f64}} : ({H}, tensor<4xf64>) -> ({H}, {ty([None, None])})
    %b = tfm.mul %a, %nl : tensor<4xf64>
    tfm.yield %b, %y : tensor<4xf64>, {H}
  }}, {{
  ^bb0(%a: tensor<4xf64>, %x: {H}, %nl: tensor<4xf64>):
    %z = tfm.silu %x : {H}
    tfm.yield %a, %z : tensor<4xf64>, {H}
  }}
  return %r#0, %r#1 : tensor<4xf64>, {H}
}}""", r(4), r(1, 2, 4), r(2, 4))


# Weights and a stacked output of some kinds only (weight_kinds,
# stacked_kinds), as an MoE model's experts and router statistics among
# dense layers: each covers the layers of its kinds, in order, and their
# gradients come back in the same layout.
case("repeat", "partial_kinds", f"""
func.func @main(%h: {H}, %n: tensor<5x4xf64>, %d: tensor<3x4x4xf64>, %m: tensor<4x4xf64>) -> ({H}, {ty([4, None, None, 4])}) {{
  %r:2 = tfm.repeat (%h : {H}) layers(%n, %d, %m : tensor<5x4xf64>, tensor<3x4x4xf64>, tensor<4x4xf64>) {{num_layers = 5 : i64, schedule = array<i64: 0, 1, 2, 1, 2>, weight_kinds = [array<i64: 0, 1, 2>, array<i64: 0, 1>, array<i64: 1, 2>], stacked_kinds = [array<i64: 1, 2>]}} -> {H}, {ty([4, None, None, 4])} {{
  ^bb0(%x: {H}, %nl: tensor<4xf64>, %dl: tensor<4x4xf64>):
    %y, %s = tfm.rmsnorm %x, %nl {{eps = 1.0e-05 : f64}} : ({H}, tensor<4xf64>) -> ({H}, {ty([None, None])})
    %z = tfm.matmul %y, %dl {{transpose = #tfm.transpose<nt>}} : ({H}, tensor<4x4xf64>) -> {H}
    %o = tfm.add %x, %z : {H}
    tfm.yield %o : {H}
  }}, {{
  ^bb0(%x: {H}, %nl: tensor<4xf64>, %dl: tensor<4x4xf64>, %ml: tensor<4xf64>):
    %y, %s = tfm.rmsnorm %x, %ml {{eps = 1.0e-05 : f64}} : ({H}, tensor<4xf64>) -> ({H}, {ty([None, None])})
    %z = tfm.matmul %y, %dl {{transpose = #tfm.transpose<nn>}} : ({H}, tensor<4x4xf64>) -> {H}
    %a = tfm.silu %z : {H}
    %o, %t = tfm.rmsnorm %a, %nl {{eps = 1.0e-05 : f64}} : ({H}, tensor<4xf64>) -> ({H}, {ty([None, None])})
    tfm.yield %o, %y : {H}, {H}
  }}, {{
  ^bb0(%x: {H}, %nl: tensor<4xf64>, %ml: tensor<4xf64>):
    %y, %s = tfm.rmsnorm %x, %ml {{eps = 1.0e-05 : f64, unit_offset}} : ({H}, tensor<4xf64>) -> ({H}, {ty([None, None])})
    %o, %t = tfm.rmsnorm %y, %nl {{eps = 1.0e-05 : f64}} : ({H}, tensor<4xf64>) -> ({H}, {ty([None, None])})
    %q = tfm.add %o, %x : {H}
    tfm.yield %q, %y : {H}, {H}
  }}
  return %r#0, %r#1 : {H}, {ty([4, None, None, 4])}
}}""", r(1, 2, 4), r(5, 4), r(3, 4, 4, scale=0.5), r(4, 4))


# Mixture of experts. Router logits are spread (scale 2) so no pair of
# scores sits within the finite-difference step of a selection change.
L6, W3 = ty([None, None, 6]), ty([None, None, 3])
for name, attrs in [
        ("router_softmax_topk", "routing = #tfm.moe_routing<softmax_topk>"),
        ("router_softmax_topk_normalize", "routing = #tfm.moe_routing<softmax_topk>, normalize"),
        ("router_topk_softmax", "routing = #tfm.moe_routing<topk_softmax>"),
        ("router_sigmoid_topk", "routing = #tfm.moe_routing<sigmoid_topk>"),
        ("router_sigmoid_topk_normalize", "routing = #tfm.moe_routing<sigmoid_topk>, normalize"),
        # DeepSeek-V3 / GLM-4.5: groups by top-2 sum, 1e-20, scaled.
        ("router_sigmoid_grouped", "routing = #tfm.moe_routing<sigmoid_topk>, normalize, normalize_eps = 1.0e-20 : f64, scale = 2.5 : f64, num_groups = 3 : i64, topk_groups = 2 : i64, group_score = #tfm.moe_group_score<top2_sum>"),
        # DeepSeek-V2 group_limited_greedy: groups by max, scaled, no renormalisation.
        ("router_softmax_grouped", "routing = #tfm.moe_routing<softmax_topk>, scale = 1.5 : f64, num_groups = 3 : i64, topk_groups = 2 : i64, group_score = #tfm.moe_group_score<max>")]:
    case("moe", name, f"""
func.func @main(%l: {L6}) -> {W3} {{
  %w, %i = tfm.moe_router %l {{top_k = 3 : i64, {attrs}}} : ({L6}) -> ({W3}, {ty([None, None, 3], "i64")})
  return %w : {W3}
}}""", r(2, 3, 6, scale=2.0))
# The selection bias moves the choice only: no gradient reaches it, and the
# logits' gradient is the unbiased scores' (central differences of a
# piecewise-constant selection are zero away from ties).
case("moe", "router_sigmoid_grouped_bias", f"""
func.func @main(%l: {L6}, %b: tensor<6xf64>) -> {W3} {{
  %w, %i = tfm.moe_router %l, %b {{top_k = 3 : i64, routing = #tfm.moe_routing<sigmoid_topk>, normalize, normalize_eps = 1.0e-20 : f64, scale = 2.5 : f64, num_groups = 3 : i64, topk_groups = 2 : i64, group_score = #tfm.moe_group_score<top2_sum>}} : ({L6}, tensor<6xf64>) -> ({W3}, {ty([None, None, 3], "i64")})
  return %w : {W3}
}}""", r(2, 3, 6, scale=2.0), r(6, scale=0.5))


def moe_block(transpose_gu, gu_shape, mask):
    """x -> router -> plan -> dispatch -> grouped gate/up -> SwiGLU ->
    grouped down -> weighted combine; `mask` (an input) adds a fixed
    offset to the router logits, e.g. to starve an expert."""
    X, P = ty([None, None, 4]), ty([None, None, 2], "i64")
    return f"""
func.func @main(%x: {X}, %wr: tensor<5x4xf64>, %mask: {ty([None, None, 5])}, %wgu: tensor<{gu_shape}xf64>, %wd: tensor<5x4x3xf64>) -> {X} {{
  %l0 = tfm.matmul %x, %wr {{transpose = #tfm.transpose<nt>}} : ({X}, tensor<5x4xf64>) -> {ty([None, None, 5])}
  %l = tfm.add %l0, %mask : {ty([None, None, 5])}
  %w, %i = tfm.moe_router %l {{top_k = 2 : i64, routing = #tfm.moe_routing<softmax_topk>, normalize}} : ({ty([None, None, 5])}) -> ({ty([None, None, 2])}, {P})
  %off, %pos, %src = tfm.moe_route_plan %i {{num_experts = 5 : i64}} : ({P}) -> (tensor<6xi64>, {P}, tensor<?xi64>)
  %xp = tfm.moe_dispatch %x, %pos, %src : ({X}, {P}, tensor<?xi64>) -> tensor<?x4xf64>
  %gu = tfm.moe_grouped_matmul %xp, %wgu, %off {{transpose = #tfm.transpose<{transpose_gu}>}} : (tensor<?x4xf64>, tensor<{gu_shape}xf64>, tensor<6xi64>) -> tensor<?x6xf64>
  %g, %u = tfm.split %gu {{dim = 1 : i64}} : (tensor<?x6xf64>) -> (tensor<?x3xf64>, tensor<?x3xf64>)
  %a = tfm.silu %g : tensor<?x3xf64>
  %h = tfm.mul %a, %u : tensor<?x3xf64>
  %yp = tfm.moe_grouped_matmul %h, %wd, %off {{transpose = #tfm.transpose<nt>}} : (tensor<?x3xf64>, tensor<5x4x3xf64>, tensor<6xi64>) -> tensor<?x4xf64>
  %y = tfm.moe_combine %yp, %pos, %src, %w : (tensor<?x4xf64>, {P}, tensor<?xi64>, {ty([None, None, 2])}) -> {X}
  %y2 = tfm.moe_combine %yp, %pos, %src : (tensor<?x4xf64>, {P}, tensor<?xi64>) -> {X}
  %o = tfm.add %y, %y2 : {X}
  return %o : {X}
}}"""


no_mask = torch.zeros(2, 3, 5, dtype=torch.float64)
starve = no_mask.clone()
starve[..., 4] = -30.0  # expert 4 never selected: zero gradients
case("moe", "block_nt", moe_block("nt", "5x6x4", no_mask),
     r(2, 3, 4), r(5, 4, scale=2.0), no_mask, r(5, 6, 4), r(5, 4, 3))
case("moe", "block_nn_starved_expert", moe_block("nn", "5x4x6", starve),
     r(2, 3, 4), r(5, 4, scale=2.0), starve, r(5, 4, 6), r(5, 4, 3))
# The load-balancing loss: two layers' statistics pooled as HF pools them.
L5, P2 = ty([None, None, 5]), ty([None, None, 2], "i64")
case("moe", "load_stats_aux_loss", f"""
func.func @main(%a: {L5}, %b: {L5}) -> (tensor<f64>, tensor<2x5xf64>) {{
  %wa, %ia = tfm.moe_router %a {{top_k = 2 : i64, routing = #tfm.moe_routing<softmax_topk>}} : ({L5}) -> ({ty([None, None, 2])}, {P2})
  %wb, %ib = tfm.moe_router %b {{top_k = 2 : i64, routing = #tfm.moe_routing<softmax_topk>}} : ({L5}) -> ({ty([None, None, 2])}, {P2})
  %sa = tfm.moe_load_stats %a, %ia : ({L5}, {P2}) -> tensor<2x5xf64>
  %sb = tfm.moe_load_stats %b, %ib : ({L5}, {P2}) -> tensor<2x5xf64>
  %s = tfm.concat %sa, %sb {{dim = 0 : i64}} : (tensor<2x5xf64>, tensor<2x5xf64>) -> tensor<4x5xf64>
  %st = tfm.reshape %s : tensor<4x5xf64> -> tensor<2x2x5xf64>
  %aux = tfm.moe_aux_loss %st {{top_k = 2 : i64}} : (tensor<2x2x5xf64>) -> tensor<f64>
  return %aux, %sa : tensor<f64>, tensor<2x5xf64>
}}""", r(2, 3, 5, scale=2.0), r(2, 3, 5, scale=2.0))

# gpt-oss experts: [E, in, out] weights (nn) with expert biases, the clamped
# SwiGLU over interleaved gate/up columns (limit 0.5 so both clamps bite).
case("moe", "gptoss_experts_bias_clamped", f"""
func.func @main(%x: {ty([None, None, 4])}, %l: {L5}, %wgu: tensor<5x4x6xf64>, %bgu: tensor<5x6xf64>, %wd: tensor<5x3x4xf64>, %bd: tensor<5x4xf64>) -> {ty([None, None, 4])} {{
  %w, %i = tfm.moe_router %l {{top_k = 2 : i64, routing = #tfm.moe_routing<topk_softmax>}} : ({L5}) -> ({ty([None, None, 2])}, {P2})
  %off, %pos, %src = tfm.moe_route_plan %i {{num_experts = 5 : i64}} : ({P2}) -> (tensor<6xi64>, {P2}, tensor<?xi64>)
  %xp = tfm.moe_dispatch %x, %pos, %src : ({ty([None, None, 4])}, {P2}, tensor<?xi64>) -> tensor<?x4xf64>
  %gu = tfm.moe_grouped_matmul %xp, %wgu, %off, %bgu {{transpose = #tfm.transpose<nn>}} : (tensor<?x4xf64>, tensor<5x4x6xf64>, tensor<6xi64>, tensor<5x6xf64>) -> tensor<?x6xf64>
  %h = tfm.clamped_swiglu %gu {{limit = 0.5 : f64, alpha = 1.702 : f64}} : (tensor<?x6xf64>) -> tensor<?x3xf64>
  %yp = tfm.moe_grouped_matmul %h, %wd, %off, %bd {{transpose = #tfm.transpose<nn>}} : (tensor<?x3xf64>, tensor<5x3x4xf64>, tensor<6xi64>, tensor<5x4xf64>) -> tensor<?x4xf64>
  %y = tfm.moe_combine %yp, %pos, %src, %w : (tensor<?x4xf64>, {P2}, tensor<?xi64>, {ty([None, None, 2])}) -> {ty([None, None, 4])}
  return %y : {ty([None, None, 4])}
}}""", r(2, 3, 4), r(2, 3, 5, scale=2.0), r(5, 4, 6), r(5, 6), r(5, 3, 4), r(5, 4))


# Mamba2: the conv (with and without bias), the chunked scan with T = 7 over
# chunks of 3 (state carried across two boundaries, a partial last chunk)
# and with a dt clamp that binds, and both gate orders of the gated norm.
MX = [None, None, 5]
for bias in (True, False):
    ba, bu, bt = (", %b: tensor<5xf64>", ", %b", ", tensor<5xf64>") if bias else ("", "", "")
    case("mamba", "conv1d" + ("_bias" if bias else ""), f"""
func.func @main(%x: {ty(MX)}, %w: tensor<5x3xf64>{ba}) -> {ty(MX)} {{
  %y = tfm.mamba_conv1d %x, %w{bu} : ({ty(MX)}, tensor<5x3xf64>{bt}) -> {ty(MX)}
  return %y : {ty(MX)}
}}""", *([r(2, 4, 5), r(5, 3)] + ([r(5)] if bias else [])))
SX, SD, SB = ty([None, None, 4, 2]), ty([None, None, 4]), ty([None, None, 2, 3])
for name, chunk, lo, hi in [("scan_chunk3", 3, "0.0", "0x7FF0000000000000"),
                            ("scan_dt_limit", 2, "0.3", "1.2")]:
    case("mamba", name, f"""
func.func @main(%x: {SX}, %dt: {SD}, %al: tensor<4xf64>, %b: {SB}, %c: {SB}, %d: tensor<4xf64>, %db: tensor<4xf64>) -> {SX} {{
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {{chunk_size = {chunk} : i64, dt_min = {lo} : f64, dt_max = {hi} : f64}}
      : ({SX}, {SD}, tensor<4xf64>, {SB}, {SB}, tensor<4xf64>, tensor<4xf64>) -> ({SX}, {ty([None, None, 4, 2, 3])})
  return %y : {SX}
}}""", r(1, 7, 4, 2), r(1, 7, 4), r(4, scale=0.5), r(1, 7, 2, 3), r(1, 7, 2, 3), r(4), r(4, scale=0.5))
# Packed documents (restarts at tokens 2 and 5 of 7: one inside the first
# chunk of 3, one inside the second): the conv's taps and the scan's state
# stop at each document start.
scan_docs = torch.tensor([[0, 1, 0, 1, 2, 0, 1]])
case("mamba", "conv1d_documents", f"""
func.func @main(%x: {ty([None, None, 5])}, %w: tensor<5x3xf64>, %b: tensor<5xf64>, %p: {P}) -> {ty([None, None, 5])} {{
  %d = tfm.document_starts %p : ({P}) -> {P}
  %y = tfm.mamba_conv1d %x, %w, %b doc_start(%d) : ({ty([None, None, 5])}, tensor<5x3xf64>, tensor<5xf64>, {P}) -> {ty([None, None, 5])}
  return %y : {ty([None, None, 5])}
}}""", dr(1, 7, 5), dr(5, 3), dr(5), scan_docs)
case("mamba", "scan_documents", f"""
func.func @main(%x: {SX}, %dt: {SD}, %al: tensor<4xf64>, %b: {SB}, %c: {SB}, %d: tensor<4xf64>, %db: tensor<4xf64>, %p: {P}) -> {SX} {{
  %docs = tfm.document_starts %p : ({P}) -> {P}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db doc_start(%docs) {{chunk_size = 3 : i64, dt_min = 0.0 : f64, dt_max = 0x7FF0000000000000 : f64}}
      : ({SX}, {SD}, tensor<4xf64>, {SB}, {SB}, tensor<4xf64>, tensor<4xf64>, {P}) -> ({SX}, {ty([None, None, 4, 2, 3])})
  return %y : {SX}
}}""", dr(1, 7, 4, 2), dr(1, 7, 4), dr(4, scale=0.5), dr(1, 7, 2, 3), dr(1, 7, 2, 3), dr(4), dr(4, scale=0.5),
     scan_docs)
GX = ty([None, None, 6])
for attr in ("", ", norm_before_gate"):
    case("mamba", "gated_rmsnorm" + attr.replace(", ", "_"), f"""
func.func @main(%x: {GX}, %z: {GX}, %w: tensor<6xf64>) -> {GX} {{
  %y, %rs = tfm.gated_rmsnorm %x, %z, %w {{groups = 2 : i64, eps = 1.0e-05 : f64{attr}}} : ({GX}, {GX}, tensor<6xf64>) -> ({GX}, {ty([None, None, 2])})
  return %y : {GX}
}}""", r(2, 3, 6), r(2, 3, 6), r(6))

case("mamba", "silu_gate", f"""
func.func @main(%x: {GX}, %z: {GX}) -> {GX} {{
  %y = tfm.silu_gate %x, %z : ({GX}, {GX}) -> {GX}
  return %y : {GX}
}}""", r(2, 3, 6), r(2, 3, 6))


# Gated DeltaNet: the rule with T = 7 over chunks of 3 (state carried across
# two boundaries, a partial last chunk) and over one chunk, two value heads
# per key head; the gated norm with one weight shared by the heads.
for name, chunk, hk, hv in [("rule_chunk3_gqa", 3, 1, 2), ("rule_one_chunk", 8, 2, 2)]:
    DQ, DV, DG = ty([None, None, hk, 3]), ty([None, None, hv, 2]), ty([None, None, hv])
    DP = f"tensor<{hv}xf64>"
    case("deltanet", name, f"""
func.func @main(%q: {DQ}, %k: {DQ}, %v: {DV}, %a: {DG}, %b: {DG}, %al: {DP}, %db: {DP}) -> {DV} {{
  %y, %s = tfm.gated_delta_rule %q, %k, %v, %a, %b, %al, %db {{chunk_size = {chunk} : i64}}
      : ({DQ}, {DQ}, {DV}, {DG}, {DG}, {DP}, {DP}) -> ({DV}, {ty([None, None, hv, 3, 2])})
  return %y : {DV}
}}""", r(1, 7, hk, 3), r(1, 7, hk, 3), r(1, 7, hv, 2), r(1, 7, hv), r(1, 7, hv),
         r(hv, scale=0.5), r(hv, scale=0.5))
DQ, DV, DG = ty([None, None, 1, 3]), ty([None, None, 2, 2]), ty([None, None, 2])
case("deltanet", "rule_documents", f"""
func.func @main(%q: {DQ}, %k: {DQ}, %v: {DV}, %a: {DG}, %b: {DG}, %al: tensor<2xf64>, %db: tensor<2xf64>, %p: {P}) -> {DV} {{
  %docs = tfm.document_starts %p : ({P}) -> {P}
  %y, %s = tfm.gated_delta_rule %q, %k, %v, %a, %b, %al, %db doc_start(%docs) {{chunk_size = 3 : i64}}
      : ({DQ}, {DQ}, {DV}, {DG}, {DG}, tensor<2xf64>, tensor<2xf64>, {P}) -> ({DV}, {ty([None, None, 2, 3, 2])})
  return %y : {DV}
}}""", dr(1, 7, 1, 3), dr(1, 7, 1, 3), dr(1, 7, 2, 2), dr(1, 7, 2), dr(1, 7, 2),
     dr(2, scale=0.5), dr(2, scale=0.5), scan_docs)
case("deltanet", "gated_rmsnorm_shared_weight", f"""
func.func @main(%x: {GX}, %z: {GX}, %w: tensor<3xf64>) -> {GX} {{
  %y, %rs = tfm.gated_rmsnorm %x, %z, %w {{groups = 2 : i64, eps = 1.0e-06 : f64, norm_before_gate}} : ({GX}, {GX}, tensor<3xf64>) -> ({GX}, {ty([None, None, 2])})
  return %y : {GX}
}}""", r(2, 3, 6), r(2, 3, 6), r(3))
case("deltanet", "sigmoid", unary_fn("sigmoid", X), r(2, 3, 6, scale=2.0))


def run(tfm_run, workdir, group, name, mlir, inputs):
    base = os.path.join(workdir, f"{group}-{name}")
    with open(base + ".mlir", "w") as f:
        f.write(mlir)

    def save(tensors, path):
        save_file({f"arg{i}": t.contiguous() for i, t in enumerate(tensors)}, path)

    # Forward once to learn the result shapes, then draw cotangents.
    save(inputs, base + ".f.in")
    subprocess.run(tfm_run + ["--mlir", base + ".mlir", "--inputs", base + ".f.in",
                    "--output", base + ".f.out", "--quiet"], check=True)
    outs = load_file(base + ".f.out")
    cots = [torch.randn_like(outs[f"result{i}"]) for i in range(len(outs))]
    save(inputs + cots, base + ".vjp.in")
    subprocess.run(tfm_run + ["--mlir", base + ".mlir", "--autodiff", "--inputs", base + ".vjp.in",
                    "--output", base + ".vjp.out", "--quiet"], check=True)
    vjp = load_file(base + ".vjp.out")
    float_args = [i for i, t in enumerate(inputs) if t.is_floating_point()]
    grads = [vjp[f"result{len(cots) + k}"] for k in range(len(float_args))]

    # Central differences of L = sum <c, f>, every element, in one process.
    perturbed, index = [], []
    for k, i in enumerate(float_args):
        for j in range(inputs[i].numel()):
            for sign in (1, -1):
                args = [t.clone() for t in inputs]
                args[i].view(-1)[j] += sign * EPS
                path = f"{base}.fd{len(perturbed)}"
                save(args, path + ".in")
                perturbed.append(path)
            index.append((k, j))
    cmd = tfm_run + ["--mlir", base + ".mlir", "--quiet"]
    for p in perturbed:
        cmd += ["--inputs", p + ".in", "--output", p + ".out"]
    subprocess.run(cmd, check=True)

    def objective(path):
        o = load_file(path)
        return sum((o[f"result{m}"] * c).sum().item() for m, c in enumerate(cots))

    ok, worst = True, 0.0
    for n, (k, j) in enumerate(index):
        numeric = (objective(perturbed[2 * n] + ".out") - objective(perturbed[2 * n + 1] + ".out")) / (2 * EPS)
        analytic = grads[k].view(-1)[j].item()
        err = abs(numeric - analytic)
        worst = max(worst, err / (ATOL + RTOL * abs(numeric)))
        if err > ATOL + RTOL * abs(numeric):
            if ok:
                print(f"FAIL {group}/{name}: input {float_args[k]} element {j}: "
                      f"numeric {numeric:.8f} analytic {analytic:.8f}")
            ok = False
    print(f"{'ok  ' if ok else 'FAIL'} {group}/{name}: {len(index)} elements, "
          f"max|grad| {max(g.abs().max().item() for g in grads):.3f}, "
          f"worst |d| / (atol + rtol|num|) = {worst:.2e}")
    return ok



if __name__ == "__main__":
    sys.exit(case_runner.main(CASES, run, "gradient checks"))
