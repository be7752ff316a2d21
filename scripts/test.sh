#!/usr/bin/env bash
# Runs every test (lit: FileCheck tests, GoogleTest unit tests, and the
# numeric tests against Hugging Face's modeling code), after set-up.
# Ends with one line: "N passed, N failed".
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/scripts/env.sh"

"$root/scripts/setup.sh" || { echo "0 passed, 1 failed"; exit 1; }

xml=$(mktemp --suffix=.xml)
trap 'rm -f "$xml"' EXIT
/usr/lib/llvm-22/bin/lit -sv --xunit-xml-output "$xml" \
  "$TFM_BUILD/test" "$TFM_BUILD/test/Unit"
status=$?
counts=$(python3 - "$xml" <<'PY'
import sys, xml.etree.ElementTree as ET
passed = failed = skipped = 0
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
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
