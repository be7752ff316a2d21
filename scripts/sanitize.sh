#!/usr/bin/env bash
# The sanitizer build's checks (docs/fuzzing.md), as CI runs them after the
# default build's tests: build-asan/ (clang-22, ASan + UBSan, libFuzzer
# coverage), the whole lit suite on it, then every fuzz target for
# TFM_FUZZ_SECONDS (default 60) seconds each.
#
#   TFM_SANITIZE_XUNIT=F ...       one JUnit report of all (scripts/test.sh)
#
# The numeric tests compare against the HF references the default build's
# run computed (its reference cache, when build/ has one), so this run pays
# for tfm under the sanitizers, not for PyTorch again: about 17 minutes on
# 2 cores (docs/fuzzing.md).
#
# When the default (gcc) build is there too, scripts/compare-compilers.sh
# then checks that both builds print the same IR for the same inputs.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TFM_SANITIZE=1
. "$root/scripts/env.sh"
"$root/scripts/setup.sh" || { echo "sanitize: set-up failed"; exit 1; }

litxml=$(mktemp --suffix=.xml)
fuzzxml=$(mktemp --suffix=.xml)
comparexml=$(mktemp --suffix=.xml)
trap 'rm -f "$litxml" "$fuzzxml" "$comparexml"' EXIT
echo '<testsuites/>' >"$comparexml"
# The HF references the default build's run computed (its cache): the
# sanitizer build's numeric tests then compare against the same references
# without recomputing them (test/helpers/reference_cache.py).
if [ -z "${TFM_REFERENCE_CACHE:-}" ] && [ -d "$root/build/test/reference-cache" ]; then
  export TFM_REFERENCE_CACHE="$root/build/test/reference-cache"
fi
lit=(/usr/lib/llvm-22/bin/lit -s --no-progress-bar)
suites=("$TFM_BUILD/test" "$TFM_BUILD/test/Unit")
status=0
"${lit[@]}" --xunit-xml-output "$litxml" "${suites[@]}" || status=1
if [ -x "$root/build/bin/tfm-opt" ]; then
  "$root/scripts/compare-compilers.sh" "$root/build" "$TFM_BUILD" "$comparexml" || status=1
fi
TFM_FUZZ_XUNIT="$fuzzxml" "$root/scripts/fuzz.sh" "${TFM_FUZZ_SECONDS:-60}" || status=1
if [ -n "${TFM_SANITIZE_XUNIT:-}" ]; then
  python3 - "$TFM_SANITIZE_XUNIT" "$litxml" "$comparexml" "$fuzzxml" <<'PY'
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
