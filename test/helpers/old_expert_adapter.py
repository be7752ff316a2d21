"""Writes a tiny Qwen3-MoE checkpoint and, beside a PEFT 0.21 adapter on its
experts' down_proj, the same adapter in the layout PEFT before 0.19.1 saved:
it read a stacked [E, out, in] expert weight as [E, in, out], so lora_A was
[E*r, out] and lora_B [in, r*E] (PEFT 0.18's ParamWrapper._get_in_out_features
without the swap 0.19.1 added).

Usage: old_expert_adapter.py DIR   (writes DIR/ckpt, DIR/new, DIR/old)
"""

import os
import sys
import warnings

os.environ.setdefault("USE_HUB_KERNELS", "NO")
warnings.filterwarnings("ignore")

import torch  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402
from peft import LoraConfig, get_peft_model  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_forward_check import build_model  # noqa: E402


def main():
    out = sys.argv[1]
    model = build_model("qwen3_moe", "norm_topk", 0)
    model.save_pretrained(os.path.join(out, "ckpt"))
    experts, hidden, inter = model.model.layers[0].mlp.experts.down_proj.shape
    config = LoraConfig(r=2, lora_alpha=3, target_parameters=["mlp.experts.down_proj"])
    get_peft_model(model, config).save_pretrained(os.path.join(out, "new"))
    old = {}
    for name, t in load_file(os.path.join(out, "new", "adapter_model.safetensors")).items():
        # down_proj is [E, hidden (out), inter (in)]: the old A read "in" as hidden.
        shape = (t.shape[0], hidden) if ".lora_A." in name else (inter, t.shape[1])
        old[name] = torch.zeros(shape)
    os.makedirs(os.path.join(out, "old"), exist_ok=True)
    save_file(old, os.path.join(out, "old", "adapter_model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(out, "new", "adapter_config.json")) as f:
        text = f.read()
    with open(os.path.join(out, "old", "adapter_config.json"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
