#!/usr/bin/env bash
# The sanitizer build's checks (docs/fuzzing.md), as CI runs them after the
# default build's tests: build-asan/ (clang-22, ASan + UBSan, libFuzzer
# coverage), the lit suite on it, then every fuzz target for
# TFM_FUZZ_SECONDS (default 30) seconds each.
#
#   scripts/sanitize.sh            the lit run without the HF numeric matrices
#   TFM_SANITIZE_ALL=1 ...         the whole lit suite (about 90 minutes on 2
#                                  cores: the numeric matrices are JIT-bound)
#   TFM_SANITIZE_XUNIT=F ...       one JUnit report of both (scripts/test.sh)
#
# The numeric matrices (per-family HF comparisons, finite differences, the
# GPU simulation and ptxas runs) spend their time in LLVM's JIT and in
# PyTorch, neither of which is instrumented; CI leaves them to the default
# build to stay within its time, and a full run is one variable away.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TFM_SANITIZE=1
. "$root/scripts/env.sh"
"$root/scripts/setup.sh" || { echo "sanitize: set-up failed"; exit 1; }

litxml=$(mktemp --suffix=.xml)
fuzzxml=$(mktemp --suffix=.xml)
trap 'rm -f "$litxml" "$fuzzxml"' EXIT
filter=()
if [ "${TFM_SANITIZE_ALL:-0}" != 1 ]; then
  filter=(--filter-out 'numerics|gradcheck|/sim-|ptxas-|compile-depth|Install/')
fi
status=0
/usr/lib/llvm-22/bin/lit -s --no-progress-bar "${filter[@]}" --xunit-xml-output "$litxml" \
  "$TFM_BUILD/test" "$TFM_BUILD/test/Unit" || status=1
TFM_FUZZ_XUNIT="$fuzzxml" "$root/scripts/fuzz.sh" "${TFM_FUZZ_SECONDS:-30}" || status=1
if [ -n "${TFM_SANITIZE_XUNIT:-}" ]; then
  python3 - "$TFM_SANITIZE_XUNIT" "$litxml" "$fuzzxml" <<'PY'
import sys, xml.etree.ElementTree as ET
out = ET.Element("testsuites")
for path in sys.argv[2:]:
    try:
        for suite in ET.parse(path).getroot().iter("testsuite"):
            for case in suite.iter("testcase"):
                case.set("classname", "asan." + case.get("classname", ""))
            out.append(suite)
    except (ET.ParseError, OSError):
        bad = ET.SubElement(ET.SubElement(out, "testsuite"), "testcase", name=path)
        ET.SubElement(bad, "failure")
ET.ElementTree(out).write(sys.argv[1])
PY
fi
exit $status
