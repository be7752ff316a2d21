#!/usr/bin/env bash
# Runs every test (lit: FileCheck tests, GoogleTest unit tests, and the
# numeric tests against Hugging Face's modeling code; pytest: the Python
# package's), after set-up.
# Ends with one line: "N passed, N failed".
#
# TFM_WITH_SANITIZERS=1 (what CI runs) adds the sanitizer build's checks
# (scripts/sanitize.sh: ASan + UBSan lit run and every fuzz target),
# counted in the same line. TFM_SANITIZE=1 runs this script's own tests on
# the sanitizer build instead of the default one.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/scripts/env.sh"

"$root/scripts/setup.sh" || { echo "0 passed, 1 failed"; exit 1; }

xml=$(mktemp --suffix=.xml)
pyxml=$(mktemp --suffix=.xml)
fuzzxml=$(mktemp --suffix=.xml)
echo '<testsuites/>' >"$fuzzxml"
trap 'rm -f "$xml" "$pyxml" "$fuzzxml"' EXIT
/usr/lib/llvm-22/bin/lit -sv --xunit-xml-output "$xml" \
  "$TFM_BUILD/test" "$TFM_BUILD/test/Unit"
status=$?
# The Python package's tests (python/tests), on the build tree's package
# (they need the reference virtualenv, as the numeric lit tests do).
# In the sanitizer build the package's library needs the ASan runtime
# loaded first (Python itself is not instrumented).
preload=()
if [ "${TFM_SANITIZE:-0}" = 1 ]; then
  preload=(env "LD_PRELOAD=$(clang++-22 -print-file-name=libclang_rt.asan-x86_64.so)")
fi
if [ -x "$TFM_VENV/bin/python" ]; then
  PYTHONPATH="$TFM_BUILD/python_packages" "${preload[@]}" "$TFM_VENV/bin/python" -m pytest -q \
    -p no:cacheprovider --junitxml="$pyxml" "$root/python/tests" || status=1
else
  echo '<testsuites/>' >"$pyxml"
fi
if [ "${TFM_WITH_SANITIZERS:-0}" = 1 ]; then
  TFM_SANITIZE_XUNIT="$fuzzxml" "$root/scripts/sanitize.sh" || status=1
fi
counts=$(python3 - "$xml" "$pyxml" "$fuzzxml" <<'PY'
import sys, xml.etree.ElementTree as ET
passed = failed = skipped = 0
cases = []
for path in sys.argv[1:]:
    try:
        cases += list(ET.parse(path).getroot().iter("testcase"))
    except (ET.ParseError, OSError):
        failed += 1  # a suite that did not report
for case in cases:
    if case.find("failure") is not None or case.find("error") is not None:
        failed += 1
    elif case.find("skipped") is not None:
        skipped += 1
    else:
        passed += 1
print(passed, failed, skipped)
PY
) || counts="0 1 0"
read -r passed failed skipped <<<"$counts"
[ "$skipped" -gt 0 ] && echo "($skipped unsupported on this machine, not counted)"
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
