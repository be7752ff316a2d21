#!/usr/bin/env bash
# The sanitizer build's checks (docs/fuzzing.md), as CI runs them after the
# default build's tests: build-asan/ (clang-22, ASan + UBSan, libFuzzer
# coverage), the lit suite on it, then every fuzz target for
# TFM_FUZZ_SECONDS (default 60) seconds each.
#
#   scripts/sanitize.sh            every test but the HF numeric matrices,
#                                  and one third of those (the third is
#                                  the commit count mod 3: consecutive
#                                  commits cover all of them)
#   TFM_SANITIZE_ALL=1 ...         the whole lit suite (about 25 minutes
#                                  on 2 cores)
#   TFM_SANITIZE_XUNIT=F ...       one JUnit report of all (scripts/test.sh)
#
# When the default (gcc) build is there too, scripts/compare-compilers.sh
# then checks that both builds print the same IR for the same inputs.
#
# The whole suite under ASan takes about 1.4x the default build's time; beside
# that build's own run it does not fit CI's hour, so CI samples the
# numeric matrices (per-family HF comparisons, finite differences, the GPU
# simulation and ptxas runs), which spend their time in LLVM's JIT and in
# PyTorch, neither instrumented.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TFM_SANITIZE=1
. "$root/scripts/env.sh"
"$root/scripts/setup.sh" || { echo "sanitize: set-up failed"; exit 1; }

litxml=$(mktemp --suffix=.xml)
heavyxml=$(mktemp --suffix=.xml)
fuzzxml=$(mktemp --suffix=.xml)
comparexml=$(mktemp --suffix=.xml)
trap 'rm -f "$litxml" "$heavyxml" "$fuzzxml" "$comparexml"' EXIT
echo '<testsuites/>' >"$heavyxml"
echo '<testsuites/>' >"$comparexml"
lit=(/usr/lib/llvm-22/bin/lit -s --no-progress-bar)
suites=("$TFM_BUILD/test" "$TFM_BUILD/test/Unit")
heavy='numerics|gradcheck|/sim-|ptxas-|compile-depth|Install/'
status=0
if [ "${TFM_SANITIZE_ALL:-0}" = 1 ]; then
  "${lit[@]}" --xunit-xml-output "$litxml" "${suites[@]}" || status=1
else
  "${lit[@]}" --filter-out "$heavy" --xunit-xml-output "$litxml" "${suites[@]}" || status=1
  shard=$(($(git -C "$root" rev-list --count HEAD 2>/dev/null || echo 0) % 3 + 1))
  echo "sanitize: numeric matrices, shard $shard of 3"
  "${lit[@]}" --filter "$heavy" --num-shards 3 --run-shard "$shard" \
    --xunit-xml-output "$heavyxml" "${suites[@]}" || status=1
fi
if [ -x "$root/build/bin/tfm-opt" ]; then
  "$root/scripts/compare-compilers.sh" "$root/build" "$TFM_BUILD" "$comparexml" || status=1
fi
TFM_FUZZ_XUNIT="$fuzzxml" "$root/scripts/fuzz.sh" "${TFM_FUZZ_SECONDS:-60}" || status=1
if [ -n "${TFM_SANITIZE_XUNIT:-}" ]; then
  python3 - "$TFM_SANITIZE_XUNIT" "$litxml" "$heavyxml" "$comparexml" "$fuzzxml" <<'PY'
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
