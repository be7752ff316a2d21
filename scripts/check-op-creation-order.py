#!/usr/bin/env python3
"""Lists calls in tfm's C++ that create ops in two or more of their arguments.

C++ leaves the order in which a call's arguments are evaluated to the
compiler (gcc goes right to left, clang left to right), so
`f(X::create(b, ..), Y::create(b, ..))` puts X and Y into the IR in an order
that depends on the compiler, and so does the printed IR. Patterns create
such operands one statement at a time instead.

An argument "creates ops" when it contains `::create(`, a call whose first
argument is a builder (`b`, `nb`, `rewriter`, ...: MLIR's own helpers), or
a call of a function, method or lambda defined in the scanned sources whose
body creates ops (found by name, to a fixed point: `s.mul(..)` of a scalar
helper, `c(1.0)` inside it, a local `emptyLike(..)` lambda), or of a
parameter whose type is a callback returning a Value (`LetterIndex idx`:
builder callbacks create the values they return). Braced lists
(`ValueRange{..}`) are evaluated in order and count as one argument;
lambdas are not evaluated at the call. A heuristic: a callee known only
through a pointer or a name defined outside the scanned sources is not seen.

    scripts/check-op-creation-order.py FILE_OR_DIR...   # exit 1 on findings
"""

import os
import re
import sys

BUILDER_CALL = re.compile(
    r"\w+\(\s*(b|nb|sb|lb|pb|eb|fb|kb|rewriter|builder|ib|bb|ob)\s*,")
CREATE = re.compile(r"::create\(|\.create(OrFold)?<")
CALL = re.compile(r"[A-Za-z_][\w:]*\s*\(")
NAME_CALL = re.compile(r"(?<![\w:])(?:[\w]+(?:\.|->))?([A-Za-z_]\w*)\s*\(")
# `name(params) qualifiers {`: a function or method definition.
DEFINITION = re.compile(r"(?<![\w.>])([A-Za-z_]\w*)\s*\(")
# `name = [captures](params) ... {`: a named lambda.
LAMBDA = re.compile(r"\b([A-Za-z_]\w*)\s*=\s*\[[^\]]*\]\s*\(")
# What may stand between a definition's `)` and its `{`.
QUALIFIERS = re.compile(
    r"(\s|\bconst\b|\boverride\b|\bfinal\b|\bnoexcept\b|\bmutable\b|"
    r"->\s*[\w:&*<>]+)*\{")
# `using X = function_ref<Value(...)>`: a callback type returning a Value.
CALLBACK_ALIAS = re.compile(
    r"using\s+(\w+)\s*=\s*(?:llvm::|std::)?(?:function_ref|function)<Value\(")
NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "return", "sizeof",
                 "decltype", "alignof", "static_assert", "defined"}


def strip(src):
    """Comments and string literals blanked (they say nothing about order)."""
    src = re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), src)
    return re.sub(r'"(\\.|[^"\\\n])*"', lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', src)


def closing(src, start, open_c, close_c):
    """Index just past the bracket that closes the one before `start`."""
    depth, j = 1, start
    while j < len(src) and depth > 0:
        if src[j] == open_c:
            depth += 1
        elif src[j] == close_c:
            depth -= 1
        j += 1
    return j


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
        j += 1
    return args


def bodies(src):
    """(name, is_lambda, body) of every function, method and named lambda."""
    for pattern in (DEFINITION, LAMBDA):
        for m in pattern.finditer(src):
            name = m.group(1)
            if name in NOT_FUNCTIONS:
                continue
            after = closing(src, m.end(), "(", ")")
            head = QUALIFIERS.match(src, after)
            if not head:
                continue
            body_start = head.end()
            yield (name, pattern is LAMBDA,
                   src[body_start:closing(src, body_start, "{", "}")])


def creating_names(sources):
    """Names of the functions whose bodies create ops, to a fixed point:
    {None: functions and methods (any file), path: that file's lambdas}."""
    defined = [(path, name, is_lambda, body)
               for path, src in sources.items()
               for name, is_lambda, body in bodies(src)]
    names = {None: set(), **{path: set() for path in sources}}
    callbacks = {m.group(1) for src in sources.values()
                 for m in CALLBACK_ALIAS.finditer(src)}
    if callbacks:
        declared = re.compile(r"\b(?:%s)\s*&?\s*(\w+)\s*[,)=]" %
                              "|".join(sorted(callbacks)))
        for path, src in sources.items():
            names[path] |= {m.group(1) for m in declared.finditer(src)}

    def known(path):
        return names[None] | names[path]

    while True:
        more = [(path if is_lambda else None, name)
                for path, name, is_lambda, body in defined
                if name not in names[path if is_lambda else None] and
                creates_ops(body, known(path))]
        if not more:
            return names
        for scope, name in more:
            names[scope].add(name)


def creates_ops(arg, names):
    """Whether evaluating `arg` creates ops (a lambda's body is not run)."""
    if re.match(r"\s*\[", arg):
        return False
    if CREATE.search(arg) or BUILDER_CALL.search(arg):
        return True
    return any(m.group(1) in names for m in NAME_CALL.finditer(arg))


def findings(src, names):
    for m in CALL.finditer(src):
        if sum(creates_ops(a, names) for a in arguments(src, m.end())) >= 2:
            yield src.count("\n", 0, m.start()) + 1, m.group(0).rstrip("( ")


def main(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, fnames in os.walk(p):
                files += [os.path.join(root, n) for n in fnames
                          if n.endswith((".cpp", ".h"))]
        else:
            files.append(p)
    sources = {f: strip(open(f, encoding="utf-8").read()) for f in sorted(files)}
    names = creating_names(sources)
    found = 0
    for f, src in sources.items():
        for line, name in findings(src, names[None] | names[f]):
            print(f"{f}:{line}: {name}(...) creates ops in two or more arguments")
            found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
