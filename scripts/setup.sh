#!/usr/bin/env bash
# One-time (idempotent) set-up: system packages, the Python reference
# virtualenv, and the build. Each step is skipped when already done.
#
#   scripts/setup.sh            packages + virtualenv + build
#   TFM_SKIP_VENV=1 ...         without the Python reference environment
#   TFM_SANITIZE=1 ...          the sanitizer build (build-asan/) instead
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/scripts/env.sh"

# --- System packages ----------------------------------------------------------
packages=(cmake ninja-build ccache g++ llvm-22-dev libmlir-22-dev mlir-22-tools
          llvm-22-tools nlohmann-json3-dev libgtest-dev libopenblas-dev
          python3-numpy python3-venv clang-format-14 git coinor-libcbc-dev
          mpich libmpich-dev)
[ "${TFM_SANITIZE:-0}" = 1 ] && packages+=(clang-22 libclang-rt-22-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- Python reference environment (outside the clone; reused across clones) --
if [ -z "${TFM_SKIP_VENV:-}" ]; then
  if [ ! -f "$TFM_VENV/.complete" ]; then
    echo "setup: creating the reference virtualenv $TFM_VENV (torch, transformers; large download)"
    rm -rf "$TFM_VENV"
    "$TFM_BASE_PYTHON" -m venv "$TFM_VENV"
    "$TFM_VENV/bin/python" -m pip install -q --disable-pip-version-check \
      -r "$root/python/requirements-test.txt"
    touch "$TFM_VENV/.complete"
  fi
  # The Python package's build tools and pytest, keyed on their own file.
  dev_hash=$(sha256sum "$root/python/requirements-dev.txt" | cut -c1-12)
  if [ ! -f "$TFM_VENV/.complete-dev-$dev_hash" ]; then
    "$TFM_VENV/bin/python" -m pip install -q --disable-pip-version-check \
      -r "$root/python/requirements-dev.txt"
    touch "$TFM_VENV/.complete-dev-$dev_hash"
  fi
  # PEFT and bitsandbytes, the adapters' and quantized bases' references.
  adapters_hash=$(sha256sum "$root/python/requirements-adapters.txt" | cut -c1-12)
  if [ ! -f "$TFM_VENV/.complete-adapters-$adapters_hash" ]; then
    "$TFM_VENV/bin/python" -m pip install -q --disable-pip-version-check \
      -r "$root/python/requirements-adapters.txt"
    touch "$TFM_VENV/.complete-adapters-$adapters_hash"
  fi
  # pyarrow, for tfm.data's parquet input.
  data_hash=$(sha256sum "$root/python/requirements-data.txt" | cut -c1-12)
  if [ ! -f "$TFM_VENV/.complete-data-$data_hash" ]; then
    "$TFM_VENV/bin/python" -m pip install -q --disable-pip-version-check \
      -r "$root/python/requirements-data.txt"
    touch "$TFM_VENV/.complete-data-$data_hash"
  fi
fi

# --- Build -------------------------------------------------------------------
build_flags=(-DCMAKE_BUILD_TYPE=Release)
if [ "${TFM_SANITIZE:-0}" = 1 ]; then
  # LLVM's own sanitizer options (HandleLLVMOptions): ASan + UBSan on all of
  # tfm, libFuzzer's coverage for the fuzz targets; -O1 as LLVM's sanitized
  # builds use.
  build_flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-22
               -DCMAKE_CXX_COMPILER=clang++-22
               "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG"
               "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"
               "-DLLVM_USE_SANITIZER=Address;Undefined"
               # LLVM's own default (set by its top-level CMakeLists, which
               # a standalone project does not read).
               "-DLLVM_UBSAN_FLAGS=-fsanitize=undefined -fno-sanitize=vptr,function -fno-sanitize-recover=all"
               -DLLVM_USE_SANITIZE_COVERAGE=ON)
fi
if [ ! -f "$TFM_BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$TFM_BUILD" "${build_flags[@]}" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DTFM_PYTHON="$TFM_VENV/bin/python" >/dev/null
fi
ninja -C "$TFM_BUILD" -j"${TFM_JOBS:-2}" all | grep -vE '^\[[0-9]+/[0-9]+\] ' || true
test "${PIPESTATUS[0]}" -eq 0
