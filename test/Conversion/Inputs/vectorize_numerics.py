"""Numerics of tfm-vectorize-inner-loops against NumPy in float64.

Each case is a linalg.generic on tensors compiled by `tfm-run --mlir` (the
CPU pipeline, where the pass runs) on sizes that exercise whole vectors and
the scalar tail (16 lanes: 5, 16, 37 and 300 elements), and on the values
where the vector code differs from a scalar loop: a sum's identity (-0.0),
a max over -inf, exp(-inf), and exp/log/tanh (polynomial in vectors, libm
in the tail) across their range.

Usage: vectorize_numerics.py --tfm-run PATH --workdir DIR
"""

import argparse
import os
import subprocess
import sys

import numpy as np
from safetensors.numpy import load_file, save_file

def row_reduction(combiner, with_max=False):
    """Rows of x [N, n] reduced into init [N] by `combiner`; with_max:
    exp(x - m) is reduced instead, m [N] a second input."""
    m_arg = ", %m: tensor<?xf32>" if with_max else ""
    m_map = ", affine_map<(i, j) -> (i)>" if with_max else ""
    ins = "%x, %m : tensor<?x?xf32>, tensor<?xf32>" if with_max else "%x : tensor<?x?xf32>"
    args = "%a: f32, %b: f32, %o: f32" if with_max else "%a: f32, %o: f32"
    value = "%a"
    pre = ""
    if with_max:
        pre = "    %d = arith.subf %a, %b : f32\n    %e = math.exp %d : f32\n"
        value = "%e"
    return f"""
func.func @main(%x: tensor<?x?xf32>{m_arg}, %init: tensor<?xf32>) -> tensor<?xf32> {{
  %r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>{m_map}, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}}
      ins({ins}) outs(%init : tensor<?xf32>) {{
  ^bb0({args}):
{pre}    %s = arith.{combiner} {value}, %o : f32
    linalg.yield %s : f32
  }} -> tensor<?xf32>
  return %r : tensor<?xf32>
}}
"""


ROW_SUM_EXP = row_reduction("addf", with_max=True)
ROW_MAX = row_reduction("maximumf")
ROW_SUM = row_reduction("addf")

# A causal mask by index (the innermost index as a vector), then exp.
CAUSAL_EXP = """
func.func @main(%x: tensor<?x?xf32>, %init: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %s = arith.select %future, %ninf, %a : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
"""

# Column sums: the reduction is the outer loop, the innermost is parallel.
COLUMN_SUM = """
func.func @main(%x: tensor<?x?xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
"""


def unary(op):
    return f"""
func.func @main(%x: tensor<?xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {{
  %r = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}}
      ins(%x : tensor<?xf32>) outs(%init : tensor<?xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %e = math.{op} %a : f32
    linalg.yield %e : f32
  }} -> tensor<?xf32>
  return %r : tensor<?xf32>
}}
"""


def run(tfm_run, workdir, name, mlir, inputs):
    src = os.path.join(workdir, name + ".mlir")
    ins = os.path.join(workdir, name + ".in")
    out = os.path.join(workdir, name + ".out")
    with open(src, "w") as f:
        f.write(mlir)
    save_file({f"arg{i}": np.ascontiguousarray(a, dtype=np.float32)
               for i, a in enumerate(inputs)}, ins)
    subprocess.run([tfm_run, "--mlir", src, "--func", "main", "--inputs", ins,
                    "--output", out, "--quiet"], check=True)
    return load_file(out)["result0"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfm-run", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    failures = []

    def check(name, got, want, rtol, atol=0.0):
        with np.errstate(invalid="ignore"):
            err = np.abs(got.astype(np.float64) - want)
        with np.errstate(invalid="ignore"):
            bad = ~(err <= atol + rtol * np.abs(want))
        bad &= ~((got == want) | (np.isnan(got) & np.isnan(want)))
        status = "FAIL" if bad.any() else "ok"
        print(f"{status} {name}: max |err| {np.nanmax(err) if err.size else 0:.3g}")
        if bad.any():
            failures.append(name)

    for n in (5, 16, 37, 300):
        x = rng.standard_normal((3, n)).astype(np.float32)
        m = x.max(axis=1)
        init = rng.standard_normal(3).astype(np.float32)
        got = run(args.tfm_run, args.workdir, f"sumexp{n}", ROW_SUM_EXP, [x, m, init])
        want = init.astype(np.float64) + np.exp(x.astype(np.float64) - m[:, None]).sum(axis=1)
        check(f"row sum of exp, {n} columns", got, want, rtol=2e-6)

        x = rng.standard_normal((4, n)).astype(np.float32)
        x[1, :] = -np.inf
        x[2, n // 2] = np.inf
        x[3, :] = -np.inf
        x[3, n - 1] = -3.0  # the largest in the tail (or the last lane)
        init = np.full(4, -np.inf, np.float32)
        got = run(args.tfm_run, args.workdir, f"max{n}", ROW_MAX, [x, init])
        check(f"row max, {n} columns", got, x.max(axis=1).astype(np.float64), rtol=0)

        x = np.full((2, n), -0.0, np.float32)
        x[1, 0] = 1.5
        init = np.full(2, -0.0, np.float32)
        got = run(args.tfm_run, args.workdir, f"negzero{n}", ROW_SUM, [x, init])
        if not (got[0] == 0 and np.signbit(got[0]) and got[1] == 1.5):
            print(f"FAIL sum of -0.0, {n} columns: {got}")
            failures.append(f"negzero{n}")
        else:
            print(f"ok sum of -0.0, {n} columns keeps the sign")

        x = rng.standard_normal((n, n)).astype(np.float32)
        got = run(args.tfm_run, args.workdir, f"causal{n}", CAUSAL_EXP, [x, np.zeros_like(x)])
        want = np.where(np.triu(np.ones((n, n), bool), 1), 0.0, np.exp(x.astype(np.float64)))
        check(f"causal exp, {n}x{n} (masked exactly 0)", got, want, rtol=3e-7)

        x = rng.standard_normal((9, n)).astype(np.float32)
        init = rng.standard_normal(n).astype(np.float32)
        got = run(args.tfm_run, args.workdir, f"colsum{n}", COLUMN_SUM, [x, init])
        # The innermost loop is parallel: each column sums in row order,
        # exactly as the scalar loop (float32 rounding at every step).
        want = init.copy()
        for r in range(9):
            want = (want + x[r]).astype(np.float32)
        check(f"column sum, {n} columns (same order)", got, want.astype(np.float64), rtol=0)

    # exp, log and tanh across their range: vector lanes and the tail.
    # Special values first: in vector lanes (3001 + 4 values leave a tail of
    # 13, which libm computes).
    grid = {
        "exp": np.concatenate([[0.0, -0.0, -np.inf, np.inf], np.linspace(-87, 88, 3001)]),
        "log": np.concatenate([[1.0, 0.0, np.inf, 1e-30], np.exp(np.linspace(-80, 80, 3001))]),
        "tanh": np.concatenate([[0.0, 1e-6, -1e-6, np.inf], np.linspace(-12, 12, 3001)]),
    }
    reference = {"exp": np.exp, "log": np.log, "tanh": np.tanh}
    # ulp-level: 2 ulp for exp and log; tanh's rational approximation ~5 ulp
    # relative, and absolute near 0.
    tolerance = {"exp": (2.5e-7, 0.0), "log": (2.5e-7, 1e-7), "tanh": (6e-7, 1e-7)}
    for op, x in grid.items():
        x = x.astype(np.float32)
        with np.errstate(divide="ignore"):
            want = reference[op](x.astype(np.float64))
        got = run(args.tfm_run, args.workdir, op, unary(op), [x, np.zeros_like(x)])
        rtol, atol = tolerance[op]
        check(f"{op} over its range", got, want, rtol=rtol, atol=atol)

    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
