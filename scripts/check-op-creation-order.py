#!/usr/bin/env python3
"""Lists calls in tfm's C++ that create ops in two or more of their arguments.

C++ leaves the order in which a call's arguments are evaluated to the
compiler (gcc goes right to left, clang left to right), so
`f(X::create(b, ..), Y::create(b, ..))` puts X and Y into the IR in an order
that depends on the compiler, and so does the printed IR. Patterns create
such operands one statement at a time instead.

An argument "creates ops" when it contains `::create(`, a call whose first
argument is a builder (`b`, `nb`, `rewriter`, ...), or a call of the scalar
helpers `f.` / `sc.` that hold one. Braced lists (`ValueRange{..}`) are
evaluated in order and count as one argument; lambdas are not evaluated at
the call. A heuristic: helpers that capture a builder under another name
are not seen.

    scripts/check-op-creation-order.py FILE_OR_DIR...   # exit 1 on findings
"""

import os
import re
import sys

BUILDER_CALL = re.compile(
    r"\w+\(\s*(b|nb|sb|lb|pb|eb|fb|kb|rewriter|builder|ib|bb|ob)\s*,")
HELPER_CALL = re.compile(r"\b(f|sc)\.\w+\(")
CALL = re.compile(r"[A-Za-z_][\w:]*\s*\(")


def arguments(src, start):
    """The top-level arguments of the call whose '(' ends just before start."""
    depth, j, cur, args = 1, start, start, []
    while j < len(src) and depth > 0:
        c = src[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(src[cur:j])
        elif c == "," and depth == 1:
            args.append(src[cur:j])
            cur = j + 1
        elif c == '"' and src[j - 1] != "'":
            j += 1
            while j < len(src) and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
        j += 1
    return args


def creates_ops(arg):
    if re.match(r"\s*\[", arg):  # a lambda
        return False
    return bool("::create(" in arg or BUILDER_CALL.search(arg) or
                HELPER_CALL.search(arg))


def findings(path):
    src = open(path, encoding="utf-8").read()
    # Comments and string literals say nothing about evaluation order.
    src = re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), src)
    for m in CALL.finditer(src):
        if sum(creates_ops(a) for a in arguments(src, m.end())) >= 2:
            yield src.count("\n", 0, m.start()) + 1, m.group(0).rstrip("( ")


def main(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in names if n.endswith(".cpp")]
        else:
            files.append(p)
    found = 0
    for f in sorted(files):
        for line, name in findings(f):
            print(f"{f}:{line}: {name}(...) creates ops in two or more arguments")
            found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
