"""Timing of one training step (loss with labels, every parameter gradient)
on both sides of a CPU benchmark: torch autograd on an HF model, and
tfm-run --grads on the same model saved as a checkpoint."""

import json
import os
import re
import subprocess
import time


def hf_step(model, ids, repeat):
    best = 1e30
    for _ in range(repeat):
        model.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        model(input_ids=ids, labels=ids).loss.backward()
        best = min(best, time.perf_counter() - t0)
    model.zero_grad(set_to_none=True)
    return best


def tfm_op_vjp(args, mlir, inputs, cotangent, d, name):
    """Seconds of one forward + backward of the tfm function `mlir` (@main,
    one result) on `inputs`, with `cotangent` for its result: tfm-run --mlir
    --autodiff, fastest of args.repeat."""
    from safetensors.torch import save_file
    path = os.path.join(d, name + ".mlir")
    with open(path, "w") as f:
        f.write(mlir)
    tensors = {f"arg{i}": t.contiguous() for i, t in enumerate(inputs)}
    tensors[f"arg{len(inputs)}"] = cotangent
    save_file(tensors, os.path.join(d, name + ".in"))
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads))
    r = subprocess.run([args.tfm_run, "--mlir", path, "--autodiff", "--inputs", os.path.join(d, name + ".in"),
                        "--output", os.path.join(d, name + ".out"), "--repeat", str(args.repeat)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"tfm-run --mlir failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    return float(re.search(r"run ([0-9.]+) ms", r.stdout).group(1)) / 1e3


def tfm_step(args, model, ids, d):
    model.save_pretrained(d)
    tokens = os.path.join(d, "tokens.json")
    with open(tokens, "w") as f:
        json.dump({"input_ids": ids.tolist(), "labels": ids.tolist()}, f)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads))
    r = subprocess.run([args.tfm_run, d, "--tokens", tokens, "--output", os.path.join(d, "out.st"),
                        "--grads", "--repeat", str(args.repeat)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"tfm-run failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    m = re.search(r"(?:run|step) ([0-9.]+) ms", r.stdout)
    if not m:
        raise SystemExit(f"no step time in tfm-run's output:\n{r.stdout}{r.stderr}")
    return float(m.group(1)) / 1e3
