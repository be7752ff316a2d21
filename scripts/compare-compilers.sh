#!/usr/bin/env bash
# Whether two builds of tfm made by different C++ compilers (CI: gcc's
# build/ and clang's build-asan/) print the same IR for the same input.
# C++ leaves the order of argument evaluation to the compiler, so a pattern
# that creates ops in two arguments of one call would order them
# differently (scripts/check-op-creation-order.py finds such calls by
# reading the source; this finds what it cannot see by running both).
#
# Configs under test/Import/Inputs are imported by each build and compiled
# by each build's tfm-opt through --tfm-train-cpu (and some through
# --tfm-train-gpu-sim): the IR the CPU and simulated-GPU steps JIT. Every
# lowering test input under test/Conversion/TfmToLinalg and
# test/Dialect/Tfm through --tfm-lower-to-linalg. Outputs must be
# byte-identical; so must the errors of inputs that both builds refuse.
#
#   scripts/compare-compilers.sh BUILD_A BUILD_B [JUNIT_XML]
#
# Exit 1 (and a failed JUnit case per input) on any difference.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
a=$1 b=$2 xml=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

count=0
cases="" # JUnit test cases
differ=0

# run_in BUILD OUT COMMAND...: the command with @BIN@ standing for BUILD's
# bin/; its stdout in OUT, its stderr and exit code in OUT.err (error
# messages name the build's own paths: those become BIN).
run_in() {
  local build=$1 out=$2
  shift 2
  local args=("${@//@BIN@/$build/bin}")
  "${args[@]}" >"$out" 2>"$out.err"
  echo "exit $?" >>"$out.err"
  sed -i "s#$build/bin#BIN#g" "$out.err"
}

# compare NAME COMMAND...: the command's output, errors and exit code in
# both builds (build A's output stays in $work/a.out).
compare() {
  local name=$1
  shift
  run_in "$a" "$work/a.out" "$@"
  run_in "$b" "$work/b.out" "$@"
  count=$((count + 1))
  if cmp -s "$work/a.out" "$work/b.out" &&
    cmp -s "$work/a.out.err" "$work/b.out.err"; then
    cases+="<testcase classname=\"compare-compilers\" name=\"$name\"/>"
  else
    echo "compare-compilers: $name differs:"
    diff "$work/a.out" "$work/b.out" | head -20
    diff "$work/a.out.err" "$work/b.out.err" | head -5
    cases+="<testcase classname=\"compare-compilers\" name=\"$name\"><failure/></testcase>"
    differ=1
  fi
}

# One config per model_type (the first by name) through the CPU step; the
# simulated-GPU step for a dense, an MoE, an attention-sink and an SSM
# family (it takes up to 30 s for some others).
configs=$(python3 - "$root"/test/Import/Inputs/*.json <<'PY'
import json, sys
seen = set()
for path in sys.argv[1:]:
    try:
        kind = json.load(open(path)).get("model_type")
    except (ValueError, OSError, AttributeError):
        continue
    if kind and kind not in seen:
        seen.add(kind)
        print(path)
PY
)
gpu_sim=" llama-3.2-1b-instruct qwen3-30b-a3b gpt-oss-20b mamba2-130m "
for config in $configs; do
  name=$(basename "$config" .json)
  compare "import/$name" @BIN@/tfm-import-hf "$config"
  # The pipelines compile what build A imported (the same text when the
  # comparison above passed).
  grep -qx "exit 0" "$work/a.out.err" || continue
  mv "$work/a.out" "$work/model.mlir"
  compare "tfm-train-cpu/$name" @BIN@/tfm-opt "$work/model.mlir" --tfm-train-cpu
  if [[ $gpu_sim == *" $name "* ]]; then
    compare "tfm-train-gpu-sim/$name" @BIN@/tfm-opt "$work/model.mlir" \
      --tfm-train-gpu-sim
  fi
done
for input in "$root"/test/Conversion/TfmToLinalg/*.mlir \
  "$root"/test/Dialect/Tfm/*ops*.mlir; do
  compare "lower-to-linalg/$(basename "$input" .mlir)" \
    @BIN@/tfm-opt "$input" --tfm-lower-to-linalg --split-input-file \
    --allow-unregistered-dialect
done

[ -n "$xml" ] &&
  echo "<testsuites><testsuite name=\"compare-compilers\">$cases</testsuite></testsuites>" >"$xml"
echo "compare-compilers: $count inputs, $([ $differ = 0 ] && echo "all identical" || echo "some differ")"
exit $differ
