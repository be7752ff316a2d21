#!/usr/bin/env python3
"""Compile a model's training step for the GPU and assemble its PTX with ptxas.

For each chip: tfm-import-hf CONFIG, tfm-opt --tfm-train-cuda{chip}, dump the
PTX of every gpu.binary (tfm-dump-gpu-binaries), then `ptxas -arch=<chip> -v`.
Checks, independently of the compiler: ptxas accepts the module, it compiled
every `.entry` of the PTX, and no kernel spills (0 bytes spill stores/loads).
Prints one summary line per chip, e.g.

  sm_90: 1 module, 205 kernels, 0 spilling, max 30 registers

and exits 1 on any failure.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("--chips", default="sm_80,sm_90")
    ap.add_argument("--dtype", default="f32", help="tfm-import-hf --dtype")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--tfm-import-hf", default="tfm-import-hf")
    ap.add_argument("--tfm-opt", default="tfm-opt")
    ap.add_argument("--no-logits", action="store_true",
                    help="tfm-import-hf --no-logits (the fused LM-head loss step)")
    ap.add_argument("--no-fusion", action="store_true",
                    help="tfm-train-cuda fuse=0 (the HF-literal step)")
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas")
    args = ap.parse_args()

    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    model = os.path.join(args.workdir, "model.mlir")
    run([args.tfm_import_hf, args.config, "--dtype", args.dtype, "-o", model]
        + (["--no-logits"] if args.no_logits else []))
    failed = False
    for chip in args.chips.split(","):
        out = os.path.join(args.workdir, chip)
        fuse = " fuse=0" if args.no_fusion else ""
        run([args.tfm_opt, model, f"--tfm-train-cuda=chip={chip}{fuse}",
             f"--tfm-dump-gpu-binaries=dir={out}", "-o", os.devnull])
        ptx_files = sorted(f for f in os.listdir(out) if f.endswith(".ptx"))
        if not ptx_files:
            sys.exit(f"{chip}: no PTX was produced")
        kernels = spilling = max_regs = 0
        for f in ptx_files:
            path = os.path.join(out, f)
            ptx = open(path).read()
            entries = re.findall(r"^\.visible \.entry (\w+)\(", ptx, re.M)
            log = run([args.ptxas, f"-arch={chip}", "-v", path,
                       "-o", os.path.join(out, f + ".cubin")])
            compiled = re.findall(r"Compiling entry function '(\w+)'", log)
            if sorted(compiled) != sorted(entries):
                print(f"{chip}: {f}: ptxas compiled {len(compiled)} of "
                      f"{len(entries)} entries")
                failed = True
            spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
            if len(spills) != len(compiled):
                print(f"{chip}: {f}: ptxas -v reported spills for {len(spills)} of "
                      f"{len(compiled)} kernels (output format changed?)")
                failed = True
            for stores, loads in spills:
                if int(stores) or int(loads):
                    spilling += 1
            regs = [int(r) for r in re.findall(r"Used (\d+) registers", log)]
            max_regs = max([max_regs] + regs)
            kernels += len(entries)
        print(f"{chip}: {len(ptx_files)} module, {kernels} kernels, "
              f"{spilling} spilling, max {max_regs} registers")
        failed |= spilling > 0 or kernels == 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
