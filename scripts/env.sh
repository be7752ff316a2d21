# Shared settings for the scripts (sourced).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# TFM_SANITIZE=1: the sanitizer build (clang-22, ASan + UBSan, libFuzzer
# coverage; docs/fuzzing.md) in its own folder. CI runs the tests on it.
if [ "${TFM_SANITIZE:-0}" = 1 ]; then
  TFM_BUILD=${TFM_BUILD:-$root/build-asan}
  # allow_user_poisoning=0: LLVM's inline allocators, compiled into our
  # instrumented code, poison memory that the uninstrumented libMLIR.so then
  # touches (false reports). Leaks are not checked: the tools exit without
  # tearing down MLIR's global registries. A failed malloc returns null, as
  # it does without ASan, so the step reports the size it needed.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:detect_leaks=0:abort_on_error=1:allocator_may_return_null=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
else
  TFM_BUILD=${TFM_BUILD:-$root/build}
fi
# The interpreter the reference virtualenv is made from.
TFM_BASE_PYTHON=${TFM_BASE_PYTHON:-$(command -v python3)}
req_hash=$(sha256sum "$root/python/requirements-test.txt" | cut -c1-12)
TFM_VENV=${TFM_VENV:-$HOME/.cache/tfm/venv-$req_hash}
export PATH="$TFM_BUILD/bin:$PATH"
