"""Writes every .mlir test under ROOT, one file per `// -----` case, into
OUT: the pipeline fuzz target's seed corpus (scripts/fuzz.sh, replay.test).

    split_ir_tests.py ROOT OUT
"""

import pathlib
import sys

out = pathlib.Path(sys.argv[2])
for n, path in enumerate(sorted(pathlib.Path(sys.argv[1]).rglob("*.mlir"))):
    for k, case in enumerate(path.read_text().split("// -----")):
        (out / f"{n:03d}-{k:02d}-{path.stem}.mlir").write_text(case)
