#!/usr/bin/env bash
# The main job on a bundled example (or a config.json you name): import the
# HF config, show the model summary, write a random-weight checkpoint and a
# small token dataset for it, compile the training step (forward + derived
# backward + optimizer) for the CPU, train 20 updates with the loss falling,
# save, and load the result back into transformers.
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
echo "== tfm-run --grads (one step: loss and every gradient, CPU, MLIR JIT)"
tfm-run "$work/ckpt" --tokens "$work/ckpt/tokens.json" --output "$work/out.safetensors" --grads
echo "== tfm-train: 20 AdamW updates on train.npy (8 windows of 64 tokens each), cosine schedule"
tfm-train "$work/ckpt" --tokens "$work/ckpt/train.npy" --batch 8 --seq 64 --steps 20 \
  --lr 1e-2 --warmup-steps 2 --schedule cosine --output-dir "$work/trained"
echo "== transformers loads the trained folder (held-out windows, before and after)"
"$TFM_VENV/bin/python" - "$work/ckpt" "$work/trained" <<'PY'
import os, sys
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
import numpy as np, torch, transformers
from transformers import AutoModelForCausalLM
transformers.utils.logging.set_verbosity_error()
ids = torch.from_numpy(np.load(os.path.join(sys.argv[1], "held-out.npy")).astype(np.int64)).view(-1, 64)
for name, path in (("before", sys.argv[1]), ("after", sys.argv[2])):
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    with torch.no_grad():
        loss = model(input_ids=ids, labels=ids).loss.item()
    print(f"   {name:6s} AutoModelForCausalLM.from_pretrained({os.path.basename(path)}): held-out loss {loss:.4f}")
PY
