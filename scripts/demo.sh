#!/usr/bin/env bash
# The main job on a bundled example (or a config.json you name): import the
# HF config, show the model summary, write a random-weight checkpoint for it,
# compile the step for the CPU and run it, printing the loss.
#
#   scripts/demo.sh [CONFIG.json]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/scripts/env.sh"
config=${1:-$root/examples/tiny-llama/config.json}

"$root/scripts/setup.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== tfm-import-hf $config --summary"
tfm-import-hf "$config" --summary
tfm-import-hf "$config" -o "$work/model.mlir"
echo "== IR: $(grep -c '' "$work/model.mlir") lines, one layer body per layer kind"
echo "== compile stages: $(tfm-opt "$work/model.mlir" --tfm-lower-to-linalg | grep -c '') lines of linalg," \
     "$(tfm-opt "$work/model.mlir" --tfm-train-cpu | grep -c '') lines of LLVM dialect"
echo "== random-weight checkpoint (Hugging Face transformers)"
"$TFM_VENV/bin/python" "$root/examples/make_checkpoint.py" "$config" "$work/ckpt" 2>/dev/null
echo "== tfm-run (CPU, MLIR JIT)"
tfm-run "$work/ckpt" --tokens "$work/ckpt/tokens.json" --output "$work/out.safetensors"
