#!/usr/bin/env bash
# Runs every libFuzzer target (tools/tfm-fuzzers) on its seed corpus for a
# bounded time in the sanitizer build (ASan + UBSan); fails on any finding.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     default: 60 s, all five
#   TFM_FUZZ_XUNIT=F scripts/fuzz.sh ...      also a JUnit report (scripts/test.sh)
#   TFM_FUZZ_RUNS=N scripts/fuzz.sh 0 ...     N inputs per target, no time
#                                             limit (the long runs)
#   TFM_FUZZ_JOBS=N scripts/fuzz.sh ...       targets run at once (default 2)
#   TFM_FUZZ_WORKERS=N scripts/fuzz.sh ...    N processes per target on one
#                                             corpus (TFM_FUZZ_RUNS: each)
#
# A finding (crash, sanitizer report, LLVM fatal error, hang over the
# per-input timeout, memory beyond 4 GiB) is saved as
# $TFM_BUILD/fuzz/<target>/finding-*; once fixed, add it to
# test/Fuzz/Inputs/<target>-findings/, where test/Fuzz replays it in every
# build. docs/fuzzing.md has the long runs and their results.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TFM_SANITIZE=1
. "$root/scripts/env.sh"
"$root/scripts/setup.sh" >/dev/null || { echo "fuzz: set-up failed"; exit 1; }

seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(config checkpoint token pipeline resume)
work=$TFM_BUILD/fuzz

# Seeds: the configs the importer tests use; safetensors, index and token
# files made for the targets' input layouts; every IR test, one case per
# `// -----` split.
seed_dirs() {
  case $1 in
    config) echo "$root/test/Import/Inputs $root/test/GPU/Inputs $root/examples" ;;
    checkpoint) echo "$root/test/Fuzz/Inputs/checkpoint" ;;
    token) echo "$root/test/Fuzz/Inputs/tokens" ;;
    resume) echo "$root/test/Fuzz/Inputs/resume" ;;
    pipeline) echo "$work/pipeline-seeds" ;;
  esac
}
split_ir_tests() {
  rm -rf "$work/pipeline-seeds" && mkdir -p "$work/pipeline-seeds"
  python3 "$root/test/Fuzz/Inputs/split_ir_tests.py" "$root/test" "$work/pipeline-seeds"
}

# fuzz_one TARGET: one target's run; its exit code in $dir/rc.
fuzz_one() {
  local t=$1 bin=$TFM_BUILD/bin/tfm-$1-fuzzer dir=$work/$1
  # Each input gets 25 s (the pipeline target compiles whole models).
  # -detect_leaks=0: leaks are not findings (ASAN_OPTIONS detect_leaks=0,
  # see scripts/env.sh), and libFuzzer's own check reruns every input that
  # allocates more than it frees, which the pipeline target's reused
  # context does by design: a third of its time went there.
  # With workers, libFuzzer's -jobs writes each process's log as
  # fuzz-<job>.log in the current folder, and copies it to its own output
  # when the process ends.
  local workers=${TFM_FUZZ_WORKERS:-1} parallel=()
  [ "$workers" -gt 1 ] && parallel=(-jobs="$workers" -workers="$workers")
  rm -f "$dir"/fuzz-*.log
  # shellcheck disable=SC2046 # seed folders are word lists
  (cd "$dir" && "$bin" "$dir/corpus" $(seed_dirs "$t") "$root/test/Fuzz/Inputs/$t-findings" \
    -max_total_time="$seconds" ${TFM_FUZZ_RUNS:+-runs=$TFM_FUZZ_RUNS} "${parallel[@]}" \
    -timeout=25 -rss_limit_mb=4096 -detect_leaks=0 -print_final_stats=1 \
    -artifact_prefix="$dir/finding-" >"$dir/log" 2>&1)
  echo $? >"$dir/rc"
}

# Each target is single-threaded: two run at a time (each still gets its
# whole time on a core of its own on a 2-core machine).
jobs_at_once=${TFM_FUZZ_JOBS:-2}
for t in "${targets[@]}"; do
  mkdir -p "$work/$t/corpus"
  rm -f "$work/$t/rc"
  [ "$t" = pipeline ] && split_ir_tests
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n; done
  fuzz_one "$t" &
done
wait

status=0
cases=""
for t in "${targets[@]}"; do
  dir=$work/$t
  rc=$(cat "$dir/rc" 2>/dev/null || echo 1)
  # Several workers: their inputs add up; the time is the longest's.
  secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$dir/log" | grep -o '[0-9]* second' | grep -o '[0-9]*' | sort -n | tail -1)
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' | awk '{n += $1} END {if (NR) print n}')
  if [ "$rc" -eq 0 ]; then
    echo "fuzz $t: ${runs:-?} inputs in ${secs:-$seconds} s, no finding"
    cases+="<testcase classname=\"fuzz\" name=\"$t\"/>"
  else
    status=1
    echo "fuzz $t: FINDING (exit $rc), see $dir/log:"
    grep -E 'ERROR|runtime error|tfm fuzz finding|LLVM ERROR|Test unit written' "$dir/log" | head -5
    cases+="<testcase classname=\"fuzz\" name=\"$t\"><failure/></testcase>"
  fi
done
[ -n "${TFM_FUZZ_XUNIT:-}" ] && echo "<testsuites><testsuite name=\"fuzz\">$cases</testsuite></testsuites>" >"$TFM_FUZZ_XUNIT"
exit $status
