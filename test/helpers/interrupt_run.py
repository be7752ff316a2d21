"""Runs a command, sends it SIGINT (with --twice, SIGINT then SIGTERM: two
signals of one kind may merge into one) as soon as it prints its first
progress line ("step 1/"), and reports how it ended:

    interrupt_run.py [--twice] -- COMMAND...
    ->  its stdout up to that line, "exit N" or "signal NAME", then its
        stderr

A bounded wait: the command is killed after 120 s."""

import signal
import subprocess
import sys


def main():
    args = sys.argv[1:]
    twice = args[0] == "--twice"
    command = args[args.index("--") + 1:]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:
        sys.stdout.write(line)
        if line.startswith("step "):
            proc.send_signal(signal.SIGINT)
            if twice:
                proc.send_signal(signal.SIGTERM)
            break
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    code = proc.returncode
    print(f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}")
    sys.stdout.write(err)


if __name__ == "__main__":
    main()
