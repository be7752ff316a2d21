"""The backward of tfm.fused_residual_rmsnorm (rmsnorm_backward adding the
residual stream's gradient as it writes dx) against the backward of the
unfused tfm.add + tfm.rmsnorm (rmsnorm_backward, then tfm.add), in bf16:
every result and gradient must be bit-identical, and both must match a
float64 torch autograd reference within bf16 rounding.

    residual_norm_bitexact.py TFM_RUN WORKDIR [tfm-run options...]
"""

import os
import subprocess
import sys

import torch
from safetensors.torch import load_file, save_file

tfm_run, work, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(work, exist_ok=True)
H = 64
T = f"tensor<?x?x{H}xbf16>"
W = f"tensor<{H}xbf16>"
S = "tensor<?x?xf32>"
FUSED = f"""
func.func @main(%x: {T}, %res: {T}, %w: {W}) -> ({T}, {T}) {{
  %y, %r, %s = tfm.fused_residual_rmsnorm %x, %res, %w {{eps = 1.0e-06 : f64}} : ({T}, {T}, {W}) -> ({T}, {T}, {S})
  return %y, %r : {T}, {T}
}}"""
UNFUSED = f"""
func.func @main(%x: {T}, %res: {T}, %w: {W}) -> ({T}, {T}) {{
  %r = tfm.add %x, %res : {T}
  %y, %s = tfm.rmsnorm %r, %w {{eps = 1.0e-06 : f64}} : ({T}, {W}) -> ({T}, {S})
  return %y, %r : {T}, {T}
}}"""

torch.manual_seed(0)
bf = torch.bfloat16
x, res = torch.randn(3, 17, H).to(bf), torch.randn(3, 17, H).to(bf)
w = (1 + 0.1 * torch.randn(H)).to(bf)
dy, dr = torch.randn(3, 17, H).to(bf), torch.randn(3, 17, H).to(bf)
inputs = os.path.join(work, "vjp.in")
save_file({f"arg{i}": t for i, t in enumerate([x, res, w, dy, dr])}, inputs)

outs = {}
for name, mlir in [("fused", FUSED), ("unfused", UNFUSED)]:
    path = os.path.join(work, name)
    with open(path + ".mlir", "w") as f:
        f.write(mlir)
    subprocess.run([tfm_run, *extra, "--mlir", path + ".mlir", "--autodiff", "--inputs", inputs,
                    "--output", path + ".out", "--quiet"], check=True)
    outs[name] = load_file(path + ".out")

# y, residual_out, dx, dres, dw
names = ["y", "residual_out", "dx", "dresidual", "dweight"]
fused, unfused = outs["fused"], outs["unfused"]
ok = True
for i, n in enumerate(names):
    a, b = fused[f"result{i}"], unfused[f"result{i}"]
    same = a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    print(f"{n}: {'bit-identical' if same else 'DIFFERENT'}")
    ok &= same

# Independent reference: torch autograd in float64 on the same bf16 inputs.
xs, rs, ws = (t.double().requires_grad_() for t in (x, res, w))
r64 = xs + rs
y64 = r64 * torch.rsqrt(r64.pow(2).mean(-1, keepdim=True) + 1e-6) * ws
gx, gr, gw = torch.autograd.grad([y64, r64], [xs, rs, ws], [dy.double(), dr.double()])
for n, got, ref in [("dx", fused["result2"], gx), ("dresidual", fused["result3"], gr),
                    ("dweight", fused["result4"], gw)]:
    err = (got.double() - ref).abs().max().item() / ref.abs().max().item()
    # bf16 keeps 8 bits: a few roundings of the inputs and the result.
    close = err < 2e-2
    print(f"{n} vs float64 autograd: max|d|/max|ref| = {err:.2e}{'' if close else ' TOO FAR'}")
    ok &= close
sys.exit(0 if ok else 1)
