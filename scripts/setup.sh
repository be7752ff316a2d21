#!/usr/bin/env bash
# One-time (idempotent) set-up: system packages, the Python reference
# virtualenv, and the build. Each step is skipped when already done.
#
#   scripts/setup.sh            packages + virtualenv + build
#   TFM_SKIP_VENV=1 ...         without the Python reference environment
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/scripts/env.sh"

# --- System packages ----------------------------------------------------------
packages=(cmake ninja-build ccache g++ llvm-22-dev libmlir-22-dev mlir-22-tools
          llvm-22-tools nlohmann-json3-dev libgtest-dev libopenblas-dev
          python3-numpy python3-venv clang-format-14 git coinor-libcbc-dev)
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
fi

# --- Build -------------------------------------------------------------------
if [ ! -f "$TFM_BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$TFM_BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DTFM_PYTHON="$TFM_VENV/bin/python" >/dev/null
fi
ninja -C "$TFM_BUILD" -j"${TFM_JOBS:-2}" all | grep -vE '^\[[0-9]+/[0-9]+\] ' || true
test "${PIPESTATUS[0]}" -eq 0
