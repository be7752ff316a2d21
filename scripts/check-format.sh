#!/usr/bin/env bash
# Checks that every C++ file of the tree is clang-format clean under the
# project's .clang-format, with Debian's clang-format-14 (the version CI
# installs). Lists the files that are not; exit status 1 if any.
#
#   scripts/check-format.sh          check
#   scripts/check-format.sh --fix    reformat in place
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cf=${CLANG_FORMAT:-$(command -v clang-format-14 || true)}
if [ -z "$cf" ]; then
  echo "check-format: clang-format-14 not found (apt-get install clang-format-14)" >&2
  exit 2
fi
cd "$root"
mapfile -t files < <(git ls-files '*.cpp' '*.h' 2>/dev/null ||
                     find include lib tools unittests test -name '*.cpp' -o -name '*.h')
if [ "${1:-}" = "--fix" ]; then
  "$cf" -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not clang-format clean: $f"
    bad=1
  fi
done
exit $bad
