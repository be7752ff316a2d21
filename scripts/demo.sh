#!/usr/bin/env bash
# The main job on a bundled example (or a config.json you name): import the
# HF config, show the model summary, write a random-weight checkpoint for it,
# compile the training step (forward + derived backward) for the CPU and run
# it, printing the loss and the gradients it wrote.
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
echo "== training step: $(tfm-opt "$work/model.mlir" --tfm-autodiff | grep -c '') lines of tfm (forward + derived backward)," \
     "$(tfm-opt "$work/model.mlir" --tfm-train-cpu | grep -c '') lines of LLVM dialect"
echo "== random-weight checkpoint (Hugging Face transformers)"
"$TFM_VENV/bin/python" "$root/examples/make_checkpoint.py" "$config" "$work/ckpt" 2>/dev/null
echo "== tfm-run --grads (CPU, MLIR JIT)"
tfm-run "$work/ckpt" --tokens "$work/ckpt/tokens.json" --output "$work/out.safetensors" --grads
"$TFM_VENV/bin/python" - "$work/out.safetensors" <<'PY'
import sys
from safetensors.numpy import load_file
out = load_file(sys.argv[1])
grads = {k[5:]: v for k, v in out.items() if k.startswith("grad/")}
norm = sum(float((g.astype("float64") ** 2).sum()) for g in grads.values()) ** 0.5
print(f"   wrote logits {list(out['logits'].shape)}, loss {float(out['loss']):.6f}, "
      f"{len(grads)} gradients (global norm {norm:.4f}), e.g. {sorted(grads)[0]}")
PY
