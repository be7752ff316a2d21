"""CPU GEMM: generated loops vs OpenBLAS, through the same tfm pipeline.

Compiles `tfm.matmul` [M, K] x [N, K]^T with and without
tfm-linalg-matmul-to-blas (`tfm-run --no-blas`) and prints GFLOP/s for
each (fastest of --repeat runs; both single-threaded unless THREADS is set).

    python bench/cpu_gemm.py [--size 512] [--tfm-run build/bin/tfm-run]
"""

import argparse
import os
import re
import subprocess
import tempfile

import numpy as np
from safetensors.numpy import save_file


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--tfm-run", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "tfm-run"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    n = args.size
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", os.environ.get("THREADS", "1"))
    with tempfile.TemporaryDirectory() as d:
        mlir = os.path.join(d, "gemm.mlir")
        with open(mlir, "w") as f:
            f.write(f"""
func.func @main(%x: tensor<1x{n}x{n}xf32>, %w: tensor<{n}x{n}xf32>) -> tensor<1x{n}x{n}xf32> {{
  %y = tfm.matmul %x, %w {{transpose = #tfm.transpose<nt>}} : (tensor<1x{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<1x{n}x{n}xf32>
  return %y : tensor<1x{n}x{n}xf32>
}}""")
        inputs = os.path.join(d, "in.safetensors")
        save_file({"arg0": np.random.rand(1, n, n).astype(np.float32),
                   "arg1": np.random.rand(n, n).astype(np.float32)}, inputs)
        flops = 2.0 * n ** 3
        print(f"GEMM {n}x{n}x{n} f32, OPENBLAS_NUM_THREADS={env['OPENBLAS_NUM_THREADS']}")
        for label, extra in [("generated loops", ["--no-blas"]), ("OpenBLAS", [])]:
            out = subprocess.run([args.tfm_run, "--mlir", mlir, "--inputs", inputs, "--output",
                                  os.path.join(d, "out.st"), "--repeat", str(args.repeat)] + extra,
                                 capture_output=True, text=True, env=env, check=True).stdout
            ms = float(re.search(r"run ([0-9.]+) ms", out).group(1))
            print(f"  {label:16s} {ms:9.2f} ms  {flops / ms / 1e6:8.2f} GFLOP/s")


if __name__ == "__main__":
    main()
