"""Starts a data-parallel command, kills one of its ranks with SIGKILL once
a path matching `--after GLOB` exists, and reports how the run ended:

    kill_rank.py --rank 1 --after 'OUT/checkpoint-*' -- mpirun.mpich -np 2 ...
    ->  "killed rank 1", then "exit N within 10 s" (or how long it took)

The rank is found by the PMI_RANK that MPICH's launcher gives it. A bounded
wait: everything is killed after 120 s."""

import argparse
import glob
import os
import signal
import subprocess
import sys
import time


def rank_processes(root, rank):
    """Descendants of `root` (not another test's ranks) whose environment
    says PMI_RANK=`rank`."""
    parent, ranked = {}, []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                # After "(comm)": state, ppid.
                parent[int(pid)] = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"PMI_RANK={rank}".encode() in f.read().split(b"\0"):
                    ranked.append(int(pid))
        except (OSError, ValueError, IndexError):
            continue

    def descends(pid):
        while pid > 1:
            pid = parent.get(pid, 0)
            if pid == root:
                return True
        return False

    return [pid for pid in ranked if descends(pid)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.time() + 120
    while not glob.glob(args.after) and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    if proc.poll() is not None:
        print(f"FAIL the run ended (exit {proc.returncode}) before {args.after} appeared")
        return 1
    victims = rank_processes(proc.pid, args.rank)
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    killed = time.time()
    print(f"killed rank {args.rank}" if victims else f"FAIL no process of rank {args.rank}")
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
    took = time.time() - killed
    print(f"exit {proc.returncode} within 10 s" if took < 10 else
          f"exit {proc.returncode} after {took:.0f} s")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
