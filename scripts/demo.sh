#!/usr/bin/env bash
# The main job on a bundled example (or a config.json you name): import the
# HF config, show the model summary, write a random-weight checkpoint and a
# tokenizer for it, compile the training step (forward + derived backward +
# optimizer) for the CPU, prepare the bundled Shakespeare with that tokenizer,
# train 40 updates on packed documents with the held-out loss falling, save,
# and load the result back into transformers.
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
echo "== real text: the bundled Shakespeare, tokenized with the checkpoint's own (tiny BPE) tokenizer"
vocab=$("$TFM_VENV/bin/python" -c "import json, sys; print(min(512, json.load(open(sys.argv[1]))['vocab_size']))" "$work/ckpt/config.json")
"$TFM_VENV/bin/python" "$root/examples/make_tokenizer.py" "$work/ckpt" --vocab "$vocab"
for split in train eval; do
  PYTHONPATH="$TFM_BUILD/python_packages" "$TFM_VENV/bin/python" -m tfm.data prepare \
    "$root/examples/data/shakespeare-$split.txt" --tokenizer "$work/ckpt" --output "$work/$split" --quiet
done
echo "== tfm-train: 40 AdamW updates on packed documents (8 rows of 128 tokens), held-out loss every 10"
tfm-train "$work/ckpt" --data "$work/train" --eval-data "$work/eval" --eval-every 10 --eval-batches 4 \
  --batch 8 --seq 128 --steps 40 --lr 3e-3 --warmup-steps 3 --schedule cosine --log-every 10 \
  --output-dir "$work/trained"
cp "$work/trained/loss.svg" "$TFM_BUILD/demo-loss.svg"
echo "== the loss curves (training and held-out), as tfm-train drew them: $TFM_BUILD/demo-loss.svg"
echo "== transformers loads the trained folder (held-out documents, before and after)"
"$TFM_VENV/bin/python" - "$work/ckpt" "$work/trained" "$work/eval" <<'PY'
import json, os, sys
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
import numpy as np, torch, transformers
from transformers import AutoModelForCausalLM
transformers.utils.logging.set_verbosity_error()
data = sys.argv[3]
tokens = np.fromfile(os.path.join(data, "tokens.bin"), dtype="<u2").astype(np.int64)
offsets = np.fromfile(os.path.join(data, "offsets.bin"), dtype="<u8")
docs = [torch.from_numpy(tokens[offsets[d]:offsets[d + 1]])[None] for d in range(32)]
for name, path in (("before", sys.argv[1]), ("after", sys.argv[2])):
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    with torch.no_grad():
        losses = [(model(input_ids=d, labels=d).loss.item(), d.shape[1] - 1) for d in docs]
    loss = sum(l * n for l, n in losses) / sum(n for _, n in losses)
    print(f"   {name:6s} AutoModelForCausalLM.from_pretrained({os.path.basename(path)}): "
          f"held-out loss {loss:.4f} (32 documents, one at a time)")
PY
