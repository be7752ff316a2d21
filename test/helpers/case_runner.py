"""The command line shared by the per-op numeric and gradient checks.

    --tfm-run PATH --workdir DIR [--group NAME] [--device DEV] [--list]

Runs every selected case (group, name, ...) through `run(tfm_run, workdir,
*case)`, which returns True when the case passes; a failing tfm-run counts
as a failed case. `tfm_run` is the command as a list (with `--device DEV`
when given). Exit status 0 when all pass.
"""

import argparse
import os
import subprocess


def main(cases, run, what):
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfm-run", dest="tfm_run")
    ap.add_argument("--workdir")
    ap.add_argument("--group")
    ap.add_argument("--device", help="tfm-run --device (e.g. gpu-sim)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    tfm_run = [args.tfm_run] + (["--device", args.device] if args.device else [])
    selected = [c for c in cases if not args.group or c[0] == args.group]
    if args.list:
        for c in selected:
            print(c[0], c[1])
        return 0
    if not selected:
        print(f"no cases in group {args.group}")
        return 1
    os.makedirs(args.workdir, exist_ok=True)
    results = []
    for c in selected:
        try:
            results.append(run(tfm_run, args.workdir, *c))
        except subprocess.CalledProcessError as e:
            print(f"FAIL {c[0]}/{c[1]}: {e}")
            results.append(False)
    print(f"{sum(results)} of {len(results)} {what} passed")
    return 0 if all(results) else 1
