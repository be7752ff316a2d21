#!/usr/bin/env bash
# The GPU check, as one prepared script for a machine with an NVIDIA GPU
# (under 8 minutes on an H200):
#   1. build (reusing build/ when its tools run here; CMake + Ninja otherwise),
#   2. the GPU lit tests (ptxas on every family, the pipeline stages, the
#      runtime on its CPU stand-ins, tfm-run on the GPU when one is present),
#   3. bench/gpu_check.py: the tiny model on GPU against the CPU, attention
#      forward/backward TFLOP/s (bf16 and f32 storage, head dim 128, causal),
#      RMSNorm GB/s, a Llama-3.1-8B-shaped layer step
#      and its MFU, and a 10-update tfm-train run of the tiny model on the
#      GPU against the CPU (losses, time per update, bytes copied in).
# Exit status: non-zero if the build, a test, or the GPU-vs-CPU check fails.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TFM_BUILD:-$root/build}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH="$CUDA_HOME/bin:$PATH"
deadline=$((SECONDS + 470))

echo "== GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null ||
  echo "(nvidia-smi not found; tfm-run reports what the driver says)"

echo "== build"
if ! "$build/bin/tfm-run" --help >/dev/null 2>&1; then
  if [ ! -d /usr/lib/llvm-22/lib/cmake/mlir ]; then
    echo "error: no usable build and no LLVM/MLIR 22 here (scripts/setup.sh installs it from Debian)" >&2
    exit 2
  fi
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm >/dev/null
fi
ninja -C "$build" -j"$(nproc)" | tail -1

echo "== GPU tests"
/usr/lib/llvm-22/bin/lit -s "$build/test/GPU" || status=$?

echo "== figures"
remaining=$((deadline - SECONDS))
timeout "$remaining" python3 "$root/bench/gpu_check.py" --tfm-run "$build/bin/tfm-run" "$@"
exit "${status:-0}"
